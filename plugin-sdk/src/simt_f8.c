/*
 * simt_f8.c — the 8-bit float storage dtypes (IR 1.2: float8_e4m3fn,
 * float8_e5m2) in the SIMT kit.
 *
 * Like a 16-bit float in BITS mode, an 8-bit float is stored as its bit
 * pattern (the dialect's uint8 type) and computed with as a float32: a
 * load widens the byte exactly, a store rounds to nearest even, and a cast
 * to the dtype rounds a float32 value (the result stays a float32).  The
 * rules are those of the interpreter (tilec_f64_to_f8e4m3fn and friends,
 * ml_dtypes and PyTorch): e4m3fn has no infinity, so infinities, NaNs and
 * magnitudes that round past 448 give NaN (0x7f | sign); e5m2 is IEEE-like
 * (overflow gives infinity, a NaN stays a quiet NaN with its top payload
 * bits).  A copy of an 8-bit tensor to its own dtype moves the bytes (the
 * vector copies of simt_copy.c, cp.async, TMA); these helpers serve the
 * element-wise uses.  The helpers are plain integer code over the float's
 * bits, so every C-family dialect runs them the same.
 */
#include <stdio.h>

#include "simt_internal.h"

static const char *sfx(tilec_dtype_t t)
{
    return t == TILEC_FLOAT8_E4M3FN ? "e4m3" : "e5m2";
}

const char *simt_f8_from_bits(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *bits)
{
    c->helpers |= SH_F8;
    return simt_fmt(c, "tc_%s_f(%s)", sfx(t), bits);
}

const char *simt_f8_bits(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *v)
{
    c->helpers |= SH_F8;
    return simt_fmt(c, "tc_f_%s(%s)", sfx(t), v);
}

const char *simt_f8_round(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *v)
{
    c->helpers |= SH_F8;
    return simt_fmt(c, "tc_%s_f(tc_f_%s(%s))", sfx(t), sfx(t), v);
}

void simt_f8_helpers(tilec_simt_ctx_t *c, tilec_sdk_str_t *o)
{
    const char *q = c->dl.func_qual, *F = c->dl.type_name[TILEC_FLOAT32], *U32 = c->dl.type_name[TILEC_UINT32];
    const char *U8 = c->dl.type_name[TILEC_UINT8], *I = c->dl.type_name[TILEC_INT32];
    const char *ab = c->dl.f32_as_bits, *ba = c->dl.bits_as_f32;
    /* Conditions compare explicitly and casts go through the dialect's
     * cast form, so GLSL (bool conditions, constructor casts) reads the same
     * helpers as the C family. */
    const char *ex_i = simt_cast(c, "((%s)(%s))", I, "ex"), *te_u = simt_cast(c, "((%s)(%s))", U32, "te");
    const char *m_f = simt_cast(c, "((%s)(%s))", F, "m");
    /* float -> bits of a format with eb exponent and mb mantissa bits
     * (fn: no infinities, all-ones is the only NaN), nearest even */
    tilec_sdk_str_printf(o,
        "%s %s tc_f_f8(%s f, %s eb, %s mb, %s fn) {\n"
        "  %s x = %s(f), s = (x >> 24) & 0x80u, ex = (x >> 23) & 0xffu, fr = x & 0x7fffffu;\n"
        "  %s emax = (1u << eb) - 1u, mm = (1u << mb) - 1u;\n"
        "  if (ex == 0xffu) {\n"
        "    if (fn != 0) return s | (emax << mb) | mm;\n"
        "    return fr != 0u ? (s | (emax << mb) | (1u << (mb - 1)) | (fr >> (23 - mb))) : (s | (emax << mb));\n"
        "  }\n"
        "  if (ex == 0u && fr == 0u) return s;\n"
        "  %s bias = (1 << (eb - 1)) - 1, e = ex != 0u ? %s : 1, te = e - 127 + bias;\n"
        "  %s sig = ex != 0u ? (fr | 0x800000u) : fr;\n"
        "  %s sh = te >= 1 ? 23 - mb : 23 - mb + (1 - te);\n"
        "  if (sh > 24) return s;\n"
        "  %s mant = sig >> sh, rem = sig & ((1u << sh) - 1u), hb = 1u << (sh - 1);\n"
        "  %s up = (rem > hb || (rem == hb && (mant & 1u) != 0u)) ? 1u : 0u;\n"
        "  if (te < 1) return s | (mant + up);\n"
        "  %s r = (%s << mb) + (mant - (1u << mb)) + up;\n"
        "  if (fn != 0 && r >= ((emax << mb) | mm)) return s | (emax << mb) | mm;\n"
        "  if (fn == 0 && r >= (emax << mb)) return s | (emax << mb);\n"
        "  return s | r;\n"
        "}\n",
        q, U32, F, I, I, I, U32, ab, U32, I, ex_i, U32, I, U32, U32, U32, te_u);
    /* bits -> float, exactly */
    tilec_sdk_str_printf(o,
        "%s %s tc_f8_f(%s h, %s eb, %s mb, %s fn, %s sub) {\n"
        "  %s s = (h & 0x80u) << 24, emax = (1u << eb) - 1u, mm = (1u << mb) - 1u;\n"
        "  %s ex = (h >> mb) & emax, m = h & mm;\n"
        "  if (fn != 0 && ex == emax && m == mm) return %s(s | 0x7fc00000u);\n"
        "  if (fn == 0 && ex == emax) return %s(m != 0u ? (s | 0x7fc00000u) : (s | 0x7f800000u));\n"
        "  if (ex == 0u) { %s v = %s * sub; return s != 0u ? -v : v; }\n"
        "  return %s(s | ((ex + 127u - ((1u << (eb - 1)) - 1u)) << 23) | (m << (23 - mb)));\n"
        "}\n",
        q, F, U32, I, I, I, F, U32, U32, ba, ba, F, m_f, ba);
    /* e4m3fn: smallest subnormal 2^-9; e5m2: 2^-16 */
    tilec_sdk_str_printf(o, "%s %s tc_f_e4m3(%s f) { return %s; }\n", q, U8, F,
                         simt_cast(c, "((%s)(%s))", U8, "tc_f_f8(f, 4, 3, 1)"));
    tilec_sdk_str_printf(o, "%s %s tc_f_e5m2(%s f) { return %s; }\n", q, U8, F,
                         simt_cast(c, "((%s)(%s))", U8, "tc_f_f8(f, 5, 2, 0)"));
    tilec_sdk_str_printf(o, "%s %s tc_e4m3_f(%s h) { return tc_f8_f(%s, 4, 3, 1, 0.001953125f); }\n", q, F, U32,
                         simt_cast(c, "((%s)(%s))", U32, "h"));
    tilec_sdk_str_printf(o, "%s %s tc_e5m2_f(%s h) { return tc_f8_f(%s, 5, 2, 0, 1.52587890625e-05f); }\n", q, F, U32,
                         simt_cast(c, "((%s)(%s))", U32, "h"));
}
