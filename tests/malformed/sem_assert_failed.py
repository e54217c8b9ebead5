import tilelang
import tilelang.language as T


def reduce(M=100, block_M=48):
    assert M % block_M == 0, "M must be a multiple of block_M"

    @T.prim_func
    def main(A: T.Tensor((M,), "float32")):
        with T.Kernel(M // block_M) as bx:
            T.clear(A)
    return main
