# scalar_params.py — scalar kernel parameters and TileLang's annotation forms.
# `n: T.int32` is a T.dynamic symbol bound at launch (-D n=5); `alpha:
# T.float32` is a constant of the compiled kernel (-D alpha=0.5).  out_idx
# counts the scalars too, as TileLang does: -1 is Y.  T.dynamic("m, k")
# makes two symbols at once; typing annotations (Callable[..., Any],
# Optional[str]) are accepted; a dtype iterates as its name; print() of the
# kernel prints "<function main>" at compile time.
# Y[i, j] = X[i, j] * 0.5 + 5 for the 6 x 3 rows of X (two blocks of 4 rows).
# tilec-test: -D m=6 -D k=3 -D n=5 -D alpha=0.5
import tilelang
import tilelang.language as T
from typing import Any, Callable, Optional


@tilelang.jit(out_idx=[-1])
def scale(block: int = 4) -> Callable[..., Any]:
    m, k = T.dynamic("m, k")
    note: Optional[str] = None
    assert note is None
    assert "".join(c for c in T.float16 if not c.isdigit()) == "float"
    assert tilelang.DataType("float16").bits == 16

    @T.prim_func
    def main(X: T.Tensor((m, k), "float32"), n: T.int32, alpha: T.float32, Y: T.Tensor((m, k), "float32")):
        with T.Kernel(T.ceildiv(m, block), threads=32) as bx:
            for i, j in T.Parallel(block, k):
                if bx * block + i < m:
                    Y[bx * block + i, j] = X[bx * block + i, j] * alpha + n

    print(main)
    return main
