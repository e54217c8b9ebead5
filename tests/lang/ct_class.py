# ct_class.py — compile-time classes: a class of constants, and a tuning
# space whose __init__ stores its arguments and whose method computes from
# them (read through `user or Space()`, as TileLang's autotune helpers do).
# Y[i] = X[i] * 3 + 7 over 24 elements in blocks of 8:
#   Consts.SCALE = 3; Space(block=8, extra=4).offset() = 4 + 3 = 7.
# tilec-test:
import tilelang
import tilelang.language as T


class Consts:
    SCALE = 3
    NAME = "consts"


class Space(object):
    def __init__(self, block=16, extra=0):
        self.block = block
        self.extra = extra

    def offset(self, plus=Consts.SCALE):
        return self.extra + plus


def pick(user=None):
    space = user or Space(extra=4)
    space.block = 8
    return space


@tilelang.jit
def scaled(n=24):
    sp = pick()
    assert sp.block == 8 and Space().block == 16 and Consts.NAME == "consts"

    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(n // sp.block, threads=32) as bx:
            for i in T.Parallel(sp.block):
                Y[bx * sp.block + i] = X[bx * sp.block + i] * Consts.SCALE + sp.offset()

    return main
