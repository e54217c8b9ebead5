# module_constants.py — a top-level @T.prim_func using module-level constants (no factory).
# conform: tol=exact covers=prim_func
# conform-params: 
# conform-params: -D M=20 -D N=12
import tilelang
import tilelang.language as T


M = 48
N = 40
BLOCK = 16
DTYPE = "float32"


@T.prim_func
def module_constants(A: T.Tensor((M, N), DTYPE), B: T.Tensor((M, N), DTYPE)):
    with T.Kernel(T.ceildiv(N, BLOCK), T.ceildiv(M, BLOCK), threads=64) as (bx, by):
        t = T.alloc_shared((BLOCK, BLOCK), DTYPE)
        T.copy(A[by * BLOCK, bx * BLOCK], t)
        for i, j in T.Parallel(BLOCK, BLOCK):
            t[i, j] = t[i, j] - 1.0
        T.copy(t, B[by * BLOCK, bx * BLOCK])
