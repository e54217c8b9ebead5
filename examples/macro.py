# macro.py — a linear layer with bias and ReLU, Y = relu(X @ W + bias),
# written with @T.macro helpers.  A macro is inlined at each call site, with
# its parameters bound to the buffers and values passed in; here one macro
# loads the operand tiles of step k and another applies the epilogue.
# tilec-test:
# tilec-test: -D M=20 -D N=50 -D K=24

import tilelang
import tilelang.language as T


def linear_relu(M=96, N=80, K=64, block_M=32, block_N=32, block_K=32,
                dtype="float16", accum_dtype="float32"):
    @T.macro
    def load_tiles(X, W, X_shared, W_shared, k, bx, by):
        T.copy(X[by * block_M, k * block_K], X_shared)
        T.copy(W[k * block_K, bx * block_N], W_shared)

    @T.macro
    def bias_relu(acc, bias_tile):
        for i, j in T.Parallel(block_M, block_N):
            acc[i, j] = T.max(acc[i, j] + bias_tile[j], 0.0)

    @T.prim_func
    def main(X: T.Tensor((M, K), dtype),
             W: T.Tensor((K, N), dtype),
             Bias: T.Tensor((N,), dtype),
             Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            X_shared = T.alloc_shared((block_M, block_K), dtype)
            W_shared = T.alloc_shared((block_K, block_N), dtype)
            bias_shared = T.alloc_shared((block_N,), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                load_tiles(X, W, X_shared, W_shared, k, bx, by)
                T.gemm(X_shared, W_shared, acc)
            T.copy(Bias[bx * block_N], bias_shared)
            bias_relu(acc, bias_shared)
            T.copy(acc, Y[by * block_M, bx * block_N])

    return main
