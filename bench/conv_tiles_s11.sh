#!/bin/sh
# bench/conv_tiles_s11.sh — conv2d block shapes on this tree (B), the two shapes of bench/cuda_bench.py,
# one --bench median each (ms); with the cheaper gathers of session 11 (bench/results/conv_session11.md).
# Usage (on the device, from the tree's directory): sh bench/conv_tiles_s11.sh
export TILEC_CACHE_DIR=/tmp/tilec-cache-c11t
make -j16 WERROR= build/tilec build/libtilec-cuda.so > /tmp/c11t_build.log 2>&1 || { tail -5 /tmp/c11t_build.log; exit 1; }
F=examples/conv2d.py
D3="-D N=32 -D H=56 -D W=56 -D C=256 -D F=256 -D KS=3 -D S=1 -D D=1 -D P=1"
D1="-D N=32 -D H=56 -D W=56 -D C=512 -D F=512 -D KS=1 -D S=1 -D D=1 -D P=0"
bench() { timeout 60 build/tilec run $F "$@" --backend cuda --bench 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | tail -1; }
for cfg in "128 128 64 3 256" "128 256 64 3 256" "128 128 32 4 256" "128 256 32 4 256" "128 128 64 4 256" "256 128 64 3 256"; do
    set -- $cfg
    BL="-D block_M=$1 -D block_N=$2 -D block_K=$3 -D num_stages=$4 -D threads=$5"
    # shellcheck disable=SC2086
    echo "$cfg: 3x3 $(bench $D3 $BL) ms  1x1 $(bench $D1 $BL) ms"
done
