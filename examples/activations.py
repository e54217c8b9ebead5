# activations.py — several pointwise activations of one float16 input,
# computed in float32: SiLU x*sigmoid(x), GELU (tanh approximation),
# softplus log(1 + exp(x)) in its overflow-safe form, leaky ReLU written
# with a conditional expression, and an int32 quantization (x * 8 truncated
# toward zero) through .astype.  Exercises the math primitives and scalar
# temporaries inside a T.Parallel body.
# tilec-test:
# tilec-test: -D M=3 -D N=7

import tilelang
import tilelang.language as T


def activations(M=64, N=200, block_M=16, block_N=64, dtype="float16", slope=0.1):
    gelu_c = (2.0 / 3.141592653589793) ** 0.5
    out_dtype = T.float32

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype),
             Silu: T.Tensor((M, N), out_dtype),
             Gelu: T.Tensor((M, N), out_dtype),
             Softplus: T.Tensor((M, N), out_dtype),
             Leaky: T.Tensor((M, N), dtype),
             Quant: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            x = T.alloc_fragment((block_M, block_N), out_dtype)
            silu = T.alloc_fragment((block_M, block_N), out_dtype)
            gelu = T.alloc_fragment((block_M, block_N), out_dtype)
            softplus = T.alloc_fragment((block_M, block_N), out_dtype)
            leaky = T.alloc_fragment((block_M, block_N), dtype)
            quant = T.alloc_fragment((block_M, block_N), "int32")

            T.copy(X[by * block_M, bx * block_N], x)
            for i, j in T.Parallel(block_M, block_N):
                v = x[i, j]
                silu[i, j] = v * T.sigmoid(v)
                gelu[i, j] = 0.5 * v * (1 + T.tanh(gelu_c * (v + 0.044715 * v * v * v)))
                softplus[i, j] = T.max(v, 0) + T.log(1 + T.exp(-T.abs(v)))
                leaky[i, j] = T.cast(v if v > 0 else slope * v, dtype)
                quant[i, j] = (v * 8).astype("int32")
            T.copy(silu, Silu[by * block_M, bx * block_N])
            T.copy(gelu, Gelu[by * block_M, bx * block_N])
            T.copy(softplus, Softplus[by * block_M, bx * block_N])
            T.copy(leaky, Leaky[by * block_M, bx * block_N])
            T.copy(quant, Quant[by * block_M, bx * block_N])

    return main
