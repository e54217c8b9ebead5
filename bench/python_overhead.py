"""Python-side launch overhead: microseconds per call of a tiny kernel
(bench/overhead_kernel.py, C = A + B, N = 1024 float32) through tilec's
Python package and through TileLang, on the same tensors in the same run,
with torch's own `a + b` as the reference.

    python3 bench/python_overhead.py [--device cuda|cpu] [--calls N] [--out FILE]

Each implementation runs in its own process (tilec's under its import hook,
TileLang's with the real package, skipped when it does not import); each
reports the median over 5 rounds of (wall time of `calls` back-to-back calls,
then one synchronize) / calls.  CUDA: TILEC_BACKEND=cuda, torch CUDA
tensors.  cpu: TILEC_BACKEND=cpu, numpy arrays (torch when it imports).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def child(impl, device, calls, n):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if impl == "tilec":
        sys.path.insert(0, os.path.join(ROOT, "python"))
        from tilec import _hook
        _hook.install()
    try:
        import torch
    except ImportError:
        torch = None
    if impl == "torch" and torch is None:
        return None
    if torch is not None:
        a = torch.rand(n, device=device)
        b = torch.rand(n, device=device)
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    else:
        import numpy as np
        a, b = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
        sync = lambda: None  # noqa: E731
    if impl == "torch":
        f = lambda: a + b  # noqa: E731
    else:
        import overhead_kernel
        k = overhead_kernel.vadd(n)
        c = k(a, b)
        ref = a + b
        ok = bool((abs(c - ref) < 1e-6).all())
        if not ok:
            raise SystemExit("%s: wrong result" % impl)
        f = lambda: k(a, b)  # noqa: E731
    for _ in range(max(10, calls // 10)):
        f()
    sync()
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        sync()
        rounds.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(rounds)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--out")
    ap.add_argument("--child")
    a = ap.parse_args()
    if a.child:
        us = child(a.child, a.device, a.calls, a.n)
        print(json.dumps({"us": us}))
        return
    env = dict(os.environ)
    env.setdefault("TILEC_LIBRARY", os.path.join(ROOT, "build", "libtilec.so"))
    if a.device == "cuda":
        env.setdefault("TILEC_BACKEND", "cuda")
    else:
        env["TILEC_BACKEND"] = "cpu"
    res = {}
    for impl in ("torch", "tilec", "tilelang"):
        r = subprocess.run([sys.executable, __file__, "--child", impl, "--device", a.device,
                            "--calls", str(a.calls), "--n", str(a.n)], env=env,
                           capture_output=True, text=True)
        if r.returncode == 0:
            res[impl] = json.loads(r.stdout.strip().splitlines()[-1])["us"]
        else:
            err = r.stderr.strip().splitlines()
            res[impl] = None
            print("%s: not measured: %s" % (impl, err[-1] if err else r.returncode))
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    lines = ["# Python launch overhead: us per call, C = A + B, N = %d float32, %s" % (a.n, a.device),
             "machine %s (%s), python %s, tilec %s, %d calls x 5 rounds (median)" % (
                 platform.node(), platform.machine(), platform.python_version(), commit, a.calls)]
    for impl, us in res.items():
        if us is None:
            lines.append("%-9s not measured" % impl)
        else:
            ratio = "" if not res.get("torch") else "  (%.2fx torch a + b)" % (us / res["torch"])
            lines.append("%-9s %8.2f us%s" % (impl, us, ratio))
    if res.get("tilec") and res.get("tilelang"):
        lines.append("tilec / tilelang = %.2f" % (res["tilec"] / res["tilelang"]))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
