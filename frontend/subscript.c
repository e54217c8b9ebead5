/*
 * frontend/subscript.c — subscripts: `x[i]` of compile-time sequences and
 * dicts, and `A[i, j]` / `A[a:b, :]` of buffers (an element load, or a
 * region for tile operations).  A slice's extent must be a compile-time
 * constant; it is found by reading both bounds as linear combinations of
 * run-time atoms (looking through scalar temporaries assigned once), so
 * `bx * 64:(bx + 1) * 64` has extent 64.  v_index_range gives the range of
 * an index over its enclosing loops (the boundary-safety pass's proofs).
 */
#include "eval_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t norm_index(ev_t *ev, int64_t i, int64_t n, ast_loc_t loc)
{
    if (i < 0) i += n;
    if (i < 0 || i >= n) ev_fail(ev, loc, "index out of range (length %lld)", (long long)n);
    return i;
}

static void slice_bounds(ev_t *ev, ast_expr_t *sl, int64_t n, int64_t *start, int64_t *stop, int64_t *step)
{
    value_t *v;
    int64_t st = 1, lo, hi;
    if (sl->u.slice.step) {
        v = ev_eval(ev, sl->u.slice.step);
        if (v->kind != V_NONE) st = v_want_int(ev, v, sl->loc, "slice step");
    }
    if (st == 0) ev_fail(ev, sl->loc, "slice step cannot be zero");
    lo = st > 0 ? 0 : n - 1;
    hi = st > 0 ? n : -1;
    if (sl->u.slice.lo) {
        v = ev_eval(ev, sl->u.slice.lo);
        if (v->kind != V_NONE) {
            lo = v_want_int(ev, v, sl->loc, "slice start");
            if (lo < 0) lo += n;
            if (lo < 0) lo = st > 0 ? 0 : -1;
            if (lo >= n) lo = st > 0 ? n : n - 1;
        }
    }
    if (sl->u.slice.hi) {
        v = ev_eval(ev, sl->u.slice.hi);
        if (v->kind != V_NONE) {
            hi = v_want_int(ev, v, sl->loc, "slice stop");
            if (hi < 0) hi += n;
            if (hi < 0) hi = st > 0 ? 0 : -1;
            if (hi >= n) hi = st > 0 ? n : n - 1;
        }
    }
    *start = lo;
    *stop = hi;
    *step = st;
}

static value_t *seq_subscript(ev_t *ev, value_t *v, ast_expr_t *e)
{
    ast_expr_t *it;
    int64_t n = v->kind == V_STR ? (int64_t)v->u.s.len : v->u.seq.n;
    if (e->u.sub.n != 1) ev_fail(ev, e->loc, "a %s takes one index", v_kind_name(v));
    it = e->u.sub.items[0];
    if (it->kind == AST_SLICE) {
        int64_t lo, hi, st, i, cnt = 0;
        value_t *r;
        slice_bounds(ev, it, n, &lo, &hi, &st);
        for (i = lo; st > 0 ? i < hi : i > hi; i += st) cnt++;
        if (v->kind == V_STR) {
            char *c = ev_alloc(ev, (size_t)cnt + 1);
            int64_t k = 0;
            for (i = lo; st > 0 ? i < hi : i > hi; i += st) c[k++] = v->u.s.s[i];
            r = v_new(ev, V_STR);
            r->u.s.s = c;
            r->u.s.len = (size_t)cnt;
            return r;
        }
        r = v_seq(ev, (int)cnt, v->u.seq.is_list);
        cnt = 0;
        for (i = lo; st > 0 ? i < hi : i > hi; i += st) r->u.seq.items[cnt++] = v->u.seq.items[i];
        return r;
    } else {
        int64_t i = norm_index(ev, v_want_int(ev, ev_eval(ev, it), it->loc, "a tuple index"), n, it->loc);
        if (v->kind == V_STR) return v_str(ev, v->u.s.s + i, 1);
        return v->u.seq.items[i];
    }
}

static int64_t expr_const(tilec_ir_expr_t *e, int *ok)
{
    int64_t c = 0;
    *ok = tilec_ir_is_const_int(e, &c);
    return c;
}

/* Linear form of an int expression: constant + sum of coef * atom, where an
 * atom is a variable or an opaque subexpression; enough to see that
 * (bx + 1) * 64 - bx * 64 is 64. */
typedef struct lin {
    int n; int64_t c; tilec_ir_expr_t *atom[16]; int64_t coef[16]; int bad;
    ev_t *ev; ast_loc_t loc;   /* when set: look through single-assignment temporaries */
    long visits;               /* nodes seen: temporaries make a DAG a tree, so bound the walk */
} lin_t;

static int ex_same(const tilec_ir_expr_t *x, const tilec_ir_expr_t *y, int depth)
{
    int i;
    if (x == y) return 1;
    if (depth > 64 || x->kind != y->kind || x->dtype != y->dtype) return 0;
    switch (x->kind) {
    case TILEC_EX_INT: return x->u.i == y->u.i;
    case TILEC_EX_FLOAT: return x->u.f == y->u.f;
    case TILEC_EX_VAR: return x->u.var == y->u.var;
    case TILEC_EX_LOAD:
        if (x->u.load.buf != y->u.load.buf) return 0;
        for (i = 0; i < x->u.load.buf->ndim; i++)
            if (!ex_same(x->u.load.idx[i], y->u.load.idx[i], depth + 1)) return 0;
        return 1;
    case TILEC_EX_UNARY: return x->u.un.op == y->u.un.op && ex_same(x->u.un.a, y->u.un.a, depth + 1);
    case TILEC_EX_BINARY:
        return x->u.bin.op == y->u.bin.op && ex_same(x->u.bin.a, y->u.bin.a, depth + 1) &&
               ex_same(x->u.bin.b, y->u.bin.b, depth + 1);
    case TILEC_EX_SELECT:
        return ex_same(x->u.sel.cond, y->u.sel.cond, depth + 1) && ex_same(x->u.sel.a, y->u.sel.a, depth + 1) &&
               ex_same(x->u.sel.b, y->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return ex_same(x->u.cast.a, y->u.cast.a, depth + 1);
    }
    return 0;
}

int ev_ex_same(const tilec_ir_expr_t *x, const tilec_ir_expr_t *y)
{
    return ex_same(x, y, 0);
}

static int ex_reads(const tilec_ir_expr_t *e, const tilec_ir_buffer_t *b, int depth)
{
    int i;
    if (depth > 64) return 1;
    switch (e->kind) {
    case TILEC_EX_LOAD:
        if (e->u.load.buf == b) return 1;
        for (i = 0; i < e->u.load.buf->ndim; i++)
            if (ex_reads(e->u.load.idx[i], b, depth + 1)) return 1;
        return 0;
    case TILEC_EX_UNARY: return ex_reads(e->u.un.a, b, depth + 1);
    case TILEC_EX_BINARY: return ex_reads(e->u.bin.a, b, depth + 1) || ex_reads(e->u.bin.b, b, depth + 1);
    case TILEC_EX_SELECT:
        return ex_reads(e->u.sel.cond, b, depth + 1) || ex_reads(e->u.sel.a, b, depth + 1) ||
               ex_reads(e->u.sel.b, b, depth + 1);
    case TILEC_EX_CAST: return ex_reads(e->u.cast.a, b, depth + 1);
    default: return 0;
    }
}

int ev_ex_reads(const tilec_ir_expr_t *e, const tilec_ir_buffer_t *b)
{
    return ex_reads(e, b, 0);
}

static void lin_add_atom(lin_t *l, tilec_ir_expr_t *e, int64_t k)
{
    int i;
    for (i = 0; i < l->n; i++) {
        if (ex_same(l->atom[i], e, 0)) {
            l->coef[i] += k;
            return;
        }
    }
    if (l->n == 16) {
        l->bad = 1;
        return;
    }
    l->atom[l->n] = e;
    l->coef[l->n++] = k;
}

static void lin_of(lin_t *l, tilec_ir_expr_t *e, int64_t k, int depth)
{
    int ok;
    int64_t c;
    if (depth > 64 || l->bad || ++l->visits > 100000) {
        l->bad = 1;
        return;
    }
    /* a temporary assigned once stands for its value (H1 = H0 + 64: H0:H1 has extent 64) */
    if (l->ev && e->kind == TILEC_EX_VAR) {
        tilec_ir_expr_t *def = ev_let_def(l->ev, e->u.var, l->loc);
        if (def) {
            lin_of(l, def, k, depth + 1);
            return;
        }
    }
    if (tilec_ir_is_const_int(e, &c)) {
        l->c += k * c;
        return;
    }
    if (e->kind == TILEC_EX_BINARY && (e->u.bin.op == TILEC_BIN_ADD || e->u.bin.op == TILEC_BIN_SUB)) {
        lin_of(l, e->u.bin.a, k, depth + 1);
        lin_of(l, e->u.bin.b, e->u.bin.op == TILEC_BIN_ADD ? k : -k, depth + 1);
        return;
    }
    if (e->kind == TILEC_EX_BINARY && e->u.bin.op == TILEC_BIN_MUL) {
        c = expr_const(e->u.bin.b, &ok);
        if (ok) {
            lin_of(l, e->u.bin.a, k * c, depth + 1);
            return;
        }
        c = expr_const(e->u.bin.a, &ok);
        if (ok) {
            lin_of(l, e->u.bin.b, k * c, depth + 1);
            return;
        }
    }
    if (e->kind == TILEC_EX_UNARY && e->u.un.op == TILEC_UN_NEG) {
        lin_of(l, e->u.un.a, -k, depth + 1);
        return;
    }
    if (e->kind == TILEC_EX_CAST && e->u.cast.a->dtype != TILEC_BOOL && !tilec_dtype_is_float(e->u.cast.a->dtype)) {
        lin_of(l, e->u.cast.a, k, depth + 1);
        return;
    }
    lin_add_atom(l, e, k);
}

/* hi - lo as a compile-time constant when the linear forms cancel. */
static int const_diff(ev_t *ev, ast_loc_t loc, tilec_ir_expr_t *hi, tilec_ir_expr_t *lo, int64_t *out)
{
    int pass;
    /* first as written (x:x+4), then looking through temporaries assigned once */
    for (pass = 0; pass < 2; pass++) {
        lin_t *l = ev_alloc(ev, sizeof *l); /* in the arena: looking through a temporary may unwind */
        int i, ok = 1;
        l->ev = pass ? ev : NULL;
        l->loc = loc;
        lin_of(l, hi, 1, 0);
        lin_of(l, lo, -1, 0);
        if (l->bad) ok = 0;
        for (i = 0; ok && i < l->n; i++)
            if (l->coef[i] != 0) ok = 0;
        *out = l->c;
        if (ok) return 1;
    }
    return 0;
}

/* Range of an index that is linear in loop variables with constant
 * extents; 0 when it cannot be known at compile time. */
int v_index_range(ev_t *ev, tilec_ir_expr_t *e, int64_t *lo, int64_t *hi)
{
    lin_t *l = calloc(1, sizeof *l);
    int i, ok = 1;
    if (!l) return 0;
    lin_of(l, e, 1, 0);
    *lo = *hi = l->c;
    if (l->bad) ok = 0;
    for (i = 0; ok && i < l->n; i++) {
        tilec_ir_expr_t *at = l->atom[i];
        int64_t ext, span;
        if (l->coef[i] == 0) continue;
        if (at->kind != TILEC_EX_VAR || at->u.var->kind != TILEC_VAR_LOOP) { ok = 0; break; }
        ext = ev_loop_extent(ev, at->u.var);
        if (ext < 1 || __builtin_mul_overflow(l->coef[i], ext - 1, &span)) { ok = 0; break; }
        if (span > 0 ? __builtin_add_overflow(*hi, span, hi) : __builtin_add_overflow(*lo, span, lo)) ok = 0;
    }
    free(l);
    return ok;
}

value_t *v_subscript(ev_t *ev, value_t *v, ast_expr_t *e)
{
    tilec_ir_buffer_t *b;
    tilec_ir_expr_t **idx;
    int i, n, nslice = 0;
    if (v->kind == V_SEQ || v->kind == V_STR) return seq_subscript(ev, v, e);
    if (v->kind == V_BUILTIN) return bi_subscript(ev, v, e);
    if (v->kind == V_OPAQUE) return v; /* typing.Optional[str] in an annotation: still opaque, fails where used */
    if (v->kind == V_BARRIER) { /* mbars[k % stages]: one barrier of the list, still a token */
        value_t *k, *r;
        int64_t i = -1;
        if (e->u.sub.n != 1 || e->u.sub.items[0]->kind == AST_SLICE) ev_fail(ev, e->loc, "a barrier list takes one index");
        if (v->u.bar.base) ev_fail(ev, e->loc, "this is one barrier, not a list of them");
        k = ev_eval(ev, e->u.sub.items[0]);
        if (!v_is_rt(k)) {
            i = v_want_int(ev, k, e->u.sub.items[0]->loc, "a barrier index");
            if (i < -v->u.bar.n || i >= v->u.bar.n)
                ev_fail(ev, e->u.sub.items[0]->loc, "barrier index %lld is out of range for %lld barriers",
                        (long long)i, (long long)v->u.bar.n);
            if (i < 0) i += v->u.bar.n;
        } else if (!tilec_dtype_is_int(ex_of(ev, k, e->loc)->dtype)) {
            ev_fail(ev, e->u.sub.items[0]->loc, "a barrier index must be an integer");
        }
        r = v_new(ev, V_BARRIER);
        r->u.bar = v->u.bar;
        r->u.bar.base = v;
        r->u.bar.idx = i;
        return r;
    }
    if (v->kind == V_RANGE) {
        int64_t len = 0, s = v->u.range.start, st = v->u.range.step, k;
        if (st > 0 && v->u.range.stop > s) len = (v->u.range.stop - s + st - 1) / st;
        if (st < 0 && v->u.range.stop < s) len = (s - v->u.range.stop - st - 1) / -st;
        if (e->u.sub.n != 1 || e->u.sub.items[0]->kind == AST_SLICE) ev_fail(ev, e->loc, "range takes one integer index");
        k = norm_index(ev, v_want_int(ev, ev_eval(ev, e->u.sub.items[0]), e->loc, "index"), len, e->loc);
        return v_int(ev, s + k * st);
    }
    if (v->kind == V_DICT) {
        value_t *key, *r;
        if (e->u.sub.n != 1 || e->u.sub.items[0]->kind == AST_SLICE) ev_fail(ev, e->loc, "a dict takes one key");
        key = ev_eval(ev, e->u.sub.items[0]);
        r = v_dict_get(ev, v, key);
        if (!r) {
            if (key->kind == V_STR)
                ev_fail(ev, e->u.sub.items[0]->loc, "key '%.*s' not found in dict", (int)(key->u.s.len > 200 ? 200 : key->u.s.len),
                        key->u.s.s);
            if (key->kind == V_INT)
                ev_fail(ev, e->u.sub.items[0]->loc, "key %lld not found in dict", (long long)key->u.i);
            ev_fail(ev, e->u.sub.items[0]->loc, "key not found in dict");
        }
        return r;
    }
    if (v->kind != V_BUF) {
        if (v->kind == V_EXPR && v->u.ex->kind == TILEC_EX_LOAD)
            ev_fail(ev, e->loc, "too many indices: write A[i, j] instead of A[i][j]");
        ev_fail(ev, e->loc, "%s cannot be indexed", v_kind_name(v));
    }
    b = v->u.buf;
    n = e->u.sub.n;
    if (n != b->ndim) {
        ev_fail(ev, e->loc, "buffer '%s' has %d dimension%s but %d ind%s given", b->name, b->ndim,
                b->ndim == 1 ? "" : "s", n, n == 1 ? "ex is" : "ices are");
    }
    for (i = 0; i < n; i++)
        if (e->u.sub.items[i]->kind == AST_SLICE) nslice++;
    idx = ev_alloc(ev, (size_t)(n ? n : 1) * sizeof *idx);
    if (nslice == 0) {
        for (i = 0; i < n; i++) {
            ast_expr_t *it = e->u.sub.items[i];
            int64_t c, dim;
            idx[i] = ex_index(ev, ev_eval(ev, it), it->loc);
            if (tilec_ir_is_const_int(idx[i], &c) && c < 0) {
                ev_fail(ev, it->loc, "index %lld is negative; buffer indices count from 0 (Python's "
                        "from-the-end meaning does not apply)", (long long)c);
            }
            /* (a global tensor indexed past its end may be the corner of a
             * boundary-safe T.copy, so only on-chip buffers are checked here) */
            if (b->scope != TILEC_SCOPE_GLOBAL && tilec_ir_is_const_int(idx[i], &c) &&
                tilec_ir_is_const_int(b->shape[i], &dim) && (c < 0 || c >= dim)) {
                ev_fail(ev, it->loc, "index %lld is out of range for dimension %d of '%s' (size %lld)",
                        (long long)c, i, b->name, (long long)dim);
            }
            if (b->scope != TILEC_SCOPE_GLOBAL && !ev->guarded && !tilec_ir_is_const_int(idx[i], &c) &&
                tilec_ir_is_const_int(b->shape[i], &dim)) {
                int64_t lo, hi;
                if (v_index_range(ev, idx[i], &lo, &hi) && (lo < 0 || hi >= dim)) {
                    ev_fail(ev, it->loc, "this index ranges over %lld..%lld in its loops, outside dimension %d "
                            "of '%s' (size %lld)", (long long)lo, (long long)hi, i, b->name, (long long)dim);
                }
            }
        }
        if (view_is(b)) return view_element(ev, ev_chk(ev, tilec_ir_load(ev->a, b, idx)));
        return v_expr(ev, lk_load(ev, b, idx));
    } else {
        region_t *rg = ev_alloc(ev, sizeof *rg);
        value_t *r = v_new(ev, V_REGION);
        rg->buf = b;
        rg->base = ev_alloc(ev, (size_t)n * sizeof *rg->base);
        rg->ext = ev_alloc(ev, (size_t)n * sizeof *rg->ext);
        for (i = 0; i < n; i++) {
            ast_expr_t *it = e->u.sub.items[i];
            if (it->kind != AST_SLICE) {
                int64_t c;
                rg->base[i] = ex_index(ev, ev_eval(ev, it), it->loc);
                rg->ext[i] = 1;
                if (tilec_ir_is_const_int(rg->base[i], &c) && c < 0)
                    ev_fail(ev, it->loc, "index %lld is negative; buffer indices count from 0 (Python's "
                            "from-the-end meaning does not apply)", (long long)c);
                continue;
            }
            if (it->u.slice.step) {
                value_t *st = ev_eval(ev, it->u.slice.step);
                if (st->kind != V_NONE && v_want_int(ev, st, it->loc, "slice step") != 1)
                    ev_fail(ev, it->loc, "buffer slices must have step 1");
            }
            {
                tilec_ir_expr_t *lo = ex_int32(ev, 0), *hi = b->shape[i];
                int64_t ext;
                if (it->u.slice.lo) {
                    value_t *lv = ev_eval(ev, it->u.slice.lo);
                    if (lv->kind != V_NONE) lo = ex_index(ev, lv, it->loc);
                }
                if (it->u.slice.hi) {
                    value_t *hv = ev_eval(ev, it->u.slice.hi);
                    if (hv->kind != V_NONE) hi = ex_index(ev, hv, it->loc);
                }
                {
                    int64_t c;
                    if ((tilec_ir_is_const_int(lo, &c) && c < 0) || (tilec_ir_is_const_int(hi, &c) && c < 0))
                        ev_fail(ev, it->loc, "slice bound %lld of '%s' is negative; buffer slices count from 0 "
                                "(Python's from-the-end meaning does not apply)", (long long)c, b->name);
                }
                if (!const_diff(ev, it->loc, hi, lo, &ext)) {
                    ev_fail(ev, it->loc, "the extent of this slice of '%s' is not a compile-time "
                            "constant; write it as x:x+EXTENT with a constant EXTENT", b->name);
                }
                if (ext < 1) ev_fail(ev, it->loc, "empty slice of '%s' (extent %lld)", b->name, (long long)ext);
                rg->base[i] = lo;
                rg->ext[i] = ext;
            }
        }
        r->u.rg = rg;
        return r;
    }
}

