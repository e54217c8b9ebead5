# fill_region.py — T.fill of sub-regions of on-chip tiles and of a global region (boundary-safe).
# conform: tol=exact covers=fill
# conform-params: -D M=64 -D N=64
# conform-params: -D M=45 -D N=70
import tilelang
import tilelang.language as T


def fill_region(M=64, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            f = T.alloc_fragment((bm, bn), dtype)
            T.clear(f)
            T.fill(f[0:8, :], 7.0)
            T.fill(f[8:bm, 4:12], -3.0)
            T.copy(f, A[by * bm, bx * bn])
            T.fill(B[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn], 0.25)
    return main
