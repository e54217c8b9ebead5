/*
 * frontend/views.c — buffer re-views (T.reshape, T.view without a dtype
 * change, T.Tensor(shape, dtype, buf.data)) and T.im2col.
 *
 * The tile IR has no aliasing buffers, so a re-view is the frontend's: a
 * view is a buffer record of its own shape that is never added to the
 * kernel (its id is negative, ev->views[-id - 1] names its base).  The
 * ordinary machinery (shapes, slices, corners, extents, bounds checks) works
 * on that record; what reaches the IR goes through the base buffer:
 *
 *  - an element view[i, j] is base[...] at the same row-major position
 *    (trailing dimensions the two shapes share map one to one, the rest go
 *    through the linear index); v_subscript records the pair so that a
 *    corner view[i, j] given to T.copy is still a corner of the view;
 *  - T.copy with a view on either side is an element-by-element copy (a
 *    T.Parallel loop nest) with T.copy's semantics: a source element past
 *    the view's edge reads 0, a destination element past it is not written
 *    (a global base is guarded again by the safe-memory pass);
 *  - a view read whole by T.reduce_* or T.gemm is first copied into an
 *    on-chip buffer of its shape; other tile operations name the view in a
 *    diagnostic.
 *
 * A view of on-chip memory that changes the dtype is scratch of its own
 * (retype.c); of a kernel tensor, a diagnostic.
 */
#include "eval_internal.h"

#include <stdio.h>
#include <string.h>

int view_is(const tilec_ir_buffer_t *b)
{
    return b && b->id < 0;
}

static tilec_ir_buffer_t *view_base(ev_t *ev, const tilec_ir_buffer_t *v)
{
    return ev->views[-v->id - 1];
}

static int64_t cshape(const tilec_ir_buffer_t *b, int d)
{
    int64_t c;
    return tilec_ir_is_const_int(b->shape[d], &c) ? c : -1;
}

value_t *view_new(ev_t *ev, value_t *src, value_t *shape, value_t *dtv, ast_loc_t loc, const char *what)
{
    tilec_ir_buffer_t *base, *v;
    int64_t n = 1, nb = 1, dims[TILEC_IR_MAX_DIMS];
    int nd, i, retyped;
    value_t *r;
    ev_require_kernel(ev, loc, what);
    if (!src || src->kind != V_BUF || src->u.buf->scope == TILEC_SCOPE_VAR)
        ev_fail(ev, loc, "%s re-views a buffer, got %s", what, src ? v_kind_name(src) : "nothing");
    base = src->u.buf;
    if (view_is(base)) base = view_base(ev, base);
    retyped = dtv && dtv->kind != V_NONE && v_want_dtype(ev, dtv, loc) != base->dtype;
    if (retyped && src->u.buf != base)
        ev_fail(ev, loc, "%s: a view of a view may not change the dtype", what);
    if (!shape || shape->kind == V_NONE) {
        shape = v_seq(ev, src->u.buf->ndim, 0);
        for (i = 0; i < src->u.buf->ndim; i++) {
            int64_t c = cshape(src->u.buf, i);
            if (c < 0) ev_fail(ev, loc, "%s: the shape of '%s' is not a compile-time constant", what, base->name);
            shape->u.seq.items[i] = v_int(ev, c);
        }
    }
    if (shape->kind != V_SEQ) {
        value_t *s1 = v_seq(ev, 1, 0);
        s1->u.seq.items[0] = shape;
        shape = s1;
    }
    nd = shape->u.seq.n;
    if (nd < 1 || nd > TILEC_IR_MAX_DIMS) ev_fail(ev, loc, "%s: a shape has 1 to %d dimensions", what, TILEC_IR_MAX_DIMS);
    for (i = 0; i < nd; i++) {
        if (v_is_rt(shape->u.seq.items[i]) || shape->u.seq.items[i]->kind == V_SYM)
            ev_fail(ev, loc, "%s: the new shape must be compile-time constants", what);
        dims[i] = v_want_int(ev, shape->u.seq.items[i], loc, "a dimension");
        if (dims[i] < 1) ev_fail(ev, loc, "%s: dimension %d is %lld; dimensions must be positive", what, i,
                                 (long long)dims[i]);
        if (n > INT32_MAX / dims[i]) ev_fail(ev, loc, "%s: the view has more than 2^31 elements", what);
        n *= dims[i];
    }
    for (i = 0; i < base->ndim; i++) {
        int64_t c = cshape(base, i);
        if (c < 0) ev_fail(ev, loc, "%s: the shape of '%s' is not a compile-time constant", what, base->name);
        nb *= c;
    }
    if (retyped) {   /* scratch of its own (retype.c) */
        r = v_new(ev, V_BUF);
        r->u.buf = retype_new(ev, base, dims, nd, v_want_dtype(ev, dtv, loc), loc, what);
        return r;
    }
    if (n != nb)
        ev_fail(ev, loc, "%s: the view has %lld elements but '%s' has %lld; a re-view keeps every element", what,
                (long long)n, base->name, (long long)nb);
    v = ev_alloc(ev, sizeof *v);
    v->name = ev_irstr(ev, base->name);
    v->scope = base->scope;
    v->dtype = base->dtype;
    v->ndim = nd;
    v->shape = ev_alloc(ev, sizeof *v->shape * (size_t)nd);
    for (i = 0; i < nd; i++) v->shape[i] = ex_int32(ev, dims[i]);
    if (ev->nviews == ev->views_cap) {
        int cap = ev->views_cap ? 2 * ev->views_cap : 8;
        tilec_ir_buffer_t **nv = ev_alloc(ev, sizeof *nv * (size_t)cap);
        if (ev->nviews) memcpy(nv, ev->views, sizeof *nv * (size_t)ev->nviews);
        ev->views = nv;
        ev->views_cap = cap;
    }
    ev->views[ev->nviews++] = base;
    v->id = -ev->nviews;
    r = v_new(ev, V_BUF);
    r->u.buf = v;
    return r;
}

/* base indices of view element vidx[] */
static void view_map(ev_t *ev, const tilec_ir_buffer_t *v, tilec_ir_expr_t *const *vidx, tilec_ir_expr_t **bidx)
{
    tilec_ir_buffer_t *b = view_base(ev, v);
    int nv = v->ndim, nb = b->ndim, t = 0, i;
    tilec_ir_expr_t *lin = NULL;
    /* shared trailing dimensions map one to one */
    while (t < nv - 1 && t < nb - 1 && cshape(v, nv - 1 - t) == cshape(b, nb - 1 - t)) {
        bidx[nb - 1 - t] = vidx[nv - 1 - t];
        t++;
    }
    for (i = 0; i < nv - t; i++) {
        tilec_ir_expr_t *x = vidx[i];
        lin = lin ? ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD,
                                               ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_MUL, lin,
                                                                          ex_int32(ev, cshape(v, i)))), x))
                  : x;
    }
    for (i = nb - t - 1; i >= 0; i--) {
        int64_t c = cshape(b, i);
        if (i == 0) {
            bidx[i] = lin;
        } else {
            bidx[i] = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_FLOORMOD, lin, ex_int32(ev, c)));
            lin = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_FLOORDIV, lin, ex_int32(ev, c)));
        }
    }
}

value_t *view_element(ev_t *ev, tilec_ir_expr_t *vload)
{
    const tilec_ir_buffer_t *v = vload->u.load.buf;
    tilec_ir_buffer_t *b = view_base(ev, v);
    tilec_ir_expr_t **bidx = ev_alloc(ev, sizeof *bidx * (size_t)b->ndim);
    tilec_ir_expr_t *m;
    vload_t *rec;
    view_map(ev, v, vload->u.load.idx, bidx);
    m = ev_chk(ev, tilec_ir_load(ev->a, b, bidx));
    rec = ev_alloc(ev, sizeof *rec);
    rec->mapped = m;
    rec->vload = vload;
    rec->next = ev->vloads;
    ev->vloads = rec;
    return v_expr(ev, m);
}

tilec_ir_expr_t *view_corner_of(ev_t *ev, const tilec_ir_expr_t *load)
{
    vload_t *r;
    for (r = ev->vloads; r; r = r->next)
        if (r->mapped == load) return r->vload;
    return NULL;
}

void view_reject(ev_t *ev, const tilec_ir_buffer_t *b, ast_loc_t loc, const char *op)
{
    if (view_is(b))
        ev_fail(ev, loc, "%s on a re-view of '%s' (T.reshape / T.view / T.Tensor(..., %s.data)) is not supported; "
                "only T.copy, element access and the sources of T.reduce_* and T.gemm take re-views", op, b->name,
                b->name);
}

/* ---- element-by-element loops -------------------------------------------- */

typedef struct nest {
    tilec_ir_stmt_t *outer, **link;
    tilec_ir_expr_t *iv[TILEC_IR_MAX_DIMS]; /* loop index of each non-1 extent, in order */
    int n;
} nest_t;

static void nest_open(ev_t *ev, nest_t *ns, const int64_t *ext, int nd, ast_loc_t loc)
{
    int i;
    memset(ns, 0, sizeof *ns);
    for (i = 0; i < nd; i++) {
        tilec_ir_var_t *var;
        tilec_ir_stmt_t *st;
        if (ext[i] == 1) continue;
        var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "i_view"), TILEC_INT32, TILEC_VAR_LOOP));
        st = ev_stmt(ev, TILEC_ST_FOR, loc);
        st->u.loop.var = var;
        st->u.loop.kind = TILEC_LOOP_PARALLEL;
        st->u.loop.extent = ex_int32(ev, ext[i]);
        ev_set_loop_extent(ev, var, st->u.loop.extent);
        if (!ns->outer) ns->outer = st;
        else *ns->link = st;
        ns->link = &st->u.loop.body;
        ns->iv[ns->n++] = ev_chk(ev, tilec_ir_varref(ev->a, var));
    }
}

static void nest_close(ev_t *ev, nest_t *ns, tilec_ir_stmt_t *body, ast_loc_t loc)
{
    if (ns->outer) {
        *ns->link = body;
        ev_emit(ev, ns->outer, loc);
    } else {
        ev_emit(ev, body, loc);
    }
}

/* indices of region r's element number k (its non-1 extents taken in order by the nest) */
static void region_idx(ev_t *ev, const region_t *r, const nest_t *ns, tilec_ir_expr_t **idx)
{
    int i, k = 0;
    for (i = 0; i < r->buf->ndim; i++) {
        idx[i] = r->base[i];
        if (r->ext[i] != 1) {
            idx[i] = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, r->base[i], ns->iv[k]));
            k++;
        }
    }
}

/* idx inside the view's shape (NULL: not a view, or provably inside) */
static tilec_ir_expr_t *inside(ev_t *ev, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    tilec_ir_expr_t *cond = NULL;
    int i;
    if (!view_is(b)) return NULL;
    for (i = 0; i < b->ndim; i++) {
        int64_t lo, hi;
        tilec_ir_expr_t *c;
        if (v_index_range(ev, idx[i], &lo, &hi) && lo >= 0 && hi < cshape(b, i)) continue;
        c = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_AND,
                ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_GE, idx[i], ex_int32(ev, 0))),
                ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_LT, idx[i], b->shape[i]))));
        cond = cond ? ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_AND, cond, c)) : c;
    }
    return cond;
}

static tilec_ir_expr_t *elem_load(ev_t *ev, const tilec_ir_buffer_t *b, tilec_ir_expr_t **idx)
{
    if (view_is(b)) {
        tilec_ir_buffer_t *base = view_base(ev, b);
        tilec_ir_expr_t **bidx = ev_alloc(ev, sizeof *bidx * (size_t)base->ndim);
        view_map(ev, b, idx, bidx);
        return ev_chk(ev, tilec_ir_load(ev->a, base, bidx));
    }
    return ev_chk(ev, tilec_ir_load(ev->a, (tilec_ir_buffer_t *)b, idx));
}

static tilec_ir_stmt_t *elem_store(ev_t *ev, const tilec_ir_buffer_t *b, tilec_ir_expr_t **idx,
                                   tilec_ir_expr_t *val, ast_loc_t loc)
{
    tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_STORE, loc);
    tilec_ir_expr_t *ld = elem_load(ev, b, idx);
    st->u.store.buf = ld->u.load.buf;
    st->u.store.idx = ld->u.load.idx;
    st->u.store.value = val->dtype == ld->dtype ? val : ev_chk(ev, tilec_ir_cast(ev->a, ld->dtype, val));
    return st;
}

static tilec_ir_expr_t *zero_of(ev_t *ev, tilec_dtype_t t)
{
    return ev_chk(ev, tilec_dtype_is_float(t) ? tilec_ir_float(ev->a, 0.0, t) : tilec_ir_int(ev->a, 0, t));
}

static tilec_ir_stmt_t *guard(ev_t *ev, tilec_ir_expr_t *cond, tilec_ir_stmt_t *then, tilec_ir_stmt_t *els,
                              ast_loc_t loc)
{
    tilec_ir_stmt_t *st;
    if (!cond) return then;
    st = ev_stmt(ev, TILEC_ST_IF, loc);
    st->u.cond.cond = cond;
    st->u.cond.then = then;
    st->u.cond.els = els;
    return st;
}

void view_copy(ev_t *ev, region_t *s, region_t *d, ast_loc_t loc)
{
    nest_t ns;
    tilec_ir_expr_t *si[TILEC_IR_MAX_DIMS], *di[TILEC_IR_MAX_DIMS], *sin, *din;
    tilec_ir_stmt_t *body;
    /* the loops run over the destination's non-1 extents; match_regions made
     * the source's non-1 extents the same, in the same order */
    nest_open(ev, &ns, d->ext, d->buf->ndim, loc);
    region_idx(ev, s, &ns, si);
    region_idx(ev, d, &ns, di);
    sin = inside(ev, s->buf, si);
    din = inside(ev, d->buf, di);
    body = guard(ev, sin, elem_store(ev, d->buf, di, elem_load(ev, s->buf, si), loc),
                 sin ? elem_store(ev, d->buf, di, zero_of(ev, d->buf->dtype), loc) : NULL, loc);
    nest_close(ev, &ns, guard(ev, din, body, NULL, loc), loc);
}

value_t *view_src(ev_t *ev, value_t *v, ast_loc_t loc)
{
    tilec_ir_buffer_t *b;
    value_t *shape, *dt, *tmp;
    region_t s, d;
    int64_t ext[TILEC_IR_MAX_DIMS];
    tilec_ir_expr_t *zero[TILEC_IR_MAX_DIMS];
    int i;
    char nm[64];
    if (!v || v->kind != V_BUF || !view_is(v->u.buf)) return v;
    b = v->u.buf;
    shape = v_seq(ev, b->ndim, 0);
    for (i = 0; i < b->ndim; i++) {
        ext[i] = cshape(b, i);
        zero[i] = ex_int32(ev, 0);
        shape->u.seq.items[i] = v_int(ev, ext[i]);
    }
    dt = v_new(ev, V_DTYPE);
    dt->u.dt = b->dtype;
    snprintf(nm, sizeof nm, "%.40s_view", b->name);
    tmp = op_alloc(ev, b->scope == TILEC_SCOPE_GLOBAL ? TILEC_SCOPE_SHARED : b->scope, shape, dt, NULL, nm, loc);
    memset(&s, 0, sizeof s);
    s.buf = b;
    s.base = zero;
    s.ext = ext;
    d = s;
    d.buf = tmp->u.buf;
    view_copy(ev, &s, &d, loc);
    return tmp;
}

/* ---- T.im2col -------------------------------------------------------------- */

void op_im2col(ev_t *ev, value_t **v, ast_loc_t *l, ast_loc_t loc)
{
    tilec_ir_buffer_t *img, *col;
    int64_t kernel, stride, dil, pad, H, W, C, bm, bk, oh, ow;
    tilec_ir_expr_t *nhw, *cst, *m, *k, *ah, *aw, *in, *val, *idx[4], *cidx[TILEC_IR_MAX_DIMS];
    nest_t ns;
    int64_t ext[TILEC_IR_MAX_DIMS];
    int i, nd;
    ev_require_kernel(ev, loc, "T.im2col");
    if (!v[0] || v[0]->kind != V_BUF || v[0]->u.buf->ndim != 4 || view_is(v[0]->u.buf) ||
        v[0]->u.buf->scope != TILEC_SCOPE_GLOBAL)
        ev_fail(ev, l[0], "T.im2col takes a 4-D (N, H, W, C) global image tensor");
    if (!v[1] || v[1]->kind != V_BUF || v[1]->u.buf->ndim < 2 || view_is(v[1]->u.buf) ||
        v[1]->u.buf->scope == TILEC_SCOPE_GLOBAL)
        ev_fail(ev, l[1], "T.im2col writes an on-chip buffer of at least 2 dimensions (block_M, block_K)");
    img = v[0]->u.buf;
    col = v[1]->u.buf;
    if (img->dtype != col->dtype)
        ev_fail(ev, l[1], "T.im2col: the image is %s but the column buffer is %s", tilec_dtype_name(img->dtype),
                tilec_dtype_name(col->dtype));
    nhw = ex_index(ev, v[2], l[2]);
    cst = ex_index(ev, v[3], l[3]);
    kernel = v_want_int(ev, v[4], l[4], "the kernel size");
    stride = v_want_int(ev, v[5], l[5], "the stride");
    dil = v_want_int(ev, v[6], l[6], "the dilation");
    pad = v_want_int(ev, v[7], l[7], "the padding");
    if (kernel < 1 || stride < 1 || dil < 1 || pad < 0)
        ev_fail(ev, loc, "T.im2col needs kernel, stride, dilation >= 1 and padding >= 0");
    H = cshape(img, 1);
    W = cshape(img, 2);
    C = cshape(img, 3);
    if (H < 0 || W < 0 || C < 0) ev_fail(ev, l[0], "T.im2col: the image's H, W and C must be compile-time constants");
    oh = (H + 2 * pad - (kernel - 1) * dil - 1) / stride + 1;
    ow = (W + 2 * pad - (kernel - 1) * dil - 1) / stride + 1;
    if (oh < 1 || ow < 1) ev_fail(ev, loc, "T.im2col: the output is %lld x %lld; the kernel does not fit the image",
                                  (long long)oh, (long long)ow);
    nd = col->ndim;
    for (i = 0; i < nd; i++) ext[i] = i >= nd - 2 ? cshape(col, i) : 1;
    bm = ext[nd - 2];
    bk = ext[nd - 1];
    nest_open(ev, &ns, ext, nd, loc);
    /* the nest has the (block_M, block_K) loops, fewer where an extent is 1 */
    i = 0;
    m = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_MUL, nhw, ex_int32(ev, bm)));
    if (bm != 1) m = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, m, ns.iv[i++]));
    k = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_MUL, cst, ex_int32(ev, bk)));
    if (bk != 1) k = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, k, ns.iv[i++]));
#define BIN(op, x, y) ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_##op, (x), (y)))
    ah = BIN(SUB, BIN(ADD, BIN(MUL, BIN(FLOORDIV, BIN(FLOORMOD, m, ex_int32(ev, oh * ow)), ex_int32(ev, ow)),
                               ex_int32(ev, stride)),
                      BIN(MUL, BIN(FLOORDIV, k, ex_int32(ev, kernel * C)), ex_int32(ev, dil))),
             ex_int32(ev, pad));
    aw = BIN(SUB, BIN(ADD, BIN(MUL, BIN(FLOORMOD, m, ex_int32(ev, ow)), ex_int32(ev, stride)),
                      BIN(MUL, BIN(FLOORMOD, BIN(FLOORDIV, k, ex_int32(ev, C)), ex_int32(ev, kernel)), ex_int32(ev, dil))),
             ex_int32(ev, pad));
    in = BIN(AND, BIN(AND, BIN(GE, ah, ex_int32(ev, 0)), BIN(GE, aw, ex_int32(ev, 0))),
             BIN(AND, BIN(LT, ah, ex_int32(ev, H)), BIN(LT, aw, ex_int32(ev, W))));
    idx[0] = BIN(FLOORDIV, m, ex_int32(ev, oh * ow));
    idx[1] = ah;
    idx[2] = aw;
    idx[3] = BIN(FLOORMOD, k, ex_int32(ev, C));
#undef BIN
    val = ev_chk(ev, tilec_ir_load(ev->a, img, idx));
    val = ev_chk(ev, tilec_ir_select(ev->a, in, val, zero_of(ev, img->dtype)));
    {
        region_t r;
        memset(&r, 0, sizeof r);
        r.buf = col;
        r.ext = ext;
        r.base = ev_alloc(ev, sizeof *r.base * (size_t)nd);
        for (i = 0; i < nd; i++) r.base[i] = ex_int32(ev, 0);
        region_idx(ev, &r, &ns, cidx);
    }
    nest_close(ev, &ns, elem_store(ev, col, cidx, val, loc), loc);
}
