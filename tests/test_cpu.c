/*
 * tests/test_cpu.c — the CPU backend through its plugin table.
 *
 * The table comes from tilec_cpu_embedded_query (the copy linked into
 * libtilec.a), exactly as the loader gets it.  Covered: ABI negotiation,
 * bad arguments to every entry point, struct_size handling, and kernels
 * built with the IR constructors, printed to IR text, compiled and run,
 * checked against plain C loops: a ragged elementwise add with a dynamic
 * shape, a tiled fp32 GEMM (copy/gemm/pipelined) in all four transpose
 * combinations with ragged sizes, reductions, cumsum, atomics under
 * contention, float16 storage; then the kernel cache (a hit never runs the
 * compiler) and compiler failures; launches from forked children (also
 * while another thread launches) and from two threads at once.
 * Criterion runs each test in its own
 * process, so environment changes (CC) stay local to a test.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/sdk.h"

tilec_pstatus_t tilec_cpu_embedded_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                         const tilec_plugin_t **table_out);

static const tilec_plugin_t *P;
static tilec_pdevice_t *D;

static tilec_plugin_host_t host_v1(const char *cache_dir)
{
    tilec_plugin_host_t h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    h.abi_min = TILEC_ABI_MAKE(1, 0);
    h.abi_max = TILEC_PLUGIN_ABI_VERSION;
    h.cache_dir = cache_dir;
    return h;
}

static void open_plugin(const char *cache_dir)
{
    tilec_plugin_host_t h = host_v1(cache_dir);
    uint32_t abi = 0;
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &P), TILEC_PS_OK);
    cr_assert_eq(abi, TILEC_PLUGIN_ABI_VERSION);
    cr_assert_eq(P->device_open(0, &D), TILEC_PS_OK, "%s", P->last_error());
}

static void setup(void) { open_plugin(NULL); }
static void teardown(void)
{
    if (P && D)
        P->device_close(D);
    D = NULL;
}

/* ---- negotiation ----------------------------------------------------------------- */

Test(cpu_abi, negotiation)
{
    const tilec_plugin_t *t = NULL;
    uint32_t abi = 0;
    tilec_plugin_host_t h = host_v1(NULL);
    /* a 1.0 host gets the 1.0 table */
    h.abi_max = TILEC_ABI_MAKE(1, 0);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t), TILEC_PS_OK);
    cr_assert_eq(abi, TILEC_ABI_MAKE(1, 0));
    cr_assert_eq(t->abi_version, TILEC_ABI_MAKE(1, 0));
    cr_assert_not_null(t);
    cr_assert_str_eq(t->name, "cpu");
    cr_assert_str_eq(t->vendor, "tilec");
    cr_assert_str_eq(t->version, "0.1.0");
    cr_assert(t->caps & TILEC_CAP_FLOAT16);
    cr_assert(t->caps & TILEC_CAP_DYNAMIC_SHAPE);
    cr_assert_not(t->caps & TILEC_CAP_DEVICE_TIMER);
    cr_assert_not(t->caps & TILEC_CAP_GPU);
    cr_assert_geq(t->struct_size, TILEC_PLUGIN_TABLE_SIZE_1_0);

    /* a range that includes 1.0 from either side */
    h.abi_min = TILEC_ABI_MAKE(0, 5);
    h.abi_max = TILEC_ABI_MAKE(1, 0);
    abi = 0;
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t), TILEC_PS_OK);
    cr_assert_eq(abi, TILEC_ABI_MAKE(1, 0));
    /* a wider range gets the newest both speak, 1.1, with its full table */
    h.abi_max = TILEC_ABI_MAKE(1, 7);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t), TILEC_PS_OK);
    cr_assert_eq(abi, TILEC_ABI_MAKE(1, 1));
    cr_assert_eq(t->abi_version, TILEC_ABI_MAKE(1, 1));
    cr_assert_geq(t->struct_size, TILEC_PLUGIN_TABLE_SIZE_1_1);
    cr_assert_not_null(t->device_property);

    /* ranges without 1.0 */
    const tilec_plugin_t *t2 = NULL;
    abi = 12345;
    h.abi_min = TILEC_ABI_MAKE(2, 0);
    h.abi_max = TILEC_ABI_MAKE(3, 0);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t2), TILEC_PS_UNSUPPORTED);
    cr_assert_eq(abi, 12345);
    cr_assert_null(t2);
    cr_assert(strlen(t->last_error()) > 0);
    h.abi_min = TILEC_ABI_MAKE(1, 2);
    h.abi_max = TILEC_ABI_MAKE(1, 9);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t2), TILEC_PS_UNSUPPORTED);
    h.abi_min = TILEC_ABI_MAKE(1, 0);
    h.abi_max = TILEC_ABI_MAKE(0, 9); /* empty range */
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t2), TILEC_PS_UNSUPPORTED);
    cr_assert_null(t2);

    /* bad arguments */
    h = host_v1(NULL);
    cr_assert_eq(tilec_cpu_embedded_query(NULL, &abi, &t2), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(tilec_cpu_embedded_query(&h, NULL, &t2), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, NULL), TILEC_PS_INVALID_ARGUMENT);
    h.struct_size = 8;
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t2), TILEC_PS_INVALID_ARGUMENT);
    /* an old, smaller host struct (just the version fields) is accepted */
    h.struct_size = (uint32_t)offsetof(tilec_plugin_host_t, log);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t2), TILEC_PS_OK);
}

/* The stand-alone plugin next to the test binary (build/libtilec-cpu.so)
 * exports only tilec_plugin_query and negotiates the same way. */
Test(cpu_abi, shared_object)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 64);
    cr_assert_gt(n, 0);
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    cr_assert_not_null(slash);
    *slash = '\0';
    slash = strrchr(exe, '/');
    cr_assert_not_null(slash);
    strcpy(slash, "/libtilec-cpu.so");
    if (access(exe, R_OK) != 0)
        cr_skip_test("%s not built", exe);
    void *dl = dlopen(exe, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(dl, "%s", dlerror());
    tilec_plugin_query_fn q = (tilec_plugin_query_fn)dlsym(dl, TILEC_PLUGIN_QUERY_SYMBOL);
    cr_assert_not_null(q);
    cr_assert_null(dlsym(dl, "tilec_cpu_embedded_query"));
    cr_assert_null(dlsym(dl, "cpu_codegen"));
    cr_assert_null(dlsym(dl, "tilec_sha256"));
    tilec_plugin_host_t h = host_v1(NULL);
    uint32_t abi = 0;
    const tilec_plugin_t *t = NULL;
    cr_assert_eq(q(&h, &abi, &t), TILEC_PS_OK);
    cr_assert_str_eq(t->name, "cpu");
    h.abi_min = h.abi_max = TILEC_ABI_MAKE(2, 0);
    cr_assert_eq(q(&h, &abi, &t), TILEC_PS_UNSUPPORTED);
    dlclose(dl);
}

/* ---- devices, struct_size, bad arguments ------------------------------------------- */

Test(cpu_dev, info_and_struct_size, .init = setup, .fini = teardown)
{
    uint32_t n = 0;
    cr_assert_eq(P->device_count(&n), TILEC_PS_OK);
    cr_assert_eq(n, 1);
    tilec_pdevice_info_t info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_OK);
    cr_assert(strstr(info.name, "threads)") != NULL, "%s", info.name);
    cr_assert_eq(info.compute_units, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
    cr_assert(info.caps & TILEC_CAP_FLOAT64);
    cr_assert_eq(info.struct_size, sizeof info);

    /* an older caller whose struct ends after platform: caps and later untouched */
    unsigned char raw[sizeof(tilec_pdevice_info_t)];
    memset(raw, 0xAB, sizeof raw);
    tilec_pdevice_info_t *small = (tilec_pdevice_info_t *)raw;
    uint32_t sz = (uint32_t)offsetof(tilec_pdevice_info_t, caps);
    small->struct_size = sz;
    cr_assert_eq(P->device_info(0, small), TILEC_PS_OK);
    cr_assert_eq(small->struct_size, sz);
    cr_assert_str_eq(small->name, info.name);
    for (size_t i = sz; i < sizeof raw; i++)
        cr_assert_eq(raw[i], 0xAB, "byte %zu past struct_size was written", i);

    /* a struct cut inside name gets only its prefix */
    memset(raw, 0xCD, sizeof raw);
    small->struct_size = (uint32_t)offsetof(tilec_pdevice_info_t, name) + 4;
    cr_assert_eq(P->device_info(0, small), TILEC_PS_OK);
    cr_assert_eq(memcmp(small->name, info.name, 4), 0);
    for (size_t i = offsetof(tilec_pdevice_info_t, name) + 4; i < sizeof raw; i++)
        cr_assert_eq(raw[i], 0xCD);

    /* too small to hold even the header */
    small->struct_size = 4;
    cr_assert_eq(P->device_info(0, small), TILEC_PS_INVALID_ARGUMENT);
}

Test(cpu_dev, bad_arguments, .init = setup, .fini = teardown)
{
    tilec_pdevice_info_t info = {.struct_size = sizeof info};
    tilec_pdevice_t *d2 = NULL;
    cr_assert_eq(P->device_count(NULL), TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strlen(P->last_error()) > 0);
    cr_assert_eq(P->device_info(1, &info), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->device_info(0, NULL), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->device_open(1, &d2), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->device_open(0, NULL), TILEC_PS_INVALID_ARGUMENT);
    P->device_close(NULL); /* harmless */

    tilec_pmodule_t *mod = NULL;
    const char *ir = "tileir 1.0\n";
    cr_assert_eq(P->compile(NULL, ir, strlen(ir), NULL, &mod), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->compile(D, NULL, 5, NULL, &mod), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->compile(D, ir, 0, NULL, &mod), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->compile(D, ir, strlen(ir), NULL, NULL), TILEC_PS_INVALID_ARGUMENT);
    tilec_pcompile_options_t o = {.struct_size = 4, .opt_level = 3};
    cr_assert_eq(P->compile(D, ir, strlen(ir), &o, &mod), TILEC_PS_INVALID_ARGUMENT);
    o.struct_size = sizeof o;
    o.opt_level = 9;
    cr_assert_eq(P->compile(D, ir, strlen(ir), &o, &mod), TILEC_PS_INVALID_ARGUMENT);
    /* not IR at all */
    const char *junk = "this is not tile IR";
    cr_assert_eq(P->compile(D, junk, strlen(junk), NULL, &mod), TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strstr(P->last_error(), "IR") != NULL, "%s", P->last_error());
    cr_assert_null(mod);

    const void *data;
    size_t size;
    cr_assert_eq(P->module_data(NULL, TILEC_PDATA_SOURCE, &data, &size), TILEC_PS_INVALID_ARGUMENT);
    P->module_free(NULL);

    tilec_pmem_t *m = NULL;
    cr_assert_eq(P->mem_alloc(NULL, TILEC_PMEM_DEVICE, 16, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_alloc(D, (tilec_pmem_scope_t)7, 16, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_alloc(D, TILEC_PMEM_DEVICE, 16, NULL), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_alloc(D, TILEC_PMEM_DEVICE, 100, &m), TILEC_PS_OK);
    cr_assert_eq((uintptr_t)m % 8, 0);
    char buf[128] = {0};
    cr_assert_eq(P->mem_write(D, m, 0, buf, 100), TILEC_PS_OK);
    cr_assert_eq(P->mem_write(D, m, 1, buf, 100), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_write(D, m, 101, buf, 0), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_write(D, m, SIZE_MAX, buf, 2), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_write(D, m, 0, NULL, 4), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_write(NULL, m, 0, buf, 4), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_write(D, NULL, 0, buf, 4), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_read(D, m, 50, buf, 51), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_read(D, m, 0, NULL, 4), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_read(D, NULL, 0, buf, 4), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_read(NULL, m, 0, buf, 4), TILEC_PS_INVALID_ARGUMENT);
    /* round trip at an offset */
    const char msg[] = "hello, tiles";
    cr_assert_eq(P->mem_write(D, m, 80, msg, sizeof msg), TILEC_PS_OK);
    cr_assert_eq(P->mem_read(D, m, 80, buf, sizeof msg), TILEC_PS_OK);
    cr_assert_str_eq(buf, msg);
    P->mem_free(D, m);
    P->mem_free(D, NULL);
    tilec_pmem_t *z = NULL;
    cr_assert_eq(P->mem_alloc(D, TILEC_PMEM_HOST, 0, &z), TILEC_PS_OK);
    P->mem_free(D, z);

    tilec_plaunch_t la = {.struct_size = sizeof la};
    cr_assert_eq(P->launch(NULL, NULL, &la), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->launch(D, NULL, &la), TILEC_PS_INVALID_ARGUMENT);
}

/* Without a C compiler the device stays: kernels loaded from a bundle
 * (tilec_module_load) run without one, and compile says why it cannot
 * (cpu_cache::hit_skips_compiler checks that message). */
Test(cpu_dev, available_without_compiler)
{
    setenv("CC", "/nonexistent/tilec-test-cc", 1);
    tilec_plugin_host_t h = host_v1(NULL);
    uint32_t abi;
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &P), TILEC_PS_OK);
    uint32_t n = 7;
    cr_assert_eq(P->device_count(&n), TILEC_PS_OK);
    cr_assert_eq(n, 1);
    tilec_pdevice_info_t info = {.struct_size = sizeof info};
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_OK);
    cr_assert(strstr(info.platform, "no C compiler") != NULL, "%s", info.platform);
    setenv("CC", "cc", 1);
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_OK);
    cr_assert(strstr(info.platform, "C compiler: ") == info.platform, "%s", info.platform);
}

/* ---- IR construction helpers ---------------------------------------------------------- */

typedef struct kb {
    tilec_arena_t a;
    tilec_ir_module_t *m;
    tilec_ir_kernel_t *k;
    tilec_ir_stmt_t **tail[16]; /* append points: [0] kernel body, deeper: open loops */
    int depth;
} kb_t;

static void kb_init(kb_t *b, const char *name)
{
    memset(b, 0, sizeof *b);
    tilec_arena_init(&b->a);
    b->m = tilec_ir_module_new(&b->a);
    b->k = tilec_ir_kernel_new(&b->a, name);
    b->m->kernel = b->k;
    b->tail[0] = &b->k->body;
}

static void kb_free(kb_t *b) { tilec_arena_destroy(&b->a); }

static tilec_ir_expr_t *I(kb_t *b, int64_t v) { return tilec_ir_int(&b->a, v, TILEC_INT32); }
static tilec_ir_expr_t *F(kb_t *b, double v, tilec_dtype_t t) { return tilec_ir_float(&b->a, v, t); }
static tilec_ir_expr_t *V(kb_t *b, tilec_ir_var_t *v) { return tilec_ir_varref(&b->a, v); }
static tilec_ir_expr_t *BIN(kb_t *b, tilec_binop_t op, tilec_ir_expr_t *x, tilec_ir_expr_t *y)
{
    return tilec_ir_binary(&b->a, op, x, y);
}
static tilec_ir_expr_t *ADD(kb_t *b, tilec_ir_expr_t *x, tilec_ir_expr_t *y) { return BIN(b, TILEC_BIN_ADD, x, y); }
static tilec_ir_expr_t *MUL(kb_t *b, tilec_ir_expr_t *x, tilec_ir_expr_t *y) { return BIN(b, TILEC_BIN_MUL, x, y); }
/* ceildiv(x, c) = (x + c - 1) // c */
static tilec_ir_expr_t *CEILDIV(kb_t *b, tilec_ir_expr_t *x, int64_t c)
{
    return BIN(b, TILEC_BIN_FLOORDIV, ADD(b, x, I(b, c - 1)), I(b, c));
}
static tilec_ir_expr_t *LOAD(kb_t *b, tilec_ir_buffer_t *buf, tilec_ir_expr_t *i0, tilec_ir_expr_t *i1)
{
    tilec_ir_expr_t *idx[2] = {i0, i1};
    return tilec_ir_load(&b->a, buf, idx);
}

static tilec_ir_buffer_t *BUF(kb_t *b, const char *name, tilec_scope_t s, tilec_dtype_t t, int nd,
                              tilec_ir_expr_t *d0, tilec_ir_expr_t *d1)
{
    tilec_ir_expr_t *shape[2] = {d0, d1};
    tilec_ir_buffer_t *r = tilec_ir_buffer_add(&b->a, b->k, name, s, t, nd, shape);
    if (s == TILEC_SCOPE_GLOBAL)
        b->k->nparams++;
    return r;
}

static void grid(kb_t *b, int n, tilec_ir_expr_t *g0, tilec_ir_expr_t *g1)
{
    static const char *names[3] = {"bx", "by", "bz"};
    tilec_ir_expr_t *g[2] = {g0, g1};
    b->k->ngrid = n;
    for (int d = 0; d < n; d++) {
        b->k->grid[d] = g[d];
        b->k->block[d] = tilec_ir_var_add(&b->a, b->k, names[d], TILEC_INT32, TILEC_VAR_BLOCK);
    }
    b->k->threads[0] = 128;
}

static tilec_ir_stmt_t *emit(kb_t *b, tilec_stmt_kind_t kind)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&b->a, kind);
    *b->tail[b->depth] = s;
    b->tail[b->depth] = &s->next;
    return s;
}

/* opens a loop; statements go into its body until end_loop */
static tilec_ir_var_t *loop(kb_t *b, const char *name, tilec_loop_kind_t kind, tilec_ir_expr_t *ext)
{
    tilec_ir_var_t *v = tilec_ir_var_add(&b->a, b->k, name, TILEC_INT32, TILEC_VAR_LOOP);
    tilec_ir_stmt_t *s = emit(b, TILEC_ST_FOR);
    s->u.loop.var = v;
    s->u.loop.extent = ext;
    s->u.loop.kind = kind;
    s->u.loop.num_stages = kind == TILEC_LOOP_PIPELINED ? 3 : 0;
    b->tail[++b->depth] = &s->u.loop.body;
    return v;
}
static void end(kb_t *b) { b->depth--; }

static void region(kb_t *b, tilec_ir_region_t *r, tilec_ir_buffer_t *buf, tilec_ir_expr_t *b0,
                   tilec_ir_expr_t *b1, int64_t e0, int64_t e1)
{
    r->buf = buf;
    r->base = tilec_arena_alloc(&b->a, 2 * sizeof(tilec_ir_expr_t *));
    r->extent = tilec_arena_alloc(&b->a, 2 * sizeof(int64_t));
    r->base[0] = b0;
    r->base[1] = b1;
    r->extent[0] = e0;
    r->extent[1] = e1;
}

static void store(kb_t *b, tilec_ir_buffer_t *buf, tilec_ir_expr_t *i0, tilec_ir_expr_t *i1,
                  tilec_ir_expr_t *v)
{
    tilec_ir_stmt_t *s = emit(b, TILEC_ST_STORE);
    s->u.store.buf = buf;
    s->u.store.idx = tilec_arena_alloc(&b->a, 2 * sizeof(tilec_ir_expr_t *));
    s->u.store.idx[0] = i0;
    s->u.store.idx[1] = i1;
    s->u.store.value = v;
}

/* compile the module through the IR text */
static tilec_pstatus_t compile_kb(kb_t *b, tilec_pmodule_t **mod)
{
    char *text = tilec_ir_print(b->m);
    cr_assert_not_null(text);
    char err[256];
    tilec_arena_t a2;
    tilec_arena_init(&a2);
    tilec_ir_module_t *m2 = NULL;
    cr_assert_eq(tilec_ir_read(&a2, text, strlen(text), &m2, err, sizeof err), 0, "%s\n%s", err, text);
    tilec_arena_destroy(&a2);
    tilec_pstatus_t st = P->compile(D, text, strlen(text), NULL, mod);
    free(text);
    return st;
}

static tilec_pmem_t *mem_from(const void *data, size_t n)
{
    tilec_pmem_t *m = NULL;
    cr_assert_eq(P->mem_alloc(D, TILEC_PMEM_DEVICE, n, &m), TILEC_PS_OK);
    if (n)
        cr_assert_eq(P->mem_write(D, m, 0, data, n), TILEC_PS_OK);
    return m;
}

static void run(tilec_pmodule_t *mod, tilec_pmem_t **args, uint32_t nargs, const int64_t *syms,
                uint32_t nsyms)
{
    double ms = -1;
    tilec_plaunch_t la = {.struct_size = sizeof la, .nargs = nargs, .args = args,
                          .nsyms = nsyms, .syms = syms, .timed = 1, .elapsed_ms = &ms};
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_OK, "%s", P->last_error());
    cr_assert_geq(ms, 0.0);
}

static float frand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* ---- kernels ----------------------------------------------------------------------- */

/* C[i] = A[i] + B[i] for a dynamic n, through shared tiles of 128 with a
 * ragged last tile. */
static void build_add(kb_t *b)
{
    kb_init(b, "vadd");
    tilec_ir_var_t *n = tilec_ir_var_add(&b->a, b->k, "n", TILEC_INT32, TILEC_VAR_SYM);
    tilec_ir_buffer_t *A = BUF(b, "A", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, V(b, n), NULL);
    tilec_ir_buffer_t *B = BUF(b, "B", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, V(b, n), NULL);
    tilec_ir_buffer_t *C = BUF(b, "C", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, V(b, n), NULL);
    tilec_ir_buffer_t *As = BUF(b, "A_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 1, I(b, 128), NULL);
    tilec_ir_buffer_t *Bs = BUF(b, "B_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 1, I(b, 128), NULL);
    tilec_ir_buffer_t *Cf = BUF(b, "C_f", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, I(b, 128), NULL);
    grid(b, 1, CEILDIV(b, V(b, n), 128), NULL);
    tilec_ir_var_t *bx = b->k->block[0];
    tilec_ir_stmt_t *s = emit(b, TILEC_ST_COPY);
    region(b, &s->u.copy.src, A, MUL(b, V(b, bx), I(b, 128)), NULL, 128, 1);
    region(b, &s->u.copy.dst, As, I(b, 0), NULL, 128, 1);
    s = emit(b, TILEC_ST_COPY);
    region(b, &s->u.copy.src, B, MUL(b, V(b, bx), I(b, 128)), NULL, 128, 1);
    region(b, &s->u.copy.dst, Bs, I(b, 0), NULL, 128, 1);
    tilec_ir_var_t *i = loop(b, "i", TILEC_LOOP_PARALLEL, I(b, 128));
    store(b, Cf, V(b, i), NULL, ADD(b, LOAD(b, As, V(b, i), NULL), LOAD(b, Bs, V(b, i), NULL)));
    end(b);
    s = emit(b, TILEC_ST_COPY);
    region(b, &s->u.copy.src, Cf, I(b, 0), NULL, 128, 1);
    region(b, &s->u.copy.dst, C, MUL(b, V(b, bx), I(b, 128)), NULL, 128, 1);
}

Test(cpu_kernel, elementwise_add_ragged, .init = setup, .fini = teardown)
{
    kb_t b;
    build_add(&b);
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(&b);
    const void *src;
    size_t len;
    cr_assert_eq(P->module_data(mod, TILEC_PDATA_SOURCE, &src, &len), TILEC_PS_OK);
    cr_assert(len > 0 && strstr(src, "tilec_block") != NULL);
    cr_assert_eq(P->module_data(mod, TILEC_PDATA_BINARY, &src, &len), TILEC_PS_OK);
    cr_assert(len > 4 && memcmp(src, "\177ELF", 4) == 0);
    cr_assert_eq(P->module_data(mod, (tilec_pdata_kind_t)5, &src, &len), TILEC_PS_INVALID_ARGUMENT);

    int sizes[] = {1000, 128, 1, 0, 257};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        int n = sizes[t];
        /* one sentinel float past the end of C checks that nothing spills */
        float *a = malloc(sizeof(float) * (size_t)(n + 1)), *bb = malloc(sizeof(float) * (size_t)(n + 1));
        float *c = malloc(sizeof(float) * (size_t)(n + 1));
        unsigned seed = 1;
        for (int i = 0; i < n; i++) {
            a[i] = frand(&seed);
            bb[i] = frand(&seed);
        }
        c[n] = 42.0f;
        tilec_pmem_t *args[3] = {mem_from(a, sizeof(float) * (size_t)n),
                                 mem_from(bb, sizeof(float) * (size_t)n),
                                 mem_from(c, sizeof(float) * (size_t)(n + 1))};
        int64_t syms[1] = {n};
        run(mod, args, 3, syms, 1);
        cr_assert_eq(P->mem_read(D, args[2], 0, c, sizeof(float) * (size_t)(n + 1)), TILEC_PS_OK);
        for (int i = 0; i < n; i++)
            cr_assert_eq(c[i], a[i] + bb[i], "n=%d i=%d: %g != %g", n, i, c[i], a[i] + bb[i]);
        cr_assert_eq(c[n], 42.0f);
        for (int i = 0; i < 3; i++)
            P->mem_free(D, args[i]);
        free(a);
        free(bb);
        free(c);
    }

    /* launch errors: wrong counts, a buffer too small for the symbol value */
    tilec_pmem_t *m1 = mem_from(NULL, 0), *args[3] = {m1, m1, m1};
    int64_t syms[1] = {10};
    tilec_plaunch_t la = {.struct_size = sizeof la, .nargs = 2, .args = args, .nsyms = 1, .syms = syms};
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_INVALID_ARGUMENT);
    la.nargs = 3;
    la.nsyms = 0;
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_INVALID_ARGUMENT);
    la.nsyms = 1;
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strstr(P->last_error(), "bytes") != NULL, "%s", P->last_error());
    syms[0] = -5;
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_INVALID_ARGUMENT);
    syms[0] = 0; /* zero elements: empty grid, fine */
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_OK, "%s", P->last_error());
    la.struct_size = 8;
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_INVALID_ARGUMENT);
    la.struct_size = sizeof la;
    la.args = NULL;
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_INVALID_ARGUMENT);
    la.args = args;
    args[1] = NULL;
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_INVALID_ARGUMENT);
    la.timed = 1;
    args[1] = m1;
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_INVALID_ARGUMENT); /* no elapsed_ms */
    P->mem_free(D, m1);
    P->module_free(mod);
}

/* Tiled GEMM: C[M,N] = op(A) @ op(B), tiles 32x32x16, copy/gemm/pipelined. */
enum { GM = 100, GN = 72, GK = 50 };
/* tile sizes; the odd ones reach every path of the GEMM micro-kernel
 * (two-vector and one-vector panels, leftover rows and columns) */
static int TBM = 32, TBN = 32, TBK = 16;

static void build_gemm(kb_t *b, int ta, int tb)
{
    kb_init(b, "gemm");
    tilec_ir_buffer_t *A = ta ? BUF(b, "A", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(b, GK), I(b, GM))
                              : BUF(b, "A", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(b, GM), I(b, GK));
    tilec_ir_buffer_t *B = tb ? BUF(b, "B", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(b, GN), I(b, GK))
                              : BUF(b, "B", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(b, GK), I(b, GN));
    tilec_ir_buffer_t *C = BUF(b, "C", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(b, GM), I(b, GN));
    tilec_ir_buffer_t *As = ta ? BUF(b, "A_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, I(b, TBK), I(b, TBM))
                               : BUF(b, "A_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, I(b, TBM), I(b, TBK));
    tilec_ir_buffer_t *Bs = tb ? BUF(b, "B_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, I(b, TBN), I(b, TBK))
                               : BUF(b, "B_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, I(b, TBK), I(b, TBN));
    tilec_ir_buffer_t *Cl = BUF(b, "C_l", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, I(b, TBM), I(b, TBN));
    grid(b, 2, I(b, (GN + TBN - 1) / TBN), I(b, (GM + TBM - 1) / TBM));
    tilec_ir_var_t *bx = b->k->block[0], *by = b->k->block[1];
    tilec_ir_stmt_t *s = emit(b, TILEC_ST_FILL);
    region(b, &s->u.fill.dst, Cl, I(b, 0), I(b, 0), TBM, TBN);
    s->u.fill.value = F(b, 0.0, TILEC_FLOAT32);
    tilec_ir_var_t *k = loop(b, "k", TILEC_LOOP_PIPELINED, I(b, (GK + TBK - 1) / TBK));
    tilec_ir_expr_t *k0 = MUL(b, V(b, k), I(b, TBK)), *m0 = MUL(b, V(b, by), I(b, TBM)),
                    *n0 = MUL(b, V(b, bx), I(b, TBN));
    s = emit(b, TILEC_ST_COPY);
    if (ta)
        region(b, &s->u.copy.src, A, k0, m0, TBK, TBM);
    else
        region(b, &s->u.copy.src, A, m0, k0, TBM, TBK);
    region(b, &s->u.copy.dst, As, I(b, 0), I(b, 0), ta ? TBK : TBM, ta ? TBM : TBK);
    s = emit(b, TILEC_ST_COPY);
    if (tb)
        region(b, &s->u.copy.src, B, n0, k0, TBN, TBK);
    else
        region(b, &s->u.copy.src, B, k0, n0, TBK, TBN);
    region(b, &s->u.copy.dst, Bs, I(b, 0), I(b, 0), tb ? TBN : TBK, tb ? TBK : TBN);
    s = emit(b, TILEC_ST_GEMM);
    s->u.gemm.a = As;
    s->u.gemm.b = Bs;
    s->u.gemm.c = Cl;
    s->u.gemm.trans_a = ta;
    s->u.gemm.trans_b = tb;
    end(b);
    s = emit(b, TILEC_ST_COPY);
    region(b, &s->u.copy.src, Cl, I(b, 0), I(b, 0), TBM, TBN);
    region(b, &s->u.copy.dst, C, m0, n0, TBM, TBN);
}

static void check_gemm(int ta, int tb)
{
    kb_t b;
    build_gemm(&b, ta, tb);
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(&b);
    static float a[GM * GK], bm[GK * GN], c[GM * GN];
    unsigned seed = 7;
    for (int i = 0; i < GM * GK; i++)
        a[i] = frand(&seed);
    for (int i = 0; i < GK * GN; i++)
        bm[i] = frand(&seed);
    for (int i = 0; i < GM * GN; i++)
        c[i] = 99.0f; /* overwritten everywhere */
    tilec_pmem_t *args[3] = {mem_from(a, sizeof a), mem_from(bm, sizeof bm), mem_from(c, sizeof c)};
    run(mod, args, 3, NULL, 0);
    cr_assert_eq(P->mem_read(D, args[2], 0, c, sizeof c), TILEC_PS_OK);
    double num = 0, den = 0;
    for (int i = 0; i < GM; i++)
        for (int j = 0; j < GN; j++) {
            double ref = 0;
            for (int k = 0; k < GK; k++) {
                double av = ta ? a[k * GM + i] : a[i * GK + k];
                double bv = tb ? bm[j * GK + k] : bm[k * GN + j];
                ref += av * bv;
            }
            double d = c[i * GN + j] - ref;
            num += d * d;
            den += ref * ref;
            cr_assert(fabs(d) < 1e-4, "ta=%d tb=%d C[%d,%d] = %g, expected %g", ta, tb, i, j,
                      c[i * GN + j], ref);
        }
    cr_assert(sqrt(num / den) < 1e-5);
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
}

Test(cpu_kernel, gemm_nn, .init = setup, .fini = teardown) { check_gemm(0, 0); }
Test(cpu_kernel, gemm_tn, .init = setup, .fini = teardown) { check_gemm(1, 0); }
Test(cpu_kernel, gemm_nt, .init = setup, .fini = teardown) { check_gemm(0, 1); }
Test(cpu_kernel, gemm_tt, .init = setup, .fini = teardown) { check_gemm(1, 1); }
Test(cpu_kernel, gemm_odd_tiles, .init = setup, .fini = teardown)
{
    TBM = 7;
    TBN = 60;
    TBK = 5;
    check_gemm(0, 0);
    check_gemm(1, 1);
}

/* ---- GEMM over every operand dtype, transposition and ragged shape ---------------------- */

/* Storage of value v (exactly representable) as dtype t at element i. */
static void put_val(tilec_dtype_t t, void *p, size_t i, double v)
{
    switch (t) {
    case TILEC_FLOAT16: ((uint16_t *)p)[i] = tilec_f64_to_f16(v); break;
    case TILEC_BFLOAT16: ((uint16_t *)p)[i] = tilec_f64_to_bf16(v); break;
    case TILEC_FLOAT32: ((float *)p)[i] = (float)v; break;
    case TILEC_FLOAT64: ((double *)p)[i] = v; break;
    case TILEC_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case TILEC_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case TILEC_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case TILEC_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: cr_assert_fail("dtype %d", (int)t);
    }
}

static double get_val(tilec_dtype_t t, const void *p, size_t i)
{
    switch (t) {
    case TILEC_FLOAT16: return tilec_f16_to_f32(((const uint16_t *)p)[i]);
    case TILEC_BFLOAT16: return tilec_bf16_to_f32(((const uint16_t *)p)[i]);
    case TILEC_FLOAT32: return ((const float *)p)[i];
    case TILEC_FLOAT64: return ((const double *)p)[i];
    case TILEC_INT8: return ((const int8_t *)p)[i];
    case TILEC_UINT8: return ((const uint8_t *)p)[i];
    case TILEC_INT32: return ((const int32_t *)p)[i];
    case TILEC_INT64: return (double)((const int64_t *)p)[i];
    default: cr_assert_fail("dtype %d", (int)t); return 0;
    }
}

static size_t dt_size(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: case TILEC_UINT8: return 1;
    case TILEC_FLOAT16: case TILEC_BFLOAT16: return 2;
    case TILEC_FLOAT32: case TILEC_INT32: return 4;
    default: return 8;
    }
}

typedef struct gemm_case {
    tilec_dtype_t ad, bd, cd;      /* A, B, accumulator/C */
    int m, n, k, tm, tn, tk;       /* problem and tile sizes */
    const char *arch;              /* NULL: native */
    int group;                     /* 1: must run in block groups (cpu_group.c) */
} gemm_case_t;

/* C = op(A) @ op(B) tiled like build_gemm, in the case's dtypes. */
static void build_gemm_case(kb_t *b, const gemm_case_t *g, int ta, int tb)
{
    kb_init(b, "gemm_dt");
    tilec_ir_buffer_t *A = ta ? BUF(b, "A", TILEC_SCOPE_GLOBAL, g->ad, 2, I(b, g->k), I(b, g->m))
                              : BUF(b, "A", TILEC_SCOPE_GLOBAL, g->ad, 2, I(b, g->m), I(b, g->k));
    tilec_ir_buffer_t *B = tb ? BUF(b, "B", TILEC_SCOPE_GLOBAL, g->bd, 2, I(b, g->n), I(b, g->k))
                              : BUF(b, "B", TILEC_SCOPE_GLOBAL, g->bd, 2, I(b, g->k), I(b, g->n));
    tilec_ir_buffer_t *C = BUF(b, "C", TILEC_SCOPE_GLOBAL, g->cd, 2, I(b, g->m), I(b, g->n));
    tilec_ir_buffer_t *As = ta ? BUF(b, "A_s", TILEC_SCOPE_SHARED, g->ad, 2, I(b, g->tk), I(b, g->tm))
                               : BUF(b, "A_s", TILEC_SCOPE_SHARED, g->ad, 2, I(b, g->tm), I(b, g->tk));
    tilec_ir_buffer_t *Bs = tb ? BUF(b, "B_s", TILEC_SCOPE_SHARED, g->bd, 2, I(b, g->tn), I(b, g->tk))
                               : BUF(b, "B_s", TILEC_SCOPE_SHARED, g->bd, 2, I(b, g->tk), I(b, g->tn));
    tilec_ir_buffer_t *Cl = BUF(b, "C_l", TILEC_SCOPE_FRAGMENT, g->cd, 2, I(b, g->tm), I(b, g->tn));
    grid(b, 2, I(b, (g->n + g->tn - 1) / g->tn), I(b, (g->m + g->tm - 1) / g->tm));
    tilec_ir_var_t *bx = b->k->block[0], *by = b->k->block[1];
    tilec_ir_stmt_t *s = emit(b, TILEC_ST_FILL);
    region(b, &s->u.fill.dst, Cl, I(b, 0), I(b, 0), g->tm, g->tn);
    s->u.fill.value = tilec_dtype_is_float(g->cd) ? F(b, 0.0, g->cd) : tilec_ir_int(&b->a, 0, g->cd);
    tilec_ir_var_t *k = loop(b, "k", TILEC_LOOP_PIPELINED, I(b, (g->k + g->tk - 1) / g->tk));
    tilec_ir_expr_t *k0 = MUL(b, V(b, k), I(b, g->tk)), *m0 = MUL(b, V(b, by), I(b, g->tm)),
                    *n0 = MUL(b, V(b, bx), I(b, g->tn));
    s = emit(b, TILEC_ST_COPY);
    if (ta)
        region(b, &s->u.copy.src, A, k0, m0, g->tk, g->tm);
    else
        region(b, &s->u.copy.src, A, m0, k0, g->tm, g->tk);
    region(b, &s->u.copy.dst, As, I(b, 0), I(b, 0), ta ? g->tk : g->tm, ta ? g->tm : g->tk);
    s = emit(b, TILEC_ST_COPY);
    if (tb)
        region(b, &s->u.copy.src, B, n0, k0, g->tn, g->tk);
    else
        region(b, &s->u.copy.src, B, k0, n0, g->tk, g->tn);
    region(b, &s->u.copy.dst, Bs, I(b, 0), I(b, 0), tb ? g->tn : g->tk, tb ? g->tk : g->tn);
    s = emit(b, TILEC_ST_GEMM);
    s->u.gemm.a = As;
    s->u.gemm.b = Bs;
    s->u.gemm.c = Cl;
    s->u.gemm.trans_a = ta;
    s->u.gemm.trans_b = tb;
    end(b);
    s = emit(b, TILEC_ST_COPY);
    region(b, &s->u.copy.src, Cl, I(b, 0), I(b, 0), g->tm, g->tn);
    region(b, &s->u.copy.dst, C, m0, n0, g->tm, g->tn);
}

/* Runs the case in all four transpositions.  Inputs are small integers
 * (-2..2, and 0..4 for unsigned), so every product and partial sum is
 * exact in every accumulator dtype used and the result must equal the
 * reference exactly.  extra: compiler flags (NULL: none). */
static void check_gemm_case_flags(const gemm_case_t *g, const char *extra)
{
    size_t na = (size_t)g->m * g->k, nb = (size_t)g->k * g->n, nc = (size_t)g->m * g->n;
    void *a = malloc(na * dt_size(g->ad)), *bm = malloc(nb * dt_size(g->bd)),
         *c = malloc(nc * dt_size(g->cd));
    double *av = malloc(na * sizeof(double)), *bv = malloc(nb * sizeof(double));
    cr_assert(a && bm && c && av && bv);
    unsigned seed = 11;
    for (size_t i = 0; i < na; i++) {
        seed = seed * 1103515245u + 12345u;
        av[i] = (double)((seed >> 16) % 5) - (g->ad == TILEC_UINT8 ? 0 : 2);
        put_val(g->ad, a, i, av[i]);
    }
    for (size_t i = 0; i < nb; i++) {
        seed = seed * 1103515245u + 12345u;
        bv[i] = (double)((seed >> 16) % 5) - (g->bd == TILEC_UINT8 ? 0 : 2);
        put_val(g->bd, bm, i, bv[i]);
    }
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            kb_t b;
            build_gemm_case(&b, g, ta, tb);
            char *text = tilec_ir_print(b.m);
            cr_assert_not_null(text);
            tilec_pcompile_options_t o = {.struct_size = sizeof o, .opt_level = 3, .arch = g->arch, .extra = extra};
            tilec_pmodule_t *mod = NULL;
            cr_assert_eq(P->compile(D, text, strlen(text), &o, &mod), TILEC_PS_OK, "%s", P->last_error());
            free(text);
            kb_free(&b);
            if (g->group) {
                const void *src;
                size_t len;
                cr_assert_eq(P->module_data(mod, TILEC_PDATA_SOURCE, &src, &len), TILEC_PS_OK);
                /* 13x37 tiles: 4x4 members cover about as much of C as
                 * 2x4 of 64x128 tiles (9 block columns allow no more) */
                cr_assert(strstr(src, "a group of 4x4 blocks") != NULL, "the gemm kernel runs no 4x4 block groups");
                /* float32 tiles of K 11 <= 32: the K steps are merged, 11 per GEMM call */
                cr_assert_eq(strstr(src, "11 K steps per GEMM call") != NULL, g->ad == TILEC_FLOAT32 && !ta && !tb);
            }
            if (g->group && !ta && !tb) {
                /* shared_static_bytes is per block: that of the same tiles
                 * on a grid too small for groups */
                gemm_case_t small = *g;
                small.m = g->tm;
                small.n = g->tn;
                small.group = 0;
                kb_t b1;
                build_gemm_case(&b1, &small, ta, tb);
                char *t1 = tilec_ir_print(b1.m);
                cr_assert_not_null(t1);
                tilec_pmodule_t *m1 = NULL;
                cr_assert_eq(P->compile(D, t1, strlen(t1), &o, &m1), TILEC_PS_OK, "%s", P->last_error());
                free(t1);
                kb_free(&b1);
                tilec_pmodule_info_t i0 = {.struct_size = sizeof i0}, i1 = {.struct_size = sizeof i1};
                cr_assert_eq(P->module_info(mod, &i0), TILEC_PS_OK);
                cr_assert_eq(P->module_info(m1, &i1), TILEC_PS_OK);
                cr_assert(i1.shared_static_bytes > 0);
                if (g->ad == TILEC_FLOAT32) /* K steps merged: plus a share of the group's staging */
                    cr_assert(i0.shared_static_bytes > i1.shared_static_bytes &&
                              i0.shared_static_bytes < 4 * i1.shared_static_bytes,
                              "grouped kernel reports %lld bytes per block, ungrouped %lld",
                              (long long)i0.shared_static_bytes, (long long)i1.shared_static_bytes);
                else
                    cr_assert_eq(i0.shared_static_bytes, i1.shared_static_bytes,
                                 "grouped kernel reports %lld bytes per block, ungrouped %lld",
                                 (long long)i0.shared_static_bytes, (long long)i1.shared_static_bytes);
                P->module_free(m1);
            }
            for (size_t i = 0; i < nc; i++)
                put_val(g->cd, c, i, 99); /* overwritten everywhere */
            /* A is stored [k][m] when transposed: the same logical values */
            void *at = malloc(na * dt_size(g->ad)), *bt = malloc(nb * dt_size(g->bd));
            cr_assert(at && bt);
            for (int i = 0; i < g->m; i++)
                for (int kk = 0; kk < g->k; kk++)
                    put_val(g->ad, at, ta ? (size_t)kk * g->m + i : (size_t)i * g->k + kk, av[(size_t)i * g->k + kk]);
            for (int kk = 0; kk < g->k; kk++)
                for (int j = 0; j < g->n; j++)
                    put_val(g->bd, bt, tb ? (size_t)j * g->k + kk : (size_t)kk * g->n + j, bv[(size_t)kk * g->n + j]);
            tilec_pmem_t *args[3] = {mem_from(at, na * dt_size(g->ad)), mem_from(bt, nb * dt_size(g->bd)),
                                     mem_from(c, nc * dt_size(g->cd))};
            run(mod, args, 3, NULL, 0);
            cr_assert_eq(P->mem_read(D, args[2], 0, c, nc * dt_size(g->cd)), TILEC_PS_OK);
            for (int i = 0; i < g->m; i++)
                for (int j = 0; j < g->n; j++) {
                    double ref = 0;
                    for (int kk = 0; kk < g->k; kk++)
                        ref += av[(size_t)i * g->k + kk] * bv[(size_t)kk * g->n + j];
                    double got = get_val(g->cd, c, (size_t)i * g->n + j);
                    cr_assert_eq(got, ref, "dtypes %d,%d->%d %dx%dx%d tiles %dx%dx%d arch %s ta=%d tb=%d: "
                                 "C[%d,%d] = %g, expected %g", (int)g->ad, (int)g->bd, (int)g->cd, g->m,
                                 g->n, g->k, g->tm, g->tn, g->tk, g->arch ? g->arch : "native", ta, tb,
                                 i, j, got, ref);
                }
            for (int i = 0; i < 3; i++)
                P->mem_free(D, args[i]);
            free(at);
            free(bt);
            P->module_free(mod);
        }
    free(a); free(bm); free(c); free(av); free(bv);
}

static void check_gemm_case(const gemm_case_t *g) { check_gemm_case_flags(g, NULL); }

/* Ragged problem and tile sizes: tiles that are no multiple of any
 * micro-tile (MR is 4, 6 or 8; NR 8 to 32), a partial last tile in every
 * dimension, a K loop. */
#define RAGGED 45, 70, 38, 13, 37, 11

Test(cpu_gemm, f32, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, RAGGED, NULL, 0}); }

/* A grid large enough for block groups of 2x4 (cpu_group.c), ragged in
 * both: 9 block columns (the last group has one), 11 block rows (the last
 * has three), partial last tiles and a partial last K step. */
#define GROUPED 140, 300, 38, 13, 37, 11
Test(cpu_gemm, block_groups_f32, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, GROUPED, NULL, 1}); }
/* The same with L3 taken as 104,192 bytes: one group column's B panels
 * (4 x 37 floats x 44 rows of K) are 26,048 bytes, so groups are walked
 * in strips of 2 of the 3 group columns, the last strip ragged; every C
 * tile must still be computed, once. */
Test(cpu_gemm, block_groups_in_strips, .init = setup, .fini = teardown)
{ check_gemm_case_flags(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, GROUPED, NULL, 1}, "-DTC_L3=104192"); }
Test(cpu_gemm, block_groups_f16_int8, .init = setup, .fini = teardown)
{
    check_gemm_case(&(gemm_case_t){TILEC_FLOAT16, TILEC_FLOAT16, TILEC_FLOAT32, GROUPED, NULL, 1});
    check_gemm_case(&(gemm_case_t){TILEC_INT8, TILEC_INT8, TILEC_INT32, GROUPED, NULL, 1});
}
Test(cpu_gemm, f16_f32acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT16, TILEC_FLOAT16, TILEC_FLOAT32, RAGGED, NULL, 0}); }
Test(cpu_gemm, bf16_f32acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_BFLOAT16, TILEC_BFLOAT16, TILEC_FLOAT32, RAGGED, NULL, 0}); }
Test(cpu_gemm, f16_f16acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT16, TILEC_FLOAT16, TILEC_FLOAT16, RAGGED, NULL, 0}); }
Test(cpu_gemm, f16_f32_mixed, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT16, TILEC_FLOAT32, TILEC_FLOAT32, RAGGED, NULL, 0}); }
Test(cpu_gemm, f64, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT64, TILEC_FLOAT64, TILEC_FLOAT64, RAGGED, NULL, 0}); }
Test(cpu_gemm, int8_int32acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_INT8, TILEC_INT8, TILEC_INT32, RAGGED, NULL, 0}); }
Test(cpu_gemm, uint8_int32acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_UINT8, TILEC_INT8, TILEC_INT32, RAGGED, NULL, 0}); }
Test(cpu_gemm, int32_int64acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_INT32, TILEC_INT32, TILEC_INT64, RAGGED, NULL, 0}); }

/* One tile larger than the cache blocking: K past TC_KC (64..512), rows of
 * B past a page (B is packed even in float32), M past a few MR. */
Test(cpu_gemm, one_big_tile, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, 29, 1100, 530, 29, 1100, 530, NULL, 0}); }

#if defined(__x86_64__)
/* Every x86 micro-kernel, whatever this host has: the kernel is built for
 * the -march given, whose macros pick the ISA (x86-64: the generic 16-byte
 * one; x86-64-v3: AVX2+FMA; x86-64-v4: AVX-512, run only where the CPU
 * has it). */
static int host_has(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    cr_assert_not_null(f);
    char line[8192];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            char pat[64];
            snprintf(pat, sizeof pat, " %s", flag);
            for (char *p = strstr(line, pat); p && !found; p = strstr(p + 1, pat))
                found = p[strlen(pat)] == ' ' || p[strlen(pat)] == '\n';
        }
    fclose(f);
    return found;
}

Test(cpu_gemm, every_x86_isa, .init = setup, .fini = teardown)
{
    static const char *const arch[] = {"x86-64", "x86-64-v3", "x86-64-v4"};
    static const char *const need[] = {"sse2", "avx2", "avx512f"};
    for (int i = 0; i < 3; i++) {
        if (!host_has(need[i]) || (i == 1 && !host_has("fma")))
            continue;
        check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, RAGGED, arch[i], 0});
    }
}
#endif

/* reduce_max over dim 1 and reduce_sum over dim 0 of a 37x50 tile, plus
 * absmax with clear=False combining with a preset value. */
enum { RR = 37, RC = 50 };
Test(cpu_kernel, reduce, .init = setup, .fini = teardown)
{
    kb_t b;
    kb_init(&b, "reduce");
    tilec_ir_buffer_t *X = BUF(&b, "X", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(&b, RR), I(&b, RC));
    tilec_ir_buffer_t *RM = BUF(&b, "rmax", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, I(&b, RR), NULL);
    tilec_ir_buffer_t *CS = BUF(&b, "csum", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, I(&b, RC), NULL);
    tilec_ir_buffer_t *AM = BUF(&b, "amax", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, I(&b, RR), NULL);
    tilec_ir_buffer_t *Xs = BUF(&b, "X_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, I(&b, RR), I(&b, RC));
    tilec_ir_buffer_t *rm = BUF(&b, "rm", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, I(&b, RR), NULL);
    tilec_ir_buffer_t *cs = BUF(&b, "cs", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, I(&b, RC), NULL);
    tilec_ir_buffer_t *am = BUF(&b, "am", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 1, I(&b, RR), NULL);
    grid(&b, 1, I(&b, 1), NULL);
    tilec_ir_stmt_t *s = emit(&b, TILEC_ST_COPY);
    region(&b, &s->u.copy.src, X, I(&b, 0), I(&b, 0), RR, RC);
    region(&b, &s->u.copy.dst, Xs, I(&b, 0), I(&b, 0), RR, RC);
    s = emit(&b, TILEC_ST_REDUCE);
    s->u.reduce.op = TILEC_RED_MAX;
    s->u.reduce.src = Xs;
    s->u.reduce.dst = rm;
    s->u.reduce.dim = 1;
    s->u.reduce.clear = 1;
    s = emit(&b, TILEC_ST_REDUCE);
    s->u.reduce.op = TILEC_RED_SUM;
    s->u.reduce.src = Xs;
    s->u.reduce.dst = cs;
    s->u.reduce.dim = 0;
    s->u.reduce.clear = 1;
    s = emit(&b, TILEC_ST_FILL);
    region(&b, &s->u.fill.dst, am, I(&b, 0), NULL, RR, 1);
    s->u.fill.value = F(&b, 0.75, TILEC_FLOAT32);
    s = emit(&b, TILEC_ST_REDUCE);
    s->u.reduce.op = TILEC_RED_ABSMAX;
    s->u.reduce.src = Xs;
    s->u.reduce.dst = am;
    s->u.reduce.dim = 1;
    s->u.reduce.clear = 0;
    tilec_ir_buffer_t *pairs[3][2] = {{rm, RM}, {cs, CS}, {am, AM}};
    for (int i = 0; i < 3; i++) {
        int n = i == 1 ? RC : RR;
        s = emit(&b, TILEC_ST_COPY);
        region(&b, &s->u.copy.src, pairs[i][0], I(&b, 0), NULL, n, 1);
        region(&b, &s->u.copy.dst, pairs[i][1], I(&b, 0), NULL, n, 1);
    }
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(&b);
    static float x[RR * RC], rmax[RR], csum[RC], amax[RR];
    unsigned seed = 3;
    for (int i = 0; i < RR * RC; i++)
        x[i] = frand(&seed);
    tilec_pmem_t *args[4] = {mem_from(x, sizeof x), mem_from(rmax, sizeof rmax),
                             mem_from(csum, sizeof csum), mem_from(amax, sizeof amax)};
    run(mod, args, 4, NULL, 0);
    P->mem_read(D, args[1], 0, rmax, sizeof rmax);
    P->mem_read(D, args[2], 0, csum, sizeof csum);
    P->mem_read(D, args[3], 0, amax, sizeof amax);
    for (int r = 0; r < RR; r++) {
        float m = -INFINITY, a = 0.75f;
        for (int c = 0; c < RC; c++) {
            m = fmaxf(m, x[r * RC + c]);
            a = fmaxf(a, fabsf(x[r * RC + c]));
        }
        cr_assert_eq(rmax[r], m);
        cr_assert_eq(amax[r], a);
    }
    for (int c = 0; c < RC; c++) {
        double s2 = 0;
        for (int r = 0; r < RR; r++)
            s2 += x[r * RC + c];
        cr_assert(fabs(csum[c] - s2) < 1e-5, "csum[%d] %g vs %g", c, csum[c], s2);
    }
    for (int i = 0; i < 4; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
}

/* cumsum: int32 forward along dim 1 in place, float32 reverse along dim 0 */
enum { CR = 4, CC = 33 };
Test(cpu_kernel, cumsum, .init = setup, .fini = teardown)
{
    kb_t b;
    kb_init(&b, "cumsum");
    tilec_ir_buffer_t *X = BUF(&b, "X", TILEC_SCOPE_GLOBAL, TILEC_INT32, 2, I(&b, CR), I(&b, CC));
    tilec_ir_buffer_t *Y = BUF(&b, "Y", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(&b, CR), I(&b, CC));
    tilec_ir_buffer_t *Yo = BUF(&b, "Yo", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(&b, CR), I(&b, CC));
    tilec_ir_buffer_t *xf = BUF(&b, "xf", TILEC_SCOPE_FRAGMENT, TILEC_INT32, 2, I(&b, CR), I(&b, CC));
    tilec_ir_buffer_t *ys = BUF(&b, "ys", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, I(&b, CR), I(&b, CC));
    tilec_ir_buffer_t *yf = BUF(&b, "yf", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, I(&b, CR), I(&b, CC));
    grid(&b, 1, I(&b, 1), NULL);
    tilec_ir_stmt_t *s = emit(&b, TILEC_ST_COPY);
    region(&b, &s->u.copy.src, X, I(&b, 0), I(&b, 0), CR, CC);
    region(&b, &s->u.copy.dst, xf, I(&b, 0), I(&b, 0), CR, CC);
    s = emit(&b, TILEC_ST_CUMSUM);
    s->u.cumsum.src = xf;
    s->u.cumsum.dst = xf;
    s->u.cumsum.dim = 1;
    s = emit(&b, TILEC_ST_COPY);
    region(&b, &s->u.copy.src, xf, I(&b, 0), I(&b, 0), CR, CC);
    region(&b, &s->u.copy.dst, X, I(&b, 0), I(&b, 0), CR, CC);
    s = emit(&b, TILEC_ST_COPY);
    region(&b, &s->u.copy.src, Y, I(&b, 0), I(&b, 0), CR, CC);
    region(&b, &s->u.copy.dst, ys, I(&b, 0), I(&b, 0), CR, CC);
    s = emit(&b, TILEC_ST_CUMSUM);
    s->u.cumsum.src = ys;
    s->u.cumsum.dst = yf;
    s->u.cumsum.dim = 0;
    s->u.cumsum.reverse = 1;
    s = emit(&b, TILEC_ST_COPY);
    region(&b, &s->u.copy.src, yf, I(&b, 0), I(&b, 0), CR, CC);
    region(&b, &s->u.copy.dst, Yo, I(&b, 0), I(&b, 0), CR, CC);
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(&b);
    int32_t x[CR * CC];
    float y[CR * CC], yo[CR * CC];
    unsigned seed = 5;
    for (int i = 0; i < CR * CC; i++) {
        x[i] = (int32_t)(frand(&seed) * 64);
        y[i] = frand(&seed);
    }
    tilec_pmem_t *args[3] = {mem_from(x, sizeof x), mem_from(y, sizeof y), mem_from(yo, sizeof yo)};
    run(mod, args, 3, NULL, 0);
    int32_t xo[CR * CC];
    P->mem_read(D, args[0], 0, xo, sizeof xo);
    P->mem_read(D, args[2], 0, yo, sizeof yo);
    for (int r = 0; r < CR; r++) {
        int32_t acc = 0;
        for (int c = 0; c < CC; c++) {
            acc += x[r * CC + c];
            cr_assert_eq(xo[r * CC + c], acc);
        }
    }
    for (int c = 0; c < CC; c++) {
        float acc = 0;
        for (int r = CR - 1; r >= 0; r--) {
            acc += y[r * CC + c];
            cr_assert(fabsf(yo[r * CC + c] - acc) < 1e-5f);
        }
    }
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
}

/* 512 blocks each add 1 to cnt[i % 4] 64 times (int32) and 1.0 to f[0]
 * (float32, exact), and atomic_max their block index into mx[0]. */
Test(cpu_kernel, atomic_contention, .init = setup, .fini = teardown)
{
    kb_t b;
    kb_init(&b, "atomics");
    tilec_ir_buffer_t *cnt = BUF(&b, "cnt", TILEC_SCOPE_GLOBAL, TILEC_INT32, 1, I(&b, 4), NULL);
    tilec_ir_buffer_t *f = BUF(&b, "f", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, I(&b, 1), NULL);
    tilec_ir_buffer_t *mx = BUF(&b, "mx", TILEC_SCOPE_GLOBAL, TILEC_INT32, 1, I(&b, 1), NULL);
    tilec_ir_buffer_t *h = BUF(&b, "h", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, 1, I(&b, 1), NULL);
    grid(&b, 1, I(&b, 512), NULL);
    tilec_ir_var_t *bx = b.k->block[0];
    tilec_ir_var_t *i = loop(&b, "i", TILEC_LOOP_SERIAL, I(&b, 64));
    tilec_ir_stmt_t *s = emit(&b, TILEC_ST_ATOMIC);
    s->u.atomic.op = TILEC_ATOMIC_ADD;
    s->u.atomic.buf = cnt;
    s->u.atomic.idx = tilec_arena_alloc(&b.a, sizeof(tilec_ir_expr_t *));
    s->u.atomic.idx[0] = BIN(&b, TILEC_BIN_FLOORMOD, V(&b, i), I(&b, 4));
    s->u.atomic.value = I(&b, 1);
    s = emit(&b, TILEC_ST_ATOMIC);
    s->u.atomic.op = TILEC_ATOMIC_ADD;
    s->u.atomic.buf = f;
    s->u.atomic.idx = tilec_arena_alloc(&b.a, sizeof(tilec_ir_expr_t *));
    s->u.atomic.idx[0] = I(&b, 0);
    s->u.atomic.value = F(&b, 1.0, TILEC_FLOAT32);
    end(&b);
    s = emit(&b, TILEC_ST_ATOMIC);
    s->u.atomic.op = TILEC_ATOMIC_MAX;
    s->u.atomic.buf = mx;
    s->u.atomic.idx = tilec_arena_alloc(&b.a, sizeof(tilec_ir_expr_t *));
    s->u.atomic.idx[0] = I(&b, 0);
    s->u.atomic.value = V(&b, bx);
    s = emit(&b, TILEC_ST_ATOMIC); /* float16: 512 * 0.5 = 256, exact */
    s->u.atomic.op = TILEC_ATOMIC_ADD;
    s->u.atomic.buf = h;
    s->u.atomic.idx = tilec_arena_alloc(&b.a, sizeof(tilec_ir_expr_t *));
    s->u.atomic.idx[0] = I(&b, 0);
    s->u.atomic.value = F(&b, 0.5, TILEC_FLOAT16);
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(&b);
    int32_t c[4] = {0, 0, 0, 0}, m = -1;
    float fv = 0;
    uint16_t hv = 0;
    tilec_pmem_t *args[4] = {mem_from(c, sizeof c), mem_from(&fv, sizeof fv), mem_from(&m, sizeof m),
                             mem_from(&hv, sizeof hv)};
    for (int rep = 0; rep < 3; rep++)
        run(mod, args, 4, NULL, 0);
    P->mem_read(D, args[0], 0, c, sizeof c);
    P->mem_read(D, args[1], 0, &fv, sizeof fv);
    P->mem_read(D, args[2], 0, &m, sizeof m);
    P->mem_read(D, args[3], 0, &hv, sizeof hv);
    for (int i2 = 0; i2 < 4; i2++)
        cr_assert_eq(c[i2], 3 * 512 * 16);
    cr_assert_eq(fv, 3.0f * 512 * 64);
    cr_assert_eq(m, 511);
    cr_assert_eq(tilec_f16_to_f32(hv), 768.0f);
    for (int i2 = 0; i2 < 4; i2++)
        P->mem_free(D, args[i2]);
    P->module_free(mod);
}

/* float16 storage: C = A * B + 1 (in float16), D = bf16(exp(float(A))) */
enum { HN = 300 };
Test(cpu_kernel, float16_storage, .init = setup, .fini = teardown)
{
    kb_t b;
    kb_init(&b, "half");
    tilec_ir_buffer_t *A = BUF(&b, "A", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, 1, I(&b, HN), NULL);
    tilec_ir_buffer_t *B = BUF(&b, "B", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, 1, I(&b, HN), NULL);
    tilec_ir_buffer_t *C = BUF(&b, "C", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, 1, I(&b, HN), NULL);
    tilec_ir_buffer_t *E = BUF(&b, "E", TILEC_SCOPE_GLOBAL, TILEC_BFLOAT16, 1, I(&b, HN), NULL);
    grid(&b, 1, I(&b, (HN + 63) / 64), NULL);
    tilec_ir_var_t *bx = b.k->block[0];
    tilec_ir_var_t *i = loop(&b, "i", TILEC_LOOP_PARALLEL, I(&b, 64));
    tilec_ir_var_t *g = tilec_ir_var_add(&b.a, b.k, "g", TILEC_INT32, TILEC_VAR_LET);
    tilec_ir_stmt_t *s = emit(&b, TILEC_ST_ASSIGN);
    s->u.assign.var = g;
    s->u.assign.value = ADD(&b, MUL(&b, V(&b, bx), I(&b, 64)), V(&b, i));
    tilec_ir_stmt_t *cond = emit(&b, TILEC_ST_IF);
    cond->u.cond.cond = BIN(&b, TILEC_BIN_LT, V(&b, g), I(&b, HN));
    b.tail[++b.depth] = &cond->u.cond.then;
    store(&b, C, V(&b, g), NULL,
          ADD(&b, MUL(&b, LOAD(&b, A, V(&b, g), NULL), LOAD(&b, B, V(&b, g), NULL)),
              F(&b, 1.0, TILEC_FLOAT16)));
    store(&b, E, V(&b, g), NULL,
          tilec_ir_cast(&b.a, TILEC_BFLOAT16,
                        tilec_ir_unary(&b.a, TILEC_UN_EXP,
                                       tilec_ir_cast(&b.a, TILEC_FLOAT32, LOAD(&b, A, V(&b, g), NULL)))));
    end(&b);
    end(&b);
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(&b);
    uint16_t a[HN], bb[HN], c[HN], e[HN];
    unsigned seed = 11;
    for (int k = 0; k < HN; k++) {
        a[k] = tilec_f32_to_f16(frand(&seed) * 4);
        bb[k] = tilec_f32_to_f16(frand(&seed) * 4);
    }
    a[0] = 0x7c00;  /* inf */
    bb[0] = 0x3c00; /* 1 */
    a[1] = 0x0001;  /* smallest subnormal */
    bb[1] = 0x3c00;
    tilec_pmem_t *args[4] = {mem_from(a, sizeof a), mem_from(bb, sizeof bb), mem_from(c, sizeof c),
                             mem_from(e, sizeof e)};
    run(mod, args, 4, NULL, 0);
    P->mem_read(D, args[2], 0, c, sizeof c);
    P->mem_read(D, args[3], 0, e, sizeof e);
    for (int k = 0; k < HN; k++) {
        float ref = tilec_f16_to_f32(a[k]) * tilec_f16_to_f32(bb[k]) + 1.0f;
        float got = tilec_f16_to_f32(c[k]);
        float r16 = tilec_f16_to_f32(tilec_f32_to_f16(ref));
        if (isinf(ref))
            cr_assert(isinf(got) && got > 0, "k=%d", k);
        else
            cr_assert(fabsf(got - r16) <= fabsf(r16) * 1e-3f, "k=%d got %g want %g", k, got, r16);
        float eref = tilec_bf16_to_f32(tilec_f32_to_bf16(expf(tilec_f16_to_f32(a[k]))));
        float egot = tilec_bf16_to_f32(e[k]);
        if (isinf(eref))
            cr_assert(isinf(egot));
        else
            cr_assert(fabsf(egot - eref) <= fabsf(eref) * 8e-3f, "k=%d got %g want %g", k, egot, eref);
    }
    cr_assert_eq(c[1], 0x3c00); /* 1 + 2^-24 rounds to 1 */
    for (int k = 0; k < 4; k++)
        P->mem_free(D, args[k]);
    P->module_free(mod);
}

/* ---- cache and compiler failures ---------------------------------------------------------- */

static int count_cache_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "cpu-", 4) == 0 && strstr(e->d_name, ".so") &&
            !strstr(e->d_name, ".tmp"))
            n++;
    closedir(d);
    return n;
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[8400];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

Test(cpu_cache, hit_skips_compiler)
{
    char dir[] = "/tmp/tilec-test-cache-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/nested/cache", dir); /* created on demand */
    open_plugin(sub);
    kb_t b;
    build_add(&b);
    tilec_pmodule_t *m1 = NULL, *m2 = NULL;
    cr_assert_eq(compile_kb(&b, &m1), TILEC_PS_OK, "%s", P->last_error());
    cr_assert_eq(count_cache_entries(sub), 1);
    /* no compiler any more: only the cache can serve this (the flags $CC
     * carries are part of the key, so they stay: make sanitize sets some) */
    const char *cc0 = getenv("CC"), *flags = cc0 ? strchr(cc0, ' ') : NULL;
    char nocc[1024];
    snprintf(nocc, sizeof nocc, "/nonexistent/tilec-test-cc%s", flags ? flags : "");
    setenv("CC", nocc, 1);
    cr_assert_eq(compile_kb(&b, &m2), TILEC_PS_OK, "%s", P->last_error());
    cr_assert_eq(count_cache_entries(sub), 1);
    const void *b1, *b2;
    size_t l1, l2;
    P->module_data(m1, TILEC_PDATA_BINARY, &b1, &l1);
    P->module_data(m2, TILEC_PDATA_BINARY, &b2, &l2);
    cr_assert_eq(l1, l2);
    cr_assert_eq(memcmp(b1, b2, l1), 0);
    /* the cached module runs */
    float a[5] = {1, 2, 3, 4, 5}, c[5] = {0};
    tilec_pmem_t *args[3] = {mem_from(a, sizeof a), mem_from(a, sizeof a), mem_from(c, sizeof c)};
    int64_t syms[1] = {5};
    run(m2, args, 3, syms, 1);
    P->mem_read(D, args[2], 0, c, sizeof c);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(c[i], 2 * a[i]);
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(m2);
    P->module_free(m1);
    /* a different kernel misses the cache and the missing compiler shows */
    kb_free(&b);
    build_gemm(&b, 0, 0);
    cr_assert_eq(compile_kb(&b, &m1), TILEC_PS_COMPILE_ERROR);
    cr_assert(strstr(P->last_error(), "tilec-test-cc") != NULL, "%s", P->last_error());
    kb_free(&b);
    teardown();
    rm_dir(sub);
    snprintf(sub, sizeof sub, "%s/nested", dir);
    rmdir(sub);
    rmdir(dir);
}

Test(cpu_cache, compiler_error_message)
{
    char dir[] = "/tmp/tilec-test-cc-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cc[4200];
    snprintf(cc, sizeof cc, "%s/fakecc", dir);
    FILE *f = fopen(cc, "w");
    cr_assert_not_null(f);
    fputs("#!/bin/sh\necho 'kernel.c:1:1: error: boom from the fake compiler' >&2\nexit 1\n", f);
    fclose(f);
    chmod(cc, 0755);
    setenv("CC", cc, 1);
    open_plugin(NULL);
    kb_t b;
    build_add(&b);
    tilec_pmodule_t *m = NULL;
    cr_assert_eq(compile_kb(&b, &m), TILEC_PS_COMPILE_ERROR);
    cr_assert_null(m);
    cr_assert(strstr(P->last_error(), "boom from the fake compiler") != NULL, "%s", P->last_error());
    kb_free(&b);
    teardown();
    unlink(cc);
    rmdir(dir);
}

/* IR the generator must reject cleanly: gemm shapes that disagree. */
Test(cpu_cache, bad_ir_rejected, .init = setup, .fini = teardown)
{
    kb_t b;
    kb_init(&b, "badgemm");
    tilec_ir_buffer_t *As = BUF(&b, "A_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, I(&b, 8), I(&b, 4));
    tilec_ir_buffer_t *Bs = BUF(&b, "B_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, I(&b, 5), I(&b, 8));
    tilec_ir_buffer_t *Cl = BUF(&b, "C_l", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, I(&b, 8), I(&b, 8));
    grid(&b, 1, I(&b, 1), NULL);
    tilec_ir_stmt_t *s = emit(&b, TILEC_ST_GEMM);
    s->u.gemm.a = As;
    s->u.gemm.b = Bs;
    s->u.gemm.c = Cl;
    tilec_pmodule_t *m = NULL;
    cr_assert_eq(compile_kb(&b, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strstr(P->last_error(), "gemm") != NULL, "%s", P->last_error());
    kb_free(&b);
}

/* ---- a kernel touching most of ir.h ------------------------------------------------------ */

static tilec_ir_expr_t *UN(kb_t *b, tilec_unop_t op, tilec_ir_expr_t *x) { return tilec_ir_unary(&b->a, op, x); }
static tilec_ir_expr_t *LD1(kb_t *b, tilec_ir_buffer_t *buf, tilec_ir_expr_t *i0) { return LOAD(b, buf, i0, NULL); }
static void st1(kb_t *b, tilec_ir_buffer_t *buf, tilec_ir_expr_t *i0, tilec_ir_expr_t *v) { store(b, buf, i0, NULL, v); }
static tilec_ir_stmt_t *copy1(kb_t *b, tilec_ir_buffer_t *s, int64_t se0, int64_t se1,
                              tilec_ir_buffer_t *d, int64_t de0, int64_t de1)
{
    tilec_ir_stmt_t *st = emit(b, TILEC_ST_COPY);
    region(b, &st->u.copy.src, s, I(b, 0), I(b, 0), se0, se1);
    region(b, &st->u.copy.dst, d, I(b, 0), I(b, 0), de0, de1);
    return st;
}

static int32_t py_div(int32_t a, int32_t b) { return b == 0 ? 0 : a / b; }
static int32_t py_floordiv(int32_t a, int32_t b)
{
    if (b == 0)
        return 0;
    int32_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}
static int32_t py_mod(int32_t a, int32_t b)
{
    if (b == 0)
        return 0;
    int32_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

enum { SN = 12 };
Test(cpu_kernel, many_constructs, .init = setup, .fini = teardown)
{
    kb_t b;
    kb_t *B = &b;
    kb_init(B, "sink");
    tilec_ir_var_t *n = tilec_ir_var_add(&b.a, b.k, "n", TILEC_INT32, TILEC_VAR_SYM);
    tilec_ir_buffer_t *X = BUF(B, "X", TILEC_SCOPE_GLOBAL, TILEC_INT32, 1, I(B, SN), NULL);
    tilec_ir_buffer_t *Yi = BUF(B, "Yi", TILEC_SCOPE_GLOBAL, TILEC_INT32, 2, I(B, SN), I(B, 8));
    tilec_ir_buffer_t *U = BUF(B, "U", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, I(B, SN), NULL);
    tilec_ir_buffer_t *Wf = BUF(B, "Wf", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(B, SN), I(B, 10));
    tilec_ir_buffer_t *Dd = BUF(B, "Dd", TILEC_SCOPE_GLOBAL, TILEC_FLOAT64, 1, I(B, SN), NULL);
    tilec_ir_buffer_t *Bo = BUF(B, "Bo", TILEC_SCOPE_GLOBAL, TILEC_BOOL, 1, I(B, SN), NULL);
    tilec_ir_buffer_t *H = BUF(B, "H", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, 1, I(B, SN), NULL);
    tilec_ir_buffer_t *S = BUF(B, "S", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, V(B, n), NULL);
    tilec_ir_buffer_t *L = BUF(B, "L", TILEC_SCOPE_GLOBAL, TILEC_INT32, 1, I(B, 4), NULL);
    tilec_ir_buffer_t *G = BUF(B, "G", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, 1, I(B, SN), NULL);
    tilec_ir_buffer_t *sh = BUF(B, "sh", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 1, V(B, n), NULL);
    tilec_ir_buffer_t *fr = BUF(B, "fr", TILEC_SCOPE_FRAGMENT, TILEC_INT32, 2, I(B, 2), I(B, 6));
    tilec_ir_buffer_t *lin = BUF(B, "lin", TILEC_SCOPE_SHARED, TILEC_INT32, 1, I(B, SN), NULL);
    tilec_ir_buffer_t *loc = BUF(B, "loc", TILEC_SCOPE_LOCAL, TILEC_INT32, 1, I(B, 4), NULL);
    tilec_ir_buffer_t *var = BUF(B, "acc", TILEC_SCOPE_VAR, TILEC_INT32, 1, I(B, 1), NULL);
    tilec_ir_buffer_t *red = BUF(B, "red", TILEC_SCOPE_FRAGMENT, TILEC_INT32, 1, I(B, 2), NULL);
    tilec_ir_buffer_t *cs = BUF(B, "cs", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT16, 1, I(B, SN), NULL);
    /* a 3-D grid of one block */
    b.k->ngrid = 3;
    static const char *bn[3] = {"bx", "by", "bz"};
    for (int d = 0; d < 3; d++) {
        b.k->grid[d] = I(B, 1);
        b.k->block[d] = tilec_ir_var_add(&b.a, b.k, bn[d], TILEC_INT32, TILEC_VAR_BLOCK);
    }
    tilec_ir_stmt_t *s = emit(B, TILEC_ST_HINT);
    s->u.hint.name = "use_swizzle";
    s->u.hint.nargs = 1;
    s->u.hint.args = tilec_arena_alloc(&b.a, sizeof(tilec_ir_expr_t *));
    s->u.hint.args[0] = I(B, 8);

    tilec_ir_var_t *i = loop(B, "i", TILEC_LOOP_PARALLEL, I(B, SN));
    tilec_ir_var_t *x = tilec_ir_var_add(&b.a, b.k, "x", TILEC_INT32, TILEC_VAR_LET);
    tilec_ir_var_t *u = tilec_ir_var_add(&b.a, b.k, "u", TILEC_FLOAT32, TILEC_VAR_LET);
    s = emit(B, TILEC_ST_ASSIGN);
    s->u.assign.var = x;
    s->u.assign.value = LD1(B, X, V(B, i));
    s = emit(B, TILEC_ST_ASSIGN);
    s->u.assign.var = u;
    s->u.assign.value = LD1(B, U, V(B, i));
    tilec_ir_expr_t *im3 = BIN(B, TILEC_BIN_SUB, V(B, i), I(B, 3));
    tilec_ir_expr_t *iv[8] = {
        BIN(B, TILEC_BIN_DIV, V(B, x), I(B, -5)),
        BIN(B, TILEC_BIN_FLOORDIV, V(B, x), I(B, 5)),
        BIN(B, TILEC_BIN_FLOORMOD, V(B, x), I(B, -5)),
        BIN(B, TILEC_BIN_FLOORDIV, V(B, x), im3),
        BIN(B, TILEC_BIN_FLOORMOD, V(B, x), im3),
        BIN(B, TILEC_BIN_POW, V(B, x), I(B, 2)),
        BIN(B, TILEC_BIN_MAX, BIN(B, TILEC_BIN_MIN, V(B, x), I(B, 10)), I(B, -10)),
        UN(B, TILEC_UN_ABS, UN(B, TILEC_UN_NEG, V(B, x))),
    };
    for (int c = 0; c < 8; c++)
        store(B, Yi, V(B, i), I(B, c), iv[c]);
    tilec_ir_expr_t *au = UN(B, TILEC_UN_ABS, V(B, u));
    tilec_ir_expr_t *fv[10] = {
        UN(B, TILEC_UN_EXP2, V(B, u)),
        UN(B, TILEC_UN_LOG2, ADD(B, au, F(B, 1.0, TILEC_FLOAT32))),
        UN(B, TILEC_UN_SQRT, au),
        UN(B, TILEC_UN_RSQRT, ADD(B, au, F(B, 1.0, TILEC_FLOAT32))),
        UN(B, TILEC_UN_TANH, V(B, u)),
        UN(B, TILEC_UN_SIGMOID, V(B, u)),
        UN(B, TILEC_UN_FLOOR, MUL(B, V(B, u), F(B, 3.0, TILEC_FLOAT32))),
        UN(B, TILEC_UN_CEIL, MUL(B, V(B, u), F(B, 3.0, TILEC_FLOAT32))),
        tilec_ir_select(&b.a, BIN(B, TILEC_BIN_GT, V(B, u), F(B, 0.0, TILEC_FLOAT32)), V(B, u),
                        MUL(B, UN(B, TILEC_UN_NEG, V(B, u)), F(B, 2.0, TILEC_FLOAT32))),
        BIN(B, TILEC_BIN_FLOORMOD, MUL(B, V(B, u), F(B, 7.0, TILEC_FLOAT32)), F(B, 2.5, TILEC_FLOAT32)),
    };
    for (int c = 0; c < 10; c++)
        store(B, Wf, V(B, i), I(B, c), fv[c]);
    tilec_ir_expr_t *ud = tilec_ir_cast(&b.a, TILEC_FLOAT64, V(B, u));
    st1(B, Dd, V(B, i),
        ADD(B, MUL(B, ud, F(B, 3.0, TILEC_FLOAT64)),
            BIN(B, TILEC_BIN_FLOORDIV, ud, F(B, 0.25, TILEC_FLOAT64))));
    st1(B, Bo, V(B, i),
        BIN(B, TILEC_BIN_AND, BIN(B, TILEC_BIN_GT, V(B, x), I(B, 0)),
            UN(B, TILEC_UN_NOT, BIN(B, TILEC_BIN_EQ, V(B, x), I(B, 5)))));
    end(B);

    copy1(B, U, SN, 1, H, SN, 1);       /* global -> global, f32 -> f16 */
    copy1(B, X, SN, 1, fr, 2, 6);       /* 12 -> 2x6: element order */
    copy1(B, fr, 2, 6, lin, SN, 1);     /* and back */
    s = emit(B, TILEC_ST_SYNC);
    s = emit(B, TILEC_ST_REDUCE);
    s->u.reduce.op = TILEC_RED_SUM;
    s->u.reduce.src = fr;
    s->u.reduce.dst = red;
    s->u.reduce.dim = 1;
    s->u.reduce.clear = 1;
    st1(B, L, I(B, 0), ADD(B, LD1(B, red, I(B, 0)), MUL(B, LD1(B, red, I(B, 1)), I(B, 1000))));
    st1(B, var, I(B, 0), I(B, 0));
    tilec_ir_var_t *j = loop(B, "j", TILEC_LOOP_UNROLL, I(B, 4));
    st1(B, var, I(B, 0), ADD(B, LD1(B, var, I(B, 0)), LD1(B, lin, MUL(B, V(B, j), I(B, 3)))));
    st1(B, loc, V(B, j), MUL(B, LD1(B, lin, V(B, j)), I(B, 2)));
    end(B);
    st1(B, L, I(B, 1), LD1(B, var, I(B, 0)));
    st1(B, L, I(B, 2),
        ADD(B, ADD(B, LD1(B, loc, I(B, 0)), LD1(B, loc, I(B, 1))),
            ADD(B, LD1(B, loc, I(B, 2)), LD1(B, loc, I(B, 3)))));
    /* symbolic on-chip buffer, atomic on it (block-local path) */
    tilec_ir_var_t *t = loop(B, "t", TILEC_LOOP_SERIAL, V(B, n));
    st1(B, sh, V(B, t), tilec_ir_cast(&b.a, TILEC_FLOAT32, V(B, t)));
    end(B);
    s = emit(B, TILEC_ST_ATOMIC);
    s->u.atomic.op = TILEC_ATOMIC_ADD;
    s->u.atomic.buf = sh;
    s->u.atomic.idx = tilec_arena_alloc(&b.a, sizeof(tilec_ir_expr_t *));
    s->u.atomic.idx[0] = I(B, 0);
    s->u.atomic.value = F(B, 10.0, TILEC_FLOAT32);
    t = loop(B, "t2", TILEC_LOOP_VECTORIZED, V(B, n));
    st1(B, S, V(B, t), MUL(B, LD1(B, sh, V(B, t)), F(B, 2.0, TILEC_FLOAT32)));
    end(B);
    /* float16 cumsum in a fragment */
    copy1(B, U, SN, 1, cs, SN, 1);
    s = emit(B, TILEC_ST_CUMSUM);
    s->u.cumsum.src = cs;
    s->u.cumsum.dst = cs;
    s->u.cumsum.dim = 0;
    copy1(B, cs, SN, 1, G, SN, 1);
    s = emit(B, TILEC_ST_PRINT);
    s->u.print.msg = "x0 %d \"quoted\" ?\?=";
    s->u.print.value = LD1(B, X, I(B, 0));
    s = emit(B, TILEC_ST_PRINT);
    s->u.print.msg = "";
    s->u.print.buf = fr;

    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(B, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(B);

    int32_t xs[SN], yi[SN * 8], l[4] = {0};
    float us[SN], wf[SN * 10];
    double dd[SN];
    uint8_t bo[SN];
    uint16_t hh[SN], gg[SN];
    const int nsym = 9;
    float so[9];
    unsigned seed = 21;
    for (int k = 0; k < SN; k++) {
        xs[k] = (int32_t)(frand(&seed) * 64);
        us[k] = frand(&seed) * 2;
    }
    xs[0] = 5;
    xs[1] = -7;
    xs[2] = INT32_MIN; /* x / -1 style edge: divided by -5 and 5 only */
    tilec_pmem_t *args[10] = {mem_from(xs, sizeof xs), mem_from(yi, sizeof yi),
                              mem_from(us, sizeof us), mem_from(wf, sizeof wf),
                              mem_from(dd, sizeof dd), mem_from(bo, sizeof bo),
                              mem_from(hh, sizeof hh), mem_from(so, sizeof so),
                              mem_from(l, sizeof l), mem_from(gg, sizeof gg)};
    int64_t syms[1] = {nsym};
    run(mod, args, 10, syms, 1);
    P->mem_read(D, args[1], 0, yi, sizeof yi);
    P->mem_read(D, args[3], 0, wf, sizeof wf);
    P->mem_read(D, args[4], 0, dd, sizeof dd);
    P->mem_read(D, args[5], 0, bo, sizeof bo);
    P->mem_read(D, args[6], 0, hh, sizeof hh);
    P->mem_read(D, args[7], 0, so, sizeof so);
    P->mem_read(D, args[8], 0, l, sizeof l);
    P->mem_read(D, args[9], 0, gg, sizeof gg);
    for (int k = 0; k < SN; k++) {
        int32_t xv = xs[k];
        if (xv == INT32_MIN) {
            cr_assert_eq(yi[k * 8 + 0], py_div(xv, -5));
            continue; /* pow/neg/abs overflow: no expectation */
        }
        int32_t want[8] = {py_div(xv, -5), py_floordiv(xv, 5), py_mod(xv, -5),
                           py_floordiv(xv, k - 3), py_mod(xv, k - 3), xv * xv,
                           xv > 10 ? 10 : xv < -10 ? -10 : xv, xv < 0 ? -xv : xv};
        for (int c = 0; c < 8; c++)
            cr_assert_eq(yi[k * 8 + c], want[c], "k=%d x=%d op %d: %d != %d", k, xv, c,
                         yi[k * 8 + c], want[c]);
        float uv = us[k], a = fabsf(uv);
        float r7 = fmodf(uv * 7, 2.5f);
        if (r7 != 0 && r7 < 0)
            r7 += 2.5f;
        float wantf[10] = {exp2f(uv), log2f(a + 1), sqrtf(a), 1.0f / sqrtf(a + 1), tanhf(uv),
                           1.0f / (1.0f + expf(-uv)), floorf(uv * 3), ceilf(uv * 3),
                           uv > 0 ? uv : -uv * 2, r7};
        for (int c = 0; c < 10; c++)
            cr_assert(fabsf(wf[k * 10 + c] - wantf[c]) <= 1e-5f * (1 + fabsf(wantf[c])),
                      "k=%d u=%g op %d: %g != %g", k, uv, c, wf[k * 10 + c], wantf[c]);
        double ud2 = uv;
        cr_assert(fabs(dd[k] - (ud2 * 3.0 + floor(ud2 / 0.25))) < 1e-12);
        cr_assert_eq(bo[k], (uint8_t)(xv > 0 && xv != 5));
        cr_assert_eq(hh[k], tilec_f32_to_f16(uv));
    }
    uint32_t r0 = 0, r1 = 0; /* two's complement, as the kernel wraps (xs[2] is INT32_MIN) */
    for (int k = 0; k < 6; k++) {
        r0 += (uint32_t)xs[k];
        r1 += (uint32_t)xs[6 + k];
    }
    cr_assert_eq(l[0], (int32_t)(r0 + r1 * 1000u));
    cr_assert_eq(l[1], (int32_t)((uint32_t)xs[0] + (uint32_t)xs[3] + (uint32_t)xs[6] + (uint32_t)xs[9]));
    cr_assert_eq(l[2], (int32_t)(2u * ((uint32_t)xs[0] + (uint32_t)xs[1] + (uint32_t)xs[2] + (uint32_t)xs[3])));
    for (int k = 0; k < nsym; k++)
        cr_assert_eq(so[k], 2.0f * ((float)k + (k == 0 ? 10.0f : 0.0f)));
    float acc = 0;
    for (int k = 0; k < SN; k++) {
        acc += tilec_f16_to_f32(tilec_f32_to_f16(us[k]));
        float got = tilec_f16_to_f32(gg[k]);
        cr_assert(fabsf(got - acc) <= 2e-3f * (1 + fabsf(acc)), "cumsum k=%d %g vs %g", k, got, acc);
    }
    for (int k = 0; k < 10; k++)
        P->mem_free(D, args[k]);
    P->module_free(mod);
}

/* ---- fork and threads ------------------------------------------------------------------ */

enum { FN = 5000 }; /* 40 blocks of 128: the pool is used */

/* Launches vadd on D over a = b = 0..FN-1 into c (first set to -1) and
 * checks c = 2a.  Safe in a forked child and in a plain thread (no
 * Criterion asserts): 0, or the step that failed. */
static int vadd_check(tilec_pdevice_t *dev, tilec_pmodule_t *mod, tilec_pmem_t **args)
{
    static const int64_t syms[1] = {FN};
    float *c = malloc(sizeof(float) * FN);
    if (!c)
        return 1;
    for (int i = 0; i < FN; i++)
        c[i] = -1;
    int bad = 0;
    tilec_plaunch_t la = {.struct_size = sizeof la, .nargs = 3, .args = args, .nsyms = 1, .syms = syms};
    if (P->mem_write(dev, args[2], 0, c, sizeof(float) * FN) != TILEC_PS_OK)
        bad = 2;
    else if (P->launch(dev, mod, &la) != TILEC_PS_OK)
        bad = 3;
    else if (P->mem_read(dev, args[2], 0, c, sizeof(float) * FN) != TILEC_PS_OK)
        bad = 4;
    for (int i = 0; !bad && i < FN; i++)
        if (c[i] != 2.0f * (float)i)
            bad = 5;
    free(c);
    return bad;
}

static tilec_pmodule_t *vadd_module(void)
{
    kb_t b;
    build_add(&b);
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(&b);
    return mod;
}

static void vadd_args(tilec_pdevice_t *dev, tilec_pmem_t **args)
{
    static float a[FN];
    for (int i = 0; i < FN; i++)
        a[i] = (float)i;
    for (int k = 0; k < 3; k++) {
        args[k] = NULL;
        cr_assert_eq(P->mem_alloc(dev, TILEC_PMEM_DEVICE, sizeof a, &args[k]), TILEC_PS_OK);
        cr_assert_eq(P->mem_write(dev, args[k], 0, a, sizeof a), TILEC_PS_OK);
    }
}

/* Forks, runs vadd_check in the child (under an alarm, so a deadlock
 * fails rather than hangs), optionally closes the device there, and
 * returns the child's wait status. */
static int fork_vadd(tilec_pmodule_t *mod, tilec_pmem_t **args, int nested)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        alarm(60);
        int bad = vadd_check(D, mod, args);
        if (!bad && nested) {
            /* the child's own pool now runs; its children must work too */
            pid_t g = fork();
            if (g < 0)
                _exit(6);
            if (g == 0) {
                alarm(60);
                _exit(vadd_check(D, mod, args));
            }
            int gs = 0;
            if (waitpid(g, &gs, 0) != g || !WIFEXITED(gs) || WEXITSTATUS(gs) != 0)
                bad = 7;
        }
        if (!bad)
            P->device_close(D);
        _exit(bad);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return st;
}

/* A process forked after the worker pool started can launch (the
 * conformance runner forks per case).  Many forks: a child's new pool
 * once raced its first job (a worker took a job before it was posted). */
Test(cpu_kernel, launch_after_fork, .init = setup, .fini = teardown)
{
    tilec_pmodule_t *mod = vadd_module();
    tilec_pmem_t *args[3];
    vadd_args(D, args);
    cr_assert_eq(vadd_check(D, mod, args), 0); /* the pool starts */
    for (int k = 0; k < 40; k++) {
        int st = fork_vadd(mod, args, k % 4 == 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork %d: child status %d", k, st);
        cr_assert_eq(vadd_check(D, mod, args), 0, "parent after fork %d", k);
    }
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
}

typedef struct launcher {
    tilec_pdevice_t *dev;
    tilec_pmodule_t *mod;
    tilec_pmem_t *args[3];
    int iters;      /* > 0: that many launches; 0: until stop */
    pthread_mutex_t lock;
    int stop;       /* under lock (a mutex, not an atomic: helgrind-clean) */
    int done, bad;  /* launches run, first failure */
} launcher_t;

static int launcher_stopped(launcher_t *l)
{
    if (l->iters)
        return l->done >= l->iters;
    pthread_mutex_lock(&l->lock);
    int stop = l->stop;
    pthread_mutex_unlock(&l->lock);
    return stop;
}

static void *launcher_main(void *arg)
{
    launcher_t *l = arg;
    while (!launcher_stopped(l)) {
        l->bad = vadd_check(l->dev, l->mod, l->args);
        if (l->bad)
            break;
        l->done++;
    }
    return NULL;
}

/* Forks while another thread launches on the same device: the fork waits
 * for the launch in flight, and the child (which has no launching thread)
 * can launch and close the device. */
Test(cpu_kernel, fork_while_launching, .init = setup, .fini = teardown)
{
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
    /* clang 14's ASan allocator does not take its locks around fork: a
     * child forked while the launcher thread allocates deadlocks inside
     * ASan's malloc (seen under make sanitize; docs/sanitizers.md). */
    cr_skip_test("ASan's allocator is not fork-safe while another thread allocates");
#endif
#endif
    tilec_pmodule_t *mod = vadd_module();
    launcher_t l = {.dev = D, .mod = mod, .lock = PTHREAD_MUTEX_INITIALIZER};
    vadd_args(D, l.args);
    tilec_pmem_t *mine[3];
    vadd_args(D, mine);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, launcher_main, &l), 0);
    for (int k = 0; k < 30; k++) {
        int st = fork_vadd(mod, mine, 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork %d: child status %d", k, st);
    }
    pthread_mutex_lock(&l.lock);
    l.stop = 1;
    pthread_mutex_unlock(&l.lock);
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert_eq(l.bad, 0, "launching thread failed at step %d", l.bad);
    for (int i = 0; i < 3; i++) {
        P->mem_free(D, l.args[i]);
        P->mem_free(D, mine[i]);
    }
    P->module_free(mod);
}

/* Two threads launching at once on one device, and two more on a second
 * handle (all four share the process's pool and take turns); every result
 * is right. */
Test(cpu_kernel, concurrent_launches, .init = setup, .fini = teardown)
{
    tilec_pmodule_t *mod = vadd_module();
    tilec_pdevice_t *D2 = NULL;
    cr_assert_eq(P->device_open(0, &D2), TILEC_PS_OK, "%s", P->last_error());
    launcher_t l[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        l[t] = (launcher_t){.dev = t < 2 ? D : D2, .mod = mod, .iters = 25,
                            .lock = PTHREAD_MUTEX_INITIALIZER};
        vadd_args(l[t].dev, l[t].args);
    }
    for (int t = 0; t < 4; t++)
        cr_assert_eq(pthread_create(&th[t], NULL, launcher_main, &l[t]), 0);
    for (int t = 0; t < 4; t++) {
        cr_assert_eq(pthread_join(th[t], NULL), 0);
        cr_assert_eq(l[t].bad, 0, "thread %d failed at step %d", t, l[t].bad);
        cr_assert_eq(l[t].done, 25);
        for (int i = 0; i < 3; i++)
            P->mem_free(l[t].dev, l[t].args[i]);
    }
    P->device_close(D2);
    P->module_free(mod);
}

/* exp2 over an on-chip row, F[0, i] = exp2(F[i]) (cpu_vec.c writes the
 * loop with explicit vectors where the host has AVX-512 and the compiler
 * is gcc), against the same over a global tensor (the compiler's
 * vectorization of tc_exp2f): the same bits for every 1021st float bit
 * pattern (all exponents, both signs, subnormals, inf, NaNs); the rows are 1,000 floats, so each ends in the
 * scalar loop. */
Test(cpu_math, exp2_explicit_vectors_same_bits, .init = setup, .fini = teardown)
{
    enum { W = 1000, R = (int)(0x100000000ull / 1021 / W) + 1 };
    kb_t b;
    kb_init(&b, "exp2v");
    tilec_ir_buffer_t *X = BUF(&b, "X", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(&b, R), I(&b, W));
    tilec_ir_buffer_t *Y1 = BUF(&b, "Y1", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(&b, R), I(&b, W));
    tilec_ir_buffer_t *Y2 = BUF(&b, "Y2", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 2, I(&b, R), I(&b, W));
    tilec_ir_buffer_t *Fr = BUF(&b, "F", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, I(&b, 1), I(&b, W));
    grid(&b, 1, I(&b, R), NULL);
    tilec_ir_var_t *bx = b.k->block[0];
    tilec_ir_var_t *i = loop(&b, "i", TILEC_LOOP_PARALLEL, I(&b, W));
    store(&b, Y1, V(&b, bx), V(&b, i), UN(&b, TILEC_UN_EXP2, LOAD(&b, X, V(&b, bx), V(&b, i))));
    end(&b);
    tilec_ir_stmt_t *s = emit(&b, TILEC_ST_COPY);
    region(&b, &s->u.copy.src, X, V(&b, bx), I(&b, 0), 1, W);
    region(&b, &s->u.copy.dst, Fr, I(&b, 0), I(&b, 0), 1, W);
    i = loop(&b, "j", TILEC_LOOP_PARALLEL, I(&b, W));
    store(&b, Fr, I(&b, 0), V(&b, i), UN(&b, TILEC_UN_EXP2, LOAD(&b, Fr, I(&b, 0), V(&b, i))));
    end(&b);
    s = emit(&b, TILEC_ST_COPY);
    region(&b, &s->u.copy.src, Fr, I(&b, 0), I(&b, 0), 1, W);
    region(&b, &s->u.copy.dst, Y2, V(&b, bx), I(&b, 0), 1, W);
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(&b);
    const void *src;
    size_t len;
    cr_assert_eq(P->module_data(mod, TILEC_PDATA_SOURCE, &src, &len), TILEC_PS_OK);
    cr_assert(strstr(src, "tc_exp2f_v(") != NULL, "the on-chip exp2 loop has no explicit vector form");
    size_t n = (size_t)R * W;
    float *x = malloc(n * 4), *y1 = malloc(n * 4), *y2 = malloc(n * 4);
    cr_assert(x && y1 && y2);
    for (size_t k = 0; k < n; k++) {
        uint32_t u = (uint32_t)(k * 1021);
        memcpy(&x[k], &u, 4);
    }
    tilec_pmem_t *args[3] = {mem_from(x, n * 4), mem_from(x, n * 4), mem_from(x, n * 4)};
    run(mod, args, 3, NULL, 0);
    cr_assert_eq(P->mem_read(D, args[1], 0, y1, n * 4), TILEC_PS_OK);
    cr_assert_eq(P->mem_read(D, args[2], 0, y2, n * 4), TILEC_PS_OK);
    size_t bad = 0;
    for (size_t k = 0; k < n; k++)
        if (memcmp(&y1[k], &y2[k], 4) && bad++ < 5)
            cr_log_error("exp2(%a): %a (global) vs %a (on chip)", (double)x[k], (double)y1[k], (double)y2[k]);
    cr_expect_eq(bad, 0, "%zu of %zu results differ", bad, n);
    for (int k = 0; k < 3; k++)
        P->mem_free(D, args[k]);
    P->module_free(mod);
    free(x); free(y1); free(y2);
}

/* ---- vectorized float math against libm ------------------------------------------------ */

/* Distance of got from the exact value ref (double libm, far more precise
 * than float) in units of the float ulp at ref (2^-149 for subnormals). */
static double ulp_err(float got, double ref)
{
    if (isnan(ref))
        return isnan(got) ? 0 : INFINITY;
    float rf = (float)ref;
    if (isinf(rf))
        return got == rf ? 0 : INFINITY;
    if (isnan(got) || isinf(got))
        return INFINITY;
    double u = fabs(ref) < 0x1p-126 ? 0x1p-149 : ldexp(1.0, ilogb(ref) - 23);
    return fabs((double)got - ref) / u;
}

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_rsqrt(double x) { return 1.0 / sqrt(x); }

/* Y_op[i] = op(X[i]) for every float math function, in T.Parallel loops
 * (the vectorized path), over a sweep of float bit patterns (every
 * 2039th: all exponents, both signs, subnormals, inf and NaN) plus edge
 * values; each result within its documented bound (cpu_prelude.h) of the
 * exact value, special values exact. */
Test(cpu_math, ulp_bounds_over_a_sweep, .init = setup, .fini = teardown)
{
    static const struct { tilec_unop_t op; double (*ref)(double); double bound; const char *name; } F[] = {
        {TILEC_UN_EXP, exp, 1.5, "exp"},      {TILEC_UN_EXP2, exp2, 1.5, "exp2"},
        {TILEC_UN_LOG, log, 1.5, "log"},      {TILEC_UN_LOG2, log2, 2.0, "log2"},
        {TILEC_UN_TANH, tanh, 3.0, "tanh"},   {TILEC_UN_SIGMOID, ref_sigmoid, 3.0, "sigmoid"},
        {TILEC_UN_RSQRT, ref_rsqrt, 1.5, "rsqrt"}, {TILEC_UN_SQRT, sqrt, 0.5, "sqrt"},
    };
    enum { NF = sizeof F / sizeof F[0], BLK = 1024 };
    static const float edge[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f, 0x1p-126f,
                                 0x1.fffffcp-127f, 88.72f, 88.7228f, 89.0f, -87.3f, -103.9f, -104.0f,
                                 -150.0f, -149.5f, 127.99f, 128.0f, -126.0f, 1.0f, 0x1.000002p0f,
                                 0x1.fffffep-1f, 9.0f, 9.2f, -0.55f, 0.5493f, 1e-30f, -1e-30f};
    size_t n = 0, cap = (0x100000000ull / 2039) + sizeof edge / sizeof edge[0] + BLK;
    float *x = malloc(cap * sizeof(float));
    cr_assert_not_null(x);
    for (uint64_t b = 0; b < 0x100000000ull; b += 2039) {
        uint32_t u = (uint32_t)b;
        memcpy(&x[n++], &u, 4);
    }
    const size_t e0 = n; /* x[e0 + i] = edge[i] */
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        x[n++] = edge[i];
    while (n % BLK)
        x[n++] = 1.0f;

    kb_t b;
    kb_init(&b, "math");
    tilec_ir_var_t *nv = tilec_ir_var_add(&b.a, b.k, "n", TILEC_INT32, TILEC_VAR_SYM);
    tilec_ir_buffer_t *X = BUF(&b, "X", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, V(&b, nv), NULL);
    tilec_ir_buffer_t *Y[NF];
    for (int f = 0; f < NF; f++)
        Y[f] = BUF(&b, F[f].name, TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, V(&b, nv), NULL);
    grid(&b, 1, CEILDIV(&b, V(&b, nv), BLK), NULL);
    tilec_ir_var_t *bx = b.k->block[0];
    for (int f = 0; f < NF; f++) {
        tilec_ir_var_t *i = loop(&b, "i", TILEC_LOOP_PARALLEL, I(&b, BLK));
        tilec_ir_expr_t *at = ADD(&b, MUL(&b, V(&b, bx), I(&b, BLK)), V(&b, i));
        st1(&b, Y[f], at, UN(&b, F[f].op, LD1(&b, X, at)));
        end(&b);
    }
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    const void *src;
    size_t len;
    cr_assert_eq(P->module_data(mod, TILEC_PDATA_SOURCE, &src, &len), TILEC_PS_OK);
    cr_assert(strstr(src, "tc_expf(") && strstr(src, "tc_tanhf(") && strstr(src, "tc_log2f("),
              "the generated C does not call the prelude's math");
    kb_free(&b);
    tilec_pmem_t *args[1 + NF];
    args[0] = mem_from(x, n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    cr_assert_not_null(y);
    for (int f = 0; f < NF; f++)
        args[1 + f] = mem_from(x, n * sizeof(float));
    int64_t syms[1] = {(int64_t)n};
    run(mod, args, 1 + NF, syms, 1);
    for (int f = 0; f < NF; f++) {
        cr_assert_eq(P->mem_read(D, args[1 + f], 0, y, n * sizeof(float)), TILEC_PS_OK);
        double worst = 0;
        size_t wi = 0;
        for (size_t i = 0; i < n; i++) {
            double e = ulp_err(y[i], F[f].ref((double)x[i]));
            if (e > worst) {
                worst = e;
                wi = i;
            }
        }
        cr_assert(worst <= F[f].bound, "%s: %.3f ulp at %a (got %a, want %a), bound %.1f", F[f].name, worst,
                  (double)x[wi], (double)y[wi], F[f].ref((double)x[wi]), F[f].bound);
        /* signs of zero results: tanh(-0) = -0, sqrt(-0) = -0 */
        if (F[f].op == TILEC_UN_TANH || F[f].op == TILEC_UN_SQRT)
            cr_assert(y[e0 + 1] == 0 && signbit(y[e0 + 1]) && !signbit(y[e0]), "%s(-0) = %a, (+0) = %a",
                      F[f].name, (double)y[e0 + 1], (double)y[e0]);
        if (F[f].op == TILEC_UN_EXP || F[f].op == TILEC_UN_EXP2)
            cr_assert(y[e0 + 3] == 0 && y[e0 + 2] == INFINITY, "%s(-inf) = %a, (inf) = %a", F[f].name,
                      (double)y[e0 + 3], (double)y[e0 + 2]);
    }
    for (int i = 0; i < 1 + NF; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
    free(x);
    free(y);
}

/* ---- TILEC_NUM_THREADS ----------------------------------------------------------------- */

/* Threads of this process (entries of /proc/self/task). */
static int task_count(void)
{
    DIR *d = opendir("/proc/self/task");
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void device_name(char *out, size_t n)
{
    tilec_pdevice_info_t info = {.struct_size = sizeof info};
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_OK);
    snprintf(out, n, "%s", info.name);
}

/* The pool has TILEC_NUM_THREADS threads in all (the launcher is one of
 * them), is resized when the value changes, and is shared: a second
 * device handle adds no threads. */
Test(cpu_pool, num_threads_sizes_the_pool, .init = setup, .fini = teardown)
{
    tilec_pmodule_t *mod = vadd_module();
    tilec_pmem_t *args[3];
    vadd_args(D, args);
    int base = task_count();
    static const int sizes[] = {3, 1, 5, 2};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        char v[16], name[256], want[32];
        snprintf(v, sizeof v, "%d", sizes[k]);
        cr_assert_eq(setenv("TILEC_NUM_THREADS", v, 1), 0);
        cr_assert_eq(vadd_check(D, mod, args), 0, "TILEC_NUM_THREADS=%s", v);
        cr_assert_eq(task_count(), base + sizes[k] - 1, "TILEC_NUM_THREADS=%s", v);
        device_name(name, sizeof name);
        snprintf(want, sizeof want, "(%d threads)", sizes[k]);
        cr_assert(strstr(name, want) != NULL, "%s for TILEC_NUM_THREADS=%s", name, v);
    }
    tilec_pdevice_t *D2 = NULL;
    cr_assert_eq(P->device_open(0, &D2), TILEC_PS_OK, "%s", P->last_error());
    tilec_pmem_t *args2[3];
    vadd_args(D2, args2);
    cr_assert_eq(vadd_check(D2, mod, args2), 0);
    cr_assert_eq(task_count(), base + 1, "a second handle started its own threads");
    for (int i = 0; i < 3; i++)
        P->mem_free(D2, args2[i]);
    P->device_close(D2);
    cr_assert_eq(vadd_check(D, mod, args), 0, "the pool survives closing another handle");
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->device_close(D);
    D = NULL;
    cr_assert_eq(task_count(), base, "closing the last handle joins the workers");
    P->module_free(mod);
}

/* Unset or empty: the CPUs of the affinity mask. */
Test(cpu_pool, default_is_the_affinity_mask, .init = setup, .fini = teardown)
{
    cr_assert_eq(unsetenv("TILEC_NUM_THREADS"), 0);
    cpu_set_t all, one;
    cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
    char name[256], want[32];
    device_name(name, sizeof name);
    snprintf(want, sizeof want, "(%d threads)", CPU_COUNT(&all));
    cr_assert(strstr(name, want) != NULL, "%s, want %s", name, want);
    int first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
    cr_assert_eq(setenv("TILEC_NUM_THREADS", "", 1), 0);
    device_name(name, sizeof name);
    cr_assert(strstr(name, "(1 threads)") != NULL, "%s", name);
    tilec_pmodule_t *mod = vadd_module();
    tilec_pmem_t *args[3];
    vadd_args(D, args);
    int base = task_count();
    cr_assert_eq(vadd_check(D, mod, args), 0);
    cr_assert_eq(task_count(), base, "one CPU: no workers");
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
    sched_setaffinity(0, sizeof all, &all);
}

/* A value that is not a thread count fails the launch with a message that
 * names it (and the device name falls back to the default count). */
Test(cpu_pool, bad_values_are_errors, .init = setup, .fini = teardown)
{
    tilec_pmodule_t *mod = vadd_module();
    tilec_pmem_t *args[3];
    vadd_args(D, args);
    static const char *bad[] = {"0", "-2", "abc", "4x", "1.5", "99999", "99999999999999999999", " "};
    static const int64_t syms[1] = {FN};
    tilec_plaunch_t la = {.struct_size = sizeof la, .nargs = 3, .args = args, .nsyms = 1, .syms = syms};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cr_assert_eq(setenv("TILEC_NUM_THREADS", bad[k], 1), 0);
        cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_INVALID_ARGUMENT, "value \"%s\"", bad[k]);
        cr_assert(strstr(P->last_error(), "TILEC_NUM_THREADS") != NULL, "%s", P->last_error());
        char name[256];
        device_name(name, sizeof name);
        cr_assert(strstr(name, "threads)") != NULL, "%s", name);
    }
    cr_assert_eq(setenv("TILEC_NUM_THREADS", " 2 ", 1), 0); /* blanks around a number are fine */
    cr_assert_eq(vadd_check(D, mod, args), 0, "%s", P->last_error());
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
}

/* ---- SDK utilities ---------------------------------------------------------------------- */

static void sha_hex(const void *d, size_t n, char hex[65])
{
    uint8_t dg[32];
    tilec_sha256(d, n, dg);
    tilec_sha256_hex(dg, hex);
}

Test(sdk, sha256_vectors)
{
    char hex[65];
    sha_hex("", 0, hex);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha_hex("abc", 3, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha_hex(m, strlen(m), hex);
    cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* one million 'a', fed in uneven pieces */
    tilec_sha256_t st;
    tilec_sha256_init(&st);
    static char chunk[997];
    memset(chunk, 'a', sizeof chunk);
    size_t left = 1000000;
    for (size_t piece = 1; left; piece = piece % 997 + 1) {
        size_t k = piece < left ? piece : left;
        tilec_sha256_update(&st, chunk, k);
        left -= k;
    }
    uint8_t dg[32];
    tilec_sha256_final(&st, dg);
    tilec_sha256_hex(dg, hex);
    cr_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* every length around the padding boundary agrees with one-shot hashing */
    char buf[130];
    memset(buf, 'x', sizeof buf);
    for (size_t n = 50; n < 130; n++) {
        char h1[65], h2[65];
        sha_hex(buf, n, h1);
        tilec_sha256_init(&st);
        tilec_sha256_update(&st, buf, n / 3);
        tilec_sha256_update(&st, buf + n / 3, n - n / 3);
        tilec_sha256_final(&st, dg);
        tilec_sha256_hex(dg, h2);
        cr_assert_str_eq(h1, h2);
    }
}

Test(sdk, cache_write_read)
{
    char dir[] = "/tmp/tilec-test-sdk-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char sub[256];
    snprintf(sub, sizeof sub, "%s/a/b", dir);
    char *p = tilec_sdk_cache_path(sub, "cpu-", "00ff", ".so");
    cr_assert_not_null(p);
    char want[300];
    snprintf(want, sizeof want, "%s/cpu-00ff.so", sub);
    cr_assert_str_eq(p, want);
    cr_assert_null(tilec_sdk_cache_path(NULL, "x", "y", "z"));
    void *data = NULL;
    size_t len = 0;
    cr_assert_eq(tilec_sdk_file_read(p, &data, &len), -1);
    cr_assert_eq(errno, ENOENT);
    static char big[100000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(i * 31);
    cr_assert_eq(tilec_sdk_cache_write(p, big, sizeof big), 0);
    cr_assert_eq(tilec_sdk_file_read(p, &data, &len), 0);
    cr_assert_eq(len, sizeof big);
    cr_assert_eq(memcmp(data, big, len), 0);
    cr_assert_eq(((char *)data)[len], '\0');
    free(data);
    /* overwrite with something shorter: no leftovers, no temp files */
    cr_assert_eq(tilec_sdk_cache_write(p, "hi", 2), 0);
    cr_assert_eq(tilec_sdk_file_read(p, &data, &len), 0);
    cr_assert_eq(len, 2);
    free(data);
    DIR *d = opendir(sub);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    cr_assert_eq(n, 1);
    /* a file in the way of the directory */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/cpu-00ff.so/x", sub);
    cr_assert_eq(tilec_sdk_cache_write(bad, "z", 1), -1);
    unlink(p);
    free(p);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/a", dir);
    rmdir(sub);
    rmdir(dir);
}

Test(sdk, error_buffer)
{
    cr_assert_str_eq(tilec_sdk_error_get(), "");
    tilec_sdk_error_set("code %d: %s", 42, "oops");
    cr_assert_str_eq(tilec_sdk_error_get(), "code 42: oops");
    tilec_sdk_error_append(" (+%s)", "more");
    cr_assert_str_eq(tilec_sdk_error_get(), "code 42: oops (+more)");
    /* long messages are kept whole */
    static char longmsg[20000];
    memset(longmsg, 'm', sizeof longmsg - 1);
    tilec_sdk_error_set("%s", longmsg);
    cr_assert_eq(strlen(tilec_sdk_error_get()), sizeof longmsg - 1);
    tilec_sdk_error_clear();
    cr_assert_str_eq(tilec_sdk_error_get(), "");
}

/* The generated 16-bit conversions agree with the SDK's bit for bit:
 * every float16 and bfloat16 pattern widened, and floats of every kind
 * (random patterns, halfway cases, subnormals, inf, NaN) narrowed; the
 * contiguous float -> float16 copy goes through the prelude's row
 * converter (vcvtps2ph where the arch has it), the cast through the
 * branch-free scalar one.  arch: -march (NULL: native). */
enum { CVN = 65536, CVF = 4 * 65536 };
static void check_f16_conversions(const char *arch)
{
    kb_t b;
    kb_init(&b, "conv");
    tilec_ir_buffer_t *H = BUF(&b, "H", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, 1, I(&b, CVN), NULL);
    tilec_ir_buffer_t *HF = BUF(&b, "HF", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, I(&b, CVN), NULL);
    tilec_ir_buffer_t *Bb = BUF(&b, "Bb", TILEC_SCOPE_GLOBAL, TILEC_BFLOAT16, 1, I(&b, CVN), NULL);
    tilec_ir_buffer_t *BF = BUF(&b, "BF", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, I(&b, CVN), NULL);
    tilec_ir_buffer_t *Fv = BUF(&b, "F", TILEC_SCOPE_GLOBAL, TILEC_FLOAT32, 1, I(&b, CVF), NULL);
    tilec_ir_buffer_t *FH = BUF(&b, "FH", TILEC_SCOPE_GLOBAL, TILEC_FLOAT16, 1, I(&b, CVF), NULL);
    tilec_ir_buffer_t *FB = BUF(&b, "FB", TILEC_SCOPE_GLOBAL, TILEC_BFLOAT16, 1, I(&b, CVF), NULL);
    grid(&b, 1, I(&b, 1), NULL);
    copy1(&b, H, CVN, 1, HF, CVN, 1);
    copy1(&b, Bb, CVN, 1, BF, CVN, 1);
    copy1(&b, Fv, CVF, 1, FH, CVF, 1);
    /* through an expression too: cast in a parallel loop */
    tilec_ir_var_t *i = loop(&b, "i", TILEC_LOOP_PARALLEL, I(&b, CVF));
    st1(&b, FB, V(&b, i), tilec_ir_cast(&b.a, TILEC_BFLOAT16, LD1(&b, Fv, V(&b, i))));
    end(&b);
    tilec_pmodule_t *mod = NULL;
    char *text = tilec_ir_print(b.m);
    cr_assert_not_null(text);
    tilec_pcompile_options_t o = {.struct_size = sizeof o, .opt_level = 3, .arch = arch};
    cr_assert_eq(P->compile(D, text, strlen(text), &o, &mod), TILEC_PS_OK, "%s", P->last_error());
    free(text);
    kb_free(&b);
    uint16_t *h = malloc(CVN * 2), *bb = malloc(CVN * 2), *fh = malloc(CVF * 2), *fb = malloc(CVF * 2);
    float *hf = malloc(CVN * 4), *bf = malloc(CVN * 4), *f = malloc(CVF * 4);
    for (int k = 0; k < CVN; k++)
        h[k] = bb[k] = (uint16_t)k;
    unsigned seed = 99;
    for (int k = 0; k < CVN; k++) {
        /* around each half value: exact, +-1/2 ulp (ties), and neighbours */
        float v = tilec_f16_to_f32((uint16_t)k);
        uint32_t x;
        memcpy(&x, &v, 4);
        uint32_t pat[4] = {x, x + 0x1000u, x - 0x1000u, x + 0x8000u};
        seed = seed * 1664525u + 1013904223u;
        pat[3] = k % 2 ? pat[3] + (seed >> 20) : seed; /* and random patterns */
        memcpy(&f[4 * k], pat, sizeof pat);
    }
    tilec_pmem_t *args[7] = {mem_from(h, CVN * 2), mem_from(hf, CVN * 4), mem_from(bb, CVN * 2),
                             mem_from(bf, CVN * 4), mem_from(f, CVF * 4), mem_from(fh, CVF * 2),
                             mem_from(fb, CVF * 2)};
    run(mod, args, 7, NULL, 0);
    P->mem_read(D, args[1], 0, hf, CVN * 4);
    P->mem_read(D, args[3], 0, bf, CVN * 4);
    P->mem_read(D, args[5], 0, fh, CVF * 2);
    P->mem_read(D, args[6], 0, fb, CVF * 2);
    for (int k = 0; k < CVN; k++) {
        float w1 = tilec_f16_to_f32((uint16_t)k), w2 = tilec_bf16_to_f32((uint16_t)k);
        cr_assert_eq(memcmp(&hf[k], &w1, 4), 0, "f16 %04x -> %g, want %g (arch %s)", k, hf[k], w1,
                     arch ? arch : "native");
        cr_assert_eq(memcmp(&bf[k], &w2, 4), 0, "bf16 %04x -> %g, want %g", k, bf[k], w2);
    }
    for (int k = 0; k < CVF; k++) {
        uint32_t x;
        memcpy(&x, &f[k], 4);
        cr_assert_eq(fh[k], tilec_f32_to_f16(f[k]), "f32 %08x -> f16 %04x, want %04x (arch %s)", x, fh[k],
                     tilec_f32_to_f16(f[k]), arch ? arch : "native");
        cr_assert_eq(fb[k], tilec_f32_to_bf16(f[k]), "f32 %08x -> bf16 %04x, want %04x", x, fb[k],
                     tilec_f32_to_bf16(f[k]));
    }
    for (int k = 0; k < 7; k++)
        P->mem_free(D, args[k]);
    free(h); free(bb); free(fh); free(fb); free(hf); free(bf); free(f);
    P->module_free(mod);
}

Test(cpu_kernel, f16_conversions_exact, .init = setup, .fini = teardown)
{
    check_f16_conversions(NULL);
#if defined(__x86_64__)
    /* native is the host's widest; also no F16C (scalar) and F16C (8 wide) */
    check_f16_conversions("x86-64");
    if (host_has("f16c") && host_has("avx2") && host_has("fma"))
        check_f16_conversions("x86-64-v3");
#endif
}
