# assign_unpack.py — assignment forms inside a kernel: plain names,
# tuple unpacking of compile-time tuples and of run-time values
# (`i0, j0 = by * BM, bx * BN`), nested and parenthesised targets,
# re-assignment of a scalar temporary, swapping (`y, x = x, y` reads the
# old values, as in Python), and stores to elements.  B = 2 - 2 * A.
# tilec-test:
import tilelang
import tilelang.language as T


def unpack(M=10, N=12, BM=4, BN=8, dtype="float32"):
    shape = (M, N)
    tile = (BM, BN)

    @T.prim_func
    def main(A: T.Tensor(shape, dtype), B: T.Tensor(shape, dtype)):
        rows, cols = shape
        bm, bn = tile
        with T.Kernel(T.ceildiv(cols, bn), T.ceildiv(rows, bm), threads=32) as (bx, by):
            i0, j0 = by * bm, bx * bn
            (p, q), r = (1.0, 2.0), 3.0
            for i, j in T.Parallel(bm, bn):
                if i0 + i < rows and j0 + j < cols:
                    x = A[i0 + i, j0 + j]
                    y = x * p
                    y, z = y + q, y * r
                    x = y - z
                    y, x = x, y                 # a swap reads the old values
                    B[i0 + i, j0 + j] = y

    return main
