/*
 * core/api.c — contexts and launch of the public C API
 * (include/tilec/tilec.h).  Programs are in program.c, compile, lowering,
 * executables and device properties in api_compile.c, buffers in
 * api_buffer.c, DLPack in dlpack.c.
 *
 * A context is one selected plugin (core/loader.c) with one opened device
 * and the message of its last failure.  A program is the frontend's tile IR
 * after the core passes, kept with its text form (what crosses the plugin
 * ABI), its parameter shapes and its T.dynamic symbols.  Launch checks the
 * buffers against the kernel's parameters and derives every symbol's value
 * from the buffers' shapes before calling the plugin.
 */
#define TILEC_BUILDING_LIBRARY 1
#include "api_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loader.h"
#include "log.h"

/* ---- status and messages ----------------------------------------------- */

TILEC_API const char *tilec_status_name(tilec_status_t s)
{
    switch (s) {
    case TILEC_OK: return "ok";
    case TILEC_E_INVALID: return "invalid argument";
    case TILEC_E_PROGRAM: return "invalid program";
    case TILEC_E_UNAVAILABLE: return "backend unavailable";
    case TILEC_E_COMPILE: return "compile error";
    case TILEC_E_LAUNCH: return "launch error";
    case TILEC_E_NOMEM: return "out of memory";
    case TILEC_E_IO: return "I/O error";
    }
    return "unknown status";
}

static void set_msg_owned(tilec_context_t *ctx, char *m)
{
    if (!ctx) {
        free(m);
        return;
    }
    free(ctx->msg);
    ctx->msg = m; /* NULL (out of memory) reads as "" */
}

tilec_status_t tilec_api_fail(tilec_context_t *ctx, tilec_status_t st, const char *fmt, ...)
{
    va_list ap;
    int n;
    char *m;
    if (!ctx) {
        return st;
    }
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    m = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (m) {
        va_start(ap, fmt);
        vsnprintf(m, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    set_msg_owned(ctx, m);
    return st;
}

tilec_status_t tilec_api_plugin_fail(tilec_context_t *ctx, tilec_pstatus_t st,
                                     tilec_status_t fallback, const char *what)
{
    static const char *const names[] = {"ok", "invalid argument", "unavailable", "unsupported",
                                        "compile error", "launch error", "out of memory",
                                        "internal error"};
    const char *err = ctx && ctx->table && ctx->table->last_error ? ctx->table->last_error() : NULL;
    tilec_status_t out = fallback;
    switch (st) {
    case TILEC_PS_INVALID_ARGUMENT: out = TILEC_E_INVALID; break;
    case TILEC_PS_UNAVAILABLE: out = TILEC_E_UNAVAILABLE; break;
    case TILEC_PS_OUT_OF_MEMORY: out = TILEC_E_NOMEM; break;
    case TILEC_PS_COMPILE_ERROR: out = TILEC_E_COMPILE; break;
    case TILEC_PS_LAUNCH_ERROR: out = TILEC_E_LAUNCH; break;
    default: break;
    }
    if (err && *err) {
        tilec_api_fail(ctx, out, "backend '%s': %s", ctx->backend, err);
    } else {
        unsigned u = (unsigned)st;
        tilec_api_fail(ctx, out, "backend '%s': %s failed (%s)", ctx ? ctx->backend : "?", what,
                       u < sizeof names / sizeof names[0] ? names[u] : "unknown status");
    }
    tilec_log(strcmp(what, "compile") == 0 ? "compile" : "launch", "%s",
              ctx && ctx->msg ? ctx->msg : "plugin call failed");
    return out;
}

tilec_status_t tilec_api_need_backend(tilec_context_t *ctx)
{
    if (!ctx) {
        return TILEC_E_INVALID;
    }
    /* a compile-only context (table without device) has no backend for
     * memory and launches */
    if (!ctx->table || !ctx->dev) {
        return tilec_api_fail(ctx, ctx->no_backend ? ctx->no_backend : TILEC_E_UNAVAILABLE,
                              "no backend: %s", ctx->no_backend_msg ? ctx->no_backend_msg : "");
    }
    return TILEC_OK;
}

size_t tilec_api_elem_size(tilec_elem_t e)
{
    static const size_t sz[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 1, 1, 1, 1, 1};
    return (unsigned)e < sizeof sz / sizeof sz[0] ? sz[e] : 0;
}

const char *tilec_api_elem_name(tilec_elem_t e)
{
    static const char *const n[] = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                    "uint32", "uint64", "float16", "bfloat16", "float32", "float64",
                                    "float8_e4m3fn", "float8_e5m2", "int4", "uint4",
                                    "float4_e2m1fn"};
    return (unsigned)e < sizeof n / sizeof n[0] ? n[e] : "?";
}

double tilec_api_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- contexts ----------------------------------------------------------- */

void tilec_api_ctx_ref(tilec_context_t *ctx)
{
    __atomic_add_fetch(&ctx->refs, 1, __ATOMIC_RELAXED);
}

void tilec_api_ctx_unref(tilec_context_t *ctx)
{
    if (!ctx || __atomic_sub_fetch(&ctx->refs, 1, __ATOMIC_ACQ_REL) != 0) {
        return;
    }
    if (ctx->table && ctx->dev) {
        ctx->table->device_close(ctx->dev);
    }
    if (ctx->handle) {
        dlclose(ctx->handle);
    }
    free(ctx->msg);
    free(ctx->backend);
    free(ctx->plugin_path);
    free(ctx->no_backend_msg);
    free(ctx);
}

/* ABI 1.0 rule (docs/plugin-abi.md, "Compile without a device"): when the
 * backend named by spec is UNAVAILABLE (its runtime or device is missing)
 * the context keeps its table with no device, so that
 * tilec_program_compile_for with an explicit arch can still call
 * compile(NULL, ...).  The context is still reported as unavailable; memory
 * and launches fail with the reason. */
/* Makes list entry i the context's plugin (name, path, loader handle); the
 * caller sets the table once it may be used.  0, or -1 when out of memory. */
static int ctx_adopt(tilec_context_t *ctx, tilec_loader_list_t *list, int i)
{
    tilec_loader_entry_t *e = &list->items[i];
    char *name = strdup(e->name), *path = strdup(e->path);
    if (!name || !path) {
        free(name);
        free(path);
        return -1;
    }
    free(ctx->backend);
    free(ctx->plugin_path);
    ctx->backend = name;
    ctx->plugin_path = path;
    ctx->handle = tilec_loader_take(list, i);
    ctx->abi_version = e->abi_version;
    ctx->ir_min = e->ir_min;
    ctx->ir_max = e->ir_max;
    return 0;
}

static void keep_compile_only(tilec_context_t *ctx, tilec_loader_list_t *list, const char *spec)
{
    size_t n = strcspn(spec, ":");
    for (int i = 0; i < list->n; i++) {
        tilec_loader_entry_t *e = &list->items[i];
        if (e->state != TILEC_PLUGIN_UNAVAILABLE || !e->table || strlen(e->name) != n ||
            strncmp(e->name, spec, n) != 0) {
            continue;
        }
        if (ctx_adopt(ctx, list, i) == 0) {
            ctx->table = e->table;
            ctx->dev = NULL;
        }
        return;
    }
}

/* A named backend is looked for by a narrow scan first (only its own
 * plugin file is probed); when that selects nothing, the full scan decides,
 * so the error lists every plugin found and why any was rejected. */
static tilec_status_t scan_and_select(const char *backend, tilec_loader_list_t *list, int *idx,
                                      uint32_t *dev, char **msg)
{
    size_t n = strcspn(backend, ":");
    tilec_status_t st;
    *msg = NULL;
    if (n > 0 && n < 64 && !(n == 4 && strncmp(backend, "auto", 4) == 0)) {
        char name[64];
        memcpy(name, backend, n);
        name[n] = '\0';
        st = tilec_loader_scan_for(list, name);
        if (st == TILEC_OK && tilec_loader_select(list, backend, idx, dev, msg) == TILEC_OK) {
            return TILEC_OK;
        }
        free(*msg);
        *msg = NULL;
        if (st == TILEC_OK) {
            tilec_loader_release(list);
        }
    }
    st = tilec_loader_scan(list);
    if (st != TILEC_OK) {
        list->n = 0;
        return st;
    }
    return tilec_loader_select(list, backend, idx, dev, msg);
}

TILEC_API tilec_status_t tilec_context_create(const char *backend, tilec_context_t **out)
{
    tilec_context_t *ctx;
    tilec_loader_list_t list;
    tilec_status_t st;
    int idx = -1;
    uint32_t dev = 0;
    char *msg = NULL;
    tilec_pstatus_t ps;
    if (out) {
        *out = NULL;
    }
    ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        return TILEC_E_NOMEM;
    }
    ctx->refs = 1;
    ctx->backend = strdup("");
    ctx->plugin_path = strdup("");
    if (!ctx->backend || !ctx->plugin_path) {
        tilec_api_ctx_unref(ctx);
        return TILEC_E_NOMEM;
    }
    if (!out) {
        tilec_api_ctx_unref(ctx);
        return TILEC_E_INVALID;
    }
    *out = ctx;
    if (!backend) {
        backend = secure_getenv("TILEC_BACKEND");
    }
    if (!backend || !*backend) {
        backend = "auto";
    }
    st = scan_and_select(backend, &list, &idx, &dev, &msg);
    if (st == TILEC_E_NOMEM && list.n == 0) {
        ctx->no_backend = st;
        return tilec_api_fail(ctx, st, "out of memory while scanning plugins");
    }
    if (st != TILEC_OK) {
        keep_compile_only(ctx, &list, backend);
        tilec_loader_release(&list);
        ctx->no_backend = st;
        ctx->no_backend_msg = msg ? strdup(msg) : NULL;
        set_msg_owned(ctx, msg);
        return st;
    }
    {
        tilec_loader_entry_t *e = &list.items[idx];
        if (ctx_adopt(ctx, &list, idx) != 0) {
            tilec_loader_release(&list);
            ctx->no_backend = TILEC_E_NOMEM;
            return TILEC_E_NOMEM;
        }
        ctx->devindex = dev;
        ctx->info = e->devices[dev];
        ctx->props = e->props[dev];
        ps = e->table->device_open(dev, &ctx->dev);
        if (ps != TILEC_PS_OK || !ctx->dev) {
            const char *err = e->table->last_error();
            msg = tilec_strfmt("backend '%s': cannot open device %u: %s", ctx->backend, dev,
                               err && *err ? err : "device_open failed");
            ctx->dev = NULL;
            tilec_loader_release(&list);
            ctx->no_backend = TILEC_E_UNAVAILABLE;
            ctx->no_backend_msg = msg ? strdup(msg) : NULL;
            set_msg_owned(ctx, msg);
            return TILEC_E_UNAVAILABLE;
        }
        ctx->table = e->table;
    }
    tilec_loader_release(&list);
    tilec_log("loader", "context: backend '%s' (%s), device %u: %s", ctx->backend,
              ctx->plugin_path, ctx->devindex, ctx->info.name);
    return TILEC_OK;
}

TILEC_API void tilec_context_destroy(tilec_context_t *ctx)
{
    tilec_api_ctx_unref(ctx);
}

TILEC_API const char *tilec_context_message(const tilec_context_t *ctx)
{
    return ctx && ctx->msg ? ctx->msg : "";
}

TILEC_API const char *tilec_context_backend(const tilec_context_t *ctx)
{
    return ctx && ctx->backend ? ctx->backend : "";
}

TILEC_API const char *tilec_context_device(const tilec_context_t *ctx)
{
    return ctx && ctx->table && ctx->dev ? ctx->info.name : "";
}

/* ---- launch ------------------------------------------------------------- */

/* Binds every symbol from the argument shapes and checks every dimension.
 * syms has p->nsyms entries. */
static tilec_status_t bind_symbols(tilec_context_t *ctx, const tilec_program_t *p,
                                   tilec_buffer_t *const *args, int64_t *syms, int *from_param,
                                   int *from_dim)
{
    for (int s = 0; s < p->nsyms; s++) {
        syms[s] = -1;
        from_param[s] = -1;
        from_dim[s] = -1;
    }
    for (int i = 0; i < p->nparams; i++) {
        const tilec_api_param_t *q = &p->params[i];
        for (int d = 0; d < q->ndim; d++) {
            int s = tilec_api_dim_symbol(p, q->buf->shape[d]);
            int64_t v = args[i]->shape[d];
            if (s < 0) {
                continue;
            }
            if (syms[s] < 0) {
                syms[s] = v;
                from_param[s] = i;
                from_dim[s] = d;
            } else if (syms[s] != v) {
                return tilec_api_fail(ctx, TILEC_E_INVALID,
                                      "symbol '%s' is %lld from tensor '%s' dimension %d but %lld "
                                      "from tensor '%s' dimension %d",
                                      p->sym_names[s], (long long)syms[s],
                                      p->params[from_param[s]].name, from_dim[s], (long long)v,
                                      q->name, d);
            }
        }
    }
    for (int s = 0; s < p->nsyms; s++) {
        if (syms[s] < 0) {
            if (p->sym_values[s] >= 0) {
                syms[s] = p->sym_values[s];
            } else {
                return tilec_api_fail(ctx, TILEC_E_INVALID,
                                      "cannot derive symbol '%s' from the argument shapes (no "
                                      "tensor dimension is exactly '%s' and no -D value was given)",
                                      p->sym_names[s], p->sym_names[s]);
            }
        }
        if (syms[s] > INT32_MAX) {
            return tilec_api_fail(ctx, TILEC_E_INVALID, "symbol '%s' = %lld does not fit in int32",
                                  p->sym_names[s], (long long)syms[s]);
        }
    }
    for (int i = 0; i < p->nparams; i++) {
        const tilec_api_param_t *q = &p->params[i];
        for (int d = 0; d < q->ndim; d++) {
            int64_t want;
            if (tilec_api_eval_int(p, q->buf->shape[d], syms, 0, &want) != 0) {
                return tilec_api_fail(ctx, TILEC_E_INVALID,
                                      "cannot evaluate dimension %d of tensor '%s'", d, q->name);
            }
            if (want != args[i]->shape[d]) {
                return tilec_api_fail(ctx, TILEC_E_INVALID,
                                      "tensor '%s' dimension %d is %lld but the kernel expects %lld",
                                      q->name, d, (long long)args[i]->shape[d], (long long)want);
            }
        }
    }
    return TILEC_OK;
}

static tilec_status_t launch(tilec_context_t *ctx, tilec_executable_t *e,
                             tilec_buffer_t *const *args, int nargs, double *elapsed_ms,
                             void *stream)
{
    const tilec_program_t *p;
    tilec_status_t st;
    tilec_pmem_t **mems = NULL;
    int64_t *syms = NULL;
    int *from = NULL;
    tilec_plaunch_t l;
    tilec_pstatus_t ps;
    double dev_ms = 0, t0;
    int devtimer;
    if (!ctx) {
        return TILEC_E_INVALID;
    }
    if (!e || (nargs > 0 && !args)) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_launch: bad arguments");
    }
    if ((st = tilec_api_need_backend(ctx)) != TILEC_OK) {
        return st;
    }
    if (e->ctx != ctx) {
        return tilec_api_fail(ctx, TILEC_E_INVALID,
                              "the executable was compiled for another context");
    }
    if (stream && (!((ctx->info.caps | ctx->table->caps) & TILEC_CAP_STREAM) ||
                   ctx->abi_version < TILEC_ABI_MAKE(1, 1))) {
        return tilec_api_fail(ctx, TILEC_E_UNAVAILABLE,
                              "backend '%s' cannot launch on a caller's stream; launch without one "
                              "(tilec_launch), after synchronizing the caller's work",
                              ctx->backend);
    }
    p = e->prog;
    if (nargs != p->nparams) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "kernel '%s' takes %d tensor argument%s, got %d",
                              p->mod->kernel->name, p->nparams, p->nparams == 1 ? "" : "s", nargs);
    }
    for (int i = 0; i < nargs; i++) {
        const tilec_api_param_t *q = &p->params[i];
        if (!args[i]) {
            return tilec_api_fail(ctx, TILEC_E_INVALID, "argument %d ('%s') is NULL", i, q->name);
        }
        if (args[i]->ctx != ctx) {
            return tilec_api_fail(ctx, TILEC_E_INVALID,
                                  "argument %d ('%s') belongs to another context", i, q->name);
        }
        if (args[i]->elem != q->elem) {
            return tilec_api_fail(ctx, TILEC_E_INVALID,
                                  "argument %d ('%s'): the kernel expects %s, the buffer holds %s", i,
                                  q->name, tilec_api_elem_name(q->elem),
                                  tilec_api_elem_name(args[i]->elem));
        }
        if (args[i]->ndim != q->ndim) {
            return tilec_api_fail(ctx, TILEC_E_INVALID,
                                  "argument %d ('%s'): the kernel expects rank %d, the buffer has "
                                  "rank %d", i, q->name, q->ndim, args[i]->ndim);
        }
    }
    mems = calloc((size_t)nargs + 1, sizeof *mems);
    syms = calloc((size_t)p->nsyms + 1, sizeof *syms);
    from = calloc(2 * (size_t)p->nsyms + 2, sizeof *from);
    if (!mems || !syms || !from) {
        st = tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
        goto out;
    }
    st = bind_symbols(ctx, p, args, syms, from, from + p->nsyms + 1);
    if (st != TILEC_OK) {
        goto out;
    }
    for (int i = 0; i < nargs; i++) {
        mems[i] = args[i]->mem;
    }
    devtimer = ((ctx->info.caps | ctx->table->caps) & TILEC_CAP_DEVICE_TIMER) != 0;
    dev_ms = -1.0; /* stays negative when the plugin did not time after all */
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.nargs = (uint32_t)nargs;
    l.args = mems;
    l.nsyms = (uint32_t)p->nsyms;
    l.syms = syms;
    l.timed = elapsed_ms && devtimer;
    l.elapsed_ms = l.timed ? &dev_ms : NULL;
    l.stream = stream;
    if (tilec_log_enabled("launch")) {
        tilec_log("launch", "backend '%s': kernel '%s', %d argument(s), %d symbol(s)", ctx->backend,
                  p->mod->kernel->name, nargs, p->nsyms);
        for (int s = 0; s < p->nsyms; s++) {
            tilec_log("launch", "  %s = %lld", p->sym_names[s], (long long)syms[s]);
        }
    }
    t0 = tilec_api_now_ms();
    ps = ctx->table->launch(ctx->dev, e->mod, &l);
    t0 = tilec_api_now_ms() - t0;
    if (ps != TILEC_PS_OK) {
        st = tilec_api_plugin_fail(ctx, ps, TILEC_E_LAUNCH, "launch");
        goto out;
    }
    if (elapsed_ms) {
        *elapsed_ms = l.timed && dev_ms >= 0 ? dev_ms : t0;
    }
    tilec_log("launch", "backend '%s': %s in %.3f ms (host wall)%s", ctx->backend,
              stream ? "enqueued on the caller's stream" : "done", t0,
              l.timed && dev_ms >= 0 ? ", device timer used" : "");
    st = TILEC_OK;
out:
    free(mems);
    free(syms);
    free(from);
    return st;
}

/* Every kernel of e's chain, in order, with the same arguments; the time is
 * their sum. */
static tilec_status_t launch_chain(tilec_context_t *ctx, tilec_executable_t *e,
                                   tilec_buffer_t *const *args, int nargs, double *elapsed_ms,
                                   void *stream)
{
    double sum = 0;
    if (!e) {
        return launch(ctx, e, args, nargs, elapsed_ms, stream);   /* the argument error */
    }
    for (; e; e = e->next) {
        double ms = 0;
        tilec_status_t st = launch(ctx, e, args, nargs, elapsed_ms ? &ms : NULL, stream);
        if (st != TILEC_OK) {
            return st;
        }
        sum += ms;
        if (!e->next && elapsed_ms) {
            *elapsed_ms = sum;
        }
    }
    return TILEC_OK;
}

TILEC_API tilec_status_t tilec_launch(tilec_context_t *ctx, tilec_executable_t *e,
                                      tilec_buffer_t *const *args, int nargs,
                                      double *elapsed_ms)
{
    return launch_chain(ctx, e, args, nargs, elapsed_ms, NULL);
}

TILEC_API tilec_status_t tilec_launch_stream(tilec_context_t *ctx, tilec_executable_t *e,
                                             tilec_buffer_t *const *args, int nargs, void *stream)
{
    return launch_chain(ctx, e, args, nargs, NULL, stream);
}
