# layernorm.py — layer normalization of each row of an (M, N) float16
# matrix, statistics in float32:
#     mean = sum(x) / N,  var = sum((x - mean)^2) / N
#     Y = (x - mean) * rsqrt(var + eps) * weight + bias
# One block handles block_M whole rows.
# tilec-test:
# tilec-test: -D M=3 -D N=40 -D block_M=2 -D eps=0.01

import tilelang
import tilelang.language as T


def layer_norm(M=100, N=256, block_M=16, eps=1e-5, dtype="float16", accum_dtype="float32", threads=128):
    inv_n = 1.0 / N

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype),
             Weight: T.Tensor((N,), dtype),
             Bias: T.Tensor((N,), dtype),
             Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), accum_dtype)
            d2 = T.alloc_fragment((block_M, N), accum_dtype)
            mean = T.alloc_fragment((block_M,), accum_dtype)
            var = T.alloc_fragment((block_M,), accum_dtype)
            w = T.alloc_shared((N,), dtype)
            b = T.alloc_shared((N,), dtype)

            T.copy(X[bx * block_M, 0], x)
            T.copy(Weight[0], w)
            T.copy(Bias[0], b)

            T.reduce_sum(x, mean, dim=1)
            for i in T.Parallel(block_M):
                mean[i] = mean[i] * inv_n
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] - mean[i]
                d2[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(d2, var, dim=1)
            for i in T.Parallel(block_M):
                var[i] = T.rsqrt(var[i] * inv_n + eps)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] * var[i] * w[j] + b[j]
            T.copy(x, Y[bx * block_M, 0])

    return main
