"""misc_stmts.py — module docstring; `from tilelang import language as T`,
`import tilelang` twice, docstrings in factory, kernel and macro, comments
everywhere, `pass`, compile-time `assert` (with and without a message)
in the factory and the kernel, `return` from a macro without a value and
from a plain compile-time helper, a bare `return` in the kernel body.
Y = X + 1."""
# tilec-test:
import tilelang
import tilelang as tl  # an alias of tilelang
from tilelang import language as T  # the T alias


def helper(n):
    """A plain compile-time helper."""
    if n > 4:
        return n - 1
    return n


@T.macro
def maybe_add(buf, n, flag):
    """A macro docstring."""
    if not flag:
        return
    for i in T.Parallel(n):
        buf[i] += 1


@tl.jit(out_idx=[-1], target="auto")
def misc(N=9, dtype="float32"):
    """Factory docstring."""
    assert N > 0
    assert helper(N) == N - 1 or N <= 4, "helper"
    pass

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        """Kernel docstring."""
        # a comment
        with T.Kernel(1, threads=32) as bx:  # trailing comment
            """Body docstring."""
            t = T.alloc_fragment((N,), dtype)
            assert t.shape[0] == N, "shape"
            pass
            T.copy(X, t)
            maybe_add(t, N, False)
            maybe_add(t, N, True)
            # comment between statements
            T.copy(t, Y)
            return  # a bare return ends the kernel body; nothing after it is compiled
            T.fill(Y, 0)

    return main
