/*
 * tests/test_simt.c — the SDK's SIMT lowering kit (plugin-sdk/src/simt*.c).
 *
 * Kernels are written as tile IR text, read with tilec_ir_read and lowered
 * with a small CUDA-like test dialect; the tests assert properties of the
 * generated source: barrier placement (before a shared read that follows a
 * write, before an overwrite that follows a read, none inside per-thread
 * code), thread-0 guards on block-level side effects, T.Parallel spread
 * over the threads, native atomics vs. compare-and-swap fallbacks, 16-bit
 * float modes, vector copies, the hooks, the shared-memory total, the
 * dialect checks and the launch-time evaluators; and the printer of
 * lowered IR (register fragments, the IR's barriers only, the shared
 * pool, the register-blocked gemm).  The generated code is run for real by
 * tests/test_opencl.c (OpenCL C on PoCL).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/ir.h"
#include "tilec/lower.h"
#include "tilec/simt.h"

static void dialect(tilec_simt_dialect_t *d)
{
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->name = "test";
    static const char *const names[TILEC_DTYPE_COUNT] = {
        [TILEC_BOOL] = "unsigned char", [TILEC_INT8] = "signed char", [TILEC_INT16] = "short",
        [TILEC_INT32] = "int", [TILEC_INT64] = "long long", [TILEC_UINT8] = "unsigned char",
        [TILEC_UINT16] = "unsigned short", [TILEC_UINT32] = "unsigned int",
        [TILEC_UINT64] = "unsigned long long", [TILEC_FLOAT32] = "float", [TILEC_FLOAT64] = "double"};
    memcpy(d->type_name, names, sizeof names);
    d->f32_as_bits = "__float_as_uint";
    d->bits_as_f32 = "__uint_as_float";
    d->f64_as_bits = "__double_as_longlong";
    d->bits_as_f64 = "__longlong_as_double";
    d->func_qual = "__device__ static inline";
    d->shared_qual = "__shared__";
    d->restrict_kw = "__restrict__";
    d->kernel_qual = "extern \"C\" __global__ void";
    d->kernel_attr = "__launch_bounds__($n)";
    d->block_idx[0] = "blockIdx.x";
    d->block_idx[1] = "blockIdx.y";
    d->block_idx[2] = "blockIdx.z";
    d->thread_idx[0] = "threadIdx.x";
    d->thread_idx[1] = "threadIdx.y";
    d->thread_idx[2] = "threadIdx.z";
    d->barrier = "__syncthreads();";
    d->atomic[TILEC_INT32][TILEC_ATOMIC_ADD] = "atomicAdd($p, $v);";
    d->cas32 = "atomicCAS((unsigned int *)$p, $c, $v)";
    d->cas64 = "atomicCAS((unsigned long long *)$p, $c, $v)";
    d->math_generic = 1;
    d->has_rsqrt = 1;
    d->has_printf = 1;
}

typedef struct gen {
    tilec_arena_t ar;
    tilec_ir_module_t *m;
    tilec_simt_result_t r;
    char err[512];
    int rc;
} gen_t;

static void gen_with(gen_t *g, const char *ir, const tilec_simt_dialect_t *d)
{
    memset(g, 0, sizeof *g);
    tilec_arena_init(&g->ar);
    char err[512];
    cr_assert_eq(tilec_ir_read(&g->ar, ir, strlen(ir), &g->m, err, sizeof err), 0, "IR: %s", err);
    g->r.struct_size = sizeof g->r;
    g->rc = tilec_simt_generate(g->m, d, &g->r, g->err, sizeof g->err);
}

static void gen(gen_t *g, const char *ir)
{
    tilec_simt_dialect_t d;
    dialect(&d);
    gen_with(g, ir, &d);
    cr_assert_eq(g->rc, 0, "generate: %s", g->err);
    cr_assert_not_null(g->r.source);
}

static void gen_free(gen_t *g)
{
    tilec_simt_result_free(&g->r);
    tilec_arena_destroy(&g->ar);
}

static int count(const char *s, const char *w)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, w)) != NULL; p += strlen(w))
        n++;
    return n;
}

/* Offset of the first occurrence of w at or after from; -1 when absent. */
static long find(const char *s, const char *w, long from)
{
    const char *p = strstr(s + from, w);
    return p ? (long)(p - s) : -1;
}

static const char *GEMM =
    "tileir 1.0\n"
    "kernel matmul {\n"
    "  var bx int32 block\n  var by int32 block\n  var k int32 loop\n"
    "  param A global float16 [200, 120]\n  param B global float16 [120, 136]\n"
    "  param C global float16 [200, 136] out\n"
    "  alloc A_shared shared float16 [64, 32]\n  alloc B_shared shared float16 [32, 64]\n"
    "  alloc C_local fragment float32 [64, 64]\n"
    "  grid [bx = 3, by = 4]\n  threads 128 1 1\n"
    "  body {\n"
    "    fill C_local[0 +: 64, 0 +: 64] = 0.0\n"
    "    for k in pipelined(4, stages=3) {\n"
    "      copy A[(by * 64) +: 64, (k * 32) +: 32] -> A_shared[0 +: 64, 0 +: 32]\n"
    "      copy B[(k * 32) +: 32, (bx * 64) +: 64] -> B_shared[0 +: 32, 0 +: 64]\n"
    "      gemm A_shared, B_shared, C_local trans_a=0 trans_b=0 clear_accum=0 policy=square\n"
    "    }\n"
    "    copy C_local[0 +: 64, 0 +: 64] -> C[(by * 64) +: 64, (bx * 64) +: 64]\n"
    "  }\n}\n";

Test(simt, gemm_barriers_and_shared_size)
{
    gen_t g;
    gen(&g, GEMM);
    const char *s = g.r.source;
    /* 64*32*2 + 32*64*2 + 64*64*4 bytes of block-wide memory */
    cr_assert_eq(g.r.shared_bytes, 4096 + 4096 + 16384);
    cr_assert_eq(g.r.nthreads, 128);
    cr_assert_eq(g.r.nparams, 3);
    cr_assert_eq(g.r.nsyms, 0);
    cr_assert(g.r.uses & TILEC_SIMT_USES_F16);
    cr_assert(g.r.uses & TILEC_SIMT_USES_BARRIER);
    /* zero-init + fill, loop top (overwrite after the gemm's reads), before
     * the gemm (reads what the copies wrote), before the final copy */
    cr_assert_eq(count(s, "__syncthreads();"), 4, "%s", s);
    cr_assert_eq(g.r.nbarriers, 4);
    long loop = find(s, "for (int v2 = 0;", 0);
    cr_assert_geq(loop, 0);
    long b1 = find(s, "__syncthreads();", loop);
    long c1 = find(s, "/* copy A -> A_shared */", loop);
    long c2 = find(s, "/* copy B -> B_shared */", loop);
    long b2 = find(s, "__syncthreads();", c2);
    long gm = find(s, "/* gemm A_shared, B_shared -> C_local (4x4 per thread) */", loop);
    cr_assert(b1 < c1 && c1 < c2 && c2 < b2 && b2 < gm, "%s", s);
    /* no barrier between the two copies: different buffers */
    long bb = find(s, "__syncthreads();", c1);
    cr_assert_eq(bb, b2);
    /* cooperative loops and boundary guards on the global tensor */
    cr_assert(strstr(s, "+= tc_nthreads"));
    cr_assert(strstr(s, "< 200"), "%s", s);
    cr_assert(strstr(s, "__launch_bounds__(128)"));
    cr_assert(strstr(s, "__shared__ float b5[4096]"));
    gen_free(&g);
}

/* A target like OpenCL's generic one: no subgroups, no MMA, no async copies. */
static const tilec_target_desc_t PLAIN = {
    .struct_size = sizeof(tilec_target_desc_t), .version = TILEC_TARGET_DESC_VERSION, .name = "plain",
    .subgroup_size = 0, .max_threads = 1024, .smem_default = 48 * 1024, .smem_optin = 64 * 1024,
    .smem_banks = 32, .bank_bytes = 4, .smem_align = 16, .regs_per_thread = 128, .frag_regs = 64,
    .vector_bytes = 16, .barriers = TILEC_TARGET_BARRIER_BLOCK,
};

Test(simt, lowered_gemm)
{
    gen_t g;
    memset(&g, 0, sizeof g);
    tilec_arena_init(&g.ar);
    char err[512];
    cr_assert_eq(tilec_ir_read(&g.ar, GEMM, strlen(GEMM), &g.m, err, sizeof err), 0, "IR: %s", err);
    tilec_lower_status_t st;
    cr_assert_eq(tilec_lower_module(&g.ar, g.m, &PLAIN, NULL, &st), TILEC_LOWER_OK, "%s", st.msg);
    char *ir = tilec_ir_print(g.m);
    cr_assert_not_null(ir);
    int irbar = count(ir, " barrier\n");
    cr_assert_geq(irbar, 2, "%s", ir);
    cr_assert(strstr(ir, "lower.mma = \"simt\""), "%s", ir);
    tilec_simt_dialect_t d;
    dialect(&d);
    d.shared_ptr_qual = "";
    g.r.struct_size = sizeof g.r;
    cr_assert_eq(tilec_simt_generate(g.m, &d, &g.r, g.err, sizeof g.err), 0, "%s", g.err);
    const char *s = g.r.source;
    /* the barriers of the IR, and one after zeroing the pool; none other */
    cr_assert_eq(count(s, "__syncthreads();"), irbar + 1, "%s\n%s", ir, s);
    cr_assert_eq(g.r.nbarriers, (uint32_t)irbar + 1);
    /* C_local: 64 x 64 over 128 threads, 32 registers each, not shared */
    cr_assert(strstr(s, "float b5_0 = 0, b5_1 = 0,"), "%s", s);
    cr_assert(strstr(s, "b5_31 = 0; /* fragment C_local: registers */"), "%s", s);
    cr_assert_null(strstr(s, "b5_32"), "%s", s);
    cr_assert_null(strstr(s, "__shared__ float b5"), "%s", s);
    /* the two operands in one pool at their offsets */
    cr_assert(strstr(s, "__shared__ unsigned char tc_smem[8192]"), "%s", s);
    cr_assert(strstr(s, "unsigned short *const b3 = (unsigned short *)(tc_smem + 0);"), "%s", s);
    cr_assert(strstr(s, "unsigned short *const b4 = (unsigned short *)(tc_smem + 4096);"), "%s", s);
    cr_assert_eq(g.r.shared_bytes, 8192);
    /* the register-blocked tile: 8 rows and 4 columns feed 32 accumulators */
    cr_assert(strstr(s, "const float tc_a7 = "), "%s", s);
    cr_assert_null(strstr(s, "const float tc_a8 = "), "%s", s);
    cr_assert(strstr(s, "const float tc_b3 = "), "%s", s);
    cr_assert(strstr(s, "tc_c31 = ((tc_c31) + (tc_a7 * tc_b3));"), "%s", s);
    /* each thread's coordinates once: row tid / 16, column tid % 16 */
    cr_assert(strstr(s, "const int tc_f5_0 = (tc_tid / 16);"), "%s", s);
    cr_assert(strstr(s, "const int tc_f5_1 = (tc_tid % 16);"), "%s", s);
    free(ir);
    gen_free(&g);
}

static const char *SIDE =
    "tileir 1.0\n"
    "kernel side {\n"
    "  var bx int32 block\n  var i int32 loop\n  var t float32 let\n  var m int32 sym\n"
    "  param X global float32 [m]\n  param Y global float32 [m] out\n  param N global int32 [4]\n"
    "  alloc S shared float32 [64]\n  alloc L local float32 [4]\n"
    "  grid [bx = ((m + 63) // 64)]\n  threads 64 1 1\n"
    "  body {\n"
    "    copy X[(bx * 64) +: 64] -> S[0 +: 64]\n"
    "    assign t = S[0]\n"
    "    store L[0] = t\n"
    "    store Y[0] = t\n"
    "    for i in parallel(64) {\n"
    "      store S[i] = (S[i] + 1.0)\n"
    "      sync\n"
    "      atomic add Y[i], S[i]\n"
    "    }\n"
    "    atomic add N[0], 1\n"
    "    atomic max N[1], 2\n"
    "    print \"t\" value t\n"
    "  }\n}\n";

Test(simt, thread0_guards_parallel_atomics)
{
    gen_t g;
    gen(&g, SIDE);
    const char *s = g.r.source;
    cr_assert_eq(g.r.nsyms, 1);
    cr_assert(g.r.uses & TILEC_SIMT_USES_SYMS);
    cr_assert(strstr(s, "long long tc_sym0"), "%s", s);
    /* the let runs in every thread; its read of S needs the copy's barrier */
    long cp = find(s, "/* copy X -> S */", 0);
    long as = find(s, "v2 = ", cp);
    long b = find(s, "__syncthreads();", cp);
    cr_assert(cp >= 0 && b > cp && as > b, "%s", s);
    /* private store: every thread; global store: thread 0 only */
    long st_l = find(s, "b4[", as);
    long st_y = find(s, "b1[(long long)(0)] = ", as);
    long g0 = find(s, "if (tc_tid == 0) {", as);
    cr_assert(st_l > 0 && st_l < g0 && g0 < st_y, "%s", s);
    /* T.Parallel: spread over the threads; sync inside it is dropped */
    long par = find(s, "tc_tid; tc_i", 0);
    cr_assert_gt(par, 0, "%s", s);
    long par_end = find(s, "/* T.sync_threads inside per-thread code", par);
    cr_assert_gt(par_end, 0);
    long b_in = find(s, "__syncthreads();", par);
    long next_atomic = find(s, "/* atomic add N */", par);
    cr_assert(b_in < 0 || b_in > next_atomic, "barrier inside a parallel body:\n%s", s);
    /* float atomic by CAS, int add native, int max by CAS; block-level
     * atomics under thread 0 */
    cr_assert(g.r.uses & TILEC_SIMT_USES_ATOMIC_FLOAT);
    cr_assert(strstr(s, "atomicCAS((unsigned int *)tc_p, tc_exp,"), "%s", s);
    cr_assert(strstr(s, "atomicAdd((&b2[(long long)(0)]), ((int)tc_av));"), "%s", s);
    /* consecutive atomics need no barrier between them */
    cr_assert_null(strstr(s, "__syncthreads();\n    if (tc_tid == 0) {\n      { /* atomic max N */"), "%s", s);
    long a2 = find(s, "/* atomic max N */", 0);
    cr_assert_gt(a2, 0);
    cr_assert(find(s, "atomicCAS", a2) > a2);
    long g1 = find(s, "if (tc_tid == 0) {", next_atomic - 40);
    cr_assert(g1 > 0 && g1 < next_atomic, "%s", s);
    cr_assert(strstr(s, "printf(\"t: %g\\n\""), "%s", s);
    gen_free(&g);
}

static const char *HALF =
    "tileir 1.0\n"
    "kernel h {\n"
    "  var bx int32 block\n  var i int32 loop\n"
    "  param X global float16 [64]\n  param Y global bfloat16 [64] out\n"
    "  grid [bx = 1]\n  threads 32 1 1\n"
    "  body {\n"
    "    for i in parallel(64) {\n"
    "      store Y[i] = bfloat16(X[i])\n"
    "    }\n"
    "  }\n}\n";

Test(simt, half_modes)
{
    gen_t g;
    gen(&g, HALF); /* BITS: 16-bit patterns, software conversions */
    cr_assert(strstr(g.r.source, "unsigned short *__restrict__ b0"), "%s", g.r.source);
    cr_assert(strstr(g.r.source, "tc_h2f(b0["));
    cr_assert(strstr(g.r.source, "tc_f2b("));
    cr_assert(g.r.uses & TILEC_SIMT_USES_BF16);
    gen_free(&g);

    tilec_simt_dialect_t d;
    dialect(&d);
    d.f16.mode = TILEC_SIMT_HALF_FUNCS;
    d.f16.half_type = "half";
    d.f16.half_load = "vload_half($o, $p)";
    d.f16.half_store = "vstore_half_rte($v, $o, $p)";
    gen_with(&g, HALF, &d);
    cr_assert_eq(g.rc, 0, "%s", g.err);
    cr_assert(strstr(g.r.source, "half *__restrict__ b0"), "%s", g.r.source);
    cr_assert(strstr(g.r.source, "vload_half("), "%s", g.r.source);
    gen_free(&g);

    d.f16.mode = TILEC_SIMT_HALF_NATIVE;
    d.f16.half_to_float = "__half2float";
    d.f16.half_from_float = "__float2half_rn";
    d.f16.half_type = "__half";
    gen_with(&g, HALF, &d);
    cr_assert_eq(g.rc, 0, "%s", g.err);
    cr_assert(strstr(g.r.source, "__half *__restrict__ b0"), "%s", g.r.source);
    cr_assert(strstr(g.r.source, "__half2float(b0["), "%s", g.r.source);
    gen_free(&g);

    /* FUNCS without its templates is a dialect error */
    d.f16.mode = TILEC_SIMT_HALF_FUNCS;
    d.f16.half_load = NULL;
    gen_with(&g, HALF, &d);
    cr_assert_eq(g.rc, -1);
    cr_assert(strstr(g.err, "half_load"), "%s", g.err);
    gen_free(&g);
}

static int n_hook_calls;
static int gemm_hook(void *user, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    cr_assert_eq(user, &n_hook_calls);
    n_hook_calls++;
    if (s->kind != TILEC_ST_GEMM)
        return 0;
    cr_assert_eq(tilec_simt_per_thread(c), 0);
    cr_assert_str_eq(tilec_simt_buf_name(c, s->u.gemm.c), "b5");
    cr_assert_eq(tilec_simt_place_of(c, s->u.gemm.a), TILEC_SIMT_PLACE_SHARED);
    tilec_simt_emit(c, "MY_GEMM(%s, %s, %s, %d);", tilec_simt_buf_name(c, s->u.gemm.a),
                    tilec_simt_buf_name(c, s->u.gemm.b), tilec_simt_buf_name(c, s->u.gemm.c), tilec_simt_tmp(c));
    return 1;
}

static int prelude_hook(void *user, tilec_simt_ctx_t *c)
{
    (void)user;
    if (tilec_simt_uses(c) & TILEC_SIMT_USES_F16)
        tilec_simt_emit(c, "#include <cuda_fp16.h>");
    return 0;
}

static int failing_hook(void *user, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    (void)user;
    (void)s;
    tilec_simt_fail(c, "no thanks");
    return -1;
}

Test(simt, hooks)
{
    tilec_simt_dialect_t d;
    dialect(&d);
    d.user = &n_hook_calls;
    d.stmt_hook = gemm_hook;
    d.prelude_hook = prelude_hook;
    d.extra_prelude = "/* extra */";
    gen_t g;
    gen_with(&g, GEMM, &d);
    cr_assert_eq(g.rc, 0, "%s", g.err);
    const char *s = g.r.source;
    cr_assert(strstr(s, "MY_GEMM(b3, b4, b5, "), "%s", s);
    cr_assert_null(strstr(s, "/* gemm "), "%s", s);
    cr_assert_gt(n_hook_calls, 3);
    long inc = find(s, "#include <cuda_fp16.h>", 0), ex = find(s, "/* extra */", 0), k = find(s, "__global__", 0);
    cr_assert(inc > 0 && inc < ex && ex < k, "%s", s);
    /* the kit still orders the hooked gemm after the copies */
    long hk = find(s, "MY_GEMM", 0);
    long cb = find(s, "/* copy B -> B_shared */", 0);
    long b = find(s, "__syncthreads();", cb);
    cr_assert(b > cb && b < hk);
    gen_free(&g);

    d.stmt_hook = failing_hook;
    gen_with(&g, GEMM, &d);
    cr_assert_eq(g.rc, -1);
    cr_assert(strstr(g.err, "no thanks"), "%s", g.err);
    cr_assert_null(g.r.source);
    gen_free(&g);
}

Test(simt, dialect_checks)
{
    tilec_simt_dialect_t d;
    dialect(&d);
    d.barrier = NULL;
    gen_t g;
    gen_with(&g, GEMM, &d);
    cr_assert_eq(g.rc, -1);
    cr_assert(strstr(g.err, "barrier"), "%s", g.err);
    gen_free(&g);

    dialect(&d);
    d.type_name[TILEC_INT64] = NULL;
    gen_with(&g, GEMM, &d);
    cr_assert_eq(g.rc, -1);
    cr_assert(strstr(g.err, "int64"), "%s", g.err);
    gen_free(&g);

    /* no CAS: a float atomic cannot be lowered */
    dialect(&d);
    d.cas32 = NULL;
    gen_with(&g, SIDE, &d);
    cr_assert_eq(g.rc, -1);
    cr_assert(strstr(g.err, "compare-and-swap"), "%s", g.err);
    gen_free(&g);

    /* a caller built against a smaller dialect struct still works */
    dialect(&d);
    d.struct_size = offsetof(tilec_simt_dialect_t, shared_align);
    gen_with(&g, GEMM, &d);
    cr_assert_eq(g.rc, 0, "%s", g.err);
    gen_free(&g);

    cr_assert_eq(tilec_simt_generate(NULL, &d, &g.r, g.err, sizeof g.err), -1);
}

static const char *RED =
    "tileir 1.0\n"
    "kernel red {\n"
    "  var bx int32 block\n"
    "  param X global float32 [8, 16]\n  param Y global float32 [8] out\n"
    "  alloc T fragment float32 [8, 16]\n  alloc R fragment float32 [8]\n  alloc C local float32 [8, 16]\n"
    "  grid [bx = 1]\n  threads 4 2 1\n"
    "  body {\n"
    "    copy X[0 +: 8, 0 +: 16] -> T[0 +: 8, 0 +: 16]\n"
    "    reduce absmax T -> R dim=1 clear=0\n"
    "    cumsum T -> C dim=1 reverse=1\n"
    "    copy R[0 +: 8] -> Y[0 +: 8]\n"
    "  }\n}\n";

Test(simt, reduce_cumsum_threads2d)
{
    gen_t g;
    gen(&g, RED);
    const char *s = g.r.source;
    cr_assert_eq(g.r.nthreads, 8);
    cr_assert_eq(g.r.threads[1], 2);
    cr_assert(strstr(s, "(int)(threadIdx.x) + 4 * ((int)(threadIdx.y) + 2 * (int)(threadIdx.z))"), "%s", s);
    long rd = find(s, "/* reduce absmax T -> R */", 0);
    cr_assert_gt(rd, 0);
    cr_assert(find(s, "tc_maxf", rd) > rd);
    /* cumsum into a per-thread buffer: every thread runs the whole scan */
    long cs = find(s, "/* cumsum T -> C */", 0);
    cr_assert_gt(cs, 0);
    long loop = find(s, "for (int tc_e", cs);
    cr_assert(strncmp(s + loop, "for (int tc_e", 13) == 0);
    cr_assert(find(s, "= 0;", loop) < find(s, ";", loop) + 6, "%s", s);
    cr_assert(strstr(s, "(16 - 1 - tc_r)"), "%s", s);
    gen_free(&g);
}

Test(simt, launch_eval)
{
    gen_t g;
    gen(&g, SIDE);
    const tilec_ir_kernel_t *k = g.m->kernel;
    cr_assert_eq(tilec_simt_sym_count(k), 1);
    int64_t grid[3], syms[1] = {130};
    cr_assert_eq(tilec_simt_grid(k, syms, 1, grid), 0);
    cr_assert_eq(grid[0], 3);
    cr_assert_eq(grid[1], 1);
    cr_assert_eq(grid[2], 1);
    uint64_t bytes;
    cr_assert_eq(tilec_simt_param_bytes(k, 0, syms, 1, &bytes), 0);
    cr_assert_eq(bytes, 130 * 4);
    cr_assert_eq(tilec_simt_param_bytes(k, 2, syms, 1, &bytes), 0);
    cr_assert_eq(bytes, 16);
    cr_assert_eq(tilec_simt_param_bytes(k, 3, syms, 1, &bytes), -1);
    cr_assert_eq(tilec_simt_grid(k, syms, 0, grid), -1); /* symbol missing */
    syms[0] = -1000;
    cr_assert_eq(tilec_simt_param_bytes(k, 0, syms, 1, &bytes), -1);
    gen_free(&g);
}

static const char *ROWS =
    "tileir 1.0\n"
    "kernel rows {\n"
    "  var bx int32 block\n"
    "  param X global float32 [4, 256]\n  param Y global float32 [4] out\n  param Z global float32 [4] out\n"
    "  alloc T fragment float32 [4, 256]\n  alloc S fragment float32 [4]\n  alloc M fragment float32 [4]\n"
    "  grid [bx = 1]\n  threads 128 1 1\n"
    "  body {\n"
    "    copy X[0 +: 4, 0 +: 256] -> T[0 +: 4, 0 +: 256]\n"
    "    reduce sum T -> S dim=1 clear=1\n"
    "    reduce max T -> M dim=1 clear=0\n"
    "    copy S[0 +: 4] -> Y[0 +: 4]\n"
    "    copy M[0 +: 4] -> Z[0 +: 4]\n"
    "  }\n}\n";

Test(simt, tree_reduction)
{
    gen_t g;
    gen(&g, ROWS);
    const char *s = g.r.source;
    /* 4 outputs, 128 threads: 32 threads per output, 5 tree levels */
    long r1 = find(s, "/* reduce sum T -> S (32 threads per element) */", 0);
    long r2 = find(s, "/* reduce max T -> M (32 threads per element) */", 0);
    cr_assert(r1 > 0 && r2 > r1, "%s", s);
    cr_assert(strstr(s, "__shared__ float tc_red_float32[128]"), "%s", s);
    cr_assert_eq(g.r.shared_bytes, 4096 + 16 + 16 + 512);
    int levels = 0;
    for (long p = r1; (p = find(s, "if (tc_s % 32 < ", p)) > 0 && p < r2; p++)
        levels++;
    cr_assert_eq(levels, 5);
    cr_assert(strstr(s, "if (tc_s % 32 < 1)"));
    cr_assert(strstr(s, "if (tc_s % 32 < 16)"));
    /* the second tree waits until the first one's results are read */
    long b = find(s, "__syncthreads();", r2);
    long w = find(s, "tc_red_float32[tc_s] = tc_acc;", r2);
    cr_assert(b > r2 && b < w, "%s", s);
    /* clear=0 combines with the old value */
    cr_assert(find(s, "tc_maxf(b5[tc_o], tc_acc)", r2) > r2, "%s", s);
    gen_free(&g);
}

Test(simt, dynamic_shared_memory)
{
    tilec_simt_dialect_t d;
    dialect(&d);
    d.shared_ptr_qual = "";
    d.shared_dynamic_decl = "extern __shared__ __align__(16) unsigned char $n[];";
    gen_t g;
    gen_with(&g, ROWS, &d);
    cr_assert_eq(g.rc, 0, "%s", g.err);
    const char *s = g.r.source;
    long decl = find(s, "extern __shared__ __align__(16) unsigned char tc_smem[];", 0);
    long b3 = find(s, "float *const b3 = (float *)(tc_smem + 0);", 0);
    long b4 = find(s, "float *const b4 = (float *)(tc_smem + 4096);", 0);
    long b5 = find(s, "float *const b5 = (float *)(tc_smem + 4112);", 0);
    long red = find(s, "float *const tc_red_float32 = (float *)(tc_smem + 4128);", 0);
    cr_assert(decl > 0 && decl < b3 && b3 < b4 && b4 < b5 && b5 < red, "%s", s);
    cr_assert_eq(g.r.shared_bytes, 4128 + 512);
    cr_assert_null(strstr(s, "__shared__ float"), "%s", s);
    gen_free(&g);

    /* atomics on block-wide memory cast through shared_ptr_qual */
    static const char *AT =
        "tileir 1.0\nkernel at {\n  var bx int32 block\n  var i int32 loop\n  param X global float32 [1]\n"
        "  alloc S shared float32 [1]\n  grid [bx = 1]\n  threads 32 1 1\n  body {\n"
        "    for i in parallel(32) {\n      atomic add S[0], 1.0\n    }\n"
        "    copy S[0 +: 1] -> X[0 +: 1]\n  }\n}\n";
    gen_with(&g, AT, &d);
    cr_assert_eq(g.rc, 0, "%s", g.err);
    cr_assert(strstr(g.r.source, "volatile  unsigned int *tc_p = (volatile  unsigned int *)(&b1["), "%s", g.r.source);
    gen_free(&g);
}

/* Vector copies (dialect vec_width): aligned row copies move 4 (or 2)
 * elements at a time behind a run-time alignment and bounds check, with
 * the scalar loop as the fallback; ragged or misaligned ones stay scalar,
 * and dialects that do not opt in never see vector code. */
static const char *VEC =
    "tileir 1.0\n"
    "kernel vec {\n"
    "  var bx int32 block\n  var m int32 sym\n"
    "  param X global float32 [8, m]\n  param Y global float32 [8, m] out\n"
    "  param Z global float32 [m, 62] out\n  param H global float16 [m, 64]\n"
    "  alloc S shared float32 [8, 64]\n  alloc R shared float32 [8, 31]\n  alloc T shared float32 [8, 64]\n"
    "  grid [bx = ((m + 7) // 8)]\n  threads 64 1 1\n"
    "  body {\n"
    "    copy X[0 +: 8, (bx * 64) +: 64] -> S[0 +: 8, 0 +: 64]\n"
    "    copy S[0 +: 8, 0 +: 64] -> Y[0 +: 8, (bx * 64) +: 64]\n"
    "    copy X[0 +: 8, ((bx * 64) + 1) +: 31] -> R[0 +: 8, 0 +: 31]\n"
    "    copy S[0 +: 8, 0 +: 60] -> Z[(bx * 8) +: 8, 0 +: 60]\n"
    "    copy H[(bx * 8) +: 8, 0 +: 64] -> T[0 +: 8, 0 +: 64]\n"
    "    copy S[0 +: 4, 1 +: 60] -> T[0 +: 4, 0 +: 60]\n"
    "  }\n}\n";

Test(simt, vector_copies)
{
    tilec_simt_dialect_t d;
    dialect(&d);
    d.vec_width = 4;
    d.vec_load = "*(const $t$n *)($p)";
    d.vec_store = "*($t$n *)($p) = $v;";
    gen_t g;
    gen_with(&g, VEC, &d);
    cr_assert_eq(g.rc, 0, "generate: %s", g.err);
    const char *s = g.r.source;
    /* X -> S and S -> Y: float4, guarded by bounds and row alignment */
    cr_assert_eq(count(s, "/* vector copy, 4 elements at a time */"), 2, "%s", s);
    cr_assert_eq(count(s, "*(const float4 *)((b0 + "), 1, "%s", s);
    cr_assert_eq(count(s, "*(float4 *)((b1 + "), 1, "%s", s);
    long c1 = find(s, "/* copy X -> S */", 0);
    long v1 = find(s, "if (tc_in", c1);
    long e1 = find(s, "} else {", c1);
    long c2 = find(s, "/* copy S -> Y */", 0);
    cr_assert(c1 >= 0 && v1 > c1 && e1 > v1 && c2 > e1, "%s", s);
    /* X's row length m and the base of its innermost dimension, at run time */
    cr_assert_eq(find(s, "if (tc_in0 && ((long long)(v1)) % 4 == 0 && tc_r0_1 % 4 == 0) {", c1), v1, "%s", s);
    /* the scalar fallback keeps its per-element guard */
    long g1 = find(s, "? b0[", e1);
    cr_assert(g1 > e1 && g1 < c2, "%s", s);
    /* X[.., bx * 64 + 1 +: 31] -> R: ragged extent: scalar */
    long c3 = find(s, "/* copy X -> R */", 0);
    long c4 = find(s, "/* copy S -> Z */", 0);
    cr_assert(c3 >= 0 && c4 > c3);
    long v3 = find(s, "vector copy", c3);
    cr_assert(v3 < 0 || v3 > c4, "%s", s);
    /* S -> Z: Z's rows are 62 wide, so only pairs are aligned */
    long v4 = find(s, "/* vector copy, 2 elements at a time */", c4);
    cr_assert(v4 > c4, "%s", s);
    cr_assert(strstr(s, "*(float2 *)((b2 + "), "%s", s);
    /* float16 -> float32: different dtypes, scalar */
    long c5 = find(s, "/* copy H -> T */", 0);
    cr_assert(c5 > c4);
    long c6 = find(s, "/* copy S -> T */", 0);
    cr_assert(c6 > c5);
    long v5 = find(s, "vector copy", c5);
    cr_assert(v5 < 0 || v5 > c6, "%s", s);
    /* S[.., 1 +: 60]: a constant misaligned base, scalar */
    cr_assert_eq(find(s, "vector copy", c6), -1, "%s", s);
    gen_free(&g);

    /* a dialect that does not opt in gets no vector code */
    gen(&g, VEC);
    cr_assert_null(strstr(g.r.source, "vector copy"));
    cr_assert_null(strstr(g.r.source, "float4"));
    gen_free(&g);
}
