# bf16_elementwise.py — bfloat16 elementwise add, scale and max, stored in bfloat16.
# conform: tol=fp16 covers=bf16
# conform-params: -D M=64 -D N=64
# conform-params: -D M=45 -D N=33
import tilelang
import tilelang.language as T


def bf16_elementwise(M=64, N=64, bm=32, bn=32, dtype="bfloat16"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_shared((bm, bn), dtype)
            b = T.alloc_shared((bm, bn), dtype)
            c = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], a)
            T.copy(B[by * bm, bx * bn], b)
            for i, j in T.Parallel(bm, bn):
                c[i, j] = T.max(a[i, j] + b[i, j] * 0.5, a[i, j] * b[i, j])
            T.copy(c, C[by * bm, bx * bn])
    return main
