# gemm_transpose_b.py — C = A @ B^T, where B is stored (N, K) as in a
# linear layer's weight.  The B tile is loaded as (block_N, block_K) and
# T.gemm(..., transpose_B=True) reads it transposed.  The result is written
# through shared memory, and the last K slice is partial (K = 72).
# tilec-test:
# tilec-test: -D M=50 -D N=70 -D K=40 -D block_K=32

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_nt(M=128, N=96, K=72, block_M=64, block_N=32, block_K=32,
              dtype="float16", accum_dtype="float"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype),
             B: T.Tensor((N, K), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)

            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main
