/*
 * core/program.c — programs of the public C API (include/tilec/tilec.h):
 * a tile-program source through the frontend (or tile IR text through the
 * reader) and the core passes, kept with its text IR (what crosses the
 * plugin ABI), its parameter shapes, its T.dynamic symbols and what the
 * tuner needs to name the problem: the entry, the source hash, the -D
 * values it was loaded with, the factory's parameters and its @autotune
 * configs.  Also the reference interpreter on a program.
 */
#define TILEC_BUILDING_LIBRARY 1
#include "api_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "interp.h"
#include "log.h"
#include "passes.h"
#include "tilec/sdk.h"

/* Deepest shape expression the evaluator follows. */
#define MAX_EXPR_DEPTH 64

/* ---- programs ----------------------------------------------------------- */

/* Value of an integer shape expression with the given symbol values;
 * returns -1 when it depends on an unknown symbol or cannot be evaluated. */
int tilec_api_eval_int(const tilec_program_t *p, const tilec_ir_expr_t *e, const int64_t *syms,
                    int depth, int64_t *out)
{
    int64_t a, b;
    if (!e || depth > MAX_EXPR_DEPTH) {
        return -1;
    }
    switch (e->kind) {
    case TILEC_EX_INT:
        *out = e->u.i;
        return 0;
    case TILEC_EX_VAR: {
        int id = e->u.var ? e->u.var->id : -1;
        int s = (id >= 0 && id < p->mod->kernel->nvars) ? p->sym_of_var[id] : -1;
        if (s < 0 || !syms || syms[s] < 0) {
            return -1;
        }
        *out = syms[s];
        return 0;
    }
    case TILEC_EX_CAST:
        return tilec_api_eval_int(p, e->u.cast.a, syms, depth + 1, out);
    case TILEC_EX_UNARY:
        if (e->u.un.op != TILEC_UN_NEG || tilec_api_eval_int(p, e->u.un.a, syms, depth + 1, &a) != 0) {
            return -1;
        }
        *out = -a;
        return 0;
    case TILEC_EX_BINARY:
        if (tilec_api_eval_int(p, e->u.bin.a, syms, depth + 1, &a) != 0 ||
            tilec_api_eval_int(p, e->u.bin.b, syms, depth + 1, &b) != 0) {
            return -1;
        }
        switch (e->u.bin.op) {
        case TILEC_BIN_ADD: *out = a + b; return 0;
        case TILEC_BIN_SUB: *out = a - b; return 0;
        case TILEC_BIN_MUL: *out = a * b; return 0;
        case TILEC_BIN_MIN: *out = a < b ? a : b; return 0;
        case TILEC_BIN_MAX: *out = a > b ? a : b; return 0;
        case TILEC_BIN_DIV:
            if (b == 0) return -1;
            *out = a / b;
            return 0;
        case TILEC_BIN_FLOORDIV:
            if (b == 0) return -1;
            *out = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
            return 0;
        case TILEC_BIN_FLOORMOD:
            if (b == 0) return -1;
            *out = a % b;
            if (*out != 0 && ((*out < 0) != (b < 0))) *out += b;
            return 0;
        default:
            return -1;
        }
    default:
        return -1;
    }
}

/* The symbol a shape dimension is exactly (through casts), or -1. */
int tilec_api_dim_symbol(const tilec_program_t *p, const tilec_ir_expr_t *e)
{
    while (e && e->kind == TILEC_EX_CAST) {
        e = e->u.cast.a;
    }
    if (e && e->kind == TILEC_EX_VAR && e->u.var && e->u.var->id >= 0 &&
        e->u.var->id < p->mod->kernel->nvars) {
        return p->sym_of_var[e->u.var->id];
    }
    return -1;
}

void tilec_api_program_unref(tilec_program_t *p)
{
    if (!p || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) != 0) {
        return;
    }
    tilec_api_program_unref(p->next);
    free(p->ir);
    tilec_arena_destroy(&p->arena);
    free(p);
}

TILEC_API void tilec_program_free(tilec_program_t *p)
{
    tilec_api_program_unref(p);
}

/* Fills the symbol and parameter tables from the module. */
static int program_tables(tilec_program_t *p, const tilec_frontend_result_t *r)
{
    tilec_ir_kernel_t *k = p->mod->kernel;
    int ns = 0;
    p->sym_of_var = tilec_arena_alloc(&p->arena, sizeof(int) * (size_t)(k->nvars + 1));
    if (!p->sym_of_var) {
        return -1;
    }
    for (int i = 0; i < k->nvars; i++) {
        p->sym_of_var[i] = -1;
        if (k->vars[i]->kind == TILEC_VAR_SYM) {
            ns++;
        }
    }
    p->nsyms = ns;
    p->sym_names = tilec_arena_alloc(&p->arena, sizeof(char *) * (size_t)(ns + 1));
    p->sym_values = tilec_arena_alloc(&p->arena, sizeof(int64_t) * (size_t)(ns + 1));
    if (!p->sym_names || !p->sym_values) {
        return -1;
    }
    ns = 0;
    for (int i = 0; i < k->nvars; i++) {
        if (k->vars[i]->kind != TILEC_VAR_SYM) {
            continue;
        }
        p->sym_of_var[i] = ns;
        p->sym_names[ns] = k->vars[i]->name;
        p->sym_values[ns] = (r->nsyms == p->nsyms && r->sym_values) ? r->sym_values[ns] : -1;
        ns++;
    }
    if (r->nsyms != p->nsyms) {
        tilec_log("compile", "frontend reported %d symbols, kernel has %d; -D values ignored",
                  r->nsyms, p->nsyms);
    }
    p->entry = tilec_arena_strdup(&p->arena, r->entry ? r->entry : k->name);
    p->nfparams = r->nparams;
    p->fparams = r->params;
    p->nconfigs = r->nconfigs;
    p->configs = tilec_arena_alloc(&p->arena, sizeof *p->configs * (size_t)(r->nconfigs + 1));
    p->config_n = tilec_arena_alloc(&p->arena, sizeof *p->config_n * (size_t)(r->nconfigs + 1));
    if (!p->entry || !p->configs || !p->config_n) {
        return -1;
    }
    for (int i = 0; i < r->nconfigs; i++) {
        const tilec_frontend_config_t *c = &r->configs[i];
        p->config_n[i] = c->n;
        p->configs[i] = tilec_arena_alloc(&p->arena, sizeof *p->configs[i] * (size_t)(c->n + 1));
        if (!p->configs[i]) {
            return -1;
        }
        for (int j = 0; j < c->n; j++) {
            p->configs[i][j].name = c->names[j];
            p->configs[i][j].value = c->values[j];
        }
    }
    /* tilelang.jit(pass_configs=...): every compile passes them (api_compile.c) */
    p->npass_configs = r->npass_configs;
    p->pass_configs = tilec_arena_alloc(&p->arena, sizeof *p->pass_configs *
                                                       (size_t)(r->npass_configs + 1));
    if (!p->pass_configs) {
        return -1;
    }
    for (int i = 0; i < r->npass_configs; i++) {
        p->pass_configs[i].name = r->pass_config_keys[i];
        p->pass_configs[i].value = r->pass_config_values[i];
    }
    p->nparams = k->nparams;
    p->params = tilec_arena_alloc(&p->arena, sizeof *p->params * (size_t)(k->nparams + 1));
    if (!p->params) {
        return -1;
    }
    for (int i = 0; i < k->nparams; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        tilec_api_param_t *q = &p->params[i];
        q->name = b->name;
        q->elem = (tilec_elem_t)b->dtype;
        q->ndim = b->ndim;
        q->buf = b;
        for (int d = 0; d < b->ndim && d < TILEC_IR_MAX_DIMS; d++) {
            if (tilec_api_eval_int(p, b->shape[d], p->sym_values, 0, &q->shape[d]) != 0) {
                q->shape[d] = -1;
            }
        }
    }
    return 0;
}

static void source_hash(tilec_program_t *p, const char *src, size_t len)
{
    uint8_t dg[32];
    tilec_sha256(src ? src : "", src ? len : 0, dg);
    tilec_sha256_hex(dg, p->source_hash);
}

/* Runs the core passes on p->mod, prints its IR and fills its tables;
 * frees p on failure. */
static tilec_status_t program_finish(tilec_context_t *ctx, tilec_program_t *p, const char *name,
                                     const tilec_frontend_result_t *r, double t0,
                                     tilec_program_t **out)
{
    char err[1024];
    err[0] = '\0';
    if (tilec_passes_run(&p->arena, p->mod, err, sizeof err) != 0) {
        tilec_api_fail(ctx, TILEC_E_PROGRAM, "%s: error: %s", name, err[0] ? err : "invalid tile IR");
        tilec_api_program_unref(p);
        return TILEC_E_PROGRAM;
    }
    p->ir = tilec_ir_print(p->mod);
    if (!p->ir || program_tables(p, r) != 0) {
        tilec_api_program_unref(p);
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    p->ir_len = strlen(p->ir);
    tilec_log("compile", "%s: kernel '%s' with %d parameter(s), %d symbol(s), %zu bytes of IR "
              "in %.2f ms", name, p->mod->kernel->name, p->nparams, p->nsyms, p->ir_len,
              tilec_api_now_ms() - t0);
    *out = p;
    return TILEC_OK;
}

/* The further kernels of r (a prim_func with several `with T.Kernel`
 * blocks) as p's chain: each a program of its own over the same -D values,
 * its module checked by the passes like the first.  Frees p on failure. */
static tilec_status_t program_chain(tilec_context_t *ctx, tilec_program_t *p, const char *name,
                                    const tilec_frontend_result_t *r, double t0)
{
    tilec_program_t **tail = &p->next;
    for (int i = 0; i < r->nmore; i++) {
        tilec_frontend_result_t rk = *r;
        tilec_program_t *q = calloc(1, sizeof *q), *done = NULL;
        tilec_status_t st;
        if (!q) {
            tilec_api_program_unref(p);
            return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
        }
        q->refs = 1;
        tilec_arena_init(&q->arena);
        memcpy(q->source_hash, p->source_hash, sizeof q->source_hash);
        q->defs = p->defs;
        q->ndefs = p->ndefs;
        q->mod = r->more[i].module;
        rk.module = r->more[i].module;
        rk.nsyms = r->more[i].nsyms;
        rk.sym_values = r->more[i].sym_values;
        if ((st = program_finish(ctx, q, name, &rk, t0, &done)) != TILEC_OK) {
            tilec_api_program_unref(p);
            return st;
        }
        if (done->nparams != p->nparams) {
            tilec_api_program_unref(done);
            tilec_api_program_unref(p);
            return tilec_api_fail(ctx, TILEC_E_PROGRAM, "%s: error: the kernels of a chain must have the "
                                  "same tensor parameters", name);
        }
        *tail = done;
        tail = &done->next;
    }
    tilec_log("compile", "%s: %d kernels, launched in order", name, r->nmore + 1);
    return TILEC_OK;
}

TILEC_API tilec_status_t tilec_program_load_string(tilec_context_t *ctx, const char *name,
                                                   const char *src, size_t len,
                                                   const tilec_define_kv_t *defs, int ndefs,
                                                   const char *entry, tilec_program_t **out)
{
    tilec_program_t *p;
    tilec_diag_t *d;
    tilec_frontend_result_t r;
    tilec_define_t *fd = NULL;
    double t0 = tilec_api_now_ms();
    if (out) {
        *out = NULL;
    }
    if (!out || (!src && len) || ndefs < 0 || (ndefs > 0 && !defs)) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_program_load_string: bad arguments");
    }
    if (!src) {
        src = "";
    }
    if (!name) {
        name = "<string>";
    }
    for (int i = 0; i < ndefs; i++) {
        if (!defs[i].name || !defs[i].value) {
            return tilec_api_fail(ctx, TILEC_E_INVALID, "define %d has a NULL name or value", i);
        }
    }
    p = calloc(1, sizeof *p);
    d = malloc(sizeof *d);
    if (ndefs > 0) {
        fd = calloc((size_t)ndefs, sizeof *fd);
    }
    if (!p || !d || (ndefs > 0 && !fd)) {
        free(p);
        free(d);
        free(fd);
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    p->refs = 1;
    tilec_arena_init(&p->arena);
    source_hash(p, src, len);
    p->defs = tilec_arena_alloc(&p->arena, sizeof *p->defs * (size_t)(ndefs + 1));
    for (int i = 0; p->defs && i < ndefs; i++) {
        fd[i].name = defs[i].name;
        fd[i].value = defs[i].value;
        p->defs[i].name = tilec_arena_strdup(&p->arena, defs[i].name);
        p->defs[i].value = tilec_arena_strdup(&p->arena, defs[i].value);
        if (!p->defs[i].name || !p->defs[i].value) {
            p->defs = NULL;
        }
    }
    if (!p->defs) {
        free(fd);
        free(d);
        tilec_api_program_unref(p);
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    p->ndefs = ndefs;
    memset(&r, 0, sizeof r);
    tilec_diag_init(d, name, src, len);
    tilec_log("compile", "frontend: %s (%zu bytes, entry %s, %d define(s))", name, len,
              entry ? entry : "(last)", ndefs);
    if (tilec_frontend_compile(&p->arena, d, name, src, len, entry, fd, ndefs, &r) != 0 ||
        !r.module || !r.module->kernel) {
        const char *t = tilec_diag_text(d);
        tilec_api_fail(ctx, TILEC_E_PROGRAM, "%s", t && *t ? t : "invalid program");
        free(fd);
        free(d);
        tilec_api_program_unref(p);
        return TILEC_E_PROGRAM;
    }
    free(fd);
    free(d);
    p->mod = r.module;
    /* pass_configs are not compile options yet (ABI 1.0 has none): listed */
    for (int i = 0; i < r.npass_configs; i++)
        tilec_log("compile", "pass_configs: %s = %s (recorded, not passed to the backend)", r.pass_config_keys[i],
                  r.pass_config_values[i]);
    {
        tilec_status_t st = program_finish(ctx, p, name, &r, t0, out);
        if (st == TILEC_OK && r.nmore > 0 && (st = program_chain(ctx, *out, name, &r, t0)) != TILEC_OK) {
            *out = NULL;
        }
        return st;
    }
}

/* -D NAME=VALUE on a .tir module binds its T.dynamic symbols (it has no
 * factory parameters): r gets their values in var-id order, -1 unbound. */
static int tir_defines(tilec_context_t *ctx, tilec_program_t *p, const char *name, const tilec_define_kv_t *defs,
                       int ndefs, tilec_frontend_result_t *r)
{
    const tilec_ir_kernel_t *k = p->mod->kernel;
    int ns = 0;
    for (int i = 0; i < k->nvars; i++) {
        ns += k->vars[i] && k->vars[i]->kind == TILEC_VAR_SYM;
    }
    r->nsyms = ns;
    r->sym_values = tilec_arena_alloc(&p->arena, sizeof(int64_t) * (size_t)(ns + 1));
    if (!r->sym_values) {
        tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
        return -1;
    }
    for (int j = 0; j < ns; j++) {
        r->sym_values[j] = -1;
    }
    for (int d = 0; d < ndefs; d++) {
        int j = 0, found = 0;
        for (int i = 0; i < k->nvars; i++) {
            if (!k->vars[i] || k->vars[i]->kind != TILEC_VAR_SYM) {
                continue;
            }
            if (strcmp(k->vars[i]->name, defs[d].name) == 0) {
                char *end;
                long long v = strtoll(defs[d].value, &end, 10);
                if (end == defs[d].value || *end || v < 0 || v > INT32_MAX) {
                    tilec_api_fail(ctx, TILEC_E_PROGRAM, "%s: error: -D %s=%s: a symbol takes an integer in [0, 2^31)",
                                   name, defs[d].name, defs[d].value);
                    return -1;
                }
                r->sym_values[j] = v;
                found = 1;
            }
            j++;
        }
        if (!found) {
            tilec_api_fail(ctx, TILEC_E_PROGRAM, "%s: error: -D %s: not a symbol of kernel '%s' (a .tir module binds "
                           "only its T.dynamic symbols)", name, defs[d].name, k->name);
            return -1;
        }
    }
    return 0;
}

/* A module in the text IR (high-level or lowered): read, then the passes
 * and tables as for a program.  Reader errors are "NAME:LINE:COL: error:
 * MESSAGE" diagnostics. */
static tilec_status_t load_tir(tilec_context_t *ctx, const char *name, const char *text, size_t len,
                               const tilec_define_kv_t *defs, int ndefs, tilec_program_t **out)
{
    tilec_program_t *p;
    tilec_frontend_result_t r;
    char err[1024];
    if (out) {
        *out = NULL;
    }
    if (!out || !text || ndefs < 0 || (ndefs > 0 && !defs)) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_program_load_ir: bad arguments");
    }
    if (!name) {
        name = "<ir>";
    }
    p = calloc(1, sizeof *p);
    if (!p) {
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    p->refs = 1;
    tilec_arena_init(&p->arena);
    source_hash(p, text, len);
    memset(&r, 0, sizeof r);
    err[0] = '\0';
    if (tilec_ir_read(&p->arena, text, len, &p->mod, err, sizeof err) != 0 || !p->mod ||
        !p->mod->kernel) {
        /* "LINE:COL: message" -> "NAME:LINE:COL: error: message" */
        int line = 0, col = 0, n = 0;
        if (sscanf(err, "%d:%d: %n", &line, &col, &n) == 2 && n > 0) {
            tilec_api_fail(ctx, TILEC_E_PROGRAM, "%s:%d:%d: error: %s", name, line, col, err + n);
        } else {
            tilec_api_fail(ctx, TILEC_E_PROGRAM, "%s: error: %s", name, err[0] ? err : "invalid tile IR");
        }
        tilec_api_program_unref(p);
        return TILEC_E_PROGRAM;
    }
    for (int i = 0; i < ndefs; i++) {
        if (!defs[i].name || !defs[i].value) {
            tilec_api_program_unref(p);
            return tilec_api_fail(ctx, TILEC_E_INVALID, "define %d has a NULL name or value", i);
        }
    }
    if (tir_defines(ctx, p, name, defs, ndefs, &r) != 0) {
        tilec_api_program_unref(p);
        return TILEC_E_PROGRAM;
    }
    return program_finish(ctx, p, name, &r, tilec_api_now_ms(), out);
}

tilec_status_t tilec_program_load_ir(tilec_context_t *ctx, const char *name, const char *text,
                                     size_t len, tilec_program_t **out)
{
    return load_tir(ctx, name, text, len, NULL, 0, out);
}

/* FILE.tir is the text IR; anything else is a tile program. */
static int is_tir(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && strcmp(path + n - 4, ".tir") == 0;
}

TILEC_API tilec_status_t tilec_program_load_file(tilec_context_t *ctx, const char *path,
                                                 const tilec_define_kv_t *defs, int ndefs,
                                                 const char *entry, tilec_program_t **out)
{
    FILE *f;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    tilec_status_t st;
    if (out) {
        *out = NULL;
    }
    if (!path || !out) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_program_load_file: bad arguments");
    }
    f = fopen(path, "rb");
    if (!f) {
        return tilec_api_fail(ctx, TILEC_E_IO, "cannot open %s: %s", path, strerror(errno));
    }
    for (;;) {
        size_t n;
        if (len + 1 >= cap) {
            size_t c = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, c);
            if (!nb) {
                free(buf);
                fclose(f);
                return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory reading %s", path);
            }
            buf = nb;
            cap = c;
        }
        n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0) {
            break;
        }
    }
    if (ferror(f)) {
        int e = errno;
        free(buf);
        fclose(f);
        return tilec_api_fail(ctx, TILEC_E_IO, "cannot read %s: %s", path, strerror(e ? e : EIO));
    }
    fclose(f);
    buf[len] = '\0';
    if (is_tir(path)) {
        st = entry ? tilec_api_fail(ctx, TILEC_E_PROGRAM, "%s: error: --entry: a .tir module has one kernel", path)
                   : load_tir(ctx, path, buf, len, defs, ndefs, out);
    } else {
        st = tilec_program_load_string(ctx, path, buf, len, defs, ndefs, entry, out);
    }
    free(buf);
    return st;
}

TILEC_API const char *tilec_program_ir(const tilec_program_t *p)
{
    return p && p->ir ? p->ir : "";
}

TILEC_API const tilec_program_t *tilec_program_next(const tilec_program_t *p)
{
    return p ? p->next : NULL;
}

TILEC_API int tilec_program_num_params(const tilec_program_t *p)
{
    return p ? p->nparams : 0;
}

TILEC_API int tilec_program_num_syms(const tilec_program_t *p)
{
    return p ? p->nsyms : 0;
}

TILEC_API tilec_status_t tilec_program_sym(const tilec_program_t *p, int i, const char **name,
                                           int64_t *value)
{
    if (!p || i < 0 || i >= p->nsyms) {
        return TILEC_E_INVALID;
    }
    if (name) {
        *name = p->sym_names[i];
    }
    if (value) {
        *value = p->sym_values[i];
    }
    return TILEC_OK;
}

TILEC_API tilec_status_t tilec_program_param(const tilec_program_t *p, int i, const char **name,
                                             tilec_elem_t *elem, int *ndim, int64_t shape[8])
{
    const tilec_api_param_t *q;
    if (!p || i < 0 || i >= p->nparams) {
        return TILEC_E_INVALID;
    }
    q = &p->params[i];
    if (name) {
        *name = q->name;
    }
    if (elem) {
        *elem = q->elem;
    }
    if (ndim) {
        *ndim = q->ndim;
    }
    if (shape) {
        for (int d = 0; d < q->ndim && d < 8; d++) {
            shape[d] = q->shape[d];
        }
    }
    return TILEC_OK;
}

/* ---- the reference interpreter ----------------------------------------- */

TILEC_API tilec_status_t tilec_program_interpret(tilec_context_t *ctx, const tilec_program_t *p,
                                                 void *const *args, const int64_t *syms)
{
    char err[1024];
    if (!p || (p->nparams > 0 && !args)) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_program_interpret: bad arguments");
    }
    for (int i = 0; i < p->nparams; i++) {
        if (!args[i]) {
            return tilec_api_fail(ctx, TILEC_E_INVALID, "argument %d ('%s') is NULL", i,
                                  p->params[i].name);
        }
    }
    if (!syms && p->nsyms > 0) {
        for (int s = 0; s < p->nsyms; s++) {
            if (p->sym_values[s] < 0) {
                return tilec_api_fail(ctx, TILEC_E_INVALID,
                                      "symbol '%s' has no value (give syms or -D %s=...)",
                                      p->sym_names[s], p->sym_names[s]);
            }
        }
        syms = p->sym_values;
    }
    for (const tilec_program_t *q = p; q; q = q->next) {
        int64_t qs[64];
        const int64_t *use = syms;
        if (q != p) {
            /* a later kernel of the chain: its symbols by name from the first's, else its -D values */
            if (q->nsyms > 64) {
                return tilec_api_fail(ctx, TILEC_E_INVALID, "interpreter: kernel '%s' has more than 64 symbols",
                                      q->mod->kernel->name);
            }
            for (int s = 0; s < q->nsyms; s++) {
                qs[s] = q->sym_values[s];
                for (int t = 0; syms && t < p->nsyms; t++) {
                    if (strcmp(p->sym_names[t], q->sym_names[s]) == 0) {
                        qs[s] = syms[t];
                    }
                }
                if (qs[s] < 0) {
                    return tilec_api_fail(ctx, TILEC_E_INVALID, "symbol '%s' of kernel '%s' has no value",
                                          q->sym_names[s], q->mod->kernel->name);
                }
            }
            use = q->nsyms ? qs : NULL;
        }
        err[0] = '\0';
        tilec_log("launch", "interpreter: kernel '%s'", q->mod->kernel->name);
        if (tilec_interp_run(q->mod->kernel, args, use, err, sizeof err) != 0) {
            return tilec_api_fail(ctx, TILEC_E_LAUNCH, "interpreter: %s", err[0] ? err : "failed");
        }
    }
    return TILEC_OK;
}

/* ---- what names the problem, and the tuning space ---------------------- */

TILEC_API const char *tilec_program_entry(const tilec_program_t *p)
{
    return p && p->entry ? p->entry : "";
}

TILEC_API const char *tilec_program_source_hash(const tilec_program_t *p)
{
    return p ? p->source_hash : "";
}

TILEC_API int tilec_program_num_defines(const tilec_program_t *p)
{
    return p ? p->ndefs : 0;
}

TILEC_API const tilec_define_kv_t *tilec_program_defines(const tilec_program_t *p)
{
    return p ? p->defs : NULL;
}

TILEC_API int tilec_program_num_factory_params(const tilec_program_t *p)
{
    return p ? p->nfparams : 0;
}

TILEC_API tilec_status_t tilec_program_factory_param(const tilec_program_t *p, int i,
                                                     const char **name, const char **dflt,
                                                     const char **value)
{
    if (!p || i < 0 || i >= p->nfparams) {
        return TILEC_E_INVALID;
    }
    if (name) {
        *name = p->fparams[i].name;
    }
    if (dflt) {
        *dflt = p->fparams[i].dflt;
    }
    if (value) {
        *value = p->fparams[i].value;
    }
    return TILEC_OK;
}

TILEC_API int tilec_program_num_configs(const tilec_program_t *p)
{
    return p ? p->nconfigs : 0;
}

TILEC_API tilec_status_t tilec_program_config(const tilec_program_t *p, int i,
                                              const tilec_define_kv_t **kv, int *n)
{
    if (!p || i < 0 || i >= p->nconfigs) {
        return TILEC_E_INVALID;
    }
    if (kv) {
        *kv = p->configs[i];
    }
    if (n) {
        *n = p->config_n[i];
    }
    return TILEC_OK;
}
