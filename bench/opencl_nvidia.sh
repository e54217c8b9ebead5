#!/bin/sh
# bench/opencl_nvidia.sh — the OpenCL backend on an NVIDIA GPU (the H200
# machine): every example checked against the interpreter, then a few
# benchmarks (device-side time from OpenCL profiling events).
#
# That machine has the NVIDIA driver (libnvidia-opencl.so.1) but no ICD
# loader and no network, so the loader travels as Debian's .deb, unpacked
# under /tmp (never over /), with an .icd file pointing at the NVIDIA
# library in a folder named by OCL_ICD_VENDORS.
#
# Here, once (build/ is ignored by git, so it can be carried):
#   mkdir -p build/ocl-icd && (cd build/ocl-icd && apt-get download ocl-icd-libopencl1)
# There, from the repository root (carry "build/ocl-icd"):
#   sh bench/opencl_nvidia.sh "$OUT"
# It builds tilec there (make all; Criterion is not needed), writes
# build.log, devices.txt, check.txt, bench.txt into the output folder and
# prints a summary (BENCH=0 skips the benchmarks; ONLY=lowered runs only
# bench/opencl_lowered.sh's before/after after the build, about a minute).  Exit status: 0 all checks passed, 1 some failed,
# 2 build failure, 3 no NVIDIA OpenCL platform.
set -u
out=${1:-${OUT:-/tmp/tilec-ocl-out}}
# the lowered path (register fragments) unless the caller says otherwise;
# bench/opencl_lowered.sh at the end compares both in one run
TILEC_OPENCL_LOWER=${TILEC_OPENCL_LOWER:-1}
export TILEC_OPENCL_LOWER
mkdir -p "$out"

# ---- the ICD loader ----------------------------------------------------------
deb=$(ls build/ocl-icd/ocl-icd-libopencl1_*.deb 2>/dev/null | head -n 1)
if [ -n "$deb" ]; then
    rm -rf /tmp/ocl-icd && mkdir -p /tmp/ocl-icd && dpkg -x "$deb" /tmp/ocl-icd
    LD_LIBRARY_PATH=/tmp/ocl-icd/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
elif ! ldconfig -p | grep -q 'libOpenCL.so.1'; then
    echo "no ICD loader: carry build/ocl-icd (see the head of this script)"
    exit 3
fi

# ---- the NVIDIA OpenCL driver ---------------------------------------------------
# TILEC_OCL_DRIVER names another vendor library (testing the script with PoCL)
nv=${TILEC_OCL_DRIVER:-$(ldconfig -p | awk '/libnvidia-opencl\.so\.1/ { print $NF; exit }')}
if [ -z "$nv" ]; then
    for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib; do
        [ -e "$d/libnvidia-opencl.so.1" ] && { nv=$d/libnvidia-opencl.so.1; break; }
    done
fi
[ -n "$nv" ] || nv=$(find / -xdev -name 'libnvidia-opencl.so.1' 2>/dev/null | head -n 1)
if [ -z "$nv" ]; then
    echo "libnvidia-opencl.so.1 not found: the driver's OpenCL part is not in this image"
    ls -l /usr/lib/x86_64-linux-gnu/libnvidia* /usr/local/nvidia/lib64 2>/dev/null | head -n 40
    exit 3
fi
mkdir -p /tmp/ocl-icd/vendors
echo "$nv" > /tmp/ocl-icd/vendors/nvidia.icd
OCL_ICD_VENDORS=/tmp/ocl-icd/vendors
export OCL_ICD_VENDORS
echo "NVIDIA OpenCL: $nv"

# ---- build --------------------------------------------------------------------------
if ! make WERROR= -j"$(nproc)" all > "$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    exit 2
fi
build/tilec devices > "$out/devices.txt" 2>&1
cat "$out/devices.txt"
grep -q '^ *opencl:0' "$out/devices.txt" || { echo "no OpenCL device listed"; exit 3; }

if [ "${ONLY:-}" = lowered ]; then
    GPU=1 OUT="$out/lowered" sh bench/opencl_lowered.sh build 2>&1 | tee "$out/lowered.txt"
    exit 0
fi

# ---- every example, checked -------------------------------------------------------
TILEC_CACHE_DIR=/tmp/tilec-ocl-cache
export TILEC_CACHE_DIR
. bench/check_examples.sh
check_examples opencl "$out/check.txt"

# ---- the conformance suite ----------------------------------------------------------
build/tilec conform --backend opencl --json "$out/conform.json" --junit "$out/conform.xml" \
    --no-cert -j 8 > "$out/conform.txt" 2>&1
echo "conform: exit $?"
tail -n 25 "$out/conform.txt"

# ---- benchmarks (no --check: the interpreter is slow at these sizes) ----------------
# BENCH=0 skips them.
if [ "${BENCH:-1}" = 0 ]; then
    [ $fail -eq 0 ] || exit 1
    exit 0
fi
: > "$out/bench.txt"
bench() {
    r=$(build/tilec run "$@" --bench --backend opencl 2>&1 | grep '^bench:')
    printf '%s | %s\n' "$*" "${r:-failed}" | tee -a "$out/bench.txt"
}
bench examples/gemm.py -D M=4096 -D N=4096 -D K=4096
bench examples/gemm.py -D M=4096 -D N=4096 -D K=4096 -D block_M=64 -D block_N=128 -D block_K=32
bench examples/gemm_fp32.py -D M=4096 -D N=4096 -D K=4096
bench examples/softmax.py -D M=8192 -D N=1024
bench examples/layernorm.py -D M=8192 -D N=1024
# block sizes that fit the 48 KiB of local memory NVIDIA OpenCL offers with
# every fragment in local memory (the kit's high-level path), then the
# example's own tiles (register fragments of the lowered path)
bench examples/flash_attention.py -D batch=4 -D heads=16 -D seq_len=1024 -D dim=64 -D block_M=32 -D block_N=32
bench examples/flash_attention.py -D batch=4 -D heads=16 -D seq_len=1024 -D dim=64
bench examples/elementwise_add.py -D M=8192 -D N=8192
# the references (PyTorch: cuBLAS, torch.softmax) in the same run
python3 bench/opencl_ref.py "$out" 2>&1 | tee "$out/ref.txt"
# before (TILEC_OPENCL_LOWER=0) and after printing lowered IR, same run
GPU=1 OUT="$out/lowered" sh bench/opencl_lowered.sh build 2>&1 | tee "$out/lowered.txt"
[ $fail -eq 0 ] || exit 1
exit 0
