# augassign.py — `+= -= *= /=` on buffer elements (fragment, shared, local,
# global), on scalar temporaries and on a T.alloc_var.
# Y[i] = ((X[i] + 3) * 2 - 1) / 4 + (sum of 0..3), through every target kind.
# tilec-test:
# tilec-test: -D dtype=float64
import tilelang
import tilelang.language as T


def aug(N=16, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype), C: T.Tensor((N,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            f = T.alloc_fragment((N,), dtype)
            s = T.alloc_shared((N,), dtype)
            l = T.alloc_local((N,), dtype)
            acc = T.alloc_var("float32")
            acc = 0
            for k in T.serial(4):
                acc += k
            T.copy(X, f)
            for i in T.Parallel(N):
                f[i] += 3
            T.copy(f, s)
            for i in T.Parallel(N):
                s[i] *= 2
            T.copy(s, l)
            for i in T.Parallel(N):
                l[i] -= 1
                t = l[i]
                t /= 4
                t += acc
                l[i] = t
            T.copy(l, Y)
            for i in T.Parallel(N):
                C[i] = i
                C[i] *= 3
                C[i] -= 1
                C[i] /= 2
    return main
