#!/bin/sh
# run_cuda.sh — the CUDA backend's GPU test run (make test-cuda).
#
# Meant for a machine with an NVIDIA GPU, its driver and NVRTC (the H200
# of the device tool).  It builds tilec and libtilec-cuda.so in $O (default
# build), lists the devices, then:
#   1. runs every example with each of its `# tilec-test:` parameter lines
#      (RUNJOBS at a time, default 4: checks, not timings)
#      and every conformance case with each `# conform-params:` line through
#      `tilec run FILE --check --backend cuda`;
#   2. runs `tilec conform --backend cuda` (CONFORM=0 skips it);
#   3. with BENCH=1, the benchmarks of bench/cuda_bench.py;
#   4. compute-sanitizer memcheck and racecheck over a representative subset
#      (GEMM f16/bf16 with tensor cores and cp.async, wgmma with its deferred
#      wait, flash attention, fragments in registers, softmax, reductions,
#      cumsum, dynamic shapes, fp32 GEMM, shared buffers that reuse bytes,
#      atomics on shared memory: the barriers are the barrier pass's), when
#      compute-sanitizer is installed (SANITIZE=0 skips it).
# Results go to $OUT (default $O/gpu-results): results.txt (one line a run:
# PASS/FAIL, file, parameters, tilec's result line), conform.txt/.json,
# bench.txt/.json, sanitizer.txt, and a summary on stdout.  Exit status 0
# only when every run passed.
set -u
B=${O:-build}
OUT=${OUT:-$B/gpu-results}
mkdir -p "$OUT"
JOBS=${JOBS:-8}
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cuda-cache}
# One run (the script calls itself as a worker: --one FILE ARGS...).
if [ "${1:-}" = --one ]; then
    shift; f=$1; shift
    res=$(timeout 120 "$B/tilec" run "$f" "$@" --check --backend cuda 2>&1)
    rc=$?
    line=$(printf '%s\n' "$res" | grep -E 'PASS|FAIL' | tail -1)
    if [ $rc -eq 0 ]; then st=PASS; else st="FAIL(rc=$rc)"; fi
    printf '%s %s %s :: %s\n' "$st" "$f" "$*" "$(printf '%s' "${line:-$res}" | tr '\n' ' ' | cut -c1-400)" >> "$OUT/results.txt"
    exit 0
fi
# One sanitizer run (--san TOOL FILE ARGS...).
if [ "${1:-}" = --san ]; then
    tool=$2; shift 2
    r=$(TILEC_CACHE=0 timeout 90 compute-sanitizer --tool "$tool" --error-exitcode 99 \
        "$B/tilec" run "$@" --check --backend cuda 2>&1)
    rc=$?
    s=$(printf '%s\n' "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' | tr '\n' ' ')
    echo "$tool rc=$rc $* :: $s" >> "$OUT/sanitizer.txt"
    exit 0
fi
: > "$OUT/results.txt"

if ! make -j"$JOBS" WERROR= O="$B" "$B/tilec" "$B/libtilec-cuda.so" > "$OUT/build.log" 2>&1; then
    echo "build failed"; tail -30 "$OUT/build.log"; exit 2
fi
"$B/tilec" devices 2>&1 | tee "$OUT/devices.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv 2>/dev/null | tee -a "$OUT/devices.txt"

params_of() { # FILE TAG -> one line per parameter set ("" for none)
    grep -E "^# $2:" "$1" | sed -E "s/^# $2:[ ]*//"
}
# Every run as one line "FILE ARGS", then RUNJOBS of them at a time (default
# 4: checks, not timings, so they may share the GPU).
for f in examples/*.py conformance/cases/*.py; do
    [ -f "$f" ] || continue
    case $f in conformance/*) tag=conform-params ;; *) tag=tilec-test ;; esac
    lines=$(params_of "$f" "$tag")
    if [ -z "$lines" ]; then echo "$f"; continue; fi
    printf '%s\n' "$lines" | while IFS= read -r p; do echo "$f $p"; done
done | sed 's/[[:space:]]*$//' > "$OUT/runs.txt"   # (xargs -L joins a line ending in a blank to the next)
O=$B; export O OUT
xargs -P "${RUNJOBS:-4}" -L 1 sh "$0" --one < "$OUT/runs.txt"
pass=$(grep -c '^PASS' "$OUT/results.txt"); fail=$(grep -vc '^PASS' "$OUT/results.txt")
echo "== runs: $pass passed, $fail failed"
grep -v '^PASS' "$OUT/results.txt" | head -40

if [ "${CONFORM:-1}" = 1 ]; then
    timeout 120 "$B/tilec" conform --backend cuda --json "$OUT/conform.json" \
        > "$OUT/conform.txt" 2>&1
    echo "== conform: rc=$? $(tail -3 "$OUT/conform.txt" | tr '\n' ' ')"
fi

if [ "${BENCH:-0}" = 1 ]; then
    TILEC="$B/tilec" PYTHONUNBUFFERED=1 timeout 300 python3 bench/cuda_bench.py 2>&1 | tee "$OUT/bench.txt"
fi

if [ "${SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null 2>&1; then
    : > "$OUT/sanitizer.txt"
    for spec in "examples/gemm.py" "examples/gemm.py -D dtype=bfloat16" \
                "examples/flash_attention.py -D causal=True" "examples/softmax.py" \
                "examples/reduce_cols.py" "examples/cumsum.py -D reverse=True" \
                "examples/dynamic_shape.py -D m=77" "examples/gemm_fp32.py -D M=33 -D N=17 -D K=9" \
                "conformance/cases/fragment_layouts.py -D M=100 -D N=72 -D K=48 -D bm=64 -D bn=64 -D bk=16" \
                "conformance/cases/fragment_fallbacks.py" "examples/rmsnorm.py" "examples/layernorm.py" \
                "conformance/cases/cumsum_inplace_int.py" "conformance/cases/atomic_histogram_shared.py" \
                "examples/gemm.py -D M=300 -D N=264 -D K=200 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4"; do
        for tool in memcheck racecheck; do echo "$tool $spec"; done
    done | xargs -P "${RUNJOBS:-4}" -L 1 sh "$0" --san
    sort -k3 "$OUT/sanitizer.txt"
    echo "== sanitizer: $(grep -c 'rc=0 ' "$OUT/sanitizer.txt") clean, $(grep -vc 'rc=0 ' "$OUT/sanitizer.txt") not"
fi

[ "$fail" -eq 0 ]
