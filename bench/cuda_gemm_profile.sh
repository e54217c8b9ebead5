#!/bin/sh
# bench/cuda_gemm_profile.sh — where the fp16 GEMM's time goes on the H200:
# Nsight Compute on one launch of examples/gemm.py at 8192^3 with the
# benchmark's tiles (as bench/cuda_bench.py runs it), clocks left alone.
# Writes OUT/ncu.txt and the generated source OUT/gemm.cu.
# Usage (on the device machine, repository root): sh bench/cuda_gemm_profile.sh OUT
out=${1:-build/profile}
mkdir -p "$out"
make -j"$(nproc)" WERROR= build/tilec build/libtilec-cuda.so > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 2; }
args="-D M=8192 -D N=8192 -D K=8192 -D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256"
# shellcheck disable=SC2086
build/tilec compile examples/gemm.py $args --backend cuda --arch sm_90a --emit source -o "$out/gemm.cu"
# shellcheck disable=SC2086
TILEC_CACHE=0 ncu --clock-control none -c 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
    build/tilec run examples/gemm.py $args --backend cuda > "$out/ncu.txt" 2>&1
echo "ncu exit $?"
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Shared Memory Configuration Size|Block Limit|Stall|Issue Slots Busy|Executed Ipc|No Eligible|One or More Eligible|L1/TEX Hit|L2 Hit|DRAM Throughput|Bank" "$out/ncu.txt" | head -60
