# gemm.py — C = A @ B with float16 inputs, a float32 accumulator and a
# float16 result.  Each block computes one block_M x block_N tile of C,
# streaming block_K-wide slices of A and B through shared memory in a
# software-pipelined loop.  The default sizes are deliberately not multiples
# of the tile sizes, so the boundary-safe T.copy is exercised on every edge.
# With swizzle > 0 the blocks run down panels of that many block columns
# (T.use_swizzle, a hint), so that the blocks running at the same time share
# more rows of A and columns of B in the L2 cache (8192^3 on the H200 with
# swizzle=8: 3% faster than the plain order, bench/results/hopper_session7.md);
# swizzle_order="row" or "column" asks for TileLang's rasterizations instead
# (panels of block rows or columns, walked in a serpentine).
# tilec-test:
# tilec-test: -D M=64 -D N=64 -D K=64
# tilec-test: -D block_M=32 -D block_N=32 -D block_K=16
# tilec-test: -D dtype=bfloat16
# tilec-test: -D threads=256 -D block_M=128 -D block_N=128
# tilec-test: -D M=300 -D N=520 -D swizzle=3
# tilec-test: -D swizzle=8
# tilec-test: -D M=300 -D N=520 -D swizzle=3 -D swizzle_order=row
# tilec-test: -D M=300 -D N=520 -D swizzle=2 -D swizzle_order=column

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M=200, N=136, K=120, block_M=64, block_N=64, block_K=32,
           dtype="float16", accum_dtype="float32", num_stages=3, threads=128, swizzle=0,
           swizzle_order=""):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype),
             B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            if swizzle > 0 and swizzle_order:
                T.use_swizzle(panel_size=swizzle, order=swizzle_order)
            elif swizzle > 0:
                T.use_swizzle(panel_size=swizzle)
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                # The extent of each region comes from the shared tile.
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            # float32 -> float16 on the way out; rows/columns past the edge
            # of C are not written.
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
