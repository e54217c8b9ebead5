import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_shared((128,), "float32")
        tx = T.get_thread_binding()
        A[tx] = 0
        T.copy(A, s)
