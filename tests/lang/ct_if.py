# ct_if.py — `if`/`elif`/`else` on compile-time conditions inside a kernel
# (factory parameters, comparisons of constants, a string compare) are
# resolved at compile time; only the chosen branch is compiled.
# tilec-test: -D mode=0
# tilec-test: -D mode=1
# tilec-test: -D mode=2
# tilec-test: -D mode=2 -D act=none
import tilelang
import tilelang.language as T


def ctif(N=40, mode=0, act="relu", dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            t = T.alloc_fragment((N,), dtype)
            T.copy(X, t)
            if mode == 0:
                for i in T.Parallel(N):
                    t[i] = t[i] * 2
            elif mode == 1 and N > 10:
                for i in T.Parallel(N):
                    t[i] = t[i] - 1
            else:
                for i in T.Parallel(N):
                    t[i] = -t[i]
            if act == "relu":
                for i in T.Parallel(N):
                    t[i] = T.max(t[i], 0.0)
            if not (mode == 1):
                pass
            else:
                for i in T.Parallel(N):
                    t[i] = t[i] + (10.0 if act == "relu" else 20.0)
            T.copy(t, Y)

    return main
