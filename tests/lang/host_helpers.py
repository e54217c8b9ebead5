# host_helpers.py — host-side Python that TileLang files keep next to their
# kernels: a device probe answers for tilec's fixed device (device_probes.py:
# torch.cuda.is_available() is True), and a module-level setting on a module
# tilec does not evaluate (torch.backends.cuda.matmul.allow_tf32 = False)
# changes nothing.
# B[i] = A[i] * 3: the branch taken when torch sees a device.
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
