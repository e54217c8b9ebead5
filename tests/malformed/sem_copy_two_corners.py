import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
    with T.Kernel(2, threads=128) as bx:
        T.copy(A[bx * 32, 0], B[bx * 32, 0])
