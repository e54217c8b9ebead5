# loops_serial_kinds.py — T.serial with start/stop/step, range, T.unroll and T.vectorized loops inside a block.
# conform: tol=fp32 covers=serial,unroll,vectorized,range
# conform-params: -D N=64
# conform-params: -D N=45
import tilelang
import tilelang.language as T


def loops_serial_kinds(N=64, bn=32, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N, 8), dtype), B: T.Tensor((N, 8), dtype)):
        with T.Kernel(T.ceildiv(N, bn), threads=32) as bx:
            t = T.alloc_fragment((bn, 8), dtype)
            o = T.alloc_fragment((bn, 8), dtype)
            T.copy(A[bx * bn, 0], t)
            T.clear(o)
            for i in T.serial(bn):
                for j in T.unroll(8):
                    o[i, j] = t[i, j]
                for j in T.serial(1, 8, 2):
                    o[i, j] = o[i, j] + t[i, j - 1]
                for j in range(6, -1, -3):
                    o[i, j] = o[i, j] * 2.0
                for j in T.vectorized(4):
                    o[i, j + 4] = o[i, j + 4] - t[i, j]
            T.copy(o, B[bx * bn, 0])
    return main
