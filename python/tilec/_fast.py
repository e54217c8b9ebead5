"""The launch fast path for torch CUDA tensors.

A kernel called over and over with torch CUDA tensors of the same dtypes
and shapes (the common case in a model) should cost what the launch costs,
not what building DLPack capsules costs.  For each signature (every
input's dtype and shape, and the device) a kernel keeps a plan: the output
shapes, and one DLManagedTensor per argument with its shape and dtype
filled in once.  A call that matches a plan sets each tensor's data
pointer, imports it in place (TILEC_DLPACK_SHARE: a small C call, no
capsule), enqueues the kernel on torch's current stream and frees the
buffer handles; torch orders what follows on that stream, as on the
general path (_tensor.py) when every argument is a torch GPU tensor.

A call this path cannot take (an argument that is not a contiguous torch
tensor on the plan's CUDA device, a backend without stream launches, a
tensor the backend will not share) returns None, and the caller takes the
general path, which handles every case.
"""
import ctypes
import sys
import threading

from . import _lib

_DL_CODES = {   # torch dtype name -> (DLPack type code, bits)
    "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64),
    "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
    "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64), "bool": (6, 8),
}
_MAX_PLANS = 16     # signatures kept per kernel (the oldest goes first)


def _torch():
    import torch
    return torch


def _raw_stream():
    """A function device_index -> the current CUstream as an int: torch's
    C accessor where this torch has it (about 0.3 us), else the public one."""
    torch = _torch()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda idx: torch.cuda.current_stream(idx).cuda_stream


class _Plan:
    __slots__ = ("dev", "out_shapes", "mts", "mrefs", "handles", "hrefs", "bufs", "keep")

    def __init__(self, dev, args_meta, out_shapes):
        n = len(args_meta)
        self.dev = dev
        self.out_shapes = out_shapes
        self.mts = (_lib.DLManagedTensor * n)()
        self.keep = []
        for i, (dtype, shape) in enumerate(args_meta):
            code, bits = _DL_CODES[dtype]
            shp = (ctypes.c_int64 * max(1, len(shape)))(*shape)
            self.keep.append(shp)
            t = self.mts[i].dl_tensor
            t.device.device_type, t.device.device_id = _lib.kDLCUDA, dev
            t.ndim = len(shape)
            t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
            t.shape = shp
        self.mrefs = [ctypes.byref(self.mts[i]) for i in range(n)]
        self.handles = [ctypes.c_void_p() for _ in range(n)]
        self.hrefs = [ctypes.byref(h) for h in self.handles]
        self.bufs = (ctypes.c_void_p * max(1, n))()


class FastLaunch:
    """One kernel's plans; launch() is the fast path of Kernel.__call__."""

    def __init__(self, kernel):
        self.k = kernel
        self.plans = {}
        self.disabled = not (_lib.has("tilec_launch_stream") and
                             _lib.has("tilec_buffer_import_dlpack"))
        self.stream = None
        self.hits = 0           # calls this path ran (tests look)
        # ctypes releases the GIL in C calls, so two threads could set the
        # same plan's data pointers at once: one launch at a time takes this
        # path, a concurrent one takes the general path
        self.busy = threading.Lock()

    def _signature(self, inputs):
        torch = sys.modules.get("torch")    # not imported: no argument is a torch tensor
        if torch is None:
            return None, None
        dev = None
        key = []
        for a in inputs:
            if type(a) is not torch.Tensor or not a.is_cuda or not a.is_contiguous():
                return None, None
            d = a.get_device()
            if dev is None:
                dev = d
            elif d != dev:
                return None, None
            key.append(a.dtype)
            key.append(a.shape)
        if dev is None:
            return None, None
        key.append(dev)
        return tuple(key), dev

    def _plan(self, key, dev, inputs, ins, alloc):
        k = self.k
        metas = [None] * len(k.params)
        for i, a in zip(ins, inputs):
            name = str(a.dtype).replace("torch.", "")
            if name not in _DL_CODES:
                return None
            metas[i] = (name, tuple(a.shape))
        pairs = [(k.params[i], a) for i, a in zip(ins, inputs)]
        out_shapes = []
        for i in (k.out_idx if alloc else ()):
            p = k.params[i]
            if p["dtype"] not in _DL_CODES:
                return None
            shape = tuple(k._output_shape(p, pairs))
            out_shapes.append((i, shape, getattr(_torch(), p["dtype"])))
            metas[i] = (p["dtype"], shape)
        if any(m is None for m in metas):
            return None
        if len(self.plans) >= _MAX_PLANS:
            self.plans.pop(next(iter(self.plans)))
        return _Plan(dev, metas, out_shapes)

    def launch(self, inputs, ins, alloc):
        if self.disabled or not self.busy.acquire(False):
            return None
        try:
            return self._launch(inputs, ins, alloc)
        finally:
            self.busy.release()

    def _launch(self, inputs, ins, alloc):
        """Runs the kernel on inputs, the tensors at parameter positions ins
        (alloc: the out_idx outputs are allocated, else every parameter is
        in inputs); the allocated outputs (a list, empty without alloc), or
        None when the call must take the general path."""
        if self.disabled:
            return None
        key, dev = self._signature(inputs)
        if key is None:
            return None
        plan = self.plans.get(key)
        if plan is None:
            try:
                plan = self._plan(key, dev, inputs, ins, alloc)
            except _lib.TilecError:
                plan = None     # the general path says what is wrong
            self.plans[key] = plan if plan is not None else False
            if plan is None:
                return None
        if plan is False:       # a signature this path cannot take
            return None
        torch = _torch()
        args = [None] * len(self.k.params)
        for i, a in zip(ins, inputs):
            args[i] = a
        outs = []
        for i, shape, dtype in plan.out_shapes:
            args[i] = torch.empty(shape, dtype=dtype, device=inputs[0].device)
            outs.append(args[i])
        lib = _lib.lib()
        ctx = self.k.ctx.handle
        made = 0
        try:
            for i, a in enumerate(args):
                plan.mts[i].dl_tensor.data = a.data_ptr()
                if lib.tilec_buffer_import_dlpack(ctx, plan.mrefs[i], _lib.DLPACK_SHARE,
                                                  plan.hrefs[i]) != _lib.OK:
                    self.plans[key] = False     # the backend will not share such a tensor
                    return None
                plan.bufs[i] = plan.handles[i].value
                made += 1
            if self.stream is None:
                self.stream = _raw_stream()
            stream = _lib.cuda_stream_handle(self.stream(dev))
            st = lib.tilec_launch_stream(ctx, self.k._exe, plan.bufs, len(args),
                                         ctypes.c_void_p(stream))
            if st == _lib.E_UNAVAILABLE:
                self.disabled = True
                return None
            self.k._check(st, "launch")
        finally:
            for i in range(made):
                lib.tilec_buffer_free(plan.bufs[i])
        self.hits += 1
        self.k.last_elapsed_ms = None
        self.k.last_stream = stream
        self.k.last_shared = [True] * len(args)
        return outs
