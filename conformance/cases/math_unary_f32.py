# math_unary_f32.py — exp exp2 log log2 sqrt rsqrt tanh sigmoid abs on float32 (arguments kept in range).
# conform: tol=fp32 covers=exp,exp2,log,log2,sqrt,rsqrt,tanh,sigmoid,abs
# conform-params: -D M=64 -D N=64
# conform-params: -D M=7 -D N=13
import tilelang
import tilelang.language as T


def math_unary_f32(M=64, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), E: T.Tensor((M, N), dtype), L: T.Tensor((M, N), dtype),
             S: T.Tensor((M, N), dtype), H: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            x = T.alloc_fragment((bm, bn), dtype)
            e = T.alloc_fragment((bm, bn), dtype)
            l = T.alloc_fragment((bm, bn), dtype)
            s = T.alloc_fragment((bm, bn), dtype)
            h = T.alloc_fragment((bm, bn), dtype)
            T.copy(X[by * bm, bx * bn], x)
            for i, j in T.Parallel(bm, bn):
                p = T.abs(x[i, j]) + 0.5
                e[i, j] = T.exp(x[i, j]) + T.exp2(x[i, j])
                l[i, j] = T.log(p) + T.log2(p)
                s[i, j] = T.sqrt(p) + T.rsqrt(p)
                h[i, j] = T.tanh(x[i, j]) + T.sigmoid(x[i, j])
            T.copy(e, E[by * bm, bx * bn])
            T.copy(l, L[by * bm, bx * bn])
            T.copy(s, S[by * bm, bx * bn])
            T.copy(h, H[by * bm, bx * bn])
    return main
