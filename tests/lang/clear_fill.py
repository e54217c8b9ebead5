# clear_fill.py — T.clear and T.fill on whole tiles of each scope, on a
# region (a slice of a tile and a slice of a global tensor), with a float
# value into an int tile (converted), with -T.infinity, and with a
# run-time value.  Y rows: 0, 2.5, X[0], column 1 is -7 via a region fill.
# tilec-test:
import tilelang
import tilelang.language as T


def fills(N=6, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((5, N), dtype), I: T.Tensor((N,), "int32"),
             G: T.Tensor((4, N), dtype)):
        with T.Kernel(1, threads=32) as bx:
            f = T.alloc_fragment((5, N), dtype)
            s = T.alloc_shared((N,), "int32")
            l = T.alloc_local((N,), dtype)
            T.clear(f)
            T.fill(f[1, :], 2.5)
            T.fill(f[2, 0:N], X[0])
            T.fill(f[3:5, :], -T.infinity(dtype))
            T.fill(f[0:5, 1], -7)
            T.copy(f, Y)
            T.fill(s, 3.9)
            T.copy(s, I)
            T.fill(l, 1)
            T.clear(l)
            T.copy(l, G[0, :])
            T.fill(G[1:4, 0:N], 0.5)

    return main
