# host_markers.py — host-side helpers whose meaning a kernel keeps: the
# iket profiling marks (tilelang.tools.cuda.iket: `with T.Kernel(...) as
# bx, iket.range(...)` is two nested with-statements; mark/payload record
# nothing), tilelang.transform.simplify_prim_func and tvm.testing's
# requires_package as decorators (the kernel as written), and
# tilelang.language.fp8.determine_fp8_type() (float8_e4m3fn; "e5m2" gives
# float8_e5m2).  B[i] = A[i] + 1 for 40 elements in blocks of 16; C[i] is
# A[i] rounded to float8_e4m3fn and back (a float32 of exactly that value).
# tilec-test:
import tilelang
import tilelang.language as T
import tvm
from tilelang.language.fp8 import determine_fp8_type
from tilelang.tools.cuda import iket
from tilelang.transform import simplify_prim_func

assert determine_fp8_type("e5m2") == T.float8_e5m2


@tvm.testing.requires_package("bitblas")
def markers(n=40, threads=16):
    fp8 = determine_fp8_type()

    @simplify_prim_func
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx, iket.range("block"):
            iket.mark("enter", payload=iket.payload(bx, dtype="int32"))
            for i in T.Parallel(threads):
                if bx * threads + i < n:
                    B[bx * threads + i] = A[bx * threads + i] + 1
                    C[bx * threads + i] = T.cast(T.cast(A[bx * threads + i], fp8), "float32")
            iket.mark("exit")

    return main
