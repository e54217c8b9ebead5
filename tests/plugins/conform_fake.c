/*
 * tests/plugins/conform_fake.c — misbehaving plugins for the conformance
 * runner's tests (tests/test_conform.c).  One source, built once per kind
 * with -DFAKE_KIND_<kind> into libtilec-fake_<kind>.so:
 *   crash   launch dies of SIGSEGV          -> every launched case: crash
 *   hang    launch never returns            -> timeout
 *   liar    declares every capability but compile answers UNSUPPORTED
 *           -> fail (a skip for a claimed capability is a failure)
 *   nocaps  declares no optional capability; launch does nothing
 *           -> not-supported where a case needs one, fail elsewhere
 * Memory and argument checks are real, so the ABI cases run against them.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilec/plugin.h"

#if defined(FAKE_KIND_nocaps)
#define FAKE_CAPS 0ull
#define FAKE_NAME "fake_nocaps"
#elif defined(FAKE_KIND_crash)
#define FAKE_CAPS 0x7ffull
#define FAKE_NAME "fake_crash"
#elif defined(FAKE_KIND_hang)
#define FAKE_CAPS 0x7ffull
#define FAKE_NAME "fake_hang"
#else
#define FAKE_CAPS 0x7ffull
#define FAKE_NAME "fake_liar"
#endif

static __thread char msg[256];

static tilec_pstatus_t fail(tilec_pstatus_t st, const char *m)
{
    snprintf(msg, sizeof msg, "%s", m);
    return st;
}

static const char *f_last_error(void)
{
    return msg;
}

static tilec_pstatus_t f_device_count(uint32_t *n)
{
    if (!n) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "count is NULL");
    }
    *n = 1;
    return TILEC_PS_OK;
}

static tilec_pstatus_t f_device_info(uint32_t i, tilec_pdevice_info_t *info)
{
    if (!info || i != 0 || info->struct_size < offsetof(tilec_pdevice_info_t, caps)) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad device_info arguments");
    }
    tilec_pdevice_info_t d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    snprintf(d.name, sizeof d.name, "%s test device", FAKE_NAME);
    d.caps = FAKE_CAPS;
    uint32_t n = info->struct_size < sizeof d ? info->struct_size : (uint32_t)sizeof d;
    memcpy(info, &d, n);
    info->struct_size = n;
    return TILEC_PS_OK;
}

struct tilec_pdevice { int x; };
static struct tilec_pdevice dev0;

static tilec_pstatus_t f_device_open(uint32_t i, tilec_pdevice_t **out)
{
    if (!out || i != 0) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad device_open arguments");
    }
    *out = &dev0;
    return TILEC_PS_OK;
}

static void f_device_close(tilec_pdevice_t *d)
{
    (void)d;
}

struct tilec_pmodule { int nparams; };

static tilec_pstatus_t f_compile(tilec_pdevice_t *d, const char *ir, size_t len,
                                 const tilec_pcompile_options_t *o, tilec_pmodule_t **out)
{
    (void)o;
    if (d != &dev0 || !ir || !out) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad compile arguments");
    }
    if (len < 10 || strncmp(ir, "tileir 1.", 9) != 0) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "not tile IR 1.x");
    }
#if defined(FAKE_KIND_liar)
    if (!memmem(ir, len, "abi_scale", 9)) {
        return fail(TILEC_PS_UNSUPPORTED, "fake_liar supports nothing after all");
    }
#endif
    /* Count the parameters: lines starting with "  param ". */
    int np = 0;
    for (const char *p = ir; p && p < ir + len; p = memchr(p, '\n', (size_t)(ir + len - p))) {
        if (*p == '\n') {
            p++;
        }
        if ((size_t)(ir + len - p) > 8 && !strncmp(p, "  param ", 8)) {
            np++;
        }
    }
    tilec_pmodule_t *m = malloc(sizeof *m);
    if (!m) {
        return fail(TILEC_PS_OUT_OF_MEMORY, "out of memory");
    }
    m->nparams = np;
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t f_module_data(tilec_pmodule_t *m, tilec_pdata_kind_t k, const void **d, size_t *n)
{
    (void)k;
    if (!m || !d || !n) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad module_data arguments");
    }
    return fail(TILEC_PS_UNSUPPORTED, "no module data");
}

static void f_module_free(tilec_pmodule_t *m)
{
    free(m);
}

struct tilec_pmem { size_t size; unsigned char data[]; };

static tilec_pstatus_t f_mem_alloc(tilec_pdevice_t *d, tilec_pmem_scope_t s, size_t size, tilec_pmem_t **out)
{
    if (d != &dev0 || !out || (s != TILEC_PMEM_DEVICE && s != TILEC_PMEM_HOST) || size > ((size_t)1 << 40)) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad mem_alloc arguments");
    }
    tilec_pmem_t *m = calloc(1, sizeof *m + size);
    if (!m) {
        return fail(TILEC_PS_OUT_OF_MEMORY, "out of memory");
    }
    m->size = size;
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t f_mem_write(tilec_pdevice_t *d, tilec_pmem_t *m, size_t off, const void *src, size_t n)
{
    if (d != &dev0 || !m || (!src && n) || off > m->size || n > m->size - off) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad mem_write arguments");
    }
    if (n) {
        memcpy(m->data + off, src, n);
    }
    return TILEC_PS_OK;
}

static tilec_pstatus_t f_mem_read(tilec_pdevice_t *d, tilec_pmem_t *m, size_t off, void *dst, size_t n)
{
    if (d != &dev0 || !m || (!dst && n) || off > m->size || n > m->size - off) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad mem_read arguments");
    }
    if (n) {
        memcpy(dst, m->data + off, n);
    }
    return TILEC_PS_OK;
}

static void f_mem_free(tilec_pdevice_t *d, tilec_pmem_t *m)
{
    (void)d;
    free(m);
}

static tilec_pstatus_t f_launch(tilec_pdevice_t *d, tilec_pmodule_t *m, const tilec_plaunch_t *a)
{
    if (d != &dev0 || !m || !a || a->struct_size < offsetof(tilec_plaunch_t, timed) ||
        a->nargs != (uint32_t)m->nparams || (a->nargs && !a->args) || (a->nsyms && !a->syms)) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "bad launch arguments");
    }
    for (uint32_t i = 0; i < a->nargs; i++) {
        if (!a->args[i]) {
            return fail(TILEC_PS_INVALID_ARGUMENT, "NULL launch argument");
        }
    }
    if (a->nsyms) {
        return fail(TILEC_PS_INVALID_ARGUMENT, "symbol count mismatch");
    }
#if defined(FAKE_KIND_crash)
    /* A real fault, not raise(SIGSEGV): a vendor runtime that the same
     * process loaded (PoCL's LLVM, once installed) has handlers that return
     * from a raised signal; a fault re-executes and dies of it. */
    {
        volatile int *volatile bad = (volatile int *)(uintptr_t)16;
        *bad = 1;
    }
#elif defined(FAKE_KIND_hang)
    for (;;) {
        pause();
    }
#endif
    return TILEC_PS_OK;
}

static const tilec_plugin_t table = {
    sizeof(tilec_plugin_t), TILEC_ABI_MAKE(1, 0), FAKE_NAME, "tilec tests", "0.0.1", FAKE_CAPS,
    f_last_error, f_device_count, f_device_info, f_device_open, f_device_close, f_compile,
    f_module_data, f_module_free, f_mem_alloc, f_mem_write, f_mem_read, f_mem_free, f_launch,
    NULL, NULL, /* mem_wrap, mem_address: optional */
    0, 0, NULL, NULL, NULL, NULL, /* an ABI 1.0 plugin: no 1.1 entries */
};

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *h, uint32_t *abi,
                                                       const tilec_plugin_t **t);
TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *h, uint32_t *abi,
                                                       const tilec_plugin_t **t)
{
    if (!h || !abi || !t || h->struct_size < offsetof(tilec_plugin_host_t, reserved)) {
        return TILEC_PS_INVALID_ARGUMENT;
    }
    if (h->abi_min > TILEC_ABI_MAKE(1, 0) || h->abi_max < TILEC_ABI_MAKE(1, 0)) {
        return TILEC_PS_UNSUPPORTED;
    }
    *abi = TILEC_ABI_MAKE(1, 0);
    *t = &table;
    return TILEC_PS_OK;
}
