# buffer_attrs.py — buffers' .shape and .dtype: on kernel tensors and on
# tiles, used for allocation shapes and dtypes, loop extents, grid extents,
# index arithmetic, and compared in compile-time asserts and ifs.
# Y[i, j] = X[i, j] * (number of columns) with the tile shape from X.shape.
# tilec-test:
# tilec-test: -D M=5 -D N=3 -D dtype=float16
import tilelang
import tilelang.language as T


def attrs(M=6, N=10, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        rows, cols = X.shape
        with T.Kernel(X.shape[0], threads=32) as bx:
            row = T.alloc_fragment((X.shape[1],), X.dtype)
            acc = T.alloc_fragment(row.shape, "float32")
            assert row.shape == (cols,) and len(X.shape) == 2
            T.copy(X[bx, :], row)
            for j in T.Parallel(row.shape[0]):
                acc[j] = row[j] * cols
            if Y.dtype == "float16":
                for j in T.Parallel(*acc.shape):
                    acc[j] = acc[j] + 0.0
            T.copy(acc, Y[bx, 0:Y.shape[1]])

    return main
