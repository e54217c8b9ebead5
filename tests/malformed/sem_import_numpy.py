import tilelang
import tilelang.language as T
import numpy as np


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        T.clear(A)
