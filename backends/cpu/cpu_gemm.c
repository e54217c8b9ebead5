/*
 * cpu_gemm.c — T.gemm on the CPU backend, BLIS-style.
 *
 * Two parts: cpu_gemm_prelude, the fixed C text of the micro-kernel (an
 * MR x NR tile of C in registers, GCC/Clang vector extensions, its shape
 * picked from the ISA the kernel is compiled for) and the macro-kernel
 * over one cache block; and the generator of each T.gemm statement: the
 * loops over K, N and M blocks sized from the host's caches, the packing
 * of A and B panels (converting 16-bit, 8-bit and integer operands and
 * transposing while packing), and the temporaries it needs in the block's
 * scratch area.  Kept apart from cpu_codegen.c because it is the one part
 * of the generated code whose speed is tuned against a BLAS.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_cg.h"
#include "tilec/cexpr.h"

const char cpu_gemm_prelude[] =
/* ---- GEMM, BLIS-style (the driver loops and the packing are generated at
 * each T.gemm, see cpu_codegen.c): C[M,N] += A[M,K] * B[K,N] in the compute
 * type.  The micro-kernel holds an MR x (NV vectors of VL) tile of C in
 * registers (GCC vector extensions, which gcc and clang lower to the
 * target's SIMD) and runs k inside.  Its shape is picked by the ISA the
 * kernel is compiled for: AVX-512 8 x 2 vectors of 64 bytes, AVX2+FMA
 * 6 x 2 of 32 bytes, NEON 8 x 2 of 16 bytes, otherwise 4 x 2 of 16 bytes
 * (plain C where the target has no SIMD).  A micro-panel of A is read as
 * a[r * rsa + k * csa] (packed: rsa 1, csa MR; row-major: rsa lda, csa 1),
 * one of B as b[k * ldb + c] (packed: ldb NR; row-major: ldb = N).  The
 * macro-kernel tc_mk_* walks the micro-tiles of an mc x nc x kc block;
 * edge tiles go through zero-padded copies of A rows / B columns (edge
 * buffers ea, eb) and a local C tile, so the fast kernel never reads or
 * writes past an operand. ---- */
"#if defined(__AVX512F__) || defined(__ARM_NEON)\n"
"#define TC_MR 8\n"
"#elif defined(__AVX2__) && defined(__FMA__)\n"
"#define TC_MR 6\n"
"#else\n"
"#define TC_MR 4\n"
"#endif\n"
"#define TC_NV 2\n"
"#define TC_NR(T) (TC_NV * (int64_t)(TC_VB / sizeof(T)))\n"
/* cache blocking from the host's cache sizes (TC_L1D, TC_L2, TC_L3, defined
 * by the generator): a kc x NR panel of B and an MR x kc panel of A fill
 * the L1, an mc x kc block of A half the L2, a kc x nc block of B half
 * the L3 (float sizes; clamped to sane ranges) */
"#define TC_KC_ ((int64_t)TC_L1D / ((TC_MR + TC_NV * (TC_VB / 4)) * 4) / 8 * 8)\n"
"#define TC_KC (TC_KC_ < 64 ? (int64_t)64 : TC_KC_ > 512 ? (int64_t)512 : TC_KC_)\n"
"#define TC_MC_ ((int64_t)TC_L2 / (2 * TC_KC * 4) / TC_MR * TC_MR)\n"
"#define TC_MC (TC_MC_ < 4 * TC_MR ? (int64_t)(4 * TC_MR) : TC_MC_)\n"
"#define TC_NC_ ((int64_t)TC_L3 / (2 * TC_KC * 4) / 64 * 64)\n"
"#define TC_NC (TC_NC_ < 256 ? (int64_t)256 : TC_NC_ > 8192 ? (int64_t)8192 : TC_NC_)\n"
"#define TC_MIN64(a, b) ((a) < (b) ? (a) : (b))\n"
/* bytes of GEMM temporaries for compute type T: packed A (MC x KC), packed
 * B (KC x NC), the two edge buffers; each dimension capped by the
 * operand's own size rounded up to the micro-tile */
"#define TC_RUP(x, r) (((x) + (r) - 1) / (r) * (r))\n"
"#define TC_GEMM_PACK_BYTES(T, M, N, K) (TC_ALIGN(TC_MIN64(TC_RUP((int64_t)(M), TC_MR), TC_RUP(TC_MC, TC_MR)) * TC_MIN64((int64_t)(K), TC_KC) * (int64_t)sizeof(T)) \\\n"
"  + TC_ALIGN(TC_MIN64((int64_t)(K), TC_KC) * TC_MIN64(TC_RUP((int64_t)(N), TC_NR(T)), TC_RUP(TC_NC, TC_NR(T))) * (int64_t)sizeof(T)) \\\n"
"  + TC_ALIGN(TC_MR * TC_MIN64((int64_t)(K), TC_KC) * (int64_t)sizeof(T)) + TC_ALIGN(TC_MIN64((int64_t)(K), TC_KC) * TC_NR(T) * (int64_t)sizeof(T)))\n"
/* the micro-kernel's k loop unrolled 4 times: one loop branch, counter
 * and pointer step per 4 k; at 64x128x64 tiles, 2048^3 float32 on
 * AVX-512 (Xeon, gcc 12), 7% faster than the plain loop, unrolled 2 or 8
 * times 3% and 1% */
"#if defined(__clang__)\n"
"#define TC_KUNROLL _Pragma(\"unroll 4\")\n"
"#else\n"
"#define TC_KUNROLL _Pragma(\"GCC unroll 4\")\n"
"#endif\n"
"#define TC_GEMM_MK(sfx, T) \\\n"
"typedef T tc_v_##sfx __attribute__((vector_size(TC_VB))); \\\n"
"typedef T tc_vu_##sfx __attribute__((vector_size(TC_VB), aligned(sizeof(T)), may_alias)); \\\n"
"enum { TC_VL_##sfx = TC_VB / sizeof(T), TC_NR_##sfx = TC_NV * (TC_VB / sizeof(T)) }; \\\n"
"TC_INLINE void tc_ukm_##sfx(const int mr, int64_t kc, const T *restrict a, int64_t rsa, int64_t csa, const T *restrict b, int64_t ldb, T *restrict c, int64_t ldc) { \\\n"
"  typedef tc_v_##sfx V; typedef tc_vu_##sfx VU; \\\n"
"  V acc[TC_MR][TC_NV]; \\\n"
"  TC_UNROLL for (int r = 0; r < TC_MR; ++r) \\\n"
"    TC_UNROLL for (int v = 0; v < TC_NV; ++v) { acc[r][v] = (V){0}; if (r < mr) acc[r][v] = *(const VU *)(c + r * ldc + v * TC_VL_##sfx); } \\\n"
"  TC_KUNROLL for (int64_t k = 0; k < kc; ++k) { \\\n"
"    V bv[TC_NV]; \\\n"
"    TC_UNROLL for (int v = 0; v < TC_NV; ++v) bv[v] = *(const VU *)(b + k * ldb + v * TC_VL_##sfx); \\\n"
"    TC_UNROLL for (int r = 0; r < TC_MR; ++r) { \\\n"
"      if (r >= mr) break; \\\n"
"      const V av = a[r * rsa + k * csa] - (V){0}; \\\n"
"      TC_UNROLL for (int v = 0; v < TC_NV; ++v) acc[r][v] += av * bv[v]; \\\n"
"    } \\\n"
"  } \\\n"
"  TC_UNROLL for (int r = 0; r < TC_MR; ++r) \\\n"
"    TC_UNROLL for (int v = 0; v < TC_NV; ++v) if (r < mr) *(VU *)(c + r * ldc + v * TC_VL_##sfx) = acc[r][v]; \\\n"
"} \\\n"
"static void tc_uk_##sfx(int64_t kc, const T *restrict a, int64_t rsa, int64_t csa, const T *restrict b, int64_t ldb, T *restrict c, int64_t ldc) { \\\n"
"  tc_ukm_##sfx(TC_MR, kc, a, rsa, csa, b, ldb, c, ldc); \\\n"
"} \\\n"
/* the last one or two rows of a block over two adjacent column tiles (B
 * micro-panels b and b + pbs, C columns c and c + NR): 2 x NV or 4 x NV
 * accumulators, where the 1 x NV or 2 x NV chains of tc_uke leave FMA
 * latency uncovered (32 or 128 rows at AVX2's MR = 6 end in 2) */
"TC_INLINE void tc_ukw_##sfx(const int mr, int64_t kc, const T *restrict a, int64_t rsa, int64_t csa, const T *restrict b, int64_t pbs, int64_t ldb, T *restrict c, int64_t ldc) { \\\n"
"  typedef tc_v_##sfx V; typedef tc_vu_##sfx VU; \\\n"
"  enum { W = 2 * TC_NV, VL = TC_VL_##sfx }; \\\n"
"  V acc[2][W]; \\\n"
"  TC_UNROLL for (int r = 0; r < 2; ++r) \\\n"
"    TC_UNROLL for (int v = 0; v < W; ++v) { acc[r][v] = (V){0}; if (r < mr) acc[r][v] = *(const VU *)(c + r * ldc + v * VL); } \\\n"
"  TC_KUNROLL for (int64_t k = 0; k < kc; ++k) { \\\n"
"    V bv[W]; \\\n"
"    TC_UNROLL for (int v = 0; v < W; ++v) bv[v] = *(const VU *)(b + (v / TC_NV) * pbs + k * ldb + (v % TC_NV) * VL); \\\n"
"    TC_UNROLL for (int r = 0; r < 2; ++r) { \\\n"
"      if (r >= mr) break; \\\n"
"      const V av = a[r * rsa + k * csa] - (V){0}; \\\n"
"      TC_UNROLL for (int v = 0; v < W; ++v) acc[r][v] += av * bv[v]; \\\n"
"    } \\\n"
"  } \\\n"
"  TC_UNROLL for (int r = 0; r < 2; ++r) \\\n"
"    TC_UNROLL for (int v = 0; v < W; ++v) if (r < mr) *(VU *)(c + r * ldc + v * VL) = acc[r][v]; \\\n"
"} \\\n"
/* the last mr < MR rows of a block: the kernel for that constant row count
 * (cases for mr >= MR fold away, so only MR - 1 variants are compiled) */
"static void tc_uke_##sfx(int64_t mr, int64_t kc, const T *restrict a, int64_t rsa, int64_t csa, const T *restrict b, int64_t ldb, T *restrict c, int64_t ldc) { \\\n"
"  switch (mr) { \\\n"
"  case 1: tc_ukm_##sfx(1, kc, a, rsa, csa, b, ldb, c, ldc); break; \\\n"
"  case 2: tc_ukm_##sfx(2, kc, a, rsa, csa, b, ldb, c, ldc); break; \\\n"
"  case 3: tc_ukm_##sfx(3, kc, a, rsa, csa, b, ldb, c, ldc); break; \\\n"
"  case 4: if (4 < TC_MR) tc_ukm_##sfx(4, kc, a, rsa, csa, b, ldb, c, ldc); break; \\\n"
"  case 5: if (5 < TC_MR) tc_ukm_##sfx(5, kc, a, rsa, csa, b, ldb, c, ldc); break; \\\n"
"  case 6: if (6 < TC_MR) tc_ukm_##sfx(6, kc, a, rsa, csa, b, ldb, c, ldc); break; \\\n"
"  default: if (7 < TC_MR) tc_ukm_##sfx(7, kc, a, rsa, csa, b, ldb, c, ldc); break; \\\n"
"  } \\\n"
"} \\\n"
"static void tc_mk_##sfx(int64_t mc, int64_t nc, int64_t kc, const T *restrict a, int64_t rsa, int64_t csa, int64_t pas, \\\n"
"                        const T *restrict b, int64_t ldb, int64_t pbs, T *restrict c, int64_t ldc, T *restrict ea, T *restrict eb) { \\\n"
"  enum { NR = TC_NR_##sfx }; \\\n"
"  const int64_t nfull = nc / NR, nrem = nc % NR; \\\n"
"  if (nrem) { /* the last columns, zero-padded to NR: eb[k][NR] */ \\\n"
"    const T *bs = b + nfull * pbs; \\\n"
"    for (int64_t k = 0; k < kc; ++k) \\\n"
"      for (int64_t j = 0; j < NR; ++j) eb[k * NR + j] = j < nrem ? bs[k * ldb + j] : (T)0; \\\n"
"  } \\\n"
"  TC_MK_LOOPS_(sfx, T) \\\n"
"}\n"
/* the loops over the block's micro-tiles: full tiles straight into C (the
 * last rows too, by a kernel of fewer rows); only a tile with columns past
 * the edge goes through a local C tile, with its A rows zero-padded (ea) */
"#define TC_MK_TILE_(sfx, T) \\\n"
"      const int64_t mr = TC_MIN64(TC_MR, mc - i), nr = TC_MIN64(NR, nc - jp * NR); \\\n"
"      const T *ap = a + (i / TC_MR) * pas; \\\n"
"      T *cp = c + i * ldc + jp * NR; \\\n"
"      if (nr == NR) { \\\n"
"        if (mr == TC_MR) tc_uk_##sfx(kc, ap, rsa, csa, b + jp * pbs, ldb, cp, ldc); \\\n"
"        else tc_uke_##sfx(mr, kc, ap, rsa, csa, b + jp * pbs, ldb, cp, ldc); \\\n"
"        continue; \\\n"
"      } \\\n"
"      int64_t r_s = rsa, c_s = csa; \\\n"
"      if (mr < TC_MR) { /* the last rows, zero-padded to MR: ea[k][MR] */ \\\n"
"        for (int64_t k = 0; k < kc; ++k) \\\n"
"          for (int64_t r = 0; r < TC_MR; ++r) ea[k * TC_MR + r] = r < mr ? ap[r * rsa + k * csa] : (T)0; \\\n"
"        ap = ea; r_s = 1; c_s = TC_MR; \\\n"
"      } \\\n"
"      T t[TC_MR * NR] __attribute__((aligned(64))); \\\n"
"      for (int64_t r = 0; r < TC_MR; ++r) \\\n"
"        for (int64_t j = 0; j < NR; ++j) t[r * NR + j] = r < mr && j < nr ? cp[r * ldc + j] : (T)0; \\\n"
"      tc_uk_##sfx(kc, ap, r_s, c_s, eb, NR, t, NR); \\\n"
"      for (int64_t r = 0; r < mr; ++r) \\\n"
"        for (int64_t j = 0; j < nr; ++j) cp[r * ldc + j] = t[r * NR + j];\n"
"#define TC_MK_LOOPS_(sfx, T) \\\n"
"  for (int64_t i = 0; i < mc; i += TC_MR) \\\n"
"    for (int64_t jp = 0; jp * NR < nc; ++jp) { \\\n"
"      if (mc - i <= 2 && mc - i < TC_MR && (jp + 2) * NR <= nc) { \\\n"
"        if (mc - i == 1) tc_ukw_##sfx(1, kc, a + (i / TC_MR) * pas, rsa, csa, b + jp * pbs, pbs, ldb, c + i * ldc + jp * NR, ldc); \\\n"
"        else tc_ukw_##sfx(2, kc, a + (i / TC_MR) * pas, rsa, csa, b + jp * pbs, pbs, ldb, c + i * ldc + jp * NR, ldc); \\\n"
"        ++jp; \\\n"
"        continue; \\\n"
"      } \\\n"
"      TC_MK_TILE_(sfx, T) \\\n"
"    }\n"
"TC_GEMM_MK(f32, float)\n"
"TC_GEMM_MK(f64, double)\n"
"TC_GEMM_MK(i32, int32_t)\n"
"TC_GEMM_MK(i64, int64_t)\n"
"TC_GEMM_MK(u32, uint32_t)\n"
"TC_GEMM_MK(u64, uint64_t)\n"
"\n";

/* dtype in which a GEMM with accumulator dtype c computes */
static tilec_dtype_t gemm_ct(tilec_dtype_t c)
{
    switch (c) {
    case TILEC_FLOAT16: case TILEC_BFLOAT16: case TILEC_FLOAT32:
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: return TILEC_FLOAT32;
    case TILEC_FLOAT64: return TILEC_FLOAT64;
    case TILEC_INT64: return TILEC_INT64;
    case TILEC_UINT8: case TILEC_UINT16: case TILEC_UINT32: return TILEC_UINT32;
    case TILEC_UINT64: return TILEC_UINT64;
    default: return TILEC_INT32;
    }
}

/* Matrix dimension i (0 rows, 1 columns) of a gemm operand: its last two. */
static const char *mdim(cg_t *g, const tilec_ir_buffer_t *b, int i) { return cg_dim(g, b, b->ndim - 2 + i); }

/* The operand's 2-D matrix as a pointer: the buffer, or (IR 1.1) the slice
 * its leading (stage) indices select. */
static const char *mbase(cg_t *g, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *lead)
{
    const char *off = "INT64_C(0)";
    for (int d = 0; lead && d < b->ndim - 2; d++) {
        const char *stride = "INT64_C(1)";
        for (int j = d + 1; j < b->ndim; j++)
            stride = cg_fmt(g, "%s * %s", stride, cg_dim(g, b, j));
        off = cg_fmt(g, "%s + (int64_t)(%s) * %s", off, cg_expr(g, lead[d]), stride);
    }
    return lead ? cg_fmt(g, "(b%d + (%s))", b->id, off) : cg_fmt(g, "b%d", b->id);
}

static int gemm_ok(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    if (!cg_buf_ok(g, A) || !cg_buf_ok(g, B) || !cg_buf_ok(g, C))
        return 0;
    if (A->ndim < 2 || B->ndim < 2 || C->ndim != 2 || (A->ndim > 2 && !s->u.gemm.a_lead) ||
        (B->ndim > 2 && !s->u.gemm.b_lead)) {
        cg_fail(g, "gemm operands must be 2-D buffers (or IR 1.1 stage slices with their leading indices)");
        return 0;
    }
    int64_t am, ak, bk, bn, cm, cn;
    int ta = s->u.gemm.trans_a != 0, tb = s->u.gemm.trans_b != 0;
    int a0 = A->ndim - 2, b0 = B->ndim - 2;
    if (tilec_ir_is_const_int(A->shape[a0 + ta], &am) && tilec_ir_is_const_int(A->shape[a0 + !ta], &ak) &&
        tilec_ir_is_const_int(B->shape[b0 + tb], &bk) && tilec_ir_is_const_int(B->shape[b0 + !tb], &bn) &&
        tilec_ir_is_const_int(C->shape[0], &cm) && tilec_ir_is_const_int(C->shape[1], &cn) &&
        (am != cm || bn != cn || ak != bk)) {
        cg_fail(g, "gemm shapes do not agree: A' %" PRId64 "x%" PRId64 ", B' %" PRId64
                   "x%" PRId64 ", C %" PRId64 "x%" PRId64,
                am, ak, bk, bn, cm, cn);
        return 0;
    }
    return 1;
}

static const char *gemm_sfx(tilec_dtype_t ct)
{
    return ct == TILEC_FLOAT32 ? "f32" : ct == TILEC_FLOAT64 ? "f64" : tilec_cexpr_isfx(ct);
}

/* Bytes of temporaries a GEMM needs, as a C expression (in terms of dims):
 * the pack and edge buffers, and C in the compute type when it is not. */
static const char *gemm_temp_bytes(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *C = s->u.gemm.c;
    tilec_dtype_t ct = gemm_ct(C->dtype);
    const char *T = cg_ct_type(ct);
    const char *r = cg_fmt(g, "TC_GEMM_PACK_BYTES(%s, %s, %s, %s)", T, cg_dim(g, C, 0), cg_dim(g, C, 1),
                        mdim(g, A, !s->u.gemm.trans_a));
    if (C->dtype != ct)
        r = cg_fmt(g, "%s + TC_ALIGN(%s * %s * (int64_t)sizeof(%s))", r, cg_dim(g, C, 0), cg_dim(g, C, 1), T);
    return r;
}

/* The BLIS loop nest around tc_mk_* (cpu_gemm_prelude): K in blocks of TC_KC,
 * N of TC_NC, M of TC_MC.  An operand that is already row-major in the
 * compute type is read in place (B only while its rows span at most a
 * page, past which the panel is packed to spare the TLB); otherwise its
 * block is packed into micro-panels (A: MR rows, k-major; B: NR columns),
 * converting and transposing on the way, in the loop order that reads the
 * source contiguously. */
void cpu_gemm_gen(cg_t *g, const tilec_ir_stmt_t *s)
{
    if (!gemm_ok(g, s))
        return;
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    int ta = s->u.gemm.trans_a != 0, tb = s->u.gemm.trans_b != 0;
    tilec_dtype_t ct = gemm_ct(C->dtype);
    const char *T = cg_ct_type(ct), *sfx = gemm_sfx(ct);
    int pack_a = ta || A->dtype != ct, conv_b = tb || B->dtype != ct;
    cg_line(g, "{ /* gemm%s%s%s */", ta ? " transpose_A" : "", tb ? " transpose_B" : "",
         s->u.gemm.clear_accum ? " clear_accum" : "");
    g->ind++;
    /* IR 1.1: A and B may be stage slices of a ring buffer */
    const char *abuf = mbase(g, A, s->u.gemm.a_lead), *bbuf = mbase(g, B, s->u.gemm.b_lead);
    cg_line(g, "const int64_t M = %s, N = %s, K = %s;", cg_dim(g, C, 0), cg_dim(g, C, 1), mdim(g, A, !ta));
    cg_line(g, "if (%s == M && %s == K && %s == K && %s == N) {", mdim(g, A, ta), mdim(g, A, !ta),
         mdim(g, B, tb), mdim(g, B, !tb));
    g->ind++;
    cg_line(g, "enum { MR = TC_MR, NR = TC_NR_%s };", sfx);
    cg_line(g, "const int64_t KC0 = TC_MIN64(K, TC_KC);");
    cg_line(g, "char *gt = tc_gtmp;");
    cg_line(g, "%s *restrict pa = (%s *)gt; gt += TC_ALIGN(TC_MIN64(TC_RUP(M, MR), TC_RUP(TC_MC, MR)) * KC0 * (int64_t)sizeof(%s));", T, T, T);
    cg_line(g, "%s *restrict pb = (%s *)gt; gt += TC_ALIGN(KC0 * TC_MIN64(TC_RUP(N, NR), TC_RUP(TC_NC, NR)) * (int64_t)sizeof(%s));", T, T, T);
    cg_line(g, "%s *restrict ea = (%s *)gt; gt += TC_ALIGN(MR * KC0 * (int64_t)sizeof(%s));", T, T, T);
    cg_line(g, "%s *restrict eb = (%s *)gt; gt += TC_ALIGN(KC0 * NR * (int64_t)sizeof(%s));", T, T, T);
    cg_line(g, "(void)pa; (void)pb;");
    if (C->dtype != ct) {
        cg_line(g, "%s *restrict gc = (%s *)gt;", T, T);
        if (s->u.gemm.clear_accum)
            cg_line(g, "memset(gc, 0, (size_t)(M * N) * sizeof(%s));", T);
        else
            cg_line(g, "for (int64_t i = 0; i < M * N; ++i) gc[i] = %s;",
                 cg_conv(g, cg_from_store(g, cg_fmt(g, "b%d[i]", C->id), C->dtype), C->dtype, ct));
    } else {
        cg_line(g, "%s *restrict gc = b%d;", T, C->id);
        if (s->u.gemm.clear_accum)
            cg_line(g, "memset(gc, 0, (size_t)(M * N) * sizeof(%s));", T);
    }
    cg_line(g, "const int pack_b = %s;", conv_b ? "1" : cg_fmt(g, "N * (int64_t)sizeof(%s) > 4096", T));
    cg_line(g, "for (int64_t pc = 0; pc < K; pc += TC_KC) {");
    g->ind++;
    cg_line(g, "const int64_t kc = TC_MIN64(TC_KC, K - pc);");
    cg_line(g, "for (int64_t jc = 0; jc < N; jc += TC_NC) {");
    g->ind++;
    cg_line(g, "const int64_t nc = TC_MIN64(TC_NC, N - jc);");
    if (conv_b)
        cg_line(g, "const %s *bp = pb; int64_t ldb = NR, pbs = kc * NR;", T);
    else
        cg_line(g, "const %s *bp = %s + pc * N + jc; int64_t ldb = N, pbs = NR;", T, bbuf);
    cg_line(g, "if (pack_b) {");
    g->ind++;
    cg_line(g, "bp = pb; ldb = NR; pbs = kc * NR;");
    cg_line(g, "for (int64_t jp = 0; jp * NR < nc; ++jp) {");
    g->ind++;
    cg_line(g, "const int64_t nr = TC_MIN64(NR, nc - jp * NR), j0 = jc + jp * NR;");
    cg_line(g, "%s *restrict d = pb + jp * kc * NR;", T);
    /* B(k, j): row-major b[k * N + j], transposed b[j * K + k] */
    const char *bv = cg_from_store(g, cg_fmt(g, "%s[%s]", bbuf, tb ? "(j0 + c) * K + pc + k" : "(pc + k) * N + j0 + c"), B->dtype);
    const char *bcv = cg_conv(g, bv, B->dtype, ct);
    if (tb) {
        cg_line(g, "for (int64_t c = 0; c < nr; ++c)");
        cg_line(g, "  for (int64_t k = 0; k < kc; ++k) d[k * NR + c] = %s;", bcv);
    } else {
        cg_line(g, "for (int64_t k = 0; k < kc; ++k)");
        cg_line(g, "  TC_IVDEP for (int64_t c = 0; c < nr; ++c) d[k * NR + c] = %s;", bcv);
    }
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "for (int64_t ic = 0; ic < M; ic += TC_MC) {");
    g->ind++;
    cg_line(g, "const int64_t mc = TC_MIN64(TC_MC, M - ic);");
    if (pack_a) {
        cg_line(g, "for (int64_t ip = 0; ip * MR < mc; ++ip) {");
        g->ind++;
        cg_line(g, "const int64_t mr = TC_MIN64(MR, mc - ip * MR), i0 = ic + ip * MR;");
        cg_line(g, "%s *restrict d = pa + ip * kc * MR;", T);
        const char *av = cg_from_store(g, cg_fmt(g, "%s[%s]", abuf, ta ? "(pc + k) * M + i0 + r" : "(i0 + r) * K + pc + k"), A->dtype);
        const char *acv = cg_conv(g, av, A->dtype, ct);
        if (ta) {
            cg_line(g, "for (int64_t k = 0; k < kc; ++k)");
            cg_line(g, "  TC_IVDEP for (int64_t r = 0; r < mr; ++r) d[k * MR + r] = %s;", acv);
        } else {
            cg_line(g, "for (int64_t r = 0; r < mr; ++r)");
            cg_line(g, "  for (int64_t k = 0; k < kc; ++k) d[k * MR + r] = %s;", acv);
        }
        g->ind--;
        cg_line(g, "}");
        cg_line(g, "tc_mk_%s(mc, nc, kc, pa, 1, MR, kc * MR, bp, ldb, pbs, gc + ic * N + jc, N, ea, eb);", sfx);
    } else {
        /* in a block group, A may be read in place (g->gemm_a, row stride g->gemm_lda) */
        const char *ap = g->gemm_a ? g->gemm_a : abuf, *lda = g->gemm_a ? g->gemm_lda : "K";
        cg_line(g, "tc_mk_%s(mc, nc, kc, %s + ic * %s + pc, %s, 1, MR * %s, bp, ldb, pbs, gc + ic * N + jc, N, ea, eb);",
             sfx, ap, lda, lda, lda);
    }
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    if (C->dtype != ct)
        cg_line(g, "for (int64_t i = 0; i < M * N; ++i) b%d[i] = %s;", C->id,
             cg_to_store(g, "gc[i]", ct, C->dtype));
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
}

/* ---- host cache sizes ------------------------------------------------------------ */

/* Size in bytes of cpu0's cache of the given level ("Data"/"Unified" for
 * level 1 means the data cache), from sysfs, else sysconf, else 0. */
static long cache_bytes(int level)
{
    for (int i = 0; i < 16; i++) {
        char path[96], buf[64];
        long lv = -1, size = -1;
        int data = 0;
        static const char *const what[3] = {"level", "type", "size"};
        for (int w = 0; w < 3; w++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", i, what[w]);
            FILE *f = fopen(path, "r");
            if (!f)
                break;
            if (!fgets(buf, sizeof buf, f))
                buf[0] = '\0';
            fclose(f);
            if (w == 0)
                lv = strtol(buf, NULL, 10);
            else if (w == 1)
                data = strncmp(buf, "Data", 4) == 0 || strncmp(buf, "Unified", 7) == 0;
            else {
                char *end;
                size = strtol(buf, &end, 10);
                if (*end == 'K')
                    size *= 1024;
                else if (*end == 'M')
                    size *= 1024 * 1024;
            }
        }
        if (lv < 0 && i > 0)
            break;
        if (lv == level && data && size > 0)
            return size;
    }
    long n = -1;
#ifdef _SC_LEVEL1_DCACHE_SIZE
    n = sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE : level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE);
#endif
    return n > 0 ? n : 0;
}

long cpu_gemm_l2_bytes(void)
{
    long l2 = cache_bytes(2);
    return l2 >= 65536 ? l2 : 1048576L;
}

/* The cache sizes the GEMM blocking is computed from (cpu_gemm_prelude), as
 * #defines: part of the generated text, so of the kernel-cache key. */
void cpu_gemm_cache_sizes(cg_t *g)
{
    long l1 = cache_bytes(1), l2 = cache_bytes(2), l3 = cache_bytes(3);
    cg_line(g, "#define TC_L1D %ld", l1 >= 4096 ? l1 : 32768L);
    cg_line(g, "#define TC_L2 %ld", l2 >= 65536 ? l2 : 1048576L);
    /* -DTC_L3=... among the extra flags wins (tests shrink it) */
    cg_line(g, "#ifndef TC_L3");
    cg_line(g, "#define TC_L3 %ld", l3 >= l2 && l3 > 0 ? l3 : l2 >= 65536 ? 4 * l2 : 8388608L);
    cg_line(g, "#endif");
}

void cpu_gemm_sizes(cg_t *g, const tilec_ir_stmt_t *s, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return;
    for (; s; s = s->next) {
        switch (s->kind) {
        case TILEC_ST_FOR: cpu_gemm_sizes(g, s->u.loop.body, depth + 1); break;
        case TILEC_ST_IF:
            cpu_gemm_sizes(g, s->u.cond.then, depth + 1);
            cpu_gemm_sizes(g, s->u.cond.els, depth + 1);
            break;
        case TILEC_ST_GEMM:
            if (gemm_ok(g, s))
                cg_line(g, "{ const int64_t q = %s; if (q > tc_g) tc_g = q; }", gemm_temp_bytes(g, s));
            break;
        default: break;
        }
    }
}
