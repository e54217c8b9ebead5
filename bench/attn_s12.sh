#!/bin/sh
# bench/attn_s12.sh — one H200 call for issue 17, session 12 (helper attn:
# the softmax's exp2 as one ex2.approx.ftz, and hand-edited variants on top).
# Builds this tree; in parallel: compiles every kernel into the cache, checks
# flash attention against the CPU backend (ragged, causal and not) for the
# default, TILEC_CUDA_FAST_EXP2=0 and each hand variant, and runs
# compute-sanitizer memcheck/racecheck/synccheck on the default and on the
# variant with every edit (causal s384); then times, alternating over two
# rounds (the second in reverse order), A = TILEC_CUDA_FAST_EXP2=0 (main's
# source byte for byte), B = the default, and the variants (TILEC_CUDA_SOURCE
# = v/big_CAUSAL_VARIANT.cu, B's printed source edited by /tmp scripts:
# tree = max and sum reductions over 4 partial results, early = the stage's
# release right after the wait for Q K^T(k) and P V(k-1), direct = acc_o
# stored from registers to Output, no O_shared and no block barriers,
# all = the three), then bench/cuda_bench.py's flash rows (cuDNN, same call).
# Usage (on the device, from this tree, with v/ beside it): sh bench/attn_s12.sh
ATTN_CACHE=/tmp/tilec-cache-attn12
. bench/attn_lib.sh
P="-D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2"
VS="tree early direct all"
V=$PWD/v
envof() { # variant size causal -> env assignment
  case $1 in A) echo TILEC_CUDA_FAST_EXP2=0 ;; B) echo TILEC_CUDA_FAST_EXP2=1 ;; *) echo TILEC_CUDA_SOURCE=$V/$2_$3_$1.cu ;; esac
}
# phase 1, in parallel: the cache, the checks, the sanitizers
mkdir -p /tmp/p1
for c in False True; do
  for v in A B $VS; do
    env $(envof $v big $c) timeout 60 $B compile $F $BIG $P -D causal=$c --backend cuda --arch sm_90a --emit binary -o /tmp/p1/$v$c.bin > /tmp/p1/cc_$v$c.txt 2>&1 &
    env $(envof $v rag $c) timeout 90 $B run $F $RAG $P -D causal=$c --backend cuda --check --reference cpu > /tmp/p1/ck_$v$c.txt 2>&1 &
  done
done
for v in B all; do
  for tool in racecheck synccheck memcheck; do
    env $(envof $v san True) timeout 120 compute-sanitizer --tool $tool --error-exitcode 99 $B run $F $SAN $P -D causal=True --backend cuda --check > /tmp/p1/san_${v}_$tool.txt 2>&1 &
  done
done
wait
for c in False True; do for v in A B $VS; do
  log "check ref=cpu $v causal=$c :: $(grep -v '^tilec: cuda: the kernel source' /tmp/p1/ck_$v$c.txt | tail -1)"
done; done
for v in B all; do for tool in racecheck synccheck memcheck; do
  r=/tmp/p1/san_${v}_$tool.txt; cp $r $O/ 2>/dev/null
  log "$tool $v :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $r | tail -1) $(grep -o 'PASS\|FAIL' $r | tail -1)"
done; done
elapsed
bench() { median_ms 40 "$(envof $1 big $2)" $F $BIG $P -D causal=$2; } # variant causal: median ms
for c in False True; do
  for v in A B $VS; do log "r1 causal=$c $v $(bench $v $c)"; done
done
elapsed
BENCH_ONLY=flash PYTHONUNBUFFERED=1 timeout 90 python3 bench/cuda_bench.py > "$O/cuda_bench.txt" 2>&1
grep -i "flash" "$O/cuda_bench.txt" | tail -6 >> "$L"
elapsed
for c in True False; do
  for v in all direct early tree B A; do log "r2 causal=$c $v $(bench $v $c)"; done
done
elapsed
