# sync_grid.py — T.sync_grid(): every block finishes the code before it
# before any block goes on (the rest of the body is the next kernel of the
# chain, same grid).  4 blocks of 4 elements: phase 1 writes each block's
# sum into P; phase 2 reads every block's sum:
#   P[b] = sum(X[4b .. 4b+3]);  Y[4b + i] = X[4b + i] * 2 + (P[0] + P[1] + P[2] + P[3])
# The fragment `acc` is written again after the sync (on-chip buffers do
# not keep their contents across it).
# tilec-test:
import tilelang
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((16,), "float32"), P: T.Tensor((4,), "float32"), Y: T.Tensor((16,), "float32")):
    with T.Kernel(4, threads=32) as b:
        acc = T.alloc_fragment((4,), "float32")
        s = T.alloc_fragment((1,), "float32")
        for i in T.Parallel(4):
            acc[i] = X[b * 4 + i]
        T.reduce_sum(acc, s, dim=0)
        P[b] = s[0]
        T.sync_grid()
        for i in T.Parallel(4):
            acc[i] = X[b * 4 + i] * 2
        tot = P[0] + P[1] + P[2] + P[3]
        for i in T.Parallel(4):
            Y[b * 4 + i] = acc[i] + tot
