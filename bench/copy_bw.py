# copy_bw.py — B = A through registers only (no shared memory): the copy
# bandwidth a backend reaches with its plain global loads and stores, the
# reference for the memory-bound kernels (bench/vulkan_nvidia.sh DIAG=1).
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def copy_bw(M=8192, N=8192, block_M=16, block_N=256, dtype="float32", threads=256):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            for i, j in T.Parallel(block_M, block_N):
                B[by * block_M + i, bx * block_N + j] = A[by * block_M + i, bx * block_N + j]

    return main
