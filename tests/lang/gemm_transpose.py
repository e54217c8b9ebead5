# gemm_transpose.py — T.gemm with every transpose combination: A stored
# (K, M) with transpose_A=True, B stored (N, K) with transpose_B=True,
# both, and neither; each with a different policy (Square, FullRow,
# FullCol) and keyword spellings; operands from shared, fragment and local.
# C0 = A @ B, C1 = At^T @ B, C2 = A @ Bt^T, C3 = At^T @ Bt^T.
# tilec-test:
# tilec-test: -D M=8 -D N=24 -D K=4
import tilelang
import tilelang.language as T


def gemm_t(M=16, N=8, K=12, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), At: T.Tensor((K, M), dtype),
             B: T.Tensor((K, N), dtype), Bt: T.Tensor((N, K), dtype),
             C0: T.Tensor((M, N), dtype), C1: T.Tensor((M, N), dtype),
             C2: T.Tensor((M, N), dtype), C3: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((M, K), dtype)
            at = T.alloc_fragment((K, M), dtype)
            b = T.alloc_local((K, N), dtype)
            bt = T.alloc_shared((N, K), dtype)
            c = T.alloc_fragment((M, N), dtype)
            T.copy(A, a)
            T.copy(At, at)
            T.copy(B, b)
            T.copy(Bt, bt)
            T.clear(c)
            T.gemm(a, b, c)
            T.copy(c, C0)
            T.clear(c)
            T.gemm(at, b, c, transpose_A=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(c, C1)
            T.clear(c)
            T.gemm(a, bt, c, False, True, T.GemmWarpPolicy.FullCol)
            T.copy(c, C2)
            T.clear(c)
            T.gemm(A=at, B=bt, C=c, transpose_A=True, transpose_B=True,
                   policy=T.GemmWarpPolicy.Square, k_pack=1, wg_wait=0)
            T.copy(c, C3)

    return main
