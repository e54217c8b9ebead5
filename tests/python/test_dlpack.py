# test_dlpack.py — DLPack both ways from Python on the cpu backend: numpy
# arrays are used in place (zero-copy) when aligned and copied (then copied
# back) when not; tilec.Buffer imports and exports memory without a copy;
# any __dlpack__ object works; memory on a device the backend cannot reach
# is refused with libtilec's message.
import ctypes

import numpy as np
import pytest

import tilec
from tilec import _lib

import kernels


def test_aligned_numpy_arguments_are_shared():
    k = kernels.matmul(16, 16, 16)
    a, b = np.ones((16, 16), np.float32), np.ones((16, 16), np.float32)
    c = k(a, b)
    assert k.last_shared == [True, True, True]
    assert (c == 16).all()


def test_misaligned_array_is_copied_and_copied_back():
    k = kernels.inplace_scale(8)
    raw = np.zeros(8 * 4 + 1, np.uint8)
    x = np.frombuffer(raw.data, dtype=np.float32, count=8, offset=1)  # not 4-byte aligned
    assert x.ctypes.data % 4 != 0
    x[:] = np.arange(8)
    k(Wrapped(x))                                     # straight to libtilec, unaligned
    assert k.last_shared == [False]
    np.testing.assert_allclose(x, np.arange(8) * 3.0)


def test_buffer_export_shares_with_numpy():
    buf = tilec.Buffer.empty((2, 3), "float32")
    buf.write(np.arange(6, dtype=np.float32).tobytes())
    assert buf.__dlpack_device__() == (_lib.kDLCPU, 0)
    view = np.from_dlpack(buf)
    assert view.shape == (2, 3) and view.dtype == np.float32
    assert (view.ravel() == np.arange(6)).all()
    # numpy before 2.1 marks imported arrays read-only: write through the address
    ctypes.c_float.from_address(view.ctypes.data + 5 * 4).value = 42  # the buffer's memory
    assert np.frombuffer(buf.read(), np.float32)[5] == 42
    del buf                                           # the export keeps it alive
    assert view[1, 2] == 42


def test_buffer_import_modes():
    x = np.arange(4, dtype=np.float32)
    b = tilec.Buffer.from_dlpack(x)
    assert b.shared and b.shape == (4,) and b.dtype == "float32"
    x[0] = 9                                          # seen through the buffer
    assert np.frombuffer(b.read(), np.float32)[0] == 9
    c = tilec.Buffer.from_dlpack(x, copy=True)
    assert not c.shared
    raw = np.zeros(17, np.uint8)
    odd = np.frombuffer(raw.data, dtype=np.float32, count=4, offset=1)
    with pytest.raises(tilec.TilecError, match="not aligned"):
        tilec.Buffer.from_dlpack(odd, copy=False)


def test_buffers_as_kernel_arguments_and_outputs():
    k = kernels.matmul(16, 16, 16)
    a = tilec.Buffer.from_dlpack(np.full((16, 16), 2, np.float32))
    b = tilec.Buffer.empty((16, 16), "float32")
    b.write(np.eye(16, dtype=np.float32).tobytes())
    c = k(a, b)
    assert isinstance(c, tilec.Buffer) and c.shape == (16, 16)
    assert (np.from_dlpack(c) == 2).all()


class Wrapped:
    """A framework-neutral __dlpack__ object."""

    def __init__(self, a):
        self.a = a
        self.shape = a.shape

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_any_dlpack_object():
    k = kernels.inplace_scale(8)
    x = np.arange(8, dtype=np.float32)
    k(Wrapped(x))
    np.testing.assert_allclose(x, np.arange(8) * 3.0)


class FakeCuda:
    """Claims its memory is CUDA device 0's (it is not: never dereferenced)."""

    def __init__(self):
        self.shape_arr = (ctypes.c_int64 * 1)(8)
        self.store = (ctypes.c_float * 8)()
        m = _lib.DLManagedTensor()
        m.dl_tensor.data = ctypes.addressof(self.store)
        m.dl_tensor.device = _lib.DLDevice(_lib.kDLCUDA, 0)
        m.dl_tensor.ndim = 1
        m.dl_tensor.dtype = _lib.DLDataType(2, 32, 1)
        m.dl_tensor.shape = self.shape_arr
        self.m = m
        self.shape = (8,)

    def __dlpack_device__(self):
        return (_lib.kDLCUDA, 0)

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                       ctypes.c_void_p]
        return new(ctypes.addressof(self.m), b"dltensor", None)


def test_memory_the_backend_cannot_reach_is_refused():
    k = kernels.inplace_scale(8)
    with pytest.raises(tilec.TilecError, match="device type 2"):
        k(FakeCuda())
