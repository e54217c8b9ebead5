# module_constants.py — a top-level @T.prim_func (no factory) whose sizes are
# module-level constants, which -D can override like factory parameters.
# It computes Y = X * scale + shift, with a per-column shift vector:
# Y[i, j] = X[i, j] * SCALE + Shift[j].  SCALE is derived from other
# constants at compile time.
# tilec-test:
# tilec-test: -D M=10 -D N=300 -D BLOCK_N=128

import tilelang
import tilelang.language as T

M = 120
N = 80
BLOCK_M = 32
BLOCK_N = 64
DTYPE = "float32"
SCALE = 1.0 / 4 + 0.25        # 0.5


@T.prim_func
def scale_shift(X: T.Tensor((M, N), DTYPE),
                Shift: T.Tensor((N,), DTYPE),
                Y: T.Tensor((M, N), DTYPE)):
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=128) as (bx, by):
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), DTYPE)
        s = T.alloc_shared((BLOCK_N,), DTYPE)
        T.copy(X[by * BLOCK_M, bx * BLOCK_N], x)
        T.copy(Shift[bx * BLOCK_N], s)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = x[i, j] * SCALE + s[j]
        T.copy(x, Y[by * BLOCK_M, bx * BLOCK_N])
