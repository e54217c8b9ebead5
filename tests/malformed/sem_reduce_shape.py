import tilelang
import tilelang.language as T


def rowmax(M=64, N=128, block_M=16):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), "float32")
            m = T.alloc_fragment((N,), "float32")
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, m, dim=1)
            T.copy(m, Y[bx * block_M])
    return main
