/*
 * cuda_kit.c — CUDA C++ as a dialect of the SDK's SIMT kit: the dialect
 * table, and hooks for what only CUDA has.
 *
 * The kit prints the kernel frame, expressions, loops, T.Parallel nests,
 * copies (16-byte vectors, cp.async through the async_copy templates),
 * fills, reductions, register fragments, barriers and the shared-memory
 * plan, all as the SDK's lowering passes decided (cuda_lower ran them).
 * This file gives it CUDA's names (blockIdx, __syncthreads, atomics,
 * __launch_bounds__, one dynamic shared array the launcher sizes with
 * cuFuncSetAttribute, float16/bfloat16 as 16-bit patterns converted with
 * PTX cvt and bit arithmetic) and one statement hook: T.gemm on the tensor
 * cores with the instruction the gemm_warp pass chose:
 *  - mma.sync m16n8k16 (sm_80+): each warp owns mt x nt tiles of 16 x 8,
 *    loads A and B with ldmatrix (.trans for a K-major B or an M-major A)
 *    from the padded shared rows the smem pass laid out;
 *  - wgmma m64nNk16 (sm_90a): each warpgroup issues, per 16 of K and per
 *    64 rows, one wgmma reading A and B through shared-memory descriptors
 *    over the canonical swizzle the smem pass chose; the wait is deferred
 *    by one loop iteration where the pipeline pass says so
 *    (lower.mma_wait), and completed after the loop (stmt_after).
 * The accumulators are C's registers when C is a register fragment in the
 * instructions' layout (checked by the kit's tilec_simt_mma_plan), else a
 * local array loaded from and stored to C around the gemm.  Every barrier
 * of a kernel with wgmma first fences the thread's shared-memory writes
 * for the async proxy wgmma reads through.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tilec/lower.h"
#include "tilec/simt.h"

/* The fixed CUDA text before the kit's helpers: no headers (NVRTC then
 * needs no include path). */
static const char kit_prelude[] =
    "typedef unsigned short tl_u16; typedef unsigned int tl_u32; typedef unsigned long long tl_u64;\n"
    "#define TL_INLINE static __device__ __forceinline__\n"
    "TL_INLINE float tl_h2f(tl_u16 h) { float f; asm(\"{ .reg .f16 t; mov.b16 t, %1; cvt.f32.f16 %0, t; }\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "TL_INLINE tl_u16 tl_f2h(float f) { tl_u16 h; asm(\"{ .reg .f16 t; cvt.rn.f16.f32 t, %1; mov.b16 %0, t; }\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "TL_INLINE float tl_b2f(tl_u16 h) { return __uint_as_float((tl_u32)h << 16); }\n"
    "TL_INLINE tl_u16 tl_f2b(float f) {\n"
    "  tl_u32 x = __float_as_uint(f);\n"
    "  if ((x & 0x7fffffffu) > 0x7f800000u) return (tl_u16)((x >> 16) | 0x40u);\n"
    "  x += 0x7fffu + ((x >> 16) & 1u);\n"
    "  return (tl_u16)(x >> 16);\n"
    "}\n"
    "TL_INLINE tl_u32 tl_sa(const void *p) { return (tl_u32)__cvta_generic_to_shared(p); }\n"

    /* the vector copies move bits: a vector of N T is the integer vector of its size */
    "template <int B> struct tl_vb; template <> struct tl_vb<16> { typedef uint4 t; };\n"
    "template <> struct tl_vb<8> { typedef uint2 t; }; template <> struct tl_vb<4> { typedef unsigned int t; };\n"
    "template <> struct tl_vb<2> { typedef unsigned short t; };\n"
    "template <typename T, int N> using tl_vec = typename tl_vb<sizeof(T) * N>::t;\n"
    "#if __CUDA_ARCH__ >= 800\n"
    "#define TL_LDSM(NAME, SUF, N, REGS, ...) TL_INLINE void NAME(tl_u32 *r, const void *p) { \\\n"
    "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x\" #N SUF \".shared.b16 \" REGS \", [%\" #N \"];\" : __VA_ARGS__ : \"r\"(tl_sa(p))); }\n"
    "TL_LDSM(tl_ldsm_x4, \"\", 4, \"{%0,%1,%2,%3}\", \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]))\n"
    "TL_LDSM(tl_ldsm_x4_t, \".trans\", 4, \"{%0,%1,%2,%3}\", \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]))\n"
    "TL_LDSM(tl_ldsm_x2, \"\", 2, \"{%0,%1}\", \"=r\"(r[0]), \"=r\"(r[1]))\n"
    "TL_LDSM(tl_ldsm_x2_t, \".trans\", 2, \"{%0,%1}\", \"=r\"(r[0]), \"=r\"(r[1]))\n"
    "#define TL_MMA(NAME, AB) TL_INLINE void NAME(float &d0, float &d1, float &d2, float &d3, const tl_u32 *a, const tl_u32 *b) { \\\n"
    "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.\" AB \".\" AB \".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\" \\\n"
    "    : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3) : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1])); }\n"
    "TL_MMA(tl_mma_f16, \"f16\")\n"
    "TL_MMA(tl_mma_bf16, \"bf16\")\n"
    "template <int N> TL_INLINE void tl_cp_async(void *dst, const void *src) {\n"
    "  if (N == 16) asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" :: \"r\"(tl_sa(dst)), \"l\"(src));\n"
    "  else asm volatile(\"cp.async.ca.shared.global [%0], [%1], %2;\" :: \"r\"(tl_sa(dst)), \"l\"(src), \"n\"(N));\n"
    "}\n"
    /* N bytes of which the first n are read from s, the rest zeros */
    "template <int N> TL_INLINE void tl_cp_async_n(void *dst, const void *s, int n) {\n"
    "  if (N == 16) asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" :: \"r\"(tl_sa(dst)), \"l\"(s), \"r\"(n));\n"
    "  else asm volatile(\"cp.async.ca.shared.global [%0], [%1], %2, %3;\" :: \"r\"(tl_sa(dst)), \"l\"(s), \"n\"(N), \"r\"(n));\n"
    "}\n"
    "template <int N> TL_INLINE void tl_cp_async_zf(void *dst, const void *src, const void *base, bool p) {\n"
    "  tl_cp_async_n<N>(dst, p ? src : base, p ? N : 0);\n"
    "}\n"
    "template <int N, typename T> TL_INLINE void tl_cp_async_zo(void *dst, const T *base, unsigned int off, bool p) {\n"
    "  tl_cp_async_n<N>(dst, base + (p ? off : 0u), p ? N : 0);\n"
    "}\n"
    "TL_INLINE void tl_cp_commit(void) { asm volatile(\"cp.async.commit_group;\"); }\n"
    "template <int N> TL_INLINE void tl_cp_wait(void) { asm volatile(\"cp.async.wait_group %0;\" :: \"n\"(N)); }\n"
    "#endif\n";

/* The sm_90a pieces (a kernel with wgmma): descriptors, warpgroup fences,
 * the async-proxy fence. */
static const char kit_prelude_wgmma[] =
    "TL_INLINE tl_u64 tl_desc(tl_u32 a, tl_u32 lbo, tl_u32 sbo, int mode) {\n"
    "  return (tl_u64)((a & 0x3FFFFu) >> 4) | ((tl_u64)((lbo & 0x3FFFFu) >> 4) << 16) |\n"
    "         ((tl_u64)((sbo & 0x3FFFFu) >> 4) << 32) | ((tl_u64)mode << 62);\n"
    "}\n"
    "TL_INLINE void tl_wg_fence(void) { asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\"); }\n"
    "TL_INLINE void tl_wg_commit(void) { asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\"); }\n"
    "template <int N> TL_INLINE void tl_wg_wait(void) { asm volatile(\"wgmma.wait_group.sync.aligned %0;\" :: \"n\"(N) : \"memory\"); }\n"
    "TL_INLINE void tl_fence_proxy(void) { asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); }\n";

#define KIT_MAX_RS 8

typedef struct kit {
    const tilec_target_desc_t *desc;
    const tilec_ir_stmt_t *body;     /* the kernel's */
    cuda_kinfo_t *info;
    /* fragments held as wgmma A-operand registers (tc_pa<id>), not in shared memory */
    const tilec_ir_buffer_t *rs[KIT_MAX_RS];
    int nrs;
    /* of those, the ones declared before a loop of the overlap pass (the
     * copy that packs them and the wgmma that reads them are in different
     * iterations), with the plan of that wgmma */
    const tilec_ir_buffer_t *hoist[KIT_MAX_RS];
    tilec_simt_mma_plan_t hoist_p[KIT_MAX_RS];
    int nhoist;
    /* wgmma GEMMs left in flight (lower.mma_nowait): their accumulators are
     * fenced at every hint "mma_wait" */
    const tilec_ir_buffer_t *pend_c[KIT_MAX_RS];
    tilec_simt_mma_plan_t pend_p[KIT_MAX_RS];
    int npend;
    int wgmma;                       /* the kernel has wgmma GEMMs (their prelude, the proxy fence) */
    const tilec_ir_stmt_t *deferred; /* a wgmma GEMM whose last group stays pending until its loop ends */
    const tilec_ir_buffer_t *deferred_c;
    tilec_simt_mma_plan_t deferred_p;
    const tilec_ir_kernel_t *k;
    tilec_simt_ctx_t *ctx;           /* while cuda_tma_stmt prints */
    tilec_sdk_str_t *tma_o;
    /* warp specialization (lower.warpspec): the loop being printed for
     * the producer (tid_base: its first thread, which issues the copies)
     * or for the consumers (consumers: their count) */
    int tid_base, consumers;
    int ws;                          /* the kernel has a warpspec loop (setmaxnreg helpers) */
    int fast_exp2;                   /* float exp2 as one ex2.approx.ftz (tl_ex2f) */
    uint32_t warp_arrive;            /* mbarriers the consumer warps arrive on */
    int arrive_warps;
    /* while a role of a warpspec loop prints: its statements are copies
     * (ws_cells[i] of ws_orig[i]) */
    const tilec_ir_stmt_t *ws_cells, *const *ws_orig;
    int ws_n;
    /* clears a wgmma can do instead (cuda_zero.c), and the one left out,
     * waiting for its gemm (zf_gemm, the kernel's statement) */
    cuda_zfold_t zf[CUDA_MAX_ZFOLD];
    int nzf;
    const cuda_zfold_t *zf_on;
} kit_t;

/* the kernel's statement s is a copy of (itself outside a warpspec role) */
static const tilec_ir_stmt_t *ws_orig_of(const kit_t *g, const tilec_ir_stmt_t *s)
{
    if (s && g->ws_cells && s >= g->ws_cells && s < g->ws_cells + g->ws_n)
        return g->ws_orig[s - g->ws_cells];
    return s;
}

/* accumulator register i of the gemm being printed: C's own, or tc_acc */
static const char *acc(tilec_simt_ctx_t *c, const tilec_simt_mma_plan_t *p, const tilec_ir_buffer_t *C, int i,
                       char *buf, size_t n)
{
    if (!p->regs) {
        snprintf(buf, n, "tc_acc[%d]", i);
        return buf;
    }
    char r[24];
    snprintf(r, sizeof r, "%d", i);
    snprintf(buf, n, "%s", tilec_simt_elem(c, C, r));
    return buf;
}

/* Compiler barriers on the accumulators, so that no access moves across
 * an asynchronous MMA that reads and writes them. */
static void keep_acc(tilec_simt_ctx_t *c, const tilec_simt_mma_plan_t *p, const tilec_ir_buffer_t *C)
{
    int n = (int)(p->mt * p->nt) * p->rpt;
    char b[160], line[1400];
    for (int i = 0; i < n; i += 8) {
        size_t k = (size_t)snprintf(line, sizeof line, "asm volatile(\"\" :");
        for (int j = i; j < n && j < i + 8 && k < sizeof line; j++)
            k += (size_t)snprintf(line + k, sizeof line - k, "%s \"+f\"(%s)", j > i ? "," : "", acc(c, p, C, j, b, sizeof b));
        tilec_simt_emit(c, "%s :: \"memory\");", line);
    }
}

/* element (r, col) of operand X of the gemm (its ring stage first) */
static const char *opnd(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *X, tilec_ir_expr_t *const *lead, const char *r,
                        const char *col)
{
    const char *idx[TILEC_IR_MAX_DIMS];
    int nl = X->ndim - 2;
    for (int d = 0; d < nl; d++)
        idx[d] = tilec_simt_expr(c, lead[d]);
    idx[nl] = r;
    idx[nl + 1] = col;
    return tilec_simt_elem_at(c, X, idx);
}

/* the 16-bit float pair type name of the instruction */
static int is_bf16(const tilec_ir_buffer_t *A) { return A->dtype == TILEC_BFLOAT16; }

/* The K loop of mma.sync over this warp's tiles. */
static void mma_sync_kloop(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const tilec_simt_mma_plan_t *p,
                           const tilec_ir_buffer_t *C)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b;
    tilec_ir_expr_t *const *la = s->u.gemm.a_lead, *const *lb = s->u.gemm.b_lead;
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b, mt = (int)p->mt, nt = (int)p->nt;
    tilec_simt_emit(c, "#pragma unroll 2");
    tilec_simt_emit(c, "for (int tc_k0 = 0; tc_k0 < %" PRId64 "; tc_k0 += 16) {", p->K);
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "tl_u32 tc_a[%d][4], tc_b[%d][2];", mt, nt + (nt & 1));
    tilec_simt_emit(c, "const int tc_li = tc_lane & 7, tc_lj = tc_lane >> 3, tc_lk = tc_lane & 15;");
    tilec_simt_emit(c, "(void)tc_li; (void)tc_lj; (void)tc_lk;");
    tilec_simt_emit(c, "#pragma unroll");
    tilec_simt_emit(c, "for (int tc_mi = 0; tc_mi < %d; tc_mi++) {", mt);
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "const int tc_m0 = tc_wm + tc_mi * 16;");
    if (!ta)
        tilec_simt_emit(c, "tl_ldsm_x4(tc_a[tc_mi], &%s);",
                        opnd(c, A, la, "(tc_m0 + tc_lk)", "(tc_k0 + (tc_lane >> 4) * 8)"));
    else
        tilec_simt_emit(c, "tl_ldsm_x4_t(tc_a[tc_mi], &%s);",
                        opnd(c, A, la, "(tc_k0 + tc_li + (tc_lj >> 1) * 8)", "(tc_m0 + (tc_lj & 1) * 8)"));
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    tilec_simt_emit(c, "#pragma unroll");
    if (p->WN % 16 == 0) {
        tilec_simt_emit(c, "for (int tc_ni = 0; tc_ni < %d; tc_ni += 2) {", nt);
        tilec_simt_indent(c, 1);
        tilec_simt_emit(c, "const int tc_n0 = tc_wn + tc_ni * 8;");
        tilec_simt_emit(c, "tl_u32 tc_t[4];");
        if (!tb)
            tilec_simt_emit(c, "tl_ldsm_x4_t(tc_t, &%s);",
                            opnd(c, B, lb, "(tc_k0 + tc_li + (tc_lj & 1) * 8)", "(tc_n0 + (tc_lj >> 1) * 8)"));
        else
            tilec_simt_emit(c, "tl_ldsm_x4(tc_t, &%s);",
                            opnd(c, B, lb, "(tc_n0 + tc_li + (tc_lj >> 1) * 8)", "(tc_k0 + (tc_lj & 1) * 8)"));
        tilec_simt_emit(c, "tc_b[tc_ni][0] = tc_t[0]; tc_b[tc_ni][1] = tc_t[1]; tc_b[tc_ni + 1][0] = tc_t[2]; "
                           "tc_b[tc_ni + 1][1] = tc_t[3];");
    } else {
        tilec_simt_emit(c, "for (int tc_ni = 0; tc_ni < %d; tc_ni++) {", nt);
        tilec_simt_indent(c, 1);
        tilec_simt_emit(c, "const int tc_n0 = tc_wn + tc_ni * 8;");
        if (!tb)
            tilec_simt_emit(c, "tl_ldsm_x2_t(tc_b[tc_ni], &%s);",
                            opnd(c, B, lb, "(tc_k0 + (tc_lk & 7) + (tc_lk >> 3) * 8)", "tc_n0"));
        else
            tilec_simt_emit(c, "tl_ldsm_x2(tc_b[tc_ni], &%s);",
                            opnd(c, B, lb, "(tc_n0 + (tc_lk & 7))", "(tc_k0 + (tc_lk >> 3) * 8)"));
    }
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    char r0[160], r1[160], r2[160], r3[160];
    for (int mi = 0; mi < mt; mi++)
        for (int ni = 0; ni < nt; ni++) {
            int t = (mi * nt + ni) * 4;
            tilec_simt_emit(c, "%s(%s, %s, %s, %s, tc_a[%d], tc_b[%d]);", is_bf16(A) ? "tl_mma_bf16" : "tl_mma_f16",
                            acc(c, p, C, t, r0, sizeof r0), acc(c, p, C, t + 1, r1, sizeof r1),
                            acc(c, p, C, t + 2, r2, sizeof r2), acc(c, p, C, t + 3, r3, sizeof r3), mi, ni);
        }
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
}

/* The swizzle width (elements) of a wgmma operand, or 0 after a failure. */
static int swz_width(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *X)
{
    const tilec_ir_layout_t *l = X->layout;
    int bytes = l && l->kind == TILEC_LAYOUT_SMEM && l->name && strncmp(l->name, "swizzle", 7) == 0 ? atoi(l->name + 7) : 0;
    int W = bytes / (int)tilec_dtype_size(X->dtype);
    if (bytes != 128 && bytes != 64 && bytes != 32) {
        tilec_simt_fail(c, "wgmma operand '%s' is not in a canonical swizzled layout", X->name);
        return 0;
    }
    return W;
}

/* A shared-memory descriptor of operand X at (mn, k0): kmajor = X's rows
 * are M (N) and K runs along them, else its rows are K. */
static void wg_desc(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *X, tilec_ir_expr_t *const *lead, int kmajor,
                    const char *mn, const char *dst)
{
    int W = swz_width(c, X);
    if (!W)
        return;
    int64_t R = 0;
    tilec_ir_is_const_int(X->shape[X->ndim - 2], &R);
    int es = (int)tilec_dtype_size(X->dtype), wb = W * es; /* swizzle row bytes */
    int mode = wb == 128 ? 1 : wb == 64 ? 2 : 3;
    const char *base = opnd(c, X, lead, "0", "0");
    if (kmajor)
        tilec_simt_emit(c, "const tl_u64 %s = tl_desc(tl_sa(&%s) + %du * (tl_u32)((tc_k0 / %d) * %" PRId64 " + (%s) * %d + "
                        "(tc_k0 %% %d)), 16u, %du, %d);", dst, base, es, W, R * W, mn, W, W, 8 * wb, mode);
    else
        tilec_simt_emit(c, "const tl_u64 %s = tl_desc(tl_sa(&%s) + %du * (tl_u32)(((%s) / %d) * %" PRId64 " + tc_k0 * %d), "
                        "%" PRId64 "u, %du, %d);", dst, base, es, mn, W, R * W, W, R * W * es, 8 * wb, mode);
}

/* The K loop of wgmma: per 16 of K, per instruction tile of this
 * warpgroup, one wgmma.m64nNk16 through descriptors; then commit and wait
 * (one group left pending when deferred). */
static void wgmma_kloop(kit_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const tilec_simt_mma_plan_t *p,
                        const tilec_ir_buffer_t *C, int rs, int defer)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b;
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b, nr = p->rpt, ik = (int)p->e->k;
    const char *ab = A->dtype == TILEC_FLOAT8_E4M3FN ? "e4m3" : A->dtype == TILEC_FLOAT8_E5M2 ? "e5m2"
                     : is_bf16(A) ? "bf16" : "f16";
    /* 8-bit operands are K-major and take no transpose immediates */
    int f8 = tilec_dtype_size(A->dtype) == 1;
    if (f8 && (rs || ta || !tb)) {
        tilec_simt_fail(c, "wgmma on %s: both operands must be K-major in shared memory", tilec_dtype_name(A->dtype));
        return;
    }
    g->info->wgmma++;
    /* scale-d of the first k-step: 0 where the clear before it was left out */
    char sd[400] = "1";
    const cuda_zfold_t *zf = g->zf_on && g->zf_on->gemm == ws_orig_of(g, s) ? g->zf_on : NULL;
    if (zf && zf->cond)
        snprintf(sd, sizeof sd, "(int)(tc_k0 != 0 || %s(%s))", zf->in_then ? "!" : "", tilec_simt_expr(c, zf->cond));
    else if (zf)
        snprintf(sd, sizeof sd, "(int)(tc_k0 != 0)");
    g->zf_on = zf ? NULL : g->zf_on;
    keep_acc(c, p, C);
    tilec_simt_emit(c, "tl_wg_fence();");
    tilec_simt_emit(c, "#pragma unroll");
    tilec_simt_emit(c, "for (int tc_k0 = 0; tc_k0 < %" PRId64 "; tc_k0 += %d) {", p->K, ik);
    tilec_simt_indent(c, 1);
    for (int mi = 0; mi < (int)p->mt; mi++)
        for (int ni = 0; ni < (int)p->nt; ni++) {
            char mrow[64], ncol[64], r[160];
            snprintf(mrow, sizeof mrow, "tc_wm + %d", mi * (int)p->im);
            snprintf(ncol, sizeof ncol, "tc_wn + %d", ni * (int)p->in);
            tilec_simt_emit(c, "{");
            tilec_simt_indent(c, 1);
            wg_desc(c, B, s->u.gemm.b_lead, tb, ncol, "tc_db");
            if (!rs)
                wg_desc(c, A, s->u.gemm.a_lead, !ta, mrow, "tc_da");
            tilec_sdk_str_t ops = {0}, regs = {0};
            for (int i = 0; i < nr; i++) {
                tilec_sdk_str_printf(&regs, "%s%%%d", i ? "," : "", i);
                tilec_sdk_str_printf(&ops, "%s\"+f\"(%s)", i ? ", " : "",
                                     acc(c, p, C, (mi * (int)p->nt + ni) * nr + i, r, sizeof r));
            }
            if (rs) { /* A from the registers the copy packed: {a0..a3} */
                tilec_simt_emit(c, "asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; "
                                "wgmma.mma_async.sync.aligned.m64n%" PRId64 "k16.f32.%s.%s {%s}, {%%%d,%%%d,%%%d,%%%d}, "
                                "%%%d, p, 1, 1, %d; }\"", nr + 5, p->in, ab, ab, regs.s ? regs.s : "", nr, nr + 1, nr + 2,
                                nr + 3, nr + 4, !tb);
                tilec_simt_emit(c, "  : %s : \"r\"(tc_pa%d[%d][tc_k0 / 16][0]), \"r\"(tc_pa%d[%d][tc_k0 / 16][1]), "
                                "\"r\"(tc_pa%d[%d][tc_k0 / 16][2]), \"r\"(tc_pa%d[%d][tc_k0 / 16][3]), \"l\"(tc_db), \"r\"(%s));",
                                ops.s ? ops.s : "", A->id, mi, A->id, mi, A->id, mi, A->id, mi, sd);
            } else {
                char tr[16] = "";
                if (!f8)
                    snprintf(tr, sizeof tr, ", %d, %d", ta, !tb);
                tilec_simt_emit(c, "asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0; "
                                "wgmma.mma_async.sync.aligned.m64n%" PRId64 "k%d.f32.%s.%s {%s}, %%%d, %%%d, p, 1, 1%s; }\"",
                                nr + 2, p->in, ik, ab, ab, regs.s ? regs.s : "", nr, nr + 1, tr);
                tilec_simt_emit(c, "  : %s : \"l\"(tc_da), \"l\"(tc_db), \"r\"(%s));", ops.s ? ops.s : "", sd);
            }
            tilec_sdk_str_free(&ops);
            tilec_sdk_str_free(&regs);
            tilec_simt_indent(c, -1);
            tilec_simt_emit(c, "}");
        }
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    tilec_simt_emit(c, "tl_wg_commit();");
    if (defer >= 0)
        tilec_simt_emit(c, "tl_wg_wait<%d>();", defer);
    else
        tilec_simt_emit(c, "/* left in flight until a hint mma_wait */");
    keep_acc(c, p, C);
}

static int gemm_hook(kit_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    tilec_simt_mma_plan_t p;
    int rc = tilec_simt_mma_plan(c, g->desc, s, &p);
    if (rc <= 0)
        return rc; /* 0: the kit's FMA tiles ("simt") */
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    int wg = (p.e->flags & TILEC_TARGET_MMA_ASYNC) != 0, T = p.e->threads, n = (int)(p.mt * p.nt) * p.rpt;
    int rs = 0;
    for (int i = 0; i < g->nrs; i++)
        rs |= g->rs[i] == A;
    if ((tilec_simt_place_of(c, A) == TILEC_SIMT_PLACE_PRIVATE && !rs) ||
        tilec_simt_place_of(c, B) == TILEC_SIMT_PLACE_PRIVATE ||
        A->scope == TILEC_SCOPE_GLOBAL || B->scope == TILEC_SCOPE_GLOBAL) {
        tilec_simt_fail(c, "gemm %s, %s on %s: the operands must be in shared memory", A->name, B->name, p.e->name);
        return -1;
    }
    g->info->mma++;
    tilec_simt_emit(c, "{ /* gemm %s, %s -> %s on %s: %" PRId64 " x %" PRId64 " %s of %" PRId64 " x %" PRId64
                    ", C in %s */", A->name, B->name, C->name, p.e->name, p.gm, p.gn, wg ? "warpgroups" : "warps",
                    p.WM, p.WN, p.regs ? "registers" : "memory");
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "const int tc_lane = tc_tid %% %d, tc_grp = tc_tid / %d;", T, T);
    tilec_simt_emit(c, "(void)tc_lane;");
    /* no guard when the grid is the whole block: a wgmma under a branch
     * the compiler cannot prove uniform loses the uniform datapath for its
     * descriptors and the zero-fill folded into the first MMA */
    const int *kt = g->k->threads;
    if (p.gm * p.gn * T == (g->consumers ? g->consumers : (int64_t)kt[0] * kt[1] * kt[2]))
        tilec_simt_emit(c, "{");
    else
        tilec_simt_emit(c, "if (tc_grp < %" PRId64 ") {", p.gm * p.gn);
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "const int tc_wm = (tc_grp / %" PRId64 ") * %" PRId64 ", tc_wn = (tc_grp %% %" PRId64 ") * %" PRId64
                    ";", p.gn, p.WM, p.gn, p.WN);
    /* C's element of accumulator register i of this lane */
    char r[160];
    if (!p.regs || s->u.gemm.clear_accum) {
        if (!p.regs)
            tilec_simt_emit(c, "float tc_acc[%d];", n);
        for (int i = 0; i < n; i++) {
            int t = i / p.rpt, j = i % p.rpt;
            const char *v = "0.0f";
            if (!s->u.gemm.clear_accum) {
                const char *row = tilec_simt_mma_acc_coord(c, &p, 0, j, "tc_lane");
                const char *col = tilec_simt_mma_acc_coord(c, &p, 1, j, "tc_lane");
                char off[400];
                snprintf(off, sizeof off, "(long long)(tc_wm + %" PRId64 " + %s) * %" PRId64 " + tc_wn + %" PRId64 " + %s",
                         (t / p.nt) * p.im, row, p.N, (t % p.nt) * p.in, col);
                v = tilec_simt_load(c, C, off);
            }
            tilec_simt_emit(c, "%s = %s;", acc(c, &p, C, i, r, sizeof r), v);
        }
    }
    /* A's registers must stay as they are until the wgmma completes: no
     * deferred wait for a register A */
    int defer = wg && p.regs && !rs && tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma_wait");
    /* the overlap pass's: issued here, waited for by a later hint "mma_wait" */
    if (wg && p.regs && tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma_nowait")) {
        int i = 0;
        while (i < g->npend && g->pend_c[i] != C)
            i++;
        if (i == KIT_MAX_RS) {
            tilec_simt_fail(c, "too many wgmma GEMMs left in flight");
            return -1;
        }
        if (i == g->npend)
            g->npend++;
        g->pend_c[i] = C;
        g->pend_p[i] = p;
        defer = -1;
    }
    if (wg)
        wgmma_kloop(g, c, s, &p, C, rs, defer);
    else
        mma_sync_kloop(c, s, &p, C);
    if (g->zf_on && g->zf_on->gemm == ws_orig_of(g, s)) {
        tilec_simt_fail(c, "gemm into %s: its clear was left to a wgmma that did not print", C->name);
        return -1;
    }
    if (defer) {
        g->deferred = s;
        g->deferred_c = C;
        g->deferred_p = p;
    }
    if (!p.regs)
        for (int i = 0; i < n; i++) {
            int t = i / p.rpt, j = i % p.rpt;
            char off[400], v[32];
            snprintf(off, sizeof off, "(long long)(tc_wm + %" PRId64 " + %s) * %" PRId64 " + tc_wn + %" PRId64 " + %s",
                     (t / p.nt) * p.im, tilec_simt_mma_acc_coord(c, &p, 0, j, "tc_lane"), p.N, (t % p.nt) * p.in,
                     tilec_simt_mma_acc_coord(c, &p, 1, j, "tc_lane"));
            snprintf(v, sizeof v, "tc_acc[%d]", i);
            tilec_simt_emit(c, "%s", tilec_simt_store(c, C, off, v));
        }
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    return 1;
}

/* the first gemm of list (at any depth) whose A is b */
static const tilec_ir_stmt_t *first_gemm_of(const tilec_ir_stmt_t *list, const tilec_ir_buffer_t *b, int depth)
{
    for (const tilec_ir_stmt_t *s = list; s && depth < 600; s = s->next) {
        const tilec_ir_stmt_t *r = NULL;
        if (s->kind == TILEC_ST_GEMM && s->u.gemm.a == b)
            return s;
        if (s->kind == TILEC_ST_FOR)
            r = first_gemm_of(s->u.loop.body, b, depth + 1);
        else if (s->kind == TILEC_ST_IF && !(r = first_gemm_of(s->u.cond.then, b, depth + 1)))
            r = first_gemm_of(s->u.cond.els, b, depth + 1);
        if (r)
            return r;
    }
    return NULL;
}

/* Does list (and what it nests) use b in a statement other than x and y
 * (y NULL: other than x and gemms reading b as their A)? */
static int other_uses(const tilec_ir_stmt_t *list, const tilec_ir_buffer_t *b, const tilec_ir_stmt_t *x,
                      const tilec_ir_stmt_t *y, int depth)
{
    for (const tilec_ir_stmt_t *s = list; s; s = s->next) {
        if (s == x || s == y || (!y && s->kind == TILEC_ST_GEMM && s->u.gemm.a == b && s->u.gemm.b != b &&
                                 s->u.gemm.c != b && !s->u.gemm.trans_a))
            continue;
        tilec_ir_stmt_t one = *s;
        one.next = NULL;
        if (depth > 600)
            return 1;
        if (s->kind == TILEC_ST_FOR) {
            one.u.loop.body = NULL;
            if (other_uses(s->u.loop.body, b, x, y, depth + 1))
                return 1;
        } else if (s->kind == TILEC_ST_IF) {
            one.u.cond.then = one.u.cond.els = NULL;
            if (other_uses(s->u.cond.then, b, x, y, depth + 1) || other_uses(s->u.cond.els, b, x, y, depth + 1))
                return 1;
        }
        if (tilec_lower_uses(&one, b))
            return 1;
    }
    return 0;
}

static int whole(const tilec_ir_region_t *r)
{
    for (int d = 0; d < r->buf->ndim; d++) {
        int64_t b, e;
        if (!tilec_ir_is_const_int(r->base[d], &b) || b || !tilec_ir_is_const_int(r->buf->shape[d], &e) || e != r->extent[d])
            return 0;
    }
    return 1;
}

/* wgmma with A in registers, as FlashAttention-3 keeps P: the layout
 * pass gave the 16-bit fragment A the register layout "mma.a" (the
 * accumulator layout of an m64nK wgmma over the gemm's warpgroup rows,
 * TILEC_TARGET_MMA_A_REGS), written only by this whole copy from a
 * register accumulator R and read only by the later wgmma of the same
 * list.  The copy packs R's registers, converted, into that wgmma's
 * A-operand registers tc_pa<A>[mt][K/16][4]: the registers of columns
 * 16kk..16kk+15 are, pair by pair, the A fragment of k-step kk, and no
 * value moves between threads.  1 printed, 0 not such a copy, -1 error. */
static int rs_copy(kit_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *R = s->u.copy.src.buf, *A = s->u.copy.dst.buf;
    if (tilec_simt_per_thread(c) || !A->layout || A->layout->kind != TILEC_LAYOUT_REGS || !A->layout->name ||
        strcmp(A->layout->name, "mma.a") != 0)
        return 0;
    const tilec_ir_stmt_t *gm = NULL;
    for (const tilec_ir_stmt_t *t = s->next; t && !gm; t = t->next)
        if (t->kind == TILEC_ST_GEMM && t->u.gemm.a == A)
            gm = t;
    int hoisted = -1;
    for (int i = 0; i < g->nhoist; i++)
        if (g->hoist[i] == A)
            hoisted = i;
    if (!gm && hoisted >= 0)
        gm = first_gemm_of(g->body, A, 0);
    tilec_simt_mma_plan_t p, rp;
    int rc = gm && g->wgmma && g->nrs < KIT_MAX_RS && (A->dtype == TILEC_FLOAT16 || A->dtype == TILEC_BFLOAT16) &&
                     R->dtype == TILEC_FLOAT32 && R->layout && R->layout->kind == TILEC_LAYOUT_REGS &&
                     whole(&s->u.copy.src) && whole(&s->u.copy.dst) && !gm->u.gemm.trans_a && !gm->u.gemm.a_lead &&
                     gm->u.gemm.b->dtype == A->dtype &&
                     !other_uses(g->body, A, ws_orig_of(g, s), hoisted >= 0 ? NULL : ws_orig_of(g, gm), 0)
                 ? tilec_simt_mma_plan(c, g->desc, gm, &p)
                 : 0;
    if (rc > 0 && (!(p.e->flags & TILEC_TARGET_MMA_ASYNC) || p.gn != 1 || p.K % 16 || p.K > p.e->n ||
                   (p.e->n_step && p.K % p.e->n_step)))
        rc = 0;
    if (rc > 0) {
        /* R as the C of an m64nK wgmma on the same warpgroup rows */
        rp = p;
        rp.N = rp.WN = rp.in = p.K;
        rp.nt = 1;
        rp.rpt = (int)(rp.im * rp.in / p.e->threads);
        if (!tilec_simt_mma_regs_match(R, &rp))
            rc = 0;
    }
    if (rc <= 0) {
        if (rc == 0)
            tilec_simt_fail(c, "copy %s -> %s: '%s' is a register A operand (\"mma.a\") but the copy and its wgmma "
                            "are not the pair the layout pass requires", R->name, A->name, A->name);
        return -1;
    }
    const char *cv = A->dtype == TILEC_BFLOAT16 ? "tl_f2b" : "tl_f2h";
    int ks = (int)(p.K / 16);
    tilec_simt_emit(c, "/* copy %s -> %s: packed into wgmma A-operand registers (tc_pa%d) */", R->name, A->name, A->id);
    if (hoisted < 0)
        tilec_simt_emit(c, "tl_u32 tc_pa%d[%d][%d][4];", A->id, (int)p.mt, ks);
    for (int mi = 0; mi < (int)p.mt; mi++)
        for (int kk = 0; kk < ks; kk++)
            for (int q = 0; q < 4; q++) {
                int r = mi * rp.rpt + 4 * (2 * kk + (q >> 1)) + (q & 1) * 2;
                char r0[24], r1[24];
                snprintf(r0, sizeof r0, "%d", r);
                snprintf(r1, sizeof r1, "%d", r + 1);
                const char *x0 = tilec_simt_elem(c, R, r0);
                const char *x1 = tilec_simt_elem(c, R, r1);
                tilec_simt_emit(c, "tc_pa%d[%d][%d][%d] = (tl_u32)%s(%s) | ((tl_u32)%s(%s) << 16);", A->id, mi, kk, q, cv,
                                x0, cv, x1);
            }
    if (hoisted < 0)
        g->rs[g->nrs++] = A;
    return 1;
}

/* Re-emits text (lines) through the kit, at its indentation. */
static void emit_lines(tilec_simt_ctx_t *c, const char *text)
{
    while (text && *text) {
        size_t n = strcspn(text, "\n");
        size_t sp = 0;
        while (sp < n && text[sp] == ' ')
            sp++;
        if (n > sp)
            tilec_simt_emit(c, "%.*s", (int)(n - sp), text + sp);
        text += n + (text[n] == '\n');
    }
}

static void tma_expr(void *user, const tilec_ir_expr_t *e)
{
    kit_t *g = user;
    tilec_sdk_str_puts(g->tma_o, tilec_simt_expr(g->ctx, e));
}

/* barrier objects and copies on them: cuda_tma.c prints them (its code
 * names the thread tl_tid) */
static int tma_stmt(kit_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    tilec_sdk_str_t o = {0};
    cuda_tma_out_t t = {&o, 0, "tc_smem", tma_expr, g, g->k, g->info, g->warp_arrive, g->arrive_warps};
    g->ctx = c;
    g->tma_o = &o;
    int rc = cuda_tma_stmt(&t, s);
    if (rc > 0) {
        if (g->tid_base)
            tilec_simt_emit(c, "{ const int tl_tid = tc_tid - %d; (void)tl_tid;", g->tid_base);
        else
            tilec_simt_emit(c, "{ const int tl_tid = tc_tid; (void)tl_tid;");
        tilec_simt_indent(c, 1);
        emit_lines(c, o.s);
        tilec_simt_indent(c, -1);
        tilec_simt_emit(c, "}");
    } else if (rc < 0) {
        tilec_simt_fail(c, "copy_async into '%s': no tensor map for it", s->u.copy.dst.buf->name);
    }
    rc = o.oom ? (tilec_simt_fail(c, "out of memory"), -1) : rc;
    tilec_sdk_str_free(&o);
    return rc;
}

/* hint "mma_wait" (N) of the overlap pass: wait until N wgmma groups are
 * left, then fence the registers of the GEMMs left in flight (their
 * accumulators and register A operands) so that no access moves above it */
static int mma_wait_hint(kit_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    int64_t n;
    if (s->u.hint.nargs != 1 || !tilec_ir_is_const_int(s->u.hint.args[0], &n) || n < 0 || n > 7) {
        tilec_simt_fail(c, "hint mma_wait needs one count of 0..7");
        return -1;
    }
    tilec_simt_emit(c, "tl_wg_wait<%d>(); /* hint mma_wait */", (int)n);
    for (int i = 0; i < g->npend; i++)
        keep_acc(c, &g->pend_p[i], g->pend_c[i]);
    for (int i = 0; i < g->nhoist; i++) {
        const tilec_simt_mma_plan_t *p = &g->hoist_p[i];
        int id = g->hoist[i]->id, ks = (int)(p->K / 16);
        for (int mi = 0; mi < (int)p->mt; mi++)
            for (int kk = 0; kk < ks; kk++)
                tilec_simt_emit(c, "asm volatile(\"\" : \"+r\"(tc_pa%d[%d][%d][0]), \"+r\"(tc_pa%d[%d][%d][1]), "
                                "\"+r\"(tc_pa%d[%d][%d][2]), \"+r\"(tc_pa%d[%d][%d][3]) :: \"memory\");",
                                id, mi, kk, id, mi, kk, id, mi, kk, id, mi, kk);
    }
    return 1;
}

/* Before a loop holding a wgmma left in flight (lower.mma_nowait) whose A
 * is a register fragment ("mma.a"): its registers tc_pa<id>, which an
 * iteration packs and the next one's wgmma reads, are declared here. */
static int hoist_rs(kit_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *list, int depth)
{
    for (const tilec_ir_stmt_t *s = list; s && depth < 600; s = s->next) {
        if (s->kind == TILEC_ST_FOR && hoist_rs(g, c, s->u.loop.body, depth + 1) < 0)
            return -1;
        if (s->kind == TILEC_ST_IF &&
            (hoist_rs(g, c, s->u.cond.then, depth + 1) < 0 || hoist_rs(g, c, s->u.cond.els, depth + 1) < 0))
            return -1;
        const tilec_ir_buffer_t *A = s->kind == TILEC_ST_GEMM ? s->u.gemm.a : NULL;
        if (!A || !tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma_nowait") || !A->layout ||
            A->layout->kind != TILEC_LAYOUT_REGS || !A->layout->name || strcmp(A->layout->name, "mma.a") != 0)
            continue;
        int known = 0;
        for (int i = 0; i < g->nhoist; i++)
            known |= g->hoist[i] == A;
        if (known)
            continue;
        tilec_simt_mma_plan_t p;
        if (g->nhoist >= KIT_MAX_RS || g->nrs >= KIT_MAX_RS || tilec_simt_mma_plan(c, g->desc, s, &p) <= 0) {
            tilec_simt_fail(c, "gemm %s: no register A operand plan", A->name);
            return -1;
        }
        tilec_simt_emit(c, "tl_u32 tc_pa%d[%d][%d][4]; /* %s: packed in one iteration, read in the next */", A->id,
                        (int)p.mt, (int)(p.K / 16), A->name);
        g->hoist_p[g->nhoist] = p;
        g->hoist[g->nhoist++] = A;
        g->rs[g->nrs++] = A;
    }
    return 0;
}

/* hint "wg_turn" (mode, W) of the pingpong pass: named barriers 2 .. 2 + W - 1
 * (0 is __syncthreads', 1 the producer warpgroup's), barrier 2 + w
 * warpgroup w's turn: mode 0 waits for it, 1 passes the turn to the next
 * warpgroup, 2 (before the loop) is the last warpgroup's first pass, 3
 * (after it) warpgroup 0's wait for the last pass.  Each barrier counts one
 * warpgroup that waits and one that passes (2 x 128 threads). */
static int wg_turn_hint(kit_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    int64_t mode = -1, nwg = 0;
    if (s->u.hint.nargs != 2 || !tilec_ir_is_const_int(s->u.hint.args[0], &mode) ||
        !tilec_ir_is_const_int(s->u.hint.args[1], &nwg) || mode < 0 || mode > 3 || nwg < 2 || nwg > 8 ||
        (mode < 2) != (g->consumers != 0) || (g->consumers && g->consumers != nwg * 128)) {
        tilec_simt_fail(c, "hint \"wg_turn\" needs (mode 0-3, warpgroups), modes 0 and 1 in the consumers of a "
                           "warpspec loop of that many warpgroups");
        return -1;
    }
    static const char *const what[4] = {"wait for this warpgroup's turn", "pass the turn on",
                                        "the last warpgroup lets warpgroup 0 start", "warpgroup 0 takes the last turn back"};
    tilec_simt_emit(c, "/* wg_turn: %s */", what[mode]);
    if (mode == 0)
        tilec_simt_emit(c, "asm volatile(\"bar.sync %%0, 256;\" :: \"r\"(2 + tc_tid / 128) : \"memory\");");
    else if (mode == 1)
        tilec_simt_emit(c, "asm volatile(\"bar.arrive %%0, 256;\" :: \"r\"(2 + (tc_tid / 128 + 1) %% %d) : \"memory\");",
                        (int)nwg);
    else if (mode == 2)
        tilec_simt_emit(c, "if (tc_tid / 128 == %d) asm volatile(\"bar.arrive 2, 256;\" ::: \"memory\");", (int)nwg - 1);
    else
        tilec_simt_emit(c, "if (tc_tid < 128) asm volatile(\"bar.sync 2, 256;\" ::: \"memory\");");
    return 1;
}

/* A clear that the wgmma after it does (cuda_zero.c): left out when that
 * gemm prints as wgmma into register accumulators over all the threads
 * that print it (the conditions of gemm_hook's unguarded wgmma). */
static int zero_clear(kit_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_stmt_t *o = ws_orig_of(g, s);
    const cuda_zfold_t *f = NULL;
    for (int i = 0; i < g->nzf && !f; i++)
        f = g->zf[i].clear == o ? &g->zf[i] : NULL;
    tilec_simt_mma_plan_t p;
    if (!f || g->zf_on || tilec_simt_mma_plan(c, g->desc, f->gemm, &p) <= 0 || !(p.e->flags & TILEC_TARGET_MMA_ASYNC) ||
        !p.regs)
        return 0;
    const int *kt = g->k->threads;
    if (p.gm * p.gn * p.e->threads != (g->consumers ? g->consumers : (int64_t)kt[0] * kt[1] * kt[2]))
        return 0;
    tilec_simt_emit(c, "/* clear of %s: the first wgmma of the gemm after it scales it by 0 */", f->gemm->u.gemm.c->name);
    g->zf_on = f;
    return 1;
}

static int kit_stmt(void *user, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    if ((s->kind == TILEC_ST_FILL || s->kind == TILEC_ST_FOR) && ((kit_t *)user)->nzf) {
        int rc = zero_clear(user, c, s);
        if (rc)
            return rc;
    }
    if (s->kind == TILEC_ST_HINT && s->u.hint.name && strcmp(s->u.hint.name, "mma_wait") == 0)
        return mma_wait_hint(user, c, s);
    if (s->kind == TILEC_ST_HINT && s->u.hint.name && strcmp(s->u.hint.name, "wg_turn") == 0)
        return wg_turn_hint(user, c, s);
    if (!tilec_simt_per_thread(c)) {
        int rc = tma_stmt(user, c, s);
        if (rc)
            return rc;
    }
    if (s->kind == TILEC_ST_GEMM)
        return gemm_hook(user, c, s);
    if (s->kind == TILEC_ST_COPY)
        return rs_copy(user, c, s);
    return 0;
}

/* does statement list s hold statement x (at any depth) */
static int holds(const tilec_ir_stmt_t *s, const tilec_ir_stmt_t *x, int depth)
{
    for (; s && depth < 600; s = s->next) {
        if (s == x)
            return 1;
        if ((s->kind == TILEC_ST_FOR && holds(s->u.loop.body, x, depth + 1)) ||
            (s->kind == TILEC_ST_IF && (holds(s->u.cond.then, x, depth + 1) || holds(s->u.cond.els, x, depth + 1))))
            return 1;
    }
    return 0;
}

/* After the loop of a deferred wgmma: its last group completes. */
static int kit_after(void *user, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    kit_t *g = user;
    if (!g->deferred || s->kind != TILEC_ST_FOR || !holds(s->u.loop.body, g->deferred, 0))
        return 0;
    tilec_simt_emit(c, "tl_wg_wait<0>(); /* the deferred wgmma of %s */", g->deferred_c->name);
    keep_acc(c, &g->deferred_p, g->deferred_c);
    g->deferred = NULL;
    return 0;
}

/* ---- warp specialization ------------------------------------------------------
 * A loop of the warpspec pass (lower.warpspec = (T, P)) runs twice: the
 * producer warpgroup's first warp, threads [T, T + 32), runs it with only
 * the statements marked lower.producer (its thread T issues the arrivals
 * and the bulk copies; the warpgroup's other warps skip it and wait for
 * it at a named barrier), the consumers [0, T) without them; the two then go
 * on together.  With 384 threads or more, setmaxnreg moves registers from
 * the producer (40 each) to the consumers for the loop, and back after
 * it (the consumers give theirs back first, so the producer's increase
 * never waits on a warp that waits on it).  The consumers' releases of
 * the "empty" barriers are one arrival per warp, each after that warp's
 * own wgmma wait. */

#define WS_PRODUCER_REGS 40

/* the plain arrivals in the consumers' statements of warpspec loops */
static void ws_scan_arrivals(kit_t *g, const tilec_ir_stmt_t *s, int depth)
{
    for (; s && depth < 600; s = s->next) {
        if (s->kind == TILEC_ST_MBAR_ARRIVE && !s->u.mbar.tx && s->u.mbar.bar && s->u.mbar.bar->id < 32)
            g->warp_arrive |= 1u << s->u.mbar.bar->id;
        if (s->kind == TILEC_ST_IF) {
            ws_scan_arrivals(g, s->u.cond.then, depth + 1);
            ws_scan_arrivals(g, s->u.cond.els, depth + 1);
        }
        if (s->kind == TILEC_ST_FOR)
            ws_scan_arrivals(g, s->u.loop.body, depth + 1);
    }
}

static const tilec_ir_attr_t *ws_attr(const tilec_ir_stmt_t *s)
{
    const tilec_ir_attr_t *a =
        s->kind == TILEC_ST_FOR ? tilec_ir_attr_get(s->nattrs, s->attrs, "lower.warpspec") : NULL;
    return a && a->kind == TILEC_ATTR_TUPLE && a->n == 2 && a->tuple[0] > 0 && a->tuple[1] > 0 ? a : NULL;
}

static void ws_scan(kit_t *g, const tilec_ir_kernel_t *k)
{
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next) {
        const tilec_ir_attr_t *a = ws_attr(s);
        if (!a)
            continue;
        g->ws = 1;
        g->arrive_warps = (int)(a->tuple[0] / 32);
        for (const tilec_ir_stmt_t *t = s->u.loop.body; t; t = t->next)
            if (!tilec_ir_attr_get(t->nattrs, t->attrs, "lower.producer")) {
                tilec_ir_stmt_t one = *t;
                one.next = NULL;
                ws_scan_arrivals(g, &one, 0);
            }
    }
}

/* the statements of body that role (1 producer, 0 consumers) runs, as a
 * new list in cells (body's length) */
static tilec_ir_stmt_t *ws_role(const tilec_ir_stmt_t *body, int producer, tilec_ir_stmt_t *cells,
                                const tilec_ir_stmt_t **orig)
{
    tilec_ir_stmt_t *head = NULL, **tail = &head;
    int n = 0;
    for (const tilec_ir_stmt_t *t = body; t; t = t->next)
        if ((tilec_ir_attr_get(t->nattrs, t->attrs, "lower.producer") != NULL) == producer) {
            orig[n] = t;
            cells[n] = *t;
            cells[n].next = NULL;
            *tail = &cells[n];
            tail = &cells[n].next;
            n++;
        }
    return head;
}

static int kit_loop(void *user, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    kit_t *g = user;
    if (hoist_rs(g, c, s->u.loop.body, 0) < 0)
        return -1;
    const tilec_ir_attr_t *a = ws_attr(s);
    if (!a)
        return 0;
    int T = (int)a->tuple[0], P = (int)a->tuple[1], n = 0;
    int nt = g->k->threads[0] * g->k->threads[1] * g->k->threads[2];
    if (T + P != nt || T % 128 || P % 128) {
        tilec_simt_fail(c, "lower.warpspec = (%d, %d) does not split the block's %d threads into warpgroups", T, P, nt);
        return -1;
    }
    for (const tilec_ir_stmt_t *t = s->u.loop.body; t; t = t->next)
        n++;
    tilec_ir_stmt_t *cells = calloc((size_t)(2 * n + 1), sizeof *cells);
    const tilec_ir_stmt_t **orig = calloc((size_t)(2 * n + 1), sizeof *orig);
    if (!cells || !orig) {
        free(cells);
        free(orig);
        tilec_simt_fail(c, "out of memory");
        return -1;
    }
    tilec_ir_stmt_t lp = *s, lc = *s;
    lp.next = lc.next = NULL;
    lp.u.loop.body = ws_role(s->u.loop.body, 1, cells, orig);
    lc.u.loop.body = ws_role(s->u.loop.body, 0, cells + n, orig + n);
    g->ws_cells = cells;
    g->ws_orig = orig;
    g->ws_n = 2 * n;
    /* registers: the launch's share (__launch_bounds__), the producer's, the consumers' */
    int r0 = (65536 / nt) & ~7, hi = ((65536 - P * WS_PRODUCER_REGS) / T) & ~7;
    if (r0 > 248)
        r0 = 248;
    if (hi > 240)
        hi = 240;
    int regs = r0 < 232 && hi > r0;
    tilec_simt_emit(c, "if (tc_tid >= %d) { /* warp specialization: the producer warpgroup loads the ring */", T);
    tilec_simt_indent(c, 1);
    if (regs)
        tilec_simt_emit(c, "tl_reg_dec<%d>();", WS_PRODUCER_REGS);
    /* one warp runs the producer's loop (its thread T issues, the warp
     * waits for the releases); the other warps of the warpgroup go straight
     * to the named barrier after it instead of spinning on the releases */
    tilec_simt_emit(c, "if (tc_tid < %d) {", T + 32);
    tilec_simt_indent(c, 1);
    g->tid_base = T;
    tilec_simt_gen_loop(c, &lp);
    g->tid_base = 0;
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    /* the warpgroup meets again (named barrier 1, its 128 threads) before
     * its next setmaxnreg, as the PTX ISA asks between two of them */
    tilec_simt_emit(c, "asm volatile(\"bar.sync 1, %d;\" ::: \"memory\");", P);
    if (regs)
        tilec_simt_emit(c, "tl_reg_inc<%d>();", r0);
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "} else { /* the consumers: wgmma on what lands */");
    tilec_simt_indent(c, 1);
    if (regs)
        tilec_simt_emit(c, "tl_reg_inc<%d>();", hi);
    g->consumers = T;
    tilec_simt_gen_loop(c, &lc);
    g->consumers = 0;
    if (g->deferred) {
        tilec_simt_emit(c, "tl_wg_wait<0>(); /* the deferred wgmma of %s */", g->deferred_c->name);
        keep_acc(c, &g->deferred_p, g->deferred_c);
        g->deferred = NULL;
    }
    if (regs)
        tilec_simt_emit(c, "tl_reg_dec<%d>();", r0);
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    g->ws_cells = NULL;
    g->ws_orig = NULL;
    g->ws_n = 0;
    free(cells);
    free(orig);
    return 1;
}

static const char kit_prelude_ws[] =
    "template <int N> TL_INLINE void tl_reg_dec(void) { asm volatile(\"setmaxnreg.dec.sync.aligned.u32 %0;\" :: \"n\"(N)); }\n"
    "template <int N> TL_INLINE void tl_reg_inc(void) { asm volatile(\"setmaxnreg.inc.sync.aligned.u32 %0;\" :: \"n\"(N)); }\n";

/* float exp2 on the special function unit alone: CUDA's exp2f keeps
 * subnormal results by a range test and a rescale on each side of
 * MUFU.EX2 (four instructions; flash attention's softmax has 64 a thread
 * per key block), ex2.approx.ftz is the one instruction: the same
 * approximation (2 ulp), NaN and infinities kept, results below 2^-126
 * flushed to zero.  T.exp2 takes it unless TILEC_CUDA_FAST_EXP2=0. */
static const char kit_prelude_ex2[] =
    "TL_INLINE float tl_ex2f(float x) { float r; asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x)); return r; }\n";

static const char *kit_math_name(void *user, const char *base, int dbl)
{
    const kit_t *g = user;
    return g->fast_exp2 && !dbl && strcmp(base, "exp2") == 0 ? "tl_ex2f" : NULL;
}

static int kit_prelude_hook(void *user, tilec_simt_ctx_t *c)
{
    kit_t *g = user;
    tilec_simt_emit(c, "/* generated by tilec's CUDA backend */");
    tilec_simt_emit(c, "%s", kit_prelude);
    if (g->fast_exp2)
        tilec_simt_emit(c, "%s", kit_prelude_ex2);
    if (g->wgmma)
        tilec_simt_emit(c, "%s", kit_prelude_wgmma);
    if (g->ws)
        tilec_simt_emit(c, "%s", kit_prelude_ws);
    tilec_sdk_str_t o = {0};
    cuda_tma_prelude(&o, g->k);
    if (o.s)
        tilec_simt_emit(c, "%s", o.s);
    tilec_sdk_str_free(&o);
    return 0;
}

/* does the kernel have a gemm on an asynchronous (wgmma) instruction */
static int any_wgmma(const tilec_ir_stmt_t *s, const tilec_target_desc_t *t, int depth)
{
    for (; s && depth < 600; s = s->next) {
        const tilec_ir_attr_t *a = s->kind == TILEC_ST_GEMM ? tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma") : NULL;
        for (int i = 0; a && a->kind == TILEC_ATTR_STRING && i < t->nmma; i++)
            if (t->mma[i].name && strcmp(t->mma[i].name, a->s) == 0 && (t->mma[i].flags & TILEC_TARGET_MMA_ASYNC))
                return 1;
        if ((s->kind == TILEC_ST_FOR && any_wgmma(s->u.loop.body, t, depth + 1)) ||
            (s->kind == TILEC_ST_IF && (any_wgmma(s->u.cond.then, t, depth + 1) || any_wgmma(s->u.cond.els, t, depth + 1))))
            return 1;
    }
    return 0;
}

static void kit_dialect(kit_t *g, int sm, tilec_simt_dialect_t *d)
{
    tilec_simt_dialect_cuda_family(d);
    d->name = "cuda";
    /* 16-bit patterns, converted by PTX cvt (float16) and bit arithmetic
     * (bfloat16), both rounding to nearest even */
    d->f16 = (tilec_simt_half_t){TILEC_SIMT_HALF_NATIVE, "tl_u16", NULL, NULL, "tl_h2f", "tl_f2h"};
    d->bf16 = (tilec_simt_half_t){TILEC_SIMT_HALF_NATIVE, "tl_u16", NULL, NULL, "tl_b2f", "tl_f2b"};
    d->kernel_name = "tilec_kernel";
    d->sym_type = "int"; /* the launcher passes ints (cuda_plugin.c) */
    if (g->wgmma)
        d->barrier = "tl_fence_proxy(); __syncthreads();";
    if (sm < 60)
        d->atomic[TILEC_FLOAT64][0] = NULL; /* a CAS loop */
    d->native_fminmax = 1; /* FMNMX, not FSETP + FSEL */
    d->math_name = kit_math_name;
    d->user = g;
    d->stmt_hook = kit_stmt;
    d->prelude_hook = kit_prelude_hook;
    /* one dynamic array: more than 48 KiB with the launcher's opt-in;
     * 1024-byte aligned for the swizzled operands of wgmma */
    d->shared_dynamic_decl = "extern __shared__ __align__(1024) unsigned char $n[];";
    d->vec_width = 16;
    d->vec_load = "*(const tl_vec<$t, $n> *)($p)";
    d->vec_store = "*(tl_vec<$t, $n> *)($p) = $v;";
    d->subgroup_size = 32;
    /* the lanes that run it: a reduction's last warp may be partly idle,
     * a register's guard may leave lanes out (the xor partners of a row
     * are always active together); a full mask hung those */
    d->shfl_xor = "__shfl_xor_sync(__activemask(), $v, $m, $w)";
    if (sm >= 80) {
        d->async_copy = "tl_cp_async<$n>($d, $s);";
        d->async_copy_zfill = "tl_cp_async_zf<$n>($d, $s, $b, $c);";
        d->async_copy_zfill_off = "tl_cp_async_zo<$n>($d, $b, $o, $c);";
        d->async_commit = "tl_cp_commit();";
        d->async_wait = "tl_cp_wait<$n>();";
    }
    d->stmt_after = kit_after;
    d->loop_hook = kit_loop;
}

int cuda_kit_codegen(const tilec_ir_module_t *m, const char *arch, tilec_sdk_str_t *out, cuda_kinfo_t *info,
                     char *err, size_t errlen)
{
    kit_t g;
    memset(&g, 0, sizeof g);
    memset(info, 0, sizeof *info);
    g.desc = cuda_target_desc(arch);
    g.info = info;
    int sm = cuda_arch_sm(arch);
    if (!g.desc || sm < 0 || !m || !m->kernel) {
        snprintf(err, errlen, "no target description for '%s'", arch ? arch : "");
        return -1;
    }
    const tilec_ir_kernel_t *k = m->kernel;
    g.wgmma = any_wgmma(k->body, g.desc, 0);
    g.body = k->body;
    g.k = k;
    ws_scan(&g, k);
    g.fast_exp2 = cuda_fast_exp2();
    if (g.wgmma && cuda_zero_init())
        g.nzf = cuda_zero_scan(k->body, g.zf);
    tilec_simt_dialect_t d;
    kit_dialect(&g, sm, &d);
    /* the mbarriers of copies on them go after the shared-memory plan */
    uint64_t end = 0;
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_layout_t *l = k->bufs[i]->layout;
        if (l && l->kind == TILEC_LAYOUT_SMEM && (uint64_t)(l->offset + l->size) > end)
            end = (uint64_t)(l->offset + l->size);
    }
    if (cuda_tma_plan(k, info, &end) != 0) {
        snprintf(err, errlen, "a copy on an mbarrier that the tensor copy engine cannot do (or more than %d tensor maps)",
                 CUDA_MAX_TMAPS);
        return -1;
    }
    tilec_sdk_str_t params = {0};
    int first = 1;
    cuda_tma_params(&params, info, &first);
    d.extra_params = params.s;
    d.pool_min = k->nmbars ? end : 0;
    tilec_simt_result_t res;
    memset(&res, 0, sizeof res);
    res.struct_size = sizeof res;
    int rc = tilec_simt_generate(m, &d, &res, err, errlen);
    tilec_sdk_str_free(&params);
    if (rc != 0)
        return -1;
    if (res.nthreads > 1024) {
        snprintf(err, errlen, "threads=%u per block: CUDA allows 1..1024", res.nthreads);
        tilec_simt_result_free(&res);
        return -1;
    }
    tilec_sdk_str_putn(out, res.source, res.source_len);
    info->smem_bytes = res.shared_bytes;
    for (int i = 0; i < 3; i++)
        info->threads[i] = res.threads[i];
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next) {
        const tilec_ir_attr_t *a =
            s->kind == TILEC_ST_FOR ? tilec_ir_attr_get(s->nattrs, s->attrs, "lower.persistent") : NULL;
        int64_t P;
        if (a && a->kind == TILEC_ATTR_TUPLE && a->n == 2 && k->ngrid == 1 && tilec_ir_is_const_int(k->grid[0], &P) &&
            P == a->tuple[1] && P > 0 && P <= 65535)
            info->persistent_blocks = (uint32_t)P;
    }
    cuda_cluster_dims(k, info->cluster);
    tilec_simt_result_free(&res);
    return out->oom ? (snprintf(err, errlen, "out of memory"), -1) : 0;
}
