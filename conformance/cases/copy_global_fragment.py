# copy_global_fragment.py — global -> fragment -> global with a scale in between; ragged edges.
# conform: tol=auto covers=copy,alloc_fragment,Parallel
# conform-params: -D M=96 -D N=64
# conform-params: -D M=33 -D N=17
import tilelang
import tilelang.language as T


def copy_global_fragment(M=96, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            f = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], f)
            for i, j in T.Parallel(bm, bn):
                f[i, j] = f[i, j] * 3.0
            T.copy(f, B[by * bm, bx * bn])
    return main
