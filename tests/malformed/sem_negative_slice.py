import tilelang
import tilelang.language as T


def tail_rows(M=64, N=16, rows=8):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((rows, N), "float32")):
        with T.Kernel(1, threads=32) as bx:
            t = T.alloc_shared((rows, N), "float32")
            T.copy(A[-rows:, :], t)
            T.copy(t, B)
    return main
