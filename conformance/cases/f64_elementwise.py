# f64_elementwise.py — float64 elementwise math (needs fp64).
# conform: tol=fp32 covers=fp64,exp,sqrt
# conform-params: -D M=32 -D N=32
# conform-params: -D M=3 -D N=50
import tilelang
import tilelang.language as T


def f64_elementwise(M=32, N=32, bm=16, bn=16, dtype="float64"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            a = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], a)
            for i, j in T.Parallel(bm, bn):
                a[i, j] = T.exp(a[i, j]) * T.sqrt(a[i, j] * a[i, j] + 1.0) - 1.0 / 3.0
            T.copy(a, B[by * bm, bx * bn])
    return main
