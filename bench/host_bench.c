/*
 * bench/host_bench.c — tilec kernels on a host backend (the CPU backend,
 * or OpenCL on PoCL) beside the reference, in the same run, on the same
 * inputs.  The backend is TILEC_BACKEND (default: auto).
 *
 *   host_bench gemm N [block_M block_N block_K]
 *       examples/gemm_fp32.py at N^3 against OpenBLAS's cblas_sgemm
 *       (result checked against it), GFLOP/s and the ratio tilec/OpenBLAS.
 *   host_bench softmax M N
 *       examples/softmax.py (float16 rows) against memcpy of the same
 *       bytes (the bandwidth floor of a one-pass kernel), GB/s and ratio.
 *
 * Times are medians of TILEC_BENCH_RUNS runs (default 15) after warm-up.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tilec/tilec.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static int bench_softmax(int m, int n)
{
    int RUNS = runs_from_env();
    char sm[32], sn[32];
    snprintf(sm, sizeof sm, "%d", m);
    snprintf(sn, sizeof sn, "%d", n);
    tilec_define_kv_t defs[] = {{"M", sm}, {"N", sn}};
    tilec_context_t *ctx = NULL;
    tilec_program_t *prog = NULL;
    tilec_executable_t *exe = NULL;
    if (tilec_context_create(NULL, &ctx) != TILEC_OK) return die(ctx, "context");
    if (tilec_program_load_file(ctx, "examples/softmax.py", defs, 2, NULL, &prog) != TILEC_OK)
        return die(ctx, "load");
    if (tilec_program_compile(ctx, prog, &exe) != TILEC_OK) return die(ctx, "compile");
    size_t bytes = (size_t)m * n * 2;
    uint16_t *x = malloc(bytes), *y = malloc(bytes);
    double *tt = malloc(sizeof(double) * RUNS), *tc = malloc(sizeof(double) * RUNS);
    if (!x || !y || !tt || !tc) return die(NULL, "out of memory");
    for (size_t i = 0; i < (size_t)m * n; i++)
        x[i] = (uint16_t)(0x3c00 ^ (i * 2654435761u >> 22 & 0x3ff)); /* finite halves near 1 */
    int64_t shape[2] = {m, n};
    tilec_buffer_t *buf[2];
    for (int i = 0; i < 2; i++)
        if (tilec_buffer_create(ctx, TILEC_ELEM_FLOAT16, 2, shape, &buf[i]) != TILEC_OK)
            return die(ctx, "buffer");
    tilec_buffer_write(buf[0], x, bytes);
    for (int r = -2; r < RUNS; r++) {
        double ms;
        if (tilec_launch(ctx, exe, buf, 2, &ms) != TILEC_OK) return die(ctx, "launch");
        if (r >= 0) tt[r] = ms;
    }
    for (int r = -2; r < RUNS; r++) {
        double t0 = now_ms();
        memcpy(y, x, bytes);
        if (r >= 0) tc[r] = now_ms() - t0;
    }
    double mt = median(tt, RUNS), mc = median(tc, RUNS);
    printf("softmax float16 %dx%d backend=%s (%s)\n", m, n, tilec_context_backend(ctx),
           tilec_context_device(ctx));
    printf("  tilec    median %9.3f ms  %8.2f GB/s\n", mt, 2.0 * bytes / (mt * 1e6));
    printf("  memcpy   median %9.3f ms  %8.2f GB/s\n", mc, 2.0 * bytes / (mc * 1e6));
    printf("  ratio tilec/memcpy = %.3f\n", mc / mt);
    for (int i = 0; i < 2; i++) tilec_buffer_free(buf[i]);
    tilec_executable_free(exe);
    tilec_program_free(prog);
    tilec_context_destroy(ctx);
    free(x); free(y); free(tt); free(tc);
    return 0;
}

static int bench_gemm(int argc, char **argv)
{
    int n = argc > 0 ? atoi(argv[0]) : 1024;
    const char *bm = argc > 1 ? argv[1] : "64", *bn = argc > 2 ? argv[2] : "128",
               *bk = argc > 3 ? argv[3] : "64";
    int RUNS = runs_from_env();
    char sn[32];
    snprintf(sn, sizeof sn, "%d", n);
    tilec_define_kv_t defs[] = {{"M", sn}, {"N", sn}, {"K", sn},
                                {"block_M", bm}, {"block_N", bn}, {"block_K", bk}};
    tilec_context_t *ctx = NULL;
    tilec_program_t *prog = NULL;
    tilec_executable_t *exe = NULL;
    if (tilec_context_create(NULL, &ctx) != TILEC_OK) return die(ctx, "context");
    if (tilec_program_load_file(ctx, "examples/gemm_fp32.py", defs, 6, NULL, &prog) != TILEC_OK)
        return die(ctx, "load");
    if (tilec_program_compile(ctx, prog, &exe) != TILEC_OK) return die(ctx, "compile");

    size_t nn = (size_t)n * n;
    float *a = malloc(nn * 4), *b = malloc(nn * 4), *c = malloc(nn * 4), *ref = malloc(nn * 4);
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

    double *t_tilec = malloc(sizeof(double) * RUNS), *t_blas = malloc(sizeof(double) * RUNS);
    if (!t_tilec || !t_blas) return die(NULL, "out of memory");
    for (int r = -2; r < RUNS; r++) {
        double ms;
        if (tilec_launch(ctx, exe, buf, 3, &ms) != TILEC_OK) return die(ctx, "launch");
        if (r >= 0) t_tilec[r] = ms;
    }
    for (int r = -2; r < RUNS; r++) {
        double t0 = now_ms();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, ref, n);
        if (r >= 0) t_blas[r] = now_ms() - t0;
    }
    tilec_buffer_read(buf[2], c, nn * 4);
    double d2 = 0, r2 = 0;
    for (size_t i = 0; i < nn; i++) {
        d2 += (double)(c[i] - ref[i]) * (c[i] - ref[i]);
        r2 += (double)ref[i] * ref[i];
    }
    double mt = median(t_tilec, RUNS), mb = median(t_blas, RUNS);
    double flop = 2.0 * n * (double)n * n;
    double g_tilec = flop / (mt * 1e6), g_blas = flop / (mb * 1e6);
    printf("sgemm %dx%dx%d backend=%s (%s) tiles=%sx%sx%s rel_err=%.2e\n", n, n, n,
           tilec_context_backend(ctx), tilec_context_device(ctx), bm, bn, bk, sqrt(d2 / r2));
    printf("  tilec    median %9.3f ms  %8.2f GFLOP/s\n", mt, g_tilec);
    printf("  openblas median %9.3f ms  %8.2f GFLOP/s\n", mb, g_blas);
    printf("  ratio tilec/openblas = %.3f\n", g_tilec / g_blas);
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
    if (argc == 4 && !strcmp(argv[1], "softmax"))
        return bench_softmax(atoi(argv[2]), atoi(argv[3]));
    fprintf(stderr, "usage: host_bench gemm N [block_M block_N block_K] | host_bench softmax M N\n");
    return 2;
}
