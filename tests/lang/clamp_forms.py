# clamp_forms.py — T.clamp(x, lo, hi) = min(max(x, lo), hi) on floats and
# ints (and on compile-time numbers); T.parallel and T.Serial are TileLang's
# other spellings of T.Parallel and T.serial.
# B[i] = clamp(A[i], -0.5, 0.75); C[i] = clamp(i, 3, 9) + clamp(20, 0, 5).
# tilec-test:
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32"), C: T.Tensor((16,), "int32")):
    with T.Kernel(1, threads=32) as bx:
        for i in T.parallel(16):
            B[i] = T.clamp(A[i], -0.5, 0.75)
        for i in T.Serial(16):
            C[i] = T.clamp(i, 3, 9) + T.clamp(20, 0, 5)
