/*
 * plugin-sdk/src/lower_util.c — helpers the lowering passes share: folded
 * int32 expression building (layout maps and stage indices stay readable
 * in the printed IR), substitution of a loop variable, the buffer accesses
 * of a statement over tilec_ir_walk, attribute setters that record
 * out-of-memory in the pass context, and target MMA lookups.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"

int64_t lower_dim(const tilec_ir_buffer_t *b, int d)
{
    int64_t v;
    if (!b || d < 0 || d >= b->ndim || !tilec_ir_is_const_int(b->shape[d], &v))
        return -1;
    return v;
}

tilec_ir_expr_t *lower_int(lower_ctx_t *c, int64_t v)
{
    tilec_ir_expr_t *e = tilec_ir_int(c->a, v, TILEC_INT32);
    if (!e)
        lower_oom(c);
    return e;
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

tilec_ir_expr_t *lower_op(lower_ctx_t *c, tilec_binop_t op, tilec_ir_expr_t *x, tilec_ir_expr_t *y)
{
    if (!x || !y)
        return NULL;
    int64_t a = 0, b = 0;
    int ca = tilec_ir_is_const_int(x, &a), cb = tilec_ir_is_const_int(y, &b);
    if (ca && cb && x->dtype == TILEC_INT32 && y->dtype == TILEC_INT32) {
        switch (op) {
        case TILEC_BIN_ADD: return lower_int(c, a + b);
        case TILEC_BIN_SUB: return lower_int(c, a - b);
        case TILEC_BIN_MUL: return lower_int(c, a * b);
        case TILEC_BIN_FLOORDIV: if (b) return lower_int(c, floordiv(a, b)); break;
        case TILEC_BIN_FLOORMOD: if (b) return lower_int(c, a - floordiv(a, b) * b); break;
        default: break;
        }
    }
    switch (op) {
    case TILEC_BIN_ADD:
        if (cb && b == 0)
            return x;
        if (ca && a == 0)
            return y;
        break;
    case TILEC_BIN_SUB:
        if (cb && b == 0)
            return x;
        break;
    case TILEC_BIN_MUL:
        if ((cb && b == 1) || (ca && a == 0))
            return x; /* x * 1, 0 * y */
        if ((cb && b == 0) || (ca && a == 1))
            return y; /* x * 0, 1 * y */
        break;
    case TILEC_BIN_FLOORDIV:
        if (cb && b == 1)
            return x;
        /* (x % a) // b = 0 when a <= b */
        if (cb && b > 0 && x->kind == TILEC_EX_BINARY && x->u.bin.op == TILEC_BIN_FLOORMOD &&
            tilec_ir_is_const_int(x->u.bin.b, &a) && a > 0 && a <= b)
            return lower_int(c, 0);
        break;
    case TILEC_BIN_FLOORMOD:
        if (cb && b == 1)
            return lower_int(c, 0);
        /* (x % a) % b = x % b when b divides a */
        if (cb && b > 0 && x->kind == TILEC_EX_BINARY && x->u.bin.op == TILEC_BIN_FLOORMOD &&
            tilec_ir_is_const_int(x->u.bin.b, &a) && a > 0 && a % b == 0)
            return lower_op(c, op, x->u.bin.a, y);
        break;
    default:
        break;
    }
    tilec_ir_expr_t *e = tilec_ir_binary(c->a, op, x, y);
    if (!e)
        lower_oom(c);
    return e;
}

tilec_ir_expr_t *lower_opi(lower_ctx_t *c, tilec_binop_t op, tilec_ir_expr_t *x, int64_t y)
{
    return lower_op(c, op, x, lower_int(c, y));
}

tilec_ir_expr_t *lower_divb(lower_ctx_t *c, tilec_ir_expr_t *x, int64_t d, int64_t bound)
{
    return bound <= d ? lower_int(c, 0) : lower_opi(c, TILEC_BIN_FLOORDIV, x, d);
}

tilec_ir_expr_t *lower_modb(lower_ctx_t *c, tilec_ir_expr_t *x, int64_t d, int64_t bound)
{
    return bound <= d ? x : lower_opi(c, TILEC_BIN_FLOORMOD, x, d);
}

/* a deep copy, with v replaced by `by` */
static tilec_ir_expr_t *subst(lower_ctx_t *c, const tilec_ir_expr_t *e, const tilec_ir_var_t *v,
                              tilec_ir_expr_t *by, int depth)
{
    if (!e || depth > TILEC_IR_MAX_DEPTH)
        return NULL;
    if (e->kind == TILEC_EX_VAR && e->u.var == v)
        return subst(c, by, NULL, NULL, depth + 1);
    tilec_ir_expr_t *n = tilec_arena_alloc(c->a, sizeof *n);
    if (!n) {
        lower_oom(c);
        return NULL;
    }
    *n = *e;
    switch (e->kind) {
    case TILEC_EX_LOAD: {
        int nd = e->u.load.buf->ndim;
        n->u.load.idx = tilec_arena_alloc(c->a, sizeof *n->u.load.idx * (size_t)(nd ? nd : 1));
        if (!n->u.load.idx) {
            lower_oom(c);
            return NULL;
        }
        for (int d = 0; d < nd; d++)
            if (!(n->u.load.idx[d] = subst(c, e->u.load.idx[d], v, by, depth + 1)))
                return NULL;
        break;
    }
    case TILEC_EX_UNARY:
        if (!(n->u.un.a = subst(c, e->u.un.a, v, by, depth + 1)))
            return NULL;
        break;
    case TILEC_EX_BINARY:
        if (!(n->u.bin.a = subst(c, e->u.bin.a, v, by, depth + 1)) ||
            !(n->u.bin.b = subst(c, e->u.bin.b, v, by, depth + 1)))
            return NULL;
        break;
    case TILEC_EX_SELECT:
        if (!(n->u.sel.cond = subst(c, e->u.sel.cond, v, by, depth + 1)) ||
            !(n->u.sel.a = subst(c, e->u.sel.a, v, by, depth + 1)) ||
            !(n->u.sel.b = subst(c, e->u.sel.b, v, by, depth + 1)))
            return NULL;
        break;
    case TILEC_EX_CAST:
        if (!(n->u.cast.a = subst(c, e->u.cast.a, v, by, depth + 1)))
            return NULL;
        break;
    default:
        break;
    }
    return n;
}

tilec_ir_expr_t *lower_subst(lower_ctx_t *c, const tilec_ir_expr_t *e, const tilec_ir_var_t *v,
                             tilec_ir_expr_t *by)
{
    return subst(c, e, v, by, 0);
}

static int pure_pre(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    (void)w;
    if (e->kind == TILEC_EX_LOAD || (e->kind == TILEC_EX_VAR && e->u.var->kind == TILEC_VAR_LET))
        return TILEC_WALK_STOP;
    return TILEC_WALK_CONTINUE;
}

int lower_expr_pure(const tilec_ir_expr_t *e)
{
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.expr_pre = pure_pre;
    tilec_ir_expr_t *slot = (tilec_ir_expr_t *)e;
    return e && tilec_ir_walk_expr(&w, &slot) == 0;
}

/* ---- loop invariance: no loads, no let variable the loop assigns ----------- */

static int assigns_pre(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    const tilec_ir_var_t *v = w->user;
    return s->kind == TILEC_ST_ASSIGN && s->u.assign.var == v ? TILEC_WALK_STOP : TILEC_WALK_CONTINUE;
}

static int assigned_in(tilec_ir_stmt_t *body, const tilec_ir_var_t *v)
{
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = assigns_pre;
    w.user = (void *)v;
    tilec_ir_stmt_t *list = body;
    return tilec_ir_walk_block(&w, &list) != 0;
}

static int inv_pre(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    if (e->kind == TILEC_EX_LOAD ||
        (e->kind == TILEC_EX_VAR && e->u.var->kind == TILEC_VAR_LET && assigned_in(w->user, e->u.var)))
        return TILEC_WALK_STOP;
    return TILEC_WALK_CONTINUE;
}

int lower_expr_invariant(const tilec_ir_expr_t *e, tilec_ir_stmt_t *body)
{
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.expr_pre = inv_pre;
    w.user = body;
    tilec_ir_expr_t *slot = (tilec_ir_expr_t *)e;
    return e && tilec_ir_walk_expr(&w, &slot) == 0;
}

tilec_ir_stmt_t *lower_stmt_at(lower_ctx_t *c, tilec_stmt_kind_t kind, const tilec_ir_stmt_t *at)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(c->a, kind);
    if (!s) {
        lower_oom(c);
        return NULL;
    }
    s->line = at->line;
    s->col = at->col;
    return s;
}

static int mentions_pre(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    return e->kind == TILEC_EX_VAR && e->u.var == w->user ? TILEC_WALK_STOP : TILEC_WALK_CONTINUE;
}

int lower_mentions(tilec_ir_expr_t *e, const tilec_ir_var_t *v)
{
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.expr_pre = mentions_pre;
    w.user = (void *)v;
    return tilec_ir_walk_expr(&w, &e) != 0;
}

int64_t lower_ring_stage(int64_t k, int S) { return k % S; }
int64_t lower_ring_parity(int64_t k, int S) { return (k / S) % 2; }
int64_t lower_ring_ahead(int64_t k, int S) { return (k + S - 1) % S; }

typedef struct bind_k {
    const tilec_ir_var_t *k;
    int64_t v;
} bind_k_t;

static int bind_one(void *ctx, const tilec_ir_var_t *v, int64_t *out)
{
    const bind_k_t *b = ctx;
    if (v != b->k)
        return -1;
    *out = b->v;
    return 0;
}

int lower_is_fn_of_k(const tilec_ir_expr_t *e, const tilec_ir_var_t *k, int S,
                     int64_t (*f)(int64_t, int))
{
    if (!e)
        return 0;
    for (int64_t i = 0; i <= 3 * (int64_t)S; i++) {
        bind_k_t b = {k, i};
        int64_t got;
        if (tilec_ir_eval_int(e, bind_one, &b, &got) != 0 || got != f(i, S))
            return 0;
    }
    return 1;
}

int lower_walk_stmts(lower_ctx_t *c, int (*pre)(tilec_ir_walk_t *w, tilec_ir_stmt_t *s))
{
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = pre;
    w.user = c;
    if (tilec_ir_walk_block(&w, &c->k->body) < 0)
        return c->code != TILEC_LOWER_OK ? -1 : lower_oom(c);
    return 0;
}

/* ---- attributes ------------------------------------------------------------ */

static int attr_rc(lower_ctx_t *c, int rc)
{
    return rc == 0 ? 0 : lower_oom(c);
}

int lower_sattr_int(lower_ctx_t *c, tilec_ir_stmt_t *s, const char *key, int64_t v)
{
    return attr_rc(c, tilec_ir_attr_set_int(c->a, &s->nattrs, &s->attrs, key, v));
}

int lower_sattr_str(lower_ctx_t *c, tilec_ir_stmt_t *s, const char *key, const char *v)
{
    return attr_rc(c, tilec_ir_attr_set_str(c->a, &s->nattrs, &s->attrs, key, v));
}

int lower_sattr_tuple(lower_ctx_t *c, tilec_ir_stmt_t *s, const char *key, const int64_t *v, int n)
{
    return attr_rc(c, tilec_ir_attr_set_tuple(c->a, &s->nattrs, &s->attrs, key, v, n));
}

int lower_battr_int(lower_ctx_t *c, tilec_ir_buffer_t *b, const char *key, int64_t v)
{
    return attr_rc(c, tilec_ir_attr_set_int(c->a, &b->nattrs, &b->attrs, key, v));
}

int lower_battr_str(lower_ctx_t *c, tilec_ir_buffer_t *b, const char *key, const char *v)
{
    return attr_rc(c, tilec_ir_attr_set_str(c->a, &b->nattrs, &b->attrs, key, v));
}

const tilec_ir_attr_t *lower_sattr(const tilec_ir_stmt_t *s, const char *key)
{
    return tilec_ir_attr_get(s->nattrs, s->attrs, key);
}

const tilec_ir_attr_t *lower_battr(const tilec_ir_buffer_t *b, const char *key)
{
    return tilec_ir_attr_get(b->nattrs, b->attrs, key);
}

/* ---- buffer accesses ----------------------------------------------------------- */

typedef struct acc_walk {
    lower_access_fn fn;
    void *user;
    tilec_ir_stmt_t *copy, *orig;   /* the walked copy of the top statement, and it */
} acc_walk_t;

static tilec_ir_stmt_t *orig_of(acc_walk_t *aw, tilec_ir_stmt_t *s)
{
    return s == aw->copy ? aw->orig : s;
}

static int acc_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    acc_walk_t *aw = w->user;
    tilec_ir_stmt_t *o = orig_of(aw, s);
    switch (s->kind) {
    case TILEC_ST_STORE: aw->fn(aw->user, o, s->u.store.buf, LOWER_WRITE); break;
    case TILEC_ST_COPY:
    case TILEC_ST_COPY_ASYNC:
        aw->fn(aw->user, o, s->u.copy.src.buf, LOWER_READ);
        aw->fn(aw->user, o, s->u.copy.dst.buf, LOWER_WRITE);
        break;
    case TILEC_ST_FILL: aw->fn(aw->user, o, s->u.fill.dst.buf, LOWER_WRITE); break;
    case TILEC_ST_GEMM:
        aw->fn(aw->user, o, s->u.gemm.a, LOWER_READ);
        aw->fn(aw->user, o, s->u.gemm.b, LOWER_READ);
        aw->fn(aw->user, o, s->u.gemm.c,
               s->u.gemm.clear_accum ? LOWER_WRITE : LOWER_READ | LOWER_WRITE);
        break;
    case TILEC_ST_REDUCE:
        aw->fn(aw->user, o, s->u.reduce.src, LOWER_READ);
        aw->fn(aw->user, o, s->u.reduce.dst, s->u.reduce.clear ? LOWER_WRITE : LOWER_READ | LOWER_WRITE);
        break;
    case TILEC_ST_CUMSUM:
        aw->fn(aw->user, o, s->u.cumsum.src, LOWER_READ);
        aw->fn(aw->user, o, s->u.cumsum.dst, LOWER_WRITE);
        break;
    case TILEC_ST_ATOMIC: aw->fn(aw->user, o, s->u.atomic.buf, LOWER_READ | LOWER_WRITE); break;
    case TILEC_ST_PRINT:
        if (s->u.print.buf)
            aw->fn(aw->user, o, s->u.print.buf, LOWER_READ);
        break;
    default: break;
    }
    return TILEC_WALK_CONTINUE;
}

static int acc_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    acc_walk_t *aw = w->user;
    if (e->kind == TILEC_EX_LOAD && w->stmt)
        aw->fn(aw->user, orig_of(aw, w->stmt), e->u.load.buf, LOWER_READ);
    return TILEC_WALK_CONTINUE;
}

int lower_accesses(tilec_ir_stmt_t *s, lower_access_fn fn, void *user)
{
    tilec_ir_stmt_t one = *s, *list = &one;
    one.next = NULL;
    acc_walk_t aw = {fn, user, &one, s};
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = acc_stmt;
    w.expr_pre = acc_expr;
    w.user = &aw;
    return tilec_ir_walk_block(&w, &list) < 0 ? -1 : 0;
}

typedef struct use_q {
    const tilec_ir_buffer_t *b;
    int how;
} use_q_t;

static void use_cb(void *user, tilec_ir_stmt_t *s, tilec_ir_buffer_t *b, int how)
{
    use_q_t *q = user;
    (void)s;
    if (b == q->b)
        q->how |= how;
}

int lower_uses(tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b)
{
    use_q_t q = {b, 0};
    if (lower_accesses(s, use_cb, &q) != 0)
        return LOWER_READ | LOWER_WRITE;
    return q.how;
}

int tilec_lower_uses(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b)
{
    return lower_uses((tilec_ir_stmt_t *)s, b);
}

int lower_uses_list(tilec_ir_stmt_t *list, const tilec_ir_buffer_t *b)
{
    int how = 0;
    for (tilec_ir_stmt_t *s = list; s; s = s->next)
        how |= lower_uses(s, b);
    return how;
}

int lower_region_whole(const tilec_ir_region_t *r)
{
    for (int d = 0; d < r->buf->ndim; d++) {
        int64_t v;
        if (!tilec_ir_is_const_int(r->base[d], &v) || v != 0 || r->extent[d] != lower_dim(r->buf, d))
            return 0;
    }
    return 1;
}

/* a store of every element of b: indices that are the nest's loop
 * variables, each once, over b's whole dimensions */
static int store_covers(const tilec_ir_stmt_t *st, const tilec_ir_buffer_t *b, const tilec_ir_stmt_t *const *lv, int n)
{
    if (!st || st->kind != TILEC_ST_STORE || st->u.store.buf != b || b->ndim != n)
        return 0;
    for (int d = 0; d < n; d++) {
        const tilec_ir_expr_t *e = st->u.store.idx[d];
        int hit = -1;
        for (int i = 0; i < n && e && e->kind == TILEC_EX_VAR; i++)
            if (lv[i]->u.loop.var == e->u.var)
                hit = i;
        int64_t x;
        if (hit < 0 || !tilec_ir_is_const_int(lv[hit]->u.loop.extent, &x) || x != lower_dim(b, d))
            return 0;
        for (int d2 = 0; d2 < d; d2++)
            if (st->u.store.idx[d2]->kind == TILEC_EX_VAR && st->u.store.idx[d2]->u.var == e->u.var)
                return 0;
    }
    return 1;
}

/* T.Parallel nests that store all of b (a transposed copy, a gathered copy
 * through a re-view, T.im2col): the store, or both arms of an if */
static int nest_overwrite(tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b)
{
    const tilec_ir_stmt_t *lv[TILEC_IR_MAX_DIMS];
    int n = 0;
    const tilec_ir_stmt_t *p = s;
    while (p && p->kind == TILEC_ST_FOR && p->u.loop.kind == TILEC_LOOP_PARALLEL && n < TILEC_IR_MAX_DIMS) {
        lv[n++] = p;
        p = p->u.loop.body;
        if (!p || p->next)
            return 0;
    }
    if (!n || !p || (lower_uses(s, b) & LOWER_READ))
        return 0;
    if (p->kind == TILEC_ST_IF)
        return p->u.cond.then && !p->u.cond.then->next && p->u.cond.els && !p->u.cond.els->next &&
               store_covers(p->u.cond.then, b, lv, n) && store_covers(p->u.cond.els, b, lv, n);
    return store_covers(p, b, lv, n);
}

int lower_full_overwrite(tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b)
{
    switch (s->kind) {
    case TILEC_ST_FOR:
        return nest_overwrite(s, b);
    case TILEC_ST_COPY:
        return s->u.copy.dst.buf == b && s->u.copy.src.buf != b && lower_region_whole(&s->u.copy.dst) &&
               !(lower_uses(s, b) & LOWER_READ);
    case TILEC_ST_FILL:
        return s->u.fill.dst.buf == b && lower_region_whole(&s->u.fill.dst) &&
               !(lower_uses(s, b) & LOWER_READ);
    case TILEC_ST_REDUCE:
        return s->u.reduce.dst == b && s->u.reduce.clear && s->u.reduce.src != b;
    case TILEC_ST_CUMSUM:
        return s->u.cumsum.dst == b && s->u.cumsum.src != b;
    case TILEC_ST_GEMM:
        return s->u.gemm.c == b && s->u.gemm.clear_accum && s->u.gemm.a != b && s->u.gemm.b != b;
    default:
        return 0;
    }
}

/* ---- target lookups ---------------------------------------------------------- */

const tilec_target_mma_t *lower_gemm_mma(const lower_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_attr_t *a = lower_sattr(s, "lower.mma");
    if (!a || a->kind != TILEC_ATTR_STRING)
        return NULL;
    for (int i = 0; i < c->t->nmma; i++)
        if (strcmp(c->t->mma[i].name, a->s) == 0)
            return &c->t->mma[i];
    return NULL;
}

int lower_swizzle_width(const tilec_ir_buffer_t *b)
{
    size_t es = tilec_dtype_size(b->dtype);
    if (b->ndim < 2 || (es != 2 && es != 1) || b->dtype == TILEC_BOOL ||
        (b->scope != TILEC_SCOPE_SHARED && b->scope != TILEC_SCOPE_FRAGMENT))
        return 0;
    int64_t R = lower_dim(b, b->ndim - 2), C = lower_dim(b, b->ndim - 1);
    if (R <= 0 || R % 8 || C <= 0)
        return 0;
    /* 128-, 64- and 32-byte swizzle rows */
    int64_t w128 = 128 / (int64_t)es;
    return C % w128 == 0 ? (int)w128 : C == w128 / 2 ? (int)(w128 / 2) : C == w128 / 4 ? (int)(w128 / 4) : 0;
}

static int dense_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    int *dense = w->user;
    if (s->kind == TILEC_ST_REDUCE)
        dense[s->u.reduce.src->id] = dense[s->u.reduce.dst->id] = 1;
    else if (s->kind == TILEC_ST_CUMSUM)
        dense[s->u.cumsum.src->id] = dense[s->u.cumsum.dst->id] = 1;
    else if (s->kind == TILEC_ST_PRINT && s->u.print.buf)
        dense[s->u.print.buf->id] = 1;
    return TILEC_WALK_CONTINUE;
}

int lower_dense_uses(tilec_ir_kernel_t *k, int *dense)
{
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = dense_stmt;
    w.user = dense;
    return tilec_ir_walk_block(&w, &k->body) < 0 ? -1 : 0;
}

tilec_ir_var_t *lower_new_loop_var(lower_ctx_t *c, const char *suffix, const char *base)
{
    char name[96];
    for (int i = 0; i < 1000; i++) {
        if (i)
            snprintf(name, sizeof name, "%s%s%d", base, suffix, i);
        else
            snprintf(name, sizeof name, "%s%s", base, suffix);
        int clash = 0;
        for (int v = 0; v < c->k->nvars && !clash; v++)
            clash = strcmp(c->k->vars[v]->name, name) == 0;
        if (!clash) {
            tilec_ir_var_t *v = tilec_ir_var_add(c->a, c->k, name, TILEC_INT32, TILEC_VAR_LOOP);
            if (!v)
                lower_oom(c);
            return v;
        }
    }
    lower_fail(c, TILEC_LOWER_E_PASS, "no free name for a loop variable from '%s'", base);
    return NULL;
}

/* The end of the shared-memory plan: the highest offset + size of a buffer
 * placed in shared memory. */
int64_t lower_smem_end(const tilec_ir_kernel_t *k)
{
    int64_t end = 0;
    for (int i = 0; i < k->nbufs; i++) {
        const tilec_ir_layout_t *L = k->bufs[i]->layout;
        if (L && L->kind == TILEC_LAYOUT_SMEM && L->offset + L->size > end)
            end = L->offset + L->size;
    }
    return end;
}

/* The shared memory the kernel's mbarriers take (8 bytes each). */
int64_t lower_mbar_bytes(const tilec_ir_kernel_t *k)
{
    int64_t n = 0;
    for (int i = 0; i < k->nmbars; i++)
        n += 8 * (int64_t)k->mbars[i]->size;
    return n;
}

/* A new array of size mbarriers named BASE_SUFFIX (BASE_SUFFIXn when that
 * name is taken); NULL with the failure set. */
tilec_ir_mbarrier_t *lower_mbar_new(lower_ctx_t *c, const char *base, const char *suffix, int size)
{
    char name[96];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, i ? "%s_%s%d" : "%s_%s", base, suffix, i);
        int clash = 0;
        for (int j = 0; j < c->k->nmbars && !clash; j++)
            clash = strcmp(c->k->mbars[j]->name, name) == 0;
        if (!clash) {
            tilec_ir_mbarrier_t *b = tilec_ir_mbarrier_add(c->a, c->k, name, size, 1);
            if (!b)
                lower_oom(c);
            return b;
        }
    }
    lower_fail(c, TILEC_LOWER_E_PASS, "no free mbarrier name for loop '%s'", base);
    return NULL;
}

int64_t lower_swizzle_panel(const tilec_ir_stmt_t *s)
{
    int64_t v;
    if (s && s->kind == TILEC_ST_HINT && s->u.hint.name && strcmp(s->u.hint.name, "use_swizzle") == 0 &&
        s->u.hint.nargs >= 1 && tilec_ir_is_const_int(s->u.hint.args[0], &v) && v > 0 && v < (1 << 20))
        return v;
    return 0;
}

int lower_swizzle_order(const tilec_ir_stmt_t *s)
{
    int64_t v;
    if (lower_swizzle_panel(s) && s->u.hint.nargs >= 2 && tilec_ir_is_const_int(s->u.hint.args[1], &v) &&
        (v == 0 || v == 1))
        return (int)v;
    return -1;
}

tilec_ir_stmt_t *lower_hint(lower_ctx_t *c, const char *name, const int64_t *args, int nargs, const tilec_ir_stmt_t *at)
{
    tilec_ir_stmt_t *h = lower_stmt_at(c, TILEC_ST_HINT, at);
    tilec_ir_expr_t **a = h && nargs > 0 ? tilec_arena_alloc(c->a, sizeof *a * (size_t)nargs) : NULL;
    if (!h || (nargs > 0 && !a)) {
        if (h)
            lower_oom(c);
        return NULL;
    }
    for (int i = 0; i < nargs; i++)
        if (!(a[i] = lower_int(c, args[i])))
            return NULL;
    h->u.hint.name = name;
    h->u.hint.nargs = nargs;
    h->u.hint.args = a;
    return h;
}
