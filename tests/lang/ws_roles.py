# ws_roles.py — warp roles split by thread index (`if tx < 128: ... else:
# ...`) that meet only at mbarriers, read at block level in an order their
# barriers allow (wsroles.c).  The consumer is written first, so program
# order would wait for ever; tilec must run each producer step before the
# consumer step that waits for it.
# C: each role has its own loop over a two-stage ring (fused into one loop):
#    C[i, j] = sum_k (k + 1) * A[4 k + i, j].
# D: one block-level loop around the roles; the consumer hands its running
#    sum back through shared memory, which the producer adds in the next
#    step: D[i, j] = sum_k (k + 1) * (A[4 k + i, j] + [k > 0] * 1.0), with
#    the hand-back S = 1.0 read by the producer from step 1 on.
# E: a producer role whose code is per-thread (one parallel loop over its
#    128 threads): thread t copies A[t // 8, t % 8 * 2 : +2] with
#    T.ptx_cp_async when its flag t % 3 is not 0, zeros otherwise, and
#    arrives with T.cp_async_barrier_noinc:
#    E[i, j] = 3 * (A[i, j] if f else 0) + f, f = (8 i + j // 2) % 3.
# tilec-test:
import tilelang
import tilelang.language as T

NK = 6


@T.prim_func
def main(A: T.Tensor((4 * NK, 16), "float32"), C: T.Tensor((4, 16), "float32"), D: T.Tensor((4, 16), "float32"),
         E: T.Tensor((16, 16), "float32")):
    with T.Kernel(1, threads=256) as bx:
        ring = T.alloc_shared((2, 4, 16), "float32")
        acc = T.alloc_fragment((4, 16), "float32")
        acc2 = T.alloc_fragment((4, 16), "float32")
        S = T.alloc_shared((1,), "float32")
        full = T.alloc_barrier([128] * 2)
        empty = T.alloc_barrier([128] * 2)
        f2 = T.alloc_barrier(128)
        e2 = T.alloc_barrier(128)
        ring2 = T.alloc_shared((16, 16), "float32")
        flag = T.alloc_shared((128,), "float32")
        r2 = T.alloc_barrier(128)
        tx = T.get_thread_binding()
        T.clear(acc)
        T.clear(acc2)
        if tx < 128:
            for k in T.serial(NK):
                T.mbarrier_wait_parity(full[k % 2], (k // 2) & 1)
                for i, j in T.Parallel(4, 16):
                    acc[i, j] += ring[k % 2, i, j] * (k + 1)
                T.mbarrier_arrive(empty[k % 2])
            T.copy(acc, C)
        else:
            for k in T.serial(NK):
                T.mbarrier_wait_parity(empty[k % 2], ((k // 2) & 1) ^ 1)
                T.copy(A[k * 4, 0], ring[k % 2, :, :])
                T.mbarrier_arrive(full[k % 2])
        for k in T.serial(NK):
            if tx < 128:
                T.mbarrier_wait_parity(f2, k % 2)
                for i, j in T.Parallel(4, 16):
                    acc2[i, j] += ring[0, i, j] * (k + 1)
                S[0] = 1.0
                T.mbarrier_arrive(e2)
            else:
                if k == 0:   # the first loop's last read of ring[0] (its third phase of empty[0])
                    T.mbarrier_wait_parity(empty[0], 0)
                if k > 0:
                    T.mbarrier_wait_parity(e2, (k - 1) % 2)
                T.copy(A[k * 4, 0], ring[0, :, :])
                if k > 0:
                    for i, j in T.Parallel(4, 16):
                        ring[0, i, j] += S[0]
                T.mbarrier_arrive(f2)
        T.copy(acc2, D)
        if tx < 128:
            T.mbarrier_wait_parity(r2, 0)
            for i, j in T.Parallel(16, 16):
                E[i, j] = ring2[i, j] * 3.0 + flag[i * 8 + j // 2]
        else:
            for u in T.serial(1):
                flag[tx - 128] = T.cast((tx - 128) % 3, "float32")
                if flag[tx - 128] > 0.5:
                    T.ptx_cp_async(T.access_ptr(ring2[(tx - 128) // 8, (tx - 128) % 8 * 2], "w", 2),
                                   T.access_ptr(A[(tx - 128) // 8, (tx - 128) % 8 * 2], "r", 2), 8)
                else:
                    ring2[(tx - 128) // 8, (tx - 128) % 8 * 2] = 0.0
                    ring2[(tx - 128) // 8, (tx - 128) % 8 * 2 + 1] = 0.0
            T.cp_async_barrier_noinc(r2)
