# matmul.py — a TileLang-style script, host code included: a tiled GEMM
# factory, a numpy (or torch) reference, a check and a timing.  Run it with
#     python -m tilec python/examples/matmul.py [M N K]
# (tilelang resolves to tilec); TILEC_BACKEND picks the backend.
import sys

import numpy as np

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=32, block_N=32, block_K=16, dtype="float32",
           accum_dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype),
             B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], A_s)
                T.copy(B[ko * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * block_M, bx * block_N])

    return main


def main(argv):
    M, N, K = (int(v) for v in argv[1:4]) if len(argv) >= 4 else (96, 80, 64)
    kernel = matmul(M, N, K)
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    c = kernel(a, b)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    prof = kernel.get_profiler()
    ms = prof.do_bench(warmup=5, rep=20)
    print("matmul %dx%dx%d on %s: PASS, %.3f ms" % (M, N, K, kernel.backend, ms))


if __name__ == "__main__":
    main(sys.argv)
