# elementwise_add.py — C = A + alpha * B over a 2-D tensor, one
# block_M x block_N tile per block.  alpha is computed in the factory from
# its parameters (a compile-time constant folded into the kernel).  Tiles
# go through shared memory in, a fragment out; edges are ragged.
# tilec-test:
# tilec-test: -D dtype=float16 -D scale_num=3
# tilec-test: -D M=1 -D N=1
# tilec-test: -D dtype=float64

import tilelang
import tilelang.language as T


def elementwise_add(M=100, N=200, block_M=32, block_N=64, dtype="float32",
                    scale_num=1, scale_den=2, threads=128):
    alpha = scale_num / scale_den          # Python true division: 0.5

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype),
             B: T.Tensor((M, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            B_shared = T.alloc_shared((block_M, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), dtype)

            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.copy(B[by * block_M, bx * block_N], B_shared)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = A_shared[i, j] + alpha * B_shared[i, j]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
