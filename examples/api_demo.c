/*
 * examples/api_demo.c — the tilec C API in one small program.
 *
 * Loads a tile program (a tiled float32 GEMM, C = A @ B) from a string,
 * compiles it for the backend TILEC_BACKEND names (default: auto), runs it
 * on random inputs, checks the result against a plain C loop and prints one
 * line.  Exit status 0 on PASS, 1 on FAIL, 3 when the backend cannot run it.
 *
 *   build/examples/api_demo            # M = N = K = 96
 *   build/examples/api_demo 200 72 40  # M N K
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"

static const char gemm_src[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "def matmul(M, N, K, block_M=32, block_N=32, block_K=16, dtype=\"float32\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dtype),\n"
    "             B: T.Tensor((K, N), dtype),\n"
    "             C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):\n"
    "            A_shared = T.alloc_shared((block_M, block_K), dtype)\n"
    "            B_shared = T.alloc_shared((block_K, block_N), dtype)\n"
    "            C_local = T.alloc_fragment((block_M, block_N), dtype)\n"
    "            T.clear(C_local)\n"
    "            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):\n"
    "                T.copy(A[by * block_M, k * block_K], A_shared)\n"
    "                T.copy(B[k * block_K, bx * block_N], B_shared)\n"
    "                T.gemm(A_shared, B_shared, C_local)\n"
    "            T.copy(C_local, C[by * block_M, bx * block_N])\n"
    "\n"
    "    return main\n";

/* Prints the context's message for a failed call and returns exit status 3
 * (2 for an invalid program). */
static int fail(tilec_context_t *ctx, tilec_status_t st, const char *what)
{
    fprintf(stderr, "api_demo: %s: %s: %s\n", what, tilec_status_name(st),
            tilec_context_message(ctx));
    return st == TILEC_E_PROGRAM || st == TILEC_E_INVALID ? 2 : 3;
}

static float frand(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f; /* [-1, 1) */
}

int main(int argc, char **argv)
{
    int M = argc > 1 ? atoi(argv[1]) : 96;
    int N = argc > 2 ? atoi(argv[2]) : 96;
    int K = argc > 3 ? atoi(argv[3]) : 96;
    char ms[16], ns[16], ks[16];
    tilec_define_kv_t defs[3] = {{"M", ms}, {"N", ns}, {"K", ks}};
    tilec_context_t *ctx = NULL;
    tilec_program_t *prog = NULL;
    tilec_executable_t *exe = NULL;
    tilec_buffer_t *bufs[3] = {NULL, NULL, NULL};
    float *a, *b, *c;
    double max_err = 0, ref_max = 0, elapsed = 0;
    unsigned seed = 1;
    tilec_status_t st;
    int rc = 3;

    if (M <= 0 || N <= 0 || K <= 0) {
        fprintf(stderr, "usage: %s [M N K]\n", argv[0]);
        return 2;
    }
    snprintf(ms, sizeof ms, "%d", M);
    snprintf(ns, sizeof ns, "%d", N);
    snprintf(ks, sizeof ks, "%d", K);
    a = malloc(sizeof *a * (size_t)M * (size_t)K);
    b = malloc(sizeof *b * (size_t)K * (size_t)N);
    c = malloc(sizeof *c * (size_t)M * (size_t)N);
    if (!a || !b || !c) {
        fprintf(stderr, "api_demo: out of memory\n");
        return 3;
    }
    for (size_t i = 0; i < (size_t)M * (size_t)K; i++) {
        a[i] = frand(&seed);
    }
    for (size_t i = 0; i < (size_t)K * (size_t)N; i++) {
        b[i] = frand(&seed);
    }

    /* 1. A context: the backend named by TILEC_BACKEND (NULL), device 0. */
    st = tilec_context_create(NULL, &ctx);
    if (st != TILEC_OK) {
        rc = fail(ctx, st, "context");
        goto out;
    }
    /* 2. The program, with the factory's M, N, K bound like `-D M=...`. */
    st = tilec_program_load_string(ctx, "gemm.py", gemm_src, strlen(gemm_src), defs, 3, NULL, &prog);
    if (st != TILEC_OK) {
        rc = fail(ctx, st, "load");
        goto out;
    }
    /* 3. Compile for the context's device. */
    st = tilec_program_compile(ctx, prog, &exe);
    if (st != TILEC_OK) {
        rc = fail(ctx, st, "compile");
        goto out;
    }
    /* 4. Device buffers for A, B, C; upload the inputs. */
    {
        int64_t sa[2] = {M, K}, sb[2] = {K, N}, sc[2] = {M, N};
        if ((st = tilec_buffer_create(ctx, TILEC_ELEM_FLOAT32, 2, sa, &bufs[0])) != TILEC_OK ||
            (st = tilec_buffer_create(ctx, TILEC_ELEM_FLOAT32, 2, sb, &bufs[1])) != TILEC_OK ||
            (st = tilec_buffer_create(ctx, TILEC_ELEM_FLOAT32, 2, sc, &bufs[2])) != TILEC_OK ||
            (st = tilec_buffer_write(bufs[0], a, tilec_buffer_bytes(bufs[0]))) != TILEC_OK ||
            (st = tilec_buffer_write(bufs[1], b, tilec_buffer_bytes(bufs[1]))) != TILEC_OK) {
            rc = fail(ctx, st, "buffers");
            goto out;
        }
    }
    /* 5. Launch, then read C back. */
    st = tilec_launch(ctx, exe, bufs, 3, &elapsed);
    if (st != TILEC_OK) {
        rc = fail(ctx, st, "launch");
        goto out;
    }
    st = tilec_buffer_read(bufs[2], c, tilec_buffer_bytes(bufs[2]));
    if (st != TILEC_OK) {
        rc = fail(ctx, st, "read");
        goto out;
    }
    /* 6. Check against the obvious triple loop. */
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double ref = 0;
            for (int k = 0; k < K; k++) {
                ref += (double)a[(size_t)i * K + k] * (double)b[(size_t)k * N + j];
            }
            double err = fabs(ref - (double)c[(size_t)i * N + j]);
            if (!(err <= max_err)) { /* also catches NaN */
                max_err = isnan(err) ? INFINITY : err;
            }
            if (fabs(ref) > ref_max) {
                ref_max = fabs(ref);
            }
        }
    }
    rc = max_err <= 1e-4 * (ref_max > 1 ? ref_max : 1) ? 0 : 1;
    printf("api_demo: gemm %dx%dx%d on %s (%s): %s max_abs_err=%.3g time_ms=%.3f\n", M, N, K,
           tilec_context_backend(ctx), tilec_context_device(ctx), rc == 0 ? "PASS" : "FAIL",
           max_err, elapsed);
out:
    for (int i = 0; i < 3; i++) {
        tilec_buffer_free(bufs[i]);
    }
    tilec_executable_free(exe);
    tilec_program_free(prog);
    tilec_context_destroy(ctx);
    free(a);
    free(b);
    free(c);
    return rc;
}
