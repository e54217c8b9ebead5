import tilelang
import tilelang.language as T
import numpy as np

SIZE = np.prod((2, 4))


@T.prim_func
def main(A: T.Tensor((SIZE,), "float32")):
    with T.Kernel(1) as bx:
        T.clear(A)
