#!/bin/sh
# bench/gemm_s12b.sh: session 12 (helper gemm), device call 2: rasterization order over rounds, TileLang's whole structure by hand,
# cuBLAS on the same input distribution (uniform [-1, 1], as tilec's) and on randn, mean SM clock per run.
D=${VAR:-/tmp/gemm_s12_var}
export TILEC_CACHE_DIR=/tmp/tilec-cache-gemm-s12b
T=build/tilec
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
make -j16 WERROR= build/tilec build/libtilec-cuda.so > /tmp/s12b_build.log 2>&1; echo "build rc=$? t=$(el)"
G192="-D block_M=192 -D block_N=256 -D block_K=64 -D num_stages=3 -D threads=384 -D swizzle=8"
G128="-D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256 -D swizzle=8"
S8="-D M=8192 -D N=8192 -D K=8192"; S4="-D M=4096 -D N=4096 -D K=4096"; ROW="-D swizzle_order=row"
QW="TILEC_CUDA_SQUARE=1 TILEC_CUDA_WS=1"
echo "check qc_RNDE :: $(env $QW TILEC_CUDA_SOURCE=$D/qc_RNDE.cu timeout 40 $T run examples/gemm.py -D M=1000 -D N=776 -D K=520 $G128 $ROW --backend cuda --check --reference cpu 2>&1 | tail -1)"
b() { # label env args...: median ms, mean SM clock (MHz) and max power over the run
  l=$1; e=$2; shift 2
  nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms 100 > /tmp/s12b_clk.csv 2>/dev/null & p=$!
  ms=$(env $e timeout 30 $T run examples/gemm.py "$@" --backend cuda --bench 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | tail -1)
  kill $p; wait $p 2>/dev/null
  echo "$l $ms $(awk -F', ' '{c+=$1; n++; if ($2>w) w=$2} END{printf "clk_mhz=%.0f max_w=%.0f", n ? c/n : 0, w}' /tmp/s12b_clk.csv)"
}
for r in 1 2; do
  b b8 X=1 $S8 $G192; b b8_row X=1 $S8 $G192 $ROW
  b w8 TILEC_CUDA_WS=1 $S8 $G128; b qw8_row "$QW" $S8 $G128 $ROW; b qw8_row_RNDE "$QW TILEC_CUDA_SOURCE=$D/q8_RNDE.cu" $S8 $G128 $ROW
  b m4 X=1 $S4 $G128; b m4_row X=1 $S4 $G128 $ROW; b q4_row TILEC_CUDA_SQUARE=1 $S4 $G128 $ROW
  echo "round $r t=$(el)"
  [ $r = 1 ] && python3 bench/cublas_sustained.py 2
done
echo "end t=$(el)"
