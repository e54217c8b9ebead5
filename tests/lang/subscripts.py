# subscripts.py — subscripts with indices and slices: A[i, j] stores and
# loads, A[a:b, c] regions in T.copy on either side, `:` whole dimensions,
# slices whose bounds are run-time expressions with a constant extent,
# and compile-time tuple/list/string subscripts and slices (negative
# indices, steps) in the factory.
# tilec-test:
# tilec-test: -D M=7 -D N=9
import tilelang
import tilelang.language as T


def subs(M=12, N=10, dtype="float32"):
    dims = [M, N, 3, 4]
    last = dims[-1]          # 4
    mid = dims[1:3]          # [N, 3]
    rev = tuple(dims[::-1])  # (4, 3, N, M)
    name = "float32x"[0:7]   # "float32"
    assert rev[0] == 4 and mid[1] == 3 and name == "float32"

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((N,), name)):
        with T.Kernel(T.ceildiv(M, last), threads=32) as bx:
            t = T.alloc_shared((last, N), dtype)
            col = T.alloc_fragment((last,), dtype)
            T.copy(A[bx * last:(bx + 1) * last, :], t)
            T.copy(t[:, 2], col)
            for i in T.Parallel(last):
                col[i] = col[i] * 2
            T.copy(col, t[0:last, 2])
            T.copy(t[1:3, 0:N], B[bx * last + 1:bx * last + 3, 0:N])
            T.copy(t[0, :], B[bx * last, 0])
            T.copy(t[3, 0:N], B[bx * last + 3, :])
            if bx == 0:
                for j in T.Parallel(N):
                    C[j] = t[0, j] + t[last - 1, j]

    return main
