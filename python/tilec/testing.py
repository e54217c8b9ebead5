"""tilelang.testing's common helpers: torch_assert_close, set_random_seed,
and main() for scripts that end with `tilelang.testing.main()`."""
import random
import sys

def torch_assert_close(a, b, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.0, **kwargs):
    from .profiler import _assert_close
    _assert_close(a, b, rtol, atol, max_mismatched_ratio)


assert_allclose = torch_assert_close


def set_random_seed(seed=42):
    random.seed(seed)
    try:
        import numpy as np
        np.random.seed(seed)
    except ImportError:
        pass
    try:
        import torch
        torch.manual_seed(seed)
    except ImportError:
        pass


def main():
    """Runs the test_* functions of the calling script (pytest style)."""
    mod = sys.modules.get("__main__")
    failed = 0
    for name in sorted(dir(mod)):
        f = getattr(mod, name)
        if name.startswith("test") and callable(f):
            try:
                f()
                print("PASSED", name)
            except Exception as e:  # report and go on, like a test runner
                failed += 1
                print("FAILED %s: %s: %s" % (name, type(e).__name__, e))
    if failed:
        raise SystemExit(1)


def requires_cuda(f):
    return f


def requires_cuda_compute_version(*args, **kwargs):
    return lambda f: f
