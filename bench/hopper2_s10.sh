#!/bin/sh
# bench/hopper2_s10.sh — one H200 call for issue 17, session 10 (helper
# hopper2: 2-block clusters with TMA multicast, the cluster pass).  Builds
# this tree once; A is the same build without TILEC_CUDA_CLUSTER (its CUDA
# source for every GEMM timed here is byte-identical to main's: checked
# before the call with `tilec compile --emit source` of both trees), B with
# TILEC_CUDA_CLUSTER=1 (W: B with TILEC_CUDA_WS=1).  Checks B against the interpreter and the CPU
# backend at ragged sizes (fp16 along bx and by, bf16, bias+ReLU, fp8),
# runs compute-sanitizer memcheck/racecheck/synccheck on B's kernels, times
# A and B alternately, then bench/cuda_bench.py's GEMM rows with B
# (cuBLAS, cuBLASLt and torch's unfused bias+ReLU in the same call).
# Usage (on the device, from the tree's directory): sh bench/hopper2_s10.sh
# CHECKS=0 / SAN=0 / TIME=0 / BENCH=0 skip parts.
R=${OUT:-/tmp}/r
mkdir -p "$R"
export TILEC_CACHE_DIR=/tmp/tilec-cache-h2s10
make -j16 WERROR= build/tilec build/libtilec-cuda.so > "$R/build.log" 2>&1; echo "build rc=$?"
T=build/tilec
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
G192="-D block_M=192 -D block_N=256 -D block_K=64 -D num_stages=3 -D threads=384"
F192="-D block_M=192 -D block_N=256 -D num_stages=3 -D threads=384" # fp8: its block_K 128
G128="-D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256"
S8="-D M=8192 -D N=8192 -D K=8192"
CL="env TILEC_CUDA_CLUSTER=1"
if [ "${CHECKS:-1}" = 1 ]; then
  first=$($CL TILEC_LOG=launch timeout 45 $T run examples/gemm.py --backend cuda --check 2>&1 | grep -E "launch|PASS|FAIL|rror" | tail -3)
  echo "$first"
  # a cluster kernel that hangs or fails here: the rest runs without B
  echo "$first" | grep -q PASS || NOB=1
  for spec in "examples/gemm.py" "examples/gemm_fp8.py" "examples/gemm_bias_relu.py" "examples/gemm.py -D dtype=bfloat16" \
              "examples/gemm.py -D M=576 -D N=512 -D K=256 $G192 -D swizzle=2" \
              "examples/gemm_fp8.py -D M=576 -D N=512 -D K=512 $F192 -D swizzle=2"; do
    r=$($CL timeout 45 $T run $spec --backend cuda --check 2>&1 | tail -1)
    echo "check $spec :: $r"
  done > "$R/checks.txt" 2>&1
  for spec in "examples/gemm.py -D M=3000 -D N=3000 -D K=1000 $G192 -D swizzle=8" \
              "examples/gemm.py -D M=3000 -D N=2600 -D K=1000 $G192" \
              "examples/gemm.py -D M=3000 -D N=3000 -D K=1000 $G192 -D swizzle=8 -D dtype=bfloat16" \
              "examples/gemm_bias_relu.py -D M=3000 -D N=3000 -D K=1000 $G192 -D swizzle=8" \
              "examples/gemm_fp8.py -D M=3000 -D N=3000 -D K=1024 $F192 -D swizzle=8"; do
    r=$($CL timeout 45 $T run $spec --backend cuda --check --reference cpu 2>&1 | tail -1)
    echo "check-cpu $spec :: $r"
  done >> "$R/checks.txt" 2>&1
  for spec in "examples/gemm.py -D M=2000 -D N=3000 -D K=1000 $G128 -D swizzle=8"; do
    r=$($CL TILEC_CUDA_WS=1 timeout 45 $T run $spec --backend cuda --check --reference cpu 2>&1 | tail -1)
    echo "check-cpu WS $spec :: $r"
  done >> "$R/checks.txt" 2>&1
  cat "$R/checks.txt"
fi
if [ "${SAN:-1}" = 1 ] && [ "${NOB:-0}" = 0 ] && command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck synccheck; do
    for spec in "examples/gemm.py -D M=576 -D N=512 -D K=256 $G192 -D swizzle=2" "examples/gemm.py"; do
      [ $tool != memcheck ] && [ "$spec" = examples/gemm.py ] && continue
      r=$($CL TILEC_CACHE=0 timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 $T run $spec --backend cuda 2>&1)
      echo "$tool rc=$? $spec :: $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | tail -1) :: $(echo "$r" | tail -1)"
    done
    r=$($CL TILEC_CUDA_WS=1 TILEC_CACHE=0 timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 $T run examples/gemm.py -D M=576 -D N=512 -D K=256 $G128 -D swizzle=2 --backend cuda 2>&1)
    echo "$tool WS rc=$? 576x512x256 128x256 :: $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | tail -1) :: $(echo "$r" | tail -1)"
  done > "$R/san.txt" 2>&1
  cat "$R/san.txt"
fi
bench() { # env prefix, args...: median ms
  e=$1; shift
  $e timeout 60 $T run "$@" --backend cuda --bench 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | tail -1
}
if [ "${TIME:-1}" = 1 ]; then
  # A: no clusters (main's kernels), B: TILEC_CUDA_CLUSTER=1, W: B with warp specialization (128x256 only:
  # at 192x256 a fourth warpgroup leaves 128 registers a thread, too few)
  for round in 1 2; do
    for side in A B W; do
      [ "${NOB:-0}" = 1 ] && [ $side != A ] && continue
      e=env; [ $side = B ] && e="$CL"; [ $side = W ] && e="$CL TILEC_CUDA_WS=1"
      [ $side != W ] && echo "$side r$round fp16_8192_192x256_swz8 $(bench "$e" examples/gemm.py $S8 $G192 -D swizzle=8)"
      [ $round = 2 ] && continue
      echo "$side r$round fp16_4096_128x256_swz8 $(bench "$e" examples/gemm.py -D M=4096 -D N=4096 -D K=4096 $G128 -D swizzle=8)"
      echo "$side r$round fp16_8192_128x256_swz8 $(bench "$e" examples/gemm.py $S8 $G128 -D swizzle=8)"
      [ $side = W ] && continue
      echo "$side r$round bf16_8192_192x256_swz8 $(bench "$e" examples/gemm.py $S8 $G192 -D swizzle=8 -D dtype=bfloat16)"
      echo "$side r$round biasrelu_8192_192x256_swz8 $(bench "$e" examples/gemm_bias_relu.py $S8 $G192 -D swizzle=8)"
      echo "$side r$round fp8_8192_192x256_swz8 $(bench "$e" examples/gemm_fp8.py $S8 $F192 -D swizzle=8)"
      echo "$side r$round fp16_8192_128x256_plain $(bench "$e" examples/gemm.py $S8 $G128)"
    done
  done > "$R/ab.txt" 2>&1
  cat "$R/ab.txt"
fi
if [ "${BENCH:-1}" = 1 ]; then
  PYTHONUNBUFFERED=1 TILEC_CUDA_CLUSTER=1 BENCH_ONLY=gemm,bf16,bias_relu,fp8 timeout 150 python3 bench/cuda_bench.py \
      > "$R/cuda_bench.txt" 2>&1
  grep -E "^gemm|copy|device" "$R/cuda_bench.txt"
fi
