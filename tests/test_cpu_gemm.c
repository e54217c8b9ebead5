/*
 * tests/test_cpu_gemm.c — T.gemm on the CPU backend (cpu_gemm.c, cpu_group.c):
 * the tiled fp32 GEMM in all four transpositions with ragged sizes, every
 * operand dtype and accumulator, block groups (also walked in strips), one
 * tile larger than the cache blocking, and every x86 micro-kernel the host
 * can run.
 */
#include <math.h>

#include "cpu_test.h"

static void check_gemm(int ta, int tb)
{
    kb_t b;
    build_gemm(&b, ta, tb);
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(&b);
    static float a[GM * GK], bm[GK * GN], c[GM * GN];
    unsigned seed = 7;
    for (int i = 0; i < GM * GK; i++)
        a[i] = frand(&seed);
    for (int i = 0; i < GK * GN; i++)
        bm[i] = frand(&seed);
    for (int i = 0; i < GM * GN; i++)
        c[i] = 99.0f; /* overwritten everywhere */
    tilec_pmem_t *args[3] = {mem_from(a, sizeof a), mem_from(bm, sizeof bm), mem_from(c, sizeof c)};
    run(mod, args, 3, NULL, 0);
    cr_assert_eq(P->mem_read(D, args[2], 0, c, sizeof c), TILEC_PS_OK);
    double num = 0, den = 0;
    for (int i = 0; i < GM; i++)
        for (int j = 0; j < GN; j++) {
            double ref = 0;
            for (int k = 0; k < GK; k++) {
                double av = ta ? a[k * GM + i] : a[i * GK + k];
                double bv = tb ? bm[j * GK + k] : bm[k * GN + j];
                ref += av * bv;
            }
            double d = c[i * GN + j] - ref;
            num += d * d;
            den += ref * ref;
            cr_assert(fabs(d) < 1e-4, "ta=%d tb=%d C[%d,%d] = %g, expected %g", ta, tb, i, j,
                      c[i * GN + j], ref);
        }
    cr_assert(sqrt(num / den) < 1e-5);
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
}

Test(cpu_kernel, gemm_nn, .init = setup, .fini = teardown) { check_gemm(0, 0); }
Test(cpu_kernel, gemm_tn, .init = setup, .fini = teardown) { check_gemm(1, 0); }
Test(cpu_kernel, gemm_nt, .init = setup, .fini = teardown) { check_gemm(0, 1); }
Test(cpu_kernel, gemm_tt, .init = setup, .fini = teardown) { check_gemm(1, 1); }
Test(cpu_kernel, gemm_odd_tiles, .init = setup, .fini = teardown)
{
    TBM = 7;
    TBN = 60;
    TBK = 5;
    check_gemm(0, 0);
    check_gemm(1, 1);
}

/* ---- GEMM over every operand dtype, transposition and ragged shape ---------------------- */

/* Storage of value v (exactly representable) as dtype t at element i. */
static void put_val(tilec_dtype_t t, void *p, size_t i, double v)
{
    switch (t) {
    case TILEC_FLOAT16: ((uint16_t *)p)[i] = tilec_f64_to_f16(v); break;
    case TILEC_BFLOAT16: ((uint16_t *)p)[i] = tilec_f64_to_bf16(v); break;
    case TILEC_FLOAT32: ((float *)p)[i] = (float)v; break;
    case TILEC_FLOAT64: ((double *)p)[i] = v; break;
    case TILEC_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case TILEC_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case TILEC_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case TILEC_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: cr_assert_fail("dtype %d", (int)t);
    }
}

static double get_val(tilec_dtype_t t, const void *p, size_t i)
{
    switch (t) {
    case TILEC_FLOAT16: return tilec_f16_to_f32(((const uint16_t *)p)[i]);
    case TILEC_BFLOAT16: return tilec_bf16_to_f32(((const uint16_t *)p)[i]);
    case TILEC_FLOAT32: return ((const float *)p)[i];
    case TILEC_FLOAT64: return ((const double *)p)[i];
    case TILEC_INT8: return ((const int8_t *)p)[i];
    case TILEC_UINT8: return ((const uint8_t *)p)[i];
    case TILEC_INT32: return ((const int32_t *)p)[i];
    case TILEC_INT64: return (double)((const int64_t *)p)[i];
    default: cr_assert_fail("dtype %d", (int)t); return 0;
    }
}

static size_t dt_size(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: case TILEC_UINT8: return 1;
    case TILEC_FLOAT16: case TILEC_BFLOAT16: return 2;
    case TILEC_FLOAT32: case TILEC_INT32: return 4;
    default: return 8;
    }
}

typedef struct gemm_case {
    tilec_dtype_t ad, bd, cd;      /* A, B, accumulator/C */
    int m, n, k, tm, tn, tk;       /* problem and tile sizes */
    const char *arch;              /* NULL: native */
    int group;                     /* 1: must run in 4x4 block groups (cpu_group.c); 2: in groups
                                    * merging K steps of 64, A tiles read in place */
} gemm_case_t;

/* The K steps of bk that block groups of gx members of bn columns merge
 * per GEMM call (cpu_group.c): 512 / bk, the 512 halved (down to 128, and
 * to no less than two steps) while the chunk's staged B tiles
 * (kc x gx*bn, esz bytes each) exceed half the host's L2, read here from sysfs as the
 * generator does (1 MiB when it says nothing). */
static int merged_steps(int bk, int gx, int bn, int esz)
{
    long l2 = 0;
    char buf[64];
    for (int i = 0; i < 16 && !l2; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f)
            break;
        int lv = fgets(buf, sizeof buf, f) ? atoi(buf) : 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (lv != 2 || !(f = fopen(path, "r")))
            continue;
        if (fgets(buf, sizeof buf, f)) {
            char *end;
            l2 = strtol(buf, &end, 10);
            l2 *= *end == 'K' ? 1024 : *end == 'M' ? 1048576 : 1;
        }
        fclose(f);
    }
    if (l2 < 65536)
        l2 = 1048576;
    long kc = 512;
    while (kc > 2 * bk && kc > 128 && kc * gx * bn * esz > l2 / 2)
        kc /= 2;
    return (int)(kc / bk);
}

/* C = op(A) @ op(B) tiled like build_gemm, in the case's dtypes. */
static void build_gemm_case(kb_t *b, const gemm_case_t *g, int ta, int tb)
{
    kb_init(b, "gemm_dt");
    tilec_ir_buffer_t *A = ta ? BUF(b, "A", TILEC_SCOPE_GLOBAL, g->ad, 2, I(b, g->k), I(b, g->m))
                              : BUF(b, "A", TILEC_SCOPE_GLOBAL, g->ad, 2, I(b, g->m), I(b, g->k));
    tilec_ir_buffer_t *B = tb ? BUF(b, "B", TILEC_SCOPE_GLOBAL, g->bd, 2, I(b, g->n), I(b, g->k))
                              : BUF(b, "B", TILEC_SCOPE_GLOBAL, g->bd, 2, I(b, g->k), I(b, g->n));
    tilec_ir_buffer_t *C = BUF(b, "C", TILEC_SCOPE_GLOBAL, g->cd, 2, I(b, g->m), I(b, g->n));
    tilec_ir_buffer_t *As = ta ? BUF(b, "A_s", TILEC_SCOPE_SHARED, g->ad, 2, I(b, g->tk), I(b, g->tm))
                               : BUF(b, "A_s", TILEC_SCOPE_SHARED, g->ad, 2, I(b, g->tm), I(b, g->tk));
    tilec_ir_buffer_t *Bs = tb ? BUF(b, "B_s", TILEC_SCOPE_SHARED, g->bd, 2, I(b, g->tn), I(b, g->tk))
                               : BUF(b, "B_s", TILEC_SCOPE_SHARED, g->bd, 2, I(b, g->tk), I(b, g->tn));
    tilec_ir_buffer_t *Cl = BUF(b, "C_l", TILEC_SCOPE_FRAGMENT, g->cd, 2, I(b, g->tm), I(b, g->tn));
    grid(b, 2, I(b, (g->n + g->tn - 1) / g->tn), I(b, (g->m + g->tm - 1) / g->tm));
    tilec_ir_var_t *bx = b->k->block[0], *by = b->k->block[1];
    tilec_ir_stmt_t *s = emit(b, TILEC_ST_FILL);
    region(b, &s->u.fill.dst, Cl, I(b, 0), I(b, 0), g->tm, g->tn);
    s->u.fill.value = tilec_dtype_is_float(g->cd) ? F(b, 0.0, g->cd) : tilec_ir_int(&b->a, 0, g->cd);
    tilec_ir_var_t *k = loop(b, "k", TILEC_LOOP_PIPELINED, I(b, (g->k + g->tk - 1) / g->tk));
    tilec_ir_expr_t *k0 = MUL(b, V(b, k), I(b, g->tk)), *m0 = MUL(b, V(b, by), I(b, g->tm)),
                    *n0 = MUL(b, V(b, bx), I(b, g->tn));
    s = emit(b, TILEC_ST_COPY);
    if (ta)
        region(b, &s->u.copy.src, A, k0, m0, g->tk, g->tm);
    else
        region(b, &s->u.copy.src, A, m0, k0, g->tm, g->tk);
    region(b, &s->u.copy.dst, As, I(b, 0), I(b, 0), ta ? g->tk : g->tm, ta ? g->tm : g->tk);
    s = emit(b, TILEC_ST_COPY);
    if (tb)
        region(b, &s->u.copy.src, B, n0, k0, g->tn, g->tk);
    else
        region(b, &s->u.copy.src, B, k0, n0, g->tk, g->tn);
    region(b, &s->u.copy.dst, Bs, I(b, 0), I(b, 0), tb ? g->tn : g->tk, tb ? g->tk : g->tn);
    s = emit(b, TILEC_ST_GEMM);
    s->u.gemm.a = As;
    s->u.gemm.b = Bs;
    s->u.gemm.c = Cl;
    s->u.gemm.trans_a = ta;
    s->u.gemm.trans_b = tb;
    end(b);
    s = emit(b, TILEC_ST_COPY);
    region(b, &s->u.copy.src, Cl, I(b, 0), I(b, 0), g->tm, g->tn);
    region(b, &s->u.copy.dst, C, m0, n0, g->tm, g->tn);
}

/* Runs the case in all four transpositions.  Inputs are small integers
 * (-2..2, and 0..4 for unsigned), so every product and partial sum is
 * exact in every accumulator dtype used and the result must equal the
 * reference exactly.  extra: compiler flags (NULL: none). */
static void check_gemm_case_flags(const gemm_case_t *g, const char *extra)
{
    size_t na = (size_t)g->m * g->k, nb = (size_t)g->k * g->n, nc = (size_t)g->m * g->n;
    void *a = malloc(na * dt_size(g->ad)), *bm = malloc(nb * dt_size(g->bd)),
         *c = malloc(nc * dt_size(g->cd));
    double *av = malloc(na * sizeof(double)), *bv = malloc(nb * sizeof(double));
    cr_assert(a && bm && c && av && bv);
    unsigned seed = 11;
    for (size_t i = 0; i < na; i++) {
        seed = seed * 1103515245u + 12345u;
        av[i] = (double)((seed >> 16) % 5) - (g->ad == TILEC_UINT8 ? 0 : 2);
        put_val(g->ad, a, i, av[i]);
    }
    for (size_t i = 0; i < nb; i++) {
        seed = seed * 1103515245u + 12345u;
        bv[i] = (double)((seed >> 16) % 5) - (g->bd == TILEC_UINT8 ? 0 : 2);
        put_val(g->bd, bm, i, bv[i]);
    }
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            kb_t b;
            build_gemm_case(&b, g, ta, tb);
            char *text = tilec_ir_print(b.m);
            cr_assert_not_null(text);
            tilec_pcompile_options_t o = {.struct_size = sizeof o, .opt_level = 3, .arch = g->arch, .extra = extra};
            tilec_pmodule_t *mod = NULL;
            cr_assert_eq(P->compile(D, text, strlen(text), &o, &mod), TILEC_PS_OK, "%s", P->last_error());
            free(text);
            kb_free(&b);
            if (g->group == 1) {
                const void *src;
                size_t len;
                cr_assert_eq(P->module_data(mod, TILEC_PDATA_SOURCE, &src, &len), TILEC_PS_OK);
                /* 13x37 tiles: 4x4 members cover about as much of C as
                 * 2x4 of 64x128 tiles (9 block columns allow no more) */
                cr_assert(strstr(src, "a group of 4x4 blocks") != NULL, "the gemm kernel runs no 4x4 block groups");
                /* float32 tiles of K 11 <= 128: the K steps are merged, 512 / 11 per GEMM call
                 * (256 / 11 where 4 x 37 columns x 512 k exceed half the L2) */
                char want[64];
                snprintf(want, sizeof want, "%d K steps per GEMM call", merged_steps(11, 4, 37, 4));
                cr_assert_eq(strstr(src, want) != NULL, g->ad == TILEC_FLOAT32 && !ta && !tb, "%s", want);
                /* merged steps stage B as NR-column panels (the last of 37 columns zero-padded),
                 * packed from the tensor where the tile is a float32 one inside it */
                cr_assert_eq(strstr(src, "into the staging area, as NR-column panels") != NULL,
                             g->ad == TILEC_FLOAT32 && !ta && !tb);
                cr_assert_eq(strstr(src, "const float *tc_bs = ") != NULL,
                             g->ad == TILEC_FLOAT32 && g->bd == TILEC_FLOAT32 && !ta && !tb);
            }
            if (g->group == 2) {
                /* K steps of 64 merged 8 per call (fewer where 4 x 32 columns x 512 k exceed half
                 * the L2), A tiles read from the tensor where inside it */
                const void *src;
                size_t len;
                cr_assert_eq(P->module_data(mod, TILEC_PDATA_SOURCE, &src, &len), TILEC_PS_OK);
                char want[64];
                snprintf(want, sizeof want, "%d K steps per GEMM call", merged_steps(64, 4, 32, g->ad == TILEC_FLOAT64 ? 8 : 4));
                cr_assert_eq(strstr(src, want) != NULL, !ta && !tb, "%s", want);
                cr_assert_eq(strstr(src, "the A tiles read in place") != NULL, !ta);
            }
            if (g->group == 1 && !ta && !tb) {
                /* shared_static_bytes is per block: that of the same tiles
                 * on a grid too small for groups */
                gemm_case_t small = *g;
                small.m = g->tm;
                small.n = g->tn;
                small.group = 0;
                kb_t b1;
                build_gemm_case(&b1, &small, ta, tb);
                char *t1 = tilec_ir_print(b1.m);
                cr_assert_not_null(t1);
                tilec_pmodule_t *m1 = NULL;
                cr_assert_eq(P->compile(D, t1, strlen(t1), &o, &m1), TILEC_PS_OK, "%s", P->last_error());
                free(t1);
                kb_free(&b1);
                tilec_pmodule_info_t i0 = {.struct_size = sizeof i0}, i1 = {.struct_size = sizeof i1};
                cr_assert_eq(P->module_info(mod, &i0), TILEC_PS_OK);
                cr_assert_eq(P->module_info(m1, &i1), TILEC_PS_OK);
                cr_assert(i1.shared_static_bytes > 0);
                if (g->ad == TILEC_FLOAT32) /* K steps merged: plus a share of the group's staging (512 k) */
                    cr_assert(i0.shared_static_bytes > i1.shared_static_bytes &&
                              i0.shared_static_bytes < 8 * i1.shared_static_bytes,
                              "grouped kernel reports %lld bytes per block, ungrouped %lld",
                              (long long)i0.shared_static_bytes, (long long)i1.shared_static_bytes);
                else
                    cr_assert_eq(i0.shared_static_bytes, i1.shared_static_bytes,
                                 "grouped kernel reports %lld bytes per block, ungrouped %lld",
                                 (long long)i0.shared_static_bytes, (long long)i1.shared_static_bytes);
                P->module_free(m1);
            }
            for (size_t i = 0; i < nc; i++)
                put_val(g->cd, c, i, 99); /* overwritten everywhere */
            /* A is stored [k][m] when transposed: the same logical values */
            void *at = malloc(na * dt_size(g->ad)), *bt = malloc(nb * dt_size(g->bd));
            cr_assert(at && bt);
            for (int i = 0; i < g->m; i++)
                for (int kk = 0; kk < g->k; kk++)
                    put_val(g->ad, at, ta ? (size_t)kk * g->m + i : (size_t)i * g->k + kk, av[(size_t)i * g->k + kk]);
            for (int kk = 0; kk < g->k; kk++)
                for (int j = 0; j < g->n; j++)
                    put_val(g->bd, bt, tb ? (size_t)j * g->k + kk : (size_t)kk * g->n + j, bv[(size_t)kk * g->n + j]);
            tilec_pmem_t *args[3] = {mem_from(at, na * dt_size(g->ad)), mem_from(bt, nb * dt_size(g->bd)),
                                     mem_from(c, nc * dt_size(g->cd))};
            run(mod, args, 3, NULL, 0);
            cr_assert_eq(P->mem_read(D, args[2], 0, c, nc * dt_size(g->cd)), TILEC_PS_OK);
            for (int i = 0; i < g->m; i++)
                for (int j = 0; j < g->n; j++) {
                    double ref = 0;
                    for (int kk = 0; kk < g->k; kk++)
                        ref += av[(size_t)i * g->k + kk] * bv[(size_t)kk * g->n + j];
                    double got = get_val(g->cd, c, (size_t)i * g->n + j);
                    cr_assert_eq(got, ref, "dtypes %d,%d->%d %dx%dx%d tiles %dx%dx%d arch %s ta=%d tb=%d: "
                                 "C[%d,%d] = %g, expected %g", (int)g->ad, (int)g->bd, (int)g->cd, g->m,
                                 g->n, g->k, g->tm, g->tn, g->tk, g->arch ? g->arch : "native", ta, tb,
                                 i, j, got, ref);
                }
            for (int i = 0; i < 3; i++)
                P->mem_free(D, args[i]);
            free(at);
            free(bt);
            P->module_free(mod);
        }
    free(a); free(bm); free(c); free(av); free(bv);
}

static void check_gemm_case(const gemm_case_t *g) { check_gemm_case_flags(g, NULL); }

/* Ragged problem and tile sizes: tiles that are no multiple of any
 * micro-tile (MR is 4, 6 or 8; NR 8 to 32), a partial last tile in every
 * dimension, a K loop. */
#define RAGGED 45, 70, 38, 13, 37, 11

Test(cpu_gemm, f32, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, RAGGED, NULL, 0}); }

/* A grid large enough for block groups of 2x4 (cpu_group.c), ragged in
 * both: 9 block columns (the last group has one), 11 block rows (the last
 * has three), partial last tiles and a partial last K step. */
#define GROUPED 140, 300, 38, 13, 37, 11
Test(cpu_gemm, block_groups_f32, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, GROUPED, NULL, 1}); }
/* The same with L3 taken as 104,192 bytes: one group column's B panels
 * (4 x 37 floats x 44 rows of K) are 26,048 bytes, so groups are walked
 * in strips of 2 of the 3 group columns, the last strip ragged; every C
 * tile must still be computed, once. */
Test(cpu_gemm, block_groups_in_strips, .init = setup, .fini = teardown)
{ check_gemm_case_flags(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, GROUPED, NULL, 1}, "-DTC_L3=104192"); }
/* K steps of 64, merged 8 per GEMM call in 3 chunks (8, 8, 2 steps; float64
 * with a 512 KiB L2: 4 per call, 5 chunks), A
 * tiles read from the tensor where they lie inside it: not in the last
 * block row (rows 288..319 of 300) nor in the chunk whose last K step
 * runs past K (1088..1151 of 1100), where they are staged as copies. */
Test(cpu_gemm, block_groups_a_in_place, .init = setup, .fini = teardown)
{
    check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, 300, 300, 1100, 32, 32, 64, NULL, 2});
    check_gemm_case(&(gemm_case_t){TILEC_FLOAT64, TILEC_FLOAT64, TILEC_FLOAT64, 300, 300, 1100, 32, 32, 64, NULL, 2});
}
/* An A tile read in place must lie inside A: row 33 of A starts with an
 * infinity, which a read of row 32 running past K = 1100 would take for
 * A[32][1100] (then inf * 0 from B's zero padding: NaN in all of C's row
 * 32).  Every row but 33 must still be exact. */
Test(cpu_gemm, a_in_place_stays_inside, .init = setup, .fini = teardown)
{
    const gemm_case_t g = {TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, 300, 300, 1100, 32, 32, 64, NULL, 2};
    size_t na = (size_t)g.m * g.k, nb = (size_t)g.k * g.n, nc = (size_t)g.m * g.n;
    float *a = malloc(na * 4), *bm = malloc(nb * 4), *c = malloc(nc * 4);
    cr_assert(a && bm && c);
    for (size_t i = 0; i < na; i++)
        a[i] = (float)((int)(i * 7 % 5) - 2);
    for (size_t i = 0; i < nb; i++)
        bm[i] = (float)((int)(i * 3 % 5) - 2);
    a[33 * (size_t)g.k] = INFINITY;
    kb_t b;
    build_gemm_case(&b, &g, 0, 0);
    char *text = tilec_ir_print(b.m);
    cr_assert_not_null(text);
    tilec_pcompile_options_t o = {.struct_size = sizeof o, .opt_level = 3};
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(P->compile(D, text, strlen(text), &o, &mod), TILEC_PS_OK, "%s", P->last_error());
    free(text);
    kb_free(&b);
    tilec_pmem_t *args[3] = {mem_from(a, na * 4), mem_from(bm, nb * 4), mem_from(c, nc * 4)};
    run(mod, args, 3, NULL, 0);
    cr_assert_eq(P->mem_read(D, args[2], 0, c, nc * 4), TILEC_PS_OK);
    for (int i = 0; i < g.m; i++)
        for (int j = 0; j < g.n && i != 33; j++) {
            double ref = 0;
            for (int kk = 0; kk < g.k; kk++)
                ref += (double)a[(size_t)i * g.k + kk] * bm[(size_t)kk * g.n + j];
            cr_assert_eq(c[(size_t)i * g.n + j], ref, "C[%d,%d] = %g, expected %g", i, j, c[(size_t)i * g.n + j], ref);
        }
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
    free(a); free(bm); free(c);
}
Test(cpu_gemm, block_groups_f16_int8, .init = setup, .fini = teardown)
{
    check_gemm_case(&(gemm_case_t){TILEC_FLOAT16, TILEC_FLOAT16, TILEC_FLOAT32, GROUPED, NULL, 1});
    check_gemm_case(&(gemm_case_t){TILEC_INT8, TILEC_INT8, TILEC_INT32, GROUPED, NULL, 1});
}
/* Every row count a block can end in: block_M 1..10 leaves the micro-kernel
 * (MR = 6 on AVX2, 8 on AVX-512/NEON, 4 otherwise) every tail of 1 to
 * MR - 1 rows, the 1-2 row tails run two column tiles at once (tc_ukw_*),
 * 72 columns a block (several full NR tiles, then a partial one); ragged
 * M, N and K.  float32 natively and as AVX2 code (-march=haswell, which
 * AVX-512 hosts run too) and as SSE2 code (-march=x86-64, MR = 4),
 * float64 natively (NR half as wide). */
Test(cpu_gemm, every_row_tail, .init = setup, .fini = teardown)
{
    for (int tm = 1; tm <= 10; tm++) {
        check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, 23, 150, 21, tm, 72, 8, NULL, 0});
        if (tm <= 2 || tm == 7 || tm == 8) {
            check_gemm_case(&(gemm_case_t){TILEC_FLOAT64, TILEC_FLOAT64, TILEC_FLOAT64, 23, 150, 21, tm, 72, 8, NULL, 0});
            check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, 23, 150, 21, tm, 72, 8, "haswell", 0});
        }
        if (tm <= 3) /* SSE2 only: the generic 4 x 2 micro-kernel of 16-byte vectors */
            check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, 23, 150, 21, tm, 72, 8, "x86-64", 0});
    }
}
Test(cpu_gemm, f16_f32acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT16, TILEC_FLOAT16, TILEC_FLOAT32, RAGGED, NULL, 0}); }
Test(cpu_gemm, bf16_f32acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_BFLOAT16, TILEC_BFLOAT16, TILEC_FLOAT32, RAGGED, NULL, 0}); }
Test(cpu_gemm, f16_f16acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT16, TILEC_FLOAT16, TILEC_FLOAT16, RAGGED, NULL, 0}); }
Test(cpu_gemm, f16_f32_mixed, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT16, TILEC_FLOAT32, TILEC_FLOAT32, RAGGED, NULL, 0}); }
Test(cpu_gemm, f64, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT64, TILEC_FLOAT64, TILEC_FLOAT64, RAGGED, NULL, 0}); }
Test(cpu_gemm, int8_int32acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_INT8, TILEC_INT8, TILEC_INT32, RAGGED, NULL, 0}); }
Test(cpu_gemm, uint8_int32acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_UINT8, TILEC_INT8, TILEC_INT32, RAGGED, NULL, 0}); }
Test(cpu_gemm, int32_int64acc, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_INT32, TILEC_INT32, TILEC_INT64, RAGGED, NULL, 0}); }

/* One tile larger than the cache blocking: K past TC_KC (64..512), rows of
 * B past a page (B is packed even in float32), M past a few MR. */
Test(cpu_gemm, one_big_tile, .init = setup, .fini = teardown)
{ check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, 29, 1100, 530, 29, 1100, 530, NULL, 0}); }

#if defined(__x86_64__)

Test(cpu_gemm, every_x86_isa, .init = setup, .fini = teardown)
{
    static const char *const arch[] = {"x86-64", "x86-64-v3", "x86-64-v4"};
    static const char *const need[] = {"sse2", "avx2", "avx512f"};
    for (int i = 0; i < 3; i++) {
        if (!host_has(need[i]) || (i == 1 && !host_has("fma")))
            continue;
        check_gemm_case(&(gemm_case_t){TILEC_FLOAT32, TILEC_FLOAT32, TILEC_FLOAT32, RAGGED, arch[i], 0});
    }
}
#endif
