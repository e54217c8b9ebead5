#!/bin/sh
# bench/opencl_lowered.sh — the OpenCL backend before and after it prints
# lowered IR, in one run on one machine, as ratios against a reference
# measured in the same run.
#
# "before" is TILEC_OPENCL_LOWER=0 (the SIMT kit's high-level path, every
# fragment in local memory, the kit's own barriers: the default until the
# lowered path passed everything on PoCL), "after" TILEC_OPENCL_LOWER=1
# (the default: the SDK's lowering passes, then the kit prints the lowered
# module: register fragments, the barrier pass's barriers,
# register-blocked gemm).
#
#   sh bench/opencl_lowered.sh [BUILD]            PoCL (or any OpenCL device 0) here:
#       bench/host_bench (make bench): fp32 GEMM against OpenBLAS sgemm,
#       fp16 softmax and rmsnorm against memcpy of the same bytes; then
#       `tilec run --bench` of fp32 GEMM, fp16 softmax and flash attention
#       (plain and causal) before and after, with after/before per kernel
#       (HOST_BENCH=0 skips the host_bench part).
#   GPU=1 sh bench/opencl_lowered.sh [BUILD]      an OpenCL GPU (after bench/opencl_nvidia.sh
#       set up the ICD loader): tilec run --bench of fp32 GEMM 4096^3,
#       fp16 softmax and rmsnorm 8192x1024 and flash attention (b4 h16
#       s1024 d64, 32 x 32 blocks, plain and causal) before and after, then
#       bench/opencl_ref.py's references (cuBLAS, torch.softmax) on the
#       "after" numbers.
# SIZES (default "512 1024") are the PoCL GEMM sizes; kernels compile cold.
O=${1:-build}
export TILEC_CACHE=0 TILEC_BACKEND=opencl
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ)"
lscpu 2>/dev/null | grep -E '^(Model name|CPU\(s\))' | sed 's/  */ /g'
"$O/tilec" devices 2>/dev/null | grep -A1 '^opencl' | sed -n 2p
echo "load before: $(uptime)"
# W... : each workload before and after, its line, and after/before of the
# medians; with $out, the "after" lines go to $out/bench.txt for opencl_ref.py
before_after() {
    for w in "$@"; do
        ms=""
        for mode in 0 1; do
            # shellcheck disable=SC2086
            r=$(TILEC_OPENCL_LOWER=$mode "$O/tilec" run $w --bench 2>&1 | grep '^bench:')
            ms="$ms $(echo "$r" | sed -n 's/.*median_ms=\([0-9.e+-]*\).*/\1/p')"
            echo "lower=$mode $w | ${r:-failed}"
            [ $mode = 1 ] && [ -n "${out:-}" ] && printf '%s | %s\n' "$w" "${r:-failed}" >> "$out/bench.txt"
        done
        # shellcheck disable=SC2086
        set -- $ms
        [ $# = 2 ] && awk -v b="$1" -v a="$2" -v w="$w" 'BEGIN { printf "after/before %.3f  %s\n", a / b, w }'
    done
}
if [ "${GPU:-0}" != 1 ]; then
    [ "${HOST_BENCH:-1}" = 0 ] || for mode in 0 1; do
        echo "== TILEC_OPENCL_LOWER=$mode ($([ $mode = 0 ] && echo before || echo after))"
        for n in ${SIZES:-512 1024}; do
            TILEC_OPENCL_LOWER=$mode "$O/bench/host_bench" gemm "$n" || exit 1
        done
        TILEC_OPENCL_LOWER=$mode "$O/bench/host_bench" softmax 4096 1024 || exit 1
        TILEC_OPENCL_LOWER=$mode "$O/bench/host_bench" rmsnorm 4096 1024 || exit 1
    done
    echo "== tilec run --bench (median ms), before (TILEC_OPENCL_LOWER=0) and after"
    before_after "examples/gemm_fp32.py -D M=512 -D N=512 -D K=512" "examples/softmax.py -D M=4096 -D N=1024" \
        "examples/flash_attention.py -D heads=2 -D seq_len=512" \
        "examples/flash_attention.py -D heads=2 -D seq_len=512 -D causal=True"
else
    out=${OUT:-/tmp/tilec-ocl-lowered}
    mkdir -p "$out"
    : > "$out/bench.txt"
    # flash at 32 x 32 blocks: the high-level path's fragments fit NVIDIA's 48 KiB of local memory;
    # rmsnorm at 4 rows per block, as bench/cuda_bench.py (16 rows of 1024 are 128 KiB of fragments)
    before_after "examples/gemm_fp32.py -D M=4096 -D N=4096 -D K=4096" "examples/softmax.py -D M=8192 -D N=1024" \
        "examples/rmsnorm.py -D M=8192 -D N=1024 -D block_M=4" \
        "examples/flash_attention.py -D batch=4 -D heads=16 -D seq_len=1024 -D block_M=32 -D block_N=32" \
        "examples/flash_attention.py -D batch=4 -D heads=16 -D seq_len=1024 -D block_M=32 -D block_N=32 -D causal=True"
    python3 bench/opencl_ref.py "$out" 2>&1
fi
echo "load after: $(uptime)"
