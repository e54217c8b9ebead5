/*
 * bench/cpu_gemm.c — float32 GEMM on tilec's CPU backend beside OpenBLAS,
 * in the same run, on the same inputs.
 *
 * Loads examples/gemm_fp32.py at the requested size through the public
 * API, compiles it for the selected backend (TILEC_BACKEND, default cpu),
 * checks the result against cblas_sgemm, then times both (median of
 * repeated runs after warm-up) and prints GFLOP/s and the ratio
 * tilec / OpenBLAS.  Usage: cpu_gemm [N [block_M block_N block_K]].
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
    fprintf(stderr, "cpu_gemm: %s: %s\n", what, ctx ? tilec_context_message(ctx) : "?");
    return 1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    const char *bm = argc > 2 ? argv[2] : "64", *bn = argc > 3 ? argv[3] : "128",
               *bk = argc > 4 ? argv[4] : "64";
    enum { RUNS = 15 };
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

    double t_tilec[RUNS], t_blas[RUNS];
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
    qsort(t_tilec, RUNS, sizeof(double), cmp);
    qsort(t_blas, RUNS, sizeof(double), cmp);
    double flop = 2.0 * n * (double)n * n;
    double g_tilec = flop / (t_tilec[RUNS / 2] * 1e6), g_blas = flop / (t_blas[RUNS / 2] * 1e6);
    printf("sgemm %dx%dx%d backend=%s tiles=%sx%sx%s rel_err=%.2e\n", n, n, n,
           tilec_context_backend(ctx), bm, bn, bk, sqrt(d2 / r2));
    printf("  tilec    median %9.3f ms  %8.2f GFLOP/s\n", t_tilec[RUNS / 2], g_tilec);
    printf("  openblas median %9.3f ms  %8.2f GFLOP/s\n", t_blas[RUNS / 2], g_blas);
    printf("  ratio tilec/openblas = %.3f\n", g_tilec / g_blas);
    for (int i = 0; i < 3; i++) tilec_buffer_free(buf[i]);
    tilec_executable_free(exe);
    tilec_program_free(prog);
    tilec_context_destroy(ctx);
    free(a); free(b); free(c); free(ref);
    return sqrt(d2 / r2) < 1e-4 ? 0 : 1;
}
