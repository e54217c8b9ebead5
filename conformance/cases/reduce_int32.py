# reduce_int32.py — int32 row sums and column maxima: exact.
# conform: tol=exact covers=reduce_sum
# conform-params: -D M=64 -D N=128
# conform-params: -D M=21 -D N=50
import tilelang
import tilelang.language as T


def reduce_int32(M=64, N=64, bm=32, bn=32, dtype="int32", acc="int32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), R: T.Tensor((M,), acc)):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            t = T.alloc_fragment((bm, bn), dtype)
            r = T.alloc_fragment((bm,), acc)
            T.fill(r, 0)
            for k in T.serial(T.ceildiv(N, bn)):
                T.copy(A[bx * bm, k * bn], t)
                T.reduce_sum(t, r, dim=1, clear=False)
            T.copy(r, R[bx * bm])
    return main
