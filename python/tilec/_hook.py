"""The import hook of `python -m tilec`: `tilelang` and its common
submodules resolve to tilec, so a TileLang script runs unchanged.

tilelang -> tilec, tilelang.language -> tilec.language, tilelang.jit ->
tilec._jit, tilelang.autotuner -> tilec._autotune, tilelang.testing,
tilelang.profiler -> tilec's; tilelang.utils(.tensor), .transform, .math,
.layout -> tilec._compat.  Any other
tilelang.* import fails with a message saying tilec does not provide it.
"""
import importlib.abc
import sys

ALIASES = {
    "tilelang": "tilec",
    "tilelang.language": "tilec.language",
    "tilelang.jit": "tilec._jit",
    "tilelang.autotuner": "tilec._autotune",
    "tilelang.autotune": "tilec._autotune",
    "tilelang.testing": "tilec.testing",
    "tilelang.profiler": "tilec.profiler",
    "tilelang.utils": "tilec._compat",
    "tilelang.utils.tensor": "tilec._compat",
    "tilelang.transform": "tilec._compat",
    "tilelang.math": "tilec._compat",
    "tilelang.layout": "tilec._compat",
}


class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "tilelang" or name.startswith("tilelang."):
            raise ModuleNotFoundError("%s is not provided by tilec (python -m tilec maps "
                                      "%s)" % (name, ", ".join(sorted(ALIASES))), name=name)
        return None


def install():
    """Makes `import tilelang...` give tilec's modules (idempotent)."""
    import importlib
    for alias, real in ALIASES.items():
        sys.modules.setdefault(alias, importlib.import_module(real))
    if not any(isinstance(f, _Refuse) for f in sys.meta_path):
        sys.meta_path.append(_Refuse())
