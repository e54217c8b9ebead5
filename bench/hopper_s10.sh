#!/bin/sh
# bench/hopper_s10.sh — one H200 call for issue 17, session 10 (helper
# hopper: warp-specialized attention): builds A (the tree at ROOT_OF_A:
# main) and B (this tree, run from its own directory), checks B's flash
# attention with the variants of VARIANTS (environment settings) against
# the CPU backend at ragged sizes, causal and not, runs compute-sanitizer
# memcheck/racecheck/synccheck on them, prints their resources, then times
# A and B's variants alternately (2 rounds) at b4 h16 s8192 d128 (block_N
# 128 and 64, causal and not) and bench/cuda_bench.py's flash rows on B.
# Usage (on the device, from B's directory): sh bench/hopper_s10.sh ROOT_OF_A
# VARIANTS="A=1,B=1 C=1 ..." (settings, one variant per word; default below; "-" is B as main lowers),
# CHECK_VARIANTS (default VARIANTS) the ones checked, SAN_VARIANTS (default CHECK_VARIANTS) sanitized;
# CHECKS=0 / SAN=0 / AB=0 / BENCH=0 skip parts; BENCH_ENV: B's setting for cuda_bench;
# QUICK=1: the first two check sizes, one sanitizer size;
# AB64_VARIANTS: the variants timed at block_N 64 (default: the last of VARIANTS); REF=0: no cuDNN times.
# Since the end of session 10 TILEC_CUDA_WS_ATTN and TILEC_CUDA_OVERLAP are on by default for sm_90a:
# an A built from such a tree runs them too (set both to 0 for the plain lowering).
A_DIR=${1:?usage: hopper_s10.sh ROOT_OF_A}
VARIANTS=${VARIANTS:-"TILEC_CUDA_WS_ATTN=1 TILEC_CUDA_WS_ATTN=1,TILEC_CUDA_OVERLAP=1 TILEC_CUDA_WS_ATTN=1,TILEC_CUDA_OVERLAP=1,TILEC_CUDA_PINGPONG=1"}
CHECK_VARIANTS=${CHECK_VARIANTS:-$VARIANTS}
SAN_VARIANTS=${SAN_VARIANTS:-$CHECK_VARIANTS}
R=${OUT:-/tmp}/r
mkdir -p "$R"
export TILEC_CACHE_DIR=/tmp/tilec-cache-h10
( cd "$A_DIR" && make -j8 WERROR= build/tilec build/libtilec-cuda.so > /tmp/h10_build_a.log 2>&1; rc=$?
  [ $rc = 0 ] || tail -5 /tmp/h10_build_a.log; echo "A build rc=$rc" ) &
make -j8 WERROR= build/tilec build/libtilec-cuda.so > /tmp/h10_build_b.log 2>&1; rc=$?
[ $rc = 0 ] || tail -5 /tmp/h10_build_b.log; echo "B build rc=$rc"
wait
B=build/tilec
A=$A_DIR/build/tilec
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
F=examples/flash_attention.py
C2="-D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2"
C64="-D block_M=128 -D block_N=64 -D threads=256 -D num_stages=2"
BIG="-D batch=4 -D heads=16 -D seq_len=8192 -D dim=128"
venv() { [ "$1" = "-" ] && echo "" || echo "$1" | tr ',' ' '; }
if [ "${CHECKS:-1}" = 1 ]; then
  for v in $CHECK_VARIANTS; do
    n=0
    for spec in "$C2 -D batch=1 -D heads=3 -D seq_len=1000 -D dim=128" \
                "$C64 -D batch=1 -D heads=3 -D seq_len=1000 -D dim=128" \
                "$C2 -D batch=1 -D heads=2 -D seq_len=8192 -D dim=128" \
                "-D block_M=128 -D block_N=64 -D threads=256 -D num_stages=3 -D batch=1 -D heads=2 -D seq_len=777 -D dim=64"; do
      n=$((n + 1)); [ "${QUICK:-0}" = 1 ] && [ $n -gt 2 ] && continue
      for causal in False True; do
        r=$(env $(venv $v) timeout 150 $B run $F $spec -D causal=$causal --backend cuda --check --reference cpu 2>&1 | tail -1)
        echo "check [$v] $spec causal=$causal :: $r"
      done
    done
    for spec in "-D causal=True -D seq_len=100 -D heads=1 -D num_stages=2" \
                "-D causal=False -D seq_len=80 -D dim=32 -D block_N=32 -D num_stages=3" \
                "-D causal=True -D seq_len=300 -D heads=2 -D block_N=32 -D num_stages=3"; do
      r=$(env $(venv $v) timeout 120 $B run $F $spec --backend cuda --check 2>&1 | tail -1)
      echo "check [$v] $spec :: $r"
    done
  done > "$R/checks.txt" 2>&1
  cat "$R/checks.txt"
fi
if [ "${SAN:-1}" = 1 ] && command -v compute-sanitizer > /dev/null; then
  for v in $SAN_VARIANTS; do
    tools="memcheck racecheck synccheck"
    for tool in $tools; do
      n=0
      for spec in "$C2 -D causal=True -D batch=1 -D heads=1 -D seq_len=384 -D dim=128" \
                  "$C64 -D causal=False -D batch=1 -D heads=1 -D seq_len=320 -D dim=128"; do
        n=$((n + 1)); [ "${QUICK:-0}" = 1 ] && [ $n -gt 1 ] && continue
        r=$(env $(venv $v) TILEC_CACHE=0 timeout 120 compute-sanitizer --tool $tool --error-exitcode 99 $B run $F $spec --backend cuda --check 2>&1)
        echo "== [$v] $spec" >> "$R/san_$tool.log"; echo "$r" | head -200 >> "$R/san_$tool.log"
        echo "$tool [$v] rc=$? $spec :: $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | tail -1) $(echo "$r" | grep -o 'PASS\|FAIL' | tail -1)"
      done
    done
  done > "$R/san.txt" 2>&1
  cat "$R/san.txt"
fi
for v in - $VARIANTS; do
  echo "info [$v] $(env $(venv $v) $B compile $F $BIG $C2 --backend cuda --emit info 2>&1 | tr '\n' ' ')"
done
bench() { # env, tilec binary, args...: median ms
  e=$1; t=$2; shift 2
  env $(venv $e) timeout 120 $t run "$@" --backend cuda --bench 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | tail -1
}
if [ "${REF:-1}" = 1 ]; then
  python3 - > "$R/refs.txt" 2>&1 <<'PYEOF'
import sys, torch
sys.path.insert(0, "bench")
from torch_timing import median_ms
from torch.nn.attention import SDPBackend, sdpa_kernel
q = torch.randn(4, 16, 8192, 128, dtype=torch.float16, device="cuda")
k = torch.randn_like(q); v = torch.randn_like(q)
for causal in (False, True):
    for name, be in (("SDPA-cuDNN", SDPBackend.CUDNN_ATTENTION), ("SDPA-flash", SDPBackend.FLASH_ATTENTION)):
        with sdpa_kernel(be):
            ms = median_ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
        fl = 4.0 * 4 * 16 * 8192 * 8192 * 128 * (0.5 if causal else 1.0)
        print(f"ref {name} causal={causal} {ms:.4f} ms {fl / (ms * 1e-3) / 1e12:.1f} TFLOP/s")
PYEOF
  cat "$R/refs.txt"
fi
AB64_VARIANTS=${AB64_VARIANTS:-${VARIANTS##* }}
if [ "${AB:-1}" = 1 ]; then
  for round in 1 2; do
    for cfg in "$C2 -D causal=False" "$C2 -D causal=True" "$C64 -D causal=False" "$C64 -D causal=True"; do
      echo "A r$round [$cfg] $(bench - $A $F $BIG $cfg)"
      vs=$VARIANTS; case "$cfg" in *block_N=64*) vs=$AB64_VARIANTS;; esac
      for v in $vs; do
        echo "B r$round [$v] [$cfg] $(bench $v $B $F $BIG $cfg)"
      done
    done
  done > "$R/ab.txt" 2>&1
  cat "$R/ab.txt"
fi
if [ "${BENCH:-1}" = 1 ]; then
  env $(venv ${BENCH_ENV:--}) BENCH_ONLY=flash PYTHONUNBUFFERED=1 timeout 200 python3 bench/cuda_bench.py > "$R/cuda_bench.txt" 2>&1
  tail -12 "$R/cuda_bench.txt"
fi
