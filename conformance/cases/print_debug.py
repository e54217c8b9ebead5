# print_debug.py — T.print of a scalar and of a buffer: must run (the format is up to the backend) and leave results intact.
# conform: tol=exact covers=print
# conform-params: -D N=8
import tilelang
import tilelang.language as T


def print_debug(N=8, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            t = T.alloc_fragment((N,), dtype)
            T.copy(A[0], t)
            T.print(t, msg="tile")
            T.print(t[0] + t[1], msg="sum01")
            T.copy(t, B[0])
    return main
