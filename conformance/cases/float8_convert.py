# float8_convert.py — float8_e4m3fn and float8_e5m2 storage (tile IR 1.2), bit for bit: float32 values over 32 binades
# (2^-20 .. 2^11 times the inputs: subnormals and flush to zero included) rounded to
# nearest even on store, and every byte that is not a NaN decoded exactly.  (NaNs fail any check by design; the
# NaN encodings are tests/lang/float8.py's, checked byte by byte in tests/test_language.c.)
# Exact ties (halfway between two normal neighbours) are built in the kernel, both signs.
# conform: tol=exact covers=float8
# conform-params: -D n=64
# conform-params: -D n=45
import tilelang
import tilelang.language as T


def float8_convert(n=64, binades=32):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), E4: T.Tensor((binades, n), T.float8_e4m3fn),
             E5: T.Tensor((binades, n), T.float8_e5m2), D: T.Tensor((2, 256), "float32"),
             T4: T.Tensor((16, 8), T.float8_e4m3fn), T5: T.Tensor((24, 4), T.float8_e5m2)):
        with T.Kernel(binades, threads=64) as bx:
            scale = T.Cast("float32", 1 << bx) / 1048576.0  # 2^(bx - 20), exact
            for i in T.Parallel(n):
                # e4m3fn has no infinity: values past 448 would be NaN, so its binades stop at 2^8
                E4[bx, i] = T.min(T.max(A[i] * T.min(scale, 256.0), -448.0), 448.0)
                E5[bx, i] = A[i] * scale
            if bx == 0:
                # ties: (17 + 2j) / 16 * 2^(e - 12) sits halfway between two normal e4m3 values (3 mantissa bits),
                # (9 + 2j) / 8 * 2^(e - 18) between two e5m2 values; below 2^-6 / 2^-14 they round as subnormals
                for e, j in T.Parallel(16, 8):
                    T4[e, j] = T.Cast("float32", (17 + 2 * j) * (1 - 2 * (e % 2))) / 16.0 * (T.Cast("float32", 1 << e) / 4096.0)
                for e, j in T.Parallel(24, 4):
                    T5[e, j] = T.Cast("float32", (9 + 2 * j) * (1 - 2 * (e % 2))) / 8.0 * (T.Cast("float32", 1 << e) / 262144.0)
                for i in T.Parallel(256):
                    b = T.Cast("uint8", i)
                    D[0, i] = T.if_then_else((i & 0x7F) == 0x7F, 0.0, T.Cast("float32", T.reinterpret(b, T.float8_e4m3fn)))
                    D[1, i] = T.if_then_else((i & 0x7C) == 0x7C and (i & 0x03) != 0, 0.0,
                                             T.Cast("float32", T.reinterpret(b, T.float8_e5m2)))

    return main
