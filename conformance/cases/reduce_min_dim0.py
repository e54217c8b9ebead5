# reduce_min_dim0.py — column min over tiles with clear=False; padding masked to +inf.
# conform: tol=auto covers=reduce_min
# conform-params: -D M=128 -D N=64
# conform-params: -D M=90 -D N=40
import tilelang
import tilelang.language as T


def reduce_min_dim0(M=64, N=64, bm=32, bn=32, dtype="float32", acc="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), R: T.Tensor((N,), acc)):
        with T.Kernel(T.ceildiv(N, bn), threads=128) as bx:
            t = T.alloc_fragment((bm, bn), dtype)
            r = T.alloc_fragment((bn,), acc)
            T.fill(r, T.infinity(acc))
            for k in T.serial(T.ceildiv(M, bm)):
                T.copy(A[k * bm, bx * bn], t)
                for i, j in T.Parallel(bm, bn):
                    t[i, j] = T.if_then_else(k * bm + i < M, t[i, j], T.infinity(dtype))
                T.reduce_min(t, r, dim=0, clear=False)
            T.copy(r, R[bx * bn])
    return main
