# sync_transpose.py — a transpose through shared memory with explicit T.sync_threads between the phases.
# conform: tol=exact covers=sync_threads,alloc_shared
# conform-params: -D M=64 -D N=64
# conform-params: -D M=50 -D N=30
import tilelang
import tilelang.language as T


def sync_transpose(M=64, N=64, b=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((N, M), dtype)):
        with T.Kernel(T.ceildiv(N, b), T.ceildiv(M, b), threads=128) as (bx, by):
            s = T.alloc_shared((b, b), dtype)
            t = T.alloc_shared((b, b), dtype)
            T.copy(A[by * b, bx * b], s)
            T.sync_threads()
            for i, j in T.Parallel(b, b):
                t[j, i] = s[i, j]
            T.sync_threads()
            T.copy(t, B[bx * b, by * b])
    return main
