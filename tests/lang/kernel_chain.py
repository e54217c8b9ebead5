# kernel_chain.py — several `with T.Kernel` blocks in one prim_func are
# kernels launched in order, with the same tensors (TileLang's reading); a
# T.alloc_global buffer is scratch memory between them, a tensor parameter
# appended after the prim_func's own.  m = 10 elements in blocks of 4 (the
# last one ragged), symbol m in both kernels:
#   kernel 1: P[i] = 2 X[i];  S[b] = sum of 2 X[i] over block b (scratch)
#   kernel 2: Y[i] = P[i] + S[i // 4]
# out_idx=[-1] is Y (the scratch does not count).  Names bound in one kernel
# block stay in it: the second block allocates its own `acc`.
# tilec-test: -D m=10
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def chain(block=4):
    m = T.dynamic("m")

    @T.prim_func
    def main(X: T.Tensor((m,), "float32"), P: T.Tensor((m,), "float32"), Y: T.Tensor((m,), "float32")):
        S = T.alloc_global((T.ceildiv(m, block),), "float32")
        with T.Kernel(T.ceildiv(m, block), threads=32) as bx:
            acc = T.alloc_fragment((block,), "float32")
            s = T.alloc_fragment((1,), "float32")
            for i in T.Parallel(block):
                acc[i] = T.if_then_else(bx * block + i < m, X[bx * block + i] * 2, 0)
                P[bx * block + i] = X[bx * block + i] * 2
            T.reduce_sum(acc, s, dim=0)
            S[bx] = s[0]
        with T.Kernel(T.ceildiv(m, block), threads=32) as bx:
            acc = T.alloc_fragment((block,), "float32")
            for i in T.Parallel(block):
                acc[i] = P[bx * block + i] + S[bx]
            for i in T.Parallel(block):
                if bx * block + i < m:
                    Y[bx * block + i] = acc[i]

    return main
