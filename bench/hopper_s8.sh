#!/bin/sh
# bench/hopper_s8.sh — one H200 call for issue 17, session 8 (helper hopper):
# builds A (the tree at the repository root: main) and B (this tree, run
# from its own directory), checks B's persistent GEMMs (TILEC_CUDA_PERSIST=1:
# fp16, bf16, bias+ReLU, fp8 at sizes of more tiles than SMs, against the
# CPU backend), runs compute-sanitizer memcheck/racecheck/synccheck on them,
# then the GEMM family A/B (alternating, 2 rounds) and B beside cuBLAS /
# cuBLASLt / torch (bench/cuda_bench.py, TileLang too when installed).
# Usage (on the device, from B's directory): sh bench/hopper_s8.sh ROOT_OF_A
# PERSIST=1|0: what B's cuda_bench run uses; CHECKS=0 / AB=0 / BENCH=0 skip parts.
A_DIR=${1:?usage: hopper_s8.sh ROOT_OF_A}
R=${OUT:-/tmp}/r
mkdir -p "$R"
export TILEC_CACHE_DIR=/tmp/tilec-cache-b
( cd "$A_DIR" && make -j8 WERROR= build/tilec build/libtilec-cuda.so > "$R/build_a.log" 2>&1; echo "A build rc=$?" ) &
make -j8 WERROR= build/tilec build/libtilec-cuda.so > "$R/build_b.log" 2>&1; echo "B build rc=$?"
wait
B=build/tilec
A=$A_DIR/build/tilec
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee "$R/gpu.txt"
G="-D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256"
G8="-D block_M=128 -D block_N=256 -D block_K=128 -D num_stages=4 -D threads=256"
if [ "${CHECKS:-1}" = 1 ]; then
  # 24 x 11 = 264 tiles (ragged edges) on 132 blocks, against the CPU backend
  for p in 1 0; do
    for spec in "examples/gemm.py $G -D M=3000 -D N=2600 -D K=1000 -D swizzle=8" \
                "examples/gemm.py $G -D M=3000 -D N=2600 -D K=1000 -D dtype=bfloat16" \
                "examples/gemm_bias_relu.py $G -D M=3000 -D N=2600 -D K=1000 -D swizzle=8" \
                "examples/gemm_fp8.py $G8 -D M=3072 -D N=2816 -D K=1024 -D swizzle=8" \
                "examples/gemm.py -D M=1000 -D N=1030 -D K=256 -D swizzle=3"; do
      r=$(TILEC_CUDA_PERSIST=$p timeout 120 $B run $spec --backend cuda --check --reference cpu 2>&1 | tail -1)
      echo "persist=$p $spec :: $r"
    done
  done > "$R/checks.txt" 2>&1
  cat "$R/checks.txt"
  for tool in memcheck racecheck synccheck; do
    for spec in "examples/gemm.py -D M=1000 -D N=1030 -D K=256 -D swizzle=3" \
                "examples/gemm_bias_relu.py -D M=1000 -D N=1030 -D K=256 -D swizzle=3" \
                "examples/gemm_fp8.py -D M=1024 -D N=1088 -D K=512 -D swizzle=3" \
                "examples/gemm.py $G -D M=1536 -D N=3072 -D K=256 -D swizzle=8"; do
      echo "$tool|$spec"
    done
  done > "$R/san_specs.txt"
  while IFS='|' read -r tool spec; do
    ( r=$(TILEC_CUDA_PERSIST=1 TILEC_CACHE=0 timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 $B run $spec --check --backend cuda 2>&1); \
      echo "$tool rc=$? $spec :: $(printf '%s\n' "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' | tr '\n' ' ')" >> "$R/sanitizer.txt" ) &
  done < "$R/san_specs.txt"
  wait
  cat "$R/sanitizer.txt"
fi
if [ "${AB:-1}" = 1 ]; then
  S8="-D M=8192 -D N=8192 -D K=8192"
  S4="-D M=4096 -D N=4096 -D K=4096"
  for round in 1 2; do
    for spec in "f16-8192 A 0|examples/gemm.py $G $S8 -D swizzle=8" "f16-8192 B 0|examples/gemm.py $G $S8 -D swizzle=8" \
                "f16-8192 BP 1|examples/gemm.py $G $S8 -D swizzle=8" "f16-8192 BP-sw0 1|examples/gemm.py $G $S8" \
                "f16-4096 A 0|examples/gemm.py $G $S4 -D swizzle=8" "f16-4096 BP 1|examples/gemm.py $G $S4 -D swizzle=8" \
                "bf16-8192 A 0|examples/gemm.py $G $S8 -D swizzle=8 -D dtype=bfloat16" \
                "bf16-8192 BP 1|examples/gemm.py $G $S8 -D swizzle=8 -D dtype=bfloat16" \
                "biasrelu-8192 A 0|examples/gemm_bias_relu.py $G $S8" "biasrelu-8192 B-sw8 0|examples/gemm_bias_relu.py $G $S8 -D swizzle=8" \
                "biasrelu-8192 BP 1|examples/gemm_bias_relu.py $G $S8 -D swizzle=8" \
                "fp8-8192 A 0|examples/gemm_fp8.py $G8 $S8" "fp8-8192 B-sw8 0|examples/gemm_fp8.py $G8 $S8 -D swizzle=8" \
                "fp8-8192 BP 1|examples/gemm_fp8.py $G8 $S8 -D swizzle=8"; do
      name=${spec%%|*}; args=${spec#*|}; p=${name##* }; side=${name#* }; side=${side% *}
      case $side in A) t=$A; export TILEC_CACHE_DIR=/tmp/tilec-cache-a ;; *) t=$B; export TILEC_CACHE_DIR=/tmp/tilec-cache-b ;; esac
      ms=$(TILEC_CUDA_PERSIST=$p timeout 120 $t run $args --bench --backend cuda 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | head -n 1)
      echo "${name% *} round $round median_ms=${ms:-FAILED}"
    done
  done | tee "$R/ab_gemm.txt"
fi
if [ "${BENCH:-1}" = 1 ]; then
  export TILEC_CACHE_DIR=/tmp/tilec-cache-b
  TILEC_CUDA_PERSIST=${PERSIST:-1} BENCH_ONLY=${BENCH_ONLY:-gemm,bf16,bias_relu,fp8} TILEC=$B OUT=$R PYTHONUNBUFFERED=1 \
    timeout 200 python3 bench/cuda_bench.py 2>&1 | tee "$R/bench_b.txt"
fi
