"""@tilec.autotune(configs=...): accepted like tilelang.autotune.

Stacked over @tilec.jit, it picks, on the first call for a set of
arguments, the fastest of the configs (each a dict of factory keyword
arguments) by timing every one that compiles with the profiler, and uses it
from then on.  Configs that do not compile for the backend are skipped; when
none compiles the factory's own defaults are used.
"""
import functools

from ._lib import TilecError
from ._jit import JITFactory


class AutoTuner:
    def __init__(self, factory, configs, warmup, rep):
        self.factory, self.configs = factory, configs
        self.warmup, self.rep = warmup, rep
        self.best = {}
        functools.update_wrapper(self, factory.func if isinstance(factory, JITFactory)
                                 else factory)

    def __call__(self, *args, **kwargs):
        if not isinstance(self.factory, JITFactory):
            return self.factory(*args, **kwargs)
        configs = self.configs() if callable(self.configs) else (self.configs or [])
        key = (args, tuple(sorted(kwargs.items())))
        if key in self.best:
            return self.factory(*args, **dict(kwargs, **self.best[key]))
        best, best_ms = {}, None
        for cfg in configs:
            if any(k in kwargs for k in cfg):
                continue
            try:
                k = self.factory(*args, **dict(kwargs, **cfg))
                ms = k.get_profiler().do_bench(warmup=self.warmup, rep=self.rep)
            except (TilecError, TypeError):
                continue
            if best_ms is None or ms < best_ms:
                best, best_ms = cfg, ms
        self.best[key] = best
        return self.factory(*args, **dict(kwargs, **best))


def autotune(func=None, *, configs=None, warmup=1, rep=5, timeout=None, **kwargs):
    def wrap(f):
        return AutoTuner(f, configs, warmup, rep)
    return wrap(func) if func is not None else wrap
