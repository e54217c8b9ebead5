# dynamic_rows.py — T.dynamic row count: one kernel for every m, grid from m at launch, ragged last block.
# conform: tol=auto covers=dynamic,copy,Parallel
# conform-params: -D m=1
# conform-params: -D m=77
# conform-params: -D m=128
import tilelang
import tilelang.language as T


def dynamic_rows(N=64, bm=32, dtype="float32"):
    M = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            t = T.alloc_fragment((bm, N), dtype)
            T.copy(A[bx * bm, 0], t)
            for i, j in T.Parallel(bm, N):
                t[i, j] = t[i, j] * 2.0 + 1.0
            T.copy(t, B[bx * bm, 0])
    return main
