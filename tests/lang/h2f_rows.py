# h2f_rows.py — float16 rows widened to float32 by T.copy, then written out
# as float32 (Y) and doubled (Z).  On the CPU backend the contiguous rows go
# through the prelude's row converter (vcvtph2ps where the host has it);
# tests/test_cpu_rows.c feeds it every float16 bit pattern and checks that
# Y holds the SDK's conversion bit for bit, signalling NaNs included.
# tilec-test:
# tilec-test: -D M=7 -D N=45
import tilelang
import tilelang.language as T


def h2f_rows(M=256, N=256, R=4):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float16"), Y: T.Tensor((M, N), "float32"),
             Z: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, R), threads=128) as bx:
            x = T.alloc_fragment((R, N), "float32")
            T.copy(X[bx * R, 0], x)
            T.copy(x, Y[bx * R, 0])
            for i, j in T.Parallel(R, N):
                x[i, j] = x[i, j] * 2.0
            T.copy(x, Z[bx * R, 0])

    return main
