# fast_math_inf.py — TL_ENABLE_FAST_MATH keeps infinities: the masked
# online-softmax step of flash attention under fast math.  Row r of S gets
# -inf where column c > r (a causal mask), the row max m[r] = max over
# c <= r of X[r, c], and P[r, c] = exp2(S[r, c] - m[r]), which is 0 exactly
# where the mask put -inf.  (The CPU backend used to compile fast math with
# -ffinite-math-only, which made -inf and max over it garbage.)
# tilec-test:
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def masked_softmax_step(n=8):
    @T.prim_func
    def main(X: T.Tensor((n, n), "float32"), P: T.Tensor((n, n), "float32"), M: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            s = T.alloc_fragment((n, n), "float32")
            m = T.alloc_fragment((n,), "float32")
            for r, c in T.Parallel(n, n):
                s[r, c] = T.if_then_else(c > r, -T.infinity("float32"), X[r, c])
            T.fill(m, -T.infinity("float32"))
            T.reduce_max(s, m, dim=1, clear=False)
            for r, c in T.Parallel(n, n):
                P[r, c] = T.exp2(s[r, c] - m[r])
            T.copy(m, M)

    return main
