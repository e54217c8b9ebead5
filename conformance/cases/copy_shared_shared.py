# copy_shared_shared.py — shared -> shared copy of a sub-tile, and fragment -> fragment.
# conform: tol=exact covers=copy,alloc_shared,alloc_fragment
# conform-params: -D M=64 -D N=64
# conform-params: -D M=20 -D N=36
import tilelang
import tilelang.language as T


def copy_shared_shared(M=64, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            s1 = T.alloc_shared((bm, bn), dtype)
            s2 = T.alloc_shared((bm, bn), dtype)
            f1 = T.alloc_fragment((bm, bn), dtype)
            f2 = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], s1)
            T.copy(s1, s2)
            T.copy(s2, f1)
            T.copy(f1, f2)
            T.copy(f2, B[by * bm, bx * bn])
    return main
