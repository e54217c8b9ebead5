/*
 * frontend/eval_kernel.c — the prim_func and the driver.
 *
 * tilec_frontend_compile() parses the file, runs the module-level
 * statements (imports, constants, defs), picks the entry (a kernel factory
 * or a top-level @T.prim_func), binds factory parameters from -D defines and
 * defaults, runs the factory at compile time, and evaluates the returned
 * @T.prim_func: its parameters become GLOBAL buffers and the statements of
 * its `with T.Kernel(...)` block become tile-IR statements.  Eager-style
 * factories (tensors declared in the body, `return C`) are built here too.
 */
#include "autotune.h"
#include "eval_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ast_loc_t NOLOC = {0, 0, 0};

/* ---- the prim_func -------------------------------------------------------- */

/* A scalar kernel parameter (`n: T.int32`, `alpha: T.float32`).  The IR's
 * kernels take tensors only: an integer scalar becomes a T.dynamic symbol of
 * its name (bound at launch, from -D on the command line), a float scalar
 * takes its -D value at compile time. */
static value_t *scalar_param(ev_t *ev, const char *name, tilec_dtype_t t, ast_loc_t loc)
{
    value_t *v;
    evdef_t *def;
    if (tilec_dtype_is_int(t)) {
        v = v_new(ev, V_SYM);
        v->u.sym = ev_new_sym(ev, name, loc);
        return v;
    }
    def = ev_find_def(ev, name);
    if (!def || def->used || !v_is_num(def->val))
        ev_fail(ev, loc, "scalar kernel parameter '%s: %s' needs its value at compile time: pass -D %s=VALUE "
                "(tilec kernels take tensors and integer symbols at launch; a %s scalar is a constant of the "
                "compiled kernel)", name, tilec_dtype_name(t), name, tilec_dtype_name(t));
    def->used = 1;
    return v_cast(ev, def->val, t, loc);
}

static void build_kernel(ev_t *ev, func_t *fn)
{
    ast_stmt_t *d = fn->def;
    env_t *env = ev_env_new(ev, fn->closure);
    int i, ntensors = 0;
    ev->env = env;
    ev->at_module = 0;
    if (d->u.def.nparams > 64) ev_fail(ev, d->loc, "a kernel takes at most 64 parameters");
    for (i = 0; i < d->u.def.nparams; i++) {
        ast_param_t *p = &d->u.def.params[i];
        value_t *tt;
        int j;
        if (!p->annotation)
            ev_fail(ev, p->loc, "kernel parameter '%s' needs a type: %s: T.Tensor((M, N), \"float16\")", p->name, p->name);
        for (j = 0; j < i; j++)
            if (!strcmp(d->u.def.params[j].name, p->name)) ev_fail(ev, p->loc, "duplicate parameter '%s'", p->name);
        tt = ev_eval(ev, p->annotation);
        if (tt->kind == V_DTYPE) {
            env_set(ev, env, p->name, scalar_param(ev, p->name, tt->u.dt, p->loc));
            if (i < 64) ev->scalar_mask |= (uint64_t)1 << i;
            ev->nscalars++;
            continue;
        }
        if (tt->kind != V_TENSORTYPE)
            ev_fail(ev, p->annotation->loc, "kernel parameter '%s' must be annotated with T.Tensor(shape, dtype), "
                    "got %s", p->name, v_kind_name(tt));
        ntensors++;
        env_set(ev, env, p->name, ev_param_add(ev, p->name, tt, p->annotation->loc));
    }
    (void)ntensors;
    ev->in_prim = 1;
    ev->ctl = CTL_NONE;
    ev_exec_block(ev, &d->u.def.body);
    ev->in_prim = 0;
    if (!ev->kernel_done)
        ev_fail(ev, d->loc, "@T.prim_func '%s' has no `with T.Kernel(...)` block", d->u.def.name);
    ev_check_let_uses(ev);
    mma_check(ev);
    retype_check(ev);
}

/* ---- eager-style kernels -------------------------------------------------- *
 * TileLang's newer style writes the kernel as the @tilelang.jit function
 * itself: tensors are parameters declared by `A: T.Tensor(shape, dtype)`
 * statements, sizes come from `M, N = T.const("M, N")`, outputs are
 * `C = T.empty(shape, dtype)`, and `return C` ends it.  The other parameters
 * are compile-time constants like a factory's.  Kernel parameters are the
 * declared tensors in the order of their declarations. */

/* Declares a global buffer of that shape as the next kernel parameter of ev->k. */
static tilec_ir_buffer_t *param_buffer(ev_t *ev, const char *name, tilec_dtype_t dt, int nd,
                                       tilec_ir_expr_t *const *shape, ast_loc_t loc)
{
    tilec_ir_buffer_t *b;
    if (ev->k->nbufs != ev->k->nparams) ev_fail(ev, loc, "internal: parameters must come first");
    if (ev->k->nparams >= 32) ev_fail(ev, loc, "a kernel takes at most 32 tensor parameters");
    b = ev_chk(ev, tilec_ir_buffer_add(ev->a, ev->k, ev_unique_buf(ev, name), TILEC_SCOPE_GLOBAL, dt, nd, shape));
    ev->k->nparams++;
    return b;
}

/* A shape expression of the previous kernel of a chain over this kernel's
 * symbol variables (shapes hold only constants, symbols and arithmetic). */
static tilec_ir_expr_t *resym(ev_t *ev, const tilec_ir_expr_t *e, ast_loc_t loc, int depth)
{
    tilec_ir_expr_t *c;
    if (depth > EV_MAX_IR_DEPTH) ev_fail(ev, loc, "a tensor shape expression is nested too deeply");
    if (e->kind == TILEC_EX_VAR) {
        sym_t *s;
        for (s = ev->syms; s; s = s->next)
            if (s->prev == e->u.var) return sym_expr(ev, s);
        ev_fail(ev, loc, "internal: a tensor shape depends on '%s', which is not a T.dynamic symbol", e->u.var->name);
    }
    c = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *c));   /* IR arena: the module keeps it */
    *c = *e;
    switch (e->kind) {
    case TILEC_EX_UNARY: c->u.un.a = resym(ev, e->u.un.a, loc, depth + 1); break;
    case TILEC_EX_BINARY:
        c->u.bin.a = resym(ev, e->u.bin.a, loc, depth + 1);
        c->u.bin.b = resym(ev, e->u.bin.b, loc, depth + 1);
        break;
    case TILEC_EX_SELECT:
        c->u.sel.cond = resym(ev, e->u.sel.cond, loc, depth + 1);
        c->u.sel.a = resym(ev, e->u.sel.a, loc, depth + 1);
        c->u.sel.b = resym(ev, e->u.sel.b, loc, depth + 1);
        break;
    case TILEC_EX_CAST: c->u.cast.a = resym(ev, e->u.cast.a, loc, depth + 1); break;
    case TILEC_EX_LOAD: ev_fail(ev, loc, "internal: a tensor shape reads memory");
    default: break;
    }
    return c;
}

value_t *ev_param_add(ev_t *ev, const char *name, value_t *tt, ast_loc_t loc)
{
    value_t *bv = v_new(ev, V_BUF);
    tilec_ir_expr_t *shape[TILEC_IR_MAX_DIMS];
    int j, nd = tt->u.tt.shape->u.seq.n;
    for (j = 0; j < nd; j++) shape[j] = ex_index(ev, tt->u.tt.shape->u.seq.items[j], loc);
    bv->u.buf = param_buffer(ev, name, tt->u.tt.dt, nd, shape, loc);
    if (ev->nkparams == ev->cap_kparams) {
        int nc = ev->cap_kparams ? 2 * ev->cap_kparams : 8;
        value_t **np = ev_alloc(ev, sizeof *np * (size_t)nc);
        if (ev->nkparams) memcpy(np, ev->kparams, sizeof *np * (size_t)ev->nkparams);
        ev->kparams = np;
        ev->cap_kparams = nc;
    }
    ev->kparams[ev->nkparams++] = bv;
    return bv;
}

/* The -D values of k's symbols in var-id order (-1: none given). */
static int64_t *kernel_sym_values(ev_t *ev, const tilec_ir_kernel_t *k, int *nsym)
{
    int i, n = 0, j = 0;
    int64_t *vals;
    for (i = 0; i < k->nvars; i++) n += k->vars[i]->kind == TILEC_VAR_SYM;
    vals = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof(int64_t) * (size_t)(n + 1)));
    for (i = 0; i < k->nvars; i++) {
        sym_t *s;
        if (k->vars[i]->kind != TILEC_VAR_SYM) continue;
        vals[j] = -1;
        for (s = ev->syms; s; s = s->next)
            if (s->var == k->vars[i] && s->has_value) vals[j] = s->value;
        j++;
    }
    *nsym = n;
    return vals;
}

/* Several `with T.Kernel` blocks in one prim_func are kernels launched in
 * order (TileLang's reading: each block is a kernel of its own, one after
 * the other on the stream).  Each kernel of the chain has the prim_func's
 * tensor parameters, declared again over its own symbol variables; names
 * bound inside a kernel block stay in that block (exec_with runs each in a
 * scope of its own), so nothing of one kernel's IR reaches the next. */
void ev_next_kernel(ev_t *ev, ast_loc_t loc)
{
    tilec_ir_kernel_t *k = ev->k, *nk;
    struct kdone *kd;
    sym_t *s;
    int i;
    char name[256];
    if (ev->nkdone >= 15) ev_fail(ev, loc, "a @T.prim_func has at most 16 `with T.Kernel` blocks");
    ev_check_let_uses(ev);
    mma_check(ev);
    retype_check(ev);
    if (ev->nkdone == ev->cap_kdone) {
        int nc = ev->cap_kdone ? 2 * ev->cap_kdone : 4;
        struct kdone *nd = ev_alloc(ev, sizeof *nd * (size_t)nc);
        if (ev->nkdone) memcpy(nd, ev->kdone, sizeof *nd * (size_t)ev->nkdone);
        ev->kdone = nd;
        ev->cap_kdone = nc;
    }
    kd = &ev->kdone[ev->nkdone++];
    kd->k = k;
    kd->sym_values = kernel_sym_values(ev, k, &kd->nsyms);
    snprintf(name, sizeof name, "%.200s_%d", ev->kdone[0].k->name, ev->nkdone + 1);
    nk = ev_chk(ev, tilec_ir_kernel_new(ev->a, ev_irstr(ev, name)));
    nk->out_mask = k->out_mask;
    ev->k = nk;
    for (s = ev->syms; s; s = s->next) {
        s->prev = s->var;
        s->var = NULL;
    }
    /* per-kernel bookkeeping indexed by var id */
    ev->nlet_uses = 0;
    if (ev->let_cap) {
        memset(ev->let_nset, 0, sizeof *ev->let_nset * (size_t)ev->let_cap);
        memset(ev->let_def, 0, sizeof *ev->let_def * (size_t)ev->let_cap);
    }
    for (i = 0; i < ev->nloop_ext; i++) ev->loop_ext[i] = -1;
    for (i = 0; i < ev->nkparams; i++) {
        tilec_ir_buffer_t *b = ev->kparams[i]->u.buf;
        tilec_ir_expr_t *shape[TILEC_IR_MAX_DIMS];
        int j;
        for (j = 0; j < b->ndim; j++) shape[j] = resym(ev, b->shape[j], loc, 0);
        ev->kparams[i]->u.buf = param_buffer(ev, b->name, b->dtype, b->ndim, shape, loc);
    }
    ev->kernel_done = 0;
}

/* Whether e reads a variable (of the kernel being left). */
static int ex_has_var(const tilec_ir_expr_t *e, int depth)
{
    int i;
    if (!e || depth > 64) return 1;
    switch (e->kind) {
    case TILEC_EX_VAR: return 1;
    case TILEC_EX_LOAD:
        for (i = 0; i < e->u.load.buf->ndim; i++)
            if (ex_has_var(e->u.load.idx[i], depth + 1)) return 1;
        return 1;   /* a buffer of the kernel being left */
    case TILEC_EX_UNARY: return ex_has_var(e->u.un.a, depth + 1);
    case TILEC_EX_BINARY: return ex_has_var(e->u.bin.a, depth + 1) || ex_has_var(e->u.bin.b, depth + 1);
    case TILEC_EX_SELECT:
        return ex_has_var(e->u.sel.cond, depth + 1) || ex_has_var(e->u.sel.a, depth + 1) ||
               ex_has_var(e->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return ex_has_var(e->u.cast.a, depth + 1);
    default: return 0;
    }
}

/* The on-chip buffers declared again after a T.sync_grid() must be written
 * before they are read: walks the kernel body in program order (a write
 * anywhere, a branch or part of the buffer included, counts). */
typedef struct stale {
    ev_t *ev;
    tilec_ir_buffer_t **b;
    unsigned char *w;
    int n;
} stale_t;

static void st_buf(stale_t *s, const tilec_ir_buffer_t *b, int write, const tilec_ir_stmt_t *at)
{
    int i;
    for (i = 0; i < s->n; i++) {
        if (s->b[i] != b) continue;
        if (!write && !s->w[i]) {
            ast_loc_t l;
            l.line = at->line;
            l.col = at->col;
            ev_fail(s->ev, l, "on-chip buffer '%s' is read after T.sync_grid() before it is written again: "
                    "tilec runs the code after the sync as a kernel of its own, so on-chip buffers do not keep "
                    "their contents across it", b->name);
        }
        if (write) s->w[i] = 1;
    }
}

static void st_expr(stale_t *s, const tilec_ir_expr_t *e, const tilec_ir_stmt_t *at, int depth)
{
    int i;
    if (!e || depth > EV_MAX_IR_DEPTH) return;
    switch (e->kind) {
    case TILEC_EX_LOAD:
        for (i = 0; i < e->u.load.buf->ndim; i++) st_expr(s, e->u.load.idx[i], at, depth + 1);
        st_buf(s, e->u.load.buf, 0, at);
        break;
    case TILEC_EX_UNARY: st_expr(s, e->u.un.a, at, depth + 1); break;
    case TILEC_EX_BINARY: st_expr(s, e->u.bin.a, at, depth + 1); st_expr(s, e->u.bin.b, at, depth + 1); break;
    case TILEC_EX_SELECT:
        st_expr(s, e->u.sel.cond, at, depth + 1);
        st_expr(s, e->u.sel.a, at, depth + 1);
        st_expr(s, e->u.sel.b, at, depth + 1);
        break;
    case TILEC_EX_CAST: st_expr(s, e->u.cast.a, at, depth + 1); break;
    default: break;
    }
}

static void st_stmts(stale_t *s, const tilec_ir_stmt_t *st, int depth)
{
    int i;
    if (depth > EV_MAX_IR_DEPTH) return;
    for (; st; st = st->next) {
        switch (st->kind) {
        case TILEC_ST_FOR: st_expr(s, st->u.loop.extent, st, 0); st_stmts(s, st->u.loop.body, depth + 1); break;
        case TILEC_ST_IF:
            st_expr(s, st->u.cond.cond, st, 0);
            st_stmts(s, st->u.cond.then, depth + 1);
            st_stmts(s, st->u.cond.els, depth + 1);
            break;
        case TILEC_ST_STORE:
            for (i = 0; i < st->u.store.buf->ndim; i++) st_expr(s, st->u.store.idx[i], st, 0);
            st_expr(s, st->u.store.value, st, 0);
            st_buf(s, st->u.store.buf, 1, st);
            break;
        case TILEC_ST_ASSIGN: st_expr(s, st->u.assign.value, st, 0); break;
        case TILEC_ST_COPY: case TILEC_ST_COPY_ASYNC:
            st_buf(s, st->u.copy.src.buf, 0, st);
            st_buf(s, st->u.copy.dst.buf, 1, st);
            break;
        case TILEC_ST_FILL: st_buf(s, st->u.fill.dst.buf, 1, st); break;
        case TILEC_ST_GEMM:
            st_buf(s, st->u.gemm.a, 0, st);
            st_buf(s, st->u.gemm.b, 0, st);
            if (!st->u.gemm.clear_accum) st_buf(s, st->u.gemm.c, 0, st);
            st_buf(s, st->u.gemm.c, 1, st);
            break;
        case TILEC_ST_REDUCE:
            st_buf(s, st->u.reduce.src, 0, st);
            if (!st->u.reduce.clear) st_buf(s, st->u.reduce.dst, 0, st);
            st_buf(s, st->u.reduce.dst, 1, st);
            break;
        case TILEC_ST_CUMSUM: st_buf(s, st->u.cumsum.src, 0, st); st_buf(s, st->u.cumsum.dst, 1, st); break;
        case TILEC_ST_ATOMIC:
            st_expr(s, st->u.atomic.value, st, 0);
            st_buf(s, st->u.atomic.buf, 0, st);
            break;
        case TILEC_ST_PRINT:
            if (st->u.print.value) st_expr(s, st->u.print.value, st, 0);
            else st_buf(s, st->u.print.buf, 0, st);
            break;
        default: break;
        }
    }
}

void ev_stale_check(ev_t *ev)
{
    stale_t s;
    int i;
    if (!ev->stale_k) return;
    s.ev = ev;
    s.n = ev->stale_k->nbufs - ev->stale_k->nparams;
    s.b = ev->stale_k->bufs + ev->stale_k->nparams;
    s.w = ev_alloc(ev, (size_t)s.n + 1);
    for (i = 0; i < s.n; i++) s.w[i] = 0;
    ev->stale_k = NULL;
    st_stmts(&s, ev->k->body, 0);
}

/* T.sync_grid() at the top level of a kernel body: every block finishes
 * what comes before it before any block goes on, which is the next kernel
 * of the chain with the same grid (ev_next_kernel).  The block's on-chip
 * buffers are declared again in it, under the same names, and do NOT keep
 * their contents across the sync: a read before a write again is a
 * diagnostic (ev_stale_check); run-time values computed before it (scalar
 * temporaries, regions) cannot be used after it. */
void ev_grid_sync(ev_t *ev, ast_loc_t loc)
{
    tilec_ir_kernel_t *k = ev->k, *nk;
    env_t *e;
    int i, j;
    if (!ev->tail || ev->rt_depth || ev->thread_wrap)
        ev_fail(ev, loc, "T.sync_grid() is supported at the top level of a kernel body only (not inside a loop, "
                "an `if` or per-thread code): there it ends one kernel of the chain and starts the next");
    if (k->nmbars) ev_fail(ev, loc, "T.sync_grid() in a kernel with barrier objects is outside the subset");
    ev_stale_check(ev);
    ev_next_kernel(ev, loc);
    nk = ev->k;
    nk->ngrid = k->ngrid;
    for (i = 0; i < 3; i++) nk->threads[i] = k->threads[i];
    for (i = 0; i < k->ngrid; i++) {
        nk->grid[i] = resym(ev, k->grid[i], loc, 0);
        nk->block[i] = ev_chk(ev, tilec_ir_var_add(ev->a, nk, ev_unique_var(ev, k->block[i]->name), TILEC_INT32,
                                                   TILEC_VAR_BLOCK));
    }
    for (i = k->nparams; i < k->nbufs; i++) {
        tilec_ir_buffer_t *b = k->bufs[i], *nb;
        tilec_ir_expr_t *shape[TILEC_IR_MAX_DIMS];
        for (j = 0; j < b->ndim; j++) shape[j] = resym(ev, b->shape[j], loc, 0);
        nb = ev_chk(ev, tilec_ir_buffer_add(ev->a, nk, ev_unique_buf(ev, b->name), b->scope, b->dtype, b->ndim, shape));
        nb->nattrs = b->nattrs;
        nb->attrs = b->attrs;
    }
    /* the names in scope: block indices and buffers are the new kernel's, other run-time values end here */
    for (e = ev->env; e; e = e->parent) {
        for (i = 0; i < e->n; i++) {
            value_t *v = e->vals[i];
            if (v->kind == V_BUF && v->u.buf->scope != TILEC_SCOPE_GLOBAL) {
                for (j = k->nparams; j < k->nbufs; j++) {
                    if (k->bufs[j] != v->u.buf) continue;
                    e->vals[i] = v_new(ev, V_BUF);
                    e->vals[i]->u.buf = nk->bufs[j];
                }
            } else if (v->kind == V_EXPR && v->u.ex->kind == TILEC_EX_VAR && v->u.ex->u.var->kind == TILEC_VAR_BLOCK) {
                for (j = 0; j < k->ngrid; j++)
                    if (k->block[j] == v->u.ex->u.var) e->vals[i] = v_expr(ev, tilec_ir_varref(ev->a, nk->block[j]));
            } else if ((v->kind == V_EXPR && ex_has_var(v->u.ex, 0)) || v->kind == V_REGION) {
                e->vals[i] = v_new(ev, V_DEADLOOP);
                e->vals[i]->u.i = 1;   /* ended by T.sync_grid (ev_lookup says so) */
            }
        }
    }
    ev->tail = &nk->body;
    /* its on-chip buffers are all declared again: checked when the kernel ends (ev_stale_check) */
    ev->stale_k = nk;
}

value_t *ev_eager_tensor(ev_t *ev, const char *name, value_t *tt, int is_out, ast_loc_t loc)
{
    value_t *bv;
    if (!ev->eager || !ev->in_prim)
        ev_fail(ev, loc, "%s declares a kernel tensor only in an eager-style @tilelang.jit kernel",
                is_out ? "T.empty" : "a T.Tensor annotation");
    if (ev->tail || ev->kernel_done || ev->k->nbufs != ev->k->nparams)
        ev_fail(ev, loc, "declare every tensor (`A: T.Tensor(...)`, `C = T.empty(...)`) before the `with T.Kernel` block");
    if (is_out && ev->k->nparams < 32) ev->k->out_mask |= 1u << ev->k->nparams;
    bv = ev_param_add(ev, name ? name : "out", tt, loc);
    return bv;
}

value_t *ev_const_names(ev_t *ev, value_t *names, ast_loc_t loc)
{
    value_t *items[64], *r;
    const char *p;
    int n = 0, i;
    if (names->kind != V_STR) ev_fail(ev, loc, "T.const takes the names as one string: T.const(\"M, N, K\")");
    for (p = names->u.s.s; *p;) {
        const char *q;
        char *nm;
        evdef_t *d;
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        for (q = p; *q && *q != ' ' && *q != ','; q++)
            if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '_' || (*q >= '0' && *q <= '9')))
                ev_fail(ev, loc, "T.const: '%s' is not a list of names", names->u.s.s);
        if (*p >= '0' && *p <= '9') ev_fail(ev, loc, "T.const: '%s' is not a list of names", names->u.s.s);
        if (n == 64) ev_fail(ev, loc, "T.const takes at most 64 names");
        nm = ev_alloc(ev, (size_t)(q - p) + 1);
        memcpy(nm, p, (size_t)(q - p));
        d = ev_find_def(ev, nm);
        if (d) {   /* also when a module constant of the same name took it: one -D sets both */
            if (d->val->kind != V_INT || d->val->u.i < 1)
                ev_fail(ev, loc, "-D %s=%s: the size '%s' must be a positive integer", d->name, d->text, nm);
            d->used = 1;
            items[n++] = d->val;
        } else {
            value_t *sv = v_new(ev, V_SYM);
            sv->u.sym = ev_new_sym(ev, nm, loc);
            items[n++] = sv;
        }
        p = q;
    }
    if (n == 0) ev_fail(ev, loc, "T.const needs at least one name");
    if (n == 1) return items[0];
    r = v_seq(ev, n, 0);
    for (i = 0; i < n; i++) r->u.seq.items[i] = items[i];
    return r;
}

static int body_has_with(const ast_block_t *b, int depth)
{
    int i;
    if (depth > 50) return 0;
    for (i = 0; i < b->n; i++) {
        ast_stmt_t *s = b->s[i];
        if (s->kind == AST_S_WITH) return 1;
        if (s->kind == AST_S_IF &&
            (body_has_with(&s->u.cond.body, depth + 1) || body_has_with(&s->u.cond.orelse, depth + 1)))
            return 1;
    }
    return 0;
}

static int is_tensor_decl(const ast_block_t *b, const char *name)
{
    int i;
    for (i = 0; i < b->n; i++) {
        ast_stmt_t *s = b->s[i];
        if (s->kind == AST_S_ANNASSIGN && !s->u.ann.value && s->u.ann.target->kind == AST_NAME &&
            !strcmp(s->u.ann.target->u.name, name))
            return 1;
    }
    return 0;
}

/* Returns the values the compile-time parameters were bound to (NULL for
 * the tensors), for the tuning space (autotune.c). */
static value_t **build_eager(ev_t *ev, func_t *fn)
{
    ast_stmt_t *d = fn->def;
    env_t *env = ev_env_new(ev, fn->closure);
    value_t **args = ev_alloc(ev, sizeof *args * (size_t)(d->u.def.nparams + 1));
    int i;
    for (i = 0; i < d->u.def.nparams; i++) {
        ast_param_t *p = &d->u.def.params[i];
        evdef_t *df;
        if (is_tensor_decl(&d->u.def.body, p->name)) continue;
        df = ev_find_def(ev, p->name);
        if (df) {
            args[i] = ev_def_take(ev, df, fn->defaults[i]);
        } else if (fn->defaults[i] && fn->defaults[i]->kind == V_NONE && (args[i] = at_fallback(ev, fn, i, args))) {
            /* `p=None` that the autotune configs supply (TileLang's autotuner fills it): the first config's */
        } else if (fn->defaults[i]) {
            args[i] = fn->defaults[i];
        } else if (!(args[i] = at_fallback(ev, fn, i, args))) {
            ev_fail(ev, p->loc, "parameter '%s' of '%s' has no default value: pass -D %s=VALUE", p->name,
                    d->u.def.name, p->name);
        }
        env_set(ev, env, p->name, args[i]);
    }
    ev->env = env;
    ev->at_module = 0;
    ev->in_prim = 1;
    ev->eager = 1;
    ev->ctl = CTL_NONE;
    ev_exec_block(ev, &d->u.def.body);
    ev->ctl = CTL_NONE;
    ev->in_prim = 0;
    ev->eager = 0;
    if (!ev->kernel_done)
        ev_fail(ev, d->loc, "eager-style kernel '%s' has no `with T.Kernel(...)` block", d->u.def.name);
    ev_check_let_uses(ev);
    mma_check(ev);
    retype_check(ev);
    return args;
}

/* out_idx counts every parameter of the prim_func, scalars too (TileLang's
 * order); the mask is over the tensors (scalars are not IR parameters). */
static uint32_t out_mask_of(ev_t *ev, func_t *fn, ast_loc_t loc)
{
    uint32_t m = 0;
    int i, np = ev->k->nparams - ev->nscratch + ev->nscalars;
    for (i = 0; i < fn->nout; i++) {
        int64_t x = fn->out_idx[i], j, t;
        if (x < 0) x += np;
        if (x < 0 || x >= np)
            ev_fail(ev, loc, "out_idx %lld is out of range: the kernel has %d parameters",
                    (long long)fn->out_idx[i], np);
        for (j = 0, t = 0; j < x; j++) t += !(ev->scalar_mask >> j & 1);
        if (ev->scalar_mask >> x & 1)
            ev_fail(ev, loc, "out_idx %lld names a scalar parameter; outputs are tensors", (long long)fn->out_idx[i]);
        m |= 1u << t;
    }
    return m;
}

/* ---- entry selection -------------------------------------------------------- */

static int body_has_prim(const ast_block_t *b, int depth)
{
    int i, j;
    if (depth > 50) return 0;
    for (i = 0; i < b->n; i++) {
        ast_stmt_t *s = b->s[i];
        if (s->kind == AST_S_DEF) {
            for (j = 0; j < s->u.def.ndecorators; j++)
                if (ev_is_prim_decorator(s->u.def.decorators[j])) return 1;
        } else if (s->kind == AST_S_IF) {
            if (body_has_prim(&s->u.cond.body, depth + 1) || body_has_prim(&s->u.cond.orelse, depth + 1)) return 1;
        }
    }
    return 0;
}

static func_t *entry_func(ev_t *ev, ast_stmt_t *s)
{
    value_t *v = env_get(ev->genv, s->u.def.name);
    if (!v || v->kind != V_FUNC || v->u.fn->def != s) return NULL;
    if (v->u.fn->kind == FN_PRIM) return v->u.fn;
    if (v->u.fn->kind == FN_PLAIN && (v->u.fn->jit || body_has_prim(&s->u.def.body, 0))) return v->u.fn;
    return NULL;
}

static void list_entries(ev_t *ev, char *buf, size_t n)
{
    int i;
    size_t len = 0;
    buf[0] = '\0';
    for (i = 0; i < ev->mod->body.n; i++) {
        ast_stmt_t *s = ev->mod->body.s[i];
        if (s->kind == AST_S_DEF && entry_func(ev, s)) {
            int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", s->u.def.name);
            if (w < 0 || (size_t)w >= n - len) break;
            len += (size_t)w;
        }
    }
}

static void append_list(char *buf, size_t n, size_t *len, const char *name)
{
    int w;
    if (*len >= n) return;
    w = snprintf(buf + *len, n - *len, "%s%s", *len ? ", " : "", name);
    if (w < 0 || (size_t)w >= n - *len) {
        *len = n;
        return;
    }
    *len += (size_t)w;
}

static void check_defines(ev_t *ev, func_t *factory)
{
    int i, j;
    for (i = 0; i < ev->ndefs; i++) {
        char list[700];
        size_t len = 0;
        sym_t *s;
        if (ev->defs[i].used) continue;
        list[0] = '\0';
        if (factory)
            for (j = 0; j < factory->def->u.def.nparams; j++)
                append_list(list, sizeof list, &len, factory->def->u.def.params[j].name);
        for (j = 0; j < ev->nconsts; j++) append_list(list, sizeof list, &len, ev->consts[j]);
        for (s = ev->syms; s; s = s->next) append_list(list, sizeof list, &len, s->name);
        ev_fail(ev, NOLOC, "-D %s: '%s' is not a parameter, module constant or T.dynamic symbol of this "
                "program (you can set: %s)", ev->defs[i].name, ev->defs[i].name, len ? list : "nothing");
    }
}

static void finish(ev_t *ev, tilec_frontend_result_t *out, const char *entry);

static void run(ev_t *ev, const char *path, const char *src, size_t len, const char *entry,
                tilec_frontend_result_t *out)
{
    ast_stmt_t *chosen = NULL;
    func_t *fn, *factory = NULL, *prim;
    value_t *pv, **args = NULL;
    int i;
    ev->path = path;
    if (tilec_parse(&ev->s, ev->d, path, src, len, &ev->mod) < 0 || !ev->mod) longjmp(ev->jb, 1);
    ev->k = ev_chk(ev, tilec_ir_kernel_new(ev->a, "kernel"));
    ev->genv = ev->env = ev_env_new(ev, NULL);
    env_set(ev, ev->genv, "__name__", v_str(ev, "__tilec__", 9));
    ev->at_module = 1;
    ev_exec_block(ev, &ev->mod->body);
    ev->at_module = 0;
    for (i = 0; i < ev->mod->body.n; i++) {
        ast_stmt_t *s = ev->mod->body.s[i];
        if (s->kind != AST_S_DEF || !entry_func(ev, s)) continue;
        if (entry ? !strcmp(s->u.def.name, entry) : 1) chosen = s;
    }
    if (!chosen && entry) {
        /* a module-level name bound to a prim_func, e.g. `kernel = matmul(1024, 1024, 1024)` */
        value_t *bv = env_get(ev->genv, entry);
        if (bv && bv->kind == V_FUNC && bv->u.fn->kind == FN_PRIM) {
            ev->k->name = ev_irstr(ev, entry);
            build_kernel(ev, bv->u.fn);
            if (bv->u.fn->jit) ev->k->out_mask = out_mask_of(ev, bv->u.fn, bv->u.fn->def->loc);
            check_defines(ev, NULL);
            finish(ev, out, entry);
            return;
        }
    }
    if (!chosen) {
        char list[512];
        list_entries(ev, list, sizeof list);
        if (entry) ev_fail(ev, NOLOC, "no kernel factory or @T.prim_func named '%s' in %s (available: %s)", entry,
                           path ? path : "the program", list[0] ? list : "none");
        ev_fail(ev, NOLOC, "%s defines no kernel: write a @T.prim_func, or a factory function that defines one "
                "and returns it", path ? path : "the program");
    }
    fn = entry_func(ev, chosen);
    ev->pass_configs = fn->pass_configs;
    if (fn->kind == FN_PLAIN && !body_has_prim(&chosen->u.def.body, 0) && body_has_with(&chosen->u.def.body, 0)) {
        ev->k->name = ev_irstr(ev, chosen->u.def.name);
        args = build_eager(ev, fn);
        if (fn->nout) ev->k->out_mask |= out_mask_of(ev, fn, chosen->loc);
        check_defines(ev, fn);
        finish(ev, out, chosen->u.def.name);
        at_finish(ev, fn, args, out);
        return;
    }
    if (fn->kind == FN_PRIM) {
        prim = fn;
    } else {
        ast_stmt_t *d = chosen;
        args = ev_alloc(ev, sizeof *args * (size_t)(d->u.def.nparams + 1));
        factory = fn;
        for (i = 0; i < d->u.def.nparams; i++) {
            evdef_t *df = ev_find_def(ev, d->u.def.params[i].name);
            if (df) {
                args[i] = ev_def_take(ev, df, fn->defaults[i]);
            } else if (fn->defaults[i] && fn->defaults[i]->kind == V_NONE &&
                       (args[i] = at_fallback(ev, fn, i, args)) != NULL) {
                /* `p=None` that the autotune configs supply: the first config's */
            } else if (fn->defaults[i]) {
                args[i] = fn->defaults[i];
            } else if ((args[i] = at_fallback(ev, fn, i, args)) != NULL) {
                /* a parameter only the autotune configs supply: the first config's */
            } else {
                ev_fail(ev, d->u.def.params[i].loc, "parameter '%s' of '%s' has no default value: pass -D %s=VALUE",
                        d->u.def.params[i].name, d->u.def.name, d->u.def.params[i].name);
            }
        }
        pv = ev_call_func(ev, fn, d->u.def.nparams, args, 0, NULL, NULL, chosen->loc);
        if (pv->kind != V_FUNC || pv->u.fn->kind != FN_PRIM)
            ev_fail(ev, chosen->loc, "kernel factory '%s' must return its @T.prim_func (it returned %s)",
                    d->u.def.name, v_kind_name(pv));
        prim = pv->u.fn;
        if (!ev->pass_configs) ev->pass_configs = prim->pass_configs;
    }
    ev->k->name = ev_irstr(ev, chosen->u.def.name);
    build_kernel(ev, prim);
    if (factory && factory->jit) ev->k->out_mask = out_mask_of(ev, factory, chosen->loc);
    if (prim->jit) ev->k->out_mask |= out_mask_of(ev, prim, prim->def->loc);
    check_defines(ev, factory);
    finish(ev, out, chosen->u.def.name);
    if (factory) at_finish(ev, factory, args, out);
}

/* Fills the result: the modules and the launch values of the symbols. */
static void finish(ev_t *ev, tilec_frontend_result_t *out, const char *entry)
{
    int i;
    tilec_ir_kernel_t *first = ev->nkdone ? ev->kdone[0].k : ev->k;
    tilec_ir_module_t *m = ev_chk(ev, tilec_ir_module_new(ev->a));
    m->kernel = first;
    if (ev->nkdone) {
        /* the kernels of a chain share the outputs the last one was given (out_idx) */
        out->more = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *out->more * (size_t)ev->nkdone));
        out->nmore = ev->nkdone;
        for (i = 0; i < ev->nkdone; i++) {
            tilec_frontend_kernel_t *fk = &out->more[i];
            tilec_ir_kernel_t *k = i + 1 < ev->nkdone ? ev->kdone[i + 1].k : ev->k;
            k->out_mask |= ev->k->out_mask;
            fk->module = ev_chk(ev, tilec_ir_module_new(ev->a));
            fk->module->kernel = k;
            if (i + 1 < ev->nkdone) {
                fk->nsyms = ev->kdone[i + 1].nsyms;
                fk->sym_values = ev->kdone[i + 1].sym_values;
            } else {
                fk->sym_values = kernel_sym_values(ev, k, &fk->nsyms);
            }
        }
        first->out_mask |= ev->k->out_mask;
        out->sym_values = ev->kdone[0].sym_values;
        out->nsyms = ev->kdone[0].nsyms;
    } else {
        out->sym_values = kernel_sym_values(ev, first, &out->nsyms);
    }
    out->module = m;
    if (ev->pass_configs) {
        value_t *pc = ev->pass_configs;
        int np = pc->u.seq.n / 2;
        out->pass_config_keys = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof(char *) * (size_t)(np + 1)));
        out->pass_config_values = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof(char *) * (size_t)(np + 1)));
        for (i = 0; i < np; i++) {
            value_t *k = pc->u.seq.items[2 * i], *v = pc->u.seq.items[2 * i + 1];
            char buf[64];
            const char *txt = buf;
            if (v->kind == V_BOOL) txt = v->u.i ? "True" : "False";
            else if (v->kind == V_INT) snprintf(buf, sizeof buf, "%lld", (long long)v->u.i);
            else if (v->kind == V_FLOAT) snprintf(buf, sizeof buf, "%.17g", v->u.f);
            else if (v->kind == V_STR) txt = v->u.s.s;
            else if (v->kind == V_NONE) txt = "None";
            else txt = v_kind_name(v);   /* checked by tilelang.jit (builtins.c) */
            out->pass_config_keys[i] = ev_irstr(ev, k->u.s.s);
            out->pass_config_values[i] = ev_irstr(ev, txt);
        }
        out->npass_configs = np;
    }
    out->entry = ev_irstr(ev, entry);
}

int tilec_frontend_compile(tilec_arena_t *a, tilec_diag_t *d, const char *path,
                           const char *src, size_t len, const char *entry,
                           const tilec_define_t *defs, int ndefs,
                           tilec_frontend_result_t *out)
{
    ev_t *volatile evp;
    ev_t *ev;
    int rc = -1, i, j;
    if (out) memset(out, 0, sizeof *out);
    if (!a || !d || !out || (!src && len)) {
        if (d) tilec_diag_error(d, 0, 0, "invalid arguments to the frontend");
        return -1;
    }
    evp = calloc(1, sizeof *evp);
    if (!evp) return tilec_diag_error(d, 0, 0, "out of memory");
    ev = evp;
    ev->a = a;
    ev->a_bytes0 = a->bytes;
    ev->d = d;
    tilec_arena_init(&ev->s);
    ev->syms_tail = &ev->syms;
    if (setjmp(ev->jb) == 0) {
        ev = evp;
        ev->none = v_new(ev, V_NONE);
        ev->vtrue = v_new(ev, V_BOOL);
        ev->vtrue->u.i = 1;
        ev->vfalse = v_new(ev, V_BOOL);
        if (ndefs < 0 || (ndefs > 0 && !defs)) ev_fail(ev, NOLOC, "invalid defines");
        ev->defs = ev_alloc(ev, sizeof *ev->defs * (size_t)(ndefs + 1));
        ev->ndefs = ndefs;
        for (i = 0; i < ndefs; i++) {
            const char *why;
            if (!defs[i].name || !*defs[i].name) ev_fail(ev, NOLOC, "-D needs NAME=VALUE");
            for (j = 0; j < i; j++)
                if (!strcmp(defs[j].name, defs[i].name)) ev_fail(ev, NOLOC, "-D %s is given twice", defs[i].name);
            ev->defs[i].name = defs[i].name;
            ev->defs[i].text = defs[i].value ? defs[i].value : "";
            ev->defs[i].val = v_parse_define(ev, ev->defs[i].text, &why);
            if (!ev->defs[i].val) ev_fail(ev, NOLOC, "-D %s=%s: %s", defs[i].name, ev->defs[i].text, why);
        }
        run(ev, path, src ? src : "", len, entry, out);
        rc = 0;
    } else {
        ev = evp;
        if (d->nerrors == 0) tilec_diag_error(d, 0, 0, "compilation failed");
        memset(out, 0, sizeof *out);
        rc = -1;
    }
    tilec_arena_destroy(&ev->s);
    free(ev);
    return rc;
}
