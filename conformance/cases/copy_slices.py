# copy_slices.py — copies with slice regions (lo:hi and :) instead of corners.
# conform: tol=exact covers=copy
# conform-params: -D M=64 -D N=32
# conform-params: -D M=45 -D N=32
import tilelang
import tilelang.language as T


def copy_slices(M=64, N=32, bm=16, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=64) as bx:
            s = T.alloc_shared((bm, N), dtype)
            T.copy(A[bx * bm:(bx + 1) * bm, :], s)
            T.copy(s[0:bm, 0:N], B[bx * bm:(bx + 1) * bm, 0:N])
    return main
