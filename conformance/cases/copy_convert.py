# copy_convert.py — copies that convert dtypes: float16 -> float32 -> bfloat16 -> float32.
# conform: tol=fp16 covers=copy,cast
# conform-params: -D M=64 -D N=64
# conform-params: -D M=37 -D N=29
import tilelang
import tilelang.language as T


def copy_convert(M=64, N=64, bm=32, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            s = T.alloc_shared((bm, bn), "float16")
            f = T.alloc_fragment((bm, bn), "float32")
            b = T.alloc_fragment((bm, bn), "bfloat16")
            T.copy(A[by * bm, bx * bn], s)
            T.copy(s, f)
            T.copy(f, b)
            T.copy(b, B[by * bm, bx * bn])
            T.copy(b, C[by * bm, bx * bn])
    return main
