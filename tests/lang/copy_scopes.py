# copy_scopes.py — T.copy between every pair of scopes (global, shared,
# fragment, local) in both directions, each region given as a whole
# buffer, a corner or a slice, with dtype conversion on the way
# (float16 -> float32 -> float64 -> int32 -> float32).
# Y = X (through the chain); Z = X converted to int32 after * 4; W = V = X.
# tilec-test:
# tilec-test: -D M=13 -D N=7
import tilelang
import tilelang.language as T


def scopes(M=16, N=24, BM=8, BN=8):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float16"), Y: T.Tensor((M, N), "float16"),
             Z: T.Tensor((M, N), "int32"), W: T.Tensor((M, N), "float16"),
             V: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, BN), T.ceildiv(M, BM), threads=32) as (bx, by):
            sh = T.alloc_shared((BM, BN), "float16")
            fr = T.alloc_fragment((BM, BN), "float32")
            lo = T.alloc_local((BM, BN), "float64")
            sh2 = T.alloc_shared((BM, BN), "float32")
            fr2 = T.alloc_fragment((BM, BN), "float16")
            lo2 = T.alloc_local((BM, BN), "int32")
            T.copy(X[by * BM, bx * BN], sh)          # global -> shared (corner)
            T.copy(sh, fr)                            # shared -> fragment
            T.copy(fr, lo)                            # fragment -> local
            T.copy(lo[0:BM, 0:BN], sh2[:, :])         # local -> shared (slices)
            T.copy(sh2, fr2[0, 0])                    # shared -> fragment (corner dst)
            T.copy(fr2, sh)                           # fragment -> shared
            T.copy(sh, lo)                            # shared -> local
            T.copy(lo, fr)                            # local -> fragment
            T.copy(fr, Y[by * BM:(by + 1) * BM, bx * BN:(bx + 1) * BN])  # fragment -> global (slice)
            for i, j in T.Parallel(BM, BN):
                fr[i, j] = fr[i, j] * 4
            T.copy(fr, lo2)                           # float32 -> int32 (truncation)
            T.copy(lo2, Z[by * BM, bx * BN])          # local -> global
            T.copy(X[by * BM:(by + 1) * BM, bx * BN:(bx + 1) * BN], W[by * BM, bx * BN])  # global -> global
            T.copy(X[by * BM, bx * BN], lo)           # global -> local
            T.copy(lo, fr2)
            T.copy(fr2, V[by * BM, bx * BN])          # fragment -> global (corner)

    return main
