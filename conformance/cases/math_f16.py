# math_f16.py — float16 elementwise math computed in float32, stored back to float16 and bfloat16.
# conform: tol=fp16 covers=exp,sigmoid,sqrt,cast
# conform-params: -D M=64 -D N=64
# conform-params: -D M=9 -D N=70
import tilelang
import tilelang.language as T


def math_f16(M=64, N=64, bm=32, bn=32):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float16"), Y: T.Tensor((M, N), "float16"), Z: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            x = T.alloc_shared((bm, bn), "float16")
            y = T.alloc_fragment((bm, bn), "float16")
            z = T.alloc_fragment((bm, bn), "bfloat16")
            T.copy(X[by * bm, bx * bn], x)
            for i, j in T.Parallel(bm, bn):
                v = T.cast(x[i, j], "float32")
                y[i, j] = T.cast(v * T.sigmoid(v) + T.exp(v) * 0.25, "float16")
                z[i, j] = T.cast(T.sqrt(T.abs(v)) - v, "bfloat16")
            T.copy(y, Y[by * bm, bx * bn])
            T.copy(z, Z[by * bm, bx * bn])
    return main
