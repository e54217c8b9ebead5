# expr_arith.py — arithmetic at run time and compile time: + - * / // % **
# on floats and on int32 values (integer `/` truncates, `//` and `%` floor),
# unary minus/plus, int literal forms (hex, octal, binary, underscores),
# float literal forms, and constant folding in the factory.
# tilec-test:
import tilelang
import tilelang.language as T


def arith(N=16, dtype="float32"):
    c1 = 7 // 2 + 7 % 3 + 2 ** 3 - (-7 // 2) + (-7 % 3)   # 3 + 1 + 8 + 4 + 2 = 18
    c2 = 1 / 4 + 1e-1 + .5 + 1_0.0                         # 10.85
    c3 = 0x10 + 0o10 + 0b10 + 1_000                        # 1026

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), I: T.Tensor((N,), "int32"),
             F: T.Tensor((N, 6), dtype), J: T.Tensor((N, 6), "int32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                x = X[i]
                k = I[i]
                F[i, 0] = x + 2 * x - x / 4
                F[i, 1] = x ** 2 + (-x) * (+x)
                F[i, 2] = (x * 10) // 3
                F[i, 3] = (x * 10) % 3
                F[i, 4] = c2 + x ** 3
                F[i, 5] = x / (1 + x * x)
                J[i, 0] = k / 3 + c1
                J[i, 1] = k // 3
                J[i, 2] = k % 5
                J[i, 3] = -k // 7 + k ** 2
                J[i, 4] = c3 - k * 2
                J[i, 5] = (k + 100) % 7 - (i - 8) // 3

    return main
