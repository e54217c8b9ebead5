# ct_python.py — compile-time Python in a factory: comprehensions (list,
# dict, generator, nested, filtered), builtins (enumerate, zip, sum, any,
# all, sorted with a lambda key, reversed, divmod, round, pow, min/max,
# getattr/hasattr, dict), methods (list.append/extend/pop, dict.items/get/
# update, str.format/join/split/upper/replace, int.bit_length), f-strings,
# math, a while loop, a nested def, a lambda, and a raise that never runs.
# Y[i] = X[i] * w[i % 4] + c, with w = (1, 2, 3, 4) and c = 10 (all checked
# by the asserts below, then by hand in tests/test_language.c).
# tilec-test:
# tilec-test: -D n=12 -D block=4
import math

import tilelang
import tilelang.language as T


def weights(k):
    out = []
    i = 1
    while len(out) < k:
        out.append(i)
        i += 1
    return tuple(out)


@tilelang.jit(out_idx=[-1])
def kernel(n=16, block=8, dtype="float32"):
    w = weights(4)
    assert w == (1, 2, 3, 4), f"weights are {w}"
    squares = [x * x for x in range(6) if x % 2 == 0]
    table = {f"k{i}": v for i, v in enumerate(squares)}
    assert table == {"k0": 0, "k1": 4, "k2": 16}, f"{table!r}"
    pairs = sorted(zip("cab", [3, 1, 2]), key=lambda p: p[1])
    assert "".join(p[0] for p in pairs) == "abc"
    assert sum(v for _, v in table.items()) == 20 and any(s > 10 for s in squares) and all(squares[1:])
    assert list(reversed(w))[0] == 4 and divmod(17, 5) == (3, 2) and round(2.5) == 2 and pow(3, 4, 5) == 1
    assert max(w, key=lambda x: -x) == 1 and min(3, 1, 2) == 1
    cfg = dict(block=block)
    cfg.update(stages=2)
    assert cfg.get("stages") == 2 and cfg.get("missing", 7) == 7
    name = "{}_{:03d}".format("tile", 7).upper().replace("TILE", "t")
    assert name == "t_007", name
    assert "a,b,,c".split(",") == ["a", "b", "", "c"] and (255).bit_length() == 8
    assert hasattr(T, "copy") and not hasattr(T, "no_such_thing") and getattr(cfg, "nope", None) is None
    assert math.isclose(math.log2(1024), 10) and math.ceil(2.1) == 3 and math.gcd(12, 18) == 6
    extra = [1, 2]
    extra.extend([3])
    assert extra.pop() == 3 and extra == [1, 2]

    def offset():
        return int(math.sqrt(100))

    c = offset()
    if n % block != 0:
        raise ValueError(f"n={n} must be a multiple of block={block}")

    @T.prim_func
    def main(X: T.Tensor((n,), dtype), Y: T.Tensor((n,), dtype)):
        with T.Kernel(n // block) as bx:
            for i in T.Parallel(block):
                g = bx * block + i
                Y[g] = X[g] * T.if_then_else(g % 4 == 0, w[0], T.if_then_else(g % 4 == 1, w[1], T.if_then_else(g % 4 == 2, w[2], w[3]))) + c

    return main
