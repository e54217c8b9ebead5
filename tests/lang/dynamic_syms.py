# dynamic_syms.py — T.dynamic and its old alias T.symbolic: two symbols in
# tensor shapes, in the grid, in a loop bound, in index expressions and in
# a compile-time-unknown guard.  Y[i, j] = X[i, j] + n (n the symbol).
# tilec-test: -D m=37 -D n=5
# tilec-test: -D m=1 -D n=1
# tilec-test: -D m=64 -D n=16
import tilelang
import tilelang.language as T


def dyn(B=16, dtype="float32"):
    m = T.dynamic("m")
    n = T.symbolic("n", "int32")

    @T.prim_func
    def main(X: T.Tensor((m, n), dtype), Y: T.Tensor((m, n), dtype), L: T.Tensor((m,), "int32")):
        with T.Kernel(T.ceildiv(m, B), threads=32) as bx:
            for i in T.Parallel(B):
                r = bx * B + i
                if r < m:
                    L[r] = n * 2 + m
                    for j in T.serial(n):
                        Y[r, j] = X[r, j] + n

    return main
