/*
 * vk_codegen.c — the GLSL (Vulkan compute) dialect of the SIMT lowering kit.
 *
 * GLSL is C-like but has no pointers and stricter types, so besides the
 * type and builtin names this dialect uses the kit's addressing-model
 * hooks (tilec/simt.h): tensor parameters are runtime arrays in std430
 * storage-buffer blocks at set 0, binding = parameter index; T.dynamic
 * symbols are int members of a push-constant block (the shell keeps their
 * values in int32 range); block-wide arrays are module-scope `shared`
 * arrays; casts are constructors ("int64_t(x)"), truth values are bool;
 * array indices are 32-bit (int(offset)); a float64 literal carries "lf".
 * Integer types come from GL_EXT_shader_explicit_arithmetic_types (SPIR-V
 * capabilities follow the types a kernel actually uses), 8/16-bit tensors
 * from the 8/16-bit storage extensions.  float16 and bfloat16 are 16-bit
 * patterns converted in software (round to nearest even, as on every kit
 * dialect), so a device needs only 16-bit storage, not float16 math.
 *
 * Atomics: int32/uint32 add/max/min are native everywhere; float32
 * (float64) add where the device has VK_EXT_shader_atomic_float; 64-bit
 * integer ones with shaderBufferInt64Atomics; everything else is a
 * compare-and-swap loop (atomicCompSwap) on an aliased 32/64-bit word view
 * of the tensor.  Math names: rsqrt is inversesqrt, fabs abs; GLSL has no
 * fmod (C's truncated remainder) and no float64 exp/log/tanh/pow, so the
 * prelude defines them (the float64 ones through float: float64
 * transcendentals are float-accurate on this backend, docs/backend-vulkan.md).
 * T.gemm: the statement hook prints float16 GEMMs on 16x16x16 cooperative
 * matrices where the device has them (GL_NV_cooperative_matrix, the
 * extension Debian 12's glslc knows); the kit's tiled FMA path elsewhere.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tilec/ir_walk.h"
#include "vk_internal.h"

/* After the prelude hook's #version and #extension lines, always the
 * same: glslang drops uncalled functions, with their capabilities. */
static const char helpers[] =
    "float tc_cfmodf(float a, float b) { return a - b * trunc(a / b); }\n"
    "double tc_cfmodd(double a, double b) { return a - b * trunc(a / b); }\n"
    "double tc_expd(double x) { return double(exp(float(x))); }\n"
    "double tc_exp2d(double x) { return double(exp2(float(x))); }\n"
    "double tc_logd(double x) { return double(log(float(x))); }\n"
    "double tc_log2d(double x) { return double(log2(float(x))); }\n"
    "double tc_tanhd(double x) { return double(tanh(float(x))); }\n"
    /* C's pow: GLSL's is undefined for a negative base */
    "float tc_cpowf(float a, float b) {\n"
    "  if (b == 0.0f) return 1.0f;\n"
    "  if (a == 0.0f) return b < 0.0f ? uintBitsToFloat(0x7f800000u) : 0.0f;\n"
    "  float r = pow(abs(a), b);\n"
    "  if (a < 0.0f) { if (trunc(b) != b) return uintBitsToFloat(0x7fc00000u); if (mod(b, 2.0f) != 0.0f) r = -r; }\n"
    "  return r;\n"
    "}\n"
    "double tc_powd(double a, double b) { return double(tc_cpowf(float(a), float(b))); }";

/* #version and the extensions: an #extension line costs nothing until
 * its types are used; the atomic and cooperative-matrix ones only where the
 * device has them (and the kernel uses them). */
static int vk_prelude(void *user, tilec_simt_ctx_t *c)
{
    const vk_gen_t *g = user;
    tilec_simt_emit(c, "#version 450");
    tilec_simt_emit(c, "#extension GL_EXT_shader_explicit_arithmetic_types : require");
    tilec_simt_emit(c, "#extension GL_EXT_shader_16bit_storage : require");
    tilec_simt_emit(c, "#extension GL_EXT_shader_8bit_storage : require");
    if (g->dev && g->dev->f32_atomic_add)
        tilec_simt_emit(c, "#extension GL_EXT_shader_atomic_float : require");
    if (g->dev && g->dev->i64_atomics)
        tilec_simt_emit(c, "#extension GL_EXT_shader_atomic_int64 : require");
    if (g->used_coopmat) {
        tilec_simt_emit(c, "#extension GL_NV_cooperative_matrix : require");
        tilec_simt_emit(c, "#extension GL_KHR_memory_scope_semantics : require");
        tilec_simt_emit(c, "#extension GL_KHR_shader_subgroup_basic : require");
    }
    return 0;
}

static const char *vk_math_name(void *user, const char *base, int dbl)
{
    (void)user;
    static const char *const fl[][3] = {
        /* base, float name, double name */
        {"rsqrt", "inversesqrt", "inversesqrt"}, {"fabs", "abs", "abs"},       {"fmod", "tc_cfmodf", "tc_cfmodd"},
        {"exp", "exp", "tc_expd"},               {"exp2", "exp2", "tc_exp2d"}, {"log", "log", "tc_logd"},
        {"log2", "log2", "tc_log2d"},            {"tanh", "tanh", "tc_tanhd"}, {"pow", "tc_cpowf", "tc_powd"},
    };
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
        if (strcmp(base, fl[i][0]) == 0)
            return fl[i][dbl ? 2 : 1];
    return NULL; /* sqrt floor ceil: the same names for float and double */
}

/* Constant dimension d of b, or -1. */
static int64_t cdim(const tilec_ir_buffer_t *b, int d)
{
    int64_t v;
    return b->shape && d < b->ndim && tilec_ir_is_const_int(b->shape[d], &v) ? v : -1;
}

/* A T.gemm the cooperative matrices can run: float16 A and B, float32 C,
 * all block-wide and, in lowered IR, dense in shared memory (such a
 * device's description keeps gemm accumulators there: vk_target.c; 16-bit
 * floats are stored as 16-bit patterns, which the loads reinterpret as
 * float16), M, N, K multiples of 16.  1 with the sizes, else 0. */
static int coopmat_gemm(const tilec_ir_stmt_t *s, int64_t *M, int64_t *N, int64_t *K)
{
    if (s->kind != TILEC_ST_GEMM)
        return 0;
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    if (!A || !B || !C || A->ndim != 2 || B->ndim != 2 || C->ndim != 2 || A->dtype != TILEC_FLOAT16 ||
        B->dtype != TILEC_FLOAT16 || C->dtype != TILEC_FLOAT32 || s->u.gemm.a_lead || s->u.gemm.b_lead)
        return 0;
    const tilec_ir_buffer_t *bs[3] = {A, B, C};
    for (int i = 0; i < 3; i++) {
        const tilec_ir_layout_t *l = bs[i]->layout;
        if (bs[i]->scope != TILEC_SCOPE_SHARED && bs[i]->scope != TILEC_SCOPE_FRAGMENT)
            return 0;
        /* lowered IR: block-wide and row-major (the loads take a stride) */
        if (l && (l->kind != TILEC_LAYOUT_SMEM || !l->name || strcmp(l->name, "dense") != 0))
            return 0;
    }
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    *M = cdim(C, 0), *N = cdim(C, 1), *K = cdim(A, ta ? 0 : 1);
    return *M > 0 && *N > 0 && *K > 0 && *M % 16 == 0 && *N % 16 == 0 && *K % 16 == 0 && cdim(A, ta ? 1 : 0) == *M &&
           cdim(B, tb ? 1 : 0) == *K && cdim(B, tb ? 0 : 1) == *N;
}

#define CM_F32 "fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>"
#define CM_F16 "fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>"

/* A of tile row m0 (an expression) at k-offset "tc_k" into tc_am<i>, B of
 * tile column n0 into tc_bm<j>: row-major, or column-major for a
 * transposed operand (A stored K x M, B stored N x K). */
static void load_a(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int i, const char *m0, int64_t M, int64_t K)
{
    const char *a = tilec_simt_buf_name(c, s->u.gemm.a);
    if (s->u.gemm.trans_a)
        tilec_simt_emit(c, "coopMatLoadNV(tc_am%d, %s, tc_k * %" PRId64 "u + %s, %" PRId64 "u, true);", i, a, M, m0, M);
    else
        tilec_simt_emit(c, "coopMatLoadNV(tc_am%d, %s, (%s) * %" PRId64 "u + tc_k, %" PRId64 "u, false);", i, a, m0, K, K);
}

static void load_b(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int j, const char *n0, int64_t N, int64_t K)
{
    const char *b = tilec_simt_buf_name(c, s->u.gemm.b);
    if (s->u.gemm.trans_b)
        tilec_simt_emit(c, "coopMatLoadNV(tc_bm%d, %s, (%s) * %" PRId64 "u + tc_k, %" PRId64 "u, true);", j, b, n0, K, K);
    else
        tilec_simt_emit(c, "coopMatLoadNV(tc_bm%d, %s, tc_k * %" PRId64 "u + %s, %" PRId64 "u, false);", j, b, N, n0, N);
}

/* The K loop of one gemm on the accumulators tc_cm<i*tn+j> of this
 * subgroup's tm x tn tiles, whose first row and column are the
 * expressions tc_m0 + 16 i, tc_n0 + 16 j: each A and B tile is loaded once
 * per k step and used tn (tm) times. */
static void mma_tiles(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int tm, int tn, int64_t M, int64_t N, int64_t K)
{
    char e[96];
    tilec_simt_emit(c, "for (uint tc_k = 0u; tc_k < %" PRId64 "u; tc_k += 16u) {", K);
    tilec_simt_indent(c, 1);
    for (int i = 0; i < tm; i++) {
        tilec_simt_emit(c, CM_F16 " tc_am%d;", i);
        snprintf(e, sizeof e, "tc_m0 + %du", 16 * i);
        load_a(c, s, i, e, M, K);
    }
    for (int j = 0; j < tn; j++) {
        tilec_simt_emit(c, CM_F16 " tc_bm%d;", j);
        snprintf(e, sizeof e, "tc_n0 + %du", 16 * j);
        load_b(c, s, j, e, N, K);
    }
    for (int i = 0; i < tm; i++)
        for (int j = 0; j < tn; j++)
            tilec_simt_emit(c, "tc_cm%d = coopMatMulAddNV(tc_am%d, tc_bm%d, tc_cm%d);", i * tn + j, i, j, i * tn + j);
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
}

/* Loads (store = 0) or stores the accumulators of this subgroup's tiles
 * from/to C in shared memory. */
static void move_acc(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *C, int tm, int tn, int64_t N, int store)
{
    const char *cc = tilec_simt_buf_name(c, C);
    for (int i = 0; i < tm; i++)
        for (int j = 0; j < tn; j++)
            tilec_simt_emit(c, "%s(tc_cm%d, %s, (tc_m0 + %du) * %" PRId64 "u + tc_n0 + %du, %" PRId64 "u, false);",
                            store ? "coopMatStoreNV" : "coopMatLoadNV", i * tn + j, cc, 16 * i, N, 16 * j, N);
}

/* The grid of subgroups over C's 16x16 tiles for a block of nthreads:
 * wm x wn subgroups (wm * wn of them, all of the block), each owning
 * tm x tn adjacent tiles, the most square such tile (fewest operand
 * loads); 0 when the tiles do not divide so or a subgroup would hold more
 * than 16 accumulators (128 registers). */
static int subgroup_grid(const vk_gen_t *g, int64_t M, int64_t N, int *wm, int *wn, int *tm, int *tn)
{
    int64_t sg = g->dev ? g->dev->subgroup_size : 0;
    if (sg <= 0 || g->nthreads <= 0 || g->nthreads % sg)
        return 0;
    int64_t nsg = g->nthreads / sg, mt = M / 16, nt = N / 16, best = 0;
    for (int64_t a = 1; a <= nsg; a++) {
        if (nsg % a || mt % a || nt % (nsg / a))
            continue;
        int64_t x = mt / a, y = nt / (nsg / a);
        if (x * y > 16 || (best && x + y >= best))
            continue;
        best = x + y;
        *wm = (int)a, *wn = (int)(nsg / a), *tm = (int)x, *tn = (int)y;
    }
    return best > 0;
}

/* The loop whose accumulators the registers hold (loop_hook), or NULL. */
typedef struct cm_scan {
    const tilec_ir_stmt_t *gemm;
    int ngemm, other;          /* gemms in the body; other mentions of its C */
} cm_scan_t;

static int mentions(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b)
{
    switch (s->kind) {
    case TILEC_ST_COPY:
    case TILEC_ST_COPY_ASYNC: return s->u.copy.src.buf == b || s->u.copy.dst.buf == b;
    case TILEC_ST_FILL: return s->u.fill.dst.buf == b;
    case TILEC_ST_GEMM: return s->u.gemm.a == b || s->u.gemm.b == b || s->u.gemm.c == b;
    case TILEC_ST_REDUCE: return s->u.reduce.src == b || s->u.reduce.dst == b;
    case TILEC_ST_CUMSUM: return s->u.cumsum.src == b || s->u.cumsum.dst == b;
    case TILEC_ST_ATOMIC: return s->u.atomic.buf == b;
    case TILEC_ST_STORE: return s->u.store.buf == b;
    case TILEC_ST_PRINT: return s->u.print.buf == b;
    case TILEC_ST_HINT: return s->u.hint.buf == b;
    default: return 0;
    }
}

static int scan_gemms(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    cm_scan_t *cs = w->user;
    if (s->kind == TILEC_ST_GEMM) {
        cs->ngemm++;
        cs->gemm = s;
    }
    return TILEC_WALK_CONTINUE;
}

static int scan_other_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    cm_scan_t *cs = w->user;
    if (s != cs->gemm && mentions(s, cs->gemm->u.gemm.c))
        cs->other = 1;
    return TILEC_WALK_CONTINUE;
}

static int scan_other_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    cm_scan_t *cs = w->user;
    if (e->kind == TILEC_EX_LOAD && e->u.load.buf == cs->gemm->u.gemm.c)
        cs->other = 1;
    return TILEC_WALK_CONTINUE;
}

/* A block-level loop whose body holds one cooperative-matrix gemm, and
 * nothing else that touches its C (a K loop): C's tiles stay in
 * accumulator matrices across the whole loop, loaded from shared memory
 * before it and stored back after it, so each k step costs only its A
 * and B loads.  Anything else: the kit prints the loop (0). */
static int vk_loop_coopmat(void *user, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    vk_gen_t *g = user;
    if (g->live)
        return 0;
    cm_scan_t cs = {0};
    tilec_ir_walk_t w = {.stmt_pre = scan_gemms, .user = &cs};
    tilec_ir_stmt_t *body = s->u.loop.body;
    int64_t M, N, K;
    if (tilec_ir_walk_block(&w, &body) < 0 || cs.ngemm != 1 || !coopmat_gemm(cs.gemm, &M, &N, &K))
        return 0;
    w = (tilec_ir_walk_t){.stmt_pre = scan_other_stmt, .expr_pre = scan_other_expr, .user = &cs};
    int wm, wn, tm, tn;
    if (tilec_ir_walk_block(&w, &body) < 0 || cs.other || !subgroup_grid(g, M, N, &wm, &wn, &tm, &tn))
        return 0;
    g->used_coopmat = 1;
    const tilec_ir_buffer_t *C = cs.gemm->u.gemm.c;
    tilec_simt_emit(c, "{ /* %s in %d x %d cooperative matrices per subgroup across the loop */",
                    C->name ? C->name : "?", tm, tn);
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "const uint tc_m0 = (gl_SubgroupID / %du) * %du, tc_n0 = (gl_SubgroupID %% %du) * %du;", wn,
                    16 * tm, wn, 16 * tn);
    for (int i = 0; i < tm * tn; i++)
        tilec_simt_emit(c, CM_F32 " tc_cm%d;", i);
    /* what was written to C before the loop (T.clear) is visible */
    tilec_simt_barrier(c);
    move_acc(c, C, tm, tn, N, 0);
    g->live = cs.gemm;
    g->live_tm = tm, g->live_tn = tn;
    tilec_simt_gen_loop(c, s);
    g->live = NULL;
    move_acc(c, C, tm, tn, N, 1);
    /* and what the loop computed is in C for the statements after it */
    tilec_simt_barrier(c);
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    return 1;
}

/* T.gemm on 16x16x16 cooperative matrices (GL_NV_cooperative_matrix) at
 * block level: inside the loop vk_loop_coopmat holds C's accumulators
 * for, on them; elsewhere the subgroups of the block share C's 16x16
 * tiles, each loading its tile from shared memory, keeping it in an
 * accumulator matrix over K and storing it back.  Anything else: the
 * kit's tiled FMA path (return 0).  The kit places the barriers before and
 * after from the statement's reads and writes. */
static int vk_gemm_coopmat(void *user, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    vk_gen_t *g = user;
    int64_t M, N, K;
    if (tilec_simt_per_thread(c) || !coopmat_gemm(s, &M, &N, &K))
        return 0;
    g->used_coopmat = 1;
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    tilec_simt_emit(c, "{ /* gemm %s, %s -> %s on 16x16x16 cooperative matrices */", A->name ? A->name : "?",
                    B->name ? B->name : "?", C->name ? C->name : "?");
    tilec_simt_indent(c, 1);
    if (g->live == s) {
        if (s->u.gemm.clear_accum)
            for (int i = 0; i < g->live_tm * g->live_tn; i++)
                tilec_simt_emit(c, "tc_cm%d = " CM_F32 "(0.0);", i);
        mma_tiles(c, s, g->live_tm, g->live_tn, M, N, K);
    } else {
        int64_t nt = N / 16, tiles = (M / 16) * nt;
        tilec_simt_emit(c, "for (int tc_t = int(gl_SubgroupID); tc_t < %" PRId64 "; tc_t += int(gl_NumSubgroups)) {",
                        tiles);
        tilec_simt_indent(c, 1);
        tilec_simt_emit(c, "const uint tc_m0 = uint(tc_t / %" PRId64 ") * 16u, tc_n0 = uint(tc_t %% %" PRId64 ") * 16u;",
                        nt, nt);
        tilec_simt_emit(c, CM_F32 " tc_cm0;");
        if (s->u.gemm.clear_accum)
            tilec_simt_emit(c, "tc_cm0 = " CM_F32 "(0.0);");
        else
            move_acc(c, C, 1, 1, N, 0);
        mma_tiles(c, s, 1, 1, M, N, K);
        move_acc(c, C, 1, 1, N, 1);
        tilec_simt_indent(c, -1);
        tilec_simt_emit(c, "}");
    }
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    return 1;
}

void vk_dialect(vk_gen_t *g, tilec_simt_dialect_t *d)
{
    const vk_dev_t *dev = g->dev;
    g->used_coopmat = 0;
    g->live = NULL;
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->name = "glsl";
    d->type_name[TILEC_BOOL] = "uint8_t";
    d->type_name[TILEC_INT8] = "int8_t";
    d->type_name[TILEC_INT16] = "int16_t";
    d->type_name[TILEC_INT32] = "int";
    d->type_name[TILEC_INT64] = "int64_t";
    d->type_name[TILEC_UINT8] = "uint8_t";
    d->type_name[TILEC_UINT16] = "uint16_t";
    d->type_name[TILEC_UINT32] = "uint";
    d->type_name[TILEC_UINT64] = "uint64_t";
    d->type_name[TILEC_FLOAT32] = "float";
    d->type_name[TILEC_FLOAT64] = "double";
    d->f16.mode = TILEC_SIMT_HALF_BITS;
    d->bf16.mode = TILEC_SIMT_HALF_BITS;
    d->int64_suffix = "L";
    d->uint64_suffix = "UL";
    d->f32_as_bits = "floatBitsToUint";
    d->bits_as_f32 = "uintBitsToFloat";
    d->f64_as_bits = "doubleBitsToUint64";
    d->bits_as_f64 = "uint64BitsToDouble";
    d->func_qual = "";
    d->shared_qual = "shared";
    d->kernel_qual = "void";
    d->kernel_name = "main";
    d->sym_type = "int";
    static const char *const wg[3] = {"gl_WorkGroupID.x", "gl_WorkGroupID.y", "gl_WorkGroupID.z"};
    static const char *const li[3] = {"gl_LocalInvocationID.x", "gl_LocalInvocationID.y", "gl_LocalInvocationID.z"};
    for (int i = 0; i < 3; i++) {
        d->block_idx[i] = wg[i];
        d->thread_idx[i] = li[i];
    }
    /* order this invocation's shared and buffer accesses for the rest of
     * the work-group (workgroup scope: memoryBarrierShared/Buffer are
     * device-scope fences, which cost a global fence on a GPU), then wait */
    d->barrier = "groupMemoryBarrier(); barrier();";
    static const char *const i32[3] = {"atomicAdd($p, $v);", "atomicMax($p, $v);", "atomicMin($p, $v);"};
    for (int o = 0; o < 3; o++) {
        d->atomic[TILEC_INT32][o] = i32[o];
        d->atomic[TILEC_UINT32][o] = i32[o];
        if (dev && dev->i64_atomics) {
            d->atomic[TILEC_INT64][o] = i32[o];
            d->atomic[TILEC_UINT64][o] = i32[o];
        }
    }
    if (dev && dev->f32_atomic_add)
        d->atomic[TILEC_FLOAT32][0] = "atomicAdd($p, $v);";
    if (dev && dev->f64_atomic_add)
        d->atomic[TILEC_FLOAT64][0] = "atomicAdd($p, $v);";
    d->cas32 = "atomicCompSwap($p, $c, $v)";
    if (dev && dev->i64_atomics)
        d->cas64 = "atomicCompSwap($p, $c, $v)";
    d->math_generic = 1;
    d->has_rsqrt = 1;
    d->has_printf = 0; /* debugPrintfEXT needs a validation layer to show anything */
    d->user = g;
    d->prelude_hook = vk_prelude;
    d->extra_prelude = helpers;
    if (dev && dev->gemm_coopmat && dev->f16_arith) {
        d->stmt_hook = vk_gemm_coopmat;
        d->loop_hook = vk_loop_coopmat;
    }
    d->shared_align = 16;
    d->cast = "$t($v)";
    d->bool_type = "bool";
    d->subscript = "$b[int($o)]";
    d->tensor_decl = "layout(std430, set = 0, binding = $i) buffer tc_B$i { $t $n[]; };";
    d->word_decl = "layout(std430, set = 0, binding = $i) buffer tc_W$n { $t $n[]; };";
    d->sym_block = "layout(push_constant) uniform tc_Syms { $m };";
    d->shared_decl = "shared $t $n[$c];";
    d->kernel_layout = "layout(local_size_x = $x, local_size_y = $y, local_size_z = $z) in;";
    d->math_name = vk_math_name;
    d->double_suffix = "lf";
    d->index32 = 1; /* and lavapipe (LLVM 15) miscompiles some uniform int64 comparisons */
}

int vk_generate(vk_gen_t *g, const tilec_ir_module_t *m, tilec_simt_result_t *res, char *err, size_t errlen)
{
    tilec_simt_dialect_t d;
    const tilec_ir_kernel_t *k = m ? m->kernel : NULL;
    g->nthreads = k ? k->threads[0] * k->threads[1] * k->threads[2] : 0;
    vk_dialect(g, &d);
    return tilec_simt_generate(m, &d, res, err, errlen);
}
