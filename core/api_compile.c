/*
 * core/api_compile.c — compiling and lowering programs for the context's
 * plugin, executables, and the device's typed properties (tilec.h).
 *
 * The host side of plugin ABI 1.1 lives here, each rule applied once:
 *  - options: the program's own pass_configs (tilelang.jit(pass_configs=...))
 *    and the public tilec_compile_options_t (fast_math, more pass_configs,
 *    which win) are mapped once to the ABI's structured option list; a
 *    known pass_configs key becomes its typed option, any other travels as
 *    TILEC_POPT_PASS_CONFIG with its text;
 *  - IR version: the program's text names the lowest tile IR version that
 *    expresses it; it is sent as is when the plugin reads that version,
 *    re-labelled as the plugin's lowest version when that is newer (minor
 *    versions only add, so the text is valid there), and refused here, with
 *    a message naming both, when the plugin reads only older versions;
 *  - module info: asked from a 1.1 plugin after compile (TILEC_LOG=compile
 *    prints it), unknown (-1) for a 1.0 plugin.
 */
#define TILEC_BUILDING_LIBRARY 1
#include "api_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "tilec/sdk.h"

/* The most options one compile carries (pass_configs included). */
#define MAX_OPTIONS 256

/* ---- options ------------------------------------------------------------------- */

/* The pass_configs keys with a structured option of their own. */
static const struct {
    const char *name;
    uint32_t key;
} known_configs[] = {
    {"tl.enable_fast_math", TILEC_POPT_FAST_MATH},
    {"tl.disable_tma_lower", TILEC_POPT_DISABLE_TMA},
    {"tl.disable_warp_specialized", TILEC_POPT_DISABLE_WARP_SPECIALIZED},
};

/* A pass_configs value as an integer: Python's booleans and None, or a
 * decimal integer.  0, or -1 when it is neither. */
static int config_int(const char *v, int64_t *out)
{
    static const char *const yes[] = {"true", "1", "yes", "on"};
    static const char *const no[] = {"false", "0", "no", "off", "none", ""};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        if (strcasecmp(v, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    char *end;
    long long x = strtoll(v, &end, 10);
    if (end != v && *end == '\0') {
        *out = x;
        return 0;
    }
    return -1;
}

tilec_status_t tilec_api_map_options(tilec_context_t *ctx, const tilec_compile_options_t *o,
                                     tilec_pcompile_options_t *out, tilec_poption_t *list)
{
    uint32_t n = 0;
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->opt_level = 3;
    if (!o) {
        return TILEC_OK;
    }
    if (o->opt_level < 0 || o->opt_level > 3) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "opt_level %d is not in 0..3", o->opt_level);
    }
    if (o->npass_configs < 0 || (o->npass_configs > 0 && !o->pass_configs) ||
        o->npass_configs > MAX_OPTIONS - 1) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "bad pass_configs list (%d entries)",
                              o->npass_configs);
    }
    out->opt_level = o->no_opt ? 0 : o->opt_level ? (uint32_t)o->opt_level : 3;
    out->arch = o->arch && *o->arch ? o->arch : NULL;
    if (o->fast_math) {
        list[n++] = (tilec_poption_t){TILEC_POPT_FAST_MATH, 0, NULL, 1, NULL};
    }
    for (int i = 0; i < o->npass_configs; i++) {
        const tilec_define_kv_t *kv = &o->pass_configs[i];
        tilec_poption_t *p = &list[n++];
        int64_t v = 0;
        if (!kv->name || !*kv->name || !kv->value) {
            return tilec_api_fail(ctx, TILEC_E_INVALID, "pass_configs entry %d has no name or value",
                                  i);
        }
        memset(p, 0, sizeof *p);
        p->key = TILEC_POPT_PASS_CONFIG;
        for (size_t k = 0; k < sizeof known_configs / sizeof known_configs[0]; k++) {
            if (strcmp(kv->name, known_configs[k].name) == 0) {
                p->key = known_configs[k].key;
            }
        }
        if (config_int(kv->value, &v) != 0) {
            if (p->key != TILEC_POPT_PASS_CONFIG) {
                return tilec_api_fail(ctx, TILEC_E_INVALID,
                                      "pass_configs: '%s' expects a boolean, got '%s'", kv->name,
                                      kv->value);
            }
            v = 0;
        }
        p->ival = v;
        if (p->key == TILEC_POPT_PASS_CONFIG) {
            p->name = kv->name;
            p->sval = kv->value;
        }
    }
    out->noptions = n;
    out->options = n ? list : NULL;
    return TILEC_OK;
}

/* ---- the IR version ------------------------------------------------------------- */

/* "tileir MAJOR.MINOR" of the text's first line; 0 when it has none. */
static uint32_t text_version(const char *ir)
{
    unsigned maj = 0, min = 0;
    if (sscanf(ir, "tileir %u.%u", &maj, &min) != 2 || maj > 0xffff || min > 0xffff) {
        return 0;
    }
    return TILEC_IR_MAKE(maj, min);
}

/* The IR text to send to ctx's plugin: p->ir itself, or a malloc'd copy in
 * *owned with the plugin's lowest version on its first line. */
static tilec_status_t ir_for_plugin(tilec_context_t *ctx, const tilec_program_t *p,
                                    const char **text, size_t *len, char **owned)
{
    uint32_t v = text_version(p->ir);
    *owned = NULL;
    *text = p->ir;
    *len = p->ir_len;
    if (v >= ctx->ir_min && v <= ctx->ir_max) {
        return TILEC_OK;
    }
    if (v > ctx->ir_max) {
        return tilec_api_fail(ctx, TILEC_E_COMPILE,
                              "backend '%s' reads tile IR %u.%u..%u.%u, but kernel '%s' needs "
                              "tile IR %u.%u (it uses constructs added in %u.%u); update the "
                              "plugin", ctx->backend, TILEC_ABI_MAJOR(ctx->ir_min),
                              TILEC_ABI_MINOR(ctx->ir_min), TILEC_ABI_MAJOR(ctx->ir_max),
                              TILEC_ABI_MINOR(ctx->ir_max), p->mod->kernel->name,
                              TILEC_ABI_MAJOR(v), TILEC_ABI_MINOR(v), TILEC_ABI_MAJOR(v),
                              TILEC_ABI_MINOR(v));
    }
    /* older than the plugin's oldest: the same text under a newer minor */
    const char *nl = strchr(p->ir, '\n');
    size_t rest = nl ? p->ir_len - (size_t)(nl - p->ir) : 0;
    char head[32];
    int hn = snprintf(head, sizeof head, "tileir %u.%u", TILEC_ABI_MAJOR(ctx->ir_min),
                      TILEC_ABI_MINOR(ctx->ir_min));
    char *t = malloc((size_t)hn + rest + 1);
    if (!t) {
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    memcpy(t, head, (size_t)hn);
    memcpy(t + hn, nl ? nl : "", rest);
    t[(size_t)hn + rest] = '\0';
    tilec_log("compile", "backend '%s' reads tile IR %u.%u and later: sending the %u.%u text as "
              "%u.%u", ctx->backend, TILEC_ABI_MAJOR(ctx->ir_min), TILEC_ABI_MINOR(ctx->ir_min),
              TILEC_ABI_MAJOR(v), TILEC_ABI_MINOR(v), TILEC_ABI_MAJOR(ctx->ir_min),
              TILEC_ABI_MINOR(ctx->ir_min));
    *owned = t;
    *text = t;
    *len = (size_t)hn + rest;
    return TILEC_OK;
}

/* The checks compile and lower share, the options mapped and the IR chosen. */
typedef struct prep {
    tilec_pcompile_options_t opts;
    tilec_poption_t list[MAX_OPTIONS];
    const char *ir;
    size_t ir_len;
    char *owned;
    tilec_define_kv_t configs[MAX_OPTIONS];
} prep_t;

static tilec_status_t prepare(tilec_context_t *ctx, const tilec_program_t *p,
                              const tilec_compile_options_t *o, prep_t *pr, const char *what)
{
    tilec_status_t st;
    pr->owned = NULL;
    if (!p) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_program_%s: bad arguments", what);
    }
    /* The program's own pass_configs first, then the caller's (which win). */
    tilec_compile_options_t merged;
    memset(&merged, 0, sizeof merged);
    if (o) {
        merged = *o;
    }
    if (p->npass_configs > 0) {
        int n = p->npass_configs + (merged.npass_configs > 0 ? merged.npass_configs : 0);
        if (merged.npass_configs < 0 || (merged.npass_configs > 0 && !merged.pass_configs) ||
            n > MAX_OPTIONS - 1) {
            return tilec_api_fail(ctx, TILEC_E_INVALID, "bad pass_configs list (%d entries)",
                                  merged.npass_configs);
        }
        memcpy(pr->configs, p->pass_configs, sizeof *pr->configs * (size_t)p->npass_configs);
        if (merged.npass_configs > 0) {
            memcpy(pr->configs + p->npass_configs, merged.pass_configs,
                   sizeof *pr->configs * (size_t)merged.npass_configs);
        }
        merged.pass_configs = pr->configs;
        merged.npass_configs = n;
    }
    if ((st = tilec_api_map_options(ctx, &merged, &pr->opts, pr->list)) != TILEC_OK) {
        return st;
    }
    /* without a device only an explicit target can be compiled for */
    if ((!ctx->table || !pr->opts.arch) && (st = tilec_api_need_backend(ctx)) != TILEC_OK) {
        return st;
    }
    if (ctx->abi_version < TILEC_ABI_MAKE(1, 1)) {
        /* a 1.0 plugin's options struct ends at extra */
        pr->opts.struct_size = (uint32_t)(offsetof(tilec_pcompile_options_t, extra) + sizeof(char *));
        if (pr->opts.noptions) {
            tilec_log("compile", "backend '%s' speaks plugin ABI 1.0: %u structured option(s) "
                      "not passed", ctx->backend, pr->opts.noptions);
        }
    }
    return ir_for_plugin(ctx, p, &pr->ir, &pr->ir_len, &pr->owned);
}

static void log_options(const tilec_context_t *ctx, const tilec_pcompile_options_t *o)
{
    if (!tilec_log_enabled("compile")) {
        return;
    }
    for (uint32_t i = 0; o->struct_size > offsetof(tilec_pcompile_options_t, noptions) &&
                         i < o->noptions; i++) {
        const tilec_poption_t *x = &o->options[i];
        tilec_log("compile", "backend '%s': option %u%s%s = %lld%s%s", ctx->backend, x->key,
                  x->name ? " " : "", x->name ? x->name : "", (long long)x->ival,
                  x->sval ? " / " : "", x->sval ? x->sval : "");
    }
}

/* ---- compile -------------------------------------------------------------------- */

static void info_unknown(tilec_module_info_t *m)
{
    m->registers = m->shared_static_bytes = m->shared_dynamic_bytes = -1;
    m->spill_bytes = m->local_bytes = m->threads = m->max_threads = -1;
}

/* Asks a 1.1 plugin what the module uses; unknown for a 1.0 one. */
static void query_info(tilec_context_t *ctx, tilec_executable_t *e)
{
    tilec_pmodule_info_t pi;
    info_unknown(&e->info);
    if (ctx->abi_version < TILEC_ABI_MAKE(1, 1)) {
        return;
    }
    memset(&pi, 0, sizeof pi);
    pi.struct_size = sizeof pi;
    if (ctx->table->module_info(e->mod, &pi) != TILEC_PS_OK) {
        tilec_log("compile", "backend '%s': module_info failed: %s", ctx->backend,
                  ctx->table->last_error());
        return;
    }
    e->info.registers = pi.registers;
    e->info.shared_static_bytes = pi.shared_static_bytes;
    e->info.shared_dynamic_bytes = pi.shared_dynamic_bytes;
    e->info.spill_bytes = pi.spill_bytes;
    e->info.local_bytes = pi.local_bytes;
    e->info.threads = pi.threads;
    e->info.max_threads = pi.max_threads;
    tilec_log("compile", "backend '%s': module info: registers=%lld shared_static=%lld "
              "shared_dynamic=%lld spill=%lld local=%lld threads=%lld max_threads=%lld",
              ctx->backend, (long long)pi.registers, (long long)pi.shared_static_bytes,
              (long long)pi.shared_dynamic_bytes, (long long)pi.spill_bytes,
              (long long)pi.local_bytes, (long long)pi.threads, (long long)pi.max_threads);
}

static tilec_status_t exe_wrap(tilec_context_t *ctx, const tilec_program_t *p, tilec_pmodule_t *mod,
                               tilec_executable_t **out);

static tilec_status_t compile_one(tilec_context_t *ctx, const tilec_program_t *p,
                                  const tilec_compile_options_t *o, tilec_executable_t **out)
{
    tilec_pmodule_t *mod = NULL;
    tilec_pstatus_t ps;
    tilec_status_t st;
    double t0;
    prep_t *pr;
    if (out) {
        *out = NULL;
    }
    if (!ctx) {
        return TILEC_E_INVALID;
    }
    if (!out) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_program_compile: bad arguments");
    }
    if (!(pr = malloc(sizeof *pr))) {
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    if ((st = prepare(ctx, p, o, pr, "compile")) != TILEC_OK) {
        free(pr->owned);
        free(pr);
        return st;
    }
    tilec_log("compile", "backend '%s': compiling kernel '%s' (%zu bytes of IR)%s%s", ctx->backend,
              p->mod->kernel->name, pr->ir_len, pr->opts.arch ? " for " : "",
              pr->opts.arch ? pr->opts.arch : "");
    log_options(ctx, &pr->opts);
    t0 = tilec_api_now_ms();
    ps = ctx->table->compile(ctx->dev, pr->ir, pr->ir_len, &pr->opts, &mod);
    free(pr->owned);
    free(pr);
    if (ps != TILEC_PS_OK || !mod) {
        return tilec_api_plugin_fail(ctx, ps == TILEC_PS_OK ? TILEC_PS_INTERNAL : ps,
                                     TILEC_E_COMPILE, "compile");
    }
    tilec_log("compile", "backend '%s': compiled in %.2f ms", ctx->backend, tilec_api_now_ms() - t0);
    return exe_wrap(ctx, p, mod, out);
}

/* Every kernel of p's chain, each an executable, linked in launch order. */
TILEC_API tilec_status_t tilec_program_compile_with(tilec_context_t *ctx, const tilec_program_t *p,
                                                    const tilec_compile_options_t *o,
                                                    tilec_executable_t **out)
{
    tilec_executable_t **tail;
    tilec_status_t st = compile_one(ctx, p, o, out);
    if (st != TILEC_OK || !p) {
        return st;
    }
    tail = &(*out)->next;
    for (const tilec_program_t *q = p->next; q; q = q->next) {
        if ((st = compile_one(ctx, q, o, tail)) != TILEC_OK) {
            tilec_executable_free(*out);
            *out = NULL;
            return st;
        }
        tail = &(*tail)->next;
    }
    return TILEC_OK;
}

/* The executable of p around a module the plugin made; frees mod on failure. */
static tilec_status_t exe_wrap(tilec_context_t *ctx, const tilec_program_t *p, tilec_pmodule_t *mod,
                               tilec_executable_t **out)
{
    tilec_executable_t *e;
    const void *data;
    size_t size;
    e = calloc(1, sizeof *e);
    if (!e) {
        ctx->table->module_free(mod);
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    e->mod = mod;
    if (ctx->table->module_data(mod, TILEC_PDATA_SOURCE, &data, &size) == TILEC_PS_OK && data) {
        e->source = malloc(size + 1);
        if (e->source) {
            memcpy(e->source, data, size);
            e->source[size] = '\0';
            e->source_len = size;
        }
    }
    if (ctx->table->module_data(mod, TILEC_PDATA_BINARY, &data, &size) == TILEC_PS_OK && data) {
        e->binary = data;
        e->binary_len = size;
    }
    query_info(ctx, e);
    tilec_api_ctx_ref(ctx);
    e->ctx = ctx;
    __atomic_add_fetch(&((tilec_program_t *)p)->refs, 1, __ATOMIC_RELAXED);
    e->prog = (tilec_program_t *)p;
    *out = e;
    return TILEC_OK;
}

tilec_status_t tilec_api_exe_load(tilec_context_t *ctx, const tilec_program_t *p, const void *bin,
                                 size_t bin_len, tilec_executable_t **out)
{
    const tilec_ext_module_load_t *ext = NULL;
    tilec_pmodule_t *mod = NULL;
    tilec_pstatus_t ps;
    tilec_status_t st;
    prep_t *pr;
    *out = NULL;
    if ((st = tilec_api_need_backend(ctx)) != TILEC_OK) {
        return st;
    }
    if (p->next) {
        return tilec_api_fail(ctx, TILEC_E_UNAVAILABLE, "a program of several kernels ('%s' launches %s and "
                              "more) cannot be loaded from a bundle yet", p->entry, p->mod->kernel->name);
    }
    if (ctx->abi_version >= TILEC_ABI_MAKE(1, 1)) {
        ext = ctx->table->extension(TILEC_EXT_MODULE_LOAD);
    }
    if (!ext || ext->struct_size < sizeof *ext || !ext->module_load) {
        return tilec_api_fail(ctx, TILEC_E_UNAVAILABLE,
                              "backend '%s' cannot load compiled kernels (it offers no %s extension)",
                              ctx->backend, TILEC_EXT_MODULE_LOAD);
    }
    if (!(pr = malloc(sizeof *pr))) {
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    if ((st = prepare(ctx, p, NULL, pr, "module_load")) != TILEC_OK) {
        free(pr->owned);
        free(pr);
        return st;
    }
    ps = ext->module_load(ctx->dev, pr->ir, pr->ir_len, bin, bin_len, &mod);
    free(pr->owned);
    free(pr);
    if (ps != TILEC_PS_OK || !mod) {
        return tilec_api_plugin_fail(ctx, ps == TILEC_PS_OK ? TILEC_PS_INTERNAL : ps, TILEC_E_LAUNCH,
                                     "module_load");
    }
    return exe_wrap(ctx, p, mod, out);
}

TILEC_API tilec_status_t tilec_program_compile_for(tilec_context_t *ctx, const tilec_program_t *p,
                                                   const char *arch, tilec_executable_t **out)
{
    tilec_compile_options_t o;
    memset(&o, 0, sizeof o);
    o.arch = arch;
    return tilec_program_compile_with(ctx, p, &o, out);
}

TILEC_API tilec_status_t tilec_program_compile(tilec_context_t *ctx, const tilec_program_t *p,
                                               tilec_executable_t **out)
{
    return tilec_program_compile_for(ctx, p, NULL, out);
}

static tilec_status_t lower_one(tilec_context_t *ctx, const tilec_program_t *p,
                                const tilec_compile_options_t *o, char **text, size_t *len)
{
    tilec_pmodule_t *mod = NULL;
    tilec_pstatus_t ps;
    tilec_status_t st;
    const void *data = NULL;
    size_t size = 0;
    prep_t *pr;
    if (text) {
        *text = NULL;
    }
    if (len) {
        *len = 0;
    }
    if (!ctx) {
        return TILEC_E_INVALID;
    }
    if (!text) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_program_lower: bad arguments");
    }
    if (!(pr = malloc(sizeof *pr))) {
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    if ((st = prepare(ctx, p, o, pr, "lower")) != TILEC_OK) {
        free(pr->owned);
        free(pr);
        return st;
    }
    if (ctx->abi_version < TILEC_ABI_MAKE(1, 1)) {
        free(pr->owned);
        free(pr);
        return tilec_api_fail(ctx, TILEC_E_COMPILE,
                              "backend '%s' speaks plugin ABI 1.0, which has no lowered IR to show "
                              "(lower is ABI 1.1)", ctx->backend);
    }
    log_options(ctx, &pr->opts);
    ps = ctx->table->lower(ctx->dev, pr->ir, pr->ir_len, &pr->opts, &mod);
    free(pr->owned);
    free(pr);
    if (ps == TILEC_PS_OK && mod) {
        ps = ctx->table->module_data(mod, TILEC_PDATA_LOWERED, &data, &size);
    }
    if (ps != TILEC_PS_OK || !mod || !data) {
        st = tilec_api_plugin_fail(ctx, ps == TILEC_PS_OK ? TILEC_PS_INTERNAL : ps,
                                   TILEC_E_COMPILE, "compile");
        if (mod) {
            ctx->table->module_free(mod);
        }
        return st;
    }
    *text = malloc(size + 1);
    if (*text) {
        memcpy(*text, data, size);
        (*text)[size] = '\0';
    }
    ctx->table->module_free(mod);
    if (!*text) {
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    if (len) {
        *len = size;
    }
    return TILEC_OK;
}

/* The lowered text of every kernel of p's chain, in launch order. */
TILEC_API tilec_status_t tilec_program_lower(tilec_context_t *ctx, const tilec_program_t *p,
                                             const tilec_compile_options_t *o, char **text,
                                             size_t *len)
{
    tilec_sdk_str_t all = {0};
    tilec_status_t st = lower_one(ctx, p, o, text, len);
    if (st != TILEC_OK || !p->next) {
        return st;
    }
    tilec_sdk_str_puts(&all, *text);
    free(*text);
    *text = NULL;
    for (const tilec_program_t *q = p->next; q; q = q->next) {
        char *t = NULL;
        if ((st = lower_one(ctx, q, o, &t, NULL)) != TILEC_OK) {
            tilec_sdk_str_free(&all);
            if (len) {
                *len = 0;
            }
            return st;
        }
        tilec_sdk_str_printf(&all, "\n%s", t);
        free(t);
    }
    if (all.oom || !all.s) {
        tilec_sdk_str_free(&all);
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    *text = all.s;
    if (len) {
        *len = all.len;
    }
    return TILEC_OK;
}

TILEC_API tilec_status_t tilec_executable_info(const tilec_executable_t *e, tilec_module_info_t *out)
{
    if (!e || !out) {
        return TILEC_E_INVALID;
    }
    *out = e->info;
    return TILEC_OK;
}

TILEC_API void tilec_executable_free(tilec_executable_t *e)
{
    if (!e) {
        return;
    }
    if (e->mod) {
        e->ctx->table->module_free(e->mod);
    }
    tilec_executable_free(e->next);
    free(e->source);
    tilec_api_program_unref(e->prog);
    tilec_api_ctx_unref(e->ctx);
    free(e);
}

TILEC_API const void *tilec_executable_binary(const tilec_executable_t *e, size_t *len)
{
    if (len) {
        *len = e ? e->binary_len : 0;
    }
    return e ? e->binary : NULL;
}

TILEC_API const char *tilec_executable_source(const tilec_executable_t *e, size_t *len)
{
    if (len) {
        *len = e ? e->source_len : 0;
    }
    return e ? e->source : NULL;
}

/* ---- device properties ------------------------------------------------------------- */

TILEC_API tilec_status_t tilec_device_property(tilec_context_t *ctx, uint32_t key, tilec_prop_t *out)
{
    tilec_status_t st;
    if (!ctx) {
        return TILEC_E_INVALID;
    }
    if (!out) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_device_property: out is NULL");
    }
    memset(out, 0, sizeof *out);
    if (!tilec_props_key_name(key)) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "unknown device property key %u (known: 1..%u)",
                              key, (unsigned)TILEC_PROP_LAST);
    }
    if ((st = tilec_api_need_backend(ctx)) != TILEC_OK) {
        return st;
    }
    const tilec_pvalue_t *v = &ctx->props.v[key];
    out->kind = (int)v->kind;
    out->ival = v->ival;
    memcpy(out->sval, v->sval, sizeof out->sval);
    out->sval[sizeof out->sval - 1] = '\0';
    return TILEC_OK;
}
