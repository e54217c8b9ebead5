#!/bin/sh
# bench/cuda_flash_variants.sh — flash attention fwd fp16 (batch 4, heads 16,
# seq 8192, dim 128) on the CUDA backend under a few tile/stage/thread
# variants and printer switches (environment variables such as
# TILEC_CUDA_PIPE_LATE), each checked first against the interpreter at a
# ragged small size and against the CPU backend at a medium one, beside
# cuDNN (scaled_dot_product_attention) in the same run.  Usage on the H200,
# from the repository root: sh bench/cuda_flash_variants.sh
# VARIANTS: causal:block_M:block_N:stages:threads:ENV=V[+ENV=V], comma separated
# (causal 0/1; "-" for no environment).
make -j"$(nproc)" WERROR= build/tilec build/libtilec-cuda.so build/libtilec-cpu.so > /tmp/fv-build.log 2>&1 ||
    { tail -20 /tmp/fv-build.log; exit 2; }
b=4 h=16 s=8192 d=128
refs=$(cd bench && python3 -c "
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch_timing import median_ms
q = torch.randn($b, $h, $s, $d, dtype=torch.float16, device='cuda')
k, v = torch.randn_like(q), torch.randn_like(q)
out = []
for causal in (False, True):
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out.append(median_ms(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)))
print(*out)")
echo "cuDNN (SDPA) b$b h$h s$s d$d: median_ms plain/causal = $refs"
for v in $(echo "${VARIANTS:-0:128:128:2:256:-,0:128:128:2:256:TILEC_CUDA_PIPE_LATE=1}" | tr , " "); do
    # shellcheck disable=SC2046
    set -- $(echo "$v" | tr : " ")
    c=$([ "$1" = 1 ] && echo True || echo False)
    envs=$(echo "$6" | tr + " " | sed 's/^-$//')
    args="-D causal=$c -D block_M=$2 -D block_N=$3 -D num_stages=$4 -D threads=$5"
    # shellcheck disable=SC2086
    chk1=$(env $envs build/tilec run examples/flash_attention.py -D batch=1 -D heads=1 -D seq_len=200 -D dim=64 $args --check --backend cuda 2>&1 | tail -n 1 | cut -c1-4)
    # shellcheck disable=SC2086
    chk2=$(env $envs build/tilec run examples/flash_attention.py -D batch=1 -D heads=4 -D seq_len=1000 -D dim=128 $args --check --reference cpu --backend cuda 2>&1 | tail -n 1 | cut -c1-4)
    # shellcheck disable=SC2086
    ms=$(env $envs build/tilec run examples/flash_attention.py -D batch=$b -D heads=$h -D seq_len=$s -D dim=$d $args --bench --backend cuda 2>&1 |
         sed -n 's/^bench: median_ms=\([0-9.]*\).*/\1/p')
    python3 -c "
ms, refs = float('${ms:-nan}'), [float(x) for x in '$refs'.split()]
causal = $1
ref = refs[causal]
f = 4.0 * $b * $h * $s * $s * $d * (0.5 if causal else 1.0)
print(f'causal $1 tiles {\"$2x$3\":8} stages $4 threads $5 env {\"$6\":28}: check {\"$chk1\"}/{\"$chk2\"} {f / ms / 1e9:7.1f} TFLOP/s  cuDNN {f / ref / 1e9:7.1f}  ratio {ref / ms:.3f}')"
done
