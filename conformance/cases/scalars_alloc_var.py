# scalars_alloc_var.py — T.alloc_var scalars (with and without init), scalar temporaries and augmented assignment.
# conform: tol=fp32 covers=alloc_var,alloc_local
# conform-params: -D M=32 -D N=16
# conform-params: -D M=13 -D N=16
import tilelang
import tilelang.language as T


def scalars_alloc_var(M=32, N=16, bm=8, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), S: T.Tensor((M,), dtype), C: T.Tensor((M,), "int32")):
        with T.Kernel(T.ceildiv(M, bm), threads=32) as bx:
            t = T.alloc_shared((bm, N), dtype)
            s = T.alloc_local((bm,), dtype)
            c = T.alloc_local((bm,), "int32")
            acc = T.alloc_var(dtype)
            cnt = T.alloc_var("int32", init=0)
            T.copy(A[bx * bm, 0], t)
            for i in T.serial(bm):
                acc = 0.0
                cnt = 0
                for j in T.serial(N):
                    v = t[i, j]
                    if v > 0:
                        acc += v
                        cnt = cnt + 1
                    else:
                        acc -= v * 0.5
                s[i] = acc
                c[i] = cnt
            T.copy(s, S[bx * bm])
            T.copy(c, C[bx * bm])
    return main
