/*
 * frontend/autotune.h — the tuning space a program declares with
 * `@autotune(configs=...)` (TileLang's decorator), kept with the program.
 *
 * The evaluator calls four hooks: the decorator call builds an at_space_t
 * (its configs expression evaluated there, or a function to call later);
 * exec_def attaches it to the decorated factory; while the factory's
 * arguments are bound, a parameter that neither -D nor a default gives
 * takes the first config's value; and finish records the factory's
 * parameters (name, default, bound value) and every config as -D text in
 * the frontend result, where the tuner (core/tune.c) and the public API
 * read them.
 */
#ifndef TILEC_FRONTEND_AUTOTUNE_H
#define TILEC_FRONTEND_AUTOTUNE_H

#include "eval_internal.h"

/* The value of `autotune(configs=..., warmup=..., ...)`. */
value_t *at_decorator(ev_t *ev, args_t *ar, ast_loc_t at);
/* A decorator value: when it is autotune's, attach it to fn and return 1. */
int at_apply(ev_t *ev, func_t *fn, value_t *dv);
/* The value for parameter i of factory fn that has neither -D nor a
 * default, from the first config; args[0..i) are bound.  NULL: none. */
value_t *at_fallback(ev_t *ev, func_t *fn, int i, value_t **args);
/* Records the factory's parameters and configs in out (IR arena). */
void at_finish(ev_t *ev, func_t *fn, value_t **args, tilec_frontend_result_t *out);

#endif
