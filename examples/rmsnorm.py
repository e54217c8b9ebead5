# rmsnorm.py — RMS normalization of each row of an (M, N) matrix:
#     Y[i, :] = X[i, :] / sqrt(mean(X[i, :]^2) + eps) * W
# computed in float32 whatever the storage dtype.  One block handles block_M
# whole rows; the weight row is staged in shared memory with a 1-D corner
# copy.
# tilec-test:
# tilec-test: -D M=5 -D N=48 -D eps=0.001
# tilec-test: -D dtype=bfloat16
# tilec-test: -D dtype=float16 -D N=1000

import tilelang
import tilelang.language as T


def rms_norm(M=100, N=384, block_M=16, eps=1e-6, dtype="float32", accum_dtype="float32", threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype),
             W: T.Tensor((N,), dtype),
             Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), accum_dtype)
            sq = T.alloc_fragment((block_M, N), accum_dtype)
            sum_sq = T.alloc_fragment((block_M,), accum_dtype)
            w = T.alloc_shared((N,), dtype)

            T.copy(X[bx * block_M, 0], x)
            T.copy(W[0], w)
            for i, j in T.Parallel(block_M, N):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, sum_sq, dim=1)
            for i in T.Parallel(block_M):
                sum_sq[i] = T.rsqrt(sum_sq[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] * sum_sq[i] * w[j]
            T.copy(x, Y[bx * block_M, 0])

    return main
