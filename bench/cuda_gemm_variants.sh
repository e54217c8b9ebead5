#!/bin/sh
# bench/cuda_gemm_variants.sh — fp16 GEMM 8192^3 on the CUDA backend with a
# few tile/warp/stage variants, each checked first at a ragged small size,
# beside cuBLAS (PyTorch) in the same run.  Usage on the H200, from the
# repository root: sh bench/cuda_gemm_variants.sh
# VARIANTS: block_M:block_N:block_K:stages:threads[:ENV=V[+ENV=V]], comma
# separated; SIZE (default 8192) the cube's edge.
make -j"$(nproc)" WERROR= build/tilec build/libtilec-cuda.so > /tmp/variants-build.log 2>&1 || { tail -20 /tmp/variants-build.log; exit 2; }
n=${SIZE:-8192}
ref=$(cd bench && python3 -c "
import torch
from torch_timing import median_ms
a = torch.rand($n, $n, dtype=torch.float16, device='cuda') * 2 - 1
b = torch.rand($n, $n, dtype=torch.float16, device='cuda') * 2 - 1
print(median_ms(lambda: a @ b))")
echo "cuBLAS (torch.matmul) fp16 ${n}^3: median_ms=$ref"
for v in $(echo "${VARIANTS:-128:128:32:3:128,128:128:64:3:128,128:128:64:4:256,128:256:64:3:256,128:256:64:4:256,256:128:64:3:256,128:256:32:4:256}" | tr , " "); do
    # shellcheck disable=SC2046
    set -- $(echo "$v" | tr : " ")
    args="-D block_M=$1 -D block_N=$2 -D block_K=$3 -D num_stages=$4 -D threads=$5"
    envs=$(echo "${6:-}" | tr + " ")
    # shellcheck disable=SC2086
    chk=$(env $envs build/tilec run examples/gemm.py -D M=300 -D N=264 -D K=200 $args --check --backend cuda 2>&1 | tail -n 1 | cut -c1-4)
    # shellcheck disable=SC2086
    ms=$(env $envs build/tilec run examples/gemm.py -D M=$n -D N=$n -D K=$n $args --bench --backend cuda 2>&1 |
         sed -n 's/^bench: median_ms=\([0-9.]*\).*/\1/p')
    python3 -c "
ms, ref = float('${ms:-nan}'), float('$ref')
f = 2 * $n ** 3
print(f'tiles {\"$1x$2x$3\":11} stages $4 threads $5 {\"${6:-}\":16}: check {\"$chk\"} {f / ms / 1e9:7.1f} TFLOP/s  cuBLAS {f / ref / 1e9:7.1f}  ratio {ref / ms:.3f}')"
done
