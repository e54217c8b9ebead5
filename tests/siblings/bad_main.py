# bad_main.py — a sibling's function fails: the diagnostic names the
# sibling file and its line (tests/test_language_compat.c).
import tilelang
import tilelang.language as T
from bad_helper import check_block, host_only


@T.prim_func
def main(X: T.Tensor((8,), "float32")):
    check_block(48)
    with T.Kernel(1, threads=32) as bx:
        X[0] = 1.0
