# bench/cublas_sustained.py — cuBLAS (torch.matmul) fp16 8192^3 and 4096^3 timed as `tilec run --bench` times
# (at least 10 calls and one second of them), on uniform [-1, 1] inputs (tilec's and bench/cuda_bench.py's) and
# on randn, with the mean SM clock (nvidia-smi every 100 ms) and the highest power draw (session 12, helper gemm).
import subprocess, time, torch
def clk_start(): return subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "100"], stdout=subprocess.PIPE, text=True)
def clk_stop(p):
    p.terminate(); out = p.communicate()[0]; v = [l.split(",") for l in out.strip().splitlines() if "," in l]
    c = [float(a) for a, b in v]; w = [float(b) for a, b in v]
    return (sum(c) / len(c) if c else 0, max(w) if w else 0)
def t(n, dist):
    g = torch.Generator(device="cuda"); g.manual_seed(0)
    if dist == "uniform":
        a = torch.rand(n, n, device="cuda", dtype=torch.float16, generator=g) * 2 - 1; b = torch.rand(n, n, device="cuda", dtype=torch.float16, generator=g) * 2 - 1
    else:
        a = torch.randn(n, n, device="cuda", dtype=torch.float16, generator=g); b = torch.randn(n, n, device="cuda", dtype=torch.float16, generator=g)
    for _ in range(5): a @ b
    torch.cuda.synchronize(); p = clk_start(); time.sleep(0.3)
    ev = []; t0 = time.time()
    while time.time() - t0 < 1.0 or len(ev) < 10:
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True); s.record(); a @ b; e.record(); ev.append((s, e))
        if len(ev) % 20 == 0: torch.cuda.synchronize()
    torch.cuda.synchronize(); c, w = clk_stop(p)
    ms = sorted(s.elapsed_time(e) for s, e in ev); return ms[len(ms) // 2], c, w
for n in (8192, 4096):
    for d in ("uniform", "randn", "uniform"):
        ms, c, w = t(n, d); print("cublas %d %s %.4f clk_mhz=%.0f max_w=%.0f" % (n, d, ms, c, w), flush=True)
