# atomic_max_min_int.py — int32 atomic max/min into shared counters, then written out: exact.
# conform: tol=exact covers=atomic_max,atomic_min,alloc_shared
# conform-params: -D M=64 -D N=64
# conform-params: -D M=40 -D N=24
import tilelang
import tilelang.language as T


def atomic_max_min_int(M=64, N=64, bm=32, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), Mx: T.Tensor((T.ceildiv(M, bm), 4), "int32"), Mn: T.Tensor((T.ceildiv(M, bm), 4), "int32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            t = T.alloc_fragment((bm, bn), "int32")
            hi = T.alloc_shared((4,), "int32")
            lo = T.alloc_shared((4,), "int32")
            T.fill(hi, -1000)
            T.fill(lo, 1000)
            for k in T.serial(T.ceildiv(N, bn)):
                T.copy(A[bx * bm, k * bn], t)
                for i, j in T.Parallel(bm, bn):
                    if bx * bm + i < M and k * bn + j < N:
                        T.atomic_max(hi[j % 4], t[i, j])
                        T.atomic_min(lo[i % 4], t[i, j])
            T.copy(hi, Mx[bx, 0])
            T.copy(lo, Mn[bx, 0])
    return main
