# gemm_accum.py — T.gemm accumulates into C: without clear_accum the
# products add to what C holds (here C starts at 1), with clear_accum=True
# C is zeroed first.  float16 operands into a float32 accumulator, and an
# int8 gemm into an int32 local accumulator.
# C0 = 1 + A @ B (twice accumulated: 1 + 2 A@B), C1 = A @ B, Ci = Ai @ Bi.
# tilec-test:
import tilelang
import tilelang.language as T


def gemm_acc(M=8, N=16, K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C0: T.Tensor((M, N), "float32"), C1: T.Tensor((M, N), "float32"),
             Ai: T.Tensor((M, K), "int8"), Bi: T.Tensor((K, N), "int8"),
             Ci: T.Tensor((M, N), "int32")):
        with T.Kernel(1, threads=128) as bx:
            a = T.alloc_shared((M, K), "float16")
            b = T.alloc_shared((K, N), "float16")
            c = T.alloc_fragment((M, N), "float32")
            ai = T.alloc_shared((M, K), "int8")
            bi = T.alloc_shared((K, N), "int8")
            ci = T.alloc_local((M, N), "int32")
            T.copy(A, a)
            T.copy(B, b)
            T.fill(c, 1)
            T.gemm(a, b, c)
            T.gemm(a, b, c, clear_accum=False)
            T.copy(c, C0)
            T.gemm(a, b, c, clear_accum=True)
            T.copy(c, C1)
            T.copy(Ai, ai)
            T.copy(Bi, bi)
            T.fill(ci, 5)
            T.gemm(ai, bi, ci, clear_accum=True)
            T.copy(ci, Ci)

    return main
