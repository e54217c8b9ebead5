# on-chip buffers do not keep their contents across T.sync_grid()
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
    with T.Kernel(2, threads=32) as bx:
        f = T.alloc_fragment((4,), "float32")
        for i in T.Parallel(4):
            f[i] = A[bx * 4 + i]
        T.sync_grid()
        for i in T.Parallel(4):
            B[bx * 4 + i] = f[i] + 1
