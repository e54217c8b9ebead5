# transpose.py — B = A^T for an (M, N) float16 matrix A, through on-chip
# memory: each block copies a block_M x block_N tile of A into shared
# memory, writes it transposed into a block_N x block_M fragment with a
# T.Parallel loop, and copies that to B at the mirrored corner.
# tilec-test:
# tilec-test: -D M=1 -D N=70 -D dtype=float32

import tilelang
import tilelang.language as T


def transpose(M=100, N=72, block_M=32, block_N=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype),
             B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile = T.alloc_shared((block_M, block_N), dtype)
            tile_t = T.alloc_fragment((block_N, block_M), dtype)

            T.copy(A[by * block_M, bx * block_N], tile)
            for j, i in T.Parallel(block_N, block_M):
                tile_t[j, i] = tile[i, j]
            T.copy(tile_t, B[bx * block_N, by * block_M])

    return main
