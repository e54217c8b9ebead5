# dynamic_gemm.py — GEMM with a dynamic M (float16, pipelined).
# conform: tol=auto covers=dynamic,gemm,Pipelined
# conform-params: -D m=77
# conform-params: -D m=32
# conform-params: -D m=1
import tilelang
import tilelang.language as T


def dynamic_gemm(N=48, K=64, bm=32, bn=16, bk=32, dtype="float16"):
    M = T.dynamic("m")

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            As = T.alloc_shared((bm, bk), dtype)
            Bs = T.alloc_shared((bk, bn), dtype)
            Cf = T.alloc_fragment((bm, bn), "float32")
            T.clear(Cf)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], As)
                T.copy(B[k * bk, bx * bn], Bs)
                T.gemm(As, Bs, Cf)
            T.copy(Cf, C[by * bm, bx * bn])
    return main
