/*
 * bench/host_bench.c — tilec kernels on a host backend (the CPU backend,
 * or OpenCL on PoCL) beside their reference, in the same run, on the same
 * inputs.  The backend is TILEC_BACKEND (default: auto); the CPU backend's
 * threads are TILEC_NUM_THREADS, OpenBLAS's OPENBLAS_NUM_THREADS (set both
 * alike: bench/run_host.sh does).
 *
 *   host_bench gemm N [block_M block_N block_K]
 *       examples/gemm_fp32.py at N^3 (default tiles: the example's own)
 *       against OpenBLAS's cblas_sgemm (result checked against it).
 *   host_bench softmax M N | host_bench rmsnorm M N
 *       examples/softmax.py / examples/rmsnorm.py on float16 rows against
 *       memcpy of the same bytes (what a one-pass kernel reads + writes).
 *   host_bench memcpy MiB
 *       memcpy bandwidth alone.
 *
 * Each figure is the median of TILEC_BENCH_RUNS runs (default 15) after
 * two warm-ups; tilec and the reference run interleaved (alternating which
 * goes first), so load on a shared machine hits both alike.  Figures are
 * wall time and the process's CPU time (which a loaded machine inflates
 * less: time-sliced away, a thread accrues no CPU time); ratios are given
 * for both.  The cold compile time of the kernel (load +
 * compile, no kernel cache when TILEC_CACHE=0) comes first, the machine's
 * load average (getloadavg) after each figure's runs last.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "tilec/tilec.h"

typedef struct { double wall, cpu; } tm_t;

static double clock_ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static tm_t tm_now(void) { return (tm_t){clock_ms(CLOCK_MONOTONIC), clock_ms(CLOCK_PROCESS_CPUTIME_ID)}; }
static tm_t tm_since(tm_t t0)
{
    tm_t t = tm_now();
    return (tm_t){t.wall - t0.wall, t.cpu - t0.cpu};
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int die(tilec_context_t *ctx, const char *what)
{
    fprintf(stderr, "host_bench: %s: %s\n", what, ctx ? tilec_context_message(ctx) : "?");
    return 1;
}

static int runs_from_env(void)
{
    const char *v = getenv("TILEC_BENCH_RUNS");
    int r = v ? atoi(v) : 15;
    return r < 1 ? 1 : r > 100 ? 100 : r;
}

/* medians of the wall and CPU columns of t[0..n-1] */
static tm_t median(tm_t *t, int n)
{
    double *w = malloc(sizeof(double) * (size_t)n), *c = malloc(sizeof(double) * (size_t)n);
    if (!w || !c)
        exit(1);
    for (int i = 0; i < n; i++) {
        w[i] = t[i].wall;
        c[i] = t[i].cpu;
    }
    qsort(w, (size_t)n, sizeof *w, cmp);
    qsort(c, (size_t)n, sizeof *c, cmp);
    tm_t m = {n % 2 ? w[n / 2] : 0.5 * (w[n / 2 - 1] + w[n / 2]),
              n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2])};
    free(w);
    free(c);
    return m;
}

/* OpenBLAS's operands in the same kind of memory as the CPU backend's
 * buffers (cpu_plugin.c): from 4 MiB on, 2 MiB aligned and in transparent
 * huge pages where the kernel gives them on request. */
static void *big_alloc(size_t bytes)
{
    size_t align = 64;
#ifdef MADV_HUGEPAGE
    if (bytes >= ((size_t)4 << 20))
        align = (size_t)2 << 20;
#endif
    bytes = (bytes + align - 1) / align * align;
    void *p = aligned_alloc(align, bytes);
#ifdef MADV_HUGEPAGE
    if (p && align > 64)
        (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

/* A program loaded and compiled from scratch, with the time it took. */
static int load_compile(tilec_context_t **ctx, tilec_program_t **prog, tilec_executable_t **exe,
                        const char *file, const tilec_define_kv_t *defs, int ndefs)
{
    if (tilec_context_create(NULL, ctx) != TILEC_OK) return die(*ctx, "context");
    tm_t t0 = tm_now();
    if (tilec_program_load_file(*ctx, file, defs, ndefs, NULL, prog) != TILEC_OK)
        return die(*ctx, "load");
    if (tilec_program_compile(*ctx, *prog, exe) != TILEC_OK) return die(*ctx, "compile");
    tm_t c = tm_since(t0);
    printf("%s backend=%s (%s)\n", file, tilec_context_backend(*ctx), tilec_context_device(*ctx));
    printf("  compile  %9.1f ms wall (load + compile; cold when TILEC_CACHE=0)\n", c.wall);
    return 0;
}

static void report(const char *what, double units, const char *unit, const char *refname, tm_t mt,
                   tm_t mr)
{
    printf("  tilec    median %9.3f ms wall %8.2f %s   %9.3f ms cpu\n", mt.wall, units / (mt.wall * 1e6),
           unit, mt.cpu);
    printf("  %-8s median %9.3f ms wall %8.2f %s   %9.3f ms cpu\n", refname, mr.wall,
           units / (mr.wall * 1e6), unit, mr.cpu);
    printf("  ratio %s tilec/%s = %.3f wall, %.3f cpu\n", what, refname, mr.wall / mt.wall, mr.cpu / mt.cpu);
    double la[3];
    if (getloadavg(la, 3) == 3)
        printf("  load     %.2f %.2f %.2f (1, 5, 15 min, after the runs)\n", la[0], la[1], la[2]);
}

/* Row kernels on float16 (softmax: X -> Y; rmsnorm: X, W -> Y) against
 * memcpy of the bytes they must move (X read, Y written). */
static int bench_rows(const char *kind, int m, int n)
{
    int RUNS = runs_from_env();
    int rms = !strcmp(kind, "rmsnorm");
    char sm[32], sn[32];
    snprintf(sm, sizeof sm, "%d", m);
    snprintf(sn, sizeof sn, "%d", n);
    tilec_define_kv_t defs[] = {{"M", sm}, {"N", sn}, {"dtype", "float16"}};
    tilec_context_t *ctx = NULL;
    tilec_program_t *prog = NULL;
    tilec_executable_t *exe = NULL;
    if (load_compile(&ctx, &prog, &exe, rms ? "examples/rmsnorm.py" : "examples/softmax.py", defs,
                     rms ? 3 : 2))
        return 1;
    size_t bytes = (size_t)m * n * 2;
    uint16_t *x = big_alloc(bytes), *y = big_alloc(bytes), *w = malloc((size_t)n * 2);
    tm_t *tt = malloc(sizeof(tm_t) * RUNS), *tc = malloc(sizeof(tm_t) * RUNS);
    if (!x || !y || !w || !tt || !tc) return die(NULL, "out of memory");
    for (size_t i = 0; i < (size_t)m * n; i++)
        x[i] = (uint16_t)(0x3c00 ^ (i * 2654435761u >> 22 & 0x3ff)); /* finite halves near 1 */
    for (int i = 0; i < n; i++)
        w[i] = 0x3c00;
    int64_t shape[2] = {m, n}, wshape[1] = {n};
    tilec_buffer_t *buf[3];
    int nb = rms ? 3 : 2;
    for (int i = 0; i < nb; i++) {
        int wi = rms && i == 1;
        if (tilec_buffer_create(ctx, TILEC_ELEM_FLOAT16, wi ? 1 : 2, wi ? wshape : shape, &buf[i]) != TILEC_OK)
            return die(ctx, "buffer");
    }
    tilec_buffer_write(buf[0], x, bytes);
    if (rms)
        tilec_buffer_write(buf[1], w, (size_t)n * 2);
    for (int r = -2; r < RUNS; r++)
        for (int side = 0; side < 2; side++) {
            tm_t t0 = tm_now();
            if ((side ^ (r & 1)) == 0) {
                if (tilec_launch(ctx, exe, buf, nb, NULL) != TILEC_OK) return die(ctx, "launch");
                if (r >= 0) tt[r] = tm_since(t0);
            } else {
                memcpy(y, x, bytes);
                if (r >= 0) tc[r] = tm_since(t0);
            }
        }
    printf("%s float16 %dx%d\n", kind, m, n);
    report(kind, 2.0 * bytes, "GB/s", "memcpy", median(tt, RUNS), median(tc, RUNS));
    for (int i = 0; i < nb; i++) tilec_buffer_free(buf[i]);
    tilec_executable_free(exe);
    tilec_program_free(prog);
    tilec_context_destroy(ctx);
    free(x); free(y); free(w); free(tt); free(tc);
    return 0;
}

static int bench_memcpy(int mib)
{
    int RUNS = runs_from_env();
    size_t bytes = (size_t)mib << 20;
    char *x = big_alloc(bytes), *y = big_alloc(bytes);
    tm_t *t = malloc(sizeof(tm_t) * RUNS);
    if (!x || !y || !t) return die(NULL, "out of memory");
    memset(x, 1, bytes);
    memset(y, 2, bytes);
    for (int r = -2; r < RUNS; r++) {
        tm_t t0 = tm_now();
        memcpy(y, x, bytes);
        if (r >= 0) t[r] = tm_since(t0);
    }
    tm_t m = median(t, RUNS);
    printf("memcpy %d MiB: median %.3f ms wall %.2f GB/s (read + write), %.3f ms cpu\n", mib, m.wall,
           2.0 * bytes / (m.wall * 1e6), m.cpu);
    free(x); free(y); free(t);
    return 0;
}

static int bench_gemm(int argc, char **argv)
{
    int n = argc > 0 ? atoi(argv[0]) : 1024;
    int tiles = argc > 3;
    int RUNS = runs_from_env();
    char sn[32];
    snprintf(sn, sizeof sn, "%d", n);
    tilec_define_kv_t defs[] = {{"M", sn}, {"N", sn}, {"K", sn},
                                {"block_M", tiles ? argv[1] : ""}, {"block_N", tiles ? argv[2] : ""},
                                {"block_K", tiles ? argv[3] : ""}};
    tilec_context_t *ctx = NULL;
    tilec_program_t *prog = NULL;
    tilec_executable_t *exe = NULL;
    if (load_compile(&ctx, &prog, &exe, "examples/gemm_fp32.py", defs, tiles ? 6 : 3))
        return 1;

    size_t nn = (size_t)n * n;
    float *a = big_alloc(nn * 4), *b = big_alloc(nn * 4), *c = big_alloc(nn * 4), *ref = big_alloc(nn * 4);
    if (!a || !b || !c || !ref) return die(NULL, "out of memory");
    srand(1);
    for (size_t i = 0; i < nn; i++) {
        a[i] = (float)rand() / RAND_MAX * 2 - 1;
        b[i] = (float)rand() / RAND_MAX * 2 - 1;
    }
    int64_t shape[2] = {n, n};
    tilec_buffer_t *buf[3];
    for (int i = 0; i < 3; i++)
        if (tilec_buffer_create(ctx, TILEC_ELEM_FLOAT32, 2, shape, &buf[i]) != TILEC_OK)
            return die(ctx, "buffer");
    tilec_buffer_write(buf[0], a, nn * 4);
    tilec_buffer_write(buf[1], b, nn * 4);

    tm_t *t_tilec = malloc(sizeof(tm_t) * RUNS), *t_blas = malloc(sizeof(tm_t) * RUNS);
    if (!t_tilec || !t_blas) return die(NULL, "out of memory");
    for (int r = -2; r < RUNS; r++)
        for (int side = 0; side < 2; side++) {
            tm_t t0 = tm_now();
            if ((side ^ (r & 1)) == 0) {
                if (tilec_launch(ctx, exe, buf, 3, NULL) != TILEC_OK) return die(ctx, "launch");
                if (r >= 0) t_tilec[r] = tm_since(t0);
            } else {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, ref, n);
                if (r >= 0) t_blas[r] = tm_since(t0);
            }
        }
    tilec_buffer_read(buf[2], c, nn * 4);
    double d2 = 0, r2 = 0;
    for (size_t i = 0; i < nn; i++) {
        d2 += (double)(c[i] - ref[i]) * (c[i] - ref[i]);
        r2 += (double)ref[i] * ref[i];
    }
    char tl[96];
    snprintf(tl, sizeof tl, "%sx%sx%s", tiles ? argv[1] : "default", tiles ? argv[2] : "", tiles ? argv[3] : "");
    printf("sgemm %dx%dx%d tiles=%s rel_err=%.2e openblas=%s(%d threads)\n", n, n, n,
           tiles ? tl : "default", sqrt(d2 / r2), openblas_get_corename(), openblas_get_num_threads());
    report("sgemm", 2.0 * n * (double)n * n, "GFLOP/s", "openblas", median(t_tilec, RUNS),
           median(t_blas, RUNS));
    for (int i = 0; i < 3; i++) tilec_buffer_free(buf[i]);
    tilec_executable_free(exe);
    tilec_program_free(prog);
    tilec_context_destroy(ctx);
    free(a); free(b); free(c); free(ref); free(t_tilec); free(t_blas);
    return sqrt(d2 / r2) < 1e-4 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "gemm"))
        return bench_gemm(argc - 2, argv + 2);
    if (argc == 4 && (!strcmp(argv[1], "softmax") || !strcmp(argv[1], "rmsnorm")))
        return bench_rows(argv[1], atoi(argv[2]), atoi(argv[3]));
    if (argc == 3 && !strcmp(argv[1], "memcpy"))
        return bench_memcpy(atoi(argv[2]));
    fprintf(stderr, "usage: host_bench gemm N [block_M block_N block_K] | host_bench softmax|rmsnorm M N"
                    " | host_bench memcpy MiB\n");
    return 2;
}
