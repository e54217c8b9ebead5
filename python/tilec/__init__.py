"""tilec: TileLang-style tile programs compiled by libtilec, from Python.

    import tilec
    import tilec.language as T

    @tilec.jit(out_idx=[-1])
    def matmul(M, N, K, block_M=64, block_N=64, block_K=32, dtype="float32"):
        @T.prim_func
        def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
                 C: T.Tensor((M, N), dtype)):
            ...
        return main

    kernel = matmul(256, 256, 256)   # compiled on TILEC_BACKEND, through the cache
    C = kernel(A, B)                 # numpy arrays, torch tensors, any __dlpack__

The factory's source goes to libtilec's C frontend; Python never runs the
kernel.  See python/README.md.
"""
from . import language
from ._buffer import Buffer
from ._lib import ProgramError, TilecError
from ._jit import JITKernel, compile, context, jit
from ._autotune import autotune
from . import testing
from ._compat import PassConfigKey, TensorSupplyType, next_power_of_2

__version__ = "0.1.0"

__all__ = ["jit", "compile", "autotune", "language", "testing", "JITKernel", "Buffer",
           "TilecError", "ProgramError", "context", "cdiv", "PassConfigKey", "TensorSupplyType",
           "next_power_of_2", "library_path"]


def cdiv(a, b):
    return -(-a // b)


def library_path():
    """The path of the libtilec that was loaded."""
    from . import _lib
    return _lib.lib().path

