# print_debug.py — T.print of a scalar with msg=, of a buffer, and of a
# constant: accepted, printed by the interpreter, and the kernel's result
# unaffected (Y = X * 2).
# tilec-test:
import tilelang
import tilelang.language as T


def prt(N=4, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            t = T.alloc_fragment((N,), dtype)
            T.copy(X, t)
            T.print(t, msg="tile")
            T.print(bx, "block")
            T.print(t[0] * 0 + 3.5, msg="value")
            for i in T.Parallel(N):
                t[i] = t[i] * 2
            T.copy(t, Y)

    return main
