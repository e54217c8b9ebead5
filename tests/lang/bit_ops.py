# bit_ops.py — & | ^ << >> ~ on run-time integers (the IR's bit operations):
# shifts are arithmetic on signed and logical on unsigned dtypes, a uint8
# result wraps, and a compile-time shift count is checked against the width.
# B[i] = ((A[i] & 7) | (i << 4)) ^ ((A[i] >> 1) + (~A[i] & 3));
# U[i] = ((uint8(i) << 5) >> 3) | 1;  C[i] = -(A[i] << 2) >> 3.
# tilec-test:
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16,), "int32"), B: T.Tensor((16,), "int32"), U: T.Tensor((16,), "uint8"),
         C: T.Tensor((16,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(16):
            x = A[i]
            B[i] = ((x & 7) | (i << 4)) ^ ((x >> 1) + (~x & 3))
            u = T.cast(i, "uint8")
            U[i] = ((u << 5) >> 3) | 1
            C[i] = -(x << 2) >> 3
