#!/bin/sh
# bench/cuda_profile.sh — where the benchmark kernels' time goes on the H200:
# Nsight Compute on one launch of each named kernel at bench/cuda_bench.py's
# size and parameters, clocks left alone.  Writes OUT/ncu_NAME.txt (the whole
# report) and OUT/NAME.cu (the generated source), and prints the headline
# metrics of each.  The build must exist (make build/tilec build/libtilec-cuda.so).
# Usage (on the device machine, repository root):
#   sh bench/cuda_profile.sh OUT [gemm8192|gemm4096|flash|flash_causal|conv3x3]...
# (no names: gemm8192 flash flash_causal)
out=${1:-build/profile}
shift 2>/dev/null
mkdir -p "$out"
[ $# -gt 0 ] || set -- gemm8192 flash flash_causal
G="-D block_K=64 -D swizzle=8"
FL="-D batch=4 -D heads=16 -D seq_len=8192 -D dim=128 -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2"
for name in "$@"; do
    case $name in
    gemm8192) f=examples/gemm.py
        a="-D M=8192 -D N=8192 -D K=8192 -D block_M=192 -D block_N=256 $G -D num_stages=3 -D threads=384" ;;
    gemm4096) f=examples/gemm.py
        a="-D M=4096 -D N=4096 -D K=4096 -D block_M=128 -D block_N=256 $G -D num_stages=4 -D threads=256" ;;
    flash) f=examples/flash_attention.py; a="$FL -D causal=0" ;;
    flash_causal) f=examples/flash_attention.py; a="$FL -D causal=1" ;;
    conv3x3) f=examples/conv2d.py
        a="-D N=32 -D H=56 -D W=56 -D C=256 -D F=256 -D KS=3 -D S=1 -D D=1 -D P=1 -D block_M=128 -D block_N=128 -D block_K=64 -D num_stages=3 -D threads=256" ;;
    *) echo "cuda_profile.sh: unknown kernel '$name'"; exit 2 ;;
    esac
    # shellcheck disable=SC2086
    build/tilec compile $f $a --backend cuda --arch sm_90a --emit source -o "$out/$name.cu"
    # shellcheck disable=SC2086
    TILEC_CACHE=0 ncu --clock-control none -c 1 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
        --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
        build/tilec run $f $a --backend cuda > "$out/ncu_$name.txt" 2>&1
    echo "== $name (ncu exit $?)"
    grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Registers Per Thread|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|No Eligible|L2 Hit|Stall" \
        "$out/ncu_$name.txt" | head -16
done
