# softmax.py — a TileLang-style script: row softmax with the kernel compiled
# from an undecorated factory through tilelang.compile, checked with the
# profiler against a numpy reference.  Run it with
#     python -m tilec python/examples/softmax.py
import numpy as np

import tilelang
import tilelang.language as T

LOG2E = 1.44269504


def softmax(M, N, block_M=4, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=64) as bx:
            x = T.alloc_fragment((block_M, N), dtype)
            mx = T.alloc_fragment((block_M,), dtype)
            total = T.alloc_fragment((block_M,), dtype)
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, mx, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp2((x[i, j] - mx[i]) * LOG2E)
            T.reduce_sum(x, total, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / total[i]
            T.copy(x, Y[bx * block_M, 0])

    return main


def reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    M, N = 37, 128
    kernel = tilelang.compile(softmax(M, N), out_idx=[1])
    x = np.random.default_rng(1).standard_normal((M, N)).astype(np.float32)
    y = kernel(x)
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-6)
    kernel.get_profiler().assert_allclose(reference, atol=1e-5, rtol=1e-5)
    print("softmax %dx%d on %s: PASS" % (M, N, kernel.backend))


if __name__ == "__main__":
    main()
