# view_retype.py — a re-view that changes the dtype of on-chip memory: the
# float16 tile S (loaded from float32 A, exactly: multiples of 1/4) is
# reused as float32 scratch (same bytes, half the rows) between two loads
# of the tile, as TileLang kernels do.  Each of the two steps loads A into
# S, writes B = (k + 1) * S, sums row pairs of S into a fragment, stores
# that into the float32 view (S is dead by then) and copies the view to C.
# Nothing reads one dtype's bits through the other name, so the view is
# scratch of its own (frontend/retype.c).  tests/test_language.c checks
# B = 2 A and C[i, j] = A[2i, j] + A[2i+1, j].
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((4, 8), "float32"), B: T.Tensor((4, 8), "float32"), C: T.Tensor((2, 8), "float32")):
    with T.Kernel(1, threads=32) as bx:
        S = T.alloc_shared((4, 8), "float16")
        acc = T.view(S, shape=(2, 8), dtype="float32")
        P = T.alloc_fragment((2, 8), "float32")
        for k in T.serial(2):
            T.copy(A, S)
            for i, j in T.Parallel(4, 8):
                B[i, j] = S[i, j] * (k + 1)
            for i, j in T.Parallel(2, 8):
                P[i, j] = T.cast(S[2 * i, j], "float32") + T.cast(S[2 * i + 1, j], "float32")
            for i, j in T.Parallel(2, 8):
                acc[i, j] = P[i, j]
            for i, j in T.Parallel(2, 8):
                C[i, j] = acc[i, j]
