# atomic_add_int.py — integer atomic adds from every element of every block into 4 counters: exact.
# conform: tol=exact covers=atomic_add
# conform-params: -D M=128 -D N=64
# conform-params: -D M=77 -D N=33
import tilelang
import tilelang.language as T


def atomic_add_int(M=128, N=64, bm=32, bn=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), "int32"), S: T.Tensor((4,), "int32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            t = T.alloc_fragment((bm, bn), "int32")
            T.copy(A[by * bm, bx * bn], t)
            for i, j in T.Parallel(bm, bn):
                T.atomic_add(S[(i + j) % 4], t[i, j])
    return main
