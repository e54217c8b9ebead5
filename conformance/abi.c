/*
 * conformance/abi.c — the ABI cases (docs/plugin-abi.md) and the loader's
 * broken-plugin cases.
 *
 * ABI cases call the plugin under test through its table, directly: version
 * negotiation on each path (exact, a wider range, a host that also speaks
 * newer majors, no common version either way, bad arguments), smaller and
 * larger struct_size for every struct that crosses the ABI, invalid
 * arguments to every entry point (each must return an error — a crash is
 * caught by the runner's fork and reported as crash), and a small kernel
 * run end to end.  Each case stops at its first violation and says which.
 * The ABI 1.1 cases (negotiation of 1.1, device properties, module info,
 * lowering, extensions) pass trivially, saying so, on a 1.0 plugin.
 *
 * Loader cases point the host's loader at one deliberately broken plugin
 * (tests/plugins/broken.c) each and check that it is listed with the right
 * state and reason while the embedded cpu backend stays usable.
 */
#include "conform.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A 2-block kernel: B = 2 * A over 64 float32. */
static const char abi_ir[] =
    "tileir 1.0\n"
    "kernel abi_scale {\n"
    "  var bx int32 block\n"
    "  var i int32 loop\n"
    "  param A global float32 [64]\n"
    "  param B global float32 [64] out\n"
    "  grid [bx = 2]\n"
    "  threads 32 1 1\n"
    "  body {\n"
    "    for i in parallel(32) {\n"
    "      store B[((bx * 32) + i)] = (A[((bx * 32) + i)] * 2.0)\n"
    "    }\n"
    "  }\n"
    "}\n";

typedef struct env {
    const conform_run_t *run;
    const tilec_plugin_t *t;
    tilec_plugin_query_fn query;
    char *msg;
    size_t msglen;
    int failed;
} env_t;

static void failf(env_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failf(env_t *e, const char *fmt, ...)
{
    if (e->failed) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, e->msglen, fmt, ap);
    va_end(ap);
    e->failed = 1;
}

/* An entry point that had to fail: not OK, and last_error says why. */
static void expect_error(env_t *e, tilec_pstatus_t st, const char *what)
{
    if (e->failed) {
        return;
    }
    if (st == TILEC_PS_OK) {
        failf(e, "%s returned OK; it must reject the arguments", what);
        return;
    }
    const char *m = e->t->last_error();
    if (!m) {
        failf(e, "%s failed but last_error() returned NULL", what);
    } else if (!*m) {
        failf(e, "%s failed (status %d) but last_error() is empty", what, (int)st);
    }
}

static void expect_invalid(env_t *e, tilec_pstatus_t st, const char *what)
{
    if (!e->failed && st != TILEC_PS_OK && st != TILEC_PS_INVALID_ARGUMENT) {
        failf(e, "%s returned status %d; expected TILEC_PS_INVALID_ARGUMENT (1)", what, (int)st);
        return;
    }
    expect_error(e, st, what);
}

static void expect_ok(env_t *e, tilec_pstatus_t st, const char *what)
{
    if (!e->failed && st != TILEC_PS_OK) {
        failf(e, "%s failed (status %d): %s", what, (int)st, e->t->last_error());
    }
}

/* A struct smaller than the 1.0 size: the callee may reject it with
 * TILEC_PS_INVALID_ARGUMENT (docs/plugin-abi.md §3) or accept it reading
 * only what fits.  Returns 1 when accepted. */
static int small_ok(env_t *e, tilec_pstatus_t st, const char *what)
{
    if (e->failed) {
        return 0;
    }
    if (st == TILEC_PS_INVALID_ARGUMENT) {
        expect_error(e, st, what);
        return 0;
    }
    expect_ok(e, st, what);
    return !e->failed;
}

static tilec_plugin_host_t make_host(uint32_t lo, uint32_t hi)
{
    tilec_plugin_host_t h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    h.abi_min = lo;
    h.abi_max = hi;
    return h;
}

/* ---- negotiation ------------------------------------------------------------- */

static void negotiate_ok(env_t *e, const tilec_plugin_host_t *h, const char *what)
{
    uint32_t abi = 0xdeadbeef;
    const tilec_plugin_t *t = NULL;
    tilec_pstatus_t st = e->query(h, &abi, &t);
    if (st != TILEC_PS_OK) {
        failf(e, "%s: query returned status %d, expected OK", what, (int)st);
    } else if (!t) {
        failf(e, "%s: query returned a NULL table", what);
    } else if (abi < h->abi_min || abi > h->abi_max) {
        failf(e, "%s: chose ABI %u.%u outside the host's range %u.%u..%u.%u", what, TILEC_ABI_MAJOR(abi),
              TILEC_ABI_MINOR(abi), TILEC_ABI_MAJOR(h->abi_min), TILEC_ABI_MINOR(h->abi_min),
              TILEC_ABI_MAJOR(h->abi_max), TILEC_ABI_MINOR(h->abi_max));
    } else if (t->abi_version != abi) {
        failf(e, "%s: table abi_version %u.%u differs from the chosen %u.%u", what,
              TILEC_ABI_MAJOR(t->abi_version), TILEC_ABI_MINOR(t->abi_version), TILEC_ABI_MAJOR(abi),
              TILEC_ABI_MINOR(abi));
    }
}

static void negotiate_none(env_t *e, uint32_t lo, uint32_t hi, const char *what)
{
    tilec_plugin_host_t h = make_host(lo, hi);
    uint32_t abi = 0x5a5a5a5a;
    const tilec_plugin_t *t = (const tilec_plugin_t *)&abi;
    tilec_pstatus_t st = e->query(&h, &abi, &t);
    if (st != TILEC_PS_UNSUPPORTED) {
        failf(e, "%s: query returned status %d, expected TILEC_PS_UNSUPPORTED (3)", what, (int)st);
    } else if (abi != 0x5a5a5a5a || t != (const tilec_plugin_t *)&abi) {
        failf(e, "%s: query set its outputs although there is no common version", what);
    }
}

static void c_negotiate_exact(env_t *e)
{
    tilec_plugin_host_t h = make_host(TILEC_ABI_MAKE(1, 0), TILEC_ABI_MAKE(1, 0));
    negotiate_ok(e, &h, "host 1.0..1.0");
}

static void c_negotiate_range(env_t *e)
{
    tilec_plugin_host_t h = make_host(TILEC_ABI_MAKE(1, 0), TILEC_ABI_MAKE(1, 0xffff));
    negotiate_ok(e, &h, "host 1.0..1.65535");
    /* The highest common version: at least the one of a 1.0-only host. */
    uint32_t abi = 0;
    const tilec_plugin_t *t = NULL;
    if (!e->failed && e->query(&h, &abi, &t) == TILEC_PS_OK && abi < TILEC_ABI_MAKE(1, 0)) {
        failf(e, "host 1.0..1.65535: chose %u.%u, lower than 1.0", TILEC_ABI_MAJOR(abi),
              TILEC_ABI_MINOR(abi));
    }
}

static void c_negotiate_newer_host(env_t *e)
{
    tilec_plugin_host_t h = make_host(TILEC_ABI_MAKE(1, 0), TILEC_ABI_MAKE(7, 3));
    negotiate_ok(e, &h, "host 1.0..7.3");
}

static void c_negotiate_none(env_t *e)
{
    negotiate_none(e, TILEC_ABI_MAKE(9, 0), TILEC_ABI_MAKE(9, 5), "host 9.0..9.5 (newer only)");
    negotiate_none(e, TILEC_ABI_MAKE(0, 0), TILEC_ABI_MAKE(0, 9), "host 0.0..0.9 (older only)");
    negotiate_none(e, TILEC_ABI_MAKE(1, 5), TILEC_ABI_MAKE(1, 4), "host 1.5..1.4 (empty range)");
}

static void c_negotiate_invalid(env_t *e)
{
    tilec_plugin_host_t h = make_host(TILEC_ABI_MAKE(1, 0), TILEC_ABI_MAKE(1, 0));
    uint32_t abi;
    const tilec_plugin_t *t;
    if (e->query(NULL, &abi, &t) == TILEC_PS_OK) {
        failf(e, "query(NULL host) returned OK");
    } else if (e->query(&h, NULL, &t) == TILEC_PS_OK) {
        failf(e, "query(abi_out NULL) returned OK");
    } else if (e->query(&h, &abi, NULL) == TILEC_PS_OK) {
        failf(e, "query(table_out NULL) returned OK");
    } else {
        h.struct_size = 0;
        if (e->query(&h, &abi, &t) == TILEC_PS_OK) {
            failf(e, "query with host struct_size 0 returned OK");
        }
    }
}

static void c_host_struct_sizes(env_t *e)
{
    /* An older host: everything before log. */
    tilec_plugin_host_t h = make_host(TILEC_ABI_MAKE(1, 0), TILEC_ABI_MAKE(1, 0));
    h.struct_size = (uint32_t)offsetof(tilec_plugin_host_t, log);
    h.log = (void (*)(void *, const char *, const char *))(uintptr_t)1; /* must not be read */
    h.cache_dir = (const char *)(uintptr_t)1;
    {
        uint32_t abi = 0;
        const tilec_plugin_t *t = NULL;
        tilec_pstatus_t st = e->query(&h, &abi, &t);
        if (st != TILEC_PS_INVALID_ARGUMENT) {
            negotiate_ok(e, &h, "host struct_size without log/cache_dir");
        }
    }
    /* A newer host: extra fields past the end. */
    struct { tilec_plugin_host_t h; unsigned char extra[64]; } big;
    memset(&big, 0xab, sizeof big);
    big.h = make_host(TILEC_ABI_MAKE(1, 0), TILEC_ABI_MAKE(1, 0));
    big.h.struct_size = sizeof big;
    negotiate_ok(e, &big.h, "host struct_size larger than 1.0");
}

static int valid_name(const char *n)
{
    if (!n || !*n || strlen(n) > 64) {
        return 0;
    }
    for (; *n; n++) {
        if (!((*n >= 'a' && *n <= 'z') || (*n >= '0' && *n <= '9') || *n == '_')) {
            return 0;
        }
    }
    return 1;
}

static void c_table(env_t *e)
{
    const tilec_plugin_t *t = e->t;
    if (t->struct_size < offsetof(tilec_plugin_t, launch) + sizeof t->launch) {
        failf(e, "table struct_size %u smaller than the ABI 1.0 table", t->struct_size);
    } else if (!valid_name(t->name)) {
        failf(e, "plugin name '%s' is not [a-z0-9_]{1,64}", t->name ? t->name : "(null)");
    } else if (!t->last_error()) {
        failf(e, "last_error() returned NULL (must be \"\" when there is no error)");
    } else if (t->caps & ~TILEC_CAP_ALL) {
        failf(e, "caps 0x%llx sets reserved bits (0x%llx are defined)", (unsigned long long)t->caps,
              (unsigned long long)TILEC_CAP_ALL);
    }
}

/* ---- devices ------------------------------------------------------------------ */

static void c_device_info_sizes(env_t *e)
{
    const tilec_plugin_t *t = e->t;
    uint32_t dev = e->run->device;
    /* Older, smaller caller: up to platform only. */
    struct { tilec_pdevice_info_t i; } small;
    unsigned char *raw = (unsigned char *)&small;
    memset(raw, 0xcd, sizeof small);
    uint32_t sz = (uint32_t)offsetof(tilec_pdevice_info_t, caps);
    small.i.struct_size = sz;
    small_ok(e, t->device_info(dev, &small.i), "device_info with a smaller struct_size");
    for (size_t k = sz; !e->failed && k < sizeof small; k++) {
        if (raw[k] != 0xcd) {
            failf(e, "device_info wrote byte %zu past the caller's struct_size %u", k, sz);
        }
    }
    if (!e->failed && small.i.struct_size != 0xcdcdcdcd && small.i.name[0] != (char)0xcd &&
        !memchr(small.i.name, 0, sizeof small.i.name)) {
        failf(e, "device_info: name not NUL-terminated");
    }
    /* Newer, larger caller. */
    struct { tilec_pdevice_info_t i; unsigned char extra[64]; } big;
    memset(&big, 0, sizeof big);
    big.i.struct_size = sizeof big;
    expect_ok(e, t->device_info(dev, &big.i), "device_info with a larger struct_size");
    if (!e->failed && big.i.struct_size > sizeof big) {
        failf(e, "device_info set struct_size %u beyond the caller's %zu", big.i.struct_size, sizeof big);
    }
    if (!e->failed && (!memchr(big.i.name, 0, sizeof big.i.name) || !big.i.name[0])) {
        failf(e, "device_info: empty or unterminated name");
    }
}

static void c_invalid_devices(env_t *e)
{
    const tilec_plugin_t *t = e->t;
    uint32_t n = 0;
    tilec_pdevice_info_t info;
    tilec_pdevice_t *d = NULL;
    expect_invalid(e, t->device_count(NULL), "device_count(NULL)");
    expect_ok(e, t->device_count(&n), "device_count");
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    expect_invalid(e, t->device_info(n, &info), "device_info(count, ...) (index out of range)");
    expect_invalid(e, t->device_info(UINT32_MAX, &info), "device_info(UINT32_MAX, ...)");
    expect_invalid(e, t->device_info(0, NULL), "device_info(0, NULL)");
    expect_invalid(e, t->device_open(n, &d), "device_open(count, ...) (index out of range)");
    expect_invalid(e, t->device_open(0, NULL), "device_open(0, NULL)");
    t->device_close(NULL); /* must be harmless */
}

static void c_device_reopen(env_t *e)
{
    const tilec_plugin_t *t = e->t;
    tilec_pdevice_t *a = NULL, *b = NULL;
    expect_ok(e, t->device_open(e->run->device, &a), "device_open (first)");
    expect_ok(e, t->device_open(e->run->device, &b), "device_open (second, same index)");
    if (b) {
        t->device_close(b);
    }
    if (a) {
        t->device_close(a);
    }
}

/* ---- compile, memory, launch -------------------------------------------------- */

typedef struct setup {
    tilec_pdevice_t *dev;
    tilec_pmodule_t *mod;
    tilec_pmem_t *a, *b;
} setup_t;

static int setup(env_t *e, setup_t *s)
{
    const tilec_plugin_t *t = e->t;
    memset(s, 0, sizeof *s);
    expect_ok(e, t->device_open(e->run->device, &s->dev), "device_open");
    if (e->failed) {
        return -1;
    }
    expect_ok(e, t->compile(s->dev, abi_ir, sizeof abi_ir - 1, NULL, &s->mod), "compile (opts NULL)");
    expect_ok(e, t->mem_alloc(s->dev, TILEC_PMEM_DEVICE, 256, &s->a), "mem_alloc(256)");
    expect_ok(e, t->mem_alloc(s->dev, TILEC_PMEM_DEVICE, 256, &s->b), "mem_alloc(256)");
    return e->failed ? -1 : 0;
}

static void teardown(env_t *e, setup_t *s)
{
    const tilec_plugin_t *t = e->t;
    if (s->a) t->mem_free(s->dev, s->a);
    if (s->b) t->mem_free(s->dev, s->b);
    if (s->mod) t->module_free(s->mod);
    if (s->dev) t->device_close(s->dev);
}

/* Launches with the given struct and checks B == 2A. */
static void run_scale(env_t *e, setup_t *s, tilec_plaunch_t *la, const char *what)
{
    const tilec_plugin_t *t = e->t;
    float in[64], out[64];
    for (int i = 0; i < 64; i++) {
        in[i] = (float)(i - 20) * 0.25f;
        out[i] = -1000.0f;
    }
    expect_ok(e, t->mem_write(s->dev, s->a, 0, in, sizeof in), "mem_write");
    expect_ok(e, t->mem_write(s->dev, s->b, 0, out, sizeof out), "mem_write");
    tilec_pmem_t *args[2] = {s->a, s->b};
    la->nargs = 2;
    la->args = args;
    expect_ok(e, t->launch(s->dev, s->mod, la), what);
    expect_ok(e, t->mem_read(s->dev, s->b, 0, out, sizeof out), "mem_read");
    for (int i = 0; !e->failed && i < 64; i++) {
        if (out[i] != 2.0f * in[i]) {
            failf(e, "%s: B[%d] = %g, expected %g", what, i, out[i], 2.0f * in[i]);
        }
    }
}

/* The same with a struct smaller than 1.0: rejecting it is allowed. */
static void run_scale_small(env_t *e, setup_t *s, tilec_plaunch_t *la, const char *what)
{
    tilec_pmem_t *args[2] = {s->a, s->b};
    la->nargs = 2;
    la->args = args;
    tilec_pstatus_t st = e->t->launch(s->dev, s->mod, la);
    if (st == TILEC_PS_INVALID_ARGUMENT) {
        expect_error(e, st, what);
        return;
    }
    run_scale(e, s, la, what);
}

static void c_compile_options_sizes(env_t *e)
{
    const tilec_plugin_t *t = e->t;
    tilec_pdevice_t *dev = NULL;
    tilec_pmodule_t *mod = NULL;
    expect_ok(e, t->device_open(e->run->device, &dev), "device_open");
    if (e->failed) {
        return;
    }
    tilec_pcompile_options_t small;
    memset(&small, 0xee, sizeof small);
    small.struct_size = (uint32_t)offsetof(tilec_pcompile_options_t, arch);
    small.opt_level = 1;
    small_ok(e, t->compile(dev, abi_ir, sizeof abi_ir - 1, &small, &mod),
             "compile with options struct_size up to opt_level (arch/extra must not be read)");
    if (mod) {
        t->module_free(mod);
        mod = NULL;
    }
    struct { tilec_pcompile_options_t o; unsigned char extra[32]; } big;
    memset(&big, 0, sizeof big);
    big.o.struct_size = sizeof big;
    big.o.opt_level = 3;
    expect_ok(e, t->compile(dev, abi_ir, sizeof abi_ir - 1, &big.o, &mod),
              "compile with a larger options struct_size");
    if (mod) {
        t->module_free(mod);
        mod = NULL;
    }
    /* The IR text need not be NUL-terminated: pass a copy without one. */
    char *copy = malloc(sizeof abi_ir - 1);
    if (copy) {
        memcpy(copy, abi_ir, sizeof abi_ir - 1);
        expect_ok(e, t->compile(dev, copy, sizeof abi_ir - 1, NULL, &mod),
                  "compile of IR text without a terminating NUL");
        free(copy);
    }
    if (mod) {
        t->module_free(mod);
    }
    t->device_close(dev);
}

static void c_launch_struct_sizes(env_t *e)
{
    setup_t s;
    if (setup(e, &s) == 0) {
        tilec_plaunch_t la;
        memset(&la, 0, sizeof la);
        la.struct_size = sizeof la;
        run_scale(e, &s, &la, "launch");
        memset(&la, 0, sizeof la);
        la.struct_size = (uint32_t)offsetof(tilec_plaunch_t, timed);
        la.timed = 1; /* beyond struct_size: must not be read */
        la.elapsed_ms = (double *)(uintptr_t)1;
        run_scale_small(e, &s, &la, "launch with struct_size up to syms (no timing fields)");
        struct { tilec_plaunch_t l; unsigned char extra[32]; } big;
        memset(&big, 0, sizeof big);
        big.l.struct_size = sizeof big;
        run_scale(e, &s, &big.l, "launch with a larger struct_size");
        if (e->t->caps & TILEC_CAP_DEVICE_TIMER) {
            double ms = -1;
            memset(&la, 0, sizeof la);
            la.struct_size = sizeof la;
            la.timed = 1;
            la.elapsed_ms = &ms;
            run_scale(e, &s, &la, "timed launch");
        }
    }
    teardown(e, &s);
}

static void c_module_data(env_t *e)
{
    setup_t s;
    if (setup(e, &s) == 0) {
        const tilec_plugin_t *t = e->t;
        const void *d = NULL;
        size_t n = 0;
        if (t->caps & TILEC_CAP_EMIT_SOURCE) {
            expect_ok(e, t->module_data(s.mod, TILEC_PDATA_SOURCE, &d, &n), "module_data(SOURCE)");
            if (!e->failed && (!d || !n)) {
                failf(e, "module_data(SOURCE) returned no data although EMIT_SOURCE is declared");
            }
        }
        if (t->caps & TILEC_CAP_EMIT_BINARY) {
            expect_ok(e, t->module_data(s.mod, TILEC_PDATA_BINARY, &d, &n), "module_data(BINARY)");
            if (!e->failed && (!d || !n)) {
                failf(e, "module_data(BINARY) returned no data although EMIT_BINARY is declared");
            }
        }
        expect_error(e, t->module_data(NULL, TILEC_PDATA_SOURCE, &d, &n), "module_data(NULL module)");
        expect_error(e, t->module_data(s.mod, TILEC_PDATA_SOURCE, NULL, &n), "module_data(data NULL)");
        expect_error(e, t->module_data(s.mod, TILEC_PDATA_SOURCE, &d, NULL), "module_data(size NULL)");
        expect_error(e, t->module_data(s.mod, (tilec_pdata_kind_t)77, &d, &n), "module_data(kind 77)");
        t->module_free(NULL);
    }
    teardown(e, &s);
}

static void c_invalid_compile(env_t *e)
{
    const tilec_plugin_t *t = e->t;
    tilec_pdevice_t *dev = NULL;
    tilec_pmodule_t *mod = NULL;
    expect_ok(e, t->device_open(e->run->device, &dev), "device_open");
    if (e->failed) {
        return;
    }
    expect_invalid(e, t->compile(NULL, abi_ir, sizeof abi_ir - 1, NULL, &mod), "compile(NULL device)");
    expect_invalid(e, t->compile(dev, NULL, 10, NULL, &mod), "compile(NULL ir)");
    expect_invalid(e, t->compile(dev, abi_ir, sizeof abi_ir - 1, NULL, NULL), "compile(out NULL)");
    expect_error(e, t->compile(dev, "garbage", 7, NULL, &mod), "compile of text that is not tile IR");
    expect_error(e, t->compile(dev, abi_ir, 40, NULL, &mod), "compile of truncated tile IR");
    static const char v2[] = "tileir 2.0\nkernel k {\n}\n";
    expect_error(e, t->compile(dev, v2, sizeof v2 - 1, NULL, &mod), "compile of tile IR 2.0");
    /* Reads back, but violates the IR rules (the host would never send
     * it): an unknown buffer. */
    static const char bad[] =
        "tileir 1.0\nkernel k {\n  var bx int32 block\n  param A global float32 [4]\n"
        "  grid [bx = 1]\n  threads 1 1 1\n  body {\n    store Z[0] = 1.0\n  }\n}\n";
    expect_error(e, t->compile(dev, bad, sizeof bad - 1, NULL, &mod), "compile of IR naming an unknown buffer");
    if (mod) {
        failf(e, "a failed compile stored a module");
    }
    t->device_close(dev);
}

static void c_invalid_memory(env_t *e)
{
    setup_t s;
    if (setup(e, &s) == 0) {
        const tilec_plugin_t *t = e->t;
        char buf[512];
        tilec_pmem_t *m = NULL;
        memset(buf, 0, sizeof buf);
        expect_invalid(e, t->mem_alloc(NULL, TILEC_PMEM_DEVICE, 16, &m), "mem_alloc(NULL device)");
        expect_invalid(e, t->mem_alloc(s.dev, (tilec_pmem_scope_t)99, 16, &m), "mem_alloc(scope 99)");
        expect_invalid(e, t->mem_alloc(s.dev, TILEC_PMEM_DEVICE, 16, NULL), "mem_alloc(out NULL)");
        expect_invalid(e, t->mem_write(NULL, s.a, 0, buf, 16), "mem_write(NULL device)");
        expect_invalid(e, t->mem_write(s.dev, NULL, 0, buf, 16), "mem_write(NULL mem)");
        expect_invalid(e, t->mem_write(s.dev, s.a, 0, NULL, 16), "mem_write(NULL src)");
        expect_invalid(e, t->mem_write(s.dev, s.a, 0, buf, 257), "mem_write past the end (size)");
        expect_invalid(e, t->mem_write(s.dev, s.a, 250, buf, 16), "mem_write past the end (offset+size)");
        expect_invalid(e, t->mem_write(s.dev, s.a, 300, buf, 0), "mem_write at an offset past the end");
        expect_invalid(e, t->mem_write(s.dev, s.a, SIZE_MAX, buf, 2), "mem_write with offset+size overflowing");
        expect_invalid(e, t->mem_read(NULL, s.a, 0, buf, 16), "mem_read(NULL device)");
        expect_invalid(e, t->mem_read(s.dev, NULL, 0, buf, 16), "mem_read(NULL mem)");
        expect_invalid(e, t->mem_read(s.dev, s.a, 0, NULL, 16), "mem_read(NULL dst)");
        expect_invalid(e, t->mem_read(s.dev, s.a, 0, buf, 257), "mem_read past the end (size)");
        expect_invalid(e, t->mem_read(s.dev, s.a, 255, buf, 2), "mem_read past the end (offset+size)");
        expect_invalid(e, t->mem_read(s.dev, s.a, 2, buf, SIZE_MAX), "mem_read with offset+size overflowing");
        t->mem_free(s.dev, NULL); /* must be harmless */
        /* Round trip at an offset, and host-scope memory. */
        unsigned char pat[100], back[100];
        for (int i = 0; i < 100; i++) {
            pat[i] = (unsigned char)(i * 7 + 3);
        }
        expect_ok(e, t->mem_write(s.dev, s.a, 156, pat, 100), "mem_write at offset 156");
        expect_ok(e, t->mem_read(s.dev, s.a, 156, back, 100), "mem_read at offset 156");
        if (!e->failed && memcmp(pat, back, 100)) {
            failf(e, "mem_write/mem_read round trip at an offset lost data");
        }
        expect_ok(e, t->mem_alloc(s.dev, TILEC_PMEM_HOST, 64, &m), "mem_alloc(HOST scope)");
        if (m) {
            expect_ok(e, t->mem_write(s.dev, m, 0, pat, 64), "mem_write (HOST scope)");
            expect_ok(e, t->mem_read(s.dev, m, 0, back, 64), "mem_read (HOST scope)");
            if (!e->failed && memcmp(pat, back, 64)) {
                failf(e, "host-scope round trip lost data");
            }
            t->mem_free(s.dev, m);
        }
    }
    teardown(e, &s);
}

static void c_invalid_launch(env_t *e)
{
    setup_t s;
    if (setup(e, &s) == 0) {
        const tilec_plugin_t *t = e->t;
        tilec_pmem_t *args[2] = {s.a, s.b};
        tilec_pmem_t *nullarg[2] = {s.a, NULL};
        tilec_plaunch_t la;
        memset(&la, 0, sizeof la);
        la.struct_size = sizeof la;
        la.nargs = 2;
        la.args = args;
        expect_invalid(e, t->launch(NULL, s.mod, &la), "launch(NULL device)");
        expect_invalid(e, t->launch(s.dev, NULL, &la), "launch(NULL module)");
        expect_invalid(e, t->launch(s.dev, s.mod, NULL), "launch(NULL args)");
        la.nargs = 1;
        expect_invalid(e, t->launch(s.dev, s.mod, &la), "launch with 1 argument for a 2-parameter kernel");
        la.nargs = 3;
        expect_invalid(e, t->launch(s.dev, s.mod, &la), "launch with 3 arguments for a 2-parameter kernel");
        la.nargs = 2;
        la.args = NULL;
        expect_invalid(e, t->launch(s.dev, s.mod, &la), "launch with args NULL");
        la.args = nullarg;
        expect_invalid(e, t->launch(s.dev, s.mod, &la), "launch with a NULL argument");
        la.args = args;
        la.nsyms = 1;
        la.syms = NULL;
        expect_invalid(e, t->launch(s.dev, s.mod, &la), "launch with nsyms 1 and syms NULL (kernel has none)");
        la.nsyms = 0;
        la.struct_size = 0;
        expect_invalid(e, t->launch(s.dev, s.mod, &la), "launch with struct_size 0");
        /* Still usable afterwards. */
        memset(&la, 0, sizeof la);
        la.struct_size = sizeof la;
        run_scale(e, &s, &la, "launch after the rejected ones");
    }
    teardown(e, &s);
}

static void c_last_error(env_t *e)
{
    const tilec_plugin_t *t = e->t;
    (void)t->device_count(NULL);
    const char *m = t->last_error();
    if (!m || !*m) {
        failf(e, "last_error() after a failed call is %s", m ? "empty" : "NULL");
    } else if (strchr(m, '\n')) {
        failf(e, "last_error() is not one line: '%s'", m);
    }
}

/* ---- ABI 1.1 ------------------------------------------------------------------- */

/* 1 when the plugin under test answered 1.1 or later; else notes why the
 * case does not apply. */
static int is_1_1(env_t *e)
{
    if (e->run->abi >= TILEC_ABI_MAKE(1, 1)) {
        return 1;
    }
    snprintf(e->msg, e->msglen, "the plugin speaks ABI %u.%u: nothing of 1.1 to check",
             TILEC_ABI_MAJOR(e->run->abi), TILEC_ABI_MINOR(e->run->abi));
    return 0;
}

static void c_negotiate_1_1(env_t *e)
{
    tilec_plugin_host_t h = make_host(TILEC_ABI_MAKE(1, 0), TILEC_ABI_MAKE(1, 1));
    uint32_t abi = 0;
    const tilec_plugin_t *t = NULL;
    negotiate_ok(e, &h, "host 1.0..1.1");
    if (e->failed || e->query(&h, &abi, &t) != TILEC_PS_OK || abi < TILEC_ABI_MAKE(1, 1)) {
        return;
    }
    if (t->struct_size < TILEC_PLUGIN_TABLE_SIZE_1_1) {
        failf(e, "answered 1.1 with a table of %u bytes (1.1 has %zu)", t->struct_size,
              (size_t)TILEC_PLUGIN_TABLE_SIZE_1_1);
    } else if (!t->device_property || !t->module_info || !t->lower || !t->extension) {
        failf(e, "answered 1.1 but a 1.1 entry point is NULL");
    } else if (t->ir_min > t->ir_max || TILEC_ABI_MAJOR(t->ir_min) != 1 ||
               TILEC_ABI_MAJOR(t->ir_max) != 1) {
        failf(e, "tile IR range %u.%u..%u.%u is not a range of 1.x versions",
              TILEC_ABI_MAJOR(t->ir_min), TILEC_ABI_MINOR(t->ir_min), TILEC_ABI_MAJOR(t->ir_max),
              TILEC_ABI_MINOR(t->ir_max));
    }
    /* and a 1.0-only host still gets a 1.0 table */
    h = make_host(TILEC_ABI_MAKE(1, 0), TILEC_ABI_MAKE(1, 0));
    negotiate_ok(e, &h, "host 1.0..1.0");
}

/* The kind each property key has (tilec/plugin.h). */
static uint32_t prop_kind(uint32_t key)
{
    return key == TILEC_PROP_ARCH || key == TILEC_PROP_MMA_KINDS || key == TILEC_PROP_DRIVER_VERSION
               ? TILEC_PVAL_STR : TILEC_PVAL_INT;
}

static void c_device_property(env_t *e)
{
    if (!is_1_1(e)) {
        return;
    }
    const tilec_plugin_t *t = e->t;
    uint32_t dev = e->run->device, n = 0;
    tilec_pvalue_t v;
    for (uint32_t k = 1; !e->failed && k <= TILEC_PROP_LAST; k++) {
        memset(&v, 0, sizeof v);
        v.struct_size = sizeof v;
        tilec_pstatus_t st = t->device_property(dev, k, &v);
        if (st == TILEC_PS_UNSUPPORTED) {
            expect_error(e, st, "device_property of a key the device does not report");
        } else if (st != TILEC_PS_OK) {
            failf(e, "device_property(key %u) returned status %d: %s", k, (int)st, t->last_error());
        } else if (v.kind != prop_kind(k)) {
            failf(e, "device_property(key %u) answered kind %u, the key's kind is %u", k, v.kind,
                  prop_kind(k));
        } else if (v.kind == TILEC_PVAL_STR && !memchr(v.sval, 0, sizeof v.sval)) {
            failf(e, "device_property(key %u): string not NUL-terminated", k);
        }
    }
    memset(&v, 0, sizeof v);
    v.struct_size = sizeof v;
    tilec_pstatus_t st = t->device_property(dev, 9999, &v);
    if (!e->failed && st != TILEC_PS_UNSUPPORTED) {
        failf(e, "device_property of the unknown key 9999 returned status %d, expected "
              "TILEC_PS_UNSUPPORTED (3)", (int)st);
    }
    expect_error(e, st, "device_property(unknown key 9999)");
    expect_invalid(e, t->device_property(dev, TILEC_PROP_ARCH, NULL), "device_property(value NULL)");
    expect_ok(e, t->device_count(&n), "device_count");
    expect_invalid(e, t->device_property(n, TILEC_PROP_ARCH, &v), "device_property(count, ...)");
    /* an older, smaller caller: nothing past its struct_size is written */
    unsigned char raw[sizeof v];
    memset(raw, 0xcd, sizeof raw);
    uint32_t sz = (uint32_t)(offsetof(tilec_pvalue_t, ival) + sizeof v.ival);
    memcpy(raw, &sz, sizeof sz);
    small_ok(e, t->device_property(dev, TILEC_PROP_COMPUTE_UNITS, (tilec_pvalue_t *)(void *)raw),
             "device_property with a smaller struct_size");
    for (size_t k = sz; !e->failed && k < sizeof raw; k++) {
        if (raw[k] != 0xcd) {
            failf(e, "device_property wrote byte %zu past the caller's struct_size %u", k, sz);
        }
    }
}

static void c_module_info(env_t *e)
{
    if (!is_1_1(e)) {
        return;
    }
    setup_t s;
    if (setup(e, &s) == 0) {
        const tilec_plugin_t *t = e->t;
        tilec_pmodule_info_t mi;
        memset(&mi, 0, sizeof mi);
        mi.struct_size = sizeof mi;
        expect_ok(e, t->module_info(s.mod, &mi), "module_info");
        if (!e->failed && mi.threads != -1 && mi.threads != 32) {
            failf(e, "module_info: threads %lld, the kernel has 32 (or -1: unknown)",
                  (long long)mi.threads);
        }
        int64_t *counts = &mi.registers;
        for (int k = 0; !e->failed && k < 7; k++) {
            if (counts[k] < -1) {
                failf(e, "module_info: count %d is %lld (must be -1 or more)", k, (long long)counts[k]);
            }
        }
        unsigned char raw[sizeof mi];
        memset(raw, 0xcd, sizeof raw);
        uint32_t sz = (uint32_t)offsetof(tilec_pmodule_info_t, shared_static_bytes);
        memcpy(raw, &sz, sizeof sz);
        small_ok(e, t->module_info(s.mod, (tilec_pmodule_info_t *)(void *)raw),
                 "module_info with a smaller struct_size");
        for (size_t k = sz; !e->failed && k < sizeof raw; k++) {
            if (raw[k] != 0xcd) {
                failf(e, "module_info wrote byte %zu past the caller's struct_size %u", k, sz);
            }
        }
        expect_error(e, t->module_info(NULL, &mi), "module_info(NULL module)");
        expect_error(e, t->module_info(s.mod, NULL), "module_info(info NULL)");
    }
    teardown(e, &s);
}

static void c_lower(env_t *e)
{
    if (!is_1_1(e)) {
        return;
    }
    const tilec_plugin_t *t = e->t;
    tilec_pdevice_t *dev = NULL;
    tilec_pmodule_t *mod = NULL;
    expect_ok(e, t->device_open(e->run->device, &dev), "device_open");
    if (e->failed) {
        return;
    }
    tilec_pstatus_t st = t->lower(dev, abi_ir, sizeof abi_ir - 1, NULL, &mod);
    if (st == TILEC_PS_UNSUPPORTED) {
        expect_error(e, st, "lower (not supported)");
        if (!e->failed && mod) {
            failf(e, "lower returned UNSUPPORTED but stored a module");
        }
    } else {
        const void *d = NULL;
        size_t n = 0;
        expect_ok(e, st, "lower");
        expect_ok(e, mod ? t->module_data(mod, TILEC_PDATA_LOWERED, &d, &n) : TILEC_PS_INTERNAL,
                  "module_data(LOWERED) of lower's module");
        if (!e->failed && (!d || n < 7 || memcmp(d, "tileir ", 7) != 0)) {
            failf(e, "lower's module gives no tile IR text");
        }
    }
    if (mod) {
        t->module_free(mod);
        mod = NULL;
    }
    expect_invalid(e, t->lower(dev, NULL, 10, NULL, &mod), "lower(NULL ir)");
    expect_invalid(e, t->lower(dev, abi_ir, sizeof abi_ir - 1, NULL, NULL), "lower(out NULL)");
    t->device_close(dev);
}

static void c_extension_unknown(env_t *e)
{
    if (!is_1_1(e)) {
        return;
    }
    if (e->t->extension("tilec_conformance_no_such_extension") != NULL) {
        failf(e, "extension() of an unknown name is not NULL");
    } else if (e->t->extension(NULL) != NULL) {
        failf(e, "extension(NULL) is not NULL");
    }
}

typedef struct abi_case { const char *name; void (*fn)(env_t *); } abi_case_t;

static const abi_case_t abi_cases[] = {
    {"negotiate_exact", c_negotiate_exact},
    {"negotiate_range", c_negotiate_range},
    {"negotiate_newer_host", c_negotiate_newer_host},
    {"negotiate_none", c_negotiate_none},
    {"negotiate_invalid_args", c_negotiate_invalid},
    {"host_struct_sizes", c_host_struct_sizes},
    {"table", c_table},
    {"device_info_struct_sizes", c_device_info_sizes},
    {"device_invalid_args", c_invalid_devices},
    {"device_reopen", c_device_reopen},
    {"compile_options_struct_sizes", c_compile_options_sizes},
    {"compile_invalid_args", c_invalid_compile},
    {"module_data", c_module_data},
    {"memory_invalid_args", c_invalid_memory},
    {"launch_struct_sizes", c_launch_struct_sizes},
    {"launch_invalid_args", c_invalid_launch},
    {"last_error", c_last_error},
    {"negotiate_1_1", c_negotiate_1_1},
    {"device_property", c_device_property},
    {"module_info", c_module_info},
    {"lower", c_lower},
    {"extension_unknown", c_extension_unknown},
};

int conform_abi_count(void)
{
    return (int)(sizeof abi_cases / sizeof abi_cases[0]);
}

const char *conform_abi_name(int i)
{
    return i >= 0 && i < conform_abi_count() ? abi_cases[i].name : "?";
}

conform_status_t conform_abi_run(const conform_run_t *run, int i, char *msg, size_t msglen)
{
    env_t e = {run, run->table, NULL, msg, msglen, 0};
    msg[0] = '\0';
    if (i < 0 || i >= conform_abi_count()) {
        snprintf(msg, msglen, "no ABI case %d", i);
        return CONFORM_FAIL;
    }
    e.query = (tilec_plugin_query_fn)dlsym(run->handle, TILEC_PLUGIN_QUERY_SYMBOL);
    if (!e.query) {
        snprintf(msg, msglen, "the plugin does not export %s", TILEC_PLUGIN_QUERY_SYMBOL);
        return CONFORM_FAIL;
    }
    abi_cases[i].fn(&e);
    return e.failed ? CONFORM_FAIL : CONFORM_PASS;
}

/* ---- the loader's broken-plugin family ------------------------------------------ */

typedef struct loader_case {
    const char *kind;
    tilec_plugin_state_t state;
    const char *w1, *w2;
} loader_case_t;

static const loader_case_t loader_cases[] = {
    {"notplugin", TILEC_PLUGIN_REJECTED, "not a loadable shared object", NULL},
    {"nosymbol", TILEC_PLUGIN_REJECTED, "does not export tilec_plugin_query", NULL},
    {"nulltable", TILEC_PLUGIN_REJECTED, "NULL table", NULL},
    {"noversion", TILEC_PLUGIN_REJECTED, "no common ABI version", NULL},
    {"smallstruct", TILEC_PLUGIN_REJECTED, "struct_size", "smaller than ABI 1.0 minimum"},
    {"badabi", TILEC_PLUGIN_REJECTED, "abi_version 2.0", NULL},
    {"badname", TILEC_PLUGIN_REJECTED, "invalid plugin name", NULL},
    {"nullentry", TILEC_PLUGIN_REJECTED, "'launch'", "NULL"},
    {"crashquery", TILEC_PLUGIN_REJECTED, "crashed while being queried", NULL},
    {"unavailable", TILEC_PLUGIN_UNAVAILABLE, "libwidget.so.1 not found", NULL},
    {"shadow", TILEC_PLUGIN_SHADOWED, "shadowed by", "libtilec-broken_good.so"},
    {"good", TILEC_PLUGIN_OK, NULL, NULL},
    {"v11", TILEC_PLUGIN_OK, NULL, NULL},
    {"small11", TILEC_PLUGIN_REJECTED, "struct_size", "smaller than ABI 1.1 minimum"},
    {"nullprop", TILEC_PLUGIN_REJECTED, "'device_property'", "NULL"},
    {"badir", TILEC_PLUGIN_REJECTED, "tile IR range", NULL},
};

int conform_loader_count(void)
{
    return (int)(sizeof loader_cases / sizeof loader_cases[0]);
}

const char *conform_loader_name(int i)
{
    return i >= 0 && i < conform_loader_count() ? loader_cases[i].kind : "?";
}

conform_status_t conform_loader_run(const conform_run_t *run, int i, char *msg, size_t msglen)
{
    const loader_case_t *c = &loader_cases[i];
    char file[128], path[4096], good[4096], env[8300];
    msg[0] = '\0';
    if (!run->broken_dir || i < 0 || i >= conform_loader_count()) {
        snprintf(msg, msglen, "no broken-plugin directory");
        return CONFORM_FAIL;
    }
    snprintf(file, sizeof file, "libtilec-broken_%s.so", c->kind);
    snprintf(path, sizeof path, "%s/%s", run->broken_dir, file);
    snprintf(good, sizeof good, "%s/libtilec-broken_good.so", run->broken_dir);
    if (!strcmp(c->kind, "shadow")) {
        snprintf(env, sizeof env, "%s:%s", good, path);
    } else {
        snprintf(env, sizeof env, "%s", path);
    }
    setenv("TILEC_PLUGIN_PATH", env, 1);
    setenv("TILEC_CACHE", "0", 1);
    tilec_plugin_desc_t *l = NULL;
    int n = 0;
    if (tilec_plugins_list(&l, &n) != TILEC_OK) {
        snprintf(msg, msglen, "tilec_plugins_list failed");
        return CONFORM_FAIL;
    }
    conform_status_t res = CONFORM_FAIL;
    const tilec_plugin_desc_t *d = NULL;
    int cpu_ok = 0;
    for (int k = 0; k < n; k++) {
        size_t pl = strlen(l[k].path), fl = strlen(file);
        if (pl >= fl && !strcmp(l[k].path + pl - fl, file)) {
            d = &l[k];
        }
        cpu_ok |= !strcmp(l[k].name, "cpu") && l[k].state == TILEC_PLUGIN_OK;
    }
    if (!d) {
        snprintf(msg, msglen, "%s is not listed by the loader", file);
    } else if (d->state != c->state) {
        snprintf(msg, msglen, "%s: state %s, expected %s (reason: %s)", file, tilec_plugin_state_name(d->state),
                 tilec_plugin_state_name(c->state), d->reason);
    } else if ((c->w1 && !strstr(d->reason, c->w1)) || (c->w2 && !strstr(d->reason, c->w2))) {
        snprintf(msg, msglen, "%s: reason '%s' lacks '%s'%s%s", file, d->reason, c->w1,
                 c->w2 ? " / " : "", c->w2 ? c->w2 : "");
    } else if (!cpu_ok) {
        snprintf(msg, msglen, "%s hid the cpu backend: it is not listed as ok", file);
    } else {
        snprintf(msg, msglen, "%s: %s%s%s", file, tilec_plugin_state_name(d->state), *d->reason ? ": " : "",
                 d->reason);
        res = CONFORM_PASS;
    }
    tilec_plugins_free(l, n);
    return res;
}
