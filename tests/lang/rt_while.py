# rt_while.py — `while` on a run-time condition: a T.alloc_var that only the
# loop's constant step changes (TileLang's AMD flash attention strides its
# blocks so).  Block b writes rows b, b + 3, b + 6, ... of 11:
#   B[i] = A[i] * 2 + i % 3, and C[b] = 12 (n = 0, 4, 8 pass `10 >= n`).
# tilec-test:
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((11,), "float32"), B: T.Tensor((11,), "float32"), C: T.Tensor((3,), "int32")):
    with T.Kernel(3, threads=32) as bx:
        i = T.alloc_var(T.int32)
        n = T.alloc_var(T.int32)
        i = bx
        n = 0
        while i < 11:
            cur = i
            B[cur] = A[cur] * 2 + bx
            i = cur + 3
        while 10 >= n:
            n += 4
        C[bx] = n
