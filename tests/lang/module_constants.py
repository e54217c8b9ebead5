# module_constants.py — a top-level @T.prim_func over module-level
# constants; -D replaces a constant and the constants computed from it
# follow (N2 = 2 * N).  Y[i, :N] = X[i, :] and Y[i, N:] = 2 * X[i, :].
# tilec-test:
# tilec-test: -D N=5 -D M=3
# tilec-test: -D DTYPE=float16
import tilelang.language as T

M = 9
N = 6
N2 = 2 * N
DTYPE = "float32"
BLOCK = 4


@T.prim_func
def widen(X: T.Tensor((M, N), DTYPE), Y: T.Tensor((M, N2), DTYPE)):
    with T.Kernel(T.ceildiv(M, BLOCK), threads=32) as bx:
        t = T.alloc_fragment((BLOCK, N2), DTYPE)
        for i, j in T.Parallel(BLOCK, N2):
            t[i, j] = 0
        T.copy(X[bx * BLOCK, 0], t[:, 0:N])
        for i, j in T.Parallel(BLOCK, N):
            t[i, j + N] = t[i, j] * 2
        T.copy(t, Y[bx * BLOCK, 0])
