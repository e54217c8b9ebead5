#!/bin/sh
# bench/hopper_s7.sh — one H200 call for issue 17, session 7 (helper hopper):
# builds A (the tree at the repository root: main) and B (this tree, run
# from its own directory), runs B's CUDA checks (examples, conformance cases,
# tests/lang/pipelined_let_extent.py, flash attention at the benchmark's
# blocks against the CPU backend), compute-sanitizer memcheck/racecheck/
# synccheck on the kernels the change touches, then flash attention A/B in
# one run (alternating, 2 rounds) and B beside cuDNN (bench/cuda_bench.py).
# Usage (on the device, from B's directory): sh bench/hopper_s7.sh ROOT_OF_A
A_DIR=${1:?usage: hopper_s7.sh ROOT_OF_A}
R=${OUT:-/tmp}/r
mkdir -p "$R"
export TILEC_CACHE_DIR=/tmp/tilec-cache-b
( cd "$A_DIR" && make -j8 WERROR= build/tilec build/libtilec-cuda.so > "$R/build_a.log" 2>&1; echo "A build rc=$?" ) &
make -j8 WERROR= build/tilec build/libtilec-cuda.so > "$R/build_b.log" 2>&1; echo "B build rc=$?"
wait
B=build/tilec
A=$A_DIR/build/tilec
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv | tee "$R/gpu.txt"
FA0="examples/flash_attention.py -D block_M=128 -D block_N=128 -D threads=256 -D dim=128"
FA="$FA0 -D num_stages=2"
# correctness of B
{
  for cz in False True; do
    timeout 120 $B run $FA -D batch=1 -D heads=4 -D seq_len=2048 -D causal=$cz --backend cuda --check --reference cpu 2>&1 | tail -1
    timeout 120 $B run $FA -D batch=1 -D heads=1 -D seq_len=300 -D causal=$cz --backend cuda --check 2>&1 | tail -1
  done
  timeout 60 $B run tests/lang/pipelined_let_extent.py --backend cuda --check 2>&1 | tail -1
  timeout 60 $B run tests/lang/pipelined_let_extent.py -D M=512 -D N=256 -D K=1024 -D bm=128 -D bn=128 -D bk=64 --backend cuda --check 2>&1 | tail -1
} > "$R/checks.txt" 2>&1
cat "$R/checks.txt"
# B's examples and conformance cases (test-cuda without sanitizers and bench), beside the sanitizers
if [ "${TESTCUDA:-1}" = 1 ]; then
  ( O=build OUT=$R/gpu SANITIZE=0 RUNJOBS=6 timeout 250 sh tests/gpu/run_cuda.sh > "$R/test_cuda.txt" 2>&1; echo "test-cuda rc=$?" >> "$R/test_cuda.txt" ) &
  TC_PID=$!
fi
# sanitizers on the changed kernels
for tool in memcheck racecheck synccheck; do
  for spec in "$FA -D batch=1 -D heads=1 -D seq_len=256 -D causal=False" "$FA -D batch=1 -D heads=1 -D seq_len=384 -D causal=True" \
              "tests/lang/pipelined_let_extent.py" "WS examples/gemm.py -D M=512 -D N=512 -D K=512 -D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256"; do
    echo "$tool|$spec"
  done
done > "$R/san_specs.txt"
while IFS='|' read -r tool spec; do
  ws=0; case $spec in "WS "*) ws=1; spec=${spec#WS } ;; esac
  ( r=$(TILEC_CUDA_WS=$ws TILEC_CACHE=0 timeout 120 compute-sanitizer --tool $tool --error-exitcode 99 $B run $spec --check --backend cuda 2>&1); \
    echo "$tool rc=$? ws=$ws $spec :: $(printf '%s\n' "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' | tr '\n' ' ')" >> "$R/sanitizer.txt" ) &
done < "$R/san_specs.txt"
wait
cat "$R/sanitizer.txt"
grep "==\|rc=" "$R/test_cuda.txt" 2>/dev/null
# flash A/B, alternating, 2 rounds
BIG="$FA0 -D batch=4 -D heads=16 -D seq_len=8192"
for round in 1 2; do
  for cz in False True; do
    for side in A B; do
      if [ $side = A ]; then t=$A; export TILEC_CACHE_DIR=/tmp/tilec-cache-a; else t=$B; export TILEC_CACHE_DIR=/tmp/tilec-cache-b; fi
      ex="-D num_stages=2"
      ms=$(timeout 120 $t run $BIG -D causal=$cz $ex --bench --backend cuda 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | head -n 1)
      echo "flash causal=$cz $side round $round median_ms=${ms:-FAILED}"
    done
  done
  # causal with the query blocks in reverse (the heaviest first), if the variant file is there
  if [ -f bench/flash_rev_variant.py ]; then
    ms=$(timeout 120 $B run $(echo "$BIG" | sed 's|examples/flash_attention.py|bench/flash_rev_variant.py|') -D causal=True -D num_stages=2 --bench --backend cuda 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | head -n 1)
    echo "flash causal=True B-rev round $round median_ms=${ms:-FAILED}"
  fi
done | tee "$R/ab.txt"
# GEMM 8192^3: B's default (TMA ring) against B's warp-specialized loop, and A's default
G="examples/gemm.py -D M=8192 -D N=8192 -D K=8192 -D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256"
if [ "${GEMM:-1}" = 1 ]; then
G4=$(echo "$G" | sed 's/=8192/=4096/g')
for round in 1 2; do
  for spec in "g8192 A 0|$G" "g8192 B 0|$G" "g8192 BWS 1|$G" "g8192 B-sw8 0|$G -D swizzle=8" \
              "g8192 BWS-sw8 1|$G -D swizzle=8" \
              "g4096 A 0|$G4" "g4096 B 0|$G4" "g4096 B-sw8 0|$G4 -D swizzle=8"; do
    name=${spec%%|*}; args=${spec#*|}; ws=${name##* }; side=${name#* }; side=${side% *}
    case $side in A) t=$A; export TILEC_CACHE_DIR=/tmp/tilec-cache-a ;; *) t=$B; export TILEC_CACHE_DIR=/tmp/tilec-cache-b ;; esac
    ms=$(TILEC_CUDA_WS=$ws timeout 120 $t run $args --bench --backend cuda 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | head -n 1)
    echo "${name% *} round $round median_ms=${ms:-FAILED}"
  done
done | tee "$R/ab_gemm.txt"
TILEC_CUDA_WS=1 timeout 120 $B run examples/gemm.py -D M=1024 -D N=768 -D K=2048 -D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256 --backend cuda --check --reference cpu 2>&1 | tail -1 | tee -a "$R/checks.txt"
fi
# B beside cuDNN / FA2 in one process
export TILEC_CACHE_DIR=/tmp/tilec-cache-b
BENCH_ONLY=${BENCH_ONLY:-flash,gemm} TILEC=$B OUT=$R PYTHONUNBUFFERED=1 timeout 150 python3 bench/cuda_bench.py 2>&1 | tee "$R/bench_b.txt"
