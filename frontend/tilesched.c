/*
 * frontend/tilesched.c — T.PersistentTileScheduler read at compile time.
 *
 * TileLang's persistent kernels launch one block per worker (usually one
 * per SM) and let a scheduler object hand each block its tiles:
 *
 *     sched = T.PersistentTileScheduler(m_tiles, n_tiles, swizzle_size=8)
 *     sched.init(block_id)
 *     while sched.valid():
 *         bx, by = sched.m_idx, sched.n_idx     # sched.current_iter: the wave
 *         ...
 *         sched.next_tile()
 *
 * Worker w takes the linear tiles w, w + W, w + 2W, ... (W = num_workers,
 * by default the device's SM count) while they are below the tile count
 * m_tiles * n_tiles, each decoded into (m_idx, n_idx) by TileLang's swizzle
 * (panels of swizzle_size tiles along the slow axis, m fastest when
 * column_major).  With the tile count and W known at compile time the loop
 * has a compile-time bound, so tilec reads it as
 *
 *     for it in T.serial(ceildiv(m_tiles * n_tiles, W)):
 *         if w + it * W < m_tiles * n_tiles:     # sched.valid()
 *             current_iter = it; linear_idx = w + it * W; m_idx, n_idx = decode(linear_idx)
 *             body
 *
 * which is the same loop for every worker id w >= 0 (a block index): valid()
 * only turns false as the linear index grows, so the iterations past a
 * worker's last tile are exactly the ones the guard skips.  The scheduler's
 * state is compile-time bookkeeping (attributes of the object recomputed
 * from the iteration); `sched.next_tile()` is the last statement of such a
 * loop.  Warp roles that each run their own `while sched.valid()` loop are
 * fused by wsroles.c, which binds the iteration through ts_bind.  Clusters
 * (cluster_size > 1) stay outside the subset.
 */
#include "eval_internal.h"

#include <string.h>

static value_t *method(ev_t *ev, value_t *self, int id)
{
    value_t *m = v_new(ev, V_BUILTIN);
    m->u.bi.id = id;
    m->u.bi.self = self;
    return m;
}

static int64_t attr_int(ev_t *ev, value_t *o, const char *name)
{
    int i = ev_env_find(o->u.obj.attrs, name);
    (void)ev;
    return i >= 0 && o->u.obj.attrs->vals[i]->kind == V_INT ? o->u.obj.attrs->vals[i]->u.i : 0;
}

static value_t *attr(value_t *o, const char *name)
{
    int i = ev_env_find(o->u.obj.attrs, name);
    return i >= 0 ? o->u.obj.attrs->vals[i] : NULL;
}

int ts_is(const value_t *v)
{
    return v && v->kind == V_OBJECT && v->u.obj.name && !strcmp(v->u.obj.name, "PersistentTileScheduler") &&
           ev_env_find(v->u.obj.attrs, "@total") >= 0;
}

/* T.PersistentTileScheduler(num_m_tiles, num_n_tiles, num_workers=None, swizzle_size=1,
 * column_major=True, cluster_size=1, stateful=True, name=...); TileLang's newer spelling puts the
 * name first ("sched", m, n, ...). */
value_t *ts_new(ev_t *ev, args_t *ar_)
{
    args_t ar = *ar_;
    ast_loc_t at = ar.at;
    value_t *o, *cls;
    int64_t m, n, W, sw, cl;
    int colmajor;
    env_t *e;
    if (ar.n >= 1 && ar.v[0]->kind == V_STR) {   /* the prefix: a name for the state buffers */
        ar.n--;
        ar.v++;
        ar.loc++;
    }
    {
        BIND("T.PersistentTileScheduler", 2, "num_m_tiles", "num_n_tiles", "num_workers", "swizzle_size",
             "column_major", "cluster_size", "stateful", "name", "prefix");
        ev_require_kernel(ev, at, "T.PersistentTileScheduler");
        if (v_is_rt(a_[0]) || v_is_rt(a_[1]))
            ev_fail(ev, v_is_rt(a_[0]) ? l_[0] : l_[1], "T.PersistentTileScheduler needs compile-time tile counts "
                    "(tilec bounds the persistent loop at compile time)");
        m = v_want_int(ev, a_[0], l_[0], "the number of M tiles");
        n = v_want_int(ev, a_[1], l_[1], "the number of N tiles");
        cl = a_[5] && a_[5]->kind != V_NONE ? v_want_int(ev, a_[5], l_[5], "cluster_size") : 1;
        if (cl != 1)
            ev_fail(ev, l_[5], "T.PersistentTileScheduler(cluster_size=%lld) schedules thread-block clusters; "
                    "clusters are outside the subset tilec supports", (long long)cl);
        if (a_[2] && a_[2]->kind != V_NONE && v_is_rt(a_[2]))
            ev_fail(ev, l_[2], "T.PersistentTileScheduler needs a compile-time num_workers");
        W = a_[2] && a_[2]->kind != V_NONE ? v_want_int(ev, a_[2], l_[2], "num_workers") : TILEC_FRONTEND_NUM_SMS;
        sw = a_[3] && a_[3]->kind != V_NONE ? v_want_int(ev, a_[3], l_[3], "swizzle_size") : 1;
        colmajor = a_[4] && a_[4]->kind != V_NONE ? v_truth(ev, a_[4], l_[4]) : 1;
        if (a_[6] && a_[6]->kind != V_NONE && !v_truth(ev, a_[6], l_[6]))
            ev_fail(ev, l_[6], "T.PersistentTileScheduler(stateful=False) is outside the subset tilec supports; "
                    "use the stateful scheduler's while loop");
        if (m < 1 || n < 1 || m > ((int64_t)1 << 30) / n)
            ev_fail(ev, at, "T.PersistentTileScheduler: %lld x %lld tiles (each count must be 1 or more)",
                    (long long)m, (long long)n);
        if (W < 1 || W > ((int64_t)1 << 30)) ev_fail(ev, l_[2], "num_workers must be 1 or more");
        if (sw < 1) ev_fail(ev, l_[3], "swizzle_size must be 1 or more");
    }
    cls = v_new(ev, V_CLASS);
    cls->u.obj.name = "PersistentTileScheduler";
    cls->u.obj.attrs = ev_env_new(ev, NULL);
    o = v_new(ev, V_OBJECT);
    o->u.obj.name = cls->u.obj.name;
    o->u.obj.cls = cls;
    o->u.obj.attrs = e = ev_env_new(ev, NULL);
    env_set(ev, e, "@total", v_int(ev, m * n));
    env_set(ev, e, "@primary", v_int(ev, colmajor ? m : n));
    env_set(ev, e, "@secondary", v_int(ev, colmajor ? n : m));
    env_set(ev, e, "@colmajor", v_int(ev, colmajor));
    env_set(ev, e, "@looping", v_int(ev, 0));
    env_set(ev, e, "num_workers", v_int(ev, W));
    env_set(ev, e, "swizzle_size", v_int(ev, sw));
    env_set(ev, e, "cluster_size", v_int(ev, 1));
    env_set(ev, e, "init", method(ev, o, BI_TS_INIT));
    env_set(ev, e, "valid", method(ev, o, BI_TS_VALID));
    env_set(ev, e, "next_tile", method(ev, o, BI_TS_NEXT));
    env_set(ev, e, "coord", method(ev, o, BI_TS_COORD));
    return o;
}

/* TileLang's decode of linear tile t: panels of swizzle tiles along the slow axis. */
static void coord(ev_t *ev, value_t *o, value_t *t, value_t **m, value_t **n, ast_loc_t loc)
{
    value_t *p = v_int(ev, attr_int(ev, o, "@primary")), *sec = v_int(ev, attr_int(ev, o, "@secondary"));
    value_t *sw = v_int(ev, attr_int(ev, o, "swizzle_size"));
    value_t *span = v_binop(ev, '*', p, sw, loc);
    value_t *group = v_binop(ev, AST_OP_FLOORDIV, t, span, loc);
    value_t *base = v_binop(ev, '*', group, sw, loc);
    value_t *width = v_minmax(ev, 1, v_int(ev, 1), v_minmax(ev, 0, sw, v_binop(ev, '-', sec, base, loc), loc), loc);
    value_t *in = v_binop(ev, '-', t, v_binop(ev, '*', group, span, loc), loc);
    value_t *fast = v_binop(ev, AST_OP_FLOORDIV, in, width, loc);
    value_t *slow = v_binop(ev, '+', base, v_binop(ev, '%', in, width, loc), loc);
    if (attr_int(ev, o, "@colmajor")) {
        *m = fast;
        *n = slow;
    } else {
        *m = slow;
        *n = fast;
    }
}

static value_t *index_value(ev_t *ev, value_t *v, ast_loc_t loc)
{
    return v_is_rt(v) ? v_expr(ev, ex_index(ev, v, loc)) : v;
}

static value_t *linear_at(ev_t *ev, value_t *o, value_t *it, ast_loc_t loc)
{
    value_t *w = attr(o, "@worker");
    if (!w || w->kind == V_NONE)
        ev_fail(ev, loc, "the persistent tile scheduler is used before sched.init(worker_id)");
    return v_binop(ev, '+', w, v_binop(ev, '*', it, v_int(ev, attr_int(ev, o, "num_workers")), loc), loc);
}

void ts_bind(ev_t *ev, value_t *o, value_t *it, ast_loc_t loc)
{
    value_t *lin = linear_at(ev, o, it, loc), *m, *n;
    coord(ev, o, lin, &m, &n, loc);
    env_set(ev, o->u.obj.attrs, "current_iter", index_value(ev, it, loc));
    env_set(ev, o->u.obj.attrs, "linear_idx", index_value(ev, lin, loc));
    env_set(ev, o->u.obj.attrs, "m_idx", index_value(ev, m, loc));
    env_set(ev, o->u.obj.attrs, "n_idx", index_value(ev, n, loc));
}

/* After a persistent loop the state is each worker's own: not a value tilec knows. */
void ts_unbind(ev_t *ev, value_t *o)
{
    static const char *const st[] = {"current_iter", "linear_idx", "m_idx", "n_idx"};
    int i;
    for (i = 0; i < 4; i++) env_set(ev, o->u.obj.attrs, st[i], v_new(ev, V_DEADLOOP));
    env_set(ev, o->u.obj.attrs, "@looping", v_int(ev, 0));
    env_set(ev, o->u.obj.attrs, "@after", v_int(ev, 1));
}

int64_t ts_waves(ev_t *ev, value_t *o)
{
    int64_t t = attr_int(ev, o, "@total"), W = attr_int(ev, o, "num_workers");
    (void)ev;
    return (t + W - 1) / W;
}

/* sched.valid() at iteration it */
value_t *ts_valid_at(ev_t *ev, value_t *o, value_t *it, ast_loc_t loc)
{
    return v_compare(ev, AST_OP_LT, linear_at(ev, o, it, loc), v_int(ev, attr_int(ev, o, "@total")), loc);
}

value_t *ts_call(ev_t *ev, int id, value_t *o, args_t *ar)
{
    ast_loc_t at = ar->at;
    switch (id) {
    case BI_TS_INIT: {
        value_t *w;
        if (ar->n != 1 || ar->nkw) ev_fail(ev, at, "sched.init takes the worker id (the block index)");
        w = ar->v[0];
        if (!v_is_rt(w) && v_want_int(ev, w, ar->loc[0], "the worker id") < 0)
            ev_fail(ev, ar->loc[0], "the worker id must not be negative");
        if (v_is_rt(w) && !tilec_dtype_is_int(ex_of(ev, w, ar->loc[0])->dtype))
            ev_fail(ev, ar->loc[0], "the worker id must be an integer");
        if (attr_int(ev, o, "@looping"))
            ev_fail(ev, at, "sched.init inside the scheduler's own loop is outside the subset tilec supports");
        env_set(ev, o->u.obj.attrs, "@worker", w);
        env_set(ev, o->u.obj.attrs, "@after", v_int(ev, 0));
        ts_bind(ev, o, v_int(ev, 0), at);
        return ev->none;
    }
    case BI_TS_VALID:
        if (ar->n || ar->nkw) ev_fail(ev, at, "sched.valid() takes no arguments");
        if (attr_int(ev, o, "@after"))
            ev_fail(ev, at, "the persistent tile scheduler after its loop: each worker's state there is its own");
        {
            value_t *it = attr(o, "current_iter");
            if (!it || it->kind == V_DEADLOOP) ev_fail(ev, at, "the persistent tile scheduler is used before sched.init");
            return ts_valid_at(ev, o, it, at);
        }
    case BI_TS_NEXT: {
        value_t *it = attr(o, "current_iter");
        if (ar->n || ar->nkw) ev_fail(ev, at, "sched.next_tile() takes no arguments");
        if (attr_int(ev, o, "@looping"))
            ev_fail(ev, at, "sched.next_tile() inside `while sched.valid():` is its loop's last statement, once; "
                    "tilec reads the loop as one over the scheduler's waves");
        if (!it || it->kind == V_DEADLOOP || attr_int(ev, o, "@after"))
            ev_fail(ev, at, "sched.next_tile() before sched.init or after the scheduler's loop");
        ts_bind(ev, o, v_binop(ev, '+', it, v_int(ev, 1), at), at);
        return ev->none;
    }
    case BI_TS_COORD: {
        value_t *m, *n, *r;
        if (ar->n != 1 || ar->nkw) ev_fail(ev, at, "sched.coord takes a linear tile index");
        coord(ev, o, ar->v[0], &m, &n, at);
        r = v_seq(ev, 2, 0);
        r->u.seq.items[0] = index_value(ev, m, at);
        r->u.seq.items[1] = index_value(ev, n, at);
        return r;
    }
    default:
        break;
    }
    ev_fail(ev, at, "internal error: unknown scheduler method %d", id);
}

/* `NAME.valid()` written as a while condition (a name: looking it up twice changes nothing) */
int ts_is_valid_syntax(const ast_expr_t *c)
{
    return c && c->kind == AST_CALL && c->u.call.func->kind == AST_ATTR && !c->u.call.nargs && !c->u.call.nkw &&
           !strcmp(c->u.call.func->u.attr.name, "valid") && c->u.call.func->u.attr.value->kind == AST_NAME;
}

/* The scheduler of `while sched.valid():`, or NULL when the condition is something else. */
value_t *ts_of_while(ev_t *ev, const ast_stmt_t *s)
{
    value_t *o;
    if (!ts_is_valid_syntax(s->u.wloop.cond)) return NULL;
    o = ev_eval(ev, s->u.wloop.cond->u.call.func->u.attr.value);
    return ts_is(o) ? o : NULL;
}

/* The loop's body without its final sched.next_tile(). */
ast_block_t ts_body(ev_t *ev, const ast_stmt_t *s)
{
    ast_block_t b = s->u.wloop.body;
    const ast_stmt_t *last = b.n ? b.s[b.n - 1] : NULL;
    const ast_expr_t *c = last && last->kind == AST_S_EXPR ? last->u.expr : NULL;
    if (!c || c->kind != AST_CALL || c->u.call.func->kind != AST_ATTR ||
        strcmp(c->u.call.func->u.attr.name, "next_tile") || c->u.call.func->u.attr.value->kind != AST_NAME ||
        strcmp(c->u.call.func->u.attr.value->u.name, s->u.wloop.cond->u.call.func->u.attr.value->u.name))
        ev_fail(ev, last ? last->loc : s->loc, "a `while sched.valid():` loop ends with sched.next_tile() (tilec "
                "reads it as a loop over the scheduler's waves)");
    b.n--;
    return b;
}

/* A loop of scheduler o may start here: after sched.init, not inside or after another of its loops. */
void ts_loop_check(ev_t *ev, value_t *o, ast_loc_t loc)
{
    if (attr_int(ev, o, "@looping")) ev_fail(ev, loc, "a persistent tile loop inside a loop of the same scheduler");
    value_t *it = attr(o, "current_iter");
    if (attr_int(ev, o, "@after") || !attr(o, "@worker"))
        ev_fail(ev, loc, "`while sched.valid():` needs sched.init(worker_id) before it, once per loop");
    if (!it || it->kind != V_INT || it->u.i != 0)
        ev_fail(ev, loc, "a persistent tile loop starts at the worker's first tile; sched.next_tile() between "
                "sched.init and the loop is outside the subset tilec supports");
}

void ts_loop_begin(ev_t *ev, value_t *o, value_t *it, ast_loc_t loc)
{
    ts_bind(ev, o, it, loc);
    env_set(ev, o->u.obj.attrs, "@looping", v_int(ev, 1));
}

/* `while sched.valid(): body; sched.next_tile()` outside warp roles. */
void ts_exec_while(ev_t *ev, ast_stmt_t *s, value_t *o)
{
    ast_block_t body = ts_body(ev, s);
    tilec_ir_stmt_t *loop = ev_stmt(ev, TILEC_ST_FOR, s->loc), *guard, *then = NULL;
    tilec_ir_var_t *var;
    value_t *it;
    ts_loop_check(ev, o, s->loc);
    ev_require_kernel(ev, s->loc, "a persistent tile loop");
    loop->u.loop.kind = TILEC_LOOP_SERIAL;
    loop->u.loop.num_stages = 1;
    loop->u.loop.extent = ex_int32(ev, ts_waves(ev, o));
    var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "wave"), TILEC_INT32, TILEC_VAR_LOOP));
    loop->u.loop.var = var;
    ev_set_loop_extent(ev, var, loop->u.loop.extent);
    it = v_expr(ev, tilec_ir_varref(ev->a, var));
    guard = ev_stmt(ev, TILEC_ST_IF, s->loc);
    guard->u.cond.cond = ex_bool(ev, ex_of(ev, ts_valid_at(ev, o, it, s->loc), s->loc));
    lk_uniform(ev, guard->u.cond.cond, s->loc, "the condition of this persistent tile loop");
    ts_loop_begin(ev, o, it, s->loc);
    ev_exec_guarded_body(ev, &body, &then);
    if (ev->ctl != CTL_NONE) ev_fail(ev, s->loc, "break, continue or return in a persistent tile loop");
    guard->u.cond.then = then;
    loop->u.loop.body = guard;
    ev_emit(ev, loop, s->loc);
    ts_unbind(ev, o);
}
