# factory_constants.py — a kernel factory that computes constants from its
# parameters (a float power, a 4-D shape tuple, a derived bool, a tuple
# index) and defines a prim_func over them.  Y = X * scale + shift, with
# scale = (1/dim) ** 0.5 and the loop nest written T.Parallel(*tile).
# tilec-test:
# tilec-test: -D dim=16 -D heads=3
# tilec-test: -D batch=1 -D seq=5 -D dim=4 -D shift=-2.5
import tilelang
import tilelang.language as T


def scaled(batch=2, seq=7, heads=2, dim=8, shift=0.25, dtype="float32"):
    scale = (1.0 / dim) ** 0.5
    shape = (batch, seq, heads, dim)
    tile = (1, 1, heads, dim)
    nd = len(shape)
    big = dim > 8
    rows = shape[0] * shape[1]
    assert nd == 4, "shape must be 4-D"

    @T.prim_func
    def main(X: T.Tensor(shape, dtype), Y: T.Tensor(shape, dtype)):
        with T.Kernel(shape[1], batch, threads=64) as (bx, by):
            t = T.alloc_fragment(tile, dtype)
            T.copy(X[by, bx, 0, 0], t)
            for a, b, h, d in T.Parallel(*tile):
                t[a, b, h, d] = t[a, b, h, d] * scale + (shift * 2 if big else shift)
            T.copy(t, Y[by, bx, 0:heads, 0:dim])

    return main
