# ct_fold.py — scalar primitives on compile-time values are folded in the
# factory: T.ceildiv, T.max, T.min, T.abs, T.exp, T.log, T.sqrt, T.cast of
# a constant, Python min/max/abs/int/float, and used as sizes and
# constants inside the kernel.  Y[i] = X[i] * k for a folded k.
# tilec-test:
# tilec-test: -D N=100
import tilelang
import tilelang.language as T


def ctf(N=37, B=8, dtype="float32"):
    nblk = T.ceildiv(N, B)
    pad = nblk * B
    k = T.max(2, 3) + T.min(2, 3) + T.abs(-4) + int(T.sqrt(16.0)) + int(T.exp(0.0)) + int(T.log(1.0))
    kk = max(1, 2, 3) - min(4, 5) + abs(-2) + int(3.9) + float(1)   # 3 - 4 + 2 + 3 + 1 = 5.0
    assert k == 14
    assert kk == 5.0

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype), P: T.Tensor((1,), "int32")):
        with T.Kernel(nblk, threads=32) as bx:
            t = T.alloc_fragment((B,), dtype)
            T.copy(X[bx * B], t)
            for i in T.Parallel(B):
                t[i] = t[i] * k + kk
            T.copy(t, Y[bx * B])
            if bx == 0:
                P[0] = pad

    return main
