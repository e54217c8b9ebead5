#!/bin/sh
# bench/attn_s13b.sh — the second H200 call of issue 17, session 13 (helper
# attn): the accumulator clear left to the wgmma (cuda_zero.c) as lowered.
# Phase 1 (parallel): builds; fills the cache; checks flash attention
# against the CPU backend (the example's tilec-test rows and b1 h3 s1000
# d128 at the bench blocks, causal and not); compute-sanitizer memcheck,
# racecheck, synccheck (causal b1 h1 s384 d128) and memcheck (non-causal).
# Phase 2: --bench A = TILEC_CUDA_ZERO_INIT=0 (main's source byte for byte)
# against B = the default, alternating (causal A B A B, non-causal A B),
# then cuDNN (SDPA, bench/torch_timing.py over 1 s).
# Usage (on the device, from this tree): sh bench/attn_s13b.sh
ATTN_CACHE=/tmp/tilec-cache-attn13b
ATTN_TARGETS="build/tilec build/libtilec-cuda.so build/libtilec-cpu.so"
. bench/attn_lib.sh
P="-D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2"
envof() { case $1 in A) echo TILEC_CUDA_ZERO_INIT=0 ;; *) echo TILEC_CUDA_ZERO_INIT=1 ;; esac; }
mkdir -p /tmp/p1
for c in False True; do
  for v in A B; do
    env $(envof $v) timeout 60 $B compile $F $BIG $P -D causal=$c --backend cuda --arch sm_90a --emit binary -o /tmp/p1/$v$c.bin > /tmp/p1/cc_$v$c.txt 2>&1 &
  done
  timeout 60 $B run $F $RAG $P -D causal=$c --backend cuda --check --reference cpu > /tmp/p1/ck_rag$c.txt 2>&1 &
  timeout 60 $B run $F -D batch=2 -D heads=2 -D seq_len=200 -D dim=128 $P -D causal=$c --backend cuda --check --reference cpu > /tmp/p1/ck_s200$c.txt 2>&1 &
done
grep '^# tilec-test:' $F | sed 's/^# tilec-test://' > /tmp/p1/rows.txt
n=0
while read -r defs; do
  n=$((n + 1)); timeout 60 $B run $F $defs --backend cuda --check --reference cpu > /tmp/p1/ck_t$n.txt 2>&1 &
done < /tmp/p1/rows.txt
for x in $EXTRA; do # other kernels whose source the fold changes
  timeout 60 $B run examples/$x.py --backend cuda --check --reference cpu > /tmp/p1/ck_x_$x.txt 2>&1 &
done
for tool in racecheck synccheck memcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 $B run $F $SAN $P -D causal=True --backend cuda --check > /tmp/p1/san_$tool.txt 2>&1 &
done
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 $B run $F $SAN $P -D causal=False --backend cuda --check > /tmp/p1/san_memcheck_nc.txt 2>&1 &
wait
for f in /tmp/p1/ck_*.txt; do log "check $(basename $f .txt) :: $(tail -1 $f)"; done
for f in /tmp/p1/san_*.txt; do cp $f $O/ 2>/dev/null
  log "$(basename $f .txt) :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $f | tail -1) $(grep -o 'PASS\|FAIL' $f | tail -1)"; done
elapsed
bench() { median_ms 30 "$(envof $1)" $F $BIG $P -D causal=$2; } # variant causal: median ms
for v in A B A B; do log "causal=True $v $(bench $v True)"; done
for v in A B; do log "causal=False $v $(bench $v False)"; done
elapsed
cudnn True False
elapsed
