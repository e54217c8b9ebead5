# scalar_running_state.py — loop-carried scalar state: T.alloc_var holds a running maximum and a counter across
# tiles of a row walk, let-temporaries hold per-element values; results written per row.
# conform: tol=fp32 covers=alloc_var,serial,if
# conform-params: -D M=16 -D N=100
# conform-params: -D M=5 -D N=32
import tilelang
import tilelang.language as T


def scalar_running_state(M=16, N=100, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), Mx: T.Tensor((M,), dtype), Cnt: T.Tensor((M,), "int32")):
        with T.Kernel(M, threads=32) as bx:
            t = T.alloc_shared((bn,), dtype)
            best = T.alloc_var(dtype)
            cnt = T.alloc_var("int32")
            best = -T.infinity(dtype)
            cnt = 0
            for k in T.serial(T.ceildiv(N, bn)):
                T.copy(A[bx, k * bn], t)
                for j in T.serial(bn):
                    if k * bn + j < N:
                        v = t[j] * 2.0 - 0.25
                        if v > best:
                            best = v
                            cnt = cnt + 1
            Mx[bx] = best
            Cnt[bx] = cnt
    return main
