# atomic_add_float.py — every block atomically adds its tile column sums into one row: many blocks contend for the same elements.
# conform: tol=fp32 covers=atomic_add
# conform-params: -D M=256 -D N=64
# conform-params: -D M=200 -D N=50
import tilelang
import tilelang.language as T


def atomic_add_float(M=256, N=64, bm=16, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), S: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            t = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], t)
            for i, j in T.Parallel(bm, bn):
                if bx * bn + j < N:
                    T.atomic_add(S[bx * bn + j], t[i, j])
    return main
