# gemm_fp8.py — C = A @ B^T on 8-bit floats: A is (M, K) and B is (N, K),
# both float8_e4m3fn (or float8_e5m2), products summed in float32 and C
# written as float16, the layout torch._scaled_mm takes (B column-major).
# Both operands are K-major, as Hopper's 8-bit wgmma (k = 32) requires;
# on sm_90a each warpgroup issues m64nNk32 wgmmas from swizzled shared
# memory that TMA fills.  Elsewhere (sm_80, the CPU, other GPUs) the same
# file runs on the plain cores: 8-bit floats are a storage format there.
# With swizzle > 0 the blocks run down panels of that many block columns
# (T.use_swizzle, a hint), as in gemm.py.
# tilec-test:
# tilec-test: -D M=320 -D N=448 -D swizzle=3
# tilec-test: -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=3
# tilec-test: -D dtype=float8_e5m2 -D M=192 -D N=64 -D K=128 -D block_M=128 -D threads=256 -D num_stages=3

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm_fp8(M=256, N=256, K=384, block_M=64, block_N=64, block_K=128, dtype="float8_e4m3fn",
             out_dtype="float16", accum_dtype="float32", num_stages=2, threads=128, swizzle=0, swizzle_order=""):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype),
             B: T.Tensor((N, K), dtype),
             C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            if swizzle > 0 and swizzle_order:
                T.use_swizzle(panel_size=swizzle, order=swizzle_order)
            elif swizzle > 0:
                T.use_swizzle(panel_size=swizzle)
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, acc, transpose_B=True)
            T.copy(acc, C[by * block_M, bx * block_N])

    return main
