/*
 * tests/test_interp.c — the reference interpreter against plain C loops.
 *
 * Each test builds a kernel with the IR constructors of tilec/ir.h, runs it
 * through tilec_interp_run and compares the tensors with a reference
 * written here as ordinary C: tiled GEMM in every transpose combination,
 * reductions, cumsum, softmax, copy boundaries, 16-bit float rounding,
 * integer semantics, atomics, symbols, and the error paths (out-of-bounds,
 * division by zero) that must report instead of crashing.  IR 1.1: a
 * hand-written 2-stage async-copy pipeline (tests/ir/gemm_pipelined.tir)
 * agrees with plain C, and every broken variant of its schedule (missing,
 * misplaced or too lax async_wait, missing commit, prefetch into a pending
 * stage, copies pending at the end, mbarrier misuse) is an error.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "tilec/ir.h"

/* ---- kernel builder ------------------------------------------------------- */

static tilec_arena_t A;
static tilec_ir_kernel_t *K;
static char err[512];

static void kbegin(const char *name)
{
    tilec_arena_init(&A);
    K = tilec_ir_kernel_new(&A, name);
    cr_assert(K);
    K->ngrid = 1;
    err[0] = '\0';
}

static void kend(void)
{
    if (K) {
        tilec_arena_destroy(&A);
        K = NULL;
    }
}

TestSuite(interp, .fini = kend);

static tilec_ir_expr_t *I(int64_t v) { return tilec_ir_int(&A, v, TILEC_INT32); }
static tilec_ir_expr_t *It(int64_t v, tilec_dtype_t t) { return tilec_ir_int(&A, v, t); }
static tilec_ir_expr_t *F(double v) { return tilec_ir_float(&A, v, TILEC_FLOAT32); }
static tilec_ir_expr_t *Ft(double v, tilec_dtype_t t) { return tilec_ir_float(&A, v, t); }
static tilec_ir_expr_t *V(tilec_ir_var_t *v) { return tilec_ir_varref(&A, v); }
static tilec_ir_expr_t *B2(tilec_binop_t op, tilec_ir_expr_t *x, tilec_ir_expr_t *y)
{
    return tilec_ir_binary(&A, op, x, y);
}
static tilec_ir_expr_t *U1(tilec_unop_t op, tilec_ir_expr_t *x) { return tilec_ir_unary(&A, op, x); }
static tilec_ir_expr_t *ADD(tilec_ir_expr_t *x, tilec_ir_expr_t *y) { return B2(TILEC_BIN_ADD, x, y); }
static tilec_ir_expr_t *MUL(tilec_ir_expr_t *x, tilec_ir_expr_t *y) { return B2(TILEC_BIN_MUL, x, y); }

static tilec_ir_buffer_t *bufv(const char *name, tilec_scope_t s, tilec_dtype_t t, int ndim,
                               tilec_ir_expr_t *const *shape)
{
    tilec_ir_buffer_t *b = tilec_ir_buffer_add(&A, K, name, s, t, ndim, shape);
    cr_assert(b);
    return b;
}

/* buf(name, scope, dtype, ndim, extents as int...) */
static tilec_ir_buffer_t *buf(const char *name, tilec_scope_t s, tilec_dtype_t t, int ndim, ...)
{
    tilec_ir_expr_t *shape[TILEC_IR_MAX_DIMS];
    va_list ap;
    va_start(ap, ndim);
    for (int d = 0; d < ndim; d++) {
        shape[d] = I(va_arg(ap, int));
    }
    va_end(ap);
    return bufv(name, s, t, ndim, shape);
}

/* Parameters must be declared before any other buffer. */
#define param(name, t, ...) (K->nparams++, buf(name, TILEC_SCOPE_GLOBAL, t, __VA_ARGS__))

static tilec_ir_expr_t *L(tilec_ir_buffer_t *b, ...)
{
    tilec_ir_expr_t *idx[TILEC_IR_MAX_DIMS];
    va_list ap;
    va_start(ap, b);
    for (int d = 0; d < b->ndim; d++) {
        idx[d] = va_arg(ap, tilec_ir_expr_t *);
    }
    va_end(ap);
    return tilec_ir_load(&A, b, idx);
}

static tilec_ir_expr_t **idxv(int n, va_list ap)
{
    tilec_ir_expr_t **idx = tilec_arena_alloc(&A, sizeof(*idx) * (size_t)(n ? n : 1));
    for (int d = 0; d < n; d++) {
        idx[d] = va_arg(ap, tilec_ir_expr_t *);
    }
    return idx;
}

/* ST(buf, value, indices...) */
static tilec_ir_stmt_t *ST(tilec_ir_buffer_t *b, tilec_ir_expr_t *value, ...)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_STORE);
    va_list ap;
    va_start(ap, value);
    s->u.store.idx = idxv(b->ndim, ap);
    va_end(ap);
    s->u.store.buf = b;
    s->u.store.value = value;
    return s;
}

static tilec_ir_stmt_t *ATOMIC(tilec_atomic_op_t op, tilec_ir_buffer_t *b, tilec_ir_expr_t *value, ...)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_ATOMIC);
    va_list ap;
    va_start(ap, value);
    s->u.atomic.idx = idxv(b->ndim, ap);
    va_end(ap);
    s->u.atomic.op = op;
    s->u.atomic.buf = b;
    s->u.atomic.value = value;
    return s;
}

static tilec_ir_var_t *var(const char *name, tilec_dtype_t t, tilec_var_kind_t kind)
{
    tilec_ir_var_t *v = tilec_ir_var_add(&A, K, name, t, kind);
    cr_assert(v);
    return v;
}

static tilec_ir_var_t *blockvar(int d, tilec_ir_expr_t *extent)
{
    static const char *names[3] = {"bx", "by", "bz"};
    tilec_ir_var_t *v = var(names[d], TILEC_INT32, TILEC_VAR_BLOCK);
    K->grid[d] = extent;
    K->block[d] = v;
    if (K->ngrid < d + 1) {
        K->ngrid = d + 1;
    }
    return v;
}

static tilec_ir_stmt_t *FOR(tilec_ir_var_t *v, tilec_ir_expr_t *extent, tilec_loop_kind_t kind,
                            tilec_ir_stmt_t *body)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_FOR);
    s->u.loop.var = v;
    s->u.loop.extent = extent;
    s->u.loop.kind = kind;
    s->u.loop.body = body;
    return s;
}

static tilec_ir_stmt_t *IF(tilec_ir_expr_t *cond, tilec_ir_stmt_t *then, tilec_ir_stmt_t *els)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_IF);
    s->u.cond.cond = cond;
    s->u.cond.then = then;
    s->u.cond.els = els;
    return s;
}

static tilec_ir_stmt_t *ASSIGN(tilec_ir_var_t *v, tilec_ir_expr_t *value)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_ASSIGN);
    s->u.assign.var = v;
    s->u.assign.value = value;
    return s;
}

/* SEQ(s1, s2, ..., NULL): chains statements (each may be a chain already). */
static tilec_ir_stmt_t *SEQ(tilec_ir_stmt_t *first, ...)
{
    va_list ap;
    tilec_ir_stmt_t *tail = first;
    va_start(ap, first);
    for (tilec_ir_stmt_t *s = va_arg(ap, tilec_ir_stmt_t *); s; s = va_arg(ap, tilec_ir_stmt_t *)) {
        while (tail->next) {
            tail = tail->next;
        }
        tail->next = s;
    }
    va_end(ap);
    return first;
}

static tilec_ir_region_t REG(tilec_ir_buffer_t *b, tilec_ir_expr_t *const *base, const int64_t *ext)
{
    tilec_ir_region_t r;
    int n = b->ndim ? b->ndim : 1;
    r.buf = b;
    r.base = tilec_arena_alloc(&A, sizeof(*r.base) * (size_t)n);
    r.extent = tilec_arena_alloc(&A, sizeof(*r.extent) * (size_t)n);
    for (int d = 0; d < b->ndim; d++) {
        r.base[d] = base[d];
        r.extent[d] = ext[d];
    }
    return r;
}

static tilec_ir_region_t WHOLE(tilec_ir_buffer_t *b)
{
    tilec_ir_expr_t *base[TILEC_IR_MAX_DIMS];
    int64_t ext[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < b->ndim; d++) {
        base[d] = I(0);
        cr_assert(tilec_ir_is_const_int(b->shape[d], &ext[d]));
    }
    return REG(b, base, ext);
}

#define BASE(...) ((tilec_ir_expr_t *[]){__VA_ARGS__})
#define EXT(...) ((int64_t[]){__VA_ARGS__})

static tilec_ir_stmt_t *COPY(tilec_ir_region_t src, tilec_ir_region_t dst)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_COPY);
    s->u.copy.src = src;
    s->u.copy.dst = dst;
    return s;
}

static tilec_ir_stmt_t *FILL(tilec_ir_region_t dst, tilec_ir_expr_t *value)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_FILL);
    s->u.fill.dst = dst;
    s->u.fill.value = value;
    return s;
}

static tilec_ir_stmt_t *GEMM(tilec_ir_buffer_t *a, tilec_ir_buffer_t *b, tilec_ir_buffer_t *c, int ta,
                             int tb, int clear)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_GEMM);
    s->u.gemm.a = a;
    s->u.gemm.b = b;
    s->u.gemm.c = c;
    s->u.gemm.trans_a = ta;
    s->u.gemm.trans_b = tb;
    s->u.gemm.clear_accum = clear;
    return s;
}

static tilec_ir_stmt_t *REDUCE(tilec_reduce_op_t op, tilec_ir_buffer_t *src, tilec_ir_buffer_t *dst,
                               int dim, int clear)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_REDUCE);
    s->u.reduce.op = op;
    s->u.reduce.src = src;
    s->u.reduce.dst = dst;
    s->u.reduce.dim = dim;
    s->u.reduce.clear = clear;
    return s;
}

static tilec_ir_stmt_t *CUMSUM(tilec_ir_buffer_t *src, tilec_ir_buffer_t *dst, int dim, int rev)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&A, TILEC_ST_CUMSUM);
    s->u.cumsum.src = src;
    s->u.cumsum.dst = dst;
    s->u.cumsum.dim = dim;
    s->u.cumsum.reverse = rev;
    return s;
}

static int run(void *const *args, const int64_t *syms)
{
    return tilec_interp_run(K, args, syms, err, sizeof err);
}

static void run_ok(void *const *args, const int64_t *syms)
{
    int rc = run(args, syms);
    cr_assert_eq(rc, 0, "interp failed: %s", err);
}

/* Deterministic uniform values in [-1, 1]. */
static uint64_t rng_state;
static float frand(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(rng_state >> 11) / (double)(1ULL << 53) * 2.0 - 1.0);
}

static void fill_rand(float *x, int n, uint64_t seed)
{
    rng_state = seed;
    for (int i = 0; i < n; i++) {
        x[i] = frand();
    }
}

/* ---- GEMM ----------------------------------------------------------------- */

/* Tiled GEMM over ragged sizes: A [M,K] (or [K,M]), B [K,N] (or [N,K]),
 * C [M,N] float32; inputs in in_t, accumulation in a float32 fragment. */
static void gemm_case(int ta, int tb, tilec_dtype_t in_t)
{
    enum { M = 70, N = 45, KD = 33, BM = 32, BN = 16, BK = 8 };
    kbegin("gemm");
    tilec_ir_buffer_t *Ag = ta ? param("A", in_t, 2, KD, M) : param("A", in_t, 2, M, KD);
    tilec_ir_buffer_t *Bg = tb ? param("B", in_t, 2, N, KD) : param("B", in_t, 2, KD, N);
    tilec_ir_buffer_t *Cg = param("C", TILEC_FLOAT32, 2, M, N);
    tilec_ir_var_t *bx = blockvar(0, I((N + BN - 1) / BN));
    tilec_ir_var_t *by = blockvar(1, I((M + BM - 1) / BM));
    tilec_ir_buffer_t *As = ta ? buf("A_s", TILEC_SCOPE_SHARED, in_t, 2, BK, BM)
                               : buf("A_s", TILEC_SCOPE_SHARED, in_t, 2, BM, BK);
    tilec_ir_buffer_t *Bs = tb ? buf("B_s", TILEC_SCOPE_SHARED, in_t, 2, BN, BK)
                               : buf("B_s", TILEC_SCOPE_SHARED, in_t, 2, BK, BN);
    tilec_ir_buffer_t *Cl = buf("C_l", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, BM, BN);
    tilec_ir_var_t *k = var("k", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_stmt_t *ca =
        ta ? COPY(REG(Ag, BASE(MUL(V(k), I(BK)), MUL(V(by), I(BM))), EXT(BK, BM)), WHOLE(As))
           : COPY(REG(Ag, BASE(MUL(V(by), I(BM)), MUL(V(k), I(BK))), EXT(BM, BK)), WHOLE(As));
    tilec_ir_stmt_t *cb =
        tb ? COPY(REG(Bg, BASE(MUL(V(bx), I(BN)), MUL(V(k), I(BK))), EXT(BN, BK)), WHOLE(Bs))
           : COPY(REG(Bg, BASE(MUL(V(k), I(BK)), MUL(V(bx), I(BN))), EXT(BK, BN)), WHOLE(Bs));
    tilec_ir_stmt_t *loop = FOR(k, I((KD + BK - 1) / BK), TILEC_LOOP_PIPELINED,
                                SEQ(ca, cb, GEMM(As, Bs, Cl, ta, tb, 0), NULL));
    loop->u.loop.num_stages = 3;
    K->body = SEQ(FILL(WHOLE(Cl), F(0)), loop,
                  COPY(WHOLE(Cl), REG(Cg, BASE(MUL(V(by), I(BM)), MUL(V(bx), I(BN))), EXT(BM, BN))),
                  NULL);

    static float af[M * KD], bf[KD * N], c[M * N];
    static uint16_t ah[M * KD], bh[KD * N];
    fill_rand(af, M * KD, 1);
    fill_rand(bf, KD * N, 2);
    int half = in_t != TILEC_FLOAT32;
    for (int i = 0; i < M * KD; i++) {
        ah[i] = in_t == TILEC_BFLOAT16 ? tilec_f32_to_bf16(af[i]) : tilec_f32_to_f16(af[i]);
        if (half) {
            af[i] = in_t == TILEC_BFLOAT16 ? tilec_bf16_to_f32(ah[i]) : tilec_f16_to_f32(ah[i]);
        }
    }
    for (int i = 0; i < KD * N; i++) {
        bh[i] = in_t == TILEC_BFLOAT16 ? tilec_f32_to_bf16(bf[i]) : tilec_f32_to_f16(bf[i]);
        if (half) {
            bf[i] = in_t == TILEC_BFLOAT16 ? tilec_bf16_to_f32(bh[i]) : tilec_f16_to_f32(bh[i]);
        }
    }
    for (int i = 0; i < M * N; i++) {
        c[i] = 999.0f;
    }
    void *args[3] = {half ? (void *)ah : (void *)af, half ? (void *)bh : (void *)bf, c};
    run_ok(args, NULL);
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double ref = 0;
            for (int kk = 0; kk < KD; kk++) {
                double a = ta ? af[kk * M + i] : af[i * KD + kk];
                double b = tb ? bf[j * KD + kk] : bf[kk * N + j];
                ref += a * b;
            }
            cr_assert(fabs(c[i * N + j] - ref) <= 1e-5 * (1 + fabs(ref)),
                      "C[%d,%d] = %g, expected %g (ta=%d tb=%d)", i, j, c[i * N + j], ref, ta, tb);
        }
    }
}

Test(interp, gemm_f32_nn) { gemm_case(0, 0, TILEC_FLOAT32); }
Test(interp, gemm_f32_nt) { gemm_case(0, 1, TILEC_FLOAT32); }
Test(interp, gemm_f32_tn) { gemm_case(1, 0, TILEC_FLOAT32); }
Test(interp, gemm_f32_tt) { gemm_case(1, 1, TILEC_FLOAT32); }
Test(interp, gemm_f16_nn) { gemm_case(0, 0, TILEC_FLOAT16); }
Test(interp, gemm_f16_nt) { gemm_case(0, 1, TILEC_FLOAT16); }
Test(interp, gemm_f16_tn) { gemm_case(1, 0, TILEC_FLOAT16); }
Test(interp, gemm_f16_tt) { gemm_case(1, 1, TILEC_FLOAT16); }
Test(interp, gemm_bf16_nn) { gemm_case(0, 0, TILEC_BFLOAT16); }

/* C starts at 5; clear_accum discards it, otherwise it accumulates. */
Test(interp, gemm_clear_accum)
{
    for (int clear = 0; clear < 2; clear++) {
        kbegin("gemm_clear");
        tilec_ir_buffer_t *Ag = param("A", TILEC_FLOAT32, 2, 3, 4);
        tilec_ir_buffer_t *Bg = param("B", TILEC_FLOAT32, 2, 4, 2);
        tilec_ir_buffer_t *Cg = param("C", TILEC_FLOAT32, 2, 3, 2);
        blockvar(0, I(1));
        tilec_ir_buffer_t *Cl = buf("C_l", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, 3, 2);
        K->body = SEQ(FILL(WHOLE(Cl), F(5)), GEMM(Ag, Bg, Cl, 0, 0, clear), GEMM(Ag, Bg, Cl, 0, 0, 0),
                      COPY(WHOLE(Cl), WHOLE(Cg)), NULL);
        float a[12], b[8], c[6];
        for (int i = 0; i < 12; i++) {
            a[i] = (float)(i % 5) - 2;
        }
        for (int i = 0; i < 8; i++) {
            b[i] = (float)(i % 3) + 0.5f;
        }
        void *args[3] = {a, b, c};
        run_ok(args, NULL);
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 2; j++) {
                double ref = 0;
                for (int kk = 0; kk < 4; kk++) {
                    ref += a[i * 4 + kk] * b[kk * 2 + j];
                }
                ref = 2 * ref + (clear ? 0 : 5);
                cr_assert_float_eq(c[i * 2 + j], ref, 1e-6, "clear=%d C[%d,%d]=%g want %g", clear, i,
                                   j, c[i * 2 + j], ref);
            }
        }
        kend();
    }
}

/* int8 inputs, int32 accumulation: exact. */
Test(interp, gemm_int8)
{
    kbegin("gemm_i8");
    tilec_ir_buffer_t *Ag = param("A", TILEC_INT8, 2, 5, 7);
    tilec_ir_buffer_t *Bg = param("B", TILEC_INT8, 2, 6, 7);
    tilec_ir_buffer_t *Cg = param("C", TILEC_INT32, 2, 5, 6);
    blockvar(0, I(1));
    K->body = GEMM(Ag, Bg, Cg, 0, 1, 1);
    int8_t a[35], b[42];
    int32_t c[30];
    for (int i = 0; i < 35; i++) {
        a[i] = (int8_t)(i * 37 % 256 - 128);
    }
    for (int i = 0; i < 42; i++) {
        b[i] = (int8_t)(i * 91 % 256 - 128);
    }
    void *args[3] = {a, b, c};
    run_ok(args, NULL);
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 6; j++) {
            int32_t ref = 0;
            for (int kk = 0; kk < 7; kk++) {
                ref += a[i * 7 + kk] * b[j * 7 + kk];
            }
            cr_assert_eq(c[i * 6 + j], ref);
        }
    }
}

/* ---- reductions ----------------------------------------------------------- */

enum { RR = 5, RC = 7 };

static void reduce_case(tilec_reduce_op_t op, int dim, int clear)
{
    int dn = dim == 0 ? RC : RR; /* dst length */
    kbegin("reduce");
    tilec_ir_buffer_t *X = param("X", TILEC_FLOAT32, 2, RR, RC);
    tilec_ir_buffer_t *D = param("D", TILEC_FLOAT32, 1, dn);
    tilec_ir_buffer_t *O = param("O", TILEC_FLOAT32, 1, dn);
    blockvar(0, I(1));
    tilec_ir_buffer_t *S = buf("S", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, RR, RC);
    tilec_ir_buffer_t *R = buf("R", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, dn);
    K->body = SEQ(COPY(WHOLE(X), WHOLE(S)), COPY(WHOLE(D), WHOLE(R)), REDUCE(op, S, R, dim, clear),
                  COPY(WHOLE(R), WHOLE(O)), NULL);
    float x[RR * RC], d[RC], o[RC];
    fill_rand(x, RR * RC, 7 + (uint64_t)op);
    fill_rand(d, dn, 99);
    for (int t = 0; t < dn; t++) {
        d[t] *= 2.5f; /* so that dst's old value wins for some elements */
    }
    void *args[3] = {x, d, o};
    run_ok(args, NULL);
    for (int t = 0; t < dn; t++) {
        int n = dim == 0 ? RR : RC;
        double acc = op == TILEC_RED_MAX ? -INFINITY : op == TILEC_RED_MIN ? INFINITY : 0;
        for (int j = 0; j < n; j++) {
            double v = dim == 0 ? x[j * RC + t] : x[t * RC + j];
            switch (op) {
            case TILEC_RED_SUM: acc += v; break;
            case TILEC_RED_ABSSUM: acc += fabs(v); break;
            case TILEC_RED_MAX: acc = v > acc ? v : acc; break;
            case TILEC_RED_MIN: acc = v < acc ? v : acc; break;
            case TILEC_RED_ABSMAX: acc = fabs(v) > acc ? fabs(v) : acc; break;
            }
        }
        if (!clear) {
            double old = d[t];
            if (op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM) {
                acc += old;
            } else if (op == TILEC_RED_MIN) {
                acc = old < acc ? old : acc;
            } else {
                acc = old > acc ? old : acc;
            }
        }
        cr_assert_float_eq(o[t], (float)acc, 1e-6, "op %d dim %d clear %d: O[%d]=%g want %g", (int)op,
                           dim, clear, t, o[t], acc);
    }
    kend();
}

static void reduce_all(tilec_reduce_op_t op)
{
    for (int dim = 0; dim < 2; dim++) {
        for (int clear = 0; clear < 2; clear++) {
            reduce_case(op, dim, clear);
        }
    }
}

Test(interp, reduce_sum) { reduce_all(TILEC_RED_SUM); }
Test(interp, reduce_max) { reduce_all(TILEC_RED_MAX); }
Test(interp, reduce_min) { reduce_all(TILEC_RED_MIN); }
Test(interp, reduce_abssum) { reduce_all(TILEC_RED_ABSSUM); }
Test(interp, reduce_absmax) { reduce_all(TILEC_RED_ABSMAX); }

/* ---- cumsum --------------------------------------------------------------- */

enum { CR = 4, CC = 6 };

static void cumsum_case(int dim, int rev, int inplace)
{
    kbegin("cumsum");
    tilec_ir_buffer_t *X = param("X", TILEC_FLOAT32, 2, CR, CC);
    tilec_ir_buffer_t *O = param("O", TILEC_FLOAT32, 2, CR, CC);
    blockvar(0, I(1));
    tilec_ir_buffer_t *S = buf("S", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, CR, CC);
    tilec_ir_buffer_t *R = inplace ? S : buf("R", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, CR, CC);
    K->body = SEQ(COPY(WHOLE(X), WHOLE(S)), CUMSUM(S, R, dim, rev), COPY(WHOLE(R), WHOLE(O)), NULL);
    float x[CR * CC], o[CR * CC];
    fill_rand(x, CR * CC, 5);
    void *args[2] = {x, o};
    run_ok(args, NULL);
    for (int i = 0; i < CR; i++) {
        for (int j = 0; j < CC; j++) {
            double ref = 0;
            if (dim == 0) {
                for (int t = rev ? i : 0; rev ? t < CR : t <= i; t++) {
                    ref += x[t * CC + j];
                }
            } else {
                for (int t = rev ? j : 0; rev ? t < CC : t <= j; t++) {
                    ref += x[i * CC + t];
                }
            }
            cr_assert_float_eq(o[i * CC + j], (float)ref, 1e-6, "dim %d rev %d inplace %d [%d,%d]", dim,
                               rev, inplace, i, j);
        }
    }
    kend();
}

Test(interp, cumsum_forward)
{
    cumsum_case(0, 0, 0);
    cumsum_case(1, 0, 0);
}

Test(interp, cumsum_reverse)
{
    cumsum_case(0, 1, 0);
    cumsum_case(1, 1, 0);
}

Test(interp, cumsum_in_place)
{
    for (int dim = 0; dim < 2; dim++) {
        cumsum_case(dim, 0, 1);
        cumsum_case(dim, 1, 1);
    }
}

/* ---- softmax -------------------------------------------------------------- */

Test(interp, row_softmax)
{
    enum { R = 8, C = 20 };
    kbegin("softmax");
    tilec_ir_buffer_t *X = param("X", TILEC_FLOAT32, 2, R, C);
    tilec_ir_buffer_t *Y = param("Y", TILEC_FLOAT32, 2, R, C);
    blockvar(0, I(1));
    tilec_ir_buffer_t *S = buf("S", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, R, C);
    tilec_ir_buffer_t *m = buf("m", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, R);
    tilec_ir_buffer_t *s = buf("s", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, R);
    tilec_ir_var_t *i = var("i", TILEC_INT32, TILEC_VAR_LOOP), *j = var("j", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_var_t *i2 = var("i2", TILEC_INT32, TILEC_VAR_LOOP), *j2 = var("j2", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_stmt_t *expo = FOR(
        i, I(R), TILEC_LOOP_PARALLEL,
        FOR(j, I(C), TILEC_LOOP_PARALLEL,
            ST(S, U1(TILEC_UN_EXP, B2(TILEC_BIN_SUB, L(S, V(i), V(j)), L(m, V(i)))), V(i), V(j))));
    tilec_ir_stmt_t *norm = FOR(
        i2, I(R), TILEC_LOOP_PARALLEL,
        FOR(j2, I(C), TILEC_LOOP_PARALLEL,
            ST(S, B2(TILEC_BIN_DIV, L(S, V(i2), V(j2)), L(s, V(i2))), V(i2), V(j2))));
    K->body = SEQ(COPY(WHOLE(X), WHOLE(S)), REDUCE(TILEC_RED_MAX, S, m, 1, 1), expo,
                  REDUCE(TILEC_RED_SUM, S, s, 1, 1), norm, COPY(WHOLE(S), WHOLE(Y)), NULL);
    float x[R * C], y[R * C];
    fill_rand(x, R * C, 11);
    for (int t = 0; t < R * C; t++) {
        x[t] *= 8;
    }
    void *args[2] = {x, y};
    run_ok(args, NULL);
    for (int r = 0; r < R; r++) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < C; c++) {
            mx = fmax(mx, x[r * C + c]);
        }
        for (int c = 0; c < C; c++) {
            sum += exp(x[r * C + c] - mx);
        }
        double rowsum = 0;
        for (int c = 0; c < C; c++) {
            double ref = exp(x[r * C + c] - mx) / sum;
            cr_assert(fabs(y[r * C + c] - ref) <= 1e-6, "Y[%d,%d]=%g want %g", r, c, y[r * C + c], ref);
            rowsum += y[r * C + c];
        }
        cr_assert(fabs(rowsum - 1) < 1e-5);
    }
}

/* ---- copy, fill, dtypes --------------------------------------------------- */

/* G [5,5] -> S [4,4] from corner (3,3): rows/cols 5,6 read zero; then
 * S -> O at corner (2,2): only O[2..4][2..4] written.  A second copy from
 * corner (-1,-1) reads zero on the first row and column. */
Test(interp, copy_boundaries)
{
    kbegin("copy_edges");
    tilec_ir_buffer_t *G = param("G", TILEC_FLOAT32, 2, 5, 5);
    tilec_ir_buffer_t *O = param("O", TILEC_FLOAT32, 2, 5, 5);
    tilec_ir_buffer_t *P = param("P", TILEC_FLOAT32, 2, 4, 4);
    tilec_ir_buffer_t *Q = param("Q", TILEC_FLOAT32, 2, 4, 4);
    blockvar(0, I(1));
    tilec_ir_buffer_t *S = buf("S", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, 4, 4);
    tilec_ir_buffer_t *T = buf("T", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, 4, 4);
    K->body = SEQ(FILL(WHOLE(S), F(42)), COPY(REG(G, BASE(I(3), I(3)), EXT(4, 4)), WHOLE(S)),
                  COPY(WHOLE(S), REG(O, BASE(I(2), I(2)), EXT(4, 4))), COPY(WHOLE(S), WHOLE(P)),
                  COPY(REG(G, BASE(I(-1), I(-1)), EXT(4, 4)), WHOLE(T)), COPY(WHOLE(T), WHOLE(Q)), NULL);
    float g[25], o[25], p[16], q[16];
    for (int t = 0; t < 25; t++) {
        g[t] = (float)t + 1;
        o[t] = -7;
    }
    void *args[4] = {g, o, p, q};
    run_ok(args, NULL);
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            float want = (3 + i < 5 && 3 + j < 5) ? g[(3 + i) * 5 + 3 + j] : 0.0f;
            cr_assert_eq(p[i * 4 + j], want, "S[%d,%d]=%g want %g", i, j, p[i * 4 + j], want);
            float wq = (i >= 1 && j >= 1) ? g[(i - 1) * 5 + j - 1] : 0.0f;
            cr_assert_eq(q[i * 4 + j], wq, "T[%d,%d]=%g want %g", i, j, q[i * 4 + j], wq);
        }
    }
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 5; j++) {
            float want = (i >= 2 && j >= 2) ? p[(i - 2) * 4 + j - 2] : -7.0f;
            cr_assert_eq(o[i * 5 + j], want, "O[%d,%d]=%g want %g", i, j, o[i * 5 + j], want);
        }
    }
}

/* A copy that drops extent-1 dimensions: a row of a 3-D tensor into a 1-D
 * fragment and back into a column of a 2-D tensor, converting dtypes. */
Test(interp, copy_rank_change_and_convert)
{
    kbegin("copy_rank");
    tilec_ir_buffer_t *X = param("X", TILEC_FLOAT32, 3, 2, 3, 6);
    tilec_ir_buffer_t *Y = param("Y", TILEC_FLOAT16, 2, 6, 2);
    blockvar(0, I(1));
    tilec_ir_buffer_t *R = buf("R", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, 6);
    K->body = SEQ(COPY(REG(X, BASE(I(1), I(2), I(0)), EXT(1, 1, 6)), WHOLE(R)),
                  COPY(WHOLE(R), REG(Y, BASE(I(0), I(1)), EXT(6, 1))), NULL);
    float x[36];
    uint16_t y[12];
    fill_rand(x, 36, 3);
    memset(y, 0, sizeof y);
    void *args[2] = {x, y};
    run_ok(args, NULL);
    for (int t = 0; t < 6; t++) {
        cr_assert_eq(y[t * 2 + 1], tilec_f32_to_f16(x[1 * 18 + 2 * 6 + t]));
        cr_assert_eq(y[t * 2], 0);
    }
}

Test(interp, copy_size_mismatch_is_error)
{
    kbegin("copy_bad");
    tilec_ir_buffer_t *X = param("X", TILEC_FLOAT32, 1, 8);
    blockvar(0, I(1));
    tilec_ir_buffer_t *R = buf("R", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, 6);
    K->body = COPY(WHOLE(X), WHOLE(R));
    float x[8] = {0};
    void *args[1] = {x};
    cr_assert_eq(run(args, NULL), -1);
    cr_assert(strstr(err, "differ in size"), "%s", err);
}

Test(interp, fill_region)
{
    kbegin("fill");
    tilec_ir_buffer_t *O = param("O", TILEC_INT32, 2, 4, 4);
    blockvar(0, I(1));
    K->body = SEQ(FILL(WHOLE(O), It(1, TILEC_INT32)),
                  FILL(REG(O, BASE(I(2), I(1)), EXT(3, 2)), It(9, TILEC_INT32)), NULL);
    int32_t o[16];
    void *args[1] = {o};
    run_ok(args, NULL);
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++) {
            cr_assert_eq(o[i * 4 + j], (i >= 2 && j >= 1 && j < 3) ? 9 : 1);
        }
    }
}

Test(interp, float16_store_rounds)
{
    kbegin("f16");
    tilec_ir_buffer_t *H = param("H", TILEC_FLOAT16, 1, 3);
    tilec_ir_buffer_t *Fb = param("Fb", TILEC_FLOAT32, 1, 2);
    blockvar(0, I(1));
    K->body = SEQ(ST(H, Ft(1.0 / 3.0, TILEC_FLOAT64), I(0)), ST(H, Ft(65520.0, TILEC_FLOAT64), I(1)),
                  /* read back through a load: the stored (rounded) value */
                  ST(H, MUL(B2(TILEC_BIN_SUB, tilec_ir_cast(&A, TILEC_FLOAT64, L(H, I(0))),
                               Ft(1.0 / 3.0, TILEC_FLOAT64)), Ft(1048576.0, TILEC_FLOAT64)), I(2)),
                  ST(Fb, L(H, I(0)), I(0)), ST(Fb, Ft(1.0 / 3.0, TILEC_FLOAT64), I(1)), NULL);
    uint16_t h[3];
    float f[2];
    void *args[2] = {h, f};
    run_ok(args, NULL);
    cr_assert_eq(h[0], 0x3555, "1/3 in f16: 0x%04x", h[0]);
    cr_assert_eq(h[1], 0x7c00, "65520 overflows to inf: 0x%04x", h[1]);
    cr_assert_eq(f[0], tilec_f16_to_f32(0x3555));
    cr_assert_neq(f[0], (float)(1.0 / 3.0));
    cr_assert_eq(f[1], (float)(1.0 / 3.0));
    /* (rounded - exact) * 2^20 is about -85.3: nonzero only if the load saw the rounded value */
    cr_assert_eq(h[2], tilec_f64_to_f16(((double)tilec_f16_to_f32(0x3555) - 1.0 / 3.0) * 1048576.0));
    cr_assert(tilec_f16_to_f32(h[2]) < -85.0f && tilec_f16_to_f32(h[2]) > -86.0f);
}

Test(interp, bfloat16_store_rounds)
{
    kbegin("bf16");
    tilec_ir_buffer_t *H = param("H", TILEC_BFLOAT16, 1, 3);
    blockvar(0, I(1));
    K->body = SEQ(ST(H, Ft(1.0 / 3.0, TILEC_FLOAT64), I(0)),
                  ST(H, Ft(1.0 + 1.0 / 256, TILEC_FLOAT64), I(1)), /* tie: to even, 1.0 */
                  ST(H, Ft(1.0 + 3.0 / 256, TILEC_FLOAT64), I(2)), /* tie: to even, 1 + 2/128 */
                  NULL);
    uint16_t h[3];
    void *args[1] = {h};
    run_ok(args, NULL);
    cr_assert_eq(h[0], 0x3eab, "1/3 in bf16: 0x%04x", h[0]);
    cr_assert_eq(h[1], 0x3f80, "0x%04x", h[1]);
    cr_assert_eq(h[2], 0x3f82, "0x%04x", h[2]);
}

/* ---- integers ------------------------------------------------------------- */

Test(interp, int32_exact_arithmetic)
{
    kbegin("ints");
    tilec_ir_buffer_t *O = param("O", TILEC_INT32, 1, 12);
    blockvar(0, I(1));
    tilec_ir_expr_t *m7 = It(-7, TILEC_INT32);
    int64_t want[12] = {-4, 1, -3, -1, -4, -1, 81, INT32_MIN, 4, -3, 2, -2};
    K->body = SEQ(ST(O, B2(TILEC_BIN_FLOORDIV, m7, I(2)), I(0)),
                  ST(O, B2(TILEC_BIN_FLOORMOD, m7, I(2)), I(1)),
                  ST(O, B2(TILEC_BIN_DIV, m7, I(2)), I(2)),
                  ST(O, B2(TILEC_BIN_FLOORMOD, I(7), I(-2)), I(3)),
                  ST(O, B2(TILEC_BIN_FLOORDIV, I(7), I(-2)), I(4)),
                  ST(O, B2(TILEC_BIN_FLOORMOD, m7, I(-2)), I(5)),
                  ST(O, B2(TILEC_BIN_POW, I(3), I(4)), I(6)),
                  ST(O, ADD(I(INT32_MAX), I(1)), I(7)), /* wraps at 32 bits */
                  ST(O, B2(TILEC_BIN_FLOORDIV, I(-8), I(-2)), I(8)),
                  ST(O, B2(TILEC_BIN_DIV, It(-7, TILEC_INT32), It(2, TILEC_INT32)), I(9)),
                  ST(O, B2(TILEC_BIN_MAX, I(-5), I(2)), I(10)),
                  ST(O, B2(TILEC_BIN_MIN, I(-2), I(2)), I(11)), NULL);
    int32_t o[12];
    void *args[1] = {o};
    run_ok(args, NULL);
    for (int t = 0; t < 12; t++) {
        cr_assert_eq(o[t], want[t], "O[%d]=%d want %lld", t, o[t], (long long)want[t]);
    }
}

Test(interp, small_and_unsigned_ints)
{
    kbegin("uints");
    tilec_ir_buffer_t *U = param("U", TILEC_UINT64, 1, 3);
    tilec_ir_buffer_t *B = param("B", TILEC_INT8, 1, 3);
    blockvar(0, I(1));
    tilec_ir_expr_t *big = It(-1, TILEC_UINT64); /* all ones: UINT64_MAX */
    K->body = SEQ(ST(U, B2(TILEC_BIN_DIV, big, It(3, TILEC_UINT64)), I(0)),
                  ST(U, tilec_ir_cast(&A, TILEC_UINT64, B2(TILEC_BIN_GT, It(-1, TILEC_UINT64), It(1, TILEC_UINT64))), I(1)),
                  ST(U, B2(TILEC_BIN_SUB, It(1, TILEC_UINT64), It(2, TILEC_UINT64)), I(2)),
                  ST(B, ADD(It(100, TILEC_INT8), It(100, TILEC_INT8)), I(0)),       /* wraps */
                  ST(B, tilec_ir_cast(&A, TILEC_INT8, I(200)), I(1)),
                  ST(B, tilec_ir_cast(&A, TILEC_INT8, Ft(-3.9, TILEC_FLOAT32)), I(2)), NULL);
    uint64_t u[3];
    int8_t b[3];
    void *args[2] = {u, b};
    run_ok(args, NULL);
    cr_assert_eq(u[0], UINT64_MAX / 3);
    cr_assert_eq(u[1], 1);
    cr_assert_eq(u[2], UINT64_MAX);
    cr_assert_eq(b[0], -56);
    cr_assert_eq(b[1], -56);
    cr_assert_eq(b[2], -3);
}

/* ---- control flow, variables, blocks -------------------------------------- */

Test(interp, let_if_else_serial)
{
    kbegin("ctl");
    tilec_ir_buffer_t *O = param("O", TILEC_FLOAT32, 1, 1);
    blockvar(0, I(1));
    tilec_ir_var_t *s = var("s", TILEC_FLOAT32, TILEC_VAR_LET);
    tilec_ir_var_t *i = var("i", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_expr_t *even = B2(TILEC_BIN_EQ, B2(TILEC_BIN_FLOORMOD, V(i), I(2)), I(0));
    K->body = SEQ(ASSIGN(s, F(0)),
                  FOR(i, I(10), TILEC_LOOP_SERIAL,
                      IF(even, ASSIGN(s, ADD(V(s), tilec_ir_cast(&A, TILEC_FLOAT32, V(i)))),
                         ASSIGN(s, B2(TILEC_BIN_SUB, V(s), F(1))))),
                  ST(O, V(s), I(0)), NULL);
    float o[1];
    void *args[1] = {o};
    run_ok(args, NULL);
    cr_assert_eq(o[0], 15.0f);
}

/* Fragments start fresh in every block: each block adds into F[0]. */
Test(interp, onchip_fresh_per_block)
{
    kbegin("fresh");
    tilec_ir_buffer_t *O = param("O", TILEC_FLOAT32, 1, 3);
    tilec_ir_var_t *bx = blockvar(0, I(3));
    tilec_ir_buffer_t *Fr = buf("Fr", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, 1);
    tilec_ir_buffer_t *Vb = buf("Vb", TILEC_SCOPE_VAR, TILEC_FLOAT32, 1, 1);
    K->body = SEQ(ST(Fr, ADD(L(Fr, I(0)), tilec_ir_cast(&A, TILEC_FLOAT32, ADD(V(bx), I(1)))), I(0)),
                  ST(Vb, ADD(L(Vb, I(0)), L(Fr, I(0))), I(0)), ST(O, L(Vb, I(0)), V(bx)), NULL);
    float o[3];
    void *args[1] = {o};
    run_ok(args, NULL);
    cr_assert_eq(o[0], 1.0f);
    cr_assert_eq(o[1], 2.0f);
    cr_assert_eq(o[2], 3.0f);
}

Test(interp, atomics_over_blocks)
{
    kbegin("atomics");
    tilec_ir_buffer_t *Acc = param("Acc", TILEC_FLOAT32, 1, 2);
    tilec_ir_buffer_t *Mx = param("Mx", TILEC_INT32, 1, 2);
    tilec_ir_var_t *bx = blockvar(0, I(8));
    tilec_ir_expr_t *v = B2(TILEC_BIN_SUB, MUL(V(bx), I(3)), I(5));
    K->body = SEQ(ATOMIC(TILEC_ATOMIC_ADD, Acc, tilec_ir_cast(&A, TILEC_FLOAT32, ADD(V(bx), I(1))), I(1)),
                  ATOMIC(TILEC_ATOMIC_MAX, Mx, v, I(0)), ATOMIC(TILEC_ATOMIC_MIN, Mx, v, I(1)), NULL);
    float acc[2] = {-1, 0.5f};
    int32_t mx[2] = {-100, 100};
    void *args[2] = {acc, mx};
    run_ok(args, NULL);
    cr_assert_eq(acc[0], -1.0f);
    cr_assert_eq(acc[1], 36.5f);
    cr_assert_eq(mx[0], 16);
    cr_assert_eq(mx[1], -5);
}

Test(interp, select_and_cast)
{
    kbegin("select");
    tilec_ir_buffer_t *O = param("O", TILEC_FLOAT32, 1, 3);
    tilec_ir_buffer_t *X = param("X", TILEC_FLOAT32, 1, 2);
    tilec_ir_buffer_t *N = param("N", TILEC_INT32, 1, 4);
    blockvar(0, I(1));
    /* The unchosen side loads X[100]: it must not be evaluated. */
    tilec_ir_expr_t *sel1 = tilec_ir_select(&A, B2(TILEC_BIN_LT, I(1), I(2)), F(10), L(X, I(100)));
    tilec_ir_expr_t *sel2 = tilec_ir_select(&A, B2(TILEC_BIN_GT, I(1), I(2)), L(X, I(-1)), L(X, I(1)));
    tilec_ir_expr_t *third = tilec_ir_cast(&A, TILEC_FLOAT16, Ft(1.0 / 3.0, TILEC_FLOAT64));
    K->body = SEQ(ST(O, sel1, I(0)), ST(O, sel2, I(1)), ST(O, tilec_ir_cast(&A, TILEC_FLOAT32, third), I(2)),
                  ST(N, tilec_ir_cast(&A, TILEC_INT32, F(-2.7)), I(0)),
                  ST(N, tilec_ir_cast(&A, TILEC_INT32, tilec_ir_cast(&A, TILEC_BOOL, F(0.5))), I(1)),
                  ST(N, tilec_ir_cast(&A, TILEC_INT32, tilec_ir_cast(&A, TILEC_UINT8, I(300))), I(2)),
                  ST(N, tilec_ir_cast(&A, TILEC_INT32, U1(TILEC_UN_NOT, B2(TILEC_BIN_AND,
                        B2(TILEC_BIN_LT, I(0), I(1)), B2(TILEC_BIN_GT, I(0), I(1))))), I(3)),
                  NULL);
    float o[3], x[2] = {4, 5};
    int32_t n[4];
    void *args[3] = {o, x, n};
    run_ok(args, NULL);
    cr_assert_eq(o[0], 10.0f);
    cr_assert_eq(o[1], 5.0f);
    cr_assert_eq(o[2], tilec_f16_to_f32(0x3555));
    cr_assert_eq(n[0], -2);
    cr_assert_eq(n[1], 1);
    cr_assert_eq(n[2], 44);
    cr_assert_eq(n[3], 1);
}

/* `i < n and X[i] > 0` must not load X[n]. */
Test(interp, and_short_circuits)
{
    kbegin("and");
    tilec_ir_buffer_t *X = param("X", TILEC_FLOAT32, 1, 4);
    tilec_ir_buffer_t *C = param("C", TILEC_INT32, 1, 1);
    blockvar(0, I(1));
    tilec_ir_var_t *i = var("i", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_expr_t *cond = B2(TILEC_BIN_AND, B2(TILEC_BIN_LT, V(i), I(4)), B2(TILEC_BIN_GT, L(X, V(i)), F(0)));
    K->body = FOR(i, I(6), TILEC_LOOP_SERIAL, IF(cond, ST(C, ADD(L(C, I(0)), I(1)), I(0)), NULL));
    float x[4] = {1, -1, 2, 3};
    int32_t c[1] = {0};
    void *args[2] = {x, c};
    run_ok(args, NULL);
    cr_assert_eq(c[0], 3);
}

Test(interp, math_unops)
{
    kbegin("math");
    tilec_ir_buffer_t *O = param("O", TILEC_FLOAT64, 1, 12);
    blockvar(0, I(1));
    tilec_unop_t ops[12] = {TILEC_UN_EXP,  TILEC_UN_EXP2, TILEC_UN_LOG,     TILEC_UN_LOG2,
                            TILEC_UN_SQRT, TILEC_UN_RSQRT, TILEC_UN_TANH,   TILEC_UN_SIGMOID,
                            TILEC_UN_ABS,  TILEC_UN_NEG,  TILEC_UN_FLOOR,   TILEC_UN_CEIL};
    double x[12] = {0.7, -1.3, 2.5, 10.0, 2.0, 4.0, -0.4, 0.3, -2.25, 1.5, -1.5, -1.5};
    double want[12] = {exp(0.7), exp2(-1.3), log(2.5), log2(10.0), sqrt(2.0), 0.5, tanh(-0.4),
                       1.0 / (1.0 + exp(-0.3)), 2.25, -1.5, -2.0, -1.0};
    tilec_ir_stmt_t *body = NULL;
    for (int t = 0; t < 12; t++) {
        tilec_ir_stmt_t *s = ST(O, U1(ops[t], Ft(x[t], TILEC_FLOAT64)), I(t));
        body = body ? SEQ(body, s, NULL) : s;
    }
    tilec_ir_stmt_t *pw = ST(O, B2(TILEC_BIN_POW, Ft(2.0, TILEC_FLOAT64), Ft(0.5, TILEC_FLOAT64)), I(0));
    K->body = body;
    double o[12];
    void *args[1] = {o};
    run_ok(args, NULL);
    for (int t = 0; t < 12; t++) {
        cr_assert(fabs(o[t] - want[t]) <= 1e-15 * (1 + fabs(want[t])), "op %d: %g want %g", t, o[t], want[t]);
    }
    K->body = pw;
    run_ok(args, NULL);
    cr_assert(fabs(o[0] - sqrt(2.0)) < 1e-15);
}

/* ---- symbols -------------------------------------------------------------- */

/* X has shape (m,), the grid is ceildiv(m, 4), and a fragment is (m,) too. */
Test(interp, dynamic_symbol_shape_and_grid)
{
    kbegin("dyn");
    tilec_ir_var_t *m = var("m", TILEC_INT32, TILEC_VAR_SYM);
    tilec_ir_buffer_t *X = bufv("X", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, (tilec_ir_expr_t *[]){V(m)});
    K->nparams = 1;
    tilec_ir_var_t *bx = blockvar(0, B2(TILEC_BIN_FLOORDIV, ADD(V(m), I(3)), I(4)));
    tilec_ir_buffer_t *Fr = bufv("Fr", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, (tilec_ir_expr_t *[]){V(m)});
    tilec_ir_var_t *i = var("i", TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_expr_t *pos = ADD(MUL(V(bx), I(4)), V(i));
    K->body = SEQ(COPY(REG(X, BASE(I(0)), EXT(1)), REG(Fr, BASE(I(0)), EXT(1))),
                  FOR(i, I(4), TILEC_LOOP_PARALLEL,
                      IF(B2(TILEC_BIN_LT, pos, V(m)), ST(X, MUL(L(X, pos), F(2)), pos), NULL)),
                  NULL);
    float *x = malloc(10 * sizeof *x);
    for (int t = 0; t < 10; t++) {
        x[t] = (float)t;
    }
    int64_t syms[1] = {10};
    void *args[1] = {x};
    run_ok(args, syms);
    for (int t = 0; t < 10; t++) {
        cr_assert_eq(x[t], 2.0f * (float)t);
    }
    syms[0] = -1;
    cr_assert_eq(run(args, syms), -1);
    cr_assert(strstr(err, "negative"), "%s", err);
    free(x);
}

Test(interp, negative_shape_is_error)
{
    kbegin("negshape");
    tilec_ir_var_t *m = var("m", TILEC_INT32, TILEC_VAR_SYM);
    bufv("X", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, (tilec_ir_expr_t *[]){B2(TILEC_BIN_SUB, V(m), I(20))});
    K->nparams = 1;
    blockvar(0, I(1));
    float x[1];
    void *args[1] = {x};
    int64_t syms[1] = {10};
    cr_assert_eq(run(args, syms), -1);
    cr_assert(strstr(err, "negative extent"), "%s", err);
}

/* ---- errors --------------------------------------------------------------- */

Test(interp, oob_store_reports_error)
{
    kbegin("oob");
    tilec_ir_buffer_t *O = param("O", TILEC_FLOAT32, 1, 4);
    tilec_ir_var_t *bx = blockvar(0, I(2));
    K->body = ST(O, F(3), ADD(MUL(V(bx), I(4)), I(1)));
    float o[4] = {0, 0, 0, 0};
    void *args[1] = {o};
    cr_assert_eq(run(args, NULL), -1);
    cr_assert_str_eq(err, "out-of-bounds store O[5] (shape 4) in block (1,0,0)");
    cr_assert_eq(o[1], 3.0f); /* block 0 ran */
}

Test(interp, oob_load_reports_error)
{
    kbegin("oob2");
    tilec_ir_buffer_t *Ab = param("A", TILEC_FLOAT32, 2, 128, 128);
    tilec_ir_buffer_t *O = param("O", TILEC_FLOAT32, 1, 1);
    blockvar(0, I(2));
    tilec_ir_buffer_t *S = buf("S", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, 4, 4);
    tilec_ir_stmt_t *st = ST(O, L(Ab, I(3), I(130)), I(0));
    st->line = 12;
    st->col = 5;
    K->body = st;
    static float a[128 * 128];
    float o[1];
    void *args[2] = {a, o};
    cr_assert_eq(run(args, NULL), -1);
    cr_assert_str_eq(err, "out-of-bounds load A[3, 130] (shape 128x128) in block (0,0,0) at line 12:5");
    /* A copy into a shared buffer past its end is an error too (not boundary-safe). */
    K->body = COPY(REG(Ab, BASE(I(0), I(0)), EXT(4, 4)), REG(S, BASE(I(2), I(0)), EXT(4, 4)));
    cr_assert_eq(run(args, NULL), -1);
    cr_assert(strstr(err, "out-of-bounds copy write S[4, 0]"), "%s", err);
    K->body = COPY(REG(S, BASE(I(1), I(1)), EXT(4, 1)), REG(Ab, BASE(I(0), I(0)), EXT(4, 1)));
    cr_assert_eq(run(args, NULL), -1);
    cr_assert(strstr(err, "out-of-bounds copy read S[4, 1]"), "%s", err);
}

Test(interp, division_by_zero_reports_error)
{
    kbegin("div0");
    tilec_ir_buffer_t *O = param("O", TILEC_INT32, 1, 2);
    tilec_ir_var_t *bx = blockvar(0, I(1));
    tilec_ir_expr_t *zero = B2(TILEC_BIN_SUB, V(bx), V(bx));
    K->body = ST(O, B2(TILEC_BIN_DIV, I(7), zero), I(0));
    int32_t o[2];
    void *args[1] = {o};
    cr_assert_eq(run(args, NULL), -1);
    cr_assert(strstr(err, "division by zero"), "%s", err);
    K->body = ST(O, B2(TILEC_BIN_FLOORMOD, I(7), B2(TILEC_BIN_SUB, V(bx), V(bx))), I(1));
    cr_assert_eq(run(args, NULL), -1);
    cr_assert(strstr(err, "modulo by zero"), "%s", err);
}

Test(interp, deep_expression_is_error_not_crash)
{
    kbegin("deep");
    tilec_ir_buffer_t *O = param("O", TILEC_FLOAT32, 1, 1);
    blockvar(0, I(1));
    tilec_ir_expr_t *e = F(1);
    for (int t = 0; t < 100000; t++) {
        e = U1(TILEC_UN_NEG, e);
    }
    K->body = ST(O, e, I(0));
    float o[1];
    void *args[1] = {o};
    cr_assert_eq(run(args, NULL), -1);
    cr_assert(strstr(err, "nested deeper"), "%s", err);
}

Test(interp, missing_argument_is_error)
{
    kbegin("noarg");
    param("O", TILEC_FLOAT32, 1, 4);
    blockvar(0, I(1));
    void *args[1] = {NULL};
    cr_assert_eq(run(args, NULL), -1);
    cr_assert(strstr(err, "no data for parameter O"), "%s", err);
}

/* ---- print ---------------------------------------------------------------- */

static void redirect(void) { cr_redirect_stdout(); }

Test(interp, print_scalar_and_buffer, .init = redirect)
{
    kbegin("print");
    tilec_ir_buffer_t *X = param("X", TILEC_FLOAT32, 2, 2, 2);
    blockvar(0, I(1));
    tilec_ir_stmt_t *p1 = tilec_ir_stmt(&A, TILEC_ST_PRINT);
    p1->u.print.msg = "x";
    p1->u.print.value = ADD(I(1), I(2));
    tilec_ir_stmt_t *p2 = tilec_ir_stmt(&A, TILEC_ST_PRINT);
    p2->u.print.msg = "X";
    p2->u.print.buf = X;
    K->body = SEQ(p1, p2, tilec_ir_stmt(&A, TILEC_ST_SYNC), NULL);
    float x[4] = {1, 2.5f, 3, 4};
    void *args[1] = {x};
    run_ok(args, NULL);
    fflush(stdout);
    cr_assert_stdout_eq_str("x: 3\nX: [[1, 2.5], [3, 4]]\n");
}

/* ---- IR 1.1: lowered pipelines -------------------------------------------- */

/* tests/ir/gemm_pipelined.tir (a hand-written 2-stage cp.async-style GEMM,
 * C[64,64] = A[64,128] @ B[128,64] in float16 -> float32), optionally with
 * one textual edit (from -> to, which must occur), run by the interpreter.
 * Returns the interpreter's status; err holds its message. */
static int run_pipeline(const char *from, const char *to, float *c_out)
{
    static const char *path = "tests/ir/gemm_pipelined.tir";
    char *text, *edited, rerr[512];
    long n;
    FILE *f = fopen(path, "rb");
    tilec_arena_t a;
    tilec_ir_module_t *m;
    if (!f) {
        f = fopen("../tests/ir/gemm_pipelined.tir", "rb");
    }
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = malloc((size_t)n + 1);
    cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    edited = text;
    if (from) {
        char *at = strstr(text, from);
        cr_assert_not_null(at, "fixture lacks '%s'", from);
        edited = malloc((size_t)n + strlen(to) + 1);
        memcpy(edited, text, (size_t)(at - text));
        strcpy(edited + (at - text), to);
        strcat(edited, at + strlen(from));
    }
    tilec_arena_init(&a);
    cr_assert_eq(tilec_ir_read(&a, edited, strlen(edited), &m, rerr, sizeof rerr), 0, "%s", rerr);
    uint16_t *ha = malloc(64 * 128 * 2), *hb = malloc(128 * 64 * 2);
    float *fa = malloc(64 * 128 * 4);
    fill_rand(fa, 64 * 128, 7);
    for (int i = 0; i < 64 * 128; i++) {
        ha[i] = tilec_f32_to_f16(fa[i]);
    }
    fill_rand(fa, 64 * 128, 8);
    for (int i = 0; i < 64 * 128; i++) {
        hb[i] = tilec_f32_to_f16(fa[i]);
    }
    memset(c_out, 0, 64 * 64 * 4);
    void *args[3] = {ha, hb, c_out};
    int rc = tilec_interp_run(m->kernel, args, NULL, err, sizeof err);
    if (rc == 0) {
        /* plain C reference on the same float16 values */
        for (int i = 0; i < 64; i++) {
            for (int j = 0; j < 64; j++) {
                double acc = 0;
                for (int k = 0; k < 128; k++) {
                    acc += (double)tilec_f16_to_f32(ha[i * 128 + k]) * tilec_f16_to_f32(hb[k * 64 + j]);
                }
                cr_assert_float_eq(c_out[i * 64 + j], acc, 1e-4 * (1 + fabs(acc)), "C[%d][%d] = %g, expected %g", i,
                                   j, c_out[i * 64 + j], acc);
            }
        }
    }
    free(ha);
    free(hb);
    free(fa);
    if (edited != text) {
        free(edited);
    }
    free(text);
    tilec_arena_destroy(&a);
    return rc;
}

static void pipeline_fails(const char *from, const char *to, const char *what)
{
    float *c = malloc(64 * 64 * 4);
    cr_assert_eq(run_pipeline(from, to, c), -1, "a wrong schedule passed (%s -> %s)", from, to);
    cr_assert_not_null(strstr(err, what), "message '%s' lacks '%s'", err, what);
    free(c);
}

Test(interp, pipeline_two_stages_correct)
{
    float *c = malloc(64 * 64 * 4);
    cr_assert_eq(run_pipeline(NULL, NULL, c), 0, "%s", err);
    /* stage indices via gemm leading indices and copies into stage 1 really ran */
    cr_assert_neq(c[0], 0.0f);
    free(c);
}

Test(interp, pipeline_missing_wait_is_caught)
{
    /* no wait in the loop: the gemm reads a stage whose copy is pending */
    pipeline_fails("      async_wait 1\n", "",
                   "read of A_s[0, 0, 0] while an async copy to it is pending (missing async_wait)");
}

Test(interp, pipeline_misplaced_wait_is_caught)
{
    /* the wait after the gemm: same read of a pending stage */
    pipeline_fails("      async_wait 1\n      barrier\n      gemm", "      barrier\n      gemm", "while an async copy to it is pending");
    /* waiting for too little (the newest 2 groups may stay pending) */
    pipeline_fails("async_wait 1", "async_wait 2", "read of A_s[0, 0, 0] while an async copy");
}

Test(interp, pipeline_missing_commit_is_caught)
{
    /* the loop's copies never form a group, so "all but the newest group"
     * is nothing: even the prologue's stage 0 is still pending */
    pipeline_fails("      }\n      async_commit\n", "      }\n", "read of A_s[0, 0, 0] while an async copy to it is pending");
}

Test(interp, pipeline_overwrite_of_pending_stage_is_caught)
{
    /* prefetching into the stage being waited for overwrites a pending write */
    pipeline_fails("copy_async A_s[((k + 1) % 2)", "copy_async A_s[(k % 2)",
                   "write of A_s[0, 0, 0] while an async copy to it is pending");
}

Test(interp, pending_at_kernel_end_is_caught)
{
    /* drop the final wait and commit nothing after the last prefetch */
    pipeline_fails("    async_wait 0\n", "    copy_async A_s[0, 0 +: 64, 0 +: 32] <- A[0 +: 64, 0 +: 32]\n",
                   "1 async copy to A_s still pending at the end of the block (missing async_commit and async_wait)");
}

Test(interp, mbarrier_phases)
{
    /* a wait whose phase can never complete: no arrive before it */
    pipeline_fails("      barrier_arrive full[(k % 2)]\n", "",
                   "barrier_wait full[0], 0 can never complete: 0 phases done, 0 of 1 arrivals");
    /* the wrong parity */
    pipeline_fails("((k // 2) % 2)", "(((k // 2) + 1) % 2)", "can never complete: 1 phases done");
    /* use before barrier_init */
    pipeline_fails("    barrier_init full\n", "", "barrier_arrive of full[0] before barrier_init");
}

Test(interp, gemm_leading_index_selects_the_stage)
{
    /* reading stage 1 where stage 0 holds the data gives a wrong C or a
     * pending read; reading both stages right is the correct case above */
    pipeline_fails("gemm A_s[(k % 2)]", "gemm A_s[((k + 1) % 2)]", "while an async copy to it is pending");
}

Test(interp, bitwise_ops)
{
    kbegin("bits");
    tilec_ir_buffer_t *o = buf("o", TILEC_SCOPE_GLOBAL, TILEC_INT32, 1, 6);
    tilec_ir_buffer_t *u = buf("u", TILEC_SCOPE_GLOBAL, TILEC_UINT8, 1, 1);
    K->nparams = 2;
    blockvar(0, I(1));
    K->body = SEQ(ST(o, B2(TILEC_BIN_BITAND, I(12), I(10)), I(0)), ST(o, B2(TILEC_BIN_BITOR, I(12), I(3)), I(1)),
                  ST(o, B2(TILEC_BIN_BITXOR, I(12), I(10)), I(2)), ST(o, B2(TILEC_BIN_SHL, I(3), I(30)), I(3)),
                  ST(o, B2(TILEC_BIN_SHR, I(-64), I(3)), I(4)), ST(o, B2(TILEC_BIN_SHR, I(64), I(3)), I(5)),
                  ST(u, B2(TILEC_BIN_SHL, It(200, TILEC_UINT8), It(1, TILEC_UINT8)), I(0)), NULL);
    int32_t out[6] = {0};
    uint8_t uo = 0;
    void *args[2] = {out, &uo};
    run_ok(args, NULL);
    cr_assert_eq(out[0], 8);
    cr_assert_eq(out[1], 15);
    cr_assert_eq(out[2], 6);
    cr_assert_eq(out[3], INT32_MIN + (1 << 30)); /* 3 << 30 wraps */
    cr_assert_eq(out[4], -8);
    cr_assert_eq(out[5], 8);
    cr_assert_eq(uo, 144); /* 400 wraps to uint8 */
    K->body = ST(o, B2(TILEC_BIN_SHL, I(1), I(32)), I(0));
    cr_assert_eq(run(args, NULL), -1);
    cr_assert_not_null(strstr(err, "shift count 32 out of range for int32"), "%s", err);
}
