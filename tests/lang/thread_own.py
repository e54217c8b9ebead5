# thread_own.py — per-thread code after a thread index working on the
# thread's own arrays: T.copy of a global row slice into a T.alloc_local
# array and back, T.shift_left / T.shift_right, T.device_assert, and a
# local array indexed by a value read from memory (pos[cnt]) that runs past
# its end: that store is skipped and that load reads 0 (tilec's safe-access
# rule for such indices).  Thread t of 4: Y[t, :] = 2 * X[t, :]; pos[0],
# pos[1] = the first two positions i of row t with X[t, i] > 0 (0 when
# there are fewer); S[t] = (pos[0] << 8) | pos[1] and R[t] = cnt >> 1,
# cnt = the number of positive elements of the row.
# tilec-test:
import tilelang
import tilelang.language as T


@T.prim_func
def own(X: T.Tensor((4, 8), "float32"), Y: T.Tensor((4, 8), "float32"), S: T.Tensor((4,), "int32"),
        R: T.Tensor((4,), "int32")):
    with T.Kernel(1, threads=4) as bx:
        tx = T.get_thread_binding()
        row = T.alloc_local((8,), "float32")
        pos = T.alloc_local((2,), "int32")
        cnt = T.alloc_var("int32")
        T.copy(X[tx, 0:8], row)
        T.clear(pos)
        cnt = 0
        for i in T.unroll(8):
            pos[cnt] = T.if_then_else(row[i] > 0, i, pos[cnt])
            cnt = T.if_then_else(row[i] > 0, cnt + 1, cnt)
        T.device_assert(cnt <= 8, "at most 8 positives")
        for i in T.unroll(8):
            row[i] = row[i] * 2
        T.copy(row, Y[tx, 0:8])
        S[tx] = T.shift_left(pos[0], 8) | pos[1]
        R[tx] = T.shift_right(cnt, 1)
