"""torch_timing.py -- the one timer the GPU benchmark scripts share.

median_ms(fn) runs fn a few times to warm up, then times each call between
two CUDA events (at least `reps` calls and TORCH_TIMING_MIN_MS of them) and
returns the median in milliseconds.
"""
import os

import torch


# Each reference is timed over at least TORCH_TIMING_MIN_MS milliseconds of
# calls (default 1000), as `tilec run --bench` times its launches (at least 10
# and one second of them): the two sides of a ratio are timed alike.  Under a
# GEMM 8192^3 the H200 sits at its 700 W cap with the SM clock at 1.5-1.7 GHz
# (1980 MHz idle); 20 calls (~30 ms) finish before the clock falls: cuBLAS ran
# 1.428 ms that way and 1.692 ms over a second, in one call
# (bench/results/h200_session13.md).  TORCH_TIMING_MIN_MS=0 gives the short
# timing (20 calls after 5 warm-ups).
MIN_MS = float(os.environ.get("TORCH_TIMING_MIN_MS", "1000") or 0)


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
