# threads_shapes.py — the same kernel with 1, 32, 256 and (16, 8) threads per block: results must not depend on it.
# conform: tol=fp32 covers=Kernel
# conform-params: -D threads=1
# conform-params: -D threads=32
# conform-params: -D threads=256
# conform-params: -D tx=16 -D ty=8 -D two=True
import tilelang
import tilelang.language as T


def threads_shapes(M=48, N=40, bm=16, bn=16, threads=128, tx=1, ty=1, two=False, dtype="float32"):
    thr = (tx, ty) if two else threads

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=thr) as (bx, by):
            t = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], t)
            for i, j in T.Parallel(bm, bn):
                t[i, j] = t[i, j] + i * 100 + j
            T.copy(t, B[by * bm, bx * bn])
    return main
