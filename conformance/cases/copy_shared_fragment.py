# copy_shared_fragment.py — global -> shared -> fragment -> global.
# conform: tol=exact covers=copy,alloc_shared,alloc_fragment
# conform-params: -D M=64 -D N=64
# conform-params: -D M=50 -D N=70
import tilelang
import tilelang.language as T


def copy_shared_fragment(M=64, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            s = T.alloc_shared((bm, bn), dtype)
            f = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], s)
            T.copy(s, f)
            T.copy(f, B[by * bm, bx * bn])
    return main
