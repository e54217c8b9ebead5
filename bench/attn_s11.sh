#!/bin/sh
# bench/attn_s11.sh — one H200 call for issue 17, session 11 (helper attn:
# the order pass, causal attention's heaviest query blocks first).  Builds
# this tree, checks flash attention against the CPU backend and the
# interpreter (ragged, causal and not, 128 and 64 key blocks), runs
# compute-sanitizer memcheck/racecheck/synccheck on the reordered causal
# kernel, then times A (TILEC_CUDA_ORDER=0: the CUDA source main prints,
# byte for byte) and B (the default) alternately at b4 h16 s8192 d128,
# then bench/cuda_bench.py's flash rows (cuDNN in the same process), then
# extras: num_stages 3, and racecheck's whole report on ping-pong.
# Usage (on the device, from this tree): sh bench/attn_s11.sh; writes $OUT/log.txt, $OUT/san_*.log.
ATTN_CACHE=/tmp/tilec-cache-attn11
. bench/attn_lib.sh
C2="-D block_M=128 -D block_N=128 -D threads=256 -D num_stages=2"
C64="-D block_M=128 -D block_N=64 -D threads=256 -D num_stages=2"
for causal in True False; do
  log "check ref=cpu $C2 $RAG causal=$causal :: $(timeout 60 $B run $F $C2 $RAG -D causal=$causal --backend cuda --check --reference cpu 2>&1 | tail -1)"
done
SPEC="$C2 -D causal=True -D batch=1 -D heads=1 -D seq_len=384 -D dim=128"
for tool in racecheck synccheck memcheck; do
  r=$(timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 $B run $F $SPEC --backend cuda --check 2>&1); rc=$?
  echo "$r" | head -150 > "$O/san_$tool.log"
  log "$tool rc=$rc [$SPEC] :: $(echo "$r" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | tail -1) $(echo "$r" | grep -o 'PASS\|FAIL' | tail -1)"
done
elapsed
bench() { median_ms 40 "$@"; } # env, args...: median ms
for round in 1 2; do
  log "r$round causal A(ORDER=0) $(bench TILEC_CUDA_ORDER=0 $F $BIG $C2 -D causal=True)"
  log "r$round causal B          $(bench TILEC_CUDA_ORDER=1 $F $BIG $C2 -D causal=True)"
done
log "r1 non-causal B(=A)     $(bench TILEC_CUDA_ORDER=1 $F $BIG $C2 -D causal=False)"
elapsed
BENCH_ONLY=flash PYTHONUNBUFFERED=1 timeout 60 python3 bench/cuda_bench.py > "$O/cuda_bench.txt" 2>&1
grep -i "flash" "$O/cuda_bench.txt" | tail -6 >> "$L"
elapsed
log "r3 causal B          $(bench TILEC_CUDA_ORDER=1 $F $BIG $C2 -D causal=True)"
log "r3 causal A(ORDER=0) $(bench TILEC_CUDA_ORDER=0 $F $BIG $C2 -D causal=True)"
for causal in True False; do
  log "check ref=cpu $C64 $RAG causal=$causal :: $(timeout 60 $B run $F $C64 $RAG -D causal=$causal --backend cuda --check --reference cpu 2>&1 | tail -1)"
done
log "check interp causal s300 h2 bN32 3st :: $(timeout 60 $B run $F -D causal=True -D seq_len=300 -D heads=2 -D block_N=32 -D num_stages=3 --backend cuda --check 2>&1 | tail -1)"
log "stages3 causal B $(bench TILEC_CUDA_ORDER=1 $F $BIG -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=3 -D causal=True)"
log "stages3 non-causal B $(bench TILEC_CUDA_ORDER=1 $F $BIG -D block_M=128 -D block_N=128 -D threads=256 -D num_stages=3 -D causal=False)"
elapsed
r=$(TILEC_CUDA_PINGPONG=1 timeout 60 compute-sanitizer --tool racecheck --print-level info --error-exitcode 99 $B run $F $SPEC --backend cuda --check 2>&1); rc=$?
echo "$r" | head -400 > "$O/san_racecheck_pingpong.log"
log "racecheck pingpong rc=$rc :: $(echo "$r" | grep -E 'RACECHECK SUMMARY' | tail -1) $(echo "$r" | grep -o 'PASS\|FAIL' | tail -1)"
log "done t=$(( $(date +%s) - t0 ))s"
