# rt_if.py — run-time if / elif / else on element values and indices,
# nested, with a comparison chain and boolean operators.
# Y[i] = 1 if X[i] > 0.5, 2 if 0 < X[i] <= 0.5, 3 if X[i] < -0.5 and i even,
# else 4 (+ 10 when i is 0 or the last index).
# tilec-test:
import tilelang
import tilelang.language as T


def rtif(N=64, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                x = X[i]
                if x > 0.5:
                    Y[i] = 1
                elif 0 < x <= 0.5:
                    Y[i] = 2
                elif x < -0.5 and i % 2 == 0:
                    Y[i] = 3
                else:
                    Y[i] = 4
                if i == 0 or i == N - 1:
                    Y[i] += 10
                if not (i < N):
                    Y[i] = 999

    return main
