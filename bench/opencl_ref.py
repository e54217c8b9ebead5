#!/usr/bin/env python3
"""opencl_ref.py -- the references for bench/opencl_nvidia.sh on the H200.

Times, through PyTorch on the same GPU and in the same run as the OpenCL
backend's numbers, the two workloads of the OpenCL benchmark: fp32 GEMM
4096^3 (cuBLAS with TF32 off, so both sides do full fp32 arithmetic) and
fp16 row softmax 8192x1024 (torch.softmax).  Reads the tilec medians from
the bench.txt that opencl_nvidia.sh wrote and prints ratios.
Usage: opencl_ref.py OUTDIR
"""
import re
import sys

import torch

from torch_timing import median_ms


def tilec_ms(bench_txt, key):
    for line in open(bench_txt):
        if line.startswith(key + " |"):
            m = re.search(r"median_ms=([0-9.]+)", line)
            return float(m.group(1)) if m else None
    return None


out = sys.argv[1]
torch.backends.cuda.matmul.allow_tf32 = False
n = 4096
a = torch.rand(n, n, device="cuda") * 2 - 1
b = torch.rand(n, n, device="cuda") * 2 - 1
gemm_ref = median_ms(lambda: torch.matmul(a, b))
x = (torch.rand(8192, 1024, device="cuda") * 2 - 1).half()
soft_ref = median_ms(lambda: torch.softmax(x, dim=1))

rows = [
    ("gemm fp32 4096^3", "examples/gemm_fp32.py -D M=4096 -D N=4096 -D K=4096", gemm_ref,
     2.0 * n ** 3, "TFLOP/s", 1e-12),
    ("softmax fp16 8192x1024", "examples/softmax.py -D M=8192 -D N=1024", soft_ref,
     2.0 * 8192 * 1024 * 2, "GB/s", 1e-9),
]
print(f"{'workload':26} {'tilec opencl':>14} {'torch (cuBLAS)':>15} {'ratio':>7}")
for name, key, ref, work, unit, scale in rows:
    t = tilec_ms(f"{out}/bench.txt", key)
    rate = lambda ms: work / (ms * 1e-3) * scale
    if t is None:
        print(f"{name:26} {'failed':>14} {rate(ref):10.1f} {unit} {'-':>7}")
    else:
        print(f"{name:26} {rate(t):9.1f} {unit} {rate(ref):9.1f} {unit} {ref / t:7.3f}")
