# fill_clear.py — T.fill and T.clear on fragment, shared and local tiles.
# conform: tol=exact covers=fill,clear
# conform-params: -D M=64 -D N=64
# conform-params: -D M=30 -D N=50
import tilelang
import tilelang.language as T


def fill_clear(M=64, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            f = T.alloc_fragment((bm, bn), dtype)
            s = T.alloc_shared((bm, bn), dtype)
            loc = T.alloc_local((bm, bn), dtype)
            T.fill(f, 2.5)
            T.clear(s)
            T.fill(loc, -1)
            for i, j in T.Parallel(bm, bn):
                f[i, j] = f[i, j] + s[i, j]
            T.copy(f, A[by * bm, bx * bn])
            T.copy(s, B[by * bm, bx * bn])
            T.copy(loc, C[by * bm, bx * bn])
    return main
