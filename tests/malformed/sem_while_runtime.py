import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(2) as bx:
        i = bx
        while i < 8:
            A[i] = 0
