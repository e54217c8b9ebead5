set -u
SANITIZE=1 BENCH=0 OUT=$OUT JOBS=16 timeout 420 sh tests/gpu/run_cuda.sh 2>&1 | tail -30
for v in "64 64 128 2" "128 64 256 2" "128 128 256 2" "128 64 256 1" "64 128 128 2"; do set -- $v
  for c in False True; do echo "flash bM=$1 bN=$2 thr=$3 st=$4 causal=$c: $(timeout 60 build/tilec run examples/flash_attention.py -D batch=4 -D heads=16 -D seq_len=8192 -D dim=128 -D causal=$c -D block_M=$1 -D block_N=$2 -D threads=$3 -D num_stages=$4 --backend cuda --bench 2>&1 | tail -1)"; done; done
