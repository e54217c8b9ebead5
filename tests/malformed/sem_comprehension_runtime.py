import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(2) as bx:
        for i in T.serial(4):
            vals = [A[j] for j in T.Parallel(4)]
