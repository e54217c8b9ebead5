# gemm_bf16.py — bfloat16 GEMM with a float32 accumulator and float32 output.
# conform: tol=auto covers=gemm,Pipelined,copy,clear
# conform-params: -D M=64 -D N=64 -D K=64
# conform-params: -D M=50 -D N=40 -D K=30
# conform-params: -D M=130 -D N=200 -D K=100 -D bm=64 -D bn=64 -D bk=32
import tilelang
import tilelang.language as T


def gemm_bf16(M=64, N=64, K=64, bm=32, bn=32, bk=16, dtype="bfloat16", accum="float32", out_dtype="float32", stages=2):
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
