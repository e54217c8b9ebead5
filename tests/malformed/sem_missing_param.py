import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def add(M, N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=64) as bx:
            for j in T.Parallel(N):
                B[bx, j] = A[bx, j] + 1
    return main
