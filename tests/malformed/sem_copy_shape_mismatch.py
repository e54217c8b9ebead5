import tilelang
import tilelang.language as T


def transpose(M=64, N=32, bm=32, bn=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((N, M), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            tile = T.alloc_shared((bn, bm), "float32")
            T.copy(A[bx * bm:(bx + 1) * bm, 0:bn], tile)
            T.copy(tile, B[0, bx * bm])
    return main
