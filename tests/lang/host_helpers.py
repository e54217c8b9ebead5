# host_helpers.py — host-side Python that TileLang files keep next to their
# kernels: torch.cuda.is_available() is False (tilec runs no torch, so torch
# sees no device), and a module-level setting on a module tilec does not
# evaluate (torch.backends.cuda.matmul.allow_tf32 = False) changes nothing.
# B[i] = A[i] * 2: the branch taken when no CUDA device is visible to torch.
# tilec-test:
import torch
import tilelang.language as T

torch.backends.cuda.matmul.allow_tf32 = False


def is_rdna():
    if torch.cuda.is_available():
        return True
    return False


@T.prim_func
def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
    with T.Kernel(1) as bx:
        for i in T.Parallel(8):
            B[i] = A[i] * (3.0 if is_rdna() else 2.0)
