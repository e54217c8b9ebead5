# atomics.py — T.atomic_add / atomic_max / atomic_min in the scalar form
# (one element of a global tensor and of a shared tile, keyword value=)
# and the tile form (a region and a tile of the same extents), with
# several blocks contending for the same elements.
# Sum[j] = column sums, Mx[j] / Mn[j] = column max / min (starting from
# 0 as the tensors are cleared first by block 0... no: each column's
# first row), Cnt[0] = number of blocks * 2.
# tilec-test:
# tilec-test: -D M=5 -D N=3
import tilelang
import tilelang.language as T


def atoms(M=12, N=8, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Sum: T.Tensor((N,), dtype), Mx: T.Tensor((N,), dtype),
             Mn: T.Tensor((N,), dtype), Cnt: T.Tensor((1,), "int32"), TS: T.Tensor((N,), dtype),
             TM: T.Tensor((N,), dtype)):
        with T.Kernel(M, threads=32) as bx:
            row = T.alloc_fragment((N,), dtype)
            sh = T.alloc_shared((1,), "int32")
            T.copy(X[bx, 0], row)
            T.clear(sh)
            for j in T.Parallel(N):
                T.atomic_add(Sum[j], row[j])
                T.atomic_max(Mx[j], row[j])
                T.atomic_min(dst=Mn[j], value=row[j])
            T.atomic_add(sh[0], 2)
            T.atomic_add(Cnt[0], sh[0], memory_order="relaxed")
            T.atomic_add(TS[0:N], row)
            T.atomic_max(TM[0], row)

    return main
