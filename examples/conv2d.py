# conv2d.py — a 2-D convolution of an NHWC image as an implicit GEMM: the
# output pixels (N * OH * OW of them) are the GEMM's rows, the filters its
# columns and the receptive field (KH * KW * C values) its reduction.
# T.im2col gathers each block's rows of the unfolded image straight into
# shared memory (padding reads 0), so the unfolded matrix never exists in
# global memory; the filter bank, stored (KH, KW, C, F), is read as the
# (KH * KW * C, F) matrix it already is.  Data (N, H, W, C), Wt (KH, KW, C,
# F), Out (N, OH, OW, F), all in dtype with a float32 accumulator; sizes
# need not be multiples of the tiles.
# tilec-test:
# tilec-test: -D KS=1 -D P=0 -D C=16 -D F=24
# tilec-test: -D S=2 -D H=9 -D W=7 -D dtype=bfloat16

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def conv2d(N=2, H=10, W=12, C=32, F=40, KS=3, S=1, D=1, P=1,
           block_M=64, block_N=64, block_K=32, num_stages=2, threads=128,
           dtype="float16", accum_dtype="float32"):
    OH = (H + 2 * P - D * (KS - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (KS - 1) - 1) // S + 1
    M = N * OH * OW
    K = KS * KS * C

    @T.prim_func
    def main(Data: T.Tensor((N, H, W, C), dtype),
             Wt: T.Tensor((KS, KS, C, F), dtype),
             Out: T.Tensor((N, OH, OW, F), dtype)):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            filters = T.Tensor((K, F), dtype, Wt.data)
            out = T.Tensor((M, F), dtype, Out.data)
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.im2col(Data, A_shared, by, k, KS, S, D, P)
                T.copy(filters[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, acc)
            T.copy(acc, out[by * block_M, bx * block_N])

    return main
