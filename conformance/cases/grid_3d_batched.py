# grid_3d_batched.py — a 3-D grid over (batch, heads, row blocks), each block scaling its own slice.
# conform: tol=auto covers=Kernel3d,copy
# conform-params: -D Bt=2 -D H=3 -D S=64
# conform-params: -D Bt=1 -D H=2 -D S=50
import tilelang
import tilelang.language as T


def grid_3d_batched(Bt=2, H=3, S=64, D=16, bm=32, dtype="float16"):
    @T.prim_func
    def main(X: T.Tensor((Bt, H, S, D), dtype), Y: T.Tensor((Bt, H, S, D), dtype)):
        with T.Kernel(T.ceildiv(S, bm), H, Bt, threads=128) as (bx, by, bz):
            t = T.alloc_shared((bm, D), dtype)
            f = T.alloc_fragment((bm, D), "float32")
            T.copy(X[bz, by, bx * bm:(bx + 1) * bm, :], t)
            T.copy(t, f)
            for i, j in T.Parallel(bm, D):
                f[i, j] = f[i, j] * (by + 1) + bz
            T.copy(f, Y[bz, by, bx * bm:(bx + 1) * bm, :])
    return main
