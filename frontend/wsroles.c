/*
 * frontend/wsroles.c — warp-specialized roles read at block level.
 *
 * TileLang's Hopper/Blackwell kernels split a block into roles by thread
 * index (`tx = T.get_thread_binding()`, then `if tx < 128: consumer ...
 * else: producer ...`); the roles run concurrently and meet only at
 * mbarriers (T.barrier_arrive / T.barrier_wait, T.mbarrier_*, the mbarrier
 * a TMA copy or a TCGEN05 MMA signals).  tilec's statements are
 * block-collective, so such a kernel has a block-level reading when the
 * roles' statements can be put in one sequential order that is a possible
 * execution on the GPU: each role's statements in program order, and every
 * wait placed where its barrier's phase has already completed.  For a
 * program whose roles are free of data races given their barriers (what a
 * correct warp-specialized kernel is), every such execution computes the
 * same result, so running that order with the whole block computes what
 * the GPU computes.
 *
 * The order is found by running the barrier protocol at compile time:
 * barriers count arrivals (a role arrives with all its threads; a TCGEN05
 * MMA's commit once), complete a phase at their arrive count, and a wait
 * on parity p passes once the phase's parity is not p.  Each role is a
 * list of steps (its `if`s around barrier operations become conditions on
 * the steps, T.unroll loops are unrolled); the roles run in turn, each as
 * far as its next blocked wait, code outside the roles once every role has
 * reached it.  A loop is fused: the roles' loops over the same trip count
 * (or one block-level loop around the roles) become one loop whose body
 * takes the roles' steps in one order, found at one iteration and checked
 * against every iteration (compile-time trip count, parities, indices and
 * conditions).  A persistent tile scheduler's `while sched.valid():` loops
 * (tilesched.c) are loops over its waves, each wave guarded by valid() in
 * every role at once; loops with barrier operations inside a fused loop are
 * unrolled; roles' loops of one run-time trip count are ordered when their
 * barriers read the iteration only modulo a period and the protocol's
 * state repeats (loop_period, same_state), each block then running a
 * prefix of the checked sequence.  A name a role's statement introduces is
 * the role's own.  What cannot be ordered so, or leaves the reading unproven,
 * is a diagnostic: a wait that would wait forever, a run-time parity or
 * condition around a barrier operation, roles' loops of different trip
 * counts, a register buffer (fragment, local, var) used by two roles,
 * whose values do not pass between the threads of different roles.
 * A role's statements that read the thread index are its per-thread code
 * (wsthread.c).
 */
#include "eval_internal.h"

#include "tilec/ir_walk.h"

#include <string.h>

#define WR_MAX_INNER 64   /* iterations of a loop unrolled inside a loop of warp roles */

enum { A_PLAIN, A_BAR, A_LOOP, A_CLOOP };   /* a step; a role's loop; a block-level loop */

typedef struct atom {
    ast_stmt_t *s;
    int kind, coll;                       /* coll: block-level code, run once every role reached it */
    int ng; ast_expr_t **g; unsigned char *neg; /* conditions around it (neg: an else branch) */
    int nb; const char **bn; int64_t *bv; /* unrolled loop variables */
} atom_t;

typedef struct { atom_t *a; int n, cap; } seq_t;

typedef struct split { const ast_stmt_t *s; int *branch; } split_t;   /* a role `if` chain, branch by role */

typedef struct bstate { value_t *base; int64_t idx, count, pending, phase; } bstate_t;

typedef struct wr {
    const char *tx;
    int nroles, total;
    int *nthr, *lo, *hi;                  /* threads of a role, its first and last index */
    split_t *sp; int nsp, capsp;
    bstate_t *bs; int nbs, capbs;
    struct owner { const tilec_ir_buffer_t *b; int role; } *own; int nown, capown;
    ast_loc_t at;
    const ast_stmt_t *ragged;             /* a loop whose trip count is each block's own ran (a persistent tile
                                           * loop, a run-time one): the barriers' phases after it are too */
    env_t *base, **renv;                  /* the block's names; each role's own (what its statements assign) */
} wr_t;

typedef struct step { int role; const atom_t *a; } step_t;   /* role -1: a block-level atom */

/* Each role's statements assign names of their own (every thread has its own `phase = ...`): they
 * run in the role's environment, whose parent holds the block's names.  Returns the one to restore. */
static env_t *in_role(ev_t *ev, const wr_t *w, int role)
{
    env_t *e = ev->env;
    ev->env = role >= 0 ? w->renv[role] : w->base;
    return e;
}

/* Where an assignment to name binds: a warp role's statements rebind a name of the block (a
 * T.alloc_var is stored to, as before the roles); a name they introduce is the role's own. */
env_t *wr_scope_of(ev_t *ev, const char *name)
{
    const wr_t *w = ev->wr;
    int r;
    if (!w || !w->renv || ev->env == w->base || ev_env_find(ev->env, name) >= 0 || ev_env_find(w->base, name) < 0)
        return ev->env;
    for (r = 0; r < w->nroles; r++)
        if (ev->env == w->renv[r]) return w->base;
    return ev->env;
}

/* A loop's variable, the same for the block and every role. */
static void bind_all(ev_t *ev, const wr_t *w, const char *name, value_t *v)
{
    int r;
    env_set(ev, w->base, name, v);
    for (r = 0; r < w->nroles; r++)
        if (ev_env_find(w->renv[r], name) >= 0) env_set(ev, w->renv[r], name, v);
}

static void *grow(ev_t *ev, void *p, int n, int *cap, size_t sz)
{
    void *q;
    if (n < *cap) return p;
    q = ev_alloc(ev, sz * (size_t)(*cap * 2 + 8));
    if (n) memcpy(q, p, sz * (size_t)n);
    *cap = *cap * 2 + 8;
    return q;
}

/* ---- what the source says ------------------------------------------------ */

const char *wr_call_name(const ast_expr_t *e)
{
    if (!e || e->kind != AST_CALL) return NULL;
    if (e->u.call.func->kind == AST_ATTR) return e->u.call.func->u.attr.name;
    if (e->u.call.func->kind == AST_NAME) return e->u.call.func->u.name;
    return NULL;
}

static int has_kw(const ast_expr_t *call, const char *name)
{
    int i;
    for (i = 0; i < call->u.call.nkw; i++)
        if (call->u.call.kw[i].name && !strcmp(call->u.call.kw[i].name, name)) return 1;
    return 0;
}

int wr_is_bar_call(const ast_expr_t *e)
{
    static const char *const ops[] = {"barrier_arrive", "mbarrier_arrive", "barrier_wait", "mbarrier_wait_parity",
                                      "mbarrier_arrive_expect_tx", "cp_async_barrier_noinc", "tcgen05_mma_arrive", NULL};
    const char *n = wr_call_name(e);
    int i;
    if (!n) return 0;
    for (i = 0; ops[i]; i++)
        if (!strcmp(n, ops[i])) return 1;
    if (!strcmp(n, "tma_copy")) return has_kw(e, "barrier") || e->u.call.nargs >= 3;
    if (!strcmp(n, "tcgen05_gemm")) return has_kw(e, "mbar") || e->u.call.nargs >= 8;
    return 0;
}

static int is_bar_stmt(const ast_stmt_t *s)
{
    return s->kind == AST_S_EXPR && wr_is_bar_call(s->u.expr);
}

static int pure_expr(const ast_expr_t *e, int depth);

/* An `if` that picks a role: its condition reads the thread index and scalar arithmetic
 * only (a condition that reads memory is the per-thread code of a role). */
static int is_split(const char *tx, const ast_stmt_t *s)
{
    return s->kind == AST_S_IF && th_uses_e(tx, s->u.cond.cond) && pure_expr(s->u.cond.cond, 0);
}

/* A statement with barrier operations or role `if`s inside, which the schedule takes apart. */
static int structured(const char *tx, const ast_stmt_t *s, int depth);

static int structured_b(const char *tx, const ast_block_t *b, int depth)
{
    int i;
    for (i = 0; i < b->n; i++)
        if (structured(tx, b->s[i], depth + 1)) return 1;
    return 0;
}

static int structured(const char *tx, const ast_stmt_t *s, int depth)
{
    if (depth > 100) return 1;
    switch (s->kind) {
    case AST_S_EXPR: return is_bar_stmt(s);
    case AST_S_IF:
        return is_split(tx, s) || structured_b(tx, &s->u.cond.body, depth) || structured_b(tx, &s->u.cond.orelse, depth);
    case AST_S_FOR: return structured_b(tx, &s->u.loop.body, depth);
    case AST_S_WITH: return structured_b(tx, &s->u.with.body, depth);
    case AST_S_WHILE: return structured_b(tx, &s->u.wloop.body, depth);
    default: return 0;
    }
}

/* tx read only in the conditions of role `if`s and, inside a role, in statements free of
 * barrier operations (that role's per-thread code); *bar set when a barrier operation is there. */
static int roles_only(const char *tx, const ast_block_t *b, int in_role, int *bar, int *splits, int depth)
{
    int i;
    if (depth > 100) return 0;
    for (i = 0; i < b->n; i++) {
        const ast_stmt_t *s = b->s[i];
        if (is_split(tx, s)) {
            (*splits)++;
            if (!roles_only(tx, &s->u.cond.body, 1, bar, splits, depth + 1) ||
                !roles_only(tx, &s->u.cond.orelse, 1, bar, splits, depth + 1))
                return 0;
            continue;
        }
        if (!structured(tx, s, 0)) {
            if (th_uses_s(tx, s) && !in_role) return 0;
            continue;
        }
        switch (s->kind) {
        case AST_S_IF:
            if (th_uses_e(tx, s->u.cond.cond) || !roles_only(tx, &s->u.cond.body, in_role, bar, splits, depth + 1) ||
                !roles_only(tx, &s->u.cond.orelse, in_role, bar, splits, depth + 1))
                return 0;
            break;
        case AST_S_FOR:
            if (th_uses_e(tx, s->u.loop.iter) || th_uses_e(tx, s->u.loop.target) ||
                !roles_only(tx, &s->u.loop.body, in_role, bar, splits, depth + 1))
                return 0;
            break;
        case AST_S_WITH:
            if (th_uses_e(tx, s->u.with.ctx) || !roles_only(tx, &s->u.with.body, in_role, bar, splits, depth + 1))
                return 0;
            break;
        case AST_S_WHILE:
            if (th_uses_e(tx, s->u.wloop.cond) || !roles_only(tx, &s->u.wloop.body, in_role, bar, splits, depth + 1))
                return 0;
            break;
        default:
            if (th_uses_s(tx, s)) return 0;
            if (is_bar_stmt(s)) *bar = 1;
        }
    }
    return 1;
}

int wr_applies(ev_t *ev, const ast_block_t *b, int first)
{
    ast_block_t rest;
    int bar = 0, splits = 0;
    const ast_stmt_t *s = b->s[first];
    if (ev->lk.on || ev->thread_wrap || ev->wr) return 0;
    if (ev->k->threads[1] * ev->k->threads[2] != 1) return 0;
    if (first + 1 < b->n && th_is_binding(b->s[first + 1])) return 0;
    rest.n = b->n - first - 1;
    rest.s = b->s + first + 1;
    return roles_only(s->u.assign.targets[0]->u.name, &rest, 0, &bar, &splits, 0) && bar && splits;
}

/* ---- the roles ------------------------------------------------------------ */

static void collect_splits(ev_t *ev, wr_t *w, const ast_block_t *b)
{
    int i;
    for (i = 0; i < b->n; i++) {
        const ast_stmt_t *s = b->s[i];
        if (s->kind == AST_S_IF) {
            if (is_split(w->tx, s)) {
                const ast_stmt_t *c = s;
                w->sp = grow(ev, w->sp, w->nsp, &w->capsp, sizeof *w->sp);
                w->sp[w->nsp].s = s;
                w->sp[w->nsp++].branch = NULL;
                for (;;) {   /* the chain's bodies; its elifs are one split */
                    collect_splits(ev, w, &c->u.cond.body);
                    if (c->u.cond.orelse.n == 1 && is_split(w->tx, c->u.cond.orelse.s[0])) {
                        c = c->u.cond.orelse.s[0];
                        continue;
                    }
                    collect_splits(ev, w, &c->u.cond.orelse);
                    break;
                }
            } else {
                collect_splits(ev, w, &s->u.cond.body);
                collect_splits(ev, w, &s->u.cond.orelse);
            }
        } else if (s->kind == AST_S_FOR) {
            collect_splits(ev, w, &s->u.loop.body);
        } else if (s->kind == AST_S_WITH) {
            collect_splits(ev, w, &s->u.with.body);
        }
    }
}

/* The branch of split s thread t takes: 0.. for the if/elif bodies, their count for the else. */
static int branch_of(ev_t *ev, wr_t *w, const ast_stmt_t *s, int t)
{
    int k = 0;
    env_set(ev, ev->env, w->tx, v_int(ev, t));
    for (;;) {
        value_t *c = ev_eval(ev, s->u.cond.cond);
        if (v_is_rt(c))
            ev_fail(ev, s->u.cond.cond->loc, "this condition on the thread index picks a warp role, so it may depend "
                    "only on the thread index and compile-time values");
        if (v_truth(ev, c, s->u.cond.cond->loc)) return k;
        k++;
        if (s->u.cond.orelse.n == 1 && is_split(w->tx, s->u.cond.orelse.s[0])) s = s->u.cond.orelse.s[0];
        else return k;
    }
}

/* Roles: the classes of thread indices that take the same branch of every split. */
static void find_roles(ev_t *ev, wr_t *w)
{
    int T = w->total, t, i, r;
    int *key = ev_alloc(ev, sizeof *key * (size_t)T * (size_t)(w->nsp ? w->nsp : 1));
    int *role = ev_alloc(ev, sizeof *role * (size_t)T);
    w->nroles = 0;
    w->nthr = ev_alloc(ev, sizeof *w->nthr * (size_t)T);
    w->lo = ev_alloc(ev, sizeof *w->lo * (size_t)T);
    w->hi = ev_alloc(ev, sizeof *w->hi * (size_t)T);
    for (t = 0; t < T; t++) {
        int *kt = key + (size_t)t * (size_t)w->nsp;
        for (i = 0; i < w->nsp; i++) kt[i] = branch_of(ev, w, w->sp[i].s, t);
        for (r = 0; r < w->nroles; r++)
            if (!memcmp(key + (size_t)w->lo[r] * (size_t)w->nsp, kt, sizeof *kt * (size_t)w->nsp)) break;
        if (r == w->nroles) {
            w->nroles++;
            w->nthr[r] = 0;
            w->lo[r] = t;
        }
        w->nthr[r]++;
        w->hi[r] = t;
        role[t] = r;
    }
    for (i = 0; i < w->nsp; i++) {
        w->sp[i].branch = ev_alloc(ev, sizeof *w->sp[i].branch * (size_t)w->nroles);
        for (r = 0; r < w->nroles; r++) w->sp[i].branch[r] = key[(size_t)w->lo[r] * (size_t)w->nsp + (size_t)i];
    }
    env_set(ev, ev->env, w->tx, v_new(ev, V_DEADLOOP));
}

/* ---- a role's steps ------------------------------------------------------- */

typedef struct ctx {
    int ng; ast_expr_t *g[32]; unsigned char neg[32];
    int nb; const char *bn[16]; int64_t bv[16];
} ctx_t;

static void push_atom(ev_t *ev, seq_t *q, ast_stmt_t *s, int kind, int coll, const ctx_t *c)
{
    atom_t *a;
    q->a = grow(ev, q->a, q->n, &q->cap, sizeof *q->a);
    a = &q->a[q->n++];
    a->s = s;
    a->kind = kind;
    a->coll = coll;
    a->ng = c->ng;
    a->g = ev_alloc(ev, sizeof *a->g * (size_t)(c->ng + 1));
    a->neg = ev_alloc(ev, (size_t)c->ng + 1);
    memcpy(a->g, c->g, sizeof *a->g * (size_t)c->ng);
    memcpy(a->neg, c->neg, (size_t)c->ng);
    a->nb = c->nb;
    a->bn = ev_alloc(ev, sizeof *a->bn * (size_t)(c->nb + 1));
    a->bv = ev_alloc(ev, sizeof *a->bv * (size_t)(c->nb + 1));
    memcpy(a->bn, c->bn, sizeof *a->bn * (size_t)c->nb);
    memcpy(a->bv, c->bv, sizeof *a->bv * (size_t)c->nb);
}

static void enter(ev_t *ev, const atom_t *a)
{
    int i;
    for (i = 0; i < a->nb; i++) env_set(ev, ev->env, a->bn[i], v_int(ev, a->bv[i]));
}

static const char *loop_kind(const ast_stmt_t *s)
{
    const char *n = wr_call_name(s->u.loop.iter);
    return n ? n : "";
}

static void project(ev_t *ev, wr_t *w, const ast_block_t *b, int role, int in_role, int in_loop, ctx_t *c, seq_t *q);

static void project_stmt(ev_t *ev, wr_t *w, ast_stmt_t *s, int role, int in_role, int in_loop, ctx_t *c, seq_t *q)
{
    int i;
    if (!structured(w->tx, s, 0)) {
        push_atom(ev, q, s, A_PLAIN, !in_role, c);
        return;
    }
    if (is_bar_stmt(s)) {
        push_atom(ev, q, s, A_BAR, !in_role, c);
        return;
    }
    if (is_split(w->tx, s)) {
        const ast_stmt_t *x = s;
        int br = -1, k;
        for (i = 0; i < w->nsp; i++)
            if (w->sp[i].s == s) br = w->sp[i].branch[role];
        for (k = 0; k < br && x->u.cond.orelse.n == 1 && is_split(w->tx, x->u.cond.orelse.s[0]); k++)
            x = x->u.cond.orelse.s[0];
        project(ev, w, k == br ? &x->u.cond.body : &x->u.cond.orelse, role, 1, in_loop, c, q);
        return;
    }
    switch (s->kind) {
    case AST_S_IF:
        if (c->ng >= 32) ev_fail(ev, s->loc, "conditions nest too deeply around barrier operations");
        c->g[c->ng] = s->u.cond.cond;
        c->neg[c->ng++] = 0;
        project(ev, w, &s->u.cond.body, role, in_role, in_loop, c, q);
        c->neg[c->ng - 1] = 1;
        project(ev, w, &s->u.cond.orelse, role, in_role, in_loop, c, q);
        c->ng--;
        return;
    case AST_S_FOR: {
        const char *k = loop_kind(s);
        /* unrolled at compile time: T.unroll and range, and a counted loop inside a loop of warp roles
         * (tilec fuses the roles' loops one level deep; the inner loops' steps are ordered one by one) */
        int inner = in_loop && (!strcmp(k, "serial") || !strcmp(k, "Pipelined"));
        if (!strcmp(k, "unroll") || !strcmp(k, "range") || inner) {
            value_t *it = ev_eval(ev, s->u.loop.iter);
            int64_t lo = 0, hi, st = 1, x;
            if (s->u.loop.target->kind != AST_NAME) ev_fail(ev, s->u.loop.target->loc, "unrolled loops around barrier operations take one name");
            if (it->kind == V_RANGE) {
                lo = it->u.range.start;
                hi = it->u.range.stop;
                st = it->u.range.step;
            } else if (it->kind == V_LOOPITER && it->u.it->n == 1 && !v_is_rt(it->u.it->hi[0]) &&
                       (!it->u.it->lo || !it->u.it->lo[0] || !v_is_rt(it->u.it->lo[0]))) {
                if (it->u.it->lo && it->u.it->lo[0]) lo = v_want_int(ev, it->u.it->lo[0], s->u.loop.iter->loc, "a loop start");
                hi = v_want_int(ev, it->u.it->hi[0], s->u.loop.iter->loc, "a loop end");
                st = it->u.it->step ? it->u.it->step : 1;
            } else {
                ev_fail(ev, s->u.loop.iter->loc, inner ? "a loop with barrier operations inside a loop of warp roles "
                        "needs a compile-time trip count (tilec unrolls it to order its steps)" :
                        "an unrolled loop around barrier operations in warp-specialized code needs a compile-time range");
            }
            if (st <= 0) ev_fail(ev, s->u.loop.iter->loc, "an unrolled loop around barrier operations needs a positive step");
            if (inner && hi > lo && (hi - lo + st - 1) / st > WR_MAX_INNER)
                ev_fail(ev, s->u.loop.iter->loc, "this loop with barrier operations inside a loop of warp roles runs "
                        "%lld times; tilec unrolls such loops to order their steps, up to %d iterations",
                        (long long)((hi - lo + st - 1) / st), WR_MAX_INNER);
            if (c->nb >= 16) ev_fail(ev, s->loc, "unrolled loops nest too deeply around barrier operations");
            c->bn[c->nb++] = s->u.loop.target->u.name;
            for (x = lo; x < hi; x += st) {
                c->bv[c->nb - 1] = x;
                project(ev, w, &s->u.loop.body, role, in_role, in_loop, c, q);
            }
            c->nb--;
            return;
        }
        if (strcmp(k, "serial") && strcmp(k, "Pipelined"))
            ev_fail(ev, s->u.loop.iter->loc, "a T.%s loop around barrier operations or warp roles is outside the subset "
                    "tilec supports; such loops are T.serial, T.Pipelined or T.unroll", *k ? k : "?");
        if (in_loop)
            ev_fail(ev, s->loc, "a loop with barrier operations inside a loop of warp roles is outside the subset tilec "
                    "supports: tilec fuses the roles' loops one level deep");
        push_atom(ev, q, s, in_role ? A_LOOP : A_CLOOP, !in_role, c);
        return;
    }
    case AST_S_WHILE:   /* `while sched.valid():` of a persistent tile scheduler: a loop over its waves */
        if (!ts_is_valid_syntax(s->u.wloop.cond))
            ev_fail(ev, s->loc, "a while loop around barrier operations or warp roles is outside the subset tilec "
                    "supports, other than a persistent tile scheduler's `while sched.valid():`");
        if (in_loop)
            ev_fail(ev, s->loc, "a persistent tile loop inside a loop of warp roles is outside the subset tilec supports");
        push_atom(ev, q, s, in_role ? A_LOOP : A_CLOOP, !in_role, c);
        return;
    default:
        ev_fail(ev, s->loc, "this statement around barrier operations or warp roles is outside the subset tilec "
                "supports; barrier operations may sit in `if`s and T.serial / T.unroll loops");
    }
}

static void project(ev_t *ev, wr_t *w, const ast_block_t *b, int role, int in_role, int in_loop, ctx_t *c, seq_t *q)
{
    int i;
    for (i = 0; i < b->n; i++) project_stmt(ev, w, b->s[i], role, in_role, in_loop, c, q);
}

/* ---- the barrier protocol --------------------------------------------------- */

enum { OP_NONE, OP_WAIT, OP_ARRIVE };
typedef struct barop { int op; bstate_t *b; int64_t parity, n; ast_loc_t loc; } barop_t;

static value_t *arg(args_t *ar, int pos, const char *kw)
{
    int i;
    for (i = 0; i < ar->nkw; i++)
        if (!strcmp(ar->kwn[i], kw)) return ar->kwv[i];
    return pos < ar->n ? ar->v[pos] : NULL;
}

static bstate_t *bstate(ev_t *ev, wr_t *w, value_t *v, ast_loc_t loc)
{
    value_t *base;
    int64_t idx;
    int i;
    if (!v || v->kind != V_BARRIER) ev_fail(ev, loc, "a barrier operation takes a barrier from T.alloc_barrier");
    base = v->u.bar.base ? v->u.bar.base : v;
    idx = v->u.bar.base ? v->u.bar.idx : 0;
    if (idx < 0)
        ev_fail(ev, loc, "this barrier's index is a run-time value; ordering warp roles needs it at compile time "
                "(an index from the loops' counters and constants)");
    if (!v->u.bar.base && v->u.bar.n != 1)
        ev_fail(ev, loc, "this names a list of %lld barriers; index it", (long long)v->u.bar.n);
    for (i = 0; i < w->nbs; i++)
        if (w->bs[i].base == base && w->bs[i].idx == idx) return &w->bs[i];
    w->bs = grow(ev, w->bs, w->nbs, &w->capbs, sizeof *w->bs);
    w->bs[w->nbs].base = base;
    w->bs[w->nbs].idx = idx;
    w->bs[w->nbs].count = base->u.bar.counts[idx];
    w->bs[w->nbs].pending = 0;
    w->bs[w->nbs].phase = 0;
    return &w->bs[w->nbs++];
}

/* The barrier operation of atom a, run by role (-1: the block), evaluated now. */
static void bar_eval(ev_t *ev, wr_t *w, const atom_t *a, int role, barop_t *o)
{
    ast_expr_t *call = a->s->u.expr;
    const char *n = wr_call_name(call);
    args_t ar;
    value_t *b, *p;
    int threads = role < 0 ? w->total : w->nthr[role];
    o->op = OP_NONE;
    o->loc = call->loc;
    if (!strcmp(n, "tma_copy")) return;   /* tilec's copy is complete where it stands; the arrivals are the threads' */
    if (w->ragged)
        ev_fail(ev, call->loc, "a barrier operation after the %s loop at line %d is outside the subset tilec "
                "supports: each block runs that loop its own number of times, so the barriers' phases after it "
                "differ between blocks", w->ragged->kind == AST_S_WHILE ? "persistent tile" : "run-time",
                w->ragged->loc.line);
    ev_eval_args(ev, call, &ar);
    if (!strcmp(n, "barrier_wait") || !strcmp(n, "mbarrier_wait_parity")) {
        b = arg(&ar, 0, "mbarrier");
        p = arg(&ar, 1, "parity");
        if (!p) ev_fail(ev, call->loc, "T.%s takes a barrier and a parity", n);
        if (v_is_rt(p))
            ev_fail(ev, call->loc, "this wait's parity is a run-time value; ordering warp roles needs it at compile time "
                    "(a parity from the loops' counters and constants)");
        o->op = OP_WAIT;
        o->parity = v_want_int(ev, p, call->loc, "the parity") & 1;
    } else if (!strcmp(n, "tcgen05_gemm") || !strcmp(n, "tcgen05_mma_arrive")) {
        b = !strcmp(n, "tcgen05_gemm") ? arg(&ar, 7, "mbar") : arg(&ar, 0, "mbar");
        if (!b || b->kind == V_NONE) return;
        o->op = OP_ARRIVE;
        o->n = 1;   /* the MMA's commit */
    } else {
        b = arg(&ar, 0, "mbarrier");
        o->op = OP_ARRIVE;
        o->n = threads;
    }
    o->b = bstate(ev, w, b, call->loc);
}

static int bar_passes(const barop_t *o)
{
    return o->op != OP_WAIT || (o->b->phase & 1) != o->parity;
}

static void bar_apply(barop_t *o)
{
    if (o->op != OP_ARRIVE) return;
    o->b->pending += o->n;
    while (o->b->pending >= o->b->count) {
        o->b->pending -= o->b->count;
        o->b->phase++;
    }
}

/* The atom's conditions now: 1 all hold, 0 one does not, -1 one is a run-time value. */
static int guards_now(ev_t *ev, const atom_t *a, value_t **out)
{
    int i, r = 1;
    for (i = 0; i < a->ng; i++) {
        value_t *c = ev_eval(ev, a->g[i]);
        if (a->neg[i]) c = v_unary(ev, AST_OP_NOT, c, a->g[i]->loc);
        if (out) out[i] = c;
        if (v_is_rt(c)) r = -1;
        else if (!v_truth(ev, c, a->g[i]->loc)) return 0;
    }
    return r;
}

/* ---- emitting ----------------------------------------------------------------- */

typedef struct own_walk { ev_t *ev; wr_t *w; int role; } own_walk_t;

static void own_note(own_walk_t *o, const tilec_ir_buffer_t *b, const tilec_ir_stmt_t *s)
{
    wr_t *w = o->w;
    ev_t *ev = o->ev;
    int i;
    if (!b || o->role < 0 || (b->scope != TILEC_SCOPE_FRAGMENT && b->scope != TILEC_SCOPE_LOCAL &&
                              b->scope != TILEC_SCOPE_VAR))
        return;
    for (i = 0; i < ev->ntmem; i++)
        if (ev->tmem[i] == b) return;   /* tensor memory is the block's */
    for (i = 0; i < w->nown; i++) {
        if (w->own[i].b != b) continue;
        if (w->own[i].role == o->role) return;
        if (s) {
            ev->cur_loc.line = s->line;
            ev->cur_loc.col = s->col;
        }
        ev_fail(ev, ev->cur_loc, "'%s' is register memory used by two warp roles (threads %d-%d and %d-%d); each "
                "role's threads hold their own registers, so its values do not pass between the roles (hand them "
                "over in shared memory, behind a barrier)", b->name, w->lo[w->own[i].role], w->hi[w->own[i].role],
                w->lo[o->role], w->hi[o->role]);
    }
    w->own = grow(ev, w->own, w->nown, &w->capown, sizeof *w->own);
    w->own[w->nown].b = b;
    w->own[w->nown++].role = o->role;
}

static int own_stmt(tilec_ir_walk_t *wk, tilec_ir_stmt_t *s)
{
    own_walk_t *o = wk->user;
    switch (s->kind) {
    case TILEC_ST_STORE: own_note(o, s->u.store.buf, s); break;
    case TILEC_ST_COPY: case TILEC_ST_COPY_ASYNC: own_note(o, s->u.copy.src.buf, s); own_note(o, s->u.copy.dst.buf, s); break;
    case TILEC_ST_FILL: own_note(o, s->u.fill.dst.buf, s); break;
    case TILEC_ST_GEMM: own_note(o, s->u.gemm.a, s); own_note(o, s->u.gemm.b, s); own_note(o, s->u.gemm.c, s); break;
    case TILEC_ST_REDUCE: own_note(o, s->u.reduce.src, s); own_note(o, s->u.reduce.dst, s); break;
    case TILEC_ST_CUMSUM: own_note(o, s->u.cumsum.src, s); own_note(o, s->u.cumsum.dst, s); break;
    case TILEC_ST_ATOMIC: own_note(o, s->u.atomic.buf, s); break;
    default: break;
    }
    return TILEC_WALK_CONTINUE;
}

static int own_expr(tilec_ir_walk_t *wk, tilec_ir_expr_t *e)
{
    if (e->kind == TILEC_EX_LOAD) own_note(wk->user, e->u.load.buf, wk->stmt);
    return TILEC_WALK_CONTINUE;
}

static void own_check(ev_t *ev, wr_t *w, int role, tilec_ir_stmt_t *list)
{
    tilec_ir_walk_t wk;
    own_walk_t o;
    o.ev = ev;
    o.w = w;
    o.role = role;
    memset(&wk, 0, sizeof wk);
    wk.stmt_pre = own_stmt;
    wk.expr_pre = own_expr;
    wk.user = &o;
    tilec_ir_walk_block(&wk, &list);
}

static int same_ctx(const atom_t *a, const atom_t *b)
{
    int i;
    if (a->ng != b->ng || a->nb != b->nb) return 0;
    for (i = 0; i < a->ng; i++)
        if (a->g[i] != b->g[i] || a->neg[i] != b->neg[i]) return 0;
    for (i = 0; i < a->nb; i++)
        if (strcmp(a->bn[i], b->bn[i]) || a->bv[i] != b->bv[i]) return 0;
    return 1;
}

/* Emits atoms a[0..n-1] (one role, one context) under their conditions. */
static void emit_group_in(ev_t *ev, wr_t *w, int role, atom_t **a, int n)
{
    value_t *c[32];
    tilec_ir_stmt_t *outer = NULL, **link = NULL, **saved = ev->tail, *list = NULL;
    int i, g, depth = 0;
    enter(ev, a[0]);
    g = guards_now(ev, a[0], c);
    if (!g) return;
    for (i = 0; g < 0 && i < a[0]->ng; i++) {
        tilec_ir_stmt_t *st;
        if (!v_is_rt(c[i])) continue;
        st = ev_stmt(ev, TILEC_ST_IF, a[0]->s->loc);
        st->u.cond.cond = ex_bool(ev, ex_of(ev, c[i], a[0]->g[i]->loc));
        if (!outer) outer = st;
        else *link = st;
        link = &st->u.cond.then;
        depth++;
    }
    ev->tail = outer ? link : &list;
    ev->rt_depth += depth;
    ev->guarded += depth;
    for (i = 0; i < n; i++) {
        tilec_ir_stmt_t **start = ev->tail;
        enter(ev, a[i]);
        ev->wr_plain = a[i]->kind == A_PLAIN;
        if (a[i]->kind == A_PLAIN && th_uses_s(w->tx, a[i]->s)) {
            if (role < 0 || w->hi[role] - w->lo[role] + 1 != w->nthr[role])
                ev_fail(ev, a[i]->s->loc, "this per-thread code belongs to threads that are not one range; warp roles "
                        "with per-thread code need consecutive thread indices");
            wr_per_thread(ev, w->tx, w->lo[role], w->nthr[role], a[i]->s);
        }
        else ev_exec_stmt(ev, a[i]->s);
        ev->wr_plain = 0;
        if (*start) own_check(ev, w, role, *start);
    }
    ev->rt_depth -= depth;
    ev->guarded -= depth;
    ev->tail = saved;
    if (outer) ev_emit(ev, outer, a[0]->s->loc);
    else if (list) {
        tilec_ir_stmt_t *s = list, *nx;
        while (s) {
            nx = s->next;
            s->next = NULL;
            ev_emit(ev, s, a[0]->s->loc);
            s = nx;
        }
    }
}

static void emit_group(ev_t *ev, wr_t *w, int role, atom_t **a, int n)
{
    env_t *e = in_role(ev, w, role);
    emit_group_in(ev, w, role, a, n);
    ev->env = e;
}

/* ---- scheduling ------------------------------------------------------------------ */

enum { M_RUN, M_PLAN, M_CHECK };

static int pure_expr(const ast_expr_t *e, int depth)
{
    int i;
    if (!e || depth > 50) return !e;
    switch (e->kind) {
    case AST_NAME: case AST_INT: case AST_BOOL: case AST_FLOAT: return 1;
    case AST_ATTR: return e->u.attr.value->kind == AST_NAME;   /* sched.current_iter: a value, no memory read */
    case AST_BINOP: case AST_BOOLOP: return pure_expr(e->u.bin.a, depth + 1) && pure_expr(e->u.bin.b, depth + 1);
    case AST_UNARY: return pure_expr(e->u.un.a, depth + 1);
    case AST_COMPARE:
        for (i = 0; i < e->u.cmp.n; i++)
            if (!pure_expr(e->u.cmp.operands[i], depth + 1)) return 0;
        return 1;
    case AST_IFEXP:
        return pure_expr(e->u.ifexp.cond, depth + 1) && pure_expr(e->u.ifexp.a, depth + 1) &&
               pure_expr(e->u.ifexp.b, depth + 1);
    case AST_CALL: {
        const char *n = wr_call_name(e);
        if (!n || (strcmp(n, "min") && strcmp(n, "max") && strcmp(n, "ceildiv")) || e->u.call.nkw) return 0;
        for (i = 0; i < e->u.call.nargs; i++)
            if (!pure_expr(e->u.call.args[i], depth + 1)) return 0;
        return 1;
    }
    default: return 0;
    }
}

static void unknown_targets(ev_t *ev, const ast_expr_t *t)
{
    int i;
    if (t->kind == AST_NAME) {
        value_t *u = v_new(ev, V_DEADLOOP);
        u->u.i = 2;
        env_set(ev, ev->env, t->u.name, u);
    } else if (t->kind == AST_TUPLE || t->kind == AST_LIST) {
        for (i = 0; i < t->u.seq.n; i++) unknown_targets(ev, t->u.seq.items[i]);
    }
}

/* A plain atom while planning: scalar arithmetic runs (the schedule reads it), other
 * assignments leave their names unknown. */
static void plan_plain(ev_t *ev, const wr_t *w, const atom_t *a)
{
    ast_stmt_t *s = a->s;
    int i;
    if (s->kind == AST_S_ASSIGN) {
        if (s->u.assign.ntargets == 1 && !th_uses_e(w->tx, s->u.assign.value) && s->u.assign.targets[0]->kind == AST_NAME && pure_expr(s->u.assign.value, 0)) {
            value_t *v = ev_eval(ev, s->u.assign.value);
            if (!v_is_rt(v)) {
                env_set(ev, ev->env, s->u.assign.targets[0]->u.name, v);
                return;
            }
        }
        for (i = 0; i < s->u.assign.ntargets; i++) unknown_targets(ev, s->u.assign.targets[i]);
    } else if (s->kind == AST_S_AUGASSIGN) {
        unknown_targets(ev, s->u.aug.target);
    } else if (s->kind == AST_S_ANNASSIGN) {
        unknown_targets(ev, s->u.ann.target);
    }
}

/* One atom in a planning mode: 1 done, 0 a wait that does not pass. */
static int sim_atom_in(ev_t *ev, wr_t *w, int role, const atom_t *a)
{
    barop_t o;
    int g;
    enter(ev, a);
    g = guards_now(ev, a, NULL);
    if (g < 0 && a->kind == A_BAR)
        ev_fail(ev, a->s->loc, "a condition around this barrier operation is a run-time value; ordering warp roles "
                "needs it at compile time (conditions on the loops' counters and constants)");
    if (g <= 0) return 1;
    if (a->kind == A_PLAIN) {
        plan_plain(ev, w, a);
        return 1;
    }
    bar_eval(ev, w, a, role, &o);
    if (!bar_passes(&o)) return 0;
    bar_apply(&o);
    return 1;
}

static int sim_atom(ev_t *ev, wr_t *w, int role, const atom_t *a)
{
    env_t *e = in_role(ev, w, role);
    int r = sim_atom_in(ev, w, role, a);
    ev->env = e;
    return r;
}

static void fused_loop(ev_t *ev, wr_t *w, seq_t *q, int *pc, int coll);

_Noreturn static void deadlock(ev_t *ev, wr_t *w, seq_t *q, int *pc, const char *when)
{
    int r;
    for (r = 0; r < w->nroles; r++) {
        atom_t *a;
        if (pc[r] >= q[r].n) continue;
        a = &q[r].a[pc[r]];
        if (a->kind == A_BAR && !a->coll)
            ev_fail(ev, a->s->loc, "the warp roles cannot be put in one order at block level%s: this wait of threads "
                    "%d-%d would wait for ever (no role can go on before it); tilec runs warp-specialized roles in "
                    "an order their barriers allow, and found none", when, w->lo[r], w->hi[r]);
    }
    for (r = 0; r < w->nroles; r++)
        if (pc[r] < q[r].n)
            ev_fail(ev, q[r].a[pc[r]].s->loc, "the warp roles cannot be put in one order at block level%s: the roles "
                    "stop at different statements here (block-level code, a wait or loops) that none can pass", when);
    ev_fail(ev, w->at, "the warp roles cannot be put in one order at block level");
}

/* Runs the roles' atom lists q[] from pc[]: M_RUN emits as it goes (the top level),
 * M_PLAN simulates one iteration and records the order in *ord. */
static void schedule(ev_t *ev, wr_t *w, seq_t *q, int *pc, int mode, step_t **ord, int *nord, int *cap)
{
    int r;
    for (;;) {
        int prog = 0, done = 1, first = -1, same = 1;
        for (r = 0; r < w->nroles; r++) {
            while (pc[r] < q[r].n) {
                atom_t *a = &q[r].a[pc[r]];
                if (a->coll || a->kind == A_LOOP || a->kind == A_CLOOP) break;
                if (mode == M_RUN) {
                    if (a->kind == A_BAR) {
                        barop_t o;
                        int g;
                        env_t *e = in_role(ev, w, r);
                        enter(ev, a);
                        g = guards_now(ev, a, NULL);
                        if (g < 0)
                            ev_fail(ev, a->s->loc, "a condition around this barrier operation is a run-time value; "
                                    "ordering warp roles needs it at compile time");
                        if (g) {
                            bar_eval(ev, w, a, r, &o);
                            ev->env = e;
                            if (!bar_passes(&o)) break;
                            bar_apply(&o);
                        }
                        ev->env = e;
                    }
                    emit_group(ev, w, r, &a, 1);
                } else {
                    if (!sim_atom(ev, w, r, a)) break;
                    *ord = grow(ev, *ord, *nord, cap, sizeof **ord);
                    (*ord)[*nord].role = r;
                    (*ord)[(*nord)++].a = a;
                }
                pc[r]++;
                prog = 1;
            }
        }
        if (prog) continue;
        for (r = 0; r < w->nroles; r++) {
            if (pc[r] >= q[r].n) continue;
            done = 0;
            if (first < 0) first = r;
            else if (q[r].a[pc[r]].s != q[first].a[pc[first]].s || !same_ctx(&q[r].a[pc[r]], &q[first].a[pc[first]]))
                same = 0;
        }
        if (done) return;
        {
            atom_t *a = &q[first].a[pc[first]];
            if (a->coll && same) {   /* every role is at this block-level atom */
                if (a->kind == A_CLOOP) {
                    if (mode != M_RUN) deadlock(ev, w, q, pc, "");
                    fused_loop(ev, w, q, pc, 1);
                } else if (mode == M_RUN) {
                    if (a->kind == A_BAR) {
                        barop_t o;
                        enter(ev, a);
                        if (guards_now(ev, a, NULL)) {
                            bar_eval(ev, w, a, -1, &o);
                            if (!bar_passes(&o)) deadlock(ev, w, q, pc, "");
                            bar_apply(&o);
                        }
                    }
                    emit_group(ev, w, -1, &a, 1);
                } else {
                    if (!sim_atom(ev, w, -1, a)) deadlock(ev, w, q, pc, "");
                    *ord = grow(ev, *ord, *nord, cap, sizeof **ord);
                    (*ord)[*nord].role = -1;
                    (*ord)[(*nord)++].a = a;
                }
                for (r = 0; r < w->nroles; r++)
                    if (pc[r] < q[r].n) pc[r]++;
                continue;
            }
        }
        if (mode == M_RUN) {   /* every role that is not done is at a loop of its own */
            int loops = 1;
            for (r = 0; r < w->nroles; r++)
                if (pc[r] < q[r].n && q[r].a[pc[r]].kind != A_LOOP) loops = 0;
            if (loops) {
                fused_loop(ev, w, q, pc, 0);
                for (r = 0; r < w->nroles; r++)
                    if (pc[r] < q[r].n) pc[r]++;
                continue;
            }
        }
        deadlock(ev, w, q, pc, mode == M_RUN ? "" : " within one loop iteration");
    }
}

typedef struct lspec { int64_t lo, n, step; tilec_ir_expr_t *rt; } lspec_t;   /* rt: a run-time trip count */

static lspec_t loop_spec(ev_t *ev, const ast_stmt_t *s)
{
    value_t *it = ev_eval(ev, s->u.loop.iter);
    lspec_t l = {0, 0, 1, NULL};
    int64_t hi;
    if (s->u.loop.target->kind != AST_NAME)
        ev_fail(ev, s->u.loop.target->loc, "a loop of warp roles takes one name");
    if (it->kind != V_LOOPITER || it->u.it->n != 1)
        ev_fail(ev, s->u.loop.iter->loc, "a loop of warp roles takes one extent");
    if (it->u.it->lo && it->u.it->lo[0] && v_is_rt(it->u.it->lo[0]))
        ev_fail(ev, s->u.loop.iter->loc, "this loop of warp roles starts at a run-time value; ordering the roles' "
                "barrier operations needs a loop from a compile-time start");
    if (v_is_rt(it->u.it->hi[0])) {   /* from 0 (or lo) by one, a run-time number of times (periodic_check) */
        if (it->u.it->lo && it->u.it->lo[0] && v_want_int(ev, it->u.it->lo[0], s->u.loop.iter->loc, "a loop start"))
            ev_fail(ev, s->u.loop.iter->loc, "a loop of warp roles with a run-time trip count runs from 0");
        if (it->u.it->step && it->u.it->step != 1)
            ev_fail(ev, s->u.loop.iter->loc, "a loop of warp roles with a run-time trip count steps by 1");
        l.rt = ex_index(ev, it->u.it->hi[0], s->u.loop.iter->loc);
        return l;
    }
    if (it->u.it->lo && it->u.it->lo[0]) l.lo = v_want_int(ev, it->u.it->lo[0], s->u.loop.iter->loc, "a loop start");
    hi = v_want_int(ev, it->u.it->hi[0], s->u.loop.iter->loc, "a loop end");
    l.step = it->u.it->step ? it->u.it->step : 1;
    if (l.step <= 0) ev_fail(ev, s->u.loop.iter->loc, "a loop of warp roles needs a positive step");
    l.n = hi > l.lo ? (hi - l.lo + l.step - 1) / l.step : 0;
    return l;
}

/* The iteration: the loops' names, or a persistent tile scheduler's state (sched.current_iter). */
/* ---- loops of a run-time trip count ------------------------------------------------ */

/* The names a fused body computes from its loop variables (and the variables themselves). */
static int in_names(const char **v, int n, const char *x)
{
    int i;
    for (i = 0; i < n; i++)
        if (!strcmp(v[i], x)) return 1;
    return 0;
}

static int mentions(const ast_expr_t *e, const char **v, int n, int depth);

static int mentions_args(const ast_expr_t *e, const char **v, int n, int depth)
{
    int i;
    for (i = 0; i < e->u.call.nargs; i++)
        if (mentions(e->u.call.args[i], v, n, depth + 1)) return 1;
    for (i = 0; i < e->u.call.nkw; i++)
        if (mentions(e->u.call.kw[i].value, v, n, depth + 1)) return 1;
    return mentions(e->u.call.func, v, n, depth + 1);
}

static int mentions(const ast_expr_t *e, const char **v, int n, int depth)
{
    int i;
    if (!e) return 0;
    if (depth > 60) return 1;
    switch (e->kind) {
    case AST_NAME: return in_names(v, n, e->u.name);
    case AST_ATTR: return mentions(e->u.attr.value, v, n, depth + 1);
    case AST_BINOP: case AST_BOOLOP: return mentions(e->u.bin.a, v, n, depth + 1) || mentions(e->u.bin.b, v, n, depth + 1);
    case AST_UNARY: return mentions(e->u.un.a, v, n, depth + 1);
    case AST_COMPARE:
        for (i = 0; i < e->u.cmp.n; i++)
            if (mentions(e->u.cmp.operands[i], v, n, depth + 1)) return 1;
        return 0;
    case AST_IFEXP:
        return mentions(e->u.ifexp.cond, v, n, depth + 1) || mentions(e->u.ifexp.a, v, n, depth + 1) ||
               mentions(e->u.ifexp.b, v, n, depth + 1);
    case AST_CALL: return mentions_args(e, v, n, depth);
    case AST_SUBSCRIPT:
        for (i = 0; i < e->u.sub.n; i++)
            if (mentions(e->u.sub.items[i], v, n, depth + 1)) return 1;
        return mentions(e->u.sub.value, v, n, depth + 1);
    case AST_INT: case AST_FLOAT: case AST_BOOL: case AST_STR: case AST_NONE: return 0;
    default: return 1;   /* anything else: assume it does */
    }
}

typedef struct period { ev_t *ev; const char **loopv; int nl; const char **der; int nd; int64_t L; ast_loc_t bad; int ok; } period_t;

static int64_t gcd64(int64_t a, int64_t b) { while (b) { int64_t t = a % b; a = b; b = t; } return a; }

/* e reads the loop variables only as `i % c` or `i & (2^j - 1)` (c compile-time): a function of
 * i mod L; other names computed from them are not allowed. */
static void periodic_expr(period_t *p, const ast_expr_t *e, int depth)
{
    int i;
    if (!e || !p->ok) return;
    if (depth > 60) { p->ok = 0; p->bad = e->loc; return; }
    if (e->kind == AST_BINOP && (e->u.bin.op == '%' || e->u.bin.op == AST_OP_BITAND) && e->u.bin.a->kind == AST_NAME &&
        in_names(p->loopv, p->nl, e->u.bin.a->u.name) && !mentions(e->u.bin.b, p->der, p->nd, 0)) {
        value_t *c = ev_eval(p->ev, e->u.bin.b);
        int64_t m;
        if (!v_is_rt(c) && (c->kind == V_INT || c->kind == V_BOOL)) {
            m = c->u.i;
            if (e->u.bin.op == AST_OP_BITAND) m = (m >= 0 && !((m + 1) & m)) ? m + 1 : 0;   /* a mask of low bits */
            if (m > 0 && m <= 1024) {
                p->L = p->L / gcd64(p->L, m) * m;
                if (p->L > 4096) { p->ok = 0; p->bad = e->loc; }
                return;
            }
        }
    }
    switch (e->kind) {
    case AST_NAME:
        if (in_names(p->der, p->nd, e->u.name)) { p->ok = 0; p->bad = e->loc; }
        return;
    case AST_ATTR: periodic_expr(p, e->u.attr.value, depth + 1); return;
    case AST_BINOP: case AST_BOOLOP: periodic_expr(p, e->u.bin.a, depth + 1); periodic_expr(p, e->u.bin.b, depth + 1); return;
    case AST_UNARY: periodic_expr(p, e->u.un.a, depth + 1); return;
    case AST_COMPARE:
        for (i = 0; i < e->u.cmp.n; i++) periodic_expr(p, e->u.cmp.operands[i], depth + 1);
        return;
    case AST_IFEXP:
        periodic_expr(p, e->u.ifexp.cond, depth + 1);
        periodic_expr(p, e->u.ifexp.a, depth + 1);
        periodic_expr(p, e->u.ifexp.b, depth + 1);
        return;
    case AST_SUBSCRIPT:
        periodic_expr(p, e->u.sub.value, depth + 1);
        for (i = 0; i < e->u.sub.n; i++) periodic_expr(p, e->u.sub.items[i], depth + 1);
        return;
    case AST_CALL:
        periodic_expr(p, e->u.call.func, depth + 1);
        for (i = 0; i < e->u.call.nargs; i++) periodic_expr(p, e->u.call.args[i], depth + 1);
        for (i = 0; i < e->u.call.nkw; i++) periodic_expr(p, e->u.call.kw[i].value, depth + 1);
        return;
    case AST_INT: case AST_FLOAT: case AST_BOOL: case AST_STR: case AST_NONE: return;
    default: p->ok = 0; p->bad = e->loc; return;
    }
}

/* The argument of a barrier call that bar_eval reads (position pos or keyword kw), or NULL. */
static const ast_expr_t *call_arg(const ast_expr_t *c, int pos, const char *kw)
{
    int i;
    for (i = 0; i < c->u.call.nkw; i++)
        if (c->u.call.kw[i].name && !strcmp(c->u.call.kw[i].name, kw)) return c->u.call.kw[i].value;
    return pos < c->u.call.nargs ? c->u.call.args[pos] : NULL;
}

/* A fused loop of a run-time trip count: the period L of what its barrier operations read (their
 * barriers, parities and conditions depend on the iteration i only through i mod L), or a diagnostic. */
static int64_t loop_period(ev_t *ev, wr_t *w, seq_t *body, const char **names, int nn, ast_loc_t at)
{
    period_t p;
    int r, i, grew = 1, cap = 16;
    memset(&p, 0, sizeof p);
    p.ev = ev;
    p.loopv = names;
    p.nl = nn;
    p.der = ev_alloc(ev, sizeof *p.der * (size_t)cap);
    for (i = 0; i < nn; i++) p.der[p.nd++] = names[i];
    while (grew) {   /* the names assigned from the loop variables, to a fixed point */
        grew = 0;
        for (r = 0; r < w->nroles; r++)
            for (i = 0; i < body[r].n; i++) {
                const ast_stmt_t *s = body[r].a[i].s;
                const ast_expr_t *t = NULL, *v = NULL;
                if (body[r].a[i].kind != A_PLAIN) continue;
                if (s->kind == AST_S_ASSIGN && s->u.assign.ntargets == 1) { t = s->u.assign.targets[0]; v = s->u.assign.value; }
                else if (s->kind == AST_S_AUGASSIGN) { t = s->u.aug.target; v = s->u.aug.value; }
                if (!t || t->kind != AST_NAME || in_names(p.der, p.nd, t->u.name) || !mentions(v, p.der, p.nd, 0)) continue;
                if (p.nd == cap) {
                    const char **nd = ev_alloc(ev, sizeof *nd * (size_t)(cap * 2));
                    memcpy(nd, p.der, sizeof *nd * (size_t)p.nd);
                    p.der = nd;
                    cap *= 2;
                }
                p.der[p.nd++] = t->u.name;
                grew = 1;
            }
    }
    p.L = 1;
    p.ok = 1;
    for (r = 0; r < w->nroles && p.ok; r++)
        for (i = 0; i < body[r].n && p.ok; i++) {
            const atom_t *a = &body[r].a[i];
            const ast_expr_t *c = a->s->kind == AST_S_EXPR ? a->s->u.expr : NULL;
            const char *n;
            int g;
            if (a->kind != A_BAR || !c) continue;
            enter(ev, a);
            for (g = 0; g < a->ng; g++) periodic_expr(&p, a->g[g], 0);
            n = wr_call_name(c);
            if (!strcmp(n, "tma_copy")) continue;
            if (!strcmp(n, "tcgen05_gemm")) periodic_expr(&p, call_arg(c, 7, "mbar"), 0);
            else if (!strcmp(n, "tcgen05_mma_arrive")) periodic_expr(&p, call_arg(c, 0, "mbar"), 0);
            else periodic_expr(&p, call_arg(c, 0, "mbarrier"), 0);
            if (!strcmp(n, "barrier_wait") || !strcmp(n, "mbarrier_wait_parity")) periodic_expr(&p, call_arg(c, 1, "parity"), 0);
        }
    if (!p.ok)
        ev_fail(ev, p.bad.line ? p.bad : at, "this loop of warp roles runs a run-time number of times, and a barrier, "
                "parity or condition of its barrier operations depends on the iteration otherwise than through "
                "`i %% c` or `i & (2^j - 1)` (of the loop variable itself); tilec orders such a loop by the period "
                "of what its barriers read, and finds none here");
    return p.L;
}

/* The barriers' parities and pending arrivals equal those before the loop (s0; the barriers first
 * seen in it start fresh): the protocol repeats from here. */
static int same_state(const wr_t *w, const bstate_t *s0, int n0)
{
    int i;
    for (i = 0; i < w->nbs; i++) {
        int64_t ph = i < n0 ? s0[i].phase : 0, pe = i < n0 ? s0[i].pending : 0;
        if ((w->bs[i].phase & 1) != (ph & 1) || w->bs[i].pending != pe) return 0;
    }
    return 1;
}

static void bind_iter(ev_t *ev, const wr_t *w, const char **names, int nn, value_t *sched, int64_t v, ast_loc_t loc)
{
    int i;
    for (i = 0; i < nn; i++) bind_all(ev, w, names[i], v_int(ev, v));
    if (sched) ts_loop_begin(ev, sched, v_int(ev, v), loc);
}

/* A role's `while sched.valid():` loop: its scheduler's waves, its body less the final next_tile(). */
static lspec_t while_spec(ev_t *ev, const ast_stmt_t *s, value_t **sched)
{
    lspec_t l = {0, 0, 1, NULL};
    value_t *o = ts_of_while(ev, s);
    if (!o)
        ev_fail(ev, s->u.wloop.cond->loc, "this while loop of warp roles is outside the subset tilec supports; a "
                "loop of warp roles is T.serial, T.Pipelined or a persistent tile scheduler's `while sched.valid():`");
    if (!*sched) ts_loop_check(ev, o, s->loc);
    if (*sched && *sched != o)
        ev_fail(ev, s->loc, "the warp roles' persistent tile loops use different schedulers; tilec runs the roles' "
                "loops as one");
    *sched = o;
    l.n = ts_waves(ev, o);
    return l;
}

/* Replays order ord at the iteration the names are bound to. */
static int replay(ev_t *ev, wr_t *w, const step_t *ord, int nord)
{
    int i;
    for (i = 0; i < nord; i++)
        if (!sim_atom(ev, w, ord[i].role, ord[i].a)) return 0;
    return 1;
}

/* The barriers as before the loop; those first seen in it start fresh. */
static void restore(wr_t *w, const bstate_t *s0, int n0)
{
    int i;
    if (n0) memcpy(w->bs, s0, sizeof *s0 * (size_t)n0);
    for (i = n0; i < w->nbs; i++) w->bs[i].pending = w->bs[i].phase = 0;
}

/* The roles at pc[] are at their loops (coll: at one block-level loop): one loop, the roles'
 * bodies in one order checked against every iteration. */
static void fused_loop(ev_t *ev, wr_t *w, seq_t *q, int *pc, int coll)
{
    seq_t *body = ev_alloc(ev, sizeof *body * (size_t)w->nroles);
    const char **names = ev_alloc(ev, sizeof *names * (size_t)w->nroles);
    bstate_t *s0;
    step_t *ord = NULL;
    int nord = 0, cap = 0, nn = 0, nbs0, r, attempt, i, *bpc = ev_alloc(ev, sizeof *bpc * (size_t)w->nroles);
    lspec_t l = {0, 0, 1, NULL};
    const ast_stmt_t *ls = NULL;
    int64_t k, kp = 0, period = 0, reps = 0;
    tilec_ir_stmt_t *st, **saved;
    tilec_ir_var_t *var;
    value_t *vv, *sched = NULL;
    tilec_ir_stmt_t *guard = NULL;
    int ok = 0, nwhile = 0;
    for (r = 0; r < w->nroles; r++) {
        atom_t *a = pc[r] < q[r].n ? &q[r].a[pc[r]] : NULL;
        ctx_t c;
        env_t *e;
        memset(&body[r], 0, sizeof body[r]);
        if (!a) continue;
        if (a->ng)
            ev_fail(ev, a->s->loc, "a loop of warp roles under a condition is outside the subset tilec supports");
        e = in_role(ev, w, coll ? -1 : r);
        enter(ev, a);
        nwhile += a->s->kind == AST_S_WHILE;
        if (!ls) {
            ls = a->s;
            l = a->s->kind == AST_S_WHILE ? while_spec(ev, a->s, &sched) : loop_spec(ev, a->s);
        } else if (a->s != ls) {
            lspec_t m = a->s->kind == AST_S_WHILE ? while_spec(ev, a->s, &sched) : loop_spec(ev, a->s);
            if (m.rt || l.rt) {
                if (!m.rt || !l.rt || !ev_ex_same(m.rt, l.rt))
                    ev_fail(ev, a->s->loc, "this warp role's loop and the one at line %d run different numbers of "
                            "times (%s); tilec runs the roles' loops as one and needs the same trip count",
                            ls->loc.line, m.rt && l.rt ? "two run-time trip counts" : "a run-time trip count and a "
                            "compile-time one");
            } else if (m.n != l.n)
                ev_fail(ev, a->s->loc, "this warp role's loop runs %lld times and the one at line %d %lld times; tilec "
                        "runs the roles' loops as one and needs the same trip count", (long long)m.n, ls->loc.line,
                        (long long)l.n);
            if (m.lo != l.lo || m.step != l.step)
                ev_fail(ev, a->s->loc, "this warp role's loop counts differently from the one at line %d; tilec runs "
                        "the roles' loops as one", ls->loc.line);
        }
        memset(&c, 0, sizeof c);
        c.nb = a->nb;
        memcpy(c.bn, a->bn, sizeof *c.bn * (size_t)a->nb);
        memcpy(c.bv, a->bv, sizeof *c.bv * (size_t)a->nb);
        if (a->s->kind == AST_S_WHILE) {
            ast_block_t wb = ts_body(ev, a->s);
            project(ev, w, &wb, r, !coll, 1, &c, &body[r]);
        } else {
            for (i = 0; i < nn && strcmp(names[i], a->s->u.loop.target->u.name); i++) {}
            if (i == nn) names[nn++] = a->s->u.loop.target->u.name;
            project(ev, w, &a->s->u.loop.body, r, !coll, 1, &c, &body[r]);
        }
        ev->env = e;
    }
    if (nwhile && nn)
        ev_fail(ev, ls->loc, "the warp roles' loops here are a persistent tile loop and a counted loop; tilec runs "
                "the roles' loops as one and needs the same kind of loop");
    if (l.rt) {
        /* a run-time trip count n, the same for every role (evaluated once, where the fused loop starts, so no
         * role may have written what it reads): the barriers read the iteration i only through i mod L, so
         * once the protocol's state after m L iterations is the state before the loop, the order checked on
         * those m L iterations holds for every n (each block runs a prefix of the repeating sequence) */
        for (i = 0; i < w->nown; i++)
            if (ev_ex_reads(l.rt, w->own[i].b))
                ev_fail(ev, ls->loc, "this loop's trip count reads '%s', which a warp role's code uses; a loop of "
                        "warp roles with a run-time trip count reads only what the block set before the roles",
                        w->own[i].b->name);
        period = loop_period(ev, w, body, names, nn, ls->loc);
        l.n = 4 * period;
    }
    /* the order: found at iteration kp, checked at every iteration from the state before the loop */
    nbs0 = w->nbs;
    s0 = ev_alloc(ev, sizeof *s0 * (size_t)(nbs0 + 1));
    if (nbs0) memcpy(s0, w->bs, sizeof *s0 * (size_t)nbs0);
    for (attempt = 0; attempt < 4 && !ok; attempt++) {
        restore(w, s0, nbs0);
        for (k = 0; k < kp; k++) {
            bind_iter(ev, w, names, nn, sched, l.lo + k * l.step, ls->loc);
            replay(ev, w, ord, nord);
        }
        bind_iter(ev, w, names, nn, sched, l.lo + kp * l.step, ls->loc);
        nord = 0;
        memset(bpc, 0, sizeof *bpc * (size_t)w->nroles);
        schedule(ev, w, body, bpc, M_PLAN, &ord, &nord, &cap);
        restore(w, s0, nbs0);
        ok = 1;
        reps = 0;
        for (k = 0; k < l.n; k++) {
            bind_iter(ev, w, names, nn, sched, l.lo + k * l.step, ls->loc);
            if (!replay(ev, w, ord, nord)) {
                ok = 0;
                kp = k;
                break;
            }
            if (period && !reps && (k + 1) % period == 0 && same_state(w, s0, nbs0)) reps = (k + 1) / period;
        }
    }
    if (!ok)
        ev_fail(ev, ls->loc, "the warp roles in this loop cannot be put in one order that every iteration's barriers "
                "allow; tilec runs the roles' loops as one loop with one order of their statements");
    if (period && !reps)
        ev_fail(ev, ls->loc, "this loop of warp roles runs a run-time number of times, and its barriers' state does not "
                "come back to where it started within %lld iterations (4 periods of what they read); tilec orders "
                "such a loop only when its barrier protocol repeats", (long long)l.n);
    /* the loop itself */
    st = ev_stmt(ev, TILEC_ST_FOR, ls->loc);
    st->u.loop.kind = TILEC_LOOP_SERIAL;
    st->u.loop.num_stages = 1;
    st->u.loop.extent = l.rt ? l.rt : ex_int32(ev, l.n);
    var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, nn ? names[0] : "wave"), TILEC_INT32,
                                      TILEC_VAR_LOOP));
    st->u.loop.var = var;
    ev_set_loop_extent(ev, var, st->u.loop.extent);
    vv = v_expr(ev, tilec_ir_varref(ev->a, var));
    if (l.lo || l.step != 1) {
        vv = v_binop(ev, '+', v_int(ev, l.lo), v_binop(ev, '*', vv, v_int(ev, l.step), ls->loc), ls->loc);
        vv = v_expr(ev, ex_index(ev, vv, ls->loc));
    }
    for (i = 0; i < nn; i++) bind_all(ev, w, names[i], vv);
    saved = ev->tail;
    ev->tail = &st->u.loop.body;
    ev->rt_depth++;
    ev->in_rt_loop++;
    if (sched) {
        /* the waves past this block's last tile: skipped by every role at once (valid() only turns false),
         * so each block runs a prefix of the order checked above */
        ts_loop_begin(ev, sched, vv, ls->loc);
        guard = ev_stmt(ev, TILEC_ST_IF, ls->loc);
        guard->u.cond.cond = ex_bool(ev, ex_of(ev, ts_valid_at(ev, sched, vv, ls->loc), ls->loc));
        ev->tail = &guard->u.cond.then;
        ev->rt_depth++;
        ev->guarded++;
    }
    for (i = 0; i < nord;) {
        int role = ord[i].role, j = i + 1, n = 1;
        atom_t *grp[256];
        grp[0] = (atom_t *)ord[i].a;
        while (j < nord && n < 256 && ord[j].role == role && same_ctx(ord[j].a, grp[0])) grp[n++] = (atom_t *)ord[j++].a;
        emit_group(ev, w, role, grp, n);
        i = j;
    }
    if (sched) {
        ev->guarded--;
        ev->rt_depth--;
        st->u.loop.body = guard;
        ts_unbind(ev, sched);
        w->ragged = ls;
    }
    if (l.rt) w->ragged = ls;
    ev->in_rt_loop--;
    ev->rt_depth--;
    ev->tail = saved;
    ev_emit(ev, st, ls->loc);
    for (i = 0; i < nn; i++) bind_all(ev, w, names[i], v_new(ev, V_DEADLOOP));
}

void wr_run(ev_t *ev, const ast_block_t *b, int first)
{
    wr_t w;
    ast_block_t rest;
    seq_t *q;
    int *pc, r;
    const ast_stmt_t *bs = b->s[first];
    memset(&w, 0, sizeof w);
    w.tx = bs->u.assign.targets[0]->u.name;
    w.total = ev->k->threads[0];
    w.at = bs->loc;
    rest.n = b->n - first - 1;
    rest.s = b->s + first + 1;
    {
        value_t *lo;
        if (th_binding_dim(ev, bs, &lo) != 0 || lo)
            ev_fail(ev, bs->loc, "warp roles split threadIdx.x from 0; bind that index");
    }
    collect_splits(ev, &w, &rest);
    find_roles(ev, &w);
    q = ev_alloc(ev, sizeof *q * (size_t)w.nroles);
    pc = ev_alloc(ev, sizeof *pc * (size_t)w.nroles);
    w.base = ev->env;
    w.renv = ev_alloc(ev, sizeof *w.renv * (size_t)w.nroles);
    for (r = 0; r < w.nroles; r++) w.renv[r] = ev_env_new(ev, w.base);
    for (r = 0; r < w.nroles; r++) {
        ctx_t c;
        memset(&c, 0, sizeof c);
        memset(&q[r], 0, sizeof q[r]);
        ev->env = w.renv[r];
        project(ev, &w, &rest, r, 0, 0, &c, &q[r]);
        ev->env = w.base;
        pc[r] = 0;
    }
    ev->wr = &w;
    schedule(ev, &w, q, pc, M_RUN, NULL, NULL, NULL);
    ev->wr = NULL;
    ev->env = w.base;
}
