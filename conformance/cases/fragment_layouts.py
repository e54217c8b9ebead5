# fragment_layouts.py — what a GEMM accumulator and the row vectors beside it
# go through in attention-like code: T.Parallel over the accumulator that
# reads per-row vectors, every reduction op along dim 1 into row vectors
# (clearing and accumulating), T.Parallel over rows, row vectors copied
# from and to tensors, an accumulator loaded from shared memory and written
# to a tensor.  Backends that keep such fragments in registers (CUDA) are
# checked here against the same results as those that don't.
# conform: tol=auto covers=gemm,Parallel,reduce,copy,fill,alloc_fragment
# conform-params: -D M=64 -D N=64 -D K=32
# conform-params: -D M=100 -D N=72 -D K=48 -D bm=64 -D bn=64 -D bk=16
# conform-params: -D M=128 -D N=128 -D K=64 -D bm=32 -D bn=32 -D bk=32 -D threads=64
import tilelang
import tilelang.language as T


def fragment_layouts(M=64, N=64, K=32, bm=64, bn=64, bk=32, threads=128, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), Bias: T.Tensor((M,), "float32"),
             C: T.Tensor((M, N), "float32"), Stats: T.Tensor((T.ceildiv(N, bn), 6, M), "float32"),
             D: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            As = T.alloc_shared((bm, bk), dtype)
            Bs = T.alloc_shared((bn, bk), dtype)
            Ds = T.alloc_shared((bm, bn), "float32")
            acc = T.alloc_fragment((bm, bn), "float32")
            acc2 = T.alloc_fragment((bm, bn), "float32")
            bias = T.alloc_fragment((bm,), "float32")
            rmax = T.alloc_fragment((bm,), "float32")
            rmin = T.alloc_fragment((bm,), "float32")
            rsum = T.alloc_fragment((bm,), "float32")
            rabs = T.alloc_fragment((bm,), "float32")
            rabx = T.alloc_fragment((bm,), "float32")
            rcopy = T.alloc_fragment((bm,), "float32")

            T.copy(Bias[by * bm], bias)
            T.fill(rsum, 1.0)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], As)
                T.copy(B[bx * bn, k * bk], Bs)
                T.gemm(As, Bs, acc, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(bm, bn):
                acc[i, j] = acc[i, j] + bias[i] * 0.5 - T.if_then_else(
                    by * bm + i > bx * bn + j, 0.25, 0.0)
            T.reduce_max(acc, rmax, dim=1)
            T.reduce_min(acc, rmin, dim=1, clear=True)
            T.reduce_sum(acc, rsum, dim=1, clear=False)
            T.reduce_abssum(acc, rabs, dim=1)
            T.reduce_absmax(acc, rabx, dim=1)
            for i in T.Parallel(bm):
                rmax[i] = rmax[i] - rmin[i] * 0.5
            T.copy(rmax, rcopy)
            T.copy(acc, C[by * bm, bx * bn])
            T.copy(rcopy, Stats[bx, 0, by * bm])
            T.copy(rmin, Stats[bx, 1, by * bm])
            T.copy(rsum, Stats[bx, 2, by * bm])
            T.copy(rabs, Stats[bx, 3, by * bm])
            T.copy(rabx, Stats[bx, 4, by * bm])
            T.copy(bias, Stats[bx, 5, by * bm])
            # a second accumulator, then overwritten from shared memory
            T.gemm(As, Bs, acc2, transpose_B=True, clear_accum=True,
                   policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(bm, bn):
                Ds[i, j] = (i * 3 + j) * 0.125
            T.copy(Ds, acc2)
            for i, j in T.Parallel(bm, bn):
                acc2[i, j] = acc2[i, j] * rcopy[i]
            T.copy(acc2, D[by * bm, bx * bn])

    return main
