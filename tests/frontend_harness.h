/*
 * tests/frontend_harness.h — what the frontend's unit tests share: compile a
 * tile program from a string (compile_e / compile_ok), expect a diagnostic
 * at a line (expect_err / expect_err_e), and walk the IR it produced
 * (K, buf, cint, nth, count, count_kind); GEMM is the reference matmul
 * factory several suites compile.  Included by test_frontend.c (IR
 * structure), test_frontend_errors.c (diagnostics), test_frontend_interp.c
 * (semantics through the interpreter) and test_safe_memory.c.
 */
#ifndef TILEC_TESTS_FRONTEND_HARNESS_H
#define TILEC_TESTS_FRONTEND_HARNESS_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "passes.h"

#define HDR "import tilelang\nimport tilelang.language as T\n\n"

typedef struct res {
    tilec_arena_t a;
    tilec_diag_t d;
    tilec_frontend_result_t r;
    int rc;
    char *src;
} res_t;

static __attribute__((unused)) res_t *compile_e(const char *src, const char *entry, int ndefs, const tilec_define_t *defs)
{
    res_t *x = calloc(1, sizeof *x);
    cr_assert(x);
    x->src = strdup(src);
    tilec_arena_init(&x->a);
    tilec_diag_init(&x->d, "t.py", x->src, strlen(x->src));
    x->rc = tilec_frontend_compile(&x->a, &x->d, "t.py", x->src, strlen(x->src), entry, defs, ndefs, &x->r);
    return x;
}

static __attribute__((unused)) res_t *compile_ok(const char *src, int ndefs, const tilec_define_t *defs)
{
    res_t *x = compile_e(src, NULL, ndefs, defs);
    cr_assert_eq(x->rc, 0, "compile failed: %s", tilec_diag_text(&x->d));
    cr_assert(x->r.module && x->r.module->kernel);
    {
        char err[512];
        cr_assert_eq(tilec_ir_verify(x->r.module, err, sizeof err), 0, "verifier: %s", err);
    }
    return x;
}

static __attribute__((unused)) void done(res_t *x)
{
    tilec_arena_destroy(&x->a);
    free(x->src);
    free(x);
}

/* Compiles src expecting an error whose first line contains `msg`, at `line`
 * (0: any line). */
static __attribute__((unused)) void expect_err_e(const char *src, const char *entry, int ndefs, const tilec_define_t *defs, int line,
                         const char *msg)
{
    res_t *x = compile_e(src, entry, ndefs, defs);
    const char *t = tilec_diag_text(&x->d);
    char first[1024];
    size_t n = strcspn(t, "\n");
    cr_assert_eq(x->rc, -1, "expected an error containing '%s'", msg);
    cr_assert(n < sizeof first);
    memcpy(first, t, n);
    first[n] = '\0';
    cr_assert(strstr(first, msg), "diagnostic '%s' does not contain '%s'", first, msg);
    if (line > 0) {
        char pre[32];
        snprintf(pre, sizeof pre, "t.py:%d:", line);
        cr_assert(strncmp(first, pre, strlen(pre)) == 0, "diagnostic '%s' is not at line %d", first, line);
    }
    cr_assert_null(x->r.module);
    done(x);
}

static __attribute__((unused)) void expect_err(const char *src, int line, const char *msg)
{
    expect_err_e(src, NULL, 0, NULL, line, msg);
}

static __attribute__((unused)) tilec_ir_kernel_t *K(res_t *x) { return x->r.module->kernel; }

static __attribute__((unused)) tilec_ir_buffer_t *buf(tilec_ir_kernel_t *k, const char *name)
{
    for (int i = 0; i < k->nbufs; i++)
        if (!strcmp(k->bufs[i]->name, name)) return k->bufs[i];
    cr_assert_fail("no buffer %s", name);
    return NULL;
}

static __attribute__((unused)) int64_t cint(const tilec_ir_expr_t *e)
{
    int64_t v = -999;
    cr_assert(tilec_ir_is_const_int(e, &v), "not a constant int (kind %d)", e ? (int)e->kind : -1);
    return v;
}

static __attribute__((unused)) tilec_ir_stmt_t *nth(tilec_ir_stmt_t *s, int n)
{
    while (s && n-- > 0) s = s->next;
    cr_assert(s, "statement missing");
    return s;
}

static __attribute__((unused)) int count(tilec_ir_stmt_t *s)
{
    int n = 0;
    for (; s; s = s->next) n++;
    return n;
}

/* Count statements of a kind anywhere in a block. */
static __attribute__((unused)) int count_kind(tilec_ir_stmt_t *s, tilec_stmt_kind_t kind)
{
    int n = 0;
    for (; s; s = s->next) {
        if (s->kind == kind) n++;
        if (s->kind == TILEC_ST_FOR) n += count_kind(s->u.loop.body, kind);
        if (s->kind == TILEC_ST_IF) n += count_kind(s->u.cond.then, kind) + count_kind(s->u.cond.els, kind);
    }
    return n;
}

static const char *const GEMM =
    HDR
    "@tilelang.jit(out_idx=[-1])\n"
    "def matmul(M, N, K, block_M=64, block_N=32, block_K=16, dtype=\"float16\", accum_dtype=\"float\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "            A_shared = T.alloc_shared((block_M, block_K), dtype)\n"
    "            B_shared = T.alloc_shared((block_K, block_N), dtype)\n"
    "            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)\n"
    "            T.clear(C_local)\n"
    "            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):\n"
    "                T.copy(A[by * block_M, k * block_K], A_shared)\n"
    "                T.copy(B[k * block_K, bx * block_N], B_shared)\n"
    "                T.gemm(A_shared, B_shared, C_local)\n"
    "            T.copy(C_local, C[by * block_M, bx * block_N])\n"
    "    return main\n";

/* a one-kernel prim_func head: A (64, 64) float16, B (64,) float32, one block of 128 threads;
 * a test appends the kernel body at 8 spaces (its first line is line 7) */
#define KERNEL_HEAD HDR "@T.prim_func\ndef main(A: T.Tensor((64, 64), \"float16\"), B: T.Tensor((64,), \"float32\")):\n" \
    "    with T.Kernel(1, threads=128) as bx:\n"

/* the MMA emitter program of test_frontend_interp.c, EXTRA appended to the kernel */
#define MMA_SRC(EXTRA) HDR \
    "from tilelang.intrinsics.mma_macro_generator import TensorCoreIntrinEmitter\n" \
    "em = TensorCoreIntrinEmitter(a_dtype='float32', b_dtype='float32', accum_dtype='float32',\n" \
    "                             a_transposed=False, b_transposed=True, block_row_warps=2, block_col_warps=1,\n" \
    "                             warp_row_tiles=16, warp_col_tiles=16, chunk=16)\n" \
    "@T.prim_func\n" \
    "def main(A: T.Tensor((32, 32), 'float32'), B: T.Tensor((16, 32), 'float32'), C: T.Tensor((32, 16), 'float32')):\n" \
    "    with T.Kernel(1, threads=64) as bx:\n" \
    "        A_s = T.alloc_shared((32, 16), 'float32')\n" \
    "        B_s = T.alloc_shared((16, 16), 'float32')\n" \
    "        C_s = T.alloc_shared((2, 1, 16, 16), 'float32')\n" \
    "        A_l = T.alloc_local((em.warp_rows * em.local_size_a,), 'float32')\n" \
    "        B_l = T.alloc_local((em.warp_cols * em.local_size_b,), 'float32')\n" \
    "        C_l = T.alloc_local((em.warp_rows * em.warp_cols * em.local_size_out,), 'float32')\n" \
    "        T.clear(C_l)\n" \
    "        for ko in T.serial(2):\n" \
    "            T.copy(A[0, ko * 16], A_s)\n" \
    "            T.copy(B[0, ko * 16], B_s)\n" \
    "            for ki in T.serial(16 // em.micro_size_k):\n" \
    "                em.ldmatrix_a(A_l, A_s, ki)\n" \
    "                em.ldmatrix_b(B_l, B_s, ki)\n" \
    "                em.mma(A_l, B_l, C_l)\n" \
    "        em.stmatrix(C_l, C_s)\n" \
    "        for i, j in T.Parallel(32, 16):\n" \
    "            C[i, j] = C_s[i // 16, j // 16, i % 16, j % 16]\n" EXTRA

#endif
