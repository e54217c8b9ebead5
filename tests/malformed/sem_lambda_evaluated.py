import tilelang
import tilelang.language as T


def apply(f, x):
    return f(x)


def scaled(N=64):
    factor = apply(lambda x: x * 2, 3)

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] * factor
    return main
