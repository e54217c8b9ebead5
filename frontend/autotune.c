/*
 * frontend/autotune.c — `@autotune(configs=...)` kept as the program's
 * tuning space (see autotune.h for the hooks the evaluator calls).
 *
 * TileLang's decorator takes `configs` as a list of dicts, or a function
 * returning one that is called with the factory's arguments; tilec
 * evaluates it at compile time and checks that every key names a factory
 * parameter and every value is something -D can say (int, float, bool,
 * string, dtype).  Each config is recorded as NAME=VALUE text, exactly what
 * `-D` would take, so the tuner can compile a candidate by adding defines.
 * The other keywords (warmup, rep, timeout, the reference and check
 * options) are accepted: `tilec tune` has its own rules for those.
 */
#include "autotune.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define AT_MAX_CONFIGS 100000

typedef struct at_space {
    value_t *configs;   /* a list of dicts, or a function returning one */
    ast_loc_t loc;
    value_t *list;      /* the evaluated list, once evaluated */
} at_space_t;

value_t *at_decorator(ev_t *ev, args_t *ar, ast_loc_t at)
{
    static const char *const known[] = {
        "configs", "warmup", "rep", "timeout", "supply_type", "ref_prog", "supply_prog", "rtol", "atol",
        "max_mismatched_ratio", "skip_check", "manual_check_prog", "cache_input_tensors", "target", "early_stop", "early_stop_factor", "early_stop_patience",
        NULL};
    value_t *v = v_new(ev, V_BUILTIN);
    at_space_t *sp = NULL;
    int i, j;
    v->u.bi.id = BI_AUTOTUNE;
    if (ar->n > 1) ev_fail(ev, ar->loc[1], "autotune takes its options as keywords (configs=..., warmup=...)");
    if (ar->n == 1) {
        sp = ev_alloc(ev, sizeof *sp);
        sp->configs = ar->v[0];
        sp->loc = ar->loc[0];
    }
    for (i = 0; i < ar->nkw; i++) {
        for (j = 0; known[j] && strcmp(known[j], ar->kwn[i]); j++) {
        }
        if (!known[j]) ev_fail(ev, ar->kwloc[i], "autotune has no keyword argument '%s'", ar->kwn[i]);
        if (j == 0) {
            if (sp) ev_fail(ev, ar->kwloc[i], "autotune got two values for 'configs'");
            sp = ev_alloc(ev, sizeof *sp);
            sp->configs = ar->kwv[i];
            sp->loc = ar->kwloc[i];
        }
    }
    (void)at;
    /* the space rides on the builtin value until exec_def takes it */
    v->u.bi.self = (value_t *)sp;
    return v;
}

int at_apply(ev_t *ev, func_t *fn, value_t *dv)
{
    (void)ev;
    if (dv->kind != V_BUILTIN || dv->u.bi.id != BI_AUTOTUNE) return 0;
    if (dv->u.bi.self) fn->tune = (struct at_space *)dv->u.bi.self;
    return 1;
}

/* -D text of a compile-time value; NULL when -D cannot say it. */
static const char *define_text(ev_t *ev, const value_t *v)
{
    char buf[64];
    switch (v->kind) {
    case V_BOOL: return v->u.i ? "True" : "False";
    case V_INT: snprintf(buf, sizeof buf, "%lld", (long long)v->u.i); break;
    case V_FLOAT:
        if (!isfinite(v->u.f)) return NULL;
        snprintf(buf, sizeof buf, "%.17g", v->u.f);
        if (!strpbrk(buf, ".e")) strcat(buf, ".0");
        break;
    case V_DTYPE: return tilec_dtype_name(v->u.dt);
    case V_STR: {
        /* quoted when the bare text would read back as something else */
        value_t *back;
        char *q;
        if (memchr(v->u.s.s, '\0', v->u.s.len) || memchr(v->u.s.s, '"', v->u.s.len)) return NULL;
        back = v_parse_define(ev, v->u.s.s, NULL);
        if (back && back->kind == V_STR && back->u.s.len == v->u.s.len && !memcmp(back->u.s.s, v->u.s.s, v->u.s.len))
            return ev_irstr(ev, v->u.s.s);
        q = ev_alloc(ev, v->u.s.len + 3);
        q[0] = '"';
        memcpy(q + 1, v->u.s.s, v->u.s.len);
        q[v->u.s.len + 1] = '"';
        q[v->u.s.len + 2] = '\0';
        return ev_irstr(ev, q);
    }
    default: return NULL;
    }
    return ev_irstr(ev, buf);
}

static int param_index(const func_t *fn, const char *name)
{
    int i;
    for (i = 0; i < fn->def->u.def.nparams; i++)
        if (!strcmp(fn->def->u.def.params[i].name, name)) return i;
    return -1;
}

/* Evaluates and checks the space once; args[0..nbound) are the factory's
 * arguments bound so far (what a configs function may take). */
/* A config's "pass_configs" entry (TileLang tunes compiler options too):
 * accepted, not a parameter; the tuning space keeps the parameters only. */
static int is_pass_configs(const value_t *k)
{
    return k->kind == V_STR && !strcmp(k->u.s.s, "pass_configs");
}

static value_t *space_list(ev_t *ev, func_t *fn, value_t **args, int nbound)
{
    at_space_t *sp = (at_space_t *)fn->tune;
    value_t *l = sp->configs;
    const char *fname = fn->def->u.def.name;
    int i, j;
    if (sp->list) return sp->list;
    if (l->kind == V_FUNC) {
        /* called with the factory's arguments its parameters name */
        ast_stmt_t *cd = l->u.fn->def;
        int nkw = 0;
        const char **kwn = ev_alloc(ev, sizeof *kwn * (size_t)(cd->u.def.nparams + 1));
        value_t **kwv = ev_alloc(ev, sizeof *kwv * (size_t)(cd->u.def.nparams + 1));
        for (i = 0; i < cd->u.def.nparams; i++) {
            int k = param_index(fn, cd->u.def.params[i].name);
            if (k >= 0 && k < nbound && args[k]) {
                kwn[nkw] = cd->u.def.params[i].name;
                kwv[nkw++] = args[k];
            }
        }
        l = ev_call_func(ev, l->u.fn, 0, NULL, nkw, kwn, kwv, sp->loc);
    }
    if (l->kind != V_SEQ)
        ev_fail(ev, sp->loc, "autotune configs of '%s' must be a list of dicts (or a function returning one), "
                "not %s", fname, v_kind_name(l));
    if (l->u.seq.n > AT_MAX_CONFIGS)
        ev_fail(ev, sp->loc, "autotune configs of '%s': %d configs, at most %d", fname, l->u.seq.n, AT_MAX_CONFIGS);
    for (i = 0; i < l->u.seq.n; i++) {
        value_t *d = l->u.seq.items[i];
        if (d->kind != V_DICT)
            ev_fail(ev, sp->loc, "autotune config %d of '%s' is %s, not a dict of parameter values", i, fname,
                    v_kind_name(d));
        for (j = 0; j + 1 < d->u.seq.n; j += 2) {
            value_t *k = d->u.seq.items[j], *val = d->u.seq.items[j + 1];
            if (is_pass_configs(k) && val->kind == V_DICT) continue;
            if (k->kind != V_STR || param_index(fn, k->u.s.s) < 0)
                ev_fail(ev, sp->loc, "autotune config %d of '%s': key %s%s%s is not a parameter of '%s'", i,
                        fname, k->kind == V_STR ? "'" : "", k->kind == V_STR ? k->u.s.s : v_kind_name(k),
                        k->kind == V_STR ? "'" : "", fname);
            if (!define_text(ev, val))
                ev_fail(ev, sp->loc, "autotune config %d of '%s': '%s' is %s; a config value must be an int, "
                        "float, bool, string or dtype", i, fname, k->u.s.s, v_kind_name(val));
        }
    }
    sp->list = l;
    return l;
}

value_t *at_fallback(ev_t *ev, func_t *fn, int i, value_t **args)
{
    value_t *l, *key;
    if (!fn->tune) return NULL;
    l = space_list(ev, fn, args, i);
    if (l->u.seq.n == 0) return NULL;
    key = v_str(ev, fn->def->u.def.params[i].name, strlen(fn->def->u.def.params[i].name));
    return v_dict_get(ev, l->u.seq.items[0], key);
}

void at_finish(ev_t *ev, func_t *fn, value_t **args, tilec_frontend_result_t *out)
{
    ast_stmt_t *d = fn->def;
    value_t *l;
    int i, j;
    out->nparams = d->u.def.nparams;
    out->params = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *out->params * (size_t)(d->u.def.nparams + 1)));
    for (i = 0; i < d->u.def.nparams; i++) {
        out->params[i].name = ev_irstr(ev, d->u.def.params[i].name);
        out->params[i].dflt = fn->defaults[i] ? define_text(ev, fn->defaults[i]) : NULL;
        out->params[i].value = args[i] ? define_text(ev, args[i]) : NULL;
    }
    if (!fn->tune) return;
    l = space_list(ev, fn, args, d->u.def.nparams);
    out->nconfigs = l->u.seq.n;
    out->configs = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *out->configs * (size_t)(l->u.seq.n + 1)));
    for (i = 0; i < l->u.seq.n; i++) {
        value_t *dv = l->u.seq.items[i];
        tilec_frontend_config_t *c = &out->configs[i];
        int n = dv->u.seq.n / 2;
        c->names = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *c->names * (size_t)(n + 1)));
        c->values = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *c->values * (size_t)(n + 1)));
        for (j = 0; j < n; j++) {
            if (is_pass_configs(dv->u.seq.items[2 * j])) continue;
            c->names[c->n] = ev_irstr(ev, dv->u.seq.items[2 * j]->u.s.s);
            c->values[c->n++] = define_text(ev, dv->u.seq.items[2 * j + 1]);
        }
    }
}
