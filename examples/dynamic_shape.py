# dynamic_shape.py — C = relu(A @ B) where the number of rows M of A and C
# is a run-time symbol from T.dynamic("m"): one compiled kernel serves every
# m, the grid is computed from m at launch, and the ragged last row block
# is handled by the boundary-safe copies.  N and K are compile-time.
# `-D m=VALUE` gives the launch value used by `tilec run`.
# tilec-test: -D m=77
# tilec-test: -D m=128
# tilec-test: -D m=1 -D N=40

import tilelang
import tilelang.language as T


def matmul_dynamic_m(N=96, K=64, block_M=32, block_N=32, block_K=32,
                     dtype="float16", accum_dtype="float32"):
    M = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype),
             B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j], 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
