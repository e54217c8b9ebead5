# reduce_absmax_dim1_clear.py — row max of absolute values (clear=True).
# conform: tol=auto covers=reduce_absmax
# conform-params: -D M=64 -D N=32 -D bn=32
import tilelang
import tilelang.language as T


def reduce_absmax_dim1_clear(M=64, N=64, bm=32, bn=32, dtype="float32", acc="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), R: T.Tensor((M,), acc)):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            t = T.alloc_fragment((bm, bn), dtype)
            r = T.alloc_fragment((bm,), acc)
            for k in T.serial(1):
                T.copy(A[bx * bm, k * bn], t)
                T.reduce_absmax(t, r, dim=1, clear=True)
            T.copy(r, R[bx * bm])
    return main
