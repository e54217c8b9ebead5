# gemm_fragment_operand.py — T.gemm with A in a fragment (as flash attention does with P) and B in local.
# conform: tol=auto covers=gemm,alloc_fragment,alloc_local
# conform-params: -D M=64 -D N=32 -D K=32
# conform-params: -D M=50 -D N=20 -D K=32
import tilelang
import tilelang.language as T


def gemm_fragment_operand(M=64, N=32, K=32, bm=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            Af = T.alloc_fragment((bm, K), dtype)
            Bl = T.alloc_local((K, N), dtype)
            Cf = T.alloc_fragment((bm, N), dtype)
            T.copy(A[bx * bm, 0], Af)
            T.copy(B[0, 0], Bl)
            for i, j in T.Parallel(bm, K):
                Af[i, j] = T.max(Af[i, j], 0)
            T.clear(Cf)
            T.gemm(Af, Bl, Cf)
            T.copy(Cf, C[bx * bm, 0])
    return main
