# gemm_int8.py — C = A @ B with int8 inputs and an int32 accumulator and
# result; integer results must match the reference exactly.  (tilec run
# fills integer tensors with values in [-64, 64], which int8 holds.)
# tilec-test:
# tilec-test: -D M=17 -D N=33 -D K=65

import tilelang
import tilelang.language as T


def matmul_int8(M=80, N=96, K=64, block_M=32, block_N=32, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "int8"),
             B: T.Tensor((K, N), "int8"),
             C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "int8")
            B_shared = T.alloc_shared((block_K, block_N), "int8")
            C_local = T.alloc_fragment((block_M, block_N), "int32")

            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
