# imports_sibling.py — `from sibling_helpers import ...` of a sibling file:
# its module constants and functions (which read its own globals: OFFSET
# is 5 there, 100 here), a name bound with `as`, and a name the sibling
# does not define (host code), which is only an error where it is used.
# Y = scaled(X) + TWICE = 3 X + 5 + 6.
# tilec-test:
import tilelang
import tilelang.language as T
from sibling_helpers import SCALE as TIMES, scaled, reference_impl

OFFSET = 100
TWICE = 2 * TIMES


@T.prim_func
def uses_sibling(X: T.Tensor((8,), "float32"), Y: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(8):
            Y[i] = scaled(X[i]) + TWICE
