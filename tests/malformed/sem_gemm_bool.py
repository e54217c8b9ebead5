import tilelang
import tilelang.language as T


def mask_product(M=32, N=32, K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "bool"), B: T.Tensor((K, N), "bool"), C: T.Tensor((M, N), "int32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((M, K), "bool")
            b = T.alloc_shared((K, N), "bool")
            c = T.alloc_fragment((M, N), "int32")
            T.copy(A, a)
            T.copy(B, b)
            T.gemm(a, b, c, clear_accum=True)
            T.copy(c, C)
    return main
