# bench/attn_lib.sh — what the attention device scripts (bench/attn_s*.sh)
# share, sourced by each after it sets ATTN_CACHE (its kernel cache) and,
# where it needs more than tilec and the CUDA plugin, ATTN_TARGETS: the log
# ($OUT/log.txt), the build, flash attention's file and sizes, one --bench
# timing and cuDNN's timing in the same call.
O=${OUT:-/tmp}
L=$O/log.txt
log() { echo "$*" >> "$L"; }
export TILEC_CACHE_DIR=$ATTN_CACHE
t0=$(date +%s)
# shellcheck disable=SC2086
make -j16 WERROR= ${ATTN_TARGETS:-build/tilec build/libtilec-cuda.so} > /tmp/attn_build.log 2>&1; rc=$?
[ $rc = 0 ] || tail -5 /tmp/attn_build.log >> "$L"
log "build rc=$rc $(( $(date +%s) - t0 ))s; $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)"
B=build/tilec
F=examples/flash_attention.py
BIG="-D batch=4 -D heads=16 -D seq_len=8192 -D dim=128"
RAG="-D batch=1 -D heads=3 -D seq_len=1000 -D dim=128"
SAN="-D batch=1 -D heads=1 -D seq_len=384 -D dim=128"
elapsed() { log "t=$(( $(date +%s) - t0 ))s"; }
# median_ms TIMEOUT ENV ARGS...: tilec run ARGS --bench under ENV, the median in ms
median_ms() {
  tmo=$1; e=$2; shift 2
  # shellcheck disable=SC2086
  env $e timeout "$tmo" $B run "$@" --backend cuda --bench 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | tail -1
}
# cudnn CAUSAL...: SDPA's cuDNN backend at BIG's shape, timed as bench/torch_timing.py times (>= 1 s), into the log
cudnn() {
  CAUSALS="$*" PYTHONPATH=bench timeout 60 python3 - >> "$L" 2>&1 <<'PY'
import os
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch_timing import median_ms
q = torch.randn(4, 16, 8192, 128, dtype=torch.float16, device="cuda")
k = torch.randn_like(q); v = torch.randn_like(q)
for causal in (c == "True" for c in os.environ["CAUSALS"].split()):
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        ms = median_ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
    print(f"cudnn causal={causal} {ms:.4f}")
PY
}
