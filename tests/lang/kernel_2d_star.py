# kernel_2d_star.py — `T.Kernel(*g, extra)` where g is a one-element tuple
# and the block indices are unpacked `as [bx, by]`-style tuple.
# Y[by, bx] = X[by, bx] * 2 + by.
# tilec-test:
import tilelang
import tilelang.language as T


def k2d(M=3, N=5, dtype="float32"):
    g = (N,)

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(*g, M) as (bx, by):
            Y[by, bx] = X[by, bx] * 2 + by

    return main
