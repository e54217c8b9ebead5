#!/bin/sh
# bench/vulkan_nvidia.sh — the Vulkan backend on an NVIDIA GPU (the H200
# machine): the devices, every example checked against the interpreter,
# the conformance suite, then benchmarks beside the CUDA backend in the same
# run (device-side times from Vulkan timestamp queries and CUDA events,
# reported as ratios vulkan/cuda of the median times).
#
# That machine has NVIDIA's driver (its Vulkan ICD is libGLX_nvidia.so.0)
# but neither the Vulkan loader nor glslc, and no network, so both travel as
# Debian's .debs, unpacked under /tmp (never over /):
# Here, once (build/ is ignored by git, so it can be carried):
#   mkdir -p build/vk-debs && (cd build/vk-debs && apt-get download libvulkan1 glslc libshaderc1 \
#       libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2)
# (glvnd's libraries are what NVIDIA's ICD, libGLX_nvidia, links against.)
# There, from the repository root (carry "build/vk-debs"):
#   sh bench/vulkan_nvidia.sh "$OUT"
# It builds tilec (make all), writes build.log, devices.txt, check.txt,
# conform.txt/.json and bench.txt into the output folder and prints a
# summary (BENCH=0 skips the benchmarks, CONFORM=0 the conformance suite,
# CHECK=0 the examples' checks).  Exit status: 0 all checks passed,
# 1 some failed, 2 build failure, 3 no Vulkan device.
set -u
out=${1:-${OUT:-/tmp/tilec-vk-out}}
mkdir -p "$out"

# ---- the loader and glslc ---------------------------------------------------------
if ls build/vk-debs/*.deb > /dev/null 2>&1; then
    rm -rf /tmp/vk-debs && mkdir -p /tmp/vk-debs
    for d in build/vk-debs/*.deb; do dpkg -x "$d" /tmp/vk-debs; done
    LD_LIBRARY_PATH=/tmp/vk-debs/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
    [ -x /tmp/vk-debs/usr/bin/glslc ] && TILEC_GLSLC=/tmp/vk-debs/usr/bin/glslc && export TILEC_GLSLC
fi
if ! ldconfig -p | grep -q 'libvulkan.so.1' && [ ! -e /tmp/vk-debs/usr/lib/x86_64-linux-gnu/libvulkan.so.1 ]; then
    echo "no Vulkan loader: carry build/vk-debs (see the head of this script)"
    exit 3
fi
command -v "${TILEC_GLSLC:-glslc}" > /dev/null 2>&1 || { echo "no glslc: carry build/vk-debs"; exit 3; }

# ---- NVIDIA's Vulkan ICD --------------------------------------------------------------
# TILEC_VK_ICD names another ICD manifest (testing the script with lavapipe)
icd=${TILEC_VK_ICD:-}
# The container runtime's copy under /usr/local/nvidia is the one that matches
# the driver; /usr/share's may name a library the image does not have
# (vkCreateInstance then says VK_ERROR_INCOMPATIBLE_DRIVER).
[ -n "$icd" ] || icd=${VK_DRIVER_FILES:-}
[ -n "$icd" ] || for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
         /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json \
         /usr/share/vulkan/icd.d/nvidia_icd.x86_64.json; do
    [ -e "$f" ] && { icd=$f; break; }
done
if [ -z "$icd" ]; then
    lib=$(ldconfig -p | awk '/libGLX_nvidia\.so\.0/ { print $NF; exit }')
    [ -n "$lib" ] || lib=$(find / -xdev -name 'libGLX_nvidia.so.0' 2>/dev/null | head -n 1)
    if [ -z "$lib" ]; then
        echo "libGLX_nvidia.so.0 (NVIDIA's Vulkan ICD) not found in this image"
        exit 3
    fi
    icd=/tmp/vk-debs/nvidia_icd.json
    mkdir -p /tmp/vk-debs
    printf '{ "file_format_version": "1.0.0", "ICD": { "library_path": "%s", "api_version": "1.3.0" } }\n' \
        "$lib" > "$icd"
fi
VK_ICD_FILENAMES=$icd VK_DRIVER_FILES=$icd
export VK_ICD_FILENAMES VK_DRIVER_FILES
# NVIDIA's ICD is libGLX_nvidia, which loads through glvnd's EGL vendor list
egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && [ -e "$egl" ] && __EGL_VENDOR_LIBRARY_FILENAMES=$egl &&
    export __EGL_VENDOR_LIBRARY_FILENAMES
echo "NVIDIA Vulkan ICD: $icd"

# ---- build ------------------------------------------------------------------------------
if ! make WERROR= -j"$(nproc)" all > "$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    exit 2
fi
build/tilec devices > "$out/devices.txt" 2>&1
sed -n '/^vulkan/,/^[a-z]/p' "$out/devices.txt"
grep -q '^ *vulkan:0' "$out/devices.txt" || { echo "no Vulkan device listed"; exit 3; }
src=$(build/tilec compile examples/gemm.py --backend vulkan --emit source 2>&1)
echo "cooperative-matrix GEMM: $(echo "$src" | grep -c coopMatMulAddNV) MMA lines (0: tiled FMA), accumulators held" \
    "across the K loop: $(echo "$src" | grep -c 'across the loop') (1: yes)"

# ---- every example, checked -----------------------------------------------------------
TILEC_CACHE_DIR=/tmp/tilec-vk-cache
export TILEC_CACHE_DIR
. bench/check_examples.sh
if [ "${CHECK:-1}" != 0 ]; then
    check_examples vulkan "$out/check.txt"
else
    pass=0 fail=0
fi

# ---- the conformance suite --------------------------------------------------------------
if [ "${CONFORM:-1}" != 0 ]; then
    build/tilec conform --backend vulkan --json "$out/conform.json" --junit "$out/conform.xml" \
        -j 8 > "$out/conform.txt" 2>&1
    echo "conform: exit $?"
    tail -n 25 "$out/conform.txt"
fi

# ---- benchmarks beside cuda, same run (no --check: the interpreter is slow here) ---------
if [ "${BENCH:-1}" = 0 ]; then
    [ $fail -eq 0 ] || exit 1
    exit 0
fi
: > "$out/bench.txt"
median() { build/tilec run "$@" --bench 2>&1 | sed -n 's/^bench: median_ms=\([0-9.]*\).*/\1/p'; }
bench() {
    v=$(median "$@" --backend vulkan)
    c=$(median "$@" --backend cuda)
    r=$(awk -v v="${v:-0}" -v c="${c:-0}" 'BEGIN { if (v > 0 && c > 0) printf "%.3f", c / v; else print "n/a" }')
    printf '%s | vulkan %s ms | cuda %s ms | vulkan speed / cuda speed %s\n' "$*" "${v:-failed}" "${c:-failed}" "$r" |
        tee -a "$out/bench.txt"
}
bench examples/gemm.py -D M=4096 -D N=4096 -D K=4096
bench examples/gemm.py -D M=8192 -D N=8192 -D K=8192
# a larger tile that still fits 48 KiB with C in shared memory (44 KiB)
bench examples/gemm.py -D M=8192 -D N=8192 -D K=8192 -D block_M=128 -D block_N=64 -D threads=256
bench examples/gemm_fp32.py -D M=4096 -D N=4096 -D K=4096
bench examples/softmax.py -D M=8192 -D N=1024
bench examples/elementwise_add.py -D M=8192 -D N=8192
[ $fail -eq 0 ] || exit 1
exit 0
