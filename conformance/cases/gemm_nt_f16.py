# gemm_nt_f16.py — C = op(A) @ op(B), transpose_A=False transpose_B=True, float16 in, float32 accumulator.
# conform: tol=auto covers=gemm,Pipelined,copy,clear
# conform-params: -D M=64 -D N=64 -D K=64
# conform-params: -D M=70 -D N=45 -D K=50
# conform-params: -D M=130 -D N=200 -D K=100 -D bm=64 -D bn=64 -D bk=32
# conform-params: -D M=128 -D N=256 -D K=144 -D bm=64 -D bn=128 -D bk=64 -D stages=3
# conform-params: -D M=96 -D N=72 -D K=40 -D bm=64 -D bn=64 -D bk=16
import tilelang
import tilelang.language as T


def gemm_nt_f16(M=64, N=64, K=64, bm=32, bn=32, bk=16, dtype="float16", accum="float32", out_dtype="float16", stages=2):
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
