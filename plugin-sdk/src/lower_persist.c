/*
 * plugin-sdk/src/lower_persist.c — persistent kernels: a grid of P blocks,
 * each looping over output tiles, whose ring of bulk copies runs on from
 * one tile into the next.
 *
 * On a target whose description names persistent_blocks = P > 0, a
 * kernel of NT > P tiles (a grid of one or two constant dimensions, bx and
 * by) whose top-level body is the tma pass's ring on mbarriers
 *
 *     PRE...                                  register fragments and tensors only
 *     barrier_init F; barrier
 *     for p in serial(S - 1) { if (p < n) { REFILL(p) } }       the prologue
 *     for k in serial(n) attrs {lower.stages = S} {             n >= S, constant
 *         barrier_wait F[k % S], (k / S) % 2
 *         gemm ...                                           (only gemms besides)
 *         if (k + S - 1 < n) { REFILL(k + S - 1) }
 *     }
 *     POST...                                 register fragments and tensors only
 *
 * (either order of the wait and the refill) becomes
 *
 *     barrier_init F; barrier
 *     for p in serial(S - 1) { if (p < n) { REFILL(p) at tile(0) } }
 *     for t in serial((NT - pb + P - 1) // P) attrs {lower.persistent = (NT, P)} {
 *         bx = X(t); by = Y(t)
 *         PRE...
 *         for k in serial(n) {
 *             barrier_wait F[(t n + k) % S], ((t n + k) / S) % 2
 *             gemm ... (stage (t n + k) % S)
 *             if (k + S - 1 < n) { REFILL(k + S - 1), stage (t n + k + S - 1) % S }
 *             else { if (t + 1 < trips) {
 *                 bx_next = X(t + 1); by_next = Y(t + 1)
 *                 REFILL(k + S - 1 - n) at bx_next, by_next, the same stage } }
 *         }
 *         POST...
 *     }
 *
 * with the grid [pb = P]: block pb runs tiles pb, pb + P, ...; bx and by
 * become let variables, X(t), Y(t) the coordinates of tile pb + t P in the
 * order the blocks would have run: row-major over the grid (bx fastest),
 * or, after a T.use_swizzle(panel) at the top of the body, down panels of
 * `panel` block columns (the SIMT kit's rasterization, the last panel
 * narrower).  "at tile(0)" substitutes X(0), Y(0).  The coordinates are
 * computed once a tile, not in every refill: on the H200 the swizzled
 * order's divisions in each refill's addresses (thread 0's, before the
 * copies) made the GEMM 8192^3 9% slower than the one-tile kernel.
 * The ring's load counter runs on across tiles (load j of tile t is load
 * t n + j), so its stages and parities continue, and the last S - 1
 * iterations of tile t fetch the first S - 1 k-blocks of tile t + 1: the
 * copy engine streams the next tile while this one's gemms finish and its
 * epilogue (POST) stores the result.
 *
 * Nothing else changes hands between tiles: PRE and POST touch only
 * register fragments (layout REGS), local variables and tensors, and
 * hold no barrier, so the block barriers the barrier pass placed still
 * order every shared access (the refill's barrier before the copies that
 * overwrite what an earlier gemm read, also across the tile boundary:
 * the deferred wgmma wait after the loop completes the last gemm of a
 * tile before the first refill of the next).  The interpreter runs the
 * P blocks' loops in program order, so a wrong stage or parity fails
 * there.  A printer may launch exactly P blocks (the IR's grid).
 *
 * The pass runs last: the barriers, the warp specialization (a
 * specialized loop is left alone) and the split are decided on the
 * one-tile kernel.
 */
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"

typedef struct ps_kernel {
    tilec_ir_stmt_t *init, *bar, *pro, *loop;  /* the ring's statements in the body */
    tilec_ir_stmt_t *pre, *pre_end;            /* [pre, init): statements before the ring */
    tilec_ir_mbarrier_t *F;
    int S;
    int64_t n, panel;
} ps_kernel_t;

/* ---- the form ---------------------------------------------------------------- */

/* a statement whose accesses the block needs no barrier for across tiles:
 * register fragments, per-thread buffers and tensors, no block-level sync */
typedef struct onchip {
    int bad;
} onchip_t;

static void onchip_acc(void *user, tilec_ir_stmt_t *s, tilec_ir_buffer_t *b, int how)
{
    (void)s;
    (void)how;
    onchip_t *o = user;
    if (b->scope == TILEC_SCOPE_SHARED ||
        (b->scope == TILEC_SCOPE_FRAGMENT && (!b->layout || b->layout->kind != TILEC_LAYOUT_REGS)))
        o->bad = 1;
}

static int kind_pre(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    (void)w;
    switch (s->kind) {
    case TILEC_ST_FOR: case TILEC_ST_IF: case TILEC_ST_STORE: case TILEC_ST_ASSIGN: case TILEC_ST_COPY:
    case TILEC_ST_FILL: case TILEC_ST_HINT:
        return TILEC_WALK_CONTINUE;
    default:
        return TILEC_WALK_STOP;
    }
}

static int register_only(tilec_ir_stmt_t *s)
{
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = kind_pre;
    tilec_ir_stmt_t *one = s, *keep = s->next;
    s->next = NULL;
    int rc = tilec_ir_walk_block(&w, &one);
    s->next = keep;
    if (rc != 0)
        return 0;
    onchip_t o = {0};
    return lower_accesses(s, onchip_acc, &o) == 0 && !o.bad;
}

/* the refill's statements: an expecting arrival on F, block barriers, copies on F */
static int refill_list(const tilec_ir_stmt_t *t, const tilec_ir_mbarrier_t *F)
{
    if (!t || t->kind != TILEC_ST_MBAR_ARRIVE || t->u.mbar.bar != F || !t->u.mbar.tx)
        return 0;
    int ncopies = 0;
    for (t = t->next; t; t = t->next) {
        if (t->kind == TILEC_ST_BARRIER)
            continue;
        if (t->kind != TILEC_ST_COPY_ASYNC || t->u.copy.bar != F || t->u.copy.dst.buf->ndim < 1)
            return 0;
        ncopies++;
    }
    return ncopies > 0;
}

static int is_refill_if(const tilec_ir_stmt_t *s, const tilec_ir_mbarrier_t *F)
{
    return s && s->kind == TILEC_ST_IF && !s->u.cond.els && refill_list(s->u.cond.then, F);
}

/* the ring loop: waits on F, gemms, one refill */
static int ring_loop(const tilec_ir_stmt_t *s, ps_kernel_t *p)
{
    const tilec_ir_attr_t *sa = s->kind == TILEC_ST_FOR ? lower_sattr(s, "lower.stages") : NULL;
    if (!sa || sa->kind != TILEC_ATTR_INT || sa->i < 2 || s->u.loop.kind != TILEC_LOOP_SERIAL ||
        lower_sattr(s, "lower.warpspec") || !tilec_ir_is_const_int(s->u.loop.extent, &p->n) || p->n < sa->i)
        return 0;
    p->S = (int)sa->i;
    int nwait = 0, nrefill = 0, ngemm = 0;
    for (const tilec_ir_stmt_t *t = s->u.loop.body; t; t = t->next) {
        if (t->kind == TILEC_ST_MBAR_WAIT && t->u.mbar.bar == p->F)
            nwait++;
        else if (t->kind == TILEC_ST_GEMM)
            ngemm++;
        else if (is_refill_if(t, p->F))
            nrefill++;
        else
            return 0;
    }
    return nwait == 1 && nrefill == 1 && ngemm >= 1;
}

/* the prologue: for p in serial(S - 1) { if (...) { refill } } */
static int prologue(const tilec_ir_stmt_t *s, const ps_kernel_t *p)
{
    int64_t e;
    return s && s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_SERIAL &&
           tilec_ir_is_const_int(s->u.loop.extent, &e) && e == p->S - 1 && s->u.loop.body &&
           !s->u.loop.body->next && is_refill_if(s->u.loop.body, p->F);
}

static int fits(tilec_ir_kernel_t *k, ps_kernel_t *p)
{
    memset(p, 0, sizeof *p);
    tilec_ir_stmt_t *s = k->body;
    p->pre = s;
    for (; s && s->kind != TILEC_ST_MBAR_INIT; s = s->next) {
        if (s->kind == TILEC_ST_HINT) {
            if (!p->panel)
                p->panel = lower_swizzle_panel(s);
            continue;
        }
        if (!register_only(s))
            return 0;
    }
    p->pre_end = s;
    if (!s || s->u.mbar.bar->size < 2)
        return 0;
    p->init = s;
    p->F = s->u.mbar.bar;
    if (!(p->bar = s->next) || p->bar->kind != TILEC_ST_BARRIER || !(p->pro = p->bar->next) ||
        !(p->loop = p->pro->next) || !ring_loop(p->loop, p) || !prologue(p->pro, p) ||
        p->S != p->F->size)
        return 0;
    for (s = p->loop->next; s; s = s->next)
        if (s->kind != TILEC_ST_HINT && !register_only(s))
            return 0;
    return 1;
}

/* ---- substitution -------------------------------------------------------------- */

#define PS_NSUB 3
typedef struct ps_sub {
    const tilec_ir_var_t *v[PS_NSUB];
    tilec_ir_expr_t *by[PS_NSUB];
    int n;
} ps_sub_t;

/* a new tree: e with each m->v[i] replaced by m->by[i], in order */
static tilec_ir_expr_t *sub(lower_ctx_t *c, const tilec_ir_expr_t *e, const ps_sub_t *m)
{
    if (!e)
        return NULL;
    tilec_ir_expr_t *r = lower_subst(c, e, NULL, NULL);
    for (int i = 0; r && i < m->n; i++)
        r = lower_subst(c, r, m->v[i], m->by[i]);
    return r;
}

static int sub_slot(lower_ctx_t *c, tilec_ir_expr_t **slot, const ps_sub_t *m)
{
    if (!*slot)
        return 0;
    return (*slot = sub(c, *slot, m)) ? 0 : -1;
}

static int sub_array(lower_ctx_t *c, tilec_ir_expr_t ***arr, int n, const ps_sub_t *m)
{
    if (!*arr || n < 1)
        return 0;
    tilec_ir_expr_t **a = tilec_arena_alloc(c->a, sizeof *a * (size_t)n);
    if (!a)
        return lower_oom(c);
    for (int i = 0; i < n; i++)
        if (!(a[i] = sub(c, (*arr)[i], m)))
            return -1;
    *arr = a;
    return 0;
}

/* every expression of the statements of list (nested ones too), in place */
static int sub_list(lower_ctx_t *c, tilec_ir_stmt_t *list, const ps_sub_t *m, int depth)
{
    if (depth > TILEC_IR_MAX_DEPTH)
        return lower_fail(c, TILEC_LOWER_E_INVALID, "statements nested too deeply");
    for (tilec_ir_stmt_t *s = list; s; s = s->next) {
        int rc = 0;
        switch (s->kind) {
        case TILEC_ST_FOR:
            rc = sub_slot(c, &s->u.loop.extent, m) || sub_list(c, s->u.loop.body, m, depth + 1);
            break;
        case TILEC_ST_IF:
            rc = sub_slot(c, &s->u.cond.cond, m) || sub_list(c, s->u.cond.then, m, depth + 1) ||
                 sub_list(c, s->u.cond.els, m, depth + 1);
            break;
        case TILEC_ST_STORE:
            rc = sub_array(c, &s->u.store.idx, s->u.store.buf->ndim, m) || sub_slot(c, &s->u.store.value, m);
            break;
        case TILEC_ST_ASSIGN:
            rc = sub_slot(c, &s->u.assign.value, m);
            break;
        case TILEC_ST_COPY:
        case TILEC_ST_COPY_ASYNC:
            rc = sub_array(c, &s->u.copy.src.base, s->u.copy.src.buf->ndim, m) ||
                 sub_array(c, &s->u.copy.dst.base, s->u.copy.dst.buf->ndim, m) || sub_slot(c, &s->u.copy.bar_idx, m);
            break;
        case TILEC_ST_FILL:
            rc = sub_array(c, &s->u.fill.dst.base, s->u.fill.dst.buf->ndim, m) || sub_slot(c, &s->u.fill.value, m);
            break;
        case TILEC_ST_GEMM:
            rc = sub_array(c, &s->u.gemm.a_lead, s->u.gemm.a->ndim - 2, m) ||
                 sub_array(c, &s->u.gemm.b_lead, s->u.gemm.b->ndim - 2, m);
            break;
        case TILEC_ST_HINT:
            rc = sub_array(c, &s->u.hint.args, s->u.hint.nargs, m);
            break;
        case TILEC_ST_MBAR_ARRIVE:
        case TILEC_ST_MBAR_WAIT:
            rc = sub_slot(c, &s->u.mbar.idx, m) || sub_slot(c, &s->u.mbar.parity, m) || sub_slot(c, &s->u.mbar.tx, m);
            break;
        case TILEC_ST_BARRIER:
            break;
        default:
            return lower_fail(c, TILEC_LOWER_E_PASS, "persist: a %s statement in a tile", tilec_stmt_kind_name(s->kind));
        }
        if (rc)
            return -1;
    }
    return 0;
}

/* the ring's stage expressions of statement s (the stage of k: the
 * leading index of a ring, the mbarrier's index and parity) with k := g */
static int sub_stage(lower_ctx_t *c, tilec_ir_stmt_t *s, const ps_sub_t *g)
{
    switch (s->kind) {
    case TILEC_ST_MBAR_WAIT:
    case TILEC_ST_MBAR_ARRIVE:
        return sub_slot(c, &s->u.mbar.idx, g) || sub_slot(c, &s->u.mbar.parity, g);
    case TILEC_ST_GEMM:
        return sub_array(c, &s->u.gemm.a_lead, s->u.gemm.a->ndim - 2, g) ||
               sub_array(c, &s->u.gemm.b_lead, s->u.gemm.b->ndim - 2, g);
    case TILEC_ST_COPY_ASYNC:
        return sub_slot(c, &s->u.copy.bar_idx, g) || sub_slot(c, &s->u.copy.dst.base[0], g);
    default:
        return 0;
    }
}

/* a copy of the refill list (arrival, barriers, copies) */
static tilec_ir_stmt_t *clone_refill(lower_ctx_t *c, const tilec_ir_stmt_t *list)
{
    tilec_ir_stmt_t *head = NULL, **tail = &head;
    static const ps_sub_t none = {{NULL}, {NULL}, 0};
    for (const tilec_ir_stmt_t *s = list; s; s = s->next) {
        tilec_ir_stmt_t *n = tilec_arena_alloc(c->a, sizeof *n);
        if (!n) {
            lower_oom(c);
            return NULL;
        }
        *n = *s;
        n->next = NULL;
        if (s->nattrs) {
            n->attrs = tilec_arena_alloc(c->a, sizeof *n->attrs * (size_t)s->nattrs);
            if (!n->attrs) {
                lower_oom(c);
                return NULL;
            }
            memcpy(n->attrs, s->attrs, sizeof *n->attrs * (size_t)s->nattrs);
        }
        if (sub_list(c, n, &none, 0))
            return NULL;
        *tail = n;
        tail = &n->next;
    }
    return head;
}

/* ---- the tile order --------------------------------------------------------------- */

/* bx, by of linear tile lin in the order the blocks ran */
static int tile_coords(lower_ctx_t *c, const tilec_ir_kernel_t *k, int64_t panel, tilec_ir_expr_t *lin,
                       tilec_ir_expr_t **bx, tilec_ir_expr_t **by)
{
    int64_t gx, gy = 1;
    tilec_ir_is_const_int(k->grid[0], &gx);
    if (k->ngrid == 2)
        tilec_ir_is_const_int(k->grid[1], &gy);
    *by = NULL;
    if (k->ngrid == 1) {
        *bx = lin;
        return 0;
    }
    if (!panel) {
        *bx = lower_opi(c, TILEC_BIN_FLOORMOD, lin, gx);
        *by = lower_opi(c, TILEC_BIN_FLOORDIV, lower_subst(c, lin, NULL, NULL), gx);
        return *bx && *by ? 0 : -1;
    }
    /* pan = lin // (panel gy), pin = lin % (panel gy), pw = min(gx - pan panel, panel):
     * bx = pan panel + pin % pw, by = pin // pw */
    tilec_ir_expr_t *pan = lower_opi(c, TILEC_BIN_FLOORDIV, lin, panel * gy);
    tilec_ir_expr_t *pin = lower_opi(c, TILEC_BIN_FLOORMOD, lower_subst(c, lin, NULL, NULL), panel * gy);
    tilec_ir_expr_t *pw = lower_op(c, TILEC_BIN_MIN,
                                   lower_op(c, TILEC_BIN_SUB, lower_int(c, gx),
                                            lower_opi(c, TILEC_BIN_MUL, lower_subst(c, pan, NULL, NULL), panel)),
                                   lower_int(c, panel));
    if (!pan || !pin || !pw)
        return -1;
    *bx = lower_op(c, TILEC_BIN_ADD, lower_opi(c, TILEC_BIN_MUL, pan, panel),
                   lower_op(c, TILEC_BIN_FLOORMOD, pin, pw));
    *by = lower_op(c, TILEC_BIN_FLOORDIV, lower_subst(c, pin, NULL, NULL), lower_subst(c, pw, NULL, NULL));
    return *bx && *by ? 0 : -1;
}

/* the coordinates of tile pb + t P (t NULL: tile pb), *y NULL for a 1-D grid */
static int coords_at(lower_ctx_t *c, const ps_kernel_t *p, tilec_ir_var_t *pb, tilec_ir_expr_t *t, int64_t P,
                     tilec_ir_expr_t **x, tilec_ir_expr_t **y)
{
    tilec_ir_expr_t *lin = tilec_ir_varref(c->a, pb);
    if (lin && t)
        lin = lower_op(c, TILEC_BIN_ADD, lin, lower_opi(c, TILEC_BIN_MUL, t, P));
    if (!lin || tile_coords(c, c->k, p->panel, lin, x, y))
        return lower_oom(c);
    return 0;
}

/* ---- the rewrite --------------------------------------------------------------------- */

static tilec_ir_stmt_t *assign(lower_ctx_t *c, tilec_ir_var_t *v, tilec_ir_expr_t *e, const tilec_ir_stmt_t *at)
{
    tilec_ir_stmt_t *s = e ? tilec_ir_stmt(c->a, TILEC_ST_ASSIGN) : NULL;
    if (!s) {
        lower_oom(c);
        return NULL;
    }
    s->line = at->line;
    s->col = at->col;
    s->u.assign.var = v;
    s->u.assign.value = e;
    return s;
}

/* a new int32 let variable named after v */
static tilec_ir_var_t *new_let(lower_ctx_t *c, const tilec_ir_var_t *v)
{
    tilec_ir_var_t *n = lower_new_loop_var(c, "_next", v->name);
    if (n)
        n->kind = TILEC_VAR_LET;
    return n;
}

/* `x = X; y = Y` (y absent for a 1-D grid) before list */
static tilec_ir_stmt_t *assign_xy(lower_ctx_t *c, tilec_ir_var_t *x, tilec_ir_expr_t *X, tilec_ir_var_t *y,
                                  tilec_ir_expr_t *Y, tilec_ir_stmt_t *list, const tilec_ir_stmt_t *at)
{
    tilec_ir_stmt_t *ax = assign(c, x, X, at), *ay = y ? assign(c, y, Y, at) : NULL;
    if (!ax || (y && !ay))
        return NULL;
    ax->next = y ? ay : list;
    if (ay)
        ay->next = list;
    return ax;
}

static int rewrite(lower_ctx_t *c, ps_kernel_t *p, int64_t NT, int64_t P)
{
    tilec_ir_kernel_t *k = c->k;
    tilec_ir_var_t *bx = k->block[0], *by = k->ngrid == 2 ? k->block[1] : NULL;
    tilec_ir_var_t *pb = lower_new_loop_var(c, "", "pb"), *t = lower_new_loop_var(c, "", "tile");
    tilec_ir_var_t *nbx = new_let(c, bx), *nby = by ? new_let(c, by) : NULL;
    if (!pb || !t || !nbx || (by && !nby))
        return -1;
    pb->kind = TILEC_VAR_BLOCK;
    /* bx and by become the tile's coordinates, assigned at the top of each tile */
    bx->kind = TILEC_VAR_LET;
    if (by)
        by->kind = TILEC_VAR_LET;
    tilec_ir_stmt_t *L = p->loop;
    const tilec_ir_var_t *kv = L->u.loop.var;
    int64_t n = p->n;
    /* trips = (NT - pb + P - 1) // P; tile t + 1 exists when t + 1 < trips */
    tilec_ir_expr_t *trips = lower_opi(c, TILEC_BIN_FLOORDIV,
                                       lower_op(c, TILEC_BIN_SUB, lower_int(c, NT + P - 1), tilec_ir_varref(c->a, pb)), P);
    tilec_ir_expr_t *tv = tilec_ir_varref(c->a, t);
    tilec_ir_expr_t *x0, *y0, *xt, *yt, *xn, *yn;
    if (!trips || !tv || coords_at(c, p, pb, NULL, P, &x0, &y0) || coords_at(c, p, pb, tv, P, &xt, &yt) ||
        coords_at(c, p, pb, lower_opi(c, TILEC_BIN_ADD, lower_subst(c, tv, NULL, NULL), 1), P, &xn, &yn))
        return lower_oom(c);
    /* the prologue loads tile pb's first k-blocks */
    ps_sub_t m0 = {{bx, by}, {x0, y0}, by ? 2 : 1};
    if (sub_list(c, p->pro->u.loop.body, &m0, 0))
        return -1;
    /* the global load counter g = t n + k names the stages and parities */
    ps_sub_t g = {{kv}, {lower_op(c, TILEC_BIN_ADD, lower_opi(c, TILEC_BIN_MUL, lower_subst(c, tv, NULL, NULL), n),
                                  tilec_ir_varref(c->a, (tilec_ir_var_t *)kv))}, 1};
    if (!g.by[0])
        return lower_oom(c);
    tilec_ir_stmt_t *refill = NULL;
    for (tilec_ir_stmt_t *s = L->u.loop.body; s; s = s->next)
        if (s->kind == TILEC_ST_IF)
            refill = s;
    /* the next tile's refill: its copies' sources at k - n of tile t + 1 */
    tilec_ir_stmt_t *next = clone_refill(c, refill->u.cond.then);
    if (!next)
        return -1;
    ps_sub_t back = {{kv, bx, by},
                     {lower_opi(c, TILEC_BIN_SUB, tilec_ir_varref(c->a, (tilec_ir_var_t *)kv), n),
                      tilec_ir_varref(c->a, nbx), by ? tilec_ir_varref(c->a, nby) : NULL},
                     by ? 3 : 2};
    if (!back.by[0] || !back.by[1] || (by && !back.by[2]))
        return lower_oom(c);
    for (tilec_ir_stmt_t *s = next; s; s = s->next)
        if (sub_stage(c, s, &g) ||
            (s->kind == TILEC_ST_COPY_ASYNC && sub_array(c, &s->u.copy.src.base, s->u.copy.src.buf->ndim, &back)))
            return -1;
    for (tilec_ir_stmt_t *s = L->u.loop.body; s; s = s->next) {
        if (s == refill) {
            for (tilec_ir_stmt_t *r = s->u.cond.then; r; r = r->next)
                if (sub_stage(c, r, &g))
                    return -1;
        } else if (sub_stage(c, s, &g)) {
            return -1;
        }
    }
    /* else { if (t + 1 < trips) { nbx = ...; nby = ...; the next tile's refill } } */
    tilec_ir_stmt_t *gi = tilec_ir_stmt(c->a, TILEC_ST_IF);
    if (!gi)
        return lower_oom(c);
    gi->line = refill->line;
    gi->col = refill->col;
    gi->u.cond.cond = tilec_ir_binary(c->a, TILEC_BIN_LT, lower_opi(c, TILEC_BIN_ADD, lower_subst(c, tv, NULL, NULL), 1),
                                      lower_subst(c, trips, NULL, NULL));
    if (!gi->u.cond.cond || !(gi->u.cond.then = assign_xy(c, nbx, xn, nby, yn, next, refill)))
        return lower_oom(c);
    refill->u.cond.els = gi;
    /* the tile loop: bx = ...; by = ...; PRE (without its hints), the ring loop, POST */
    tilec_ir_stmt_t *T = tilec_ir_stmt(c->a, TILEC_ST_FOR);
    if (!T)
        return lower_oom(c);
    T->line = L->line;
    T->col = L->col;
    T->u.loop.var = t;
    T->u.loop.kind = TILEC_LOOP_SERIAL;
    T->u.loop.extent = trips;
    tilec_ir_stmt_t *body = NULL, **tail = &body;
    for (tilec_ir_stmt_t *s = p->pre; s != p->pre_end; s = s->next)
        if (s->kind != TILEC_ST_HINT) {
            *tail = s;
            tail = &s->next;
        }
    *tail = L; /* L->next is POST */
    if (!(T->u.loop.body = assign_xy(c, bx, xt, by, yt, body, L)))
        return -1;
    int64_t attr[2] = {NT, P};
    if (lower_sattr_tuple(c, T, "lower.persistent", attr, 2))
        return -1;
    /* the kernel: init, barrier, prologue, tile loop; the grid [pb = P] */
    p->pro->next = T;
    k->body = p->init;
    k->ngrid = 1;
    k->block[0] = pb;
    k->block[1] = k->block[2] = NULL;
    k->grid[1] = k->grid[2] = NULL;
    return (k->grid[0] = lower_int(c, P)) ? 0 : -1;
}

int lower_persist(lower_ctx_t *c)
{
    const tilec_target_desc_t *t = c->t;
    tilec_ir_kernel_t *k = c->k;
    if (!tilec_target_field_ok(t, persistent_blocks) || t->persistent_blocks < 1 || k->ngrid > 2)
        return 0;
    int64_t NT = 1;
    for (int d = 0; d < k->ngrid; d++) {
        int64_t e;
        if (!tilec_ir_is_const_int(k->grid[d], &e) || e < 1 || e > (1 << 20))
            return 0;
        NT *= e;
    }
    int64_t P = t->persistent_blocks;
    ps_kernel_t p;
    if (NT <= P || NT > INT32_MAX / 2 || !fits(k, &p))
        return 0;
    return rewrite(c, &p, NT, P);
}
