# rng_philox.py — T.rng_init / T.rng_rand, the counter-based Philox4x32-10
# stream (curand's Philox4_32_10 layout): draw n of T.rng_init(seed, seq, off)
# is word (off + n) % 4 of Philox4x32-10 at counter ((off + n) / 4, seq) and
# key seed.  `stream` (a block of one thread) takes draws 0..7 in a
# T.Parallel (iteration i takes draw i), then one more, then a T.Parallel of
# two draws per iteration; its first four are the published known-answer
# vector of Philox4x32-10 (counter 0, key 0).  `per_thread` gives each of 4
# threads its own seq and an offset; `default_seq` leaves seq to TileLang's
# default tx + bx * threads.  tests/test_language.c checks the words.
# tilec-test: --entry stream
# tilec-test: --entry per_thread
# tilec-test: --entry default_seq
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[0, 1, 2])
def stream():
    @T.prim_func
    def main(A: T.Tensor((8,), "uint32"), B: T.Tensor((1,), "uint32"), C: T.Tensor((2, 2), "uint32")):
        with T.Kernel(1, threads=1) as bx:
            tx = T.get_thread_binding()
            T.rng_init(0, 0, 0)
            for i in T.Parallel(8):
                A[i] = T.rng_rand()
            B[0] = T.rng_rand()
            for i in T.Parallel(2):
                C[i, 0] = T.rng_rand()
                C[i, 1] = T.rng_rand()

    return main


@tilelang.jit(out_idx=[0])
def per_thread():
    @T.prim_func
    def main(P: T.Tensor((4, 3), "uint32")):
        with T.Kernel(1, threads=4) as bx:
            tx = T.get_thread_binding()
            T.rng_init(7, tx, 2)
            for j in T.serial(3):
                P[tx, j] = T.rng_rand()

    return main


@tilelang.jit(out_idx=[0])
def default_seq():
    @T.prim_func
    def main(Q: T.Tensor((2, 2, 2), "uint32")):
        with T.Kernel(2, threads=2) as bx:
            tx = T.get_thread_binding()
            T.rng_init(5)
            Q[bx, tx, 0] = T.rng_rand()
            Q[bx, tx, 1] = T.rng_rand()

    return main
