#!/bin/sh
# bench/conv_s12.sh — session 12 (helper conv), the second device call: A = main at the repo root, B = branch conv
# staged in .ck/conv/b (git archive), printed kernels, alternating 2 rounds at the bench shapes; checks of B (ragged,
# odd F, --reference cpu), memcheck/racecheck at F=41, bench/cuda_bench.py conv2d rows on B. Run from the repo root:
# sh bench/conv_s12.sh (writes $OUT/log2.txt).
O=${OUT:-/tmp}/log2.txt
exec > "$O" 2>&1
t0=$(date +%s)
R=$(pwd)
make -j8 WERROR= build/tilec build/libtilec-cuda.so > /tmp/ba.log 2>&1 &
(cd .ck/conv/b && make -j8 WERROR= build/tilec build/libtilec-cuda.so > /tmp/bb.log 2>&1) || { tail -5 /tmp/bb.log; exit 1; }
wait
echo "build $(( $(date +%s) - t0 )) s"
export TILEC_CACHE_DIR=/tmp/tc2
F=examples/conv2d.py
BL="-D block_M=128 -D block_N=128 -D block_K=64 -D num_stages=3 -D threads=256"
b3="-D N=32 -D H=56 -D W=56 -D C=256 -D F=256 -D KS=3 -D S=1 -D D=1 -D P=1"
b1="-D N=32 -D H=56 -D W=56 -D C=512 -D F=512 -D KS=1 -D S=1 -D D=1 -D P=0"
B=.ck/conv/b/build/tilec
for r in 1 2; do
  for s in b3 b1; do eval sh=\$$s
    for side in A B; do t=build/tilec; [ $side = B ] && t=$B
      m=$($t run $F $sh $BL --backend cuda --bench 2>&1 | grep -o 'median_ms=[0-9.]* min_ms=[0-9.]*')
      echo "round $r $s $side $m"
    done
  done
done
echo "t=$(( $(date +%s) - t0 )) s"
echo "== checks (B)"
for a in "-D N=3 -D H=13 -D W=11 -D C=128 -D F=200 -D KS=3 -D P=1 $BL|--reference cpu" "-D N=2 -D H=15 -D W=15 -D C=192 -D F=136 -D KS=1 -D P=0 $BL|--reference cpu" "-D N=2 -D H=9 -D W=10 -D C=64 -D F=41 -D KS=3 -D P=1 $BL|" "-D N=2|" "-D S=2 -D H=9 -D W=7 -D dtype=bfloat16|" "-D KS=1 -D P=0 -D C=16 -D F=24|"; do
  args=${a%|*}; ref=${a#*|}
  echo "conv2d [$args] $ref: $(timeout 60 $B run $F $args --backend cuda --check $ref 2>&1 | tail -1)"
done
for ex in gemm gemm_bias_relu flash_attention softmax; do echo "$ex: $(timeout 60 $B run examples/$ex.py --backend cuda --check 2>&1 | tail -1)"; done
echo "t=$(( $(date +%s) - t0 )) s"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  r=$(TILEC_CACHE=0 timeout 60 $CS --tool $tool --error-exitcode 99 $B run $F -D N=2 -D H=9 -D W=10 -D C=64 -D F=41 -D KS=3 -D P=1 $BL --backend cuda --check 2>&1)
  echo "$tool F=41: rc=$? $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | tail -1) $(echo "$r" | grep -E 'PASS|FAIL' | tail -1)"
done
echo "t=$(( $(date +%s) - t0 )) s"
cd .ck/conv/b && BENCH_ONLY=conv2d timeout 60 python3 bench/cuda_bench.py 2>&1 | grep conv2d
echo "t=$(( $(date +%s) - t0 )) s"
