/*
 * simt_range.c — bounds of a kernel's block and loop variables, for the
 * expression emitter's unsigned division and modulo (tilec_cexpr_t
 * var_range, tilec_cexpr_range).
 *
 * A block variable runs over [0, grid - 1], a loop variable over
 * [0, extent - 1] joined over every loop that binds it (the pipeline
 * clones a nest into its prologue and its steady state), when the grid or
 * the extents are bounded; a variable that any statement assigns (a let,
 * the persistent kernel's bx/by) has none, and neither has a symbol.  An
 * extent may name the variable of an enclosing loop, so the table is built
 * up from the constant extents to a fixpoint: a variable gets a range only
 * once every extent it depends on has one, so each bound rests on a
 * finite chain of facts (no circular reasoning).  Computed once per
 * kernel, on the first question.
 *
 * What the kit prints keeps to these ranges: a T.Parallel nest's variables
 * are decomposed from a thread's flat index below the nest's total, a
 * register nest's from a held register's coordinates, a serial loop runs
 * 0 .. extent - 1.
 */
#include <stdint.h>
#include <string.h>

#include "simt_internal.h"
#include "tilec/cexpr.h"
#include "tilec/ir_walk.h"

#define VR_MAX_ROUNDS 8

typedef struct vr_collect {
    tilec_simt_ctx_t *c;
    int n, cap, bad;
    const tilec_ir_var_t **var;
    const tilec_ir_expr_t **ext;
    uint8_t *assigned;          /* [nvars] */
} vr_collect_t;

static int vr_pre(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    vr_collect_t *g = w->user;
    int nv = g->c->k->nvars;
    if (s->kind == TILEC_ST_ASSIGN && s->u.assign.var && s->u.assign.var->id >= 0 && s->u.assign.var->id < nv)
        g->assigned[s->u.assign.var->id] = 1;
    if (s->kind != TILEC_ST_FOR || !s->u.loop.var || !s->u.loop.extent)
        return TILEC_WALK_CONTINUE;
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 32;
        const tilec_ir_var_t **v = tilec_arena_alloc(&g->c->ar, (size_t)cap * sizeof *v);
        const tilec_ir_expr_t **e = tilec_arena_alloc(&g->c->ar, (size_t)cap * sizeof *e);
        if (!v || !e) {
            g->bad = 1;
            return TILEC_WALK_STOP;
        }
        if (g->n) {
            memcpy(v, g->var, (size_t)g->n * sizeof *v);
            memcpy(e, g->ext, (size_t)g->n * sizeof *e);
        }
        g->var = v;
        g->ext = e;
        g->cap = cap;
    }
    g->var[g->n] = s->u.loop.var;
    g->ext[g->n] = s->u.loop.extent;
    g->n++;
    return TILEC_WALK_CONTINUE;
}

static simt_vrange_t vr_none(void)
{
    simt_vrange_t r;
    memset(&r, 0, sizeof r);
    return r;
}

static simt_vrange_t vr_of(int64_t hi)
{
    simt_vrange_t r = vr_none();
    r.known = 1;
    r.hi = hi;
    return r;
}

/* One round: each variable's range from the extents and grid evaluated
 * over the table of the round before (c->vr). */
static void vr_round(tilec_simt_ctx_t *c, const vr_collect_t *g, simt_vrange_t *out, uint8_t *seen)
{
    const tilec_ir_kernel_t *k = c->k;
    tilec_cexpr_t x = simt_cexpr_of(c);
    int nv = k->nvars;
    for (int i = 0; i < nv; i++) {
        out[i] = vr_none();
        seen[i] = 0;
    }
    for (int d = 0; d < k->ngrid && d < 3; d++) {
        const tilec_ir_var_t *v = k->block[d];
        int64_t lo, hi;
        if (!v || v->id < 0 || v->id >= nv || g->assigned[v->id] || v->kind != TILEC_VAR_BLOCK)
            continue;
        if (tilec_cexpr_range(&x, k->grid[d], &lo, &hi) && hi >= 1)
            out[v->id] = vr_of(hi - 1);
    }
    /* a loop variable: the join over its loops; one unbounded loop leaves it without a range */
    for (int i = 0; i < g->n; i++) {
        const tilec_ir_var_t *v = g->var[i];
        int id = v->id;
        if (id < 0 || id >= nv || v->kind != TILEC_VAR_LOOP || g->assigned[id] || seen[id] == 2)
            continue;
        int64_t lo, hi;
        if (!tilec_cexpr_range(&x, g->ext[i], &lo, &hi)) {
            seen[id] = 2;
            out[id] = vr_none();
            continue;
        }
        int64_t top = hi >= 1 ? hi - 1 : 0;
        if (!seen[id] || top > out[id].hi)
            out[id] = vr_of(top);
        seen[id] = 1;
    }
}

static void vr_build(tilec_simt_ctx_t *c)
{
    const tilec_ir_kernel_t *k = c->k;
    int nv = k->nvars;
    c->vr_state = -1;
    if (nv <= 0)
        return;
    vr_collect_t g = {.c = c};
    g.assigned = tilec_arena_alloc(&c->ar, (size_t)nv);
    simt_vrange_t *cur = tilec_arena_alloc(&c->ar, (size_t)nv * sizeof *cur);
    simt_vrange_t *next = tilec_arena_alloc(&c->ar, (size_t)nv * sizeof *next);
    uint8_t *seen = tilec_arena_alloc(&c->ar, (size_t)nv);
    if (!g.assigned || !cur || !next || !seen)
        return;
    memset(g.assigned, 0, (size_t)nv);
    tilec_ir_walk_t w = {.stmt_pre = vr_pre, .user = &g};
    /* a read-only walk: vr_pre edits nothing */
    if (tilec_ir_walk_kernel(&w, (tilec_ir_kernel_t *)(uintptr_t)k) < 0 || g.bad)
        return;
    for (int i = 0; i < nv; i++)
        cur[i] = vr_none();
    c->vr = cur;
    c->vr_state = 1;
    for (int round = 0; round < VR_MAX_ROUNDS; round++) {
        vr_round(c, &g, next, seen);
        if (!memcmp(cur, next, (size_t)nv * sizeof *cur))
            return;
        memcpy(cur, next, (size_t)nv * sizeof *cur);
    }
    c->vr_state = -1; /* no fixpoint: no ranges */
    c->vr = NULL;
}

int simt_var_range(tilec_simt_ctx_t *c, const tilec_ir_var_t *v, int64_t *lo, int64_t *hi)
{
    if (!c->vr_state)
        vr_build(c);
    if (c->vr_state != 1 || !c->vr || !v || v->id < 0 || v->id >= c->k->nvars || c->k->vars[v->id] != v ||
        !c->vr[v->id].known)
        return 0;
    *lo = c->vr[v->id].lo;
    *hi = c->vr[v->id].hi;
    return 1;
}
