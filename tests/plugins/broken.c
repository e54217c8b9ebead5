/*
 * tests/plugins/broken.c — deliberately broken (and one good) plugins for
 * the loader tests and the conformance ABI cases.
 *
 * One source, compiled once per kind with -DBROKEN_KIND_<kind> into
 * libtilec-broken_<kind>.so.  Each kind breaks exactly one rule of the
 * plugin ABI (docs/plugin-abi.md), so the loader must list it with the
 * matching state and reason and keep going:
 *   nosymbol     exports some other symbol, not tilec_plugin_query
 *   nulltable    query returns OK with a NULL table
 *   noversion    speaks only ABI 9.0: no common version
 *   smallstruct  table struct_size smaller than the ABI 1.0 table
 *   badabi       answers 1.0 but its table says 2.0
 *   badname      plugin name with characters outside [a-z0-9_]
 *   nullentry    the launch entry point is NULL
 *   crashquery   segfaults inside tilec_plugin_query
 *   crashcount   segfaults inside device_count
 *   crashinfo    segfaults inside device_info
 *   exitctor     calls exit(0) from a constructor (while being dlopen'ed)
 *   exitquery    calls exit(0) inside tilec_plugin_query
 *   handlerexit  installs a SIGSEGV handler that exits 0, then faults in
 *                its query (the fault looks like a clean exit)
 *   unavailable  valid, but device_count reports its runtime missing
 *   shadow       valid, but named "broken_good" (found after it: shadowed)
 *   hangcount    device_count never returns (built into plugins-extra/,
 *                so only the test that wants a hang waits for one)
 *   sighost      valid ("broken_sighost", plugins-extra/), but its query
 *                installs SIGSEGV/SIGBUS/SIGFPE handlers that exit 0, as a
 *                vendor runtime does: later probes must not inherit them
 *   good         a valid minimal plugin "broken_good": one host-memory
 *                device, compile keeps the IR text (module_data SOURCE
 *                gives it back), launch checks its arguments and does
 *                nothing else.  It speaks ABI 1.0 (and so reads IR 1.0).
 * ABI 1.1 kinds (the table grows by the 1.1 fields):
 *   v11          valid "broken_v11": reads tile IR 1.1 only (so the host
 *                must re-label 1.0 text as 1.1), answers the ARCH property
 *                ("broken-arch") and UNSUPPORTED for others, module_info
 *                says 7 registers, lower gives "lowered: " + the IR text,
 *                extension("broken_ext") is a table, any other name NULL
 *   small11      answers 1.1 with a table of the 1.0 size
 *   nullprop     answers 1.1 with a NULL device_property
 *   badir        answers 1.1 with an IR range 1.2..1.1 (empty)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilec/plugin.h"

#if defined(BROKEN_KIND_v11) || defined(BROKEN_KIND_small11) || defined(BROKEN_KIND_nullprop) || \
    defined(BROKEN_KIND_badir)
#define BROKEN_ABI TILEC_ABI_MAKE(1, 1)
#else
#define BROKEN_ABI TILEC_ABI_MAKE(1, 0) /* a plugin written for ABI 1.0 */
#endif

#if defined(BROKEN_NAME)
#define PLUGIN_NAME BROKEN_NAME
#elif defined(BROKEN_KIND_shadow)
#define PLUGIN_NAME "broken_good"
#elif defined(BROKEN_KIND_badname)
#define PLUGIN_NAME "Broken-Name"
#elif defined(BROKEN_KIND_unavailable)
#define PLUGIN_NAME "broken_unavailable"
#elif defined(BROKEN_KIND_v11)
#define PLUGIN_NAME "broken_v11"
#elif defined(BROKEN_KIND_small11) || defined(BROKEN_KIND_nullprop) || defined(BROKEN_KIND_badir)
#define PLUGIN_NAME "broken_bad11"
#elif defined(BROKEN_KIND_sighost)
#define PLUGIN_NAME "broken_sighost"
#else
#define PLUGIN_NAME "broken_good"
#endif

static char last_msg[256];

static tilec_pstatus_t fail(tilec_pstatus_t st, const char *msg)
{
    snprintf(last_msg, sizeof last_msg, "%s", msg);
    return st;
}

static const char *b_last_error(void)
{
    return last_msg;
}

#if defined(BROKEN_KIND_handlerexit) || defined(BROKEN_KIND_sighost)
static void exit_on_signal(int sig)
{
    (void)sig;
    _exit(0);
}

static void install_exit_handlers(void)
{
    signal(SIGSEGV, exit_on_signal);
    signal(SIGBUS, exit_on_signal);
    signal(SIGFPE, exit_on_signal);
}
#endif

#if defined(BROKEN_KIND_exitctor)
__attribute__((constructor)) static void exit_when_loaded(void)
{
    exit(0);
}
#endif

static tilec_pstatus_t b_device_count(uint32_t *count)
{
    if (!count) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "count is NULL");
    }
#if defined(BROKEN_KIND_crashcount)
    raise(SIGSEGV);
#endif
#if defined(BROKEN_KIND_hangcount)
    for (;;) {
        pause();
    }
#endif
#if defined(BROKEN_KIND_unavailable)
    *count = 0;
    return fail(TILEC_PS_UNAVAILABLE, "libwidget.so.1 not found (test plugin)");
#else
    *count = 1;
    last_msg[0] = '\0';
    return TILEC_PS_OK;
#endif
}

static tilec_pstatus_t b_device_info(uint32_t index, tilec_pdevice_info_t *info)
{
    tilec_pdevice_info_t d;
    if (!info || info->struct_size < offsetof(tilec_pdevice_info_t, caps)) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad info struct");
    }
    if (index != 0) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "no such device");
    }
#if defined(BROKEN_KIND_crashinfo)
    raise(SIGSEGV);
#endif
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    snprintf(d.name, sizeof d.name, "broken test device");
    d.caps = TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_EMIT_SOURCE;
    d.max_threads = 1;
    d.compute_units = 1;
    /* Write only as much as the caller's struct holds. */
    {
        uint32_t n = info->struct_size < sizeof d ? info->struct_size : (uint32_t)sizeof d;
        memcpy(info, &d, n);
        info->struct_size = n;
    }
    return TILEC_PS_OK;
}

struct tilec_pdevice { int dummy; };
static struct tilec_pdevice the_device;

static tilec_pstatus_t b_device_open(uint32_t index, tilec_pdevice_t **out)
{
    if (!out || index != 0) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad device_open arguments");
    }
    *out = &the_device;
    return TILEC_PS_OK;
}

static void b_device_close(tilec_pdevice_t *dev)
{
    (void)dev;
}

struct tilec_pmodule { char *ir; size_t len; int lowered; };

static tilec_pstatus_t b_compile(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                                 const tilec_pcompile_options_t *opts, tilec_pmodule_t **out)
{
    tilec_pmodule_t *m;
    if (dev != &the_device || !ir || !out || (opts && opts->struct_size < sizeof(uint32_t))) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad compile arguments");
    }
    if (ir_len < 6 || strncmp(ir, "tileir", 6) != 0) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "not tile IR text");
    }
    /* 1.1: the structured options it got follow the IR text, one line each */
    uint32_t nopt = BROKEN_ABI >= TILEC_ABI_MAKE(1, 1) && opts &&
                            opts->struct_size >= offsetof(tilec_pcompile_options_t, options) +
                                                     sizeof opts->options && opts->options
                        ? opts->noptions
                        : 0;
    m = malloc(sizeof *m);
    if (!m || !(m->ir = malloc(ir_len + 1 + (size_t)nopt * 160))) {
        free(m);
        return fail(TILEC_PS_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(m->ir, ir, ir_len);
    m->ir[ir_len] = '\0';
    for (uint32_t i = 0; i < nopt; i++) {
        const tilec_poption_t *o = &opts->options[i];
        size_t at = strlen(m->ir);
        snprintf(m->ir + at, 160, "# option %u %.60s %lld\n", o->key, o->name ? o->name : "-",
                 (long long)o->ival);
    }
    ir_len = strlen(m->ir);
    m->len = ir_len;
    m->lowered = 0;
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t b_module_data(tilec_pmodule_t *mod, tilec_pdata_kind_t kind,
                                     const void **data, size_t *size)
{
    if (!mod || !data || !size) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad module_data arguments");
    }
    if (kind != (mod->lowered ? TILEC_PDATA_LOWERED : TILEC_PDATA_SOURCE)) {
        return fail(TILEC_PS_UNSUPPORTED, "broken_good has no binary");
    }
    *data = mod->ir;
    *size = mod->len;
    return TILEC_PS_OK;
}

static void b_module_free(tilec_pmodule_t *mod)
{
    if (mod) {
        free(mod->ir);
        free(mod);
    }
}

struct tilec_pmem { size_t size; unsigned char data[]; };

static tilec_pstatus_t b_mem_alloc(tilec_pdevice_t *dev, tilec_pmem_scope_t scope, size_t size,
                                   tilec_pmem_t **out)
{
    tilec_pmem_t *m;
    if (dev != &the_device || !out || (scope != TILEC_PMEM_DEVICE && scope != TILEC_PMEM_HOST)) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad mem_alloc arguments");
    }
    m = calloc(1, sizeof *m + size);
    if (!m) {
        return fail(TILEC_PS_OUT_OF_MEMORY, "out of memory");
    }
    m->size = size;
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t b_mem_write(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                   const void *src, size_t size)
{
    if (dev != &the_device || !mem || (!src && size) || offset > mem->size ||
        size > mem->size - offset) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad mem_write arguments");
    }
    if (size) {
        memcpy(mem->data + offset, src, size);
    }
    return TILEC_PS_OK;
}

static tilec_pstatus_t b_mem_read(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                  void *dst, size_t size)
{
    if (dev != &the_device || !mem || (!dst && size) || offset > mem->size ||
        size > mem->size - offset) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad mem_read arguments");
    }
    if (size) {
        memcpy(dst, mem->data + offset, size);
    }
    return TILEC_PS_OK;
}

static void b_mem_free(tilec_pdevice_t *dev, tilec_pmem_t *mem)
{
    (void)dev;
    free(mem);
}

#if defined(BROKEN_KIND_nullentry)
__attribute__((unused))
#endif
static tilec_pstatus_t b_launch(tilec_pdevice_t *dev, tilec_pmodule_t *mod, const tilec_plaunch_t *args)
{
    if (dev != &the_device || !mod || !args || args->struct_size < offsetof(tilec_plaunch_t, timed)) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad launch arguments");
    }
    for (uint32_t i = 0; i < args->nargs; i++) {
        if (!args->args || !args->args[i]) {
            return fail(TILEC_PS_INVALID_ARGUMENT, "NULL launch argument");
        }
    }
    if (args->nsyms && !args->syms) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "NULL symbol values");
    }
    return TILEC_PS_OK;
}

/* ---- ABI 1.1 entries -------------------------------------------------------- */

__attribute__((unused)) static tilec_pstatus_t b_device_property(uint32_t index, uint32_t key, tilec_pvalue_t *v)
{
    if (index != 0 || !v) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad device_property arguments");
    }
    if (key != TILEC_PROP_ARCH) {
        return fail(TILEC_PS_UNSUPPORTED, "unknown property key");
    }
    v->kind = TILEC_PVAL_STR;
    snprintf(v->sval, sizeof v->sval, "broken-arch");
    return TILEC_PS_OK;
}

static tilec_pstatus_t b_module_info(tilec_pmodule_t *mod, tilec_pmodule_info_t *info)
{
    if (!mod || !info || info->struct_size < sizeof *info) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad module_info arguments");
    }
    memset(info, 0xff, sizeof *info); /* -1 everywhere */
    info->struct_size = sizeof *info;
    info->reserved = 0;
    info->registers = 7;
    return TILEC_PS_OK;
}

static tilec_pstatus_t b_lower(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                               const tilec_pcompile_options_t *opts, tilec_pmodule_t **out)
{
    tilec_pstatus_t st = b_compile(dev, ir, ir_len, opts, out);
    if (st == TILEC_PS_OK) {
        char *t = malloc(ir_len + 10);
        if (!t) {
            free((*out)->ir);
            free(*out);
            return fail(TILEC_PS_OUT_OF_MEMORY, "out of memory");
        }
        memcpy(t, "lowered: ", 9);
        memcpy(t + 9, ir, ir_len);
        t[ir_len + 9] = '\0';
        free((*out)->ir);
        (*out)->ir = t;
        (*out)->len = ir_len + 9;
        (*out)->lowered = 1;
    }
    return st;
}

static const struct { uint32_t version; } broken_ext = {1};

static const void *b_extension(const char *name)
{
    return name && strcmp(name, "broken_ext") == 0 ? (const void *)&broken_ext : NULL;
}

static const tilec_plugin_t table = {
#if defined(BROKEN_KIND_smallstruct)
    offsetof(tilec_plugin_t, compile),
#elif defined(BROKEN_KIND_small11)
    TILEC_PLUGIN_TABLE_SIZE_1_0,
#else
    sizeof(tilec_plugin_t),
#endif
#if defined(BROKEN_KIND_badabi)
    TILEC_ABI_MAKE(2, 0),
#else
    BROKEN_ABI,
#endif
    PLUGIN_NAME,
    "tilec tests",
    "0.0.1",
    TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_EMIT_SOURCE,
    b_last_error,
    b_device_count,
    b_device_info,
    b_device_open,
    b_device_close,
    b_compile,
    b_module_data,
    b_module_free,
    b_mem_alloc,
    b_mem_write,
    b_mem_read,
    b_mem_free,
#if defined(BROKEN_KIND_nullentry)
    NULL,
#else
    b_launch,
#endif
    NULL, /* mem_wrap and mem_address: optional, absent (no zero-copy DLPack) */
    NULL,
#if defined(BROKEN_KIND_badir)
    TILEC_IR_MAKE(1, 2),
    TILEC_IR_MAKE(1, 1),
#else
    TILEC_IR_MAKE(1, 1), /* read by the host only from 1.1 tables */
    TILEC_IR_MAKE(1, 1),
#endif
#if defined(BROKEN_KIND_nullprop)
    NULL,
#else
    b_device_property,
#endif
    b_module_info,
    b_lower,
    b_extension,
};

#if defined(BROKEN_KIND_nosymbol)
/* The wrong name: the loader must say the symbol is missing. */
TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query_v0(const tilec_plugin_host_t *host,
                                                          uint32_t *abi_out,
                                                          const tilec_plugin_t **table_out);
TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query_v0(const tilec_plugin_host_t *host,
                                                          uint32_t *abi_out,
                                                          const tilec_plugin_t **table_out)
{
    (void)host;
    *abi_out = BROKEN_ABI;
    *table_out = &table;
    return TILEC_PS_OK;
}
#else
TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host,
                                                       uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out);
TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host,
                                                       uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out)
{
    uint32_t want = BROKEN_ABI;
    if (!host || !abi_out || !table_out || host->struct_size < offsetof(tilec_plugin_host_t, log)) {
        return TILEC_PS_INVALID_ARGUMENT;
    }
#if defined(BROKEN_KIND_crashquery)
    raise(SIGSEGV);
#endif
#if defined(BROKEN_KIND_exitquery)
    exit(0);
#endif
#if defined(BROKEN_KIND_handlerexit)
    install_exit_handlers();
    raise(SIGSEGV);
#endif
#if defined(BROKEN_KIND_sighost)
    install_exit_handlers();
#endif
#if defined(BROKEN_KIND_noversion)
    want = TILEC_ABI_MAKE(9, 0);
#endif
    if (want < host->abi_min || want > host->abi_max) {
        return TILEC_PS_UNSUPPORTED;
    }
    *abi_out = want;
#if defined(BROKEN_KIND_nulltable)
    *table_out = NULL;
    (void)table;
#else
    *table_out = &table;
#endif
    if (host->struct_size >= offsetof(tilec_plugin_host_t, log_user) && host->log) {
        host->log(host->log_user, "loader", "broken test plugin queried");
    }
    return TILEC_PS_OK;
}
#endif
