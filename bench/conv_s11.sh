#!/bin/sh
# bench/conv_s11.sh — one H200 call for issue 17 item 7, session 11 (helper
# conv: the gathered copies of examples/conv2d.py): builds A (the tree at
# ROOT_OF_A: main) and B (this tree, run from its own directory), checks
# B's conv2d (the example's tilec-test lines, ragged sizes at the bench's
# blocks, stride/dilation; --reference cpu on two of them) and a few other
# examples whose printed integer division changed, runs compute-sanitizer
# memcheck/racecheck/synccheck on a small conv at the bench's blocks, then
# times A and B alternately (2 rounds) at bench/cuda_bench.py's two shapes
# and runs cuda_bench.py's conv2d rows (cuDNN) on B.
# Usage (on the device, from B's directory): sh bench/conv_s11.sh ROOT_OF_A
# CHECKS=0 / SAN=0 / AB=0 / BENCH=0 skip parts.
A_DIR=${1:?usage: conv_s11.sh ROOT_OF_A}
export TILEC_CACHE_DIR=/tmp/tilec-cache-c11
( cd "$A_DIR" && make -j8 WERROR= build/tilec build/libtilec-cuda.so > /tmp/c11_build_a.log 2>&1; rc=$?
  [ $rc = 0 ] || tail -5 /tmp/c11_build_a.log; echo "A build rc=$rc" ) &
make -j8 WERROR= build/tilec build/libtilec-cuda.so > /tmp/c11_build_b.log 2>&1; rc=$?
[ $rc = 0 ] || tail -5 /tmp/c11_build_b.log; echo "B build rc=$rc"
wait
B=build/tilec
A="$A_DIR/build/tilec"
F=examples/conv2d.py
BL="-D block_M=128 -D block_N=128 -D block_K=64 -D num_stages=3 -D threads=256"
D3="-D N=32 -D H=56 -D W=56 -D C=256 -D F=256 -D KS=3 -D S=1 -D D=1 -D P=1"
D1="-D N=32 -D H=56 -D W=56 -D C=512 -D F=512 -D KS=1 -D S=1 -D D=1 -D P=0"
if [ "${CHECKS:-1}" = 1 ]; then
    echo "== checks (B)"
    while IFS='|' read -r args ref; do
        [ -n "$args" ] || continue
        # shellcheck disable=SC2086
        r=$(timeout 150 $B run $F $args --backend cuda --check $ref 2>&1 | tail -1)
        echo "conv2d [$args] $ref: $r"
    done <<EOF
-D N=2|
-D KS=1 -D P=0 -D C=16 -D F=24|
-D S=2 -D H=9 -D W=7 -D dtype=bfloat16|
-D N=3 -D H=13 -D W=11 -D C=128 -D F=200 -D KS=3 -D P=1 $BL|
-D N=3 -D H=13 -D W=11 -D C=128 -D F=200 -D KS=3 -D P=1 $BL|--reference cpu
-D N=2 -D H=15 -D W=15 -D C=192 -D F=136 -D KS=1 -D P=0 $BL|--reference cpu
-D N=2 -D H=17 -D W=19 -D C=64 -D F=96 -D KS=3 -D S=2 -D D=2 -D P=2 $BL|
-D N=2 -D H=12 -D W=10 -D C=64 -D F=64 -D KS=3 -D P=1 -D dtype=bfloat16 $BL|
EOF
    for ex in gemm flash_attention softmax transpose layernorm dynamic_shape cumsum reduce_cols gemm_fp8 atomic_colsum; do
        r=$(timeout 150 $B run examples/$ex.py --backend cuda --check 2>&1 | tail -1)
        echo "$ex: $r"
    done
fi
if [ "${SAN:-1}" = 1 ]; then
    CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    echo "== compute-sanitizer (B, n2 14x14 c64 f128 3x3 and n2 9x9 c128 f72 1x1 at the bench's blocks)"
    for spec in "-D N=2 -D H=14 -D W=14 -D C=64 -D F=128 -D KS=3 -D P=1" "-D N=2 -D H=9 -D W=9 -D C=128 -D F=72 -D KS=1 -D P=0"; do
        for tool in memcheck racecheck synccheck; do
            # shellcheck disable=SC2086
            r=$(TILEC_CACHE=0 timeout 120 $CS --tool $tool --error-exitcode 99 $B run $F $spec $BL --backend cuda --check 2>&1)
            echo "$tool [$spec]: rc=$? $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' | tail -1) $(echo "$r" | grep -E 'PASS|FAIL' | tail -1)"
        done
    done
fi
bench() { # tilec binary, args...: median ms
    t=$1; shift
    timeout 120 $t run "$@" --backend cuda --bench 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | tail -1
}
if [ "${AB:-1}" = 1 ]; then
    echo "== A/B (ms; TFLOP/s: 3x3 118.4 GFLOP, 1x1 52.6 GFLOP)"
    for round in 1 2; do
        for side in A B; do
            t=$B; [ $side = A ] && t=$A
            # shellcheck disable=SC2086
            m3=$(bench $t $F $D3 $BL); m1=$(bench $t $F $D1 $BL)
            echo "round $round $side: 3x3 $m3 ms  1x1 $m1 ms"
        done
    done
fi
if [ "${BENCH:-1}" = 1 ]; then
    echo "== bench/cuda_bench.py conv2d (B)"
    BENCH_ONLY=conv2d timeout 200 python3 bench/cuda_bench.py 2>&1 | tail -4
fi
