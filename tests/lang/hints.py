# hints.py — the hint primitives must be accepted and change nothing:
# T.use_swizzle(panel_size, order=, enable=) positional and keyword,
# T.annotate_layout({buf: layout}), T.sync_threads() between phases of a
# block that writes shared memory and reads it transposed.
# Y = X^T through a shared tile.
# tilec-test:
import tilelang
import tilelang.language as T


def hints(M=8, N=12, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((N, M), dtype)):
        with T.Kernel(1, 1, threads=64) as (bx, by):
            T.use_swizzle(8)
            T.use_swizzle(panel_size=4, order="row", enable=True)
            T.use_swizzle(10, enable=False)
            s = T.alloc_shared((M, N), dtype)
            t = T.alloc_shared((N, M), dtype)
            T.annotate_layout({s: T.Layout(s.shape, lambda i, j: (i, j)), t: None})
            T.annotate_layout({})
            T.copy(X, s)
            T.sync_threads()
            for i, j in T.Parallel(N, M):
                t[i, j] = s[j, i]
            T.sync_threads()
            T.copy(t, Y)

    return main
