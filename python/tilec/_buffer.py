"""tilec.Buffer: libtilec memory on a backend's device, exchanged with other
frameworks through DLPack in both directions.

    buf = tilec.Buffer.empty((M, N), "float32")   # on TILEC_BACKEND's device
    buf = tilec.Buffer.from_dlpack(x)             # shares x's memory where the backend can
    y = numpy.from_dlpack(buf)                    # shares the buffer's memory (cpu backend)
    y = torch.from_dlpack(buf)                    # (cuda backend: a CUDA tensor)
    kernel(buf, ...)                              # used as is, no import

Export goes through tilec_buffer_export_dlpack: the buffer's own memory when
the backend can say where it lies, else a host copy.
"""
import ctypes

from . import _lib
from ._lib import TilecError

_NAME = b"dltensor"
_USED = b"used_dltensor"

_py = ctypes.pythonapi
_py.PyCapsule_New.restype = ctypes.py_object
_py.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_py.PyCapsule_IsValid.restype = ctypes.c_int
_py.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_py.PyCapsule_GetPointer.restype = ctypes.c_void_p
_py.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

_Destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


# The destructor sees the dying capsule as a raw pointer: these take it as one.
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


@_Destructor
def _capsule_destructor(cap):
    # An unconsumed capsule still owns its managed tensor: call its deleter.
    if _raw_is_valid(cap, _NAME):
        p = ctypes.cast(_raw_get_pointer(cap, _NAME), ctypes.POINTER(_lib.DLManagedTensor))
        if p.contents.deleter:
            p.contents.deleter(p)


_DESTRUCTOR_PTR = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


class Buffer:
    """A libtilec buffer.  .shape, .dtype, .nbytes, .shared (it uses memory
    it was given by from_dlpack), .backend."""

    def __init__(self, handle, ctx, shape, elem, keep=None):
        self._h, self.ctx, self.shape, self.elem = handle, ctx, tuple(shape), elem
        self._keep = keep        # the capsule whose memory a shared buffer uses
        self.shared = bool(_lib.lib().tilec_buffer_is_shared(handle))

    @property
    def dtype(self):
        return _lib.ELEM_NAMES[self.elem]

    @property
    def nbytes(self):
        return _lib.lib().tilec_buffer_bytes(self._h)

    @property
    def backend(self):
        return self.ctx.backend

    @classmethod
    def empty(cls, shape, dtype="float32", backend=None, ctx=None):
        from ._jit import context
        ctx = ctx or context(backend)
        elem = _lib.ELEM_NAMES.index(str(dtype))
        shp = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        h = ctypes.c_void_p()
        _lib.check(_lib.lib().tilec_buffer_create(ctx.handle, elem, len(shape), shp,
                                                  ctypes.byref(h)), ctx.handle, "buffer")
        return cls(h.value, ctx, shape, elem)

    @classmethod
    def from_dlpack(cls, x, backend=None, copy=None):
        """A buffer for x (any __dlpack__ object): its memory in place when the
        backend can use it (copy=False insists, copy=True always copies)."""
        from ._jit import context
        from ._tensor import capsule
        ctx = context(backend)
        cap = capsule(x)
        ptr = _py.PyCapsule_GetPointer(cap, _NAME)
        mode = {None: _lib.DLPACK_AUTO, True: _lib.DLPACK_COPY, False: _lib.DLPACK_SHARE}[copy]
        h = ctypes.c_void_p()
        _lib.check(_lib.lib().tilec_buffer_import_dlpack(ctx.handle, ptr, mode, ctypes.byref(h)),
                   ctx.handle, "import")
        dl = ctypes.cast(ptr, ctypes.POINTER(_lib.DLManagedTensor)).contents.dl_tensor
        shape = [dl.shape[d] for d in range(dl.ndim)]
        elem = _elem_of(dl.dtype)
        b = cls(h.value, ctx, shape, elem)
        b._keep = (cap, x) if b.shared else None
        return b

    def __dlpack_device__(self):
        t = self._export(_lib.DLPACK_AUTO)
        try:
            dev = t.contents.dl_tensor.device
            return (dev.device_type, dev.device_id)
        finally:
            t.contents.deleter(t)

    def __dlpack__(self, stream=None, **kwargs):
        t = self._export(_lib.DLPACK_AUTO)
        return _py.PyCapsule_New(ctypes.cast(t, ctypes.c_void_p), _NAME, _DESTRUCTOR_PTR)

    def _export(self, mode):
        out = ctypes.POINTER(_lib.DLManagedTensor)()
        _lib.check(_lib.lib().tilec_buffer_export_dlpack(self._h, mode, ctypes.byref(out)),
                   self.ctx.handle, "export")
        return out

    def write(self, data):
        """Copies bytes-like data (the whole buffer) in."""
        mv = memoryview(data).cast("B")
        src = (ctypes.c_char * len(mv)).from_buffer_copy(mv)
        _lib.check(_lib.lib().tilec_buffer_write(self._h, src, len(mv)), self.ctx.handle, "write")

    def read(self):
        """The buffer's bytes."""
        n = self.nbytes
        dst = ctypes.create_string_buffer(n)
        _lib.check(_lib.lib().tilec_buffer_read(self._h, dst, n), self.ctx.handle, "read")
        return dst.raw[:n]

    def __del__(self):
        lib = _lib._lib
        if getattr(self, "_h", None) and lib is not None:
            lib.tilec_buffer_free(self._h)
            self._h = None

    def __repr__(self):
        return "<tilec.Buffer %s %s on %s%s>" % (self.dtype, list(self.shape), self.backend,
                                                  ", shared" if self.shared else "")


def _elem_of(t):
    names = {(2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (4, 16): "bfloat16",
             (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
             (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
             (6, 8): "bool"}
    name = names.get((t.code, t.bits))
    if name is None:
        raise TilecError("unsupported DLPack dtype (code %d, bits %d)" % (t.code, t.bits))
    return _lib.ELEM_NAMES.index(name)
