#!/bin/sh
# bench/run_cpu.sh — CPU benchmarks beside OpenBLAS, one run, one machine.
# Prints the machine, the commit and the results; `make bench` calls it.
O=${1:-build}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ)"
echo "openblas threads: ${OPENBLAS_NUM_THREADS:-default}"
for n in 512 1024 2048; do
    TILEC_BACKEND=cpu "$O/bench/cpu_gemm" "$n" || exit 1
done
