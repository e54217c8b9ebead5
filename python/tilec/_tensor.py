"""Kernel arguments: numpy arrays, torch tensors and __dlpack__ objects to
libtilec buffers and back.

Every argument crosses as a DLPack tensor.  libtilec shares its memory when
the backend can address it (tilec_buffer_import_dlpack, TILEC_DLPACK_AUTO:
torch CUDA tensors on the cuda backend, suitably aligned host memory on the
cpu backend) and copies it otherwise; a copied host tensor is copied back
after the launch, so a kernel's writes always land in the caller's tensor.
Outputs named by out_idx are allocated like the inputs: numpy in, numpy
out; torch in, torch out on the same device.
"""
import ctypes

from . import _lib
from ._buffer import Buffer
from ._lib import TilecError

_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = ctypes.c_void_p
_capsule_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _is_numpy(x):
    return type(x).__module__.split(".")[0] == "numpy"


def all_torch_cuda(args):
    """Every argument is a torch tensor on one CUDA device: the launch will go
    on torch's current stream (torch_stream), which orders it after the
    caller's work, so the tensors may cross without DLPack's stream
    handshake (see capsule)."""
    dev = None
    for a in args:
        if not _is_torch(a) or not a.is_cuda or (dev is not None and a.device != dev):
            return False
        dev = a.device
    return dev is not None


def capsule(x, on_stream=False):
    """x.__dlpack__(), asked for the legacy default stream (DLPack's 1) when x
    is on a GPU: tilec launches there and waits, so the producer orders its
    own stream's work before it.  on_stream (all_torch_cuda): the launch is
    enqueued on torch's current stream instead, so torch's to_dlpack, which
    skips the handshake (half of a small launch's time in __dlpack__'s stream
    lookups, measured on the H200), is enough."""
    if on_stream:
        import torch.utils.dlpack
        return torch.utils.dlpack.to_dlpack(x)
    dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (_lib.kDLCPU, 0)
    if dev[0] in (_lib.kDLCUDA, _lib.kDLROCM):
        return x.__dlpack__(stream=1)
    return x.__dlpack__()


class Arg:
    """One kernel argument while a launch is in flight."""

    def __init__(self, ctx, obj, index, name, on_stream=False):
        self.obj, self.buf, self.capsule = obj, None, None
        self.shared = False
        self.host_ptr = None      # where a copied host tensor's bytes go back
        self.writeback = None     # (original, contiguous copy) of a strided tensor
        self.owned = True         # self.buf is freed after the launch
        if isinstance(obj, Buffer):
            if obj.ctx is not ctx:
                raise TilecError("argument %d (%s): a buffer of backend '%s' passed to a kernel "
                                 "of '%s'" % (index, name, obj.backend, ctx.backend))
            self.buf, self.shared, self.owned, self.tensor = obj._h, True, False, obj
            return
        x = obj
        if _is_numpy(x):
            import numpy as np
            if not x.flags.c_contiguous or not x.flags.writeable or not x.flags.aligned:
                c = np.ascontiguousarray(x).copy()
                if x.flags.writeable:
                    self.writeback = (x, c)
                x = c
        elif _is_torch(x):
            if x.requires_grad:      # DLPack refuses those; same memory
                x = x.detach()
            if not x.is_contiguous():
                c = x.contiguous()
                self.writeback = (x, c)
                x = c
        elif not hasattr(x, "__dlpack__"):
            import numpy as np
            x = np.ascontiguousarray(x)
        self.tensor = x
        try:
            self.capsule = capsule(x, on_stream)
        except (TypeError, BufferError, RuntimeError) as e:
            raise TypeError("argument %d (%s): cannot take it as a DLPack tensor: %s" %
                            (index, name, e)) from None
        ptr = _capsule_ptr(self.capsule, b"dltensor")
        lib = _lib.lib()
        out = ctypes.c_void_p()
        if _lib.has("tilec_buffer_import_dlpack"):
            st = lib.tilec_buffer_import_dlpack(ctx.handle, ptr, _lib.DLPACK_AUTO,
                                                ctypes.byref(out))
        else:
            st = lib.tilec_buffer_from_dlpack(ctx.handle, ptr, ctypes.byref(out))
        if st != _lib.OK:
            msg = lib.tilec_context_message(ctx.handle).decode(errors="replace")
            raise TilecError("argument %d (%s): %s" % (index, name, msg), _lib.status_name(st))
        self.buf = out.value
        if _lib.has("tilec_buffer_is_shared"):
            self.shared = bool(lib.tilec_buffer_is_shared(self.buf))
        if not self.shared:
            dl = ctypes.cast(ptr, ctypes.POINTER(_lib.DLManagedTensor)).contents.dl_tensor
            if dl.device.device_type in (_lib.kDLCPU, _lib.kDLCUDAHost):
                self.host_ptr = (dl.data or 0) + dl.byte_offset

    def finish(self, ctx):
        """After the launch: copy a copied tensor's bytes back."""
        lib = _lib.lib()
        if not self.shared and self.host_ptr is not None:
            n = lib.tilec_buffer_bytes(self.buf)
            _lib.check(lib.tilec_buffer_read(self.buf, self.host_ptr, n), ctx.handle, "read")
        if self.writeback is not None:
            orig, tmp = self.writeback
            if _is_torch(orig):
                orig.copy_(tmp)
            else:
                orig[...] = tmp

    def free(self):
        if self.buf and self.owned:
            _lib.lib().tilec_buffer_free(self.buf)
            self.buf = None
        self.capsule = None


def torch_stream(args):
    """The current torch stream (its CUstream as an int) when every argument
    is a torch GPU tensor tilec shares: the kernel is then enqueued there,
    after the caller's work, and nothing waits for it (torch orders what
    follows on the stream).  None when any argument is copied or not a GPU
    tensor: that launch runs on tilec's own queue and waits."""
    dev = None
    for a in args:
        t = a.writeback[1] if a.writeback is not None else a.tensor
        if not a.shared or a.host_ptr is not None or not _is_torch(t) or not t.is_cuda:
            return None
        dev = t.device
    if dev is None:
        return None
    import torch
    return _lib.cuda_stream_handle(torch.cuda.current_stream(dev).cuda_stream)


def like(template, shape, elem):
    """A new, empty tensor of shape and element type elem, of template's kind
    (torch on template's device, a tilec Buffer, else numpy)."""
    name = _lib.ELEM_NAMES[elem]
    if isinstance(template, Buffer):
        return Buffer.empty(shape, name, ctx=template.ctx)
    if template is not None and _is_torch(template):
        import torch
        dt = getattr(torch, name, None)
        if dt is None:
            raise TilecError("torch has no dtype %s for an output" % name)
        return torch.empty(tuple(shape), dtype=dt, device=template.device)
    import numpy as np
    if name == "bfloat16":
        raise TilecError("numpy has no bfloat16: pass the bfloat16 output yourself, or use "
                         "torch tensors")
    return np.empty(tuple(shape), dtype=np.dtype(name))
