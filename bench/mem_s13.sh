#!/bin/bash
# mem_s13.sh -- session 13's hand variants of the row kernels (rmsnorm,
# softmax, layernorm fp16 32768x4096, as bench/cuda_bench.py runs them) on
# the H200, from the repository root after
# `make -j16 build/tilec build/libtilec-cuda.so`:
#   bench/mem_s13.sh [VARIANTS]
# prints each kernel's source (block_M=4, 128 threads; block_M=2, 64 threads),
# writes the variants of bench/mem_hand_variants.py under build/mem_s13/, and
# times each with TILEC_CUDA_SOURCE (`tilec run --bench`, alternating, ROUNDS
# rounds), between two copy-bandwidth measurements made as cuda_bench.py makes
# its own (y.copy_(x), 1 GiB) plus one of the rmsnorm's own bytes (256 MiB
# copied: 512 MiB moved, as rmsnorm's 2*M*N*2 counts).  VARIANTS: a list of
# KERNEL:BM:V (V = base or one of mem_hand_variants.py's); default the set
# below.  Each `tilec run` at this size took 4-8 s on the H200 (session 13):
# plan a call's length on that.
# Results: bench/results/gpumem_session13.md.
set -u
ROUNDS=${ROUNDS:-2}
T=build/tilec
O=build/mem_s13
mkdir -p $O
D="-D M=32768 -D N=4096"
VARIANTS=${1:-"rmsnorm:4:base rmsnorm:4:ps3 rmsnorm:4:ps2 rmsnorm:4:wg softmax:4:base softmax:4:ps3 layernorm:4:base layernorm:4:ps3"}
extra() { [ $1 = rmsnorm ] && echo "-D dtype=float16"; }
for k in rmsnorm softmax layernorm; do
  for cfg in "4 128" "2 64"; do set -- $cfg
    $T compile examples/$k.py $D -D block_M=$1 -D threads=$2 $(extra $k) --backend cuda --arch sm_90a --emit source -o $O/${k}_$1.cu
    python3 bench/mem_hand_variants.py $O/${k}_$1.cu $O $((32768 / $1))
  done
done
copybw() { python3 - <<'PY'
import sys; sys.path.insert(0, "bench")
import torch
from torch_timing import median_ms
for n in (1 << 30, 1 << 28):
    x = torch.randint(0, 256, (n,), dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
    ms = median_ms(lambda: y.copy_(x))
    print(f"copy {n >> 20} MiB: {2 * n / (ms * 1e-3) / 1e9:.0f} GB/s ({ms:.4f} ms)", flush=True)
    del x, y
PY
}
one() {
  local k=${1%%:*} rest=${1#*:}; local bm=${rest%%:*} v=${rest#*:}; local t=$((bm * 32)) src=""
  [ $v != base ] && src=$O/${k}_${bm}_$v.cu
  echo "$k block_M=$bm $v $(TILEC_CUDA_SOURCE=$src $T run examples/$k.py $D -D block_M=$bm -D threads=$t $(extra $k) \
    --bench --backend cuda 2>&1 | grep -o 'median_ms=[0-9.]*\|rror.*' | head -1)"
}
copybw
for r in $(seq $ROUNDS); do for v in $VARIANTS; do one $v; done; done
copybw
