# exp2_invariant.py — a T.Parallel row loop that scales by exp2 of a value fixed for the row (a decay read
# from a one-element local buffer, as linear-attention kernels do) next to an exp2 of each element.  The
# CPU backend writes such loops with explicit 16-float vectors on AVX-512 (cpu_vec.c); the loop-invariant
# exp2 must stay a scalar there (it was passed to the vector exp2, and the C compiler refused the kernel).
# Checked against the interpreter by tests/run.sh.
# tilec-test:
# tilec-test: -D n=40
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def decay(m=16, n=64):
    @T.prim_func
    def main(X: T.Tensor((m, n), "float32"), G: T.Tensor((m,), "float32"), Y: T.Tensor((m, n), "float32")):
        with T.Kernel(1, threads=64) as bx:
            h = T.alloc_fragment((m, n), "float32")
            g = T.alloc_local((1,), "float32")
            T.copy(X, h)
            g[0] = G[0] * 0.5
            for i, j in T.Parallel(m, n):
                h[i, j] = T.exp2(64.0 * g[0]) * h[i, j] + T.exp2(h[i, j] * 0.25)
            T.copy(h, Y)

    return main
