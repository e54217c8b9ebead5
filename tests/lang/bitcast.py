# bitcast.py — T.reinterpret of a float's bits (tile IR 1.4's bit cast):
# float32 as uint32 and int32, float16 as uint16 and int16, bfloat16 as
# uint16, float8_e4m3fn as uint8; the exponent field read the way
# DeepSeek-style quantizers read it ((bits >> 23) & 0xFF); and float32 ->
# uint32 -> float32, the way back through the integer rebuild.
# tests/test_language.c checks every value by hand.
# tilec-test: --entry bits
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[4, 5, 6, 7, 8, 9, 10, 11])
def bits(n=8):
    @T.prim_func
    def main(F: T.Tensor((n,), "float32"), H: T.Tensor((n,), "float16"), B: T.Tensor((n,), "bfloat16"),
             E: T.Tensor((n,), "float8_e4m3fn"), FU: T.Tensor((n,), "uint32"), FI: T.Tensor((n,), "int32"),
             HU: T.Tensor((n,), "uint16"), HI: T.Tensor((n,), "int16"), BU: T.Tensor((n,), "uint16"),
             EU: T.Tensor((n,), "uint8"), Exp: T.Tensor((n,), "int32"), Back: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                FU[i] = T.reinterpret(F[i], "uint32")
                FI[i] = T.reinterpret(F[i], T.int32)
                HU[i] = T.reinterpret(H[i], "uint16")
                HI[i] = T.reinterpret(H[i], "int16")
                BU[i] = T.reinterpret(B[i], "uint16")
                EU[i] = T.reinterpret(E[i], "uint8")
                Exp[i] = T.Cast("int32", (T.reinterpret(F[i], "uint32") >> 23) & 0xFF)
                Back[i] = T.reinterpret(T.reinterpret(F[i], "uint32"), "float32")

    return main
