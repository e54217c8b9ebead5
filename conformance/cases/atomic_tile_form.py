# atomic_tile_form.py — the tile form of T.atomic_add: one atomic per element of a region, blocks overlapping on purpose.
# conform: tol=fp32 covers=atomic_add
# conform-params: -D M=64 -D N=64
# conform-params: -D M=32 -D N=96
import tilelang
import tilelang.language as T


def atomic_tile_form(M=64, N=64, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), Acc: T.Tensor((bm, bn), dtype)):
        with T.Kernel(N // bn, M // bm, threads=128) as (bx, by):
            t = T.alloc_fragment((bm, bn), dtype)
            T.copy(A[by * bm, bx * bn], t)
            T.atomic_add(Acc[0, 0], t)
    return main
