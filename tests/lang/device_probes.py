# device_probes.py — host helpers that probe the device (TileLang's AMD
# examples pick their tuning space with an IsRDNA() check, others test for
# Hopper).  tilec builds one IR for every backend, so these probes answer
# for one fixed device of the H100/H200 family: available, named
# "NVIDIA H200", compute capability (9, 0), 132 SMs, not HIP.
# Y[i] = X[i] * 90 + 132 over 8 elements (capability 9 * 10 + 0; SM count).
# tilec-test:
import torch
import tilelang
import tilelang.language as T


def is_rdna():
    if torch.cuda.is_available():
        return "Radeon" in torch.cuda.get_device_name().strip()
    raise RuntimeError("no device")


def sm_version():
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


@tilelang.jit(out_idx=[-1])
def probe(n=8):
    props = torch.cuda.get_device_properties(0)
    assert not is_rdna() and torch.version.hip is None
    assert (props.major, props.minor) == (9, 0) and torch.cuda.device_count() == 1
    sms = props.multi_processor_count
    scale = sm_version()

    @T.prim_func
    def main(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                Y[i] = X[i] * scale + sms

    return main
