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
O=${OUT:-/tmp}
L=$O/log.txt
log() { echo "$*" >> "$L"; }
export TILEC_CACHE_DIR=/tmp/tilec-cache-attn12
t0=$(date +%s)
make -j16 WERROR= build/tilec build/libtilec-cuda.so > /tmp/attn_build.log 2>&1; rc=$?
[ $rc = 0 ] || tail -5 /tmp/attn_build.log >> "$L"
log "build rc=$rc $(( $(date +%s) - t0 ))s; $(nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader)"
B=build/tilec
F=examples/flash_attention.py
P="-D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2"
BIG="-D batch=4 -D heads=16 -D seq_len=8192 -D dim=128"
RAG="-D batch=1 -D heads=3 -D seq_len=1000 -D dim=128"
SAN="-D batch=1 -D heads=1 -D seq_len=384 -D dim=128"
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
log "t=$(( $(date +%s) - t0 ))s"
bench() { # variant causal: median ms
  env $(envof $1 big $2) timeout 40 $B run $F $BIG $P -D causal=$2 --backend cuda --bench 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | tail -1
}
for c in False True; do
  for v in A B $VS; do log "r1 causal=$c $v $(bench $v $c)"; done
done
log "t=$(( $(date +%s) - t0 ))s"
BENCH_ONLY=flash PYTHONUNBUFFERED=1 timeout 90 python3 bench/cuda_bench.py > "$O/cuda_bench.txt" 2>&1
grep -i "flash" "$O/cuda_bench.txt" | tail -6 >> "$L"
log "t=$(( $(date +%s) - t0 ))s"
for c in True False; do
  for v in all direct early tree B A; do log "r2 causal=$c $v $(bench $v $c)"; done
done
log "t=$(( $(date +%s) - t0 ))s"
