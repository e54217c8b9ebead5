set -u
make -j16 WERROR= build/tilec build/libtilec-cuda.so > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 2; }
for s in "conformance/cases/fragment_layouts.py" "conformance/cases/fragment_layouts.py -D M=100 -D N=72 -D K=48 -D bm=64 -D bn=64 -D bk=16" "conformance/cases/fragment_layouts.py -D M=128 -D N=128 -D K=64 -D bm=32 -D bn=32 -D bk=32 -D threads=64" \
  "examples/flash_attention.py -D causal=False" "examples/flash_attention.py -D causal=True" "examples/flash_attention.py -D causal=True -D seq_len=100 -D heads=1" "examples/flash_attention.py -D causal=False -D seq_len=80 -D dim=32 -D block_N=32" \
  "examples/flash_attention.py -D batch=2 -D heads=2 -D seq_len=512 -D dim=128 -D num_stages=2" "conformance/cases/flash_attention_small.py" "examples/gemm.py" "examples/gemm.py -D threads=256 -D block_M=128 -D block_N=128" "examples/softmax.py" "conformance/cases/layernorm_rows.py" "conformance/cases/softmax_rows.py"; do
  echo "$s :: $(timeout 60 build/tilec run $s --check --backend cuda 2>&1 | tail -1 | cut -c1-90)"; done
for c in False True; do echo "full-size causal=$c: $(timeout 200 build/tilec run examples/flash_attention.py -D batch=4 -D heads=16 -D seq_len=8192 -D dim=128 -D causal=$c -D num_stages=2 --backend cuda --check --reference cpu --bench 2>&1 | tail -2 | tr '\n' ' ')"; done
