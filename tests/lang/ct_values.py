# ct_values.py — compile-time values in a factory and in a kernel: dicts
# (literal, item assignment, `in`, len, iteration over keys, lookup in the
# kernel), lists (append via +=, item assignment, slicing), strings
# (concatenation, comparison), tuples (repetition, nesting), bools, None,
# a plain helper def with keyword defaults, a compile-time for over a
# tuple of buffers inside the kernel, and `x if c else y` choosing buffers.
# Y[i] = X[i] * 3 + 7 (every term comes from a compile-time structure).
# tilec-test:
# tilec-test: -D which=second
import tilelang
import tilelang.language as T


def pick(d, key, default=None):
    if key in d:
        return d[key]
    return default


def ctv(N=12, which="first", dtype="float" + "32"):
    table = {"first": 3, "second": 3.0}
    table["extra"] = 4
    table["extra"] += 3                     # 7
    keys = []
    for k in table:
        keys += [k]
    assert keys == ["first", "second", "extra"] and len(table) == 3
    scale = pick(table, which)
    bias = pick(table, "extra", default=-1)
    none = pick(table, "missing")
    assert none is None and pick({}, 1, 5) == 5
    dims = [N, 1]
    dims[1] = 2
    half = dims[0] // dims[1]
    assert dims[:1] == [N] and (1, 2) * 2 == (1, 2, 1, 2) and "ab" < "b"

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(1, threads=32) as bx:
            lo = T.alloc_fragment((half,), dtype)
            hi = T.alloc_fragment((half,), dtype)
            T.copy(X[0:half], lo)
            T.copy(X[half:N], hi)
            for buf in (lo, hi):
                for i in T.Parallel(half):
                    buf[i] = buf[i] * scale + table["extra"]
            first = lo if which == "first" else hi
            second = hi if which == "first" else lo
            T.copy(first, Y[0 if which == "first" else half])
            T.copy(second, Y[half if which == "first" else 0])

    return main
