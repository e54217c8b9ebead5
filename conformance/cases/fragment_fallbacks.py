# fragment_fallbacks.py — a GEMM accumulator used in ways that a register
# layout doesn't cover: reduced along dim 0, read transposed in a
# T.Parallel nest, and a row vector written at a computed index.  Backends
# that keep accumulators in registers (CUDA) must fall back to shared
# memory for these and still agree with the reference.
# conform: tol=auto covers=gemm,Parallel,reduce,copy,alloc_fragment
# conform-params: -D M=64 -D N=64 -D K=32
# conform-params: -D M=96 -D N=80 -D K=48 -D bm=64 -D bn=64 -D bk=16
import tilelang
import tilelang.language as T


def fragment_fallbacks(M=64, N=64, K=32, bm=64, bn=64, bk=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), "float32"), ColMax: T.Tensor((T.ceildiv(M, bm), N), "float32"),
             R: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            As = T.alloc_shared((bm, bk), dtype)
            Bs = T.alloc_shared((bk, bn), dtype)
            acc = T.alloc_fragment((bm, bn), "float32")
            acct = T.alloc_fragment((bm, bn), "float32")
            cmax = T.alloc_fragment((bn,), "float32")
            rows = T.alloc_fragment((bm,), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], As)
                T.copy(B[k * bk, bx * bn], Bs)
                T.gemm(As, Bs, acc)
            # dim 0: across the rows a thread doesn't hold
            T.reduce_max(acc, cmax, dim=0)
            # transposed read (bm == bn here)
            for i, j in T.Parallel(bm, bn):
                acct[i, j] = acc[j, i] * 0.5 + acc[i, j]
            # a row vector written at a computed index
            for i in T.Parallel(bm):
                rows[(i + 1) % bm] = acct[i, 0]
            T.copy(acct, C[by * bm, bx * bn])
            T.copy(cmax, ColMax[by, bx * bn])
            if bx == 0:
                T.copy(rows, R[by * bm])

    return main
