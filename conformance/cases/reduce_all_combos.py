# reduce_all_combos.py — every reduction (sum, max, min, abssum, absmax) along each dimension of one tile, with
# clear=True and with clear=False (accumulating onto a seeded value): 20 reductions in one kernel.
# conform: tol=fp32 covers=reduce_sum,reduce_max,reduce_min,reduce_abssum,reduce_absmax
# conform-params: -D M=32 -D N=16
# conform-params: -D M=8 -D N=40
import tilelang
import tilelang.language as T


def reduce_all_combos(M=32, N=16, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), Seed: T.Tensor((64,), dtype),
             R0: T.Tensor((10, N), dtype), R1: T.Tensor((10, M), dtype)):
        with T.Kernel(1, threads=64) as bx:
            t = T.alloc_fragment((M, N), dtype)
            s = T.alloc_fragment((64,), dtype)
            c0 = T.alloc_fragment((N,), dtype)
            c1 = T.alloc_fragment((M,), dtype)
            T.copy(A[0, 0], t)
            T.copy(Seed[0], s)
            # dim 0, clear=True
            T.reduce_sum(t, c0, dim=0)
            T.copy(c0, R0[0, 0])
            T.reduce_max(t, c0, dim=0)
            T.copy(c0, R0[1, 0])
            T.reduce_min(t, c0, dim=0)
            T.copy(c0, R0[2, 0])
            T.reduce_abssum(t, c0, dim=0)
            T.copy(c0, R0[3, 0])
            T.reduce_absmax(t, c0, dim=0)
            T.copy(c0, R0[4, 0])
            # dim 0, clear=False onto seeded values
            for j in T.Parallel(N):
                c0[j] = s[j]
            T.reduce_sum(t, c0, dim=0, clear=False)
            T.copy(c0, R0[5, 0])
            for j in T.Parallel(N):
                c0[j] = s[j]
            T.reduce_max(t, c0, dim=0, clear=False)
            T.copy(c0, R0[6, 0])
            for j in T.Parallel(N):
                c0[j] = s[j]
            T.reduce_min(t, c0, dim=0, clear=False)
            T.copy(c0, R0[7, 0])
            for j in T.Parallel(N):
                c0[j] = T.abs(s[j])
            T.reduce_abssum(t, c0, dim=0, clear=False)
            T.copy(c0, R0[8, 0])
            for j in T.Parallel(N):
                c0[j] = T.abs(s[j]) * 0.5
            T.reduce_absmax(t, c0, dim=0, clear=False)
            T.copy(c0, R0[9, 0])
            # dim 1 (as -1), clear=True
            T.reduce_sum(t, c1, dim=-1)
            T.copy(c1, R1[0, 0])
            T.reduce_max(t, c1, dim=1)
            T.copy(c1, R1[1, 0])
            T.reduce_min(t, c1, dim=1)
            T.copy(c1, R1[2, 0])
            T.reduce_abssum(t, c1, dim=1)
            T.copy(c1, R1[3, 0])
            T.reduce_absmax(t, c1, dim=1)
            T.copy(c1, R1[4, 0])
            # dim 1, clear=False
            for i in T.Parallel(M):
                c1[i] = s[i]
            T.reduce_sum(t, c1, dim=1, clear=False)
            T.copy(c1, R1[5, 0])
            for i in T.Parallel(M):
                c1[i] = s[i]
            T.reduce_max(t, c1, dim=1, clear=False)
            T.copy(c1, R1[6, 0])
            for i in T.Parallel(M):
                c1[i] = s[i]
            T.reduce_min(t, c1, dim=1, clear=False)
            T.copy(c1, R1[7, 0])
            for i in T.Parallel(M):
                c1[i] = T.abs(s[i])
            T.reduce_abssum(t, c1, dim=1, clear=False)
            T.copy(c1, R1[8, 0])
            for i in T.Parallel(M):
                c1[i] = T.abs(s[i]) * 0.5
            T.reduce_absmax(t, c1, dim=1, clear=False)
            T.copy(c1, R1[9, 0])
    return main
