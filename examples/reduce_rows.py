# reduce_rows.py — per-row sum, max and absolute max of an (M, N) float32
# matrix (reductions along dim 1).  N is walked in block_N-wide slices; each
# slice is reduced into running results with clear=False.  Columns past the
# right edge read as zeros from T.copy, which is harmless for the sum and
# the absolute max but not for the max, so they are masked to -inf first.
# tilec-test:
# tilec-test: -D M=1 -D N=1
# tilec-test: -D M=65 -D N=128 -D block_N=64

import tilelang
import tilelang.language as T


def reduce_rows(M=100, N=300, block_M=32, block_N=128, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype),
             RowSum: T.Tensor((M,), dtype),
             RowMax: T.Tensor((M,), dtype),
             RowAbsMax: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, block_N), dtype)
            acc_sum = T.alloc_fragment((block_M,), dtype)
            acc_max = T.alloc_fragment((block_M,), dtype)
            acc_absmax = T.alloc_fragment((block_M,), dtype)

            T.clear(acc_sum)
            T.fill(acc_max, -T.infinity(dtype))
            T.clear(acc_absmax)
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, k * block_N], tile)
                T.reduce_sum(tile, acc_sum, dim=1, clear=False)
                T.reduce_absmax(tile, acc_absmax, dim=1, clear=False)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.if_then_else(k * block_N + j < N, tile[i, j],
                                                -T.infinity(dtype))
                T.reduce_max(tile, acc_max, dim=1, clear=False)
            T.copy(acc_sum, RowSum[bx * block_M])
            T.copy(acc_max, RowMax[bx * block_M])
            T.copy(acc_absmax, RowAbsMax[bx * block_M])

    return main
