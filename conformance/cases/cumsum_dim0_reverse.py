# cumsum_dim0_reverse.py — reverse inclusive scan down the columns of one tile, and a forward one.
# conform: tol=auto covers=cumsum
# conform-params: -D M=32 -D N=64
# conform-params: -D M=32 -D N=40
import tilelang
import tilelang.language as T


def cumsum_dim0_reverse(M=32, N=64, bn=32, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype), Z: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), threads=64) as bx:
            src = T.alloc_fragment((M, bn), dtype)
            dst = T.alloc_fragment((M, bn), dtype)
            T.copy(X[0, bx * bn], src)
            T.cumsum(src, dst, dim=0, reverse=True)
            T.copy(dst, Y[0, bx * bn])
            T.cumsum(src, dst, dim=0)
            T.copy(dst, Z[0, bx * bn])
    return main
