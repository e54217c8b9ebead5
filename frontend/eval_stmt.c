/*
 * frontend/eval_stmt.c — statements: assignment (with the single-assignment
 * scalar temporaries that slice extents see through), loops, if, with
 * T.Kernel, def, import, while, raise.
 *
 * At compile time a statement runs as Python; inside a kernel, statements
 * on run-time values emit tile-IR statements at ev->tail.  Split from
 * eval.c (expressions) and eval_kernel.c (the prim_func and the driver).
 */
#include "autotune.h"
#include "eval_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- assignment ------------------------------------------------------------- */

/* ---- single-assignment scalar temporaries (slice extents see through them) ---- */

static void note_let(ev_t *ev, tilec_ir_var_t *var, tilec_ir_expr_t *def)
{
    if (var->id >= ev->let_cap) {
        int ncap = var->id * 2 + 16;
        tilec_ir_expr_t **nd = ev_alloc(ev, sizeof *nd * (size_t)ncap);
        int *nn = ev_alloc(ev, sizeof *nn * (size_t)ncap);
        if (ev->let_cap) {
            memcpy(nd, ev->let_def, sizeof *nd * (size_t)ev->let_cap);
            memcpy(nn, ev->let_nset, sizeof *nn * (size_t)ev->let_cap);
        }
        ev->let_def = nd;
        ev->let_nset = nn;
        ev->let_cap = ncap;
    }
    if (ev->let_nset[var->id]++ == 0) ev->let_def[var->id] = def;
}

tilec_ir_expr_t *ev_let_def(ev_t *ev, tilec_ir_var_t *var, ast_loc_t loc)
{
    if (var->kind != TILEC_VAR_LET || var->id >= ev->let_cap || ev->let_nset[var->id] != 1) return NULL;
    if (ev->nlet_uses == ev->cap_let_uses) {
        int ncap = ev->cap_let_uses ? ev->cap_let_uses * 2 : 16;
        struct let_use *nu = ev_alloc(ev, sizeof *nu * (size_t)ncap);
        if (ev->nlet_uses) memcpy(nu, ev->let_uses, sizeof *nu * (size_t)ev->nlet_uses);
        ev->let_uses = nu;
        ev->cap_let_uses = ncap;
    }
    ev->let_uses[ev->nlet_uses].var = var;
    ev->let_uses[ev->nlet_uses++].loc = loc;
    return ev->let_def[var->id];
}

/* A slice extent taken through a temporary stays right only if nothing assigns it again. */
void ev_check_let_uses(ev_t *ev)
{
    int i;
    for (i = 0; i < ev->nlet_uses; i++)
        if (ev->let_nset[ev->let_uses[i].var->id] != 1)
            ev_fail(ev, ev->let_uses[i].loc, "the extent of this slice depends on '%s', which is assigned more "
                    "than once; write the slice as x:x+EXTENT with a constant EXTENT", ev->let_uses[i].var->name);
}

static int is_let(value_t *v)
{
    return v && v->kind == V_EXPR && v->u.ex->kind == TILEC_EX_VAR && v->u.ex->u.var->kind == TILEC_VAR_LET;
}

static void store_elem(ev_t *ev, tilec_ir_expr_t *load, value_t *v, ast_loc_t loc)
{
    tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_STORE, loc);
    tilec_ir_buffer_t *b = load->u.load.buf;
    if (!v_is_rt(v) && !v_is_num(v)) {
        ev_fail(ev, loc, "cannot store %s into an element of '%s'", v_kind_name(v), b->name);
    }
    ev_require_kernel(ev, loc, "a store to a buffer");
    st->u.store.buf = b;
    st->u.store.idx = load->u.load.idx;
    st->u.store.value = ex_as(ev, v, b->dtype, loc);
    ev_emit(ev, st, loc);
}

static void assign_name(ev_t *ev, const char *name, value_t *v, ast_loc_t loc)
{
    env_t *e = wr_scope_of(ev, name);   /* a warp role's code: the block's name, or the role's own */
    int i = ev_env_find(e, name);
    value_t *cur = i >= 0 ? e->vals[i] : NULL;
    if (cur && cur->kind == V_BUF && cur->u.buf->scope == TILEC_SCOPE_VAR && v->kind != V_BUF &&
        (v_is_rt(v) || v_is_num(v))) {
        tilec_ir_expr_t *z = ex_int32(ev, 0);
        store_elem(ev, lk_load(ev, cur->u.buf, &z), v, loc);
        return;
    }
    if (v->kind == V_SYM) {
        if (!v->u.sym->alias) v->u.sym->alias = name;
        ev_sym_define(ev, v->u.sym, name, loc);
        env_set(ev, e, name, v);
        return;
    }
    if (is_let(cur) && ev->tail && (v_is_rt(v) || v_is_num(v))) {
        tilec_ir_var_t *var = cur->u.ex->u.var;
        tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_ASSIGN, loc);
        st->u.assign.var = var;
        st->u.assign.value = ex_as(ev, v, var->dtype, loc);
        ev_emit(ev, st, loc);
        note_let(ev, var, st->u.assign.value);
        return;
    }
    if (v->kind == V_EXPR && ev->tail) {
        tilec_ir_var_t *var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, name),
                                                          v->u.ex->dtype, TILEC_VAR_LET));
        tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_ASSIGN, loc);
        st->u.assign.var = var;
        st->u.assign.value = v->u.ex;
        ev_emit(ev, st, loc);
        note_let(ev, var, v->u.ex);
        env_set(ev, e, name, v_expr(ev, tilec_ir_varref(ev->a, var)));
        return;
    }
    env_set(ev, e, name, v);
}


/* Whether a run-time expression reads state a store can change (a buffer
 * element or a scalar temporary); deep trees count as yes. */
static int ex_reads_state(const tilec_ir_expr_t *e, int depth)
{
    if (depth > 64) return 1;
    switch (e->kind) {
    case TILEC_EX_LOAD: return 1;
    case TILEC_EX_VAR: return e->u.var->kind == TILEC_VAR_LET;
    case TILEC_EX_UNARY: return ex_reads_state(e->u.un.a, depth + 1);
    case TILEC_EX_BINARY: return ex_reads_state(e->u.bin.a, depth + 1) || ex_reads_state(e->u.bin.b, depth + 1);
    case TILEC_EX_SELECT:
        return ex_reads_state(e->u.sel.cond, depth + 1) || ex_reads_state(e->u.sel.a, depth + 1) ||
               ex_reads_state(e->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return ex_reads_state(e->u.cast.a, depth + 1);
    default: return 0;
    }
}

static void unpack(ev_t *ev, ast_expr_t *t, value_t *v, ast_loc_t loc)
{
    value_t **items = NULL;
    int n = 0, cap = 0, i;
    if (v->kind == V_SEQ || v->kind == V_RANGE) {
        ev_expand_into(ev, v, &items, &n, &cap, loc);
    } else if (v->kind == V_STR) {
        for (i = 0; i < (int)v->u.s.len; i++) ev_seq_push(ev, &items, &n, &cap, v_str(ev, v->u.s.s + i, 1), loc);
    } else {
        ev_fail(ev, t->loc, "cannot unpack %s into %d names", v_kind_name(v), t->u.seq.n);
    }
    if (n != t->u.seq.n) {
        ev_fail(ev, t->loc, "cannot unpack %d value%s into %d name%s", n, n == 1 ? "" : "s", t->u.seq.n,
                t->u.seq.n == 1 ? "" : "s");
    }
    /* Python evaluates the whole right side before it assigns: `y, z = y + 1,
     * y * 2` and `a, b = b, a` must read the old values, so run-time values
     * that read temporaries or buffers are captured first. */
    if (ev->tail && n > 1) {
        for (i = 0; i < n; i++) {
            tilec_ir_expr_t *e;
            tilec_ir_var_t *var;
            tilec_ir_stmt_t *st;
            if (!v_is_rt(items[i]) || items[i]->kind == V_SYM) continue;
            e = ex_of(ev, items[i], loc);
            if (!ex_reads_state(e, 0)) continue;
            var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "unpacked"), e->dtype, TILEC_VAR_LET));
            st = ev_stmt(ev, TILEC_ST_ASSIGN, loc);
            st->u.assign.var = var;
            st->u.assign.value = e;
            ev_emit(ev, st, loc);
            note_let(ev, var, e);
            items[i] = v_expr(ev, ev_chk(ev, tilec_ir_varref(ev->a, var)));
        }
    }
    for (i = 0; i < n; i++) ev_assign_to(ev, t->u.seq.items[i], items[i], loc);
}

void ev_assign_to(ev_t *ev, ast_expr_t *t, value_t *v, ast_loc_t loc)
{
    switch (t->kind) {
    case AST_NAME:
        assign_name(ev, t->u.name, v, t->loc);
        return;
    case AST_TUPLE: case AST_LIST:
        unpack(ev, t, v, loc);
        return;
    case AST_SUBSCRIPT: {
        value_t *base = ev_eval(ev, t->u.sub.value);
        value_t *el;
        int i;
        if (base->kind == V_SEQ && base->u.seq.is_list && t->u.sub.n == 1 &&
            t->u.sub.items[0]->kind != AST_SLICE) {
            int64_t k = v_want_int(ev, ev_eval(ev, t->u.sub.items[0]), t->loc, "list index");
            if (k < 0) k += base->u.seq.n;
            if (k < 0 || k >= base->u.seq.n) ev_fail(ev, t->loc, "list index out of range");
            base->u.seq.items[k] = v;
            return;
        }
        if (base->kind == V_DICT && t->u.sub.n == 1 && t->u.sub.items[0]->kind != AST_SLICE) {
            v_dict_set(ev, base, ev_eval(ev, t->u.sub.items[0]), v, t->loc);
            return;
        }
        if (base->kind != V_BUF) ev_fail(ev, t->loc, "cannot assign to an element of %s", v_kind_name(base));
        for (i = 0; i < t->u.sub.n; i++) {
            if (t->u.sub.items[i]->kind == AST_SLICE)
                ev_fail(ev, t->u.sub.items[i]->loc, "cannot assign to a slice of '%s'; use T.fill, T.copy "
                        "or a T.Parallel loop", base->u.buf->name);
        }
        el = v_subscript(ev, base, t);
        store_elem(ev, el->u.ex, v, t->loc);
        return;
    }
    case AST_ATTR: {
        /* host settings on a module tilec does not evaluate (torch.backends.cuda.matmul.allow_tf32 = False)
         * change nothing here */
        value_t *obj = ev_eval(ev, t->u.attr.value);
        if (obj->kind == V_OPAQUE && ev->at_module && !ev->tail) return;
        if (obj->kind == V_OBJECT || obj->kind == V_CLASS) {
            cls_setattr(ev, obj, t->u.attr.name, v, t->loc);
            return;
        }
        ev_fail(ev, t->loc, "cannot assign to attribute '%s'", t->u.attr.name);
    }
    case AST_STARRED:
        ev_fail(ev, t->loc, "starred assignment targets are not supported");
    default:
        ev_fail(ev, t->loc, "cannot assign to this expression");
    }
}

static void note_const(ev_t *ev, const char *name)
{
    if (nt_get(&ev->consts_tab, name) >= 0) return;
    if (ev->nconsts == ev->capconsts) {
        int ncap = ev->capconsts ? ev->capconsts * 2 : 16;
        const char **nc = ev_alloc(ev, (size_t)ncap * sizeof *nc);
        if (ev->nconsts) memcpy(nc, ev->consts, (size_t)ev->nconsts * sizeof *nc);
        ev->consts = nc;
        ev->capconsts = ncap;
    }
    nt_put(ev, &ev->consts_tab, name, ev->nconsts);
    ev->consts[ev->nconsts++] = name;
}

static void exec_assign(ev_t *ev, ast_stmt_t *s)
{
    value_t *v;
    int i;
    ast_expr_t *t0 = s->u.assign.ntargets > 0 ? s->u.assign.targets[0] : NULL;
    if (!t0) ev_fail(ev, s->loc, "malformed assignment");
    if (ev->at_module && s->u.assign.ntargets == 1 && t0->kind == AST_NAME) {
        evdef_t *d = ev_find_def(ev, t0->u.name);
        note_const(ev, t0->u.name);
        if (d && !d->used) {
            v = ev_eval(ev, s->u.assign.value);
            if (v->kind != V_SYM) v = ev_def_take(ev, d, v);
            assign_name(ev, t0->u.name, v, t0->loc);
            return;
        }
    }
    ev->name_hint = t0->kind == AST_NAME ? t0->u.name : NULL;
    v = ev_eval(ev, s->u.assign.value);
    ev->name_hint = NULL;
    for (i = 0; i < s->u.assign.ntargets; i++) ev_assign_to(ev, s->u.assign.targets[i], v, s->loc);
}

static void exec_augassign(ev_t *ev, ast_stmt_t *s)
{
    ast_expr_t *t = s->u.aug.target;
    value_t *rhs;
    if (t->kind == AST_NAME) {
        value_t *cur = ev_lookup(ev, t->u.name, t->loc);
        rhs = ev_eval(ev, s->u.aug.value);
        if (cur->kind == V_BUF && cur->u.buf->scope == TILEC_SCOPE_VAR) {
            tilec_ir_expr_t *z = ex_int32(ev, 0);
            tilec_ir_expr_t *ld = lk_load(ev, cur->u.buf, &z);
            store_elem(ev, ld, v_binop(ev, s->u.aug.op, v_expr(ev, ld), rhs, s->loc), s->loc);
            return;
        }
        if (cur->kind == V_SEQ && cur->u.seq.is_list && s->u.aug.op == '+' && (rhs->kind == V_SEQ)) {
            value_t *nv = v_binop(ev, '+', cur, rhs, s->loc);
            cur->u.seq = nv->u.seq;   /* lists extend in place */
            return;
        }
        assign_name(ev, t->u.name, v_binop(ev, s->u.aug.op, cur, rhs, s->loc), t->loc);
        return;
    }
    if (t->kind == AST_SUBSCRIPT) {
        value_t *base = ev_eval(ev, t->u.sub.value), *el;
        int i;
        if ((base->kind == V_DICT || (base->kind == V_SEQ && base->u.seq.is_list)) && t->u.sub.n == 1 &&
            t->u.sub.items[0]->kind != AST_SLICE) {
            /* compile-time d[k] op= v and lst[i] op= v */
            el = v_subscript(ev, base, t);
            rhs = ev_eval(ev, s->u.aug.value);
            ev_assign_to(ev, t, v_binop(ev, s->u.aug.op, el, rhs, s->loc), t->loc);
            return;
        }
        if (base->kind != V_BUF) ev_fail(ev, t->loc, "augmented assignment needs a buffer element or a name");
        for (i = 0; i < t->u.sub.n; i++)
            if (t->u.sub.items[i]->kind == AST_SLICE)
                ev_fail(ev, t->u.sub.items[i]->loc, "cannot update a slice of '%s' in place; use a T.Parallel loop",
                        base->u.buf->name);
        el = v_subscript(ev, base, t);
        rhs = ev_eval(ev, s->u.aug.value);
        store_elem(ev, el->u.ex, v_binop(ev, s->u.aug.op, el, rhs, s->loc), t->loc);
        return;
    }
    ev_fail(ev, t->loc, "augmented assignment needs a buffer element or a name");
}

static void exec_annassign(ev_t *ev, ast_stmt_t *s)
{
    ast_expr_t *t = s->u.ann.target;
    value_t *ann = ev_eval(ev, s->u.ann.annotation), *v;
    tilec_dtype_t dt;
    if (!s->u.ann.value && ann->kind == V_TENSORTYPE && t->kind == AST_NAME) {
        if (!ev->eager)
            ev_fail(ev, t->loc, "`%s: T.Tensor(...)` declares a tensor only in an eager-style @tilelang.jit kernel; "
                    "in a @T.prim_func, annotate its parameter instead", t->u.name);
        env_set(ev, ev->env, t->u.name, ev_eager_tensor(ev, t->u.name, ann, 0, t->loc));
        return;
    }
    if (!s->u.ann.value) {
        if (t->kind == AST_NAME && ann->kind == V_DTYPE)
            ev_fail(ev, t->loc, "a scalar declaration needs a value (write `%s: %s = 0`, or use "
                    "T.alloc_var)", t->u.name, tilec_dtype_name(ann->u.dt));
        return;
    }
    v = ev_eval(ev, s->u.ann.value);
    if (t->kind == AST_NAME && ann->kind == V_DTYPE && v_as_dtype(ann, &dt) && (v_is_num(v) || v_is_rt(v))) {
        if (ev->tail) {
            tilec_ir_var_t *var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, t->u.name), dt,
                                                              TILEC_VAR_LET));
            tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_ASSIGN, s->loc);
            st->u.assign.var = var;
            st->u.assign.value = ex_as(ev, v, dt, s->loc);
            ev_emit(ev, st, s->loc);
            note_let(ev, var, st->u.assign.value);
            env_set(ev, ev->env, t->u.name, v_expr(ev, tilec_ir_varref(ev->a, var)));
            return;
        }
        v = v_cast(ev, v, dt, s->loc);
    }
    ev_assign_to(ev, t, v, s->loc);
}

/* ---- loops ------------------------------------------------------------------ */

static void loop_targets(ev_t *ev, ast_expr_t *t, int n, ast_expr_t **out)
{
    int i;
    if (t->kind == AST_NAME) {
        if (n != 1) {
            ev_fail(ev, t->loc, "this loop has %d dimensions; unpack them: for (a, b, ...) in ...", n);
        }
        out[0] = t;
        return;
    }
    if (t->kind == AST_TUPLE || t->kind == AST_LIST) {
        if (t->u.seq.n != n) {
            ev_fail(ev, t->loc, "this loop has %d dimension%s but %d loop variable%s given", n,
                    n == 1 ? "" : "s", t->u.seq.n, t->u.seq.n == 1 ? " is" : "s are");
        }
        for (i = 0; i < n; i++) {
            if (t->u.seq.items[i]->kind != AST_NAME) ev_fail(ev, t->u.seq.items[i]->loc, "a loop variable must be a name");
            out[i] = t->u.seq.items[i];
        }
        return;
    }
    ev_fail(ev, t->loc, "a loop variable must be a name or a tuple of names");
}

static tilec_ir_expr_t *loop_extent(ev_t *ev, value_t *lo, value_t *hi, int64_t step, ast_loc_t loc)
{
    tilec_ir_expr_t *elo, *ehi, *d;
    if ((!lo || !v_is_rt(lo)) && !v_is_rt(hi)) {
        int64_t l = lo ? v_want_int(ev, lo, loc, "a loop start") : 0;
        int64_t h = v_want_int(ev, hi, loc, "a loop extent");
        /* in uint64: h - l and -step overflow int64 at the ends of its range */
        uint64_t d = 0, st = step > 0 ? (uint64_t)step : 0 - (uint64_t)step, n;
        if (step > 0 && h > l) d = (uint64_t)h - (uint64_t)l;
        if (step < 0 && h < l) d = (uint64_t)l - (uint64_t)h;
        n = d / st + (d % st != 0);
        if (n > INT32_MAX) ev_fail(ev, loc, "loop extent %llu is too large", (unsigned long long)n);
        return ex_int32(ev, (int64_t)n);
    }
    elo = lo ? ex_index(ev, lo, loc) : ex_int32(ev, 0);
    ehi = ex_index(ev, hi, loc);
    if (step > 0) {
        d = (lo && !(elo->kind == TILEC_EX_INT && elo->u.i == 0))
                ? ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_SUB, ehi, elo)) : ehi;
    } else {
        if (step == INT64_MIN) ev_fail(ev, loc, "loop step %lld is out of range", (long long)step);
        d = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_SUB, elo, ehi));
        step = -step;
    }
    if (step != 1) {
        d = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, d, ex_int32(ev, step - 1)));
        d = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_FLOORDIV, d, ex_int32(ev, step)));
    }
    return d;
}

static void exec_rt_loop(ev_t *ev, ast_stmt_t *s, loopiter_t *it)
{
    ast_expr_t *names[TILEC_IR_MAX_DIMS];
    value_t *bound[TILEC_IR_MAX_DIMS];
    tilec_ir_stmt_t *outer = NULL, **link = NULL;
    tilec_ir_stmt_t **saved;
    int i, rng_mine = 0;
    ev_require_kernel(ev, s->loc, "a kernel loop");
    if (it->n < 1 || it->n > TILEC_IR_MAX_DIMS) ev_fail(ev, s->u.loop.iter->loc, "T.Parallel takes 1 to %d extents",
                                                       TILEC_IR_MAX_DIMS);
    loop_targets(ev, s->u.loop.target, it->n, names);
    for (i = 0; i < it->n; i++) {
        tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_FOR, s->loc);
        tilec_ir_var_t *var;
        value_t *lo = it->lo ? it->lo[i] : NULL;
        int lo_zero = !lo || ((lo->kind == V_INT || lo->kind == V_BOOL) && lo->u.i == 0);
        if (it->kind == TILEC_LOOP_PARALLEL) th_reject(ev, "T.Parallel", s->u.loop.iter->loc);
        /* one thread's T.Pipelined is a serial loop */
        st->u.loop.kind = (ev->thread_wrap || ev->lk.on) && it->kind == TILEC_LOOP_PIPELINED ? TILEC_LOOP_SERIAL : it->kind;
        st->u.loop.num_stages = st->u.loop.kind == TILEC_LOOP_PIPELINED ? (it->num_stages < 1 ? 1 : it->num_stages) : 1;
        st->u.loop.extent = loop_extent(ev, lo, it->hi[i], it->step, s->u.loop.iter->loc);
        lk_uniform(ev, st->u.loop.extent, s->u.loop.iter->loc, "the bound of this loop");
        var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, names[i]->u.name), TILEC_INT32,
                                          TILEC_VAR_LOOP));
        st->u.loop.var = var;
        ev_set_loop_extent(ev, var, st->u.loop.extent);
        {
            value_t *vv = v_expr(ev, tilec_ir_varref(ev->a, var));
            if (!lo_zero || it->step != 1) {
                value_t *scaled = it->step == 1 ? vv : v_binop(ev, '*', vv, v_int(ev, it->step), s->loc);
                vv = lo_zero ? scaled : v_binop(ev, '+', lo, scaled, s->loc);
                if (v_is_rt(vv)) vv = v_expr(ev, ex_index(ev, vv, s->loc));
            }
            env_set(ev, ev->env, names[i]->u.name, vv);
            bound[i] = vv;
        }
        if (!outer) outer = st;
        else *link = st;
        link = &st->u.loop.body;
    }
    saved = ev->tail;
    ev->tail = link;
    ev->rt_depth++;
    ev->in_rt_loop++;
    if (it->kind == TILEC_LOOP_PARALLEL) {   /* T.rng_rand() draws by iteration (rng.c) */
        tilec_ir_var_t *vars[TILEC_IR_MAX_DIMS];
        tilec_ir_expr_t *exts[TILEC_IR_MAX_DIMS];
        tilec_ir_stmt_t *l = outer;
        for (i = 0; i < it->n; i++, l = l->u.loop.body) {
            vars[i] = l->u.loop.var;
            exts[i] = l->u.loop.extent;
        }
        rng_mine = rng_parallel_begin(ev, vars, exts, it->n);
        ev->rng_par.in_parallel++;
    }
    {
        int saved_ct = ev->ct_loops;
        ev->ct_loops = 0;
        ev_exec_block(ev, &s->u.loop.body);
        ev->ct_loops = saved_ct;
    }
    ev->in_rt_loop--;
    ev->rt_depth--;
    ev->tail = saved;
    ev_emit(ev, outer, s->loc);
    if (it->kind == TILEC_LOOP_PARALLEL) ev->rng_par.in_parallel--;
    if (rng_mine) rng_parallel_end(ev, s->loc);
    /* Unlike Python, a kernel loop's variable does not outlive the loop. */
    for (i = 0; i < it->n; i++)
        if (env_get(ev->env, names[i]->u.name) == bound[i])
            env_set(ev, ev->env, names[i]->u.name, v_new(ev, V_DEADLOOP));
}

/* `for bx, by in T.Persistent([m, n], wave, index)`: a persistent block
 * takes the tiles index, index + wave, index + 2 wave, ... of the m x n
 * domain, each tile once over the grid (the order within a block does not
 * change the results):
 *     for w in serial(ceildiv(m * n, wave)):
 *         t = w * wave + index
 *         if t < m * n: bx, by = t // n, t % n; body */
static void exec_persistent(ev_t *ev, ast_stmt_t *s, loopiter_t *it)
{
    ast_expr_t *names[TILEC_IR_MAX_DIMS];
    value_t *total = v_int(ev, 1), *t, *rem, *waves;
    tilec_ir_stmt_t *loop = ev_stmt(ev, TILEC_ST_FOR, s->loc), *guard, **saved, *then = NULL;
    tilec_ir_var_t *w;
    ast_loc_t loc = s->u.loop.iter->loc;
    int i;
    loop_targets(ev, s->u.loop.target, it->n, names);
    for (i = 0; i < it->n; i++) total = v_binop(ev, '*', total, it->hi[i], loc);
    waves = v_binop(ev, AST_OP_FLOORDIV, v_binop(ev, '+', total, v_binop(ev, '-', it->wave, v_int(ev, 1), loc), loc),
                    it->wave, loc);
    loop->u.loop.kind = TILEC_LOOP_SERIAL;
    loop->u.loop.num_stages = 1;
    loop->u.loop.extent = loop_extent(ev, NULL, waves, 1, loc);
    w = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "wave"), TILEC_INT32, TILEC_VAR_LOOP));
    loop->u.loop.var = w;
    ev_set_loop_extent(ev, w, loop->u.loop.extent);
    t = v_binop(ev, '+', v_binop(ev, '*', v_expr(ev, tilec_ir_varref(ev->a, w)), it->wave, loc), it->index, loc);
    guard = ev_stmt(ev, TILEC_ST_IF, s->loc);
    guard->u.cond.cond = ex_bool(ev, ex_of(ev, v_compare(ev, AST_OP_LT, t, total, loc), loc));
    saved = ev->tail;
    ev->tail = &then;
    ev->rt_depth++;
    ev->in_rt_loop++;
    ev->guarded++;
    rem = t;
    for (i = it->n - 1; i >= 0; i--) {   /* row-major: the last dimension fastest */
        value_t *c = i ? v_binop(ev, '%', rem, it->hi[i], loc) : rem;
        if (i) rem = v_binop(ev, AST_OP_FLOORDIV, rem, it->hi[i], loc);
        env_set(ev, ev->env, names[i]->u.name, v_is_rt(c) ? v_expr(ev, ex_index(ev, c, loc)) : c);
    }
    {
        int saved_ct = ev->ct_loops;
        ev->ct_loops = 0;
        ev_exec_block(ev, &s->u.loop.body);
        ev->ct_loops = saved_ct;
    }
    ev->guarded--;
    ev->in_rt_loop--;
    ev->rt_depth--;
    ev->tail = saved;
    guard->u.cond.then = then;
    loop->u.loop.body = guard;
    ev_emit(ev, loop, s->loc);
    for (i = 0; i < it->n; i++) env_set(ev, ev->env, names[i]->u.name, v_new(ev, V_DEADLOOP));
}

static void exec_for(ev_t *ev, ast_stmt_t *s)
{
    value_t *it = ev_eval(ev, s->u.loop.iter);
    value_t **items = NULL;
    int n = 0, cap = 0, i;
    if (it->kind == V_LOOPITER && it->u.it->wave) {
        exec_persistent(ev, s, it->u.it);
        return;
    }
    if (it->kind == V_LOOPITER) {
        exec_rt_loop(ev, s, it->u.it);
        return;
    }
    if (it->kind == V_RANGE) {
        int64_t x;
        ev->ct_loops++;
        for (x = it->u.range.start; it->u.range.step > 0 ? x < it->u.range.stop : x > it->u.range.stop;
             x += it->u.range.step) {
            ev_step(ev, s->loc);
            ev_assign_to(ev, s->u.loop.target, v_int(ev, x), s->loc);
            ev_exec_block(ev, &s->u.loop.body);
            if (ev->ctl == CTL_BREAK) { ev->ctl = CTL_NONE; break; }
            if (ev->ctl == CTL_CONTINUE) ev->ctl = CTL_NONE;
            if (ev->ctl == CTL_RETURN) break;
        }
        ev->ct_loops--;
        return;
    }
    if (it->kind == V_SEQ || it->kind == V_STR || it->kind == V_DICT) {
        if (it->kind == V_SEQ) {
            ev_expand_into(ev, it, &items, &n, &cap, s->loc);
        } else if (it->kind == V_DICT) {
            for (i = 0; i + 1 < it->u.seq.n; i += 2) ev_seq_push(ev, &items, &n, &cap, it->u.seq.items[i], s->loc);
        } else {
            for (i = 0; i < (int)it->u.s.len; i++) ev_seq_push(ev, &items, &n, &cap, v_str(ev, it->u.s.s + i, 1), s->loc);
        }
        ev->ct_loops++;
        for (i = 0; i < n; i++) {
            ev_step(ev, s->loc);
            ev_assign_to(ev, s->u.loop.target, items[i], s->loc);
            ev_exec_block(ev, &s->u.loop.body);
            if (ev->ctl == CTL_BREAK) { ev->ctl = CTL_NONE; break; }
            if (ev->ctl == CTL_CONTINUE) ev->ctl = CTL_NONE;
            if (ev->ctl == CTL_RETURN) break;
        }
        ev->ct_loops--;
        return;
    }
    ev_fail(ev, s->u.loop.iter->loc, "cannot loop over %s; use T.Parallel, T.Pipelined, T.serial, "
            "T.unroll, T.vectorized or range", v_kind_name(it));
}

/* ---- if / with / def -------------------------------------------------------- */

static void exec_if(ev_t *ev, ast_stmt_t *s)
{
    value_t *c = ev_eval(ev, s->u.cond.cond);
    tilec_ir_stmt_t *st, **saved, *then = NULL, *els = NULL;
    if (!v_is_rt(c)) {
        if (v_truth(ev, c, s->u.cond.cond->loc)) ev_exec_block(ev, &s->u.cond.body);
        else ev_exec_block(ev, &s->u.cond.orelse);
        return;
    }
    ev_require_kernel(ev, s->loc, "an `if` on a run-time condition");
    st = ev_stmt(ev, TILEC_ST_IF, s->loc);
    st->u.cond.cond = ex_bool(ev, ex_of(ev, c, s->u.cond.cond->loc));
    lk_uniform(ev, st->u.cond.cond, s->u.cond.cond->loc, "the condition of this `if`");
    saved = ev->tail;
    ev->rt_depth++;
    ev->guarded++;
    ev->tail = &then;
    ev_exec_block(ev, &s->u.cond.body);
    if (s->u.cond.orelse.n > 0) {
        ev->tail = &els;
        ev_exec_block(ev, &s->u.cond.orelse);
    }
    ev->guarded--;
    ev->rt_depth--;
    ev->tail = saved;
    st->u.cond.then = then;
    st->u.cond.els = els;
    ev_emit(ev, st, s->loc);
}

static void exec_with(ev_t *ev, ast_stmt_t *s)
{
    value_t *kv = ev_eval(ev, s->u.with.ctx);
    tilec_ir_kernel_t *k;
    env_t *outer = ev->env;
    ast_expr_t *names[3] = {NULL, NULL, NULL};
    static const char *const dflt[3] = {"bx", "by", "bz"};
    int i, ng;
    if (kv->kind == V_WSCOPE) { /* T.ws(k), iket.range(): the whole block runs it, in program order (wsops.c) */
        if (s->u.with.target) ev_fail(ev, s->u.with.target->loc, "`with T.ws(...)` binds no name");
        ev_exec_block(ev, &s->u.with.body);
        return;
    }
    if (kv->kind == V_REDUCER) {   /* with T.attr(T.comm_reducer(...), "reduce_scope", ...) (lockstep.c) */
        value_t *saved = ev->lk.reducer;
        if (s->u.with.target) ev_fail(ev, s->u.with.target->loc, "`with T.attr(...)` binds no name");
        ev->lk.reducer = kv;
        ev_exec_block(ev, &s->u.with.body);
        ev->lk.reducer = saved;
        return;
    }
    if (kv->kind != V_KERNEL) {
        ev_fail(ev, s->u.with.ctx->loc, "only `with T.Kernel(...)` and `with T.ws(...)` are supported as with "
                "statements");
    }
    if (!ev->in_prim) ev_fail(ev, s->loc, "T.Kernel must be used directly in the body of a @T.prim_func");
    if (ev->tail) ev_fail(ev, s->loc, "a `with T.Kernel(...)` block cannot be inside another one");
    if (ev->kernel_done) {
        /* the next kernel of the chain: its grid again, over that kernel's symbol variables */
        ev_next_kernel(ev, s->loc);
        kv = ev_eval(ev, s->u.with.ctx);
    }
    k = ev->k;
    ng = kv->u.kern.ngrid;
    if (s->u.with.target && kv->u.kern.nogrid)
        ev_fail(ev, s->u.with.target->loc, "T.Kernel() with no grid extents is one block and has no block index to "
                "bind; drop the `as` target or give the grid");
    if (s->u.with.target) {
        ast_expr_t *t = s->u.with.target;
        if (t->kind == AST_NAME) {
            if (ng != 1)
                ev_fail(ev, t->loc, "T.Kernel has %d grid dimensions; unpack the block indices: as (%s)", ng,
                        ng == 2 ? "bx, by" : "bx, by, bz");
            names[0] = t;
        } else if (t->kind == AST_TUPLE || t->kind == AST_LIST) {
            if (t->u.seq.n != ng)
                ev_fail(ev, t->loc, "T.Kernel has %d grid dimension%s but %d block ind%s named", ng,
                        ng == 1 ? "" : "s", t->u.seq.n, t->u.seq.n == 1 ? "ex is" : "ices are");
            for (i = 0; i < ng; i++) {
                if (t->u.seq.items[i]->kind != AST_NAME) ev_fail(ev, t->u.seq.items[i]->loc, "a block index must be a name");
                names[i] = t->u.seq.items[i];
            }
        } else {
            ev_fail(ev, t->loc, "the target of `with T.Kernel(...) as` must be a name or a tuple of names");
        }
    }
    /* the block's names are its own: a later kernel of the chain does not see them */
    ev->env = ev_env_new(ev, outer);
    k->ngrid = ng;
    for (i = 0; i < ng; i++) {
        const char *nm = names[i] ? names[i]->u.name : dflt[i];
        k->grid[i] = ex_index(ev, kv->u.kern.grid[i], s->u.with.ctx->loc);
        k->block[i] = ev_chk(ev, tilec_ir_var_add(ev->a, k, ev_unique_var(ev, nm), TILEC_INT32, TILEC_VAR_BLOCK));
        if (names[i]) env_set(ev, ev->env, names[i]->u.name, v_expr(ev, tilec_ir_varref(ev->a, k->block[i])));
    }
    for (i = 0; i < 3; i++) k->threads[i] = kv->u.kern.threads[i];
    ev->tail = &k->body;
    ev_exec_block(ev, &s->u.with.body);
    ev_stale_check(ev);
    ev->tail = NULL;
    ev->env = outer;
    ev->kernel_done = 1;
}

int ev_is_prim_decorator(ast_expr_t *d)
{
    if (d->kind == AST_ATTR) return !strcmp(d->u.attr.name, "prim_func");
    if (d->kind == AST_NAME) return !strcmp(d->u.name, "prim_func");
    return 0;
}

/* A function value of a def (or lambda) without its decorators; the
 * defaults are evaluated now, as in Python. */
value_t *ev_make_func(ev_t *ev, ast_stmt_t *s)
{
    func_t *fn = ev_alloc(ev, sizeof *fn);
    value_t *v = v_new(ev, V_FUNC);
    int i;
    fn->def = s;
    fn->closure = ev->env;
    fn->kind = FN_PLAIN;
    fn->defaults = ev_alloc(ev, sizeof *fn->defaults * (size_t)(s->u.def.nparams + 1));
    for (i = 0; i < s->u.def.nparams; i++) {
        if (s->u.def.params[i].dflt) fn->defaults[i] = ev_eval(ev, s->u.def.params[i].dflt);
    }
    v->u.fn = fn;
    return v;
}

static void exec_def(ev_t *ev, ast_stmt_t *s)
{
    func_t *fn;
    value_t *v;
    int i;
    /* decorators are evaluated before the defaults, as in Python */
    value_t **decs = ev_alloc(ev, sizeof *decs * (size_t)(s->u.def.ndecorators + 1));
    for (i = 0; i < s->u.def.ndecorators; i++) decs[i] = ev_eval(ev, s->u.def.decorators[i]);
    v = ev_make_func(ev, s);
    fn = v->u.fn;
    for (i = 0; i < s->u.def.ndecorators; i++) {
        ast_expr_t *de = s->u.def.decorators[i];
        value_t *dv = decs[i];
        if (dv->kind == V_BUILTIN && dv->u.bi.id == BI_PRIM_FUNC) {
            fn->kind = FN_PRIM;
        } else if (dv->kind == V_BUILTIN && dv->u.bi.id == BI_MACRO) {
            fn->kind = FN_MACRO;
        } else if (dv->kind == V_BUILTIN && (dv->u.bi.id == BI_JIT)) {
            fn->jit = 1;
        } else if (dv->kind == V_JIT) {
            fn->jit = 1;
            fn->nout = dv->u.jit.nout;
            fn->out_idx = dv->u.jit.out_idx;
            fn->pass_configs = dv->u.jit.pass_configs;
            fn->pc_loc = dv->u.jit.pc_loc;
        } else if (dv->kind == V_BUILTIN && dv->u.bi.id == BI_IDENTITY_DEC) {
            /* tilelang.transform.simplify_prim_func and test markers: the kernel as written */
        } else if (at_apply(ev, fn, dv)) {
            /* the tuning space, kept (autotune.c) */
        } else if (dv->kind == V_OPAQUE) {
            ev_fail(ev, de->loc, "decorator '%s' is outside the subset tilec supports: use @T.prim_func, @T.macro, "
                    "@tilelang.jit(...) or @autotune(...)", dv->u.opq);
        } else {
            ev_fail(ev, de->loc, "unsupported decorator: use @T.prim_func, @T.macro or @tilelang.jit(...)");
        }
    }
    env_set(ev, ev->env, s->u.def.name, v);
}

/* The value `from MODULE import NAME` binds: a member tilec evaluates, a
 * submodule, or an opaque stand-in (modules.c). */
static value_t *import_member(ev_t *ev, const char *from, ast_import_name_t *in)
{
    value_t *m, *v = sib_import(ev, from, in->name, in->loc);
    size_t n;
    char *path;
    if (v) return v;
    m = mod_lookup(ev, from);
    if (m->kind == V_NS) {
        v = bi_lookup_ns(ev, m->u.ns, in->name);
        if (!v && m->u.ns == NS_T && bi_unsupported_reason(in->name))
            ev_fail(ev, in->loc, "T.%s is outside the subset tilec supports: %s", in->name,
                    bi_unsupported_reason(in->name));
        if (!v && m->u.ns == NS_T)
            ev_fail(ev, in->loc, "'tilelang.language' has no member '%s' in the supported subset of TileLang", in->name);
        if (v) return v;
    }
    n = strlen(from) + strlen(in->name) + 2;
    path = ev_alloc(ev, n);
    snprintf(path, n, "%s.%s", from, in->name);
    return mod_lookup(ev, path);
}

static void exec_import(ev_t *ev, ast_stmt_t *s)
{
    int i;
    for (i = 0; i < s->u.import.n; i++) {
        ast_import_name_t *in = &s->u.import.names[i];
        value_t *v;
        const char *bind = in->asname;
        const char *from = s->u.import.from;
        if (!in->name) ev_fail(ev, in->loc, "malformed import");
        if (!from) {
            if (bind) {
                v = mod_lookup(ev, in->name);
            } else {
                /* `import a.b.c` binds `a` */
                const char *dot = strchr(in->name, '.');
                size_t n = dot ? (size_t)(dot - in->name) : strlen(in->name);
                char *first = ev_alloc(ev, n + 1);
                memcpy(first, in->name, n);
                bind = first;
                v = mod_lookup(ev, first);
            }
        } else if (!strcmp(in->name, "*")) {
            if (!strcmp(from, "tilelang.autotuner")) {
                /* what TileLang's examples take from it */
                env_set(ev, ev->env, "autotune", bi_lookup_ns(ev, NS_TILELANG, "autotune"));
                env_set(ev, ev->env, "AutoTuner", mod_opaque(ev, "tilelang.autotuner.AutoTuner"));
                continue;
            }
            if (!strcmp(from, "tilelang.language"))
                ev_fail(ev, in->loc, "`from tilelang.language import *` is not supported; use `import tilelang.language "
                        "as T`");
            ev_fail(ev, in->loc, "`from %s import *` is outside the subset tilec supports: it cannot know which names "
                    "it binds; import the names you use", from);
        } else {
            v = import_member(ev, from, in);
            if (!bind) bind = in->name;
        }
        env_set(ev, ev->env, bind, v);
    }
}

/* ---- while ------------------------------------------------------------------ */

/* How a statement list writes buffer b: the number of statements that
 * write it (anywhere below), the top-level store among them, and the
 * assignments of let var t. */
typedef struct wscan { const tilec_ir_buffer_t *b; const tilec_ir_var_t *t; int writes, tsets; tilec_ir_stmt_t *store; } wscan_t;

static void while_scan(wscan_t *w, tilec_ir_stmt_t *s, int top)
{
    for (; s; s = s->next) {
        const tilec_ir_buffer_t *dst = NULL;
        switch (s->kind) {
        case TILEC_ST_FOR: while_scan(w, s->u.loop.body, 0); break;
        case TILEC_ST_IF: while_scan(w, s->u.cond.then, 0); while_scan(w, s->u.cond.els, 0); break;
        case TILEC_ST_STORE:
            dst = s->u.store.buf;
            if (dst == w->b && top) w->store = s;
            break;
        case TILEC_ST_ASSIGN: w->tsets += s->u.assign.var == w->t; break;
        case TILEC_ST_ATOMIC: dst = s->u.atomic.buf; break;
        case TILEC_ST_COPY: case TILEC_ST_COPY_ASYNC: dst = s->u.copy.dst.buf; break;
        case TILEC_ST_FILL: dst = s->u.fill.dst.buf; break;
        case TILEC_ST_GEMM: dst = s->u.gemm.c; break;
        case TILEC_ST_REDUCE: dst = s->u.reduce.dst; break;
        case TILEC_ST_CUMSUM: dst = s->u.cumsum.dst; break;
        default: break;
        }
        w->writes += dst == w->b;
    }
}

/* The top-level assignment of let var t in list s, before statement end. */
static tilec_ir_stmt_t *while_let_before(tilec_ir_stmt_t *s, const tilec_ir_var_t *t, const tilec_ir_stmt_t *end)
{
    for (; s && s != end; s = s->next)
        if (s->kind == TILEC_ST_ASSIGN && s->u.assign.var == t) return s;
    return NULL;
}

static int is_load_of(const tilec_ir_expr_t *e, const tilec_ir_buffer_t *b)
{
    return e->kind == TILEC_EX_LOAD && e->u.load.buf == b;
}

/* `while v < E:` on a run-time condition, v a T.alloc_var that only the
 * loop's step changes:
 *     v = start
 *     while v < E: body; v = v + S      (or v += S, or t = v ... v = t + S)
 * runs exactly max(0, ceildiv(E - v0, S)) times (E - v0 + 1 for <=), v0
 * being v when the loop starts, because S > 0 is a compile-time constant,
 * E reads neither a buffer nor a temporary, and no other statement of the
 * body writes v.  The tile IR has counted loops, so it becomes
 *     v0 = v
 *     for w in T.serial(ceildiv(max(E - v0 (+ 1), 0), S)): if v < E: body
 * (the guard changes nothing when the count is right).  The proof is made
 * on the body's IR once it is built; what it cannot prove is a diagnostic. */
static void exec_rt_while(ev_t *ev, ast_stmt_t *s, value_t *c)
{
    ast_loc_t cl = s->u.wloop.cond->loc;
    tilec_ir_expr_t *ce = ex_of(ev, c, cl), *x, *e, *v0, *d, *step, *inc;
    tilec_ir_stmt_t *let0, *loop, *guard, *then = NULL;
    tilec_ir_var_t *v0var, *w;
    tilec_binop_t op;
    wscan_t sc;
    static const char *const need = "a while loop on a run-time condition needs the form `while v < E:` (or <=, "
                                    "E > v, E >= v) with v a T.alloc_var changed only by one `v = v + S` (S a "
                                    "positive compile-time integer) at the end of the body, and E reading no "
                                    "buffer nor temporary";
    ev_require_kernel(ev, s->loc, "a while loop on a run-time condition");
    if (ce->kind != TILEC_EX_BINARY) ev_fail(ev, cl, "%s", need);
    op = ce->u.bin.op;
    if ((op == TILEC_BIN_LT || op == TILEC_BIN_LE) && ce->u.bin.a->kind == TILEC_EX_LOAD) {
        x = ce->u.bin.a;
        e = ce->u.bin.b;
    } else if ((op == TILEC_BIN_GT || op == TILEC_BIN_GE) && ce->u.bin.b->kind == TILEC_EX_LOAD) {
        x = ce->u.bin.b;
        e = ce->u.bin.a;
        op = op == TILEC_BIN_GT ? TILEC_BIN_LT : TILEC_BIN_LE;
    } else {
        ev_fail(ev, cl, "%s", need);
    }
    if (x->u.load.buf->scope != TILEC_SCOPE_VAR || !tilec_dtype_is_int(x->dtype) || ex_reads_state(e, 0))
        ev_fail(ev, cl, "%s", need);
    /* v0 = v, read once before the loop */
    v0var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "while_start"), x->dtype, TILEC_VAR_LET));
    let0 = ev_stmt(ev, TILEC_ST_ASSIGN, s->loc);
    let0->u.assign.var = v0var;
    let0->u.assign.value = x;
    note_let(ev, v0var, x);
    ev_emit(ev, let0, s->loc);
    loop = ev_stmt(ev, TILEC_ST_FOR, s->loc);
    loop->u.loop.kind = TILEC_LOOP_SERIAL;
    loop->u.loop.num_stages = 1;
    w = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "while_trip"), TILEC_INT32, TILEC_VAR_LOOP));
    loop->u.loop.var = w;
    guard = ev_stmt(ev, TILEC_ST_IF, s->loc);
    guard->u.cond.cond = ex_bool(ev, ce);
    ev_exec_guarded_body(ev, &s->u.wloop.body, &then);
    /* the proof: one write of v, a top-level store of X + S */
    memset(&sc, 0, sizeof sc);
    sc.b = x->u.load.buf;
    while_scan(&sc, then, 1);
    if (sc.writes != 1 || !sc.store) ev_fail(ev, cl, "%s (%d statement%s of the body write%s '%s')", need, sc.writes,
                                               sc.writes == 1 ? "" : "s", sc.writes == 1 ? "s" : "", sc.b->name);
    inc = sc.store->u.store.value;
    if (inc->kind != TILEC_EX_BINARY || inc->u.bin.op != TILEC_BIN_ADD) ev_fail(ev, cl, "%s", need);
    step = inc->u.bin.b->kind == TILEC_EX_INT ? inc->u.bin.b : inc->u.bin.a;
    x = step == inc->u.bin.b ? inc->u.bin.a : inc->u.bin.b;
    if (step->kind != TILEC_EX_INT || step->u.i <= 0 || step->u.i > INT32_MAX) ev_fail(ev, cl, "%s", need);
    if (x->kind == TILEC_EX_VAR && x->u.var->kind == TILEC_VAR_LET) {   /* t = v ... v = t + S */
        tilec_ir_stmt_t *a = while_let_before(then, x->u.var, sc.store);
        sc.t = x->u.var;
        sc.tsets = 0;
        sc.writes = 0;
        while_scan(&sc, then, 1);
        if (!a || sc.tsets != 1 || !is_load_of(a->u.assign.value, sc.b)) ev_fail(ev, cl, "%s", need);
    } else if (!is_load_of(x, sc.b)) {
        ev_fail(ev, cl, "%s", need);
    }
    /* trips = ceildiv(max(E - v0 (+ 1), 0), S) */
    v0 = ev_chk(ev, tilec_ir_varref(ev->a, v0var));
    d = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_SUB, ex_cast(ev, e, TILEC_INT32), ex_cast(ev, v0, TILEC_INT32)));
    if (op == TILEC_BIN_LE) d = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, d, ex_int32(ev, 1)));
    d = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_MAX, d, ex_int32(ev, 0)));
    d = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, d, ex_int32(ev, step->u.i - 1)));
    loop->u.loop.extent = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_FLOORDIV, d, ex_int32(ev, step->u.i)));
    ev_set_loop_extent(ev, w, loop->u.loop.extent);
    guard->u.cond.then = then;
    loop->u.loop.body = guard;
    ev_emit(ev, loop, s->loc);
}

/* `while` runs at compile time on compile-time conditions; on a run-time
 * condition it is a counted kernel loop (exec_rt_while). */
static void exec_while(ev_t *ev, ast_stmt_t *s)
{
    value_t *sched = ts_of_while(ev, s);
    if (sched) {   /* `while sched.valid():` of a persistent tile scheduler (tilesched.c) */
        ts_exec_while(ev, s, sched);
        return;
    }
    ev->ct_loops++;
    for (;;) {
        value_t *c = ev_eval(ev, s->u.wloop.cond);
        if (v_is_rt(c)) {
            ev->ct_loops--;
            exec_rt_while(ev, s, c);
            return;
        }
        if (!v_truth(ev, c, s->u.wloop.cond->loc)) break;
        ev_step(ev, s->loc);
        ev_exec_block(ev, &s->u.wloop.body);
        if (ev->ctl == CTL_BREAK) { ev->ctl = CTL_NONE; break; }
        if (ev->ctl == CTL_CONTINUE) ev->ctl = CTL_NONE;
        if (ev->ctl == CTL_RETURN) break;
    }
    ev->ct_loops--;
}

/* `raise E("message")` at compile time is a diagnostic with the message;
 * the exception class need not exist (ValueError, NotImplementedError...). */
static void exec_raise(ev_t *ev, ast_stmt_t *s)
{
    ast_expr_t *x = s->u.ret.value;
    const char *cls = NULL, *msg = NULL;
    if (ev->rt_depth > 0)
        ev_fail(ev, s->loc, "raise under a run-time condition is not supported; a kernel cannot raise");
    if (!x) ev_fail(ev, s->loc, "raise");
    if (x->kind == AST_CALL && x->u.call.func->kind == AST_NAME && !env_get(ev->env, x->u.call.func->u.name)) {
        cls = x->u.call.func->u.name;
        if (x->u.call.nargs > 0) msg = v_to_str(ev, ev_eval(ev, x->u.call.args[0]), 0, x->loc)->u.s.s;
    } else if (x->kind == AST_NAME && !env_get(ev->env, x->u.name)) {
        cls = x->u.name;
    } else {
        msg = v_to_str(ev, ev_eval(ev, x), 0, x->loc)->u.s.s;
    }
    ev_fail(ev, s->loc, "%s%s%s", cls ? cls : "raised", msg ? ": " : "", msg ? msg : "");
}

void ev_exec_stmt(ev_t *ev, ast_stmt_t *s)
{
    if (ev->lk.on && !ev->lk.inloop) {   /* lock-step per-thread code (lockstep.c) */
        if (!ev->lk.pass) {
            lk_stmt(ev, s);
            return;
        }
        ev->lk.pass = 0;
    }
    ev_step(ev, s->loc);
    ev->cur_loc = s->loc;
    if (++ev->depth > EV_MAX_EXPR_DEPTH) ev_fail(ev, s->loc, "statements nested too deeply");
    switch (s->kind) {
    case AST_S_EXPR:
        if (s->u.expr->kind != AST_STR) (void)ev_eval(ev, s->u.expr);
        break;
    case AST_S_ASSIGN: exec_assign(ev, s); break;
    case AST_S_AUGASSIGN: exec_augassign(ev, s); break;
    case AST_S_ANNASSIGN: exec_annassign(ev, s); break;
    case AST_S_FOR: exec_for(ev, s); break;
    case AST_S_WHILE: exec_while(ev, s); break;
    case AST_S_RAISE: exec_raise(ev, s); break;
    case AST_S_IF: exec_if(ev, s); break;
    case AST_S_WITH: exec_with(ev, s); break;
    case AST_S_CLASS: cls_exec(ev, s); break;
    case AST_S_DEF: exec_def(ev, s); break;
    case AST_S_RETURN:
        if (ev->at_module) ev_fail(ev, s->loc, "return outside a function");
        if (ev->in_prim && s->u.ret.value && !ev->eager)
            ev_fail(ev, s->loc, "a @T.prim_func cannot return a value; write results into an output tensor");
        if (ev->rt_depth > 0)
            ev_fail(ev, s->loc, "return inside a run-time `if` or kernel loop is not supported");
        ev->retval = s->u.ret.value && !(ev->in_prim && ev->eager) ? ev_eval(ev, s->u.ret.value) : ev->none;
        ev->ctl = CTL_RETURN;
        break;
    case AST_S_PASS: break;
    case AST_S_BREAK: case AST_S_CONTINUE:
        if (ev->in_rt_loop && ev->ct_loops == 0)
            ev_fail(ev, s->loc, "%s is not supported in kernel loops", s->kind == AST_S_BREAK ? "break" : "continue");
        if (ev->ct_loops == 0) ev_fail(ev, s->loc, "'%s' outside a loop", s->kind == AST_S_BREAK ? "break" : "continue");
        ev->ctl = s->kind == AST_S_BREAK ? CTL_BREAK : CTL_CONTINUE;
        break;
    case AST_S_ASSERT: {
        value_t *c = ev_eval(ev, s->u.assert_.cond);
        if (v_is_rt(c))
            ev_fail(ev, s->u.assert_.cond->loc, "assert needs a compile-time condition; this one is only known at "
                    "run time");
        if (!v_truth(ev, c, s->loc)) {
            if (s->u.assert_.msg) {
                value_t *m = ev_eval(ev, s->u.assert_.msg);
                if (m->kind == V_STR) ev_fail(ev, s->loc, "assertion failed: %s", m->u.s.s);
                if (m->kind == V_INT) ev_fail(ev, s->loc, "assertion failed: %lld", (long long)m->u.i);
            }
            ev_fail(ev, s->loc, "assertion failed");
        }
        break;
    }
    case AST_S_IMPORT: exec_import(ev, s); break;
    default:
        ev_fail(ev, s->loc, "unsupported statement");
    }
    ev->depth--;
}

void ev_exec_guarded_body(ev_t *ev, const ast_block_t *b, tilec_ir_stmt_t **then)
{
    tilec_ir_stmt_t **saved = ev->tail;
    int saved_ct = ev->ct_loops;
    ev->tail = then;
    ev->rt_depth++;
    ev->in_rt_loop++;
    ev->guarded++;
    ev->ct_loops = 0;
    ev_exec_block(ev, b);
    ev->ct_loops = saved_ct;
    ev->guarded--;
    ev->in_rt_loop--;
    ev->rt_depth--;
    ev->tail = saved;
}

void ev_exec_block(ev_t *ev, const ast_block_t *b)
{
    int i;
    for (i = 0; i < b->n && ev->ctl == CTL_NONE; i++) {
        if (ev->tail && th_is_binding(b->s[i]) && th_skip_unused(ev, b, i)) continue;
        if (ev->tail && th_is_binding(b->s[i])) {   /* the rest of the block runs once per thread */
            th_exec_rest(ev, b, i);
            return;
        }
        ev_exec_stmt(ev, b->s[i]);
    }
}
