import tilelang
import tilelang.language as T


def flags(N=32):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), Any: T.Tensor((1,), "bool")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                T.atomic_max(Any[0], A[i] > 0)
    return main
