#!/bin/sh
# bench/gemm_s12_gen.sh OUTDIR — session 12 (helper gemm): print examples/gemm.py's kernels with this tree
# (here, no GPU needed) and write their hand variants (bench/gemm_hand_variants.py) into OUTDIR, the folder
# bench/gemm_s12.sh and bench/gemm_s12b.sh read on the device (VAR=OUTDIR). Run from the tree's directory.
set -e
O=$1; mkdir -p $O
T=build/tilec
P="--backend cuda --arch sm_90a --emit source"
GB="-D block_M=192 -D block_N=256 -D block_K=64 -D num_stages=3 -D threads=384 -D swizzle=8"
GM="-D block_M=128 -D block_N=256 -D block_K=64 -D num_stages=4 -D threads=256 -D swizzle=8"
pr() { # name M N K env blocks
  n=$1 m=$2 nn=$3 k=$4 e=$5; shift 5
  env $e $T compile examples/gemm.py -D M=$m -D N=$nn -D K=$k "$@" $P -o $O/$n.cu
}
V="python3 bench/gemm_hand_variants.py"
# 8192: the bench row (plain ring, 192x256) and TileLang's shape with the producer warpgroup
pr b8 8192 8192 8192 X=1 $GB; for f in D E M DEM; do $V $O/b8.cu $O/b8_$f.cu $f 8192 8192 192 256; done
pr m8 8192 8192 8192 X=1 $GM; pr w8 8192 8192 8192 TILEC_CUDA_WS=1 $GM
for f in R RN RNDE; do $V $O/w8.cu $O/w8_$f.cu $f 8192 8192 128 256; done
$V $O/m8.cu $O/m8_DEM.cu DEM 8192 8192 128 256
# 4096 (the bench row: plain ring 128x256)
pr m4 4096 4096 4096 X=1 $GM; pr w4 4096 4096 4096 TILEC_CUDA_WS=1 $GM
for f in DE DEM; do $V $O/m4.cu $O/m4_$f.cu $f 4096 4096 128 256; done
$V $O/w4.cu $O/w4_RNDE.cu RNDE 4096 4096 128 256
# ragged checks (1000 x 776 x 520) and the sanitizer size (400 x 520 x 256)
pr bc 1000 776 520 X=1 $GB; for f in D E M DEM; do $V $O/bc.cu $O/bc_$f.cu $f 1000 776 192 256; done
pr mc 1000 776 520 X=1 $GM; for f in DE DEM; do $V $O/mc.cu $O/mc_$f.cu $f 1000 776 128 256; done
pr wc 1000 776 520 TILEC_CUDA_WS=1 $GM; for f in R RN RNDE; do $V $O/wc.cu $O/wc_$f.cu $f 1000 776 128 256; done
pr bs 400 520 256 X=1 $GB; $V $O/bs.cu $O/bs_DEM.cu DEM 400 520 192 256
pr ws 400 520 256 TILEC_CUDA_WS=1 $GM; $V $O/ws.cu $O/ws_RNDE.cu RNDE 400 520 128 256
pr ms 400 520 256 X=1 $GM; $V $O/ms.cu $O/ms_DEM.cu DEM 400 520 128 256
# call 2: TileLang's whole structure (square grid, producer warpgroup, row order) with R, N, D, E on top
GR="$GM -D swizzle_order=row"; QW="TILEC_CUDA_SQUARE=1 TILEC_CUDA_WS=1"
env $QW $T compile examples/gemm.py -D M=8192 -D N=8192 -D K=8192 $GR $P -o $O/q8.cu; $V $O/q8.cu $O/q8_RNDE.cu RNDE 8192 8192 128 256
env $QW $T compile examples/gemm.py -D M=1000 -D N=776 -D K=520 $GR $P -o $O/qc.cu; $V $O/qc.cu $O/qc_RNDE.cu RNDE 1000 776 128 256
