# persistent.py — T.Persistent: a persistent kernel of 3 blocks takes the
# tiles b, b + 3, b + 6, ... of a 4 x 5 tile domain (ragged: 20 tiles over
# 3 blocks), each tile once over the grid.  Tile (i, j) of Out (2 x 2
# elements) gets X's tile plus 10 * i + j; Cnt[i, j] counts the visits (one
# more than it held).
# tilec-test:
import tilelang
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((8, 10), "float32"), Out: T.Tensor((8, 10), "float32"), Cnt: T.Tensor((4, 5), "int32")):
    with T.Kernel(3, threads=32) as b:
        for i, j in T.Persistent([4, 5], 3, b):
            for u, v in T.Parallel(2, 2):
                Out[i * 2 + u, j * 2 + v] = X[i * 2 + u, j * 2 + v] + 10 * i + j
            T.atomic_add(Cnt[i, j], 1)
