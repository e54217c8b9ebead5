#!/bin/sh
# bench/opencl_lowered.sh — the OpenCL backend before and after it prints
# lowered IR, in one run on one machine, as ratios against a reference
# measured in the same run.
#
# "before" is TILEC_OPENCL_LOWER=0 (the default today: the SIMT kit's
# high-level path, every fragment in local memory, the kit's own barriers),
# "after" TILEC_OPENCL_LOWER=1 (the SDK's lowering passes, then the kit
# prints the lowered module: register fragments, the barrier pass's
# barriers, register-blocked gemm).
#
#   sh bench/opencl_lowered.sh [BUILD]            PoCL (or any OpenCL device 0) here:
#       bench/host_bench (make bench): fp32 GEMM against OpenBLAS sgemm,
#       fp16 softmax and rmsnorm against memcpy of the same bytes.
#   GPU=1 sh bench/opencl_lowered.sh [BUILD]      an OpenCL GPU (after bench/opencl_nvidia.sh
#       set up the ICD loader): tilec run --bench of fp32 GEMM 4096^3 and
#       fp16 softmax 8192x1024 before and after, then bench/opencl_ref.py's
#       references (cuBLAS, torch.softmax) on the "after" numbers.
# SIZES (default "512 1024") are the PoCL GEMM sizes; kernels compile cold.
O=${1:-build}
export TILEC_CACHE=0 TILEC_BACKEND=opencl
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ)"
lscpu 2>/dev/null | grep -E '^(Model name|CPU\(s\))' | sed 's/  */ /g'
"$O/tilec" devices 2>/dev/null | grep -A1 '^opencl' | sed -n 2p
echo "load before: $(uptime)"
if [ "${GPU:-0}" != 1 ]; then
    for mode in 0 1; do
        echo "== TILEC_OPENCL_LOWER=$mode ($([ $mode = 0 ] && echo before || echo after))"
        for n in ${SIZES:-512 1024}; do
            TILEC_OPENCL_LOWER=$mode "$O/bench/host_bench" gemm "$n" || exit 1
        done
        TILEC_OPENCL_LOWER=$mode "$O/bench/host_bench" softmax 4096 1024 || exit 1
        TILEC_OPENCL_LOWER=$mode "$O/bench/host_bench" rmsnorm 4096 1024 || exit 1
    done
else
    out=${OUT:-/tmp/tilec-ocl-lowered}
    mkdir -p "$out"
    : > "$out/bench.txt"
    for mode in 0 1; do
        for w in "examples/gemm_fp32.py -D M=4096 -D N=4096 -D K=4096" "examples/softmax.py -D M=8192 -D N=1024" \
                 "examples/rmsnorm.py -D M=8192 -D N=1024"; do
            # shellcheck disable=SC2086
            r=$(TILEC_OPENCL_LOWER=$mode "$O/tilec" run $w --bench 2>&1 | grep '^bench:')
            echo "lower=$mode $w | ${r:-failed}"
            [ $mode = 1 ] && printf '%s | %s\n' "$w" "${r:-failed}" >> "$out/bench.txt"
        done
    done
    python3 bench/opencl_ref.py "$out" 2>&1
fi
echo "load after: $(uptime)"
