# copy_int8.py — int8 and uint8 tiles copied exactly, ragged.
# conform: tol=exact covers=copy
# conform-params: -D M=64 -D N=64
# conform-params: -D M=13 -D N=77
import tilelang
import tilelang.language as T


def copy_int8(M=64, N=64, bm=32, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int8"), B: T.Tensor((M, N), "int8"), C: T.Tensor((M, N), "uint8"), D: T.Tensor((M, N), "uint8")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            s = T.alloc_shared((bm, bn), "int8")
            u = T.alloc_fragment((bm, bn), "uint8")
            T.copy(A[by * bm, bx * bn], s)
            T.copy(s, B[by * bm, bx * bn])
            T.copy(C[by * bm, bx * bn], u)
            T.copy(u, D[by * bm, bx * bn])
    return main
