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
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/ir.h"
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

/* Every float16 bit pattern through tests/lang/h2f_rows.py: the copy into
 * float32 (the prelude's tc_h2f_n, vcvtph2ps where the host has F16C or
 * AVX-512) gives the SDK's conversion bit for bit, signalling NaNs kept as
 * they are (a row with a NaN is converted again element by element), and
 * the generated C does use the row converter, which also prefetches the
 * row two rows on. */
Test(cpu_rows, float16_rows_widen_bit_exact)
{
    setenv("TILEC_CACHE", "0", 1);
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    row_case_t c = {"tests/lang/h2f_rows.py", NULL, NULL, 1};
    tilec_program_t *p = NULL;
    tilec_executable_t *e = compile_case(ctx, &c, &p);
    size_t len = 0;
    const char *src = tilec_executable_source(e, &len);
    cr_assert(src && strstr(src, "tc_h2f_n(&b"), "the float16 copy does not use tc_h2f_n");
    /* the row two rows on is prefetched inside the conversion (tc_pf0), the
     * float32 copies' rows (no converter) in one burst before their memcpy */
    cr_assert(strstr(src, ", tc_pf0);") && strstr(src, "__builtin_prefetch(tc_pf1 + q, 1)"),
              "the row prefetches are not where they belong");
    enum { M = 256, N = 256 };
    static uint16_t x[M * N];
    static uint32_t y[M * N], z[M * N];
    for (int i = 0; i < M * N; i++)
        x[i] = (uint16_t)i;
    /* rows 8..11 (one block) without any NaN: the vector path's result */
    for (int i = 8 * N; i < 12 * N; i++)
        x[i] = (uint16_t)(i & 0x7bff);
    int64_t shape[2] = {M, N};
    tilec_buffer_t *b[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(tilec_buffer_create(ctx, i ? TILEC_ELEM_FLOAT32 : TILEC_ELEM_FLOAT16, 2, shape, &b[i]),
                     TILEC_OK);
    cr_assert_eq(tilec_buffer_write(b[0], x, sizeof x), TILEC_OK);
    cr_assert_eq(tilec_launch(ctx, e, b, 3, NULL), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_buffer_read(b[1], y, sizeof y), TILEC_OK);
    cr_assert_eq(tilec_buffer_read(b[2], z, sizeof z), TILEC_OK);
    int bad = 0;
    for (int i = 0; i < M * N; i++) {
        float f = tilec_f16_to_f32(x[i]), g;
        uint32_t want;
        memcpy(&want, &f, 4);
        memcpy(&g, &z[i], 4);
        if (y[i] != want || (!isnan(f) && g != 2 * f))
            if (bad++ < 5)
                cr_log_error("x=0x%04x: y=0x%08x z=%g, expected 0x%08x", x[i], y[i], g, want);
    }
    cr_expect_eq(bad, 0, "%d of %d elements differ", bad, M * N);
    for (int i = 0; i < 3; i++)
        tilec_buffer_free(b[i]);
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* rmsnorm's float16 weight row, copied once before the row loop, is read
 * at every row through a float copy made once (tc_sh<id>), not converted
 * again per row; in float32 there is nothing to convert. */
Test(cpu_rows, weight_row_converted_once)
{
    setenv("TILEC_CACHE", "0", 1);
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    for (int v = 0; v < 2; v++) {
        row_case_t c = {"examples/rmsnorm.py", NULL, v ? "float32" : "float16", 1};
        tilec_program_t *p = NULL;
        tilec_executable_t *e = compile_case(ctx, &c, &p);
        size_t len = 0;
        const char *src = tilec_executable_source(e, &len);
        const char *loop = src ? strstr(src, "row by row (cpu_rows.c)") : NULL;
        cr_assert(loop, "%s: not row by row", c.dtype);
        int shadow = strstr(src, "tc_h2f_n(tc_sh") != NULL && strstr(loop, "* (tc_sh") != NULL;
        cr_expect_eq(shadow, !v, "%s: float copy of the weights %d", c.dtype, shadow);
        tilec_executable_free(e);
        tilec_program_free(p);
    }
    tilec_context_destroy(ctx);
}

/* tests/lang/scale_rows.py: the scale loop before the last copy out is
 * folded into the copy ("div"), not where another statement follows
 * ("kept"), and Y is the same bits both ways, over 62 rows (the last
 * block's two rows past the end take the guarded copy). */
Test(cpu_rows, scale_folded_into_copy_out_same_bits)
{
    setenv("TILEC_CACHE", "0", 1);
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    enum { M = 62, N = 256 };
    static uint16_t x[M * N], y[2][M * N];
    srand(7);
    for (int i = 0; i < M * N; i++)
        x[i] = tilec_f32_to_f16((float)(rand() % 20001 - 10000) / 1000.0f);
    int64_t shape[2] = {M, N};
    for (int v = 0; v < 2; v++) {
        tilec_define_kv_t defs[2] = {{"variant", v ? "kept" : "div"}, {"M", "62"}};
        tilec_program_t *p = NULL;
        cr_assert_eq(tilec_program_load_file(ctx, "tests/lang/scale_rows.py", defs, 2, NULL, &p), TILEC_OK, "%s",
                     tilec_context_message(ctx));
        tilec_executable_t *e = NULL;
        cr_assert_eq(tilec_program_compile(ctx, p, &e), TILEC_OK, "%s", tilec_context_message(ctx));
        size_t len = 0;
        const char *src = tilec_executable_source(e, &len);
        cr_assert(src && strstr(src, "row by row (cpu_rows.c)"), "variant %d not row by row", v);
        cr_expect_eq(strstr(src, "scale folded into the copy out") != NULL, !v, "variant %d: fold %d", v, !v);
        tilec_buffer_t *b[3];
        cr_assert_eq(tilec_buffer_create(ctx, TILEC_ELEM_FLOAT16, 2, shape, &b[0]), TILEC_OK);
        cr_assert_eq(tilec_buffer_create(ctx, TILEC_ELEM_FLOAT16, 2, shape, &b[1]), TILEC_OK);
        cr_assert_eq(tilec_buffer_create(ctx, TILEC_ELEM_FLOAT32, 2, shape, &b[2]), TILEC_OK);
        cr_assert_eq(tilec_buffer_write(b[0], x, sizeof x), TILEC_OK);
        cr_assert_eq(tilec_launch(ctx, e, b, 3, NULL), TILEC_OK, "%s", tilec_context_message(ctx));
        cr_assert_eq(tilec_buffer_read(b[1], y[v], sizeof y[v]), TILEC_OK);
        for (int i = 0; i < 3; i++)
            tilec_buffer_free(b[i]);
        tilec_executable_free(e);
        tilec_program_free(p);
    }
    int bad = 0, nonzero = 0;
    for (int i = 0; i < M * N; i++) {
        nonzero += (y[0][i] & 0x7fff) != 0;
        if (y[0][i] != y[1][i] && bad++ < 5)
            cr_log_error("element %d: folded 0x%04x, kept 0x%04x", i, y[0][i], y[1][i]);
    }
    cr_expect_eq(bad, 0, "%d of %d elements differ", bad, M * N);
    cr_expect_gt(nonzero, M * N / 2, "Y is mostly zero (%d nonzero)", nonzero);
    tilec_context_destroy(ctx);
}
