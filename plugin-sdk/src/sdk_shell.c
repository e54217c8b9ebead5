/*
 * sdk_shell.c — the plugin shell of tilec/shell.h: the ABI table's entry
 * points, written once for every backend built on it.
 *
 * Each entry point checks its arguments (docs/plugin-abi.md §4: NULL
 * handles and outputs, magic numbers, indices, struct sizes, ranges,
 * counts against the kernel) and then calls the backend's hook with its
 * own state.  Handles are allocated here: a header with a magic number and
 * what the checks need (a buffer's size, a module's kernel), followed by
 * the backend's state, aligned for any type.  Freed handles get their
 * magic cleared, so a stale handle is rejected as long as its memory is
 * not reused.
 *
 * The host struct: the log sink and cache directory of the latest query
 * are kept as an immutable snapshot, published with an atomic pointer (a
 * new one only when something changed; older ones stay until unload), so
 * readers take no lock and a fork never inherits a held one.
 */
#include "tilec/shell.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/simt.h"

#define DEV_MAGIC 0x74736456u /* "tsdV" */
#define MEM_MAGIC 0x7473644du
#define MOD_MAGIC 0x7473644fu
#define FIELD_END(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))
/* Smallest input structs accepted (their ABI 1.0 prefix that matters). */
#define OPTS_MIN FIELD_END(tilec_pcompile_options_t, opt_level)
#define LAUNCH_MIN offsetof(tilec_plaunch_t, timed)
#define INFO_MIN offsetof(tilec_pdevice_info_t, name)
#define MAX_LAUNCH_ARGS 4096u

#define BAD_ARG(...)                                                                               \
    do {                                                                                           \
        tilec_sdk_error_set(__VA_ARGS__);                                                          \
        return TILEC_PS_INVALID_ARGUMENT;                                                          \
    } while (0)

typedef union { max_align_t a; void *p; } align_t;

struct tilec_pdevice {
    uint32_t magic;
    uint32_t index;
    align_t state[];
};

struct tilec_pmem {
    uint32_t magic;
    tilec_pmem_scope_t scope;
    size_t size;
    align_t state[];
};

struct tilec_pmodule {
    uint32_t magic;
    int launchable;              /* made by compile (lower's modules are not) */
    tilec_pdevice_t *dev;        /* compiled on, or NULL */
    tilec_arena_t arena;
    tilec_shell_module_t m;
    align_t state[];
};

static const tilec_shell_backend_t *be;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static tilec_plugin_t table_1_0, table_1_1;

/* ---- the host snapshot -------------------------------------------------------------- */

typedef struct host_snap {
    struct host_snap *older;
    void (*log)(void *, const char *, const char *);
    void *log_user;
    char *cache_dir;
} host_snap_t;

static host_snap_t *host_now;

static host_snap_t *host_get(void)
{
    return __atomic_load_n(&host_now, __ATOMIC_ACQUIRE);
}

/* 0, or -1 when out of memory. */
static int host_keep(const tilec_plugin_host_t *h)
{
    int has_log = h->struct_size >= FIELD_END(tilec_plugin_host_t, log_user);
    int has_cache = h->struct_size >= FIELD_END(tilec_plugin_host_t, cache_dir);
    void (*log)(void *, const char *, const char *) = has_log ? h->log : NULL;
    void *user = has_log ? h->log_user : NULL;
    const char *dir = has_cache && h->cache_dir && *h->cache_dir ? h->cache_dir : NULL;
    host_snap_t *cur = host_get();
    if (cur && cur->log == log && cur->log_user == user &&
        (cur->cache_dir ? dir && strcmp(cur->cache_dir, dir) == 0 : !dir)) {
        return 0;
    }
    host_snap_t *n = calloc(1, sizeof *n);
    if (!n || (dir && !(n->cache_dir = strdup(dir)))) {
        free(n);
        return -1;
    }
    n->log = log;
    n->log_user = user;
    n->older = cur;
    while (!__atomic_compare_exchange_n(&host_now, &n->older, n, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
    }
    return 0;
}

__attribute__((destructor)) static void host_fini(void)
{
    host_snap_t *s = __atomic_exchange_n(&host_now, NULL, __ATOMIC_ACQ_REL);
    while (s) {
        host_snap_t *o = s->older;
        free(s->cache_dir);
        free(s);
        s = o;
    }
}

void tilec_shell_log(const char *topic, const char *fmt, ...)
{
    host_snap_t *h = host_get();
    if (!h || !h->log) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    tilec_sdk_str_t b = {0};
    tilec_sdk_str_vprintf(&b, fmt, ap);
    va_end(ap);
    if (!b.oom && b.s) {
        h->log(h->log_user, topic, b.s);
    }
    tilec_sdk_str_free(&b);
}

char *tilec_shell_cache_dir(void)
{
    host_snap_t *h = host_get();
    return h && h->cache_dir ? strdup(h->cache_dir) : NULL;
}

/* ---- small helpers ------------------------------------------------------------------ */

int64_t tilec_shell_option(const tilec_pcompile_options_t *o, uint32_t key, int64_t dflt)
{
    if (!o || o->struct_size < FIELD_END(tilec_pcompile_options_t, options) || !o->options) {
        return dflt;
    }
    for (uint32_t i = 0; i < o->noptions; i++) {
        if (o->options[i].key == key) {
            dflt = o->options[i].ival;
        }
    }
    return dflt;
}

tilec_pstatus_t tilec_shell_value_int(tilec_pvalue_t *v, int64_t i)
{
    v->kind = TILEC_PVAL_INT;
    v->ival = i;
    return TILEC_PS_OK;
}

tilec_pstatus_t tilec_shell_value_str(tilec_pvalue_t *v, const char *s)
{
    v->kind = TILEC_PVAL_STR;
    snprintf(v->sval, sizeof v->sval, "%s", s ? s : "");
    return TILEC_PS_OK;
}

/* Copies the callee's full output struct into the caller's, at most its
 * struct_size bytes, and sets the caller's struct_size to what was
 * written. */
static void copy_out(void *dst, const void *full, size_t full_size)
{
    uint32_t want;
    memcpy(&want, dst, sizeof want);
    size_t n = want < full_size ? want : full_size;
    memcpy(dst, full, n);
    want = (uint32_t)n;
    memcpy(dst, &want, sizeof want);
}

/* The host pointer of a copy is not NULL unless size is 0, and
 * [offset, offset + size) lies inside an allocation of alloc bytes. */
static tilec_pstatus_t check_copy(const char *who, const char *ptr_name, const void *ptr,
                                  size_t offset, size_t size, size_t alloc)
{
    if (!ptr && size) {
        BAD_ARG("%s: %s is NULL", who, ptr_name);
    }
    if (offset > alloc || size > alloc - offset) {
        BAD_ARG("%s: range [%zu, +%zu) outside the allocation of %zu bytes", who, offset, size,
                alloc);
    }
    return TILEC_PS_OK;
}

static int dev_ok(const tilec_pdevice_t *d) { return d && d->magic == DEV_MAGIC; }
static int mem_ok(const tilec_pmem_t *m) { return m && m->magic == MEM_MAGIC; }
static int mod_ok(const tilec_pmodule_t *m) { return m && m->magic == MOD_MAGIC; }

/* index < device_count, or an error. */
static tilec_pstatus_t check_index(const char *what, uint32_t index)
{
    uint32_t n = 0;
    tilec_pstatus_t st = be->device_count(&n);
    if (st != TILEC_PS_OK) {
        return st;
    }
    if (index >= n) {
        BAD_ARG("%s: %s: device index %u out of range (%u device%s)", be->name, what, index, n,
                n == 1 ? "" : "s");
    }
    return TILEC_PS_OK;
}

/* ---- entry points: devices -------------------------------------------------------- */

static const char *sh_last_error(void) { return tilec_sdk_error_get(); }

static tilec_pstatus_t sh_device_count(uint32_t *count)
{
    if (!count) {
        BAD_ARG("%s: device_count: count is NULL", be->name);
    }
    *count = 0;
    tilec_pstatus_t st = be->device_count(count);
    if (st != TILEC_PS_OK) {
        *count = 0;
    }
    return st;
}

/* The device as the backend describes it: device_describe, or
 * device_info alone (no property values). */
static tilec_pstatus_t describe(uint32_t index, tilec_shell_device_t *d)
{
    memset(d, 0, sizeof *d);
    d->info.struct_size = sizeof d->info;
    return be->device_describe ? be->device_describe(index, d) : be->device_info(index, &d->info);
}

static tilec_pstatus_t sh_device_info(uint32_t index, tilec_pdevice_info_t *info)
{
    if (!info) {
        BAD_ARG("%s: device_info: info is NULL", be->name);
    }
    if (info->struct_size < INFO_MIN) {
        BAD_ARG("%s: device_info: struct_size %u is smaller than %zu", be->name, info->struct_size,
                (size_t)INFO_MIN);
    }
    tilec_pstatus_t st = check_index("device_info", index);
    if (st != TILEC_PS_OK) {
        return st;
    }
    tilec_shell_device_t d;
    if ((st = describe(index, &d)) != TILEC_PS_OK) {
        return st;
    }
    d.info.name[sizeof d.info.name - 1] = '\0';
    d.info.platform[sizeof d.info.platform - 1] = '\0';
    d.info.struct_size = sizeof d.info;
    copy_out(info, &d.info, sizeof d.info);
    return TILEC_PS_OK;
}

/* The keys the description answers: its values, then what device_info
 * holds (compute units, memory, threads, shared memory). */
static tilec_pstatus_t prop_from_info(uint32_t index, uint32_t key, tilec_pvalue_t *v)
{
    tilec_shell_device_t dd;
    tilec_pstatus_t st = describe(index, &dd);
    if (st != TILEC_PS_OK) {
        return st;
    }
    if (key <= TILEC_PROP_LAST && dd.prop[key].kind != TILEC_PVAL_NONE) {
        *v = dd.prop[key];
        return TILEC_PS_OK;
    }
    const tilec_pdevice_info_t d = dd.info;
    switch (key) {
    case TILEC_PROP_COMPUTE_UNITS:
        if (d.compute_units) return tilec_shell_value_int(v, d.compute_units);
        break;
    case TILEC_PROP_GLOBAL_MEM_BYTES:
        if (d.global_mem_bytes) return tilec_shell_value_int(v, (int64_t)d.global_mem_bytes);
        break;
    case TILEC_PROP_MAX_THREADS_PER_BLOCK:
        if (d.max_threads) return tilec_shell_value_int(v, d.max_threads);
        break;
    case TILEC_PROP_SHARED_MEM_PER_BLOCK:
        if (d.shared_mem_bytes) return tilec_shell_value_int(v, (int64_t)d.shared_mem_bytes);
        break;
    default:
        break;
    }
    tilec_sdk_error_set("%s: device_property: %s property key %u", be->name,
                        key >= 1 && key <= TILEC_PROP_LAST ? "the device does not report"
                                                           : "unknown",
                        key);
    return TILEC_PS_UNSUPPORTED;
}

static tilec_pstatus_t sh_device_property(uint32_t index, uint32_t key, tilec_pvalue_t *value)
{
    if (!value) {
        BAD_ARG("%s: device_property: value is NULL", be->name);
    }
    if (value->struct_size < FIELD_END(tilec_pvalue_t, ival)) {
        BAD_ARG("%s: device_property: struct_size %u is smaller than %zu", be->name,
                value->struct_size, FIELD_END(tilec_pvalue_t, ival));
    }
    tilec_pstatus_t st = check_index("device_property", index);
    if (st != TILEC_PS_OK) {
        return st;
    }
    tilec_pvalue_t full;
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    st = be->device_property ? be->device_property(index, key, &full) : TILEC_PS_UNSUPPORTED;
    if (st == TILEC_PS_UNSUPPORTED) {
        memset(&full, 0, sizeof full);
        st = prop_from_info(index, key, &full);
    }
    if (st != TILEC_PS_OK) {
        return st;
    }
    full.sval[sizeof full.sval - 1] = '\0';
    full.struct_size = sizeof full;
    copy_out(value, &full, sizeof full);
    return TILEC_PS_OK;
}

static tilec_pstatus_t sh_device_open(uint32_t index, tilec_pdevice_t **out)
{
    if (!out) {
        BAD_ARG("%s: device_open: out is NULL", be->name);
    }
    tilec_pstatus_t st = check_index("device_open", index);
    if (st != TILEC_PS_OK) {
        return st;
    }
    tilec_pdevice_t *d = calloc(1, sizeof *d + be->device_size);
    if (!d) {
        tilec_sdk_error_set("%s: out of memory", be->name);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    d->index = index;
    if (be->device_open && (st = be->device_open(index, d->state)) != TILEC_PS_OK) {
        free(d);
        return st;
    }
    d->magic = DEV_MAGIC;
    *out = d;
    return TILEC_PS_OK;
}

static void sh_device_close(tilec_pdevice_t *d)
{
    if (!dev_ok(d)) {
        return;
    }
    if (be->device_close) {
        be->device_close(d->state);
    }
    d->magic = 0;
    free(d);
}

/* ---- entry points: compile, lower, modules ---------------------------------------- */

static void module_destroy(tilec_pmodule_t *m)
{
    if (!m) {
        return;
    }
    if (be->module_free) {
        be->module_free(&m->m);
    }
    free(m->m.source);
    free(m->m.binary);
    free(m->m.lowered);
    tilec_arena_destroy(&m->arena);
    m->magic = 0;
    free(m);
}

static const char *version_text(uint32_t v, char *buf, size_t n)
{
    snprintf(buf, n, "%u.%u", TILEC_ABI_MAJOR(v), TILEC_ABI_MINOR(v));
    return buf;
}

/* The checks and the setup compile and lower share; *out the new module. */
static tilec_pstatus_t module_begin(const char *what, tilec_pdevice_t *dev, const char *ir,
                                    size_t ir_len, const tilec_pcompile_options_t *opts,
                                    tilec_pmodule_t **caller_out, tilec_pcompile_options_t *full,
                                    tilec_pmodule_t **out)
{
    if (dev && !dev_ok(dev)) {
        BAD_ARG("%s: %s: invalid device handle", be->name, what);
    }
    if (!ir || ir_len == 0) {
        BAD_ARG("%s: %s: no IR text", be->name, what);
    }
    if (!caller_out) {
        BAD_ARG("%s: %s: out is NULL", be->name, what);
    }
    memset(full, 0, sizeof *full);
    full->opt_level = 3;
    if (opts) {
        if (opts->struct_size < OPTS_MIN) {
            BAD_ARG("%s: %s: options struct_size %u is smaller than %zu", be->name, what,
                    opts->struct_size, (size_t)OPTS_MIN);
        }
        memcpy(full, opts, opts->struct_size < sizeof *full ? opts->struct_size : sizeof *full);
        if (full->noptions && !full->options) {
            BAD_ARG("%s: %s: %u options but options is NULL", be->name, what, full->noptions);
        }
    }
    full->struct_size = sizeof *full;
    if (!full->options) {
        full->noptions = 0;
    }
    if (full->opt_level > 3) {
        BAD_ARG("%s: %s: opt_level %u is not in 0..3", be->name, what, full->opt_level);
    }
    if (full->arch && !*full->arch) {
        full->arch = NULL;
    }
    if (!dev && (!(be->flags & TILEC_SHELL_COMPILE_WITHOUT_DEVICE) || !full->arch)) {
        BAD_ARG("%s: %s: %s", be->name, what,
                be->flags & TILEC_SHELL_COMPILE_WITHOUT_DEVICE
                    ? "no device and no target: give an arch"
                    : "invalid device handle (this backend compiles on a device)");
    }
    tilec_pmodule_t *m = calloc(1, sizeof *m + be->module_size);
    if (!m) {
        tilec_sdk_error_set("%s: out of memory", be->name);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    m->magic = MOD_MAGIC;
    m->dev = dev;
    tilec_arena_init(&m->arena);
    m->m.arena = &m->arena;
    m->m.data = m->state;
    m->m.dev = dev ? dev->state : NULL;
    m->m.info.struct_size = sizeof m->m.info;
    m->m.info.registers = m->m.info.shared_static_bytes = m->m.info.shared_dynamic_bytes = -1;
    m->m.info.spill_bytes = m->m.info.local_bytes = m->m.info.threads = -1;
    m->m.info.max_threads = -1;
    char err[512] = "";
    tilec_ir_module_t *irm = NULL;
    if (tilec_ir_read(&m->arena, ir, ir_len, &irm, err, sizeof err) != 0 || !irm || !irm->kernel) {
        tilec_sdk_error_set("%s: %s: bad tile IR: %s", be->name, what, err[0] ? err : "no kernel");
        module_destroy(m);
        return TILEC_PS_INVALID_ARGUMENT;
    }
    uint32_t v = TILEC_IR_MAKE(irm->version_major, irm->version_minor);
    if (v < be->ir_min || v > be->ir_max) {
        char a[16], b[16], c[16];
        tilec_sdk_error_set("%s: %s: tile IR %s is outside the versions this plugin reads (%s..%s)",
                            be->name, what, version_text(v, a, sizeof a),
                            version_text(be->ir_min, b, sizeof b),
                            version_text(be->ir_max, c, sizeof c));
        module_destroy(m);
        return TILEC_PS_UNSUPPORTED;
    }
    if ((be->flags & TILEC_SHELL_NO_4BIT) && tilec_ir_kernel_uses_dtype(irm->kernel, tilec_dtype_is_4bit)) {
        tilec_sdk_error_set("%s: %s: kernel '%s' uses a 4-bit dtype (int4, uint4, float4_e2m1fn: tile IR 1.3), "
                            "which this backend does not support yet; run it on the cpu backend",
                            be->name, what, irm->kernel->name ? irm->kernel->name : "?");
        module_destroy(m);
        return TILEC_PS_UNSUPPORTED;
    }
    m->m.ir = irm;
    m->m.kernel = irm->kernel;
    m->m.ir_text = ir;
    m->m.ir_len = ir_len;
    m->m.nparams = (uint32_t)irm->kernel->nparams;
    for (int i = 0; i < irm->kernel->nvars; i++) {
        if (irm->kernel->vars[i]->kind == TILEC_VAR_SYM) {
            m->m.nsyms++;
        }
    }
    m->m.info.threads = (int64_t)irm->kernel->threads[0] * irm->kernel->threads[1] *
                        irm->kernel->threads[2];
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t sh_compile(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                                  const tilec_pcompile_options_t *opts, tilec_pmodule_t **out)
{
    tilec_pcompile_options_t full;
    tilec_pmodule_t *m = NULL;
    tilec_pstatus_t st = module_begin("compile", dev, ir, ir_len, opts, out, &full, &m);
    if (st != TILEC_PS_OK) {
        return st;
    }
    st = be->compile(m->m.dev, &full, &m->m);
    m->m.ir_text = NULL;
    m->m.ir_len = 0;
    if (st != TILEC_PS_OK) {
        module_destroy(m);
        return st;
    }
    m->launchable = 1;
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t sh_lower(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                                const tilec_pcompile_options_t *opts, tilec_pmodule_t **out)
{
    tilec_pcompile_options_t full;
    tilec_pmodule_t *m = NULL;
    tilec_pstatus_t st = module_begin("lower", dev, ir, ir_len, opts, out, &full, &m);
    if (st != TILEC_PS_OK) {
        return st;
    }
    if (!be->lower) {
        tilec_sdk_error_set("%s: lower: this backend has no lowered IR to show yet (it runs no "
                            "SDK lowering passes)", be->name);
        st = TILEC_PS_UNSUPPORTED;
    } else {
        st = be->lower(m->m.dev, &full, &m->m);
        if (st == TILEC_PS_OK && !m->m.lowered) {
            tilec_sdk_error_set("%s: lower: the backend gave no text", be->name);
            st = TILEC_PS_INTERNAL;
        }
    }
    m->m.ir_text = NULL;
    m->m.ir_len = 0;
    if (st != TILEC_PS_OK) {
        module_destroy(m);
        return st;
    }
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t sh_module_data(tilec_pmodule_t *mod, tilec_pdata_kind_t kind,
                                      const void **data, size_t *size)
{
    if (!mod_ok(mod) || !data || !size) {
        BAD_ARG("%s: module_data: NULL or invalid argument", be->name);
    }
    const void *p;
    size_t n;
    const char *what;
    switch (kind) {
    case TILEC_PDATA_SOURCE: p = mod->m.source; n = mod->m.source_len; what = "source"; break;
    case TILEC_PDATA_BINARY: p = mod->m.binary; n = mod->m.binary_len; what = "binary"; break;
    case TILEC_PDATA_LOWERED: p = mod->m.lowered; n = mod->m.lowered_len; what = "lowered IR"; break;
    default: BAD_ARG("%s: module_data: unknown data kind %d", be->name, (int)kind);
    }
    if (!p) {
        tilec_sdk_error_set("%s: module_data: the module has no %s", be->name, what);
        return TILEC_PS_UNSUPPORTED;
    }
    *data = p;
    *size = n;
    return TILEC_PS_OK;
}

static tilec_pstatus_t sh_module_info(tilec_pmodule_t *mod, tilec_pmodule_info_t *info)
{
    if (!mod_ok(mod) || !info) {
        BAD_ARG("%s: module_info: NULL or invalid argument", be->name);
    }
    if (info->struct_size < FIELD_END(tilec_pmodule_info_t, reserved)) {
        BAD_ARG("%s: module_info: struct_size %u is too small", be->name, info->struct_size);
    }
    tilec_pmodule_info_t full = mod->m.info;
    if (be->module_info && mod->launchable) {
        be->module_info(&mod->m, &full);
    }
    full.struct_size = sizeof full;
    full.reserved = 0;
    copy_out(info, &full, sizeof full);
    return TILEC_PS_OK;
}

static void sh_module_free(tilec_pmodule_t *mod)
{
    if (mod_ok(mod)) {
        module_destroy(mod);
    }
}

/* ---- entry points: memory ---------------------------------------------------------- */

static tilec_pstatus_t sh_mem_alloc(tilec_pdevice_t *dev, tilec_pmem_scope_t scope, size_t size,
                                    tilec_pmem_t **out)
{
    if (!dev_ok(dev)) {
        BAD_ARG("%s: mem_alloc: invalid device handle", be->name);
    }
    if (!out) {
        BAD_ARG("%s: mem_alloc: out is NULL", be->name);
    }
    if (scope != TILEC_PMEM_DEVICE && scope != TILEC_PMEM_HOST) {
        BAD_ARG("%s: mem_alloc: unknown memory scope %d", be->name, (int)scope);
    }
    if (size > SIZE_MAX / 2) {
        tilec_sdk_error_set("%s: mem_alloc: %zu bytes is too much", be->name, size);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    tilec_pmem_t *m = calloc(1, sizeof *m + be->mem_size);
    if (!m) {
        tilec_sdk_error_set("%s: out of memory", be->name);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    tilec_pstatus_t st = be->mem_alloc(dev->state, scope, size, m->state);
    if (st != TILEC_PS_OK) {
        free(m);
        return st;
    }
    m->magic = MEM_MAGIC;
    m->scope = scope;
    m->size = size;
    *out = m;
    return TILEC_PS_OK;
}

/* The checks mem_write and mem_read share: both handles, then the host
 * pointer and the byte range against the allocation. */
static tilec_pstatus_t check_transfer(const char *op, tilec_pdevice_t *dev, tilec_pmem_t *mem,
                                      const char *ptr_name, const void *ptr, size_t offset,
                                      size_t size)
{
    char who[80];
    if (!dev_ok(dev)) {
        BAD_ARG("%s: %s: invalid device handle", be->name, op);
    }
    if (!mem_ok(mem)) {
        BAD_ARG("%s: %s: invalid memory handle", be->name, op);
    }
    snprintf(who, sizeof who, "%s: %s", be->name, op);
    return check_copy(who, ptr_name, ptr, offset, size, mem->size);
}

static tilec_pstatus_t sh_mem_write(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                    const void *src, size_t size)
{
    tilec_pstatus_t st = check_transfer("mem_write", dev, mem, "src", src, offset, size);
    if (st != TILEC_PS_OK || size == 0) {
        return st;
    }
    return be->mem_write(dev->state, mem->state, offset, src, size);
}

static tilec_pstatus_t sh_mem_read(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                   void *dst, size_t size)
{
    tilec_pstatus_t st = check_transfer("mem_read", dev, mem, "dst", dst, offset, size);
    if (st != TILEC_PS_OK || size == 0) {
        return st;
    }
    return be->mem_read(dev->state, mem->state, offset, dst, size);
}

static void sh_mem_free(tilec_pdevice_t *dev, tilec_pmem_t *mem)
{
    if (!mem_ok(mem)) {
        return;
    }
    be->mem_free(dev_ok(dev) ? dev->state : NULL, mem->state);
    mem->magic = 0;
    free(mem);
}

static tilec_pstatus_t sh_mem_wrap(tilec_pdevice_t *dev, int dl_type, int dl_id, void *ptr,
                                   size_t size, tilec_pmem_t **out)
{
    if (!dev_ok(dev)) {
        BAD_ARG("%s: mem_wrap: invalid device handle", be->name);
    }
    if (!out || !ptr) {
        BAD_ARG("%s: mem_wrap: NULL argument", be->name);
    }
    tilec_pmem_t *m = calloc(1, sizeof *m + be->mem_size);
    if (!m) {
        tilec_sdk_error_set("%s: mem_wrap: out of memory", be->name);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    tilec_pstatus_t st = be->mem_wrap(dev->state, dl_type, dl_id, ptr, size, m->state);
    if (st != TILEC_PS_OK) {
        free(m);
        return st;
    }
    m->magic = MEM_MAGIC;
    m->scope = TILEC_PMEM_DEVICE;
    m->size = size;
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t sh_mem_address(tilec_pdevice_t *dev, tilec_pmem_t *mem, int *dl_type,
                                      int *dl_id, void **ptr)
{
    if (!dev_ok(dev)) {
        BAD_ARG("%s: mem_address: invalid device handle", be->name);
    }
    if (!mem_ok(mem)) {
        BAD_ARG("%s: mem_address: invalid memory handle", be->name);
    }
    if (!dl_type || !dl_id || !ptr) {
        BAD_ARG("%s: mem_address: NULL argument", be->name);
    }
    return be->mem_address(dev->state, mem->state, dl_type, dl_id, ptr);
}

/* ---- entry point: launch ------------------------------------------------------------ */

static tilec_pstatus_t sh_launch(tilec_pdevice_t *dev, tilec_pmodule_t *mod,
                                 const tilec_plaunch_t *a)
{
    if (!dev_ok(dev)) {
        BAD_ARG("%s: launch: invalid device handle", be->name);
    }
    if (!mod_ok(mod) || !mod->launchable) {
        BAD_ARG("%s: launch: invalid module", be->name);
    }
    if ((be->flags & TILEC_SHELL_MODULE_ON_ITS_DEVICE) && mod->dev != dev) {
        BAD_ARG("%s: launch: the module was compiled for another device", be->name);
    }
    if (!a) {
        BAD_ARG("%s: launch: arguments are NULL", be->name);
    }
    if (a->struct_size < LAUNCH_MIN) {
        BAD_ARG("%s: launch: struct_size %u is smaller than %zu", be->name, a->struct_size,
                (size_t)LAUNCH_MIN);
    }
    tilec_plaunch_t l;
    memset(&l, 0, sizeof l);
    memcpy(&l, a, a->struct_size < sizeof l ? a->struct_size : sizeof l);
    const tilec_shell_module_t *m = &mod->m;
    if (l.nargs != m->nparams) {
        BAD_ARG("%s: launch: %u arguments given, the kernel takes %u", be->name, l.nargs,
                m->nparams);
    }
    if (l.nsyms != m->nsyms) {
        BAD_ARG("%s: launch: %u symbol values given, the kernel has %u", be->name, l.nsyms,
                m->nsyms);
    }
    if (l.nargs && !l.args) {
        BAD_ARG("%s: launch: args is NULL", be->name);
    }
    if (l.nsyms && !l.syms) {
        BAD_ARG("%s: launch: syms is NULL", be->name);
    }
    if (l.timed && !l.elapsed_ms) {
        BAD_ARG("%s: launch: timed without elapsed_ms", be->name);
    }
    if (l.stream && !(be->caps & TILEC_CAP_STREAM)) {
        BAD_ARG("%s: launch: this backend cannot launch on a caller's stream", be->name);
    }
    if (l.nargs > MAX_LAUNCH_ARGS) {
        BAD_ARG("%s: launch: more than %u arguments", be->name, MAX_LAUNCH_ARGS);
    }
    for (uint32_t i = 0; i < l.nsyms; i++) {
        if (l.syms[i] < INT32_MIN || l.syms[i] > INT32_MAX) {
            BAD_ARG("%s: launch: symbol %u = %lld does not fit in int32", be->name, i,
                    (long long)l.syms[i]);
        }
    }
    static const int64_t nosyms[1] = {0};
    const int64_t *syms = l.nsyms ? l.syms : nosyms;
    void **states = calloc((size_t)l.nargs + 1, sizeof *states);
    size_t *sizes = calloc((size_t)l.nargs + 1, sizeof *sizes);
    tilec_pstatus_t st = TILEC_PS_OK;
    if (!states || !sizes) {
        tilec_sdk_error_set("%s: out of memory", be->name);
        st = TILEC_PS_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; st == TILEC_PS_OK && i < l.nargs; i++) {
        tilec_pmem_t *b = l.args[i];
        uint64_t need = 0;
        if (!mem_ok(b)) {
            tilec_sdk_error_set("%s: launch: argument %u is not a memory handle", be->name, i);
            st = TILEC_PS_INVALID_ARGUMENT;
        } else if (tilec_simt_param_bytes(m->kernel, (int)i, syms, l.nsyms, &need) != 0) {
            tilec_sdk_error_set("%s: launch: argument %u has a negative or too large shape for "
                                "these symbol values", be->name, i);
            st = TILEC_PS_INVALID_ARGUMENT;
        } else if (need > b->size) {
            tilec_sdk_error_set("%s: launch: argument %u has %zu bytes, the kernel needs %llu",
                                be->name, i, b->size, (unsigned long long)need);
            st = TILEC_PS_INVALID_ARGUMENT;
        } else {
            states[i] = b->state;
            sizes[i] = b->size;
        }
    }
    tilec_shell_launch_t sl;
    memset(&sl, 0, sizeof sl);
    if (st == TILEC_PS_OK && tilec_simt_grid(m->kernel, syms, l.nsyms, sl.grid) != 0) {
        tilec_sdk_error_set("%s: launch: the grid does not evaluate to extents in 0..2^31-1 for "
                            "these symbol values", be->name);
        st = TILEC_PS_INVALID_ARGUMENT;
    }
    if (st == TILEC_PS_OK && (sl.grid[0] == 0 || sl.grid[1] == 0 || sl.grid[2] == 0)) {
        if (l.timed) {
            *l.elapsed_ms = 0.0;
        }
    } else if (st == TILEC_PS_OK) {
        sl.nargs = l.nargs;
        sl.nsyms = l.nsyms;
        sl.args = states;
        sl.sizes = sizes;
        sl.syms = syms;
        sl.timed = l.timed;
        sl.elapsed_ms = l.timed ? l.elapsed_ms : NULL;
        sl.stream = l.stream;
        st = be->launch(dev->state, &mod->m, &sl);
    }
    free(states);
    free(sizes);
    return st;
}

static tilec_pstatus_t sh_module_load(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                                      const void *binary, size_t size, tilec_pmodule_t **out)
{
    tilec_pcompile_options_t full;
    tilec_pmodule_t *m = NULL;
    tilec_pstatus_t st;
    if (!dev) {
        BAD_ARG("%s: module_load: a loaded module runs on a device: dev is NULL", be->name);
    }
    if (!binary || size == 0) {
        BAD_ARG("%s: module_load: no binary", be->name);
    }
    st = module_begin("module_load", dev, ir, ir_len, NULL, out, &full, &m);
    if (st != TILEC_PS_OK) {
        return st;
    }
    m->m.binary = malloc(size);
    if (!m->m.binary) {
        module_destroy(m);
        tilec_sdk_error_set("%s: out of memory", be->name);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    memcpy(m->m.binary, binary, size);
    m->m.binary_len = size;
    st = be->load(m->m.dev, &m->m);
    m->m.ir_text = NULL;
    m->m.ir_len = 0;
    if (st != TILEC_PS_OK) {
        module_destroy(m);
        return st;
    }
    m->launchable = 1;
    *out = m;
    return TILEC_PS_OK;
}

static const tilec_ext_module_load_t sh_module_load_ext = {sizeof sh_module_load_ext, 0, sh_module_load};

static const void *sh_extension(const char *name)
{
    if (name && be->load && !strcmp(name, TILEC_EXT_MODULE_LOAD)) {
        return &sh_module_load_ext;
    }
    return name && be->extension ? be->extension(name) : NULL;
}

/* ---- the query --------------------------------------------------------------------- */

static void tables_fill(void)
{
    tilec_plugin_t t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    t.abi_version = TILEC_PLUGIN_ABI_VERSION;
    t.name = be->name;
    t.vendor = be->vendor;
    t.version = be->version;
    t.caps = be->caps;
    t.last_error = sh_last_error;
    t.device_count = sh_device_count;
    t.device_info = sh_device_info;
    t.device_open = sh_device_open;
    t.device_close = sh_device_close;
    t.compile = sh_compile;
    t.module_data = sh_module_data;
    t.module_free = sh_module_free;
    t.mem_alloc = sh_mem_alloc;
    t.mem_write = sh_mem_write;
    t.mem_read = sh_mem_read;
    t.mem_free = sh_mem_free;
    t.launch = sh_launch;
    t.mem_wrap = be->mem_wrap && be->mem_address ? sh_mem_wrap : NULL;
    t.mem_address = be->mem_wrap && be->mem_address ? sh_mem_address : NULL;
    t.ir_min = be->ir_min;
    t.ir_max = be->ir_max;
    t.device_property = sh_device_property;
    t.module_info = sh_module_info;
    t.lower = sh_lower;
    t.extension = sh_extension;
    table_1_1 = t;
    /* The 1.0 table is what a 1.0 plugin's looks like: it ends at launch. */
    memset(&table_1_0, 0, sizeof table_1_0);
    memcpy(&table_1_0, &t, TILEC_PLUGIN_TABLE_SIZE_1_0);
    table_1_0.struct_size = (uint32_t)TILEC_PLUGIN_TABLE_SIZE_1_0;
    table_1_0.abi_version = TILEC_ABI_MAKE(1, 0);
}

tilec_pstatus_t tilec_shell_query(const tilec_shell_backend_t *b, const tilec_plugin_host_t *host,
                                  uint32_t *abi_out, const tilec_plugin_t **table_out)
{
    const char *who = b && b->name ? b->name : "plugin";
    if (!host || !abi_out || !table_out) {
        tilec_sdk_error_set("%s: query: NULL argument", who);
        return TILEC_PS_INVALID_ARGUMENT;
    }
    if (host->struct_size < offsetof(tilec_plugin_host_t, reserved)) {
        tilec_sdk_error_set("%s: query: host struct_size %u is smaller than %zu", who,
                            host->struct_size, offsetof(tilec_plugin_host_t, reserved));
        return TILEC_PS_INVALID_ARGUMENT;
    }
    if (!b || !b->name || !b->device_count || (!b->device_info && !b->device_describe) || !b->compile || !b->mem_alloc ||
        !b->mem_write || !b->mem_read || !b->mem_free || !b->launch) {
        tilec_sdk_error_set("%s: query: the backend description lacks a required hook", who);
        return TILEC_PS_INTERNAL;
    }
    const tilec_shell_backend_t *none = NULL;
    if (!__atomic_compare_exchange_n(&be, &none, b, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
        none != b) {
        tilec_sdk_error_set("%s: query: a second backend description in one plugin", who);
        return TILEC_PS_INTERNAL;
    }
    pthread_once(&tables_once, tables_fill);
    /* The highest version both speak: 1.1 (this SDK) or 1.0. */
    uint32_t mine = b->abi_max < TILEC_PLUGIN_ABI_VERSION ? b->abi_max : TILEC_PLUGIN_ABI_VERSION;
    uint32_t pick = 0;
    if (host->abi_min <= host->abi_max) {
        for (uint32_t v = mine; v >= TILEC_ABI_MAKE(1, 0); v--) {
            if (v >= host->abi_min && v <= host->abi_max) {
                pick = v;
                break;
            }
        }
    }
    if (!pick) {
        tilec_sdk_error_set("%s: query: host speaks ABI %u.%u..%u.%u, this plugin speaks 1.0..%u.%u",
                            who, TILEC_ABI_MAJOR(host->abi_min), TILEC_ABI_MINOR(host->abi_min),
                            TILEC_ABI_MAJOR(host->abi_max), TILEC_ABI_MINOR(host->abi_max),
                            TILEC_ABI_MAJOR(mine), TILEC_ABI_MINOR(mine));
        return TILEC_PS_UNSUPPORTED;
    }
    if (host_keep(host) != 0) {
        tilec_sdk_error_set("%s: out of memory", who);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    *abi_out = pick;
    *table_out = pick >= TILEC_ABI_MAKE(1, 1) ? &table_1_1 : &table_1_0;
    return TILEC_PS_OK;
}

/* ---- vendor symbol tables ------------------------------------------------------------ */

int tilec_dl_resolve(void *handle, const char *lib, const tilec_dl_sym_t *syms, size_t n,
                     void *table, char *why, size_t whylen)
{
    for (size_t i = 0; i < n; i++) {
        const char *names = syms[i].name;
        void *p = NULL;
        while (!p && *names) {
            size_t len = strcspn(names, "|");
            char one[128];
            snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), names);
            p = dlsym(handle, one);
            names += len + (names[len] == '|');
        }
        if (!p) {
            snprintf(why, whylen, "%s: missing symbol %.*s", lib, (int)strcspn(syms[i].name, "|"),
                     syms[i].name);
            return -1;
        }
        memcpy((char *)table + syms[i].offset, &p, sizeof p);
    }
    return 0;
}
