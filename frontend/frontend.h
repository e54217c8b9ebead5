/*
 * frontend/frontend.h — from source text to tile IR.
 *
 * tilec_frontend_compile() lexes and parses a tile program, runs the
 * compile-time part (kernel factories, module constants, @T.macro inlining,
 * compile-time `if`, constant folding), type- and shape-checks it, and builds
 * the tile IR module of the chosen entry.  Every user error becomes a
 * diagnostic in d and a -1 return; nothing the user writes may crash it.
 */
#ifndef TILEC_FRONTEND_H
#define TILEC_FRONTEND_H

#include "tilec/ir.h"
#include "diag.h"

/* One -D NAME=VALUE.  VALUE is a Python literal: int, float, True/False,
 * a string with or without quotes (dtype names), or a T.dynamic symbol's
 * launch value. */
typedef struct tilec_define { const char *name; const char *value; } tilec_define_t;

/* A factory parameter: its default and the value it was bound to, as -D
 * text (NULL when none, or when -D cannot say it, e.g. a tuple). */
typedef struct tilec_frontend_param { const char *name, *dflt, *value; } tilec_frontend_param_t;
/* One @autotune config: n NAME=VALUE pairs in -D text. */
typedef struct tilec_frontend_config { int n; const char **names, **values; } tilec_frontend_config_t;

/* A further kernel of the entry (its prim_func has several `with T.Kernel`
 * blocks): launched after the previous one, with the same tensor
 * parameters; its symbols' -D values as for the first. */
typedef struct tilec_frontend_kernel {
    tilec_ir_module_t *module;    /* arena */
    int nsyms;
    int64_t *sym_values;          /* arena array [nsyms] */
} tilec_frontend_kernel_t;

typedef struct tilec_frontend_result {
    tilec_ir_module_t *module;    /* arena; the first kernel */
    int nmore;                    /* further kernels, launched in order after it */
    tilec_frontend_kernel_t *more; /* arena array [nmore] */
    /* For each T.dynamic symbol of the kernel (vars of kind SYM, in var id
     * order): the value given with -D, or -1 when none was given. */
    int nsyms;
    int64_t *sym_values;       /* arena array [nsyms] */
    const char *entry;         /* name of the factory / prim_func used */
    /* The entry factory's parameters (none for a top-level prim_func) and
     * its @autotune configs (frontend/autotune.c); arena arrays. */
    int nparams;
    tilec_frontend_param_t *params;
    int nconfigs;
    tilec_frontend_config_t *configs;
    /* tilelang.jit(pass_configs={...}) of the entry, in order: keys as
     * TileLang spells them ("tl.enable_fast_math" for
     * tilelang.PassConfigKey.TL_ENABLE_FAST_MATH) and values as text
     * ("True", "16"), kept for the backend's compile options. */
    int npass_configs;
    const char **pass_config_keys, **pass_config_values;   /* arena arrays */
} tilec_frontend_result_t;

/* entry may be NULL (the last top-level factory or prim_func).  A define
 * that names neither a factory parameter, a module constant nor a symbol is
 * an error, as is a symbol given twice. */
int tilec_frontend_compile(tilec_arena_t *a, tilec_diag_t *d, const char *path,
                           const char *src, size_t len, const char *entry,
                           const tilec_define_t *defs, int ndefs,
                           tilec_frontend_result_t *out);

#endif
