# kernel_nogrid.py — `with T.Kernel(threads=N):` with no grid extents is
# one block (TileLang launches it so), binding no block index.
# Y[i] = 2 * X[i] + 1 for the 24 elements, one parallel loop in the block.
# tilec-test:
import tilelang
import tilelang.language as T


@T.prim_func
def nogrid(X: T.Tensor((24,), "float32"), Y: T.Tensor((24,), "float32")):
    with T.Kernel(threads=64):
        for i in T.Parallel(24):
            Y[i] = X[i] * 2 + 1
