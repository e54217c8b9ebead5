/*
 * simt_expr.c — the expression half of the SIMT lowering kit.
 *
 * Types, literals, conversions and tile IR expressions rendered as C-family
 * text in the dialect the backend describes (tilec/simt.h); the expression
 * walk and its operators are the shared emitter of cexpr.c, given this
 * dialect's hooks (simt_cexpr_of).  Plus the helper
 * functions the generated code calls (integer floor division and friends,
 * software float16/bfloat16 conversions, min/max/fmod/sigmoid with the
 * reference interpreter's semantics), emitted into the prelude only when
 * used.  Value representation follows the CPU backend: integers and
 * float32/float64 are their own types; float16 and bfloat16 are computed in
 * float and rounded to their format on every cast and store; bool is
 * stored as an 8-bit integer and computed as int.  Index arithmetic of
 * global tensors is 64-bit, of on-chip buffers 32-bit.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simt_internal.h"
#include "tilec/cexpr.h"

/* printf into the context arena; "0" (and a failure) when out of memory. */
static char *cx_vfmt(void *u, const char *f, va_list ap)
{
    tilec_simt_ctx_t *c = u;
    char *s = tilec_cexpr_vprintf(&c->ar, f, ap);
    if (!s) {
        tilec_simt_fail(c, "out of memory");
        return "0";
    }
    return s;
}

char *simt_fmt(tilec_simt_ctx_t *c, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = cx_vfmt(c, f, ap);
    va_end(ap);
    return s;
}

const char *simt_subst(tilec_simt_ctx_t *c, const char *tpl, int n, const char *const *keys,
                       const char *const *vals)
{
    tilec_sdk_str_t b = {0};
    for (const char *p = tpl; *p; p++) {
        if (*p != '$') {
            tilec_sdk_str_putn(&b, p, 1);
            continue;
        }
        if (p[1] == '$') {
            tilec_sdk_str_putn(&b, "$", 1);
            p++;
            continue;
        }
        int hit = 0;
        for (int i = 0; i < n && !hit; i++) {
            size_t kl = strlen(keys[i]);
            if (strncmp(p + 1, keys[i], kl) == 0) {
                tilec_sdk_str_puts(&b, vals[i]);
                p += kl;
                hit = 1;
            }
        }
        if (!hit)
            tilec_sdk_str_putn(&b, p, 1);
    }
    if (b.oom || !b.s) {
        tilec_sdk_str_free(&b);
        if (b.oom)
            tilec_simt_fail(c, "out of memory");
        return "";
    }
    const char *r = simt_fmt(c, "%s", b.s);
    tilec_sdk_str_free(&b);
    return r;
}

/* ---- the dialect's addressing model and typing ----------------------------------- */

const char *simt_cast(tilec_simt_ctx_t *c, const char *cfmt, const char *tname, const char *v)
{
    if (!c->dl.cast)
        return simt_fmt(c, cfmt, tname, v);
    const char *keys[] = {"t", "v"}, *vals[] = {tname, v};
    return simt_subst(c, c->dl.cast, 2, keys, vals);
}

const char *simt_cond(tilec_simt_ctx_t *c, const char *v)
{
    return c->dl.bool_type ? simt_cast(c, "", c->dl.bool_type, v) : v;
}

const char *simt_flag(tilec_simt_ctx_t *c) { return c->dl.bool_type ? c->dl.bool_type : c->dl.type_name[TILEC_INT32]; }
const char *simt_true(tilec_simt_ctx_t *c) { return c->dl.bool_type ? "true" : "1"; }

const char *simt_elem(tilec_simt_ctx_t *c, const char *name, const char *off)
{
    if (!c->dl.subscript)
        return simt_fmt(c, "%s[%s]", name, off);
    const char *keys[] = {"b", "o"}, *vals[] = {name, off};
    return simt_subst(c, c->dl.subscript, 2, keys, vals);
}

/* ---- types ------------------------------------------------------------------- */

int simt_is_flt(tilec_dtype_t t)
{
    return t == TILEC_FLOAT16 || t == TILEC_BFLOAT16 || t == TILEC_FLOAT32 || t == TILEC_FLOAT64;
}

int simt_is_half(tilec_dtype_t t) { return t == TILEC_FLOAT16 || t == TILEC_BFLOAT16; }

int simt_is_private(const tilec_ir_buffer_t *b)
{
    return b->scope == TILEC_SCOPE_LOCAL || b->scope == TILEC_SCOPE_VAR;
}

static const tilec_simt_half_t *half_of(tilec_simt_ctx_t *c, tilec_dtype_t t)
{
    return t == TILEC_FLOAT16 ? &c->dl.f16 : &c->dl.bf16;
}

int simt_buf_ok(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b)
{
    if (!b || b->id < 0 || b->id >= c->k->nbufs || c->k->bufs[b->id] != b ||
        b->ndim < 0 || b->ndim > TILEC_IR_MAX_DIMS || (int)b->dtype < 0 || b->dtype >= TILEC_DTYPE_COUNT) {
        tilec_simt_fail(c, "reference to a buffer not declared by the kernel");
        return 0;
    }
    if (tilec_dtype_is_4bit(b->dtype) || (tilec_dtype_is_float8(b->dtype) && !c->dl.type_name[TILEC_UINT8])) {
        /* 4-bit (IR 1.3): no SIMT dialect reads them yet */
        tilec_simt_fail(c, "unsupported dtype %s (buffer %s) on the %s dialect", tilec_dtype_name(b->dtype), b->name,
                        c->dl.name);
        return 0;
    }
    return 1;
}

static void note_dtype(tilec_simt_ctx_t *c, tilec_dtype_t t)
{
    if (t == TILEC_FLOAT16)
        c->uses |= TILEC_SIMT_USES_F16;
    else if (t == TILEC_BFLOAT16)
        c->uses |= TILEC_SIMT_USES_BF16;
    else if (t == TILEC_FLOAT64)
        c->uses |= TILEC_SIMT_USES_F64;
    else if (t == TILEC_INT64 || t == TILEC_UINT64)
        c->uses |= TILEC_SIMT_USES_I64;
}

/* Storage type of dtype t in a global tensor (global=1) or on-chip. */
const char *simt_st_type_dt(tilec_simt_ctx_t *c, tilec_dtype_t t, int global)
{
    note_dtype(c, t);
    if (simt_is_half(t)) {
        const tilec_simt_half_t *h = half_of(c, t);
        if (h->mode == TILEC_SIMT_HALF_NATIVE || (h->mode == TILEC_SIMT_HALF_FUNCS && global))
            return h->half_type;
        return c->dl.type_name[TILEC_UINT16];
    }
    if (tilec_dtype_is_float8(t))
        return c->dl.type_name[TILEC_UINT8]; /* bits (simt_f8.c) */
    return c->dl.type_name[t];
}

const char *simt_st_type(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b)
{
    return simt_st_type_dt(c, b->dtype, b->scope == TILEC_SCOPE_GLOBAL);
}

const char *tilec_simt_ctype(tilec_simt_ctx_t *c, tilec_dtype_t t)
{
    if ((int)t < 0 || t >= TILEC_DTYPE_COUNT)
        return c->dl.type_name[TILEC_INT32];
    note_dtype(c, t);
    if (t == TILEC_BOOL)
        return c->dl.type_name[TILEC_INT32];
    if (simt_is_half(t) || tilec_dtype_is_float8(t))
        return c->dl.type_name[TILEC_FLOAT32];
    return c->dl.type_name[t];
}

const char *simt_idx_type(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b)
{
    return c->dl.type_name[b->scope == TILEC_SCOPE_GLOBAL && !c->dl.index32 ? TILEC_INT64 : TILEC_INT32];
}

/* ---- literals --------------------------------------------------------------------- */

const char *simt_int_lit(tilec_simt_ctx_t *c, int64_t v, tilec_dtype_t t)
{
    if (t == TILEC_UINT64)
        return simt_cast(c, "((%s)%s)", c->dl.type_name[t], simt_fmt(c, "%" PRIu64 "%s", (uint64_t)v, c->dl.uint64_suffix));
    if (t == TILEC_BOOL)
        return v ? "1" : "0";
    const char *ct = tilec_simt_ctype(c, t);
    if (v == INT64_MIN)
        return simt_cast(c, "((%s)%s)", ct, simt_fmt(c, "(-9223372036854775807%s - 1%s)", c->dl.int64_suffix,
                                                     c->dl.int64_suffix));
    if (v >= INT32_MIN && v <= INT32_MAX)
        return t == TILEC_INT32 ? simt_fmt(c, v < 0 ? "(%" PRId64 ")" : "%" PRId64, v)
                                : simt_cast(c, "((%s)%s)", ct, simt_fmt(c, "%" PRId64, v));
    return simt_cast(c, "((%s)%s)", ct, simt_fmt(c, "%" PRId64 "%s", v, c->dl.int64_suffix));
}

static const char *flt_lit(tilec_simt_ctx_t *c, double v, tilec_dtype_t t)
{
    int dbl = t == TILEC_FLOAT64;
    if (t == TILEC_FLOAT16)
        v = tilec_f16_to_f32(tilec_f64_to_f16(v));
    else if (t == TILEC_BFLOAT16)
        v = tilec_bf16_to_f32(tilec_f64_to_bf16(v));
    else if (!dbl)
        v = (float)v;
    if (isnan(v) || isinf(v)) {
        if (dbl) {
            if (!c->dl.bits_as_f64) {
                tilec_simt_fail(c, "dialect %s lacks bits_as_f64 (needed for a double inf/nan)", c->dl.name);
                return "0";
            }
            uint64_t bits = isnan(v) ? 0x7ff8000000000000ull : v > 0 ? 0x7ff0000000000000ull : 0xfff0000000000000ull;
            return simt_fmt(c, "%s(%s)", c->dl.bits_as_f64,
                            simt_cast(c, "(%s)%s", c->dl.type_name[TILEC_UINT64],
                                      simt_fmt(c, "0x%" PRIx64 "%s", bits, c->dl.uint64_suffix)));
        }
        uint32_t bits = isnan(v) ? 0x7fc00000u : v > 0 ? 0x7f800000u : 0xff800000u;
        return simt_fmt(c, "%s(%s)", c->dl.bits_as_f32,
                        simt_cast(c, "(%s)%s", c->dl.type_name[TILEC_UINT32], simt_fmt(c, "0x%" PRIx32 "u", bits)));
    }
    char buf[64];
    snprintf(buf, sizeof buf, dbl ? "%.17g" : "%.9g", v);
    if (!strpbrk(buf, ".eEn"))
        strcat(buf, ".0");
    return simt_fmt(c, "(%s%s)", buf, dbl ? (c->dl.double_suffix ? c->dl.double_suffix : "") : "f");
}

const char *simt_zero(tilec_simt_ctx_t *c, tilec_dtype_t t)
{
    if (simt_is_flt(t))
        return t == TILEC_FLOAT64 ? "0.0" : "0.0f";
    return simt_cast(c, "((%s)%s)", tilec_simt_ctype(c, t), "0");
}

/* ---- 16-bit floats ------------------------------------------------------------------ */

/* float -> bits (storage of a BITS/on-chip buffer). */
const char *simt_half_bits(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *v)
{
    const tilec_simt_half_t *h = half_of(c, t);
    if (h->mode == TILEC_SIMT_HALF_NATIVE) {
        /* bit pattern of a native half value: go through software anyway */
    }
    c->helpers |= t == TILEC_FLOAT16 ? SH_F16 : SH_BF16;
    return simt_fmt(c, "%s(%s)", t == TILEC_FLOAT16 ? "tc_f2h" : "tc_f2b", v);
}

const char *simt_half_from_bits(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *bits)
{
    c->helpers |= t == TILEC_FLOAT16 ? SH_F16 : SH_BF16;
    return simt_fmt(c, "%s(%s)", t == TILEC_FLOAT16 ? "tc_h2f" : "tc_b2f", bits);
}

/* Round a float value to the 16-bit format (result still a float). */
static const char *half_round(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *v)
{
    const tilec_simt_half_t *h = half_of(c, t);
    if (h->mode == TILEC_SIMT_HALF_NATIVE && h->half_to_float && h->half_from_float)
        return simt_fmt(c, "%s(%s(%s))", h->half_to_float, h->half_from_float, v);
    c->helpers |= t == TILEC_FLOAT16 ? SH_F16 : SH_BF16;
    return simt_fmt(c, "%s(%s)", t == TILEC_FLOAT16 ? "tc_rh" : "tc_rb", v);
}

/* ---- conversions ------------------------------------------------------------------------- */

const char *tilec_simt_convert(tilec_simt_ctx_t *c, const char *v, tilec_dtype_t s, tilec_dtype_t t)
{
    if (s == t)
        return v;
    switch (t) {
    case TILEC_BOOL: return simt_cast(c, "((%s)(%s))", c->dl.type_name[TILEC_INT32], simt_fmt(c, "(%s) != 0", v));
    case TILEC_FLOAT16:
    case TILEC_BFLOAT16:
        if (s == TILEC_FLOAT32 || simt_is_half(s))
            return half_round(c, t, v);
        return half_round(c, t, simt_cast(c, "((%s)(%s))", c->dl.type_name[TILEC_FLOAT32], v));
    case TILEC_FLOAT8_E4M3FN:
    case TILEC_FLOAT8_E5M2:
        if (s == TILEC_FLOAT32 || simt_is_half(s) || tilec_dtype_is_float8(s))
            return simt_f8_round(c, t, v);
        return simt_f8_round(c, t, simt_cast(c, "((%s)(%s))", c->dl.type_name[TILEC_FLOAT32], v));
    case TILEC_FLOAT32:
        if (simt_is_half(s) || tilec_dtype_is_float8(s))
            return v;
        return simt_cast(c, "((%s)(%s))", c->dl.type_name[TILEC_FLOAT32], v);
    default:
        return simt_cast(c, "((%s)(%s))", tilec_simt_ctype(c, t), v);
    }
}

/* The pointer a FUNCS-mode half_load/half_store gets: a global tensor is
 * already a half pointer; an on-chip buffer holds 16-bit patterns and is
 * reinterpreted (pointers to half are legal without cl_khr_fp16), so the
 * device's conversion instructions are used there too. */
static const char *half_ptr(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const tilec_simt_half_t *h)
{
    if (b->scope == TILEC_SCOPE_GLOBAL)
        return simt_fmt(c, "b%d", b->id);
    const char *q = simt_is_private(b) || (c->lowered && simt_place(c, b) == SIMT_P_REGS) ? c->dl.private_qual
                                                                                          : c->dl.shared_ptr_qual;
    return simt_fmt(c, "((%s%s%s *)b%d)", q, *q ? " " : "", h->half_type, b->id);
}

const char *tilec_simt_load(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off)
{
    const char *nm = simt_fmt(c, "b%d", b->id);
    tilec_dtype_t t = b->dtype;
    note_dtype(c, t);
    if (c->lowered)
        off = simt_lowered_phys(c, b, off);
    const char *reg = c->lowered && simt_place(c, b) == SIMT_P_REGS ? simt_regs_ref(c, b, off, NULL) : NULL;
    if (reg)
        return t == TILEC_BOOL ? simt_fmt(c, "((%s)(%s != 0))", c->dl.type_name[TILEC_INT32], reg) : reg;
    if (simt_is_half(t)) {
        const tilec_simt_half_t *h = half_of(c, t);
        if (h->mode == TILEC_SIMT_HALF_NATIVE)
            return h->half_to_float ? simt_fmt(c, "%s(%s)", h->half_to_float, simt_elem(c, nm, off))
                                    : simt_cast(c, "((%s)%s)", c->dl.type_name[TILEC_FLOAT32], simt_elem(c, nm, off));
        if (h->mode == TILEC_SIMT_HALF_FUNCS) {
            const char *keys[] = {"p", "o"}, *vals[] = {half_ptr(c, b, h), off};
            return simt_fmt(c, "(%s)", simt_subst(c, h->half_load, 2, keys, vals));
        }
        return simt_half_from_bits(c, t, simt_elem(c, nm, off));
    }
    if (tilec_dtype_is_float8(t))
        return simt_f8_from_bits(c, t, simt_elem(c, nm, off));
    if (t == TILEC_BOOL)
        return simt_cast(c, "((%s)(%s))", c->dl.type_name[TILEC_INT32], simt_fmt(c, "%s != 0", simt_elem(c, nm, off)));
    return simt_elem(c, nm, off);
}

const char *tilec_simt_store(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off, const char *v)
{
    const char *nm = simt_fmt(c, "b%d", b->id);
    tilec_dtype_t t = b->dtype;
    if (c->lowered)
        off = simt_lowered_phys(c, b, off);
    if (c->lowered && simt_place(c, b) == SIMT_P_REGS && !simt_is_half(t) && !tilec_dtype_is_float8(t) &&
        c->bi[b->id].rm->scalar)
        return simt_regs_ref(c, b, off,
                             t == TILEC_BOOL ? simt_fmt(c, "(%s)((%s) != 0)", c->dl.type_name[TILEC_BOOL], v) : v);
    if (simt_is_half(t)) {
        const tilec_simt_half_t *h = half_of(c, t);
        if (h->mode == TILEC_SIMT_HALF_NATIVE)
            return h->half_from_float ? simt_fmt(c, "%s = %s(%s);", simt_elem(c, nm, off), h->half_from_float, v)
                                      : simt_fmt(c, "%s = %s;", simt_elem(c, nm, off),
                                                 simt_cast(c, "(%s)(%s)", h->half_type, v));
        if (h->mode == TILEC_SIMT_HALF_FUNCS) {
            const char *keys[] = {"p", "o", "v"}, *vals[] = {half_ptr(c, b, h), off, v};
            const char *s = simt_subst(c, h->half_store, 3, keys, vals);
            size_t n = strlen(s);
            return n && s[n - 1] == ';' ? s : simt_fmt(c, "%s;", s);
        }
        return simt_fmt(c, "%s = %s;", simt_elem(c, nm, off), simt_half_bits(c, t, v));
    }
    if (tilec_dtype_is_float8(t))
        return simt_fmt(c, "%s = %s;", simt_elem(c, nm, off), simt_f8_bits(c, t, v));
    if (t == TILEC_BOOL)
        return simt_fmt(c, "%s = %s;", simt_elem(c, nm, off),
                        simt_cast(c, "(%s)(%s)", c->dl.type_name[TILEC_BOOL], simt_fmt(c, "(%s) != 0", v)));
    return simt_fmt(c, "%s = %s;", simt_elem(c, nm, off), v);
}

const char *tilec_simt_elem(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off)
{
    note_dtype(c, b->dtype);
    if (c->lowered)
        off = simt_lowered_phys(c, b, off);
    const char *reg = c->lowered && simt_place(c, b) == SIMT_P_REGS ? simt_regs_ref(c, b, off, NULL) : NULL;
    return reg ? reg : simt_elem(c, simt_fmt(c, "b%d", b->id), off);
}

/* ---- buffers ------------------------------------------------------------------------------- */

const char *tilec_simt_buf_name(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b)
{
    return simt_fmt(c, "b%d", b ? b->id : -1);
}

const char *tilec_simt_dim(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, int d)
{
    int64_t v;
    const char *it = simt_idx_type(c, b);
    if (d < 0 || d >= b->ndim || !b->shape || !b->shape[d]) {
        tilec_simt_fail(c, "buffer dimension out of range");
        return "1";
    }
    if (tilec_ir_is_const_int(b->shape[d], &v) && c->dl.index32 && (v > INT32_MAX || v < INT32_MIN)) {
        tilec_simt_fail(c, "dimension %d of '%s' (%" PRId64 ") exceeds the %s dialect's 32-bit indices", d,
                        b->name ? b->name : "?", v, c->dl.name);
        return "1";
    }
    if (tilec_ir_is_const_int(b->shape[d], &v))
        return b->scope == TILEC_SCOPE_GLOBAL && (v > INT32_MAX || v < INT32_MIN)
                   ? simt_cast(c, "((%s)%s)", it, simt_fmt(c, "%" PRId64 "%s", v, c->dl.int64_suffix))
                   : simt_fmt(c, "%" PRId64, v);
    return simt_cast(c, "((%s)(%s))", it, tilec_simt_expr(c, b->shape[d]));
}

const char *tilec_simt_offset(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *ix)
{
    if (!simt_buf_ok(c, b))
        return "0";
    if (b->ndim == 0)
        return "0";
    if (!ix) {
        tilec_simt_fail(c, "buffer access without indices");
        return "0";
    }
    if (c->lowered && simt_place(c, b) == SIMT_P_REGS)
        return simt_regs_offset(c, b, ix);
    return simt_offset_typed(c, b, ix, simt_idx_type(c, b));
}

/* tilec_simt_offset of a buffer in memory, its terms in index type it */
const char *simt_offset_typed(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *ix, const char *it)
{
    if (!simt_buf_ok(c, b) || b->ndim == 0 || !ix)
        return tilec_simt_offset(c, b, ix);
    const char *fo = simt_offset_folded(c, b, ix, it);
    if (fo)
        return fo;
    const char *o = simt_cast(c, "(%s)(%s)", it, tilec_simt_expr(c, ix[0]));
    for (int d = 1; d < b->ndim; d++)
        o = simt_fmt(c, "(%s * %s + %s)", o, tilec_simt_dim(c, b, d), simt_cast(c, "(%s)(%s)", it, tilec_simt_expr(c, ix[d])));
    return o;
}

/* ---- operators and expressions: the shared C-family emitter (tilec/cexpr.h) ------------------- */

static void cx_fail(void *u, const char *msg) { tilec_simt_fail(u, "%s", msg); }
static const char *cx_ctype(void *u, tilec_dtype_t t) { return tilec_simt_ctype(u, t); }
static const char *cx_int_lit(void *u, int64_t v, tilec_dtype_t t) { return simt_int_lit(u, v, t); }
static const char *cx_flt_lit(void *u, double v, tilec_dtype_t t) { return flt_lit(u, v, t); }

static const char *cx_load(void *u, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    tilec_simt_ctx_t *c = u;
    if (!simt_buf_ok(c, b))
        return NULL;
    const char *off = tilec_simt_offset(c, b, idx);
    return tilec_simt_load(c, b, off);
}

static const char *cx_conv(void *u, const char *v, tilec_dtype_t s, tilec_dtype_t t)
{
    return tilec_simt_convert(u, v, s, t);
}

static const char *cx_cast(void *u, const char *tname, const char *v) { return simt_cast(u, "", tname, v); }

/* bit cast (tile IR 1.4): v's bits as the unsigned integer of their width
 * (through the dialect's float/bits functions and the kit's 16-bit and
 * float8 encoders), read as t */
static const char *cx_bitcast(void *u, const char *v, tilec_dtype_t s, tilec_dtype_t t)
{
    tilec_simt_ctx_t *c = u;
    unsigned w = tilec_dtype_bits(s);
    tilec_dtype_t ut = w == 8 ? TILEC_UINT8 : w == 16 ? TILEC_UINT16 : w == 32 ? TILEC_UINT32 : TILEC_UINT64;
    const char *bits;
    if ((s == TILEC_FLOAT64 || t == TILEC_FLOAT64) && (!c->dl.f64_as_bits || !c->dl.bits_as_f64)) {
        tilec_simt_fail(c, "dialect %s lacks f64_as_bits/bits_as_f64 (a bit cast of a float64)", c->dl.name);
        return "0";
    }
    if (simt_is_half(s))
        bits = tilec_simt_convert(c, simt_half_bits(c, s, v), TILEC_UINT32, ut);
    else if (tilec_dtype_is_float8(s))
        bits = tilec_simt_convert(c, simt_f8_bits(c, s, v), TILEC_UINT32, ut);
    else if (s == TILEC_FLOAT32)
        bits = simt_fmt(c, "%s(%s)", c->dl.f32_as_bits, v);
    else if (s == TILEC_FLOAT64)
        bits = simt_fmt(c, "%s(%s)", c->dl.f64_as_bits, v);
    else
        bits = tilec_simt_convert(c, v, s, ut);
    if (simt_is_half(t))
        return simt_half_from_bits(c, t, tilec_simt_convert(c, bits, ut, TILEC_UINT32));
    if (tilec_dtype_is_float8(t))
        return simt_f8_from_bits(c, t, tilec_simt_convert(c, bits, ut, TILEC_UINT32));
    if (t == TILEC_FLOAT32)
        return simt_fmt(c, "%s(%s)", c->dl.bits_as_f32, bits);
    if (t == TILEC_FLOAT64)
        return simt_fmt(c, "%s(%s)", c->dl.bits_as_f64, bits);
    return tilec_simt_convert(c, bits, ut, t);
}
static const char *cx_math_name(void *u, const char *base, int dbl)
{
    tilec_simt_ctx_t *c = u;
    return c->dl.math_name ? c->dl.math_name(c->dl.user, base, dbl) : NULL;
}

static void cx_use_flt(void *u, int dbl) { ((tilec_simt_ctx_t *)u)->helpers |= dbl ? SH_DBL : SH_FLT; }
static void cx_use_int(void *u, tilec_dtype_t t) { ((tilec_simt_ctx_t *)u)->int_helpers |= 1u << t; }

static int cx_var_range(void *u, const tilec_ir_var_t *v, int64_t *lo, int64_t *hi)
{
    return simt_var_range(u, v, lo, hi);
}

tilec_cexpr_t simt_cexpr_of(tilec_simt_ctx_t *c)
{
    tilec_cexpr_t x = {
        .u = c, .k = c->k, .failed = &c->failed, .depth = &c->depth, .max_depth = SIMT_MAX_DEPTH,
        .vfmt = cx_vfmt, .fail = cx_fail, .ctype = cx_ctype, .int_lit = cx_int_lit, .flt_lit = cx_flt_lit,
        .load = cx_load, .conv = cx_conv, .use_flt_helpers = cx_use_flt, .use_int_helpers = cx_use_int,
        .uint32_name = c->dl.type_name[TILEC_UINT32], .uint64_name = c->dl.type_name[TILEC_UINT64],
        .float32_name = c->dl.type_name[TILEC_FLOAT32], .float_lit_via = TILEC_FLOAT32,
        .math_generic = c->dl.math_generic, .has_rsqrt = c->dl.has_rsqrt,
        .msg_missing = "missing or ill-typed expression", .msg_bad_dtype = "missing or ill-typed expression",
        .cast = c->dl.cast ? cx_cast : NULL, .bool_name = c->dl.cast ? c->dl.bool_type : NULL,
        .math_name = c->dl.math_name ? cx_math_name : NULL, .bitcast = cx_bitcast,
        .var_range = cx_var_range,
    };
    return x;
}

static const char *mathf(tilec_simt_ctx_t *c, const char *base, int dbl)
{
    tilec_cexpr_t x = simt_cexpr_of(c);
    return tilec_cexpr_math(&x, base, dbl);
}

const char *simt_minmax(tilec_simt_ctx_t *c, int is_max, tilec_dtype_t t, const char *a, const char *b)
{
    tilec_cexpr_t x = simt_cexpr_of(c);
    return tilec_cexpr_minmax(&x, is_max, t, a, b);
}

const char *simt_abs(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *a)
{
    tilec_cexpr_t x = simt_cexpr_of(c);
    return tilec_cexpr_abs(&x, t, a);
}

const char *simt_add(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *a, const char *b)
{
    tilec_cexpr_t x = simt_cexpr_of(c);
    return tilec_cexpr_arith(&x, "+", t, a, b);
}

const char *tilec_simt_expr(tilec_simt_ctx_t *c, const tilec_ir_expr_t *e)
{
    tilec_cexpr_t x = simt_cexpr_of(c);
    return tilec_cexpr_emit(&x, e);
}

/* ---- prelude helpers -------------------------------------------------------------------------- */

static tilec_dtype_t unsigned_twin(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: return TILEC_UINT8;
    case TILEC_INT16: return TILEC_UINT16;
    case TILEC_INT32: return TILEC_UINT32;
    case TILEC_INT64: return TILEC_UINT64;
    default: return t;
    }
}

/* tc_min/tc_max/tc_fmod/tc_sigmoid for float (suffix f) or double (d):
 * fmin/fmax where the dialect has them natively, else a compare and
 * select; fmod with the sign of the divisor (Python's %). */
static void emit_float_helpers(tilec_simt_ctx_t *c, tilec_sdk_str_t *o, int dbl)
{
    const char *q = c->dl.func_qual, *T = c->dl.type_name[dbl ? TILEC_FLOAT64 : TILEC_FLOAT32];
    const char *sfx = dbl ? "d" : "f", *lit = dbl ? "" : "f";
    if (c->dl.native_fminmax) {
        tilec_sdk_str_printf(o, "%s %s tc_min%s(%s a, %s b) { return %s(a, b); }\n", q, T, sfx, T, T, mathf(c, "fmin", dbl));
        tilec_sdk_str_printf(o, "%s %s tc_max%s(%s a, %s b) { return %s(a, b); }\n", q, T, sfx, T, T, mathf(c, "fmax", dbl));
    } else {
        tilec_sdk_str_printf(o, "%s %s tc_min%s(%s a, %s b) { return a < b ? a : b; }\n", q, T, sfx, T, T);
        tilec_sdk_str_printf(o, "%s %s tc_max%s(%s a, %s b) { return a > b ? a : b; }\n", q, T, sfx, T, T);
    }
    tilec_sdk_str_printf(o,
                         "%s %s tc_fmod%s(%s a, %s b) { %s r = %s(a, b); if (r != 0.0%s && ((r < 0.0%s) != (b < 0.0%s))) r += b; return r; }\n",
                         q, T, sfx, T, T, T, mathf(c, "fmod", dbl), lit, lit, lit);
    tilec_sdk_str_printf(o, "%s %s tc_sigmoid%s(%s x) { return 1.0%s / (1.0%s + %s(-x)); }\n", q, T, sfx, T, lit, lit,
                         mathf(c, "exp", dbl));
}

void simt_emit_helpers(tilec_simt_ctx_t *c, tilec_sdk_str_t *o)
{
    const char *q = c->dl.func_qual;
    const char *F = c->dl.type_name[TILEC_FLOAT32];
    const char *U32 = c->dl.type_name[TILEC_UINT32], *U16 = c->dl.type_name[TILEC_UINT16];
    /* a strict dialect (bool_type) needs comparisons where C tests an integer */
    int strict = c->dl.bool_type != NULL;
    if (c->helpers & SH_FLT)
        emit_float_helpers(c, o, 0);
    if (c->helpers & SH_DBL)
        emit_float_helpers(c, o, 1);
    const char *ab = c->dl.f32_as_bits, *ba = c->dl.bits_as_f32;
    const char *h_odd = strict ? "(h & 1u) != 0u" : "(h & 1u)";
    if (c->helpers & SH_F16) {
        /* float -> float16 bits, round to nearest even, NaN kept quiet */
        tilec_sdk_str_printf(o,
            "%s %s tc_f2h(%s f) {\n"
            "  %s x = %s(f); %s s = (x >> 16) & 0x8000u; %s a = x & 0x7fffffffu;\n"
            "  if (a >= 0x7f800000u) return %s;\n"
            "  if (a >= 0x477ff000u) return %s;\n"
            "  if (a < 0x38800000u) {\n"
            "    if (a < 0x33000000u) return %s;\n"
            "    %s e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, sh = 126u - e;\n"
            "    %s h = m >> sh, rem = m & ((1u << sh) - 1u), hf = 1u << (sh - 1u);\n"
            "    if (rem > hf || (rem == hf && %s)) h++;\n"
            "    return %s;\n"
            "  }\n"
            "  %s h = (a - 0x38000000u) >> 13, rem = a & 0x1fffu;\n"
            "  if (rem > 0x1000u || (rem == 0x1000u && %s)) h++;\n"
            "  return %s;\n"
            "}\n",
            q, U16, F, U32, ab, U32, U32, simt_cast(c, "(%s)%s", U16, "(s | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u))"),
            simt_cast(c, "(%s)%s", U16, "(s | 0x7c00u)"), simt_cast(c, "(%s)%s", U16, "s"), U32, U32, h_odd,
            simt_cast(c, "(%s)%s", U16, "(s | h)"), U32, h_odd, simt_cast(c, "(%s)%s", U16, "(s | h)"));
        tilec_sdk_str_printf(o,
            "%s %s tc_h2f(%s h) {\n"
            "  %s s = (%s & 0x8000u) << 16, e = (%s >> 10) & 0x1fu, m = %s & 0x3ffu;\n"
            "  if (e == 0u) { %s f = %s * 5.9604644775390625e-8f; return %s ? -f : f; }\n"
            "  if (e == 31u) return %s(s | 0x7f800000u | (m << 13));\n"
            "  return %s(s | ((e + 112u) << 23) | (m << 13));\n"
            "}\n",
            q, F, U16, U32, simt_cast(c, "(%s)%s", U32, "h"), simt_cast(c, "(%s)%s", U32, "h"),
            simt_cast(c, "(%s)%s", U32, "h"), F, simt_cast(c, "(%s)%s", F, "m"), strict ? "s != 0u" : "s", ba, ba);
        tilec_sdk_str_printf(o, "%s %s tc_rh(%s f) { return tc_h2f(tc_f2h(f)); }\n", q, F, F);
    }
    if (c->helpers & SH_F8)
        simt_f8_helpers(c, o);
    if (c->helpers & SH_BF16) {
        tilec_sdk_str_printf(o,
            "%s %s tc_f2b(%s f) {\n"
            "  %s x = %s(f);\n"
            "  if ((x & 0x7fffffffu) > 0x7f800000u) return %s;\n"
            "  x += 0x7fffu + ((x >> 16) & 1u);\n"
            "  return %s;\n"
            "}\n",
            q, U16, F, U32, ab, simt_cast(c, "(%s)%s", U16, "((x >> 16) | 0x40u)"), simt_cast(c, "(%s)%s", U16, "(x >> 16)"));
        tilec_sdk_str_printf(o, "%s %s tc_b2f(%s h) { return %s(%s << 16); }\n", q, F, U16, ba,
                             simt_cast(c, "(%s)%s", U32, "h"));
        tilec_sdk_str_printf(o, "%s %s tc_rb(%s f) { return tc_b2f(tc_f2b(f)); }\n", q, F, F);
    }
    for (int t = 0; t < TILEC_DTYPE_COUNT; t++) {
        if (!(c->int_helpers & (1u << t)))
            continue;
        const char *T = c->dl.type_name[t], *U = c->dl.type_name[unsigned_twin((tilec_dtype_t)t)];
        const char *s = tilec_cexpr_isfx((tilec_dtype_t)t);
        int sg = tilec_dtype_is_signed((tilec_dtype_t)t);
        const char *m1 = simt_cast(c, "(%s)%s", T, "-1");
        const char *neg = simt_cast(c, "(%s)%s", T, simt_fmt(c, "(%s - %s)", simt_cast(c, "(%s)%s", U, "0"),
                                                            simt_cast(c, "(%s)%s", U, "a")));
        /* C's truncated remainder; GLSL leaves % of negative operands
         * undefined (NVIDIA's driver differs from C), so a dialect that
         * is not C (cast template) spells it through the division */
        const char *rem = sg && c->dl.cast ? "(a - (a / b) * b)" : "(a % b)";
        /* division by zero gives 0; MIN / -1 wraps (never traps) */
        tilec_sdk_str_printf(o, "%s %s tc_div_%s(%s a, %s b) { if (b == 0) return 0;%s return %s; }\n",
                        q, T, s, T, T, sg ? simt_fmt(c, " if (b == %s) return %s;", m1, neg) : "",
                        simt_cast(c, "(%s)%s", T, "(a / b)"));
        tilec_sdk_str_printf(o, "%s %s tc_fdiv_%s(%s a, %s b) { if (b == 0) return 0;%s %s qq = %s;%s return qq; }\n",
                        q, T, s, T, T, sg ? simt_fmt(c, " if (b == %s) return %s;", m1, neg) : "", T,
                        simt_cast(c, "(%s)%s", T, "(a / b)"),
                        sg ? simt_fmt(c, " if (%s != 0 && ((a < 0) != (b < 0))) qq = %s;", simt_cast(c, "(%s)%s", T, rem),
                                      simt_cast(c, "(%s)%s", T, "(qq - 1)"))
                           : "");
        tilec_sdk_str_printf(o, "%s %s tc_fmod_%s(%s a, %s b) { if (b == 0%s) return 0; %s r = %s;%s return r; }\n",
                        q, T, s, T, T, sg ? simt_fmt(c, " || b == %s", m1) : "", T,
                        simt_cast(c, "(%s)%s", T, rem),
                        sg ? simt_fmt(c, " if (r != 0 && ((r < 0) != (b < 0))) r = %s;", simt_cast(c, "(%s)%s", T, "(r + b)")) : "");
        tilec_sdk_str_printf(o, "%s %s tc_min_%s(%s a, %s b) { return a < b ? a : b; }\n", q, T, s, T, T);
        tilec_sdk_str_printf(o, "%s %s tc_max_%s(%s a, %s b) { return a > b ? a : b; }\n", q, T, s, T, T);
        tilec_sdk_str_printf(o, "%s %s tc_abs_%s(%s a) { return %s; }\n", q, T, s, T,
                        sg ? simt_fmt(c, "a < 0 ? %s : a", neg) : "a");
        tilec_sdk_str_printf(o,
            "%s %s tc_pow_%s(%s a, %s e) {%s %s r = 1, x = %s, n = %s; while (%s) { if (%s) r = %s; x = %s; n >>= 1; } return %s; }\n",
            q, T, s, T, T,
            sg ? simt_fmt(c, " if (e < 0) return %s;",
                          simt_cast(c, "(%s)%s", T, simt_fmt(c, "(a == 1 ? 1 : a == %s ? (%s ? -1 : 1) : 0)", m1,
                                                             strict ? simt_fmt(c, "(%s & 1u) != 0u", simt_cast(c, "", U, "e"))
                                                                    : simt_fmt(c, "((%s)e & 1u)", U))))
               : "",
            U, simt_cast(c, "(%s)%s", U, "a"), simt_cast(c, "(%s)%s", U, "e"), strict ? "n != 0u" : "n",
            strict ? "(n & 1u) != 0u" : "n & 1u", simt_cast(c, "(%s)%s", U, "(r * x)"), simt_cast(c, "(%s)%s", U, "(x * x)"),
            simt_cast(c, "(%s)%s", T, "r"));
    }
}
