import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        T.clear(A)
        with T.Kernel(1, threads=32) as by:
            T.fill(A, 1)
