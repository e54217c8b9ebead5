# imports_from.py — the accepted import forms: `from tilelang.language
# import NAME` (single names, one with `as`), `import tilelang.language as
# T` and `import tilelang`, used side by side.  Y = X + 1 through shared.
# tilec-test:
import tilelang
import tilelang.language as T
from tilelang.language import Kernel, Parallel, alloc_shared, copy as tcopy
from tilelang import language


@T.prim_func
def plus_one(X: language.Tensor((40,), "float32"), Y: T.Tensor((40,), "float32")):
    with Kernel(2, threads=32) as bx:
        s = alloc_shared((20,), "float32")
        tcopy(X[bx * 20], s)
        for i in Parallel(20):
            s[i] += 1
        tcopy(s, Y[bx * 20:bx * 20 + 20])
