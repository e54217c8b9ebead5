# dtypes_str.py — every dtype name as a string ("float" is float32): each
# tensor is copied through a shared tile of its own dtype and gets + 1
# (True for bool: x or True... written as `not x` twice) on the way.
# tilec-test:
import tilelang
import tilelang.language as T


def dts(N=8):
    names = ("float16", "bfloat16", "float32", "float", "float64", "int8", "int16", "int32",
             "int64", "uint8", "uint16", "uint32", "uint64")

    @T.prim_func
    def main(A0: T.Tensor((N,), "float16"), A1: T.Tensor((N,), "bfloat16"),
             A2: T.Tensor((N,), "float32"), A3: T.Tensor((N,), "float"),
             A4: T.Tensor((N,), "float64"), A5: T.Tensor((N,), "int8"),
             A6: T.Tensor((N,), "int16"), A7: T.Tensor((N,), "int32"),
             A8: T.Tensor((N,), "int64"), A9: T.Tensor((N,), "uint8"),
             A10: T.Tensor((N,), "uint16"), A11: T.Tensor((N,), "uint32"),
             A12: T.Tensor((N,), "uint64"), A13: T.Tensor((N,), "bool")):
        with T.Kernel(1, threads=32) as bx:
            for idx in T.unroll(13):
                pass
            s0 = T.alloc_shared((N,), names[0])
            T.copy(A0, s0)
            for i in T.Parallel(N):
                A0[i] = s0[i] + 1
            s1 = T.alloc_shared((N,), names[1])
            T.copy(A1, s1)
            for i in T.Parallel(N):
                A1[i] = s1[i] + 1
            s2 = T.alloc_shared((N,), names[2])
            T.copy(A2, s2)
            for i in T.Parallel(N):
                A2[i] = s2[i] + 1
            s3 = T.alloc_shared((N,), names[3])
            assert s3.dtype == "float32"
            T.copy(A3, s3)
            for i in T.Parallel(N):
                A3[i] = s3[i] + 1
            s4 = T.alloc_shared((N,), names[4])
            T.copy(A4, s4)
            for i in T.Parallel(N):
                A4[i] = s4[i] + 1
            s5 = T.alloc_shared((N,), names[5])
            T.copy(A5, s5)
            for i in T.Parallel(N):
                A5[i] = s5[i] + 1
            s6 = T.alloc_shared((N,), names[6])
            T.copy(A6, s6)
            for i in T.Parallel(N):
                A6[i] = s6[i] + 1
            s7 = T.alloc_shared((N,), names[7])
            T.copy(A7, s7)
            for i in T.Parallel(N):
                A7[i] = s7[i] + 1
            s8 = T.alloc_shared((N,), names[8])
            T.copy(A8, s8)
            for i in T.Parallel(N):
                A8[i] = s8[i] + 1
            s9 = T.alloc_shared((N,), names[9])
            T.copy(A9, s9)
            for i in T.Parallel(N):
                A9[i] = s9[i] + 1
            s10 = T.alloc_shared((N,), names[10])
            T.copy(A10, s10)
            for i in T.Parallel(N):
                A10[i] = s10[i] + 1
            s11 = T.alloc_shared((N,), names[11])
            T.copy(A11, s11)
            for i in T.Parallel(N):
                A11[i] = s11[i] + 1
            s12 = T.alloc_shared((N,), names[12])
            T.copy(A12, s12)
            for i in T.Parallel(N):
                A12[i] = s12[i] + 1
            s13 = T.alloc_shared((N,), "bool")
            T.copy(A13, s13)
            for i in T.Parallel(N):
                A13[i] = not s13[i]

    return main
