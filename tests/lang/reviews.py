# reviews.py — buffer re-views: T.Tensor(shape, dtype, A.data) on a global
# tensor, T.reshape and T.view (same dtype) on on-chip buffers, read and
# written element by element, copied (T.copy, boundary-safe at the view's
# edge), reduced whole; and T.im2col.
# A (2, 3, 8) seen as (6, 8): R = A + 1, written through a (48,) view of R;
# S[i] = sum over j < 4 of A[0, (i // 2) // 2, ((i // 2) % 2) * 4 + j] (a
# (6, 4) reshape of a fragment copy of A's first batch, reduced along its
# rows); the view's last rows are copied past its edge into P: P[0:2, :] =
# its rows 4..5, P[2:4, :] = 0.
# Col = im2col of X (1, 4, 4, 2) with kernel 3, stride 1, dilation 1, pad 1.
# tilec-test:
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((2, 3, 8), "float32"), R: T.Tensor((2, 3, 8), "float32"), S: T.Tensor((12,), "float32"),
         P: T.Tensor((4, 8), "float32"), X: T.Tensor((1, 4, 4, 2), "float32"), Col: T.Tensor((16, 18), "float32")):
    with T.Kernel(1, threads=128) as bx:
        flat = T.Tensor((6, 8), "float32", A.data)
        rflat = T.Tensor((48,), "float32", R.data)
        t = T.alloc_fragment((6, 8), "float32")
        T.copy(flat[0, 0], t)
        for i, j in T.Parallel(6, 8):
            rflat[i * 8 + j] = t[i, j] + 1.0
        f = T.alloc_fragment((3, 8), "float32")
        T.copy(A[0, :, :], f)
        r = T.reshape(f, (6, 4))
        v = T.view(r, shape=(12, 2))
        s = T.alloc_fragment((6,), "float32")
        T.reduce_sum(r, s, dim=1)
        for i in T.Parallel(12):
            S[i] = s[i // 2] + 0.0 * v[i, 1]
        p = T.alloc_fragment((4, 8), "float32")
        T.copy(flat[4, 0], p)
        T.copy(p, P)
        col = T.alloc_shared((16, 18), "float32")
        T.im2col(X, col, 0, 0, 3, 1, 1, 1)
        T.copy(col, Col)
