import tilelang
import tilelang.language as T


@T.macro
def fill_all(buf, v):
    T.fill(buf, v)
    fill_all(buf, v + 1)


@T.prim_func
def main(A: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        fill_all(A, 0)
