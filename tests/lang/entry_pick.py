# entry_pick.py — a file with several kernels: two factories and a
# top-level prim_func.  The last one is the default entry; --entry picks
# another by name, and -D binds the picked factory's parameters.
# All three write Y = X * k (k = 2, 3 and 4).
# tilec-test:
# tilec-test: --entry double
# tilec-test: --entry triple -D N=7
import tilelang
import tilelang.language as T


def double(N=16):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                Y[i] = X[i] * 2

    return main


def triple(N=16):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                Y[i] = X[i] * 3

    return main


@T.prim_func
def quadruple(X: T.Tensor((16,), "float32"), Y: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            Y[i] = X[i] * 4
