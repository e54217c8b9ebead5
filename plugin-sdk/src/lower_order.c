/*
 * plugin-sdk/src/lower_order.c — the longest blocks first: a grid whose
 * blocks' work grows with bx is launched in the reverse order of bx.
 *
 * On a target with TILEC_TARGET_BLOCK_ORDER, a kernel whose grid's first
 * dimension has a constant extent E >= 2 and one of whose top-level loops
 * runs a trip count n(bx) that depends on bx alone (through let variables
 * assigned once at the top level before it; constants otherwise) and is
 * non-decreasing in bx with n(E - 1) > n(0) — causal attention's key
 * loop, min(blocks, (bx + 1) block_M / block_N) — becomes
 *
 *     grid [bx_launch = E, ...]
 *     body {
 *         assign bx = (E - 1) - bx_launch
 *         ...                                   unchanged
 *     }
 *
 * with bx a let variable.  A GPU starts the blocks of a grid roughly in
 * the order of their linear index (bx fastest), each on the first
 * multiprocessor that frees up: with the heaviest blocks of each row of
 * the grid launched first, the last blocks to start are the lightest, and
 * the tail where a few multiprocessors finish long blocks while the rest
 * idle shrinks (the longest-processing-time-first rule of list
 * scheduling).  Which block computes which tile is a permutation, and
 * blocks share nothing, so no result changes; the interpreter runs every
 * block and the lowering tests compare the lowered program with the
 * original.
 *
 * Left alone: a persistent kernel (its tile loop already orders the tiles),
 * a clustered one (its blocks pair along a grid dimension), one that
 * rasterizes its blocks (T.use_swizzle), a bx already a let variable.
 * Runs last, after every pass that reads the grid.
 */
#include <string.h>

#include "lower_internal.h"

#define ORDER_MAX_EXTENT (1 << 16)
#define ORDER_MAX_DEPTH 8

typedef struct order_eval {
    const tilec_ir_kernel_t *k;
    const tilec_ir_var_t *bx;
    const tilec_ir_stmt_t *stop; /* the loop: assignments before it count */
    int64_t x;                   /* bx's value */
    int depth;
} order_eval_t;

/* the one top-level assignment of let v before stop; NULL when none or several */
static const tilec_ir_stmt_t *sole_assign(const order_eval_t *o, const tilec_ir_var_t *v)
{
    const tilec_ir_stmt_t *found = NULL;
    for (const tilec_ir_stmt_t *s = o->k->body; s && s != o->stop; s = s->next)
        if (s->kind == TILEC_ST_ASSIGN && s->u.assign.var == v) {
            if (found)
                return NULL;
            found = s;
        }
    return found;
}

static int bind(void *ctx, const tilec_ir_var_t *v, int64_t *out)
{
    order_eval_t *o = ctx;
    if (v == o->bx) {
        *out = o->x;
        return 0;
    }
    if (v->kind != TILEC_VAR_LET || o->depth >= ORDER_MAX_DEPTH)
        return -1;
    const tilec_ir_stmt_t *a = sole_assign(o, v);
    if (!a)
        return -1;
    o->depth++;
    int rc = tilec_ir_eval_int(a->u.assign.value, bind, o, out);
    o->depth--;
    return rc;
}

/* 1 when loop L's trip count is a non-decreasing, non-constant function of bx alone */
static int grows_with_bx(const tilec_ir_kernel_t *k, const tilec_ir_stmt_t *L, int64_t E)
{
    order_eval_t o = {k, k->block[0], L, 0, 0};
    int64_t first = 0, prev = 0;
    for (int64_t x = 0; x < E; x++) {
        int64_t n;
        o.x = x;
        if (tilec_ir_eval_int(L->u.loop.extent, bind, &o, &n) != 0)
            return 0;
        if (x == 0)
            first = n;
        else if (n < prev)
            return 0;
        prev = n;
    }
    return prev > first;
}

static int skip_attr(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    int *skip = w->user;
    if (lower_sattr(s, "lower.persistent") || lower_sattr(s, "lower.cluster") || lower_swizzle_panel(s))
        *skip = 1;
    return 0;
}

/* a persistent, clustered or rasterized kernel */
static int left_alone(lower_ctx_t *c)
{
    int skip = 0;
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = skip_attr;
    w.user = &skip;
    if (tilec_ir_walk_block(&w, &c->k->body) < 0)
        return -1;
    return skip;
}

int lower_order(lower_ctx_t *c)
{
    tilec_ir_kernel_t *k = c->k;
    int64_t E;
    if (!(c->t->flags & TILEC_TARGET_BLOCK_ORDER) || k->ngrid < 1 || !k->block[0] ||
        k->block[0]->kind != TILEC_VAR_BLOCK || !tilec_ir_is_const_int(k->grid[0], &E) || E < 2 ||
        E > ORDER_MAX_EXTENT)
        return 0;
    int found = 0;
    for (const tilec_ir_stmt_t *s = k->body; s && !found; s = s->next)
        found = s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_SERIAL && grows_with_bx(k, s, E);
    if (!found)
        return 0;
    int skip = left_alone(c);
    if (skip < 0)
        return lower_oom(c);
    if (skip)
        return 0;
    tilec_ir_var_t *bx = k->block[0];
    tilec_ir_var_t *run = lower_new_loop_var(c, "_launch", bx->name);
    if (!run)
        return -1;
    run->kind = TILEC_VAR_BLOCK;
    tilec_ir_stmt_t *a = lower_stmt_at(c, TILEC_ST_ASSIGN, k->body);
    if (!a)
        return -1;
    a->u.assign.var = bx;
    a->u.assign.value = lower_op(c, TILEC_BIN_SUB, lower_int(c, E - 1), tilec_ir_varref(c->a, run));
    if (!a->u.assign.value)
        return lower_oom(c);
    bx->kind = TILEC_VAR_LET;
    k->block[0] = run;
    a->next = k->body;
    k->body = a;
    return 0;
}
