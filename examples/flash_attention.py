# flash_attention.py — attention forward, O = softmax(Q K^T / sqrt(dim)) V,
# for Q, K, V, O of shape (batch, heads, seq_len, dim) in float16, with
# float32 accumulators.  One block owns block_M query rows of one head and
# walks the keys in block_N-wide blocks with an online softmax: a running
# row max rescales the partial output and the running row sum each time it
# grows.  Exponentials are base 2, with log2(e) folded into `scale`.
# With causal=True, query q only sees keys k <= q: the key loop stops at
# the diagonal block and the scores above the diagonal start at -inf.
# tilec-test: -D causal=False
# tilec-test: -D causal=True
# tilec-test: -D causal=True -D seq_len=100 -D heads=1
# tilec-test: -D causal=False -D seq_len=80 -D dim=32 -D block_N=32

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3])
def flash_attention(batch=1, heads=2, seq_len=128, dim=64, causal=False,
                    block_M=64, block_N=64, num_stages=1, threads=128):
    scale = (1.0 / dim) ** 0.5 * 1.44269504   # 1/sqrt(dim) * log2(e)
    shape = (batch, heads, seq_len, dim)
    dtype = "float16"
    accum_dtype = "float32"
    # Keys past seq_len (a partial last key block) must not get weight.
    ragged_keys = seq_len % block_N != 0

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype),
             K: T.Tensor(shape, dtype),
             V: T.Tensor(shape, dtype),
             Output: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            V_shared = T.alloc_shared((block_N, dim), dtype)
            O_shared = T.alloc_shared((block_M, dim), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), accum_dtype)
            acc_s_cast = T.alloc_fragment((block_M, block_N), dtype)
            acc_o = T.alloc_fragment((block_M, dim), accum_dtype)
            scores_max = T.alloc_fragment((block_M,), accum_dtype)
            scores_max_prev = T.alloc_fragment((block_M,), accum_dtype)
            scores_scale = T.alloc_fragment((block_M,), accum_dtype)
            scores_sum = T.alloc_fragment((block_M,), accum_dtype)
            logsum = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(Q[bz, by, bx * block_M:(bx + 1) * block_M, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            loop_range = (
                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                if causal else T.ceildiv(seq_len, block_N))

            for k in T.Pipelined(loop_range, num_stages=num_stages):
                # S = Q K^T, started at 0 or -inf so that masked scores vanish.
                T.copy(K[bz, by, k * block_N:(k + 1) * block_N, :], K_shared)
                if causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(
                            bx * block_M + i >= k * block_N + j and k * block_N + j < seq_len,
                            0, -T.infinity(accum_dtype))
                elif ragged_keys:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(k * block_N + j < seq_len,
                                                     0, -T.infinity(accum_dtype))
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True,
                       policy=T.GemmWarpPolicy.FullRow)

                # Online softmax: new running max (clear=False keeps the old
                # one in the max), the factor that rescales the old partial
                # results, then the exponentials of this block.
                T.copy(scores_max, scores_max_prev)
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
                T.copy(acc_s, acc_s_cast)

                # O = O * rescale + P V
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bz, by, k * block_N:(k + 1) * block_N, :], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, by, bx * block_M:(bx + 1) * block_M, :])

    return main
