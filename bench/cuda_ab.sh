#!/bin/sh
# bench/cuda_ab.sh — issue 9's four bar kernels on the CUDA backend (fp16
# GEMM 8192^3 at 128x256x64 with 4 stages, flash attention fwd b4 h16 s8192
# d128, fp16 softmax and rmsnorm 32768x4096) timed with two builds of tilec
# in one run: A and B alternate per kernel and per round, so a printer or
# lowering change is measured against its base on the same GPU at the same
# time, and the spread between rounds shows the noise.  Usage on the H200:
#   sh bench/cuda_ab.sh TILEC_A TILEC_B [ROUNDS]   (default 2 rounds)
# Prints one line a run, then per kernel the median of each side's medians
# and B's speed relative to A (A's time over B's).
A=${1:?usage: cuda_ab.sh TILEC_A TILEC_B [ROUNDS]}
B=${2:?usage: cuda_ab.sh TILEC_A TILEC_B [ROUNDS]}
rounds=${3:-2}
tmp=$(mktemp)
set -- \
    "gemm|examples/gemm.py -D M=8192 -D N=8192 -D K=8192 -D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256" \
    "flash|examples/flash_attention.py -D batch=4 -D heads=16 -D seq_len=8192 -D dim=128 -D causal=False -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2" \
    "softmax|examples/softmax.py -D M=32768 -D N=4096 -D block_M=4" \
    "rmsnorm|examples/rmsnorm.py -D M=32768 -D N=4096 -D block_M=4 -D dtype=float16"
r=1
while [ "$r" -le "$rounds" ]; do
    for kv in "$@"; do
        name=${kv%%|*}
        args=${kv#*|}
        for side in A B; do
            if [ $side = A ]; then t=$A; else t=$B; fi
            # shellcheck disable=SC2086
            ms=$(timeout 180 "$t" run $args --bench --backend cuda 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | head -n 1)
            echo "$name $side round $r median_ms=${ms:-FAILED}"
            echo "$name $side ${ms:-nan}" >> "$tmp"
        done
    done
    r=$((r + 1))
done
python3 - "$tmp" <<'EOF'
import sys, statistics
runs = {}
for line in open(sys.argv[1]):
    k, side, ms = line.split()
    runs.setdefault(k, {}).setdefault(side, []).append(float(ms))
for k, s in runs.items():
    a, b = statistics.median(s.get('A', [float('nan')])), statistics.median(s.get('B', [float('nan')]))
    print(f"{k:8s} A {a:8.4f} ms  B {b:8.4f} ms  B/A speed {a / b:.3f}  (A {s.get('A')}, B {s.get('B')})")
EOF
rm -f "$tmp"
