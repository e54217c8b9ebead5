# sibling_helpers.py — helpers that imports_sibling.py imports from this
# file, beside it (`from sibling_helpers import ...`).  Its own kernel:
# Y = X * SCALE + OFFSET = 3 X + 5.
# tilec-test:
import tilelang
import tilelang.language as T

SCALE = 3
OFFSET = 5


def scaled(x):
    return x * SCALE + OFFSET   # this file's globals, wherever it is called from


@T.prim_func
def helper_kernel(X: T.Tensor((8,), "float32"), Y: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(8):
            Y[i] = scaled(X[i])
