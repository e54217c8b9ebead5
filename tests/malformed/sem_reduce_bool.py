import tilelang
import tilelang.language as T


def count_rows(M=16, N=64):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Cnt: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            pos = T.alloc_fragment((M, N), "bool")
            cnt = T.alloc_fragment((M,), "float32")
            for i, j in T.Parallel(M, N):
                pos[i, j] = A[i, j] > 0
            T.reduce_sum(pos, cnt, dim=1)
            T.copy(cnt, Cnt)
    return main
