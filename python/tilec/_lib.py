"""libtilec through ctypes: finding the library, the C declarations, errors.

ctypes rather than cffi: it is in the standard library, so `pip install
./python` needs nothing but pip, and the C API (include/tilec/tilec.h) is
small and plain C (opaque handles, ints, pointers, a few structs) -- exactly
what ctypes describes without a compiler or a header parser.

The library is found, in order, through TILEC_LIBRARY (a path to
libtilec.so), a build tree above this package (the repository's build/ when
running from a checkout), the installation prefix (sys.prefix/lib, then
/usr/local/lib and /usr/lib) and finally the dynamic linker's search path.
"""
import ctypes
import ctypes.util
import os
import sys
import threading

# ---- the DLPack ABI (include/tilec/dlpack.h, DLPack 0.6) -------------------

kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLOpenCL = 4
kDLVulkan = 7
kDLROCM = 10


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DLDeleter)]

# torch's default CUDA stream has the handle 0, which is CUDA's legacy default
# stream; tilec_launch_stream reads a NULL stream as "no stream: launch on
# tilec's queue and wait", so the same stream is named by CUDA's explicit
# handle for it, CU_STREAM_LEGACY, and the launch stays asynchronous.
CU_STREAM_LEGACY = 1


def cuda_stream_handle(s):
    """The CUstream to hand tilec_launch_stream for torch's cuda_stream s."""
    return s or CU_STREAM_LEGACY


# ---- status codes and element types (tilec.h) ------------------------------

OK = 0
E_INVALID, E_PROGRAM, E_UNAVAILABLE, E_COMPILE, E_LAUNCH, E_NOMEM, E_IO = range(1, 8)

ELEM_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float16", "bfloat16", "float32", "float64"]
ELEM_SIZES = [1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8]

# tilec_dlpack_mode_t
DLPACK_COPY, DLPACK_SHARE, DLPACK_AUTO = 0, 1, 2


class TilecError(Exception):
    """A failed libtilec call.  str() is libtilec's message: for a problem in
    the kernel source it is the full "FILE:LINE:COL: error: ..." diagnostic
    with the source line and a caret.  .status is the tilec status name
    ("invalid program", "compile error", ...)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class ProgramError(TilecError):
    """The kernel source is not a valid tile program (a diagnostic)."""


# ---- finding and loading the library ---------------------------------------

def _candidates():
    env = os.environ.get("TILEC_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    d = here
    for _ in range(4):  # python/tilec -> python -> repository root
        d = os.path.dirname(d)
        yield os.path.join(d, "build", "libtilec.so")
    for prefix in (sys.prefix, "/usr/local", "/usr"):
        yield os.path.join(prefix, "lib", "libtilec.so.0")
        yield os.path.join(prefix, "lib", "libtilec.so")
    found = ctypes.util.find_library("tilec")
    if found:
        yield found


_lib = None
_lib_lock = threading.Lock()

c_int, c_int64, c_size_t, c_char_p, c_void_p = (ctypes.c_int, ctypes.c_int64, ctypes.c_size_t,
                                                ctypes.c_char_p, ctypes.c_void_p)
P = ctypes.POINTER


class DefineKV(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("value", c_char_p)]


# name: (restype, argtypes); handles are void pointers.
_DECLS = {
    "tilec_status_name": (c_char_p, [c_int]),
    "tilec_context_create": (c_int, [c_char_p, P(c_void_p)]),
    "tilec_context_destroy": (None, [c_void_p]),
    "tilec_context_message": (c_char_p, [c_void_p]),
    "tilec_context_backend": (c_char_p, [c_void_p]),
    "tilec_context_device": (c_char_p, [c_void_p]),
    "tilec_program_load_string": (c_int, [c_void_p, c_char_p, c_char_p, c_size_t, P(DefineKV),
                                          c_int, c_char_p, P(c_void_p)]),
    "tilec_program_free": (None, [c_void_p]),
    "tilec_program_ir": (c_char_p, [c_void_p]),
    "tilec_program_num_params": (c_int, [c_void_p]),
    "tilec_program_num_syms": (c_int, [c_void_p]),
    "tilec_program_sym": (c_int, [c_void_p, c_int, P(c_char_p), P(c_int64)]),
    "tilec_program_param": (c_int, [c_void_p, c_int, P(c_char_p), P(c_int), P(c_int),
                                    P(c_int64)]),
    "tilec_program_compile": (c_int, [c_void_p, c_void_p, P(c_void_p)]),
    "tilec_program_compile_for": (c_int, [c_void_p, c_void_p, c_char_p, P(c_void_p)]),
    "tilec_executable_free": (None, [c_void_p]),
    "tilec_executable_source": (c_void_p, [c_void_p, P(c_size_t)]),
    "tilec_launch": (c_int, [c_void_p, c_void_p, P(c_void_p), c_int, P(ctypes.c_double)]),
    "tilec_buffer_create": (c_int, [c_void_p, c_int, c_int, P(c_int64), P(c_void_p)]),
    "tilec_buffer_free": (None, [c_void_p]),
    "tilec_buffer_bytes": (c_size_t, [c_void_p]),
    "tilec_buffer_write": (c_int, [c_void_p, c_void_p, c_size_t]),
    "tilec_buffer_read": (c_int, [c_void_p, c_void_p, c_size_t]),
    "tilec_buffer_from_dlpack": (c_int, [c_void_p, c_void_p, P(c_void_p)]),
    "tilec_buffer_to_dlpack": (c_int, [c_void_p, P(c_void_p)]),
}

# Present only in newer libraries; looked up when declared.
_OPTIONAL = {
    "tilec_buffer_import_dlpack": (c_int, [c_void_p, c_void_p, c_int, P(c_void_p)]),
    "tilec_buffer_is_shared": (c_int, [c_void_p]),
    "tilec_buffer_export_dlpack": (c_int, [c_void_p, c_int, P(P(DLManagedTensor))]),
    "tilec_launch_stream": (c_int, [c_void_p, c_void_p, P(c_void_p), c_int, c_void_p]),
}


def lib():
    """The loaded libtilec (a ctypes.CDLL with its functions declared)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.path.sep in path and not os.path.exists(path):
                tried.append(path + " (absent)")
                continue
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            for name, (res, args) in _DECLS.items():
                f = getattr(handle, name)
                f.restype, f.argtypes = res, args
            for name, (res, args) in _OPTIONAL.items():
                f = getattr(handle, name, None)
                if f is not None:
                    f.restype, f.argtypes = res, args
            handle.path = path
            _lib = handle
            return _lib
        raise TilecError("libtilec not found; set TILEC_LIBRARY to the path of libtilec.so "
                         "(tried: %s)" % ("; ".join(tried) or "nothing"))


_has = {}


def has(name):
    """Whether the loaded libtilec has the (newer) function name."""
    v = _has.get(name)
    if v is None:
        v = _has[name] = getattr(lib(), name, None) is not None
    return v


def status_name(st):
    return lib().tilec_status_name(st).decode()


def check(st, ctx_handle, what=""):
    """Raises TilecError (ProgramError for a diagnostic) unless st is OK."""
    if st == OK:
        return
    msg = lib().tilec_context_message(ctx_handle) if ctx_handle else None
    msg = msg.decode(errors="replace") if msg else ""
    if not msg:
        msg = "%s failed: %s" % (what or "libtilec call", status_name(st))
    cls = ProgramError if st == E_PROGRAM else TilecError
    raise cls(msg, status_name(st))
