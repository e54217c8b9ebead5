# loops.py — every loop form in a kernel: T.Pipelined(n, num_stages=s)
# (with order/stage keywords ignored), T.serial(n) / (lo, hi) / (lo, hi,
# step), T.unroll, T.vectorized, range(n) / range(lo, hi, step), a
# negative step, and loop bounds that are run-time values (T.min of a block
# index).  Each loop adds a distinct amount so a wrong trip count shows.
# tilec-test:
# tilec-test: -D N=5
import tilelang
import tilelang.language as T


def loops(N=8, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((4, N), dtype), Y: T.Tensor((4, N), dtype)):
        with T.Kernel(4, threads=32) as bx:
            t = T.alloc_fragment((N,), dtype)
            T.copy(X[bx, 0:N], t)
            for k in T.Pipelined(3, num_stages=2):
                for i in T.Parallel(N):
                    t[i] += 1
            for k in T.Pipelined(2, num_stages=1, order=[0, 1], stage=[0, 0]):
                for i in T.Parallel(N):
                    t[i] += 10
            for k in T.serial(1, 4):
                for i in T.Parallel(N):
                    t[i] += k * 100
            for k in T.serial(0, 10, 3):
                t[0] += k
            for k in T.unroll(2):
                t[1] += 1000
            for k in T.vectorized(N):
                t[k] += 0.5
            for k in range(2):
                t[2] += 7
            for k in range(5, 1, -2):
                t[3] += k
            for k in T.serial(T.min(bx, 2)):
                t[4] += 1
            for k in range(bx, 4):
                t[N - 1] += 0.25
            T.copy(t, Y[bx, 0:N])

    return main
