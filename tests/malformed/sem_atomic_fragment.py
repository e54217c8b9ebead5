import tilelang
import tilelang.language as T


def colsum(M=64, N=32, block_M=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), S: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), "float32")
            part = T.alloc_fragment((N,), "float32")
            T.copy(A[bx * block_M, 0], tile)
            T.clear(part)
            for i, j in T.Parallel(block_M, N):
                T.atomic_add(part[j], tile[i, j])
            T.copy(part, S)
    return main
