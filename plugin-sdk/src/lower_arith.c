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

static int mentions_pre(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    return e->kind == TILEC_EX_VAR && e->u.var == w->user ? TILEC_WALK_STOP : TILEC_WALK_CONTINUE;
}

static int mentions(tilec_ir_expr_t *e, const tilec_ir_var_t *v)
{
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.expr_pre = mentions_pre;
    w.user = (void *)v;
    return tilec_ir_walk_expr(&w, &e) != 0;
}

static int is_one(const tilec_ir_expr_t *e)
{
    return e->kind == TILEC_EX_FLOAT && e->u.f == 1.0;
}

static int arith_expr(tilec_ir_walk_t *w, tilec_ir_expr_t **slot)
{
    arith_t *A = w->user;
    tilec_ir_expr_t *e = *slot;
    if (A->n == 0 || A->deeper || e->kind != TILEC_EX_BINARY || e->u.bin.op != TILEC_BIN_DIV ||
        (e->dtype != TILEC_FLOAT32 && e->dtype != TILEC_FLOAT64) || is_one(e->u.bin.a) ||
        mentions(e->u.bin.b, A->loops[A->n - 1]->u.loop.var))
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
