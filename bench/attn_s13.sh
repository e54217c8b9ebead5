#!/bin/sh
# bench/attn_s13.sh — one H200 call for issue 17, session 13 (helper attn):
# flash attention fwd fp16 b4 h16 s8192 d128 (bench/cuda_bench.py's rows),
# hand-edited variants of the printed kernel against the default and cuDNN.
# Variants (v/SIZE_CAUSAL_VARIANT.cu, printed sources edited by scripts kept
# in bench/results/attn_session13.md): pp = ping-pong of the two consumer
# warpgroups (named barriers 2 and 3: a warpgroup issues Q K^T(k) and
# P V(k-1) only on its turn, then hands the turn over, so one's softmax runs
# under the other's wgmma); z = the Q K^T wgmma starts from 0 (scale-d 0 on
# its first k-step) in place of 64 register fills of acc_s; r = acc_o's
# rescale by the previous block's factor moved from after the wait for
# P V(k-1) to between the issues of Q K^T(k) and P V(k-1) (under Q K^T's
# wgmma); letters combine (ppzr = all three); the digit is num_stages.  B = the default (2 stages), s3 = 3 stages.
# Phase 1 (parallel): builds, fills the kernel cache, checks every variant
# against the CPU backend at b1 h3 s1000 (ragged), causal and not.  Phase 2:
# --bench alternating the variants, two rounds (the second reversed), with
# cuDNN (SDPA, bench/torch_timing.py over 1 s) between them and after.
# Usage (on the device, from this tree, with v/ beside it): sh bench/attn_s13.sh
ATTN_CACHE=/tmp/tilec-cache-attn13
ATTN_TARGETS="build/tilec build/libtilec-cuda.so build/libtilec-cpu.so"
. bench/attn_lib.sh
P="-D block_M=128 -D block_N=128 -D threads=256"
VS=${VS:-"B pp2 z2 ppz2 s3 r2 ppzr2 pp3"}
V=$PWD/v
stof() { case $1 in B) echo 2 ;; s3) echo 3 ;; *) echo "$1" | sed 's/.*\([0-9]\)$/\1/' ;; esac; }
envof() { # variant size causal -> env assignment
  case $1 in B|s3) echo TILEC_CUDA_SOURCE= ;; *) echo TILEC_CUDA_SOURCE=$V/$2_$3_$1.cu ;; esac
}
mkdir -p /tmp/p1
for c in False True; do
  for v in $VS; do
    env $(envof $v big $c) timeout 60 $B compile $F $BIG $P -D num_stages=$(stof $v) -D causal=$c --backend cuda --arch sm_90a --emit binary -o /tmp/p1/$v$c.bin > /tmp/p1/cc_$v$c.txt 2>&1 &
    env $(envof $v rag $c) timeout 60 $B run $F $RAG $P -D num_stages=$(stof $v) -D causal=$c --backend cuda --check --reference cpu > /tmp/p1/ck_$v$c.txt 2>&1 &
  done
done
wait
for c in False True; do for v in $VS; do
  log "check ref=cpu $v causal=$c :: $(grep -v '^tilec: cuda: the kernel source' /tmp/p1/ck_$v$c.txt | tail -1)"
done; done
elapsed
bench() { median_ms 30 "$(envof $1 big $2)" $F $BIG $P -D num_stages=$(stof $1) -D causal=$2; } # variant causal: median ms
for c in False True; do
  for v in $VS; do log "r1 causal=$c $v $(bench $v $c)"; done
done
elapsed
cudnn False True
elapsed
R=""; for v in $VS; do R="$v $R"; done
for c in True False; do
  for v in $R; do
    [ $(( $(date +%s) - t0 )) -lt ${STOP:-175} ] && log "r2 causal=$c $v $(bench $v $c)"
  done
done
cudnn False True
elapsed
