/*
 * frontend/eval.c — the evaluator's core: errors and memory, environments,
 * names, -D defines, expressions and calls of the program's own functions.
 *
 * The evaluator runs the program at compile time: module-level statements,
 * kernel factories and helpers are ordinary Python evaluated here, and what
 * a @T.prim_func's kernel does becomes tile IR.  Statements are in
 * eval_stmt.c, the prim_func/entry/driver (tilec_frontend_compile) in
 * eval_kernel.c.  See eval_internal.h for the error model (longjmp to the
 * entry point; everything lives in arenas).
 */
#include "autotune.h"
#include "eval_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ast_loc_t NOLOC = {0, 0, 0};

/* ---- errors, memory ------------------------------------------------------- */

_Noreturn void ev_fail(ev_t *ev, ast_loc_t loc, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (loc.file > 0 && loc.file <= ev->nsibs) {
        /* in an imported sibling file: its name and source line */
        const struct sib *f = &ev->sibs[loc.file - 1];
        const char *p = ev->d->path, *s = ev->d->src;
        size_t n = ev->d->src_len;
        ev->d->path = f->path;
        ev->d->src = f->src;
        ev->d->src_len = f->len;
        tilec_diag_error(ev->d, loc.line, loc.col, "%s", msg);
        ev->d->path = p;
        ev->d->src = s;
        ev->d->src_len = n;
    } else {
        tilec_diag_error(ev->d, loc.line, loc.col, "%s", msg);
    }
    longjmp(ev->jb, 1);
}

void *ev_alloc(ev_t *ev, size_t n)
{
    void *p;
    if (ev->s.bytes > EV_MAX_SCRATCH)
        ev_fail(ev, ev->cur_loc, "compile-time evaluation uses too much memory (over %zu MiB); are huge tuples "
                "or strings being built?", EV_MAX_SCRATCH >> 20);
    p = tilec_arena_alloc(&ev->s, n);
    if (!p) ev_fail(ev, NOLOC, "out of memory");
    return p;
}

void *ev_chk(ev_t *ev, void *p)
{
    if (!p) ev_fail(ev, ev->cur_loc, "out of memory");
    if (ev->a->bytes - ev->a_bytes0 > EV_MAX_SCRATCH)
        ev_fail(ev, ev->cur_loc, "the kernel is too large (over %zu MiB of IR); is a compile-time loop "
                "unrolling too much?", EV_MAX_SCRATCH >> 20);
    return p;
}

const char *ev_irstr(ev_t *ev, const char *s)
{
    return ev_chk(ev, tilec_arena_strdup(ev->a, s ? s : ""));
}

void ev_step(ev_t *ev, ast_loc_t loc)
{
    if (++ev->steps > EV_MAX_STEPS)
        ev_fail(ev, loc, "compile-time evaluation takes too long (more than %ld steps); is a loop "
                "over a huge range running at compile time?", EV_MAX_STEPS);
}

/* ---- environments --------------------------------------------------------- */

env_t *ev_env_new(ev_t *ev, env_t *parent)
{
    env_t *e = ev_alloc(ev, sizeof *e);
    e->parent = parent;
    return e;
}

int ev_env_find(env_t *e, const char *name)
{
    int i;
    if (e->n > ENV_LINEAR) return nt_get(&e->tab, name);
    for (i = e->n - 1; i >= 0; i--)
        if (!strcmp(e->names[i], name)) return i;
    return -1;
}

void env_set(ev_t *ev, env_t *e, const char *name, value_t *v)
{
    int i = ev_env_find(e, name);
    if (i >= 0) {
        e->vals[i] = v;
        return;
    }
    if (e->n == e->cap) {
        int ncap = e->cap ? e->cap * 2 : 16;
        const char **nn = ev_alloc(ev, (size_t)ncap * sizeof *nn);
        value_t **nv = ev_alloc(ev, (size_t)ncap * sizeof *nv);
        if (e->n) {
            memcpy(nn, e->names, (size_t)e->n * sizeof *nn);
            memcpy(nv, e->vals, (size_t)e->n * sizeof *nv);
        }
        e->names = nn;
        e->vals = nv;
        e->cap = ncap;
    }
    e->names[e->n] = name;
    e->vals[e->n++] = v;
    if (e->n == ENV_LINEAR + 1)
        for (i = 0; i < e->n; i++) nt_put(ev, &e->tab, e->names[i], i);
    else if (e->n > ENV_LINEAR + 1)
        nt_put(ev, &e->tab, name, e->n - 1);
}

value_t *env_get(env_t *e, const char *name)
{
    for (; e; e = e->parent) {
        int i = ev_env_find(e, name);
        if (i >= 0) return e->vals[i];
    }
    return NULL;
}

value_t *ev_lookup(ev_t *ev, const char *name, ast_loc_t loc)
{
    value_t *v = env_get(ev->env, name);
    if (v && v->kind == V_DEADLOOP && v->u.i == 1)
        ev_fail(ev, loc, "'%s' is a run-time value of the kernel before T.sync_grid(); it cannot be used after it "
                "(compute it again)", name);
    if (v && v->kind == V_DEADLOOP && v->u.i == 3)
        ev_fail(ev, loc, "'%s' is a per-thread value of a warp role's statement; it exists only in that statement",
                name);
    if (v && v->kind == V_DEADLOOP && v->u.i == 2)
        ev_fail(ev, loc, "'%s' is a run-time value inside a loop of warp roles; ordering the roles' barrier "
                "operations needs their indices, parities and conditions at compile time", name);
    if (v && v->kind == V_DEADLOOP)
        ev_fail(ev, loc, "'%s' is the variable of a kernel loop that has ended; it exists only inside its loop",
                name);
    if (v) return v;
    v = bi_lookup_python(ev, name);
    if (v) return v;
    ev_fail(ev, loc, "name '%s' is not defined", name);
}

/* ---- names and statements of the kernel ----------------------------------- */

/* ev->taken follows ev->k's var and buffer tables: names added since the
 * last call are hashed first (whoever added them). */
static int name_taken(ev_t *ev, const char *s)
{
    tilec_ir_kernel_t *k = ev->k;
    if (ev->taken_k != k) {
        memset(&ev->taken, 0, sizeof ev->taken);
        memset(&ev->suffix, 0, sizeof ev->suffix);
        ev->taken_k = k;
        ev->taken_nv = ev->taken_nb = 0;
    }
    for (; ev->taken_nv < k->nvars; ev->taken_nv++) nt_put(ev, &ev->taken, k->vars[ev->taken_nv]->name, 1);
    for (; ev->taken_nb < k->nbufs; ev->taken_nb++) nt_put(ev, &ev->taken, k->bufs[ev->taken_nb]->name, 1);
    return nt_get(&ev->taken, s) >= 0;
}

/* base, or base_N with the first N that is free; ev->suffix remembers the
 * last N of each base so that many locals of one name stay linear. */
static const char *unique_name(ev_t *ev, const char *base)
{
    size_t n;
    char *buf;
    int i;
    if (!base || !*base) base = "v";
    if (!name_taken(ev, base)) return base;
    n = strlen(base) + 16;
    buf = ev_alloc(ev, n);
    i = nt_get(&ev->suffix, base);
    for (i = i > 0 ? i + 1 : 1;; i++) {
        snprintf(buf, n, "%s_%d", base, i);
        if (!name_taken(ev, buf)) break;
    }
    if (nt_get(&ev->suffix, base) < 0) {
        char *key = ev_alloc(ev, strlen(base) + 1);
        memcpy(key, base, strlen(base));
        base = key;
    }
    nt_put(ev, &ev->suffix, base, i);
    return buf;
}

const char *ev_unique_var(ev_t *ev, const char *base) { return unique_name(ev, base); }
const char *ev_unique_buf(ev_t *ev, const char *base) { return unique_name(ev, base); }

tilec_ir_stmt_t *ev_stmt(ev_t *ev, tilec_stmt_kind_t kind, ast_loc_t loc)
{
    tilec_ir_stmt_t *st = ev_chk(ev, tilec_ir_stmt(ev->a, kind));
    st->line = loc.line;
    st->col = loc.col;
    return st;
}

void ev_require_kernel(ev_t *ev, ast_loc_t loc, const char *what)
{
    if (!ev->tail) {
        ev_fail(ev, loc, "%s must be inside the `with T.Kernel(...)` block of a @T.prim_func", what);
    }
}

void ev_emit(ev_t *ev, tilec_ir_stmt_t *st, ast_loc_t loc)
{
    ev_require_kernel(ev, loc, "this statement");
    *ev->tail = st;
    ev->tail = &st->next;
}

void ev_set_loop_extent(ev_t *ev, tilec_ir_var_t *v, tilec_ir_expr_t *extent)
{
    int64_t c;
    if (v->id >= ev->nloop_ext) {
        int n = v->id * 2 + 16, i;
        int64_t *ne = ev_alloc(ev, sizeof *ne * (size_t)n);
        for (i = 0; i < n; i++) ne[i] = i < ev->nloop_ext ? ev->loop_ext[i] : -1;
        ev->loop_ext = ne;
        ev->nloop_ext = n;
    }
    ev->loop_ext[v->id] = tilec_ir_is_const_int(extent, &c) ? c : -1;
}

int64_t ev_loop_extent(ev_t *ev, const tilec_ir_var_t *v)
{
    return v->id < ev->nloop_ext ? ev->loop_ext[v->id] : -1;
}

/* ---- symbols and defines ---------------------------------------------------- */

evdef_t *ev_find_def(ev_t *ev, const char *name)
{
    int i;
    for (i = 0; i < ev->ndefs; i++)
        if (!strcmp(ev->defs[i].name, name)) return &ev->defs[i];
    return NULL;
}

/* Takes -D d's value for a name whose value in the program is dflt (NULL:
 * none): a number replaced by text that is not one is the user's slip, said
 * here rather than where the value is first used. */
value_t *ev_def_take(ev_t *ev, evdef_t *d, const value_t *dflt)
{
    d->used = 1;
    if (dflt && (dflt->kind == V_INT || dflt->kind == V_FLOAT) && d->val->kind == V_STR)
        ev_fail(ev, NOLOC, "-D %s=%s: not a number (the program's value of '%s' is a%s %s)", d->name, d->text,
                d->name, dflt->kind == V_INT ? "n" : "", dflt->kind == V_INT ? "integer" : "float");
    return d->val;
}

void ev_sym_define(ev_t *ev, sym_t *s, const char *name, ast_loc_t loc)
{
    evdef_t *d = ev_find_def(ev, name);
    /* a -D a module constant of the same name took sets the symbol too */
    if (!d || d->sym) return;
    d->used = d->sym = 1;
    if (s->has_value) {
        ev_fail(ev, loc, "symbol '%s' is given twice with -D (as '%s' and as '%s'); give it once",
                s->name, s->name, s->alias ? s->alias : name);
    }
    if (d->val->kind != V_INT || d->val->u.i < 0) {
        ev_fail(ev, loc, "-D %s=%s: the value of T.dynamic symbol '%s' must be a non-negative integer",
                d->name, d->text, s->name);
    }
    s->value = d->val->u.i;
    s->has_value = 1;
}

sym_t *ev_new_sym(ev_t *ev, const char *name, ast_loc_t loc)
{
    sym_t *s;
    for (s = ev->syms; s; s = s->next)
        if (!strcmp(s->name, name)) return s;
    s = ev_alloc(ev, sizeof *s);
    s->name = name;
    *ev->syms_tail = s;
    ev->syms_tail = &s->next;
    ev_sym_define(ev, s, name, loc);
    return s;
}

/* ---- expressions ------------------------------------------------------------ */

void ev_seq_push(ev_t *ev, value_t ***items, int *n, int *cap, value_t *v, ast_loc_t loc)
{
    if (*n >= EV_MAX_SEQ) ev_fail(ev, loc, "sequence too long");
    if (*n == *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        value_t **ni = ev_alloc(ev, (size_t)ncap * sizeof *ni);
        if (*n) memcpy(ni, *items, (size_t)*n * sizeof *ni);
        *items = ni;
        *cap = ncap;
    }
    (*items)[(*n)++] = v;
}

void ev_expand_into(ev_t *ev, value_t *v, value_t ***items, int *n, int *cap, ast_loc_t loc)
{
    int i;
    if (v->kind == V_SEQ) {
        for (i = 0; i < v->u.seq.n; i++) ev_seq_push(ev, items, n, cap, v->u.seq.items[i], loc);
    } else if (v->kind == V_RANGE) {
        int64_t x;
        for (x = v->u.range.start; v->u.range.step > 0 ? x < v->u.range.stop : x > v->u.range.stop;
             x += v->u.range.step)
            ev_seq_push(ev, items, n, cap, v_int(ev, x), loc);
    } else {
        ev_fail(ev, loc, "cannot unpack %s with *", v_kind_name(v));
    }
}

static value_t *eval_seq(ev_t *ev, ast_expr_t *e, int is_list)
{
    value_t **items = NULL, *r;
    int n = 0, cap = 0, i;
    for (i = 0; i < e->u.seq.n; i++) {
        ast_expr_t *it = e->u.seq.items[i];
        if (it->kind == AST_STARRED) ev_expand_into(ev, ev_eval(ev, it->u.star.value), &items, &n, &cap, it->loc);
        else ev_seq_push(ev, &items, &n, &cap, ev_eval(ev, it), it->loc);
    }
    r = v_seq(ev, n, is_list);
    if (n) memcpy(r->u.seq.items, items, (size_t)n * sizeof *items);
    return r;
}

void ev_eval_args(ev_t *ev, ast_expr_t *call, args_t *out)
{
    value_t **items = NULL;
    int n = 0, cap = 0, i, j, k, lcap;
    memset(out, 0, sizeof *out);
    out->at = call->loc;
    lcap = call->u.call.nargs + 1;
    out->loc = ev_alloc(ev, sizeof *out->loc * (size_t)lcap);
    for (i = 0; i < call->u.call.nargs; i++) {
        ast_expr_t *it = call->u.call.args[i];
        int before = n;
        if (it->kind == AST_STARRED) ev_expand_into(ev, ev_eval(ev, it->u.star.value), &items, &n, &cap, it->loc);
        else ev_seq_push(ev, &items, &n, &cap, ev_eval(ev, it), it->loc);
        if (n >= lcap) {
            ast_loc_t *nl = ev_alloc(ev, sizeof *nl * (size_t)(2 * n + 1));
            memcpy(nl, out->loc, sizeof *nl * (size_t)before);
            out->loc = nl;
            lcap = 2 * n + 1;
        }
        for (k = before; k < n; k++) out->loc[k] = it->loc;
    }
    out->n = n;
    out->v = items;
    out->nkw = call->u.call.nkw;
    out->kwn = ev_alloc(ev, sizeof *out->kwn * (size_t)(out->nkw + 1));
    out->kwv = ev_alloc(ev, sizeof *out->kwv * (size_t)(out->nkw + 1));
    out->kwloc = ev_alloc(ev, sizeof *out->kwloc * (size_t)(out->nkw + 1));
    for (i = 0; i < out->nkw; i++) {
        ast_keyword_t *kw = &call->u.call.kw[i];
        if (!kw->name) ev_fail(ev, kw->loc, "**kwargs is not supported");
        for (j = 0; j < i; j++)
            if (!strcmp(out->kwn[j], kw->name)) ev_fail(ev, kw->loc, "keyword argument '%s' repeated", kw->name);
        out->kwn[i] = kw->name;
        out->kwloc[i] = kw->loc;
        out->kwv[i] = ev_eval(ev, kw->value);
    }
}


/* Comprehensions run at compile time over compile-time iterables, in a
 * scope of their own (as in Python 3); a generator expression gives a
 * tuple. */
static void comp_clause(ev_t *ev, ast_expr_t *e, int fi, value_t *out, value_t ***items, int *n, int *cap)
{
    ast_comp_for_t *f;
    value_t *seq;
    int i, j;
    if (fi == e->u.comp.nfor) {
        if (e->u.comp.bracket == '{')
            v_dict_set(ev, out, ev_eval(ev, e->u.comp.elt), ev_eval(ev, e->u.comp.value), e->loc);
        else
            ev_seq_push(ev, items, n, cap, ev_eval(ev, e->u.comp.elt), e->loc);
        return;
    }
    f = &e->u.comp.fors[fi];
    seq = ev_eval(ev, f->iter);
    if (v_is_rt(seq) || (seq->kind == V_LOOPITER && seq->u.it->kind != TILEC_LOOP_SERIAL))
        ev_fail(ev, f->iter->loc, "a comprehension runs at compile time; it cannot loop over %s", v_kind_name(seq));
    seq = v_iter_items(ev, seq, f->iter->loc);
    for (i = 0; i < seq->u.seq.n; i++) {
        int keep = 1;
        ev_step(ev, f->iter->loc);
        ev_assign_to(ev, f->target, seq->u.seq.items[i], f->target->loc);
        for (j = 0; j < f->nifs && keep; j++) {
            value_t *c = ev_eval(ev, f->ifs[j]);
            if (v_is_rt(c))
                ev_fail(ev, f->ifs[j]->loc, "the condition of a comprehension must be known at compile time");
            keep = v_truth(ev, c, f->ifs[j]->loc);
        }
        if (keep) comp_clause(ev, e, fi + 1, out, items, n, cap);
    }
}

static value_t *eval_comp(ev_t *ev, ast_expr_t *e)
{
    env_t *saved = ev->env;
    value_t *out = NULL, **items = NULL;
    int n = 0, cap = 0;
    if (e->u.comp.bracket == '{') {
        out = v_new(ev, V_DICT);
        out->u.seq.n = 0;
        out->u.seq.items = NULL;
    }
    ev->env = ev_env_new(ev, saved);
    comp_clause(ev, e, 0, out, &items, &n, &cap);
    ev->env = saved;
    if (!out) {
        out = v_seq(ev, n, e->u.comp.bracket == '[');
        if (n) memcpy(out->u.seq.items, items, (size_t)n * sizeof *items);
    }
    return out;
}

static value_t *eval_compare(ev_t *ev, ast_expr_t *e)
{
    value_t *left = ev_eval(ev, e->u.cmp.operands[0]), *result = NULL;
    int i;
    for (i = 0; i + 1 < e->u.cmp.n; i++) {
        value_t *right = ev_eval(ev, e->u.cmp.operands[i + 1]);
        value_t *r = v_compare(ev, e->u.cmp.ops[i], left, right, e->loc);
        if (!result) {
            result = r;
        } else if (!v_is_rt(result) && !v_is_rt(r)) {
            result = v_bool(ev, v_truth(ev, result, e->loc) && v_truth(ev, r, e->loc));
        } else {
            result = v_logic(ev, 1, result, r, e->loc);
        }
        if (!v_is_rt(result) && !v_truth(ev, result, e->loc)) return ev->vfalse;
        left = right;
    }
    return result ? result : ev->vtrue;
}


static value_t *eval_inner(ev_t *ev, ast_expr_t *e)
{
    value_t *a, *b;
    switch (e->kind) {
    case AST_NAME: return ev_lookup(ev, e->u.name, e->loc);
    case AST_INT: return v_int(ev, e->u.ival);
    case AST_FLOAT: return v_float(ev, e->u.fval);
    case AST_STR: return v_str(ev, e->u.str.s ? e->u.str.s : "", e->u.str.s ? e->u.str.len : 0);
    case AST_BOOL: return v_bool(ev, e->u.ival != 0);
    case AST_NONE: return ev->none;
    case AST_BINOP:
        a = ev_eval(ev, e->u.bin.a);
        b = ev_eval(ev, e->u.bin.b);
        if (e->u.bin.op == '@') ev_fail(ev, e->loc, "operator @ is not supported; use T.gemm on tiles");
        return v_binop(ev, e->u.bin.op, a, b, e->loc);
    case AST_UNARY:
        return v_unary(ev, e->u.un.op, ev_eval(ev, e->u.un.a), e->loc);
    case AST_COMPARE:
        if (e->u.cmp.n < 2) ev_fail(ev, e->loc, "malformed comparison");
        return eval_compare(ev, e);
    case AST_BOOLOP: {
        int is_and = e->u.bin.op == AST_OP_AND;
        a = ev_eval(ev, e->u.bin.a);
        if (!v_is_rt(a)) {
            int t = v_truth(ev, a, e->loc);
            if (is_and ? !t : t) return a;
            return ev_eval(ev, e->u.bin.b);
        }
        b = ev_eval(ev, e->u.bin.b);
        if (!v_is_rt(b) && !v_is_num(b)) ev_fail(ev, e->u.bin.b->loc, "expected a condition, got %s", v_kind_name(b));
        return v_logic(ev, is_and, a, b, e->loc);
    }
    case AST_IFEXP: {
        value_t *c = ev_eval(ev, e->u.ifexp.cond);
        if (!v_is_rt(c)) return ev_eval(ev, v_truth(ev, c, e->loc) ? e->u.ifexp.a : e->u.ifexp.b);
        ev->guarded++;
        a = ev_eval(ev, e->u.ifexp.a);
        b = ev_eval(ev, e->u.ifexp.b);
        ev->guarded--;
        return v_select(ev, c, a, b, e->loc);
    }
    case AST_CALL: {
        value_t *f;
        f = ev_eval(ev, e->u.call.func);
        if (f->kind == V_BUILTIN) return bi_call(ev, f, e);
        if (f->kind == V_FUNC) {
            args_t ar;
            ev_eval_args(ev, e, &ar);
            return ev_call_func(ev, f->u.fn, ar.n, ar.v, ar.nkw, ar.kwn, ar.kwv, e->loc);
        }
        if (f->kind == V_CLASS) {
            args_t ar;
            ev_eval_args(ev, e, &ar);
            return cls_call(ev, f, &ar);
        }
        if (f->kind == V_DTYPE) {
            args_t ar;
            ev_eval_args(ev, e, &ar);
            if (ar.n != 1 || ar.nkw) ev_fail(ev, e->loc, "T.%s(x) takes one argument", tilec_dtype_name(f->u.dt));
            return v_cast(ev, ar.v[0], f->u.dt, e->loc);
        }
        if (f->kind == V_JIT) {
            ev_fail(ev, e->loc, "tilelang.jit(...) is only supported as a decorator");
        }
        if (f->kind == V_OPAQUE)
            ev_fail(ev, e->loc, "'%s(...)' is outside the subset tilec supports: tilec runs no Python; only tilelang, "
                    "math, itertools and torch dtype names are evaluated", f->u.opq);
        ev_fail(ev, e->loc, "%s is not callable", v_kind_name(f));
    }
    case AST_ATTR:
        return v_getattr(ev, ev_eval(ev, e->u.attr.value), e->u.attr.name, e->loc);
    case AST_SUBSCRIPT:
        return v_subscript(ev, ev_eval(ev, e->u.sub.value), e);
    case AST_SLICE:
        ev_fail(ev, e->loc, "a slice is only allowed inside [ ]");
    case AST_TUPLE: return eval_seq(ev, e, 0);
    case AST_LIST: return eval_seq(ev, e, 1);
    case AST_STARRED:
        ev_fail(ev, e->loc, "*value is only allowed in calls and tuples");
    case AST_COMP: return eval_comp(ev, e);
    case AST_FSTRING: return v_fstring(ev, e);
    case AST_LAMBDA: return ev_make_func(ev, e->u.lam.def);
    case AST_DICT: {
        value_t *d = v_new(ev, V_DICT);
        int i;
        d->u.seq.n = 0;
        d->u.seq.items = NULL;
        for (i = 0; i + 1 < e->u.seq.n; i += 2)
            v_dict_set(ev, d, ev_eval(ev, e->u.seq.items[i]), ev_eval(ev, e->u.seq.items[i + 1]),
                       e->u.seq.items[i]->loc);
        return d;
    }
    }
    ev_fail(ev, e->loc, "unsupported expression");
}

value_t *ev_eval(ev_t *ev, ast_expr_t *e)
{
    value_t *r;
    if (!e) ev_fail(ev, NOLOC, "missing expression");
    if (++ev->depth > EV_MAX_EXPR_DEPTH) ev_fail(ev, e->loc, "expression nested too deeply");
    r = eval_inner(ev, e);
    ev->depth--;
    return r;
}

/* ---- calls ---------------------------------------------------------------- */

value_t *ev_call_func(ev_t *ev, func_t *fn, int n, value_t **pos, int nkw, const char **kwn,
                      value_t **kwv, ast_loc_t loc)
{
    ast_stmt_t *d = fn->def;
    env_t *env, *saved_env = ev->env;
    value_t **bound, *result, *varargs = NULL;
    int i, j;
    int saved_in_prim = ev->in_prim, saved_rt = ev->rt_depth, saved_rtl = ev->in_rt_loop;
    int saved_ct = ev->ct_loops, saved_mod = ev->at_module;
    if (fn->kind == FN_PRIM) {
        ev_fail(ev, loc, "a @T.prim_func cannot be called from the program; return it from its factory");
    }
    if (ev->call_depth >= EV_MAX_CALL_DEPTH) {
        ev_fail(ev, loc, "calls nested too deeply (limit %d): does '%s' call itself?", EV_MAX_CALL_DEPTH, d->u.def.name);
    }
    if (fn->self) {   /* a bound method: self first */
        value_t **p2 = ev_alloc(ev, sizeof *p2 * (size_t)(n + 1));
        p2[0] = fn->self;
        for (i = 0; i < n; i++) p2[i + 1] = pos[i];
        pos = p2;
        n++;
    }
    bound = ev_alloc(ev, sizeof *bound * (size_t)(d->u.def.nparams + 1));
    if (d->u.def.vararg) {   /* *args: the positional arguments past the parameters, as a tuple */
        int extra = n > d->u.def.nparams ? n - d->u.def.nparams : 0;
        varargs = v_seq(ev, extra, 0);
        for (i = 0; i < extra; i++) varargs->u.seq.items[i] = pos[d->u.def.nparams + i];
        n -= extra;
    }
    if (n > d->u.def.nparams) {
        ev_fail(ev, loc, "'%s' takes %d argument%s but %d %s given", d->u.def.name, d->u.def.nparams,
                d->u.def.nparams == 1 ? "" : "s", n, n == 1 ? "was" : "were");
    }
    for (i = 0; i < n; i++) bound[i] = pos[i];
    for (j = 0; j < nkw; j++) {
        for (i = 0; i < d->u.def.nparams; i++)
            if (!strcmp(d->u.def.params[i].name, kwn[j])) break;
        if (i == d->u.def.nparams) ev_fail(ev, loc, "'%s' has no parameter named '%s'", d->u.def.name, kwn[j]);
        if (bound[i]) ev_fail(ev, loc, "'%s' got two values for parameter '%s'", d->u.def.name, kwn[j]);
        bound[i] = kwv[j];
    }
    env = ev_env_new(ev, fn->closure);
    for (i = 0; i < d->u.def.nparams; i++) {
        if (!bound[i]) bound[i] = fn->defaults[i];
        if (!bound[i]) ev_fail(ev, loc, "missing argument '%s' in the call of '%s'", d->u.def.params[i].name, d->u.def.name);
        env_set(ev, env, d->u.def.params[i].name, bound[i]);
    }
    if (varargs) env_set(ev, env, d->u.def.vararg, varargs);
    ev->call_depth++;
    ev->env = env;
    ev->in_prim = 0;
    ev->rt_depth = 0;
    ev->in_rt_loop = 0;
    ev->ct_loops = 0;
    ev->at_module = 0;
    ev->ctl = CTL_NONE;
    ev->retval = NULL;
    ev_exec_block(ev, &d->u.def.body);
    result = ev->ctl == CTL_RETURN && ev->retval ? ev->retval : ev->none;
    ev->ctl = CTL_NONE;
    ev->retval = NULL;
    ev->env = saved_env;
    ev->in_prim = saved_in_prim;
    ev->rt_depth = saved_rt;
    ev->in_rt_loop = saved_rtl;
    ev->ct_loops = saved_ct;
    ev->at_module = saved_mod;
    ev->call_depth--;
    return result;
}

