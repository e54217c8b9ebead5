# reduce_1d_and_3d.py — a 1-D tile reduced into (1,), and a 3-D tile reduced along its middle and last (dim=-1) dimensions.
# conform: tol=auto covers=reduce_sum,reduce_max
# conform-params: -D N=64
# conform-params: -D N=16
import tilelang
import tilelang.language as T


def reduce_1d_and_3d(N=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((4, 8, N), dtype), S: T.Tensor((4, 1), dtype), R1: T.Tensor((4, 4, N), dtype), R2: T.Tensor((4, 4, 8), dtype)):
        with T.Kernel(4, threads=64) as bx:
            t = T.alloc_fragment((4, 8, N), dtype)
            v = T.alloc_fragment((N,), dtype)
            s = T.alloc_fragment((1,), dtype)
            r1 = T.alloc_fragment((4, N), dtype)
            r2 = T.alloc_fragment((4, 8), dtype)
            T.copy(A[0, 0, 0], t)
            for j in T.Parallel(N):
                v[j] = t[bx, 0, j]
            T.reduce_sum(v, s, dim=0)
            T.copy(s, S[bx, 0])
            T.reduce_max(t, r1, dim=1)
            T.reduce_sum(t, r2, dim=-1)
            T.copy(r1, R1[bx, 0, 0])
            T.copy(r2, R2[bx, 0, 0])
    return main
