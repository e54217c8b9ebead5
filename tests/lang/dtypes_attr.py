# dtypes_attr.py — every dtype as T.<name> (T.float16 ... T.bool), used for
# tensors, tiles, T.cast, .astype and as a cast call T.float32(x); buffers'
# .dtype passed on to allocations.  Each output is the input converted
# (unsigned targets get positive values: float -> unsigned of a negative
# value is not portable).
# tilec-test:
import tilelang
import tilelang.language as T


def dta(N=8):
    src = T.float32

    @T.prim_func
    def main(X: T.Tensor((N,), src),
             O0: T.Tensor((N,), T.float16), O1: T.Tensor((N,), T.bfloat16),
             O2: T.Tensor((N,), T.float32), O3: T.Tensor((N,), T.float64),
             O4: T.Tensor((N,), T.int8), O5: T.Tensor((N,), T.int16),
             O6: T.Tensor((N,), T.int32), O7: T.Tensor((N,), T.int64),
             O8: T.Tensor((N,), T.uint8), O9: T.Tensor((N,), T.uint16),
             O10: T.Tensor((N,), T.uint32), O11: T.Tensor((N,), T.uint64),
             O12: T.Tensor((N,), T.bool)):
        with T.Kernel(1, threads=32) as bx:
            x = T.alloc_fragment((N,), X.dtype)
            T.copy(X, x)
            h = T.alloc_fragment((N,), O0.dtype)
            for i in T.Parallel(N):
                h[i] = T.cast(x[i] * 3, T.float16)
            T.copy(h, O0)
            for i in T.Parallel(N):
                O1[i] = (x[i] * 3).astype(T.bfloat16)
                O2[i] = T.float32(x[i] * 3)
                O3[i] = T.cast(x[i], T.float64) * 3
                O4[i] = T.cast(x[i] * 50, T.int8)
                O5[i] = T.int16(x[i] * 300)
                O6[i] = (x[i] * 1000).astype(T.int32)
                O7[i] = T.cast(x[i] * 100000, T.int64)
                O8[i] = T.cast(x[i] * 40 + 100, T.uint8)
                O9[i] = T.cast(x[i] * 1000 + 2000, T.uint16)
                O10[i] = T.cast(x[i] * 1000 + 2000, T.uint32)
                O11[i] = T.cast(x[i] * 1000 + 2000, T.uint64)
                O12[i] = T.cast(x[i] > 0, T.bool)

    return main
