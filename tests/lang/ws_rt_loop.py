# ws_rt_loop.py — warp roles whose loops run a run-time number of times
# (a count read from a tensor, different per block), fused by wsroles.c:
# the barriers and parities read the iteration k only through k % 2 and
# k & 3, so the order found is checked over whole periods until the
# protocol's state repeats, and then holds for every count.  The consumer is
# written first.  Block b runs Cnt[b] steps over a two-stage ring:
#     C[b, i, j] = sum_{k < Cnt[b]} (k + 1) * A[b, 4 k + i, j]
# (Cnt = 5 and 2 in the tests: a count that is not a multiple of the
# period, and one shorter than it).
# tilec-test:
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((2, 32, 8), "float32"), Cnt: T.Tensor((2,), "int32"), C: T.Tensor((2, 4, 8), "float32")):
    with T.Kernel(2, threads=256) as b:
        ring = T.alloc_shared((2, 4, 8), "float32")
        acc = T.alloc_fragment((4, 8), "float32")
        full = T.alloc_barrier([128] * 2)
        empty = T.alloc_barrier([128] * 2)
        n = T.alloc_var("int32")
        n = T.min(T.max(Cnt[b], 0), 8)
        tx = T.get_thread_binding()
        if tx < 128:
            T.clear(acc)
            for k in T.serial(n):
                T.mbarrier_wait_parity(full[k % 2], (k & 3) >> 1)
                for i, j in T.Parallel(4, 8):
                    acc[i, j] += ring[k % 2, i, j] * (k + 1)
                T.mbarrier_arrive(empty[k % 2])
            T.copy(acc, C[b, 0, 0])
        else:
            for k in T.serial(n):
                T.mbarrier_wait_parity(empty[k % 2], ((k & 3) >> 1) ^ 1)
                T.copy(A[b, k * 4, 0], ring[k % 2, :, :])
                T.mbarrier_arrive(full[k % 2])
