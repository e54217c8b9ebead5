/*
 * plugin-sdk/src/lower_split.c — index-set splitting of masks: where a
 * select's condition is provably true for every element over a range of
 * a serial loop's iterations, those iterations run the nest without it.
 *
 * A T.Parallel nest in uniform code, inside a serial loop over k, whose
 * stores' values contain select(cond, a, b) with cond a conjunction of
 * integer comparisons that are affine in k, in the nest's own variables
 * and in uniform terms (block variables, symbols, let variables, the
 * variables of enclosing serial loops, and anything made of them without
 * loads), becomes
 *
 *     if (k < s) { the nest with the select replaced by a }
 *     else       { the nest as it was }
 *
 * (or, when the nest without the select only stores back what it loads,
 * as in x[i, j] = select(cond, x[i, j], -inf), just `if (k >= s) nest`),
 * where s is computed from each comparison written as e >= 0 with
 * e = ck k + sum cp p + g (p the nest's variables over [0, extent), g the
 * uniform rest): for ck < 0 it holds for every p exactly when
 * k <= (g + min_p sum cp p) / -ck, so s = min over comparisons of
 * floor((g + min) / -ck) + 1; a comparison that does not mention k but
 * holds for every p (a constant g) is dropped, anything else leaves the
 * nest alone.  Causal attention's mask  bx*BM + i >= k*BN + j  holds on
 * every key block below the diagonal: only the diagonal blocks compare
 * and select, the others store the select's value a (0: the scores start
 * at 0, as without the mask); its  k*BN + j < seq_len  (ragged keys)
 * only on the last block.
 *
 * The branch is uniform (s and k are the same for every thread) and the
 * loop keeps its shape, so a pipeline around it stays one pipeline.  The
 * split-off nest reads a subset of what the original read and writes the
 * same elements, so the barriers placed before still hold; it runs last
 * for that reason (the pass numbers of the others stay).  The
 * interpreter runs both branches as written, so a wrong bound fails the
 * lowering check.
 */
#include <string.h>

#include "lower_internal.h"

#define SPLIT_MAX_NEST 8 /* parallel variables of one nest */

typedef struct lin {
    int64_t ck, cp[SPLIT_MAX_NEST], c0;
    tilec_ir_expr_t *g; /* uniform rest; NULL: 0 */
} lin_t;

typedef struct nestv {
    const tilec_ir_var_t *k;
    const tilec_ir_var_t *p[SPLIT_MAX_NEST];
    int64_t ext[SPLIT_MAX_NEST];
    int np;
} nestv_t;

static int var_index(const nestv_t *v, const tilec_ir_var_t *x)
{
    for (int i = 0; i < v->np; i++)
        if (v->p[i] == x)
            return i;
    return -1;
}

/* uniform: no loads, variables that are the same for every thread */
static int uniform_pre(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    const nestv_t *v = w->user;
    if (e->kind == TILEC_EX_LOAD || e->kind == TILEC_EX_FLOAT)
        return TILEC_WALK_STOP;
    if (e->kind == TILEC_EX_VAR && (e->u.var == v->k || var_index(v, e->u.var) >= 0))
        return TILEC_WALK_STOP;
    return TILEC_WALK_CONTINUE;
}

static int uniform(const nestv_t *v, tilec_ir_expr_t *e)
{
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.expr_pre = uniform_pre;
    w.user = (void *)v;
    return tilec_ir_walk_expr(&w, &e) == 0;
}

static tilec_ir_expr_t *add_g(lower_ctx_t *c, tilec_ir_expr_t *a, tilec_ir_expr_t *b, int sub)
{
    if (!b)
        return a;
    if (!a)
        return sub ? lower_op(c, TILEC_BIN_SUB, lower_int(c, 0), b) : b;
    return lower_op(c, sub ? TILEC_BIN_SUB : TILEC_BIN_ADD, a, b);
}

/* e as ck k + sum cp p + c0 + g; 0 when it is not of that form */
static int linear(lower_ctx_t *c, const nestv_t *v, tilec_ir_expr_t *e, lin_t *out, int depth)
{
    memset(out, 0, sizeof *out);
    if (depth > 64 || !e || !tilec_dtype_is_int(e->dtype))
        return 0;
    int64_t x;
    if (tilec_ir_is_const_int(e, &x)) {
        out->c0 = x;
        return 1;
    }
    if (e->kind == TILEC_EX_VAR && e->u.var == v->k) {
        out->ck = 1;
        return 1;
    }
    int pi = e->kind == TILEC_EX_VAR ? var_index(v, e->u.var) : -1;
    if (pi >= 0) {
        out->cp[pi] = 1;
        return 1;
    }
    if (uniform(v, e)) {
        out->g = lower_subst(c, e, NULL, NULL);
        return out->g != NULL;
    }
    if (e->kind != TILEC_EX_BINARY)
        return 0;
    lin_t a, b;
    tilec_binop_t op = e->u.bin.op;
    if (op == TILEC_BIN_ADD || op == TILEC_BIN_SUB) {
        if (!linear(c, v, e->u.bin.a, &a, depth + 1) || !linear(c, v, e->u.bin.b, &b, depth + 1))
            return 0;
        int64_t s = op == TILEC_BIN_SUB ? -1 : 1;
        out->ck = a.ck + s * b.ck;
        out->c0 = a.c0 + s * b.c0;
        for (int i = 0; i < v->np; i++)
            out->cp[i] = a.cp[i] + s * b.cp[i];
        out->g = add_g(c, a.g, b.g, op == TILEC_BIN_SUB);
        return !(a.g && b.g) || out->g != NULL;
    }
    if (op == TILEC_BIN_MUL) {
        tilec_ir_expr_t *f = e->u.bin.a, *o = e->u.bin.b;
        if (!tilec_ir_is_const_int(f, &x)) {
            f = e->u.bin.b;
            o = e->u.bin.a;
            if (!tilec_ir_is_const_int(f, &x))
                return 0;
        }
        if (!linear(c, v, o, &a, depth + 1) || x < -(1 << 20) || x > (1 << 20))
            return 0;
        *out = a;
        out->ck *= x;
        out->c0 *= x;
        for (int i = 0; i < v->np; i++)
            out->cp[i] *= x;
        if (a.g)
            out->g = lower_opi(c, TILEC_BIN_MUL, a.g, x);
        return !a.g || out->g != NULL;
    }
    return 0;
}

/* the bound s of one comparison (into *s, min'd with what is there);
 * 1 done (or always true), 0 not splittable */
static int bound_of(lower_ctx_t *c, const nestv_t *v, const tilec_ir_expr_t *cmp, tilec_ir_expr_t **s)
{
    if (cmp->kind != TILEC_EX_BINARY)
        return 0;
    tilec_binop_t op = cmp->u.bin.op;
    tilec_ir_expr_t *x = cmp->u.bin.a, *y = cmp->u.bin.b;
    int64_t adj = 0; /* e = hi - lo + adj >= 0 */
    switch (op) {
    case TILEC_BIN_GE: break;
    case TILEC_BIN_GT: adj = -1; break;
    case TILEC_BIN_LE: x = cmp->u.bin.b, y = cmp->u.bin.a; break;
    case TILEC_BIN_LT: x = cmp->u.bin.b, y = cmp->u.bin.a, adj = -1; break;
    default: return 0;
    }
    lin_t a, b;
    if (!linear(c, v, x, &a, 0) || !linear(c, v, y, &b, 0))
        return 0;
    int64_t ck = a.ck - b.ck, m = a.c0 - b.c0 + adj;
    for (int i = 0; i < v->np; i++) {
        int64_t cp = a.cp[i] - b.cp[i];
        if (cp < 0)
            m += cp * (v->ext[i] - 1); /* the smallest e over p */
    }
    tilec_ir_expr_t *g = add_g(c, a.g, b.g, 1);
    if ((a.g || b.g) && !g)
        return lower_oom(c), 0;
    if (ck == 0)
        return !g && m >= 0; /* true for every k and p, or not splittable */
    if (ck > 0)
        return 0; /* true from some k on: not this split */
    tilec_ir_expr_t *num = g ? lower_opi(c, TILEC_BIN_ADD, g, m) : lower_int(c, m);
    tilec_ir_expr_t *bk = num ? lower_opi(c, TILEC_BIN_ADD, lower_opi(c, TILEC_BIN_FLOORDIV, num, -ck), 1) : NULL;
    if (!bk)
        return lower_oom(c), 0;
    *s = *s ? lower_op(c, TILEC_BIN_MIN, *s, bk) : bk;
    return *s != NULL;
}

static int cond_bound(lower_ctx_t *c, const nestv_t *v, const tilec_ir_expr_t *e, tilec_ir_expr_t **s, int depth)
{
    if (depth > 64)
        return 0;
    if (e->kind == TILEC_EX_BINARY && e->u.bin.op == TILEC_BIN_AND)
        return cond_bound(c, v, e->u.bin.a, s, depth + 1) && cond_bound(c, v, e->u.bin.b, s, depth + 1);
    return bound_of(c, v, e, s);
}

/* ---- the nest ---------------------------------------------------------------------------- */

typedef struct find {
    lower_ctx_t *c;
    nestv_t *v;
    const tilec_ir_expr_t *sel; /* the first splittable select */
    tilec_ir_expr_t *s;
    int bad;
} find_t;

static int find_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    find_t *f = w->user;
    if (f->sel || e->kind != TILEC_EX_SELECT)
        return TILEC_WALK_CONTINUE;
    tilec_ir_expr_t *s = NULL;
    if (cond_bound(f->c, f->v, e->u.sel.cond, &s, 0) && s) {
        f->sel = e;
        f->s = s;
        return TILEC_WALK_SKIP;
    }
    return TILEC_WALK_CONTINUE;
}

static int find_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    find_t *f = w->user;
    if (s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PARALLEL) {
        int64_t e;
        if (f->v->np == SPLIT_MAX_NEST || !tilec_ir_is_const_int(s->u.loop.extent, &e) || e < 1)
            f->bad = 1;
        else {
            f->v->p[f->v->np] = s->u.loop.var;
            f->v->ext[f->v->np++] = e;
        }
        return TILEC_WALK_CONTINUE;
    }
    if (s->kind != TILEC_ST_STORE)
        f->bad = 1; /* only element stores are cloned */
    return TILEC_WALK_CONTINUE;
}

static tilec_ir_stmt_t *clone(lower_ctx_t *c, const tilec_ir_stmt_t *s, const tilec_ir_expr_t *sel, int depth);

static tilec_ir_expr_t *clone_expr(lower_ctx_t *c, const tilec_ir_expr_t *e, const tilec_ir_expr_t *sel, int depth);

static int clone_kids(lower_ctx_t *c, tilec_ir_expr_t *n, const tilec_ir_expr_t *e, const tilec_ir_expr_t *sel,
                      int depth)
{
    switch (e->kind) {
    case TILEC_EX_LOAD: {
        int nd = e->u.load.buf->ndim;
        tilec_ir_expr_t **idx = tilec_arena_alloc(c->a, sizeof *idx * (size_t)(nd ? nd : 1));
        if (!idx)
            return -1;
        for (int d = 0; d < nd; d++)
            if (!(idx[d] = clone_expr(c, e->u.load.idx[d], sel, depth + 1)))
                return -1;
        n->u.load.idx = idx;
        return 0;
    }
    case TILEC_EX_UNARY:
        return (n->u.un.a = clone_expr(c, e->u.un.a, sel, depth + 1)) ? 0 : -1;
    case TILEC_EX_BINARY:
        return (n->u.bin.a = clone_expr(c, e->u.bin.a, sel, depth + 1)) &&
                       (n->u.bin.b = clone_expr(c, e->u.bin.b, sel, depth + 1))
                   ? 0
                   : -1;
    case TILEC_EX_SELECT:
        return (n->u.sel.cond = clone_expr(c, e->u.sel.cond, sel, depth + 1)) &&
                       (n->u.sel.a = clone_expr(c, e->u.sel.a, sel, depth + 1)) &&
                       (n->u.sel.b = clone_expr(c, e->u.sel.b, sel, depth + 1))
                   ? 0
                   : -1;
    case TILEC_EX_CAST:
        return (n->u.cast.a = clone_expr(c, e->u.cast.a, sel, depth + 1)) ? 0 : -1;
    default:
        return 0;
    }
}

/* a copy of e with the select sel replaced by (a copy of) its first value */
static tilec_ir_expr_t *clone_expr(lower_ctx_t *c, const tilec_ir_expr_t *e, const tilec_ir_expr_t *sel, int depth)
{
    if (depth > TILEC_IR_MAX_DEPTH)
        return NULL;
    if (e == sel)
        return clone_expr(c, e->u.sel.a, sel, depth + 1);
    tilec_ir_expr_t *n = tilec_arena_alloc(c->a, sizeof *n);
    if (!n)
        return NULL;
    *n = *e;
    return clone_kids(c, n, e, sel, depth) == 0 ? n : NULL;
}

/* a copy of the nest (parallel loops and stores), sel replaced */
static tilec_ir_stmt_t *clone(lower_ctx_t *c, const tilec_ir_stmt_t *s, const tilec_ir_expr_t *sel, int depth)
{
    tilec_ir_stmt_t *head = NULL, **tail = &head;
    for (; s; s = s->next) {
        if (depth > TILEC_IR_MAX_DEPTH)
            return NULL;
        tilec_ir_stmt_t *n = tilec_arena_alloc(c->a, sizeof *n);
        if (!n)
            return NULL;
        *n = *s;
        n->next = NULL;
        if (s->nattrs) {
            n->attrs = tilec_arena_alloc(c->a, sizeof *n->attrs * (size_t)s->nattrs);
            if (!n->attrs)
                return NULL;
            memcpy(n->attrs, s->attrs, sizeof *n->attrs * (size_t)s->nattrs);
        }
        if (s->kind == TILEC_ST_FOR) {
            if (!(n->u.loop.extent = clone_expr(c, s->u.loop.extent, sel, 0)) ||
                (s->u.loop.body && !(n->u.loop.body = clone(c, s->u.loop.body, sel, depth + 1))))
                return NULL;
        } else { /* a store */
            int nd = s->u.store.buf->ndim;
            tilec_ir_expr_t **idx = tilec_arena_alloc(c->a, sizeof *idx * (size_t)(nd ? nd : 1));
            if (!idx || !(n->u.store.value = clone_expr(c, s->u.store.value, sel, 0)))
                return NULL;
            for (int d = 0; d < nd; d++)
                if (!(idx[d] = clone_expr(c, s->u.store.idx[d], sel, 0)))
                    return NULL;
            n->u.store.idx = idx;
        }
        *tail = n;
        tail = &n->next;
    }
    return head;
}

static int same(const tilec_ir_expr_t *a, const tilec_ir_expr_t *b, int depth)
{
    if (depth > 64 || a->kind != b->kind || a->dtype != b->dtype)
        return 0;
    switch (a->kind) {
    case TILEC_EX_INT: return a->u.i == b->u.i;
    case TILEC_EX_VAR: return a->u.var == b->u.var;
    case TILEC_EX_BINARY:
        return a->u.bin.op == b->u.bin.op && same(a->u.bin.a, b->u.bin.a, depth + 1) &&
               same(a->u.bin.b, b->u.bin.b, depth + 1);
    default: return 0;
    }
}

/* every store of the nest writes back the element it stores to */
static int only_identity(const tilec_ir_stmt_t *s)
{
    for (; s; s = s->next) {
        if (s->kind == TILEC_ST_FOR) {
            if (!only_identity(s->u.loop.body))
                return 0;
            continue;
        }
        const tilec_ir_expr_t *v = s->u.store.value;
        if (v->kind != TILEC_EX_LOAD || v->u.load.buf != s->u.store.buf)
            return 0;
        for (int d = 0; d < s->u.store.buf->ndim; d++)
            if (!same(v->u.load.idx[d], s->u.store.idx[d], 0))
                return 0;
    }
    return 1;
}

/* nest *link inside the serial loop over k: split it when it can be */
static int split_nest(lower_ctx_t *c, tilec_ir_stmt_t **link, const tilec_ir_var_t *k)
{
    tilec_ir_stmt_t *nest = *link;
    nestv_t v;
    memset(&v, 0, sizeof v);
    v.k = k;
    find_t f = {c, &v, NULL, NULL, 0};
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = find_stmt;
    w.user = &f;
    tilec_ir_stmt_t one = *nest;
    one.next = NULL;
    tilec_ir_stmt_t *list = &one;
    /* the nest's variables first, then its selects */
    if (tilec_ir_walk_block(&w, &list) < 0 || f.bad)
        return c->code != TILEC_LOWER_OK ? -1 : 0;
    memset(&w, 0, sizeof w);
    w.expr_pre = find_expr;
    w.user = &f;
    if (tilec_ir_walk_block(&w, &list) < 0)
        return c->code != TILEC_LOWER_OK ? -1 : 0;
    if (!f.sel)
        return 0;
    tilec_ir_stmt_t *fast = clone(c, &one, f.sel, 0), *cond = tilec_ir_stmt(c->a, TILEC_ST_IF);
    tilec_ir_expr_t *kr = tilec_ir_varref(c->a, (tilec_ir_var_t *)k);
    if (!fast || !cond || !kr || !(cond->u.cond.cond = tilec_ir_binary(c->a, TILEC_BIN_LT, kr, f.s)))
        return lower_oom(c);
    cond->line = nest->line;
    cond->col = nest->col;
    cond->next = nest->next;
    nest->next = NULL;
    if (only_identity(fast)) { /* select(cond, x[i], y) into x[i]: nothing to do below s */
        cond->u.cond.cond->u.bin.op = TILEC_BIN_GE;
        cond->u.cond.then = nest;
    } else {
        cond->u.cond.then = fast;
        cond->u.cond.els = nest;
    }
    *link = cond;
    return 1;
}

/* uniform code: k is the innermost enclosing serial loop's variable (NULL: none) */
static int walk(lower_ctx_t *c, tilec_ir_stmt_t **link, const tilec_ir_var_t *k, int depth)
{
    if (depth > TILEC_IR_MAX_DEPTH)
        return lower_fail(c, TILEC_LOWER_E_INVALID, "statements nested too deeply");
    for (; *link; link = &(*link)->next) {
        tilec_ir_stmt_t *s = *link;
        if (s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PARALLEL) {
            int rc = k ? split_nest(c, link, k) : 0;
            if (rc < 0)
                return -1; /* split or not, *link's next is what followed the nest */
        } else if (s->kind == TILEC_ST_FOR) {
            if (walk(c, &s->u.loop.body, s->u.loop.var, depth + 1))
                return -1;
        } else if (s->kind == TILEC_ST_IF) {
            if (walk(c, &s->u.cond.then, k, depth + 1) || walk(c, &s->u.cond.els, k, depth + 1))
                return -1;
        }
    }
    return 0;
}

int lower_split(lower_ctx_t *c)
{
    return walk(c, &c->k->body, NULL, 0);
}
