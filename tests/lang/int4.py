# int4.py — the 4-bit storage dtypes (tile IR 1.3): int4, uint4 and
# float4_e2m1fn, two per byte in kernel tensors (the even element in the low
# nibble).  `convert` stores float32 values into a float4_e2m1fn tensor
# (round to nearest even, saturating at +-6 as ml_dtypes) and int32 values
# into int4 and uint4 tensors (wrapping), and reads all three back; `gemm`
# multiplies int4 tiles (B transposed) into an int32 accumulator, through a
# pipelined shared-memory copy as TileLang's int4 GEMM example does.
# tests/test_language.c checks the nibbles and values by hand.
# tilec-test: --entry convert
# tilec-test: --entry gemm
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2, 3, 4, 5])
def convert(n=16):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), IA: T.Tensor((n,), "int32"),
             F4: T.Tensor((n,), T.float4_e2m1fn), I4: T.Tensor((n,), "int4"),
             U4: T.Tensor((n,), T.uint4), Back: T.Tensor((3, n), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                F4[i] = A[i]
                I4[i] = T.Cast("int4", IA[i])
                U4[i] = IA[i]
            for i in T.Parallel(n):
                Back[0, i] = F4[i]
                Back[1, i] = T.Cast("float32", I4[i])
                Back[2, i] = U4[i]

    return main


@tilelang.jit(out_idx=[2])
def gemm(M=32, N=16, K=64, block_M=16, block_N=16, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.int4), B: T.Tensor((N, K), T.int4), C: T.Tensor((M, N), T.int32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.int4)
            B_shared = T.alloc_shared((block_N, block_K), T.int4)
            C_local = T.alloc_fragment((block_M, block_N), T.int32)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[bx * block_N, ko * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
