/*
 * tests/test_language.c — the language of docs/language.md, checked against
 * hand-computed results.
 *
 * Every program of tests/lang/ runs under tests/run.sh with `tilec run
 * --check`, which only proves that the CPU backend agrees with the
 * reference interpreter.  This file proves that both compute what the
 * program means: it loads a tests/lang/ program through the public API
 * (tilec.h), fills its tensors with known data, runs it in the reference
 * interpreter AND on the CPU backend, checks that the two agree, and then
 * checks the interpreter's results against values computed here in plain C
 * (prefix sums, transposed matrix products, Python's floor division, ...).
 * It also checks T.print's output and that compile-time folding happens.
 * The thread-level programs are test_language_threads.c's; the harness is
 * lang_harness.h.  Run from the repository root.
 */
#include "lang_harness.h"

#include <criterion/redirect.h>

/* ---- T.cumsum ------------------------------------------------------------ */

Test(lang, cumsum_every_direction)
{
    run_t r;
    int M = 5, N = 7, i, j;
    run_file(&r, "tests/lang/cumsum_forms.py", NULL, 0, fill_pattern);
    /* params: X I C0 C1 C2 C3 CI CD */
    for (i = 0; i < M; i++) {
        for (j = 0; j < N; j++) {
            double fwd1 = 0, rev1 = 0, fwd0 = 0, rev0 = 0;
            int k;
            for (k = 0; k <= j; k++) fwd1 += pattern(0, i * N + k);
            for (k = j; k < N; k++) rev1 += pattern(0, i * N + k);
            for (k = 0; k <= i; k++) fwd0 += pattern(0, k * N + j);
            for (k = i; k < M; k++) rev0 += pattern(0, k * N + j);
            EXPECT_NEAR(F(r, 2)[i * N + j], fwd1, "C0[%d,%d] (dim 1)", i, j);
            EXPECT_NEAR(F(r, 3)[i * N + j], rev1, "C1[%d,%d] (dim 1, reverse)", i, j);
            EXPECT_NEAR(F(r, 4)[i * N + j], fwd0, "C2[%d,%d] (dim 0)", i, j);
            EXPECT_NEAR(F(r, 5)[i * N + j], rev0, "C3[%d,%d] (dim 0, reverse)", i, j);
            /* dst=None defaults: dim=0, in place */
            EXPECT_NEAR(F(r, 7)[i * N + j], fwd0, "CD[%d,%d] (defaults)", i, j);
        }
    }
    /* CI: int32 cumsum along dim 1 in place, then reversed along dim 0 */
    {
        int64_t row[5][7];
        int k;
        for (i = 0; i < M; i++) {
            int64_t acc = 0;
            for (j = 0; j < N; j++) {
                int64_t x = (int64_t)(((i * N + j) * 13 + 1 * 5) % 41) - 20;
                acc += x;
                row[i][j] = acc;
            }
        }
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                int64_t s = 0;
                for (k = i; k < M; k++) s += row[k][j];
                cr_expect_eq(I32(r, 6)[i * N + j], s, "CI[%d,%d]: got %d want %lld", i, j, I32(r, 6)[i * N + j],
                             (long long)s);
            }
    }
    run_free(&r);
}

/* ---- T.gemm --------------------------------------------------------------- */

Test(lang, gemm_transposes)
{
    run_t r;
    int M = 16, N = 8, K = 12, i, j, k;
    run_file(&r, "tests/lang/gemm_transpose.py", NULL, 0, fill_pattern);
    /* params: A(M,K) At(K,M) B(K,N) Bt(N,K) C0 C1 C2 C3 */
    for (i = 0; i < M; i++) {
        for (j = 0; j < N; j++) {
            double c0 = 0, c1 = 0, c2 = 0, c3 = 0;
            for (k = 0; k < K; k++) {
                double a = pattern(0, i * K + k), at = pattern(1, k * M + i);
                double b = pattern(2, k * N + j), bt = pattern(3, j * K + k);
                c0 += a * b;
                c1 += at * b;
                c2 += a * bt;
                c3 += at * bt;
            }
            EXPECT_NEAR(F(r, 4)[i * N + j], c0, "A@B [%d,%d]", i, j);
            EXPECT_NEAR(F(r, 5)[i * N + j], c1, "At^T@B [%d,%d]", i, j);
            EXPECT_NEAR(F(r, 6)[i * N + j], c2, "A@Bt^T [%d,%d]", i, j);
            EXPECT_NEAR(F(r, 7)[i * N + j], c3, "At^T@Bt^T [%d,%d]", i, j);
        }
    }
    run_free(&r);
}

static void fill_int8_small(int i, void *data, int64_t count, tilec_elem_t e)
{
    int64_t k;
    if (e == TILEC_ELEM_INT8) {
        for (k = 0; k < count; k++) ((int8_t *)data)[k] = (int8_t)((k * 5 + i) % 9 - 4);
    } else if (e == TILEC_ELEM_FLOAT16) {
        /* float16 bit patterns of small exact values: 0.5 * ((k % 5) - 2) */
        static const uint16_t h[5] = {0xBC00 /* -1 */, 0xB800 /* -0.5 */, 0x0000, 0x3800 /* 0.5 */, 0x3C00 /* 1 */};
        for (k = 0; k < count; k++) ((uint16_t *)data)[k] = h[(k + i) % 5];
    } else {
        fill_zero(i, data, count, e);
    }
}

Test(lang, gemm_accumulates_unless_clear_accum)
{
    run_t r;
    int M = 8, N = 16, K = 32, i, j, k;
    run_file(&r, "tests/lang/gemm_accum.py", NULL, 0, fill_int8_small);
    /* params: A B (f16) C0 C1 (f32) Ai Bi (int8) Ci (int32) */
    for (i = 0; i < M; i++) {
        for (j = 0; j < N; j++) {
            double s = 0;
            int64_t si = 0;
            for (k = 0; k < K; k++) {
                s += 0.5 * (((i * K + k) + 0) % 5 - 2) * 0.5 * (((k * N + j) + 1) % 5 - 2);
                si += (int64_t)((((i * K + k) * 5 + 4) % 9) - 4) * ((((k * N + j) * 5 + 5) % 9) - 4);
            }
            EXPECT_NEAR(F(r, 2)[i * N + j], 1 + 2 * s, "C0[%d,%d] (accumulated twice onto 1)", i, j);
            EXPECT_NEAR(F(r, 3)[i * N + j], s, "C1[%d,%d] (clear_accum)", i, j);
            cr_expect_eq(I32(r, 6)[i * N + j], si, "Ci[%d,%d]: got %d want %lld", i, j, I32(r, 6)[i * N + j],
                         (long long)si);
        }
    }
    run_free(&r);
}

/* ---- reductions ----------------------------------------------------------- */

Test(lang, reductions_dims_and_clear)
{
    run_t r;
    int M = 6, N = 10, i, j;
    double rmax[6], rabsmax[6], cs[10], cabsmax[10];
    run_file(&r, "tests/lang/reduce_all.py", NULL, 0, fill_pattern);
    /* params: X(M,N) R1(5,M) R0(5,N) K(4) */
    for (i = 0; i < M; i++) {
        double mx = -INFINITY, mn = INFINITY, s = 0, as = 0, am = 0;
        for (j = 0; j < N; j++) {
            double x = pattern(0, i * N + j);
            mx = fmax(mx, x);
            mn = fmin(mn, x);
            s += x;
            as += fabs(x);
            am = fmax(am, fabs(x));
        }
        rmax[i] = mx;
        rabsmax[i] = fmax(am, 0.75);
        EXPECT_NEAR(F(r, 1)[0 * M + i], mx, "reduce_max dim 1 row %d", i);
        EXPECT_NEAR(F(r, 1)[1 * M + i], mn, "reduce_min dim -1 row %d", i);
        EXPECT_NEAR(F(r, 1)[2 * M + i], s, "reduce_sum row %d", i);
        EXPECT_NEAR(F(r, 1)[3 * M + i], as, "reduce_abssum row %d", i);
        EXPECT_NEAR(F(r, 1)[4 * M + i], rabsmax[i], "reduce_absmax clear=False row %d", i);
    }
    for (j = 0; j < N; j++) {
        double mx = -INFINITY, mn = 0.5, s = 100, as = 0, am = 0;
        for (i = 0; i < M; i++) {
            double x = pattern(0, i * N + j);
            mx = fmax(mx, x);
            mn = fmin(mn, x);
            s += x;
            as += fabs(x);
            am = fmax(am, fabs(x));
        }
        cs[j] = as;
        cabsmax[j] = am;
        EXPECT_NEAR(F(r, 2)[0 * N + j], mx, "reduce_max dim 0 col %d", j);
        EXPECT_NEAR(F(r, 2)[1 * N + j], mn, "reduce_min clear=False col %d", j);
        EXPECT_NEAR(F(r, 2)[2 * N + j], s, "reduce_sum clear=False col %d", j);
        EXPECT_NEAR(F(r, 2)[3 * N + j], as, "reduce_abssum col %d", j);
        EXPECT_NEAR(F(r, 2)[4 * N + j], am, "reduce_absmax dim -2 col %d", j);
    }
    {
        double s = 0, mx = -INFINITY, mn = 1000, am = 0;
        for (j = 0; j < N; j++) { s += cabsmax[j]; mn = fmin(mn, cabsmax[j]); }
        for (i = 0; i < M; i++) { mx = fmax(mx, rabsmax[i]); am = fmax(am, fabs(rabsmax[i])); }
        (void)cs; (void)rmax;
        EXPECT_NEAR(F(r, 3)[0], s, "1-D reduce_sum%s", "");
        EXPECT_NEAR(F(r, 3)[1], mx, "1-D reduce_max default dim%s", "");
        EXPECT_NEAR(F(r, 3)[2], mn, "1-D reduce_min clear=False%s", "");
        EXPECT_NEAR(F(r, 3)[3], am, "1-D reduce_absmax%s", "");
    }
    run_free(&r);
}

/* ---- T.print --------------------------------------------------------------- */

Test(lang, print_output, .init = cr_redirect_stdout)
{
    tilec_context_t *ctx = NULL;
    tilec_program_t *p = NULL;
    float x[4] = {1.0f, 2.5f, -3.0f, 0.25f}, y[4] = {0};
    void *args[2] = {x, y};
    int i;
    setenv("TILEC_CACHE", "0", 1);
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    cr_assert_eq(tilec_program_load_file(ctx, "tests/lang/print_debug.py", NULL, 0, NULL, &p), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_assert_eq(tilec_program_interpret(ctx, p, args, NULL), TILEC_OK, "%s", tilec_context_message(ctx));
    for (i = 0; i < 4; i++) cr_expect_eq(y[i], 2 * x[i]);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
    fflush(stdout);
    cr_assert_stdout_eq_str("tile: [1, 2.5, -3, 0.25]\nblock: 0\nvalue: 3.5\n");
}

/* ---- arithmetic semantics -------------------------------------------------- */

Test(lang, arithmetic_python_and_c_semantics)
{
    run_t r;
    int N = 16, i;
    run_file(&r, "tests/lang/expr_arith.py", NULL, 0, fill_pattern);
    /* params: X(N) f32, I(N) i32, F(N,6) f32, J(N,6) i32 */
    for (i = 0; i < N; i++) {
        double x = pattern(0, i);
        float xf = (float)x;
        int64_t k = (int64_t)((i * 13 + 1 * 5) % 41) - 20;
        EXPECT_NEAR(F(r, 2)[i * 6 + 0], x + 2 * x - x / 4, "F[%d,0]", i);
        EXPECT_NEAR(F(r, 2)[i * 6 + 1], x * x - x * x, "F[%d,1]", i);
        EXPECT_NEAR(F(r, 2)[i * 6 + 2], floor((double)(xf * 10.0f) / 3.0), "F[%d,2] float //", i);
        {
            double a = (double)(xf * 10.0f);
            EXPECT_NEAR(F(r, 2)[i * 6 + 3], a - floor(a / 3.0) * 3.0, "F[%d,3] float %%", i);
        }
        EXPECT_NEAR(F(r, 2)[i * 6 + 4], 10.85 + x * x * x, "F[%d,4]", i);
        EXPECT_NEAR(F(r, 2)[i * 6 + 5], x / (1 + x * x), "F[%d,5]", i);
        cr_expect_eq(I32(r, 3)[i * 6 + 0], k / 3 + 18, "J[%d,0] (int / truncates) k=%lld", i, (long long)k);
        cr_expect_eq(I32(r, 3)[i * 6 + 1], py_floordiv(k, 3), "J[%d,1] (// floors) k=%lld", i, (long long)k);
        cr_expect_eq(I32(r, 3)[i * 6 + 2], py_mod(k, 5), "J[%d,2] (%% floors) k=%lld", i, (long long)k);
        cr_expect_eq(I32(r, 3)[i * 6 + 3], py_floordiv(-k, 7) + k * k, "J[%d,3] k=%lld", i, (long long)k);
        cr_expect_eq(I32(r, 3)[i * 6 + 4], 1026 - k * 2, "J[%d,4]", i);
        cr_expect_eq(I32(r, 3)[i * 6 + 5], py_mod(k + 100, 7) - py_floordiv(i - 8, 3), "J[%d,5]", i);
    }
    run_free(&r);
}

Test(lang, augmented_assignment)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/augassign.py", NULL, 0, fill_pattern);
    /* params: X(16) Y(16) C(16) int32 */
    for (i = 0; i < 16; i++) {
        double x = pattern(0, i);
        int64_t c = 3 * i - 1;
        EXPECT_NEAR(F(r, 1)[i], ((x + 3) * 2 - 1) / 4 + 6, "Y[%d]", i);
        cr_expect_eq(I32(r, 2)[i], c / 2, "C[%d] ((3i-1) / 2 truncating)", i);
    }
    run_free(&r);
}

/* ---- factories, constants, -D ---------------------------------------------- */

Test(lang, factory_constants_with_defines)
{
    run_t r;
    tilec_define_kv_t defs[] = {{"dim", "16"}, {"heads", "3"}, {"shift", "-2.5"}};
    int64_t k;
    run_file(&r, "tests/lang/factory_constants.py", defs, 3, fill_pattern);
    /* shape (2, 7, 3, 16); scale = (1/16) ** 0.5 = 0.25; big: shift * 2 */
    cr_assert_eq(r.count[0], 2 * 7 * 3 * 16);
    cr_assert_eq(r.shape[0][2], 3);
    for (k = 0; k < r.count[1]; k++) EXPECT_NEAR(F(r, 1)[k], pattern(0, k) * 0.25 - 5.0, "Y[%lld]", (long long)k);
    run_free(&r);
}

Test(lang, module_constants_follow_defines)
{
    run_t r;
    tilec_define_kv_t defs[] = {{"N", "5"}, {"M", "3"}};
    int i, j;
    run_file(&r, "tests/lang/module_constants.py", defs, 2, fill_pattern);
    cr_assert_eq(r.shape[1][0], 3);
    cr_assert_eq(r.shape[1][1], 10, "N2 = 2 * N follows -D N=5");
    for (i = 0; i < 3; i++)
        for (j = 0; j < 5; j++) {
            EXPECT_NEAR(F(r, 1)[i * 10 + j], pattern(0, i * 5 + j), "Y[%d,%d]", i, j);
            EXPECT_NEAR(F(r, 1)[i * 10 + j + 5], 2 * pattern(0, i * 5 + j), "Y[%d,%d]", i, j + 5);
        }
    run_free(&r);
}

Test(lang, compile_time_if_selects_branch)
{
    static const char *const modes[] = {"0", "1", "2"};
    int m, i;
    for (m = 0; m < 3; m++) {
        run_t r;
        tilec_define_kv_t defs[] = {{"mode", modes[m]}};
        run_file(&r, "tests/lang/ct_if.py", defs, 1, fill_pattern);
        for (i = 0; i < 40; i++) {
            double x = pattern(0, i), want = m == 0 ? 2 * x : m == 1 ? x - 1 : -x;
            want = fmax(want, 0.0);
            if (m == 1) want += 10;
            EXPECT_NEAR(F(r, 1)[i], want, "mode %d Y[%d]", m, i);
        }
        run_free(&r);
    }
}

Test(lang, macros_inline)
{
    run_t r;
    int i, j;
    run_file(&r, "tests/lang/macro_inline.py", NULL, 0, fill_pattern);
    for (i = 0; i < 8; i++) {
        double s = 0;
        for (j = 0; j < 12; j++) {
            double y = fmax(pattern(0, i * 12 + j) * 2.0, 0) + 1;
            s += y;
            EXPECT_NEAR(F(r, 1)[i * 12 + j], y, "Y[%d,%d]", i, j);
        }
        EXPECT_NEAR(F(r, 2)[i], s, "Z[%d]", i);
    }
    run_free(&r);
}

/* ---- statements ------------------------------------------------------------ */

Test(lang, loop_forms_trip_counts)
{
    run_t r;
    int b, i, N = 8;
    run_file(&r, "tests/lang/loops.py", NULL, 0, fill_pattern);
    for (b = 0; b < 4; b++) {
        for (i = 0; i < N; i++) {
            double want = pattern(0, b * N + i) + 3 + 20 + 600 + 0.5;
            if (i == 0) want += 0 + 3 + 6 + 9;
            if (i == 1) want += 2000;
            if (i == 2) want += 14;
            if (i == 3) want += 5 + 3;
            if (i == 4) want += b < 2 ? b : 2;
            if (i == N - 1) want += 0.25 * (4 - b);
            EXPECT_NEAR(F(r, 1)[b * N + i], want, "Y[%d,%d]", b, i);
        }
    }
    run_free(&r);
}

Test(lang, kernel_grid_indices)
{
    run_t r;
    int x, y, z;
    run_file(&r, "tests/lang/kernel_forms.py", NULL, 0, fill_pattern);
    for (z = 0; z < 4; z++)
        for (y = 0; y < 2; y++)
            for (x = 0; x < 3; x++) {
                int k = (z * 2 + y) * 3 + x;
                EXPECT_NEAR(F(r, 1)[k], pattern(0, k) + 100 * z + 10 * y + x, "Y[%d,%d,%d]", z, y, x);
            }
    run_free(&r);
}

Test(lang, runtime_if_elif_else)
{
    run_t r;
    int i, N = 64;
    run_file(&r, "tests/lang/rt_if.py", NULL, 0, fill_pattern);
    for (i = 0; i < N; i++) {
        double x = (float)pattern(0, i), want;
        if (x > 0.5) want = 1;
        else if (0 < x && x <= 0.5) want = 2;
        else if (x < -0.5 && i % 2 == 0) want = 3;
        else want = 4;
        if (i == 0 || i == N - 1) want += 10;
        EXPECT_NEAR(F(r, 1)[i], want, "Y[%d] (x=%g)", i, x);
    }
    run_free(&r);
}

Test(lang, alloc_var_running_values)
{
    run_t r;
    int i, N = 50, cnt = 0;
    double mx = -1e30, s = 7;
    run_file(&r, "tests/lang/alloc_forms.py", NULL, 0, fill_pattern);
    for (i = 0; i < N; i++) {
        double x = pattern(0, i);
        mx = fmax(mx, x);
        cnt += x > 0;
        s += x;
    }
    EXPECT_NEAR(F(r, 1)[0], mx, "max%s", "");
    EXPECT_NEAR(F(r, 1)[1], cnt, "count%s", "");
    EXPECT_NEAR(F(r, 1)[2], s, "7 + sum%s", "");
    run_free(&r);
}

/* ---- copies and boundaries ------------------------------------------------- */

Test(lang, boundary_safe_copies)
{
    run_t r;
    int M = 10, N = 13, B = 8, i, j;
    run_file(&r, "tests/lang/copy_boundary.py", NULL, 0, fill_pattern);
    /* params: X Y S R Q */
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double x = pattern(0, i * N + j);
            EXPECT_NEAR(F(r, 1)[i * N + j], x + 1, "Y[%d,%d]", i, j);
            EXPECT_NEAR(F(r, 3)[i * N + j], x, "R[%d,%d]", i, j);
            EXPECT_NEAR(F(r, 4)[i * N + j], x, "Q[0,%d,%d]", i, j);
        }
    for (i = 0; i < 2; i++)
        for (j = 0; j < 2; j++) {
            double s = 0;
            int a, b;
            for (a = i * B; a < i * B + B && a < M; a++)
                for (b = j * B; b < j * B + B && b < N; b++) s += pattern(0, a * N + b);
            EXPECT_NEAR(F(r, 2)[i * 2 + j], s, "S[%d,%d] (padding read as 0)", i, j);
        }
    run_free(&r);
}

Test(lang, atomics_under_contention)
{
    run_t r;
    int M = 12, N = 8, i, j;
    /* Sum/Mx/Mn/TS/TM start from the pattern, so the result also shows the start value was kept */
    run_file(&r, "tests/lang/atomics.py", NULL, 0, fill_pattern);
    for (j = 0; j < N; j++) {
        double s = pattern(1, j), mx = pattern(2, j), mn = pattern(3, j), ts = pattern(5, j), tm = pattern(6, j);
        for (i = 0; i < M; i++) {
            double x = pattern(0, i * N + j);
            s += x;
            mx = fmax(mx, x);
            mn = fmin(mn, x);
            ts += x;
            tm = fmax(tm, x);
        }
        EXPECT_NEAR(F(r, 1)[j], s, "Sum[%d]", j);
        EXPECT_NEAR(F(r, 2)[j], mx, "Mx[%d]", j);
        EXPECT_NEAR(F(r, 3)[j], mn, "Mn[%d]", j);
        EXPECT_NEAR(F(r, 5)[j], ts, "TS[%d]", j);
        EXPECT_NEAR(F(r, 6)[j], tm, "TM[%d]", j);
    }
    {
        int32_t c0 = (int32_t)((0 * 13 + 4 * 5) % 41) - 20;
        cr_expect_eq(I32(r, 4)[0], c0 + 2 * M, "Cnt: got %d", I32(r, 4)[0]);
    }
    run_free(&r);
}

Test(lang, fills_and_clears)
{
    run_t r;
    int i, j, N = 6;
    run_file(&r, "tests/lang/clear_fill.py", NULL, 0, fill_pattern);
    /* params: X(N) Y(5,N) I(N) int32 G(4,N) */
    for (j = 0; j < N; j++) {
        double x0 = pattern(0, 0);
        double want[5] = {0, 2.5, x0, -INFINITY, -INFINITY};
        for (i = 0; i < 5; i++) {
            double w = j == 1 ? -7 : want[i];
            double got = F(r, 1)[i * N + j];
            cr_expect(got == w, "Y[%d,%d]: got %g want %g", i, j, got, w);
        }
        cr_expect_eq(I32(r, 2)[j], 3, "T.fill(int tile, 3.9) truncates");
        cr_expect_eq(F(r, 3)[j], 0.0f);
        for (i = 1; i < 4; i++) cr_expect_eq(F(r, 3)[i * N + j], 0.5f);
    }
    run_free(&r);
}

Test(lang, dynamic_symbols)
{
    run_t r;
    tilec_define_kv_t defs[] = {{"m", "37"}, {"n", "5"}};
    int i, j;
    run_file(&r, "tests/lang/dynamic_syms.py", defs, 2, fill_pattern);
    cr_assert_eq(r.shape[0][0], 37);
    cr_assert_eq(r.shape[0][1], 5);
    for (i = 0; i < 37; i++) {
        cr_expect_eq(I32(r, 2)[i], 5 * 2 + 37);
        for (j = 0; j < 5; j++) EXPECT_NEAR(F(r, 1)[i * 5 + j], pattern(0, i * 5 + j) + 5, "Y[%d,%d]", i, j);
    }
    for (i = 0; i < 2; i++)
        for (j = 0; j < 5; j++) EXPECT_NEAR(F(r, 3)[i * 5 + j], 2 * pattern(0, i * 5 + j), "Z[%d,%d]", i, j);
    run_free(&r);
}

/* ---- scalar functions ------------------------------------------------------ */

Test(lang, scalar_math)
{
    run_t r;
    int i, N = 32;
    run_file(&r, "tests/lang/scalar_math.py", NULL, 0, fill_pattern);
    for (i = 0; i < N; i++) {
        double x = (float)pattern(0, i), a = fabs(x) + 0.1f;
        float *y = F(r, 1) + i * 20;
        int32_t *k = I32(r, 2) + i * 3;
        a = (float)a;
        EXPECT_NEAR(y[0], fmax(x, 0.2), "max%s", "");
        EXPECT_NEAR(y[1], fmin(x, -0.2), "min%s", "");
        EXPECT_NEAR(y[2], fabs(x), "abs%s", "");
        EXPECT_NEAR(y[3], exp(x), "exp%s", "");
        EXPECT_NEAR(y[4], exp2(x), "exp2%s", "");
        EXPECT_NEAR(y[5], log(a), "log%s", "");
        EXPECT_NEAR(y[6], log2(a), "log2%s", "");
        EXPECT_NEAR(y[7], sqrt(a), "sqrt%s", "");
        EXPECT_NEAR(y[8], 1 / sqrt(a), "rsqrt%s", "");
        EXPECT_NEAR(y[9], tanh(x * 3), "tanh%s", "");
        EXPECT_NEAR(y[10], 1 / (1 + exp(-x * 3)), "sigmoid%s", "");
        EXPECT_NEAR(y[11], x > 0 ? x : 2 * x, "if_then_else%s", "");
        cr_expect(y[12] == (x > 0 ? INFINITY : -INFINITY), "infinity");
        EXPECT_NEAR(y[13], x, "exp(-inf) + min(x, inf)%s", "");
        EXPECT_NEAR(y[14], 2 * x, "astype%s", "");
        EXPECT_NEAR(y[15], fmax(x, 0) + fmin(x, 0) * 2 + fabs(x) * 4, "python min/max/abs%s", "");
        EXPECT_NEAR(y[16], fmax(fmin(x, 0.5), -0.5), "clamp%s", "");
        EXPECT_NEAR(y[17], trunc((float)(x * 10)), "cast to int32 truncates%s", "");
        EXPECT_NEAR(y[18], (i + 2) / 3 + (N + 4) / 5, "ceildiv%s", "");
        EXPECT_NEAR(y[19], 0, "exp(log(a)) - a%s", "");
        cr_expect_eq(k[0], (i > 5 ? i : 5) - (i < 20 ? i : 20));
        cr_expect_eq(k[1], abs(i - 16));
        cr_expect_eq(k[2], i % 2 == 0 ? i : -i);
    }
    run_free(&r);
}

Test(lang, compile_time_folding)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/ct_fold.py", NULL, 0, fill_pattern);
    for (i = 0; i < 37; i++) EXPECT_NEAR(F(r, 1)[i], pattern(0, i) * 14 + 5, "Y[%d]", i);
    cr_expect_eq(I32(r, 2)[0], 40, "pad = ceildiv(37, 8) * 8");
    run_free(&r);
}

Test(lang, conversions_by_dtype_attribute)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/dtypes_attr.py", NULL, 0, fill_pattern);
    /* params: X f32, O0 f16, O1 bf16, O2 f32, O3 f64, O4 i8, O5 i16, O6 i32, O7 i64, O8 u8, O9 u16,
     * O10 u32, O11 u64, O12 bool */
    for (i = 0; i < 8; i++) {
        double x = pattern(0, i);
        EXPECT_NEAR(F(r, 3)[i], x * 3, "float32(x*3) [%d]", i);
        EXPECT_NEAR(((double *)r.ref[4])[i], x * 3, "float64 [%d]", i);
        cr_expect_eq(((int8_t *)r.ref[5])[i], (int8_t)trunc(x * 50), "int8 [%d]", i);
        cr_expect_eq(((int16_t *)r.ref[6])[i], (int16_t)trunc(x * 300), "int16 [%d]", i);
        cr_expect_eq(I32(r, 7)[i], (int32_t)trunc(x * 1000), "int32 [%d]", i);
        cr_expect_eq(((int64_t *)r.ref[8])[i], (int64_t)trunc(x * 100000), "int64 [%d]", i);
        cr_expect_eq(((uint8_t *)r.ref[9])[i], (uint8_t)trunc(x * 40 + 100), "uint8 [%d]", i);
        cr_expect_eq(((uint16_t *)r.ref[10])[i], (uint16_t)trunc(x * 1000 + 2000), "uint16 [%d]", i);
        cr_expect_eq(((uint32_t *)r.ref[11])[i], (uint32_t)trunc(x * 1000 + 2000), "uint32 [%d]", i);
        cr_expect_eq(((uint64_t *)r.ref[12])[i], (uint64_t)trunc(x * 1000 + 2000), "uint64 [%d]", i);
        cr_expect_eq(((uint8_t *)r.ref[13])[i], x > 0, "bool [%d]", i);
    }
    /* float16 of x*3: the values are multiples of 0.75 in [-3.75, 3.75], exact in float16 */
    for (i = 0; i < 8; i++) {
        uint16_t h = ((uint16_t *)r.ref[1])[i];
        double v = ldexp((double)((h & 0x3FF) | 0x400), ((h >> 10) & 0x1F) - 25) * ((h & 0x8000) ? -1 : 1);
        if (((h >> 10) & 0x1F) == 0) v = 0;
        EXPECT_NEAR(v, pattern(0, i) * 3, "float16 [%d]", i);
    }
    run_free(&r);
}

Test(lang, logic_and_conditionals)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/expr_logic.py", NULL, 0, fill_pattern);
    for (i = 0; i < 32; i++) {
        double x = (float)pattern(0, i), lim = 0.25;
        float *y = F(r, 1) + i * 4;
        EXPECT_NEAR(y[0], (x > lim) + (x >= 0) * 2 + 4 + (x != 0) * 8, "Y[%d,0]", i);
        EXPECT_NEAR(y[1], (-lim < x && x < lim) ? 1.0 : (x <= -lim ? 2.0 : 3.0), "Y[%d,1]", i);
        EXPECT_NEAR(y[2], (x < 0 && i % 2 == 1) + (x > 0.9 || i < 3) * 2 + !(x > 0) * 4, "Y[%d,2]", i);
        EXPECT_NEAR(y[3], x, "Y[%d,3]", i);
        cr_expect_eq(((uint8_t *)r.ref[2])[i], x > 0 || i == 0, "B[%d]", i);
    }
    run_free(&r);
}

Test(lang, keyword_arguments)
{
    run_t r;
    int i, j;
    run_file(&r, "tests/lang/calls_kwargs.py", NULL, 0, fill_pattern);
    /* params: X(4,6) S(4) C(4,6) Z(2) int32 */
    for (i = 0; i < 4; i++) {
        double s = 2.0;
        for (j = 0; j < 6; j++) s += pattern(0, i * 6 + j);
        EXPECT_NEAR(F(r, 1)[i], s, "S[%d] (clear=False onto 2.0)", i);
        for (j = 0; j < 6; j++) {
            double c = 0;
            int k;
            for (k = j; k < 6; k++) c += pattern(0, i * 6 + k);
            EXPECT_NEAR(F(r, 2)[i * 6 + j], c, "C[%d,%d] (reverse cumsum)", i, j);
        }
    }
    cr_expect_eq(I32(r, 3)[0], 5);
    cr_expect_eq(I32(r, 3)[1], 7);
    run_free(&r);
}

Test(lang, tuple_unpacking)
{
    run_t r;
    int i, j;
    run_file(&r, "tests/lang/assign_unpack.py", NULL, 0, fill_pattern);
    for (i = 0; i < 10; i++)
        for (j = 0; j < 12; j++) {
            double x = (float)pattern(0, i * 12 + j), y = x * 1.0, y2 = y + 2.0, z = y * 3.0;
            EXPECT_NEAR(F(r, 1)[i * 12 + j], y2 - z, "B[%d,%d]", i, j);
        }
    run_free(&r);
}

Test(lang, subscripts_and_slices)
{
    run_t r;
    int M = 12, N = 10, i, j;
    run_file(&r, "tests/lang/subscripts.py", NULL, 0, fill_pattern);
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double x = pattern(0, i * N + j);
            EXPECT_NEAR(F(r, 1)[i * N + j], j == 2 ? 2 * x : x, "B[%d,%d]", i, j);
        }
    for (j = 0; j < N; j++) {
        double a = pattern(0, j), b = pattern(0, 3 * N + j);
        if (j == 2) { a *= 2; b *= 2; }
        EXPECT_NEAR(F(r, 2)[j], a + b, "C[%d]", j);
    }
    run_free(&r);
}

/* ---- entries, imports, compile-time values ---------------------------------- */

Test(lang, entry_selection)
{
    static const struct { const char *entry; int n; double k; } cases[] = {
        {NULL, 16, 4}, {"double", 16, 2}, {"triple", 7, 3}, {"quadruple", 16, 4}};
    tilec_define_kv_t defs[] = {{"N", "7"}};
    unsigned c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        run_t r;
        int i;
        int is_triple = cases[c].entry && !strcmp(cases[c].entry, "triple");
        run_entry(&r, "tests/lang/entry_pick.py", cases[c].entry, is_triple ? defs : NULL, is_triple, fill_pattern);
        cr_assert_eq(r.count[1], cases[c].n);
        for (i = 0; i < cases[c].n; i++)
            EXPECT_NEAR(F(r, 1)[i], pattern(0, i) * cases[c].k, "entry %s Y[%d]", cases[c].entry, i);
        run_free(&r);
    }
}

Test(lang, import_forms)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/imports_from.py", NULL, 0, fill_pattern);
    for (i = 0; i < 40; i++) EXPECT_NEAR(F(r, 1)[i], pattern(0, i) + 1, "Y[%d]", i);
    run_free(&r);
}

Test(lang, compile_time_values)
{
    static const char *const which[] = {"first", "second"};
    int w, i;
    for (w = 0; w < 2; w++) {
        run_t r;
        tilec_define_kv_t defs[] = {{"which", which[w]}};
        run_file(&r, "tests/lang/ct_values.py", defs, 1, fill_pattern);
        for (i = 0; i < 12; i++) {
            /* which=second swaps both the buffers and their destinations */
            EXPECT_NEAR(F(r, 1)[i], pattern(0, i) * 3 + 7, "which=%s Y[%d]", which[w], i);
        }
        run_free(&r);
    }
}

Test(lang, one_dimensional_grid)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/kernel_1d.py", NULL, 0, fill_pattern);
    for (i = 0; i < 20; i++) EXPECT_NEAR(F(r, 1)[i], pattern(0, i) * (i / 4), "Y[%d]", i);
    run_free(&r);
}

Test(lang, tilelang_idioms)
{
    run_t r;
    int64_t k;
    run_file(&r, "tests/lang/tilelang_idioms.py", NULL, 0, fill_pattern);
    for (k = 0; k < r.count[1]; k++) EXPECT_NEAR(F(r, 1)[k], pattern(0, k) + 3, "B[%lld]", (long long)k);
    run_free(&r);
}

Test(lang, eager_jit_kernel)
{
    run_t r;
    int64_t k;
    tilec_define_kv_t defs[] = {{"block", "8"}, {"M", "24"}, {"N", "6"}};
    run_file(&r, "tests/lang/eager_jit.py", defs, 3, fill_pattern);
    cr_assert_eq(r.n, 2, "A and the T.empty output B");
    cr_assert_eq(r.shape[1][0], 24);
    cr_assert_eq(r.shape[1][1], 6);
    for (k = 0; k < r.count[1]; k++) EXPECT_NEAR(F(r, 1)[k], pattern(0, k) * 2 + 4, "B[%lld]", (long long)k);
    run_free(&r);
}

Test(lang, compile_time_python)
{
    static const double w[4] = {1, 2, 3, 4};
    run_t r;
    int64_t k;
    run_file(&r, "tests/lang/ct_python.py", NULL, 0, fill_pattern);
    cr_assert_eq(r.count[1], 16);
    for (k = 0; k < 16; k++) EXPECT_NEAR(F(r, 1)[k], pattern(0, k) * w[k % 4] + 10, "Y[%lld]", (long long)k);
    run_free(&r);
}

/* Direct global accesses past a ragged edge: loads read 0, stores and
 * atomics are skipped (core/pass_safe_memory.c), in the interpreter and on
 * the CPU backend alike (run_file checks they agree). */
Test(lang, ragged_direct_accesses_are_safe)
{
    run_t r;
    int M = 37, N = 5, i, k;
    double tot = pattern(2, 0);   /* Tot starts with the pattern */
    run_file(&r, "tests/lang/ragged_direct.py", NULL, 0, fill_pattern);
    cr_assert_eq(r.count[1], M * N, "Y is exactly M x N: a write past it would corrupt the heap");
    for (i = 0; i < M; i++) {
        double m = 0;
        for (k = 0; k < N; k++) m += pattern(0, i * N + k);
        for (k = 0; k < N; k++) EXPECT_NEAR(F(r, 1)[i * N + k], m + k, "Y[%d, %d]", i, k);
        tot += pattern(0, i * N);
        for (k = 0; k < 4; k++) EXPECT_NEAR(F(r, 3)[i * 4 + k], pattern(0, i * N + k) * 2, "Z[%d, %d]", i, k);
    }
    EXPECT_NEAR(F(r, 2)[0], tot, "Tot%s", "");
    run_free(&r);
}

Test(lang, tvm_helpers)
{
    run_t r;
    int k;
    run_file(&r, "tests/lang/tvm_helpers.py", NULL, 0, fill_pattern);
    for (k = 0; k < 8; k++) EXPECT_NEAR(F(r, 1)[k], 3 * pattern(0, k), "B[%d]", k);
    run_free(&r);
}

static void fill_u8(int i, void *data, int64_t count, tilec_elem_t e)
{
    int64_t k;
    if (e == TILEC_ELEM_UINT8 && i == 0) {
        for (k = 0; k < count; k++) ((uint8_t *)data)[k] = (uint8_t)(k * 37);   /* 0, 37, ..., 259 -> 3 */
    } else {
        fill_pattern(i, data, count, e);
    }
}

Test(lang, integer_literals_widen_or_wrap)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/int_literals.py", NULL, 0, fill_u8);
    for (i = 0; i < 8; i++) {
        int64_t u = (uint8_t)(i * 37), x = (int64_t)((i * 13 + 1 * 5) % 41) - 20;
        const int64_t *w = (const int64_t *)r.ref[2] + i * 4;
        const uint8_t *s = (const uint8_t *)r.ref[3] + i * 4;
        cr_expect_eq(w[0], u - 300, "u - 300: got %lld", (long long)w[0]);
        cr_expect_eq(w[1], x * 2147483648LL, "i * 2**31: got %lld", (long long)w[1]);
        cr_expect_eq(w[2], 3, "u > -1 and u < 256 are both true: got %lld", (long long)w[2]);
        cr_expect_eq(w[3], x + 4294967296LL);
        cr_expect_eq(s[0], (uint8_t)(u + 1), "u + 1 wraps in uint8");
        cr_expect_eq(s[1], 44, "300 stored into uint8");
        cr_expect_eq(s[2], 255, "T.fill(uint8, -1)");
        cr_expect_eq(s[3], (uint8_t)(u - 1), "u - 1 wraps in uint8");
    }
    run_free(&r);
}

Test(lang, copy_corners_on_either_side)
{
    run_t r;
    int i, j, N = 8;
    run_file(&r, "tests/lang/copy_corners.py", NULL, 0, fill_pattern);
    /* params: X(8,N) Y(4,N) Col(8,2) Z(2,N) */
    for (j = 0; j < N; j++) {
        EXPECT_NEAR(F(r, 1)[j], 0, "Y[0,%d] (cleared row of s)", j);
        for (i = 1; i < 4; i++) EXPECT_NEAR(F(r, 1)[i * N + j], pattern(0, (i - 1) * N + j), "Y[%d,%d]", i, j);
        for (i = 0; i < 2; i++) EXPECT_NEAR(F(r, 3)[i * N + j], pattern(0, (6 + i) * N + j), "Z[%d,%d]", i, j);
    }
    for (i = 0; i < 8; i++) {
        EXPECT_NEAR(F(r, 2)[i * 2 + 1], pattern(0, i * N + 3), "Col[%d,1]", i);
        EXPECT_NEAR(F(r, 2)[i * 2 + 0], pattern(2, i * 2), "Col[%d,0] untouched", i);
    }
    run_free(&r);
}

/* ---- more end-to-end results ------------------------------------------------- */

Test(lang, parallel_extents_and_star)
{
    run_t r;
    int64_t k;
    run_file(&r, "tests/lang/parallel_star.py", NULL, 0, fill_pattern);
    for (k = 0; k < 3 * 4 * 5; k++) EXPECT_NEAR(F(r, 1)[k], pattern(0, k) + 10, "Y[%lld]", (long long)k);
    for (k = 0; k < 12; k++) cr_expect_eq(I32(r, 2)[k], k * 10);
    run_free(&r);
}

Test(lang, hints_change_nothing)
{
    run_t r;
    int i, j;
    run_file(&r, "tests/lang/hints.py", NULL, 0, fill_pattern);
    for (i = 0; i < 12; i++)
        for (j = 0; j < 8; j++) EXPECT_NEAR(F(r, 1)[i * 8 + j], pattern(0, j * 12 + i), "Y[%d,%d]", i, j);
    run_free(&r);
}

Test(lang, statements_misc)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/misc_stmts.py", NULL, 0, fill_pattern);
    for (i = 0; i < 9; i++) EXPECT_NEAR(F(r, 1)[i], pattern(0, i) + 1, "Y[%d]", i);
    run_free(&r);
}

Test(lang, buffer_shape_and_dtype)
{
    run_t r;
    int64_t k;
    run_file(&r, "tests/lang/buffer_attrs.py", NULL, 0, fill_pattern);
    for (k = 0; k < 60; k++) EXPECT_NEAR(F(r, 1)[k], pattern(0, k) * 10, "Y[%lld]", (long long)k);
    run_free(&r);
}

Test(lang, grid_from_star_and_extent)
{
    run_t r;
    int y, x;
    run_file(&r, "tests/lang/kernel_2d_star.py", NULL, 0, fill_pattern);
    for (y = 0; y < 3; y++)
        for (x = 0; x < 5; x++)
            EXPECT_NEAR(F(r, 1)[y * 5 + x], pattern(0, y * 5 + x) * 2 + y, "Y[%d,%d]", y, x);
    run_free(&r);
}

static void fill_f16_exact(int i, void *data, int64_t count, tilec_elem_t e)
{
    int64_t k;
    if (e == TILEC_ELEM_FLOAT16) {
        /* -1, -0.5, 0, 0.5, 1 as float16 bits */
        static const uint16_t h[5] = {0xBC00, 0xB800, 0x0000, 0x3800, 0x3C00};
        for (k = 0; k < count; k++) ((uint16_t *)data)[k] = i == 0 ? h[k % 5] : 0x7E00 /* NaN: must be overwritten */;
    } else {
        fill_zero(i, data, count, e);
    }
}

Test(lang, copies_between_all_scopes)
{
    run_t r;
    int64_t k;
    run_file(&r, "tests/lang/copy_scopes.py", NULL, 0, fill_f16_exact);
    /* params: X Y Z W V (16 x 24) */
    for (k = 0; k < 16 * 24; k++) {
        uint16_t x = ((uint16_t *)r.ref[0])[k];
        cr_expect_eq(((uint16_t *)r.ref[1])[k], x, "Y[%lld]", (long long)k);
        cr_expect_eq(((uint16_t *)r.ref[3])[k], x, "W[%lld] (global -> global)", (long long)k);
        cr_expect_eq(((uint16_t *)r.ref[4])[k], x, "V[%lld]", (long long)k);
        cr_expect_eq(I32(r, 2)[k], (int32_t)(((k % 5) - 2) * 0.5 * 4), "Z[%lld]", (long long)k);
    }
    run_free(&r);
}

/* Compile-time `if` and macros leave no trace in the IR: only the chosen
 * branch is compiled, and macro bodies are inlined. */
Test(lang, compile_time_if_leaves_no_branch)
{
    tilec_context_t *ctx = NULL;
    tilec_program_t *p = NULL;
    tilec_define_kv_t defs[] = {{"mode", "1"}, {"act", "none"}};
    const char *ir;
    setenv("TILEC_CACHE", "0", 1);
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    cr_assert_eq(tilec_program_load_file(ctx, "tests/lang/ct_if.py", defs, 2, NULL, &p), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    ir = tilec_program_ir(p);
    cr_assert(ir != NULL);
    cr_expect(strstr(ir, " if ") == NULL && strstr(ir, "\tif ") == NULL && strstr(ir, "  if") == NULL,
              "a compile-time if must not reach the IR:\n%s", ir);
    cr_expect(strstr(ir, "max") == NULL, "act=none drops the relu branch:\n%s", ir);
    tilec_program_free(p);
    cr_assert_eq(tilec_program_load_file(ctx, "tests/lang/rt_if.py", NULL, 0, NULL, &p), TILEC_OK);
    cr_expect(strstr(tilec_program_ir(p), "if ") != NULL, "a run-time if stays in the IR");
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

Test(lang, scalar_kernel_parameters)
{
    run_t r;
    tilec_define_kv_t defs[] = {{"m", "6"}, {"k", "3"}, {"n", "5"}, {"alpha", "0.5"}};
    int i, j;
    run_file(&r, "tests/lang/scalar_params.py", defs, 4, fill_pattern);
    cr_assert_eq(r.n, 2);                    /* X and Y: the scalars are not tensor parameters */
    cr_assert_eq(r.shape[1][0], 6);
    for (i = 0; i < 6; i++)
        for (j = 0; j < 3; j++)
            EXPECT_NEAR(F(r, 1)[i * 3 + j], pattern(0, i * 3 + j) * 0.5 + 5, "Y[%d,%d]", i, j);
    run_free(&r);
}

/* TL_ENABLE_FAST_MATH keeps -inf and max over it (the CPU backend's fast
 * math used to make both garbage) */
Test(lang, fast_math_keeps_infinities)
{
    run_t r;
    int i, j;
    run_file(&r, "tests/lang/fast_math_inf.py", NULL, 0, fill_pattern);
    for (i = 0; i < 8; i++) {
        double m = -INFINITY;
        for (j = 0; j <= i; j++) m = fmax(m, (float)pattern(0, i * 8 + j));
        EXPECT_NEAR(F(r, 2)[i], m, "M[%d]", i);
        for (j = 0; j < 8; j++)
            EXPECT_NEAR(F(r, 1)[i * 8 + j], j > i ? 0.0 : exp2((float)pattern(0, i * 8 + j) - m), "P[%d,%d]", i, j);
    }
    run_free(&r);
}

/* ---- float8 (tile IR 1.2) ------------------------------------------------ */

/* inputs of float8.py's convert, with the bytes ml_dtypes gives for them */
static const float f8_in[16] = {
    1.0f, 448.0f, 464.0f, 465.0f, -500.0f, INFINITY, 1.0625f, 1.07f,
    0x1p-9f, 0x1p-10f, 0.75f * 0x1p-9f, 57344.0f, 61440.0f, 1.125f, -0x1p-16f, 0.0f};
static const uint8_t f8_e4[16] = {0x38, 0x7e, 0x7e, 0x7f, 0xff, 0x7f, 0x38, 0x39,
                                  0x01, 0x00, 0x01, 0x7f, 0x7f, 0x39, 0x80, 0x00};
static const uint8_t f8_e5[16] = {0x3c, 0x5f, 0x5f, 0x5f, 0xe0, 0x7c, 0x3c, 0x3c,
                                  0x18, 0x14, 0x16, 0x7b, 0x7c, 0x3c, 0x81, 0x00};

static void fill_f8_inputs(int i, void *data, int64_t count, tilec_elem_t e)
{
    if (i == 0 && e == TILEC_ELEM_FLOAT32 && count == 16) memcpy(data, f8_in, sizeof f8_in);
}

Test(lang, float8_conversions_round_to_nearest_even)
{
    run_t r;
    int k;
    run_entry(&r, "tests/lang/float8.py", "convert", NULL, 0, fill_f8_inputs);
    cr_assert_eq(r.elem[1], TILEC_ELEM_FLOAT8_E4M3FN);
    cr_assert_eq(r.elem[2], TILEC_ELEM_FLOAT8_E5M2);
    for (k = 0; k < 16; k++) {
        uint8_t e4 = ((uint8_t *)r.ref[1])[k], e5 = ((uint8_t *)r.ref[2])[k];
        cr_expect_eq(e4, f8_e4[k], "e4m3fn(%a): got 0x%02x, want 0x%02x", (double)f8_in[k], e4, f8_e4[k]);
        cr_expect_eq(e5, f8_e5[k], "e5m2(%a): got 0x%02x, want 0x%02x", (double)f8_in[k], e5, f8_e5[k]);
    }
    /* read back: 448, NaN for overflow, 1.125 for 1.07, 2^-9 subnormal; e5m2 inf and 57344 */
    EXPECT_NEAR(F(r, 3)[1], 448.0, "Back[0,1]%s", "");
    cr_expect(isnan(F(r, 3)[3]) && isnan(F(r, 3)[5]), "e4m3fn overflow and inf read back as NaN");
    EXPECT_NEAR(F(r, 3)[7], 1.125, "Back[0,7]%s", "");
    EXPECT_NEAR(F(r, 3)[8] * 512.0, 1.0, "Back[0,8] * 2^9%s", "");
    EXPECT_NEAR(F(r, 3)[16 + 11], 57344.0, "Back[1,11]%s", "");
    cr_expect(isinf(F(r, 3)[16 + 12]) && F(r, 3)[16 + 12] > 0, "e5m2 61440 rounds to +inf");
    EXPECT_NEAR(F(r, 3)[16 + 14] * 65536.0, -1.0, "Back[1,14] * 2^16%s", "");
    run_free(&r);
}

static void fill_f8_pattern(int i, void *data, int64_t count, tilec_elem_t e)
{
    int64_t k;
    if (e != TILEC_ELEM_FLOAT8_E4M3FN) return fill_zero(i, data, count, e);
    /* pattern() values (multiples of 0.25 in [-1.25, 1.25]) are exact in e4m3fn */
    for (k = 0; k < count; k++) {
        double v = pattern(i, k), a = fabs(v);
        uint8_t b = 0;
        if (a != 0) {
            int ex = 0;
            double m = frexp(a, &ex);           /* a = m * 2^ex, m in [0.5, 1) */
            b = (uint8_t)(((ex - 1 + 7) << 3) | (int)((m * 2 - 1) * 8));
        }
        ((uint8_t *)data)[k] = (uint8_t)(b | (v < 0 ? 0x80 : 0));
    }
}

Test(lang, float8_gemm_accumulates_in_float32)
{
    run_t r;
    int i, j, k;
    run_entry(&r, "tests/lang/float8.py", "gemm", NULL, 0, fill_f8_pattern);
    for (i = 0; i < 16; i++)
        for (j = 0; j < 16; j++) {
            double want = 0;
            for (k = 0; k < 32; k++) want += pattern(0, i * 32 + k) * pattern(1, k * 16 + j);
            EXPECT_NEAR(F(r, 2)[i * 16 + j], want, "C[%d,%d]", i, j);
        }
    run_free(&r);
}

/* ---- 4-bit dtypes (tile IR 1.3) ------------------------------------------ */

/* inputs of int4.py's convert: float32 values with the float4_e2m1fn codes
 * ml_dtypes gives them (ties to even, saturation at 6, -0 and a tiny
 * negative keep their sign), and int32 values with their int4 wrap */
static const float f4_in[16] = {0.25f, 0.26f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f,
                                6.5f, 7.0f, 100.0f, INFINITY, -INFINITY, -0.0f, -7.0f, -1e-9f};
static const uint8_t f4_code[16] = {0, 1, 2, 2, 4, 4, 6, 6, 7, 7, 7, 7, 15, 8, 15, 8};
static const float f4_back[16] = {0, 0.5f, 1, 1, 2, 2, 4, 4, 6, 6, 6, 6, -6, -0.0f, -6, -0.0f};
static const int32_t i4_in[16] = {0, 1, 7, 8, -1, -8, -9, 15, 16, 17, -16, 100, -100, 3, -3, 1000};
static const int32_t i4_back[16] = {0, 1, 7, -8, -1, -8, 7, -1, 0, 1, 0, 4, -4, 3, -3, -8};

static void fill_f4_inputs(int i, void *data, int64_t count, tilec_elem_t e)
{
    if (i == 0 && e == TILEC_ELEM_FLOAT32 && count == 16) memcpy(data, f4_in, sizeof f4_in);
    if (i == 1 && e == TILEC_ELEM_INT32 && count == 16) memcpy(data, i4_in, sizeof i4_in);
}

static unsigned nibble(const void *p, int k) { return (((const uint8_t *)p)[k / 2] >> (4 * (k % 2))) & 15u; }

Test(lang, four_bit_conversions_and_packing)
{
    run_t r;
    int k;
    run_entry(&r, "tests/lang/int4.py", "convert", NULL, 0, fill_f4_inputs);
    cr_assert_eq(r.elem[2], TILEC_ELEM_FLOAT4_E2M1FN);
    cr_assert_eq(r.elem[3], TILEC_ELEM_INT4);
    cr_assert_eq(r.elem[4], TILEC_ELEM_UINT4);
    cr_assert_eq(r.bytes[2], 8, "16 float4 values take 8 bytes");
    for (k = 0; k < 16; k++) {
        cr_expect_eq(nibble(r.ref[2], k), f4_code[k], "e2m1fn(%a): got %u, want %u", (double)f4_in[k],
                     nibble(r.ref[2], k), f4_code[k]);
        cr_expect_eq(nibble(r.ref[3], k), (unsigned)i4_back[k] & 15u, "int4(%d) nibble", i4_in[k]);
        cr_expect_eq(nibble(r.ref[4], k), (unsigned)i4_in[k] & 15u, "uint4(%d) nibble", i4_in[k]);
        EXPECT_NEAR(F(r, 5)[k], f4_back[k], "Back[0,%d]", k);
        cr_expect(signbit(F(r, 5)[k]) == signbit(f4_back[k]), "Back[0,%d] keeps the sign of %g", k, f4_back[k]);
        EXPECT_NEAR(F(r, 5)[16 + k], i4_back[k], "Back[1,%d]", k);
        EXPECT_NEAR(F(r, 5)[32 + k], (unsigned)i4_in[k] & 15u, "Back[2,%d]", k);
    }
    /* the even element in the low nibble: int4 0 then 1 is the byte 0x10 */
    cr_expect_eq(((uint8_t *)r.ref[3])[0], 0x10);
    run_free(&r);
}

/* int4 operands, element k of parameter i: k * (i + 3) mod 16 - 8 */
static int i4_pattern(int i, int64_t k) { return (int)((k * (i + 3)) % 16) - 8; }

static void fill_i4_pattern(int i, void *data, int64_t count, tilec_elem_t e)
{
    int64_t k;
    if (e != TILEC_ELEM_INT4) return fill_zero(i, data, count, e);
    for (k = 0; k < count; k++)
        ((uint8_t *)data)[k / 2] |= (uint8_t)(((unsigned)i4_pattern(i, k) & 15u) << (4 * (k % 2)));
}

Test(lang, int4_gemm_accumulates_in_int32)
{
    run_t r;
    int i, j, k;
    run_entry(&r, "tests/lang/int4.py", "gemm", NULL, 0, fill_i4_pattern);
    for (i = 0; i < 32; i++)
        for (j = 0; j < 16; j++) {
            int32_t want = 0;
            for (k = 0; k < 64; k++) want += i4_pattern(0, i * 64 + k) * i4_pattern(1, j * 64 + k);
            cr_expect_eq(I32(r, 2)[i * 16 + j], want, "C[%d,%d]: %d, want %d", i, j, I32(r, 2)[i * 16 + j], want);
        }
    run_free(&r);
}

Test(lang, clamp_and_loop_spellings)
{
    run_t r;
    int k;
    run_file(&r, "tests/lang/clamp_forms.py", NULL, 0, fill_pattern);
    for (k = 0; k < 16; k++) {
        EXPECT_NEAR(F(r, 1)[k], fmin(fmax(pattern(0, k), -0.5), 0.75), "B[%d]", k);
        cr_expect_eq(I32(r, 2)[k], (k < 3 ? 3 : k > 9 ? 9 : k) + 5, "C[%d]", k);
    }
    run_free(&r);
}

Test(lang, host_helpers_see_the_fixed_device)
{
    run_t r;
    int k;
    run_file(&r, "tests/lang/host_helpers.py", NULL, 0, fill_pattern);
    for (k = 0; k < 8; k++) EXPECT_NEAR(F(r, 1)[k], 3 * pattern(0, k), "B[%d]", k);
    run_free(&r);
    /* capability (9, 0) -> 90, 132 SMs */
    run_file(&r, "tests/lang/device_probes.py", NULL, 0, fill_pattern);
    for (k = 0; k < 8; k++) EXPECT_NEAR(F(r, 1)[k], 90 * pattern(0, k) + 132, "Y[%d]", k);
    run_free(&r);
}

Test(lang, star_args_in_compile_time_functions)
{
    run_t r;
    int k;
    run_file(&r, "tests/lang/ct_varargs.py", NULL, 0, fill_pattern);
    for (k = 0; k < 16; k++) EXPECT_NEAR(F(r, 1)[k], 6 * pattern(0, k) + 20 + 2, "Y[%d]", k);
    run_free(&r);
}

Test(lang, while_on_a_run_time_condition)
{
    run_t r;
    int k;
    run_file(&r, "tests/lang/rt_while.py", NULL, 0, fill_pattern);
    for (k = 0; k < 11; k++) EXPECT_NEAR(F(r, 1)[k], 2 * pattern(0, k) + k % 3, "B[%d]", k);
    for (k = 0; k < 3; k++) cr_expect_eq(I32(r, 2)[k], 12, "C[%d] = %d", k, I32(r, 2)[k]);
    run_free(&r);
}

Test(lang, slice_bounds_in_single_assignment_temporaries)
{
    run_t r;
    int k;
    run_file(&r, "tests/lang/slice_temps.py", NULL, 0, fill_pattern);
    for (k = 0; k < 16; k++) EXPECT_NEAR(F(r, 1)[k], 2 * pattern(0, k), "B[%d]", k);
    run_free(&r);
}

Test(lang, bit_operations_on_runtime_integers)
{
    run_t r;
    int k;
    run_file(&r, "tests/lang/bit_ops.py", NULL, 0, fill_pattern);
    for (k = 0; k < 16; k++) {
        int32_t x = I32(r, 0)[k];
        int32_t sh = x >= 0 ? x >> 1 : -((-x + 1) / 2); /* floor(x / 2), as Python's >> */
        int32_t want = ((x & 7) | (k << 4)) ^ (sh + (~x & 3));
        int32_t y = -(x * 4);
        int32_t want_c = y >= 0 ? y / 8 : -((-y + 7) / 8);
        cr_expect_eq(I32(r, 1)[k], want, "B[%d]: got %d want %d", k, I32(r, 1)[k], want);
        cr_expect_eq(((uint8_t *)r.ref[2])[k], (uint8_t)(((uint8_t)(k << 5) >> 3) | 1), "U[%d]", k);
        cr_expect_eq(I32(r, 3)[k], want_c, "C[%d]: got %d want %d", k, I32(r, 3)[k], want_c);
    }
    run_free(&r);
}

Test(lang, reviews_and_im2col)
{
    run_t r;
    int i, j, k;
    run_file(&r, "tests/lang/reviews.py", NULL, 0, fill_pattern);
    for (k = 0; k < 48; k++) EXPECT_NEAR(F(r, 1)[k], pattern(0, k) + 1, "R[%d] (through two views)", k);
    for (i = 0; i < 12; i++) {
        double s = 0;
        int row = (i / 2) / 2, c0 = ((i / 2) % 2) * 4;
        for (j = 0; j < 4; j++) s += pattern(0, row * 8 + c0 + j);
        EXPECT_NEAR(F(r, 2)[i], s, "S[%d] (reduce_sum of a reshape)", i);
    }
    for (i = 0; i < 4; i++)
        for (j = 0; j < 8; j++)
            EXPECT_NEAR(F(r, 3)[i * 8 + j], i < 2 ? pattern(0, (4 + i) * 8 + j) : 0.0,
                        "P[%d,%d] (a copy past the view's edge reads 0)", i, j);
    for (i = 0; i < 16; i++)
        for (k = 0; k < 18; k++) {
            int oh = i / 4, ow = i % 4, kh = k / 6, kw = (k / 2) % 3, c = k % 2;
            int h = oh + kh - 1, w = ow + kw - 1;
            double want = (h >= 0 && h < 4 && w >= 0 && w < 4) ? pattern(4, (h * 4 + w) * 2 + c) : 0.0;
            EXPECT_NEAR(F(r, 5)[i * 18 + k], want, "Col[%d,%d] (im2col)", i, k);
        }
    run_free(&r);
}

/* Two kernels launched in order (tests/lang/kernel_chain.py): the second
 * reads what the first wrote, through a parameter and a T.alloc_global
 * scratch tensor; m = 10 in blocks of 4. */
Test(lang, kernel_chain)
{
    run_t r;
    int m = 10, i;
    tilec_define_kv_t defs[] = {{"m", "10"}};
    run_file(&r, "tests/lang/kernel_chain.py", defs, 1, fill_pattern);
    /* params: X P Y, then the scratch S (ceildiv(m, 4) = 3) */
    cr_assert_eq(r.n, 4);
    cr_assert_eq(r.shape[3][0], 3);
    for (i = 0; i < m; i++) {
        double s = 0;
        int j;
        for (j = i / 4 * 4; j < i / 4 * 4 + 4 && j < m; j++) s += 2 * pattern(0, j);
        EXPECT_NEAR(F(r, 1)[i], 2 * pattern(0, i), "P[%d]", i);
        EXPECT_NEAR(F(r, 2)[i], 2 * pattern(0, i) + s, "Y[%d]", i);
        if (i % 4 == 0) EXPECT_NEAR(F(r, 3)[i / 4], s, "S[%d]", i / 4);
    }
    run_free(&r);
}

/* Host-side markers kept as their meaning (tests/lang/host_markers.py). */
Test(lang, host_markers)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/host_markers.py", NULL, 0, fill_pattern);
    for (i = 0; i < 40; i++) {
        EXPECT_NEAR(F(r, 1)[i], pattern(0, i) + 1, "B[%d]", i);
        /* the pattern's quarters are exact in float8_e4m3fn */
        EXPECT_NEAR(F(r, 2)[i], pattern(0, i), "C[%d]", i);
    }
    run_free(&r);
}

/* T.Persistent: every tile of the domain once over the grid (tests/lang/persistent.py). */
Test(lang, persistent_tiles)
{
    run_t r;
    int i, j;
    run_file(&r, "tests/lang/persistent.py", NULL, 0, fill_pattern);
    for (i = 0; i < 8; i++)
        for (j = 0; j < 10; j++)
            EXPECT_NEAR(F(r, 1)[i * 10 + j], (float)pattern(0, i * 10 + j) + 10 * (i / 2) + j / 2, "Out[%d,%d]", i, j);
    for (i = 0; i < 20; i++) {
        int32_t c0 = (int32_t)((i * 13 + 2 * 5) % 41) - 20;
        cr_expect_eq(I32(r, 2)[i], c0 + 1, "Cnt[%d]: each tile once", i);
    }
    run_free(&r);
}

/* Compile-time classes (tests/lang/ct_class.py): Y = 3 X + 7. */
Test(lang, ct_class)
{
    run_t r;
    int i;
    run_file(&r, "tests/lang/ct_class.py", NULL, 0, fill_pattern);
    for (i = 0; i < 24; i++) EXPECT_NEAR(F(r, 1)[i], 3 * pattern(0, i) + 7, "Y[%d]", i);
    run_free(&r);
}

/* ---- T.rng_init / T.rng_rand: Philox4x32-10 (tests/lang/rng_philox.py) ---- */

static void expect_words(const run_t *r, int p, const uint32_t *want, int n)
{
    int k;
    cr_assert_eq(r->elem[p], TILEC_ELEM_UINT32);
    for (k = 0; k < n; k++)
        cr_expect_eq(((uint32_t *)r->ref[p])[k], want[k], "parameter %d word %d: got 0x%08x, want 0x%08x", p, k,
                     ((uint32_t *)r->ref[p])[k], want[k]);
}

Test(lang, rng_philox_stream)
{
    /* draws 0..3: Random123's known answer for Philox4x32-10 at counter 0, key 0 */
    static const uint32_t a[8] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8,
                                  0xf8e4cca4, 0x5cb200db, 0xb1a574eb, 0x097eff67};
    static const uint32_t b[1] = {0x04faa329};                               /* draw 8 */
    static const uint32_t c[4] = {0x51c732a6, 0x241513ad, 0x459135e4, 0xc990ef29}; /* draws 9..12 */
    run_t r;
    run_entry(&r, "tests/lang/rng_philox.py", "stream", NULL, 0, NULL);
    expect_words(&r, 0, a, 8);
    expect_words(&r, 1, b, 1);
    expect_words(&r, 2, c, 4);
    run_free(&r);
}

Test(lang, rng_philox_per_thread_streams)
{
    /* thread t: seed 7, seq t, draws 2, 3, 4 */
    static const uint32_t p[12] = {0x1d3aba42, 0x15edac82, 0x682e8e9b, 0x4fac3b2b, 0x39acec6c, 0xe32925ef,
                                   0x65538892, 0x39f796f5, 0xee0d0091, 0x29a796e8, 0x998b4610, 0x965f7ece};
    /* seed 5, seq tx + bx * 2, draws 0 and 1 */
    static const uint32_t q[8] = {0xc417681d, 0x11d85194, 0x63319a34, 0x53dfd057,
                                  0xbb01e3ab, 0x3732c27d, 0x2fa4f36a, 0x51582eab};
    run_t r;
    run_entry(&r, "tests/lang/rng_philox.py", "per_thread", NULL, 0, NULL);
    expect_words(&r, 0, p, 12);
    run_free(&r);
    run_entry(&r, "tests/lang/rng_philox.py", "default_seq", NULL, 0, NULL);
    expect_words(&r, 0, q, 8);
    run_free(&r);
}

/* A dtype-changing re-view of shared memory used as scratch (tests/lang/view_retype.py). */
Test(lang, view_retype_scratch)
{
    run_t r;
    int i, j;
    run_file(&r, "tests/lang/view_retype.py", NULL, 0, fill_pattern);
    for (i = 0; i < 4; i++)
        for (j = 0; j < 8; j++) EXPECT_NEAR(F(r, 1)[i * 8 + j], 2 * pattern(0, i * 8 + j), "B[%d,%d]", i, j);
    for (i = 0; i < 2; i++)
        for (j = 0; j < 8; j++)
            EXPECT_NEAR(F(r, 2)[i * 8 + j], pattern(0, 2 * i * 8 + j) + pattern(0, (2 * i + 1) * 8 + j), "C[%d,%d]", i, j);
    run_free(&r);
}

/* ---- bit casts (tile IR 1.4) ---------------------------------------------- */

/* bitcast.py's inputs and their bits, by hand: float32 1, -2, 0, -0, inf,
 * 2^-149 (the least subnormal), 0.1f (0x3dcccccd), 3; float16 1, -2, 65504,
 * 2^-24, 0.5, -inf, 0, -0; bfloat16 1, -2, 3, -0.5, inf, 2^-133 (least
 * subnormal), 0, 1.5; float8_e4m3fn 1, -2, 448, 2^-9, 0.5, -448, 0, -0 */
static const uint32_t bc_f32[8] = {0x3f800000u, 0xc0000000u, 0, 0x80000000u, 0x7f800000u, 1, 0x3dcccccdu, 0x40400000u};
static const int32_t bc_exp[8] = {127, 128, 0, 0, 255, 0, 123, 128};
static const uint16_t bc_f16[8] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x3800, 0xfc00, 0, 0x8000};
static const uint16_t bc_bf16[8] = {0x3f80, 0xc000, 0x4040, 0xbf00, 0x7f80, 0x0001, 0, 0x3fc0};
static const uint8_t bc_f8[8] = {0x38, 0xc0, 0x7e, 0x01, 0x30, 0xfe, 0, 0x80};

static void fill_bitcast(int i, void *data, int64_t count, tilec_elem_t e)
{
    (void)e;
    if (count != 8) return;
    if (i == 0) {
        const float f[8] = {1.0f, -2.0f, 0.0f, -0.0f, INFINITY, 0x1p-149f, 0.1f, 3.0f};
        memcpy(data, f, sizeof f);
    }
    if (i == 1) memcpy(data, bc_f16, sizeof bc_f16);
    if (i == 2) memcpy(data, bc_bf16, sizeof bc_bf16);
    if (i == 3) memcpy(data, bc_f8, sizeof bc_f8);
}

Test(lang, bitcast_reads_a_floats_bits)
{
    run_t r;
    int k;
    run_entry(&r, "tests/lang/bitcast.py", "bits", NULL, 0, fill_bitcast);
    for (k = 0; k < 8; k++) {
        float back;
        cr_expect_eq(((uint32_t *)r.ref[4])[k], bc_f32[k], "FU[%d] = %#x, want %#x", k, ((uint32_t *)r.ref[4])[k],
                     bc_f32[k]);
        cr_expect_eq(I32(r, 5)[k], (int32_t)bc_f32[k], "FI[%d]", k);
        cr_expect_eq(((uint16_t *)r.ref[6])[k], bc_f16[k], "HU[%d] = %#x, want %#x", k, ((uint16_t *)r.ref[6])[k],
                     bc_f16[k]);
        cr_expect_eq(((int16_t *)r.ref[7])[k], (int16_t)bc_f16[k], "HI[%d] is signed", k);
        cr_expect_eq(((uint16_t *)r.ref[8])[k], bc_bf16[k], "BU[%d] = %#x, want %#x", k, ((uint16_t *)r.ref[8])[k],
                     bc_bf16[k]);
        cr_expect_eq(((uint8_t *)r.ref[9])[k], bc_f8[k], "EU[%d] = %#x, want %#x", k, ((uint8_t *)r.ref[9])[k],
                     bc_f8[k]);
        cr_expect_eq(I32(r, 10)[k], bc_exp[k], "Exp[%d] = %d, want %d", k, I32(r, 10)[k], bc_exp[k]);
        memcpy(&back, (float *)r.ref[11] + k, 4);
        uint32_t bb;
        memcpy(&bb, &back, 4);
        cr_expect_eq(bb, bc_f32[k], "Back[%d] has bits %#x, want %#x", k, bb, bc_f32[k]);
    }
    run_free(&r);
}
