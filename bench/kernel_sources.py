"""kernel_sources.py -- the CUDA source tilec and TileLang make of the same benchmark kernels.

For each of bench/cuda_bench.py's GEMM, conv2d and flash-attention rows it
writes, under $OUT/sources/, NAME.tilec.cu (`tilec compile --emit source
--backend cuda` with the row's parameters) and, when the `tilelang` package
imports, NAME.tilelang.cu (the source TileLang generates for the same file
and parameters), then packs them into $OUT/sources.tar.gz.  It is a study
aid for the lowering work (which instructions, barriers and register budgets
each compiler chose), not a benchmark: nothing is timed.

Usage (on the GPU machine, from the repository root):
  OUT=/tmp/o python3 bench/kernel_sources.py [NAME...]
"""
import os
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tilelang_ref  # noqa: E402

OUT = os.environ.get("OUT", "build")
TILEC = os.environ.get("TILEC", "build/tilec")
ARCH = os.environ.get("ARCH", "sm_90a")  # tilec's source needs no GPU: this also runs without one

GEMM_BIG = dict(block_M=192, block_N=256, block_K=64, num_stages=3, threads=384, swizzle=8)
GEMM_MID = dict(block_M=128, block_N=256, block_K=64, num_stages=4, threads=256, swizzle=8)
CONV = dict(N=32, H=56, W=56, S=1, D=1, block_M=128, block_N=128, block_K=64, num_stages=3, threads=256)
FLASH = dict(batch=4, heads=16, seq_len=8192, dim=128, block_M=128, block_N=128, threads=256, num_stages=2)

# name, example, factory, parameters, TileLang's out_idx
KERNELS = [
    ("gemm8192", "examples/gemm.py", "matmul", dict(M=8192, N=8192, K=8192, **GEMM_BIG), [-1]),
    ("gemm4096", "examples/gemm.py", "matmul", dict(M=4096, N=4096, K=4096, **GEMM_MID), [-1]),
    ("bias_relu", "examples/gemm_bias_relu.py", "gemm_bias_relu", dict(M=8192, N=8192, K=8192, **GEMM_BIG), [-1]),
    ("conv3x3", "examples/conv2d.py", "conv2d", dict(C=256, F=256, KS=3, P=1, **CONV), [-1]),
    ("conv1x1", "examples/conv2d.py", "conv2d", dict(C=512, F=512, KS=1, P=0, **CONV), [-1]),
    ("flash", "examples/flash_attention.py", "flash_attention", dict(causal=False, **FLASH), [3]),
    ("flash_causal", "examples/flash_attention.py", "flash_attention", dict(causal=True, **FLASH), [3]),
]


def main():
    want = set(sys.argv[1:])
    d = os.path.join(OUT, "sources")
    os.makedirs(d, exist_ok=True)
    ok, why = tilelang_ref.available()
    print(f"TileLang: {'available' if ok else why}", flush=True)
    for name, example, factory, defs, out_idx in KERNELS:
        if want and name not in want:
            continue
        cmd = [TILEC, "compile", example, "--backend", "cuda", "--arch", ARCH, "--emit", "source",
               "-o", os.path.join(d, name + ".tilec.cu")]
        for k, v in defs.items():
            cmd += ["-D", f"{k}={v}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        print(f"{name}: tilec rc={r.returncode} {r.stderr.strip()[-200:]}", flush=True)
        if not ok:
            continue
        kern, err = tilelang_ref.load(example, factory, defs, out_idx)
        if kern is None:
            print(f"{name}: TileLang {err}", flush=True)
            continue
        try:
            src = kern.get_kernel_source()
        except Exception as e:  # an older or newer kernel object
            print(f"{name}: TileLang source unavailable ({type(e).__name__}: {e})", flush=True)
            continue
        with open(os.path.join(d, name + ".tilelang.cu"), "w") as f:
            f.write(src)
        print(f"{name}: TileLang {len(src)} chars", flush=True)
    with tarfile.open(os.path.join(OUT, "sources.tar.gz"), "w:gz") as t:
        t.add(d, arcname="sources")


if __name__ == "__main__":
    main()
