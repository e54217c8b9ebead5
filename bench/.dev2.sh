set -u
make -j16 WERROR= build/tilec build/libtilec-cuda.so > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 2; }
for c in nn nt tn tt; do for p in "-D M=64 -D N=64 -D K=64" "-D M=130 -D N=200 -D K=100 -D bm=64 -D bn=64 -D bk=32" "-D M=128 -D N=256 -D K=144 -D bm=64 -D bn=128 -D bk=64 -D stages=3" "-D M=96 -D N=72 -D K=40 -D bm=64 -D bn=64 -D bk=16"; do
  echo "$c $p :: $(timeout 60 build/tilec run conformance/cases/gemm_${c}_f16.py $p --check --backend cuda 2>&1 | tail -1 | cut -c1-60)"; done; done
for s in "examples/gemm.py" "examples/gemm.py -D threads=256 -D block_M=128 -D block_N=128" "examples/gemm.py -D dtype=bfloat16" "examples/gemm_transpose_b.py" "examples/flash_attention.py" "examples/flash_attention.py -D causal=True" "examples/gemm.py -D M=300 -D N=264 -D K=200 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=4" "examples/gemm.py -D M=512 -D N=512 -D K=512 -D block_M=128 -D block_N=256 -D block_K=64 -D threads=256 -D num_stages=2"; do
  echo "$s :: $(timeout 60 build/tilec run $s --check --backend cuda 2>&1 | tail -1 | cut -c1-60)"; done
VARIANTS=128:128:64:3:128,128:128:64:4:256,128:256:64:3:256,128:256:64:4:256,256:128:64:4:256,128:256:32:4:256 timeout 200 sh bench/cuda_gemm_variants.sh 2>&1
TILEC=build/tilec OUT=$OUT timeout 300 python3 bench/cuda_bench.py 2>&1
