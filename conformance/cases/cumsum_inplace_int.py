# cumsum_inplace_int.py — in-place scans (dst = src): int32 exact, and float along dim 1 reversed.
# conform: tol=auto covers=cumsum
# conform-params: -D M=16 -D N=32
# conform-params: -D M=9 -D N=30
import tilelang
import tilelang.language as T


def cumsum_inplace_int(M=16, N=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=32) as bx:
            a = T.alloc_shared((16, 32), "int32")
            b = T.alloc_fragment((16, 32), "float32")
            T.copy(A[0, 0], a)
            T.copy(B[0, 0], b)
            T.cumsum(a, dim=1)
            T.cumsum(b, b, dim=1, reverse=True)
            T.copy(a, A[0, 0])
            T.copy(b, B[0, 0])
    return main
