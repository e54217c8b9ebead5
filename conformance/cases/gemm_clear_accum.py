# gemm_clear_accum.py — T.gemm with clear_accum=True: C holds only the last K block product.
# conform: tol=auto covers=gemm,clear_accum
# conform-params: -D M=64 -D N=64 -D K=64
# conform-params: -D M=40 -D N=24 -D K=48
import tilelang
import tilelang.language as T


def gemm_clear_accum(M=64, N=64, K=64, bm=32, bn=32, bk=16, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            As = T.alloc_shared((bm, bk), dtype)
            Bs = T.alloc_shared((bk, bn), dtype)
            Cf = T.alloc_fragment((bm, bn), "float32")
            T.fill(Cf, 100.0)
            for k in T.serial(T.ceildiv(K, bk)):
                T.copy(A[by * bm, k * bk], As)
                T.copy(B[k * bk, bx * bn], Bs)
                T.gemm(As, Bs, Cf, clear_accum=True)
            T.copy(Cf, C[by * bm, bx * bn])
    return main
