#!/usr/bin/env python3
"""cuda_bench.py -- tilec's CUDA backend against the vendor libraries.

Run on a machine with an NVIDIA GPU and PyTorch (the device tool's H200),
from the repository root after `make build/tilec build/libtilec-cuda.so`.
For each workload it times the tilec kernel with `tilec run --bench
--backend cuda` (CUDA events, median of >= 10 launches and one second of
them after warm-up) and the reference through PyTorch (CUDA events, median
of >= 20 calls and one second of them after 5 warm-ups), on random data,
and prints a table with the ratio tilec/reference:

  gemm fp16 4096^3, 8192^3   vs torch.matmul (cuBLAS), TFLOP/s
  flash attention fp16, batch 4, heads 16, seq 8192, dim 128, causal and
                             not, vs scaled_dot_product_attention with its
                             flash and cuDNN backends, TFLOP/s
  gemm bf16 8192^3 vs cuBLAS; gemm + bias + ReLU fp16 8192^3 (one kernel,
                             examples/gemm_bias_relu.py) vs PyTorch's
                             relu(a @ b + bias), TFLOP/s
  gemm fp8 e4m3 8192^3 (examples/gemm_fp8.py, B given (N, K)) vs
                             torch._scaled_mm (cuBLASLt) with scales 1.0, TFLOP/s
  conv2d fp16 NHWC 3x3 and 1x1 (examples/conv2d.py, an implicit GEMM
                             through T.im2col) vs torch conv2d on
                             channels-last tensors (cuDNN), TFLOP/s
  softmax, rmsnorm, layernorm fp16 32768x4096, transpose fp16 16384^2 vs
                             the device-to-device copy bandwidth, GB/s
                             (torch's own kernels printed beside)

When the `tilelang` package imports (TileLang 0.1.15 carried as wheels on
the H200), the same example file with the same parameters is also compiled
by TileLang (bench/tilelang_ref.py) and timed the same way: its column and
its ratio to the reference are printed beside tilec's.

Results are also written as JSON to $OUT/bench.json (or build/bench.json).
BENCH_ONLY=gemm,conv2d,... (comma list of row-group names: gemm, bf16,
bias_relu, fp8, conv2d, flash, softmax, rmsnorm, layernorm, transpose) runs
only those groups. Each reference (and each TileLang kernel) is timed over
at least a second of calls, as tilec's --bench times its launches
(bench/torch_timing.py; TORCH_TIMING_MIN_MS=0: 20 calls, which at the H200's
power cap run at a higher clock than a second of them,
bench/results/h200_session13.md).
"""
import json
import os
import re
import subprocess
import sys

import torch

from torch_timing import median_ms
import tilelang_ref

OUT = os.environ.get("OUT", "build")
TILEC = os.environ.get("TILEC", "build/tilec")


def t_tilec(example, defs):
    cmd = [TILEC, "run", example, "--bench", "--backend", "cuda"]
    for k, v in defs.items():
        cmd += ["-D", f"{k}={v}"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    m = re.search(r"median_ms=([0-9.eE+-]+)", r.stdout)
    if not m:
        return None, (r.stdout + r.stderr).strip().splitlines()[-1:] or ["no output"]
    return float(m.group(1)), None


rows = []
ONLY = [w for w in os.environ.get("BENCH_ONLY", "").split(",") if w]


def want(group):
    return not ONLY or group in ONLY


TL_OK, TL_WHY = tilelang_ref.available()


def t_tilelang(example, factory, defs, out_idx, inputs, fallback=None):
    """TileLang's time for the same file and parameters: (ms, None) or (None, why).

    fallback: other parameters to try when TileLang cannot compile these (its
    sm_90a GEMM with three consumer warpgroups, 192x256 blocks, fails in nvcc);
    the time is then TileLang's at those, and the row says so."""
    if not TL_OK:
        return None, TL_WHY
    kern, err = tilelang_ref.load(example, factory, defs, out_idx)
    note = None
    if kern is None and fallback:
        kern, err2 = tilelang_ref.load(example, factory, dict(defs, **fallback), out_idx)
        if kern is None:
            return None, err
        note = "at " + ",".join(f"{k}={v}" for k, v in fallback.items()) + \
            f" (these parameters: {err[:60]})"
    if kern is None:
        return None, err
    try:
        return median_ms(lambda: kern(*inputs)), note
    except Exception as e:
        return None, f"{type(e).__name__}: {str(e).strip().splitlines()[-1:]}"[:200]


def add(name, unit, work, ms_tilec, ms_ref, ref_name, err=None, tl=(None, None)):
    val = lambda ms: (work / (ms * 1e-3) / (1e12 if unit == "TFLOP/s" else 1e9)) if ms else None
    ms_tl, tl_err = tl
    rows.append(dict(name=name, unit=unit, tilec_ms=ms_tilec, ref_ms=ms_ref, ref=ref_name,
                     tilec=val(ms_tilec), reference=val(ms_ref),
                     ratio=(ms_ref / ms_tilec) if ms_tilec and ms_ref else None, error=err,
                     tilelang_ms=ms_tl, tilelang=val(ms_tl),
                     tilelang_ratio=(ms_ref / ms_tl) if ms_tl and ms_ref else None,
                     tilelang_error=None if ms_tl else tl_err,
                     tilelang_note=tl_err if ms_tl else None))
    t = f"{val(ms_tilec):9.1f}" if ms_tilec else "     n/a "
    tlc = (f"  TileLang {val(ms_tl):7.1f} ratio {ms_ref / ms_tl:.3f}" + (f" [{tl_err}]" if tl_err else "")
           if ms_tl
           else f"  TileLang n/a [{tl_err}]")
    print(f"{name:34s} tilec {t} {unit:7s} ({ms_tilec if ms_tilec else float('nan'):8.3f} ms)  "
          f"{ref_name} {val(ms_ref):9.1f} ({ms_ref:8.3f} ms)  "
          f"ratio {rows[-1]['ratio'] if rows[-1]['ratio'] else float('nan'):.3f}"
          + (f"  [{err}]" if err else "") + tlc, flush=True)


def main():
    dev = torch.cuda.get_device_name(0)
    print(f"device: {dev}; torch {torch.__version__}", flush=True)
    torch.manual_seed(0)
    # copy bandwidth (bytes read + written)
    x = torch.randint(0, 256, (1 << 30,), dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    ms = median_ms(lambda: y.copy_(x))
    copy_gbs = 2 * x.numel() / (ms * 1e-3) / 1e9
    print(f"copy bandwidth: {copy_gbs:.0f} GB/s", flush=True)
    del x, y

    gemm_cfg = dict(block_M=128, block_N=256, block_K=64, num_stages=4, threads=256)
    # at 8192^3 three consumer warpgroups of 64x256 (192x256 blocks, 384 threads, 3 stages): 2-3% faster
    # than 128x256 on the fp16, bf16, bias+ReLU and fp8 rows, 2% slower at 4096^3 (fewer tiles than
    # waves fill), on the H200 (bench/results/hopper_session8.md): less L2 traffic per FLOP
    gemm_big = dict(block_M=192, block_N=256, block_K=64, num_stages=3, threads=384)
    # examples/gemm.py's blocks in panels of 8 block columns (T.use_swizzle): 8192^3 1.779 ms
    # against 1.836 in the plain order on the H200 (bench/results/hopper_session7.md)
    gemm_swz = dict(swizzle=8)
    # the fp16 rows in TileLang's order (panels of 8 block rows, serpentine; swizzle_order="row"):
    # 4096^3 at 128x256 0.2369/0.2363 -> 0.2324/0.2319 ms (-1.9% in both rounds), 8192^3 at 192x256
    # 1.7440/1.7550 -> 1.7366/1.7386 (-0.4/-0.9%; -0.9% in session 11), one H200 call
    # (bench/results/gemm_session12.md); the bf16, bias+ReLU and fp8 rows keep the column panels
    # (not timed alone in that order)
    gemm_row = dict(swizzle=8, swizzle_order="row")
    # TileLang 0.1.15 cannot compile gemm_big on sm_90a (its producer warpgroup plus three consumer
    # warpgroups leave 160 registers a consumer thread; nvcc fails): its column is then its time at
    # gemm_cfg, which the row names (bench/results/h200_session11.md)
    tl_fallback = gemm_cfg
    for n in ((4096, 8192) if want("gemm") else ()):
        a = torch.rand(n, n, dtype=torch.float16, device="cuda") * 2 - 1
        b = torch.rand(n, n, dtype=torch.float16, device="cuda") * 2 - 1
        ref = median_ms(lambda: a @ b)
        defs = dict(M=n, N=n, K=n, **(gemm_big if n >= 8192 else gemm_cfg), **gemm_row)
        ms, err = t_tilec("examples/gemm.py", defs)
        tl = t_tilelang("examples/gemm.py", "matmul", defs, [-1], (a, b), tl_fallback)
        add(f"gemm fp16 {n}^3", "TFLOP/s", 2.0 * n ** 3, ms, ref, "cuBLAS", err, tl)
        del a, b

    # bf16 GEMM, and the fused GEMM + bias + ReLU against PyTorch's
    # unfused sequence (cuBLAS, then elementwise kernels)
    n = 8192
    a = torch.rand(n, n, dtype=torch.bfloat16, device="cuda") * 2 - 1
    b = torch.rand(n, n, dtype=torch.bfloat16, device="cuda") * 2 - 1
    if want("bf16"):
        ref = median_ms(lambda: a @ b)
        defs = dict(M=n, N=n, K=n, dtype="bfloat16", **gemm_big, **gemm_swz)
        ms, err = t_tilec("examples/gemm.py", defs)
        tl = t_tilelang("examples/gemm.py", "matmul", defs, [-1], (a, b), tl_fallback)
        add(f"gemm bf16 {n}^3", "TFLOP/s", 2.0 * n ** 3, ms, ref, "cuBLAS", err, tl)
    a, b = a.half(), b.half()
    bias = torch.rand(n, dtype=torch.float16, device="cuda") * 2 - 1
    if want("bias_relu"):
        ref = median_ms(lambda: torch.relu(a @ b + bias))
        defs = dict(M=n, N=n, K=n, **gemm_big, **gemm_swz)
        ms, err = t_tilec("examples/gemm_bias_relu.py", defs)
        tl = t_tilelang("examples/gemm_bias_relu.py", "gemm_bias_relu", defs, [-1], (a, b, bias), tl_fallback)
        add(f"gemm+bias+relu fp16 {n}^3", "TFLOP/s", 2.0 * n ** 3, ms, ref, "torch-unfused", err, tl)
    del a, b, bias

    # fp8 e4m3 GEMM (C = A @ B^T, fp16 out) vs cuBLASLt through torch._scaled_mm, scales 1.0
    if want("fp8") and hasattr(torch, "float8_e4m3fn"):
        a8 = (torch.rand(n, n, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
        b8 = (torch.rand(n, n, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)  # (N, K)
        one = torch.tensor(1.0, device="cuda")
        try:
            ref = median_ms(lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                                     out_dtype=torch.float16))
        except RuntimeError as e:
            ref = None
            print(f"  torch._scaled_mm: unavailable ({str(e).splitlines()[0]})")
        if ref:
            defs = dict(M=n, N=n, K=n, **dict(gemm_big, block_K=128), **gemm_swz)
            ms, err = t_tilec("examples/gemm_fp8.py", defs)
            tl = t_tilelang("examples/gemm_fp8.py", "gemm_fp8", defs, [-1], (a8, b8), dict(tl_fallback, block_K=128))
            add(f"gemm fp8 e4m3 {n}^3", "TFLOP/s", 2.0 * n ** 3, ms, ref, "cuBLASLt", err, tl)
        del a8, b8

    # conv2d NHWC: a ResNet-like 3x3 layer and a 1x1 projection
    for (bn, hw, c, f, ks, pad) in ((32, 56, 256, 256, 3, 1), (32, 56, 512, 512, 1, 0)) if want("conv2d") else ():
        x = torch.rand(bn, c, hw, hw, dtype=torch.float16, device="cuda").to(memory_format=torch.channels_last) - 0.5
        wt = torch.rand(f, c, ks, ks, dtype=torch.float16, device="cuda").to(memory_format=torch.channels_last) - 0.5
        ref = median_ms(lambda: torch.nn.functional.conv2d(x, wt, padding=pad))
        defs = dict(N=bn, H=hw, W=hw, C=c, F=f, KS=ks, S=1, D=1, P=pad, block_M=128, block_N=128,
                    block_K=64, num_stages=3, threads=256)
        ms, err = t_tilec("examples/conv2d.py", defs)
        xn = x.permute(0, 2, 3, 1).contiguous()
        wn = wt.permute(2, 3, 1, 0).contiguous()
        tl = t_tilelang("examples/conv2d.py", "conv2d", defs, [-1], (xn, wn))
        add(f"conv2d fp16 n{bn} {hw}x{hw} c{c} f{f} {ks}x{ks}", "TFLOP/s", 2.0 * bn * hw * hw * c * f * ks * ks,
            ms, ref, "cuDNN", err, tl)
        del x, wt, xn, wn

    from torch.nn.attention import SDPBackend, sdpa_kernel
    bt, h, s, d = 4, 16, 8192, 128
    for causal in ((False, True) if want("flash") else ()):
        q = torch.randn(bt, h, s, d, dtype=torch.float16, device="cuda")
        k = torch.randn_like(q)
        v = torch.randn_like(q)
        refs = {}
        for name, be in (("SDPA-flash", SDPBackend.FLASH_ATTENTION),
                         ("SDPA-cuDNN", SDPBackend.CUDNN_ATTENTION)):
            try:
                with sdpa_kernel(be):
                    refs[name] = median_ms(lambda: torch.nn.functional.scaled_dot_product_attention(
                        q, k, v, is_causal=causal))
            except RuntimeError as e:
                print(f"  {name}: unavailable ({str(e).splitlines()[0]})")
        # block_N 128: with the producer warpgroup and the overlap (the sm_90a
        # default since session 10) 3.96 ms, causal 2.20; block_N 64 was the faster
        # one only on the plain lowering (4.39 against 4.56 ms,
        # bench/results/hopper_session10.md)
        defs = dict(batch=bt, heads=h, seq_len=s, dim=d, causal=causal,
                    block_M=128, block_N=128, threads=256, num_stages=2)
        ms, err = t_tilec("examples/flash_attention.py", defs)
        tl = t_tilelang("examples/flash_attention.py", "flash_attention", defs, [3], (q, k, v))
        flops = 4.0 * bt * h * s * s * d * (0.5 if causal else 1.0)
        for name, ref in refs.items():
            add(f"flash fp16 b{bt} h{h} s{s} d{d}{' causal' if causal else ''}", "TFLOP/s", flops,
                ms, ref, name, err, tl)
        del q, k, v

    M, N = 32768, 4096
    xs = torch.randn(M, N, dtype=torch.float16, device="cuda")
    nbytes = 2 * M * N * 2
    if want("softmax"):
        ref = median_ms(lambda: torch.softmax(xs, dim=1))
        defs = dict(M=M, N=N, block_M=4)
        ms, err = t_tilec("examples/softmax.py", defs)
        tl = t_tilelang("examples/softmax.py", "softmax", defs, [1], (xs,))
        add(f"softmax fp16 {M}x{N}", "GB/s", nbytes, ms, nbytes / (copy_gbs * 1e9) * 1e3,
            "copy-bw", err, tl)
        print(f"  (torch.softmax: {nbytes / (ref * 1e-3) / 1e9:.0f} GB/s)")
    w = torch.randn(N, dtype=torch.float16, device="cuda")
    if want("rmsnorm"):
        ref = median_ms(lambda: torch.nn.functional.rms_norm(xs, (N,), w, 1e-6))
        defs = dict(M=M, N=N, block_M=4, dtype="float16")
        ms, err = t_tilec("examples/rmsnorm.py", defs)
        tl = t_tilelang("examples/rmsnorm.py", "rms_norm", defs, [2], (xs, w))
        add(f"rmsnorm fp16 {M}x{N}", "GB/s", nbytes, ms, nbytes / (copy_gbs * 1e9) * 1e3,
            "copy-bw", err, tl)
        print(f"  (torch rms_norm: {nbytes / (ref * 1e-3) / 1e9:.0f} GB/s)")

    bias = torch.randn(N, dtype=torch.float16, device="cuda")
    if want("layernorm"):
        ref = median_ms(lambda: torch.nn.functional.layer_norm(xs, (N,), w, bias, 1e-5))
        defs = dict(M=M, N=N, block_M=4)
        ms, err = t_tilec("examples/layernorm.py", defs)
        add(f"layernorm fp16 {M}x{N}", "GB/s", nbytes, ms, nbytes / (copy_gbs * 1e9) * 1e3,
            "copy-bw", err)
        print(f"  (torch layer_norm: {nbytes / (ref * 1e-3) / 1e9:.0f} GB/s)")
    del xs
    tn = 16384 if want("transpose") else 0
    if tn:
        xt = torch.randn(tn, tn, dtype=torch.float16, device="cuda")
        ref = median_ms(lambda: xt.t().contiguous())
        nbytes = 2 * tn * tn * 2
        defs = dict(M=tn, N=tn, block_M=64, block_N=64)
        ms, err = t_tilec("examples/transpose.py", defs)
        add(f"transpose fp16 {tn}x{tn}", "GB/s", nbytes, ms, nbytes / (copy_gbs * 1e9) * 1e3,
            "copy-bw", err)
        print(f"  (torch .t().contiguous(): {nbytes / (ref * 1e-3) / 1e9:.0f} GB/s)")
        del xt

    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "bench.json"), "w") as f:
        json.dump(dict(device=dev, torch=torch.__version__, copy_gbs=copy_gbs, rows=rows,
                       tilelang=None if not TL_OK else __import__("tilelang").__version__), f,
                  indent=1)


if __name__ == "__main__":
    sys.exit(main())
