# gemm_fp32.py — C = A @ B entirely in float32 (inputs, accumulator and
# result).  Same tiling as gemm.py, with a block-order swizzle hint and an
# explicit warp policy, both of which a backend may ignore.
# tilec-test:
# tilec-test: -D M=33 -D N=17 -D K=9
# tilec-test: -D M=300 -D N=700 -D K=40

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_fp32(M=96, N=160, K=80, block_M=32, block_N=64, block_K=16,
                num_stages=2, threads=128):
    dtype = "float32"

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype),
             B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), dtype)

            T.use_swizzle(panel_size=8)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, policy=T.GemmWarpPolicy.Square)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
