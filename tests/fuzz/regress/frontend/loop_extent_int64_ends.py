import tilelang.language as T
@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.serial(-2**62 - 2**62, 2**62 + (2**62 - 1)):
            A[0] = 1.0
