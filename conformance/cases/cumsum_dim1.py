# cumsum_dim1.py — inclusive prefix sums along rows with a carry between tiles.
# conform: tol=auto covers=cumsum
# conform-params: -D M=64 -D N=128
# conform-params: -D M=30 -D N=70
import tilelang
import tilelang.language as T


def cumsum_dim1(M=64, N=128, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            src = T.alloc_shared((bm, bn), dtype)
            dst = T.alloc_fragment((bm, bn), dtype)
            carry = T.alloc_fragment((bm,), dtype)
            T.clear(carry)
            for k in T.serial(T.ceildiv(N, bn)):
                T.copy(X[bx * bm, k * bn], src)
                T.cumsum(src, dst, dim=1)
                for i, j in T.Parallel(bm, bn):
                    dst[i, j] = dst[i, j] + carry[i]
                for i in T.Parallel(bm):
                    carry[i] = dst[i, bn - 1]
                T.copy(dst, Y[bx * bm, k * bn])
    return main
