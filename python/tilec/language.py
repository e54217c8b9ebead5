"""tilec.language: the names of tilelang.language, for `import tilec.language as T`.

The kernel body is never run in Python: libtilec's C frontend reads the
factory's source and gives every T.* name its meaning there (docs/language.md
lists what the subset supports).  What Python itself evaluates is only what
runs when a factory or a module is executed: decorators (T.prim_func,
T.macro), the annotations of a kernel's parameters (T.Tensor((M, K), dtype)),
factory-level calls such as T.dynamic("m"), and dtype names (T.float16).
Those are defined here as inert descriptions; every other name of
tilelang.language resolves to a placeholder that accepts any call or
subscript, so a script using a name the subset lacks still imports and gets
the frontend's diagnostic when it compiles.
"""
import sys


class dtype(str):
    """A dtype name (T.float16 == "float16")."""

    def __call__(self, value=None):
        return _Placeholder(str(self))


_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "bfloat16", "float32", "float64"]
for _n in _DTYPES:
    globals()[_n] = dtype(_n)
half, float, double, int, bf16 = (dtype("float16"), dtype("float32"), dtype("float64"),
                                  dtype("int32"), dtype("bfloat16"))
del _n


class _Placeholder:
    """A value the frontend gives meaning to; inert in Python."""

    def __init__(self, name, *args, **kwargs):
        self._name, self._args, self._kwargs = name, args, kwargs

    def __call__(self, *args, **kwargs):
        return _Placeholder(self._name, *args, **kwargs)

    def __getitem__(self, key):
        return _Placeholder(self._name + "[]", key)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Placeholder(self._name + "." + attr)

    def __repr__(self):
        return "T.%s" % self._name


class Tensor(_Placeholder):
    """T.Tensor(shape, dtype): the type of a kernel parameter."""

    def __init__(self, shape=None, dtype="float32", *args, **kwargs):
        super().__init__("Tensor", shape, dtype, *args, **kwargs)
        self.shape, self.dtype = shape, dtype

    def __class_getitem__(cls, key):  # T.Tensor[(M, N), "float16"]
        if isinstance(key, tuple) and len(key) == 2:
            return cls(key[0], key[1])
        return cls(key)


Buffer = Tensor


class dynamic(_Placeholder):
    """T.dynamic("m") / T.symbolic("m"): a run-time size."""

    def __init__(self, name, dtype="int32"):
        super().__init__("dynamic", name)
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return "T.dynamic(%r)" % self.name


symbolic = dynamic


class PrimFunc:
    """What @T.prim_func returns: the kernel's Python function (never called)
    and, when it was defined inside a factory, the factory's code and the
    values its parameters had.  tilec.compile(prim_func) compiles it."""

    def __init__(self, func, factory_code=None, factory_args=None, namespace=None):
        self.func = func
        self.factory_code = factory_code
        self.factory_args = factory_args or {}
        self.namespace = namespace or {}
        self.__name__ = getattr(func, "__name__", "main")
        self.__doc__ = getattr(func, "__doc__", None)

    def __call__(self, *args, **kwargs):
        raise TypeError("a T.prim_func is not callable from Python; compile it with "
                        "tilec.compile(func, out_idx=...) or decorate its factory with "
                        "@tilec.jit")

    def __repr__(self):
        return "<tilec PrimFunc %s>" % self.__name__


def prim_func(func=None, **kwargs):
    """@T.prim_func.  Inside a factory being executed by Python (the
    `func = matmul(...); tilec.compile(func)` style), the factory's frame is
    recorded so its source and arguments can be handed to the frontend."""
    if func is None:
        return lambda f: prim_func(f, **kwargs)
    frame = sys._getframe(1)
    code = frame.f_code
    if code.co_name == "<module>":
        return PrimFunc(func, namespace=frame.f_globals)
    nargs = code.co_argcount + code.co_kwonlyargcount
    names = code.co_varnames[:nargs]
    loc = frame.f_locals
    args = {n: loc[n] for n in names if n in loc}
    ns = dict(frame.f_globals)
    for n in code.co_freevars:
        if n in loc:
            ns[n] = loc[n]
    return PrimFunc(func, code, args, ns)


class Macro:
    """What @T.macro returns: the helper's function, inlined by the frontend."""

    def __init__(self, func):
        self.func = func
        self.__name__ = func.__name__

    def __call__(self, *args, **kwargs):
        raise TypeError("a T.macro is expanded by the tilec frontend inside a kernel; it "
                        "cannot be called from Python")


def macro(func=None, **kwargs):
    if func is None:
        return lambda f: Macro(f)
    return Macro(func)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Placeholder(name)
