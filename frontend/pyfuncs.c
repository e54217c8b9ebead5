/*
 * frontend/pyfuncs.c — more of Python at compile time: the builtins that
 * factories and autotune helpers use beyond the core set of builtins.c
 * (enumerate, zip, sum, any, all, sorted, reversed, dict, divmod, round,
 * pow, getattr, hasattr, repr, format, print, ...), and the methods of
 * compile-time values (str, list, tuple, dict, int).
 *
 * Everything here works on compile-time values only and follows Python's
 * results; a run-time value reaching one of these is a diagnostic that
 * names the function.  `print` at compile time writes to the compile log
 * (TILEC_LOG=compile), never to the program's output.
 */
#include "eval_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static const struct { const char *n; int id; } py2[] = {
    {"enumerate", BI_ENUMERATE}, {"zip", BI_ZIP}, {"sum", BI_SUM}, {"any", BI_ANY}, {"all", BI_ALL},
    {"sorted", BI_SORTED}, {"reversed", BI_REVERSED}, {"dict", BI_DICT}, {"divmod", BI_DIVMOD},
    {"round", BI_ROUND}, {"pow", BI_PPOW}, {"getattr", BI_GETATTR}, {"hasattr", BI_HASATTR}, {"repr", BI_REPR},
    {"format", BI_FORMAT}, {"print", BI_PPRINT}, {"map", BI_MAP}, {"filter", BI_FILTER}, {"callable", BI_CALLABLE},
    {NULL, 0}
};

value_t *py_lookup(ev_t *ev, const char *name)
{
    int i;
    for (i = 0; py2[i].n; i++) {
        if (!strcmp(py2[i].n, name)) {
            value_t *v = v_new(ev, V_BUILTIN);
            v->u.bi.id = py2[i].id;
            return v;
        }
    }
    return NULL;
}

const char *py_name(int id)
{
    int i;
    for (i = 0; py2[i].n; i++)
        if (py2[i].id == id) return py2[i].n;
    return NULL;
}

static value_t *seq_of(ev_t *ev, value_t *v, ast_loc_t loc, const char *fn)
{
    if (v_is_rt(v)) ev_fail(ev, loc, "%s() runs at compile time; it cannot take %s", fn, v_kind_name(v));
    return v_iter_items(ev, v, loc);
}

static value_t *call1(ev_t *ev, value_t *f, value_t *x, ast_loc_t loc, const char *what)
{
    if (f->kind != V_FUNC) ev_fail(ev, loc, "%s must be a function or lambda defined in the program, got %s", what,
                                   v_kind_name(f));
    return ev_call_func(ev, f->u.fn, 1, &x, 0, NULL, NULL, loc);
}

static value_t *kwarg(ev_t *ev, args_t *ar, const char *fn, const char *const *allowed, const char *name)
{
    int i, j;
    value_t *r = NULL;
    for (i = 0; i < ar->nkw; i++) {
        for (j = 0; allowed[j]; j++)
            if (!strcmp(allowed[j], ar->kwn[i])) break;
        if (!allowed[j]) ev_fail(ev, ar->kwloc[i], "%s() has no keyword argument '%s'", fn, ar->kwn[i]);
        if (!strcmp(ar->kwn[i], name)) r = ar->kwv[i];
    }
    return r;
}

static int less(ev_t *ev, value_t *a, value_t *b, ast_loc_t loc)
{
    return v_truth(ev, v_compare(ev, AST_OP_LT, a, b, loc), loc);
}

/* Stable insertion sort (the sequences are small). */
static void sort_items(ev_t *ev, value_t **items, value_t **keys, int n, int rev, ast_loc_t loc)
{
    int i, j;
    for (i = 1; i < n; i++) {
        value_t *it = items[i], *k = keys[i];
        for (j = i - 1; j >= 0 && (rev ? less(ev, keys[j], k, loc) : less(ev, k, keys[j], loc)); j--) {
            items[j + 1] = items[j];
            keys[j + 1] = keys[j];
        }
        items[j + 1] = it;
        keys[j + 1] = k;
    }
}

static value_t *copy_seq(ev_t *ev, value_t *s, int is_list)
{
    value_t *r = v_seq(ev, s->u.seq.n, is_list);
    if (s->u.seq.n) memcpy(r->u.seq.items, s->u.seq.items, sizeof *r->u.seq.items * (size_t)s->u.seq.n);
    return r;
}

/* getattr that answers NULL instead of failing: a missing attribute is an
 * answer for hasattr/getattr with a default, not an error. */
static value_t *try_getattr(ev_t *ev, value_t *obj, const char *name, ast_loc_t loc)
{
    value_t *volatile r = NULL;
    tilec_diag_t *saved = ev_alloc(ev, sizeof *saved);
    jmp_buf jb;
    int depth = ev->depth;
    *saved = *ev->d;
    memcpy(jb, ev->jb, sizeof jb);
    if (setjmp(ev->jb) == 0) {
        r = v_getattr(ev, obj, name, loc);
        if (r->kind == V_OPAQUE && obj->kind != V_OPAQUE) r = NULL;   /* tilelang.X that does not exist */
    } else {
        *ev->d = *saved;
        ev->depth = depth;
        r = NULL;
    }
    memcpy(ev->jb, jb, sizeof jb);
    return r;
}

value_t *py_call(ev_t *ev, int id, args_t *ar)
{
    ast_loc_t at = ar->at;
    const char *fn = py_name(id);
    int i, j;
    switch (id) {
    case BI_ENUMERATE: {
        static const char *const kw[] = {"start", NULL};
        value_t *st = kwarg(ev, ar, fn, kw, "start"), *s, *r;
        int64_t start = st ? v_want_int(ev, st, at, "start") : 0;
        if (ar->n < 1 || ar->n > 2) ev_fail(ev, at, "enumerate() takes one sequence");
        if (ar->n == 2) start = v_want_int(ev, ar->v[1], ar->loc[1], "start");
        s = seq_of(ev, ar->v[0], ar->loc[0], fn);
        r = v_seq(ev, s->u.seq.n, 0);
        for (i = 0; i < s->u.seq.n; i++) {
            value_t *t = v_seq(ev, 2, 0);
            t->u.seq.items[0] = v_int(ev, start + i);
            t->u.seq.items[1] = s->u.seq.items[i];
            r->u.seq.items[i] = t;
        }
        return r;
    }
    case BI_ZIP: {
        value_t **ss, *r;
        int n = INT32_MAX;
        static const char *const kw[] = {"strict", NULL};
        (void)kwarg(ev, ar, fn, kw, "strict");
        ss = ev_alloc(ev, sizeof *ss * (size_t)(ar->n + 1));
        for (j = 0; j < ar->n; j++) {
            ss[j] = seq_of(ev, ar->v[j], ar->loc[j], fn);
            if (ss[j]->u.seq.n < n) n = ss[j]->u.seq.n;
        }
        if (ar->n == 0) n = 0;
        r = v_seq(ev, n, 0);
        for (i = 0; i < n; i++) {
            value_t *t = v_seq(ev, ar->n, 0);
            for (j = 0; j < ar->n; j++) t->u.seq.items[j] = ss[j]->u.seq.items[i];
            r->u.seq.items[i] = t;
        }
        return r;
    }
    case BI_SUM: {
        static const char *const kw[] = {"start", NULL};
        value_t *st = kwarg(ev, ar, fn, kw, "start"), *s, *acc;
        if (ar->n < 1 || ar->n > 2) ev_fail(ev, at, "sum() takes a sequence and an optional start");
        acc = ar->n == 2 ? ar->v[1] : st ? st : v_int(ev, 0);
        s = seq_of(ev, ar->v[0], ar->loc[0], fn);
        for (i = 0; i < s->u.seq.n; i++) acc = v_binop(ev, '+', acc, s->u.seq.items[i], at);
        return acc;
    }
    case BI_ANY: case BI_ALL: {
        value_t *s;
        if (ar->n != 1 || ar->nkw) ev_fail(ev, at, "%s() takes one sequence", fn);
        s = seq_of(ev, ar->v[0], ar->loc[0], fn);
        for (i = 0; i < s->u.seq.n; i++) {
            value_t *x = s->u.seq.items[i];
            int t;
            if (v_is_rt(x)) ev_fail(ev, at, "%s() runs at compile time; an item is only known at run time", fn);
            t = v_truth(ev, x, at);
            if (id == BI_ANY && t) return ev->vtrue;
            if (id == BI_ALL && !t) return ev->vfalse;
        }
        return v_bool(ev, id == BI_ALL);
    }
    case BI_SORTED: {
        static const char *const kw[] = {"key", "reverse", NULL};
        value_t *key = kwarg(ev, ar, fn, kw, "key"), *rv = kwarg(ev, ar, fn, kw, "reverse"), *s, **keys;
        int rev = rv ? v_truth(ev, rv, at) : 0;
        if (ar->n != 1) ev_fail(ev, at, "sorted() takes one sequence");
        s = copy_seq(ev, seq_of(ev, ar->v[0], ar->loc[0], fn), 1);
        keys = ev_alloc(ev, sizeof *keys * (size_t)(s->u.seq.n + 1));
        for (i = 0; i < s->u.seq.n; i++)
            keys[i] = key && key->kind != V_NONE ? call1(ev, key, s->u.seq.items[i], at, "key") : s->u.seq.items[i];
        sort_items(ev, s->u.seq.items, keys, s->u.seq.n, rev, at);
        return s;
    }
    case BI_REVERSED: {
        value_t *s, *r;
        if (ar->n != 1 || ar->nkw) ev_fail(ev, at, "reversed() takes one sequence");
        s = seq_of(ev, ar->v[0], ar->loc[0], fn);
        r = v_seq(ev, s->u.seq.n, 0);
        for (i = 0; i < s->u.seq.n; i++) r->u.seq.items[i] = s->u.seq.items[s->u.seq.n - 1 - i];
        return r;
    }
    case BI_DICT: {
        value_t *d = v_new(ev, V_DICT);
        d->u.seq.n = 0;
        d->u.seq.items = NULL;
        if (ar->n > 1) ev_fail(ev, at, "dict() takes at most one positional argument");
        if (ar->n == 1) {
            value_t *src = ar->v[0];
            if (src->kind == V_DICT) {
                for (i = 0; i + 1 < src->u.seq.n; i += 2)
                    v_dict_set(ev, d, src->u.seq.items[i], src->u.seq.items[i + 1], at);
            } else {
                value_t *s = seq_of(ev, src, ar->loc[0], fn);
                for (i = 0; i < s->u.seq.n; i++) {
                    value_t *kv = s->u.seq.items[i];
                    if (kv->kind != V_SEQ || kv->u.seq.n != 2) ev_fail(ev, ar->loc[0], "dict() needs (key, value) pairs");
                    v_dict_set(ev, d, kv->u.seq.items[0], kv->u.seq.items[1], at);
                }
            }
        }
        for (i = 0; i < ar->nkw; i++) v_dict_set(ev, d, v_str(ev, ar->kwn[i], strlen(ar->kwn[i])), ar->kwv[i], at);
        return d;
    }
    case BI_DIVMOD: {
        value_t *r = v_seq(ev, 2, 0);
        if (ar->n != 2 || ar->nkw) ev_fail(ev, at, "divmod() takes two arguments");
        r->u.seq.items[0] = v_binop(ev, AST_OP_FLOORDIV, ar->v[0], ar->v[1], at);
        r->u.seq.items[1] = v_binop(ev, '%', ar->v[0], ar->v[1], at);
        return r;
    }
    case BI_ROUND: {
        double x, sc;
        int64_t nd = 0;
        if (ar->n < 1 || ar->n > 2 || ar->nkw) ev_fail(ev, at, "round() takes a number and optional digits");
        if (ar->v[0]->kind == V_INT || ar->v[0]->kind == V_BOOL) return v_int(ev, ar->v[0]->u.i);
        if (ar->v[0]->kind != V_FLOAT) ev_fail(ev, ar->loc[0], "round() needs a compile-time number, got %s",
                                              v_kind_name(ar->v[0]));
        x = ar->v[0]->u.f;
        if (ar->n == 2 && ar->v[1]->kind != V_NONE) {
            nd = v_want_int(ev, ar->v[1], ar->loc[1], "round()'s digits");
            if (nd < -300 || nd > 300) ev_fail(ev, ar->loc[1], "round(): too many digits");
            sc = pow(10.0, (double)nd);
            return v_float(ev, nearbyint(x * sc) / sc);   /* round half to even, as Python */
        }
        x = nearbyint(x);
        if (!(x > -9.2e18 && x < 9.2e18)) ev_fail(ev, at, "round(): the result does not fit an integer");
        return v_int(ev, (int64_t)x);
    }
    case BI_PPOW:
        if (ar->n == 3) {
            int64_t b = v_want_int(ev, ar->v[0], ar->loc[0], "pow base"), e = v_want_int(ev, ar->v[1], ar->loc[1], "pow exponent");
            int64_t m = v_want_int(ev, ar->v[2], ar->loc[2], "pow modulus"), r = 1;
            if (m == 0 || e < 0) ev_fail(ev, at, "pow() with a modulus needs a non-negative exponent and a modulus");
            b %= m;
            while (e > 0) {
                if (e & 1) r = (int64_t)(((__int128)r * b) % m);
                b = (int64_t)(((__int128)b * b) % m);
                e >>= 1;
            }
            if (r < 0) r += m < 0 ? -m : m;
            return v_int(ev, r);
        }
        if (ar->n != 2 || ar->nkw) ev_fail(ev, at, "pow() takes two arguments");
        return v_binop(ev, AST_OP_POW, ar->v[0], ar->v[1], at);
    case BI_GETATTR: case BI_HASATTR: {
        value_t *r;
        if (ar->n < 2 || ar->n > (id == BI_GETATTR ? 3 : 2) || ar->nkw)
            ev_fail(ev, at, "%s() takes an object, a name%s", fn, id == BI_GETATTR ? " and an optional default" : "");
        if (ar->v[1]->kind != V_STR) ev_fail(ev, ar->loc[1], "%s(): the attribute name must be a string", fn);
        if (id == BI_GETATTR && ar->n == 2) return v_getattr(ev, ar->v[0], ar->v[1]->u.s.s, at);
        r = try_getattr(ev, ar->v[0], ar->v[1]->u.s.s, at);
        if (id == BI_HASATTR) return v_bool(ev, r != NULL);
        return r ? r : ar->v[2];
    }
    case BI_REPR:
        if (ar->n != 1 || ar->nkw) ev_fail(ev, at, "repr() takes one argument");
        return v_to_str(ev, ar->v[0], 1, at);
    case BI_FORMAT:
        if (ar->n < 1 || ar->n > 2 || ar->nkw) ev_fail(ev, at, "format() takes a value and a spec");
        if (ar->n == 2 && ar->v[1]->kind != V_STR) ev_fail(ev, ar->loc[1], "format(): the spec must be a string");
        return v_format(ev, ar->v[0], ar->n == 2 ? ar->v[1]->u.s.s : "", at);
    case BI_PPRINT: {
        char line[1024];
        size_t len = 0;
        static const char *const kw[] = {"sep", "end", "flush", "file", NULL};
        value_t *sep = kwarg(ev, ar, fn, kw, "sep");
        line[0] = '\0';
        for (i = 0; i < ar->n; i++) {
            value_t *s = v_is_rt(ar->v[i]) ? v_str(ev, "<run-time value>", 16) : v_to_str(ev, ar->v[i], 0, ar->loc[i]);
            int w = snprintf(line + len, sizeof line - len, "%s%s",
                             i ? (sep && sep->kind == V_STR ? sep->u.s.s : " ") : "", s->u.s.s);
            if (w < 0 || (size_t)w >= sizeof line - len) break;
            len += (size_t)w;
        }
        tilec_log("compile", "print (%s:%d): %s", ev->mod && ev->mod->path ? ev->mod->path : "program", at.line, line);
        return ev->none;
    }
    case BI_MAP: case BI_FILTER: {
        value_t *s, *r, **items;
        int n = 0;
        if (ar->n != 2 || ar->nkw) ev_fail(ev, at, "%s() takes a function and one sequence", fn);
        s = seq_of(ev, ar->v[1], ar->loc[1], fn);
        items = ev_alloc(ev, sizeof *items * (size_t)(s->u.seq.n + 1));
        for (i = 0; i < s->u.seq.n; i++) {
            value_t *x = s->u.seq.items[i];
            if (id == BI_MAP) {
                items[n++] = call1(ev, ar->v[0], x, ar->loc[0], "map()'s function");
            } else {
                value_t *t = ar->v[0]->kind == V_NONE ? x : call1(ev, ar->v[0], x, ar->loc[0], "filter()'s function");
                if (v_truth(ev, t, at)) items[n++] = x;
            }
        }
        r = v_seq(ev, n, 0);
        if (n) memcpy(r->u.seq.items, items, sizeof *items * (size_t)n);
        return r;
    }
    case BI_CALLABLE:
        if (ar->n != 1 || ar->nkw) ev_fail(ev, at, "callable() takes one argument");
        return v_bool(ev, ar->v[0]->kind == V_FUNC || ar->v[0]->kind == V_BUILTIN || ar->v[0]->kind == V_DTYPE);
    default:
        break;
    }
    ev_fail(ev, at, "unsupported builtin");
}

/* ---- methods of compile-time values --------------------------------------- */

static const char *const str_methods[] = {
    "format", "join", "split", "upper", "lower", "replace", "startswith", "endswith", "strip", "lstrip", "rstrip",
    "count", "find", "index", "isdigit", "zfill", NULL
};
static const char *const list_methods[] = {"append", "extend", "insert", "pop", "index", "count", "reverse",
                                           "sort", "copy", "remove", "clear", NULL};
static const char *const tuple_methods[] = {"index", "count", NULL};
static const char *const dict_methods[] = {"items", "keys", "values", "get", "update", "setdefault", "pop",
                                           "copy", NULL};
static const char *const int_methods[] = {"bit_length", NULL};
static const char *const float_methods[] = {"is_integer", NULL};

static int listed(const char *const *t, const char *name)
{
    for (; *t; t++)
        if (!strcmp(*t, name)) return 1;
    return 0;
}

value_t *py_method(ev_t *ev, value_t *self, const char *name)
{
    const char *const *t = NULL;
    value_t *m;
    switch (self->kind) {
    case V_STR: t = str_methods; break;
    case V_SEQ: t = self->u.seq.is_list ? list_methods : tuple_methods; break;
    case V_DICT: t = dict_methods; break;
    case V_INT: t = int_methods; break;
    case V_FLOAT: t = float_methods; break;
    default: return NULL;
    }
    if (!listed(t, name)) return NULL;
    m = v_new(ev, V_BUILTIN);
    m->u.bi.id = BI_METHOD;
    m->u.bi.self = self;
    m->u.bi.meth = name;
    return m;
}

static value_t *want_str(ev_t *ev, value_t *v, ast_loc_t loc, const char *m)
{
    if (v->kind != V_STR) ev_fail(ev, loc, "str.%s needs a string, got %s", m, v_kind_name(v));
    return v;
}

static int find_sub(const value_t *s, const value_t *sub, size_t from)
{
    size_t i;
    if (sub->u.s.len == 0) return from <= s->u.s.len ? (int)from : -1;
    for (i = from; i + sub->u.s.len <= s->u.s.len; i++)
        if (!memcmp(s->u.s.s + i, sub->u.s.s, sub->u.s.len)) return (int)i;
    return -1;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static value_t *str_method(ev_t *ev, value_t *s, const char *m, args_t *ar)
{
    ast_loc_t at = ar->at;
    int i;
    if (!strcmp(m, "format")) {
        /* "{}" / "{0}" / "{name}" fields with optional :spec */
        char *out = NULL;
        size_t n = 0, cap = 0;
        int autoi = 0;
        const char *p = s->u.s.s, *e = s->u.s.s + s->u.s.len;
        while (p < e) {
            const char *piece = p;
            size_t plen = 1;
            value_t *pv = NULL;
            if (*p == '{' && p + 1 < e && p[1] == '{') { p += 2; }
            else if (*p == '}' && p + 1 < e && p[1] == '}') { p += 2; }
            else if (*p == '{') {
                const char *q = p + 1, *c, *spec = "";
                char name[64], sp[64];
                size_t nl;
                value_t *v = NULL;
                while (q < e && *q != '}') q++;
                if (q >= e) ev_fail(ev, at, "str.format: '{' without '}'");
                c = memchr(p + 1, ':', (size_t)(q - p - 1));
                nl = (size_t)((c ? c : q) - p - 1);
                if (nl >= sizeof name || (c && (size_t)(q - c - 1) >= sizeof sp)) ev_fail(ev, at, "str.format: field too long");
                memcpy(name, p + 1, nl);
                name[nl] = '\0';
                if (c) {
                    memcpy(sp, c + 1, (size_t)(q - c - 1));
                    sp[q - c - 1] = '\0';
                    spec = sp;
                }
                if (!name[0]) {
                    if (autoi >= ar->n) ev_fail(ev, at, "str.format: not enough arguments");
                    v = ar->v[autoi++];
                } else if (name[0] >= '0' && name[0] <= '9') {
                    int k = atoi(name);
                    if (k >= ar->n) ev_fail(ev, at, "str.format: no argument %d", k);
                    v = ar->v[k];
                } else {
                    for (i = 0; i < ar->nkw; i++)
                        if (!strcmp(ar->kwn[i], name)) v = ar->kwv[i];
                    if (!v) ev_fail(ev, at, "str.format: no keyword argument '%s'", name);
                }
                pv = v_format(ev, v, spec, at);
                p = q + 1;
            } else {
                p++;
            }
            if (pv) {
                piece = pv->u.s.s;
                plen = pv->u.s.len;
            }
            if (n + plen + 1 > cap) {
                size_t nc = (cap ? cap * 2 : 64) + plen;
                char *no = ev_alloc(ev, nc);
                if (n) memcpy(no, out, n);
                out = no;
                cap = nc;
            }
            memcpy(out + n, piece, plen);
            n += plen;
        }
        return v_str(ev, out ? out : "", n);
    }
    if (!strcmp(m, "join")) {
        value_t *seq, *r = v_str(ev, "", 0);
        if (ar->n != 1) ev_fail(ev, at, "str.join takes one sequence");
        seq = seq_of(ev, ar->v[0], ar->loc[0], "str.join");
        for (i = 0; i < seq->u.seq.n; i++) {
            if (i) r = v_binop(ev, '+', r, s, at);
            r = v_binop(ev, '+', r, want_str(ev, seq->u.seq.items[i], at, "join"), at);
        }
        return r;
    }
    if (!strcmp(m, "split")) {
        value_t *sep = ar->n >= 1 ? ar->v[0] : NULL, *items[4096];
        int n = 0;
        size_t i0 = 0, k;
        if (sep && sep->kind == V_NONE) sep = NULL;
        if (sep) {
            want_str(ev, sep, at, "split");
            if (!sep->u.s.len) ev_fail(ev, at, "str.split: empty separator");
            for (;;) {
                int f = find_sub(s, sep, i0);
                if (n >= 4095) ev_fail(ev, at, "str.split: too many parts");
                if (f < 0) {
                    items[n++] = v_str(ev, s->u.s.s + i0, s->u.s.len - i0);
                    break;
                }
                items[n++] = v_str(ev, s->u.s.s + i0, (size_t)f - i0);
                i0 = (size_t)f + sep->u.s.len;
            }
        } else {
            for (k = 0; k < s->u.s.len;) {
                size_t b;
                while (k < s->u.s.len && is_space(s->u.s.s[k])) k++;
                if (k >= s->u.s.len) break;
                b = k;
                while (k < s->u.s.len && !is_space(s->u.s.s[k])) k++;
                if (n >= 4095) ev_fail(ev, at, "str.split: too many parts");
                items[n++] = v_str(ev, s->u.s.s + b, k - b);
            }
        }
        {
            value_t *r = v_seq(ev, n, 1);
            memcpy(r->u.seq.items, items, sizeof *items * (size_t)n);
            return r;
        }
    }
    if (!strcmp(m, "upper") || !strcmp(m, "lower")) {
        value_t *r = v_str(ev, s->u.s.s, s->u.s.len);
        char *c = (char *)r->u.s.s;
        size_t k;
        for (k = 0; k < r->u.s.len; k++) {
            if (m[0] == 'u' && c[k] >= 'a' && c[k] <= 'z') c[k] = (char)(c[k] - 32);
            if (m[0] == 'l' && c[k] >= 'A' && c[k] <= 'Z') c[k] = (char)(c[k] + 32);
        }
        return r;
    }
    if (!strcmp(m, "replace")) {
        value_t *a, *b, *r = v_str(ev, "", 0);
        size_t i0 = 0;
        if (ar->n != 2) ev_fail(ev, at, "str.replace takes two strings");
        a = want_str(ev, ar->v[0], at, "replace");
        b = want_str(ev, ar->v[1], at, "replace");
        if (!a->u.s.len) ev_fail(ev, at, "str.replace with an empty pattern is not supported");
        for (;;) {
            int f = find_sub(s, a, i0);
            if (f < 0) break;
            r = v_binop(ev, '+', r, v_str(ev, s->u.s.s + i0, (size_t)f - i0), at);
            r = v_binop(ev, '+', r, b, at);
            i0 = (size_t)f + a->u.s.len;
        }
        return v_binop(ev, '+', r, v_str(ev, s->u.s.s + i0, s->u.s.len - i0), at);
    }
    if (!strcmp(m, "startswith") || !strcmp(m, "endswith")) {
        value_t *x;
        if (ar->n != 1) ev_fail(ev, at, "str.%s takes one string", m);
        x = want_str(ev, ar->v[0], at, m);
        if (x->u.s.len > s->u.s.len) return ev->vfalse;
        return v_bool(ev, !memcmp(m[0] == 's' ? s->u.s.s : s->u.s.s + s->u.s.len - x->u.s.len, x->u.s.s, x->u.s.len));
    }
    if (!strcmp(m, "strip") || !strcmp(m, "lstrip") || !strcmp(m, "rstrip")) {
        size_t b = 0, e = s->u.s.len;
        if (m[0] != 'r')
            while (b < e && is_space(s->u.s.s[b])) b++;
        if (m[0] != 'l')
            while (e > b && is_space(s->u.s.s[e - 1])) e--;
        return v_str(ev, s->u.s.s + b, e - b);
    }
    if (!strcmp(m, "count") || !strcmp(m, "find") || !strcmp(m, "index")) {
        value_t *x;
        int f, c = 0;
        size_t i0 = 0;
        if (ar->n != 1) ev_fail(ev, at, "str.%s takes one string", m);
        x = want_str(ev, ar->v[0], at, m);
        f = find_sub(s, x, 0);
        if (m[0] == 'f') return v_int(ev, f);
        if (m[0] == 'i') {
            if (f < 0) ev_fail(ev, at, "str.index: substring not found");
            return v_int(ev, f);
        }
        if (!x->u.s.len) return v_int(ev, (int64_t)s->u.s.len + 1);
        while ((f = find_sub(s, x, i0)) >= 0) {
            c++;
            i0 = (size_t)f + x->u.s.len;
        }
        return v_int(ev, c);
    }
    if (!strcmp(m, "isdigit")) {
        size_t k;
        if (!s->u.s.len) return ev->vfalse;
        for (k = 0; k < s->u.s.len; k++)
            if (s->u.s.s[k] < '0' || s->u.s.s[k] > '9') return ev->vfalse;
        return ev->vtrue;
    }
    if (!strcmp(m, "zfill")) {
        int64_t w;
        if (ar->n != 1) ev_fail(ev, at, "str.zfill takes a width");
        w = v_want_int(ev, ar->v[0], at, "width");
        if (w <= (int64_t)s->u.s.len || w > 4096) return s;
        {
            char *c = ev_alloc(ev, (size_t)w + 1);
            size_t pad = (size_t)w - s->u.s.len, off = 0;
            if (s->u.s.len && (s->u.s.s[0] == '-' || s->u.s.s[0] == '+')) c[off++] = s->u.s.s[0];
            memset(c + off, '0', pad);
            memcpy(c + off + pad, s->u.s.s + off, s->u.s.len - off);
            return v_str(ev, c, (size_t)w);
        }
    }
    ev_fail(ev, at, "str.%s is not supported", m);
}

static int seq_find(ev_t *ev, value_t *s, value_t *x)
{
    int i;
    for (i = 0; i < s->u.seq.n; i++)
        if (v_equal(ev, s->u.seq.items[i], x, 0)) return i;
    return -1;
}

static void seq_resize(ev_t *ev, value_t *s, int n)
{
    value_t **ni = ev_alloc(ev, sizeof *ni * (size_t)(n + 1));
    int k = s->u.seq.n < n ? s->u.seq.n : n;
    if (k) memcpy(ni, s->u.seq.items, sizeof *ni * (size_t)k);
    s->u.seq.items = ni;
    s->u.seq.n = n;
}

static value_t *seq_method(ev_t *ev, value_t *s, const char *m, args_t *ar)
{
    ast_loc_t at = ar->at;
    int i, n = s->u.seq.n;
    if (!strcmp(m, "index") || !strcmp(m, "count")) {
        int c = 0;
        if (ar->n != 1) ev_fail(ev, at, "%s takes one value", m);
        if (m[0] == 'i') {
            i = seq_find(ev, s, ar->v[0]);
            if (i < 0) ev_fail(ev, at, "%s.index(x): x not in %s", v_kind_name(s), v_kind_name(s));
            return v_int(ev, i);
        }
        for (i = 0; i < n; i++) c += v_equal(ev, s->u.seq.items[i], ar->v[0], 0);
        return v_int(ev, c);
    }
    if (!strcmp(m, "append")) {
        if (ar->n != 1) ev_fail(ev, at, "list.append takes one value");
        if (n >= EV_MAX_SEQ) ev_fail(ev, at, "list too long");
        seq_resize(ev, s, n + 1);
        s->u.seq.items[n] = ar->v[0];
        return ev->none;
    }
    if (!strcmp(m, "extend")) {
        value_t *x;
        if (ar->n != 1) ev_fail(ev, at, "list.extend takes one sequence");
        x = seq_of(ev, ar->v[0], ar->loc[0], "list.extend");
        if ((int64_t)n + x->u.seq.n > EV_MAX_SEQ) ev_fail(ev, at, "list too long");
        seq_resize(ev, s, n + x->u.seq.n);
        for (i = 0; i < x->u.seq.n; i++) s->u.seq.items[n + i] = x->u.seq.items[i];
        return ev->none;
    }
    if (!strcmp(m, "insert")) {
        int64_t k;
        if (ar->n != 2) ev_fail(ev, at, "list.insert takes an index and a value");
        k = v_want_int(ev, ar->v[0], ar->loc[0], "index");
        if (k < 0) k += n;
        if (k < 0) k = 0;
        if (k > n) k = n;
        seq_resize(ev, s, n + 1);
        for (i = n; i > k; i--) s->u.seq.items[i] = s->u.seq.items[i - 1];
        s->u.seq.items[k] = ar->v[1];
        return ev->none;
    }
    if (!strcmp(m, "pop")) {
        int64_t k = n - 1;
        value_t *r;
        if (ar->n > 1) ev_fail(ev, at, "list.pop takes at most an index");
        if (ar->n == 1) k = v_want_int(ev, ar->v[0], ar->loc[0], "index");
        if (k < 0) k += n;
        if (k < 0 || k >= n) ev_fail(ev, at, "pop from an empty list or index out of range");
        r = s->u.seq.items[k];
        for (i = (int)k; i + 1 < n; i++) s->u.seq.items[i] = s->u.seq.items[i + 1];
        s->u.seq.n--;
        return r;
    }
    if (!strcmp(m, "remove")) {
        if (ar->n != 1) ev_fail(ev, at, "list.remove takes one value");
        i = seq_find(ev, s, ar->v[0]);
        if (i < 0) ev_fail(ev, at, "list.remove(x): x not in list");
        for (; i + 1 < n; i++) s->u.seq.items[i] = s->u.seq.items[i + 1];
        s->u.seq.n--;
        return ev->none;
    }
    if (!strcmp(m, "reverse")) {
        for (i = 0; i < n / 2; i++) {
            value_t *t = s->u.seq.items[i];
            s->u.seq.items[i] = s->u.seq.items[n - 1 - i];
            s->u.seq.items[n - 1 - i] = t;
        }
        return ev->none;
    }
    if (!strcmp(m, "sort")) {
        value_t *r;
        args_t a2 = *ar;
        value_t *one = s;
        a2.n = 1;
        a2.v = &one;
        r = py_call(ev, BI_SORTED, &a2);
        memcpy(s->u.seq.items, r->u.seq.items, sizeof *s->u.seq.items * (size_t)n);
        return ev->none;
    }
    if (!strcmp(m, "copy")) return copy_seq(ev, s, 1);
    if (!strcmp(m, "clear")) {
        s->u.seq.n = 0;
        return ev->none;
    }
    ev_fail(ev, at, "%s.%s is not supported", v_kind_name(s), m);
}

static value_t *dict_method(ev_t *ev, value_t *d, const char *m, args_t *ar)
{
    ast_loc_t at = ar->at;
    int i, np = d->u.seq.n / 2;
    if (!strcmp(m, "items") || !strcmp(m, "keys") || !strcmp(m, "values")) {
        value_t *r = v_seq(ev, np, 0);
        for (i = 0; i < np; i++) {
            if (m[0] == 'i') {
                value_t *t = v_seq(ev, 2, 0);
                t->u.seq.items[0] = d->u.seq.items[2 * i];
                t->u.seq.items[1] = d->u.seq.items[2 * i + 1];
                r->u.seq.items[i] = t;
            } else {
                r->u.seq.items[i] = d->u.seq.items[2 * i + (m[0] == 'v')];
            }
        }
        return r;
    }
    if (!strcmp(m, "get") || !strcmp(m, "setdefault") || !strcmp(m, "pop")) {
        value_t *v;
        if (ar->n < 1 || ar->n > 2) ev_fail(ev, at, "dict.%s takes a key and an optional default", m);
        v = v_dict_get(ev, d, ar->v[0]);
        if (!strcmp(m, "pop")) {
            if (!v) {
                if (ar->n < 2) ev_fail(ev, at, "dict.pop: key not found");
                return ar->v[1];
            }
            for (i = 0; i < np; i++) {
                if (v_equal(ev, d->u.seq.items[2 * i], ar->v[0], 0)) {
                    memmove(d->u.seq.items + 2 * i, d->u.seq.items + 2 * i + 2,
                            sizeof *d->u.seq.items * (size_t)(d->u.seq.n - 2 * i - 2));
                    d->u.seq.n -= 2;
                    break;
                }
            }
            return v;
        }
        if (v) return v;
        v = ar->n == 2 ? ar->v[1] : ev->none;
        if (m[0] == 's') v_dict_set(ev, d, ar->v[0], v, at);
        return v;
    }
    if (!strcmp(m, "update")) {
        if (ar->n > 1) ev_fail(ev, at, "dict.update takes one dict");
        if (ar->n == 1) {
            value_t *o = ar->v[0];
            if (o->kind != V_DICT) ev_fail(ev, ar->loc[0], "dict.update needs a dict, got %s", v_kind_name(o));
            for (i = 0; i + 1 < o->u.seq.n; i += 2) v_dict_set(ev, d, o->u.seq.items[i], o->u.seq.items[i + 1], at);
        }
        for (i = 0; i < ar->nkw; i++) v_dict_set(ev, d, v_str(ev, ar->kwn[i], strlen(ar->kwn[i])), ar->kwv[i], at);
        return ev->none;
    }
    if (!strcmp(m, "copy")) {
        value_t *r = v_new(ev, V_DICT);
        r->u.seq.n = 0;
        r->u.seq.items = NULL;
        for (i = 0; i + 1 < d->u.seq.n; i += 2) v_dict_set(ev, r, d->u.seq.items[i], d->u.seq.items[i + 1], at);
        return r;
    }
    ev_fail(ev, at, "dict.%s is not supported", m);
}

value_t *py_method_call(ev_t *ev, value_t *self, const char *m, args_t *ar)
{
    if (self->kind == V_STR) return str_method(ev, self, m, ar);
    if (self->kind == V_SEQ) {
        if (!self->u.seq.is_list && strcmp(m, "index") && strcmp(m, "count"))
            ev_fail(ev, ar->at, "a tuple has no method '%s'", m);
        return seq_method(ev, self, m, ar);
    }
    if (self->kind == V_DICT) return dict_method(ev, self, m, ar);
    if (self->kind == V_INT && !strcmp(m, "bit_length")) {
        uint64_t u = self->u.i < 0 ? (uint64_t)(-(self->u.i + 1)) + 1 : (uint64_t)self->u.i;
        int b = 0;
        while (u) {
            b++;
            u >>= 1;
        }
        return v_int(ev, b);
    }
    if (self->kind == V_FLOAT && !strcmp(m, "is_integer"))
        return v_bool(ev, isfinite(self->u.f) && self->u.f == floor(self->u.f));
    ev_fail(ev, ar->at, "%s has no method '%s'", v_kind_name(self), m);
}
