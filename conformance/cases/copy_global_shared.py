# copy_global_shared.py — global -> shared -> global, tile-multiple and ragged.
# conform: tol=exact covers=copy,alloc_shared
# conform-params: -D M=64 -D N=64
# conform-params: -D M=70 -D N=45
import tilelang
import tilelang.language as T


def copy_global_shared(M=64, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            s = T.alloc_shared((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], s)
            T.copy(s, B[by * bm, bx * bn])
    return main
