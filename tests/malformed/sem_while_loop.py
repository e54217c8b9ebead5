import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        i = 0
        while i < 8:
            A[i] = 0.0
            i += 1
