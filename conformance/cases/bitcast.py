# bitcast.py — tile IR 1.4's bit cast, bit for bit: T.reinterpret of float32, float16, bfloat16 and float8_e4m3fn
# values as unsigned and signed integers of their width, the float32 exponent field as quantizers read it
# ((bits >> 23) & 0xFF, then 2^e rebuilt from it), and the float32 -> uint32 -> float32 round trip.  The hand-checked
# bit patterns are tests/lang/bitcast.py's (tests/test_language.c).
# conform: tol=exact covers=reinterpret,cast
# conform-params: -D n=256
# conform-params: -D n=100
import tilelang
import tilelang.language as T


def bitcast(n=256):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), H: T.Tensor((n,), "float16"), Bf: T.Tensor((n,), "bfloat16"),
             FU: T.Tensor((n,), "uint32"), FI: T.Tensor((n,), "int32"), HU: T.Tensor((n,), "uint16"),
             HI: T.Tensor((n,), "int16"), BU: T.Tensor((n,), "uint16"), EU: T.Tensor((n,), "uint8"),
             Exp: T.Tensor((n,), "int32"), Pow: T.Tensor((n,), "float32"), Back: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 64), threads=64) as bx:
            for i in T.Parallel(64):
                j = bx * 64 + i
                if j < n:
                    FU[j] = T.reinterpret(A[j], "uint32")
                    FI[j] = T.reinterpret(A[j], "int32")
                    HU[j] = T.reinterpret(H[j], "uint16")
                    HI[j] = T.reinterpret(H[j], "int16")
                    BU[j] = T.reinterpret(Bf[j], "uint16")
                    EU[j] = T.reinterpret(T.Cast(T.float8_e4m3fn, A[j]), "uint8")
                    e = T.Cast("int32", (T.reinterpret(A[j], "uint32") >> 23) & 0xFF)
                    Exp[j] = e
                    Pow[j] = T.reinterpret(T.Cast("uint32", T.max(e, 1)) << 23, "float32")
                    Back[j] = T.reinterpret(T.reinterpret(A[j], "uint32"), "float32")

    return main
