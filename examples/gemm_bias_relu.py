# gemm_bias_relu.py — D = relu(A @ B + bias) in one kernel, the epilogue a
# framework runs as separate kernels: the bias add and the ReLU are applied
# to the float32 accumulator in registers, so D is written once and no
# intermediate (M, N) tensor goes through memory.  A is (M, K), B (K, N),
# bias (N,), all float16; sizes need not be multiples of the tiles.  With
# swizzle > 0 the blocks run down panels of that many block columns
# (T.use_swizzle, a hint), as in gemm.py.
# tilec-test:
# tilec-test: -D M=64 -D N=64 -D K=64
# tilec-test: -D threads=256 -D block_M=128 -D block_N=64 -D dtype=bfloat16
# tilec-test: -D M=300 -D N=520 -D swizzle=3

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm_bias_relu(M=200, N=136, K=120, block_M=64, block_N=64, block_K=32,
                   dtype="float16", accum_dtype="float32", num_stages=3, threads=128, swizzle=0, swizzle_order=""):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype),
             B: T.Tensor((K, N), dtype),
             Bias: T.Tensor((N,), dtype),
             D: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            if swizzle > 0 and swizzle_order:
                T.use_swizzle(panel_size=swizzle, order=swizzle_order)
            elif swizzle > 0:
                T.use_swizzle(panel_size=swizzle)
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, acc)
            # Columns past N read a bias of 0 and are not stored.
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] = T.max(acc[i, j] + Bias[bx * block_N + j], 0)
            T.copy(acc, D[by * block_M, bx * block_N])

    return main
