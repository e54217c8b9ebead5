# softmax_rows.py — row softmax: reduce_max, exp2, reduce_sum and a division, float16 in/out, masked ragged columns.
# conform: tol=fp16 covers=reduce_max,reduce_sum,exp2,infinity
# conform-params: -D M=64 -D N=64
# conform-params: -D M=33 -D N=50
import tilelang
import tilelang.language as T


def softmax_rows(M=64, N=64, bm=16, dtype="float16"):
    bn = 64
    log2e = 1.44269504

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            t = T.alloc_fragment((bm, bn), "float32")
            mx = T.alloc_fragment((bm,), "float32")
            sm = T.alloc_fragment((bm,), "float32")
            T.copy(X[bx * bm, 0], t)
            for i, j in T.Parallel(bm, bn):
                t[i, j] = T.if_then_else(j < N, t[i, j], -T.infinity("float32"))
            T.reduce_max(t, mx, dim=1)
            for i, j in T.Parallel(bm, bn):
                t[i, j] = T.exp2((t[i, j] - mx[i]) * log2e)
            T.reduce_sum(t, sm, dim=1)
            for i, j in T.Parallel(bm, bn):
                t[i, j] = t[i, j] / sm[i]
            T.copy(t, Y[bx * bm, 0])
    return main
