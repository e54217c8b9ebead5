# fill_int.py — fills of integer tiles with constants and run-time values (int16, int32).
# conform: tol=exact covers=fill,clear
# conform-params: -D M=32 -D N=32
# conform-params: -D M=17 -D N=9
import tilelang
import tilelang.language as T


def fill_int(M=32, N=32, bm=16, bn=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M, N), "int16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=32) as (bx, by):
            f = T.alloc_fragment((bm, bn), "int32")
            g = T.alloc_fragment((bm, bn), "int16")
            T.fill(f, bx * 100 + by)
            T.fill(g, -7)
            T.copy(f, A[by * bm, bx * bn])
            T.copy(g, B[by * bm, bx * bn])
    return main
