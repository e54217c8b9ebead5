"""A profiler shaped like TileLang's: kernel.get_profiler().do_bench() and
.assert_allclose(reference).

do_bench times the kernel with libtilec's launch timer (device time where the
backend has a device timer, host wall time otherwise) over fresh random
inputs; assert_allclose runs the kernel on random inputs and compares its
outputs with a reference program given the same inputs.
"""
import sys
import time

import numpy as _np

from . import _lib


def _random_inputs(kernel, seed=0):
    """Uniform random inputs for kernel: torch tensors (on the kernel's device)
    when the script uses torch, numpy arrays otherwise."""
    rng = _np.random.default_rng(seed)
    torch = sys.modules.get("torch")
    out = []
    for i, p in enumerate(kernel.params):
        if i in kernel.out_idx:
            continue
        if any(isinstance(d, str) for d in p["dims"]):
            raise _lib.TilecError("parameter %s has a T.dynamic dimension: pass inputs "
                                  "yourself" % p["name"])
        name = p["dtype"]
        if name.startswith("float") or name == "bfloat16":
            a = rng.uniform(-1, 1, p["shape"]).astype("float32" if name == "bfloat16" else name)
        elif name == "bool":
            a = rng.integers(0, 2, p["shape"]).astype(bool)
        else:
            lo = 0 if name.startswith("uint") else -64
            a = rng.integers(lo, 64, p["shape"]).astype(name)
        if torch is not None:
            dev = "cuda" if kernel.backend == "cuda" else "cpu"
            a = torch.from_numpy(a).to(device=dev, dtype=getattr(torch, name))
        elif name == "bfloat16":
            raise _lib.TilecError("numpy has no bfloat16 for random inputs")
        out.append(a)
    return out


def _time(fn, warmup_ms, rep_ms, timer=None):
    """Median milliseconds of fn over about rep_ms of runs after about
    warmup_ms of warm-up (TileLang's do_bench takes times, not counts);
    timer() gives a run's time when set and known, else host wall time (with
    the GPU synchronised: a launch on torch's stream returns before it ran)."""
    t_end = time.perf_counter() + warmup_ms / 1e3
    fn()
    while time.perf_counter() < t_end:
        fn()
    ts = []
    t_end = time.perf_counter() + rep_ms / 1e3
    while len(ts) < 3 or (time.perf_counter() < t_end and len(ts) < 1000):
        t0 = time.perf_counter()
        fn()
        ms = timer() if timer else None
        if ms is None:
            _sync()
            ms = (time.perf_counter() - t0) * 1e3
        ts.append(ms)
    return float(_np.median(ts))


def _sync():
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.synchronize()


def do_bench(fn, warmup=25, rep=100, backend=None, quantiles=None, return_mode="median",
             **kwargs):
    """tilelang.profiler.do_bench: median ms of fn() (host wall time, the GPU
    synchronised after each run when torch has one)."""
    def run():
        fn()
        _sync()
    return _time(run, warmup, rep)


class Profiler:
    def __init__(self, kernel):
        self.kernel = kernel

    def do_bench(self, func=None, warmup=25, rep=100, n_warmup=None, n_repeat=None,
                 input_tensors=None, **kwargs):
        """Median time in ms of the kernel (its launch timer: device time on a
        device with a timer), or of func (host wall time) on the same inputs."""
        ins = input_tensors or _random_inputs(self.kernel)
        if func is not None and func is not self.kernel:
            return do_bench(lambda: func(*ins), warmup, rep)
        return _time(lambda: self.kernel(*ins), warmup, rep,
                     lambda: self.kernel.last_elapsed_ms)

    def assert_allclose(self, reference_program, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0):
        ins = _random_inputs(self.kernel)
        got = self.kernel(*ins)
        ref = reference_program(*ins)
        got = got if isinstance(got, (list, tuple)) else [got]
        ref = ref if isinstance(ref, (list, tuple)) else [ref]
        for g, r in zip(got, ref):
            _assert_close(g, r, rtol, atol, max_mismatched_ratio)


def _to_numpy(x):
    if type(x).__module__.split(".")[0] == "torch":
        x = x.detach().cpu()
        if str(x.dtype) == "torch.bfloat16":
            x = x.float()
        return x.numpy()
    return _np.asarray(x)


def _assert_close(got, ref, rtol, atol, max_mismatched_ratio=0):
    g = _to_numpy(got).astype(_np.float64)
    r = _to_numpy(ref).astype(_np.float64)
    if g.shape != r.shape:
        raise AssertionError("shape %s != reference shape %s" % (g.shape, r.shape))
    bad = ~_np.isclose(g, r, rtol=rtol, atol=atol, equal_nan=True)
    n = int(bad.sum())
    if n > max_mismatched_ratio * g.size:
        idx = tuple(int(i) for i in _np.argwhere(bad)[0])
        raise AssertionError("%d of %d elements differ beyond rtol=%g atol=%g; first at %s: "
                             "%r vs reference %r" % (n, g.size, rtol, atol, idx, g[idx], r[idx]))
