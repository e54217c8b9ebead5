# softmax.py — row softmax of an (M, N) float16 matrix, computed in float32.
# Each block takes block_M whole rows (N fits one tile): row max, then
# exp(x - max) written as exp2((x - max) * log2(e)), row sum, divide.
# Rows past the end of X are computed on zeros and never written back.
# tilec-test:
# tilec-test: -D M=7 -D N=64 -D block_M=4
# tilec-test: -D M=20 -D N=100

import tilelang
import tilelang.language as T


def softmax(M=100, N=512, block_M=8, dtype="float16", accum_dtype="float32", threads=128):
    log2e = 1.44269504

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype),
             Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), accum_dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp2((x[i, j] - row_max[i]) * log2e)
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M, 0])

    return main
