/*
 * frontend/builtins.c — the names a tile program can call: the members of
 * `tilelang` and `tilelang.language` (T.*) that the subset supports, and the
 * few Python builtins compile-time code needs (range, len, min, max, ...).
 *
 * Each builtin binds its arguments by position or keyword (keywords TileLang
 * accepts but tilec does not need are accepted and ignored), checks them,
 * and either returns a compile-time value (T.Tensor types, loop ranges,
 * T.Kernel launch shapes, symbols) or appends IR through tileops.c.
 */
#include "autotune.h"
#include "eval_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    BI_KERNEL = 100, BI_TENSOR, BI_ALLOC_SHARED, BI_ALLOC_FRAGMENT, BI_ALLOC_LOCAL, BI_ALLOC_VAR,
    BI_COPY, BI_CLEAR, BI_FILL, BI_GEMM, BI_REDUCE_MAX, BI_REDUCE_MIN, BI_REDUCE_SUM,
    BI_REDUCE_ABSSUM, BI_REDUCE_ABSMAX, BI_CUMSUM, BI_ATOMIC_ADD, BI_ATOMIC_MAX, BI_ATOMIC_MIN,
    BI_USE_SWIZZLE, BI_ANNOTATE_LAYOUT, BI_SYNC, BI_PRINT, BI_PARALLEL, BI_PIPELINED, BI_SERIAL,
    BI_UNROLL, BI_VECTORIZED, BI_DYNAMIC, BI_CEILDIV, BI_TMAX, BI_TMIN, BI_ABS, BI_EXP, BI_EXP2,
    BI_LOG, BI_LOG2, BI_SQRT, BI_RSQRT, BI_TANH, BI_SIGMOID, BI_FLOOR, BI_CEIL, BI_IF_THEN_ELSE,
    BI_INFINITY, BI_CAST, BI_POW, BI_FLOORDIV, BI_FLOORMOD, BI_TRUNCDIV, BI_MAX_VALUE, BI_MIN_VALUE,
    BI_CONST, BI_EMPTY, BI_SAFE_VALUE, BI_NOOP_HINT, BI_TCAST, BI_DTYPE_OF, BI_CLAMP, BI_ATOMIC_ADDX2,
    BI_ATOMIC_ADDX4, BI_RESHAPE, BI_VIEW, BI_IM2COL, BI_ALLOC_GLOBAL, BI_PERSISTENT, BI_TILE_SCHED, BI_SYNC_GRID, BI_REINTERPRET,
    BI_RNG_INIT, BI_RNG_RAND, BI_SHFL, BI_SHFL_DOWN, BI_SHFL_UP, BI_ALLREDUCE, BI_ATTR, BI_COMM_REDUCER,
    BI_EVALUATE, BI_GEMM_SP, BI_DEVICE_ASSERT, BI_SHIFT_LEFT, BI_SHIFT_RIGHT,
    /* python */
    BI_RANGE = 200, BI_LEN, BI_PMIN, BI_PMAX, BI_PABS, BI_INT, BI_FLOAT, BI_BOOL, BI_STR, BI_TUPLE,
    BI_LIST, BI_ISINSTANCE
};

typedef struct bientry { const char *name; int id; } bientry_t;

static const bientry_t t_members[] = {
    {"prim_func", BI_PRIM_FUNC}, {"macro", BI_MACRO}, {"Kernel", BI_KERNEL}, {"Tensor", BI_TENSOR},
    {"Buffer", BI_TENSOR}, {"alloc_shared", BI_ALLOC_SHARED}, {"alloc_fragment", BI_ALLOC_FRAGMENT},
    {"alloc_local", BI_ALLOC_LOCAL}, {"alloc_var", BI_ALLOC_VAR}, {"copy", BI_COPY}, {"clear", BI_CLEAR},
    {"fill", BI_FILL}, {"gemm", BI_GEMM}, {"reduce_max", BI_REDUCE_MAX}, {"reduce_min", BI_REDUCE_MIN},
    {"reduce_sum", BI_REDUCE_SUM}, {"reduce_abssum", BI_REDUCE_ABSSUM}, {"reduce_absmax", BI_REDUCE_ABSMAX},
    {"cumsum", BI_CUMSUM}, {"atomic_add", BI_ATOMIC_ADD}, {"atomic_max", BI_ATOMIC_MAX},
    {"atomic_min", BI_ATOMIC_MIN}, {"use_swizzle", BI_USE_SWIZZLE}, {"annotate_layout", BI_ANNOTATE_LAYOUT},
    {"sync_threads", BI_SYNC}, {"print", BI_PRINT}, {"Parallel", BI_PARALLEL}, {"Pipelined", BI_PIPELINED},
    {"serial", BI_SERIAL}, {"unroll", BI_UNROLL}, {"vectorized", BI_VECTORIZED}, {"dynamic", BI_DYNAMIC},
    {"symbolic", BI_DYNAMIC}, {"ceildiv", BI_CEILDIV}, {"max", BI_TMAX}, {"min", BI_TMIN}, {"abs", BI_ABS},
    {"exp", BI_EXP}, {"exp2", BI_EXP2}, {"log", BI_LOG}, {"log2", BI_LOG2}, {"sqrt", BI_SQRT},
    {"rsqrt", BI_RSQRT}, {"tanh", BI_TANH}, {"sigmoid", BI_SIGMOID}, {"floor", BI_FLOOR}, {"ceil", BI_CEIL},
    {"if_then_else", BI_IF_THEN_ELSE}, {"infinity", BI_INFINITY}, {"cast", BI_CAST}, {"Cast", BI_TCAST},
    {"pow", BI_POW}, {"floordiv", BI_FLOORDIV}, {"floormod", BI_FLOORMOD}, {"truncdiv", BI_TRUNCDIV},
    {"max_value", BI_MAX_VALUE}, {"min_value", BI_MIN_VALUE}, {"const", BI_CONST}, {"empty", BI_EMPTY},
    {"annotate_safe_value", BI_SAFE_VALUE}, {"disable_warp_group_reg_alloc", BI_NOOP_HINT},
    {"set_max_nreg", BI_NOOP_HINT}, {"no_set_max_nreg", BI_NOOP_HINT}, {"dtype", BI_DTYPE_OF},
    {"annotate_producer_reg_dealloc", BI_NOOP_HINT}, {"annotate_consumer_reg_alloc", BI_NOOP_HINT},
    {"clamp", BI_CLAMP}, {"parallel", BI_PARALLEL}, {"Serial", BI_SERIAL}, {"atomic_addx2", BI_ATOMIC_ADDX2},
    {"atomic_addx4", BI_ATOMIC_ADDX4}, {"reshape", BI_RESHAPE}, {"view", BI_VIEW}, {"im2col", BI_IM2COL},
    {"alloc_global", BI_ALLOC_GLOBAL}, {"Persistent", BI_PERSISTENT},
    {"PersistentTileScheduler", BI_TILE_SCHED},
    {"sync_grid", BI_SYNC_GRID}, {"reinterpret", BI_REINTERPRET},
    {"rng_init", BI_RNG_INIT}, {"rng_rand", BI_RNG_RAND}, {"tvm_warp_shuffle", BI_SHFL},
    {"tvm_warp_shuffle_down", BI_SHFL_DOWN}, {"tvm_warp_shuffle_up", BI_SHFL_UP},
    {"tvm_thread_allreduce", BI_ALLREDUCE}, {"attr", BI_ATTR}, {"comm_reducer", BI_COMM_REDUCER},
    {"evaluate", BI_EVALUATE}, {"gemm_sp", BI_GEMM_SP},
    {"device_assert", BI_DEVICE_ASSERT}, {"shift_left", BI_SHIFT_LEFT}, {"shift_right", BI_SHIFT_RIGHT},
    {NULL, 0}
};

static const bientry_t tilelang_members[] = {
    {"jit", BI_JIT}, {"autotune", BI_AUTOTUNE}, {"cdiv", BI_CEILDIV}, {NULL, 0}
};

static const bientry_t py_members[] = {
    {"range", BI_RANGE}, {"len", BI_LEN}, {"min", BI_PMIN}, {"max", BI_PMAX}, {"abs", BI_PABS},
    {"int", BI_INT}, {"float", BI_FLOAT}, {"bool", BI_BOOL}, {"str", BI_STR}, {"tuple", BI_TUPLE},
    {"list", BI_LIST}, {"isinstance", BI_ISINSTANCE}, {NULL, 0}
};

/* T members tilec knows but does not support, with the reason. */
static const struct { const char *name, *why; } t_unsupported[] = {
    {"get_thread_binding", "a thread index is only read as a statement `tx = T.get_thread_binding(dim)` in a kernel "
     "body, where the rest of that block runs once per thread"},
    {"thread_binding", "a thread index is only read as a statement `tx = T.thread_binding(0, threads, "
     "thread=\"threadIdx.x\")` in a kernel body, where the rest of that block runs once per thread"},
    {"ClusterKernel", "thread-block clusters are not in the subset"},
    {"ptr", "raw pointers (T.ptr, pointer tables) are not in the subset; pass tensors"},
    {"any_sync", "warp votes (T.any_sync, T.all_sync, T.ballot_sync) exchange values between the threads of a warp"},
    {"all_sync", "warp votes (T.any_sync, T.all_sync, T.ballot_sync) exchange values between the threads of a warp"},
    {"ballot_sync", "warp votes (T.any_sync, T.all_sync, T.ballot_sync) exchange values between the threads of a warp"},
    {"alloc_reducer", "T.alloc_reducer is not in the subset yet"},
    {"call_extern", "external device functions cannot be called on every backend"},
    {"import_source", "external device sources cannot be compiled on every backend"},
    {"float8_e4m3fnuz", "AMD's fnuz 8-bit floats are not in tilec's IR (float8_e4m3fn and float8_e5m2 are)"},
    {"float8_e5m2fnuz", "AMD's fnuz 8-bit floats are not in tilec's IR (float8_e4m3fn and float8_e5m2 are)"},
    {NULL, NULL}
};

const char *bi_unsupported_reason(const char *name)
{
    int i;
    for (i = 0; t_unsupported[i].name; i++)
        if (!strcmp(t_unsupported[i].name, name)) return t_unsupported[i].why;
    return NULL;
}

static value_t *mk_builtin(ev_t *ev, int id)
{
    value_t *v = v_new(ev, V_BUILTIN);
    v->u.bi.id = id;
    return v;
}

static const char *find_name(const bientry_t *t, int id)
{
    for (; t->name; t++)
        if (t->id == id) return t->name;
    return NULL;
}

const char *bi_name(int id)
{
    const char *n = find_name(t_members, id);
    if (n) return n;
    n = find_name(tilelang_members, id);
    if (n) return n;
    n = find_name(py_members, id);
    if (!n) n = py_name(id);
    if (!n) n = ws_name(id);
    return n ? n : "builtin";
}

value_t *bi_lookup_ns(ev_t *ev, int ns, const char *name)
{
    const bientry_t *t;
    value_t *v;
    int dt;
    if (ns == NS_POLICY) {
        static const char *const pol[] = {"Square", "FullRow", "FullCol"};
        int i;
        for (i = 0; i < 3; i++) {
            if (!strcmp(name, pol[i])) {
                v = v_new(ev, V_POLICY);
                v->u.policy = i;
                return v;
            }
        }
        return NULL;
    }
    if (ns == NS_TILELANG) {
        char path[128];
        if (!strcmp(name, "PassConfigKey")) {
            v = v_new(ev, V_NS);
            v->u.ns = NS_PASSCFG;
            return v;
        }
        for (t = tilelang_members; t->name; t++)
            if (!strcmp(t->name, name)) return mk_builtin(ev, t->id);
        /* re-exports of tilelang/__init__.py */
        if (!strcmp(name, "DataType")) return bi_lookup_ns(ev, NS_T, "dtype");
        if (!strcmp(name, "next_power_of_2") || !strcmp(name, "cdiv")) return mod_member(ev, NS_TL_MATH, name);
        /* a submodule (tilelang.language, tilelang.math, ...) or an opaque name */
        snprintf(path, sizeof path, "tilelang.%s", name);
        return mod_lookup(ev, path);
    }
    if (ns != NS_T) return mod_member(ev, ns, name);
    if (!strcmp(name, "GemmWarpPolicy")) {
        v = v_new(ev, V_NS);
        v->u.ns = NS_POLICY;
        return v;
    }
    for (t = t_members; t->name; t++)
        if (!strcmp(t->name, name)) return mk_builtin(ev, t->id);
    if ((v = ws_member(ev, name)) != NULL) return v;
    /* tfloat32 is float32 storage that TileLang's tensor cores read with a 10-bit mantissa; tilec keeps
     * the full float32 (at least as accurate) */
    dt = !strcmp(name, "tfloat32") ? TILEC_FLOAT32 : tilec_dtype_from_name(name);
    if (dt >= 0) {
        v = v_new(ev, V_DTYPE);
        v->u.dt = (tilec_dtype_t)dt;
        return v;
    }
    return NULL;
}

value_t *bi_lookup_python(ev_t *ev, const char *name)
{
    const bientry_t *t;
    for (t = py_members; t->name; t++)
        if (!strcmp(t->name, name)) return mk_builtin(ev, t->id);
    if (!strcmp(name, "Ellipsis")) return mod_opaque(ev, "Ellipsis");
    return py_lookup(ev, name);
}

/* ---- argument binding ------------------------------------------------------ */

/* Binds the call's arguments to names[]; the first nreq are required.
 * Unknown keywords are errors; names listed but unused by the caller are how
 * ignored TileLang keywords are accepted. */
void bi_bind(ev_t *ev, args_t *ar, const char *fname, const char *const *names, int nnames, int nreq,
             value_t **out, ast_loc_t *locs)
{
    int i, j;
    for (i = 0; i < nnames; i++) {
        out[i] = NULL;
        locs[i] = ar->at;
    }
    if (ar->n > nnames)
        ev_fail(ev, ar->n > 0 ? ar->loc[nnames < ar->n ? nnames : 0] : ar->at, "%s takes at most %d positional "
                "argument%s, %d given", fname, nnames, nnames == 1 ? "" : "s", ar->n);
    for (i = 0; i < ar->n; i++) {
        out[i] = ar->v[i];
        locs[i] = ar->loc[i];
    }
    for (j = 0; j < ar->nkw; j++) {
        for (i = 0; i < nnames; i++)
            if (!strcmp(names[i], ar->kwn[j])) break;
        if (i == nnames) ev_fail(ev, ar->kwloc[j], "%s has no keyword argument '%s'", fname, ar->kwn[j]);
        if (out[i]) ev_fail(ev, ar->kwloc[j], "%s got two values for '%s'", fname, ar->kwn[j]);
        out[i] = ar->kwv[j];
        locs[i] = ar->kwloc[j];
    }
    for (i = 0; i < nreq; i++)
        if (!out[i]) ev_fail(ev, ar->at, "%s is missing its argument '%s'", fname, names[i]);
}


static int want_bool(ev_t *ev, value_t *v, ast_loc_t loc, const char *what)
{
    if (!v || v->kind == V_NONE) return 0;
    if (v_is_rt(v)) ev_fail(ev, loc, "%s must be a compile-time True/False", what);
    return v_truth(ev, v, loc);
}

static value_t *loopiter(ev_t *ev, tilec_loop_kind_t kind, int n)
{
    value_t *v = v_new(ev, V_LOOPITER);
    loopiter_t *it = ev_alloc(ev, sizeof *it);
    it->kind = kind;
    it->n = n;
    it->lo = ev_alloc(ev, sizeof *it->lo * (size_t)(n + 1));
    it->hi = ev_alloc(ev, sizeof *it->hi * (size_t)(n + 1));
    it->step = 1;
    it->num_stages = 1;
    v->u.it = it;
    return v;
}

static void check_extent_value(ev_t *ev, value_t *v, ast_loc_t loc, const char *what)
{
    if (v->kind == V_FLOAT) ev_fail(ev, loc, "%s must be an integer, got a float", what);
    if (!v_is_rt(v) && v->kind != V_INT && v->kind != V_BOOL)
        ev_fail(ev, loc, "%s must be an integer, got %s", what, v_kind_name(v));
}

/* serial / unroll / vectorized / Pipelined / range: (stop) or (start, stop[, step]) */
static value_t *range_like(ev_t *ev, args_t *ar, tilec_loop_kind_t kind, const char *fname)
{
    static const char *const names[] = {"start", "stop", "step", "num_stages", "order", "stage", "sync",
                                        "group", "annotations", "unroll_factor", "explicit", "coalesced_width"};
    value_t *a[12];
    ast_loc_t l[12];
    value_t *v;
    int64_t step = 1;
    int is_pipe = kind == TILEC_LOOP_PIPELINED, is_range = !strcmp(fname, "range");
    int i;
    bi_bind(ev, ar, fname, names, is_range ? 3 : 12, 1, a, l);
    if (is_pipe && a[2]) ev_fail(ev, l[2], "T.Pipelined has no step");
    if (a[2] && a[2]->kind != V_NONE) {
        step = v_want_int(ev, a[2], l[2], "the loop step");
        if (step == 0) ev_fail(ev, l[2], "the loop step cannot be zero");
    }
    for (i = 0; i < 2; i++)
        if (a[i] && a[i]->kind != V_NONE) check_extent_value(ev, a[i], l[i], "a loop bound");
    if (is_range && !ev->tail && !v_is_rt(a[0]) && (!a[1] || !v_is_rt(a[1]))) {
        v = v_new(ev, V_RANGE);
        v->u.range.start = a[1] ? v_want_int(ev, a[0], l[0], "range start") : 0;
        v->u.range.stop = a[1] ? v_want_int(ev, a[1], l[1], "range stop") : v_want_int(ev, a[0], l[0], "range stop");
        v->u.range.step = step;
        return v;
    }
    if (is_range && !ev->tail) ev_fail(ev, ar->at, "range() over a run-time bound must be inside T.Kernel");
    if (!is_range) ev_require_kernel(ev, ar->at, fname);
    v = loopiter(ev, kind, 1);
    if (a[1] && a[1]->kind != V_NONE) {
        v->u.it->lo[0] = a[0];
        v->u.it->hi[0] = a[1];
    } else {
        v->u.it->hi[0] = a[0];
    }
    v->u.it->step = step;
    if (is_pipe && a[3] && a[3]->kind != V_NONE) {
        int64_t ns = v_want_int(ev, a[3], l[3], "num_stages");
        if (ns < 0 || ns > 64) ev_fail(ev, l[3], "num_stages must be between 0 and 64");
        v->u.it->num_stages = ns < 1 ? 1 : (int)ns;
    }
    return v;
}

static value_t *shape_seq(ev_t *ev, value_t *shape, ast_loc_t loc, int allow_sym)
{
    value_t *s;
    int i;
    if (shape->kind == V_SEQ) {
        s = shape;
    } else if (shape->kind == V_INT || shape->kind == V_SYM || shape->kind == V_EXPR) {
        s = v_seq(ev, 1, 0);
        s->u.seq.items[0] = shape;
    } else {
        ev_fail(ev, loc, "a shape must be a tuple of integers, got %s", v_kind_name(shape));
    }
    if (s->u.seq.n < 1 || s->u.seq.n > TILEC_IR_MAX_DIMS)
        ev_fail(ev, loc, "a shape must have 1 to %d dimensions, got %d", TILEC_IR_MAX_DIMS, s->u.seq.n);
    for (i = 0; i < s->u.seq.n; i++) {
        value_t *d = s->u.seq.items[i];
        if (d->kind == V_INT || d->kind == V_BOOL) {
            if (d->u.i < 1) ev_fail(ev, loc, "dimension %d of the shape is %lld; dimensions must be positive", i,
                                    (long long)d->u.i);
            if (d->u.i > INT32_MAX) ev_fail(ev, loc, "dimension %d of the shape is too large", i);
        } else if (allow_sym && (d->kind == V_SYM || (d->kind == V_EXPR && !tilec_dtype_is_float(d->u.ex->dtype)))) {
            /* symbolic */
        } else if (d->kind == V_SYM || d->kind == V_EXPR) {
            ev_fail(ev, loc, "on-chip buffers need compile-time dimensions; dimension %d is only known at run time", i);
        } else {
            ev_fail(ev, loc, "dimension %d of the shape must be an integer, got %s", i, v_kind_name(d));
        }
    }
    return s;
}

static value_t *math1(ev_t *ev, args_t *ar, tilec_unop_t op, const char *fname)
{
    if (ar->n != 1 || ar->nkw) ev_fail(ev, ar->at, "T.%s takes one argument", fname);
    return v_math(ev, op, ar->v[0], ar->loc[0]);
}

static value_t *ceildiv(ev_t *ev, value_t *a, value_t *b, ast_loc_t loc)
{
    if ((a->kind == V_INT || a->kind == V_BOOL) && (b->kind == V_INT || b->kind == V_BOOL)) {
        value_t *na, *q;
        if (b->u.i == 0) ev_fail(ev, loc, "T.ceildiv by zero");
        na = v_unary(ev, '-', a, loc);
        q = v_binop(ev, AST_OP_FLOORDIV, na, b, loc);
        return v_unary(ev, '-', q, loc);
    }
    if (a->kind == V_FLOAT || b->kind == V_FLOAT) ev_fail(ev, loc, "T.ceildiv needs integers");
    {
        value_t *s = v_binop(ev, '+', a, b, loc);
        s = v_binop(ev, '-', s, v_int(ev, 1), loc);
        return v_binop(ev, AST_OP_FLOORDIV, s, b, loc);
    }
}

static value_t *py_minmax(ev_t *ev, args_t *ar, int is_max)
{
    value_t **items = ar->v, *r, *key = NULL, *dflt = NULL;
    int n = ar->n, i;
    for (i = 0; i < ar->nkw; i++) {
        if (!strcmp(ar->kwn[i], "key")) key = ar->kwv[i]->kind == V_NONE ? NULL : ar->kwv[i];
        else if (!strcmp(ar->kwn[i], "default")) dflt = ar->kwv[i];
        else ev_fail(ev, ar->kwloc[i], "%s() has no keyword argument '%s'", is_max ? "max" : "min", ar->kwn[i]);
    }
    if (key && key->kind != V_FUNC) ev_fail(ev, ar->at, "key= must be a function or lambda of the program");
    if (key || (dflt && n == 1)) {
        /* the general form: one iterable (or several values), a key, a default */
        value_t *s = n == 1 ? v_iter_items(ev, ar->v[0], ar->loc[0]) : NULL, *best = NULL, *bk = NULL;
        int m = s ? s->u.seq.n : n;
        for (i = 0; i < m; i++) {
            value_t *x = s ? s->u.seq.items[i] : ar->v[i];
            value_t *k = key ? ev_call_func(ev, key->u.fn, 1, &x, 0, NULL, NULL, ar->at) : x;
            if (!best || v_truth(ev, v_compare(ev, is_max ? AST_OP_GT : AST_OP_LT, k, bk, ar->at), ar->at)) {
                best = x;
                bk = k;
            }
        }
        if (!best && !dflt) ev_fail(ev, ar->at, "%s() of an empty sequence", is_max ? "max" : "min");
        return best ? best : dflt;
    }
    if (n == 1) {
        value_t *s = ar->v[0];
        if (s->kind == V_SEQ) {
            items = s->u.seq.items;
            n = s->u.seq.n;
        } else if (s->kind == V_RANGE) {
            int64_t a = s->u.range.start, b = s->u.range.stop, st = s->u.range.step, last;
            if (st > 0 ? a >= b : a <= b) ev_fail(ev, ar->at, "%s() of an empty range", is_max ? "max" : "min");
            last = a + ((b - a - (st > 0 ? 1 : -1)) / st) * st;
            return v_int(ev, (is_max ? (st > 0) : (st < 0)) ? last : a);
        } else {
            ev_fail(ev, ar->at, "%s() needs two values or a tuple", is_max ? "max" : "min");
        }
    }
    if (n < 1) ev_fail(ev, ar->at, "%s() of an empty sequence", is_max ? "max" : "min");
    r = items[0];
    for (i = 1; i < n; i++) r = v_minmax(ev, is_max, r, items[i], ar->at);
    return r;
}

static value_t *to_seq(ev_t *ev, value_t *v, int is_list, ast_loc_t loc)
{
    value_t *r;
    int i;
    if (v->kind == V_LOOPITER && v->u.it->n == 1 && v->u.it->kind == TILEC_LOOP_SERIAL &&
        (!v->u.it->lo[0] || !v_is_rt(v->u.it->lo[0])) && !v_is_rt(v->u.it->hi[0])) {
        /* range(...) inside a kernel, used as a compile-time sequence */
        value_t *rv = v_new(ev, V_RANGE);
        rv->u.range.start = v->u.it->lo[0] ? v_want_int(ev, v->u.it->lo[0], loc, "range start") : 0;
        rv->u.range.stop = v_want_int(ev, v->u.it->hi[0], loc, "range stop");
        rv->u.range.step = v->u.it->step;
        v = rv;
    }
    if (v->kind == V_SEQ) {
        r = v_seq(ev, v->u.seq.n, is_list);
        if (v->u.seq.n) memcpy(r->u.seq.items, v->u.seq.items, sizeof(value_t *) * (size_t)v->u.seq.n);
        return r;
    }
    if (v->kind == V_RANGE) {
        int64_t x, n = 0;
        for (x = v->u.range.start; v->u.range.step > 0 ? x < v->u.range.stop : x > v->u.range.stop;
             x += v->u.range.step)
            if (++n > EV_MAX_SEQ) ev_fail(ev, loc, "sequence too long");
        r = v_seq(ev, (int)n, is_list);
        for (i = 0, x = v->u.range.start; i < n; i++, x += v->u.range.step) r->u.seq.items[i] = v_int(ev, x);
        return r;
    }
    if (v->kind == V_STR) {
        r = v_seq(ev, (int)v->u.s.len, is_list);
        for (i = 0; i < (int)v->u.s.len; i++) r->u.seq.items[i] = v_str(ev, v->u.s.s + i, 1);
        return r;
    }
    ev_fail(ev, loc, "cannot convert %s to a %s", v_kind_name(v), is_list ? "list" : "tuple");
}

value_t *v_iter_items(ev_t *ev, value_t *v, ast_loc_t loc)
{
    if (v->kind == V_DICT) {
        value_t *r = v_seq(ev, v->u.seq.n / 2, 0);
        int i;
        for (i = 0; i + 1 < v->u.seq.n; i += 2) r->u.seq.items[i / 2] = v->u.seq.items[i];
        return r;
    }
    if (v->kind == V_DTYPE) { /* a dtype iterates as its name, as TileLang's str-based dtypes do */
        const char *nm = tilec_dtype_name(v->u.dt);
        v = v_str(ev, nm, strlen(nm));
    }
    return to_seq(ev, v, 0, loc);
}

static tilec_ir_expr_t *limit_value(ev_t *ev, tilec_dtype_t t, int is_max)
{
    double f;
    switch (t) {
    case TILEC_FLOAT16: f = 65504.0; break;
    case TILEC_BFLOAT16: f = 3.38953138925153547590e+38; break;
    case TILEC_FLOAT32: f = FLT_MAX; break;
    case TILEC_FLOAT64: f = DBL_MAX; break;
    case TILEC_FLOAT8_E4M3FN: f = 448.0; break;
    case TILEC_FLOAT8_E5M2: f = 57344.0; break;
    case TILEC_BOOL: return ev_chk(ev, tilec_ir_int(ev->a, is_max, t));
    default: {
        size_t bits = tilec_dtype_size(t) * 8;
        int64_t mx, mn;
        if (tilec_dtype_is_signed(t)) {
            mx = bits == 64 ? INT64_MAX : (int64_t)((1ULL << (bits - 1)) - 1);
            mn = bits == 64 ? INT64_MIN : -(int64_t)(1ULL << (bits - 1));
        } else {
            mx = bits == 64 ? -1 /* printed as all ones */ : (int64_t)((1ULL << bits) - 1);
            mn = 0;
        }
        return ev_chk(ev, tilec_ir_int(ev->a, is_max ? mx : mn, t));
    }
    }
    return ev_chk(ev, tilec_ir_float(ev->a, is_max ? f : -f, t));
}

static tilec_reduce_op_t reduce_op(int id)
{
    switch (id) {
    case BI_REDUCE_MAX: return TILEC_RED_MAX;
    case BI_REDUCE_MIN: return TILEC_RED_MIN;
    case BI_REDUCE_ABSSUM: return TILEC_RED_ABSSUM;
    case BI_REDUCE_ABSMAX: return TILEC_RED_ABSMAX;
    default: return TILEC_RED_SUM;
    }
}

static value_t *call_annotate_layout(ev_t *ev, ast_expr_t *call)
{
    tilec_ir_stmt_t *st;
    ev_require_kernel(ev, call->loc, "T.annotate_layout");
    st = ev_stmt(ev, TILEC_ST_HINT, call->loc);
    st->u.hint.name = "annotate_layout";
    ev_emit(ev, st, call->loc);
    return ev->none;
}

static void check_pass_configs(ev_t *ev, value_t *d, ast_loc_t loc)
{
    int i;
    for (i = 0; i + 1 < d->u.seq.n; i += 2) {
        value_t *k = d->u.seq.items[i], *v = d->u.seq.items[i + 1];
        if (k->kind != V_STR)
            ev_fail(ev, loc, "a pass_configs key must be a string or a tilelang.PassConfigKey member, got %s",
                    v_kind_name(k));
        if (!v_is_num(v) && v->kind != V_STR && v->kind != V_NONE)
            ev_fail(ev, loc, "the value of pass_configs key '%s' must be a bool, number or string, got %s", k->u.s.s,
                    v_kind_name(v));
    }
}

value_t *bi_subscript(ev_t *ev, value_t *fnv, ast_expr_t *e)
{
    value_t *v, *dt = NULL;
    ast_expr_t *shape_e;
    if (fnv->u.bi.id != BI_TENSOR)
        ev_fail(ev, e->loc, "%s cannot be subscripted", bi_name(fnv->u.bi.id));
    if (e->u.sub.n < 1 || e->u.sub.n > 2) ev_fail(ev, e->loc, "T.Tensor[shape, dtype] takes a shape and a dtype");
    shape_e = e->u.sub.items[0];
    if (shape_e->kind == AST_SLICE) ev_fail(ev, shape_e->loc, "T.Tensor[shape, dtype] takes a shape, not a slice");
    v = v_new(ev, V_TENSORTYPE);
    v->u.tt.shape = shape_seq(ev, ev_eval(ev, shape_e), shape_e->loc, 1);
    if (e->u.sub.n == 2) dt = ev_eval(ev, e->u.sub.items[1]);
    v->u.tt.dt = dt ? v_want_dtype(ev, dt, e->u.sub.items[1]->loc) : TILEC_FLOAT32;
    return v;
}

value_t *bi_call(ev_t *ev, value_t *fnv, ast_expr_t *call)
{
    int id = fnv->u.bi.id;
    args_t ar;
    ast_loc_t at = call->loc;
    if (id == BI_ANNOTATE_LAYOUT) return call_annotate_layout(ev, call);
    if (id >= BI_MODULE_FIRST) {
        ev_eval_args(ev, call, &ar);
        if (id == BI_METHOD) return py_method_call(ev, fnv->u.bi.self, fnv->u.bi.meth, &ar);
        if (id >= BI_TS_FIRST) return ts_call(ev, id, fnv->u.bi.self, &ar);
        if (id >= BI_MMA_FIRST) return mma_call(ev, id, fnv->u.bi.self, &ar);
        if (id >= BI_WS_FIRST) {
            /* one thread's cp.async is per-thread code; the rest of wsops.c is block-level */
            if (ev->thread_wrap && id != BI_ACCESS_PTR && id != BI_PTX_CP_ASYNC) th_reject(ev, ws_name(id), at);
            return ws_call(ev, id, &ar);
        }
        return id >= BI_PY_FIRST ? py_call(ev, id, &ar) : mod_call(ev, id, &ar);
    }
    if (id == BI_IF_THEN_ELSE) ev->guarded++;
    ev_eval_args(ev, call, &ar);
    if (id == BI_IF_THEN_ELSE) ev->guarded--;
    if (ev->thread_wrap && (id == BI_CLEAR || id == BI_FILL) && ar.n >= 1 && ar.v[0]->kind == V_BUF &&
        (ar.v[0]->u.buf->scope == TILEC_SCOPE_LOCAL || ar.v[0]->u.buf->scope == TILEC_SCOPE_VAR)) {
        /* this thread's own buffer: per-thread stores (lockstep.c: lk_fill_local) */
    } else if (ev->thread_wrap && id == BI_COPY && ar.n >= 2 && (op_copy_is_own(ar.v[0]) || op_copy_is_own(ar.v[1]))) {
        /* to or from this thread's own buffer: its own element copy (tileops.c) */
    } else if (ev->thread_wrap) {
        switch (id) {   /* block-collective: not in one thread's code */
        case BI_COPY: case BI_CLEAR: case BI_FILL: case BI_GEMM: case BI_REDUCE_MAX: case BI_REDUCE_MIN:
        case BI_REDUCE_SUM: case BI_REDUCE_ABSSUM: case BI_REDUCE_ABSMAX: case BI_CUMSUM: case BI_SYNC:
        case BI_ALLOC_SHARED: case BI_ALLOC_FRAGMENT: case BI_IM2COL: case BI_KERNEL: case BI_SYNC_GRID: {
            char what[64];
            snprintf(what, sizeof what, "T.%s", bi_name(id));
            th_reject(ev, what, at);
            break;
        }
        default: break;
        }
    }
    switch (id) {
    case -1: { /* x.astype(dtype) */
        BIND("astype", 1, "dtype");
        return v_cast(ev, fnv->u.bi.self, v_want_dtype(ev, a_[0], l_[0]), at);
    }
    case BI_PRIM_FUNC: case BI_MACRO:
        ev_fail(ev, at, "T.%s is a decorator: write @T.%s above a def", bi_name(id), bi_name(id));
    case BI_JIT: {
        /* TileLang's keywords (target=, execution_backend=, verbose=, ...)
         * are all accepted; out_idx marks outputs and pass_configs is kept
         * for the backend (see pass_configs in frontend.h). */
        value_t *v = v_new(ev, V_JIT), *o = NULL;
        ast_loc_t ol = at;
        int i;
        if (ar.n) ev_fail(ev, ar.loc[0], "use tilelang.jit as a decorator: @tilelang.jit or @tilelang.jit(out_idx=...)");
        for (i = 0; i < ar.nkw; i++) {
            if (!strcmp(ar.kwn[i], "out_idx")) {
                o = ar.kwv[i];
                ol = ar.kwloc[i];
            } else if (!strcmp(ar.kwn[i], "pass_configs") && ar.kwv[i]->kind != V_NONE) {
                if (ar.kwv[i]->kind != V_DICT) ev_fail(ev, ar.kwloc[i], "pass_configs must be a dict, got %s",
                                                       v_kind_name(ar.kwv[i]));
                v->u.jit.pass_configs = ar.kwv[i];
                v->u.jit.pc_loc = ar.kwloc[i];
                check_pass_configs(ev, ar.kwv[i], ar.kwloc[i]);
            }
        }
        if (o && o->kind != V_NONE) {
            if (o->kind == V_INT) {
                v->u.jit.nout = 1;
                v->u.jit.out_idx = ev_alloc(ev, sizeof(int64_t));
                v->u.jit.out_idx[0] = o->u.i;
            } else if (o->kind == V_SEQ) {
                v->u.jit.nout = o->u.seq.n;
                v->u.jit.out_idx = ev_alloc(ev, sizeof(int64_t) * (size_t)(o->u.seq.n + 1));
                for (i = 0; i < o->u.seq.n; i++)
                    v->u.jit.out_idx[i] = v_want_int(ev, o->u.seq.items[i], ol, "an out_idx entry");
            } else {
                ev_fail(ev, ol, "out_idx must be an integer or a list of integers");
            }
        }
        return v;
    }
    case BI_AUTOTUNE:
        return at_decorator(ev, &ar, at);
    case BI_KERNEL: {
        static const char *const names[] = {"threads", "prelude", "is_cpu", "is_npu"};
        value_t *v = v_new(ev, V_KERNEL);
        int i, j;
        if (ar.n > 3) ev_fail(ev, at, "T.Kernel takes at most 3 grid extents, %d given", ar.n);
        /* T.Kernel() with no extents is one block, as in TileLang (its launch
         * has no block index frames): it binds no block index (eval_stmt.c) */
        v->u.kern.ngrid = ar.n ? ar.n : 1;
        v->u.kern.nogrid = ar.n == 0;
        if (ar.n == 0) v->u.kern.grid[0] = v_int(ev, 1);
        for (i = 0; i < ar.n; i++) {
            check_extent_value(ev, ar.v[i], ar.loc[i], "a grid extent");
            if ((ar.v[i]->kind == V_INT || ar.v[i]->kind == V_BOOL) && (ar.v[i]->u.i < 1 || ar.v[i]->u.i > INT32_MAX))
                ev_fail(ev, ar.loc[i], "grid extent %lld must be between 1 and 2^31-1", (long long)ar.v[i]->u.i);
            v->u.kern.grid[i] = ar.v[i];
        }
        v->u.kern.threads[0] = 128;
        v->u.kern.threads[1] = v->u.kern.threads[2] = 1;
        for (j = 0; j < ar.nkw; j++) {
            for (i = 0; i < 4; i++)
                if (!strcmp(names[i], ar.kwn[j])) break;
            if (i == 4) ev_fail(ev, ar.kwloc[j], "T.Kernel has no keyword argument '%s'", ar.kwn[j]);
            if (i == 0) {
                value_t *t = ar.kwv[j];
                int64_t th[3] = {1, 1, 1}, total = 1;
                int n = 1, k;
                if (t->kind == V_SEQ) {
                    n = t->u.seq.n;
                    if (n < 1 || n > 3) ev_fail(ev, ar.kwloc[j], "threads takes 1 to 3 values");
                    for (k = 0; k < n; k++) th[k] = v_want_int(ev, t->u.seq.items[k], ar.kwloc[j], "threads");
                } else {
                    th[0] = v_want_int(ev, t, ar.kwloc[j], "threads");
                }
                for (k = 0; k < 3; k++) {
                    if (th[k] < 1 || th[k] > 1024) ev_fail(ev, ar.kwloc[j], "threads must be between 1 and 1024");
                    total *= th[k];
                }
                if (total > 1024) ev_fail(ev, ar.kwloc[j], "a block has at most 1024 threads (%lld requested)",
                                          (long long)total);
                for (k = 0; k < 3; k++) v->u.kern.threads[k] = (int)th[k];
            }
        }
        return v;
    }
    case BI_TENSOR: {
        BIND("T.Tensor", 1, "shape", "dtype", "data", "strides", "elem_offset", "scope", "align",
             "offset_factor", "buffer_type", "axis_separators");
        value_t *v;
        if (a_[2] && a_[2]->kind != V_NONE) /* T.Tensor(shape, dtype, A.data): a re-view of A */
            return view_new(ev, a_[2], shape_seq(ev, a_[0], l_[0], 1), a_[1], at, "T.Tensor(shape, dtype, data)");
        v = v_new(ev, V_TENSORTYPE);
        v->u.tt.shape = shape_seq(ev, a_[0], l_[0], 1);
        v->u.tt.dt = a_[1] ? v_want_dtype(ev, a_[1], l_[1]) : TILEC_FLOAT32;
        return v;
    }
    case BI_RESHAPE: {
        BIND("T.reshape", 2, "src", "shape");
        return view_new(ev, a_[0], shape_seq(ev, a_[1], l_[1], 0), NULL, at, "T.reshape");
    }
    case BI_VIEW: {
        BIND("T.view", 1, "src", "shape", "dtype");
        return view_new(ev, a_[0], a_[1] && a_[1]->kind != V_NONE ? shape_seq(ev, a_[1], l_[1], 0) : NULL, a_[2], at,
                        "T.view");
    }
    case BI_IM2COL: {
        BIND("T.im2col", 8, "img", "col", "nhw_step", "c_step", "kernel", "stride", "dilation", "pad",
             "eviction_policy", "annotations");
        op_im2col(ev, a_, l_, at);
        return ev->none;
    }
    case BI_SAFE_VALUE: {
        /* T.annotate_safe_value({A: v}): what guarded loads of A read past its edge
         * (core/pass_safe_memory.c consumes the attribute) */
        BIND("T.annotate_safe_value", 1, "safe_value_map");
        value_t *d = a_[0];
        int i;
        if (d->kind != V_DICT) ev_fail(ev, l_[0], "T.annotate_safe_value takes a dict {tensor: value}");
        for (i = 0; i + 1 < d->u.seq.n; i += 2) {
            value_t *k = d->u.seq.items[i], *v = d->u.seq.items[i + 1];
            tilec_ir_attr_t at;
            if (k->kind != V_BUF || k->u.buf->scope != TILEC_SCOPE_GLOBAL)
                ev_fail(ev, l_[0], "T.annotate_safe_value: the keys must be kernel tensors, got %s", v_kind_name(k));
            if (!v_is_num(v)) ev_fail(ev, l_[0], "T.annotate_safe_value: the value for '%s' must be a compile-time "
                                      "number, got %s", k->u.buf->name, v_kind_name(v));
            memset(&at, 0, sizeof at);
            at.key = "frontend.safe_value";
            if (v->kind == V_FLOAT) {
                at.kind = TILEC_ATTR_FLOAT;
                at.f = v->u.f;
            } else {
                at.kind = TILEC_ATTR_INT;
                at.i = v->u.i;
            }
            if (tilec_ir_attr_set(ev->a, &k->u.buf->nattrs, &k->u.buf->attrs, &at) < 0) ev_fail(ev, l_[0], "out of memory");
        }
        return ev->none;
    }
    case BI_CONST: {
        BIND("T.const", 1, "names", "dtype");
        return ev_const_names(ev, a_[0], l_[0]);
    }
    case BI_EMPTY: {
        BIND("T.empty", 1, "shape", "dtype");
        value_t *tt = v_new(ev, V_TENSORTYPE);
        tt->u.tt.shape = shape_seq(ev, a_[0], l_[0], 1);
        tt->u.tt.dt = a_[1] ? v_want_dtype(ev, a_[1], l_[1]) : TILEC_FLOAT32;
        return ev_eager_tensor(ev, ev->name_hint, tt, 1, at);
    }
    case BI_ALLOC_SHARED: case BI_ALLOC_FRAGMENT: case BI_ALLOC_LOCAL: {
        BIND(bi_name(id), 2, "shape", "dtype", "scope");
        tilec_scope_t sc = id == BI_ALLOC_SHARED ? TILEC_SCOPE_SHARED
                         : id == BI_ALLOC_FRAGMENT ? TILEC_SCOPE_FRAGMENT : TILEC_SCOPE_LOCAL;
        value_t *shape = shape_seq(ev, a_[0], l_[0], 0);
        if (a_[2] && a_[2]->kind != V_STR && a_[2]->kind != V_NONE) ev_fail(ev, l_[2], "scope must be a string");
        return op_alloc(ev, sc, shape, a_[1], NULL, ev->name_hint, at);
    }
    case BI_ALLOC_GLOBAL: {
        /* device scratch memory between the kernels of a chain: a tensor parameter of its own,
         * appended after the prim_func's (the caller passes it; tilec run allocates it) */
        BIND("T.alloc_global", 2, "shape", "dtype");
        value_t *tt = v_new(ev, V_TENSORTYPE);
        if (!ev->in_prim || ev->tail || ev->kernel_done || ev->nkdone)
            ev_fail(ev, at, "T.alloc_global belongs in the body of a @T.prim_func, before its first "
                    "`with T.Kernel` block");
        tt->u.tt.shape = shape_seq(ev, a_[0], l_[0], 1);
        tt->u.tt.dt = v_want_dtype(ev, a_[1], l_[1]);
        ev->nscratch++;
        return ev_param_add(ev, ev->name_hint ? ev->name_hint : "scratch", tt, at);
    }
    case BI_ALLOC_VAR: {
        BIND("T.alloc_var", 1, "dtype", "init", "scope");
        return op_alloc(ev, TILEC_SCOPE_VAR, NULL, a_[0], a_[1], ev->name_hint, at);
    }
    case BI_COPY: {
        BIND("T.copy", 2, "src", "dst", "coalesced_width", "disable_tma", "eviction_policy", "loop_layout");
        op_copy(ev, a_[0], a_[1], at, l_[0], l_[1]);
        return ev->none;
    }
    case BI_CLEAR: {
        BIND("T.clear", 1, "buffer");
        if (lk_fill_local(ev, a_[0], v_int(ev, 0), l_[0])) return ev->none;
        op_fill(ev, a_[0], v_int(ev, 0), l_[0]);
        return ev->none;
    }
    case BI_FILL: {
        BIND("T.fill", 2, "buffer", "value");
        if (lk_fill_local(ev, a_[0], a_[1], l_[0])) return ev->none;
        op_fill(ev, a_[0], a_[1], l_[0]);
        return ev->none;
    }
    case BI_GEMM: {
        BIND("T.gemm", 3, "A", "B", "C", "transpose_A", "transpose_B", "policy", "clear_accum", "k_pack",
             "wg_wait", "mbar");
        op_gemm(ev, a_, l_, at);
        return ev->none;
    }
    case BI_GEMM_SP: {   /* sparse.c: the A tile decompressed, then T.gemm */
        BIND("T.gemm_sp", 4, "A_sparse", "E", "B", "C", "transpose_A", "transpose_E", "transpose_B", "policy",
             "clear_accum", "k_pack", "wg_wait", "annotations");
        op_gemm_sp(ev, a_, l_, at);
        return ev->none;
    }
    case BI_REDUCE_MAX: case BI_REDUCE_MIN: case BI_REDUCE_SUM: case BI_REDUCE_ABSSUM: case BI_REDUCE_ABSMAX: {
        BIND(bi_name(id), 2, "buffer", "out", "dim", "clear");
        op_reduce(ev, reduce_op(id), a_, l_, at);
        return ev->none;
    }
    case BI_CUMSUM: {
        BIND("T.cumsum", 1, "src", "dst", "dim", "reverse");
        op_cumsum(ev, a_, l_, at);
        return ev->none;
    }
    case BI_ATOMIC_ADD: case BI_ATOMIC_MAX: case BI_ATOMIC_MIN: {
        BIND(bi_name(id), 2, "dst", "value", "memory_order", "return_prev", "use_tma");
        if (a_[3] && want_bool(ev, a_[3], l_[3], "return_prev"))
            ev_fail(ev, l_[3], "return_prev=True is not supported");
        op_atomic(ev, id == BI_ATOMIC_ADD ? TILEC_ATOMIC_ADD : id == BI_ATOMIC_MAX ? TILEC_ATOMIC_MAX : TILEC_ATOMIC_MIN,
                  a_[0], a_[1], at, l_[0]);
        return ev->none;
    }
    case BI_ATOMIC_ADDX2: case BI_ATOMIC_ADDX4: {
        BIND(bi_name(id), 2, "dst", "value", "return_prev");
        if (a_[2] && want_bool(ev, a_[2], l_[2], "return_prev"))
            ev_fail(ev, l_[2], "return_prev=True is not supported");
        op_atomic_vec(ev, a_[0], a_[1], id == BI_ATOMIC_ADDX2 ? 2 : 4, at, l_[0], l_[1]);
        return ev->none;
    }
    case BI_USE_SWIZZLE: {
        BIND("T.use_swizzle", 1, "panel_size", "order", "enable");
        tilec_ir_stmt_t *st;
        int64_t p = v_want_int(ev, a_[0], l_[0], "panel_size");
        ev_require_kernel(ev, at, "T.use_swizzle");
        if (a_[2] && !want_bool(ev, a_[2], l_[2], "enable")) return ev->none;
        /* an explicit order is the hint's second argument (0 "row", 1
         * "column": TileLang's rasterizations); without one, one argument */
        int order = -1;
        if (a_[1] && a_[1]->kind != V_NONE) {
            if (a_[1]->kind != V_STR || (strcmp(a_[1]->u.s.s, "row") != 0 && strcmp(a_[1]->u.s.s, "column") != 0))
                ev_fail(ev, l_[1], "order must be \"row\" or \"column\"");
            order = strcmp(a_[1]->u.s.s, "column") == 0;
        }
        st = ev_stmt(ev, TILEC_ST_HINT, at);
        st->u.hint.name = "use_swizzle";
        st->u.hint.nargs = order < 0 ? 1 : 2;
        st->u.hint.args = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *st->u.hint.args * 2));
        st->u.hint.args[0] = ex_int32(ev, p);
        if (order >= 0)
            st->u.hint.args[1] = ex_int32(ev, order);
        ev_emit(ev, st, at);
        return ev->none;
    }
    case BI_SYNC: {
        if (ar.n || ar.nkw) ev_fail(ev, at, "T.sync_threads takes no arguments");
        ev_require_kernel(ev, at, "T.sync_threads");
        ev_emit(ev, ev_stmt(ev, TILEC_ST_SYNC, at), at);
        return ev->none;
    }
    case BI_PRINT: {
        BIND("T.print", 1, "obj", "msg", "warp_group_id", "warp_id");
        const char *msg = "";
        if (a_[1] && a_[1]->kind != V_NONE) {
            if (a_[1]->kind != V_STR) ev_fail(ev, l_[1], "msg must be a string");
            msg = a_[1]->u.s.s;
        }
        op_print(ev, a_[0], msg, at);
        return ev->none;
    }
    case BI_PARALLEL: {
        value_t *v;
        int i, j;
        for (j = 0; j < ar.nkw; j++)
            /* hints: prefer_async (stores to shared by cp.async, complete where the loop stands in tilec) and
             * annotations do not change results */
            if (strcmp(ar.kwn[j], "coalesced_width") && strcmp(ar.kwn[j], "loop_layout") &&
                strcmp(ar.kwn[j], "prefer_async") && strcmp(ar.kwn[j], "annotations"))
                ev_fail(ev, ar.kwloc[j], "T.Parallel has no keyword argument '%s'", ar.kwn[j]);
        if (ar.n < 1 || ar.n > TILEC_IR_MAX_DIMS) ev_fail(ev, at, "T.Parallel takes 1 to %d extents", TILEC_IR_MAX_DIMS);
        ev_require_kernel(ev, at, "T.Parallel");
        v = loopiter(ev, TILEC_LOOP_PARALLEL, ar.n);
        for (i = 0; i < ar.n; i++) {
            check_extent_value(ev, ar.v[i], ar.loc[i], "a T.Parallel extent");
            v->u.it->hi[i] = ar.v[i];
        }
        return v;
    }
    case BI_SYNC_GRID:
        if (ar.n || ar.nkw) ev_fail(ev, at, "T.sync_grid() takes no arguments");
        ev_grid_sync(ev, at);
        return ev->none;
    case BI_TILE_SCHED: return ts_new(ev, &ar);
    case BI_PERSISTENT: {
        /* for bx, by in T.Persistent([m, n], wave_size, index): the tiles index, index + wave_size, ...
         * of the m x n domain (eval_stmt.c: exec_persistent) */
        BIND("T.Persistent", 3, "domain", "wave_size", "index", "group_size");
        value_t *v, *dom = a_[0];
        int i;
        ev_require_kernel(ev, at, "T.Persistent");
        if (dom->kind != V_SEQ || dom->u.seq.n < 1 || dom->u.seq.n > TILEC_IR_MAX_DIMS)
            ev_fail(ev, l_[0], "T.Persistent's domain is a list of 1 to %d extents", TILEC_IR_MAX_DIMS);
        v = loopiter(ev, TILEC_LOOP_SERIAL, dom->u.seq.n);
        for (i = 0; i < dom->u.seq.n; i++) {
            check_extent_value(ev, dom->u.seq.items[i], l_[0], "a T.Persistent extent");
            v->u.it->hi[i] = dom->u.seq.items[i];
        }
        check_extent_value(ev, a_[1], l_[1], "T.Persistent's wave size");
        v->u.it->wave = a_[1];
        v->u.it->index = a_[2];
        return v;
    }
    case BI_PIPELINED: return range_like(ev, &ar, TILEC_LOOP_PIPELINED, "T.Pipelined");
    case BI_SERIAL: return range_like(ev, &ar, TILEC_LOOP_SERIAL, "T.serial");
    case BI_UNROLL: return range_like(ev, &ar, TILEC_LOOP_UNROLL, "T.unroll");
    case BI_VECTORIZED: return range_like(ev, &ar, TILEC_LOOP_VECTORIZED, "T.vectorized");
    case BI_RANGE: return range_like(ev, &ar, TILEC_LOOP_SERIAL, "range");
    case BI_DYNAMIC: {
        BIND("T.dynamic", 1, "name", "dtype");
        value_t *v;
        if (a_[0]->kind != V_STR || a_[0]->u.s.len == 0) ev_fail(ev, l_[0], "T.dynamic needs a symbol name string");
        if (a_[1]) {
            tilec_dtype_t t = v_want_dtype(ev, a_[1], l_[1]);
            if (!tilec_dtype_is_int(t)) ev_fail(ev, l_[1], "a T.dynamic symbol must have an integer dtype");
        }
        {
            /* "m" is one symbol; "b, m, n" (TileLang's several names) a tuple of them */
            value_t *items[16];
            const char *p = a_[0]->u.s.s;
            int n = 0, k;
            while (*p) {
                const char *q;
                char *nm;
                while (*p == ' ' || *p == ',') p++;
                if (!*p) break;
                for (q = p; *q && *q != ' ' && *q != ','; q++)
                    if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_' || (*q >= '0' && *q <= '9')))
                        ev_fail(ev, l_[0], "a T.dynamic symbol name must be an identifier (or several, separated "
                                "by commas)");
                if (*p >= '0' && *p <= '9')
                    ev_fail(ev, l_[0], "a T.dynamic symbol name must be an identifier, not start with a digit");
                if (n == 16) ev_fail(ev, l_[0], "T.dynamic takes at most 16 names");
                nm = ev_alloc(ev, (size_t)(q - p) + 1);
                memcpy(nm, p, (size_t)(q - p));
                items[n] = v_new(ev, V_SYM);
                items[n++]->u.sym = ev_new_sym(ev, nm, l_[0]);
                p = q;
            }
            if (n == 0) ev_fail(ev, l_[0], "T.dynamic needs a symbol name string");
            if (n == 1) return items[0];
            v = v_seq(ev, n, 0);
            for (k = 0; k < n; k++) v->u.seq.items[k] = items[k];
            return v;
        }
    }
    case BI_CEILDIV: {
        BIND("T.ceildiv", 2, "lhs", "rhs");
        return ceildiv(ev, a_[0], a_[1], at);
    }
    case BI_REINTERPRET: { /* T.reinterpret(value, dtype); tvm.tirx.reinterpret(dtype, value) */
        tilec_dtype_t t;
        if (ar.n == 1 && ar.nkw == 1 && !strcmp(ar.kwn[0], "dtype") && ar.kwv[0]->kind == V_STR &&
            !strcmp(ar.kwv[0]->u.s.s, "handle"))
            return ev->none;   /* an opaque handle (T.attr's reduce_scope value): nothing to compute */
        if (ar.n != 2 || ar.nkw) ev_fail(ev, at, "T.reinterpret takes a value and a dtype");
        if (v_as_dtype(ar.v[1], &t)) return v_reinterpret(ev, ar.v[0], t, at);
        if (v_as_dtype(ar.v[0], &t)) return v_reinterpret(ev, ar.v[1], t, at);
        ev_fail(ev, at, "T.reinterpret needs a dtype (as T.float16 or \"float16\") and a value");
    }
    case BI_RNG_INIT: return rng_init(ev, &ar, at);
    case BI_RNG_RAND: return rng_rand(ev, &ar, at);
    case BI_SHFL: return lk_shuffle(ev, 0, &ar, "T.tvm_warp_shuffle");
    case BI_SHFL_DOWN: return lk_shuffle(ev, 1, &ar, "T.tvm_warp_shuffle_down");
    case BI_SHFL_UP: return lk_shuffle(ev, 2, &ar, "T.tvm_warp_shuffle_up");
    case BI_ALLREDUCE: return lk_allreduce(ev, &ar);
    case BI_COMM_REDUCER: { /* T.comm_reducer(lambda x, y: ..., [identity]) */
        value_t *r;
        BIND("T.comm_reducer", 2, "fcombine", "identity");
        if (a_[0]->kind != V_FUNC) ev_fail(ev, l_[0], "T.comm_reducer takes a function of two values, got %s",
                                           v_kind_name(a_[0]));
        if (a_[1]->kind == V_SEQ) {
            if (a_[1]->u.seq.n != 1) ev_fail(ev, l_[1], "T.comm_reducer of more than one value is outside the subset");
            a_[1] = a_[1]->u.seq.items[0];
        }
        if (!v_is_num(a_[1]) && !v_is_rt(a_[1])) ev_fail(ev, l_[1], "T.comm_reducer: the identity must be a number");
        r = v_new(ev, V_REDUCER);
        r->u.seq.n = 2;
        r->u.seq.items = ev_alloc(ev, 2 * sizeof *r->u.seq.items);
        r->u.seq.items[0] = a_[0];
        r->u.seq.items[1] = a_[1];
        return r;
    }
    case BI_ATTR: { /* `with T.attr(T.comm_reducer(...), "reduce_scope", ...)`: the reducer for the body */
        BIND("T.attr", 3, "node", "attr_key", "value");
        if (a_[0]->kind != V_REDUCER || a_[1]->kind != V_STR || strcmp(a_[1]->u.s.s, "reduce_scope"))
            ev_fail(ev, at, "T.attr is supported only as `with T.attr(T.comm_reducer(...), \"reduce_scope\", ...)` "
                    "around T.tvm_thread_allreduce");
        return a_[0];
    }
    case BI_EVALUATE: /* T.evaluate(x): x was evaluated for its effect */
        if (ar.n != 1 || ar.nkw) ev_fail(ev, at, "T.evaluate takes one value");
        return ev->none;
    case BI_CLAMP: { /* T.clamp(x, lo, hi) = min(max(x, lo), hi) */
        BIND("T.clamp", 3, "dst", "min_val", "max_val");
        return v_minmax(ev, 0, v_minmax(ev, 1, a_[0], a_[1], at), a_[2], at);
    }
    case BI_TMAX: case BI_TMIN: {
        BIND(id == BI_TMAX ? "T.max" : "T.min", 2, "a", "b", "span");
        return v_minmax(ev, id == BI_TMAX, a_[0], a_[1], at);
    }
    case BI_ABS: return math1(ev, &ar, TILEC_UN_ABS, "abs");
    case BI_PABS:
        if (ar.n != 1 || ar.nkw) ev_fail(ev, at, "abs() takes one argument");
        return v_math(ev, TILEC_UN_ABS, ar.v[0], ar.loc[0]);
    case BI_EXP: return math1(ev, &ar, TILEC_UN_EXP, "exp");
    case BI_EXP2: return math1(ev, &ar, TILEC_UN_EXP2, "exp2");
    case BI_LOG: return math1(ev, &ar, TILEC_UN_LOG, "log");
    case BI_LOG2: return math1(ev, &ar, TILEC_UN_LOG2, "log2");
    case BI_SQRT: return math1(ev, &ar, TILEC_UN_SQRT, "sqrt");
    case BI_RSQRT: return math1(ev, &ar, TILEC_UN_RSQRT, "rsqrt");
    case BI_TANH: return math1(ev, &ar, TILEC_UN_TANH, "tanh");
    case BI_SIGMOID: return math1(ev, &ar, TILEC_UN_SIGMOID, "sigmoid");
    case BI_FLOOR: return math1(ev, &ar, TILEC_UN_FLOOR, "floor");
    case BI_CEIL: return math1(ev, &ar, TILEC_UN_CEIL, "ceil");
    case BI_IF_THEN_ELSE: {
        BIND("T.if_then_else", 3, "cond", "t", "f", "span");
        return v_select(ev, a_[0], a_[1], a_[2], at);
    }
    case BI_INFINITY: {
        BIND("T.infinity", 1, "dtype", "span");
        tilec_dtype_t t = v_want_dtype(ev, a_[0], l_[0]);
        if (!tilec_dtype_is_float(t)) ev_fail(ev, l_[0], "T.infinity needs a float dtype, not %s", tilec_dtype_name(t));
        return v_expr(ev, tilec_ir_float(ev->a, INFINITY, t));
    }
    case BI_MAX_VALUE: case BI_MIN_VALUE: {
        BIND(id == BI_MAX_VALUE ? "T.max_value" : "T.min_value", 1, "dtype", "span");
        return v_expr(ev, limit_value(ev, v_want_dtype(ev, a_[0], l_[0]), id == BI_MAX_VALUE));
    }
    case BI_CAST: {
        BIND("T.cast", 2, "value", "dtype", "span");
        return v_cast(ev, a_[0], v_want_dtype(ev, a_[1], l_[1]), at);
    }
    case BI_TCAST: {
        /* TVM's Cast(dtype, value); tilec's older (value, dtype) order is still read */
        BIND("T.Cast", 2, "dtype", "value", "span");
        tilec_dtype_t t;
        if (!v_as_dtype(a_[0], &t) && v_as_dtype(a_[1], &t)) return v_cast(ev, a_[0], t, at);
        return v_cast(ev, a_[1], v_want_dtype(ev, a_[0], l_[0]), at);
    }
    case BI_DTYPE_OF: {
        BIND("T.dtype", 1, "dtype");
        value_t *v = v_new(ev, V_DTYPE);
        v->u.dt = v_want_dtype(ev, a_[0], l_[0]);
        return v;
    }
    case BI_SHIFT_LEFT: case BI_SHIFT_RIGHT: {   /* x << y, x >> y */
        BIND(bi_name(id), 2, "x", "y");
        return v_binop(ev, id == BI_SHIFT_LEFT ? AST_OP_LSHIFT : AST_OP_RSHIFT, a_[0], a_[1], at);
    }
    case BI_DEVICE_ASSERT: {
        /* T.device_assert(cond, msg): a debug check of the device.  False at
         * compile time, it is the diagnostic; a run-time condition is not
         * checked (as a CUDA assert built with NDEBUG): it does not change
         * what the kernel computes when it holds */
        BIND("T.device_assert", 1, "cond", "msg");
        if (!v_is_rt(a_[0]) && !v_truth(ev, a_[0], l_[0]))
            ev_fail(ev, at, "T.device_assert fails at compile time%s%s", a_[1] && a_[1]->kind == V_STR ? ": " : "",
                    a_[1] && a_[1]->kind == V_STR ? a_[1]->u.s.s : "");
        return ev->none;
    }
    case BI_NOOP_HINT:
        /* register-allocation hints of warp-specialized kernels: no effect on results */
        return ev->none;
    case BI_POW: {
        BIND("T.pow", 2, "x", "y");
        return v_binop(ev, AST_OP_POW, a_[0], a_[1], at);
    }
    case BI_FLOORDIV: case BI_FLOORMOD: case BI_TRUNCDIV: {
        BIND(bi_name(id), 2, "a", "b", "span");
        if (id == BI_TRUNCDIV) {
            if (!v_is_rt(a_[0]) && !v_is_rt(a_[1])) {
                int64_t x = v_want_int(ev, a_[0], l_[0], "T.truncdiv operand");
                int64_t y = v_want_int(ev, a_[1], l_[1], "T.truncdiv operand");
                if (y == 0 || (x == INT64_MIN && y == -1)) ev_fail(ev, at, "T.truncdiv by zero or overflow");
                return v_int(ev, x / y);
            }
            return v_binop(ev, '/', a_[0], a_[1], at);
        }
        return v_binop(ev, id == BI_FLOORDIV ? AST_OP_FLOORDIV : '%', a_[0], a_[1], at);
    }
    case BI_LEN: {
        value_t *x;
        if (ar.n != 1 || ar.nkw) ev_fail(ev, at, "len() takes one argument");
        x = ar.v[0];
        if (x->kind == V_SEQ) return v_int(ev, x->u.seq.n);
        if (x->kind == V_DICT) return v_int(ev, x->u.seq.n / 2);
        if (x->kind == V_STR) return v_int(ev, (int64_t)x->u.s.len);
        if (x->kind == V_RANGE || x->kind == V_LOOPITER) return v_int(ev, to_seq(ev, x, 0, at)->u.seq.n);
        if (x->kind == V_BUF) {
            int64_t c;
            if (tilec_ir_is_const_int(x->u.buf->shape[0], &c)) return v_int(ev, c);
            return v_expr(ev, x->u.buf->shape[0]);
        }
        ev_fail(ev, ar.loc[0], "len() of %s is not supported", v_kind_name(x));
    }
    case BI_PMIN: return py_minmax(ev, &ar, 0);
    case BI_PMAX: return py_minmax(ev, &ar, 1);
    case BI_INT: case BI_FLOAT: case BI_BOOL: {
        value_t *x;
        if (ar.nkw || ar.n > 1) ev_fail(ev, at, "%s() takes one argument", bi_name(id));
        if (ar.n == 0) return id == BI_FLOAT ? v_float(ev, 0.0) : id == BI_INT ? v_int(ev, 0) : ev->vfalse;
        x = ar.v[0];
        if (id == BI_BOOL) {
            if (v_is_rt(x)) return v_expr(ev, ex_bool(ev, ex_of(ev, x, at)));
            return v_bool(ev, v_truth(ev, x, at));
        }
        if (v_is_rt(x)) return v_cast(ev, x, id == BI_INT ? TILEC_INT32 : TILEC_FLOAT32, at);
        if (x->kind == V_STR) {
            const char *why;
            value_t *p = v_parse_define(ev, x->u.s.s, &why);
            if (!p || (p->kind != V_INT && p->kind != V_FLOAT))
                ev_fail(ev, at, "cannot convert '%s' to a number%s%s", x->u.s.s, why ? ": " : "", why ? why : "");
            x = p;
        }
        if (!v_is_num(x)) ev_fail(ev, at, "%s() of %s is not supported", bi_name(id), v_kind_name(x));
        if (id == BI_FLOAT) return v_float(ev, x->kind == V_FLOAT ? x->u.f : (double)x->u.i);
        if (x->kind == V_FLOAT) {
            if (!(x->u.f > -9.2e18 && x->u.f < 9.2e18)) ev_fail(ev, at, "cannot convert %g to an integer", x->u.f);
            return v_int(ev, (int64_t)x->u.f);
        }
        return v_int(ev, x->u.i);
    }
    case BI_STR:
        if (ar.n != 1 || ar.nkw) ev_fail(ev, at, "str() takes one argument");
        return v_to_str(ev, ar.v[0], 0, at);
    case BI_TUPLE: case BI_LIST:
        if (ar.nkw || ar.n > 1) ev_fail(ev, at, "%s() takes one argument", bi_name(id));
        if (ar.n == 0) return v_seq(ev, 0, id == BI_LIST);
        return to_seq(ev, ar.v[0], id == BI_LIST, at);
    case BI_ISINSTANCE: {
        value_t *x, *t;
        if (ar.n != 2 || ar.nkw) ev_fail(ev, at, "isinstance() takes two arguments");
        x = ar.v[0];
        t = ar.v[1];
        if (t->kind != V_BUILTIN) ev_fail(ev, ar.loc[1], "isinstance() supports int, float, bool, str, tuple, list");
        switch (t->u.bi.id) {
        case BI_INT: return v_bool(ev, x->kind == V_INT || x->kind == V_BOOL);
        case BI_FLOAT: return v_bool(ev, x->kind == V_FLOAT);
        case BI_BOOL: return v_bool(ev, x->kind == V_BOOL);
        case BI_STR: return v_bool(ev, x->kind == V_STR);
        case BI_TUPLE: return v_bool(ev, x->kind == V_SEQ && !x->u.seq.is_list);
        case BI_LIST: return v_bool(ev, x->kind == V_SEQ && x->u.seq.is_list);
        default: ev_fail(ev, ar.loc[1], "isinstance() supports int, float, bool, str, tuple, list");
        }
    }
    default:
        break;
    }
    ev_fail(ev, at, "unsupported builtin");
}
