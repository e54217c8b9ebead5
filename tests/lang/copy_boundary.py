# copy_boundary.py — boundary-safe T.copy at ragged edges: a tile that
# runs past the right and bottom edges reads zeros there (proved by
# summing the padded tile: the sum only counts real elements) and the
# write-back stops at the edge.  The corner takes its extent from the
# other operand on either side, including a 1-D tile matched to the
# trailing dimension of a 2-D corner and a 2-D tile into a 3-D corner.
# tilec-test:
# tilec-test: -D M=1 -D N=1
# tilec-test: -D M=17 -D N=33 -D B=16
import tilelang
import tilelang.language as T


def boundary(M=10, N=13, B=8, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype),
             S: T.Tensor((T.ceildiv(M, B), T.ceildiv(N, B)), dtype),
             R: T.Tensor((M, N), dtype), Q: T.Tensor((1, M, N), dtype)):
        with T.Kernel(T.ceildiv(N, B), T.ceildiv(M, B), threads=32) as (bx, by):
            t = T.alloc_shared((B, B), dtype)
            rs = T.alloc_fragment((B,), dtype)
            tot = T.alloc_fragment((1,), dtype)
            T.copy(X[by * B, bx * B], t)
            for i, j in T.Parallel(B, B):
                t[i, j] = t[i, j] + 1      # padding becomes 1 here, but is never written back
            T.copy(t, Y[by * B, bx * B])
            T.copy(X[by * B, bx * B], t)
            T.reduce_sum(t, rs, dim=1)
            T.reduce_sum(rs, tot, dim=0)
            S[by, bx] = tot[0]
            for r in T.serial(B):
                T.copy(X[by * B + r, bx * B], rs)       # 1-D tile, 2-D corner
                T.copy(rs, R[by * B + r, bx * B])
            T.copy(t, Q[0, by * B, bx * B])             # 2-D tile, 3-D corner

    return main
