# ws_blocklevel.py — TileLang's warp-specialization, mbarrier, TMA and
# tensor-memory objects at tilec's block level: each `with T.ws(k):` body is
# run by the whole block in program order, T.tma_copy is a copy, barriers
# are tokens (arrive/wait order nothing more), T.alloc_tmem is a fragment and
# T.tcgen05_gemm a T.gemm.  Also T.gemm on slices of a staged shared buffer,
# a run-time clear_accum=(k == 0), and T.atomic_addx4.
# C = A @ B through a two-stage ring filled under T.ws(1) and consumed under
# T.ws(0); D = A @ B again in tensor memory; E = E0 + A @ B (atomic_addx4).
# tilec-test:
import tilelang
import tilelang.language as T

M, N, K = 32, 16, 32
bm, bn, bk, stages = 16, 16, 8, 2


@T.prim_func
def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32"),
         D: T.Tensor((M, N), "float32"), E: T.Tensor((M, N), "float32")):
    with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=256) as (bx, by):
        A_s = T.alloc_shared((stages, bm, bk), "float32")
        B_s = T.alloc_shared((stages, bk, bn), "float32")
        acc = T.alloc_fragment((bm, bn), "float32")
        tm = T.alloc_tmem([bm, bn], "float32")
        out = T.alloc_fragment((bm, bn), "float32")
        bars = T.alloc_barrier([128] * (2 * stages))
        done = T.alloc_barrier(1)
        with T.ws(0):
            T.clear(acc)
        for k in T.serial(K // bk):
            with T.ws(1):
                T.mbarrier_wait_parity(bars[k % stages + stages], ((k // stages) % 2) ^ 1)
                T.tma_copy(A[by * bm:(by + 1) * bm, k * bk:(k + 1) * bk], A_s[k % stages, :, :],
                           barrier=bars[k % stages])
                T.tma_copy(B[k * bk, bx * bn], B_s[k % stages, :, :], barrier=bars[k % stages])
                T.mbarrier_arrive(bars[k % stages])
            with T.ws(0):
                T.barrier_wait(bars[k % stages], (k // stages) % 2)
                T.gemm(A_s[k % stages, :, :], B_s[k % stages, :, :], acc)
                T.tcgen05_gemm(A_s[k % stages, :, :], B_s[k % stages, :, :], tm, mbar=done, clear_accum=(k == 0))
                T.mbarrier_wait_parity(done, k % 2)
                T.barrier_arrive(bars[k % stages + stages])
        T.fence_proxy_async()
        T.copy(acc, C[by * bm, bx * bn])
        T.copy(tm, out)
        T.copy(out, D[by * bm, bx * bn])
        for i, j in T.Parallel(bm, bn // 4):
            T.atomic_addx4(E[by * bm + i, bx * bn + j * 4], acc[i, j * 4])
