/*
 * frontend/lockstep.c — per-thread code whose threads meet: warp shuffles
 * and shared-memory exchanges between the threads of a block.
 *
 * Per-thread code that needs no other thread is one parallel loop over the
 * block's threads (threads.c).  When it reads what other threads computed
 * (T.tvm_warp_shuffle and its _up/_down forms, T.sync_threads, a shared
 * buffer written by one thread and read by another), TileLang's meaning is
 * the threads running in lock step, and tilec gives it a block-level form
 * with the same results: every statement runs for all threads before the
 * next one starts.  A statement that needs no other thread is a parallel
 * loop over the threads (`for tid in T.Parallel(threads)`, one loop
 * variable shared by all of them); a loop, `if` or macro call around
 * cross-thread code stays outside, and its bound or condition must be the
 * same for every thread (a diagnostic otherwise).  What a thread keeps from
 * one statement to the next lives in block memory indexed by the thread:
 * each T.alloc_local / T.alloc_var buffer the code touches becomes a shared
 * buffer with a leading thread dimension, and a per-thread scalar temporary
 * becomes one element per thread.  A shuffle then reads its value at the
 * source thread: the value's expression with the thread index replaced by
 * the source lane (CUDA's __shfl_sync within segments of `width` lanes;
 * _down and _up keep the thread's own value past the segment's edge).
 *
 * T.tvm_thread_allreduce (inside `with T.attr(T.comm_reducer(f, [identity]),
 * "reduce_scope", ...)`) combines the value over the threads that differ only
 * in the named thread dimensions, in thread order.  Per-thread control flow
 * around cross-thread code stays a diagnostic.
 */
#include "eval_internal.h"

#include <string.h>

/* ---- what needs other threads --------------------------------------------- */

static value_t *lookup_quiet(ev_t *ev, const char *name)
{
    env_t *e;
    for (e = ev->env; e; e = e->parent) {
        int i = ev_env_find(e, name);
        if (i >= 0) return e->vals[i];
    }
    return NULL;
}

static int comm_b(ev_t *ev, const ast_block_t *b, int depth, int in_macro);

static int comm_e(ev_t *ev, const ast_expr_t *e, int depth, int in_macro)
{
    int i;
    if (!e || depth > 64) return e != NULL;
    switch (e->kind) {
    case AST_ATTR:
        if (!strcmp(e->u.attr.name, "tvm_warp_shuffle") || !strcmp(e->u.attr.name, "tvm_warp_shuffle_down") ||
            !strcmp(e->u.attr.name, "tvm_warp_shuffle_up") || !strcmp(e->u.attr.name, "sync_threads") ||
            !strcmp(e->u.attr.name, "tvm_thread_allreduce"))
            return 1;
        return comm_e(ev, e->u.attr.value, depth + 1, in_macro);
    case AST_BINOP: case AST_BOOLOP:
        return comm_e(ev, e->u.bin.a, depth + 1, in_macro) || comm_e(ev, e->u.bin.b, depth + 1, in_macro);
    case AST_UNARY: return comm_e(ev, e->u.un.a, depth + 1, in_macro);
    case AST_COMPARE:
        for (i = 0; i < e->u.cmp.n; i++)
            if (comm_e(ev, e->u.cmp.operands[i], depth + 1, in_macro)) return 1;
        return 0;
    case AST_IFEXP:
        return comm_e(ev, e->u.ifexp.cond, depth + 1, in_macro) || comm_e(ev, e->u.ifexp.a, depth + 1, in_macro) ||
               comm_e(ev, e->u.ifexp.b, depth + 1, in_macro);
    case AST_CALL: {
        value_t *f = e->u.call.func->kind == AST_NAME ? lookup_quiet(ev, e->u.call.func->u.name) : NULL;
        if (comm_e(ev, e->u.call.func, depth + 1, in_macro)) return 1;
        for (i = 0; i < e->u.call.nargs; i++)
            if (comm_e(ev, e->u.call.args[i], depth + 1, in_macro)) return 1;
        for (i = 0; i < e->u.call.nkw; i++)
            if (comm_e(ev, e->u.call.kw[i].value, depth + 1, in_macro)) return 1;
        /* a macro or helper: its body, where a subscript of a parameter may be shared memory */
        if (f && f->kind == V_FUNC && f->u.fn->def && in_macro < 3)   /* 3 levels: bounded on any input */
            return comm_b(ev, &f->u.fn->def->u.def.body, depth + 1, in_macro + 1);
        return 0;
    }
    case AST_SUBSCRIPT: {
        const ast_expr_t *v = e->u.sub.value;
        if (v->kind == AST_NAME) {
            value_t *b = lookup_quiet(ev, v->u.name);
            if (b && b->kind == V_BUF && (b->u.buf->scope == TILEC_SCOPE_SHARED || b->u.buf->scope == TILEC_SCOPE_FRAGMENT))
                return 1;
            if (in_macro && (!b || b->kind != V_BUF)) return 1;   /* a parameter: maybe shared */
        }
        if (comm_e(ev, v, depth + 1, in_macro)) return 1;
        for (i = 0; i < e->u.sub.n; i++)
            if (comm_e(ev, e->u.sub.items[i], depth + 1, in_macro)) return 1;
        return 0;
    }
    case AST_SLICE:
        return comm_e(ev, e->u.slice.lo, depth + 1, in_macro) || comm_e(ev, e->u.slice.hi, depth + 1, in_macro) ||
               comm_e(ev, e->u.slice.step, depth + 1, in_macro);
    case AST_TUPLE: case AST_LIST: case AST_DICT:
        for (i = 0; i < e->u.seq.n; i++)
            if (comm_e(ev, e->u.seq.items[i], depth + 1, in_macro)) return 1;
        return 0;
    case AST_STARRED: return comm_e(ev, e->u.star.value, depth + 1, in_macro);
    default: return 0;
    }
}

static int comm_s(ev_t *ev, const ast_stmt_t *s, int depth, int in_macro)
{
    int i;
    switch (s->kind) {
    case AST_S_EXPR: return comm_e(ev, s->u.expr, depth, in_macro);
    case AST_S_ASSIGN:
        for (i = 0; i < s->u.assign.ntargets; i++)
            if (comm_e(ev, s->u.assign.targets[i], depth, in_macro)) return 1;
        return comm_e(ev, s->u.assign.value, depth, in_macro);
    case AST_S_AUGASSIGN: return comm_e(ev, s->u.aug.target, depth, in_macro) || comm_e(ev, s->u.aug.value, depth, in_macro);
    case AST_S_ANNASSIGN: return comm_e(ev, s->u.ann.target, depth, in_macro) || comm_e(ev, s->u.ann.value, depth, in_macro);
    case AST_S_FOR: return comm_e(ev, s->u.loop.iter, depth, in_macro) || comm_b(ev, &s->u.loop.body, depth + 1, in_macro);
    case AST_S_WHILE: return comm_e(ev, s->u.wloop.cond, depth, in_macro) || comm_b(ev, &s->u.wloop.body, depth + 1, in_macro);
    case AST_S_IF:
        return comm_e(ev, s->u.cond.cond, depth, in_macro) || comm_b(ev, &s->u.cond.body, depth + 1, in_macro) ||
               comm_b(ev, &s->u.cond.orelse, depth + 1, in_macro);
    case AST_S_WITH: return comm_e(ev, s->u.with.ctx, depth, in_macro) || comm_b(ev, &s->u.with.body, depth + 1, in_macro);
    case AST_S_RETURN: return comm_e(ev, s->u.ret.value, depth, in_macro);
    default: return 0;
    }
}

static int comm_b(ev_t *ev, const ast_block_t *b, int depth, int in_macro)
{
    int i;
    if (depth > 64) return 1;
    for (i = 0; i < b->n; i++)
        if (comm_s(ev, b->s[i], depth, in_macro)) return 1;
    return 0;
}

int lk_needed(ev_t *ev, const ast_block_t *b, int first)
{
    int i;
    for (i = first; i < b->n; i++)
        if (comm_s(ev, b->s[i], 0, 0)) return 1;
    return 0;
}

/* ---- per-thread memory ------------------------------------------------------ */

static tilec_ir_expr_t *tid(ev_t *ev) { return ev_chk(ev, tilec_ir_varref(ev->a, ev->lk.tv)); }

static tilec_ir_expr_t *ibin(ev_t *ev, tilec_binop_t op, tilec_ir_expr_t *a, tilec_ir_expr_t *b)
{
    return ev_chk(ev, tilec_ir_binary(ev->a, op, a, b));
}

static int is_expanded(ev_t *ev, const tilec_ir_buffer_t *b)
{
    int i;
    for (i = 0; i < ev->lk.nmap; i++)
        if (ev->lk.map[i].x == b) return 1;
    return 0;
}

static tilec_ir_buffer_t *expand(ev_t *ev, tilec_ir_buffer_t *b, const char *name, tilec_dtype_t t, int nd,
                                 tilec_ir_expr_t *const *shape)
{
    tilec_ir_expr_t *dims[TILEC_IR_MAX_DIMS];
    tilec_ir_buffer_t *x;
    int i;
    if (nd + 1 > TILEC_IR_MAX_DIMS)
        ev_fail(ev, ev->cur_loc, "per-thread buffer '%s' has too many dimensions for lock-step code", name);
    dims[0] = ex_int32(ev, ev->lk.threads);
    for (i = 0; i < nd; i++) dims[i + 1] = shape[i];
    x = ev_chk(ev, tilec_ir_buffer_add(ev->a, ev->k, ev_unique_buf(ev, name), TILEC_SCOPE_SHARED, t, nd + 1, dims));
    if (ev->lk.nmap == ev->lk.cap) {
        int cap = ev->lk.cap ? 2 * ev->lk.cap : 8;
        struct lkmap *nm = ev_alloc(ev, sizeof *nm * (size_t)cap);
        if (ev->lk.nmap) memcpy(nm, ev->lk.map, sizeof *nm * (size_t)ev->lk.nmap);
        ev->lk.map = nm;
        ev->lk.cap = cap;
    }
    ev->lk.map[ev->lk.nmap].b = b;
    ev->lk.map[ev->lk.nmap++].x = x;
    return x;
}

tilec_ir_expr_t *lk_load(ev_t *ev, tilec_ir_buffer_t *b, tilec_ir_expr_t **idx)
{
    tilec_ir_buffer_t *x = NULL;
    tilec_ir_expr_t **nidx;
    int i;
    if (!ev->lk.on || (b->scope != TILEC_SCOPE_LOCAL && b->scope != TILEC_SCOPE_VAR))
        return ev_chk(ev, tilec_ir_load(ev->a, b, idx));
    for (i = 0; i < ev->lk.nmap; i++)
        if (ev->lk.map[i].b == b) x = ev->lk.map[i].x;
    if (!x) x = expand(ev, b, b->name, b->dtype, b->ndim, b->shape);
    nidx = ev_alloc(ev, sizeof *nidx * (size_t)x->ndim);
    nidx[0] = tid(ev);
    for (i = 0; i < b->ndim; i++) nidx[i + 1] = idx[i];
    return ev_chk(ev, tilec_ir_load(ev->a, x, nidx));
}

/* e reads the thread index or per-thread memory. */
static int varies(ev_t *ev, const tilec_ir_expr_t *e, int depth)
{
    int i;
    if (!e || depth > EV_MAX_IR_DEPTH) return 0;
    switch (e->kind) {
    case TILEC_EX_VAR: return e->u.var == ev->lk.tv || (e->u.var->kind == TILEC_VAR_LET && e->u.var->id >= ev->lk.nvars0);
    case TILEC_EX_LOAD:
        if (is_expanded(ev, e->u.load.buf)) return 1;
        for (i = 0; i < e->u.load.buf->ndim; i++)
            if (varies(ev, e->u.load.idx[i], depth + 1)) return 1;
        return 0;
    case TILEC_EX_UNARY: return varies(ev, e->u.un.a, depth + 1);
    case TILEC_EX_BINARY: return varies(ev, e->u.bin.a, depth + 1) || varies(ev, e->u.bin.b, depth + 1);
    case TILEC_EX_SELECT:
        return varies(ev, e->u.sel.cond, depth + 1) || varies(ev, e->u.sel.a, depth + 1) || varies(ev, e->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return varies(ev, e->u.cast.a, depth + 1);
    default: return 0;
    }
}

void lk_uniform(ev_t *ev, const tilec_ir_expr_t *e, ast_loc_t loc, const char *what)
{
    if (ev->lk.on && !ev->lk.inloop && varies(ev, e, 0))
        ev_fail(ev, loc, "%s around code that exchanges values between threads differs between threads; lock-step "
                "per-thread code needs the same loop bounds and conditions in every thread there", what);
}

/* ---- the statements --------------------------------------------------------- */

static void open_loop(ev_t *ev, ast_loc_t loc)
{
    tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_FOR, loc);
    st->u.loop.kind = TILEC_LOOP_PARALLEL;
    st->u.loop.num_stages = 1;
    st->u.loop.extent = ex_int32(ev, ev->lk.threads);
    st->u.loop.var = ev->lk.tv;
    ev->lk.loop = st;
    ev->lk.saved_tail = ev->tail;
    ev->tail = &st->u.loop.body;
    ev->rt_depth++;
    ev->in_rt_loop++;
    ev->thread_wrap = 1;
    ev->thread_vars[0] = ev->lk.tv;
    ev->lk.inloop = 1;
}

static void close_loop(ev_t *ev, ast_loc_t loc)
{
    ev->lk.inloop = 0;
    ev->thread_wrap = 0;
    ev->in_rt_loop--;
    ev->rt_depth--;
    ev->tail = ev->lk.saved_tail;
    if (ev->lk.loop->u.loop.body) ev_emit(ev, ev->lk.loop, loc);
    ev->lk.loop = NULL;
}

static void leaf(ev_t *ev, ast_stmt_t *s)
{
    int saved = ev->lk.nvars0;
    ev->lk.nvars0 = ev->k->nvars;   /* temporaries made in this loop are this thread's */
    open_loop(ev, s->loc);
    ev_exec_stmt(ev, s);
    close_loop(ev, s->loc);
    ev->lk.nvars0 = saved;
}

/* `name = value` between lock-step statements: a uniform value stays a
 * scalar temporary, a per-thread one gets an element per thread. */
static int scalar_assign(ev_t *ev, ast_stmt_t *s)
{
    ast_expr_t *t;
    value_t *cur, *v;
    tilec_ir_expr_t *e, *idx[1];
    tilec_ir_buffer_t *x;
    tilec_ir_stmt_t *st;
    if (s->kind != AST_S_ASSIGN || s->u.assign.ntargets != 1 || s->u.assign.targets[0]->kind != AST_NAME) return 0;
    t = s->u.assign.targets[0];
    cur = lookup_quiet(ev, t->u.name);
    if (cur && cur->kind == V_BUF) return 0;   /* a store into a T.alloc_var: per-thread code */
    ev->name_hint = t->u.name;
    v = ev_eval(ev, s->u.assign.value);
    if (!v_is_rt(v) || v->kind == V_SYM || !varies(ev, ex_of(ev, v, s->loc), 0)) {
        ev_assign_to(ev, t, v, s->loc);
        return 1;
    }
    e = ex_of(ev, v, s->loc);
    x = expand(ev, NULL, t->u.name, e->dtype, 0, NULL);
    idx[0] = tid(ev);
    open_loop(ev, s->loc);
    st = ev_stmt(ev, TILEC_ST_STORE, s->loc);
    st->u.store.buf = x;
    st->u.store.idx = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *st->u.store.idx));
    st->u.store.idx[0] = idx[0];
    st->u.store.value = e;
    ev_emit(ev, st, s->loc);
    close_loop(ev, s->loc);
    env_set(ev, ev->env, t->u.name, v_expr(ev, ev_chk(ev, tilec_ir_load(ev->a, x, idx))));
    return 1;
}

void lk_stmt(ev_t *ev, ast_stmt_t *s)
{
    if (th_is_binding(s)) {   /* the index again (a macro): this thread's */
        th_rebind(ev, s);
        return;
    }
    if (s->kind == AST_S_PASS || (s->kind == AST_S_EXPR && s->u.expr->kind == AST_STR) || s->kind == AST_S_DEF)
        goto plain;
    if (comm_s(ev, s, 0, 0)) {
        if (s->kind == AST_S_FOR || s->kind == AST_S_IF || s->kind == AST_S_WHILE || s->kind == AST_S_WITH ||
            (s->kind == AST_S_EXPR && s->u.expr->kind == AST_CALL && s->u.expr->u.call.func->kind == AST_NAME))
            goto plain;
        if (s->kind == AST_S_EXPR && s->u.expr->kind == AST_CALL && s->u.expr->u.call.func->kind == AST_ATTR &&
            !strcmp(s->u.expr->u.call.func->u.attr.name, "sync_threads"))
            goto plain;   /* a barrier: between two lock-step statements already */   /* around cross-thread code: the statements inside are lock-step again */
        leaf(ev, s);
        return;
    }
    if (scalar_assign(ev, s)) return;
    if (s->kind == AST_S_ASSIGN && s->u.assign.value->kind == AST_CALL && s->u.assign.value->u.call.func->kind == AST_ATTR &&
        !strncmp(s->u.assign.value->u.call.func->u.attr.name, "alloc_", 6))
        goto plain;   /* an allocation: kernel-level */
    leaf(ev, s);
    return;
plain:
    ev->lk.pass = 1;
    ev_exec_stmt(ev, s);
}

void lk_run(ev_t *ev, const ast_block_t *b, int i)
{
    ast_loc_t loc = b->s[i]->loc;
    const char *names[3] = {NULL, NULL, NULL};
    value_t *bound[3] = {NULL, NULL, NULL};
    tilec_ir_expr_t *t;
    int d, n = 0, x = ev->k->threads[0], y = ev->k->threads[1];
    ev->lk.tv = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "tid"), TILEC_INT32, TILEC_VAR_LOOP));
    ev->lk.threads = x * y * ev->k->threads[2];
    ev_set_loop_extent(ev, ev->lk.tv, ex_int32(ev, ev->lk.threads));
    ev->lk.nvars0 = INT32_MAX;   /* between statements no temporary is one thread's */
    /* threadIdx.x, .y, .z of the linear index tid = x + X (y + Y z) */
    t = tid(ev);
    ev->lk.dim[0] = ev->k->threads[0] > 1 ? ibin(ev, TILEC_BIN_FLOORMOD, t, ex_int32(ev, x)) : ex_int32(ev, 0);
    if (x * y * ev->k->threads[2] == x) ev->lk.dim[0] = t;
    ev->lk.dim[1] = y > 1 ? ibin(ev, TILEC_BIN_FLOORMOD, ibin(ev, TILEC_BIN_FLOORDIV, t, ex_int32(ev, x)), ex_int32(ev, y))
                          : ex_int32(ev, 0);
    ev->lk.dim[2] = ev->k->threads[2] > 1 ? ibin(ev, TILEC_BIN_FLOORDIV, t, ex_int32(ev, x * y)) : ex_int32(ev, 0);
    ev->lk.on = 1;
    for (; i < b->n && th_is_binding(b->s[i]) && n < 3; i++, n++) {
        d = th_rebind(ev, b->s[i]);
        names[n] = b->s[i]->u.assign.targets[0]->u.name;
        bound[n] = env_get(ev->env, names[n]);
    }
    for (; i < b->n && ev->ctl == CTL_NONE; i++) ev_exec_stmt(ev, b->s[i]);
    ev->lk.on = 0;
    for (d = 0; d < n; d++)
        if (env_get(ev->env, names[d]) == bound[d]) env_set(ev, ev->env, names[d], v_new(ev, V_DEADLOOP));
    (void)loc;
}

/* ---- warp shuffles ------------------------------------------------------------ */

/* e with the thread index replaced by r (a copy of what changes). */
static tilec_ir_expr_t *subst(ev_t *ev, tilec_ir_expr_t *e, tilec_ir_expr_t *r, int depth)
{
    tilec_ir_expr_t *n;
    int i;
    if (!e || depth > EV_MAX_IR_DEPTH) return e;
    switch (e->kind) {
    case TILEC_EX_VAR:
        if (e->u.var == ev->lk.tv) return r;
        if (e->u.var->kind == TILEC_VAR_LET && e->u.var->id >= ev->lk.nvars0)
            ev_fail(ev, ev->cur_loc, "a warp shuffle of '%s', a temporary of this statement: store it in a "
                    "T.alloc_local buffer first", e->u.var->name);
        return e;
    case TILEC_EX_LOAD: {
        tilec_ir_expr_t **idx = ev_alloc(ev, sizeof *idx * (size_t)e->u.load.buf->ndim);
        for (i = 0; i < e->u.load.buf->ndim; i++) idx[i] = subst(ev, e->u.load.idx[i], r, depth + 1);
        return ev_chk(ev, tilec_ir_load(ev->a, e->u.load.buf, idx));
    }
    case TILEC_EX_UNARY:
        n = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *n));
        *n = *e;
        n->u.un.a = subst(ev, e->u.un.a, r, depth + 1);
        return n;
    case TILEC_EX_BINARY:
        n = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *n));
        *n = *e;
        n->u.bin.a = subst(ev, e->u.bin.a, r, depth + 1);
        n->u.bin.b = subst(ev, e->u.bin.b, r, depth + 1);
        return n;
    case TILEC_EX_SELECT:
        n = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *n));
        *n = *e;
        n->u.sel.cond = subst(ev, e->u.sel.cond, r, depth + 1);
        n->u.sel.a = subst(ev, e->u.sel.a, r, depth + 1);
        n->u.sel.b = subst(ev, e->u.sel.b, r, depth + 1);
        return n;
    case TILEC_EX_CAST:
        n = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *n));
        *n = *e;
        n->u.cast.a = subst(ev, e->u.cast.a, r, depth + 1);
        return n;
    default: return e;
    }
}

/* `for tid in T.Parallel(threads): x[tid] = val` just before the running statement's own loop, so that
 * every thread's val is read before the statement writes anything; x, a new per-thread element. */
static tilec_ir_buffer_t *stage(ev_t *ev, tilec_ir_expr_t *val, const char *name, ast_loc_t loc)
{
    tilec_ir_buffer_t *x = expand(ev, NULL, name, val->dtype, 0, NULL);
    tilec_ir_stmt_t *loop = ev_stmt(ev, TILEC_ST_FOR, loc), *st = ev_stmt(ev, TILEC_ST_STORE, loc);
    tilec_ir_stmt_t **cur = ev->tail;
    st->u.store.buf = x;
    st->u.store.idx = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *st->u.store.idx));
    st->u.store.idx[0] = tid(ev);
    st->u.store.value = val;
    loop->u.loop.kind = TILEC_LOOP_PARALLEL;
    loop->u.loop.num_stages = 1;
    loop->u.loop.extent = ex_int32(ev, ev->lk.threads);
    loop->u.loop.var = ev->lk.tv;
    loop->u.loop.body = st;
    ev->tail = ev->lk.saved_tail;
    ev_emit(ev, loop, loc);
    ev->lk.saved_tail = ev->tail;
    ev->tail = cur;
    return x;
}

/* kind 0: T.tvm_warp_shuffle(mask, value, lane, width, warp_size); 1: _down(mask, value, delta, ...); 2: _up */
value_t *lk_shuffle(ev_t *ev, int kind, args_t *ar, const char *what)
{
    tilec_ir_expr_t *v, *t, *lane, *seg, *src, *w;
    int64_t width;
    if (!ev->lk.on || !ev->lk.inloop)
        ev_fail(ev, ar->at, "%s outside per-thread code: a warp shuffle exchanges values between the threads after a "
                "thread index (tx = T.get_thread_binding())", what);
    if (ar->n < 4 || ar->n > 5 || ar->nkw)
        ev_fail(ev, ar->at, "%s takes (mask, value, %s, width[, warp_size])", what, kind ? "delta" : "lane");
    width = v_want_int(ev, ar->v[3], ar->loc[3], "a shuffle width");
    if (width < 1 || width > 64 || (width & (width - 1)))
        ev_fail(ev, ar->loc[3], "%s: the width must be a power of two up to 64, got %lld", what, (long long)width);
    if (ar->n == 5) {
        int64_t ws = v_want_int(ev, ar->v[4], ar->loc[4], "a warp size");
        if (ws < width) ev_fail(ev, ar->loc[4], "%s: the warp size %lld is below the width %lld", what, (long long)ws,
                                (long long)width);
    }
    v = ex_of(ev, ar->v[1], ar->loc[1]);
    t = tid(ev);
    lane = ex_index(ev, ar->v[2], ar->loc[2]);
    w = ex_int32(ev, width);
    seg = ibin(ev, TILEC_BIN_SUB, t, ibin(ev, TILEC_BIN_FLOORMOD, t, w));   /* first thread of this segment */
    if (kind == 0) {
        src = ibin(ev, TILEC_BIN_ADD, seg, ibin(ev, TILEC_BIN_FLOORMOD, lane, w));
    } else {
        tilec_ir_expr_t *pos = ibin(ev, TILEC_BIN_FLOORMOD, t, w);
        tilec_ir_expr_t *in = kind == 1 ? ibin(ev, TILEC_BIN_LT, ibin(ev, TILEC_BIN_ADD, pos, lane), w)
                                        : ibin(ev, TILEC_BIN_GE, pos, lane);
        tilec_ir_expr_t *moved = kind == 1 ? ibin(ev, TILEC_BIN_ADD, t, lane) : ibin(ev, TILEC_BIN_SUB, t, lane);
        src = ev_chk(ev, tilec_ir_select(ev->a, in, moved, t));
    }
    /* a thread past the block's end (a segment wider than the block) reads its own value */
    src = ev_chk(ev, tilec_ir_select(ev->a, ibin(ev, TILEC_BIN_LT, src, ex_int32(ev, ev->lk.threads)), src, t));
    /* every thread reads before any writes (the statement may overwrite what it shuffles) */
    {
        tilec_ir_expr_t *idx[1];
        idx[0] = t;
        return v_expr(ev, ev_chk(ev, tilec_ir_load(ev->a, stage(ev, subst(ev, v, src, 0), "shfl", ar->at), idx)));
    }
}

/* ---- reductions across threads -------------------------------------------------- */

/* T.tvm_thread_allreduce(1, value, True, dst, t1, ...): dst = the reducer's f folded, from its identity, over
 * value at every thread that differs from this one only in the dimensions t1, ... name (in thread order). */
value_t *lk_allreduce(ev_t *ev, args_t *ar)
{
    tilec_ir_expr_t *v, *dst, *idx[1], *src, *acc, *rest;
    tilec_ir_buffer_t *x;
    tilec_ir_stmt_t *init, *loop, *st;
    tilec_ir_var_t *r;
    value_t *fa[2], *fv;
    int i, d, red[3] = {0, 0, 0}, nred = 1, stride[3];
    if (!ev->lk.on || !ev->lk.inloop)
        ev_fail(ev, ar->at, "T.tvm_thread_allreduce outside per-thread code: it combines a value over the threads "
                "after a thread index");
    if (!ev->lk.reducer)
        ev_fail(ev, ar->at, "T.tvm_thread_allreduce needs its combiner: put it inside `with T.attr(T.comm_reducer("
                "lambda x, y: ..., [identity]), \"reduce_scope\", ...)`");
    if (ar->n < 5) ev_fail(ev, ar->at, "T.tvm_thread_allreduce takes (1, value, condition, destination, thread indices...)");
    if (v_want_int(ev, ar->v[0], ar->loc[0], "a reduction count") != 1)
        ev_fail(ev, ar->loc[0], "T.tvm_thread_allreduce of more than one value is outside the subset");
    if (!v_is_num(ar->v[2]) || !v_truth(ev, ar->v[2], ar->loc[2]))
        ev_fail(ev, ar->loc[2], "T.tvm_thread_allreduce: only the condition True is supported");
    v = ex_of(ev, ar->v[1], ar->loc[1]);
    dst = ar->v[3]->kind == V_EXPR ? ar->v[3]->u.ex : NULL;
    if (!dst || dst->kind != TILEC_EX_LOAD || !is_expanded(ev, dst->u.load.buf))
        ev_fail(ev, ar->loc[3], "T.tvm_thread_allreduce: the destination must be an element of a T.alloc_local buffer");
    for (i = 4; i < ar->n; i++) {
        for (d = 0; d < 3; d++)
            if (ar->v[i]->kind == V_EXPR && ar->v[i]->u.ex == ev->lk.dim[d]) break;
        if (d == 3) ev_fail(ev, ar->loc[i], "T.tvm_thread_allreduce reduces over thread indices (the names bound by "
                            "T.get_thread_binding)");
        red[d] = 1;
    }
    stride[0] = 1;
    stride[1] = ev->k->threads[0];
    stride[2] = ev->k->threads[0] * ev->k->threads[1];
    for (d = 0; d < 3; d++)
        if (red[d]) nred *= ev->k->threads[d];
    x = stage(ev, subst(ev, v, tid(ev), 0), "red", ar->at);   /* (subst: no temporary of this statement) */
    /* dst = identity; for r in serial(nred): dst = f(dst, x[src(r)]) */
    init = ev_stmt(ev, TILEC_ST_STORE, ar->at);
    init->u.store.buf = dst->u.load.buf;
    init->u.store.idx = dst->u.load.idx;
    init->u.store.value = ex_as(ev, ev->lk.reducer->u.seq.items[1], dst->dtype, ar->at);
    ev_emit(ev, init, ar->at);
    r = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "lane"), TILEC_INT32, TILEC_VAR_LOOP));
    ev_set_loop_extent(ev, r, ex_int32(ev, nred));
    src = tid(ev);
    rest = ev_chk(ev, tilec_ir_varref(ev->a, r));
    for (d = 0; d < 3; d++) {
        tilec_ir_expr_t *digit;
        if (!red[d]) continue;
        src = ibin(ev, TILEC_BIN_SUB, src, ibin(ev, TILEC_BIN_MUL, ev->lk.dim[d], ex_int32(ev, stride[d])));
        digit = ibin(ev, TILEC_BIN_FLOORMOD, rest, ex_int32(ev, ev->k->threads[d]));
        rest = ibin(ev, TILEC_BIN_FLOORDIV, rest, ex_int32(ev, ev->k->threads[d]));
        src = ibin(ev, TILEC_BIN_ADD, src, ibin(ev, TILEC_BIN_MUL, digit, ex_int32(ev, stride[d])));
    }
    idx[0] = src;
    acc = ev_chk(ev, tilec_ir_load(ev->a, dst->u.load.buf, dst->u.load.idx));
    fa[0] = v_expr(ev, acc);
    fa[1] = v_expr(ev, ev_chk(ev, tilec_ir_load(ev->a, x, idx)));
    fv = ev_call_func(ev, ev->lk.reducer->u.seq.items[0]->u.fn, 2, fa, 0, NULL, NULL, ar->at);
    st = ev_stmt(ev, TILEC_ST_STORE, ar->at);
    st->u.store.buf = dst->u.load.buf;
    st->u.store.idx = dst->u.load.idx;
    st->u.store.value = ex_as(ev, fv, dst->dtype, ar->at);
    loop = ev_stmt(ev, TILEC_ST_FOR, ar->at);
    loop->u.loop.kind = TILEC_LOOP_SERIAL;
    loop->u.loop.num_stages = 1;
    loop->u.loop.extent = ex_int32(ev, nred);
    loop->u.loop.var = r;
    loop->u.loop.body = st;
    ev_emit(ev, loop, ar->at);
    return ev->none;
}

/* T.clear / T.fill of a whole T.alloc_local / T.alloc_var buffer in per-thread code: this thread's elements. */
int lk_fill_local(ev_t *ev, value_t *dstv, value_t *val, ast_loc_t loc)
{
    tilec_ir_buffer_t *b;
    int64_t n = 1, c, k;
    int i;
    if (!ev->thread_wrap || !dstv || dstv->kind != V_BUF) return 0;
    b = dstv->u.buf;
    if ((b->scope != TILEC_SCOPE_LOCAL && b->scope != TILEC_SCOPE_VAR) || view_is(b)) return 0;
    for (i = 0; i < b->ndim; i++) {
        if (!tilec_ir_is_const_int(b->shape[i], &c)) return 0;
        n *= c;
    }
    if (n > 4096) return 0;
    for (k = 0; k < n; k++) {
        tilec_ir_expr_t *idx[TILEC_IR_MAX_DIMS], *ld;
        tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_STORE, loc);
        int64_t rem = k;
        for (i = b->ndim - 1; i >= 0; i--) {
            tilec_ir_is_const_int(b->shape[i], &c);
            idx[i] = ex_int32(ev, rem % c);
            rem /= c;
        }
        ld = lk_load(ev, b, idx);
        st->u.store.buf = ld->u.load.buf;
        st->u.store.idx = ld->u.load.idx;
        st->u.store.value = ex_as(ev, val, b->dtype, loc);
        ev_emit(ev, st, loc);
    }
    return 1;
}
