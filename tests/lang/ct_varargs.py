# ct_varargs.py — `*args` in compile-time functions and lambdas: the
# positional arguments past the named ones arrive as a tuple (empty when
# there are none), as TileLang's layout helpers write `lambda *args: args`.
# Y[i] = X[i] * 6 + 20 + 2 over 16 elements:
#   total(1, 2, 3) = 1 + (2 + 3) = 6; ident(4, 5) = (4, 5) -> 4 * 5 = 20;
#   count() + count(7, 8) = 0 + 2.
# tilec-test:
import tilelang
import tilelang.language as T


def total(first, *rest):
    return first + sum(rest)


ident = lambda *args: args
count = lambda *xs: len(xs)


@tilelang.jit(out_idx=[-1])
def scaled(n=16):
    s = total(1, 2, 3)
    t = ident(4, 5)
    c = count() + count(7, 8)
    assert s == 6 and t == (4, 5) and c == 2 and ident() == () and total(9) == 9

    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                Y[i] = X[i] * s + t[0] * t[1] + c

    return main
