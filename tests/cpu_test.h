/*
 * tests/cpu_test.h — what the CPU backend's unit tests share: the plugin
 * table from tilec_cpu_embedded_query (the copy linked into libtilec.a,
 * exactly as the loader gets it) with a device opened per test, the IR
 * constructors the tests build kernels with (printed to IR text, read back,
 * compiled and launched), the kernels several files use (a ragged
 * elementwise add, the tiled GEMM) and the host's CPU flags.  Included by
 * tests/test_cpu*.c; Criterion runs every test in its own process, so
 * environment changes such as CC stay local to a test.
 */
#ifndef TILEC_TESTS_CPU_TEST_H
#define TILEC_TESTS_CPU_TEST_H

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

static inline tilec_plugin_host_t host_v1(const char *cache_dir)
{
    tilec_plugin_host_t h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    h.abi_min = TILEC_ABI_MAKE(1, 0);
    h.abi_max = TILEC_PLUGIN_ABI_VERSION;
    h.cache_dir = cache_dir;
    return h;
}

static inline void open_plugin(const char *cache_dir)
{
    tilec_plugin_host_t h = host_v1(cache_dir);
    uint32_t abi = 0;
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &P), TILEC_PS_OK);
    cr_assert_eq(abi, TILEC_PLUGIN_ABI_VERSION);
    cr_assert_eq(P->device_open(0, &D), TILEC_PS_OK, "%s", P->last_error());
}

static inline void setup(void) { open_plugin(NULL); }
static inline void teardown(void)
{
    if (P && D)
        P->device_close(D);
    D = NULL;
}

/* ---- IR construction helpers ---------------------------------------------------------- */

typedef struct kb {
    tilec_arena_t a;
    tilec_ir_module_t *m;
    tilec_ir_kernel_t *k;
    tilec_ir_stmt_t **tail[16]; /* append points: [0] kernel body, deeper: open loops */
    int depth;
} kb_t;

static inline void kb_init(kb_t *b, const char *name)
{
    memset(b, 0, sizeof *b);
    tilec_arena_init(&b->a);
    b->m = tilec_ir_module_new(&b->a);
    b->k = tilec_ir_kernel_new(&b->a, name);
    b->m->kernel = b->k;
    b->tail[0] = &b->k->body;
}

static inline void kb_free(kb_t *b) { tilec_arena_destroy(&b->a); }

static inline tilec_ir_expr_t *I(kb_t *b, int64_t v) { return tilec_ir_int(&b->a, v, TILEC_INT32); }
static inline tilec_ir_expr_t *F(kb_t *b, double v, tilec_dtype_t t) { return tilec_ir_float(&b->a, v, t); }
static inline tilec_ir_expr_t *V(kb_t *b, tilec_ir_var_t *v) { return tilec_ir_varref(&b->a, v); }
static inline tilec_ir_expr_t *BIN(kb_t *b, tilec_binop_t op, tilec_ir_expr_t *x, tilec_ir_expr_t *y)
{
    return tilec_ir_binary(&b->a, op, x, y);
}
static inline tilec_ir_expr_t *ADD(kb_t *b, tilec_ir_expr_t *x, tilec_ir_expr_t *y) { return BIN(b, TILEC_BIN_ADD, x, y); }
static inline tilec_ir_expr_t *MUL(kb_t *b, tilec_ir_expr_t *x, tilec_ir_expr_t *y) { return BIN(b, TILEC_BIN_MUL, x, y); }
/* ceildiv(x, c) = (x + c - 1) // c */
static inline tilec_ir_expr_t *CEILDIV(kb_t *b, tilec_ir_expr_t *x, int64_t c)
{
    return BIN(b, TILEC_BIN_FLOORDIV, ADD(b, x, I(b, c - 1)), I(b, c));
}
static inline tilec_ir_expr_t *LOAD(kb_t *b, tilec_ir_buffer_t *buf, tilec_ir_expr_t *i0, tilec_ir_expr_t *i1)
{
    tilec_ir_expr_t *idx[2] = {i0, i1};
    return tilec_ir_load(&b->a, buf, idx);
}

static inline tilec_ir_buffer_t *BUF(kb_t *b, const char *name, tilec_scope_t s, tilec_dtype_t t, int nd,
                              tilec_ir_expr_t *d0, tilec_ir_expr_t *d1)
{
    tilec_ir_expr_t *shape[2] = {d0, d1};
    tilec_ir_buffer_t *r = tilec_ir_buffer_add(&b->a, b->k, name, s, t, nd, shape);
    if (s == TILEC_SCOPE_GLOBAL)
        b->k->nparams++;
    return r;
}

static inline void grid(kb_t *b, int n, tilec_ir_expr_t *g0, tilec_ir_expr_t *g1)
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

static inline tilec_ir_stmt_t *emit(kb_t *b, tilec_stmt_kind_t kind)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(&b->a, kind);
    *b->tail[b->depth] = s;
    b->tail[b->depth] = &s->next;
    return s;
}

/* opens a loop; statements go into its body until end_loop */
static inline tilec_ir_var_t *loop(kb_t *b, const char *name, tilec_loop_kind_t kind, tilec_ir_expr_t *ext)
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
static inline void end(kb_t *b) { b->depth--; }

static inline void region(kb_t *b, tilec_ir_region_t *r, tilec_ir_buffer_t *buf, tilec_ir_expr_t *b0,
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

static inline void store(kb_t *b, tilec_ir_buffer_t *buf, tilec_ir_expr_t *i0, tilec_ir_expr_t *i1,
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
static inline tilec_pstatus_t compile_kb(kb_t *b, tilec_pmodule_t **mod)
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

static inline tilec_pmem_t *mem_from(const void *data, size_t n)
{
    tilec_pmem_t *m = NULL;
    cr_assert_eq(P->mem_alloc(D, TILEC_PMEM_DEVICE, n, &m), TILEC_PS_OK);
    if (n)
        cr_assert_eq(P->mem_write(D, m, 0, data, n), TILEC_PS_OK);
    return m;
}

static inline void run(tilec_pmodule_t *mod, tilec_pmem_t **args, uint32_t nargs, const int64_t *syms,
                uint32_t nsyms)
{
    double ms = -1;
    tilec_plaunch_t la = {.struct_size = sizeof la, .nargs = nargs, .args = args,
                          .nsyms = nsyms, .syms = syms, .timed = 1, .elapsed_ms = &ms};
    cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_OK, "%s", P->last_error());
    cr_assert_geq(ms, 0.0);
}

static inline float frand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* ---- kernels several files build ---------------------------------------------------- */

/* C[i] = A[i] + B[i] for a dynamic n, through shared tiles of 128 with a
 * ragged last tile. */
static inline void build_add(kb_t *b)
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

/* Tiled GEMM: C[M,N] = op(A) @ op(B), tiles 32x32x16, copy/gemm/pipelined. */
enum { GM = 100, GN = 72, GK = 50 };
/* tile sizes; the odd ones reach every path of the GEMM micro-kernel
 * (two-vector and one-vector panels, leftover rows and columns) */
static int TBM = 32, TBN = 32, TBK = 16;

static inline void build_gemm(kb_t *b, int ta, int tb)
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

/* ---- the host's CPU ----------------------------------------------------------------- */

#if defined(__x86_64__)
/* Every x86 micro-kernel, whatever this host has: the kernel is built for
 * the -march given, whose macros pick the ISA (x86-64: the generic 16-byte
 * one; x86-64-v3: AVX2+FMA; x86-64-v4: AVX-512, run only where the CPU
 * has it). */
static inline int host_has(const char *flag)
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
#endif

/* ---- one-dimensional helpers --------------------------------------------------------- */

static inline tilec_ir_expr_t *UN(kb_t *b, tilec_unop_t op, tilec_ir_expr_t *x) { return tilec_ir_unary(&b->a, op, x); }
static inline tilec_ir_expr_t *LD1(kb_t *b, tilec_ir_buffer_t *buf, tilec_ir_expr_t *i0) { return LOAD(b, buf, i0, NULL); }
static inline void st1(kb_t *b, tilec_ir_buffer_t *buf, tilec_ir_expr_t *i0, tilec_ir_expr_t *v) { store(b, buf, i0, NULL, v); }
static inline tilec_ir_stmt_t *copy1(kb_t *b, tilec_ir_buffer_t *s, int64_t se0, int64_t se1,
                              tilec_ir_buffer_t *d, int64_t de0, int64_t de1)
{
    tilec_ir_stmt_t *st = emit(b, TILEC_ST_COPY);
    region(b, &st->u.copy.src, s, I(b, 0), I(b, 0), se0, se1);
    region(b, &st->u.copy.dst, d, I(b, 0), I(b, 0), de0, de1);
    return st;
}

#endif
