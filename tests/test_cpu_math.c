/*
 * tests/test_cpu_math.c — float math and 16-bit conversions of the CPU backend:
 * exp2 with explicit vectors against the compiler's vectorization (same
 * bits), every vectorized math function within its documented ulp bound
 * against libm over a sweep, and the generated float16/bfloat16
 * conversions bit for bit against the SDK's.
 */
#include "cpu_test.h"

/* exp2 over an on-chip row, F[0, i] = exp2(F[i]) (cpu_vec.c writes the
 * loop with explicit vectors where the host has AVX-512 and the compiler
 * is gcc, or AVX2: there both the shortcut for normal results and the
 * full vector form), against the same over a global tensor (the compiler's
 * vectorization of tc_exp2f): the same bits for every 1021st float bit
 * pattern (all exponents, both signs, subnormals, inf, NaNs); the rows are 1,004 floats, so each ends in the
 * scalar loop (vectors of 8 or 16). */
Test(cpu_math, exp2_explicit_vectors_same_bits, .init = setup, .fini = teardown)
{
    enum { W = 1004, R = (int)(0x100000000ull / 1021 / W) + 1 };
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

/* The generated 16-bit conversions agree with the SDK's bit for bit:
 * every float16 and bfloat16 pattern widened, and floats of every kind
 * (random patterns, halfway cases, subnormals, inf, NaN) narrowed; the
 * contiguous float -> float16 copy goes through the prelude's row
 * converter (vcvtps2ph where the arch has it), the cast through the
 * branch-free scalar one.  arch: -march (NULL: native). */
enum { CVN = 65536, CVF = 4 * 65536 };
/* extra: compiler flags (NULL: none); "-DTC_L3=..." small enough makes the
 * float32 -> float16 row copy into FH stream its stores (TC_NTH) */
static void check_f16_conversions(const char *arch, const char *extra)
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
    tilec_pcompile_options_t o = {.struct_size = sizeof o, .opt_level = 3, .arch = arch, .extra = extra};
    cr_assert_eq(P->compile(D, text, strlen(text), &o, &mod), TILEC_PS_OK, "%s", P->last_error());
    free(text);
    const void *src;
    size_t len;
    cr_assert_eq(P->module_data(mod, TILEC_PDATA_SOURCE, &src, &len), TILEC_PS_OK);
    cr_assert(strstr(src, "tc_f2h_n(") && strstr(src, "> (int64_t)TC_L3 / 4)"),
              "the float16 row copy does not decide on streaming stores");
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
    check_f16_conversions(NULL, NULL);
    /* FH (512 KiB) larger than a quarter of this "L3": streamed stores */
    check_f16_conversions(NULL, "-DTC_L3=65536");
#if defined(__x86_64__)
    /* native is the host's widest; also no F16C (scalar) and F16C (8 wide) */
    check_f16_conversions("x86-64", NULL);
    if (host_has("f16c") && host_has("avx2") && host_has("fma")) {
        check_f16_conversions("x86-64-v3", NULL);
        check_f16_conversions("x86-64-v3", "-DTC_L3=65536");
    }
#endif
}
