# kernel_1d.py — a one-dimensional grid bound `as bx`, from a starred
# one-element tuple and threads given by a factory parameter; plus a 2-D
# grid from a starred tuple with a trailing extent.  Y[i] = X[i] * (i // 4).
# tilec-test:
# tilec-test: -D N=13 -D threads=256
import tilelang
import tilelang.language as T


def k1d(N=20, B=4, threads=64, dtype="float32"):
    grid = (T.ceildiv(N, B),)

    @T.prim_func
    def main(X: T.Tensor([N], dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(*grid, threads=threads) as bx:
            for i in T.Parallel(B):
                if bx * B + i < N:
                    Y[bx * B + i] = X[bx * B + i] * bx

    return main
