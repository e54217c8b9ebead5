# gemm_space.py — a small float32 GEMM with an @autotune space, for the
# tuner's tests (tests/test_tune.c).  `wrong` scales the result: a config
# that sets it fails the check against the reference (computed with the
# defaults); `crash=1` adds a buffer named Boom, on which the test plugin
# libtilec-tunecrash.so (tests/plugins/tune_crash.c) segfaults: the tuner
# must survive both and choose neither.

import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


def get_configs(M, N):
    configs = []
    for bm in (16, 32):
        if bm <= M:
            configs = configs + [{"block_M": bm, "block_N": 16}]
    return configs + [{"block_M": 32, "block_N": 32, "wrong": 2.0}]


@autotune(configs=get_configs, warmup=3, rep=10)
@tilelang.jit(out_idx=[-1])
def gemm_space(M=64, N=64, K=32, block_M=32, block_N=32, block_K=16, wrong=1.0, crash=0):
    dtype = "float32"

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), dtype)
            T.clear(C_l)
            if crash:
                Boom = T.alloc_fragment((1, 1), dtype)
                T.clear(Boom)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            for i, j in T.Parallel(block_M, block_N):
                C_l[i, j] = C_l[i, j] * wrong
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
