# pipelined_let_extent.py — a T.Pipelined loop whose trip count is computed
# at run time into a let variable (causal attention's key loop has this
# shape): block (bx, by) sums only the first min(K / bk, bx + by + 1) k-steps
# of A @ B, so the blocks run 1, 2 and 3 of the 4 steps.  The lowering's
# pipeline must ring it with prologue and refills bounded by that count.
# C[tile] = sum over k < min(K // bk, bx + by + 1) of A[rows, k-step] @ B[k-step, cols].
# tilec-test:
import tilelang
import tilelang.language as T


def partial_gemm(M=128, N=128, K=128, bm=64, bn=64, bk=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bk), "float16")
            b = T.alloc_shared((bk, bn), "float16")
            c = T.alloc_fragment((bm, bn), "float32")
            T.clear(c)
            steps = T.min(T.ceildiv(K, bk), bx + by + 1)
            for k in T.Pipelined(steps, num_stages=2):
                T.copy(A[by * bm, k * bk], a)
                T.copy(B[k * bk, bx * bn], b)
                T.gemm(a, b, c)
            T.copy(c, C[by * bm, bx * bn])

    return main
