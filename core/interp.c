/*
 * core/interp.c — the reference interpreter of the tile IR: driver, value
 * conversions, expressions and control flow.  The tile statements (copy,
 * gemm, reductions, ...) live in core/interp_ops.c.
 *
 * It is the oracle every backend is checked against, so it is plain code
 * that follows docs/ir.md literally:
 *  - Blocks run one after another, bx fastest, then by, then bz.  Each block
 *    starts with fresh on-chip buffers (every non-GLOBAL scope; per-thread
 *    scopes behave as per block because tile programs address them
 *    collectively) and fresh LET variables, all zero.  TileLang leaves them
 *    uninitialized, so backends need not match a read of an unwritten
 *    on-chip element.  A GLOBAL buffer that is not a parameter (a
 *    workspace) is allocated once per run, zeroed, and shared by all blocks.
 *    SYM variables take the values given in var-id order; a negative value
 *    or a negative buffer extent is an error.
 *  - Float expressions compute in double and are not rounded until a store,
 *    an ASSIGN or a CAST; integer expressions compute in int64 (uint64 as
 *    unsigned) and each result wraps to its expression's dtype as in TIR;
 *    bools are 0/1.  A store converts to the buffer's dtype with one
 *    rounding (float16/bfloat16 from double, float32 by (float)); integer
 *    stores wrap; float-to-int conversion truncates (NaN gives 0, values
 *    out of range saturate before wrapping).
 *  - Integer division or modulo by zero is an error, as is any plain
 *    load/store/atomic outside its buffer.  Only T.copy (and T.fill) on a
 *    GLOBAL tensor are boundary-safe.
 *  - Recursion over expressions and statements is bounded by
 *    TILEC_INTERP_MAX_DEPTH.
 *  - IR 1.1: attributes and layouts do not change results and are ignored;
 *    `barrier` is a no-op (block operations run whole); async copies and
 *    mbarriers are core/interp_async.c's, and every read or write of an
 *    element with a pending async write is an error.
 */
#include "interp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp_priv.h"
#include "log.h"

/* ---- errors --------------------------------------------------------------- */

int tilec_interp_fail(tilec_ictx_t *c, const char *fmt, ...)
{
    if (c->failed) {
        return -1;
    }
    c->failed = 1;
    if (!c->err || c->errlen == 0) {
        return -1;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : (size_t)n;
    if (c->in_block && used < c->errlen) {
        n = snprintf(c->err + used, c->errlen - used, " in block (%lld,%lld,%lld)",
                     (long long)c->block[0], (long long)c->block[1], (long long)c->block[2]);
        used += n < 0 ? 0 : (size_t)n;
    }
    if (c->line > 0 && used < c->errlen) {
        snprintf(c->err + used, c->errlen - used, " at line %d:%d", c->line, c->col);
    }
    return -1;
}

/* Appends "a, b, c" (sep between items) into out, truncating safely. */
static void join_ints(char *out, size_t cap, const int64_t *v, int n, const char *sep)
{
    size_t used = 0;
    out[0] = '\0';
    for (int d = 0; d < n && used < cap; d++) {
        int w = snprintf(out + used, cap - used, "%s%lld", d ? sep : "", (long long)v[d]);
        if (w < 0) {
            break;
        }
        used += (size_t)w;
    }
}

int tilec_interp_oob(tilec_ictx_t *c, const char *what, const tilec_ibuf_t *b, const int64_t *idx)
{
    char is[256], ss[256];
    join_ints(is, sizeof is, idx, b->ndim, ", ");
    join_ints(ss, sizeof ss, b->shape, b->ndim, "x");
    return tilec_interp_fail(c, "out-of-bounds %s %s[%s] (shape %s)", what, b->ir->name, is,
                             b->ndim ? ss : "scalar");
}

/* ---- values --------------------------------------------------------------- */

/* tilec_dtype_is_float, inline: the interpreter asks it for every operand */
static inline int is_float_t(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_FLOAT16: case TILEC_BFLOAT16: case TILEC_FLOAT32: case TILEC_FLOAT64:
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: case TILEC_FLOAT4_E2M1FN:
        return 1;
    default:
        return 0;
    }
}

int tilec_interp_is_float(tilec_dtype_t t)
{
    return is_float_t(t);
}

tilec_dtype_t tilec_interp_wide(tilec_dtype_t t)
{
    if (is_float_t(t)) {
        return TILEC_FLOAT64;
    }
    return t == TILEC_UINT64 ? TILEC_UINT64 : TILEC_INT64;
}

int tilec_interp_truth(tilec_ival_t v, tilec_dtype_t t)
{
    return is_float_t(t) ? v.f != 0.0 : v.i != 0;
}

/* Rounds a double to the precision of float dtype t. */
static double round_to(double d, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_FLOAT16:
        return tilec_f16_to_f32(tilec_f64_to_f16(d));
    case TILEC_BFLOAT16:
        return tilec_bf16_to_f32(tilec_f64_to_bf16(d));
    case TILEC_FLOAT32:
        return (double)(float)d;
    case TILEC_FLOAT8_E4M3FN:
        return tilec_f8e4m3fn_to_f32(tilec_f64_to_f8e4m3fn(d));
    case TILEC_FLOAT8_E5M2:
        return tilec_f8e5m2_to_f32(tilec_f64_to_f8e5m2(d));
    case TILEC_FLOAT4_E2M1FN:
        return tilec_f4e2m1fn_to_f32(tilec_f64_to_f4e2m1fn(d));
    default:
        return d;
    }
}

/* Wraps an integer to the width of integer dtype t (two's complement). */
static inline int64_t wrap_int(int64_t v, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_BOOL:   return v != 0;
    case TILEC_INT8:   return (int8_t)v;
    case TILEC_INT16:  return (int16_t)v;
    case TILEC_INT32:  return (int32_t)v;
    case TILEC_UINT8:  return (uint8_t)v;
    case TILEC_UINT16: return (uint16_t)v;
    case TILEC_UINT32: return (uint32_t)v;
    case TILEC_INT4:   return ((v & 15) ^ 8) - 8;
    case TILEC_UINT4:  return v & 15;
    default:           return v; /* INT64, UINT64: the bits as they are */
    }
}

/* Float to integer dtype t: truncation; NaN gives 0; out-of-range values
 * saturate to the 64-bit range, then wrap to t. */
static tilec_ival_t float_to_int(double d, tilec_dtype_t t)
{
    tilec_ival_t r;
    r.i = 0;
    if (t == TILEC_BOOL) {
        r.i = d != 0.0;
        return r;
    }
    if (isnan(d)) {
        return r;
    }
    d = trunc(d);
    if (t == TILEC_UINT64 && d >= 0.0) {
        r.u = d >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)d;
        return r;
    }
    if (d >= 9223372036854775808.0) {
        r.i = INT64_MAX;
    } else if (d < -9223372036854775808.0) {
        r.i = INT64_MIN;
    } else {
        r.i = (int64_t)d;
    }
    r.i = wrap_int(r.i, t);
    return r;
}

tilec_ival_t tilec_interp_cvt(tilec_ival_t v, tilec_dtype_t from, tilec_dtype_t to)
{
    tilec_ival_t r;
    int ff = is_float_t(from), tf = is_float_t(to);
    if (!ff && !tf && (to == TILEC_INT64 || to == TILEC_UINT64)) {
        return v;   /* wrap_int's identity: the bits as they are */
    }
    if (ff && tf) {
        r.f = round_to(v.f, to);
    } else if (ff) {
        r = float_to_int(v.f, to);
    } else if (tf) {
        r.f = round_to(from == TILEC_UINT64 ? (double)v.u : (double)v.i, to);
    } else {
        r.i = wrap_int(v.i, to);
    }
    return r;
}

/* A value of dtype from, seen as dtype to without rounding floats (used
 * where the IR's dtypes agree in class, e.g. a LET var read back). */
static tilec_ival_t retag(tilec_ival_t v, tilec_dtype_t from, tilec_dtype_t to)
{
    if (from == to || (is_float_t(from) && is_float_t(to))) {
        return v;
    }
    return tilec_interp_cvt(v, from, to);
}

tilec_ival_t tilec_interp_load_raw(const tilec_ibuf_t *b, int64_t off)
{
    const unsigned char *p = b->data + (size_t)off * b->esize;
    tilec_ival_t v;
    v.i = 0;
    switch (b->dtype) {
    case TILEC_BOOL:    { uint8_t x;  memcpy(&x, p, 1); v.i = x != 0; break; }
    case TILEC_INT8:    { int8_t x;   memcpy(&x, p, 1); v.i = x; break; }
    case TILEC_INT16:   { int16_t x;  memcpy(&x, p, 2); v.i = x; break; }
    case TILEC_INT32:   { int32_t x;  memcpy(&x, p, 4); v.i = x; break; }
    case TILEC_INT64:   { int64_t x;  memcpy(&x, p, 8); v.i = x; break; }
    case TILEC_UINT8:   { uint8_t x;  memcpy(&x, p, 1); v.i = x; break; }
    case TILEC_UINT16:  { uint16_t x; memcpy(&x, p, 2); v.i = x; break; }
    case TILEC_UINT32:  { uint32_t x; memcpy(&x, p, 4); v.i = x; break; }
    case TILEC_UINT64:  { uint64_t x; memcpy(&x, p, 8); v.u = x; break; }
    case TILEC_FLOAT16: { uint16_t x; memcpy(&x, p, 2); v.f = tilec_f16_to_f32(x); break; }
    case TILEC_BFLOAT16:{ uint16_t x; memcpy(&x, p, 2); v.f = tilec_bf16_to_f32(x); break; }
    case TILEC_FLOAT32: { float x;    memcpy(&x, p, 4); v.f = x; break; }
    case TILEC_FLOAT64: { double x;   memcpy(&x, p, 8); v.f = x; break; }
    case TILEC_FLOAT8_E4M3FN: v.f = tilec_f8e4m3fn_to_f32(*p); break;
    case TILEC_FLOAT8_E5M2:   v.f = tilec_f8e5m2_to_f32(*p); break;
    /* 4-bit (1.3): one value per byte here (kernel tensors unpacked at entry) */
    case TILEC_INT4:          v.i = (int8_t)*p; break;
    case TILEC_UINT4:         v.i = *p; break;
    case TILEC_FLOAT4_E2M1FN: v.f = tilec_f4e2m1fn_to_f32(*p); break;
    default: break;
    }
    return v;
}

void tilec_interp_store_raw(tilec_ibuf_t *b, int64_t off, tilec_ival_t v)
{
    unsigned char *p = b->data + (size_t)off * b->esize;
    switch (b->dtype) {
    case TILEC_BOOL:    { uint8_t x = v.i != 0;        memcpy(p, &x, 1); break; }
    case TILEC_INT8:    { int8_t x = (int8_t)v.i;      memcpy(p, &x, 1); break; }
    case TILEC_INT16:   { int16_t x = (int16_t)v.i;    memcpy(p, &x, 2); break; }
    case TILEC_INT32:   { int32_t x = (int32_t)v.i;    memcpy(p, &x, 4); break; }
    case TILEC_INT64:   { int64_t x = v.i;             memcpy(p, &x, 8); break; }
    case TILEC_UINT8:   { uint8_t x = (uint8_t)v.i;    memcpy(p, &x, 1); break; }
    case TILEC_UINT16:  { uint16_t x = (uint16_t)v.i;  memcpy(p, &x, 2); break; }
    case TILEC_UINT32:  { uint32_t x = (uint32_t)v.i;  memcpy(p, &x, 4); break; }
    case TILEC_UINT64:  { uint64_t x = v.u;            memcpy(p, &x, 8); break; }
    case TILEC_FLOAT16: { uint16_t x = tilec_f64_to_f16(v.f);  memcpy(p, &x, 2); break; }
    case TILEC_BFLOAT16:{ uint16_t x = tilec_f64_to_bf16(v.f); memcpy(p, &x, 2); break; }
    case TILEC_FLOAT32: { float x = (float)v.f;        memcpy(p, &x, 4); break; }
    case TILEC_FLOAT64: { double x = v.f;              memcpy(p, &x, 8); break; }
    case TILEC_FLOAT8_E4M3FN: *p = tilec_f64_to_f8e4m3fn(v.f); break;
    case TILEC_FLOAT8_E5M2:   *p = tilec_f64_to_f8e5m2(v.f); break;
    case TILEC_INT4:          *p = (uint8_t)wrap_int(v.i, TILEC_INT4); break;
    case TILEC_UINT4:         *p = (uint8_t)wrap_int(v.i, TILEC_UINT4); break;
    case TILEC_FLOAT4_E2M1FN: *p = tilec_f64_to_f4e2m1fn(v.f); break;
    default: break;
    }
}

/* ---- lookups -------------------------------------------------------------- */

int tilec_interp_buf(tilec_ictx_t *c, const tilec_ir_buffer_t *ir, tilec_ibuf_t **out)
{
    if (!ir || ir->id < 0 || ir->id >= c->k->nbufs || c->k->bufs[ir->id] != ir) {
        return tilec_interp_fail(c, "buffer %s is not declared in kernel %s",
                                 ir && ir->name ? ir->name : "?", c->k->name ? c->k->name : "?");
    }
    tilec_ibuf_t *b = &c->bufs[ir->id];
    if (!b->ready) {
        return tilec_interp_fail(c, "buffer %s used before it is set up (in a shape?)", ir->name);
    }
    *out = b;
    return 0;
}

static int var_slot(tilec_ictx_t *c, const tilec_ir_var_t *v, int *id)
{
    if (!v || v->id < 0 || v->id >= c->k->nvars || c->k->vars[v->id] != v) {
        return tilec_interp_fail(c, "variable %s is not declared in kernel %s",
                                 v && v->name ? v->name : "?", c->k->name ? c->k->name : "?");
    }
    *id = v->id;
    return 0;
}

int tilec_interp_index(tilec_ictx_t *c, tilec_ibuf_t *b, tilec_ir_expr_t *const *idx,
                       const char *what, int64_t *off)
{
    int64_t iv[TILEC_IR_MAX_DIMS];
    int64_t o = 0;
    int oob = 0;
    if (b->ndim > 0 && !idx) {
        return tilec_interp_fail(c, "%s of %s without indices", what, b->ir->name);
    }
    for (int d = 0; d < b->ndim; d++) {
        if (tilec_interp_eval_int(c, idx[d], &iv[d])) {
            return -1;
        }
        if (iv[d] < 0 || iv[d] >= b->shape[d]) {
            oob = 1;
        }
    }
    if (oob) {
        return tilec_interp_oob(c, what, b, iv);
    }
    for (int d = 0; d < b->ndim; d++) {
        o += iv[d] * b->stride[d];
    }
    *off = o;
    return 0;
}

/* ---- expressions ---------------------------------------------------------- */

/* Result of an op computed in class wide (FLOAT64/INT64/UINT64), given the
 * expression's dtype t: floats stay unrounded, integers wrap to t. */
static tilec_ival_t finish(tilec_ival_t r, tilec_dtype_t wide, tilec_dtype_t t)
{
    if (wide == TILEC_FLOAT64 && is_float_t(t)) {
        return r;
    }
    return tilec_interp_cvt(r, wide, t);
}

static tilec_ival_t bool_val(int b, tilec_dtype_t t)
{
    tilec_ival_t r;
    r.i = b != 0;
    return tilec_interp_cvt(r, TILEC_BOOL, t);
}

/* base ** ex for integers; negative exponents truncate toward zero. */
static int ipow(tilec_ictx_t *c, int64_t base, int64_t ex, int64_t *out)
{
    if (ex < 0) {
        if (base == 0) {
            return tilec_interp_fail(c, "integer zero raised to a negative power");
        }
        if (base == 1) {
            *out = 1;
        } else if (base == -1) {
            *out = (ex % 2) ? -1 : 1;
        } else {
            *out = 0;
        }
        return 0;
    }
    uint64_t r = 1, b = (uint64_t)base;
    uint64_t e = (uint64_t)ex;
    while (e) {
        if (e & 1) {
            r *= b;
        }
        b *= b;
        e >>= 1;
    }
    *out = (int64_t)r;
    return 0;
}

/* v of dtype from, its bits read as dtype to (same width: the verifier) */
static tilec_ival_t bitcast(tilec_ival_t v, tilec_dtype_t from, tilec_dtype_t to)
{
    unsigned char bits[8] = {0};
    tilec_ibuf_t b;
    memset(&b, 0, sizeof b);
    b.data = bits;
    b.dtype = from;
    b.esize = tilec_dtype_size(from);
    tilec_interp_store_raw(&b, 0, v);
    b.dtype = to;
    return tilec_interp_load_raw(&b, 0);
}

static int eval_unary(tilec_ictx_t *c, const tilec_ir_expr_t *e, tilec_ival_t *out)
{
    tilec_ival_t a, r;
    if (tilec_interp_eval(c, e->u.un.a, &a)) {
        return -1;
    }
    if (e->u.un.op == TILEC_UN_BITCAST) {
        *out = bitcast(a, e->u.un.a->dtype, e->dtype);
        return 0;
    }
    tilec_dtype_t ta = e->u.un.a->dtype;
    tilec_dtype_t wide = tilec_interp_wide(ta);
    a = tilec_interp_cvt(a, ta, wide); /* exact: widening */
    r = a;
    switch (e->u.un.op) {
    case TILEC_UN_NOT:
        *out = bool_val(!tilec_interp_truth(a, wide), e->dtype);
        return 0;
    case TILEC_UN_NEG:
        if (wide == TILEC_FLOAT64) {
            r.f = -a.f;
        } else {
            r.u = 0 - a.u;
        }
        break;
    case TILEC_UN_ABS:
        if (wide == TILEC_FLOAT64) {
            r.f = fabs(a.f);
        } else if (wide == TILEC_INT64 && a.i < 0) {
            r.u = 0 - a.u;
        }
        break;
    case TILEC_UN_FLOOR:
    case TILEC_UN_CEIL:
        if (wide == TILEC_FLOAT64) {
            r.f = e->u.un.op == TILEC_UN_FLOOR ? floor(a.f) : ceil(a.f);
        }
        break;
    default: {
        double x = wide == TILEC_FLOAT64 ? a.f : wide == TILEC_UINT64 ? (double)a.u : (double)a.i;
        switch (e->u.un.op) {
        case TILEC_UN_EXP:     x = exp(x); break;
        case TILEC_UN_EXP2:    x = exp2(x); break;
        case TILEC_UN_LOG:     x = log(x); break;
        case TILEC_UN_LOG2:    x = log2(x); break;
        case TILEC_UN_SQRT:    x = sqrt(x); break;
        case TILEC_UN_RSQRT:   x = 1.0 / sqrt(x); break;
        case TILEC_UN_TANH:    x = tanh(x); break;
        case TILEC_UN_SIGMOID: x = 1.0 / (1.0 + exp(-x)); break;
        default:
            return tilec_interp_fail(c, "unknown unary operator %d", (int)e->u.un.op);
        }
        r.f = x;
        wide = TILEC_FLOAT64;
        break;
    }
    }
    *out = finish(r, wide, e->dtype);
    return 0;
}

static int cmp_op(tilec_binop_t op, int lt, int eq)
{
    switch (op) {
    case TILEC_BIN_EQ: return eq;
    case TILEC_BIN_NE: return !eq;
    case TILEC_BIN_LT: return lt;
    case TILEC_BIN_LE: return lt || eq;
    case TILEC_BIN_GT: return !lt && !eq;
    default:           return !lt; /* GE */
    }
}

static int bin_float(tilec_ictx_t *c, tilec_binop_t op, double x, double y, tilec_ival_t *r)
{
    switch (op) {
    case TILEC_BIN_ADD: r->f = x + y; break;
    case TILEC_BIN_SUB: r->f = x - y; break;
    case TILEC_BIN_MUL: r->f = x * y; break;
    case TILEC_BIN_DIV: r->f = x / y; break;
    case TILEC_BIN_FLOORDIV: r->f = floor(x / y); break;
    case TILEC_BIN_FLOORMOD: {
        double m = fmod(x, y);
        if (m != 0.0 && ((m < 0.0) != (y < 0.0))) {
            m += y;
        }
        r->f = m;
        break;
    }
    case TILEC_BIN_POW: r->f = pow(x, y); break;
    case TILEC_BIN_MIN: r->f = fmin(x, y); break;
    case TILEC_BIN_MAX: r->f = fmax(x, y); break;
    default:
        return tilec_interp_fail(c, "unknown binary operator %d", (int)op);
    }
    return 0;
}

static int bin_signed(tilec_ictx_t *c, tilec_binop_t op, int64_t x, int64_t y, tilec_ival_t *r)
{
    switch (op) {
    case TILEC_BIN_ADD: r->u = (uint64_t)x + (uint64_t)y; break;
    case TILEC_BIN_SUB: r->u = (uint64_t)x - (uint64_t)y; break;
    case TILEC_BIN_MUL: r->u = (uint64_t)x * (uint64_t)y; break;
    case TILEC_BIN_DIV:
    case TILEC_BIN_FLOORDIV: {
        if (y == 0) {
            return tilec_interp_fail(c, "integer division by zero (%lld / 0)", (long long)x);
        }
        if (x == INT64_MIN && y == -1) {
            r->i = INT64_MIN;
            break;
        }
        int64_t q = x / y;
        if (op == TILEC_BIN_FLOORDIV && x % y != 0 && ((x < 0) != (y < 0))) {
            q--;
        }
        r->i = q;
        break;
    }
    case TILEC_BIN_FLOORMOD: {
        if (y == 0) {
            return tilec_interp_fail(c, "integer modulo by zero (%lld %% 0)", (long long)x);
        }
        if (y == -1) {
            r->i = 0;
            break;
        }
        int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
            m += y;
        }
        r->i = m;
        break;
    }
    case TILEC_BIN_POW: return ipow(c, x, y, &r->i);
    case TILEC_BIN_MIN: r->i = x < y ? x : y; break;
    case TILEC_BIN_MAX: r->i = x > y ? x : y; break;
    case TILEC_BIN_BITAND: r->i = x & y; break;
    case TILEC_BIN_BITOR: r->i = x | y; break;
    case TILEC_BIN_BITXOR: r->i = x ^ y; break;
    case TILEC_BIN_SHL: r->u = (uint64_t)x << y; break; /* count checked by eval_binary */
    case TILEC_BIN_SHR: r->i = x < 0 ? ~(~x >> y) : x >> y; break;
    default:
        return tilec_interp_fail(c, "unknown binary operator %d", (int)op);
    }
    return 0;
}

static int bin_unsigned(tilec_ictx_t *c, tilec_binop_t op, uint64_t x, uint64_t y, tilec_ival_t *r)
{
    switch (op) {
    case TILEC_BIN_ADD: r->u = x + y; break;
    case TILEC_BIN_SUB: r->u = x - y; break;
    case TILEC_BIN_MUL: r->u = x * y; break;
    case TILEC_BIN_DIV:
    case TILEC_BIN_FLOORDIV:
    case TILEC_BIN_FLOORMOD:
        if (y == 0) {
            return tilec_interp_fail(c, "integer division by zero (%llu / 0)", (unsigned long long)x);
        }
        r->u = op == TILEC_BIN_FLOORMOD ? x % y : x / y;
        break;
    case TILEC_BIN_POW: {
        uint64_t acc = 1;
        while (y) {
            if (y & 1) {
                acc *= x;
            }
            x *= x;
            y >>= 1;
        }
        r->u = acc;
        break;
    }
    case TILEC_BIN_MIN: r->u = x < y ? x : y; break;
    case TILEC_BIN_MAX: r->u = x > y ? x : y; break;
    case TILEC_BIN_BITAND: r->u = x & y; break;
    case TILEC_BIN_BITOR: r->u = x | y; break;
    case TILEC_BIN_BITXOR: r->u = x ^ y; break;
    case TILEC_BIN_SHL: r->u = x << y; break;
    case TILEC_BIN_SHR: r->u = x >> y; break;
    default:
        return tilec_interp_fail(c, "unknown binary operator %d", (int)op);
    }
    return 0;
}

static int eval_binary(tilec_ictx_t *c, const tilec_ir_expr_t *e, tilec_ival_t *out)
{
    tilec_binop_t op = e->u.bin.op;
    const tilec_ir_expr_t *ea = e->u.bin.a, *eb = e->u.bin.b;
    tilec_ival_t a, b, r;
    if (!ea || !eb) {
        return tilec_interp_fail(c, "binary operator without operand");
    }
    if (tilec_interp_eval(c, ea, &a)) {
        return -1;
    }
    if (op == TILEC_BIN_AND || op == TILEC_BIN_OR) {
        /* Short-circuit, as generated C code does. */
        int x = tilec_interp_truth(a, ea->dtype);
        if ((op == TILEC_BIN_AND && !x) || (op == TILEC_BIN_OR && x)) {
            *out = bool_val(x, e->dtype);
            return 0;
        }
        if (tilec_interp_eval(c, eb, &b)) {
            return -1;
        }
        *out = bool_val(tilec_interp_truth(b, eb->dtype), e->dtype);
        return 0;
    }
    if (tilec_interp_eval(c, eb, &b)) {
        return -1;
    }
    /* Common class of the operands (they are equal in valid IR). */
    tilec_dtype_t wide;
    if (is_float_t(ea->dtype) || is_float_t(eb->dtype)) {
        wide = TILEC_FLOAT64;
    } else if (ea->dtype == TILEC_UINT64 || eb->dtype == TILEC_UINT64) {
        wide = TILEC_UINT64;
    } else {
        wide = TILEC_INT64;
    }
    a = tilec_interp_cvt(a, ea->dtype, wide);
    b = tilec_interp_cvt(b, eb->dtype, wide);
    if (op >= TILEC_BIN_EQ && op <= TILEC_BIN_GE) {
        int lt, eq;
        if (wide == TILEC_FLOAT64) {
            if (isnan(a.f) || isnan(b.f)) {
                *out = bool_val(op == TILEC_BIN_NE, e->dtype);
                return 0;
            }
            lt = a.f < b.f;
            eq = a.f == b.f;
        } else if (wide == TILEC_UINT64) {
            lt = a.u < b.u;
            eq = a.u == b.u;
        } else {
            lt = a.i < b.i;
            eq = a.i == b.i;
        }
        *out = bool_val(cmp_op(op, lt, eq), e->dtype);
        return 0;
    }
    if ((op == TILEC_BIN_SHL || op == TILEC_BIN_SHR) && wide != TILEC_FLOAT64) {
        int bits = (int)tilec_dtype_size(ea->dtype) * 8;
        if ((wide == TILEC_INT64 && b.i < 0) || b.u >= (uint64_t)bits) {
            return tilec_interp_fail(c, "shift count %lld out of range for %s", (long long)b.i,
                                     tilec_dtype_name(ea->dtype));
        }
    }
    int rc;
    r.i = 0;
    if (wide == TILEC_FLOAT64) {
        rc = bin_float(c, op, a.f, b.f, &r);
    } else if (wide == TILEC_UINT64) {
        rc = bin_unsigned(c, op, a.u, b.u, &r);
    } else {
        rc = bin_signed(c, op, a.i, b.i, &r);
    }
    if (rc) {
        return -1;
    }
    *out = finish(r, wide, e->dtype);
    return 0;
}

static int eval_node(tilec_ictx_t *c, const tilec_ir_expr_t *e, tilec_ival_t *out)
{
    switch (e->kind) {
    case TILEC_EX_INT: {
        tilec_ival_t v;
        v.i = e->u.i;
        *out = tilec_interp_cvt(v, TILEC_INT64, e->dtype);
        return 0;
    }
    case TILEC_EX_FLOAT:
        if (is_float_t(e->dtype)) {
            out->f = e->u.f;
        } else {
            *out = float_to_int(e->u.f, e->dtype);
        }
        return 0;
    case TILEC_EX_VAR: {
        int id;
        if (var_slot(c, e->u.var, &id)) {
            return -1;
        }
        *out = retag(c->vars[id], e->u.var->dtype, e->dtype);
        return 0;
    }
    case TILEC_EX_LOAD: {
        tilec_ibuf_t *b;
        int64_t off;
        if (tilec_interp_buf(c, e->u.load.buf, &b) ||
            tilec_interp_index(c, b, e->u.load.idx, "load", &off) || tilec_interp_pending(c, b, off, 1, "read")) {
            return -1;
        }
        *out = retag(tilec_interp_load_raw(b, off), b->dtype, e->dtype);
        return 0;
    }
    case TILEC_EX_UNARY:
        return eval_unary(c, e, out);
    case TILEC_EX_BINARY:
        return eval_binary(c, e, out);
    case TILEC_EX_SELECT: {
        tilec_ival_t cond;
        if (!e->u.sel.cond || !e->u.sel.a || !e->u.sel.b) {
            return tilec_interp_fail(c, "select without operand");
        }
        if (tilec_interp_eval(c, e->u.sel.cond, &cond)) {
            return -1;
        }
        const tilec_ir_expr_t *side =
            tilec_interp_truth(cond, e->u.sel.cond->dtype) ? e->u.sel.a : e->u.sel.b;
        tilec_ival_t v;
        if (tilec_interp_eval(c, side, &v)) {
            return -1;
        }
        *out = retag(v, side->dtype, e->dtype);
        return 0;
    }
    case TILEC_EX_CAST: {
        tilec_ival_t v;
        if (!e->u.cast.a) {
            return tilec_interp_fail(c, "cast without operand");
        }
        if (tilec_interp_eval(c, e->u.cast.a, &v)) {
            return -1;
        }
        *out = tilec_interp_cvt(v, e->u.cast.a->dtype, e->dtype);
        return 0;
    }
    }
    return tilec_interp_fail(c, "unknown expression kind %d", (int)e->kind);
}

int tilec_interp_eval(tilec_ictx_t *c, const tilec_ir_expr_t *e, tilec_ival_t *out)
{
    if (!e) {
        return tilec_interp_fail(c, "missing expression");
    }
    if ((unsigned)e->dtype >= TILEC_DTYPE_COUNT) {
        return tilec_interp_fail(c, "expression with unknown dtype %d", (int)e->dtype);
    }
    if (c->depth >= TILEC_INTERP_MAX_DEPTH) {
        return tilec_interp_fail(c, "expression nested deeper than %d", TILEC_INTERP_MAX_DEPTH);
    }
    c->depth++;
    int rc = eval_node(c, e, out);
    c->depth--;
    return rc;
}

int tilec_interp_eval_int(tilec_ictx_t *c, const tilec_ir_expr_t *e, int64_t *out)
{
    tilec_ival_t v;
    if (tilec_interp_eval(c, e, &v)) {
        return -1;
    }
    *out = tilec_interp_cvt(v, e->dtype, TILEC_INT64).i;
    return 0;
}

/* ---- statements ----------------------------------------------------------- */

static int exec_list(tilec_ictx_t *c, const tilec_ir_stmt_t *s);

static int exec_for(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    int64_t n;
    int id;
    if (var_slot(c, s->u.loop.var, &id) || tilec_interp_eval_int(c, s->u.loop.extent, &n)) {
        return -1;
    }
    /* Every loop kind runs sequentially; PIPELINED ignores its stages. */
    tilec_dtype_t t = s->u.loop.var->dtype;
    for (int64_t i = 0; i < n; i++) {
        tilec_ival_t v;
        v.i = i;
        c->vars[id] = tilec_interp_cvt(v, TILEC_INT64, t);
        if (exec_list(c, s->u.loop.body)) {
            return -1;
        }
    }
    return 0;
}

static int exec_stmt(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    c->line = s->line;
    c->col = s->col;
    switch (s->kind) {
    case TILEC_ST_FOR:
        return exec_for(c, s);
    case TILEC_ST_IF: {
        tilec_ival_t v;
        if (tilec_interp_eval(c, s->u.cond.cond, &v)) {
            return -1;
        }
        return exec_list(c, tilec_interp_truth(v, s->u.cond.cond->dtype) ? s->u.cond.then
                                                                          : s->u.cond.els);
    }
    case TILEC_ST_STORE: {
        tilec_ibuf_t *b;
        int64_t off;
        tilec_ival_t v;
        if (tilec_interp_buf(c, s->u.store.buf, &b) ||
            tilec_interp_index(c, b, s->u.store.idx, "store", &off) ||
            tilec_interp_eval(c, s->u.store.value, &v) || tilec_interp_pending(c, b, off, 1, "write")) {
            return -1;
        }
        tilec_interp_store_raw(b, off, tilec_interp_cvt(v, s->u.store.value->dtype, b->dtype));
        return 0;
    }
    case TILEC_ST_ASSIGN: {
        int id;
        tilec_ival_t v;
        if (var_slot(c, s->u.assign.var, &id) || tilec_interp_eval(c, s->u.assign.value, &v)) {
            return -1;
        }
        c->vars[id] = tilec_interp_cvt(v, s->u.assign.value->dtype, s->u.assign.var->dtype);
        return 0;
    }
    case TILEC_ST_COPY:
        return tilec_interp_copy(c, s);
    case TILEC_ST_FILL:
        return tilec_interp_fill(c, s);
    case TILEC_ST_GEMM:
        return tilec_interp_gemm(c, s);
    case TILEC_ST_REDUCE:
        return tilec_interp_reduce(c, s);
    case TILEC_ST_CUMSUM:
        return tilec_interp_cumsum(c, s);
    case TILEC_ST_ATOMIC:
        return tilec_interp_atomic(c, s);
    case TILEC_ST_PRINT:
        return tilec_interp_print(c, s);
    case TILEC_ST_SYNC: /* blocks run whole, in order: nothing to wait for */
    case TILEC_ST_HINT: /* layout and swizzle hints do not change results */
    case TILEC_ST_BARRIER: /* block operations already run whole */
        return 0;
    case TILEC_ST_COPY_ASYNC:
        return tilec_interp_copy_async(c, s);
    case TILEC_ST_ASYNC_COMMIT:
        return tilec_interp_async_commit(c);
    case TILEC_ST_ASYNC_WAIT:
        return tilec_interp_async_wait(c, s);
    case TILEC_ST_MBAR_INIT:
    case TILEC_ST_MBAR_ARRIVE:
    case TILEC_ST_MBAR_WAIT:
        return tilec_interp_mbar(c, s);
    }
    return tilec_interp_fail(c, "unknown statement kind %d", (int)s->kind);
}

static int exec_list(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    if (c->depth >= TILEC_INTERP_MAX_DEPTH) {
        return tilec_interp_fail(c, "statements nested deeper than %d", TILEC_INTERP_MAX_DEPTH);
    }
    c->depth++;
    int rc = 0;
    for (; s && !rc; s = s->next) {
        rc = exec_stmt(c, s);
    }
    c->depth--;
    return rc;
}

/* ---- driver --------------------------------------------------------------- */

static int setup_buffer(tilec_ictx_t *c, int i, void *const *args)
{
    const tilec_ir_buffer_t *ir = c->k->bufs[i];
    tilec_ibuf_t *b = &c->bufs[i];
    if (!ir || ir->id != i || !ir->name) {
        return tilec_interp_fail(c, "malformed buffer table at index %d", i);
    }
    b->ir = ir;
    if (ir->ndim < 0 || ir->ndim > TILEC_IR_MAX_DIMS || (ir->ndim > 0 && !ir->shape)) {
        return tilec_interp_fail(c, "buffer %s has bad rank %d", ir->name, ir->ndim);
    }
    if ((unsigned)ir->dtype >= TILEC_DTYPE_COUNT) {
        return tilec_interp_fail(c, "buffer %s has unknown dtype %d", ir->name, (int)ir->dtype);
    }
    b->dtype = ir->dtype;
    b->esize = tilec_dtype_size(ir->dtype);
    b->ndim = ir->ndim;
    b->global = ir->scope == TILEC_SCOPE_GLOBAL;
    int64_t size = 1, nonzero = 1; /* nonzero: product of the nonzero extents */
    for (int d = 0; d < ir->ndim; d++) {
        int64_t n;
        if (tilec_interp_eval_int(c, ir->shape[d], &n)) {
            return -1;
        }
        if (n < 0) {
            return tilec_interp_fail(c, "buffer %s has negative extent %lld in dimension %d",
                                     ir->name, (long long)n, d);
        }
        if (n > 0 && nonzero > INT64_MAX / n) {
            return tilec_interp_fail(c, "buffer %s is too large", ir->name);
        }
        b->shape[d] = n;
        nonzero *= n > 0 ? n : 1;
        size *= n;
    }
    if (ir->ndim > 0) {
        b->stride[ir->ndim - 1] = 1;
    }
    for (int d = ir->ndim - 2; d >= 0; d--) {
        b->stride[d] = b->stride[d + 1] * b->shape[d + 1];
    }
    b->size = size;
    if (i < c->k->nparams) {
        b->data = args ? (unsigned char *)args[i] : NULL;
        if (!b->data && size > 0) {
            return tilec_interp_fail(c, "no data for parameter %s", ir->name);
        }
        if (tilec_dtype_is_4bit(ir->dtype) && size > 0) {
            /* a packed 4-bit tensor: run on one value per byte, packed back at the end */
            b->packed = b->data;
            b->data = malloc((size_t)size);
            if (!b->data) {
                return tilec_interp_fail(c, "out of memory unpacking %s", ir->name);
            }
            b->owned = 1;
            tilec_unpack4(ir->dtype, b->packed, b->data, (size_t)size);
        }
    } else {
        if ((uint64_t)size > SIZE_MAX / b->esize) {
            return tilec_interp_fail(c, "buffer %s is too large", ir->name);
        }
        size_t bytes = (size_t)size * b->esize;
        b->data = calloc(bytes ? bytes : 1, 1);
        if (!b->data) {
            return tilec_interp_fail(c, "out of memory allocating %s (%zu bytes)", ir->name, bytes);
        }
        b->owned = 1;
    }
    b->ready = 1;
    return 0;
}

static int setup_mbars(tilec_ictx_t *c)
{
    const tilec_ir_kernel_t *k = c->k;
    if (k->nmbars <= 0) {
        return 0;
    }
    if (!k->mbars) {
        return tilec_interp_fail(c, "malformed mbarrier table");
    }
    c->mbars = calloc((size_t)k->nmbars, sizeof *c->mbars);
    if (!c->mbars) {
        return tilec_interp_fail(c, "out of memory");
    }
    for (int i = 0; i < k->nmbars; i++) {
        const tilec_ir_mbarrier_t *b = k->mbars[i];
        if (!b || b->id != i || b->size < 1 || b->arrive < 1) {
            return tilec_interp_fail(c, "malformed mbarrier %d", i);
        }
        c->mbars[i].phase = calloc((size_t)b->size, sizeof *c->mbars[i].phase);
        c->mbars[i].arrivals = calloc((size_t)b->size, sizeof *c->mbars[i].arrivals);
        c->mbars[i].tx = calloc((size_t)b->size, sizeof *c->mbars[i].tx);
        if (!c->mbars[i].phase || !c->mbars[i].arrivals || !c->mbars[i].tx) {
            return tilec_interp_fail(c, "out of memory");
        }
    }
    return 0;
}

static int bind_symbols(tilec_ictx_t *c, const int64_t *syms)
{
    int si = 0;
    for (int i = 0; i < c->k->nvars; i++) {
        const tilec_ir_var_t *v = c->k->vars[i];
        if (!v || v->id != i || (unsigned)v->dtype >= TILEC_DTYPE_COUNT) {
            return tilec_interp_fail(c, "malformed variable table at index %d", i);
        }
        if (v->kind != TILEC_VAR_SYM) {
            continue;
        }
        if (!syms) {
            return tilec_interp_fail(c, "no value for symbol %s", v->name ? v->name : "?");
        }
        int64_t x = syms[si++];
        if (x < 0) {
            return tilec_interp_fail(c, "symbol %s has negative value %lld", v->name ? v->name : "?",
                                     (long long)x);
        }
        tilec_ival_t val;
        val.i = x;
        c->vars[i] = is_float_t(v->dtype) ? tilec_interp_cvt(val, TILEC_INT64, v->dtype) : val;
    }
    return 0;
}

/* Fresh block: on-chip buffers and LET/loop variables back to zero, no
 * async copy queued, every mbarrier uninitialized.  A ring the lowering
 * says is written whole, stage by stage, before it is read
 * (lower.stage_fill: the dialect does not zero it) starts as all-ones
 * bytes instead (NaN, -1), so a read before its write shows in the
 * results. */
static void reset_block(tilec_ictx_t *c)
{
    tilec_interp_async_reset(c);
    for (int i = 0; c->mbars && i < c->k->nmbars; i++) {
        c->mbars[i].inited = 0;
    }
    for (int i = 0; i < c->k->nbufs; i++) {
        tilec_ibuf_t *b = &c->bufs[i];
        if (b->owned && !b->global) {
            const tilec_ir_buffer_t *ib = c->k->bufs[i];
            int poison = tilec_ir_attr_get(ib->nattrs, ib->attrs, "lower.stage_fill") != NULL;
            memset(b->data, poison ? 0xff : 0, (size_t)b->size * b->esize);
        }
    }
    for (int i = 0; i < c->k->nvars; i++) {
        if (c->k->vars[i]->kind == TILEC_VAR_LET || c->k->vars[i]->kind == TILEC_VAR_LOOP) {
            memset(&c->vars[i], 0, sizeof c->vars[i]);
        }
    }
}

static int run_blocks(tilec_ictx_t *c)
{
    const tilec_ir_kernel_t *k = c->k;
    int64_t g[3] = {1, 1, 1};
    int bid[3] = {-1, -1, -1};
    for (int d = 0; d < k->ngrid; d++) {
        if (tilec_interp_eval_int(c, k->grid[d], &g[d])) {
            return -1;
        }
        if (g[d] < 0) {
            return tilec_interp_fail(c, "grid extent %d is negative (%lld)", d, (long long)g[d]);
        }
        if (k->block[d] && var_slot(c, k->block[d], &bid[d])) {
            return -1;
        }
    }
    if (tilec_log_enabled("launch")) {
        tilec_log("launch", "interp: kernel %s grid (%lld,%lld,%lld)", k->name ? k->name : "?",
                  (long long)g[0], (long long)g[1], (long long)g[2]);
    }
    for (int64_t z = 0; z < g[2]; z++) {
        for (int64_t y = 0; y < g[1]; y++) {
            for (int64_t x = 0; x < g[0]; x++) {
                int64_t pos[3] = {x, y, z};
                reset_block(c);
                for (int d = 0; d < 3; d++) {
                    c->block[d] = pos[d];
                    if (bid[d] >= 0) {
                        tilec_ival_t v;
                        v.i = pos[d];
                        c->vars[bid[d]] = tilec_interp_cvt(v, TILEC_INT64, k->block[d]->dtype);
                    }
                }
                c->in_block = 1;
                if (exec_list(c, k->body) || tilec_interp_async_end(c)) {
                    return -1;
                }
                c->in_block = 0;
            }
        }
    }
    return 0;
}

int tilec_interp_run(const tilec_ir_kernel_t *k, void *const *args, const int64_t *syms,
                     char *err, size_t errlen)
{
    tilec_ictx_t c;
    memset(&c, 0, sizeof c);
    c.err = err;
    c.errlen = errlen;
    if (err && errlen) {
        err[0] = '\0';
    }
    if (!k) {
        return tilec_interp_fail(&c, "no kernel to interpret");
    }
    c.k = k;
    if (k->nvars < 0 || k->nbufs < 0 || k->nparams < 0 || k->nparams > k->nbufs ||
        k->ngrid < 1 || k->ngrid > 3 || (k->nvars && !k->vars) || (k->nbufs && !k->bufs)) {
        return tilec_interp_fail(&c, "malformed kernel %s", k->name ? k->name : "?");
    }
    c.vars = calloc(k->nvars ? (size_t)k->nvars : 1, sizeof *c.vars);
    c.bufs = calloc(k->nbufs ? (size_t)k->nbufs : 1, sizeof *c.bufs);
    int rc = -1;
    if (!c.vars || !c.bufs) {
        tilec_interp_fail(&c, "out of memory");
        goto done;
    }
    if (bind_symbols(&c, syms)) {
        goto done;
    }
    for (int i = 0; i < k->nbufs; i++) {
        if (setup_buffer(&c, i, args)) {
            goto done;
        }
    }
    if (setup_mbars(&c)) {
        goto done;
    }
    rc = run_blocks(&c);
done:
    tilec_interp_async_reset(&c);
    free(c.asyncs);
    if (c.bufs) {
        for (int i = 0; i < k->nbufs; i++) {
            if (c.bufs[i].packed && rc == 0) {
                tilec_pack4(c.bufs[i].data, c.bufs[i].packed, (size_t)c.bufs[i].size);
            }
            if (c.bufs[i].owned) {
                free(c.bufs[i].data);
            }
            free(c.bufs[i].pending);
        }
    }
    for (int i = 0; c.mbars && i < k->nmbars; i++) {
        free(c.mbars[i].phase);
        free(c.mbars[i].arrivals);
        free(c.mbars[i].tx);
    }
    free(c.mbars);
    free(c.bufs);
    free(c.vars);
    free(c.scratch);
    return rc;
}
