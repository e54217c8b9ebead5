/*
 * plugin-sdk/src/lower_gather.c — gathered copies: T.Parallel nests that
 * fill a shared buffer element by element from a global tensor, moved in
 * vectors of W elements (16 bytes) instead.
 *
 * T.im2col and T.copy through a re-view (T.Tensor(shape, dtype, X.data))
 * reach the IR as element loops, because their source is not a region of
 * the tensor: each row of the unfolded image starts at its own pixel, and
 * a re-viewed row's position needs a division and a modulo.  Along the
 * innermost loop, though, the elements are consecutive in the tensor's
 * contiguous last dimension in runs that start on multiples of W, and the
 * padding test is the same for a whole run.  Such a nest is a gather:
 *
 *     for i in parallel(R):              (any number of outer loops)
 *       for j in parallel(X):            X a multiple of W
 *         store S[..., j] = select(cond, G[..., e], 0)   (selects may nest)
 *     or  if cond { store S[..., j] = G[..., e] } else { store S[..., j] = 0 }
 *
 * with S shared, G a global tensor of S's dtype whose last dimension is a
 * constant multiple of W, `e` = (a multiple of W) + j in the group, and
 * every other index of both sides and every condition the same for the W
 * elements of a group (j = W q + r, 0 <= r < W).  That is proved on the
 * expressions: each integer expression is U + s r with U known to be a
 * multiple of g (U does not depend on r); sums add, constant products
 * scale, and x // d, x % d keep the form when s (W - 1) < gcd(g, d) (no
 * group crosses a multiple of d); a comparison x < y is the same for the
 * group when (x - y) = U + s r with s >= 0 and s (W - 1) < g.  (T.im2col's
 * column k = kt * block_K + j with block_K and C multiples of W: k // C
 * and the tap it names are group constants, k % C runs along j.)
 *
 * lower_gather_width answers the W a nest allows; the vector pass marks
 * such a nest's innermost loop lower.vector = W once the shared layout
 * is known to keep the W elements together, the pipeline pass turns one
 * leading a T.Pipelined body into an asynchronous ring fill (a clone per
 * stage, lower.async = 1), and a printer moves one W-element vector per
 * group: one cp.async of 16 bytes, or zeros when the condition fails.
 * The IR's meaning is unchanged (the attributes are hints: the
 * interpreter runs the elements one by one).
 */
#include <string.h>

#include "lower_internal.h"

/* ---- the form ------------------------------------------------------------------- */

static int is_zero(const tilec_ir_expr_t *e)
{
    while (e && e->kind == TILEC_EX_CAST)
        e = e->u.cast.a;
    return e && ((e->kind == TILEC_EX_FLOAT && e->u.f == 0.0) || (e->kind == TILEC_EX_INT && e->u.i == 0));
}

int lower_expr_same(const tilec_ir_expr_t *a, const tilec_ir_expr_t *b, int depth)
{
    if (a == b)
        return 1;
    if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || depth > TILEC_IR_MAX_DEPTH)
        return 0;
    switch (a->kind) {
    case TILEC_EX_INT: return a->u.i == b->u.i;
    case TILEC_EX_FLOAT: return a->u.f == b->u.f;
    case TILEC_EX_VAR: return a->u.var == b->u.var;
    case TILEC_EX_LOAD:
        if (a->u.load.buf != b->u.load.buf)
            return 0;
        for (int d = 0; d < a->u.load.buf->ndim; d++)
            if (!lower_expr_same(a->u.load.idx[d], b->u.load.idx[d], depth + 1))
                return 0;
        return 1;
    case TILEC_EX_UNARY: return a->u.un.op == b->u.un.op && lower_expr_same(a->u.un.a, b->u.un.a, depth + 1);
    case TILEC_EX_BINARY:
        return a->u.bin.op == b->u.bin.op && lower_expr_same(a->u.bin.a, b->u.bin.a, depth + 1) &&
               lower_expr_same(a->u.bin.b, b->u.bin.b, depth + 1);
    case TILEC_EX_SELECT:
        return lower_expr_same(a->u.sel.cond, b->u.sel.cond, depth + 1) && lower_expr_same(a->u.sel.a, b->u.sel.a, depth + 1) &&
               lower_expr_same(a->u.sel.b, b->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return lower_expr_same(a->u.cast.a, b->u.cast.a, depth + 1);
    }
    return 0;
}

/* a store of a global element (or of select(cond, element, 0)) into shared */
static int fetch_store(const tilec_ir_stmt_t *s, lower_gather_form_t *f)
{
    if (!s || s->next || s->kind != TILEC_ST_STORE || !s->u.store.buf || s->u.store.buf->scope != TILEC_SCOPE_SHARED)
        return 0;
    const tilec_ir_expr_t *v = s->u.store.value;
    f->nsel = 0;
    while (v && v->kind == TILEC_EX_SELECT && is_zero(v->u.sel.b) && f->nsel < LOWER_GATHER_SEL) {
        f->sel[f->nsel++] = v->u.sel.cond;
        v = v->u.sel.a;
    }
    if (!v || v->kind != TILEC_EX_LOAD || v->u.load.buf->scope != TILEC_SCOPE_GLOBAL ||
        v->u.load.buf->dtype != s->u.store.buf->dtype || v->dtype != s->u.store.buf->dtype)
        return 0;
    f->store = s;
    f->load = v;
    return 1;
}

int lower_gather_form(const tilec_ir_stmt_t *body, lower_gather_form_t *f)
{
    memset(f, 0, sizeof *f);
    if (!body || body->next)
        return 0;
    if (body->kind == TILEC_ST_STORE)
        return fetch_store(body, f);
    if (body->kind != TILEC_ST_IF || !body->u.cond.els)
        return 0;
    const tilec_ir_stmt_t *z = body->u.cond.els;
    if (!fetch_store(body->u.cond.then, f) || z->next || z->kind != TILEC_ST_STORE ||
        z->u.store.buf != f->store->u.store.buf || !is_zero(z->u.store.value))
        return 0;
    for (int d = 0; d < z->u.store.buf->ndim; d++)
        if (!lower_expr_same(z->u.store.idx[d], f->store->u.store.idx[d], 0))
            return 0;
    f->cond = body->u.cond.cond;
    f->zstore = z;
    return 1;
}

/* ---- U + s r ---------------------------------------------------------------------- */

typedef struct aff {
    int ok;
    int64_t s; /* coefficient of r */
    int64_t g; /* U is a multiple of g (0: U is 0) */
} aff_t;

#define BIG (INT64_C(1) << 40)

static int64_t gcd(int64_t a, int64_t b)
{
    if (a < 0)
        a = -a;
    if (b < 0)
        b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

typedef struct gctx {
    const tilec_ir_var_t *j;
    int64_t w;
} gctx_t;

static const aff_t BAD = {0, 0, 0};

static aff_t mk(int64_t s, int64_t g)
{
    aff_t a = {1, s, g};
    if (s > BIG || s < -BIG || g > BIG)
        a.ok = 0;
    return a;
}

/* a divisor of the product of multiples of a and b (0: the product is 0) */
static int64_t mulg(int64_t a, int64_t b)
{
    if (b < 0)
        b = -b;
    if (a == 0 || b == 0)
        return 0;
    return a <= BIG / b ? a * b : a;
}

/* does x = U + s r, r < w, stay between two multiples of gcd(g, d)? */
static int no_cross(aff_t x, int64_t d, int64_t w)
{
    int64_t h = gcd(x.g, d);
    return x.s >= 0 && h > 0 && x.s * (w - 1) < h;
}

static int uniform(const gctx_t *gc, const tilec_ir_expr_t *e, int depth);

static aff_t aff_of(const gctx_t *gc, const tilec_ir_expr_t *e, int depth)
{
    if (!e || depth > TILEC_IR_MAX_DEPTH)
        return BAD;
    switch (e->kind) {
    case TILEC_EX_INT:
        return e->u.i > BIG || e->u.i < -BIG ? BAD : mk(0, e->u.i < 0 ? -e->u.i : e->u.i);
    case TILEC_EX_VAR:
        if (e->u.var == gc->j)
            return mk(1, gc->w); /* j = w q + r */
        return e->u.var->kind == TILEC_VAR_LET ? BAD : mk(0, 1);
    case TILEC_EX_CAST:
        if (!tilec_dtype_is_int(e->dtype) || !tilec_dtype_is_int(e->u.cast.a->dtype) ||
            tilec_dtype_size(e->dtype) < tilec_dtype_size(e->u.cast.a->dtype))
            return BAD;
        return aff_of(gc, e->u.cast.a, depth + 1);
    case TILEC_EX_BINARY: {
        if (!tilec_dtype_is_int(e->dtype))
            return BAD;
        aff_t x = aff_of(gc, e->u.bin.a, depth + 1), y = aff_of(gc, e->u.bin.b, depth + 1);
        if (!x.ok || !y.ok)
            return BAD;
        int64_t cy, cx;
        int ky = tilec_ir_is_const_int(e->u.bin.b, &cy), kx = tilec_ir_is_const_int(e->u.bin.a, &cx);
        switch (e->u.bin.op) {
        case TILEC_BIN_ADD: return mk(x.s + y.s, gcd(x.g, y.g));
        case TILEC_BIN_SUB: return mk(x.s - y.s, gcd(x.g, y.g));
        case TILEC_BIN_MUL:
            if (ky && cy >= -BIG && cy <= BIG)
                return mk(x.s * cy, mulg(x.g, cy));
            if (kx && cx >= -BIG && cx <= BIG)
                return mk(y.s * cx, mulg(y.g, cx));
            if (x.s == 0 && y.s == 0)
                return mk(0, mulg(x.g, y.g));
            return BAD;
        case TILEC_BIN_FLOORDIV:
            if (!ky || cy < 1 || !no_cross(x, cy, gc->w))
                return BAD;
            return mk(0, x.g == 0 ? 0 : x.g % cy == 0 ? x.g / cy : 1);
        case TILEC_BIN_FLOORMOD:
            if (!ky || cy < 1 || !no_cross(x, cy, gc->w))
                return BAD;
            return mk(x.s, gcd(x.g, cy));
        default:
            return x.s == 0 && y.s == 0 ? mk(0, 1) : BAD; /* min, max, bit ops of group constants */
        }
    }
    case TILEC_EX_SELECT: {
        aff_t x = aff_of(gc, e->u.sel.a, depth + 1), y = aff_of(gc, e->u.sel.b, depth + 1);
        if (!uniform(gc, e->u.sel.cond, depth + 1) || !x.ok || !y.ok || x.s || y.s)
            return BAD;
        return mk(0, gcd(x.g, y.g));
    }
    default:
        return BAD;
    }
}

/* is boolean e the same for the w elements of every group of j? */
static int uniform(const gctx_t *gc, const tilec_ir_expr_t *e, int depth)
{
    if (!e || depth > TILEC_IR_MAX_DEPTH)
        return 0;
    if (e->kind == TILEC_EX_UNARY && e->u.un.op == TILEC_UN_NOT)
        return uniform(gc, e->u.un.a, depth + 1);
    if (e->kind == TILEC_EX_INT)
        return 1;
    if (e->kind != TILEC_EX_BINARY)
        return 0;
    tilec_binop_t op = e->u.bin.op;
    if (op == TILEC_BIN_AND || op == TILEC_BIN_OR)
        return uniform(gc, e->u.bin.a, depth + 1) && uniform(gc, e->u.bin.b, depth + 1);
    if (op < TILEC_BIN_EQ || op > TILEC_BIN_GE)
        return 0;
    aff_t x = aff_of(gc, e->u.bin.a, depth + 1), y = aff_of(gc, e->u.bin.b, depth + 1);
    if (!x.ok || !y.ok)
        return 0;
    /* a < b, a >= b: the sign of a - b; a > b, a <= b: the sign of b - a */
    aff_t d = op == TILEC_BIN_GT || op == TILEC_BIN_LE ? mk(y.s - x.s, gcd(x.g, y.g)) : mk(x.s - y.s, gcd(x.g, y.g));
    if (d.s == 0)
        return 1;
    if (op == TILEC_BIN_EQ || op == TILEC_BIN_NE)
        return 0;
    return d.s > 0 && (d.g == 0 || d.s * (gc->w - 1) < d.g);
}

static int uniform_or_null(const gctx_t *gc, const tilec_ir_expr_t *e)
{
    return !e || uniform(gc, e, 0);
}

/* does W work for the nest whose innermost loop is `inner`, form f? */
static int width_ok(const tilec_ir_stmt_t *const *lv, int n, const lower_gather_form_t *f, int64_t w)
{
    const tilec_ir_stmt_t *inner = lv[n - 1];
    const tilec_ir_var_t *j = inner->u.loop.var;
    gctx_t gc = {j, w};
    int64_t x;
    if (!tilec_ir_is_const_int(inner->u.loop.extent, &x) || x < w || x % w)
        return 0;
    const tilec_ir_buffer_t *S = f->store->u.store.buf, *G = f->load->u.load.buf;
    int ls = S->ndim - 1, lg = G->ndim - 1;
    int64_t sl = lower_dim(S, ls), gl = lower_dim(G, lg);
    if (sl < 0 || sl % w || gl < 0 || gl % w)
        return 0;
    /* the shared side: [..., j + a multiple of w], the rest group constants */
    for (int d = 0; d <= ls; d++) {
        aff_t a = aff_of(&gc, f->store->u.store.idx[d], 0);
        if (!a.ok || a.s != (d == ls) || (d == ls && a.g % w))
            return 0;
    }
    for (int d = 0; d <= lg; d++) {
        aff_t a = aff_of(&gc, f->load->u.load.idx[d], 0);
        if (!a.ok || a.s != (d == lg) || (d == lg && a.g % w))
            return 0;
    }
    if (!uniform_or_null(&gc, f->cond))
        return 0;
    for (int i = 0; i < f->nsel; i++)
        if (!uniform_or_null(&gc, f->sel[i]))
            return 0;
    for (int i = 0; i < n - 1; i++)
        if (lv[i]->u.loop.var == j)
            return 0;
    return 1;
}

/* the loops of a parallel nest, outermost first (each the only statement of
 * its parent's body); their number, 0 when s is no such nest */
static int nest_loops(const tilec_ir_stmt_t *s, const tilec_ir_stmt_t **lv, int max)
{
    int n = 0;
    while (s && s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PARALLEL && n < max) {
        lv[n++] = s;
        const tilec_ir_stmt_t *b = s->u.loop.body;
        if (!b || b->next || b->kind != TILEC_ST_FOR || b->u.loop.kind != TILEC_LOOP_PARALLEL)
            break;
        s = b;
    }
    return n;
}

int lower_gather_width(const tilec_ir_stmt_t *nest, int64_t max_bytes, lower_gather_form_t *f)
{
    const tilec_ir_stmt_t *lv[TILEC_IR_MAX_DIMS * 4];
    lower_gather_form_t tmp;
    if (!f)
        f = &tmp;
    int n = nest_loops(nest, lv, (int)(sizeof lv / sizeof lv[0]));
    if (n < 1 || !lower_gather_form(lv[n - 1]->u.loop.body, f))
        return 0;
    const tilec_ir_buffer_t *S = f->store->u.store.buf;
    int64_t es = (int64_t)tilec_dtype_size(S->dtype);
    if (es < 1 || S->dtype == TILEC_BOOL)
        return 0;
    for (int64_t w = max_bytes / es; w >= 2; w /= 2)
        if (!(w & (w - 1)) && width_ok(lv, n, f, w))
            return (int)w;
    return 0;
}

tilec_ir_stmt_t *lower_gather_inner(tilec_ir_stmt_t *nest)
{
    const tilec_ir_stmt_t *lv[TILEC_IR_MAX_DIMS * 4];
    int n = nest_loops(nest, lv, (int)(sizeof lv / sizeof lv[0]));
    return n ? (tilec_ir_stmt_t *)lv[n - 1] : NULL;
}

/* ---- a ring fill ---------------------------------------------------------------------- */

static tilec_ir_stmt_t *clone(lower_ctx_t *c, const tilec_ir_stmt_t *s, const tilec_ir_var_t *k, tilec_ir_expr_t *at,
                              const tilec_ir_buffer_t *ring, tilec_ir_expr_t *st, int depth)
{
    if (!s)
        return NULL;
    if (depth > TILEC_IR_MAX_DEPTH) {
        lower_fail(c, TILEC_LOWER_E_INVALID, "statements nested too deeply");
        return NULL;
    }
    tilec_ir_stmt_t *n = tilec_arena_alloc(c->a, sizeof *n);
    if (!n) {
        lower_oom(c);
        return NULL;
    }
    *n = *s;
    n->next = NULL;
    n->nattrs = 0;
    n->attrs = NULL;
    switch (s->kind) {
    case TILEC_ST_FOR:
        if (!(n->u.loop.extent = lower_subst(c, s->u.loop.extent, k, at)) ||
            !(n->u.loop.body = clone(c, s->u.loop.body, k, at, ring, st, depth + 1)))
            return NULL;
        break;
    case TILEC_ST_IF:
        if (!(n->u.cond.cond = lower_subst(c, s->u.cond.cond, k, at)) ||
            !(n->u.cond.then = clone(c, s->u.cond.then, k, at, ring, st, depth + 1)) ||
            (s->u.cond.els && !(n->u.cond.els = clone(c, s->u.cond.els, k, at, ring, st, depth + 1))))
            return NULL;
        break;
    case TILEC_ST_STORE: {
        /* the ring has one more (leading) dimension than the buffer had */
        int nd = ring->ndim, off = s->u.store.buf == ring ? 1 : 0;
        tilec_ir_expr_t **idx = tilec_arena_alloc(c->a, sizeof *idx * (size_t)nd);
        if (!idx || !(n->u.store.value = lower_subst(c, s->u.store.value, k, at))) {
            lower_oom(c);
            return NULL;
        }
        if (off && !(idx[0] = lower_subst(c, st, NULL, NULL)))
            return NULL;
        for (int d = 0; d < s->u.store.buf->ndim - off; d++)
            if (!(idx[d + off] = lower_subst(c, s->u.store.idx[d], k, at)))
                return NULL;
        n->u.store.idx = idx;
        break;
    }
    default:
        lower_fail(c, TILEC_LOWER_E_PASS, "a gather holds a %s statement", tilec_stmt_kind_name(s->kind));
        return NULL;
    }
    return n;
}

tilec_ir_stmt_t *lower_gather_issue(lower_ctx_t *c, const tilec_ir_stmt_t *nest, tilec_ir_buffer_t *ring,
                                    const tilec_ir_var_t *k, tilec_ir_expr_t *at, tilec_ir_expr_t *st)
{
    tilec_ir_stmt_t *n = clone(c, nest, k, at, ring, st, 0);
    tilec_ir_stmt_t *inner = n ? lower_gather_inner(n) : NULL;
    if (!inner) {
        if (n)
            lower_fail(c, TILEC_LOWER_E_PASS, "a gather lost its loops");
        return NULL;
    }
    n->line = nest->line;
    n->col = nest->col;
    return lower_sattr_int(c, inner, "lower.async", 1) ? NULL : n;
}
