import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        acc = T.alloc_fragment((8,), "float32")
        T.copy(A, acc)
        acc[8] = acc[0] + 1.0
        T.copy(acc, A)
