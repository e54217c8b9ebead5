# thread_allreduce.py — T.tvm_thread_allreduce in lock-step per-thread code
# of a 4 x 8 block (frontend/lockstep.c): each thread (tn, tk) clears its
# own accumulator (T.clear of a T.alloc_local), adds 2 A[tn, tk], then the
# accumulators are summed over tk (the combiner of the enclosing
# `with T.attr(T.comm_reducer(...), "reduce_scope", ...)`) and, with another
# combiner, maximised over tn.  tests/test_language.c checks
# S[n] = 2 sum_k A[n, k] and M[n, k] = 2 max_n' A[n', k].
import tilelang
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((4, 8), "float32"), S: T.Tensor((4,), "float32"), M: T.Tensor((4, 8), "float32")):
    with T.Kernel(1, threads=(4, 8)) as bx:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        acc = T.alloc_local((1,), "float32")
        red = T.alloc_local((1,), "float32")
        T.clear(acc)
        acc[0] += A[tn, tk] * 2
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, red[0], tk, dtype="handle"))
        S[tn] = red[0]
        with T.attr(T.comm_reducer(lambda x, y: T.max(x, y), [T.cast(-1e9, "float32")]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, red[0], tn, dtype="handle"))
        M[tn, tk] = red[0]
