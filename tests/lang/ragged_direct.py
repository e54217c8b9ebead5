# ragged_direct.py — direct global stores, loads and an atomic at a ragged
# edge (M not a multiple of blk): with TileLang's semantics, the accesses
# past the edge are skipped (stores, atomics) or read 0 (loads), on every
# backend and in the interpreter, so nothing is written out of bounds.
# m[i] = row sum of X over the tile's rows; Y[r, k] = m[r % blk] + k;
# Tot[0] += X[r, 0] for every row r < M (loads past M read 0);
# Z[r, v] = X[r, v] * 2 for v < 4, stored by a vectorized loop.
# tilec-test:
# tilec-test: -D M=64
# tilec-test: -D M=1 -D N=3
import tilelang
import tilelang.language as T


@tilelang.jit
def ragged(M=37, N=5, blk=16, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype), Tot: T.Tensor((1,), dtype),
             Z: T.Tensor((M, 4), dtype)):
        with T.Kernel(T.ceildiv(M, blk), threads=32) as bx:
            m = T.alloc_fragment((blk,), dtype)
            for i in T.Parallel(blk):
                m[i] = 0
                for k in T.serial(N):
                    m[i] += X[bx * blk + i, k]
            for i, k in T.Parallel(blk, N):
                Y[bx * blk + i, k] = m[i] + k
            for i in T.serial(blk):
                T.atomic_add(Tot[0], X[bx * blk + i, 0])
                for v in T.vectorized(4):
                    Z[bx * blk + i, v] = X[bx * blk + i, v] * 2
    return main
