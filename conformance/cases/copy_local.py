# copy_local.py — copies through T.alloc_local scratch in every direction.
# conform: tol=exact covers=copy,alloc_local,alloc_shared,alloc_fragment
# conform-params: -D M=32 -D N=32
# conform-params: -D M=19 -D N=23
import tilelang
import tilelang.language as T


def copy_local(M=32, N=32, bm=16, bn=16, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=32) as (bx, by):
            loc = T.alloc_local((bm, bn), dtype)
            s = T.alloc_shared((bm, bn), dtype)
            f = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], loc)
            T.copy(loc, s)
            T.copy(s, loc)
            T.copy(loc, f)
            T.copy(f, loc)
            T.copy(loc, B[by * bm, bx * bn])
            for i, j in T.Parallel(bm, bn):
                loc[i, j] = loc[i, j] + 1.0
            T.copy(loc, C[by * bm, bx * bn])
    return main
