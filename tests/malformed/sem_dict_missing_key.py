import tilelang
import tilelang.language as T

CONFIGS = {"small": (32, 32), "large": (128, 64)}


def tiled(N=256, size="medium"):
    block_M, block_N = CONFIGS[size]

    @T.prim_func
    def main(A: T.Tensor((N, N), "float32"), B: T.Tensor((N, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(N, block_M), threads=128) as (bx, by):
            t = T.alloc_fragment((block_M, block_N), "float32")
            T.copy(A[by * block_M, bx * block_N], t)
            T.copy(t, B[by * block_M, bx * block_N])
    return main
