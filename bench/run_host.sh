#!/bin/sh
# bench/run_host.sh — host benchmarks beside their references, one run, one
# machine: float32 GEMM against OpenBLAS, float16 softmax and rmsnorm
# against memcpy, memcpy bandwidth alone, on the CPU backend (and OpenCL on
# PoCL when it is there and HOST_OPENCL=1).  `make bench` calls it.
#
# Prints the machine (lscpu summary), the commit and the load (uptime)
# before and after.  OpenBLAS's own detection picks an SSE3 kernel on CPUs
# whose model is masked (as in VMs), so OPENBLAS_CORETYPE is set from the
# CPU's flags (SkylakeX with AVX-512, Haswell with AVX2) for this run only,
# and the kernel that ran is printed.  Kernels compile cold (TILEC_CACHE=0).
#
# Runs: THREADS (default "1 N", N = CPUs of the affinity mask); 1 thread is
# pinned with taskset to the last allowed CPU, for both tilec and OpenBLAS
# (less sensitive to other load).  SIZES (default "1024 2048 4096") are the
# GEMM sizes, each at the tiles of TILES (default "default 64x128x64":
# the example's own, then block_M x block_N x block_K).
# OPENBLAS_THREAD_TIMEOUT=4: OpenBLAS's worker threads otherwise spin for
# about 2^28 cycles (~70 ms) after each call, so in the interleaved runs
# they took a core from tilec's next launch (2 threads, 1024^3: tilec at
# half speed in some processes, 22 ms of CPU for 11 ms wall; both builds).
# With the shortest timeout they sleep at once; OpenBLAS's own times did
# not change (5.2-5.8 ms at 1024^3, 2 threads).
O=${1:-build}
RUNS=${TILEC_BENCH_RUNS:-7}
export TILEC_BENCH_RUNS=$RUNS TILEC_CACHE=0
echo "== machine"
lscpu | grep -E '^(Model name|Vendor ID|CPU\(s\)|Thread|Core|Socket|L1d|L2|L3|Hypervisor)' | sed 's/  */ /g'
flags=$(grep -m1 '^flags' /proc/cpuinfo)
case "$flags" in
*avx512f*) core=SkylakeX ;;
*avx2*) core=Haswell ;;
*) core= ;;
esac
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ)"
echo "load before: $(uptime)"
ncpu=$(nproc)
last=$(taskset -pc $$ 2>/dev/null | sed 's/.*: //; s/.*[,-]//')
for t in ${THREADS:-1 $ncpu}; do
    pin=
    [ "$t" = 1 ] && [ -n "$last" ] && pin="taskset -c $last"
    echo "== $t thread(s) ${pin:+(pinned: $pin)}"
    run() { env TILEC_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t OPENBLAS_THREAD_TIMEOUT=4 ${core:+OPENBLAS_CORETYPE=$core} \
        OPENBLAS_VERBOSE=2 $pin "$O/bench/host_bench" "$@"; }
    run memcpy 256 || exit 1
    for n in ${SIZES:-1024 2048 4096}; do
        for tl in ${TILES:-default 64x128x64}; do
            if [ "$tl" = default ]; then run gemm "$n" || exit 1
            else run gemm "$n" $(echo "$tl" | tr x ' ') || exit 1; fi
        done
    done
    run softmax 8192 1024 || exit 1
    run rmsnorm 8192 1024 || exit 1
done
if [ "${HOST_OPENCL:-0}" = 1 ] && "$O/tilec" devices 2>/dev/null | grep -q '^ *opencl:0'; then
    echo "== opencl"
    for n in ${SIZES:-1024 2048}; do
        TILEC_BACKEND=opencl "$O/bench/host_bench" gemm "$n" 64 128 64 || exit 1
    done
    TILEC_BACKEND=opencl "$O/bench/host_bench" softmax 8192 1024 || exit 1
fi
echo "load after: $(uptime)"
