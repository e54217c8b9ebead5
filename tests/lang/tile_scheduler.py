# tile_scheduler.py — T.PersistentTileScheduler (tilesched.c).
# sched_plain: 3 workers (blocks) take the linear tiles b, b + 3, b + 6, ...
#   of a 4 x 5 tile grid (20 tiles, ragged over 3 workers), decoded with
#   TileLang's swizzle (panels of 2 along N, M fastest): tiles 0-7 are
#   (t // 2, t % 2), 8-15 (t // 2 - 4, 2 + t % 2), 16-19 (t - 16, 4).
#   Out's 2 x 2 tile (m, n) = X's + 10 m + n; Lin[m, n] = the linear tile,
#   Wav[m, n] = sched.current_iter (the wave: tile // 3), Who[m, n] = the
#   worker (tile % 3); Cnt[m, n] counts the visits (+1 on what it held).
# sched_roles: warp roles, each with its own `while sched.valid():` loop
#   (fused by wsroles.c) and an inner loop over a two-stage ring whose
#   parities come from sched.current_iter; the consumer is written first
#   and signals the ring's empty barriers with T.tcgen05_mma_arrive (one
#   arrival).  2 workers over 3 M tiles (worker 0: tiles 0 and 2, worker 1:
#   tile 1): C[4 m + i, j] = sum_k (k + 1) * A[4 m + i, 8 k + j], k < 3.
# tilec-test:
import tilelang
import tilelang.language as T

NK = 3


@T.prim_func
def sched_plain(X: T.Tensor((8, 10), "float32"), Out: T.Tensor((8, 10), "float32"), Lin: T.Tensor((4, 5), "int32"),
                Wav: T.Tensor((4, 5), "int32"), Who: T.Tensor((4, 5), "int32"), Cnt: T.Tensor((4, 5), "int32")):
    with T.Kernel(3, threads=32) as b:
        sched = T.PersistentTileScheduler(4, 5, num_workers=3, swizzle_size=2, name="sched")
        sched.init(b)
        while sched.valid():
            m = sched.m_idx
            n = sched.n_idx
            for u, v in T.Parallel(2, 2):
                Out[m * 2 + u, n * 2 + v] = X[m * 2 + u, n * 2 + v] + 10 * m + n
            Lin[m, n] = sched.linear_idx
            Wav[m, n] = sched.current_iter
            Who[m, n] = b
            T.atomic_add(Cnt[m, n], 1)
            sched.next_tile()


@T.prim_func
def sched_roles(A: T.Tensor((12, 8 * NK), "float32"), C: T.Tensor((12, 8), "float32")):
    with T.Kernel(2, threads=256) as b:
        ring = T.alloc_shared((2, 4, 8), "float32")
        acc = T.alloc_fragment((4, 8), "float32")
        full = T.alloc_barrier([128] * 2)
        empty = T.alloc_barrier([1] * 2)
        sched = T.PersistentTileScheduler(3, 1, num_workers=2)
        sched.init(b)
        tx = T.get_thread_binding()
        if tx < 128:
            while sched.valid():
                m = sched.m_idx
                T.clear(acc)
                for k in T.serial(NK):
                    ph = sched.current_iter * NK + k
                    T.mbarrier_wait_parity(full[ph % 2], (ph // 2) & 1)
                    for i, j in T.Parallel(4, 8):
                        acc[i, j] += ring[ph % 2, i, j] * (k + 1)
                    T.tcgen05_mma_arrive(empty[ph % 2])
                T.copy(acc, C[m * 4, 0])
                sched.next_tile()
        else:
            while sched.valid():
                m = sched.m_idx
                for k in T.serial(NK):
                    ph = sched.current_iter * NK + k
                    T.mbarrier_wait_parity(empty[ph % 2], ((ph // 2) & 1) ^ 1)
                    T.copy(A[m * 4, k * 8], ring[ph % 2, :, :])
                    T.mbarrier_arrive(full[ph % 2])
                sched.next_tile()
