# atomic_3d_dynamic.py — a 3-D grid whose depth is a T.dynamic batch size; every block atomically adds its tile's
# integer sum into its batch's counter (blocks of one batch contend), and writes a scaled copy.
# conform: tol=exact covers=atomic_add,Kernel3d,dynamic,reduce_sum
# conform-params: -D b=3
# conform-params: -D b=1
import tilelang
import tilelang.language as T


def atomic_3d_dynamic(M=48, N=40, bm=16, bn=16):
    B = T.dynamic("b")

    @T.prim_func
    def main(X: T.Tensor((B, M, N), "int32"), Y: T.Tensor((B, M, N), "int32"), S: T.Tensor((B,), "int32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), B, threads=64) as (bx, by, bz):
            t = T.alloc_fragment((bm, bn), "int32")
            rows = T.alloc_fragment((bm,), "int32")
            tot = T.alloc_fragment((1,), "int32")
            T.copy(X[bz, by * bm, bx * bn], t)
            T.reduce_sum(t, rows, dim=1)
            T.reduce_sum(rows, tot, dim=0)
            T.atomic_add(S[bz], tot[0])
            for i, j in T.Parallel(bm, bn):
                t[i, j] = t[i, j] * (bz + 2) - by
            T.copy(t, Y[bz, by * bm, bx * bn])
    return main
