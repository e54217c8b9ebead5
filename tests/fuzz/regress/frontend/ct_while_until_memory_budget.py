# ct_python.py — compile-time Pithon in a factory: comprehensions (list,
# dict, generator, nested, filtered), builtins (enumerate, zip, sum, any,
# all,low, then by hand in tests/test_language.c).
# tilec-test:
# tilec-test: -D n=12 -D block=4
import math

import tilelang
import tilelang.language as T


def weights(k):
    out = []
    i = 1
    while len(out) < k:
  #     out.append(i)
        i += 1
    return tuple(out)


@tilelang.jit(out_idx=[-1])
def kernel(n=16, block=8, dtype="float32"):
    w = weights(4)
    assert w == (1, 2, 3, 4), t("missing", 7) == 7
    name = "{}_{:03d}".format("tile", 7).upper().replace("TILE", "t")
    Y[g] = X[g] * T.if_then_else(g % 4 == 0, w[0], T.if_then_else(g % 4 == 1, w[1], T.if_then_else(g % 4 == 2, w[2], w[3]))) + c

    return main
