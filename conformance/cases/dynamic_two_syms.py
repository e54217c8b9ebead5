# dynamic_two_syms.py — two T.dynamic symbols, used in shapes, the grid and a run-time loop bound.
# conform: tol=auto covers=dynamic,serial
# conform-params: -D m=40 -D n=70
# conform-params: -D m=64 -D n=64
# conform-params: -D m=3 -D n=1
import tilelang
import tilelang.language as T


def dynamic_two_syms(bm=16, bn=32, dtype="float32"):
    M = T.dynamic("m")
    N = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), S: T.Tensor((M, 1), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=64) as bx:
            t = T.alloc_fragment((bm, bn), dtype)
            acc = T.alloc_fragment((bm,), dtype)
            T.clear(acc)
            for k in T.serial(T.ceildiv(N, bn)):
                T.copy(A[bx * bm, k * bn], t)
                T.reduce_sum(t, acc, dim=1, clear=False)
            for i in T.Parallel(bm):
                if bx * bm + i < M:
                    S[bx * bm + i, 0] = acc[i] / N
    return main
