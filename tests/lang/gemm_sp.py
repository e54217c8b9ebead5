# gemm_sp.py — T.gemm_sp, the 2:4 structured-sparse GEMM, and tilelang's
# get_e_factor.  sp_bf16: A (16 x 64 dense, bfloat16) given as its nonzeros
# A_sparse (16 x 32) and int16 metadata E (16 x 64/16: one 4-bit field per
# group of four, bits 1:0 the first nonzero's position, 3:2 the second's),
# times B (64 x 8), over two K steps of 32.  sp_f32: float32's 1:2 form
# (one nonzero per pair; field 0b0100 = position 0, 0b1110 = position 1),
# with A_sparse and E read transposed (K/2 x M, K/8 x M) and B as N x K.
# tilec-test:
# tilec-test: --entry sp_bf16
import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics.sparse_layout import get_e_factor


def sp_bf16(M=16, N=8, K=64, block_K=32):
    ef = get_e_factor(T.bfloat16, T.int16)
    assert ef == 16

    @T.prim_func
    def main(A: T.Tensor((M, K // 2), T.bfloat16), E: T.Tensor((M, K // ef), T.int16),
             B: T.Tensor((K, N), T.bfloat16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, block_K // 2), T.bfloat16)
            E_s = T.alloc_shared((M, block_K // ef), T.int16)
            B_s = T.alloc_shared((block_K, N), T.bfloat16)
            C_l = T.alloc_fragment((M, N), T.float32)
            T.clear(C_l)
            for k in T.Pipelined(K // block_K, num_stages=2):
                T.copy(A[bx * M, k * block_K // 2], A_s)
                T.copy(E[bx * M, k * block_K // ef], E_s)
                T.copy(B[k * block_K, 0], B_s)
                T.gemm_sp(A_s, E_s, B_s, C_l, transpose_E=False, policy=T.GemmWarpPolicy.Square)
            T.copy(C_l, C)

    return main


def sp_f32(M=8, N=4, K=16):
    ef = get_e_factor("float32", "int16")
    assert ef == 8

    @T.prim_func
    def main(A: T.Tensor((K // 2, M), T.float32), E: T.Tensor((K // ef, M), T.int16),
             B: T.Tensor((N, K), T.float32), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            A_s = T.alloc_shared((K // 2, M), T.float32)
            E_s = T.alloc_shared((K // ef, M), T.int16)
            B_s = T.alloc_shared((N, K), T.float32)
            C_l = T.alloc_fragment((M, N), T.float32)
            T.copy(A, A_s)
            T.copy(E, E_s)
            T.copy(B, B_s)
            T.gemm_sp(A_s, E_s, B_s, C_l, transpose_A=True, transpose_E=True, transpose_B=True, clear_accum=True)
            T.copy(C_l, C)

    return main
