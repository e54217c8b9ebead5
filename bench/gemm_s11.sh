#!/bin/sh
# bench/gemm_s11.sh — one H200 call for issue 17, session 11 (helper gemm:
# the fp16 GEMM against TileLang's structure).  Builds this tree once; with
# no variable and no swizzle_order its CUDA source for every GEMM timed here
# is byte-identical to main 441551e's (checked before the call), so A is
# main's kernel.  Variants (environment and example parameters):
#   R   swizzle_order=row      TileLang's row rasterization (panels of 8 block rows, serpentine)
#   Q   TILEC_CUDA_SQUARE=1    wgmma warpgroups follow the gemm's Square policy (128x256: two of 128x128)
#   W   TILEC_CUDA_WS=1        the warpspec pass (a producer warp, full/empty mbarriers, setmaxnreg)
#   T   block 256x128           two warpgroups of 128x128 without the flag
# Prints checks (interpreter and CPU backend at ragged sizes), compute-sanitizer
# on the new kernels, A/B timings alternating, then bench/cuda_bench.py's gemm
# and bias_relu rows (cuBLAS, torch's unfused sequence) in the same call.
# Usage (on the device, from the tree's directory): sh bench/gemm_s11.sh
# CHECKS=0 / SAN=0 / TIME=0 / BENCH=0 skip parts.
R=${OUT:-/tmp}/r
mkdir -p "$R"
export TILEC_CACHE_DIR=/tmp/tilec-cache-gemm-s11
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
make -j16 WERROR= build/tilec build/libtilec-cuda.so > "$R/build.log" 2>&1; echo "build rc=$? t=$(el)"
T=build/tilec
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
G192="-D block_M=192 -D block_N=256 -D block_K=64 -D num_stages=3 -D threads=384"
G128="-D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256"
G256="-D block_M=256 -D block_N=128 -D block_K=64 -D num_stages=4 -D threads=256"
F192="-D block_M=192 -D block_N=256 -D num_stages=3 -D threads=384" # fp8: its block_K 128
F128="-D block_M=128 -D block_N=256 -D num_stages=4 -D threads=256"
S8="-D M=8192 -D N=8192 -D K=8192"
S4="-D M=4096 -D N=4096 -D K=4096"
SW="-D swizzle=8"
ROW="-D swizzle=8 -D swizzle_order=row"
Q="env TILEC_CUDA_SQUARE=1"
QW="env TILEC_CUDA_SQUARE=1 TILEC_CUDA_WS=1"
bench() { # env prefix, args...: median ms
  e=$1; shift
  $e timeout 40 $T run "$@" --backend cuda --bench 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | tail -1
}
chk() { # label, env prefix, args...
  l=$1; e=$2; shift 2
  r=$($e timeout 45 $T run "$@" --backend cuda --check 2>&1 | tail -1)
  echo "check $l $* :: $r"
}
if [ "${CHECKS:-1}" = 1 ]; then
  {
    chk row env examples/gemm.py -D M=300 -D N=520 -D swizzle=3 -D swizzle_order=row
    chk Q "$Q" examples/gemm.py -D M=320 -D N=512 -D K=128 $G128 -D swizzle=3 -D swizzle_order=row
    chk Q "$Q" examples/gemm.py -D M=3000 -D N=2600 -D K=1000 $G128 $ROW --reference cpu
    chk QW "$QW" examples/gemm.py -D M=3000 -D N=2600 -D K=1000 $G128 $ROW --reference cpu
    chk Q "$Q" examples/gemm.py -D M=3000 -D N=2600 -D K=1000 $G128 -D swizzle=8 -D swizzle_order=column -D dtype=bfloat16 --reference cpu
    chk Q "$Q" examples/gemm_bias_relu.py -D M=3000 -D N=3000 -D K=1000 $G128 $ROW --reference cpu
    chk Q "$Q" examples/gemm_fp8.py -D M=3072 -D N=2816 -D K=1024 $F128 $ROW --reference cpu
    chk row env examples/gemm.py -D M=3000 -D N=3000 -D K=1000 $G192 $ROW --reference cpu
  } > "$R/checks.txt" 2>&1
  cat "$R/checks.txt"; echo "t=$(el)"
fi
ab() { # round: the A/B timings, variants alternating
  round=$1
  echo "A r$round fp16_8192_192x256_swz8 $(bench env examples/gemm.py $S8 $G192 $SW)"
  echo "R r$round fp16_8192_192x256_row $(bench env examples/gemm.py $S8 $G192 $ROW)"
  echo "A r$round fp16_8192_128x256_swz8 $(bench env examples/gemm.py $S8 $G128 $SW)"
  echo "R r$round fp16_8192_128x256_row $(bench env examples/gemm.py $S8 $G128 $ROW)"
  echo "Q r$round fp16_8192_128x256_swz8 $(bench "$Q" examples/gemm.py $S8 $G128 $SW)"
  echo "QR r$round fp16_8192_128x256_row $(bench "$Q" examples/gemm.py $S8 $G128 $ROW)"
  echo "QWR r$round fp16_8192_128x256_row $(bench "$QW" examples/gemm.py $S8 $G128 $ROW)"
  [ $round = 2 ] && return
  echo "A r$round fp16_4096_128x256_swz8 $(bench env examples/gemm.py $S4 $G128 $SW)"
  echo "QR r$round fp16_4096_128x256_row $(bench "$Q" examples/gemm.py $S4 $G128 $ROW)"
  echo "QWR r$round fp16_4096_128x256_row $(bench "$QW" examples/gemm.py $S4 $G128 $ROW)"
  echo "A r$round biasrelu_8192_192x256_swz8 $(bench env examples/gemm_bias_relu.py $S8 $G192 $SW)"
  echo "R r$round biasrelu_8192_192x256_row $(bench env examples/gemm_bias_relu.py $S8 $G192 $ROW)"
  echo "QR r$round biasrelu_8192_128x256_row $(bench "$Q" examples/gemm_bias_relu.py $S8 $G128 $ROW)"
  echo "A r$round bf16_8192_192x256_swz8 $(bench env examples/gemm.py $S8 $G192 $SW -D dtype=bfloat16)"
  echo "QR r$round bf16_8192_128x256_row $(bench "$Q" examples/gemm.py $S8 $G128 $ROW -D dtype=bfloat16)"
  echo "A r$round fp8_8192_192x256_swz8 $(bench env examples/gemm_fp8.py $S8 $F192 $SW)"
  echo "QR r$round fp8_8192_128x256_row $(bench "$Q" examples/gemm_fp8.py $S8 $F128 $ROW)"
}
if [ "${TIME:-1}" = 1 ]; then
  ab 1 > "$R/ab.txt" 2>&1
  cat "$R/ab.txt"; echo "t=$(el)"
fi
if [ "${BENCH:-1}" = 1 ]; then
  PYTHONUNBUFFERED=1 BENCH_ONLY=gemm,bias_relu timeout 60 python3 bench/cuda_bench.py > "$R/cuda_bench.txt" 2>&1
  grep -E "^gemm|copy|device" "$R/cuda_bench.txt"; echo "t=$(el)"
fi
if [ "${SAN:-1}" = 1 ] && [ $(el) -lt ${SAN_BY:-190} ] && command -v compute-sanitizer > /dev/null; then
  for tool in memcheck synccheck racecheck; do
    r=$(TILEC_CACHE=0 $Q timeout 50 compute-sanitizer --tool $tool --error-exitcode 99 $T run examples/gemm.py -D M=320 -D N=520 -D K=256 $G128 -D swizzle=3 -D swizzle_order=row --backend cuda 2>&1)
    echo "$tool Q rc=$? 320x520x256 128x256 row :: $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | tail -1) :: $(echo "$r" | tail -1)"
  done > "$R/san.txt" 2>&1
  if [ $(el) -lt ${SAN_BY:-190} ]; then
    r=$(TILEC_CACHE=0 $QW timeout 40 compute-sanitizer --tool racecheck --error-exitcode 99 $T run examples/gemm.py -D M=256 -D N=512 -D K=192 $G128 -D swizzle=2 -D swizzle_order=column --backend cuda 2>&1)
    echo "racecheck QW rc=$? 256x512x192 128x256 column :: $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | tail -1) :: $(echo "$r" | tail -1)" >> "$R/san.txt"
  fi
  cat "$R/san.txt"; echo "t=$(el)"
fi
if [ "${TIME:-1}" = 1 ] && [ $(el) -lt ${ROUND2_BY:-230} ]; then
  ab 2 > "$R/ab2.txt" 2>&1
  cat "$R/ab2.txt"; echo "t=$(el)"
fi
