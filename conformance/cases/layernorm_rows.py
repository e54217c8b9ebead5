# layernorm_rows.py — layer normalization of rows with a scale vector: two reductions, rsqrt, broadcasting.
# conform: tol=fp32 covers=reduce_sum,rsqrt
# conform-params: -D M=64 -D N=64
# conform-params: -D M=10 -D N=64
import tilelang
import tilelang.language as T


def layernorm_rows(M=64, N=64, bm=16, eps=1e-5, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            t = T.alloc_fragment((bm, N), dtype)
            w = T.alloc_fragment((N,), dtype)
            sq = T.alloc_fragment((bm, N), dtype)
            mean = T.alloc_fragment((bm,), dtype)
            var = T.alloc_fragment((bm,), dtype)
            T.copy(X[bx * bm, 0], t)
            T.copy(W[0], w)
            T.reduce_sum(t, mean, dim=1)
            for i in T.Parallel(bm):
                mean[i] = mean[i] / N
            for i, j in T.Parallel(bm, N):
                sq[i, j] = (t[i, j] - mean[i]) * (t[i, j] - mean[i])
            T.reduce_sum(sq, var, dim=1)
            for i, j in T.Parallel(bm, N):
                t[i, j] = (t[i, j] - mean[i]) * T.rsqrt(var[i] / N + eps) * w[j]
            T.copy(t, Y[bx * bm, 0])
    return main
