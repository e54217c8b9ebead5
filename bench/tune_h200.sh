#!/bin/sh
# tune_h200.sh -- the tuning figures on a CUDA device, in one run:
# `tilec tune` of fp16 GEMM 4096^3 and 8192^3, flash attention forward at
# the benchmark's size and softmax, over spaces that hold the hand-picked
# config of bench/cuda_bench.py (its row in each table is the comparison;
# "speedup" is over the file's own defaults);
# TileLang's autotuner over the same GEMM space (bench/tilelang_tune.py,
# when tilelang imports); and the cold start of a bundle against a cold
# NVRTC compile.  Usage, from the repository root after `make`:
#     OUT=DIR sh bench/tune_h200.sh [PART...]   (writes DIR/tune.txt and the JSON reports)
# PART: gemm4096 gemm8192 tilelang flash softmax cold (default: all; cold
# bundles what the database holds, so it follows a gemm part).
set -u
PARTS=${*:-gemm4096 gemm8192 tilelang flash softmax cold}
want() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }
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
  want gemm$n || continue
  say "# the hand-picked config of bench/cuda_bench.py, same run:"
  run $T run examples/gemm.py -D M=$n -D N=$n -D K=$n -D block_M=128 -D block_N=256 -D block_K=64 \
      -D num_stages=4 -D threads=256 --backend cuda --bench
  run $T tune examples/gemm.py -D M=$n -D N=$n -D K=$n \
      --backend cuda --reference cuda --db "$DB" --budget 150 --json "$OUT/tune_gemm$n.json" $GSPACE 2>/dev/null
done
want tilelang && say "# the same space for TileLang's autotuner (GEMM 4096^3)" &&
python3 bench/tilelang_tune.py examples/gemm.py matmul -D M=4096 -D N=4096 -D K=4096 \
    --space block_M=64,128 --space block_N=128,256 --space block_K=32,64 \
    --space num_stages=2,3,4 --space threads=128,256 2>&1 | grep -v "^\s*$" | tail -3 | tee -a "$R"
want flash && say "# the hand-picked config of bench/cuda_bench.py, same run:" &&
run $T run examples/flash_attention.py -D batch=4 -D heads=16 -D seq_len=8192 -D dim=128 \
    -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2 --backend cuda --bench
want flash && run $T tune examples/flash_attention.py -D batch=4 -D heads=16 -D seq_len=8192 -D dim=128 \
    --space block_M=64,128 --space block_N=64,128 --space num_stages=1,2 --space threads=128,256 \
    --backend cuda --reference cuda --db "$DB" --budget 120 --json "$OUT/tune_flash.json" 2>/dev/null
want softmax && run $T tune examples/softmax.py -D M=32768 -D N=4096 \
    --space block_M=1,2,4,8,16 --backend cuda --reference cuda --db "$DB" --budget 60 \
    --json "$OUT/tune_softmax.json" 2>/dev/null

want cold || exit 0
say "# cold start: bundle load vs NVRTC compile (GEMM 4096^3, an empty kernel cache each time; TILEC_LOG=compile lines)"
run $T bundle examples/gemm.py -D M=4096 -D N=4096 -D K=4096 --backend cuda --db "$DB" -o "$OUT/g.tcb"
for i in 1 2 3; do
  for how in "--db $DB" "--bundle $OUT/g.tcb"; do
    c=$(mktemp -d)
    a=$(date +%s%N)
    TILEC_CACHE_DIR=$c TILEC_LOG=compile $T run examples/gemm.py -D M=4096 -D N=4096 -D K=4096 --backend cuda $how 2>"$c.log" >/dev/null
    b=$(date +%s%N)
    say "cold run $how: $(( (b - a) / 1000000 )) ms in all; $(grep -E "cache (hit|miss)|nvrtc|NVRTC|compiled in|no compiler run" "$c.log" | sed 's/^tilec.compile.: //' | tr '\n' ';')"
    rm -rf "$c" "$c.log"
  done
done
