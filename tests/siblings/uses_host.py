# uses_host.py — calls a name its sibling does not define (host code):
# the diagnostic names it (tests/test_language_compat.c).
import tilelang
import tilelang.language as T
from bad_helper import host_only


@T.prim_func
def main(X: T.Tensor((8,), "float32")):
    n = host_only(8)
    with T.Kernel(1, threads=32) as bx:
        X[0] = n
