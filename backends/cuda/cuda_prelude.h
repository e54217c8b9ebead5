/*
 * cuda_prelude.h — the fixed CUDA C++ text that opens every generated
 * kernel.
 *
 * Kept header-free so NVRTC needs no include path (cuda_fp16.h is not on
 * every machine that has libnvrtc): fixed-width integer names, 16-bit float
 * conversions written with PTX cvt instructions (float16) and bit
 * arithmetic (bfloat16, round to nearest even, the SDK's results),
 * integer division helpers with Python floor semantics that never trap
 * (x/0 gives 0) under the tc_<op>_<type> names the shared expression
 * emitter (tilec/cexpr.h) calls, float min/max/fmod/sigmoid helpers and
 * overloads, read-modify-write atomics for the
 * types the hardware lacks (compare-and-swap loops, sub-word ones on the
 * enclosing 32-bit word), and the pieces of the tensor-core GEMM
 * (ldmatrix, mma.sync m16n8k16) and of cp.async.  Included only by
 * cuda_codegen.c.
 */
#ifndef TILEC_CUDA_PRELUDE_H
#define TILEC_CUDA_PRELUDE_H

static const char cuda_prelude[] =
"typedef signed char tl_i8; typedef short tl_i16; typedef int tl_i32; typedef long long tl_i64;\n"
"typedef unsigned char tl_u8; typedef unsigned short tl_u16; typedef unsigned int tl_u32;\n"
"typedef unsigned long long tl_u64;\n"
"#define TL_INLINE static __device__ __forceinline__\n"
"TL_INLINE float tl_h2f(tl_u16 h) { float f; asm(\"{ .reg .f16 t; mov.b16 t, %1; cvt.f32.f16 %0, t; }\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
"TL_INLINE tl_u16 tl_f2h(float f) { tl_u16 h; asm(\"{ .reg .f16 t; cvt.rn.f16.f32 t, %1; mov.b16 %0, t; }\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
"TL_INLINE tl_u16 tl_d2h(double d) { tl_u16 h; asm(\"{ .reg .f16 t; cvt.rn.f16.f64 t, %1; mov.b16 %0, t; }\" : \"=h\"(h) : \"d\"(d)); return h; }\n"
"TL_INLINE float tl_b2f(tl_u16 h) { return __uint_as_float((tl_u32)h << 16); }\n"
"TL_INLINE tl_u16 tl_f2b(float f) {\n"
"  tl_u32 x = __float_as_uint(f);\n"
"  if ((x & 0x7fffffffu) > 0x7f800000u) return (tl_u16)((x >> 16) | 0x40u);\n"
"  x += 0x7fffu + ((x >> 16) & 1u);\n"
"  return (tl_u16)(x >> 16);\n"
"}\n"
/* double -> bfloat16 with one rounding: round the 64-bit pattern at bit 48
 * of a float's precision via the float's own rounding is not exact, so
 * round-to-odd to float first, then to bfloat16 (exact: enough extra bits). */
"TL_INLINE tl_u16 tl_d2b(double d) {\n"
"  float f = __double2float_rz(d);\n"
"  if ((double)f != d && !(f != f)) { tl_u32 x = __float_as_uint(f); if (!(x & 1u)) x |= 1u; f = __uint_as_float(x); }\n"
"  return tl_f2b(f);\n"
"}\n"
"TL_INLINE float tl_rh(float f) { return tl_h2f(tl_f2h(f)); }\n"
"TL_INLINE float tl_rb(float f) { return tl_b2f(tl_f2b(f)); }\n"
"TL_INLINE tl_u32 tl_sa(const void *p) { return (tl_u32)__cvta_generic_to_shared(p); }\n"
/* element (r, c) of an R-row 16-bit buffer in wgmma's swizzled layout:
 * column blocks of W elements, 16-byte chunks XOR-permuted by the bits of
 * the address that count 128-byte lines (see swz_width in the generator) */
"template <int W, int R> TL_INLINE int tl_swz(int r, int c) {\n"
"  int e = r * W + (c & (W - 1));\n"
"  return (c / W) * (R * W) + (e ^ (((e >> 6) & (W / 8 - 1)) << 3));\n"
"}\n"
"TL_INLINE float tl_inff(void) { return __int_as_float(0x7f800000); }\n"
"TL_INLINE double tl_infd(void) { return __longlong_as_double(0x7ff0000000000000LL); }\n"
/* integer helpers */
"template <typename T> TL_INLINE T tl_div(T a, T b) { return b == 0 ? (T)0 : ((T)-1 < (T)0 && b == (T)-1) ? (T)(0 - a) : (T)(a / b); }\n"
"template <typename T> TL_INLINE T tl_mod(T a, T b) { return b == 0 || ((T)-1 < (T)0 && b == (T)-1) ? (T)0 : (T)(a % b); }\n"
"template <typename T> TL_INLINE T tl_floordiv(T a, T b) {\n"
"  T q = tl_div(a, b);\n"
"  if ((T)-1 < (T)0 && b != 0 && (T)(q * b) != a && ((a < 0) != (b < 0))) q = (T)(q - 1);\n"
"  return q;\n"
"}\n"
"template <typename T> TL_INLINE T tl_floormod(T a, T b) {\n"
"  T r = tl_mod(a, b);\n"
"  if ((T)-1 < (T)0 && r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);\n"
"  return r;\n"
"}\n"
"template <typename T> TL_INLINE T tl_ipow(T a, T b) {\n"
"  if ((T)-1 < (T)0 && b < (T)0) return a == (T)1 ? (T)1 : a == (T)-1 ? ((b & 1) ? (T)-1 : (T)1) : (T)0;\n"
"  T r = 1; while (b) { if (b & 1) r = (T)(r * a); a = (T)(a * a); b = (T)(b >> 1); } return r;\n"
"}\n"
"template <typename T> TL_INLINE T tl_imin(T a, T b) { return a < b ? a : b; }\n"
"template <typename T> TL_INLINE T tl_imax(T a, T b) { return a > b ? a : b; }\n"
"template <typename T> TL_INLINE T tl_iabs(T a) { return a < (T)0 ? (T)(0 - a) : a; }\n"
/* the names the shared expression emitter calls (tilec/cexpr.h):
 * tc_<op>_<type> for every integer type, bool using int32's */
"#define TL_IFAM(S, T) \\\n"
"  TL_INLINE T tc_div_##S(T a, T b) { return tl_div(a, b); } \\\n"
"  TL_INLINE T tc_fdiv_##S(T a, T b) { return tl_floordiv(a, b); } \\\n"
"  TL_INLINE T tc_fmod_##S(T a, T b) { return tl_floormod(a, b); } \\\n"
"  TL_INLINE T tc_pow_##S(T a, T b) { return tl_ipow(a, b); } \\\n"
"  TL_INLINE T tc_min_##S(T a, T b) { return tl_imin(a, b); } \\\n"
"  TL_INLINE T tc_max_##S(T a, T b) { return tl_imax(a, b); } \\\n"
"  TL_INLINE T tc_abs_##S(T a) { return tl_iabs(a); }\n"
"TL_IFAM(i8, tl_i8) TL_IFAM(i16, tl_i16) TL_IFAM(i32, tl_i32) TL_IFAM(i64, tl_i64)\n"
"TL_IFAM(u8, tl_u8) TL_IFAM(u16, tl_u16) TL_IFAM(u32, tl_u32) TL_IFAM(u64, tl_u64)\n"
"#undef TL_IFAM\n"
/* float helpers, float and double overloads (tile operations), and the
 * tc_ names the expression emitter calls (math itself it writes as expf,
 * exp ...); min/max ignore a NaN operand like the interpreter's fmin/fmax */
"TL_INLINE float tl_abs(float x) { return fabsf(x); } TL_INLINE double tl_abs(double x) { return fabs(x); }\n"
"TL_INLINE float tl_min(float x, float y) { return fminf(x, y); } TL_INLINE double tl_min(double x, double y) { return fmin(x, y); }\n"
"TL_INLINE float tl_max(float x, float y) { return fmaxf(x, y); } TL_INLINE double tl_max(double x, double y) { return fmax(x, y); }\n"
"TL_INLINE float tc_minf(float x, float y) { return fminf(x, y); } TL_INLINE double tc_mind(double x, double y) { return fmin(x, y); }\n"
"TL_INLINE float tc_maxf(float x, float y) { return fmaxf(x, y); } TL_INLINE double tc_maxd(double x, double y) { return fmax(x, y); }\n"
"TL_INLINE float tc_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); } TL_INLINE double tc_sigmoidd(double x) { return 1.0 / (1.0 + exp(-x)); }\n"
"TL_INLINE float tc_fmodf(float a, float b) { float r = fmodf(a, b); if (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) r += b; return r; }\n"
"TL_INLINE double tc_fmodd(double a, double b) { double r = fmod(a, b); if (r != 0.0 && ((r < 0.0) != (b < 0.0))) r += b; return r; }\n"
/* atomics: read-modify-write with compare-and-swap */
"template <typename F> TL_INLINE void tl_rmw32(void *p, F f) {\n"
"  tl_u32 *w = (tl_u32 *)p; tl_u32 old = *(volatile tl_u32 *)w, as;\n"
"  do { as = old; old = atomicCAS(w, as, f(as)); } while (old != as);\n"
"}\n"
"template <typename F> TL_INLINE void tl_rmw64(void *p, F f) {\n"
"  tl_u64 *w = (tl_u64 *)p; tl_u64 old = *(volatile tl_u64 *)w, as;\n"
"  do { as = old; old = atomicCAS(w, as, f(as)); } while (old != as);\n"
"}\n"
/* 1- or 2-byte element inside its aligned 32-bit word */
"template <int BYTES, typename F> TL_INLINE void tl_rmw_sub(void *p, F f) {\n"
"  tl_u64 a = (tl_u64)p; tl_u32 *w = (tl_u32 *)(a & ~3ull); tl_u32 sh = (tl_u32)(a & 3ull) * 8u;\n"
"  tl_u32 m = (BYTES == 1 ? 0xffu : 0xffffu) << sh; tl_u32 old = *(volatile tl_u32 *)w, as;\n"
"  do { as = old; tl_u32 cur = (as & m) >> sh; tl_u32 nv = ((tl_u32)f(cur) << sh) & m;\n"
"       old = atomicCAS(w, as, (as & ~m) | nv); } while (old != as);\n"
"}\n"
/* tensor cores: ldmatrix and mma.sync m16n8k16 (sm_80+) */
"#if __CUDA_ARCH__ >= 800\n"
"TL_INLINE void tl_ldsm_x4(tl_u32 *r, const void *p) {\n"
"  tl_u32 a = (tl_u32)__cvta_generic_to_shared(p);\n"
"  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\" : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(a));\n"
"}\n"
"TL_INLINE void tl_ldsm_x4_t(tl_u32 *r, const void *p) {\n"
"  tl_u32 a = (tl_u32)__cvta_generic_to_shared(p);\n"
"  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\" : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(a));\n"
"}\n"
"TL_INLINE void tl_ldsm_x2(tl_u32 *r, const void *p) {\n"
"  tl_u32 a = (tl_u32)__cvta_generic_to_shared(p);\n"
"  asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\" : \"=r\"(r[0]), \"=r\"(r[1]) : \"r\"(a));\n"
"}\n"
"TL_INLINE void tl_ldsm_x2_t(tl_u32 *r, const void *p) {\n"
"  tl_u32 a = (tl_u32)__cvta_generic_to_shared(p);\n"
"  asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\" : \"=r\"(r[0]), \"=r\"(r[1]) : \"r\"(a));\n"
"}\n"
"TL_INLINE void tl_mma_f16(float *d, const tl_u32 *a, const tl_u32 *b) {\n"
"  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\"\n"
"    : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]) : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
"}\n"
"TL_INLINE void tl_mma_bf16(float *d, const tl_u32 *a, const tl_u32 *b) {\n"
"  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\"\n"
"    : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3]) : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
"}\n"
"TL_INLINE void tl_cp_async16(void *dst, const void *src, int valid) {\n"
"  tl_u32 a = (tl_u32)__cvta_generic_to_shared(dst); int n = valid ? 16 : 0;\n"
"  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" :: \"r\"(a), \"l\"(src), \"r\"(n));\n"
"}\n"
"TL_INLINE void tl_cp_commit(void) { asm volatile(\"cp.async.commit_group;\"); }\n"
"template <int N> TL_INLINE void tl_cp_wait(void) { asm volatile(\"cp.async.wait_group %0;\" :: \"n\"(N)); }\n"
"#endif\n";

/* The sm_90a pieces, added when a kernel has wgmma GEMMs: shared-memory
 * matrix descriptors, the warpgroup fences, and the async-proxy fence
 * that orders ordinary shared-memory stores before wgmma reads them. */
static const char cuda_prelude_wgmma[] =
"TL_INLINE tl_u64 tl_desc(tl_u32 a, tl_u32 lbo, tl_u32 sbo, int mode) {\n"
"  return (tl_u64)((a & 0x3FFFFu) >> 4) | ((tl_u64)((lbo & 0x3FFFFu) >> 4) << 16) |\n"
"         ((tl_u64)((sbo & 0x3FFFFu) >> 4) << 32) | ((tl_u64)mode << 62);\n"
"}\n"
"TL_INLINE void tl_wg_fence(void) { asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\"); }\n"
"TL_INLINE void tl_wg_commit(void) { asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\"); }\n"
"template <int N> TL_INLINE void tl_wg_wait(void) { asm volatile(\"wgmma.wait_group.sync.aligned %0;\" :: \"n\"(N) : \"memory\"); }\n"
"TL_INLINE void tl_fence_proxy(void) { asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); }\n"
/* keeps the compiler from moving accumulator accesses across wgmma */
"template <int N> TL_INLINE void tl_keep_acc(float *c) {\n"
"  _Pragma(\"unroll\") for (int i = 0; i < N; i++) asm volatile(\"\" : \"+f\"(c[i]) :: \"memory\");\n"
"}\n";

#endif
