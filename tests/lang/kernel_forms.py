# kernel_forms.py — T.Kernel with a starred grid tuple and three block
# indices (`T.Kernel(*grid, threads=N) as (bx, by, bz)`), threads as a
# tuple.  Y[z, y, x] = X[z, y, x] + 100*z + 10*y + x, one element per block.
# tilec-test:
import tilelang
import tilelang.language as T


def kforms(X0=3, Y0=2, Z0=4, dtype="float32"):
    grid = (X0, Y0, Z0)

    @T.prim_func
    def main(X: T.Tensor((Z0, Y0, X0), dtype), Y: T.Tensor((Z0, Y0, X0), dtype)):
        with T.Kernel(*grid, threads=(32, 2)) as (bx, by, bz):
            Y[bz, by, bx] = X[bz, by, bx] + 100 * bz + 10 * by + bx

    return main
