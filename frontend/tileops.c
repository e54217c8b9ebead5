/*
 * frontend/tileops.c — tile primitives to IR statements.
 *
 * T.copy, T.fill/T.clear, T.gemm, T.reduce_*, T.cumsum, T.atomic_*, T.print
 * and the T.alloc_* allocations.  Operands are regions of buffers: a whole
 * buffer, a slice A[a:b, c] (constant extents), or a corner A[i, j] whose
 * extents come from the other operand (aligned to the trailing dimensions).
 * Everything that can be checked at compile time (scopes, ranks, constant
 * shapes, extents that must agree) is checked here and reported at the
 * call, so backends only ever see well-formed statements.
 */
#include "eval_internal.h"

#include <stdio.h>
#include <string.h>

static void fmt_ext(char *buf, size_t n, const int64_t *ext, int nd)
{
    size_t len = 0;
    int i;
    buf[0] = '\0';
    len += (size_t)snprintf(buf + len, n - len, "(");
    for (i = 0; i < nd && len < n; i++) {
        if (ext[i] < 0) len += (size_t)snprintf(buf + len, n - len, "%s?", i ? ", " : "");
        else len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "", (long long)ext[i]);
    }
    if (len < n) snprintf(buf + len, n - len, "%s)", nd == 1 ? "," : "");
}

region_t *rg_of(ev_t *ev, value_t *v, ast_loc_t loc, const char *what)
{
    region_t *r;
    int i, nd;
    if (v->kind == V_REGION) {
        r = ev_alloc(ev, sizeof *r);
        *r = *v->u.rg;
        return r;
    }
    if (v->kind == V_BUF) {
        tilec_ir_buffer_t *b = v->u.buf;
        nd = b->ndim;
        r = ev_alloc(ev, sizeof *r);
        r->buf = b;
        r->base = ev_alloc(ev, sizeof *r->base * (size_t)nd);
        r->ext = ev_alloc(ev, sizeof *r->ext * (size_t)nd);
        for (i = 0; i < nd; i++) {
            int64_t c;
            r->base[i] = ex_int32(ev, 0);
            r->ext[i] = tilec_ir_is_const_int(b->shape[i], &c) ? c : -1;
        }
        return r;
    }
    if (v->kind == V_EXPR && v->u.ex->kind == TILEC_EX_LOAD) {
        tilec_ir_expr_t *ld = view_corner_of(ev, v->u.ex);  /* view[i, j]: a corner of the view */
        tilec_ir_buffer_t *b = (ld ? ld : v->u.ex)->u.load.buf;
        nd = b->ndim;
        r = ev_alloc(ev, sizeof *r);
        r->buf = b;
        r->corner = 1;
        r->base = ev_alloc(ev, sizeof *r->base * (size_t)nd);
        r->ext = ev_alloc(ev, sizeof *r->ext * (size_t)nd);
        for (i = 0; i < nd; i++) r->base[i] = (ld ? ld : v->u.ex)->u.load.idx[i];
        return r;
    }
    ev_fail(ev, loc, "%s must be a buffer, a region A[a:b, ...] or a corner A[i, ...], got %s", what, v_kind_name(v));
}

static void need_const_ext(ev_t *ev, region_t *r, ast_loc_t loc)
{
    int i;
    for (i = 0; i < r->buf->ndim; i++) {
        if (r->ext[i] < 0)
            ev_fail(ev, loc, "dimension %d of '%s' is not a compile-time constant; use a slice or a corner "
                    "A[i, ...] with a fixed-size tile on the other side", i, r->buf->name);
    }
}

/* Gives a corner the extents of the other operand, aligned to the trailing
 * dimensions (leading extent-1 dimensions of the other side are dropped when
 * the corner has fewer dimensions). */
static void resolve_corner(ev_t *ev, region_t *c, region_t *o, ast_loc_t loc)
{
    int cn = c->buf->ndim, on = o->buf->ndim, skip = 0, i;
    need_const_ext(ev, o, loc);
    while (on - skip > cn && o->ext[skip] == 1) skip++;
    if (on - skip > cn) {
        char b[128];
        fmt_ext(b, sizeof b, o->ext, on);
        ev_fail(ev, loc, "the corner of '%s' has %d dimension%s, too few for a region of shape %s; give its "
                "extents with slices", c->buf->name, cn, cn == 1 ? "" : "s", b);
    }
    for (i = 0; i < cn; i++) c->ext[i] = 1;
    for (i = 0; i < on - skip; i++) c->ext[cn - (on - skip) + i] = o->ext[skip + i];
    c->corner = 0;
}

static void check_bounds(ev_t *ev, region_t *r, ast_loc_t loc)
{
    int i;
    if (r->buf->scope == TILEC_SCOPE_GLOBAL) return;
    for (i = 0; i < r->buf->ndim; i++) {
        int64_t s, b;
        if (!tilec_ir_is_const_int(r->buf->shape[i], &s)) continue;
        if (r->ext[i] > s)
            ev_fail(ev, loc, "the region is larger than '%s' in dimension %d (extent %lld, size %lld)",
                    r->buf->name, i, (long long)r->ext[i], (long long)s);
        if (tilec_ir_is_const_int(r->base[i], &b) && (b < 0 || b + r->ext[i] > s))
            ev_fail(ev, loc, "the region runs past the end of '%s' in dimension %d (start %lld, extent %lld, "
                    "size %lld)", r->buf->name, i, (long long)b, (long long)r->ext[i], (long long)s);
    }
}

static int squeeze(const region_t *r, int64_t *out)
{
    int i, n = 0;
    for (i = 0; i < r->buf->ndim; i++)
        if (r->ext[i] != 1) out[n++] = r->ext[i];
    return n;
}

static void match_regions(ev_t *ev, region_t *s, region_t *d, ast_loc_t loc, const char *op)
{
    int64_t a[TILEC_IR_MAX_DIMS], b[TILEC_IR_MAX_DIMS];
    int na, nb, i, same;
    na = squeeze(s, a);
    nb = squeeze(d, b);
    same = na == nb;
    for (i = 0; same && i < na; i++) same = a[i] == b[i];
    if (!same) {
        char x[160], y[160];
        fmt_ext(x, sizeof x, s->ext, s->buf->ndim);
        fmt_ext(y, sizeof y, d->ext, d->buf->ndim);
        ev_fail(ev, loc, "%s: the source region of '%s' has shape %s but the destination region of '%s' has "
                "shape %s; they must match after dropping extent-1 dimensions", op, s->buf->name, x,
                d->buf->name, y);
    }
}

static tilec_ir_region_t ir_region(ev_t *ev, region_t *r)
{
    tilec_ir_region_t o;
    int nd = r->buf->ndim;
    o.buf = r->buf;
    o.base = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *o.base * (size_t)nd));
    o.extent = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *o.extent * (size_t)nd));
    memcpy(o.base, r->base, sizeof *o.base * (size_t)nd);
    memcpy(o.extent, r->ext, sizeof *o.extent * (size_t)nd);
    return o;
}

static int own_mem(const tilec_ir_buffer_t *b)
{
    return b->scope == TILEC_SCOPE_LOCAL || b->scope == TILEC_SCOPE_VAR;
}

/* The operand's buffer is this thread's own (T.alloc_local / T.alloc_var):
 * in per-thread code such a T.copy is the thread's own element copy. */
int op_copy_is_own(const value_t *v)
{
    if (!v) return 0;
    if (v->kind == V_BUF) return own_mem(v->u.buf);
    if (v->kind == V_REGION) return own_mem(v->u.rg->buf);
    return 0;
}

/* T.copy in per-thread code (threads.c) with one side the thread's own
 * memory: element k of the source region (row-major over its extents)
 * goes to element k of the destination, unrolled, as the thread's own
 * loads and stores (lockstep.c's lk_load places its memory). */
static void thread_copy(ev_t *ev, region_t *s, region_t *d, ast_loc_t loc)
{
    int64_t n = 1, k;
    int i;
    for (i = 0; i < d->buf->ndim; i++) n *= d->ext[i];
    if (n > 4096)
        ev_fail(ev, loc, "T.copy of %lld elements in per-thread code (after a thread index) is outside the subset: "
                "a thread's own copy is unrolled, at most 4096 elements", (long long)n);
    for (k = 0; k < n; k++) {
        tilec_ir_expr_t *si[TILEC_IR_MAX_DIMS], *di[TILEC_IR_MAX_DIMS], *ld, *sv;
        tilec_ir_stmt_t *st;
        int64_t r = k;
        const region_t *rr[2] = {s, d};
        int w;
        for (w = 0; w < 2; w++) {
            const region_t *g = rr[w];
            tilec_ir_expr_t **ix = w ? di : si;
            int64_t q = r;
            for (i = g->buf->ndim - 1; i >= 0; i--) {
                ix[i] = g->ext[i] == 1 ? g->base[i]
                        : ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, g->base[i], ex_int32(ev, q % g->ext[i])));
                q /= g->ext[i];
            }
        }
        sv = lk_load(ev, s->buf, si);
        ld = lk_load(ev, d->buf, di);
        st = ev_stmt(ev, TILEC_ST_STORE, loc);
        st->u.store.buf = ld->u.load.buf;
        st->u.store.idx = ld->u.load.idx;
        st->u.store.value = sv->dtype == ld->dtype ? sv : ev_chk(ev, tilec_ir_cast(ev->a, ld->dtype, sv));
        ev_emit(ev, st, loc);
    }
}

void op_copy(ev_t *ev, value_t *src, value_t *dst, ast_loc_t loc, ast_loc_t sloc, ast_loc_t dloc)
{
    region_t *s, *d;
    tilec_ir_stmt_t *st;
    ev_require_kernel(ev, loc, "T.copy");
    s = rg_of(ev, src, sloc, "the source of T.copy");
    d = rg_of(ev, dst, dloc, "the destination of T.copy");
    if (s->corner && d->corner)
        ev_fail(ev, loc, "both operands of T.copy are single elements; give the extent on one side with a "
                "whole buffer or a slice A[a:b, ...]");
    if (s->corner) resolve_corner(ev, s, d, sloc);
    if (d->corner) resolve_corner(ev, d, s, dloc);
    need_const_ext(ev, s, sloc);
    need_const_ext(ev, d, dloc);
    match_regions(ev, s, d, loc, "T.copy");
    check_bounds(ev, s, sloc);
    check_bounds(ev, d, dloc);
    if (ev->thread_wrap) {
        if (!(own_mem(s->buf) || own_mem(d->buf)) || view_is(s->buf) || view_is(d->buf))
            th_reject(ev, "T.copy between buffers that are not the thread's own (T.alloc_local)", loc);
        thread_copy(ev, s, d, loc);
        return;
    }
    if (view_is(s->buf) || view_is(d->buf)) {
        view_copy(ev, s, d, loc);
        return;
    }
    st = ev_stmt(ev, TILEC_ST_COPY, loc);
    st->u.copy.src = ir_region(ev, s);
    st->u.copy.dst = ir_region(ev, d);
    ev_emit(ev, st, loc);
}

void op_fill(ev_t *ev, value_t *dst, value_t *val, ast_loc_t loc)
{
    region_t *d;
    tilec_ir_stmt_t *st;
    int i;
    ev_require_kernel(ev, loc, "T.fill / T.clear");
    d = rg_of(ev, dst, loc, "the buffer to fill");
    view_reject(ev, d->buf, loc, "T.fill / T.clear");
    if (d->corner) {
        for (i = 0; i < d->buf->ndim; i++) d->ext[i] = 1;
        d->corner = 0;
    }
    need_const_ext(ev, d, loc);
    check_bounds(ev, d, loc);
    if (!v_is_num(val) && !v_is_rt(val)) ev_fail(ev, loc, "the fill value must be a number, got %s", v_kind_name(val));
    st = ev_stmt(ev, TILEC_ST_FILL, loc);
    st->u.fill.dst = ir_region(ev, d);
    st->u.fill.value = ex_as(ev, val, d->buf->dtype, loc);
    ev_emit(ev, st, loc);
}

static tilec_ir_buffer_t *whole_buf(ev_t *ev, value_t *v, ast_loc_t loc, const char *op, const char *what)
{
    if (!v) ev_fail(ev, loc, "%s is missing %s", op, what);
    if (v->kind == V_BUF) {
        view_reject(ev, v->u.buf, loc, op);
        return v->u.buf;
    }
    if (v->kind == V_REGION || (v->kind == V_EXPR && v->u.ex->kind == TILEC_EX_LOAD))
        ev_fail(ev, loc, "%s needs whole buffers; copy this region into a T.alloc_shared or T.alloc_fragment "
                "buffer first", op);
    ev_fail(ev, loc, "%s: %s must be a buffer, got %s", op, what, v_kind_name(v));
}

static int64_t cdim(tilec_ir_buffer_t *b, int i)
{
    int64_t c;
    return tilec_ir_is_const_int(b->shape[i], &c) ? c : -1;
}

static int want_flag(ev_t *ev, value_t *v, ast_loc_t loc, const char *what)
{
    if (!v || v->kind == V_NONE) return 0;
    if (v_is_rt(v) || !(v_is_num(v))) ev_fail(ev, loc, "%s must be a compile-time True/False", what);
    return v_truth(ev, v, loc);
}

/* A T.gemm operand given as a region of an on-chip buffer (`A_s[k % 2, :, :]`,
 * `Q_s[:, :D]`): the tile goes through a buffer of its own shape (the last
 * two dimensions; the others must have extent 1), copied in before the GEMM
 * and, for the accumulator, back after it.  The tile IR's GEMM takes whole
 * buffers. */
static void gemm_whole(ev_t *ev, value_t **v, ast_loc_t *l, ast_loc_t loc);

static value_t *gemm_tile(ev_t *ev, value_t *v, ast_loc_t loc, const char *what)
{
    region_t *r;
    value_t *shape;
    int i, nd;
    if (!v || (v->kind != V_REGION && !(v->kind == V_EXPR && v->u.ex->kind == TILEC_EX_LOAD))) return v;
    r = rg_of(ev, v, loc, "T.gemm");
    nd = r->buf->ndim;
    if (r->buf->scope == TILEC_SCOPE_GLOBAL || r->buf->scope == TILEC_SCOPE_VAR) return v;
    if (r->corner || nd < 2)
        ev_fail(ev, loc, "T.gemm operand %s: give the tile as a slice of '%s' (A[k, :, :] or A[:, :n])", what,
                r->buf->name);
    for (i = 0; i < nd; i++) {
        if (r->ext[i] < 1)
            ev_fail(ev, loc, "T.gemm operand %s: the extents of a slice of '%s' must be compile-time constants",
                    what, r->buf->name);
        if (i < nd - 2 && r->ext[i] != 1)
            ev_fail(ev, loc, "T.gemm operand %s: a slice of '%s' must be 2-D (its leading dimensions indexed)", what,
                    r->buf->name);
    }
    shape = v_seq(ev, 2, 0);
    shape->u.seq.items[0] = v_int(ev, r->ext[nd - 2]);
    shape->u.seq.items[1] = v_int(ev, r->ext[nd - 1]);
    {
        value_t *dt = v_new(ev, V_DTYPE);
        char nm[64];
        dt->u.dt = r->buf->dtype;
        snprintf(nm, sizeof nm, "%.40s_tile", r->buf->name);
        return op_alloc(ev, r->buf->scope, shape, dt, NULL, nm, loc);
    }
}

void op_gemm(ev_t *ev, value_t **v, ast_loc_t *l, ast_loc_t loc)
{
    value_t *tile[3];
    ast_loc_t tl[10];
    value_t *tv[10];
    int i;
    ev_require_kernel(ev, loc, "T.gemm");
    for (i = 0; i < 10; i++) {
        tv[i] = v[i];
        tl[i] = l[i];
    }
    for (i = 0; i < 3; i++) {
        static const char *const nm[3] = {"A", "B", "C"};
        if (i < 2) tv[i] = view_src(ev, v[i], l[i]);
        tile[i] = gemm_tile(ev, tv[i], l[i], nm[i]);
        if (tile[i] != tv[i]) {
            op_copy(ev, tv[i], tile[i], loc, l[i], l[i]);
            tv[i] = tile[i];
        }
    }
    if (v[6] && v_is_rt(v[6])) {
        /* clear_accum=(k == 0): clear C when the condition holds, then accumulate */
        tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_IF, loc), **saved = ev->tail, *then = NULL;
        st->u.cond.cond = ex_bool(ev, ex_of(ev, v[6], l[6]));
        ev->tail = &then;
        ev->rt_depth++;
        ev->guarded++;
        op_fill(ev, tv[2], v_int(ev, 0), loc);
        ev->guarded--;
        ev->rt_depth--;
        ev->tail = saved;
        st->u.cond.then = then;
        ev_emit(ev, st, loc);
        tv[6] = NULL;
    }
    gemm_whole(ev, tv, tl, loc);
    if (tile[2] != v[2]) op_copy(ev, tile[2], v[2], loc, l[2], l[2]);
}

static void gemm_whole(ev_t *ev, value_t **v, ast_loc_t *l, ast_loc_t loc)
{
    tilec_ir_buffer_t *A, *B, *C;
    int ta, tb, ca, i;
    int64_t M, K, K2, N;
    tilec_gemm_policy_t pol = TILEC_POLICY_SQUARE;
    tilec_ir_stmt_t *st;
    tilec_ir_buffer_t *ops[3];
    static const char *const nm[3] = {"A", "B", "C"};
    ev_require_kernel(ev, loc, "T.gemm");
    A = whole_buf(ev, v[0], l[0], "T.gemm", "A");
    B = whole_buf(ev, v[1], l[1], "T.gemm", "B");
    C = whole_buf(ev, v[2], l[2], "T.gemm", "C");
    ops[0] = A; ops[1] = B; ops[2] = C;
    ta = want_flag(ev, v[3], l[3], "transpose_A");
    tb = want_flag(ev, v[4], l[4], "transpose_B");
    ca = want_flag(ev, v[6], l[6], "clear_accum");
    if (v[5] && v[5]->kind != V_NONE) {
        if (v[5]->kind == V_POLICY) pol = (tilec_gemm_policy_t)v[5]->u.policy;
        else if (v[5]->kind == V_INT && v[5]->u.i >= 0 && v[5]->u.i <= 2) pol = (tilec_gemm_policy_t)v[5]->u.i;
        else ev_fail(ev, l[5], "policy must be T.GemmWarpPolicy.Square, FullRow or FullCol");
    }
    if (v[7] && v[7]->kind != V_NONE) {
        int64_t kp = v_want_int(ev, v[7], l[7], "k_pack");
        if (kp < 1 || kp > 2) ev_fail(ev, l[7], "k_pack must be 1 or 2");
    }
    for (i = 0; i < 3; i++) {
        if (ops[i]->ndim != 2)
            ev_fail(ev, l[i], "T.gemm operand %s ('%s') must be 2-D, it has %d dimension%s", nm[i], ops[i]->name,
                    ops[i]->ndim, ops[i]->ndim == 1 ? "" : "s");
        if (ops[i]->scope == TILEC_SCOPE_GLOBAL)
            ev_fail(ev, l[i], "T.gemm operand %s ('%s') is a global tensor; copy its tile into T.alloc_shared "
                    "first", nm[i], ops[i]->name);
        if (ops[i]->scope == TILEC_SCOPE_VAR)
            ev_fail(ev, l[i], "T.gemm operand %s ('%s') is a scalar variable", nm[i], ops[i]->name);
    }
    if (C->scope == TILEC_SCOPE_SHARED)
        ev_fail(ev, l[2], "the T.gemm accumulator C ('%s') must be a T.alloc_fragment (or T.alloc_local) buffer, "
                "not shared memory", C->name);
    for (i = 0; i < 3; i++)
        if (ops[i]->dtype == TILEC_BOOL)
            ev_fail(ev, l[i], "T.gemm operand %s ('%s') has dtype bool; T.gemm needs numbers", nm[i], ops[i]->name);
    if (tilec_dtype_is_float(A->dtype) && !tilec_dtype_is_float(C->dtype))
        ev_fail(ev, l[2], "the T.gemm accumulator C ('%s') is %s but the operands are %s; products of floats need "
                "a float accumulator (e.g. float32)", C->name, tilec_dtype_name(C->dtype), tilec_dtype_name(A->dtype));
    if (A->dtype != B->dtype)
        ev_fail(ev, l[1], "T.gemm operands A ('%s', %s) and B ('%s', %s) must have the same dtype; T.copy one "
                "into a buffer of the other's dtype", A->name, tilec_dtype_name(A->dtype), B->name,
                tilec_dtype_name(B->dtype));
    M = cdim(A, ta ? 1 : 0);
    K = cdim(A, ta ? 0 : 1);
    K2 = cdim(B, tb ? 1 : 0);
    N = cdim(B, tb ? 0 : 1);
    if (K >= 0 && K2 >= 0 && K != K2)
        ev_fail(ev, loc, "T.gemm: the reduction dimension of A ('%s'%s) is %lld but that of B ('%s'%s) is %lld",
                A->name, ta ? ", transposed" : "", (long long)K, B->name, tb ? ", transposed" : "", (long long)K2);
    if ((M >= 0 && cdim(C, 0) >= 0 && M != cdim(C, 0)) || (N >= 0 && cdim(C, 1) >= 0 && N != cdim(C, 1)))
        ev_fail(ev, l[2], "T.gemm: C ('%s') has shape (%lld, %lld) but A @ B has shape (%lld, %lld)", C->name,
                (long long)cdim(C, 0), (long long)cdim(C, 1), (long long)M, (long long)N);
    st = ev_stmt(ev, TILEC_ST_GEMM, loc);
    st->u.gemm.a = A;
    st->u.gemm.b = B;
    st->u.gemm.c = C;
    st->u.gemm.trans_a = ta;
    st->u.gemm.trans_b = tb;
    st->u.gemm.clear_accum = ca;
    st->u.gemm.policy = pol;
    ev_emit(ev, st, loc);
}

static int norm_dim(ev_t *ev, value_t *v, int dflt, int nd, ast_loc_t loc, const char *op)
{
    int64_t d = dflt;
    if (v && v->kind != V_NONE) d = v_want_int(ev, v, loc, "dim");
    if (d < -nd || d >= nd)
        ev_fail(ev, loc, "%s: dim %lld is out of range for a %d-D buffer", op, (long long)d, nd);
    return (int)(d < 0 ? d + nd : d);
}

static void onchip(ev_t *ev, tilec_ir_buffer_t *b, ast_loc_t loc, const char *op)
{
    if (b->scope == TILEC_SCOPE_GLOBAL)
        ev_fail(ev, loc, "%s works on on-chip buffers; '%s' is a global tensor: T.copy it into a fragment first",
                op, b->name);
    if (b->dtype == TILEC_BOOL)
        ev_fail(ev, loc, "%s needs numbers; '%s' has dtype bool: T.copy it into an int32 or float32 buffer first",
                op, b->name);
}

void op_reduce(ev_t *ev, tilec_reduce_op_t op, value_t **v, ast_loc_t *l, ast_loc_t loc)
{
    char opname[32];
    tilec_ir_buffer_t *s, *d;
    int dim, i, j, ok;
    tilec_ir_stmt_t *st;
    snprintf(opname, sizeof opname, "T.reduce_%s", tilec_reduce_op_name(op));
    ev_require_kernel(ev, loc, opname);
    s = whole_buf(ev, view_src(ev, v[0], l[0]), l[0], opname, "the source");
    d = whole_buf(ev, v[1], l[1], opname, "the destination");
    onchip(ev, s, l[0], opname);
    onchip(ev, d, l[1], opname);
    dim = norm_dim(ev, v[2], -1, s->ndim, l[2], opname);
    if (s->ndim == 1) {
        ok = d->ndim == 1 && cdim(d, 0) == 1;
    } else {
        ok = d->ndim == s->ndim - 1;
        for (i = 0, j = 0; ok && i < s->ndim; i++) {
            if (i == dim) continue;
            if (cdim(s, i) >= 0 && cdim(d, j) >= 0 && cdim(s, i) != cdim(d, j)) ok = 0;
            j++;
        }
    }
    if (!ok) {
        int64_t se[TILEC_IR_MAX_DIMS], de[TILEC_IR_MAX_DIMS], want[TILEC_IR_MAX_DIMS];
        char a[128], b[128], c[128];
        int nw = 0;
        for (i = 0; i < s->ndim; i++) {
            se[i] = cdim(s, i);
            if (i != dim) want[nw++] = se[i];
        }
        if (nw == 0) want[nw++] = 1;
        for (i = 0; i < d->ndim; i++) de[i] = cdim(d, i);
        fmt_ext(a, sizeof a, se, s->ndim);
        fmt_ext(b, sizeof b, de, d->ndim);
        fmt_ext(c, sizeof c, want, nw);
        ev_fail(ev, l[1], "%s over dim %d of '%s' %s needs a destination of shape %s, but '%s' has shape %s",
                opname, dim, s->name, a, c, d->name, b);
    }
    st = ev_stmt(ev, TILEC_ST_REDUCE, loc);
    st->u.reduce.op = op;
    st->u.reduce.src = s;
    st->u.reduce.dst = d;
    st->u.reduce.dim = dim;
    st->u.reduce.clear = v[3] ? want_flag(ev, v[3], l[3], "clear") : 1;
    ev_emit(ev, st, loc);
}

void op_cumsum(ev_t *ev, value_t **v, ast_loc_t *l, ast_loc_t loc)
{
    tilec_ir_buffer_t *s, *d;
    tilec_ir_stmt_t *st;
    int i;
    ev_require_kernel(ev, loc, "T.cumsum");
    s = whole_buf(ev, v[0], l[0], "T.cumsum", "the source");
    d = (v[1] && v[1]->kind != V_NONE) ? whole_buf(ev, v[1], l[1], "T.cumsum", "the destination") : s;
    onchip(ev, s, l[0], "T.cumsum");
    onchip(ev, d, l[1], "T.cumsum");
    if (d->ndim != s->ndim) goto mismatch;
    for (i = 0; i < s->ndim; i++)
        if (cdim(s, i) != cdim(d, i)) goto mismatch;
    st = ev_stmt(ev, TILEC_ST_CUMSUM, loc);
    st->u.cumsum.src = s;
    st->u.cumsum.dst = d;
    st->u.cumsum.dim = norm_dim(ev, v[2], 0, s->ndim, l[2], "T.cumsum");
    st->u.cumsum.reverse = want_flag(ev, v[3], l[3], "reverse");
    ev_emit(ev, st, loc);
    return;
mismatch:
    ev_fail(ev, l[1], "T.cumsum: source '%s' and destination '%s' must have the same shape", s->name, d->name);
}

void op_atomic(ev_t *ev, tilec_atomic_op_t op, value_t *dst, value_t *val, ast_loc_t loc, ast_loc_t dloc)
{
    char opname[32];
    region_t *d, *s = NULL;
    tilec_ir_stmt_t *st, *outer = NULL, **link = NULL;
    tilec_ir_expr_t *didx[TILEC_IR_MAX_DIMS], *sidx[TILEC_IR_MAX_DIMS], *value;
    int i, k, nd;
    snprintf(opname, sizeof opname, "T.atomic_%s", tilec_atomic_op_name(op));
    ev_require_kernel(ev, loc, opname);
    d = rg_of(ev, dst, dloc, "the destination of an atomic");
    view_reject(ev, d->buf, dloc, opname);
    if (d->buf->scope == TILEC_SCOPE_VAR) ev_fail(ev, dloc, "%s needs a buffer element, not a T.alloc_var", opname);
    if (d->buf->dtype == TILEC_BOOL)
        ev_fail(ev, dloc, "%s needs a numeric buffer; '%s' has dtype bool", opname, d->buf->name);
    if (d->buf->scope != TILEC_SCOPE_GLOBAL && d->buf->scope != TILEC_SCOPE_SHARED)
        ev_fail(ev, dloc, "%s needs an element of a global tensor or a shared buffer; '%s' is a %s buffer, "
                "private to its block: update it with a plain store (x[i] += v)", opname, d->buf->name,
                d->buf->scope == TILEC_SCOPE_LOCAL ? "local" : "fragment");
    if (d->corner && !(val->kind == V_BUF && val->u.buf->scope != TILEC_SCOPE_VAR) && val->kind != V_REGION) {
        /* scalar atomic on one element */
        st = ev_stmt(ev, TILEC_ST_ATOMIC, loc);
        st->u.atomic.op = op;
        st->u.atomic.buf = d->buf;
        st->u.atomic.idx = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof(tilec_ir_expr_t *) * (size_t)d->buf->ndim));
        memcpy(st->u.atomic.idx, d->base, sizeof(tilec_ir_expr_t *) * (size_t)d->buf->ndim);
        if (!v_is_num(val) && !v_is_rt(val)) ev_fail(ev, loc, "%s: the value must be a number or a buffer", opname);
        st->u.atomic.value = ex_as(ev, val, d->buf->dtype, loc);
        ev_emit(ev, st, loc);
        return;
    }
    if ((val->kind == V_BUF && val->u.buf->scope != TILEC_SCOPE_VAR) || val->kind == V_REGION) {
        s = rg_of(ev, val, loc, "the value of an atomic");
        view_reject(ev, s->buf, loc, opname);
        if (s->corner) resolve_corner(ev, s, d, loc);
        if (d->corner) resolve_corner(ev, d, s, dloc);
        need_const_ext(ev, s, loc);
        need_const_ext(ev, d, dloc);
        match_regions(ev, s, d, loc, opname);
        check_bounds(ev, s, loc);
    } else if (!v_is_num(val) && !v_is_rt(val)) {
        ev_fail(ev, loc, "%s: the value must be a number or a buffer", opname);
    }
    need_const_ext(ev, d, dloc);
    check_bounds(ev, d, dloc);
    nd = d->buf->ndim;
    /* one PARALLEL loop per non-1 extent of the destination; source dims map in order */
    {
        int sdims[TILEC_IR_MAX_DIMS], ns = 0;
        if (s) {
            for (i = 0; i < s->buf->ndim; i++) {
                sidx[i] = s->base[i];
                if (s->ext[i] != 1) sdims[ns++] = i;
            }
        }
        k = 0;
        for (i = 0; i < nd; i++) {
            didx[i] = d->base[i];
            if (d->ext[i] != 1) {
                tilec_ir_var_t *var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "i_atomic"),
                                                                  TILEC_INT32, TILEC_VAR_LOOP));
                tilec_ir_expr_t *ve = ev_chk(ev, tilec_ir_varref(ev->a, var));
                st = ev_stmt(ev, TILEC_ST_FOR, loc);
                st->u.loop.var = var;
                st->u.loop.kind = TILEC_LOOP_PARALLEL;
                st->u.loop.extent = ex_int32(ev, d->ext[i]);
                ev_set_loop_extent(ev, var, st->u.loop.extent);
                if (!outer) outer = st;
                else *link = st;
                link = &st->u.loop.body;
                didx[i] = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, d->base[i], ve));
                if (s && k < ns) {
                    sidx[sdims[k]] = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, s->base[sdims[k]], ve));
                }
                k++;
            }
        }
    }
    if (s) value = ex_cast(ev, ev_chk(ev, tilec_ir_load(ev->a, s->buf, sidx)), d->buf->dtype);
    else value = ex_as(ev, val, d->buf->dtype, loc);
    st = ev_stmt(ev, TILEC_ST_ATOMIC, loc);
    st->u.atomic.op = op;
    st->u.atomic.buf = d->buf;
    st->u.atomic.idx = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof(tilec_ir_expr_t *) * (size_t)nd));
    memcpy(st->u.atomic.idx, didx, sizeof(tilec_ir_expr_t *) * (size_t)nd);
    st->u.atomic.value = value;
    if (outer && d->buf->scope == TILEC_SCOPE_GLOBAL) {
        /* A tile atomic into a tensor is boundary-safe like T.copy: the
         * elements of the region past the tensor's edge are not touched. */
        tilec_ir_expr_t *cond = NULL;
        for (i = 0; i < nd; i++) {
            tilec_ir_expr_t *ix = didx[i], *ext = d->buf->shape[i], *in;
            int64_t b0, n0;
            if (d->ext[i] == 1) continue;
            if (tilec_ir_is_const_int(d->base[i], &b0) && tilec_ir_is_const_int(ext, &n0) &&
                b0 >= 0 && b0 + d->ext[i] <= n0) {
                continue; /* provably inside the tensor */
            }
            if (ext->dtype != ix->dtype) ext = ev_chk(ev, tilec_ir_cast(ev->a, ix->dtype, ext));
            in = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_AND,
                    ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_GE, ix,
                                               ev_chk(ev, tilec_ir_int(ev->a, 0, ix->dtype)))),
                    ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_LT, ix, ext))));
            cond = cond ? ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_AND, cond, in)) : in;
        }
        if (cond) {
            tilec_ir_stmt_t *guard = ev_stmt(ev, TILEC_ST_IF, loc);
            guard->u.cond.cond = cond;
            guard->u.cond.then = st;
            st = guard;
        }
    }
    if (outer) {
        *link = st;
        ev_emit(ev, outer, loc);
    } else {
        ev_emit(ev, st, loc);
    }
}

/* T.atomic_addx2/x4(dst[..., j], src[..., j]): `width` consecutive elements
 * along the last dimension, added element by element (each atomically). */
void op_atomic_vec(ev_t *ev, value_t *dst, value_t *val, int width, ast_loc_t loc, ast_loc_t dloc, ast_loc_t vloc)
{
    value_t *rv[2];
    value_t *in[2];
    int k, i;
    in[0] = dst;
    in[1] = val;
    for (k = 0; k < 2; k++) {
        region_t *r;
        if (!(in[k]->kind == V_EXPR && in[k]->u.ex->kind == TILEC_EX_LOAD))
            ev_fail(ev, k ? vloc : dloc, "T.atomic_addx%d takes an element (A[i, j]) for its %s, got %s", width,
                    k ? "value" : "destination", v_kind_name(in[k]));
        r = rg_of(ev, in[k], k ? vloc : dloc, "an operand of T.atomic_addx");
        r->corner = 0;
        for (i = 0; i < r->buf->ndim; i++) r->ext[i] = i == r->buf->ndim - 1 ? width : 1;
        rv[k] = v_new(ev, V_REGION);
        rv[k]->u.rg = r;
    }
    op_atomic(ev, TILEC_ATOMIC_ADD, rv[0], rv[1], loc, dloc);
}

void op_print(ev_t *ev, value_t *v, const char *msg, ast_loc_t loc)
{
    tilec_ir_stmt_t *st;
    ev_require_kernel(ev, loc, "T.print");
    st = ev_stmt(ev, TILEC_ST_PRINT, loc);
    st->u.print.msg = ev_irstr(ev, msg);
    if (v->kind == V_BUF) view_reject(ev, v->u.buf, loc, "T.print");
    if (v->kind == V_BUF && v->u.buf->scope != TILEC_SCOPE_VAR) {
        st->u.print.buf = v->u.buf;
    } else if (v->kind == V_REGION) {
        ev_fail(ev, loc, "T.print prints a whole buffer or a scalar, not a slice");
    } else if (v_is_num(v) || v_is_rt(v)) {
        st->u.print.value = ex_of(ev, v, loc);
    } else {
        ev_fail(ev, loc, "T.print cannot print %s", v_kind_name(v));
    }
    ev_emit(ev, st, loc);
}

value_t *op_alloc(ev_t *ev, tilec_scope_t scope, value_t *shape, value_t *dt, value_t *init,
                  const char *name, ast_loc_t loc)
{
    tilec_ir_expr_t *dims[TILEC_IR_MAX_DIMS];
    tilec_dtype_t t;
    tilec_ir_buffer_t *b;
    value_t *v;
    int nd, i;
    int64_t total = 1;
    static const char *const dflt[] = {"global", "shared", "frag", "local", "var"};
    ev_require_kernel(ev, loc, scope == TILEC_SCOPE_VAR ? "T.alloc_var" : "an on-chip allocation");
    t = v_want_dtype(ev, dt, loc);
    if (scope == TILEC_SCOPE_VAR) {
        nd = 1;
        dims[0] = ex_int32(ev, 1);
    } else {
        nd = shape->u.seq.n;
        for (i = 0; i < nd; i++) {
            int64_t d = shape->u.seq.items[i]->u.i;
            dims[i] = ex_int32(ev, d);
            if (__builtin_mul_overflow(total, d, &total) || total > EV_MAX_ONCHIP_ELEMS)
                ev_fail(ev, loc, "this on-chip buffer is too large (more than %lld elements)",
                        (long long)EV_MAX_ONCHIP_ELEMS);
        }
    }
    b = ev_chk(ev, tilec_ir_buffer_add(ev->a, ev->k, ev_unique_buf(ev, name ? name : dflt[scope]), scope, t, nd, dims));
    ev->name_hint = NULL;
    v = v_new(ev, V_BUF);
    v->u.buf = b;
    if (init && init->kind != V_NONE) {
        tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_STORE, loc);
        if (!v_is_num(init) && !v_is_rt(init)) ev_fail(ev, loc, "init must be a number");
        st->u.store.buf = b;
        st->u.store.idx = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof(tilec_ir_expr_t *)));
        st->u.store.idx[0] = ex_int32(ev, 0);
        st->u.store.value = ex_as(ev, init, t, loc);
        ev_emit(ev, st, loc);
    }
    return v;
}
