# float8.py — the 8-bit float storage dtypes (tile IR 1.2).  `convert`
# stores float32 values into float8_e4m3fn and float8_e5m2 tensors (round to
# nearest even, non-saturating like ml_dtypes/PyTorch: e4m3fn has no
# infinity, overflow gives NaN; e5m2 overflows to infinity) and reads them
# back as float32.  `gemm` multiplies float8_e4m3fn tiles with a float32
# accumulator.  tests/test_language.c checks the bytes and values by hand.
# tilec-test: --entry convert
# tilec-test: --entry gemm
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2, 3])
def convert(n=16):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), E4: T.Tensor((n,), T.float8_e4m3fn),
             E5: T.Tensor((n,), "float8_e5m2"), Back: T.Tensor((2, n), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                E4[i] = A[i]
                E5[i] = T.Cast("float8_e5m2", A[i])
            for i in T.Parallel(n):
                Back[0, i] = E4[i]
                Back[1, i] = T.Cast("float32", E5[i])

    return main


@tilelang.jit(out_idx=[2])
def gemm(M=16, N=16, K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float8_e4m3), B: T.Tensor((K, N), T.float8_e4m3fn),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            As = T.alloc_shared((M, K), T.float8_e4m3fn)
            Bs = T.alloc_shared((K, N), T.float8_e4m3fn)
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, As)
            T.copy(B, Bs)
            T.clear(acc)
            T.gemm(As, Bs, acc)
            T.copy(acc, C)

    return main
