# gemm_hints.py — T.gemm with every warp policy, T.use_swizzle and T.annotate_layout hints (which must not change results).
# conform: tol=auto covers=gemm,use_swizzle,annotate_layout,GemmWarpPolicy
# conform-params: -D M=64 -D N=64 -D K=32
# conform-params: -D M=36 -D N=52 -D K=20
# conform-params: -D M=224 -D N=96 -D K=32
import tilelang
import tilelang.language as T


def gemm_hints(M=64, N=64, K=32, bm=32, bn=32, bk=16, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C1: T.Tensor((M, N), "float32"), C2: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            As = T.alloc_shared((bm, bk), dtype)
            Bs = T.alloc_shared((bk, bn), dtype)
            C1f = T.alloc_fragment((bm, bn), "float32")
            C2f = T.alloc_fragment((bm, bn), "float32")
            T.annotate_layout({As: T.Fragment((bm, bk))})
            T.use_swizzle(panel_size=4, enable=True)
            T.clear(C1f)
            T.clear(C2f)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], As)
                T.copy(B[k * bk, bx * bn], Bs)
                T.gemm(As, Bs, C1f, policy=T.GemmWarpPolicy.FullRow)
                T.gemm(As, Bs, C2f, policy=T.GemmWarpPolicy.FullCol)
                T.gemm(As, Bs, C2f, policy=T.GemmWarpPolicy.Square)
            T.copy(C1f, C1[by * bm, bx * bn])
            T.copy(C2f, C2[by * bm, bx * bn])
    return main
