# tilelang_idioms.py — spellings common in TileLang code: the autotune and
# jit decorators stacked (out_idx as an int, pass_configs), annotated
# factory parameters (`M: int = 64`), T.Buffer, list shapes, layout hints
# (tilelang.layout.make_swizzled_layout, unevaluated), T.Pipelined with
# order/stage/group, an annotated scalar (`acc: T.float32 = 0.0`), and tile
# operations (T.clear, T.copy) under a run-time `if` in a pipelined loop.
# B = A + 3.
# tilec-test:
# tilec-test: -D block_M=64 -D M=100
import tilelang
import tilelang.language as T
from tilelang.autotuner import autotune


def get_configs():
    return [{"block_M": 32}, {"block_M": 64}]


@autotune(configs=get_configs(), warmup=3, rep=20)
@tilelang.jit(out_idx=-1, pass_configs={"tl.disable_tma": True})
def k(M: int = 64, N: int = 64, block_M: int = 32, dtype: str = "float32", enable: bool = True):
    @T.prim_func
    def main(A: T.Buffer((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            s = T.alloc_shared([block_M, N], dtype)
            l = T.alloc_local([1], dtype)
            T.annotate_layout({s: tilelang.layout.make_swizzled_layout(s)})
            T.use_swizzle(panel_size=10, enable=enable)
            acc: T.float32 = 0.0
            for ko in T.Pipelined(2, num_stages=2, order=[-1, 0, 1], stage=[-1, 0, 0], group=[[0], [1, 2]]):
                if ko == 0:
                    T.clear(s)
                    T.copy(A[bx * block_M, 0], s)
                else:
                    for i, j in T.Parallel(block_M, N):
                        s[i, j] = s[i, j] + 1
                acc += 1
            l[0] = acc
            for i, j in T.Parallel(block_M, N):
                s[i, j] += l[0]
            T.copy(s, B[bx * block_M, 0])
    return main
