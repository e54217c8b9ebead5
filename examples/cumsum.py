# cumsum.py — inclusive prefix sums along each row of an (M, N) float32
# matrix, forwards (Y[i, j] = X[i, 0] + ... + X[i, j]) or, with
# reverse=True, backwards (Y[i, j] = X[i, j] + ... + X[i, N-1]).
# A row is scanned in block_N-wide tiles with T.cumsum; a per-row carry
# links consecutive tiles.  Tiles are visited right to left when reversed
# (the direction is a compile-time choice, so the `if reverse` below
# disappears at compile time).
# tilec-test: -D reverse=False
# tilec-test: -D reverse=True
# tilec-test: -D reverse=True -D M=3 -D N=5 -D block_N=4

import tilelang
import tilelang.language as T


def cumsum(M=100, N=200, block_M=32, block_N=64, reverse=False, dtype="float32"):
    num_tiles = (N + block_N - 1) // block_N

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype),
             Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            src = T.alloc_shared((block_M, block_N), dtype)
            dst = T.alloc_shared((block_M, block_N), dtype)
            carry = T.alloc_fragment((block_M,), dtype)

            T.clear(carry)
            for k in T.serial(num_tiles):
                t = num_tiles - 1 - k if reverse else k
                T.copy(X[bx * block_M, t * block_N], src)
                T.cumsum(src, dst, dim=1, reverse=reverse)
                for i, j in T.Parallel(block_M, block_N):
                    dst[i, j] = dst[i, j] + carry[i]
                # Columns past the right edge read as zeros, so they do not
                # disturb either scan direction.
                if reverse:
                    for i in T.Parallel(block_M):
                        carry[i] = dst[i, 0]
                else:
                    for i in T.Parallel(block_M):
                        carry[i] = dst[i, block_N - 1]
                T.copy(dst, Y[bx * block_M, t * block_N])

    return main
