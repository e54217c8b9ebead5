/*
 * frontend/threads.c — per-thread code after a thread index.
 *
 * tilec kernels have block-level semantics; TileLang also lets a kernel
 * name its thread index (`tx = T.get_thread_binding()`, `tx =
 * T.thread_binding(0, threads, thread="threadIdx.x")`) and write what each
 * thread does.  Per-thread code that ends with the block (no barrier, no
 * block-collective tile operation after the index) is exactly a parallel
 * loop over the block's threads: the statements after the binding run once
 * per thread index, as `for tx in T.Parallel(threads)` (one loop per thread
 * dimension with more than one thread), which the interpreter and every
 * backend already run.  Per-thread scratch (T.alloc_local, T.alloc_var,
 * scalar temporaries) lives in one iteration.  What needs threads to meet
 * again (T.sync_threads, tile operations, T.Parallel, shuffles) is a
 * diagnostic that names it.  A block of one thread is the exception: its
 * one thread's code is the block's code, so everything block-level code
 * may do is allowed there, with every thread index 0.
 */
#include "eval_internal.h"

#include <string.h>

/* The call of `NAME = T.get_thread_binding(...)` / `T.thread_binding(...)`,
 * or NULL. */
static ast_expr_t *binding_call(const ast_stmt_t *s)
{
    ast_expr_t *c;
    if (s->kind != AST_S_ASSIGN || s->u.assign.ntargets != 1 || s->u.assign.targets[0]->kind != AST_NAME) return NULL;
    c = s->u.assign.value;
    if (c->kind != AST_CALL || c->u.call.func->kind != AST_ATTR) return NULL;
    if (strcmp(c->u.call.func->u.attr.name, "get_thread_binding") && strcmp(c->u.call.func->u.attr.name, "thread_binding"))
        return NULL;
    return c;
}

int th_is_binding(const ast_stmt_t *s)
{
    return binding_call(s) != NULL;
}

/* The thread dimension (0..2) and the start a binding call names. */
static int binding_dim(ev_t *ev, ast_expr_t *c, value_t **lo)
{
    args_t ar;
    int dim = 0;
    *lo = NULL;
    ev_eval_args(ev, c, &ar);
    if (!strcmp(c->u.call.func->u.attr.name, "get_thread_binding")) {
        BIND("T.get_thread_binding", 0, "dim");
        if (a_[0]) dim = (int)v_want_int(ev, a_[0], l_[0], "a thread dimension");
    } else {
        BIND("T.thread_binding", 2, "start", "stop", "thread", "annotations");
        int64_t b = v_want_int(ev, a_[0], l_[0], "a thread range's start");
        int64_t e = v_want_int(ev, a_[1], l_[1], "a thread range's end");
        if (a_[2]) {
            if (a_[2]->kind != V_STR || strncmp(a_[2]->u.s.s, "threadIdx.", 10) || a_[2]->u.s.len != 11 ||
                a_[2]->u.s.s[10] < 'x' || a_[2]->u.s.s[10] > 'z')
                ev_fail(ev, l_[2], "T.thread_binding: thread must be \"threadIdx.x\", \"threadIdx.y\" or \"threadIdx.z\"");
            dim = a_[2]->u.s.s[10] - 'x';
        }
        if (dim >= 0 && dim < 3 && e - b != ev->k->threads[dim])
            ev_fail(ev, c->loc, "T.thread_binding(%lld, %lld) must cover the block's %d threads of dimension %d",
                    (long long)b, (long long)e, ev->k->threads[dim], dim);
        if (b) *lo = v_int(ev, b);
    }
    if (dim < 0 || dim > 2) ev_fail(ev, c->loc, "a thread dimension is 0, 1 or 2 (got %d)", dim);
    return dim;
}

/* Uses of name in e other than as a `thread_bindings=` / `thread_binding=`
 * keyword value (how BitBLAS-style kernels hand the index to the MMA
 * emitter); constructs not looked into count as uses. */
static int other_uses_e(const char *name, const ast_expr_t *e, int depth);

static int other_uses_b(const char *name, const ast_block_t *b, int depth);

static int other_uses_list(const char *name, ast_expr_t *const *v, int n, int depth)
{
    int i, r = 0;
    for (i = 0; i < n; i++) r += other_uses_e(name, v[i], depth);
    return r;
}

static int other_uses_e(const char *name, const ast_expr_t *e, int depth)
{
    int i, r = 0;
    if (!e) return 0;
    if (depth > 200) return 1;
    switch (e->kind) {
    case AST_NAME: return !strcmp(e->u.name, name);
    case AST_INT: case AST_FLOAT: case AST_STR: case AST_BOOL: case AST_NONE: return 0;
    case AST_BINOP: case AST_BOOLOP: return other_uses_e(name, e->u.bin.a, depth + 1) + other_uses_e(name, e->u.bin.b, depth + 1);
    case AST_UNARY: return other_uses_e(name, e->u.un.a, depth + 1);
    case AST_COMPARE: return other_uses_list(name, e->u.cmp.operands, e->u.cmp.n, depth + 1);
    case AST_IFEXP:
        return other_uses_e(name, e->u.ifexp.cond, depth + 1) + other_uses_e(name, e->u.ifexp.a, depth + 1) +
               other_uses_e(name, e->u.ifexp.b, depth + 1);
    case AST_CALL:
        r = other_uses_e(name, e->u.call.func, depth + 1) + other_uses_list(name, e->u.call.args, e->u.call.nargs, depth + 1);
        for (i = 0; i < e->u.call.nkw; i++) {
            const ast_keyword_t *k = &e->u.call.kw[i];
            if (k->name && (!strcmp(k->name, "thread_bindings") || !strcmp(k->name, "thread_binding")) &&
                k->value->kind == AST_NAME)
                continue;
            r += other_uses_e(name, k->value, depth + 1);
        }
        return r;
    case AST_ATTR: return other_uses_e(name, e->u.attr.value, depth + 1);
    case AST_SUBSCRIPT: return other_uses_e(name, e->u.sub.value, depth + 1) + other_uses_list(name, e->u.sub.items, e->u.sub.n, depth + 1);
    case AST_SLICE:
        return other_uses_e(name, e->u.slice.lo, depth + 1) + other_uses_e(name, e->u.slice.hi, depth + 1) +
               other_uses_e(name, e->u.slice.step, depth + 1);
    case AST_TUPLE: case AST_LIST: case AST_DICT: return other_uses_list(name, e->u.seq.items, e->u.seq.n, depth + 1);
    case AST_STARRED: return other_uses_e(name, e->u.star.value, depth + 1);
    default: return 1;   /* comprehensions, f-strings, lambdas: not looked into */
    }
}

static int other_uses_s(const char *name, const ast_stmt_t *s, int depth)
{
    int i, r = 0;
    switch (s->kind) {
    case AST_S_EXPR: return other_uses_e(name, s->u.expr, depth);
    case AST_S_ASSIGN:
        for (i = 0; i < s->u.assign.ntargets; i++) r += other_uses_e(name, s->u.assign.targets[i], depth);
        return r + other_uses_e(name, s->u.assign.value, depth);
    case AST_S_AUGASSIGN: return other_uses_e(name, s->u.aug.target, depth) + other_uses_e(name, s->u.aug.value, depth);
    case AST_S_ANNASSIGN:
        return other_uses_e(name, s->u.ann.target, depth) + other_uses_e(name, s->u.ann.annotation, depth) +
               other_uses_e(name, s->u.ann.value, depth);
    case AST_S_FOR:
        return other_uses_e(name, s->u.loop.target, depth) + other_uses_e(name, s->u.loop.iter, depth) +
               other_uses_b(name, &s->u.loop.body, depth + 1);
    case AST_S_WHILE: return other_uses_e(name, s->u.wloop.cond, depth) + other_uses_b(name, &s->u.wloop.body, depth + 1);
    case AST_S_IF:
        return other_uses_e(name, s->u.cond.cond, depth) + other_uses_b(name, &s->u.cond.body, depth + 1) +
               other_uses_b(name, &s->u.cond.orelse, depth + 1);
    case AST_S_WITH:
        return other_uses_e(name, s->u.with.ctx, depth) + other_uses_e(name, s->u.with.target, depth) +
               other_uses_b(name, &s->u.with.body, depth + 1);
    case AST_S_RETURN: case AST_S_RAISE: return other_uses_e(name, s->u.ret.value, depth);
    case AST_S_ASSERT: return other_uses_e(name, s->u.assert_.cond, depth) + other_uses_e(name, s->u.assert_.msg, depth);
    case AST_S_PASS: case AST_S_BREAK: case AST_S_CONTINUE: case AST_S_IMPORT: return 0;
    default: return 1;   /* def, class */
    }
}

static int other_uses_b(const char *name, const ast_block_t *b, int depth)
{
    int i, r = 0;
    if (depth > 200) return 1;
    for (i = 0; i < b->n; i++) r += other_uses_s(name, b->s[i], depth);
    return r;
}

int th_binding_dim(ev_t *ev, const ast_stmt_t *s, value_t **lo)
{
    return binding_dim(ev, binding_call(s), lo);
}

int th_uses_e(const char *name, const ast_expr_t *e)
{
    return other_uses_e(name, e, 0);
}

int th_uses_s(const char *name, const ast_stmt_t *s)
{
    return other_uses_s(name, s, 0);
}

/* `tx = T.thread_binding(...)` whose name the rest of the block does not
 * use, or only hands to the MMA emitter (thread_bindings=tx), which runs at
 * block level and ignores it: no per-thread code, the binding still checked. */
int th_skip_unused(ev_t *ev, const ast_block_t *b, int first)
{
    ast_block_t rest;
    const ast_stmt_t *s = b->s[first];
    value_t *lo;
    rest.n = b->n - first - 1;
    rest.s = b->s + first + 1;
    if (!binding_call(s) || other_uses_b(s->u.assign.targets[0]->u.name, &rest, 0)) return 0;
    binding_dim(ev, binding_call(s), &lo);   /* still a valid binding */
    env_set(ev, ev->env, s->u.assign.targets[0]->u.name, ev->none);
    return 1;
}

void th_exec_rest(ev_t *ev, const ast_block_t *b, int first)
{
    tilec_ir_stmt_t *outer = NULL, **link = NULL, **saved;
    tilec_ir_var_t *vars[3] = {NULL, NULL, NULL};
    const char *names[3] = {NULL, NULL, NULL};
    value_t *bound[3] = {NULL, NULL, NULL};
    static const char *const dflt[3] = {"tx", "ty", "tz"};
    int i = first, d;
    ast_loc_t loc = b->s[first]->loc;
    if (ev->wr)
        ev_fail(ev, loc, "a thread index bound again inside warp roles is outside the subset tilec supports; use the "
                "one bound before the roles");
    if (ev->lk.on && !ev->lk.inloop) {   /* the index again in lock-step code (a macro): this thread's */
        th_rebind(ev, b->s[first]);
        for (i = first + 1; i < b->n && ev->ctl == CTL_NONE; i++) ev_exec_stmt(ev, b->s[i]);
        return;
    }
    if (ev->thread_wrap) {   /* the index again (a macro reading it): the running loop's */
        value_t *lo, *v;
        ast_stmt_t *s = b->s[first];
        d = binding_dim(ev, binding_call(s), &lo);
        if (ev->lk.on) v = v_expr(ev, ev->lk.dim[d]);   /* inside a lock-step statement */
        else v = ev->thread_vars[d] ? v_expr(ev, ev_chk(ev, tilec_ir_varref(ev->a, ev->thread_vars[d]))) : v_int(ev, 0);
        env_set(ev, ev->env, s->u.assign.targets[0]->u.name, lo ? v_binop(ev, '+', lo, v, s->loc) : v);
        for (i = first + 1; i < b->n && ev->ctl == CTL_NONE; i++) ev_exec_stmt(ev, b->s[i]);
        return;
    }
    if (ev->k->threads[0] * ev->k->threads[1] * ev->k->threads[2] == 1) {
        /* a block of one thread: that thread's code is the block's code (tile operations,
         * T.Parallel and barriers included), every index 0 */
        for (; i < b->n && binding_call(b->s[i]); i++) {
            value_t *lo;
            ast_stmt_t *s = b->s[i];
            binding_dim(ev, binding_call(s), &lo);
            env_set(ev, ev->env, s->u.assign.targets[0]->u.name, lo ? lo : v_int(ev, 0));
        }
        for (; i < b->n && ev->ctl == CTL_NONE; i++) ev_exec_stmt(ev, b->s[i]);
        return;
    }
    if (wr_applies(ev, b, first)) {   /* warp roles that meet only at mbarriers (wsroles.c) */
        wr_run(ev, b, first);
        return;
    }
    if (lk_needed(ev, b, first + 1)) {   /* the threads exchange values: lock step (lockstep.c) */
        lk_run(ev, b, first);
        return;
    }
    /* the loops over the thread dimensions, outermost z */
    for (d = 2; d >= 0; d--) {
        tilec_ir_stmt_t *st;
        if (ev->k->threads[d] <= 1 && d > 0) continue;
        st = ev_stmt(ev, TILEC_ST_FOR, loc);
        st->u.loop.kind = TILEC_LOOP_PARALLEL;
        st->u.loop.num_stages = 1;
        st->u.loop.extent = ex_int32(ev, ev->k->threads[d]);
        vars[d] = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, dflt[d]), TILEC_INT32, TILEC_VAR_LOOP));
        st->u.loop.var = vars[d];
        ev_set_loop_extent(ev, vars[d], st->u.loop.extent);
        if (!outer) outer = st;
        else *link = st;
        link = &st->u.loop.body;
    }
    /* consecutive bindings name the dimensions */
    for (; i < b->n && binding_call(b->s[i]); i++) {
        value_t *lo, *v;
        ast_stmt_t *s = b->s[i];
        d = binding_dim(ev, binding_call(s), &lo);
        /* a dimension of one thread has index 0 */
        v = vars[d] ? v_expr(ev, ev_chk(ev, tilec_ir_varref(ev->a, vars[d]))) : v_int(ev, 0);
        if (lo) v = v_binop(ev, '+', lo, v, s->loc);
        names[d] = s->u.assign.targets[0]->u.name;
        env_set(ev, ev->env, names[d], v);
        bound[d] = v;
    }
    saved = ev->tail;
    ev->tail = link;
    ev->rt_depth++;
    ev->in_rt_loop++;
    ev->thread_wrap = 1;
    memcpy(ev->thread_vars, vars, sizeof vars);
    for (; i < b->n && ev->ctl == CTL_NONE; i++) {
        if (binding_call(b->s[i])) ev_fail(ev, b->s[i]->loc, "bind every thread index at the start of the per-thread code");
        ev_exec_stmt(ev, b->s[i]);
    }
    ev->thread_wrap = 0;
    ev->in_rt_loop--;
    ev->rt_depth--;
    ev->tail = saved;
    ev_emit(ev, outer, loc);
    for (d = 0; d < 3; d++)
        if (names[d] && env_get(ev->env, names[d]) == bound[d]) env_set(ev, ev->env, names[d], v_new(ev, V_DEADLOOP));
}

int th_rebind(ev_t *ev, ast_stmt_t *s)
{
    value_t *lo, *v;
    int d = binding_dim(ev, binding_call(s), &lo);
    v = v_expr(ev, ev->lk.dim[d]);
    env_set(ev, ev->env, s->u.assign.targets[0]->u.name, lo ? v_binop(ev, '+', lo, v, s->loc) : v);
    return d;
}

void th_reject(ev_t *ev, const char *what, ast_loc_t loc)
{
    if (ev->thread_wrap)
        ev_fail(ev, loc, "%s after a thread index (T.get_thread_binding / T.thread_binding) is outside the subset "
                "tilec supports: the code after a thread index runs once per thread, as a parallel loop over the "
                "block's threads, so it cannot wait for the other threads or work on whole tiles", what);
}
