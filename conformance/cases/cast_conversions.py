# cast_conversions.py — T.cast and .astype between float32, int32, int8, uint8 and bool (truncation, wrap-around).
# conform: tol=exact covers=cast
# conform-params: -D M=32 -D N=32
# conform-params: -D M=5 -D N=45
import tilelang
import tilelang.language as T


def cast_conversions(M=32, N=32, bm=16, bn=16):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float32"), I: T.Tensor((M, N), "int32"), B: T.Tensor((M, N), "int8"),
             U: T.Tensor((M, N), "uint8"), F: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=64) as (bx, by):
            x = T.alloc_fragment((bm, bn), "float32")
            i32 = T.alloc_fragment((bm, bn), "int32")
            i8 = T.alloc_fragment((bm, bn), "int8")
            u8 = T.alloc_fragment((bm, bn), "uint8")
            f = T.alloc_fragment((bm, bn), "float32")
            T.copy(X[by * bm, bx * bn], x)
            for i, j in T.Parallel(bm, bn):
                i32[i, j] = T.cast(x[i, j] * 1000.0, "int32")
                i8[i, j] = (x[i, j] * 100.0).astype("int8")
                u8[i, j] = T.cast(T.cast(x[i, j] * 100.0, "int32") + 300, "uint8")
                flag = x[i, j] > 0
                f[i, j] = T.cast(flag, "float32") + T.cast(T.cast(x[i, j] * 8.0, "int32"), "float32")
            T.copy(i32, I[by * bm, bx * bn])
            T.copy(i8, B[by * bm, bx * bn])
            T.copy(u8, U[by * bm, bx * bn])
            T.copy(f, F[by * bm, bx * bn])
    return main
