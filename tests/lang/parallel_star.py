# parallel_star.py — T.Parallel over one, two and three extents, written
# literally, with a starred compile-time tuple (`T.Parallel(*shape)`), with
# a starred tuple followed by more extents, and with a buffer's .shape.
# Y = X + 1 + 2 + 3 + 4 over a 3-D tile, W[i] = i * 10.
# tilec-test:
import tilelang
import tilelang.language as T


def pstar(A=3, B=4, C=5, dtype="float32"):
    shape = (A, B, C)

    @T.prim_func
    def main(X: T.Tensor(shape, dtype), Y: T.Tensor(shape, dtype), W: T.Tensor((A * B,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            t = T.alloc_fragment(shape, dtype)
            w = T.alloc_fragment((A * B,), "int32")
            T.copy(X, t)
            for i, j, k in T.Parallel(*shape):
                t[i, j, k] += 1
            for i, j, k in T.Parallel(*shape[0:2], C):
                t[i, j, k] += 2
            for i, j, k in T.Parallel(*t.shape):
                t[i, j, k] += 3
            for i, j, k in T.Parallel(A, B, C):
                t[i, j, k] += 4
            for i in T.Parallel(A * B):
                w[i] = i * 10
            T.copy(t, Y)
            T.copy(w, W)

    return main
