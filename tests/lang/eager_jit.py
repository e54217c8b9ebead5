# eager_jit.py — TileLang's eager style: the @tilelang.jit function is the
# kernel; tensors are declared by `A: T.Tensor(...)` statements, sizes come
# from T.const (a -D value, else a T.dynamic symbol bound from the tensor),
# the output is T.empty, and `return B` ends it.  The decorator stack uses
# autotune with an itertools/math config space, pass_configs with
# tilelang.PassConfigKey, and jit keywords tilec ignores; host-side imports
# (argparse, torch) are accepted because nothing uses them.
# B[i, j] = A[i, j] * 2 + sqrt(16) = A * 2 + 4.
# tilec-test: -D block=8 -D M=24 -D N=6
# tilec-test: -D block=4 -D M=8 -D N=3
import argparse
import itertools
import math

import tilelang
import tilelang.language as T
import torch
from tilelang.autotuner import *


def get_configs():
    space = itertools.product([4, 8], [1, 2])
    return [{"block": b, "stages": s} for b, s in space]


@autotune(configs=get_configs(), warmup=3, rep=5)
@tilelang.jit(
    out_idx=[-1],
    target="cuda",
    execution_backend="cython",
    pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True, "tl.disable_tma_lower": True},
)
def scale_add(A, block, stages=1, dtype=torch.float32):
    M, N = T.const("M, N")
    bias = math.sqrt(16)
    A: T.Tensor((M, N), dtype)
    B = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        tile = T.alloc_shared((block, N), dtype)
        T.copy(A[bx * block, 0], tile)
        for i, j in T.Parallel(block, N):
            tile[i, j] = tile[i, j] * 2 + bias
        T.copy(tile, B[bx * block, 0])
    return B
