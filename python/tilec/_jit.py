"""@tilec.jit, tilec.compile and the compiled kernel (JITKernel).

@jit(out_idx=..., target=..., pass_configs=...) wraps a kernel factory.
Calling the wrapper binds the factory's arguments (never running its body),
builds the kernel source (_source.py), and has libtilec parse, lower and
compile it for the context's backend; libtilec's kernel cache makes a second
process's compile of the same kernel a cache hit, and the wrapper memoises
kernels per argument set in this process.  The backend is TILEC_BACKEND when
set, else the one target= names ("cuda", "hip", "cpu", ...), else "auto".

Calling a JITKernel takes the inputs (the parameters not in out_idx), in
order, allocates the outputs like the first input and returns them (one
tensor, or a list when there are several).
"""
import ctypes
import functools
import inspect
import os
import re
import threading

from . import _fast, _lib, _source, _tensor, language
from ._lib import TilecError

_contexts = {}
_ctx_lock = threading.Lock()

_TARGETS = {"cuda": "cuda", "hip": "hip", "rocm": "hip", "cpu": "cpu", "c": "cpu",
            "llvm": "cpu", "opencl": "opencl", "vulkan": "vulkan", "auto": None}


class Context:
    """One libtilec context (a backend and its device)."""

    def __init__(self, backend):
        lib = _lib.lib()
        h = ctypes.c_void_p()
        st = lib.tilec_context_create(backend.encode() if backend else None, ctypes.byref(h))
        self.handle = h.value
        if st != _lib.OK:
            msg = lib.tilec_context_message(self.handle).decode() if self.handle else ""
            if self.handle:
                lib.tilec_context_destroy(self.handle)
                self.handle = None
            raise TilecError(msg or "cannot create a context: " + _lib.status_name(st),
                             _lib.status_name(st))
        self.backend = lib.tilec_context_backend(self.handle).decode()
        self.device = lib.tilec_context_device(self.handle).decode()

    def __del__(self):
        if getattr(self, "handle", None) and _lib._lib is not None:
            _lib._lib.tilec_context_destroy(self.handle)
            self.handle = None


def backend_for(target=None):
    """The backend name a compile uses: TILEC_BACKEND, else target's, else auto."""
    env = os.environ.get("TILEC_BACKEND")
    if env:
        return env
    if target is None:
        return None
    t = str(getattr(target, "kind", target)).split()[0].lower()
    base, _, dev = t.partition(":")
    if base not in _TARGETS:
        raise TilecError("unknown target %r (tilec knows %s)" % (target, ", ".join(_TARGETS)))
    b = _TARGETS[base]
    return b + (":" + dev if b and dev else "") if b else None


def context(backend=None):
    """The shared Context for a backend name (None: TILEC_BACKEND or auto)."""
    key = backend or os.environ.get("TILEC_BACKEND") or "auto"
    with _ctx_lock:
        c = _contexts.get(key)
        if c is None:
            c = _contexts[key] = Context(key)
        return c


_PARAM_RE = re.compile(r"^\s*param (\S+) \S+ \S+ \[([^\]]*)\]( out)?", re.M)


class JITKernel:
    """A compiled kernel.  kernel(*inputs) runs it; .get_kernel_source(),
    .ir, .params, .out_idx describe it; after a call, .last_shared says which
    arguments the kernel used in place (zero-copy), .last_elapsed_ms the
    launch's time (None when it was enqueued on torch's current stream, which
    happens when every argument is a shared torch GPU tensor; .last_stream is
    then that stream's handle) ."""

    def __init__(self, source, out_idx=None, target=None, pass_configs=None):
        self.source = source
        self.pass_configs = dict(pass_configs or {})
        self.ctx = context(backend_for(target))
        self._prog = self._exe = self._fast = None
        lib = _lib.lib()
        kv = (_lib.DefineKV * max(1, len(source.defs)))()
        for i, (n, v) in enumerate(source.defs):
            kv[i].name, kv[i].value = n.encode(), v.encode()
        text = source.text.encode()
        prog = ctypes.c_void_p()
        st = lib.tilec_program_load_string(self.ctx.handle, source.filename.encode(), text,
                                           len(text), kv, len(source.defs),
                                           source.entry.encode(), ctypes.byref(prog))
        self._prog = prog.value
        self._check(st, "load")
        self.ir = lib.tilec_program_ir(self._prog).decode()
        self.params = []
        dims = dict((m.group(1), [d.strip() for d in m.group(2).split(",") if d.strip()])
                    for m in _PARAM_RE.finditer(self.ir))
        for i in range(lib.tilec_program_num_params(self._prog)):
            name, elem, nd = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int()
            shape = (ctypes.c_int64 * 8)()
            self._check(lib.tilec_program_param(self._prog, i, ctypes.byref(name),
                                                ctypes.byref(elem), ctypes.byref(nd), shape),
                        "param")
            n = name.value.decode()
            shp = [shape[d] for d in range(nd.value)]
            syms = dims.get(n, [])
            self.params.append({"name": n, "dtype": _lib.ELEM_NAMES[elem.value],
                                "elem": elem.value, "shape": shp,
                                "dims": [syms[d] if d < len(syms) and shp[d] < 0 else shp[d]
                                         for d in range(len(shp))]})
        np_ = len(self.params)
        if out_idx is None:     # the kernel's own marks: T.empty outputs, jit's out_idx
            out_idx = [i for i, m in enumerate(_PARAM_RE.finditer(self.ir)) if m.group(3)]
        elif isinstance(out_idx, int):
            out_idx = [out_idx]
        self.out_idx = []
        for o in out_idx:
            if not -np_ <= o < np_:
                raise TilecError("out_idx %d is out of range: the kernel has %d parameters" %
                                 (o, np_))
            self.out_idx.append(o % np_)
        exe = ctypes.c_void_p()
        arch = self.pass_configs.get("tilec.arch")
        if arch:
            st = lib.tilec_program_compile_for(self.ctx.handle, self._prog, arch.encode(),
                                               ctypes.byref(exe))
        else:
            st = lib.tilec_program_compile(self.ctx.handle, self._prog, ctypes.byref(exe))
        self._exe = exe.value
        self._check(st, "compile")
        self._ins = [i for i in range(np_) if i not in self.out_idx]   # input positions
        self._fast = _fast.FastLaunch(self)

    def _check(self, st, what):
        if st != _lib.OK:
            msg = _lib.lib().tilec_context_message(self.ctx.handle).decode(errors="replace")
            cls = _lib.ProgramError if st == _lib.E_PROGRAM else TilecError
            raise cls(self.source.remap(msg) or what + " failed", _lib.status_name(st))

    def __del__(self):
        lib = _lib._lib
        if lib is None:
            return
        if getattr(self, "_exe", None):
            lib.tilec_executable_free(self._exe)
        if getattr(self, "_prog", None):
            lib.tilec_program_free(self._prog)

    @property
    def backend(self):
        return self.ctx.backend

    def get_kernel_source(self):
        """The generated source (C, CUDA, OpenCL C...), or the tile IR when
        the backend shows none."""
        n = ctypes.c_size_t()
        p = _lib.lib().tilec_executable_source(self._exe, ctypes.byref(n))
        if not p:
            return self.ir
        return ctypes.string_at(p, n.value).decode(errors="replace")

    def _output_shape(self, p, inputs):
        """p's shape, its T.dynamic dimensions taken from the inputs'."""
        syms = {}
        for q, x in inputs:
            for d, dim in enumerate(q["dims"]):
                if isinstance(dim, str) and d < len(x.shape):
                    syms.setdefault(dim, int(x.shape[d]))
        shape = []
        for dim in p["dims"]:
            if isinstance(dim, str):
                if dim not in syms:
                    raise TilecError("cannot size output %s: dimension %s is not a dimension "
                                     "of an input" % (p["name"], dim))
                shape.append(syms[dim])
            else:
                shape.append(dim)
        return shape

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError("unexpected keyword arguments %s" % ", ".join(kwargs))
        np_ = len(self.params)
        ins = self._ins
        if len(args) == np_ and self.out_idx:
            given = list(args)                      # outputs passed in
            outs = None
        elif len(args) == len(ins):
            given = [None] * np_
            for i, a in zip(ins, args):
                given[i] = a
            outs = []
        else:
            raise TypeError("kernel %s takes %d input%s (%s), got %d" % (
                self.source.entry, len(ins), "" if len(ins) == 1 else "s",
                ", ".join(self.params[i]["name"] for i in ins), len(args)))
        if self._fast is not None:
            fast = self._fast.launch(args, ins if outs is not None else range(np_), outs is not None)
            if fast is not None:
                if not fast:
                    return None
                return fast[0] if len(fast) == 1 else fast
        if outs is not None:
            template = next((a for a in args if hasattr(a, "shape")), None)
            inputs = [(self.params[i], given[i]) for i in ins if hasattr(given[i], "shape")]
            for i in self.out_idx:
                p = self.params[i]
                given[i] = _tensor.like(template, self._output_shape(p, inputs), p["elem"])
                outs.append(given[i])
        converted = []
        try:
            on_stream = _lib.has("tilec_launch_stream") and _tensor.all_torch_cuda(given)
            for i, a in enumerate(given):
                converted.append(_tensor.Arg(self.ctx, a, i, self.params[i]["name"], on_stream))
            bufs = (ctypes.c_void_p * max(1, np_))(*[c.buf for c in converted])
            stream = _tensor.torch_stream(converted) if _lib.has("tilec_launch_stream") else None
            if on_stream and stream is None:
                # a tensor was copied after all (unaligned, strided): tilec's own
                # queue reads it, so torch's pending work must be done first
                import torch
                torch.cuda.current_stream(given[0].device).synchronize()
            st = _lib.E_UNAVAILABLE
            if stream is not None:
                st = _lib.lib().tilec_launch_stream(self.ctx.handle, self._exe, bufs, np_,
                                                    ctypes.c_void_p(stream))
                if st != _lib.E_UNAVAILABLE:     # else: a backend without stream launches
                    self._check(st, "launch")
                    self.last_elapsed_ms = None  # enqueued, not timed
                    self.last_stream = stream
            if st == _lib.E_UNAVAILABLE:
                elapsed = ctypes.c_double()
                self._check(_lib.lib().tilec_launch(self.ctx.handle, self._exe, bufs, np_,
                                                    ctypes.byref(elapsed)), "launch")
                self.last_elapsed_ms = elapsed.value
                self.last_stream = None
            self.last_shared = [c.shared for c in converted]
            for c in converted:
                c.finish(self.ctx)
        finally:
            for c in converted:
                c.free()
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else outs

    def get_profiler(self, tensor_supply_type=None):
        from .profiler import Profiler
        return Profiler(self)


def _memo_key(v):
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


class JITFactory:
    """What @tilec.jit returns.  For a factory (a function returning a
    T.prim_func) calling it compiles, once per argument set, and returns the
    kernel.  For an eager-style kernel (the jit function holds the `with
    T.Kernel` block and declares its tensors with `A: T.Tensor(...)`)
    calling it with tensors compiles (once per non-tensor arguments; sizes
    from T.const stay symbolic) and runs it, returning the T.empty outputs.
    .compile(**kwargs) compiles either without running (T.const sizes may
    be given as keywords)."""

    def __init__(self, func, out_idx=None, target=None, pass_configs=None, **ignored):
        self.func = func
        self.out_idx, self.target, self.pass_configs = out_idx, target, pass_configs
        self.ignored = ignored
        self.signature = inspect.signature(func)
        self.tensors = _source.eager_tensors(func)
        self._kernels = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, func)

    def _jit_args(self):
        if self.out_idx is None:
            return ""
        o = [self.out_idx] if isinstance(self.out_idx, int) else list(self.out_idx)
        return "(out_idx=%r)" % o

    def source(self, args):
        return _source.build(self.func, _source.function_namespace(self.func), args,
                             self.func.__name__, self._jit_args())

    def _kernel(self, args):
        src = self.source(args)
        key = (src.key(), backend_for(self.target))
        with self._lock:
            k = self._kernels.get(key)
            if k is None:
                k = self._kernels[key] = JITKernel(src, self.out_idx, self.target,
                                                   self.pass_configs)
        return k

    def __call__(self, *args, **kwargs):
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        if self.tensors is None:
            return self._kernel(values)
        given = {n: values.pop(n) for n in self.tensors if n in values}
        k = self._kernel(values)
        ins = [given[p["name"]] for i, p in enumerate(k.params) if i not in k.out_idx]
        return k(*ins)

    def compile(self, *args, **kwargs):
        if self.tensors is None:
            return self(*args, **kwargs)
        values, params = {}, list(self.signature.parameters.values())
        for p, a in zip(params, args):
            values[p.name] = a
        for p in params:
            if p.name in self.tensors or p.name in values:
                continue
            if p.name in kwargs:
                values[p.name] = kwargs.pop(p.name)
            elif p.default is not inspect.Parameter.empty:
                values[p.name] = p.default
            else:
                raise TypeError("%s.compile: missing argument %r" % (self.func.__name__, p.name))
        for t in self.tensors:
            values.pop(t, None)
        values.update(kwargs)           # T.const sizes: M=1024, ...
        return self._kernel(values)


def jit(func=None, *, out_idx=None, target=None, pass_configs=None, execution_backend=None,
        target_host=None, verbose=False, debug_root_path=None, compile_flags=None, **kwargs):
    """@tilec.jit / @tilec.jit(out_idx=[-1], target=..., pass_configs=...):
    tilelang.jit's keywords are accepted; out_idx, target and pass_configs
    are used, the others ignored."""
    def wrap(f):
        if isinstance(f, language.PrimFunc):
            return compile(f, out_idx=out_idx, target=target, pass_configs=pass_configs)
        return JITFactory(f, out_idx=out_idx, target=target, pass_configs=pass_configs)
    return wrap(func) if func is not None else wrap


def compile(func, out_idx=None, target=None, pass_configs=None, execution_backend=None,
            target_host=None, verbose=False, **kwargs):
    """tilelang.compile: a JITKernel from a T.prim_func (as returned by an
    undecorated factory, or defined at the top level)."""
    if not isinstance(func, language.PrimFunc):
        raise TypeError("tilec.compile takes a T.prim_func, got %r" % (func,))
    if func.factory_code is not None:
        src = _source.build(func.factory_code, func.namespace, func.factory_args,
                            func.factory_code.co_name)
    else:
        ns = dict(func.namespace) if func.namespace else _source.function_namespace(func.func)
        src = _source.build(func.func, ns, None, func.__name__)
    return JITKernel(src, out_idx, target, pass_configs)
