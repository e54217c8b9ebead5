import tilelang
import tilelang.language as T


def f(block=64):
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            s = T.alloc_shared((block,), "float32")
            T.copy(A[0:n], s)
            T.copy(s, B[0])
    return main
