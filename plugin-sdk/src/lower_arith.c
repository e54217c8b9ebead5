/*
 * plugin-sdk/src/lower_arith.c — arithmetic the GPU prefers: a division
 * by a value that stays the same along a parallel loop becomes a
 * multiplication by its reciprocal.
 *
 * Inside a T.Parallel loop, `a / b` (float32 or float64) whose divisor
 * does not mention the innermost enclosing parallel loop's variable
 * (softmax's x[i, j] / row_sum[i], a division by a constant) becomes
 * `a * (1 / b)`.  The reciprocal is then the same expression for every
 * iteration of that loop, so a printer or its compiler computes it once
 * per row instead of once per element: on a GPU a division is a
 * special-function reciprocal plus a refinement, and the special-function
 * units are what a row softmax runs out of (one exp2 and one division per
 * element against 16 results a clock per multiprocessor).  The result
 * differs from the division by at most about one unit in the last place
 * (two roundings instead of one), well inside the float tolerances the
 * checks use; float16 and bfloat16 divisions are left alone (their one
 * rounding is already coarse).
 *
 * Anywhere in the kernel, an integer floor division `a // d` by a positive
 * constant whose dividend is provably non-negative (block and loop
 * variables, non-negative constants, sums, products, mins and maxes of
 * such, quotients by positive constants, any `x % d` by a positive
 * constant) becomes the truncating division, which is the same there: a
 * printer's floor division needs a remainder, a sign test and a select
 * after the quotient, and the index arithmetic of a gathered copy
 * (T.im2col's rows and taps, lower_gather.c) has several per 16 bytes.
 */
#include <string.h>

#include "lower_internal.h"

#define ARITH_MAX_NEST 64

typedef struct arith {
    lower_ctx_t *c;
    const tilec_ir_stmt_t *loops[ARITH_MAX_NEST]; /* enclosing statements that are parallel loops */
    int n;
    int deeper;               /* parallel loops past ARITH_MAX_NEST (left alone) */
} arith_t;

static int is_one(const tilec_ir_expr_t *e)
{
    return e->kind == TILEC_EX_FLOAT && e->u.f == 1.0;
}

static int pos_const(const tilec_ir_expr_t *e)
{
    int64_t v;
    return tilec_ir_is_const_int(e, &v) && v > 0;
}

/* e >= 0 for every value of its variables (integers, no overflow) */
static int nonneg(const tilec_ir_expr_t *e, int depth)
{
    if (!e || depth > 64 || !tilec_dtype_is_int(e->dtype))
        return 0;
    switch (e->kind) {
    case TILEC_EX_INT: return e->u.i >= 0;
    case TILEC_EX_VAR: return e->u.var->kind == TILEC_VAR_BLOCK || e->u.var->kind == TILEC_VAR_LOOP;
    case TILEC_EX_CAST:
        return tilec_dtype_is_int(e->u.cast.a->dtype) &&
               tilec_dtype_size(e->dtype) >= tilec_dtype_size(e->u.cast.a->dtype) && nonneg(e->u.cast.a, depth + 1);
    case TILEC_EX_SELECT: return nonneg(e->u.sel.a, depth + 1) && nonneg(e->u.sel.b, depth + 1);
    case TILEC_EX_BINARY:
        switch (e->u.bin.op) {
        case TILEC_BIN_ADD:
        case TILEC_BIN_MUL:
        case TILEC_BIN_MIN:
        case TILEC_BIN_MAX: return nonneg(e->u.bin.a, depth + 1) && nonneg(e->u.bin.b, depth + 1);
        case TILEC_BIN_DIV:
        case TILEC_BIN_FLOORDIV: return pos_const(e->u.bin.b) && nonneg(e->u.bin.a, depth + 1);
        case TILEC_BIN_FLOORMOD: return pos_const(e->u.bin.b);
        default: return 0;
        }
    default: return 0;
    }
}

static int arith_expr(tilec_ir_walk_t *w, tilec_ir_expr_t **slot)
{
    arith_t *A = w->user;
    tilec_ir_expr_t *e = *slot;
    if (e->kind == TILEC_EX_BINARY && e->u.bin.op == TILEC_BIN_FLOORDIV && tilec_dtype_is_int(e->dtype) &&
        pos_const(e->u.bin.b) && nonneg(e->u.bin.a, 0)) {
        tilec_ir_expr_t *q = tilec_ir_binary(A->c->a, TILEC_BIN_DIV, e->u.bin.a, e->u.bin.b);
        if (!q)
            return lower_oom(A->c);
        *slot = q;
        return TILEC_WALK_CONTINUE;
    }
    if (A->n == 0 || A->deeper || e->kind != TILEC_EX_BINARY || e->u.bin.op != TILEC_BIN_DIV ||
        (e->dtype != TILEC_FLOAT32 && e->dtype != TILEC_FLOAT64) || is_one(e->u.bin.a) ||
        lower_mentions(e->u.bin.b, A->loops[A->n - 1]->u.loop.var))
        return TILEC_WALK_CONTINUE;
    tilec_ir_expr_t *one = tilec_ir_float(A->c->a, 1.0, e->dtype);
    tilec_ir_expr_t *r = one ? tilec_ir_binary(A->c->a, TILEC_BIN_DIV, one, e->u.bin.b) : NULL;
    tilec_ir_expr_t *m = r ? tilec_ir_binary(A->c->a, TILEC_BIN_MUL, e->u.bin.a, r) : NULL;
    if (!m)
        return lower_oom(A->c);
    *slot = m;
    return TILEC_WALK_CONTINUE;
}

static int arith_pre(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    arith_t *A = w->user;
    if (s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PARALLEL) {
        if (A->n < ARITH_MAX_NEST)
            A->loops[A->n++] = s;
        else
            A->deeper++;
    }
    return TILEC_WALK_CONTINUE;
}

static int arith_post(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    arith_t *A = w->user;
    if (s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PARALLEL) {
        if (A->deeper)
            A->deeper--;
        else if (A->n > 0)
            A->n--;
    }
    return TILEC_WALK_CONTINUE;
}

int lower_arith(lower_ctx_t *c)
{
    arith_t A;
    memset(&A, 0, sizeof A);
    A.c = c;
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = arith_pre;
    w.stmt_post = arith_post;
    w.expr_post = arith_expr;
    w.user = &A;
    if (tilec_ir_walk_block(&w, &c->k->body) < 0)
        return c->code != TILEC_LOWER_OK ? -1 : lower_oom(c);
    return 0;
}
