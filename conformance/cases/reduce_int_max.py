# reduce_int_max.py — int32 column max with clear=False: exact.
# conform: tol=exact covers=reduce_max
# conform-params: -D M=96 -D N=64
import tilelang
import tilelang.language as T


def reduce_int_max(M=64, N=64, bm=32, bn=32, dtype="int32", acc="int32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), R: T.Tensor((N,), acc)):
        with T.Kernel(T.ceildiv(N, bn), threads=128) as bx:
            t = T.alloc_fragment((bm, bn), dtype)
            r = T.alloc_fragment((bn,), acc)
            T.fill(r, -100000)
            for k in T.serial(T.ceildiv(M, bm)):
                T.copy(A[k * bm, bx * bn], t)
                for i, j in T.Parallel(bm, bn):
                    t[i, j] = T.if_then_else(k * bm + i < M, t[i, j], -1000)
                T.reduce_max(t, r, dim=0, clear=False)
            T.copy(r, R[bx * bn])
    return main
