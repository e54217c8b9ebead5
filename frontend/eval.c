/*
 * frontend/eval.c — the evaluator's driver, statements and expressions.
 *
 * tilec_frontend_compile() parses the file, runs the module-level
 * statements (imports, constants, defs), picks the entry (a kernel factory
 * or a top-level @T.prim_func), binds factory parameters from -D defines and
 * defaults, runs the factory at compile time, and evaluates the returned
 * @T.prim_func: its parameters become GLOBAL buffers and the statements of
 * its `with T.Kernel(...)` block become tile-IR statements.  Compile-time
 * `if`s, loops over tuples and plain helper functions run here; @T.macro
 * calls are inlined.  See eval_internal.h for the error model (longjmp to
 * the entry point; everything lives in arenas).
 */
#include "autotune.h"
#include "eval_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ast_loc_t NOLOC = {0, 0};

/* ---- errors, memory ------------------------------------------------------- */

_Noreturn void ev_fail(ev_t *ev, ast_loc_t loc, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tilec_diag_error(ev->d, loc.line, loc.col, "%s", msg);
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

static env_t *env_new(ev_t *ev, env_t *parent)
{
    env_t *e = ev_alloc(ev, sizeof *e);
    e->parent = parent;
    return e;
}

static int env_find(env_t *e, const char *name)
{
    int i;
    if (e->n > ENV_LINEAR) return nt_get(&e->tab, name);
    for (i = e->n - 1; i >= 0; i--)
        if (!strcmp(e->names[i], name)) return i;
    return -1;
}

void env_set(ev_t *ev, env_t *e, const char *name, value_t *v)
{
    int i = env_find(e, name);
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
        int i = env_find(e, name);
        if (i >= 0) return e->vals[i];
    }
    return NULL;
}

static value_t *lookup(ev_t *ev, const char *name, ast_loc_t loc)
{
    value_t *v = env_get(ev->env, name);
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

static evdef_t *find_def(ev_t *ev, const char *name)
{
    int i;
    for (i = 0; i < ev->ndefs; i++)
        if (!strcmp(ev->defs[i].name, name)) return &ev->defs[i];
    return NULL;
}

/* Takes -D d's value for a name whose value in the program is dflt (NULL:
 * none): a number replaced by text that is not one is the user's slip, said
 * here rather than where the value is first used. */
static value_t *def_take(ev_t *ev, evdef_t *d, const value_t *dflt)
{
    d->used = 1;
    if (dflt && (dflt->kind == V_INT || dflt->kind == V_FLOAT) && d->val->kind == V_STR)
        ev_fail(ev, NOLOC, "-D %s=%s: not a number (the program's value of '%s' is a%s %s)", d->name, d->text,
                d->name, dflt->kind == V_INT ? "n" : "", dflt->kind == V_INT ? "integer" : "float");
    return d->val;
}

static void sym_define(ev_t *ev, sym_t *s, const char *name, ast_loc_t loc)
{
    evdef_t *d = find_def(ev, name);
    if (!d || d->used) return;
    d->used = 1;
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
    sym_define(ev, s, name, loc);
    return s;
}

/* ---- expressions ------------------------------------------------------------ */

static void seq_push(ev_t *ev, value_t ***items, int *n, int *cap, value_t *v, ast_loc_t loc)
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

static void expand_into(ev_t *ev, value_t *v, value_t ***items, int *n, int *cap, ast_loc_t loc)
{
    int i;
    if (v->kind == V_SEQ) {
        for (i = 0; i < v->u.seq.n; i++) seq_push(ev, items, n, cap, v->u.seq.items[i], loc);
    } else if (v->kind == V_RANGE) {
        int64_t x;
        for (x = v->u.range.start; v->u.range.step > 0 ? x < v->u.range.stop : x > v->u.range.stop;
             x += v->u.range.step)
            seq_push(ev, items, n, cap, v_int(ev, x), loc);
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
        if (it->kind == AST_STARRED) expand_into(ev, ev_eval(ev, it->u.star.value), &items, &n, &cap, it->loc);
        else seq_push(ev, &items, &n, &cap, ev_eval(ev, it), it->loc);
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
        if (it->kind == AST_STARRED) expand_into(ev, ev_eval(ev, it->u.star.value), &items, &n, &cap, it->loc);
        else seq_push(ev, &items, &n, &cap, ev_eval(ev, it), it->loc);
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

static void assign_to(ev_t *ev, ast_expr_t *t, value_t *v, ast_loc_t loc);

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
            seq_push(ev, items, n, cap, ev_eval(ev, e->u.comp.elt), e->loc);
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
        assign_to(ev, f->target, seq->u.seq.items[i], f->target->loc);
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
    ev->env = env_new(ev, saved);
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

static value_t *make_func(ev_t *ev, ast_stmt_t *s);

static value_t *eval_inner(ev_t *ev, ast_expr_t *e)
{
    value_t *a, *b;
    switch (e->kind) {
    case AST_NAME: return lookup(ev, e->u.name, e->loc);
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
        if (f->kind == V_DTYPE) {
            args_t ar;
            ev_eval_args(ev, e, &ar);
            if (ar.n != 1 || ar.nkw) ev_fail(ev, e->loc, "T.%s(x) takes one argument", tilec_dtype_name(f->u.dt));
            return v_cast(ev, ar.v[0], f->u.dt, e->loc);
        }
        if (f->kind == V_JIT) {
            ev_fail(ev, e->loc, "tilelang.jit(...) is only supported as a decorator");
        }
        /* tilec runs no torch, so torch sees no CUDA device (host helpers such as an IsRDNA() check) */
        if (f->kind == V_OPAQUE && !strcmp(f->u.opq, "torch.cuda.is_available")) {
            args_t ar;
            ev_eval_args(ev, e, &ar);
            return ev->vfalse;
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
    case AST_LAMBDA: return make_func(ev, e->u.lam.def);
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
static void check_let_uses(ev_t *ev)
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
    int i = env_find(ev->env, name);
    value_t *cur = i >= 0 ? ev->env->vals[i] : NULL;
    if (cur && cur->kind == V_BUF && cur->u.buf->scope == TILEC_SCOPE_VAR && v->kind != V_BUF &&
        (v_is_rt(v) || v_is_num(v))) {
        tilec_ir_expr_t *z = ex_int32(ev, 0);
        store_elem(ev, ev_chk(ev, tilec_ir_load(ev->a, cur->u.buf, &z)), v, loc);
        return;
    }
    if (v->kind == V_SYM) {
        if (!v->u.sym->alias) v->u.sym->alias = name;
        sym_define(ev, v->u.sym, name, loc);
        env_set(ev, ev->env, name, v);
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
        env_set(ev, ev->env, name, v_expr(ev, tilec_ir_varref(ev->a, var)));
        return;
    }
    env_set(ev, ev->env, name, v);
}

static void assign_to(ev_t *ev, ast_expr_t *t, value_t *v, ast_loc_t loc);

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
        expand_into(ev, v, &items, &n, &cap, loc);
    } else if (v->kind == V_STR) {
        for (i = 0; i < (int)v->u.s.len; i++) seq_push(ev, &items, &n, &cap, v_str(ev, v->u.s.s + i, 1), loc);
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
    for (i = 0; i < n; i++) assign_to(ev, t->u.seq.items[i], items[i], loc);
}

static void assign_to(ev_t *ev, ast_expr_t *t, value_t *v, ast_loc_t loc)
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
        evdef_t *d = find_def(ev, t0->u.name);
        note_const(ev, t0->u.name);
        if (d && !d->used) {
            v = ev_eval(ev, s->u.assign.value);
            if (v->kind != V_SYM) v = def_take(ev, d, v);
            assign_name(ev, t0->u.name, v, t0->loc);
            return;
        }
    }
    ev->name_hint = t0->kind == AST_NAME ? t0->u.name : NULL;
    v = ev_eval(ev, s->u.assign.value);
    ev->name_hint = NULL;
    for (i = 0; i < s->u.assign.ntargets; i++) assign_to(ev, s->u.assign.targets[i], v, s->loc);
}

static void exec_augassign(ev_t *ev, ast_stmt_t *s)
{
    ast_expr_t *t = s->u.aug.target;
    value_t *rhs;
    if (t->kind == AST_NAME) {
        value_t *cur = lookup(ev, t->u.name, t->loc);
        rhs = ev_eval(ev, s->u.aug.value);
        if (cur->kind == V_BUF && cur->u.buf->scope == TILEC_SCOPE_VAR) {
            tilec_ir_expr_t *z = ex_int32(ev, 0);
            tilec_ir_expr_t *ld = ev_chk(ev, tilec_ir_load(ev->a, cur->u.buf, &z));
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
            assign_to(ev, t, v_binop(ev, s->u.aug.op, el, rhs, s->loc), t->loc);
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
    assign_to(ev, t, v, s->loc);
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
        int64_t n = 0;
        if (step > 0 && h > l) n = (h - l) / step + ((h - l) % step != 0);
        if (step < 0 && h < l) n = (l - h) / -step + ((l - h) % -step != 0);
        if (n > INT32_MAX) ev_fail(ev, loc, "loop extent %lld is too large", (long long)n);
        return ex_int32(ev, n);
    }
    elo = lo ? ex_index(ev, lo, loc) : ex_int32(ev, 0);
    ehi = ex_index(ev, hi, loc);
    if (step > 0) {
        d = (lo && !(elo->kind == TILEC_EX_INT && elo->u.i == 0))
                ? ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_SUB, ehi, elo)) : ehi;
    } else {
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
    int i;
    ev_require_kernel(ev, s->loc, "a kernel loop");
    if (it->n < 1 || it->n > TILEC_IR_MAX_DIMS) ev_fail(ev, s->u.loop.iter->loc, "T.Parallel takes 1 to %d extents",
                                                       TILEC_IR_MAX_DIMS);
    loop_targets(ev, s->u.loop.target, it->n, names);
    for (i = 0; i < it->n; i++) {
        tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_FOR, s->loc);
        tilec_ir_var_t *var;
        value_t *lo = it->lo ? it->lo[i] : NULL;
        int lo_zero = !lo || ((lo->kind == V_INT || lo->kind == V_BOOL) && lo->u.i == 0);
        st->u.loop.kind = it->kind;
        st->u.loop.num_stages = it->kind == TILEC_LOOP_PIPELINED ? (it->num_stages < 1 ? 1 : it->num_stages) : 1;
        st->u.loop.extent = loop_extent(ev, lo, it->hi[i], it->step, s->u.loop.iter->loc);
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
    /* Unlike Python, a kernel loop's variable does not outlive the loop. */
    for (i = 0; i < it->n; i++)
        if (env_get(ev->env, names[i]->u.name) == bound[i])
            env_set(ev, ev->env, names[i]->u.name, v_new(ev, V_DEADLOOP));
}

static void exec_for(ev_t *ev, ast_stmt_t *s)
{
    value_t *it = ev_eval(ev, s->u.loop.iter);
    value_t **items = NULL;
    int n = 0, cap = 0, i;
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
            assign_to(ev, s->u.loop.target, v_int(ev, x), s->loc);
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
            expand_into(ev, it, &items, &n, &cap, s->loc);
        } else if (it->kind == V_DICT) {
            for (i = 0; i + 1 < it->u.seq.n; i += 2) seq_push(ev, &items, &n, &cap, it->u.seq.items[i], s->loc);
        } else {
            for (i = 0; i < (int)it->u.s.len; i++) seq_push(ev, &items, &n, &cap, v_str(ev, it->u.s.s + i, 1), s->loc);
        }
        ev->ct_loops++;
        for (i = 0; i < n; i++) {
            ev_step(ev, s->loc);
            assign_to(ev, s->u.loop.target, items[i], s->loc);
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
    tilec_ir_kernel_t *k = ev->k;
    ast_expr_t *names[3] = {NULL, NULL, NULL};
    static const char *const dflt[3] = {"bx", "by", "bz"};
    int i, ng;
    if (kv->kind != V_KERNEL) {
        ev_fail(ev, s->u.with.ctx->loc, "only `with T.Kernel(...)` is supported as a with statement");
    }
    if (!ev->in_prim) ev_fail(ev, s->loc, "T.Kernel must be used directly in the body of a @T.prim_func");
    if (ev->kernel_done || ev->tail) {
        ev_fail(ev, s->loc, "a @T.prim_func has exactly one `with T.Kernel(...)` block; merge the kernels or "
                "write a second prim_func");
    }
    ng = kv->u.kern.ngrid;
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
    ev->tail = NULL;
    ev->kernel_done = 1;
}

static int is_prim_decorator(ast_expr_t *d)
{
    if (d->kind == AST_ATTR) return !strcmp(d->u.attr.name, "prim_func");
    if (d->kind == AST_NAME) return !strcmp(d->u.name, "prim_func");
    return 0;
}

/* A function value of a def (or lambda) without its decorators; the
 * defaults are evaluated now, as in Python. */
static value_t *make_func(ev_t *ev, ast_stmt_t *s)
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
    v = make_func(ev, s);
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
    value_t *m = mod_lookup(ev, from), *v = NULL;
    size_t n;
    char *path;
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

/* `while` runs at compile time, on compile-time conditions. */
static void exec_while(ev_t *ev, ast_stmt_t *s)
{
    ev->ct_loops++;
    for (;;) {
        value_t *c = ev_eval(ev, s->u.wloop.cond);
        if (v_is_rt(c))
            ev_fail(ev, s->u.wloop.cond->loc, "a while loop runs at compile time and needs a compile-time condition; "
                    "for a run-time loop use `for ... in T.serial(n)` with an `if`");
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

static void exec_stmt(ev_t *ev, ast_stmt_t *s)
{
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

void ev_exec_block(ev_t *ev, const ast_block_t *b)
{
    int i;
    for (i = 0; i < b->n && ev->ctl == CTL_NONE; i++) exec_stmt(ev, b->s[i]);
}

/* ---- calls ---------------------------------------------------------------- */

value_t *ev_call_func(ev_t *ev, func_t *fn, int n, value_t **pos, int nkw, const char **kwn,
                      value_t **kwv, ast_loc_t loc)
{
    ast_stmt_t *d = fn->def;
    env_t *env, *saved_env = ev->env;
    value_t **bound, *result;
    int i, j;
    int saved_in_prim = ev->in_prim, saved_rt = ev->rt_depth, saved_rtl = ev->in_rt_loop;
    int saved_ct = ev->ct_loops, saved_mod = ev->at_module;
    if (fn->kind == FN_PRIM) {
        ev_fail(ev, loc, "a @T.prim_func cannot be called from the program; return it from its factory");
    }
    if (ev->call_depth >= EV_MAX_CALL_DEPTH) {
        ev_fail(ev, loc, "calls nested too deeply (limit %d): does '%s' call itself?", EV_MAX_CALL_DEPTH, d->u.def.name);
    }
    bound = ev_alloc(ev, sizeof *bound * (size_t)(d->u.def.nparams + 1));
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
    env = env_new(ev, fn->closure);
    for (i = 0; i < d->u.def.nparams; i++) {
        if (!bound[i]) bound[i] = fn->defaults[i];
        if (!bound[i]) ev_fail(ev, loc, "missing argument '%s' in the call of '%s'", d->u.def.params[i].name, d->u.def.name);
        env_set(ev, env, d->u.def.params[i].name, bound[i]);
    }
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
    def = find_def(ev, name);
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
    env_t *env = env_new(ev, fn->closure);
    int i, ntensors = 0;
    ev->env = env;
    ev->at_module = 0;
    if (d->u.def.nparams > 64) ev_fail(ev, d->loc, "a kernel takes at most 64 parameters");
    for (i = 0; i < d->u.def.nparams; i++) {
        ast_param_t *p = &d->u.def.params[i];
        value_t *tt;
        tilec_ir_buffer_t *b;
        tilec_ir_expr_t *shape[TILEC_IR_MAX_DIMS];
        int j, nd;
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
        nd = tt->u.tt.shape->u.seq.n;
        for (j = 0; j < nd; j++) shape[j] = ex_index(ev, tt->u.tt.shape->u.seq.items[j], p->annotation->loc);
        if (ev->k->nbufs != ntensors++) ev_fail(ev, p->loc, "internal: parameters must come first");
        b = ev_chk(ev, tilec_ir_buffer_add(ev->a, ev->k, ev_unique_buf(ev, p->name), TILEC_SCOPE_GLOBAL,
                                           tt->u.tt.dt, nd, shape));
        {
            value_t *bv = v_new(ev, V_BUF);
            bv->u.buf = b;
            env_set(ev, env, p->name, bv);
        }
    }
    ev->k->nparams = ntensors;
    if (ev->k->nparams > 32) ev_fail(ev, d->loc, "a kernel takes at most 32 tensor parameters");
    ev->in_prim = 1;
    ev->ctl = CTL_NONE;
    ev_exec_block(ev, &d->u.def.body);
    ev->in_prim = 0;
    if (!ev->kernel_done)
        ev_fail(ev, d->loc, "@T.prim_func '%s' has no `with T.Kernel(...)` block", d->u.def.name);
    check_let_uses(ev);
}

/* ---- eager-style kernels -------------------------------------------------- *
 * TileLang's newer style writes the kernel as the @tilelang.jit function
 * itself: tensors are parameters declared by `A: T.Tensor(shape, dtype)`
 * statements, sizes come from `M, N = T.const("M, N")`, outputs are
 * `C = T.empty(shape, dtype)`, and `return C` ends it.  The other parameters
 * are compile-time constants like a factory's.  Kernel parameters are the
 * declared tensors in the order of their declarations. */

value_t *ev_eager_tensor(ev_t *ev, const char *name, value_t *tt, int is_out, ast_loc_t loc)
{
    tilec_ir_expr_t *shape[TILEC_IR_MAX_DIMS];
    tilec_ir_buffer_t *b;
    value_t *bv;
    int j, nd;
    if (!ev->eager || !ev->in_prim)
        ev_fail(ev, loc, "%s declares a kernel tensor only in an eager-style @tilelang.jit kernel",
                is_out ? "T.empty" : "a T.Tensor annotation");
    if (ev->tail || ev->kernel_done || ev->k->nbufs != ev->k->nparams)
        ev_fail(ev, loc, "declare every tensor (`A: T.Tensor(...)`, `C = T.empty(...)`) before the `with T.Kernel` block");
    if (ev->k->nparams >= 32) ev_fail(ev, loc, "a kernel takes at most 32 tensor parameters");
    nd = tt->u.tt.shape->u.seq.n;
    for (j = 0; j < nd; j++) shape[j] = ex_index(ev, tt->u.tt.shape->u.seq.items[j], loc);
    b = ev_chk(ev, tilec_ir_buffer_add(ev->a, ev->k, ev_unique_buf(ev, name ? name : "out"), TILEC_SCOPE_GLOBAL,
                                       tt->u.tt.dt, nd, shape));
    if (is_out) ev->k->out_mask |= 1u << ev->k->nparams;
    ev->k->nparams++;
    bv = v_new(ev, V_BUF);
    bv->u.buf = b;
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
        d = find_def(ev, nm);
        if (d && !d->used) {
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
    env_t *env = env_new(ev, fn->closure);
    value_t **args = ev_alloc(ev, sizeof *args * (size_t)(d->u.def.nparams + 1));
    int i;
    for (i = 0; i < d->u.def.nparams; i++) {
        ast_param_t *p = &d->u.def.params[i];
        evdef_t *df;
        if (is_tensor_decl(&d->u.def.body, p->name)) continue;
        df = find_def(ev, p->name);
        if (df) {
            args[i] = def_take(ev, df, fn->defaults[i]);
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
    check_let_uses(ev);
    return args;
}

/* out_idx counts every parameter of the prim_func, scalars too (TileLang's
 * order); the mask is over the tensors (scalars are not IR parameters). */
static uint32_t out_mask_of(ev_t *ev, func_t *fn, ast_loc_t loc)
{
    uint32_t m = 0;
    int i, np = ev->k->nparams + ev->nscalars;
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
                if (is_prim_decorator(s->u.def.decorators[j])) return 1;
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
    if (tilec_parse(&ev->s, ev->d, path, src, len, &ev->mod) < 0 || !ev->mod) longjmp(ev->jb, 1);
    ev->k = ev_chk(ev, tilec_ir_kernel_new(ev->a, "kernel"));
    ev->genv = ev->env = env_new(ev, NULL);
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
            evdef_t *df = find_def(ev, d->u.def.params[i].name);
            if (df) {
                args[i] = def_take(ev, df, fn->defaults[i]);
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

/* Fills the result: the module and the launch values of the symbols. */
static void finish(ev_t *ev, tilec_frontend_result_t *out, const char *entry)
{
    int i;
    {
        tilec_ir_module_t *m = ev_chk(ev, tilec_ir_module_new(ev->a));
        int nsym = 0, j = 0;
        m->kernel = ev->k;
        for (i = 0; i < ev->k->nvars; i++)
            if (ev->k->vars[i]->kind == TILEC_VAR_SYM) nsym++;
        out->sym_values = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof(int64_t) * (size_t)(nsym + 1)));
        for (i = 0; i < ev->k->nvars; i++) {
            sym_t *s;
            if (ev->k->vars[i]->kind != TILEC_VAR_SYM) continue;
            out->sym_values[j] = -1;
            for (s = ev->syms; s; s = s->next)
                if (s->var == ev->k->vars[i] && s->has_value) out->sym_values[j] = s->value;
            j++;
        }
        out->nsyms = nsym;
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
