#!/bin/sh
# tune_h200.sh -- the tuning figures on a CUDA device, in one run:
# `tilec tune` of fp16 GEMM 4096^3 and 8192^3, flash attention forward at
# the benchmark's size and softmax, over spaces that hold the hand-picked
# config of bench/cuda_bench.py (its row in each table is the comparison;
# "speedup" is over the file's own defaults);
# TileLang's autotuner over the same GEMM space (bench/tilelang_tune.py,
# when tilelang imports); and the cold start of a bundle against a cold
# NVRTC compile.  Usage, from the repository root after `make`:
#     OUT=DIR sh bench/tune_h200.sh      (writes DIR/tune.txt and the JSON reports)
set -u
T=${TILEC:-build/tilec}
OUT=${OUT:-.}
DB=$OUT/tune.db
R=$OUT/tune.txt
rm -f "$DB"
say() { echo "$@" | tee -a "$R"; }
run() { say "# $*"; "$@" 2>&1 | tee -a "$R"; }
say "# bench/tune_h200.sh $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null)"
say "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"

GSPACE="--space block_M=64,128 --space block_N=128,256 --space block_K=32,64 --space num_stages=2,3,4 --space threads=128,256"
for n in 4096 8192; do
  run $T tune examples/gemm.py -D M=$n -D N=$n -D K=$n \
      --backend cuda --reference cuda --db "$DB" --budget 150 --json "$OUT/tune_gemm$n.json" $GSPACE 2>/dev/null
done
say "# the same space for TileLang's autotuner (GEMM 4096^3)"
python3 bench/tilelang_tune.py examples/gemm.py matmul -D M=4096 -D N=4096 -D K=4096 \
    --space block_M=64,128 --space block_N=128,256 --space block_K=32,64 \
    --space num_stages=2,3,4 --space threads=128,256 2>&1 | grep -v "^\s*$" | tail -3 | tee -a "$R"
run $T tune examples/flash_attention.py -D batch=4 -D heads=16 -D seq_len=8192 -D dim=128 \
    --space block_M=64,128 --space block_N=64,128 --space num_stages=1,2 --space threads=128,256 \
    --backend cuda --reference cuda --db "$DB" --budget 120 --json "$OUT/tune_flash.json" 2>/dev/null
run $T tune examples/softmax.py -D M=32768 -D N=4096 \
    --space block_M=1,2,4,8,16 --backend cuda --reference cuda --db "$DB" --budget 60 \
    --json "$OUT/tune_softmax.json" 2>/dev/null

say "# cold start: bundle load vs NVRTC compile (GEMM 4096^3, an empty kernel cache each time)"
run $T bundle examples/gemm.py -D M=4096 -D N=4096 -D K=4096 --backend cuda --db "$DB" -o "$OUT/g.tcb"
for i in 1 2 3; do
  c=$(mktemp -d)
  a=$(date +%s%N); TILEC_CACHE_DIR=$c $T run examples/gemm.py -D M=4096 -D N=4096 -D K=4096 --backend cuda --db "$DB" >/dev/null 2>&1; b=$(date +%s%N)
  rm -rf "$c"; c=$(mktemp -d)
  TILEC_CACHE_DIR=$c $T run examples/gemm.py -D M=4096 -D N=4096 -D K=4096 --backend cuda --bundle "$OUT/g.tcb" >/dev/null 2>&1; d=$(date +%s%N)
  rm -rf "$c"
  say "cold run, NVRTC compile: $(( (b - a) / 1000000 )) ms   cold run from the bundle: $(( (d - b) / 1000000 )) ms"
done
