# lockstep.py — per-thread code whose threads exchange values, run in lock
# step (frontend/lockstep.c): warp shuffles by lane (xor), down and up
# within segments, a reversal through shared memory around T.sync_threads
# with a per-thread temporary, and a butterfly sum over groups of 8 lanes
# by three xor shuffles.  tests/test_language.c checks, for thread t:
# X[t] = A[t ^ 1]; D[t] = A[t + 4] when t % 16 + 4 < 16, else A[t];
# U[t] = A[t - 3] when t % 32 >= 3, else A[t]; S[t] = A[63 - t];
# R[t] = the sum of A over the 8 threads t // 8 * 8 .. + 7.
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32"), X: T.Tensor((64,), "float32"), D: T.Tensor((64,), "float32"),
         U: T.Tensor((64,), "float32"), S: T.Tensor((64,), "float32"), R: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        sh = T.alloc_shared((64,), "float32")
        v = T.alloc_local((1,), "float32")
        tx = T.get_thread_binding()
        v[0] = A[tx]
        X[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, v[0], tx ^ 1, 32, 32)
        D[tx] = T.tvm_warp_shuffle_down(0xFFFFFFFF, v[0], 4, 16, 32)
        U[tx] = T.tvm_warp_shuffle_up(0xFFFFFFFF, v[0], 3, 32, 32)
        sh[tx] = v[0]
        T.sync_threads()
        mirror = 63 - tx
        S[tx] = sh[mirror]
        for i in T.serial(3):
            v[0] = v[0] + T.tvm_warp_shuffle(0xFFFFFFFF, v[0], tx ^ (1 << i), 32, 32)
        R[tx] = v[0]
