# flash_attention_small.py — a small flash-attention forward: online softmax, two GEMMs (one transposed), rescaling.
# conform: tol=fp16 covers=gemm,reduce_max,reduce_sum,exp2,copy,Pipelined
# conform-params: -D causal=False
# conform-params: -D causal=True -D S=48
import tilelang
import tilelang.language as T


def flash_attention_small(S=64, D=32, bm=32, bn=32, causal=False):
    scale = (1.0 / D) ** 0.5 * 1.44269504
    dtype = "float16"
    acc = "float32"

    @T.prim_func
    def main(Q: T.Tensor((S, D), dtype), K: T.Tensor((S, D), dtype), V: T.Tensor((S, D), dtype), O: T.Tensor((S, D), dtype)):
        with T.Kernel(T.ceildiv(S, bm), threads=128) as bx:
            Qs = T.alloc_shared((bm, D), dtype)
            Ks = T.alloc_shared((bn, D), dtype)
            Vs = T.alloc_shared((bn, D), dtype)
            s = T.alloc_fragment((bm, bn), acc)
            p = T.alloc_fragment((bm, bn), dtype)
            o = T.alloc_fragment((bm, D), acc)
            mx = T.alloc_fragment((bm,), acc)
            mprev = T.alloc_fragment((bm,), acc)
            sc = T.alloc_fragment((bm,), acc)
            sm = T.alloc_fragment((bm,), acc)
            ls = T.alloc_fragment((bm,), acc)
            T.copy(Q[bx * bm, 0], Qs)
            T.clear(o)
            T.clear(ls)
            T.fill(mx, -T.infinity(acc))
            for k in T.Pipelined(T.ceildiv(S, bn), num_stages=1):
                T.copy(K[k * bn, 0], Ks)
                for i, j in T.Parallel(bm, bn):
                    ok = k * bn + j < S
                    if causal:
                        ok = ok and bx * bm + i >= k * bn + j
                    s[i, j] = T.if_then_else(ok, 0, -T.infinity(acc))
                T.gemm(Qs, Ks, s, transpose_B=True)
                T.copy(mx, mprev)
                T.reduce_max(s, mx, dim=1, clear=False)
                for i in T.Parallel(bm):
                    sc[i] = T.exp2(mprev[i] * scale - mx[i] * scale)
                for i, j in T.Parallel(bm, bn):
                    s[i, j] = T.exp2(s[i, j] * scale - mx[i] * scale)
                T.reduce_sum(s, sm, dim=1)
                for i in T.Parallel(bm):
                    ls[i] = ls[i] * sc[i] + sm[i]
                T.copy(s, p)
                for i, j in T.Parallel(bm, D):
                    o[i, j] *= sc[i]
                T.copy(V[k * bn, 0], Vs)
                T.gemm(p, Vs, o)
            for i, j in T.Parallel(bm, D):
                o[i, j] /= ls[i]
            T.copy(o, O[bx * bm, 0])
    return main
