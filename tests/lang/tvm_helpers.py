# tvm_helpers.py — TVM-level spellings TileLang kernels use, mapped to tile
# IR: `from tilelang import tvm`, tirx.const(value, dtype), T.Cast(dtype, x)
# in TVM's order (and the older (x, dtype) order), tvm.DataType("float16"),
# and the register-allocation hints of warp-specialized kernels (no-ops).
# B[i] = float16(A[i] * 2) + float16(A[i]) = 3 * A[i] (exact for these inputs).
# tilec-test:
import tilelang
import tilelang.language as T
from tilelang import tvm
from tvm import tirx


@T.prim_func
def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        T.disable_warp_group_reg_alloc()
        T.set_max_nreg(240, 1)
        T.no_set_max_nreg()
        for i in T.Parallel(8):
            B[i] = T.Cast("float16", A[i] * tirx.const(2, "float32")) + T.Cast(A[i], tvm.DataType("float16"))
