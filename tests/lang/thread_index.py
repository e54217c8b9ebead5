# thread_index.py — per-thread code after a thread index.  The statements
# after `tx = T.get_thread_binding()` (or `T.thread_binding(0, n,
# thread="threadIdx.x")`) run once per thread, as a parallel loop over the
# block's threads; T.Pipelined in it is one thread's serial loop, and a
# macro may read the index again.  Two kernels of 32 threads over 2 blocks
# (the second kernel's threads are 2-D: (16, 2)):
#   Y[b, t] = sum_{k < 3} X[b, 3 t + k] * (t + 1)        (tx = t)
#   Z[b, 16 y + x] = x - y + b                           (tx = x, ty = y)
import tilelang
import tilelang.language as T


@T.macro
def weight(i):
    t = T.get_thread_binding()
    return i * 0 + t + 1


@T.prim_func
def main(X: T.Tensor((2, 96), "float32"), Y: T.Tensor((2, 32), "float32"), Z: T.Tensor((2, 32), "int32")):
    with T.Kernel(2, threads=32) as b:
        tx = T.thread_binding(0, 32, thread="threadIdx.x")
        acc = T.alloc_var("float32")
        acc = 0.0
        for k in T.Pipelined(3, num_stages=2):
            acc += X[b, tx * 3 + k]
        Y[b, tx] = acc * weight(tx)
    with T.Kernel(2, threads=(16, 2)) as b:
        x = T.get_thread_binding(0)
        y = T.get_thread_binding(1)
        Z[b, y * 16 + x] = x - y + b
