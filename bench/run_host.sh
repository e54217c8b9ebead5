#!/bin/sh
# bench/run_host.sh — host benchmarks beside their references, one run, one
# machine: float32 GEMM against OpenBLAS and float16 row softmax against
# memcpy, on the CPU backend and on OpenCL (PoCL) when it is there.
# Prints the machine and the commit first; `make bench` calls it.
# SIZES (default "1024 2048") are the GEMM sizes; 4096 takes minutes on 2 cores.
O=${1:-build}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"
echo "date:    $(date -u +%Y-%m-%dT%H:%MZ)"
backends=cpu
"$O/tilec" devices 2>/dev/null | grep -q '^ *opencl:0' && backends="cpu opencl"
for b in $backends; do
    for n in ${SIZES:-1024 2048}; do
        TILEC_BACKEND=$b "$O/bench/host_bench" gemm "$n" || exit 1
    done
    TILEC_BACKEND=$b "$O/bench/host_bench" softmax 8192 1024 || exit 1
done
