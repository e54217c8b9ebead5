"""tilelang_ref.py -- the same tile program compiled by TileLang itself.

tilec's examples are written in TileLang's surface, so the benchmark can
hand the very file it gives `tilec run` to TileLang (when the `tilelang`
package imports) and time both in one run.  load() imports an example file
as a Python module with the real `tilelang` package, calls its factory with
the benchmark's parameters and returns TileLang's compiled kernel; files
whose factory carries no `@tilelang.jit` get `tilelang.compile(...,
out_idx=...)`.  Any failure is returned as a message, never raised: a
missing or failing TileLang is a blank column, not a failed benchmark.
"""
import importlib.util
import os


def available():
    try:
        import tilelang  # noqa: F401
        return True, None
    except Exception as e:  # ImportError, or a broken install
        return False, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def load(example, factory, defs, out_idx):
    """(kernel, None) or (None, message)."""
    try:
        import tilelang
        name = "tl_" + os.path.splitext(os.path.basename(example))[0]
        spec = importlib.util.spec_from_file_location(name, example)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        obj = getattr(mod, factory)(**defs)
        if not callable(obj) or type(obj).__name__ == "PrimFunc":
            obj = tilelang.compile(obj, out_idx=out_idx)
        return obj, None
    except Exception as e:
        msg = str(e).strip().splitlines()
        return None, f"{type(e).__name__}: {msg[-1] if msg else ''}"[:200]
