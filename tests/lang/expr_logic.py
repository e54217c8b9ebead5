# expr_logic.py — comparisons (== != < <= > >=, chains), and / or / not on
# run-time values and on constants, conditional expressions at run time
# (a select) and at compile time, bools stored as numbers and as a bool
# tensor.
# tilec-test:
# tilec-test: -D flag=False
import tilelang
import tilelang.language as T


def logic(N=32, flag=True, dtype="float32"):
    lim = 0.25 if flag else 0.75

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N, 4), dtype), B: T.Tensor((N,), "bool")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                x = X[i]
                Y[i, 0] = (x > lim) + (x >= 0) * 2 + (x == x) * 4 + (x != 0) * 8
                Y[i, 1] = 1.0 if -lim < x < lim else (2.0 if x <= -lim else 3.0)
                Y[i, 2] = (x < 0 and i % 2 == 1) + (x > 0.9 or i < 3) * 2 + (not (x > 0)) * 4
                Y[i, 3] = x if (flag and not False) else -x
                B[i] = x > 0 or i == 0

    return main
