# int_types.py — int16, uint16, uint32 and int64 arithmetic with wrap-around on narrowing: exact.
# conform: tol=exact covers=int
# conform-params: -D N=256
# conform-params: -D N=100
import tilelang
import tilelang.language as T


def int_types(N=256, bn=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "int16"), B: T.Tensor((N,), "uint16"), C: T.Tensor((N,), "uint32"), D: T.Tensor((N,), "int64")):
        with T.Kernel(T.ceildiv(N, bn), threads=64) as bx:
            a = T.alloc_fragment((bn,), "int16")
            b = T.alloc_fragment((bn,), "uint16")
            c = T.alloc_fragment((bn,), "uint32")
            d = T.alloc_fragment((bn,), "int64")
            T.copy(A[bx * bn], a)
            T.copy(B[bx * bn], b)
            T.copy(C[bx * bn], c)
            T.copy(D[bx * bn], d)
            for i in T.Parallel(bn):
                a[i] = a[i] * a[i] * a[i] * 9
                b[i] = b[i] * 1500 + 7
                c[i] = c[i] * c[i] * 100000 + b[i]
                d[i] = d[i] * 4000000000 + a[i]
            T.copy(a, A[bx * bn])
            T.copy(b, B[bx * bn])
            T.copy(c, C[bx * bn])
            T.copy(d, D[bx * bn])
    return main
