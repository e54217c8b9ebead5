#!/bin/sh
# bench/hopper2_s9.sh — one H200 call for issue 17, session 9 (helper
# hopper2: transpose and conv2d): builds A (the tree at ROOT_OF_A: main)
# and B (this tree, run from its own directory), checks B's transpose
# (column-padded shared tile), conv2d and GEMM rings (no zeroing at entry)
# against the interpreter / the CPU backend, runs compute-sanitizer
# memcheck and racecheck on them, times A and B alternately (2 rounds)
# beside torch (copy bandwidth, cuDNN conv2d on channels-last tensors),
# a few conv2d block shapes on B, and one ncu pass over B's 3x3 conv2d.
# Usage (on the device, from B's directory): sh bench/hopper2_s9.sh ROOT_OF_A
# CHECKS=0 / SAN=0 / TIME=0 / NCU=0 skip parts.
A_DIR=${1:?usage: hopper2_s9.sh ROOT_OF_A}
R=${OUT:-/tmp}/r
mkdir -p "$R"
export TILEC_CACHE_DIR=/tmp/tilec-cache-h2
( cd "$A_DIR" && make -j8 WERROR= build/tilec build/libtilec-cuda.so > "$R/build_a.log" 2>&1; echo "A build rc=$?" ) &
make -j8 WERROR= build/tilec build/libtilec-cuda.so > "$R/build_b.log" 2>&1; echo "B build rc=$?"
wait
B=build/tilec
A=$A_DIR/build/tilec
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
CV3="-D N=32 -D H=56 -D W=56 -D C=256 -D F=256 -D KS=3 -D S=1 -D D=1 -D P=1"
CV1="-D N=32 -D H=56 -D W=56 -D C=512 -D F=512 -D KS=1 -D S=1 -D D=1 -D P=0"
CB="-D block_M=128 -D block_N=128 -D block_K=64 -D num_stages=3 -D threads=256"
G="-D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256"
if [ "${CHECKS:-1}" = 1 ]; then
  for spec in "examples/transpose.py" "examples/transpose.py -D M=1 -D N=70 -D dtype=float32" \
              "examples/transpose.py -D M=1000 -D N=777 -D block_M=64 -D block_N=64" \
              "examples/transpose.py -D M=333 -D N=4100 -D block_M=64 -D block_N=64 -D dtype=float32" \
              "examples/conv2d.py" "examples/conv2d.py -D KS=1 -D P=0 -D C=16 -D F=24" \
              "examples/conv2d.py -D S=2 -D H=9 -D W=7 -D dtype=bfloat16" \
              "examples/conv2d.py -D N=2 -D H=14 -D W=14 -D C=64 -D F=128 $CB" \
              "examples/conv2d.py -D N=2 -D H=14 -D W=14 -D C=128 -D F=192 -D KS=1 -D P=0 $CB" \
              "examples/gemm.py" "examples/gemm.py -D M=1000 -D N=1030 -D K=256 $G -D swizzle=3" \
              "examples/gemm_fp8.py" "examples/flash_attention.py" "examples/flash_attention.py -D causal=True" \
              "examples/dynamic_shape.py -D m=1000" "tests/lang/hints.py"; do
    r=$(timeout 120 $B run $spec --backend cuda --check 2>&1 | tail -1)
    echo "check $spec :: $r"
  done > "$R/checks.txt" 2>&1
  for spec in "examples/transpose.py -D M=4100 -D N=3000 -D block_M=64 -D block_N=64" \
              "examples/conv2d.py -D N=4 -D H=30 -D W=30 -D C=256 -D F=256 $CB" \
              "examples/conv2d.py -D N=4 -D H=28 -D W=28 -D C=512 -D F=512 -D KS=1 -D P=0 $CB"; do
    r=$(timeout 120 $B run $spec --backend cuda --check --reference cpu 2>&1 | tail -1)
    echo "check-cpu $spec :: $r"
  done >> "$R/checks.txt" 2>&1
  cat "$R/checks.txt"
fi
if [ "${SAN:-1}" = 1 ] && command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    for spec in "examples/transpose.py -D M=1000 -D N=777 -D block_M=64 -D block_N=64" \
                "examples/conv2d.py -D N=2 -D H=14 -D W=14 -D C=64 -D F=128 $CB" \
                "examples/gemm.py -D M=1000 -D N=1030 -D K=256 $G -D swizzle=3"; do
      r=$(TILEC_CACHE=0 timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 $B run $spec --backend cuda 2>&1)
      echo "$tool rc=$? $spec :: $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | tail -1)"
    done
  done > "$R/san.txt" 2>&1
  cat "$R/san.txt"
fi
bench() { # tilec binary, args...: median ms
  t=$1; shift
  timeout 120 $t run "$@" --backend cuda --bench 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | tail -1
}
if [ "${TIME:-1}" = 1 ]; then
  python3 - > "$R/refs.txt" 2>&1 <<'EOF'
import torch, sys
sys.path.insert(0, "bench")
from torch_timing import median_ms
x = torch.randn(32768, 4096, dtype=torch.float16, device="cuda"); y = torch.empty_like(x)
ms = median_ms(lambda: y.copy_(x)); print(f"copy {2 * x.numel() * 2 / (ms * 1e-3) / 1e9:.0f} GB/s")
t = torch.randn(16384, 16384, dtype=torch.float16, device="cuda")
ms = median_ms(lambda: t.t().contiguous()); print(f"torch_transpose {ms:.4f} ms")
for (bn, hw, c, f, ks, pad) in ((32, 56, 256, 256, 3, 1), (32, 56, 512, 512, 1, 0)):
    a = torch.rand(bn, c, hw, hw, dtype=torch.float16, device="cuda").to(memory_format=torch.channels_last) - 0.5
    w = torch.rand(f, c, ks, ks, dtype=torch.float16, device="cuda").to(memory_format=torch.channels_last) - 0.5
    ms = median_ms(lambda: torch.nn.functional.conv2d(a, w, padding=pad))
    print(f"cudnn_conv{ks} {ms:.4f} ms {2.0 * bn * hw * hw * c * f * ks * ks / (ms * 1e-3) / 1e12:.1f} TFLOP/s")
EOF
  cat "$R/refs.txt"
  for round in 1 2; do
    for side in A B; do
      eval t=\$$side
      echo "$side r$round transpose16384 $(bench $t examples/transpose.py -D M=16384 -D N=16384 -D block_M=64 -D block_N=64)"
      echo "$side r$round conv3x3 $(bench $t examples/conv2d.py $CV3 $CB)"
      echo "$side r$round conv1x1 $(bench $t examples/conv2d.py $CV1 $CB)"
      echo "$side r$round gemm8192 $(bench $t examples/gemm.py -D M=8192 -D N=8192 -D K=8192 $G -D swizzle=8)"
    done
  done > "$R/ab.txt" 2>&1
  cat "$R/ab.txt"
  for v in "-D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=3 -D threads=256" \
           "-D block_M=128 -D block_N=128 -D block_K=64 -D num_stages=4 -D threads=256" \
           "-D block_M=128 -D block_N=128 -D block_K=32 -D num_stages=4 -D threads=256" \
           "-D block_M=256 -D block_N=128 -D block_K=64 -D num_stages=3 -D threads=256" \
           "-D block_M=128 -D block_N=128 -D block_K=64 -D num_stages=3 -D threads=128"; do
    echo "B conv3x3 $v $(bench $B examples/conv2d.py $CV3 $v)"
    echo "B conv1x1 $v $(bench $B examples/conv2d.py $CV1 $v)"
  done > "$R/conv_variants.txt" 2>&1
  cat "$R/conv_variants.txt"
fi
if [ "${NCU:-1}" = 1 ] && command -v ncu > /dev/null; then
  timeout 120 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
      --section MemoryWorkloadAnalysis -k tilec_kernel -c 1 $B run examples/conv2d.py $CV3 $CB --backend cuda \
      > "$R/ncu_conv3.txt" 2>&1
  grep -E "Throughput|Duration|Stall|Issue|Eligible|Active Warps|Bank|Registers|Achieved" "$R/ncu_conv3.txt" | head -60
fi
