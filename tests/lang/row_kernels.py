# row_kernels.py — kernels whose statements all work row by row (the CPU
# backend then runs each block one row at a time, backends/cpu/cpu_rows.c),
# and two that must not be run so: one reads its neighbour row, one reads
# back a global tensor it wrote.  Every variant must match the interpreter.
#   rows:   an invariant weight row, a row fill, a clearing and a combining
#           reduce, a 1-D row buffer, a buffer only partly written (its
#           other elements stay zero in every row), ragged last block
#   shift:  x2[i, j] = x[(i + 1) % R, j]
#   global: Y written, then read back into a tile
# tilec-test:
# tilec-test: -D M=5
# tilec-test: -D variant=shift
# tilec-test: -D variant=global
import tilelang
import tilelang.language as T


def rows(M=19, N=40, R=4, variant="rows", dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype),
             Y: T.Tensor((M, N), dtype), S: T.Tensor((M,), accum_dtype)):
        with T.Kernel(T.ceildiv(M, R), threads=128) as bx:
            x = T.alloc_fragment((R, N), accum_dtype)
            x2 = T.alloc_fragment((R, N), accum_dtype)
            z = T.alloc_fragment((R, N), accum_dtype)
            w = T.alloc_shared((N,), dtype)
            s = T.alloc_fragment((R,), accum_dtype)
            T.copy(X[bx * R, 0], x)
            T.copy(W[0], w)
            T.fill(s, 0.5)
            if variant == "shift":
                for i, j in T.Parallel(R, N):
                    x2[i, j] = x[(i + 1) % R, j] * 2.0
            elif variant == "global":
                T.copy(x, Y[bx * R, 0])
                T.copy(Y[bx * R, 0], x2)
            else:
                for i, j in T.Parallel(R, N):
                    x2[i, j] = x[i, j] * w[j] + s[i]
            for i, j in T.Parallel(R, N):
                if (i + j) % 3 == 0:
                    z[i, j] = x2[i, j] - x[i, j]
            T.reduce_sum(z, s, dim=1, clear=False)
            T.reduce_max(x2, s, dim=1, clear=False)
            for i in T.Parallel(R):
                s[i] = s[i] * 0.25
            for i, j in T.Parallel(R, N):
                x2[i, j] = x2[i, j] + z[i, j] + s[i]
            T.copy(x2, Y[bx * R, 0])
            T.copy(s, S[bx * R])

    return main
