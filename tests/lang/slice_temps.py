# slice_temps.py — slice bounds held in scalar temporaries that are assigned
# once: h1 = h0 + 4 makes A[h0:h1] a slice of constant extent 4 (the form
# TileLang's sparse MLA kernels use, H0:H1).  B = 2 * A, block by block.
# tilec-test:
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
    with T.Kernel(4, threads=32) as bx:
        s = T.alloc_shared((4,), "float32")
        h0 = bx * 4
        h1 = h0 + 4
        T.copy(A[h0:h1], s)
        for i in T.Parallel(4):
            s[i] = s[i] * 2.0
        T.copy(s, B[h0:h1])
