# macro_inline.py — @T.macro helpers inlined at their call sites: a macro
# defined at the top level and one in the factory (seeing its constants),
# a macro calling a macro, a macro with a return value, a macro taking a
# buffer, a region and a loop variable, and keyword arguments.
# Y = relu(X * alpha) + 1 per element, Z[i] = row sum of Y.
# tilec-test:
# tilec-test: -D alpha=-1.5 -D N=3
import tilelang
import tilelang.language as T


@T.macro
def relu_into(buf, rows, cols):
    for i, j in T.Parallel(rows, cols):
        buf[i, j] = T.max(buf[i, j], 0)


@T.macro
def plus_one(x):
    return x + 1


def macros(M=8, N=12, alpha=2.0, dtype="float32"):
    @T.macro
    def scale_relu(buf):
        for i, j in T.Parallel(M, N):
            buf[i, j] = buf[i, j] * alpha
        relu_into(buf, M, N)

    @T.macro
    def load(dst, src):
        T.copy(src, dst)

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype), Z: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            t = T.alloc_fragment((M, N), dtype)
            s = T.alloc_fragment((M,), dtype)
            load(src=X[0:M, 0:N], dst=t)
            scale_relu(t)
            for i, j in T.Parallel(M, N):
                t[i, j] = plus_one(t[i, j])
            T.reduce_sum(t, s, dim=1)
            T.copy(t, Y)
            T.copy(s, Z)

    return main
