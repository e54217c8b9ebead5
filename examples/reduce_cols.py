# reduce_cols.py — column sums and column minima of an (M, N) float32
# matrix (reductions along dim 0).  The grid tiles both dimensions; each
# block reduces its block_M x block_N tile to block_N partial results and
# folds them into the outputs with T.atomic_add / T.atomic_min, since several
# row blocks contribute to the same column.  Like every tensor argument, the
# outputs start with the values the caller gave them (random under
# `tilec run`), so the kernel computes Sum += colsum(X), Min = min(Min, colmin(X)).
# tilec-test:
# tilec-test: -D M=31 -D N=1 -D block_M=8
# tilec-test: -D M=300 -D N=50

import tilelang
import tilelang.language as T


def reduce_cols(M=100, N=90, block_M=32, block_N=32, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype),
             Sum: T.Tensor((N,), dtype),
             Min: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile = T.alloc_fragment((block_M, block_N), dtype)
            masked = T.alloc_fragment((block_M, block_N), dtype)
            col_sum = T.alloc_fragment((block_N,), dtype)
            col_min = T.alloc_fragment((block_N,), dtype)

            T.copy(X[by * block_M, bx * block_N], tile)
            T.reduce_sum(tile, col_sum, dim=0)
            # Rows past the bottom edge read as zeros: keep them out of the min.
            for i, j in T.Parallel(block_M, block_N):
                masked[i, j] = T.if_then_else(by * block_M + i < M, tile[i, j],
                                              T.infinity(dtype))
            T.reduce_min(masked, col_min, dim=0)
            for j in T.Parallel(block_N):
                if bx * block_N + j < N:
                    T.atomic_add(Sum[bx * block_N + j], col_sum[j])
                    T.atomic_min(Min[bx * block_N + j], col_min[j])

    return main
