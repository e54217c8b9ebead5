import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def k(M=8, dtype="float16"):
    sizes = [x * 2 for x in range(4) if x % 2 == 0]
    name = f"{dtype}_{M:03d}"
    assert len(name) == 11, "name"
    empty = "" * 10 ** 6 + str(sizes)

    @T.prim_func
    def main(A: T.Tensor((M, M), dtype), C: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            f = T.alloc_fragment((M, M), "float32")
            r = T.alloc_fragment((M,), "float32")
            T.copy(A, f)
            T.reduce_sum(f, r, dim=1)
            T.cumsum(r, dim=0)
            T.copy(r, C)

    return main
