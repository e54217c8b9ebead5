# math_binary_select.py — T.max, T.min, T.if_then_else, conditional expressions, T.infinity, floor/ceil, pow, comparisons.
# conform: tol=fp32 covers=max,min,if_then_else,infinity
# conform-params: -D M=64 -D N=64
# conform-params: -D M=31 -D N=33
import tilelang
import tilelang.language as T


def math_binary_select(M=64, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype), D: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_fragment((bm, bn), dtype)
            b = T.alloc_fragment((bm, bn), dtype)
            c = T.alloc_fragment((bm, bn), dtype)
            d = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            for i, j in T.Parallel(bm, bn):
                c[i, j] = T.max(a[i, j], b[i, j]) - T.min(a[i, j], b[i, j] * 0.5)
                m = T.if_then_else(a[i, j] > 0.25, -T.infinity(dtype), a[i, j])
                d[i, j] = T.max(m, -0.5) + (T.floor(a[i, j] * 4.0) if b[i, j] < 0 else T.ceil(b[i, j] * 4.0))
                d[i, j] += T.abs(a[i, j]) ** 2.0
            T.copy(c, C[by * bm, bx * bn])
            T.copy(d, D[by * bm, bx * bn])
    return main
