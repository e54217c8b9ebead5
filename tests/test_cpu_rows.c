/*
 * test_cpu_rows.c — which kernels the CPU backend runs one row of their
 * tiles at a time (backends/cpu/cpu_rows.c): the row kernels of the
 * examples and tests/lang/row_kernels.py do, its variants that read
 * another row or a global they wrote do not.  That every variant computes
 * what the interpreter does is checked by tests/run.sh (`tilec run
 * --check` of each tilec-test line); this file checks the decision, and
 * that a row buffer takes one row of the on-chip memory.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"

typedef struct row_case {
    const char *file, *variant, *dtype;
    int rows;                 /* 1: must run row by row */
} row_case_t;

/* The case compiled on the CPU backend (*p: its program). */
static tilec_executable_t *compile_case(tilec_context_t *ctx, const row_case_t *c, tilec_program_t **p)
{
    tilec_define_kv_t defs[2];
    int n = 0;
    if (c->variant)
        defs[n++] = (tilec_define_kv_t){"variant", c->variant};
    if (c->dtype)
        defs[n++] = (tilec_define_kv_t){"dtype", c->dtype};
    cr_assert_eq(tilec_program_load_file(ctx, c->file, defs, n, NULL, p), TILEC_OK, "%s: %s", c->file,
                 tilec_context_message(ctx));
    tilec_executable_t *e = NULL;
    cr_assert_eq(tilec_program_compile(ctx, *p, &e), TILEC_OK, "%s", tilec_context_message(ctx));
    return e;
}

Test(cpu_rows, which_kernels_run_row_by_row)
{
    static const row_case_t cases[] = {
        {"tests/lang/row_kernels.py", "rows", NULL, 1},
        {"tests/lang/row_kernels.py", "shift", NULL, 0},
        {"tests/lang/row_kernels.py", "global", NULL, 0},
        {"examples/softmax.py", NULL, NULL, 1},
        {"examples/rmsnorm.py", NULL, "float16", 1},
        {"examples/layernorm.py", NULL, NULL, 1},
        {"examples/gemm_fp32.py", NULL, NULL, 0},
        {"examples/reduce_cols.py", NULL, NULL, 0},
    };
    setenv("TILEC_CACHE", "0", 1);
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const row_case_t *c = &cases[i];
        tilec_program_t *p = NULL;
        tilec_executable_t *e = compile_case(ctx, c, &p);
        size_t len = 0;
        const char *src = tilec_executable_source(e, &len);
        cr_assert(src && len > 0);
        int got = strstr(src, "row by row (cpu_rows.c)") != NULL;
        cr_expect_eq(got, c->rows, "%s %s: row by row %d, expected %d", c->file, c->variant ? c->variant : "",
                     got, c->rows);
        tilec_executable_free(e);
        tilec_program_free(p);
    }
    tilec_context_destroy(ctx);
}

/* row_kernels.py "rows" keeps x, x2, z (R x N floats) and s (R floats) on
 * chip; held one row at a time they take N or 1 floats each (rounded to
 * 64 bytes) beside the N float16 weights, where "shift" keeps them whole. */
Test(cpu_rows, row_buffers_hold_one_row)
{
    setenv("TILEC_CACHE", "0", 1);
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    int64_t bytes[2];
    for (int v = 0; v < 2; v++) {
        row_case_t c = {"tests/lang/row_kernels.py", v ? "shift" : "rows", NULL, !v};
        tilec_program_t *p = NULL;
        tilec_executable_t *e = compile_case(ctx, &c, &p);
        tilec_module_info_t mi;
        cr_assert_eq(tilec_executable_info(e, &mi), TILEC_OK);
        bytes[v] = mi.shared_static_bytes;
        tilec_executable_free(e);
        tilec_program_free(p);
    }
    enum { N = 40, R = 4 };
#define AL(x) (((x) + 63) / 64 * 64)
    cr_expect_eq(bytes[0], 3 * AL(N * 4) + AL(4) + AL(N * 2), "rows: %lld bytes", (long long)bytes[0]);
    cr_expect_eq(bytes[1], 3 * AL(R * N * 4) + AL(R * 4) + AL(N * 2), "shift: %lld bytes", (long long)bytes[1]);
    tilec_context_destroy(ctx);
}
