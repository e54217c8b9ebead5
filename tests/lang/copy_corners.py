# copy_corners.py — T.copy with the corner on the on-chip side: a global
# slice into a shared corner (s[2, 0] gets 4 rows), a shared corner out
# to a fragment (rows 1..4 of s), a fragment into a global corner, a 1-D
# tile into a column slice, and a local corner into a global slice.
# Y = [0, X[0], X[1], X[2]] (rows), Col[:, 1] = X[:, 3], Z = X[6:8, :].
# tilec-test:
import tilelang
import tilelang.language as T


def corners(N=8):
    @T.prim_func
    def main(X: T.Tensor((8, N), "float32"), Y: T.Tensor((4, N), "float32"),
             Col: T.Tensor((8, 2), "float32"), Z: T.Tensor((2, N), "float32")):
        with T.Kernel(1, threads=32) as bx:
            s = T.alloc_shared((8, N), "float32")
            f = T.alloc_fragment((4, N), "float32")
            c = T.alloc_fragment((8,), "float32")
            l = T.alloc_local((3, N), "float32")
            T.clear(s)
            T.copy(X[0:4, 0:N], s[2, 0])       # s[2:6, :] = X[0:4, :]
            T.copy(s[1, 0], f)                 # f = s[1:5, :] = [0, X0, X1, X2]
            T.copy(f, Y[0, 0])
            T.copy(X[:, 3], c)                 # column 3
            T.copy(c, Col[0:8, 1])
            T.copy(X[5:8, :], l)
            T.copy(l[1, 0], Z[0:2, 0:N])       # Z = X[6:8, :]

    return main
