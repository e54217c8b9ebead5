# int_arith.py — integer arithmetic with negative operands: / truncates, // and % floor, min/max/abs: exact.
# conform: tol=exact covers=int
# conform-params: -D M=32 -D N=32
# conform-params: -D M=11 -D N=19
import tilelang
import tilelang.language as T


def int_arith(M=32, N=32, bm=16, bn=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M, N), "int32"), Q: T.Tensor((M, N), "int32"),
             R: T.Tensor((M, N), "int32"), S: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            a = T.alloc_fragment((bm, bn), "int32")
            b = T.alloc_fragment((bm, bn), "int32")
            q = T.alloc_fragment((bm, bn), "int32")
            r = T.alloc_fragment((bm, bn), "int32")
            s = T.alloc_fragment((bm, bn), "int32")
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            for i, j in T.Parallel(bm, bn):
                d = T.if_then_else(b[i, j] == 0, 7, b[i, j])
                q[i, j] = a[i, j] // d + a[i, j] / d * 1000
                r[i, j] = a[i, j] % d
                s[i, j] = T.max(a[i, j], b[i, j]) * 3 - T.min(a[i, j], -b[i, j]) + T.abs(a[i, j] - b[i, j])
            T.copy(q, Q[by * bm, bx * bn])
            T.copy(r, R[by * bm, bx * bn])
            T.copy(s, S[by * bm, bx * bn])
    return main
