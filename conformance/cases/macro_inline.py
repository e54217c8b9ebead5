# macro_inline.py — @T.macro helpers inlined at their call sites, one returning a value.
# conform: tol=fp32 covers=macro
# conform-params: -D M=64 -D N=64
# conform-params: -D M=21 -D N=37
import tilelang
import tilelang.language as T


@T.macro
def scale_tile(t, bm, bn, f):
    for i, j in T.Parallel(bm, bn):
        t[i, j] = t[i, j] * f


@T.macro
def squash(x):
    return x / (1.0 + T.abs(x))


def macro_inline(M=64, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            t = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], t)
            scale_tile(t, bm, bn, 3.0)
            for i, j in T.Parallel(bm, bn):
                t[i, j] = squash(t[i, j])
            T.copy(t, B[by * bm, bx * bn])
    return main
