import tilelang
import tilelang.language as T


def last_column(M=32, N=16):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(M):
                B[i] = A[i, -1]
    return main
