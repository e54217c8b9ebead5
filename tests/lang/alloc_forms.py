# alloc_forms.py — T.alloc_shared / alloc_fragment with an int shape and a
# tuple shape, T.alloc_local as per-thread scratch, T.alloc_var with and
# without init= used by name (v = expr, v += ..., read as v) as a running
# max / counter across a serial loop.
# Out[0] = max of X, Out[1] = number of positive elements, Out[2] = 7 + sum.
# tilec-test:
# tilec-test: -D N=1
import tilelang
import tilelang.language as T


def allocs(N=50, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Out: T.Tensor((3,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            s = T.alloc_shared(N, dtype)
            loc = T.alloc_local((2,), "float32")
            mx = T.alloc_var(dtype, init=-1e30)
            cnt = T.alloc_var("int32")
            tot = T.alloc_var(T.float32, init=7)
            cnt = 0
            T.copy(X, s)
            for i in T.serial(N):
                mx = T.max(mx, s[i])
                if s[i] > 0:
                    cnt += 1
                tot = tot + s[i]
            loc[0] = mx
            loc[1] = cnt
            Out[0] = loc[0]
            Out[1] = loc[1]
            Out[2] = tot

    return main
