#!/bin/sh
# bench/gemm_s12.sh: session 12 (helper gemm), device call 1: the hand variants of bench/gemm_s12_gen.sh (VAR=their folder)
# checked against the CPU backend, then timed alternating over two rounds (the second in reverse order), cuBLAS
# between and after, compute-sanitizer while SAN_BY seconds allow. Run from the tree's directory.
# (Call 1 ran an earlier cuBLAS script, on randn inputs only; bench/cublas_sustained.py is call 2's.)
# MODE=compile: only compile every variant (here, NVRTC); default: build, prewarm, checks, sanitizers, timings.
D=${VAR:-/tmp/gemm_s12_var}
R=${OUT:-/tmp/s12out}; mkdir -p "$R"
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache-gemm-s12}
T=build/tilec
GB="-D block_M=192 -D block_N=256 -D block_K=64 -D num_stages=3 -D threads=384 -D swizzle=8"
GM="-D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256 -D swizzle=8"
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
args() { # variant name -> "ENV|ARGS"
  case $1 in
    b8*) echo "X=1|-D M=8192 -D N=8192 -D K=8192 $GB";;
    m8*) echo "X=1|-D M=8192 -D N=8192 -D K=8192 $GM";;
    w8*) echo "TILEC_CUDA_WS=1|-D M=8192 -D N=8192 -D K=8192 $GM";;
    m4*) echo "X=1|-D M=4096 -D N=4096 -D K=4096 $GM";;
    w4*) echo "TILEC_CUDA_WS=1|-D M=4096 -D N=4096 -D K=4096 $GM";;
    bc*) echo "X=1|-D M=1000 -D N=776 -D K=520 $GB";;
    mc*) echo "X=1|-D M=1000 -D N=776 -D K=520 $GM";;
    wc*) echo "TILEC_CUDA_WS=1|-D M=1000 -D N=776 -D K=520 $GM";;
    bs*) echo "X=1|-D M=400 -D N=520 -D K=256 $GB";;
    ms*) echo "X=1|-D M=400 -D N=520 -D K=256 $GM";;
    ws*) echo "TILEC_CUDA_WS=1|-D M=400 -D N=520 -D K=256 $GM";;
    q8*) echo "TILEC_CUDA_SQUARE=1 TILEC_CUDA_WS=1|-D M=8192 -D N=8192 -D K=8192 $GM -D swizzle_order=row";;
    qc*) echo "TILEC_CUDA_SQUARE=1 TILEC_CUDA_WS=1|-D M=1000 -D N=776 -D K=520 $GM -D swizzle_order=row";;
  esac
}
src() { case $1 in *_*) echo "TILEC_CUDA_SOURCE=$D/$1.cu";; *) echo "Y=1";; esac; }
cmd() { # variant, tilec subcommand and extra args... -> the command line
  v=$1; shift; a=$(args $v); e=${a%%|*}; p=${a#*|}
  echo env $e $(src $v) $T "$@" examples/gemm.py $p --backend cuda
}
go() { $(cmd "$@"); }
if [ "$MODE" = compile ]; then
  for f in $D/*.cu; do v=$(basename $f .cu)
    r=$(TILEC_LOG=compile go $v compile --arch sm_90a --emit binary -o /tmp/s12.cubin 2>&1 | grep -o 'registers=[0-9]*\|spill=[0-9]*\|rror.*' | tr '\n' ' ')
    echo "$v $r"; done; exit 0
fi
make -j16 WERROR= build/tilec build/libtilec-cuda.so > "$R/build.log" 2>&1; echo "build rc=$? t=$(el)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv,noheader
# prewarm the kernel cache in parallel (NVRTC, one process per variant)
for f in $D/*.cu; do v=$(basename $f .cu); timeout 60 $(cmd $v compile --arch sm_90a --emit binary -o /tmp/s12_$v.cubin) >/dev/null 2>&1 & done
for v in b8 m8 w8 m4 w4 bc mc wc bs ms ws; do timeout 60 $(cmd $v compile --arch sm_90a --emit binary -o /tmp/s12_$v.cubin) >/dev/null 2>&1 & done
wait; echo "prewarm t=$(el)"
# checks at the ragged size, every variant against the CPU backend
for v in bc bc_D bc_E bc_M bc_DEM mc_DE mc_DEM wc_R wc_RN wc_RNDE; do
  echo "check $v :: $(timeout 40 $(cmd $v run --check --reference cpu) 2>&1 | tail -1)"; done
echo "checks t=$(el)"
bench() { v=$1; shift; echo "$v $* $(timeout 30 $(cmd $v run --bench "$@") 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' | tail -1)"; }
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader -lms 200 > "$R/smi.csv" 2>&1 &
SMI=$!
L8B="b8 b8_D b8_E b8_M b8_DEM"; L8W="w8 w8_R w8_RN w8_RNDE"; L4="m4 m4_DE m4_DEM w4 w4_RNDE"
for round in 1 2; do
  for v in $L8B; do bench $v; done
  echo "b8cl2 $(TILEC_CUDA_CLUSTER=2 timeout 30 $(cmd b8 run --bench) 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p;/rror/p' | tail -1)"
  for v in $L8W; do bench $v; done
  for v in $L4; do bench $v; done
  echo "m4cl2 $(TILEC_CUDA_CLUSTER=2 timeout 30 $(cmd m4 run --bench) 2>&1 | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p;/rror/p' | tail -1)"
  echo "round $round t=$(el)"
  [ $round = 1 ] && python3 bench/cublas_sustained.py
  L8B=$(echo $L8B | tr ' ' '\n' | tac | tr '\n' ' '); L8W=$(echo $L8W | tr ' ' '\n' | tac | tr '\n' ' '); L4=$(echo $L4 | tr ' ' '\n' | tac | tr '\n' ' ')
done
python3 bench/cublas_sustained.py
kill $SMI
echo "timing t=$(el)"
if [ $(el) -lt ${SAN_BY:-190} ]; then
  for v in bs_DEM ws_RNDE ms_DEM; do for tool in memcheck racecheck synccheck; do
    [ $(el) -ge ${SAN_BY:-190} ] && break
    echo "san $tool $v :: $(timeout 30 env $(args $v | cut -d'|' -f1) $(src $v) compute-sanitizer --tool $tool $T run examples/gemm.py $(args $v | cut -d'|' -f2) --backend cuda --check --reference cpu 2>&1 | grep -E 'ERROR SUMMARY|PASS|FAIL|hazard' | tr '\n' ' ')"
  done; done
fi
echo "end t=$(el)"
