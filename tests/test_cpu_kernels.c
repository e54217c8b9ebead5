/*
 * tests/test_cpu_kernels.c — CPU kernels built with the IR constructors and
 * checked against plain C loops: a ragged elementwise add with a dynamic
 * shape, reductions, cumsum, atomics under contention, float16 storage, and
 * a kernel touching most of ir.h.
 */
#include "cpu_test.h"

/* ---- kernels ----------------------------------------------------------------------- */

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

/* ---- a kernel touching most of ir.h ------------------------------------------------------ */


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
