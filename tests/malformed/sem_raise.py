import tilelang
import tilelang.language as T


@tilelang.jit
def f(n=10, block=4):
    if n % block:
        raise ValueError(f"n={n} is not a multiple of {block}")

    @T.prim_func
    def main(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:
            T.clear(A)

    return main
