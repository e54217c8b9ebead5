# int_literals.py — integer literals against narrow and unsigned run-time
# values: a literal the operand's dtype holds adopts it (u + 1 stays
# uint8), one it cannot hold widens the operation (u - 300, i * 2**31 in
# int64, u > -1 compares in int32 as in Python), and stores and T.fill
# convert with wrap-around (300 -> 44 in uint8, -1 -> 255).
# tilec-test:
import tilelang
import tilelang.language as T


def lits(N=8):
    @T.prim_func
    def main(U: T.Tensor((N,), "uint8"), I: T.Tensor((N,), "int32"),
             W: T.Tensor((N, 4), "int64"), S: T.Tensor((N, 4), "uint8")):
        with T.Kernel(1, threads=32) as bx:
            f = T.alloc_fragment((N,), "uint8")
            T.fill(f, -1)
            for i in T.Parallel(N):
                u = U[i]
                W[i, 0] = u - 300
                W[i, 1] = I[i] * 2147483648
                W[i, 2] = (u > -1) + (u < 256) * 2
                W[i, 3] = I[i] + 4294967296
                S[i, 0] = u + 1
                S[i, 1] = 300
                S[i, 2] = f[i]
                S[i, 3] = u - 1

    return main
