/*
 * backends/cuda/cuda_zero.c — an accumulator cleared just before its
 * wgmma GEMM: the clear is left out and the GEMM's first k-step scales
 * C by 0 (wgmma's scale-d predicate), so that the registers are not
 * filled with zeros first.
 *
 * Found here, printed by cuda_kit.c: in a statement list, a clear of all
 * of a register fragment C to 0 (a fill, or a nest of parallel loops
 * storing 0 to C[i, j, ...]) directly followed by a GEMM into C that does
 * not clear it itself,
 *
 *     fill C = 0; gemm A, B, C                          scale-d: k0 != 0
 *
 * or an `if` whose one branch is that clear and nothing else, the other
 * branch holding no GEMM and assigning no variable, its condition reading
 * no buffer (so that it reads the same at the GEMM), directly followed by
 * the GEMM,
 *
 *     if (c) { C = 0 } else { C = mask }; gemm A, B, C  scale-d: k0 != 0 || !c
 *
 * (flash attention's key blocks: the causal diagonal and a ragged last
 * block keep their masks, the others start from 0).  The plain form
 * ptxas folds by itself (8 instructions); behind the branch it does not:
 * 64 register moves a thread per key block, causal flash attention on the
 * H200 2.078 -> 2.023 ms (bench/results/attn_session13.md).  The kit
 * folds a clear only when the GEMM it precedes prints as wgmma with
 * register accumulators over the whole block (cuda_kit.c checks at the
 * clear, and fails if the GEMM then prints otherwise).
 * TILEC_CUDA_ZERO_INIT=0 prints every clear.
 */
#include <math.h>

#include "cuda_internal.h"

static int is_zero(const tilec_ir_expr_t *e)
{
    return e && ((e->kind == TILEC_EX_FLOAT && e->u.f == 0.0 && !signbit(e->u.f)) ||
                 (e->kind == TILEC_EX_INT && e->u.i == 0));
}

/* a nest of ndim parallel loops over all of C storing 0 to C[v0, v1, ...] */
static int zero_nest(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *C)
{
    const tilec_ir_var_t *v[8];
    int d = 0;
    if (C->ndim < 1 || C->ndim > 8)
        return 0;
    for (; d < C->ndim; d++) {
        int64_t n, e;
        if (!s || s->next || s->kind != TILEC_ST_FOR || s->u.loop.kind != TILEC_LOOP_PARALLEL ||
            !tilec_ir_is_const_int(s->u.loop.extent, &n) || !tilec_ir_is_const_int(C->shape[d], &e) || n != e)
            return 0;
        v[d] = s->u.loop.var;
        s = s->u.loop.body;
    }
    if (!s || s->next || s->kind != TILEC_ST_STORE || s->u.store.buf != C || !is_zero(s->u.store.value))
        return 0;
    for (d = 0; d < C->ndim; d++) {
        const tilec_ir_expr_t *i = s->u.store.idx[d];
        if (!i || i->kind != TILEC_EX_VAR || i->u.var != v[d])
            return 0;
    }
    return 1;
}

/* s (one statement) sets every element of C to +0 */
static int is_clear(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *C)
{
    if (s->kind == TILEC_ST_FILL) {
        const tilec_ir_region_t *r = &s->u.fill.dst;
        if (r->buf != C || !is_zero(s->u.fill.value))
            return 0;
        for (int d = 0; d < C->ndim; d++) {
            int64_t b, e;
            if (!tilec_ir_is_const_int(r->base[d], &b) || b != 0 || !tilec_ir_is_const_int(C->shape[d], &e) ||
                r->extent[d] != e)
                return 0;
        }
        return 1;
    }
    return zero_nest(s, C);
}

/* e reads no buffer */
static int pure(const tilec_ir_expr_t *e, int depth)
{
    if (!e || depth > 64)
        return !e;
    switch (e->kind) {
    case TILEC_EX_INT: case TILEC_EX_FLOAT: return 1;
    case TILEC_EX_VAR: return 1;
    case TILEC_EX_LOAD: return 0;
    case TILEC_EX_UNARY: return pure(e->u.un.a, depth + 1);
    case TILEC_EX_BINARY: return pure(e->u.bin.a, depth + 1) && pure(e->u.bin.b, depth + 1);
    case TILEC_EX_SELECT:
        return pure(e->u.sel.cond, depth + 1) && pure(e->u.sel.a, depth + 1) && pure(e->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return pure(e->u.cast.a, depth + 1);
    }
    return 0;
}

/* s (a list) holds a gemm or assigns a variable */
static int has_gemm(const tilec_ir_stmt_t *s, int depth)
{
    for (; s; s = s->next) {
        if (depth > 64 || s->kind == TILEC_ST_GEMM || s->kind == TILEC_ST_ASSIGN)
            return 1;
        if ((s->kind == TILEC_ST_FOR && has_gemm(s->u.loop.body, depth + 1)) ||
            (s->kind == TILEC_ST_IF && (has_gemm(s->u.cond.then, depth + 1) || has_gemm(s->u.cond.els, depth + 1))))
            return 1;
    }
    return 0;
}

static void scan(const tilec_ir_stmt_t *s, cuda_zfold_t *z, int *n, int depth)
{
    for (; s && depth < 64; s = s->next) {
        const tilec_ir_stmt_t *g = s->next;
        const tilec_ir_buffer_t *C = g && g->kind == TILEC_ST_GEMM && !g->u.gemm.clear_accum ? g->u.gemm.c : NULL;
        if (C && (!C->layout || C->layout->kind != TILEC_LAYOUT_REGS))
            C = NULL;
        cuda_zfold_t f = {NULL, g, NULL, 0};
        if (C && is_clear(s, C)) {
            f.clear = s;
        } else if (C && s->kind == TILEC_ST_IF && pure(s->u.cond.cond, 0)) {
            const tilec_ir_stmt_t *t = s->u.cond.then, *e = s->u.cond.els;
            if (t && !t->next && is_clear(t, C) && !has_gemm(e, 0)) {
                f.clear = t;
                f.cond = s->u.cond.cond;
                f.in_then = 1;
            } else if (e && !e->next && is_clear(e, C) && !has_gemm(t, 0)) {
                f.clear = e;
                f.cond = s->u.cond.cond;
            }
        }
        if (f.clear && *n < CUDA_MAX_ZFOLD)
            z[(*n)++] = f;
        if (s->kind == TILEC_ST_FOR)
            scan(s->u.loop.body, z, n, depth + 1);
        if (s->kind == TILEC_ST_IF) {
            scan(s->u.cond.then, z, n, depth + 1);
            scan(s->u.cond.els, z, n, depth + 1);
        }
    }
}

int cuda_zero_scan(const tilec_ir_stmt_t *body, cuda_zfold_t *z)
{
    int n = 0;
    scan(body, z, &n, 0);
    return n;
}
