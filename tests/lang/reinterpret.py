# reinterpret.py — T.reinterpret / tvm.tirx.reinterpret of integer bits, as
# TileLang's 4-bit dequantizers write it: a packed nibble s1e2m1 becomes a
# float16 by placing its fields (e + 14) << 10 | s << 15 | m << 9, and a
# nibble shifted to the top of a uint8 is an int8 (then >> 4 sign-extends).
# Hand-checked: nibble 0b0011 (s 0, e 1, m 1) -> bits 0x3E00 = 1.5;
# 0b1010 (s 1, e 1, m 0) -> 0xBC00 = -1.0; as int4: 3 -> 3, 10 -> -6.
# tilec-test:
import tilelang
import tilelang.language as T
from tvm import tirx


def nibble_to_f16(v):
    s = v >> tirx.const(3, T.uint16)
    e = ((v & tirx.const(6, T.uint16)) >> tirx.const(1, T.uint16)) + tirx.const(14, T.uint16)
    m = v & tirx.const(1, T.uint16)
    return tirx.reinterpret(T.float16, ((e | (s << tirx.const(5, T.uint16))) << tirx.const(10, T.uint16)) | (m << tirx.const(9, T.uint16)))


@T.prim_func
def main(B: T.Tensor((64,), "uint8"), F: T.Tensor((128,), "float16"), I: T.Tensor((128,), "int8")):
    with T.Kernel(2, threads=64) as bx:
        for i in T.Parallel(64):
            byte = B[bx * 32 + i // 2]
            nib = (byte >> T.Cast("uint8", (i % 2) * 4)) & T.Cast("uint8", 15)
            F[bx * 64 + i] = nibble_to_f16(T.Cast("uint16", nib))
            I[bx * 64 + i] = T.reinterpret(T.Cast("uint8", nib << T.Cast("uint8", 4)), "int8") >> 4
