/*
 * core/pass_safe_memory.c — boundary-safe direct global accesses.
 *
 * A tile program may index a global tensor directly (`Y[bx * blk + i, k] =
 * m[i]`, `x = X[row, col]`, `T.atomic_add(Out[i], v)`).  TileLang guards
 * every such access whose bounds it cannot prove (its
 * LegalizeSafeMemoryAccess pass), and real kernels with ragged sizes rely
 * on it; tilec gives the same semantics to every backend and to the
 * interpreter by rewriting the IR before either sees it:
 *   - a store or atomic whose index may fall outside the tensor is wrapped
 *     in `if (in bounds)`: out of bounds it is skipped;
 *   - a load that may fall outside reads 0, or the value given for its
 *     tensor by T.annotate_safe_value (buffer attribute
 *     "frontend.safe_value", consumed and removed here): it becomes
 *     `select(in bounds, load(clamped index), safe)`.  The index is clamped
 *     into the tensor so that the load stays in bounds even where a backend
 *     evaluates both arms of a select.
 * The prover drops the guard when every index is provably inside its
 * dimension: interval arithmetic over constants, loop variables (0 ..
 * extent-1), block indices (0 .. grid-1), T.dynamic symbols (>= 0), + - *
 * // % min max and integer casts, checked against constant extents; a
 * variable whose loop extent or grid extent is the dimension itself
 * (`for i in T.Parallel(N)` over a tensor of N rows); and the comparisons
 * of enclosing `if`s and selects (`if g < M: Y[g] = ...`).  So constant
 * shapes that tile evenly, and kernels that guard themselves, keep no
 * guard.  Copies, fills and atomics on regions are boundary-safe already
 * (docs/ir.md) and are not touched.
 */
#include "passes.h"

#include <stdint.h>
#include <string.h>

#define SM_MAX_FACTS 64
#define SM_BOUND ((int64_t)1 << 40)   /* intervals beyond this are "unknown" */

/* What an enclosing condition says: e < bound + off (upper), e >= lo (lower). */
typedef struct fact {
    const tilec_ir_expr_t *e;
    const tilec_ir_expr_t *bound;   /* upper facts */
    int64_t off;
    int upper;
    int64_t lo;                      /* lower facts */
} fact_t;

typedef struct sm {
    tilec_arena_t *a;
    tilec_ir_kernel_t *k;
    int oom;
    fact_t facts[SM_MAX_FACTS];
    int nfacts;
    const tilec_ir_expr_t **ext;     /* [nvars]: extent of a loop or block variable, NULL when unknown */
    int guards;                      /* accesses guarded (for the log) */
} sm_t;

typedef struct iv { int lo_ok, hi_ok; int64_t lo, hi; } iv_t;

static void *chk(sm_t *s, void *p)
{
    if (!p) s->oom = 1;
    return p;
}

/* Structural equality of integer expressions (the frontend may build equal
 * expressions as separate nodes). */
static int same(const tilec_ir_expr_t *x, const tilec_ir_expr_t *y, int depth)
{
    if (x == y) return 1;
    if (!x || !y || depth > 64 || x->kind != y->kind || x->dtype != y->dtype) return 0;
    switch (x->kind) {
    case TILEC_EX_INT: return x->u.i == y->u.i;
    case TILEC_EX_VAR: return x->u.var == y->u.var;
    case TILEC_EX_UNARY: return x->u.un.op == y->u.un.op && same(x->u.un.a, y->u.un.a, depth + 1);
    case TILEC_EX_BINARY:
        return x->u.bin.op == y->u.bin.op && same(x->u.bin.a, y->u.bin.a, depth + 1) &&
               same(x->u.bin.b, y->u.bin.b, depth + 1);
    case TILEC_EX_CAST: return same(x->u.cast.a, y->u.cast.a, depth + 1);
    default: return 0;   /* loads, floats, selects: never assumed equal */
    }
}

/* Whether e depends only on values that cannot change inside the kernel
 * body (constants, block indices, loop variables, symbols): facts about it
 * stay true wherever the condition holds. */
static int is_stable(const tilec_ir_expr_t *e, int depth)
{
    if (depth > 64) return 0;
    switch (e->kind) {
    case TILEC_EX_INT: return 1;
    case TILEC_EX_VAR: return e->u.var->kind != TILEC_VAR_LET;
    case TILEC_EX_UNARY: return is_stable(e->u.un.a, depth + 1);
    case TILEC_EX_BINARY: return is_stable(e->u.bin.a, depth + 1) && is_stable(e->u.bin.b, depth + 1);
    case TILEC_EX_CAST: return tilec_dtype_is_int(e->dtype) && is_stable(e->u.cast.a, depth + 1);
    default: return 0;
    }
}

static void add_fact(sm_t *s, fact_t f)
{
    if (s->nfacts < SM_MAX_FACTS) s->facts[s->nfacts++] = f;
}

/* Records what `cond` being true says about integer expressions. */
static void learn(sm_t *s, const tilec_ir_expr_t *c, int depth)
{
    const tilec_ir_expr_t *a, *b;
    int64_t v;
    if (depth > 16 || c->kind != TILEC_EX_BINARY) return;
    if (c->u.bin.op == TILEC_BIN_AND) {
        learn(s, c->u.bin.a, depth + 1);
        learn(s, c->u.bin.b, depth + 1);
        return;
    }
    a = c->u.bin.a;
    b = c->u.bin.b;
    if (!tilec_dtype_is_int(a->dtype) || !is_stable(a, 0) || !is_stable(b, 0)) return;
    switch (c->u.bin.op) {
    case TILEC_BIN_LT: add_fact(s, (fact_t){a, b, 0, 1, 0}); break;          /* a < b */
    case TILEC_BIN_LE: add_fact(s, (fact_t){a, b, 1, 1, 0}); break;          /* a < b + 1 */
    case TILEC_BIN_GT: add_fact(s, (fact_t){b, a, 0, 1, 0}); break;          /* b < a */
    case TILEC_BIN_GE: add_fact(s, (fact_t){b, a, 1, 1, 0}); break;          /* b < a + 1 */
    default: return;
    }
    /* lower bounds against constants: a >= c, a > c, c <= b, c < b */
    if ((c->u.bin.op == TILEC_BIN_GE || c->u.bin.op == TILEC_BIN_GT) && tilec_ir_is_const_int(b, &v))
        add_fact(s, (fact_t){a, NULL, 0, 0, c->u.bin.op == TILEC_BIN_GT ? v + 1 : v});
    if ((c->u.bin.op == TILEC_BIN_LE || c->u.bin.op == TILEC_BIN_LT) && tilec_ir_is_const_int(a, &v))
        add_fact(s, (fact_t){b, NULL, 0, 0, c->u.bin.op == TILEC_BIN_LT ? v + 1 : v});
}

static int64_t clampb(int64_t x) { return x > SM_BOUND ? SM_BOUND : x < -SM_BOUND ? -SM_BOUND : x; }

static iv_t range(sm_t *s, const tilec_ir_expr_t *e, int depth);

static iv_t facts_range(sm_t *s, const tilec_ir_expr_t *e, iv_t r)
{
    int i;
    int64_t c;
    for (i = 0; i < s->nfacts; i++) {
        fact_t *f = &s->facts[i];
        if (!same(f->e, e, 0)) continue;
        if (!f->upper) {
            if (!r.lo_ok || f->lo > r.lo) r.lo = f->lo;
            r.lo_ok = 1;
        } else if (tilec_ir_is_const_int(f->bound, &c)) {
            if (!r.hi_ok || c + f->off - 1 < r.hi) r.hi = c + f->off - 1;
            r.hi_ok = 1;
        }
    }
    return r;
}

static iv_t range(sm_t *s, const tilec_ir_expr_t *e, int depth)
{
    iv_t r = {0, 0, 0, 0}, x, y;
    int64_t c;
    if (depth > 64) return r;
    switch (e->kind) {
    case TILEC_EX_INT:
        r.lo_ok = r.hi_ok = 1;
        r.lo = r.hi = clampb(e->u.i);
        return r;
    case TILEC_EX_VAR: {
        const tilec_ir_var_t *v = e->u.var;
        if (v->kind == TILEC_VAR_BLOCK || v->kind == TILEC_VAR_LOOP || v->kind == TILEC_VAR_SYM) {
            r.lo_ok = 1;
            r.lo = 0;
        }
        if ((v->kind == TILEC_VAR_BLOCK || v->kind == TILEC_VAR_LOOP) && v->id < s->k->nvars && s->ext[v->id]) {
            x = range(s, s->ext[v->id], depth + 1);
            if (x.hi_ok) {
                r.hi_ok = 1;
                r.hi = x.hi - 1;
            }
        }
        return facts_range(s, e, r);
    }
    case TILEC_EX_CAST:
        if (!tilec_dtype_is_int(e->dtype) || !tilec_dtype_is_int(e->u.cast.a->dtype) ||
            tilec_dtype_size(e->dtype) < tilec_dtype_size(e->u.cast.a->dtype))
            return facts_range(s, e, r);
        return facts_range(s, e, range(s, e->u.cast.a, depth + 1));
    case TILEC_EX_BINARY:
        if (!tilec_dtype_is_int(e->dtype)) return r;
        x = range(s, e->u.bin.a, depth + 1);
        y = range(s, e->u.bin.b, depth + 1);
        switch (e->u.bin.op) {
        case TILEC_BIN_ADD:
            r.lo_ok = x.lo_ok && y.lo_ok;
            r.hi_ok = x.hi_ok && y.hi_ok;
            r.lo = clampb(x.lo + y.lo);
            r.hi = clampb(x.hi + y.hi);
            break;
        case TILEC_BIN_SUB:
            r.lo_ok = x.lo_ok && y.hi_ok;
            r.hi_ok = x.hi_ok && y.lo_ok;
            r.lo = clampb(x.lo - y.hi);
            r.hi = clampb(x.hi - y.lo);
            break;
        case TILEC_BIN_MUL:
            if (tilec_ir_is_const_int(e->u.bin.b, &c) || tilec_ir_is_const_int(e->u.bin.a, &c)) {
                iv_t o = tilec_ir_is_const_int(e->u.bin.b, NULL) ? x : y;
                c = clampb(c);
                if (c >= 0) {
                    r.lo_ok = o.lo_ok;
                    r.hi_ok = o.hi_ok;
                    r.lo = clampb(o.lo * c);
                    r.hi = clampb(o.hi * c);
                } else {
                    r.lo_ok = o.hi_ok;
                    r.hi_ok = o.lo_ok;
                    r.lo = clampb(o.hi * c);
                    r.hi = clampb(o.lo * c);
                }
            } else if (x.lo_ok && y.lo_ok && x.lo >= 0 && y.lo >= 0) {
                r.lo_ok = 1;
                r.lo = clampb(x.lo * y.lo);
                r.hi_ok = x.hi_ok && y.hi_ok;
                r.hi = clampb(x.hi * y.hi);
            }
            break;
        case TILEC_BIN_FLOORDIV:
            if (tilec_ir_is_const_int(e->u.bin.b, &c) && c > 0) {
                r.lo_ok = x.lo_ok;
                r.hi_ok = x.hi_ok;
                r.lo = x.lo >= 0 ? x.lo / c : -((-x.lo + c - 1) / c);
                r.hi = x.hi >= 0 ? x.hi / c : -((-x.hi + c - 1) / c);
            }
            break;
        case TILEC_BIN_FLOORMOD:
            if (tilec_ir_is_const_int(e->u.bin.b, &c) && c > 0) {
                r.lo_ok = r.hi_ok = 1;
                r.lo = 0;
                r.hi = c - 1;
                if (x.lo_ok && x.hi_ok && x.lo >= 0 && x.hi < c) r.lo = x.lo, r.hi = x.hi;
            }
            break;
        case TILEC_BIN_MIN:
            r.lo_ok = x.lo_ok && y.lo_ok;
            r.lo = x.lo < y.lo ? x.lo : y.lo;
            r.hi_ok = x.hi_ok || y.hi_ok;
            r.hi = x.hi_ok && y.hi_ok ? (x.hi < y.hi ? x.hi : y.hi) : x.hi_ok ? x.hi : y.hi;
            break;
        case TILEC_BIN_MAX:
            r.hi_ok = x.hi_ok && y.hi_ok;
            r.hi = x.hi > y.hi ? x.hi : y.hi;
            r.lo_ok = x.lo_ok || y.lo_ok;
            r.lo = x.lo_ok && y.lo_ok ? (x.lo > y.lo ? x.lo : y.lo) : x.lo_ok ? x.lo : y.lo;
            break;
        default:
            break;
        }
        return facts_range(s, e, r);
    default:
        return facts_range(s, e, r);
    }
}

/* Whether 0 <= idx (lo) and idx < dim (hi) are provable. */
static void prove(sm_t *s, const tilec_ir_expr_t *idx, const tilec_ir_expr_t *dim, int *lo, int *hi)
{
    iv_t r = range(s, idx, 0), d = range(s, dim, 0);
    int i;
    *lo = r.lo_ok && r.lo >= 0;
    *hi = r.hi_ok && d.lo_ok && r.hi < d.lo;   /* d.lo: the smallest the dimension can be */
    if (*hi) return;
    /* a loop or block variable that runs over the dimension itself */
    if (idx->kind == TILEC_EX_VAR && idx->u.var->id < s->k->nvars && s->ext[idx->u.var->id] &&
        same(s->ext[idx->u.var->id], dim, 0)) {
        *hi = 1;
        return;
    }
    for (i = 0; i < s->nfacts; i++) {
        fact_t *f = &s->facts[i];
        int64_t c, dc;
        if (!f->upper || !same(f->e, idx, 0)) continue;
        if ((f->off <= 0 && same(f->bound, dim, 0)) ||
            (tilec_ir_is_const_int(f->bound, &c) && d.lo_ok && c + f->off <= d.lo) ||
            (tilec_ir_is_const_int(f->bound, &c) && tilec_ir_is_const_int(dim, &dc) && c + f->off <= dc)) {
            *hi = 1;
            return;
        }
    }
}

static tilec_ir_expr_t *i32(sm_t *s, int64_t v) { return chk(s, tilec_ir_int(s->a, v, TILEC_INT32)); }

static tilec_ir_expr_t *bin(sm_t *s, tilec_binop_t op, tilec_ir_expr_t *x, tilec_ir_expr_t *y)
{
    if (!x || !y) {
        s->oom = 1;
        return NULL;
    }
    return chk(s, tilec_ir_binary(s->a, op, x, y));
}

static tilec_ir_expr_t *and_(sm_t *s, tilec_ir_expr_t *c, tilec_ir_expr_t *t)
{
    return c ? bin(s, TILEC_BIN_AND, c, t) : t;
}

/* The condition that the access buf[idx] is inside buf, over the dimensions
 * not proven; NULL when every dimension is proven.  With clamped, the
 * unproven indices are also clamped into their dimension. */
static tilec_ir_expr_t *guard_of(sm_t *s, tilec_ir_buffer_t *b, tilec_ir_expr_t **idx, tilec_ir_expr_t **clamped)
{
    tilec_ir_expr_t *cond = NULL;
    int d;
    for (d = 0; d < b->ndim; d++) {
        int lo, hi;
        tilec_ir_expr_t *x = idx[d];
        if (clamped) clamped[d] = x;
        if (x->dtype != TILEC_INT32 || b->shape[d]->dtype != TILEC_INT32) continue;   /* verified int32 */
        prove(s, x, b->shape[d], &lo, &hi);
        if (!lo) cond = and_(s, cond, bin(s, TILEC_BIN_GE, x, i32(s, 0)));
        if (!hi) cond = and_(s, cond, bin(s, TILEC_BIN_LT, x, b->shape[d]));
        if (clamped && (!lo || !hi)) {
            tilec_ir_expr_t *c = x;
            int64_t n;
            if (!hi)
                c = bin(s, TILEC_BIN_MIN, c, tilec_ir_is_const_int(b->shape[d], &n)
                                                 ? i32(s, n - 1) : bin(s, TILEC_BIN_SUB, b->shape[d], i32(s, 1)));
            if (!lo || !hi) c = bin(s, TILEC_BIN_MAX, c, i32(s, 0));
            clamped[d] = c;
        }
    }
    return cond;
}

static tilec_ir_expr_t *safe_value(sm_t *s, tilec_ir_buffer_t *b)
{
    const tilec_ir_attr_t *at = tilec_ir_attr_get(b->nattrs, b->attrs, "frontend.safe_value");
    double f = at ? (at->kind == TILEC_ATTR_FLOAT ? at->f : (double)at->i) : 0.0;
    if (tilec_dtype_is_float(b->dtype)) return chk(s, tilec_ir_float(s->a, f, b->dtype));
    return chk(s, tilec_ir_int(s->a, at && at->kind == TILEC_ATTR_INT ? at->i : (int64_t)f, b->dtype));
}

static void expr(sm_t *s, tilec_ir_expr_t **slot, int depth);

static void expr_children(sm_t *s, tilec_ir_expr_t *e, int depth)
{
    int i, saved;
    switch (e->kind) {
    case TILEC_EX_LOAD:
        for (i = 0; i < e->u.load.buf->ndim; i++) expr(s, &e->u.load.idx[i], depth + 1);
        break;
    case TILEC_EX_UNARY: expr(s, &e->u.un.a, depth + 1); break;
    case TILEC_EX_BINARY:
        expr(s, &e->u.bin.a, depth + 1);
        saved = s->nfacts;
        if (e->u.bin.op == TILEC_BIN_AND) learn(s, e->u.bin.a, 0);   /* a and b: b is evaluated where a holds */
        expr(s, &e->u.bin.b, depth + 1);
        s->nfacts = saved;
        break;
    case TILEC_EX_SELECT:
        expr(s, &e->u.sel.cond, depth + 1);
        saved = s->nfacts;
        learn(s, e->u.sel.cond, 0);
        expr(s, &e->u.sel.a, depth + 1);
        s->nfacts = saved;
        expr(s, &e->u.sel.b, depth + 1);
        break;
    case TILEC_EX_CAST: expr(s, &e->u.cast.a, depth + 1); break;
    default: break;
    }
}

/* e reads memory (a buffer element) */
static int reads_mem(const tilec_ir_expr_t *e, int depth)
{
    if (!e || depth > 2000) return 0;
    switch (e->kind) {
    case TILEC_EX_LOAD: return 1;
    case TILEC_EX_BINARY: return reads_mem(e->u.bin.a, depth + 1) || reads_mem(e->u.bin.b, depth + 1);
    case TILEC_EX_UNARY: return reads_mem(e->u.un.a, depth + 1);
    case TILEC_EX_SELECT:
        return reads_mem(e->u.sel.cond, depth + 1) || reads_mem(e->u.sel.a, depth + 1) ||
               reads_mem(e->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return reads_mem(e->u.cast.a, depth + 1);
    default: return 0;
    }
}

/* Accesses the pass guards: global tensors, and a thread's own array
 * (T.alloc_local) indexed by a value read from memory (`nz_idx[nz_count]`,
 * a data-dependent position: past the end CUDA writes whatever lies
 * beyond, tilec skips the store and reads 0). */
static int guarded_buf(const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    int i;
    if (b->scope == TILEC_SCOPE_GLOBAL) return 1;
    if (b->scope != TILEC_SCOPE_LOCAL) return 0;
    for (i = 0; i < b->ndim; i++)
        if (reads_mem(idx[i], 0)) return 1;
    return 0;
}

static void expr(sm_t *s, tilec_ir_expr_t **slot, int depth)
{
    tilec_ir_expr_t *e = *slot, *cond, **cl, *ld;
    tilec_ir_buffer_t *b;
    if (!e || depth > 2000 || s->oom) return;
    expr_children(s, e, depth);
    if (e->kind != TILEC_EX_LOAD || !guarded_buf(e->u.load.buf, e->u.load.idx)) return;
    b = e->u.load.buf;
    cl = chk(s, tilec_arena_alloc(s->a, sizeof *cl * (size_t)b->ndim));
    if (!cl) return;
    cond = guard_of(s, b, e->u.load.idx, cl);
    if (!cond || s->oom) return;
    ld = chk(s, tilec_ir_load(s->a, b, cl));
    if (!ld) return;
    *slot = chk(s, tilec_ir_select(s->a, cond, ld, safe_value(s, b)));
    s->guards++;
}

static void block(sm_t *s, tilec_ir_stmt_t **list, int depth);

static void stmt(sm_t *s, tilec_ir_stmt_t **link, int depth)
{
    tilec_ir_stmt_t *st = *link, *g;
    tilec_ir_expr_t *cond = NULL;
    int i, saved;
    switch (st->kind) {
    case TILEC_ST_FOR:
        expr(s, &st->u.loop.extent, depth);
        if (st->u.loop.var->id < s->k->nvars) s->ext[st->u.loop.var->id] = is_stable(st->u.loop.extent, 0) ? st->u.loop.extent : NULL;
        block(s, &st->u.loop.body, depth + 1);
        return;
    case TILEC_ST_IF:
        expr(s, &st->u.cond.cond, depth);
        saved = s->nfacts;
        learn(s, st->u.cond.cond, 0);
        block(s, &st->u.cond.then, depth + 1);
        s->nfacts = saved;
        block(s, &st->u.cond.els, depth + 1);
        return;
    case TILEC_ST_STORE:
        for (i = 0; i < st->u.store.buf->ndim; i++) expr(s, &st->u.store.idx[i], depth);
        expr(s, &st->u.store.value, depth);
        if (guarded_buf(st->u.store.buf, st->u.store.idx)) cond = guard_of(s, st->u.store.buf, st->u.store.idx, NULL);
        break;
    case TILEC_ST_ATOMIC:
        for (i = 0; i < st->u.atomic.buf->ndim; i++) expr(s, &st->u.atomic.idx[i], depth);
        expr(s, &st->u.atomic.value, depth);
        if (st->u.atomic.buf->scope == TILEC_SCOPE_GLOBAL) cond = guard_of(s, st->u.atomic.buf, st->u.atomic.idx, NULL);
        break;
    case TILEC_ST_ASSIGN: expr(s, &st->u.assign.value, depth); return;
    case TILEC_ST_FILL: expr(s, &st->u.fill.value, depth); return;
    case TILEC_ST_PRINT: if (st->u.print.value) expr(s, &st->u.print.value, depth); return;
    case TILEC_ST_COPY:
        /* region bases may read tensors (offsets[b] * blk): their loads are guarded */
        for (i = 0; i < st->u.copy.src.buf->ndim; i++) expr(s, &st->u.copy.src.base[i], depth);
        for (i = 0; i < st->u.copy.dst.buf->ndim; i++) expr(s, &st->u.copy.dst.base[i], depth);
        return;
    default:
        return;
    }
    if (!cond || s->oom) return;
    g = chk(s, tilec_ir_stmt(s->a, TILEC_ST_IF));
    if (!g) return;
    g->line = st->line;
    g->col = st->col;
    g->u.cond.cond = cond;
    g->u.cond.then = st;
    g->next = st->next;
    st->next = NULL;
    *link = g;
    s->guards++;
}

static void block(sm_t *s, tilec_ir_stmt_t **list, int depth)
{
    tilec_ir_stmt_t **link;
    if (depth > 1000) return;
    for (link = list; *link && !s->oom; link = &(*link)->next) stmt(s, link, depth);
}

int tilec_pass_safe_memory(tilec_arena_t *a, tilec_ir_kernel_t *k, int *nguards)
{
    sm_t s;
    int i, j;
    memset(&s, 0, sizeof s);
    s.a = a;
    s.k = k;
    s.ext = tilec_arena_alloc(a, sizeof *s.ext * (size_t)(k->nvars + 1));
    if (!s.ext) return -1;
    for (i = 0; i < k->ngrid; i++)
        if (k->block[i] && k->block[i]->id < k->nvars && is_stable(k->grid[i], 0)) s.ext[k->block[i]->id] = k->grid[i];
    block(&s, &k->body, 0);
    /* the safe values are consumed: the attribute does not reach backends */
    for (i = 0; i < k->nbufs; i++) {
        tilec_ir_buffer_t *b = k->bufs[i];
        int n = 0;
        for (j = 0; j < b->nattrs; j++)
            if (strcmp(b->attrs[j].key, "frontend.safe_value")) b->attrs[n++] = b->attrs[j];
        b->nattrs = n;
    }
    if (nguards) *nguards = s.guards;
    return s.oom ? -1 : 0;
}
