# cumsum_forms.py — T.cumsum along dim 0 and dim 1, forwards and
# reversed, into another tile and in place (dst=None and dst=src), on
# float and int32 tiles, with positional and keyword arguments.
# tilec-test:
# tilec-test: -D M=1 -D N=2
import tilelang
import tilelang.language as T


def cums(M=5, N=7, dtype="float32"):
    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), I: T.Tensor((M, N), "int32"),
             C0: T.Tensor((M, N), dtype), C1: T.Tensor((M, N), dtype),
             C2: T.Tensor((M, N), dtype), C3: T.Tensor((M, N), dtype),
             CI: T.Tensor((M, N), "int32"), CD: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=32) as bx:
            x = T.alloc_shared((M, N), dtype)
            y = T.alloc_fragment((M, N), dtype)
            iv = T.alloc_fragment((M, N), "int32")
            T.copy(X, x)
            T.cumsum(x, y, 1)
            T.copy(y, C0)
            T.cumsum(x, y, dim=1, reverse=True)
            T.copy(y, C1)
            T.cumsum(x, y, 0, False)
            T.copy(y, C2)
            T.cumsum(src=x, dst=y, dim=0, reverse=True)
            T.copy(y, C3)
            T.copy(I, iv)
            T.cumsum(iv, dim=1)
            T.cumsum(iv, iv, dim=0, reverse=True)
            T.copy(iv, CI)
            T.copy(X, y)
            T.cumsum(y)
            T.copy(y, CD)

    return main
