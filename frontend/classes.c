/*
 * frontend/classes.c — compile-time classes.
 *
 * TileLang files keep small classes next to their kernels: a bag of
 * constants, or a tuning-space description whose __init__ stores its
 * arguments and whose methods compute configs.  tilec evaluates them at
 * compile time: a `class` statement runs its body in a namespace of its
 * own (V_CLASS: its constants and functions); calling the class makes an
 * object (V_OBJECT: its own attributes) and runs __init__ on it; an
 * attribute of an object is its own, else the class's, where a function is
 * bound to the object (a method).  No inheritance beyond `object`, no
 * special methods other than __init__; nothing of this reaches a kernel
 * except the values it computes.
 */
#include "eval_internal.h"

#include <string.h>

void cls_exec(ev_t *ev, ast_stmt_t *s)
{
    value_t *c = v_new(ev, V_CLASS);
    env_t *saved = ev->env;
    int saved_mod = ev->at_module;
    if (ev->tail) ev_fail(ev, s->loc, "a class cannot be defined inside a kernel");
    c->u.obj.name = s->u.def.name;
    c->u.obj.attrs = ev_env_new(ev, saved);   /* the body sees the enclosing names; methods do not see it */
    c->u.obj.cls = NULL;
    ev->env = c->u.obj.attrs;
    ev->at_module = 0;
    ev_exec_block(ev, &s->u.def.body);
    if (ev->ctl != CTL_NONE) ev_fail(ev, s->loc, "return, break or continue in a class body");
    ev->env = saved;
    ev->at_module = saved_mod;
    /* the methods' closures are the enclosing scope, as in Python */
    {
        int i;
        for (i = 0; i < c->u.obj.attrs->n; i++) {
            value_t *m = c->u.obj.attrs->vals[i];
            if (m->kind == V_FUNC && m->u.fn->closure == c->u.obj.attrs) m->u.fn->closure = saved;
        }
    }
    env_set(ev, ev->env, s->u.def.name, c);
}

/* f bound to self: a copy of the function that receives self first. */
static value_t *bind_method(ev_t *ev, value_t *f, value_t *self)
{
    value_t *m = v_new(ev, V_FUNC);
    func_t *fn = ev_alloc(ev, sizeof *fn);
    *fn = *f->u.fn;
    fn->self = self;
    m->u.fn = fn;
    return m;
}

value_t *cls_call(ev_t *ev, value_t *c, args_t *ar)
{
    value_t *o = v_new(ev, V_OBJECT);
    int i = ev_env_find(c->u.obj.attrs, "__init__");
    o->u.obj.name = c->u.obj.name;
    o->u.obj.attrs = ev_env_new(ev, NULL);
    o->u.obj.cls = c;
    if (i >= 0 && c->u.obj.attrs->vals[i]->kind == V_FUNC) {
        value_t *init = bind_method(ev, c->u.obj.attrs->vals[i], o);
        ev_call_func(ev, init->u.fn, ar->n, ar->v, ar->nkw, ar->kwn, ar->kwv, ar->at);
    } else if (ar->n || ar->nkw) {
        ev_fail(ev, ar->at, "class '%s' has no __init__ and takes no arguments", c->u.obj.name);
    }
    return o;
}

value_t *cls_getattr(ev_t *ev, value_t *v, const char *name, ast_loc_t loc)
{
    int i;
    if (v->kind == V_OBJECT) {
        if ((i = ev_env_find(v->u.obj.attrs, name)) >= 0) return v->u.obj.attrs->vals[i];
        if ((i = ev_env_find(v->u.obj.cls->u.obj.attrs, name)) >= 0) {
            value_t *a = v->u.obj.cls->u.obj.attrs->vals[i];
            return a->kind == V_FUNC ? bind_method(ev, a, v) : a;
        }
        ev_fail(ev, loc, "'%s' object has no attribute '%s'", v->u.obj.name, name);
    }
    if ((i = ev_env_find(v->u.obj.attrs, name)) >= 0) return v->u.obj.attrs->vals[i];
    ev_fail(ev, loc, "class '%s' has no attribute '%s'", v->u.obj.name, name);
}

void cls_setattr(ev_t *ev, value_t *v, const char *name, value_t *val, ast_loc_t loc)
{
    if (ev->tail && v_is_rt(val))
        ev_fail(ev, loc, "an attribute of '%s' holds compile-time values, not a run-time value", v->u.obj.name);
    env_set(ev, v->u.obj.attrs, name, val);
}
