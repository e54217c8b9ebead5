"""torch_timing.py -- the one timer the GPU benchmark scripts share.

median_ms(fn) runs fn a few times to warm up, then times each of `reps`
calls between two CUDA events and returns the median in milliseconds.
"""
import os

import torch


# TORCH_TIMING_MIN_MS=1000 (opt-in) keeps timing until the calls add up to
# that many milliseconds, as `tilec run --bench` times its launches (at least
# 10 and one second of them).  Under a GEMM 8192^3 the H200 sits at its 700 W
# cap with the SM clock at 1.1-1.6 GHz (1980 MHz idle), and cuBLAS timed over a
# second ran 1.650-1.656 ms where 20 calls gave 1.449 in an earlier call; the
# two ways were not yet timed side by side (bench/results/gemm_session12.md).
MIN_MS = float(os.environ.get("TORCH_TIMING_MIN_MS", "0") or 0)


def median_ms(fn, warm=5, reps=20):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    while len(times) < reps or (sum(times) < MIN_MS and len(times) < 5000):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]
