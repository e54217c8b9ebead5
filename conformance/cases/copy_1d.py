# copy_1d.py — one-dimensional tensors over a 1-D grid, ragged tail.
# conform: tol=exact covers=copy,Kernel1d
# conform-params: -D N=1024
# conform-params: -D N=1000
# conform-params: -D N=1
import tilelang
import tilelang.language as T


def copy_1d(N=1024, bn=128, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, bn), threads=128) as bx:
            s = T.alloc_shared((bn,), dtype)
            T.copy(A[bx * bn], s)
            for i in T.Parallel(bn):
                s[i] = s[i] * s[i]
            T.copy(s, B[bx * bn])
    return main
