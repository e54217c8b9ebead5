/*
 * frontend/wsthread.c — the per-thread code of a warp role.
 *
 * Inside a warp role (wsroles.c), a statement that reads the thread index
 * and has no barrier operation is what each of the role's threads does: it
 * runs once per thread, as one parallel loop over the role's threads with
 * the index bound to each.  Those threads may not exchange values inside
 * the statement (that needs lock step, which warp roles do not have), so
 * shared or fragment memory it reads must be an element the thread itself
 * wrote earlier in the statement, at the same index written the same way
 * (a flag a producer thread sets and tests, as TileLang's sparse MLA does);
 * anything else, and calls of macros whose bodies are not looked into, is a
 * diagnostic.  Its scalar temporaries are the threads' own and end with the
 * statement.
 */
#include "eval_internal.h"

#include <string.h>

typedef struct pt {
    ev_t *ev;
    const ast_expr_t *w[64]; int nw;      /* on-chip elements written so far */
    const char *names[64]; int nnames;    /* names assigned: per-thread values */
} pt_t;

static int ast_eq(const ast_expr_t *a, const ast_expr_t *b, int depth)
{
    int i;
    if (!a || !b) return a == b;
    if (a->kind != b->kind || depth > 50) return 0;
    switch (a->kind) {
    case AST_NAME: return !strcmp(a->u.name, b->u.name);
    case AST_INT: case AST_BOOL: return a->u.ival == b->u.ival;
    case AST_BINOP: case AST_BOOLOP:
        return a->u.bin.op == b->u.bin.op && ast_eq(a->u.bin.a, b->u.bin.a, depth + 1) && ast_eq(a->u.bin.b, b->u.bin.b, depth + 1);
    case AST_UNARY: return a->u.un.op == b->u.un.op && ast_eq(a->u.un.a, b->u.un.a, depth + 1);
    case AST_SUBSCRIPT:
        if (a->u.sub.n != b->u.sub.n || !ast_eq(a->u.sub.value, b->u.sub.value, depth + 1)) return 0;
        for (i = 0; i < a->u.sub.n; i++)
            if (!ast_eq(a->u.sub.items[i], b->u.sub.items[i], depth + 1)) return 0;
        return 1;
    default: return 0;
    }
}

static int onchip(ev_t *ev, const ast_expr_t *e)
{
    value_t *b;
    if (e->kind != AST_SUBSCRIPT || e->u.sub.value->kind != AST_NAME) return 0;
    b = env_get(ev->env, e->u.sub.value->u.name);
    return b && b->kind == V_BUF && (b->u.buf->scope == TILEC_SCOPE_SHARED || b->u.buf->scope == TILEC_SCOPE_FRAGMENT);
}

static void pt_expr(pt_t *p, const ast_expr_t *e, int depth);

static void pt_write(pt_t *p, const ast_expr_t *e, int depth)
{
    int i;
    for (i = 0; i < e->u.sub.n; i++) pt_expr(p, e->u.sub.items[i], depth + 1);
    if (p->nw == 64) ev_fail(p->ev, e->loc, "too many shared-memory writes in one per-thread statement of a warp role");
    p->w[p->nw++] = e;
}

static void pt_expr(pt_t *p, const ast_expr_t *e, int depth)
{
    int i;
    if (!e) return;
    if (depth > 100) ev_fail(p->ev, e->loc, "expression nests too deeply");
    switch (e->kind) {
    case AST_SUBSCRIPT:
        if (onchip(p->ev, e)) {
            for (i = 0; i < p->nw && !ast_eq(p->w[i], e, 0); i++) {}
            if (i == p->nw)
                ev_fail(p->ev, e->loc, "this per-thread code of a warp role reads shared or fragment memory it did not "
                        "write itself just before (same element, same index); threads that exchange values within a "
                        "role's per-thread code are outside the subset tilec supports");
        }
        pt_expr(p, e->u.sub.value, depth + 1);
        for (i = 0; i < e->u.sub.n; i++) pt_expr(p, e->u.sub.items[i], depth + 1);
        return;
    case AST_CALL: {
        const char *n = wr_call_name(e);
        if (n && (!strcmp(n, "any_sync") || !strcmp(n, "all_sync") || !strcmp(n, "ballot_sync")))
            ev_fail(p->ev, e->loc, "T.%s, a warp vote, in a warp role's per-thread code is outside the subset tilec "
                    "supports: its value is the warp's, and which elements a warp's threads cover in the role's tile "
                    "operations is a layout a block-level reading does not have", n);
        if (e->u.call.func->kind == AST_NAME) {
            value_t *f = env_get(p->ev->env, e->u.call.func->u.name);
            if (f && f->kind == V_FUNC)
                ev_fail(p->ev, e->loc, "a call of '%s' in a warp role's per-thread code is outside the subset tilec "
                        "supports; write its statements there", e->u.call.func->u.name);
        }
        if (n && !strcmp(n, "access_ptr") && e->u.call.nargs >= 2 && e->u.call.args[1]->kind == AST_STR &&
            e->u.call.args[1]->u.str.len == 1 && e->u.call.args[1]->u.str.s[0] == 'w' &&
            e->u.call.args[0]->kind == AST_SUBSCRIPT) {
            pt_write(p, e->u.call.args[0], depth + 1);
            for (i = 2; i < e->u.call.nargs; i++) pt_expr(p, e->u.call.args[i], depth + 1);
            return;
        }
        for (i = 0; i < e->u.call.nargs; i++) pt_expr(p, e->u.call.args[i], depth + 1);
        for (i = 0; i < e->u.call.nkw; i++) pt_expr(p, e->u.call.kw[i].value, depth + 1);
        return;
    }
    case AST_BINOP: case AST_BOOLOP: pt_expr(p, e->u.bin.a, depth + 1); pt_expr(p, e->u.bin.b, depth + 1); return;
    case AST_UNARY: pt_expr(p, e->u.un.a, depth + 1); return;
    case AST_COMPARE:
        for (i = 0; i < e->u.cmp.n; i++) pt_expr(p, e->u.cmp.operands[i], depth + 1);
        return;
    case AST_IFEXP:
        pt_expr(p, e->u.ifexp.cond, depth + 1);
        pt_expr(p, e->u.ifexp.a, depth + 1);
        pt_expr(p, e->u.ifexp.b, depth + 1);
        return;
    case AST_ATTR: pt_expr(p, e->u.attr.value, depth + 1); return;
    case AST_SLICE:
        pt_expr(p, e->u.slice.lo, depth + 1);
        pt_expr(p, e->u.slice.hi, depth + 1);
        pt_expr(p, e->u.slice.step, depth + 1);
        return;
    case AST_TUPLE: case AST_LIST:
        for (i = 0; i < e->u.seq.n; i++) pt_expr(p, e->u.seq.items[i], depth + 1);
        return;
    default: return;
    }
}

static void pt_target(pt_t *p, const ast_expr_t *t, int depth)
{
    int i;
    if (t->kind == AST_SUBSCRIPT && onchip(p->ev, t)) pt_write(p, t, depth);
    else if (t->kind == AST_SUBSCRIPT) pt_expr(p, t, depth);
    else if (t->kind == AST_NAME && p->nnames < 64) p->names[p->nnames++] = t->u.name;
    else if (t->kind == AST_TUPLE || t->kind == AST_LIST)
        for (i = 0; i < t->u.seq.n; i++) pt_target(p, t->u.seq.items[i], depth + 1);
}

static void pt_stmt(pt_t *p, const ast_stmt_t *s, int depth);

static void pt_block(pt_t *p, const ast_block_t *b, int depth)
{
    int i;
    for (i = 0; i < b->n; i++) pt_stmt(p, b->s[i], depth + 1);
}

static void pt_stmt(pt_t *p, const ast_stmt_t *s, int depth)
{
    int i;
    if (depth > 100) ev_fail(p->ev, s->loc, "statements nest too deeply");
    switch (s->kind) {
    case AST_S_EXPR: pt_expr(p, s->u.expr, depth); break;
    case AST_S_ASSIGN:
        pt_expr(p, s->u.assign.value, depth);
        for (i = 0; i < s->u.assign.ntargets; i++) pt_target(p, s->u.assign.targets[i], depth);
        break;
    case AST_S_AUGASSIGN:
        pt_expr(p, s->u.aug.value, depth);
        pt_target(p, s->u.aug.target, depth);
        break;
    case AST_S_ANNASSIGN:
        pt_expr(p, s->u.ann.value, depth);
        pt_target(p, s->u.ann.target, depth);
        break;
    case AST_S_FOR:
        pt_expr(p, s->u.loop.iter, depth);
        pt_target(p, s->u.loop.target, depth);
        pt_block(p, &s->u.loop.body, depth);
        break;
    case AST_S_IF:
        pt_expr(p, s->u.cond.cond, depth);
        pt_block(p, &s->u.cond.body, depth);
        pt_block(p, &s->u.cond.orelse, depth);
        break;
    case AST_S_PASS: case AST_S_ASSERT: break;
    default:
        ev_fail(p->ev, s->loc, "this statement in a warp role's per-thread code is outside the subset tilec supports");
    }
}

void wr_per_thread(ev_t *ev, const char *tx, int lo, int n, ast_stmt_t *s)
{
    tilec_ir_stmt_t *st, **saved;
    tilec_ir_var_t *var;
    value_t *v;
    pt_t p;
    int i;
    memset(&p, 0, sizeof p);
    p.ev = ev;
    pt_stmt(&p, s, 0);
    st = ev_stmt(ev, TILEC_ST_FOR, s->loc);
    st->u.loop.kind = TILEC_LOOP_PARALLEL;
    st->u.loop.num_stages = 1;
    st->u.loop.extent = ex_int32(ev, n);
    var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, tx), TILEC_INT32, TILEC_VAR_LOOP));
    st->u.loop.var = var;
    ev_set_loop_extent(ev, var, st->u.loop.extent);
    v = v_expr(ev, ev_chk(ev, tilec_ir_varref(ev->a, var)));
    if (lo) v = v_binop(ev, '+', v, v_int(ev, lo), s->loc);
    env_set(ev, ev->env, tx, v);
    saved = ev->tail;
    ev->tail = &st->u.loop.body;
    ev->rt_depth++;
    ev->in_rt_loop++;
    ev->thread_wrap = 1;
    ev->thread_vars[0] = var;
    ev_exec_stmt(ev, s);
    ev->thread_wrap = 0;
    ev->thread_vars[0] = NULL;
    ev->in_rt_loop--;
    ev->rt_depth--;
    ev->tail = saved;
    ev_emit(ev, st, s->loc);
    env_set(ev, ev->env, tx, v_new(ev, V_DEADLOOP));
    for (i = 0; i < p.nnames; i++) {   /* the threads' own values end with the loop */
        value_t *x = env_get(ev->env, p.names[i]);
        if (x && x->kind != V_BUF) {
            value_t *d = v_new(ev, V_DEADLOOP);
            d->u.i = 3;
            env_set(ev, ev->env, p.names[i], d);
        }
    }
}
