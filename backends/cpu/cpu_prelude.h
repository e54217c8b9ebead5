/*
 * cpu_prelude.h — the fixed C text that opens every generated CPU kernel.
 *
 * Kept as a string so the generated translation unit is self-contained
 * (it includes only the C standard headers).  It provides: 16-bit float
 * conversions (round to nearest even, the same results as the SDK's
 * tilec_f32_to_f16 & co., branch-free so they vectorize), integer division
 * helpers with Python floor semantics that never trap (x/0 gives 0),
 * atomics on every element type
 * (compare-and-swap loops for floats), and the GEMM micro- and
 * macro-kernels (the cache-blocking constants TC_KC/TC_MC/TC_NC are
 * defined by the generator before this text).  Included only by cpu_codegen.c.
 */
#ifndef TILEC_CPU_PRELUDE_H
#define TILEC_CPU_PRELUDE_H

static const char cpu_prelude[] =
"#define _POSIX_C_SOURCE 200809L\n"
"#include <stdint.h>\n"
"#include <stddef.h>\n"
"#include <string.h>\n"
"#include <math.h>\n"
"#include <stdio.h>\n"
"#if defined(__clang__)\n"
"#define TC_IVDEP _Pragma(\"clang loop vectorize(assume_safety)\")\n"
"#elif defined(__GNUC__)\n"
"#define TC_IVDEP _Pragma(\"GCC ivdep\")\n"
"#else\n"
"#define TC_IVDEP\n"
"#endif\n"
"#define TC_INLINE static inline __attribute__((always_inline, unused))\n"
"#define TC_ALIGN(x) (((x) + 63) & ~(int64_t)63)\n"
"#define TC_EXPORT __attribute__((visibility(\"default\")))\n"
/* ---- 16-bit floats ---- */
/* Branch-free, so loops over 16-bit data vectorize.  h2f: the half's bits
 * shifted into float position are the value times 2^-112 (subnormals
 * included), so one exact multiply finishes the job; inf/NaN are patched.
 * f2h: the normal, subnormal (rounded by adding 0.5, whose ulp is the
 * half's subnormal step), overflow and NaN results are all computed and
 * the right one selected. */
"TC_INLINE float tc_u2f(uint32_t x) { float f; memcpy(&f, &x, 4); return f; }\n"
"TC_INLINE uint32_t tc_f2u(float f) { uint32_t x; memcpy(&x, &f, 4); return x; }\n"
"TC_INLINE float tc_h2f(uint16_t h) {\n"
"  uint32_t em = (uint32_t)h & 0x7fffu;\n"
"  uint32_t r = tc_f2u(tc_u2f(em << 13) * 0x1p112f);\n"
"  r = em >= 0x7c00u ? (0x7f800000u | (em << 13)) : r;\n"
"  return tc_u2f(r | ((uint32_t)(h & 0x8000u) << 16));\n"
"}\n"
"TC_INLINE uint16_t tc_f2h(float f) {\n"
"  uint32_t x = tc_f2u(f), s = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;\n"
"  uint32_t n = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;\n"
"  uint32_t sub = tc_f2u(tc_u2f(a) + 0.5f) - 0x3f000000u;\n"
"  uint32_t r = a < 0x38800000u ? sub : n;\n"
"  r = a >= 0x477ff000u ? 0x7c00u : r;\n"
"  r = a > 0x7f800000u ? (0x7e00u | ((a >> 13) & 0x3ffu)) : r;\n"
"  return (uint16_t)(s | r);\n"
"}\n"
"TC_INLINE float tc_b2f(uint16_t h) { return tc_u2f((uint32_t)h << 16); }\n"
"TC_INLINE uint16_t tc_f2b(float f) {\n"
"  uint32_t x = tc_f2u(f);\n"
"  uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;\n"
"  r = (x & 0x7fffffffu) > 0x7f800000u ? ((x >> 16) | 0x40u) : r;\n"
"  return (uint16_t)r;\n"
"}\n"
/* double -> 16-bit format with one rounding: ebits/mbits layout */
"static uint16_t tc_d2small(double d, int ebits, int mbits) {\n"
"  uint64_t b; memcpy(&b, &d, 8);\n"
"  uint32_t sign = (uint32_t)(b >> 63) << (ebits + mbits);\n"
"  int bias = (1 << (ebits - 1)) - 1, ex = (int)((b >> 52) & 0x7ff);\n"
"  uint32_t emax = (1u << ebits) - 1;\n"
"  uint64_t fr = b & ((1ull << 52) - 1), sig;\n"
"  if (ex == 0x7ff) return (uint16_t)(sign | (emax << mbits) | (fr ? (1u << (mbits - 1)) | (uint32_t)(fr >> (52 - mbits)) : 0));\n"
"  if (ex == 0 && fr == 0) return (uint16_t)sign;\n"
"  if (ex == 0) { ex = 1; sig = fr; } else sig = fr | (1ull << 52);\n"
"  int te = ex - 1023 + bias;\n"
"  int sh = te >= 1 ? 52 - mbits : 52 - mbits + (1 - te);\n"
"  if (sh > 54) return (uint16_t)sign;\n"
"  uint64_t mant = sig >> sh, rem = sig & ((1ull << sh) - 1), half = 1ull << (sh - 1);\n"
"  uint64_t up = rem > half || (rem == half && (mant & 1));\n"
"  if (te >= 1) {\n"
"    uint64_t r = ((uint64_t)te << mbits) + (mant - (1ull << mbits)) + up;\n"
"    if (r >= ((uint64_t)emax << mbits)) return (uint16_t)(sign | (emax << mbits));\n"
"    return (uint16_t)(sign | (uint32_t)r);\n"
"  }\n"
"  return (uint16_t)(sign | (uint32_t)(mant + up));\n"
"}\n"
"TC_INLINE uint16_t tc_d2h(double d) { return tc_d2small(d, 5, 10); }\n"
"TC_INLINE uint16_t tc_d2b(double d) { return tc_d2small(d, 8, 7); }\n"
"TC_INLINE float tc_rh(float f) { return tc_h2f(tc_f2h(f)); }\n"
"TC_INLINE float tc_rb(float f) { return tc_b2f(tc_f2b(f)); }\n"
/* ---- float helpers ---- */
"TC_INLINE float tc_minf(float a, float b) { return a < b ? a : b; }\n"
"TC_INLINE float tc_maxf(float a, float b) { return a > b ? a : b; }\n"
"TC_INLINE double tc_mind(double a, double b) { return a < b ? a : b; }\n"
"TC_INLINE double tc_maxd(double a, double b) { return a > b ? a : b; }\n"
"TC_INLINE float tc_fmodf(float a, float b) { float r = fmodf(a, b); if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }\n"
"TC_INLINE double tc_fmodd(double a, double b) { double r = fmod(a, b); if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }\n"
/* ---- float math without libm calls, branch-free so loops over them
 * vectorize (-ffast-math is not used: IEEE semantics stay).  The generator
 * calls these for float32 (and 16-bit floats, computed in float) exp, exp2,
 * log, log2, tanh and sigmoid; rsqrt is 1/sqrtf and sqrt sqrtf, which
 * vectorize as they are; float64 math calls libm.  Exponentials: Cody-Waite
 * reduction to |r| <= ln2/2 and a degree-7 Taylor polynomial, scaled by two
 * exact powers of 2 (one rounding into the subnormal range).  Logarithms:
 * x = m 2^e with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh((m-1)/(m+1)).
 * Error bounds against the correctly rounded value over every float
 * (measured on a sweep of all bit patterns, tested by tests/test_cpu.c):
 * exp, exp2, log 1.5 ulp, log2 2 ulp, tanh and sigmoid 3 ulp; NaN in, NaN
 * out; exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(<0) = NaN,
 * tanh(+-0) = +-0, tanh(+-inf) = +-1; subnormal inputs and results are
 * handled (no flush to zero). ---- */
/* ---- float math without libm calls, branch-free so loops vectorize ---- */
/* 2^n for integer n in [-252, 254]: two exact normal factors (a result in
 * the subnormal range is rounded once, by the last multiply) */
"#define TC_SCALE2(p, n) ((p) * tc_u2f((uint32_t)(((n) >> 1) + 127) << 23) * tc_u2f((uint32_t)((n) - ((n) >> 1) + 127) << 23))\n"
"TC_INLINE float tc_exp2f(float x) {\n"
"  float c = x < -151.0f ? -151.0f : x > 129.0f ? 129.0f : x;\n"
"  float n = (c + 0x1.8p23f) - 0x1.8p23f, f = c - n;\n"
"  float p = 1.5252733804059841e-5f;\n"
"  p = p * f + 1.5403530393381608e-4f;\n"
"  p = p * f + 1.3333558146428443e-3f;\n"
"  p = p * f + 9.6181291076284772e-3f;\n"
"  p = p * f + 5.5504108664821580e-2f;\n"
"  p = p * f + 2.4022650695910071e-1f;\n"
"  p = p * f + 6.9314718055994531e-1f;\n"
"  p = p * f + 1.0f;\n"
"  int32_t ni = (int32_t)(c != c ? 0.0f : n);\n"
"  float r = TC_SCALE2(p, ni);\n"
"  return x != x ? x : r;\n"
"}\n"
"TC_INLINE float tc_expf(float x) {\n"
"  float c = x < -104.0f ? -104.0f : x > 89.0f ? 89.0f : x;\n"
"  float n = (c * 1.44269504088896341f + 0x1.8p23f) - 0x1.8p23f;\n"
"  float r = c - n * 0.693145751953125f;\n"
"  r = r - n * 1.42860682030941723212e-6f;\n"
"  float p = 1.0f / 5040;\n"
"  p = p * r + 1.0f / 720;\n"
"  p = p * r + 1.0f / 120;\n"
"  p = p * r + 1.0f / 24;\n"
"  p = p * r + 1.0f / 6;\n"
"  p = p * r + 0.5f;\n"
"  p = p * r + 1.0f;\n"
"  p = p * r + 1.0f;\n"
"  int32_t ni = (int32_t)(c != c ? 0.0f : n);\n"
"  float y = TC_SCALE2(p, ni);\n"
"  return x != x ? x : y;\n"
"}\n"
/* log(m) for m in [sqrt(1/2), sqrt(2)): 2 atanh(t), t = (m-1)/(m+1) */
"TC_INLINE float tc_logm_(float m) {\n"
"  float t = (m - 1.0f) / (m + 1.0f), t2 = t * t;\n"
"  float p = 2.0f / 11;\n"
"  p = p * t2 + 2.0f / 9;\n"
"  p = p * t2 + 2.0f / 7;\n"
"  p = p * t2 + 2.0f / 5;\n"
"  p = p * t2 + 2.0f / 3;\n"
"  return (m - 1.0f) - t * ((m - 1.0f) - p * t2);\n"
"}\n"
/* x = m 2^e with m in [sqrt(1/2), sqrt(2)); subnormals scaled by 2^25 first */
"#define TC_LOG_SPLIT(x, m, e) \\\n"
"  float xs_ = (x) < 0x1p-126f ? (x) * 0x1p25f : (x); \\\n"
"  int32_t bi_ = (int32_t)tc_f2u(xs_) - 0x3f3504f3; \\\n"
"  int32_t e = (bi_ >> 23) - ((x) < 0x1p-126f ? 25 : 0); \\\n"
"  float m = tc_u2f((uint32_t)((bi_ & 0x007fffff) + 0x3f3504f3));\n"
"TC_INLINE float tc_logf(float x) {\n"
"  TC_LOG_SPLIT(x, m, e)\n"
"  float fe = (float)e;\n"
"  float r = fe * 0.693145751953125f + (tc_logm_(m) + fe * 1.42860682030941723212e-6f);\n"
"  r = x == 0.0f ? -__builtin_inff() : r;\n"
"  r = x < 0.0f ? __builtin_nanf(\"\") : r;\n"
"  return x == __builtin_inff() || x != x ? x : r;\n"
"}\n"
"TC_INLINE float tc_log2f(float x) {\n"
"  TC_LOG_SPLIT(x, m, e)\n"
"  float lm = tc_logm_(m);\n"
"  float r = (float)e + (lm * 1.44269502162933349609f + lm * 1.92596299112661746887e-8f);\n"
"  r = x == 0.0f ? -__builtin_inff() : r;\n"
"  r = x < 0.0f ? __builtin_nanf(\"\") : r;\n"
"  return x == __builtin_inff() || x != x ? x : r;\n"
"}\n"
/* tanh |x| = em / (em + 2), em = e^(2|x|) - 1 (Taylor below 1.1, so no
 * cancellation for small x); 1 past 9.1 */
"TC_INLINE float tc_tanhf(float x) {\n"
"  float a = __builtin_fabsf(x), y = 2.0f * a;\n"
"  float q = 1.0f / 39916800;\n"
"  q = q * y + 1.0f / 3628800;\n"
"  q = q * y + 1.0f / 362880;\n"
"  q = q * y + 1.0f / 40320;\n"
"  q = q * y + 1.0f / 5040;\n"
"  q = q * y + 1.0f / 720;\n"
"  q = q * y + 1.0f / 120;\n"
"  q = q * y + 1.0f / 24;\n"
"  q = q * y + 1.0f / 6;\n"
"  q = q * y + 0.5f;\n"
"  float em = y < 1.1f ? y + y * (y * q) : tc_expf(y) - 1.0f;\n"
"  float t = a > 9.1f ? 1.0f : em / (em + 2.0f);\n"
"  return x != x ? x : __builtin_copysignf(t, x);\n"
"}\n"
/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below (no overflow of e^-x) */
"TC_INLINE float tc_sigmoidf(float x) {\n"
"  float e = tc_expf(-__builtin_fabsf(x));\n"
"  float r = (x >= 0.0f ? 1.0f : e) / (1.0f + e);\n"
"  return x != x ? x : r;\n"
"}\n"
"TC_INLINE double tc_sigmoidd(double x) { return 1.0 / (1.0 + exp(-x)); }\n"
/* ---- integer helpers: T, unsigned twin, suffix ---- */
"#define TC_INT_OPS(sfx, T, U, TMIN) \\\n"
"TC_INLINE T tc_div_##sfx(T a, T b) { if (b == 0) return 0; if ((T)-1 < 0 && b == (T)-1) return (T)((U)0 - (U)a); return (T)(a / b); } \\\n"
"TC_INLINE T tc_fdiv_##sfx(T a, T b) { if (b == 0) return 0; if ((T)-1 < 0 && b == (T)-1) return (T)((U)0 - (U)a); T q = (T)(a / b); if ((T)(a % b) != 0 && ((a < 0) != (b < 0))) q = (T)(q - 1); return q; } \\\n"
"TC_INLINE T tc_fmod_##sfx(T a, T b) { if (b == 0 || ((T)-1 < 0 && b == (T)-1)) return 0; T r = (T)(a % b); if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b); return r; } \\\n"
"TC_INLINE T tc_min_##sfx(T a, T b) { return a < b ? a : b; } \\\n"
"TC_INLINE T tc_max_##sfx(T a, T b) { return a > b ? a : b; } \\\n"
"TC_INLINE T tc_abs_##sfx(T a) { return a < 0 ? (T)((U)0 - (U)a) : a; } \\\n"
"TC_INLINE T tc_pow_##sfx(T a, T e) { if (e < 0) return (T)(a == 1 ? 1 : a == (T)-1 ? (((U)e & 1u) ? -1 : 1) : 0); U r = 1, x = (U)a, n = (U)e; while (n) { if (n & 1u) r = (U)(r * x); x = (U)(x * x); n >>= 1; } return (T)r; } \\\n"
"TC_INLINE void tc_atomic_add_##sfx(T *p, T v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); } \\\n"
"TC_INLINE void tc_atomic_max_##sfx(T *p, T v) { T o = __atomic_load_n(p, __ATOMIC_RELAXED); while (o < v && !__atomic_compare_exchange_n(p, &o, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} } \\\n"
"TC_INLINE void tc_atomic_min_##sfx(T *p, T v) { T o = __atomic_load_n(p, __ATOMIC_RELAXED); while (o > v && !__atomic_compare_exchange_n(p, &o, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} }\n"
"TC_INT_OPS(i8, int8_t, uint8_t, INT8_MIN)\n"
"TC_INT_OPS(i16, int16_t, uint16_t, INT16_MIN)\n"
"TC_INT_OPS(i32, int32_t, uint32_t, INT32_MIN)\n"
"TC_INT_OPS(i64, int64_t, uint64_t, INT64_MIN)\n"
"TC_INT_OPS(u8, uint8_t, uint8_t, 0)\n"
"TC_INT_OPS(u16, uint16_t, uint16_t, 0)\n"
"TC_INT_OPS(u32, uint32_t, uint32_t, 0)\n"
"TC_INT_OPS(u64, uint64_t, uint64_t, 0)\n"
/* ---- float atomics: compare-and-swap on the bit pattern ---- */
"#define TC_ATOMIC_FLT(sfx, S, B, LD, ST, OPN, EXPR) \\\n"
"TC_INLINE void tc_atomic_##OPN##_##sfx(S *p, float v) { \\\n"
"  B *q = (B *)p; B o = __atomic_load_n(q, __ATOMIC_RELAXED), n; \\\n"
"  do { float c = LD(o); float r = (EXPR); if (r == c && OPN##_noop) return; n = ST(r); } \\\n"
"  while (!__atomic_compare_exchange_n(q, &o, n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); }\n"
"#define add_noop 0\n"
"#define max_noop 1\n"
"#define min_noop 1\n"
"TC_ATOMIC_FLT(f32, float, uint32_t, tc_u2f, tc_f2u, add, c + v)\n"
"TC_ATOMIC_FLT(f32, float, uint32_t, tc_u2f, tc_f2u, max, (v > c ? v : c))\n"
"TC_ATOMIC_FLT(f32, float, uint32_t, tc_u2f, tc_f2u, min, (v < c ? v : c))\n"
"TC_ATOMIC_FLT(f16, uint16_t, uint16_t, tc_h2f, tc_f2h, add, c + v)\n"
"TC_ATOMIC_FLT(f16, uint16_t, uint16_t, tc_h2f, tc_f2h, max, (v > c ? v : c))\n"
"TC_ATOMIC_FLT(f16, uint16_t, uint16_t, tc_h2f, tc_f2h, min, (v < c ? v : c))\n"
"TC_ATOMIC_FLT(bf16, uint16_t, uint16_t, tc_b2f, tc_f2b, add, c + v)\n"
"TC_ATOMIC_FLT(bf16, uint16_t, uint16_t, tc_b2f, tc_f2b, max, (v > c ? v : c))\n"
"TC_ATOMIC_FLT(bf16, uint16_t, uint16_t, tc_b2f, tc_f2b, min, (v < c ? v : c))\n"
"#define TC_ATOMIC_DBL(OPN, EXPR) \\\n"
"TC_INLINE void tc_atomic_##OPN##_f64(double *p, double v) { \\\n"
"  uint64_t *q = (uint64_t *)p; uint64_t o = __atomic_load_n(q, __ATOMIC_RELAXED), n; \\\n"
"  do { double c; memcpy(&c, &o, 8); double r = (EXPR); if (r == c && OPN##_noop) return; memcpy(&n, &r, 8); } \\\n"
"  while (!__atomic_compare_exchange_n(q, &o, n, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)); }\n"
"TC_ATOMIC_DBL(add, c + v)\n"
"TC_ATOMIC_DBL(max, (v > c ? v : c))\n"
"TC_ATOMIC_DBL(min, (v < c ? v : c))\n"
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
"#if defined(__AVX512F__)\n"
"#define TC_ISA \"avx512\"\n"
"#define TC_VB 64\n"
"#define TC_MR 8\n"
"#elif defined(__AVX2__) && defined(__FMA__)\n"
"#define TC_ISA \"avx2\"\n"
"#define TC_VB 32\n"
"#define TC_MR 6\n"
"#elif defined(__ARM_NEON)\n"
"#define TC_ISA \"neon\"\n"
"#define TC_VB 16\n"
"#define TC_MR 8\n"
"#else\n"
"#define TC_ISA \"generic\"\n"
"#define TC_VB 16\n"
"#define TC_MR 4\n"
"#endif\n"
"#define TC_NV 2\n"
/* interleaved partial results of a float row reduction: two vectors */
"#define TC_RLANES (2 * TC_VB / 4)\n"
"#if defined(__clang__)\n"
"#define TC_UNROLL _Pragma(\"unroll\")\n"
"#else\n"
"#define TC_UNROLL _Pragma(\"GCC unroll 16\")\n"
"#endif\n"
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
"#define TC_GEMM_MK(sfx, T) \\\n"
"typedef T tc_v_##sfx __attribute__((vector_size(TC_VB))); \\\n"
"typedef T tc_vu_##sfx __attribute__((vector_size(TC_VB), aligned(sizeof(T)), may_alias)); \\\n"
"enum { TC_VL_##sfx = TC_VB / sizeof(T), TC_NR_##sfx = TC_NV * (TC_VB / sizeof(T)) }; \\\n"
"static void tc_uk_##sfx(int64_t kc, const T *restrict a, int64_t rsa, int64_t csa, const T *restrict b, int64_t ldb, T *restrict c, int64_t ldc) { \\\n"
"  typedef tc_v_##sfx V; typedef tc_vu_##sfx VU; \\\n"
"  V acc[TC_MR][TC_NV]; \\\n"
"  TC_UNROLL for (int r = 0; r < TC_MR; ++r) \\\n"
"    TC_UNROLL for (int v = 0; v < TC_NV; ++v) acc[r][v] = *(const VU *)(c + r * ldc + v * TC_VL_##sfx); \\\n"
"  for (int64_t k = 0; k < kc; ++k) { \\\n"
"    V bv[TC_NV]; \\\n"
"    TC_UNROLL for (int v = 0; v < TC_NV; ++v) bv[v] = *(const VU *)(b + k * ldb + v * TC_VL_##sfx); \\\n"
"    TC_UNROLL for (int r = 0; r < TC_MR; ++r) { \\\n"
"      const V av = a[r * rsa + k * csa] - (V){0}; \\\n"
"      TC_UNROLL for (int v = 0; v < TC_NV; ++v) acc[r][v] += av * bv[v]; \\\n"
"    } \\\n"
"  } \\\n"
"  TC_UNROLL for (int r = 0; r < TC_MR; ++r) \\\n"
"    TC_UNROLL for (int v = 0; v < TC_NV; ++v) *(VU *)(c + r * ldc + v * TC_VL_##sfx) = acc[r][v]; \\\n"
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
"  for (int64_t i = 0; i < mc; i += TC_MR) { \\\n"
"    const int64_t mr = TC_MIN64(TC_MR, mc - i); \\\n"
"    const T *ap = a + (i / TC_MR) * pas; int64_t r_s = rsa, c_s = csa; \\\n"
"    if (mr < TC_MR) { /* the last rows, zero-padded to MR: ea[k][MR] */ \\\n"
"      for (int64_t k = 0; k < kc; ++k) \\\n"
"        for (int64_t r = 0; r < TC_MR; ++r) ea[k * TC_MR + r] = r < mr ? ap[r * rsa + k * csa] : (T)0; \\\n"
"      ap = ea; r_s = 1; c_s = TC_MR; \\\n"
"    } \\\n"
"    for (int64_t jp = 0; jp * NR < nc; ++jp) { \\\n"
"      const int64_t nr = TC_MIN64(NR, nc - jp * NR); \\\n"
"      const T *bp = nr < NR ? eb : b + jp * pbs; const int64_t lb = nr < NR ? NR : ldb; \\\n"
"      T *cp = c + i * ldc + jp * NR; \\\n"
"      if (mr == TC_MR && nr == NR) { tc_uk_##sfx(kc, ap, r_s, c_s, bp, lb, cp, ldc); continue; } \\\n"
"      T t[TC_MR * NR] __attribute__((aligned(64))); \\\n"
"      for (int64_t r = 0; r < TC_MR; ++r) \\\n"
"        for (int64_t j = 0; j < NR; ++j) t[r * NR + j] = r < mr && j < nr ? cp[r * ldc + j] : (T)0; \\\n"
"      tc_uk_##sfx(kc, ap, r_s, c_s, bp, lb, t, NR); \\\n"
"      for (int64_t r = 0; r < mr; ++r) \\\n"
"        for (int64_t j = 0; j < nr; ++j) cp[r * ldc + j] = t[r * NR + j]; \\\n"
"    } \\\n"
"  } \\\n"
"}\n"
"TC_GEMM_MK(f32, float)\n"
"TC_GEMM_MK(f64, double)\n"
"TC_GEMM_MK(i32, int32_t)\n"
"TC_GEMM_MK(i64, int64_t)\n"
"TC_GEMM_MK(u32, uint32_t)\n"
"TC_GEMM_MK(u64, uint64_t)\n"
"\n";

#endif
