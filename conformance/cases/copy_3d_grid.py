# copy_3d_grid.py — 3-D tensors over a 3-D grid; corners with leading extent-1 dimensions.
# conform: tol=exact covers=copy,Kernel3d
# conform-params: -D B=3 -D M=40 -D N=40
# conform-params: -D B=2 -D M=32 -D N=64
import tilelang
import tilelang.language as T


def copy_3d_grid(B=3, M=40, N=40, bm=16, bn=16, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((B, M, N), dtype), Y: T.Tensor((B, M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), B, threads=64) as (bx, by, bz):
            s = T.alloc_shared((bm, bn), dtype)
            f = T.alloc_fragment((bm, bn), dtype)
            T.copy(X[bz, by * bm, bx * bn], s)
            T.copy(s, f)
            for i, j in T.Parallel(bm, bn):
                f[i, j] = f[i, j] + bz
            T.copy(f, Y[bz, by * bm, bx * bn])
    return main
