# gemm_int8_tn.py — int8 GEMM, transpose_A and transpose_B, into int32: exact.
# conform: tol=exact covers=gemm,Pipelined,copy,clear
# conform-params: -D M=32 -D N=48 -D K=40
import tilelang
import tilelang.language as T


def gemm_int8_tn(M=64, N=64, K=64, bm=32, bn=32, bk=16, dtype="int8", accum="int32", out_dtype="int32", stages=2):
    @T.prim_func
    def main(A: T.Tensor((K, M), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            As = T.alloc_shared((bk, bm), dtype)
            Bs = T.alloc_shared((bn, bk), dtype)
            Cf = T.alloc_fragment((bm, bn), accum)
            T.clear(Cf)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                T.copy(A[k * bk, by * bm], As)
                T.copy(B[bx * bn, k * bk], Bs)
                T.gemm(As, Bs, Cf, transpose_A=True, transpose_B=True)
            T.copy(Cf, C[by * bm, bx * bn])
    return main
