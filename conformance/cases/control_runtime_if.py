# control_runtime_if.py — run-time if/elif/else on block indices, loop variables and data; compile-time if on a parameter.
# conform: tol=exact covers=if
# conform-params: -D M=64 -D N=64
# conform-params: -D M=40 -D N=24 -D flip=True
import tilelang
import tilelang.language as T


def control_runtime_if(M=64, N=64, bm=16, bn=16, flip=False, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            t = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], t)
            for i, j in T.Parallel(bm, bn):
                if (bx + by) % 2 == 0:
                    t[i, j] = -t[i, j]
                elif i < j:
                    t[i, j] = 0.0
                else:
                    if t[i, j] > 0.5:
                        t[i, j] = 1.0
            if flip:
                for i, j in T.Parallel(bm, bn):
                    t[i, j] = t[i, j] + 10.0
            T.copy(t, B[by * bm, bx * bn])
    return main
