/*
 * cpu_prelude.h — the fixed C text that opens every generated CPU kernel.
 *
 * Kept as a string so the generated translation unit is self-contained
 * (it includes only the C standard headers).  It provides: 16-bit and
 * 8-bit float conversions (round to nearest even, the same results as the SDK's
 * tilec_f32_to_f16 & co., branch-free so they vectorize), integer division
 * helpers with Python floor semantics that never trap (x/0 gives 0),
 * atomics on every element type
 * (compare-and-swap loops for floats), and the SIMD width of the target;
 * the GEMM's micro- and macro-kernels follow it (cpu_gemm.c).  Included
 * only by cpu_codegen.c.
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
"TC_INLINE double tc_u2d(uint64_t x) { double d; memcpy(&d, &x, 8); return d; }\n"
"TC_INLINE uint64_t tc_d2u(double d) { uint64_t x; memcpy(&x, &d, 8); return x; }\n"
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
/* Rows of float to float16: the hardware's conversion where the target
 * has one (AVX-512F, F16C; round to nearest even: the same bits as tc_f2h,
 * NaN payloads included), through compiler builtins that gcc and clang
 * share (no <immintrin.h>: it costs a fifth of a second per kernel
 * compile); the rest element by element.  TC_REG keeps the converted
 * vector in a register, so the compiler does not fold the store into
 * vcvtps2ph's memory form (microcoded, several times slower, on AMD
 * Zen 4).  The other way, tc_h2f_n, is vcvtph2ps too, which quiets
 * signalling NaNs that the SDK's conversion (and so the interpreter) keeps
 * as they are: the loop ORs together each half's magnitude plus 0x3ff,
 * whose bit 15 is set exactly for NaNs, and a row with any NaN is converted
 * again by tc_h2f (bit-identical to tc_h2f for every row). */
"#if defined(__AVX512F__)\n"
"#define TC_F16W 16\n"
"typedef short tc_vh_ __attribute__((vector_size(32)));\n"
"typedef float tc_vf_ __attribute__((vector_size(64)));\n"
"#define TC_F2H_V(f) __builtin_ia32_vcvtps2ph512_mask((f), 8, (tc_vh_){0}, (unsigned short)-1)\n"
"#define TC_H2F_V(h) __builtin_ia32_vcvtph2ps512_mask((h), (tc_vf_){0}, (unsigned short)-1, 4)\n"
"#elif defined(__F16C__)\n"
"#define TC_F16W 8\n"
"typedef short tc_vh_ __attribute__((vector_size(16)));\n"
"typedef float tc_vf_ __attribute__((vector_size(32)));\n"
"#define TC_F2H_V(f) __builtin_ia32_vcvtps2ph256((f), 8)\n"
"#define TC_H2F_V(h) __builtin_ia32_vcvtph2ps256((h))\n"
"#endif\n"
"#define TC_REG(x) __asm__(\"\" : \"+v\"(x))\n"
/* A streaming (non-temporal) store of one converted vector, TC_NTH(p, h),
 * where the target has one: the row converters' nt rows (an output tensor
 * larger than a quarter of the L3, cpu_tileops.c) bypass the caches, so a
 * written line is not first read from memory (write-allocate) and does not
 * evict the input.  Weakly ordered: the pool's workers end each launch with
 * an sfence (cpu_pool.c). */
"#if defined(TC_F16W) && defined(__clang__)\n"
"#define TC_NTH(p, h) __builtin_nontemporal_store((h), (tc_vh_ *)(p))\n"
"#elif defined(TC_F16W) && defined(__AVX512F__)\n"
"#define TC_NTH(p, h) __builtin_ia32_movntdq256((long long __attribute__((vector_size(32))) *)(p), (long long __attribute__((vector_size(32))))(h))\n"
"#elif defined(TC_F16W)\n"
"#define TC_NTH(p, h) __builtin_ia32_movntdq((long long __attribute__((vector_size(16))) *)(p), (long long __attribute__((vector_size(16))))(h))\n"
"#endif\n"
"#ifdef TC_NTH\n"
"#define TC_NT_OK(nt, d) ((nt) && ((uintptr_t)(d) & (sizeof(tc_vh_) - 1)) == 0)\n"
"#endif\n"
/* pf (NULL: none): a row of as many bytes as these rows' 16-bit side,
 * prefetched one line per 32 elements as the row is converted */
"#define TC_RPF(pf, o, w) do { if ((pf) && ((o) & 63) == 0) __builtin_prefetch((pf) + (o), (w)); } while (0)\n"
"TC_INLINE uint16_t tc_f2h(float f);\n"
"TC_INLINE void tc_f2h_n(uint16_t *restrict d, const float *restrict s, int64_t n, const char *pf, int nt) {\n"
"  int64_t i = 0; (void)nt;\n"
"#ifdef TC_NTH\n"
"  if (TC_NT_OK(nt, d))\n"
"    for (; i + TC_F16W <= n; i += TC_F16W) { tc_vf_ f; memcpy(&f, s + i, sizeof f); tc_vh_ h = TC_F2H_V(f); TC_NTH(d + i, h); }\n"
"#endif\n"
"#ifdef TC_F16W\n"
"  for (; i + TC_F16W <= n; i += TC_F16W) { TC_RPF(pf, 2 * i, 1); tc_vf_ f; memcpy(&f, s + i, sizeof f); tc_vh_ h = TC_F2H_V(f); TC_REG(h); memcpy(d + i, &h, sizeof h); }\n"
"#endif\n"
"  TC_IVDEP for (; i < n; ++i) d[i] = tc_f2h(s[i]);\n"
"}\n"
/* tc_f2h_n of s[i] * c (a row scaled as it is written out, cpu_rows.c) */
"TC_INLINE void tc_f2h_scale_n(uint16_t *restrict d, const float *restrict s, int64_t n, float c, const char *pf, int nt) {\n"
"  int64_t i = 0; (void)nt;\n"
"#ifdef TC_NTH\n"
"  if (TC_NT_OK(nt, d))\n"
"    for (; i + TC_F16W <= n; i += TC_F16W) { tc_vf_ f; memcpy(&f, s + i, sizeof f); f = f * c; tc_vh_ h = TC_F2H_V(f); TC_NTH(d + i, h); }\n"
"#endif\n"
"#ifdef TC_F16W\n"
"  for (; i + TC_F16W <= n; i += TC_F16W) { TC_RPF(pf, 2 * i, 1); tc_vf_ f; memcpy(&f, s + i, sizeof f); f = f * c; tc_vh_ h = TC_F2H_V(f); TC_REG(h); memcpy(d + i, &h, sizeof h); }\n"
"#endif\n"
"  TC_IVDEP for (; i < n; ++i) d[i] = tc_f2h(s[i] * c);\n"
"}\n"
"TC_INLINE void tc_h2f_n(float *restrict d, const uint16_t *restrict s, int64_t n, const char *pf) {\n"
"  int64_t i = 0;\n"
"#ifdef TC_F16W\n"
"  typedef unsigned short tc_vu_ __attribute__((vector_size(sizeof(tc_vh_))));\n"
"  typedef unsigned short tc_vu2_ __attribute__((vector_size(2 * sizeof(tc_vh_))));\n"
"  tc_vu_ nan = {0}; tc_vu2_ nan2 = {0};\n"
"  for (; i + 2 * TC_F16W <= n; i += 2 * TC_F16W) {\n"
"    TC_RPF(pf, 2 * i, 0); tc_vu2_ hh; memcpy(&hh, s + i, sizeof hh); nan2 |= (hh & 0x7fffu) + 0x3ffu;\n"
"    tc_vh_ h0, h1; memcpy(&h0, s + i, sizeof h0); memcpy(&h1, s + i + TC_F16W, sizeof h1);\n"
"    const tc_vf_ f0 = TC_H2F_V(h0), f1 = TC_H2F_V(h1); memcpy(d + i, &f0, sizeof f0); memcpy(d + i + TC_F16W, &f1, sizeof f1);\n"
"  }\n"
"  { tc_vu_ lo, hi; memcpy(&lo, &nan2, sizeof lo); memcpy(&hi, (char *)&nan2 + sizeof lo, sizeof hi); nan |= lo | hi; }\n"
"  for (; i + TC_F16W <= n; i += TC_F16W) {\n"
"    TC_RPF(pf, 2 * i, 0); tc_vh_ h; memcpy(&h, s + i, sizeof h); nan |= ((tc_vu_)h & 0x7fffu) + 0x3ffu;\n"
"    tc_vf_ f = TC_H2F_V(h); memcpy(d + i, &f, sizeof f);\n"
"  }\n"
"  uint64_t w[sizeof nan / 8], any = 0; memcpy(w, &nan, sizeof nan);\n"
"  for (unsigned k = 0; k < sizeof nan / 8; ++k) any |= w[k] & 0x8000800080008000ull;\n"
"  if (any) i = 0;\n"
"#endif\n"
"  TC_IVDEP for (; i < n; ++i) d[i] = tc_h2f(s[i]);\n"
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
/* 8-bit floats (tile IR 1.2), the SDK's tilec_f64_to_f8e4m3fn & co.: e5m2 is
 * the top byte of a float16; e4m3fn has no infinity, overflow and NaN give
 * 0x7f | sign (non-saturating, as ml_dtypes and PyTorch) */
"static __attribute__((unused)) uint8_t tc_d2e4(double d) {\n"
"  uint64_t b; memcpy(&b, &d, 8);\n"
"  uint32_t sign = (uint32_t)(b >> 63) << 7;\n"
"  int ex = (int)((b >> 52) & 0x7ff);\n"
"  uint64_t fr = b & ((1ull << 52) - 1), sig;\n"
"  if (ex == 0x7ff) return (uint8_t)(sign | 0x7fu);\n"
"  if (ex == 0 && fr == 0) return (uint8_t)sign;\n"
"  if (ex == 0) { ex = 1; sig = fr; } else sig = fr | (1ull << 52);\n"
"  int te = ex - 1023 + 7;\n"
"  int sh = te >= 1 ? 49 : 49 + (1 - te);\n"
"  if (sh > 54) return (uint8_t)sign;\n"
"  uint64_t mant = sig >> sh, rem = sig & ((1ull << sh) - 1), half = 1ull << (sh - 1);\n"
"  uint64_t up = rem > half || (rem == half && (mant & 1));\n"
"  if (te >= 1) {\n"
"    uint64_t r = ((uint64_t)te << 3) + (mant - 8) + up;\n"
"    return (uint8_t)(sign | (r >= 0x7fu ? 0x7fu : (uint32_t)r));\n"
"  }\n"
"  return (uint8_t)(sign | (uint32_t)(mant + up));\n"
"}\n"
"TC_INLINE uint8_t tc_d2e5(double d) { return (uint8_t)tc_d2small(d, 5, 2); }\n"
"TC_INLINE float tc_e42f(uint8_t x) {\n"
"  uint32_t e = (x >> 3) & 15u, m = x & 7u;\n"
"  float v = e ? tc_u2f(((e + 120u) << 23) | (m << 20)) : (float)m * 0x1p-9f;\n"
"  v = (e == 15u && m == 7u) ? __builtin_nanf(\"\") : v;\n"
"  return tc_u2f(tc_f2u(v) | ((uint32_t)(x & 0x80u) << 24));\n"
"}\n"
"TC_INLINE float tc_e52f(uint8_t x) { return tc_h2f((uint16_t)((uint16_t)x << 8)); }\n"
/* float4_e2m1fn (tile IR 1.3), the SDK's tilec_f64_to_f4e2m1fn: to nearest
 * even among 0, 0.5, 1, 1.5, 2, 3, 4, 6, saturating (infinities too); NaN
 * gives a zero of the other sign; a code in the low nibble */
"static __attribute__((unused)) uint8_t tc_d2m4(double d) {\n"
"  uint8_t s = signbit(d) ? 8 : 0; double a = fabs(d);\n"
"  if (a != a) return (uint8_t)(s ^ 8);\n"
"  uint8_t c = a < 0.75 ? (a > 0.25) : a <= 1.25 ? 2 : a < 1.75 ? 3 : a <= 2.5 ? 4\n"
"            : a < 3.5 ? 5 : a <= 5.0 ? 6 : 7;\n"
"  return (uint8_t)(s | c);\n"
"}\n"
"TC_INLINE float tc_m42f(uint8_t x) {\n"
"  static const float m[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};\n"
"  return x & 8u ? -m[x & 7u] : m[x & 7u];\n"
"}\n"
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
 * (measured on a sweep of all bit patterns, tested by tests/test_cpu_math.c):
 * exp, exp2, log 1.5 ulp, log2 2 ulp, tanh and sigmoid 3 ulp; NaN in, NaN
 * out; exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(<0) = NaN,
 * tanh(+-0) = +-0, tanh(+-inf) = +-1; subnormal inputs and results are
 * handled (no flush to zero). ---- */
/* c ? a : b on floats as a select of bits: both sides are computed first.
 * gcc does not if-convert `c ? x : p * q` in a loop (the multiply could
 * trap, -ftrapping-math being the default) unless the target has masked
 * operations: on AVX2 every math function's loop stayed scalar (softmax's
 * exp2 loop ran at 1/20 of memcpy's bandwidth).  A select of two computed
 * bit patterns is an integer blend, which vectorizes everywhere. */
"TC_INLINE float tc_self_(int c, float a, float b) {\n"
"  uint32_t m = 0u - (uint32_t)(c != 0);\n"
"  return tc_u2f((tc_f2u(a) & m) | (tc_f2u(b) & ~m));\n"
"}\n"
/* x clamped to [lo, hi] (lo < 0 < hi, as bit patterns) on its bits: an
 * unsigned min keeps every value above lo (positive floats are below every
 * negative one), a signed min every value below hi (negative floats are
 * negative ints).  Integer min/max vectorize as they are; a float clamp
 * `x < lo ? lo : ...` makes gcc split the loop body into masked paths.
 * NaN comes out as some value in range (the callers return x for NaN). */
"TC_INLINE float tc_clampf_(float x, uint32_t lo, int32_t hi) {\n"
"  uint32_t b = tc_f2u(x); b = b < lo ? b : lo;\n"
"  int32_t s = (int32_t)b; s = s < hi ? s : hi;\n"
"  return tc_u2f((uint32_t)s);\n"
"}\n"
/* p * 2^n where t = n + 0x1.8p23f, n an integer in [-252, 254] (the low
 * mantissa bits of t hold n in two's complement): two exact normal factors
 * 2^(n>>1) and 2^(n-(n>>1)) made from t's bits (a result in the subnormal
 * range is rounded once, by the last multiply) */
"TC_INLINE float tc_scale2t_(float p, float t) {\n"
"  uint32_t tb = tc_f2u(t), h = (tb >> 1) << 23;\n"
"  return p * tc_u2f(h + 0x3f800000u) * tc_u2f((tb << 23) - h + 0x3f800000u);\n"
"}\n"
/* exp2's reduction and polynomial, written once for tc_exp2f and for
 * tc_exp2f_v (Z: a zero of the operands' type, scalar or vector): t = c +
 * 1.5 * 2^23 holds n = round(c) in its low mantissa bits, f = c - n lies in
 * [-1/2, 1/2], and p = 2^f = 1 + f * s(f), s of degree 5 (the minimax fit of
 * tools/fit_exp2.py, rounded to float), its even and odd parts two independent Horner chains in
 * g = f^2 (two FMAs each under -ffp-contract=fast, in both forms alike)
 * joined by one FMA, then p = s * f + 1, one rounding near the result.
 * Against a Taylor polynomial of degree 7 in one chain of seven FMAs: one
 * FMA fewer and a shorter dependency chain (softmax 8192x1024 fp16 on Zen
 * 3, AVX2: 4.3 -> 4.1 ms); measured maximum 1.16 ulp (every 5th float;
 * 1.14 at every 97th; the Taylor form 1.08).  Rounded as p = even + f *
 * odd instead, twice near the result: 1.68 ulp (degree 7) and 1.86 ulp
 * (degree 6), over the bound.  Horner in one chain of six FMAs: 9% slower
 * (latency); n by vroundps: 5% slower (one more operation on the FMA
 * pipes, which bound this loop on Zen 3). */
"#define TC_EXP2_CORE_(c, t, n, p, Z) do { \\\n"
"  t = (c) + 0x1.8p23f; n = t - 0x1.8p23f; \\\n"
"  const __typeof__(t) f_ = (c) - n, g_ = f_ * f_; \\\n"
"  __typeof__(t) q_ = (Z) + 1.339887502e-03f; \\\n"
"  p = (Z) + 1.535336196e-04f; \\\n"
"  q_ = q_ * g_ + 5.550332367e-02f; \\\n"
"  p = p * g_ + 9.618436918e-03f; \\\n"
"  q_ = q_ * g_ + 6.931471825e-01f; \\\n"
"  p = p * g_ + 2.402264774e-01f; \\\n"
"  p = p * f_ + q_; \\\n"
"  p = p * f_ + 1.0f; } while (0)\n"
"TC_INLINE float tc_exp2f(float x) {\n"
"  float c = tc_clampf_(x, 0xc3170000u, 0x43010000); /* [-151, 129] */\n"
"  float t, n, p;\n"
"  TC_EXP2_CORE_(c, t, n, p, 0.0f);\n"
"  return tc_self_(x != x, x, tc_scale2t_(p, t));\n"
"}\n"
/* exp2 on 16 floats (gcc with AVX-512F, for cpu_vec.c): tc_exp2f's steps
 * with its two-factor scaling done by vscalefps, which rounds p * 2^n once
 * as the last multiply there does; the same bits as tc_exp2f on all 2^32
 * inputs (checked exhaustively), 20% faster in softmax's exp2 loop. */
"#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)\n"
"#define TC_VEXP 1\n"
"typedef int tc_vi_ __attribute__((vector_size(64)));\n"
"TC_INLINE tc_vf_ tc_exp2f_v(tc_vf_ x) {\n"
"  tc_vi_ b = __builtin_ia32_pminud512_mask((tc_vi_)x, (tc_vi_){0} + (int)0xc3170000u, (tc_vi_){0}, (unsigned short)-1);\n"
"  b = __builtin_ia32_pminsd512_mask(b, (tc_vi_){0} + 0x43010000, (tc_vi_){0}, (unsigned short)-1);\n"
"  tc_vf_ c = (tc_vf_)b, t, n, p;\n"
"  TC_EXP2_CORE_(c, t, n, p, (tc_vf_){0});\n"
"  tc_vf_ r = __builtin_ia32_scalefps512_mask(p, n, (tc_vf_){0}, (unsigned short)-1, 4);\n"
"  unsigned short nan = __builtin_ia32_cmpps512_mask(x, x, 3, (unsigned short)-1, 4);\n"
"  return __builtin_ia32_blendmps_512_mask(r, x, nan);\n"
"}\n"
"#define TC_VEXPW 16\n"
/* exp2 on 8 floats with AVX2 (gcc and clang builtins): tc_exp2f's steps
 * on vectors (integer min clamp, the two-factor scaling, the NaN select),
 * the same bits as tc_exp2f; and in front of them a shortcut for a vector
 * whose |x| all are at most 125, so n = round(x) lies in [-125, 125], where
 * p * 2^n is normal: then 2^n is exact in one factor, so p * 2^n is p with
 * n added to its exponent field (an integer add instead of two multiplies
 * and six integer operations, and no clamp).  The test is on x's bits
 * (|x| as an integer above 125.0f's: inf and NaN too), one AND and one
 * compare, then movmskps: it no longer waits for t, and is one operation
 * fewer than a range test of n (softmax 8192x1024 fp16 on Zen 3: -5%).
 * The clamp's integer min is a compare and select (the pmin builtins are
 * gcc's only).  The same bits either way; softmax 8192x1024 fp16 on Zen 3
 * (AVX2): 7.0 -> 5.4 ms. */
"#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && !defined(__AVX512F__) && defined(__GNUC__)\n"
"#define TC_VEXP 1\n"
"#define TC_VEXPW 8\n"
"typedef int tc_vi_ __attribute__((vector_size(32)));\n"
"typedef unsigned tc_vu32_ __attribute__((vector_size(32)));\n"
"typedef long long tc_vq_ __attribute__((vector_size(32)));\n"
"static __attribute__((noinline, unused)) tc_vf_ tc_exp2f_vs_(tc_vf_ x) {\n"
"  const tc_vu32_ lo = (tc_vu32_){0} + 0xc3170000u; const tc_vi_ hi = (tc_vi_){0} + 0x43010000;\n"
"  tc_vi_ b = (tc_vi_)x, k = (tc_vi_)((tc_vu32_)b < lo);\n"
"  b = (b & k) | ((tc_vi_)lo & ~k); k = b < hi; b = (b & k) | (hi & ~k);\n"
"  tc_vf_ c = (tc_vf_)b, t, n, p;\n"
"  TC_EXP2_CORE_(c, t, n, p, (tc_vf_){0});\n"
"  const tc_vu32_ tb = (tc_vu32_)t, h = (tb >> 1) << 23;\n"
"  const tc_vf_ r = p * (tc_vf_)(h + 0x3f800000u) * (tc_vf_)((tb << 23) - h + 0x3f800000u);\n"
"  const tc_vi_ m = x != x;\n"
"  return (tc_vf_)(((tc_vi_)x & m) | ((tc_vi_)r & ~m));\n"
"}\n"
"TC_INLINE tc_vf_ tc_exp2f_v(tc_vf_ x) {\n"
"  tc_vf_ t, n, p;\n"
"  TC_EXP2_CORE_(x, t, n, p, (tc_vf_){0});\n"
"  const tc_vu32_ tb = (tc_vu32_)t;\n"
"  const tc_vi_ out = ((tc_vi_)x & 0x7fffffff) > 0x42fa0000; /* |x| > 125, inf, NaN */\n"
"  if (__builtin_expect(__builtin_ia32_movmskps256((tc_vf_)out) != 0, 0)) return tc_exp2f_vs_(x);\n"
"  return (tc_vf_)((tc_vu32_)p + (tb << 23));\n"
"}\n"
"#endif\n"
"TC_INLINE float tc_expf(float x) {\n"
"  float c = tc_clampf_(x, 0xc2d00000u, 0x42b20000); /* [-104, 89] */\n"
"  float t = c * 1.44269504088896341f + 0x1.8p23f, n = t - 0x1.8p23f;\n"
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
"  return tc_self_(x != x, x, tc_scale2t_(p, t));\n"
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
"  float xs_ = tc_self_((x) < 0x1p-126f, (x) * 0x1p25f, (x)); \\\n"
"  int32_t bi_ = (int32_t)tc_f2u(xs_) - 0x3f3504f3; \\\n"
"  int32_t e = (bi_ >> 23) - ((x) < 0x1p-126f ? 25 : 0); \\\n"
"  float m = tc_u2f((uint32_t)((bi_ & 0x007fffff) + 0x3f3504f3));\n"
"TC_INLINE float tc_logf(float x) {\n"
"  TC_LOG_SPLIT(x, m, e)\n"
"  float fe = (float)e;\n"
"  float r = fe * 0.693145751953125f + (tc_logm_(m) + fe * 1.42860682030941723212e-6f);\n"
"  r = tc_self_(x == 0.0f, -__builtin_inff(), r);\n"
"  r = tc_self_(x < 0.0f, __builtin_nanf(\"\"), r);\n"
"  return tc_self_(x == __builtin_inff() || x != x, x, r);\n"
"}\n"
"TC_INLINE float tc_log2f(float x) {\n"
"  TC_LOG_SPLIT(x, m, e)\n"
"  float lm = tc_logm_(m);\n"
"  float r = (float)e + (lm * 1.44269502162933349609f + lm * 1.92596299112661746887e-8f);\n"
"  r = tc_self_(x == 0.0f, -__builtin_inff(), r);\n"
"  r = tc_self_(x < 0.0f, __builtin_nanf(\"\"), r);\n"
"  return tc_self_(x == __builtin_inff() || x != x, x, r);\n"
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
"  float em = tc_self_(y < 1.1f, y + y * (y * q), tc_expf(y) - 1.0f);\n"
"  float t = tc_self_(a > 9.1f, 1.0f, em / (em + 2.0f));\n"
"  return tc_self_(x != x, x, __builtin_copysignf(t, x));\n"
"}\n"
/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below (no overflow of e^-x) */
"TC_INLINE float tc_sigmoidf(float x) {\n"
"  float e = tc_expf(-__builtin_fabsf(x));\n"
"  float r = tc_self_(x >= 0.0f, 1.0f, e) / (1.0f + e);\n"
"  return tc_self_(x != x, x, r);\n"
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
/* ---- the SIMD the kernel is compiled for (from the compiler's macros for
 * -march): vector bytes TC_VB, used by the row reductions and the GEMM ---- */
"#if defined(__AVX512F__)\n"
"#define TC_ISA \"avx512\"\n"
"#define TC_VB 64\n"
"#elif defined(__AVX2__) && defined(__FMA__)\n"
"#define TC_ISA \"avx2\"\n"
"#define TC_VB 32\n"
"#elif defined(__ARM_NEON)\n"
"#define TC_ISA \"neon\"\n"
"#define TC_VB 16\n"
"#else\n"
"#define TC_ISA \"generic\"\n"
"#define TC_VB 16\n"
"#endif\n"
/* interleaved partial results of a float row reduction: four vectors, four
 * dependency chains (two had left a row sum waiting on vaddps's latency) */
"#define TC_RLANES (4 * TC_VB / 4)\n"
"#if defined(__clang__)\n"
"#define TC_UNROLL _Pragma(\"unroll\")\n"
"#else\n"
"#define TC_UNROLL _Pragma(\"GCC unroll 16\")\n"
"#endif\n"
/* A float32 row reduction's lanes with explicit vectors (cpu_tileops.c):
 * lane l of TC_RLANES takes elements l, l + TC_RLANES, ... of n (a multiple
 * of TC_RLANES: four vectors a step), the lanes then combined pairwise, as the
 * scalar lanes loop does, so the same bits in the same order.  That loop
 * vectorized for sums but, on AVX2, not for max/min (gcc's SLP gave 16
 * scalar vmaxss per 16 floats).  Max and min are (v)maxps/minps where
 * there is one (a > b ? a : b and a < b ? a : b exactly, NaN included;
 * the 512-bit builtins are gcc's, so clang with AVX-512 takes the bits),
 * else a select of bits.  op: 0 sum, 1 max, 2 min, 3 abs sum, 4 abs max. */
"#if defined(__GNUC__) && TC_VB >= 16\n"
"#define TC_RVEC 1\n"
"typedef float tc_rv_ __attribute__((vector_size(TC_VB)));\n"
"typedef int32_t tc_rvi_ __attribute__((vector_size(TC_VB)));\n"
"TC_INLINE tc_rv_ tc_rsel_(tc_rvi_ m, tc_rv_ a, tc_rv_ b) { return (tc_rv_)(((tc_rvi_)a & m) | ((tc_rvi_)b & ~m)); }\n"
"#if defined(__AVX512F__) && !defined(__clang__)\n"
"#define TC_RMAX_(a, b) __builtin_ia32_maxps512_mask((a), (b), (tc_rv_){0}, (unsigned short)-1, 4)\n"
"#define TC_RMIN_(a, b) __builtin_ia32_minps512_mask((a), (b), (tc_rv_){0}, (unsigned short)-1, 4)\n"
"#elif defined(__AVX__) && TC_VB == 32\n"
"#define TC_RMAX_(a, b) __builtin_ia32_maxps256((a), (b))\n"
"#define TC_RMIN_(a, b) __builtin_ia32_minps256((a), (b))\n"
"#else\n"
"#define TC_RMAX_(a, b) tc_rsel_((a) > (b), (a), (b))\n"
"#define TC_RMIN_(a, b) tc_rsel_((a) < (b), (a), (b))\n"
"#endif\n"
"TC_INLINE tc_rv_ tc_rop_(int op, tc_rv_ a, tc_rv_ x) {\n"
"  if (op >= 3) x = (tc_rv_)((tc_rvi_)x & 0x7fffffff);\n"
"  return op == 0 || op == 3 ? a + x : op == 2 ? TC_RMIN_(a, x) : TC_RMAX_(a, x);\n"
"}\n"
"TC_INLINE float tc_rred_f32(int op, float init, const float *x, int64_t n) {\n"
"  enum { V = TC_VB / 4 };\n"
"  tc_rv_ l0 = (tc_rv_){0} + init, l1 = l0, l2 = l0, l3 = l0;\n"
"  int64_t i = 0;\n"
"  for (; i < n; i += 4 * V) {\n"
"    tc_rv_ a, b, c, d; memcpy(&a, x + i, sizeof a); memcpy(&b, x + i + V, sizeof b);\n"
"    memcpy(&c, x + i + 2 * V, sizeof c); memcpy(&d, x + i + 3 * V, sizeof d);\n"
"    l0 = tc_rop_(op, l0, a); l1 = tc_rop_(op, l1, b); l2 = tc_rop_(op, l2, c); l3 = tc_rop_(op, l3, d);\n"
"  }\n"
"  l0 = tc_rop_(op % 3, tc_rop_(op % 3, l0, l2), tc_rop_(op % 3, l1, l3));\n"
"  float lane[V]; memcpy(lane, &l0, sizeof lane);\n"
"  TC_UNROLL for (int h = V / 2; h >= 1; h /= 2)\n"
"    for (int l = 0; l < h; ++l) {\n"
"      const float a = lane[l], b = lane[l + h];\n"
"      lane[l] = op == 0 || op == 3 ? a + b : op == 2 ? (a < b ? a : b) : (a > b ? a : b);\n"
"    }\n"
"  return lane[0];\n"
"}\n"
"#endif\n"
"\n";

#endif
