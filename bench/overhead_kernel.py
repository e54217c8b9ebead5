# overhead_kernel.py — the kernel bench/python_overhead.py launches through
# tilec and through TileLang: C = A + B on a small vector, so a call's time
# is almost all host-side overhead (argument conversion, launch, output
# allocation).  Written for both: tilelang resolves to tilec under tilec's
# import hook, to TileLang itself otherwise.
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def vadd(N, block=256, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return main
