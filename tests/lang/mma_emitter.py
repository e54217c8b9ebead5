# mma_emitter.py — TileLang's TensorCoreIntrinEmitter run at block level: the
# ldmatrix / mma / stmatrix calls mean C = A @ B^T over the k-slices, stored
# as 16 x 16 tiles; the thread index handed to it (thread_bindings=tb, as
# BitBLAS-era files do) is not needed.  test_frontend.c checks the values
# against a plain matrix product; here cpu against the interpreter, with
# float16 inputs (k-slices of 16) and a 2 x 2 warp grid.
# tilec-test:
import tilelang
import tilelang.language as T
from tilelang.intrinsics.mma_macro_generator import TensorCoreIntrinEmitter

em = TensorCoreIntrinEmitter(a_dtype="float16", b_dtype="float16", accum_dtype="float32", a_transposed=False,
                             b_transposed=True, block_row_warps=2, block_col_warps=2, warp_row_tiles=32,
                             warp_col_tiles=16, chunk=32)


@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), B: T.Tensor((32, 64), "float16"), C: T.Tensor((64, 32), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((32, 32), "float16")
        C_s = T.alloc_shared((4, 2, 16, 16), "float32")
        A_l = T.alloc_local((em.warp_rows * em.local_size_a,), "float16")
        B_l = T.alloc_local((em.warp_cols * em.local_size_b,), "float16")
        C_l = T.alloc_local((em.warp_rows * em.warp_cols * em.local_size_out,), "float32")
        tb = T.thread_binding(0, 128, "threadIdx.x")
        T.clear(C_l)
        for ko in T.Pipelined(2, num_stages=2):
            T.copy(A[0, ko * 32], A_s)
            T.copy(B[0, ko * 32], B_s)
            for ki in T.serial(32 // em.micro_size_k):
                em.ldmatrix_a(A_l, A_s, ki, thread_bindings=tb)
                em.ldmatrix_b(B_l, B_s, ki, thread_bindings=tb)
                em.mma(A_l, B_l, C_l)
        em.stmatrix(C_l, C_s, thread_bindings=tb)
        for i, j in T.Parallel(64, 32):
            C[i, j] = C_s[i // 16, j // 16, i % 16, j % 16]
