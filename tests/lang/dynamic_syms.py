# dynamic_syms.py — T.dynamic and its old alias T.symbolic: two symbols in
# tensor shapes, in the grid, in a loop bound, in index expressions and in
# a compile-time-unknown guard, and as a T.Parallel extent through a
# starred tuple.  Y[i, j] = X[i, j] + n (n the symbol), Z[i, :] = 2 * X[i % m, :].
# tilec-test: -D m=37 -D n=5
# tilec-test: -D m=1 -D n=1
# tilec-test: -D m=64 -D n=16
import tilelang
import tilelang.language as T


def dyn(B=16, dtype="float32"):
    m = T.dynamic("m")
    n = T.symbolic("n", "int32")
    row = (2, n)

    @T.prim_func
    def main(X: T.Tensor((m, n), dtype), Y: T.Tensor((m, n), dtype), L: T.Tensor((m,), "int32"),
             Z: T.Tensor(row, dtype)):
        with T.Kernel(T.ceildiv(m, B), threads=32) as bx:
            for i in T.Parallel(B):
                r = bx * B + i
                if r < m:
                    L[r] = n * 2 + m
                    for j in T.serial(n):
                        Y[r, j] = X[r, j] + n
            if bx == 0:
                for i, j in T.Parallel(*row):      # a run-time extent from a starred tuple
                    Z[i, j] = X[i % m, j] * 2

    return main
