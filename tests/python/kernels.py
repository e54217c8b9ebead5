# kernels.py — factories the tests compile, written with `import tilec`.
# Kept in their own module so the tests also cover reading a factory, its
# module constants and its T.macro helper from another file.
import tilec
import tilec.language as T

BLOCK = 16
SCALE = 2.0


@tilec.jit(out_idx=[-1])
def matmul(M, N, K, block_M=BLOCK, block_N=16, block_K=8, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=64) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], A_s)
                T.copy(B[ko * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * block_M, bx * block_N])

    return main


@T.macro
def scaled(x):
    return x * SCALE


@tilec.jit(out_idx=[1, 2])
def two_outputs(N, block=32, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype), Z: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    Y[bx * block + i] = scaled(X[bx * block + i])
                    Z[bx * block + i] = bx * block + i

    return main


@tilec.jit(out_idx=[-1])
def add_dynamic(block=32, dtype="float32"):
    n = T.dynamic("n")

    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, block), threads=32) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return main


@tilec.jit
def inplace_scale(N, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                X[i] = X[i] * 3.0

    return main


@tilec.jit
def eager_add(A, B, block=32, dtype=T.float32):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B: T.Tensor((M, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block), M, threads=32) as (bx, by):
        for j in T.Parallel(block):
            if bx * block + j < N:
                C[by, bx * block + j] = A[by, bx * block + j] + B[by, bx * block + j] * SCALE
    return C
