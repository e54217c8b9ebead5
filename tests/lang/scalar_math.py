# scalar_math.py — the scalar primitives on run-time values: T.max, T.min,
# T.abs, T.exp, T.exp2, T.log, T.log2, T.sqrt, T.rsqrt, T.tanh, T.sigmoid,
# T.if_then_else, T.infinity, T.cast / .astype, T.ceildiv, plus Python
# min/max/abs on run-time values, each stored in its own column.
# tilec-test:
# tilec-test: -D dtype=float16
import tilelang
import tilelang.language as T


def smath(N=32, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N, 20), "float32"), I: T.Tensor((N, 3), "int32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                x = T.cast(X[i], "float32")
                a = T.abs(x) + 0.1
                Y[i, 0] = T.max(x, 0.2)
                Y[i, 1] = T.min(x, -0.2)
                Y[i, 2] = T.abs(x)
                Y[i, 3] = T.exp(x)
                Y[i, 4] = T.exp2(x)
                Y[i, 5] = T.log(a)
                Y[i, 6] = T.log2(a)
                Y[i, 7] = T.sqrt(a)
                Y[i, 8] = T.rsqrt(a)
                Y[i, 9] = T.tanh(x * 3)
                Y[i, 10] = T.sigmoid(x * 3)
                Y[i, 11] = T.if_then_else(x > 0, x, 2 * x)
                Y[i, 12] = T.if_then_else(x > 0, T.infinity("float32"), -T.infinity(T.float32))
                Y[i, 13] = T.exp(-T.infinity("float32")) + T.min(x, T.infinity("float32"))
                Y[i, 14] = X[i].astype("float32") * 2
                Y[i, 15] = max(x, 0.0) + min(x, 0.0) * 2 + abs(x) * 4
                Y[i, 16] = T.max(T.min(x, 0.5), -0.5)
                Y[i, 17] = T.cast(T.cast(x * 10, "int32"), "float32")
                Y[i, 18] = T.ceildiv(i, 3) + T.ceildiv(N, 5)
                Y[i, 19] = T.exp(T.log(a)) - a
                I[i, 0] = T.max(i, 5) - T.min(i, 20)
                I[i, 1] = T.abs(i - 16)
                I[i, 2] = T.if_then_else(i % 2 == 0, i, -i)

    return main
