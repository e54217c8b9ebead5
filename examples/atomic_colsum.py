# atomic_colsum.py — column sums of A (M, N) with one block per tile: each
# block reduces its tile along dim 0 and adds the partial sums into Sum with
# the tile form of T.atomic_add.  The tile form is boundary-safe, so ragged
# N needs no guard; blocks of one column contend on the same elements.
# tilec-test:
# tilec-test: -D M=33 -D N=7 -D block_N=16

import tilelang
import tilelang.language as T


def colsum(M=200, N=90, block_M=32, block_N=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), Sum: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            tile = T.alloc_fragment((block_M, block_N), dtype)
            part = T.alloc_fragment((block_N,), dtype)
            T.copy(A[by * block_M, bx * block_N], tile)
            T.reduce_sum(tile, part, dim=0)
            T.atomic_add(Sum[bx * block_N], part)

    return main
