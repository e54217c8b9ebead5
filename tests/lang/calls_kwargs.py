# calls_kwargs.py — calls with keyword arguments everywhere: allocation,
# T.copy(src=, dst=), T.fill(buffer=, value=), T.reduce_sum(buffer=,
# out=, dim=, clear=), T.cumsum(src=, dst=, dim=, reverse=), T.Kernel(
# threads=), T.cast(value=, dtype=), a plain helper and a macro with
# keywords, defaults skipped in the middle.
# tilec-test:
import tilelang
import tilelang.language as T


def affine(x, scale=1.0, shift=0.0):
    return x * scale + shift


@T.macro
def store(dst, value, at=0):
    dst[at] = value


def kw(M=4, N=6, dtype="float32"):
    two = affine(1.0, shift=1.0)

    @T.prim_func
    def main(X: T.Tensor(shape=(M, N), dtype=dtype), S: T.Tensor((M,), dtype),
             C: T.Tensor((M, N), dtype), Z: T.Tensor((2,), "int32")):
        with T.Kernel(1, threads=32) as bx:
            t = T.alloc_fragment(shape=(M, N), dtype=dtype)
            s = T.alloc_fragment((M,), dtype=dtype)
            z = T.alloc_local(shape=(2,), dtype="int32")
            T.copy(src=X, dst=t)
            T.fill(buffer=s, value=two)
            T.reduce_sum(buffer=t, out=s, dim=1, clear=False)
            T.copy(s, S)
            T.cumsum(src=t, dst=t, dim=1, reverse=True)
            T.copy(dst=C, src=t)
            store(z, T.cast(value=s[0] * 0 + 5, dtype="int32"))
            store(dst=z, at=1, value=affine(3, shift=4))
            T.copy(z, Z)

    return main
