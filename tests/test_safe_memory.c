/*
 * tests/test_safe_memory.c — core/pass_safe_memory.c on programs the
 * frontend builds: which global accesses get guarded (ragged ones) and
 * which are proven in bounds (loops, symbols, enclosing conditions).
 */
#include "frontend_harness.h"

/* Runs the safe-memory pass on src; the number of guarded accesses. */
static int guards_of(const char *src, int ndefs, const tilec_define_t *defs)
{
    res_t *x = compile_ok(src, ndefs, defs);
    int n = -1;
    char err[256];
    cr_assert_eq(tilec_pass_safe_memory(&x->a, K(x), &n), 0);
    cr_assert_eq(tilec_ir_verify(x->r.module, err, sizeof err), 0, "verifier after the pass: %s", err);
    done(x);
    return n;
}

static const char *RAGGED =
    HDR
    "def f(M=37, N=5, blk=16):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((M, N), \"float32\"), Y: T.Tensor((M, N), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(M, blk)) as bx:\n"
    "            m = T.alloc_fragment((blk,), \"float32\")\n"
    "            for i in T.Parallel(blk):\n"
    "                m[i] = X[bx * blk + i, 0]\n"
    "            for i, k in T.Parallel(blk, N):\n"
    "                Y[bx * blk + i, k] = m[i]\n"
    "    return main\n";

Test(safe_memory, ragged_accesses_are_guarded_even_ones_are_not)
{
    tilec_define_t even[] = {{"M", "64"}};
    cr_expect_eq(guards_of(RAGGED, 0, NULL), 2, "the load of X and the store of Y at M=37");
    cr_expect_eq(guards_of(RAGGED, 1, even), 0, "M=64 tiles evenly: nothing to guard");
}

Test(safe_memory, prover_uses_loops_symbols_and_conditions)
{
    /* a loop over the symbolic dimension itself, and a kernel that guards itself */
    cr_expect_eq(guards_of(HDR "N = T.dynamic('n')\n@T.prim_func\n"
                           "def main(A: T.Tensor((N,), 'float32'), B: T.Tensor((N,), 'float32')):\n"
                           "    with T.Kernel(T.ceildiv(N, 32)) as bx:\n"
                           "        for i in T.Parallel(N):\n"
                           "            B[i] = A[i]\n"
                           "        for i in T.Parallel(32):\n"
                           "            if bx * 32 + i < N:\n"
                           "                B[bx * 32 + i] = T.if_then_else(bx * 32 + i < N, A[bx * 32 + i], 0)\n",
                           0, NULL), 0);
    /* a symbolic ragged edge, a negative offset and an index read from a tensor are guarded */
    cr_expect_eq(guards_of(HDR "N = T.dynamic('n')\n@T.prim_func\n"
                           "def main(A: T.Tensor((N,), 'float32'), I: T.Tensor((4,), 'int32')):\n"
                           "    with T.Kernel(T.ceildiv(N, 32)) as bx:\n"
                           "        for i in T.Parallel(32):\n"
                           "            A[bx * 32 + i] = 1\n"
                           "        for i in T.Parallel(4):\n"
                           "            A[I[i]] = A[i - 1]\n",
                           0, NULL), 3);
}
