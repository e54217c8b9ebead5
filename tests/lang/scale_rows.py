# scale_rows.py — rows of X scaled, written out as float16: Y = x / s or
# x * s (s = a per-row sum, or a constant), x = exp2(X) so that the rows
# hold values of many magnitudes.  variant "kept" also writes the scaled x
# to Z after Y, so that the scale loop is not the last thing before the
# copy out.  On the CPU backend the scale loop of the other variants is
# folded into Y's copy (backends/cpu/cpu_rows.c); tests/test_cpu_rows.c
# checks that it is, and that Y is the same bits as "kept"'s.
# tilec-test:
# tilec-test: -D M=7 -D N=45 -D variant=mul
# tilec-test: -D M=9 -D N=64 -D variant=const
# tilec-test: -D M=5 -D N=33 -D variant=kept
import tilelang
import tilelang.language as T


def scale_rows(M=64, N=256, R=4, variant="div"):
    @T.prim_func
    def main(X: T.Tensor((M, N), "float16"), Y: T.Tensor((M, N), "float16"),
             Z: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, R), threads=128) as bx:
            x = T.alloc_fragment((R, N), "float32")
            s = T.alloc_fragment((R,), "float32")
            T.copy(X[bx * R, 0], x)
            for i, j in T.Parallel(R, N):
                x[i, j] = T.exp2(x[i, j])
            T.reduce_sum(x, s, dim=1)
            if variant == "mul":
                for i, j in T.Parallel(R, N):
                    x[i, j] = x[i, j] * s[i]
            elif variant == "const":
                for i, j in T.Parallel(R, N):
                    x[i, j] = x[i, j] * 0.3
            else:
                for i, j in T.Parallel(R, N):
                    x[i, j] = x[i, j] / s[i]
            T.copy(x, Y[bx * R, 0])
            if variant == "kept":
                T.copy(x, Z[bx * R, 0])

    return main
