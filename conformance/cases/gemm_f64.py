# gemm_f64.py — float64 GEMM.
# conform: tol=auto covers=gemm,Pipelined,copy,clear
# conform-params: -D M=32 -D N=32 -D K=32
# conform-params: -D M=21 -D N=11 -D K=7
import tilelang
import tilelang.language as T


def gemm_f64(M=64, N=64, K=64, bm=32, bn=32, bk=16, dtype="float64", accum="float64", out_dtype="float64", stages=2):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            As = T.alloc_shared((bm, bk), dtype)
            Bs = T.alloc_shared((bn, bk), dtype)
            Cf = T.alloc_fragment((bm, bn), accum)
            T.clear(Cf)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                T.copy(A[by * bm, k * bk], As)
                T.copy(B[bx * bn, k * bk], Bs)
                T.gemm(As, Bs, Cf, transpose_A=False, transpose_B=True)
            T.copy(Cf, C[by * bm, bx * bn])
    return main
