"""Small members of tilelang that TileLang scripts use from their host code:
PassConfigKey, TensorSupplyType, next_power_of_2, the tensor helpers of
tilelang.utils.tensor, and placeholders for layout helpers that only a
kernel body uses (the frontend gives those their meaning).  The import hook
maps tilelang.transform, tilelang.utils(.tensor), tilelang.math and
tilelang.layout here."""
from . import language as _language


class _KeyNames(type):
    def __getattr__(cls, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return "tl." + (name[3:] if name.startswith("TL_") else name).lower()


class PassConfigKey(metaclass=_KeyNames):
    """tilelang.PassConfigKey.TL_ENABLE_FAST_MATH == "tl.enable_fast_math"."""


class TensorSupplyType:
    """tilelang.TensorSupplyType's names (the profiler fills inputs uniformly
    in [-1, 1] whichever is asked)."""
    Integer, Uniform, Normal, Randn, Zero, One, Auto = range(7)


def next_power_of_2(n):
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def torch_assert_close(a, b, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.0, **kwargs):
    from .profiler import _assert_close
    _assert_close(a, b, rtol, atol, max_mismatched_ratio)


def map_torch_type(name):
    import torch
    return getattr(torch, str(name))


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(_language, name)
