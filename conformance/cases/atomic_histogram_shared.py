# atomic_histogram_shared.py — a histogram in shared memory built with integer atomics, merged into global with atomics.
# conform: tol=exact covers=atomic_add,alloc_shared
# conform-params: -D N=4096
# conform-params: -D N=1000
import tilelang
import tilelang.language as T


def atomic_histogram_shared(N=4096, bn=256):
    @T.prim_func
    def main(X: T.Tensor((N,), "int32"), H: T.Tensor((16,), "int32")):
        with T.Kernel(T.ceildiv(N, bn), threads=128) as bx:
            x = T.alloc_fragment((bn,), "int32")
            h = T.alloc_shared((16,), "int32")
            T.clear(h)
            T.copy(X[bx * bn], x)
            for i in T.Parallel(bn):
                if bx * bn + i < N:
                    T.atomic_add(h[(x[i] + 64) % 16], 1)
            for b in T.Parallel(16):
                T.atomic_add(H[b], h[b])
    return main
