# gemm_int8.py — int8 GEMM into int32: exact.
# conform: tol=exact covers=gemm,Pipelined,copy,clear
# conform-params: -D M=64 -D N=64 -D K=64
# conform-params: -D M=17 -D N=33 -D K=65
import tilelang
import tilelang.language as T


def gemm_int8(M=64, N=64, K=64, bm=32, bn=32, bk=16, dtype="int8", accum="int32", out_dtype="int32", stages=2):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            As = T.alloc_shared((bm, bk), dtype)
            Bs = T.alloc_shared((bk, bn), dtype)
            Cf = T.alloc_fragment((bm, bn), accum)
            T.clear(Cf)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                T.copy(A[by * bm, k * bk], As)
                T.copy(B[k * bk, bx * bn], Bs)
                T.gemm(As, Bs, Cf, transpose_A=False, transpose_B=False)
            T.copy(Cf, C[by * bm, bx * bn])
    return main
