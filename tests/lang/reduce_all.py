# reduce_all.py — T.reduce_max / min / sum / abssum / absmax along dim 0,
# dim 1 and dim=-1, positional and keyword, with clear=True (default) and
# clear=False (combined with the destination's current value), and a 1-D
# source reduced into a (1,) destination.
# tilec-test:
# tilec-test: -D M=1 -D N=3
import tilelang
import tilelang.language as T


def reds(M=6, N=10, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), R1: T.Tensor((5, M), dtype), R0: T.Tensor((5, N), dtype),
             K: T.Tensor((4,), dtype)):
        with T.Kernel(1, threads=64) as bx:
            x = T.alloc_fragment((M, N), dtype)
            r = T.alloc_fragment((M,), dtype)
            c = T.alloc_fragment((N,), dtype)
            one = T.alloc_fragment((1,), dtype)
            T.copy(X, x)
            T.reduce_max(x, r, 1)
            T.copy(r, R1[0, :])
            T.reduce_min(x, r, dim=-1)
            T.copy(r, R1[1, :])
            T.reduce_sum(x, r, dim=1, clear=True)
            T.copy(r, R1[2, :])
            T.reduce_abssum(x, r, dim=1)
            T.copy(r, R1[3, :])
            T.fill(r, 0.75)
            T.reduce_absmax(x, r, dim=1, clear=False)
            T.copy(r, R1[4, :])
            T.reduce_max(x, c, dim=0)
            T.copy(c, R0[0, :])
            T.fill(c, 0.5)
            T.reduce_min(x, c, 0, False)
            T.copy(c, R0[1, :])
            T.fill(c, 100)
            T.reduce_sum(x, c, dim=0, clear=False)
            T.copy(c, R0[2, :])
            T.reduce_abssum(x, c, dim=0)
            T.copy(c, R0[3, :])
            T.reduce_absmax(x, c, dim=-2)
            T.copy(c, R0[4, :])
            T.reduce_sum(c, one, dim=0)
            K[0] = one[0]
            T.reduce_max(r, one)
            K[1] = one[0]
            T.fill(one, 1000)
            T.reduce_min(c, one, clear=False)
            K[2] = one[0]
            T.reduce_absmax(r, one, 0)
            K[3] = one[0]

    return main
