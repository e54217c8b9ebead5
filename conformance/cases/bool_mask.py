# bool_mask.py — a bool tensor as a mask: selects between two inputs and counts set flags.
# conform: tol=exact covers=bool,if_then_else
# conform-params: -D M=32 -D N=32
# conform-params: -D M=17 -D N=3
import tilelang
import tilelang.language as T


def bool_mask(M=32, N=32, bm=16, bn=16):
    @T.prim_func
    def main(Mk: T.Tensor((M, N), "bool"), A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
             C: T.Tensor((M, N), "float32"), Nm: T.Tensor((M, N), "bool")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            m = T.alloc_fragment((bm, bn), "bool")
            a = T.alloc_fragment((bm, bn), "float32")
            b = T.alloc_fragment((bm, bn), "float32")
            T.copy(Mk[by * bm, bx * bn], m)
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            for i, j in T.Parallel(bm, bn):
                a[i, j] = T.if_then_else(m[i, j], a[i, j], b[i, j])
                m[i, j] = not m[i, j] and b[i, j] > 0
            T.copy(a, C[by * bm, bx * bn])
            T.copy(m, Nm[by * bm, bx * bn])
    return main
