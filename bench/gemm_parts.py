# gemm_parts.py — the two halves of examples/gemm.py's K loop timed apart,
# for finding which one makes a backend slow (bench/vulkan_nvidia.sh DIAG=1):
#   part="mma":  A and B tiles are copied to shared memory once, then the
#                loop runs only T.gemm on them (shared-memory operand loads
#                and the matrix instructions);
#   part="copy": the loop only copies the A and B tiles of each k step from
#                global to shared memory; one T.gemm after it keeps them live.
# The results are not meaningful products (no --check): only the time is.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm_parts(M=4096, N=4096, K=4096, block_M=64, block_N=64, block_K=32, part="mma",
               dtype="float16", accum_dtype="float32", threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype),
             B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            if part == "mma":
                T.copy(A[by * block_M, 0], A_shared)
                T.copy(B[0, bx * block_N], B_shared)
                for k in T.serial(T.ceildiv(K, block_K)):
                    T.gemm(A_shared, B_shared, C_local)
            else:
                for k in T.serial(T.ceildiv(K, block_K)):
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
