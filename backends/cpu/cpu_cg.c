/*
 * cpu_cg.c — the C generator's building blocks: error and text helpers,
 * the C types of tile-IR dtypes, conversions between storage and compute
 * representations, literals, buffer offsets, and scalar expressions
 * (written by the SDK's shared C-family emitter, tilec/cexpr.h, through
 * the plain-C hooks below).  Used by every file that writes part of a
 * kernel's C (cpu_codegen.c, cpu_tileops.c, cpu_gemm.c, cpu_rows.c).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cpu_cg.h"
#include "tilec/cexpr.h"

/* ---- generator state (cpu_cg.h) -------------------------------------------- */

void cg_fail(cg_t *g, const char *fmt, ...)
{
    if (g->failed)
        return;
    g->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->err, g->errlen, fmt, ap);
    va_end(ap);
}

/* printf into the arena: the building block of expression strings. */
static char *vfmt(void *u, const char *f, va_list ap)
{
    cg_t *g = u;
    char *s = tilec_cexpr_vprintf(&g->ar, f, ap);
    if (!s) {
        cg_fail(g, "out of memory");
        return "0";
    }
    return s;
}

char *cg_fmt(cg_t *g, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = vfmt(g, f, ap);
    va_end(ap);
    return s;
}

void cg_line(cg_t *g, const char *f, ...)
{
    for (int i = 0; i < g->ind; i++)
        tilec_sdk_str_putn(g->o, "  ", 2);
    va_list ap;
    va_start(ap, f);
    tilec_sdk_str_vprintf(g->o, f, ap);
    va_end(ap);
    tilec_sdk_str_putn(g->o, "\n", 1);
}

int cg_newtmp(cg_t *g) { return g->tmp++; }

/* ---- types ----------------------------------------------------------------- */

int cg_valid_dtype(int t) { return t >= 0 && t < TILEC_DTYPE_COUNT; }

const char *cg_st_type(tilec_dtype_t t) /* storage */
{
    switch (t) {
    case TILEC_BOOL: return "uint8_t";
    case TILEC_INT8: return "int8_t";
    case TILEC_INT16: return "int16_t";
    case TILEC_INT32: return "int32_t";
    case TILEC_INT64: return "int64_t";
    case TILEC_UINT8: return "uint8_t";
    case TILEC_UINT16: return "uint16_t";
    case TILEC_UINT32: return "uint32_t";
    case TILEC_UINT64: return "uint64_t";
    case TILEC_FLOAT16: return "uint16_t";
    case TILEC_BFLOAT16: return "uint16_t";
    case TILEC_FLOAT32: return "float";
    case TILEC_FLOAT64: return "double";
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: return "uint8_t";
    /* 4-bit (1.3): one per byte, int4 sign-extended, float4 as its code
     * (cpu_plugin.c unpacks kernel tensors around a launch) */
    case TILEC_INT4: return "int8_t";
    case TILEC_UINT4: case TILEC_FLOAT4_E2M1FN: return "uint8_t";
    default: return "int";
    }
}

const char *cg_ct_type(tilec_dtype_t t) /* compute */
{
    switch (t) {
    case TILEC_BOOL: return "int";
    case TILEC_FLOAT16:
    case TILEC_BFLOAT16:
    case TILEC_FLOAT8_E4M3FN:
    case TILEC_FLOAT8_E5M2:
    case TILEC_FLOAT4_E2M1FN: return "float";
    default: return cg_st_type(t);
    }
}

size_t cg_st_size(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_BOOL: case TILEC_INT8: case TILEC_UINT8: case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: return 1;
    case TILEC_INT4: case TILEC_UINT4: case TILEC_FLOAT4_E2M1FN: return 1;
    case TILEC_INT16: case TILEC_UINT16: case TILEC_FLOAT16: case TILEC_BFLOAT16: return 2;
    case TILEC_INT32: case TILEC_UINT32: case TILEC_FLOAT32: return 4;
    default: return 8;
    }
}

/* 8-bit floats and float4_e2m1fn: compute in float, store one byte (a
 * code) through the prelude's converters */
static int small_flt(tilec_dtype_t t) { return tilec_dtype_is_float8(t) || t == TILEC_FLOAT4_E2M1FN; }
static const char *f8_from(tilec_dtype_t t)
{
    return t == TILEC_FLOAT8_E4M3FN ? "tc_e42f" : t == TILEC_FLOAT8_E5M2 ? "tc_e52f" : "tc_m42f";
}
static const char *f8_to(tilec_dtype_t t)
{
    return t == TILEC_FLOAT8_E4M3FN ? "tc_d2e4" : t == TILEC_FLOAT8_E5M2 ? "tc_d2e5" : "tc_d2m4";
}

/* ---- conversions between representations ------------------------------------ */

/* Value v of compute type for dtype s, as a value of dtype t (rounded to t). */
static tilec_cexpr_t cx_of(cg_t *g);

const char *cg_conv(cg_t *g, const char *v, tilec_dtype_t s, tilec_dtype_t t)
{
    if (s == t)
        return v;
    switch (t) {
    case TILEC_BOOL: return cg_fmt(g, "((%s) != 0)", v);
    case TILEC_FLOAT16:
        if (s == TILEC_FLOAT64 || !cg_is_flt(s))
            return cg_fmt(g, "tc_h2f(tc_d2h((double)(%s)))", v);
        return cg_fmt(g, "tc_rh(%s)", v);
    case TILEC_BFLOAT16:
        if (s == TILEC_FLOAT64 || !cg_is_flt(s))
            return cg_fmt(g, "tc_b2f(tc_d2b((double)(%s)))", v);
        return cg_fmt(g, "tc_rb(%s)", v);
    case TILEC_FLOAT32:
        if (s == TILEC_FLOAT16 || s == TILEC_BFLOAT16 || small_flt(s))
            return v; /* already a float holding a representable value */
        return cg_fmt(g, "((float)(%s))", v);
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: case TILEC_FLOAT4_E2M1FN:
        return cg_fmt(g, "%s(%s((double)(%s)))", f8_from(t), f8_to(t), v);
    case TILEC_INT4: case TILEC_UINT4: { /* wrapped to 4 bits, as ir_eval's conversions */
        const tilec_cexpr_t x = cx_of(g);
        return tilec_cexpr_wrap4(&x, t, cg_fmt(g, "((int64_t)(%s))", v));
    }
    default:
        return cg_fmt(g, "((%s)(%s))", cg_ct_type(t), v);
    }
}

/* Value v of compute type for dtype s, converted to t's storage type. */
const char *cg_to_store(cg_t *g, const char *v, tilec_dtype_t s, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_FLOAT16:
        if (s == TILEC_FLOAT64 || !cg_is_flt(s))
            return cg_fmt(g, "tc_d2h((double)(%s))", v);
        return cg_fmt(g, "tc_f2h(%s)", v);
    case TILEC_BFLOAT16:
        if (s == TILEC_FLOAT64 || !cg_is_flt(s))
            return cg_fmt(g, "tc_d2b((double)(%s))", v);
        return cg_fmt(g, "tc_f2b(%s)", v);
    case TILEC_BOOL: return cg_fmt(g, "((uint8_t)((%s) != 0))", v);
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: case TILEC_FLOAT4_E2M1FN:
        return cg_fmt(g, "%s((double)(%s))", f8_to(t), v);
    default: return cg_conv(g, v, s, t);
    }
}

/* Stored value v of dtype t to its compute type. */
const char *cg_from_store(cg_t *g, const char *v, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_FLOAT16: return cg_fmt(g, "tc_h2f(%s)", v);
    case TILEC_BFLOAT16: return cg_fmt(g, "tc_b2f(%s)", v);
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: case TILEC_FLOAT4_E2M1FN:
        return cg_fmt(g, "%s(%s)", f8_from(t), v);
    case TILEC_BOOL: return cg_fmt(g, "((int)((%s) != 0))", v);
    default: return v;
    }
}

/* ---- literals ------------------------------------------------------------------ */

static const char *int_lit(cg_t *g, int64_t v)
{
    if (v == INT64_MIN)
        return "(-INT64_C(9223372036854775807) - 1)";
    return cg_fmt(g, "INT64_C(%" PRId64 ")", v);
}

static const char *flt_lit(cg_t *g, double v, tilec_dtype_t t)
{
    int dbl = t == TILEC_FLOAT64;
    if (t == TILEC_FLOAT16)
        v = tilec_f16_to_f32(tilec_f64_to_f16(v));
    else if (t == TILEC_BFLOAT16)
        v = tilec_bf16_to_f32(tilec_f64_to_bf16(v));
    else if (t == TILEC_FLOAT8_E4M3FN)
        v = tilec_f8e4m3fn_to_f32(tilec_f64_to_f8e4m3fn(v));
    else if (t == TILEC_FLOAT8_E5M2)
        v = tilec_f8e5m2_to_f32(tilec_f64_to_f8e5m2(v));
    else if (t == TILEC_FLOAT4_E2M1FN)
        v = tilec_f4e2m1fn_to_f32(tilec_f64_to_f4e2m1fn(v));
    else if (t == TILEC_FLOAT32)
        v = (float)v;
    if (isnan(v))
        return dbl ? "((double)NAN)" : "((float)NAN)";
    if (isinf(v))
        return v > 0 ? (dbl ? "((double)INFINITY)" : "((float)INFINITY)")
                     : (dbl ? "(-(double)INFINITY)" : "(-(float)INFINITY)");
    return cg_fmt(g, dbl ? "(%a)" : "(%af)", v);
}

/* ---- buffers ------------------------------------------------------------------- */

int cg_buf_ok(cg_t *g, const tilec_ir_buffer_t *b)
{
    if (!b || b->id < 0 || b->id >= g->k->nbufs || g->k->bufs[b->id] != b) {
        cg_fail(g, "reference to a buffer not declared by the kernel");
        return 0;
    }
    return 1;
}

/* Dimension d of buffer b as an int64 C expression (literal when constant). */
const char *cg_dim(cg_t *g, const tilec_ir_buffer_t *b, int d)
{
    int64_t c;
    if (tilec_ir_is_const_int(b->shape[d], &c))
        return cg_fmt(g, "INT64_C(%" PRId64 ")", c);
    return cg_fmt(g, "b%d_s%d", b->id, d);
}

/* Row-major offset of idx (C expressions) in b, int64. */
const char *cg_offset(cg_t *g, const tilec_ir_buffer_t *b, const char *const *idx)
{
    if (b->ndim == 0)
        return "0";
    /* a row buffer holds the current row only: its index 0 is tc_r */
    const char *o = cg_fmt(g, "(int64_t)(%s)", cg_row_buf(g, b) ? "0" : idx[0]);
    for (int d = 1; d < b->ndim; d++)
        o = cg_fmt(g, "(%s * %s + (int64_t)(%s))", o, cg_dim(g, b, d), idx[d]);
    return o;
}

const char *cg_offset_exprs(cg_t *g, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *ix)
{
    const char *idx[TILEC_IR_MAX_DIMS];
    if (b->ndim > TILEC_IR_MAX_DIMS || (b->ndim > 0 && !ix)) {
        cg_fail(g, "buffer access with a bad index list");
        return "0";
    }
    for (int d = 0; d < b->ndim; d++)
        idx[d] = cg_expr(g, ix[d]);
    return cg_offset(g, b, idx);
}

/* ---- expressions ------------------------------------------------------------------ */

/* Hooks of the shared C-family emitter (tilec/cexpr.h) for plain C. */
static void cx_fail(void *u, const char *msg) { cg_fail(u, "%s", msg); }
static const char *cx_ctype(void *u, tilec_dtype_t t) { (void)u; return cg_ct_type(t); }

static const char *cx_int_lit(void *u, int64_t v, tilec_dtype_t t)
{
    if (t == TILEC_BOOL)
        return v ? "1" : "0";
    return cg_fmt(u, "((%s)%s)", cg_ct_type(t), int_lit(u, v));
}

static const char *cx_flt_lit(void *u, double v, tilec_dtype_t t) { return flt_lit(u, v, t); }

static const char *cx_load(void *u, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    cg_t *g = u;
    if (!cg_buf_ok(g, b))
        return NULL;
    for (int i = 0; i < g->nhoist; i++)
        if (g->hoist[i].idx == idx)
            return g->hoist[i].name;
    const char *off = cg_offset_exprs(g, b, idx);
    for (int i = 0; g->vec && i < g->nvload; i++)
        if (g->vload[i].idx == idx) {
            g->vload[i].buf = b->id;
            g->vload[i].off = off;
            return g->vload[i].name;
        }
    if (g->rows.in_rows && g->rows.shadow[b->id])
        return cg_fmt(g, "tc_sh%d[%s]", b->id, off);
    return cg_from_store(g, cg_fmt(g, "b%d[%s]", b->id, off), b->dtype);
}

static const char *cx_conv(void *u, const char *v, tilec_dtype_t s, tilec_dtype_t t) { return cg_conv(u, v, s, t); }

/* float exp/exp2/log/log2/tanh: the prelude's vectorizable versions */
static const char *cx_math_name(void *u, const char *base, int dbl)
{
    const cg_t *g = u;
    if (g->vec) /* cpu_vec.c: exp2 is its only function */
        return strcmp(base, "exp2") == 0 && !dbl ? "tc_exp2f_v" : NULL;
    static const char *const own[][2] = {{"exp", "tc_expf"}, {"exp2", "tc_exp2f"}, {"log", "tc_logf"},
                                         {"log2", "tc_log2f"}, {"tanh", "tc_tanhf"}};
    if (dbl)
        return NULL;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(base, own[i][0]) == 0)
            return own[i][1];
    return NULL;
}

static tilec_cexpr_t cx_of(cg_t *g)
{
    const tilec_cexpr_t x = {
        .u = g, .k = g->k, .failed = &g->failed, .depth = &g->depth, .max_depth = CG_MAX_DEPTH * 4,
        .vfmt = vfmt, .fail = cx_fail, .ctype = cx_ctype, .int_lit = cx_int_lit, .flt_lit = cx_flt_lit,
        .load = cx_load, .conv = cx_conv, .math_name = cx_math_name,
        .uint32_name = "uint32_t", .uint64_name = "uint64_t", .float32_name = "float",
        .float_lit_via = TILEC_FLOAT64, .int_math_via_double = 1, .bool_minmax_ne0 = 1,
        .msg_missing = "missing expression", .msg_bad_dtype = "expression with an invalid dtype",
    };
    return x;
}

const char *cg_expr(cg_t *g, const tilec_ir_expr_t *e)
{
    const tilec_cexpr_t x = cx_of(g);
    return tilec_cexpr_emit(&x, e);
}
