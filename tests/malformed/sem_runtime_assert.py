import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=16) as bx:
        assert bx < 4, "too many blocks"
        for i in T.Parallel(16):
            A[bx * 16 + i] = 0.0
