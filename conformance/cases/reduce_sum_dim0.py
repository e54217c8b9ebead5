# reduce_sum_dim0.py — column sums, one tile per block (clear=True).
# conform: tol=auto covers=reduce_sum
# conform-params: -D M=32 -D N=64 -D bm=32
# conform-params: -D M=32 -D N=45 -D bm=32
import tilelang
import tilelang.language as T


def reduce_sum_dim0(M=64, N=64, bm=32, bn=32, dtype="float32", acc="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), R: T.Tensor((N,), acc)):
        with T.Kernel(T.ceildiv(N, bn), threads=128) as bx:
            t = T.alloc_fragment((bm, bn), dtype)
            r = T.alloc_fragment((bn,), acc)
            for k in T.serial(1):
                T.copy(A[k * bm, bx * bn], t)
                T.reduce_sum(t, r, dim=0, clear=True)
            T.copy(r, R[bx * bn])
    return main
