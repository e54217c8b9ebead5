# atomic_max_min_float.py — float32 atomic max and min of every element into a few cells under contention.
# conform: tol=exact covers=atomic_max,atomic_min
# conform-params: -D M=128 -D N=64
# conform-params: -D M=50 -D N=70
import tilelang
import tilelang.language as T


def atomic_max_min_float(M=128, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), Mx: T.Tensor((8,), dtype), Mn: T.Tensor((8,), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            t = T.alloc_shared((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], t)
            for i, j in T.Parallel(bm, bn):
                if by * bm + i < M and bx * bn + j < N:
                    T.atomic_max(Mx[j % 8], t[i, j])
                    T.atomic_min(Mn[i % 8], t[i, j])
    return main
