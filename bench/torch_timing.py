"""torch_timing.py -- the one timer the GPU benchmark scripts share.

median_ms(fn) runs fn a few times to warm up, then times each of `reps`
calls between two CUDA events and returns the median in milliseconds.
"""
import torch


def median_ms(fn, warm=5, reps=20):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]
