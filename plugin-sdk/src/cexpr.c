/*
 * cexpr.c — the C-family scalar-expression emitter shared by the CPU
 * backend, the SIMT lowering kit and the CUDA backend (tilec/cexpr.h).
 *
 * Walks a tile IR expression and writes it as one C expression in its
 * compute type: literals, variables v<id>, buffer loads, unary and binary
 * operators with the reference interpreter's semantics (wrapping integer
 * arithmetic, floor division/modulo helpers, min/max that follow the
 * interpreter), select and casts.  Everything target-specific goes through
 * the hooks of tilec_cexpr_t, so each generator prints what it printed
 * when it had its own copy of this walk (the CUDA backend: the same
 * semantics, respelled; its hooks round float16/bfloat16 results).
 * Nesting is bounded by the caller's max_depth.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "tilec/cexpr.h"

static char *xfmt(const tilec_cexpr_t *x, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *xfmt(const tilec_cexpr_t *x, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = x->vfmt(x->u, f, ap);
    va_end(ap);
    return s;
}

static void xfail(const tilec_cexpr_t *x, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void xfail(const tilec_cexpr_t *x, const char *f, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, f);
    vsnprintf(msg, sizeof msg, f, ap);
    va_end(ap);
    x->fail(x->u, msg);
}

char *tilec_cexpr_vprintf(tilec_arena_t *a, const char *f, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, f, ap);
    char *s = n < 0 ? NULL : tilec_arena_alloc(a, (size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, f, ap2);
    va_end(ap2);
    return s;
}

/* A C cast written with format cfmt (its two %s: type name, value), or
 * the caller's cast hook when it has one. */
static const char *xcast(const tilec_cexpr_t *x, const char *cfmt, const char *tname, const char *v)
{
    if (x->cast)
        return x->cast(x->u, tname, v);
    return xfmt(x, cfmt, tname, v);
}

/* Truth value r (a C int, or a bool of a strict language) as the compute
 * value of bool. */
static const char *xtruth(const tilec_cexpr_t *x, const char *r)
{
    return x->bool_name ? x->cast(x->u, x->ctype(x->u, TILEC_BOOL), r) : r;
}

/* Compute value v used as a condition. */
static const char *xcond(const tilec_cexpr_t *x, const char *v)
{
    return x->bool_name ? x->cast(x->u, x->bool_name, v) : v;
}

static int valid_dtype(int t) { return t >= 0 && t < TILEC_DTYPE_COUNT; }

int tilec_cexpr_is_flt(tilec_dtype_t t)
{
    return t == TILEC_FLOAT16 || t == TILEC_BFLOAT16 || t == TILEC_FLOAT32 || t == TILEC_FLOAT64;
}

const char *tilec_cexpr_isfx(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: return "i8";
    case TILEC_INT16: return "i16";
    case TILEC_INT64: return "i64";
    case TILEC_UINT8: return "u8";
    case TILEC_UINT16: return "u16";
    case TILEC_UINT32: return "u32";
    case TILEC_UINT64: return "u64";
    default: return "i32";
    }
}

const char *tilec_cexpr_math(const tilec_cexpr_t *x, const char *base, int dbl)
{
    if (x->math_name) {
        const char *r = x->math_name(x->u, base, dbl);
        if (r)
            return r;
    }
    if (x->math_generic || dbl)
        return base;
    return xfmt(x, "%sf", base);
}

static void use_flt(const tilec_cexpr_t *x, int dbl)
{
    if (x->use_flt_helpers)
        x->use_flt_helpers(x->u, dbl);
}

const char *tilec_cexpr_wrap4(const tilec_cexpr_t *x, tilec_dtype_t t, const char *r)
{
    if (!tilec_dtype_is_4bit(t) || t == TILEC_FLOAT4_E2M1FN)
        return r;
    const char *low = xfmt(x, "(%s & 15u)", xcast(x, "((%s)(%s))", x->uint32_name, r));
    if (t == TILEC_INT4) /* (low ^ 8) - 8: the nibble's sign bit extended */
        low = xfmt(x, "(%s - 8)", xcast(x, "((%s)(%s))", "int", xfmt(x, "(%s ^ 8u)", low)));
    return xcast(x, "((%s)(%s))", x->ctype(x->u, t), low);
}

/* Call of integer helper tc_<op>_<sfx>; bool uses the int32 family, and
 * so do the 4-bit integers (their result wrapped). */
static const char *ihelper(const tilec_cexpr_t *x, const char *op, tilec_dtype_t t, const char *a, const char *b)
{
    tilec_dtype_t h = t == TILEC_BOOL || tilec_dtype_is_4bit(t) ? TILEC_INT32 : t;
    if (x->use_int_helpers)
        x->use_int_helpers(x->u, h);
    const char *s = tilec_cexpr_isfx(h);
    return tilec_cexpr_wrap4(x, t, b ? xfmt(x, "tc_%s_%s(%s, %s)", op, s, a, b) : xfmt(x, "tc_%s_%s(%s)", op, s, a));
}

static int wide_int(tilec_dtype_t t)
{
    return t == TILEC_INT32 || t == TILEC_INT64 || t == TILEC_UINT32 || t == TILEC_UINT64;
}

const char *tilec_cexpr_arith(const tilec_cexpr_t *x, const char *o, tilec_dtype_t t, const char *a, const char *b)
{
    if (tilec_cexpr_is_flt(t) || wide_int(t))
        return xfmt(x, "((%s) %s (%s))", a, o, b);
    /* narrow types promote to int: compute wrapped in uint32 */
    const char *u = x->uint32_name;
    const char *r = x->cast ? xcast(x, "", x->ctype(x->u, t),
                                    xfmt(x, "%s %s %s", xcast(x, "", u, a), o, xcast(x, "", u, b)))
                            : xfmt(x, "((%s)((%s)(%s) %s (%s)(%s)))", x->ctype(x->u, t), u, a, o, u, b);
    r = tilec_cexpr_wrap4(x, t, r);
    if (t == TILEC_BOOL)
        r = xtruth(x, xfmt(x, "((%s) != 0)", r));
    return r;
}

const char *tilec_cexpr_minmax(const tilec_cexpr_t *x, int is_max, tilec_dtype_t t, const char *a, const char *b)
{
    if (tilec_cexpr_is_flt(t)) {
        int dbl = t == TILEC_FLOAT64;
        use_flt(x, dbl);
        return xfmt(x, "tc_%s%s(%s, %s)", is_max ? "max" : "min", dbl ? "d" : "f", a, b);
    }
    const char *r = ihelper(x, is_max ? "max" : "min", t, a, b);
    if (t == TILEC_BOOL && x->bool_minmax_ne0)
        r = xtruth(x, xfmt(x, "((%s) != 0)", r));
    return r;
}

const char *tilec_cexpr_abs(const tilec_cexpr_t *x, tilec_dtype_t t, const char *a)
{
    if (tilec_cexpr_is_flt(t))
        return xfmt(x, "%s(%s)", tilec_cexpr_math(x, "fabs", t == TILEC_FLOAT64), a);
    if (t == TILEC_BOOL)
        return a;
    return ihelper(x, "abs", t, a, NULL);
}

/* Float result r of dtype t through the flt_result hook (when set). */
static const char *fres(const tilec_cexpr_t *x, const char *r, tilec_dtype_t t)
{
    if (!x->flt_result || !tilec_cexpr_is_flt(t))
        return r;
    return x->flt_result(x->u, r, t);
}

static const char *unary(const tilec_cexpr_t *x, const tilec_ir_expr_t *e, const char *a)
{
    tilec_dtype_t t = e->u.un.a->dtype;
    int dbl = t == TILEC_FLOAT64;
    int isf = tilec_cexpr_is_flt(t);
    switch (e->u.un.op) {
    case TILEC_UN_NEG:
        if (isf)
            return xfmt(x, "(-(%s))", a);
        if (t == TILEC_BOOL)
            return xtruth(x, xfmt(x, "((%s) != 0)", a));
        if (x->cast)
            return tilec_cexpr_wrap4(x, t, xcast(x, "", x->ctype(x->u, t), xfmt(x, "0 - %s", xcast(x, "", x->uint64_name, a))));
        return tilec_cexpr_wrap4(x, t, xfmt(x, "((%s)(0 - (%s)(%s)))", x->ctype(x->u, t), x->uint64_name, a));
    case TILEC_UN_NOT: return xtruth(x, xfmt(x, "(!(%s))", xcond(x, a)));
    case TILEC_UN_ABS: return tilec_cexpr_abs(x, t, a);
    case TILEC_UN_BITCAST:
        if (!x->bitcast) {
            xfail(x, "bit casts (tile IR 1.4) are not supported by this backend");
            return "0";
        }
        return x->bitcast(x->u, a, t, e->dtype);
    case TILEC_UN_FLOOR:
    case TILEC_UN_CEIL:
        if (!isf)
            return a;
        return fres(x, xfmt(x, "%s(%s)", tilec_cexpr_math(x, e->u.un.op == TILEC_UN_FLOOR ? "floor" : "ceil", dbl), a),
                    t);
    default: break;
    }
    /* math on integers (not produced by the frontend): through double or float */
    const char *v = a;
    if (!isf) {
        if (x->int_math_via_double) {
            v = xcast(x, "(%s)(%s)", "double", a);
            dbl = 1;
        } else {
            v = xcast(x, "((%s)(%s))", x->float32_name, a);
        }
    }
    const char *r;
    switch (e->u.un.op) {
    case TILEC_UN_EXP: r = xfmt(x, "%s(%s)", tilec_cexpr_math(x, "exp", dbl), v); break;
    case TILEC_UN_EXP2: r = xfmt(x, "%s(%s)", tilec_cexpr_math(x, "exp2", dbl), v); break;
    case TILEC_UN_LOG: r = xfmt(x, "%s(%s)", tilec_cexpr_math(x, "log", dbl), v); break;
    case TILEC_UN_LOG2: r = xfmt(x, "%s(%s)", tilec_cexpr_math(x, "log2", dbl), v); break;
    case TILEC_UN_SQRT: r = xfmt(x, "%s(%s)", tilec_cexpr_math(x, "sqrt", dbl), v); break;
    case TILEC_UN_TANH: r = xfmt(x, "%s(%s)", tilec_cexpr_math(x, "tanh", dbl), v); break;
    case TILEC_UN_RSQRT:
        if (x->has_rsqrt)
            r = xfmt(x, "%s(%s)", tilec_cexpr_math(x, "rsqrt", dbl), v);
        else
            r = xfmt(x, dbl ? "(1.0 / %s(%s))" : "(1.0f / %s(%s))", tilec_cexpr_math(x, "sqrt", dbl), v);
        break;
    case TILEC_UN_SIGMOID:
        use_flt(x, dbl);
        r = xfmt(x, "tc_sigmoid%s(%s)", dbl ? "d" : "f", v);
        break;
    default:
        xfail(x, "unknown unary operator %d", (int)e->u.un.op);
        return "0";
    }
    if (!isf)
        r = tilec_cexpr_wrap4(x, t, xcast(x, "((%s)(%s))", x->ctype(x->u, t), r));
    return fres(x, r, t);
}

/* ---- value ranges of integer expressions (tilec_cexpr_range) ---- */

#define RANGE_MAX_DEPTH 64

static int range_int_dtype(tilec_dtype_t t) { return t == TILEC_INT32 || t == TILEC_INT64 || t == TILEC_BOOL; }

/* [lo, hi] if it lies within the int32 range (so products of two such
 * bounds fit in int64 and no int32 operation wrapped), else unknown. */
static int range_set(int64_t lo, int64_t hi, int64_t *olo, int64_t *ohi)
{
    if (lo > hi || lo < INT32_MIN || hi > INT32_MAX)
        return 0;
    *olo = lo;
    *ohi = hi;
    return 1;
}

static int64_t min4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t m = a < b ? a : b;
    m = m < c ? m : c;
    return m < d ? m : d;
}

static int64_t max4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t m = a > b ? a : b;
    m = m > c ? m : c;
    return m > d ? m : d;
}

/* floor(a / c) and trunc(a / c) for c >= 1 */
static int64_t fdiv64(int64_t a, int64_t c) { return a >= 0 ? a / c : -((-a + c - 1) / c); }

static int range_rec(const tilec_cexpr_t *x, const tilec_ir_expr_t *e, int64_t *lo, int64_t *hi, int depth)
{
    if (!e || depth > RANGE_MAX_DEPTH || !range_int_dtype(e->dtype))
        return 0;
    int64_t al, ah, bl, bh;
    switch (e->kind) {
    case TILEC_EX_INT: return range_set(e->u.i, e->u.i, lo, hi);
    case TILEC_EX_VAR:
        if (!x->var_range || !e->u.var || !x->var_range(x->u, e->u.var, &al, &ah))
            return 0;
        return range_set(al, ah, lo, hi);
    case TILEC_EX_CAST:
        if (e->dtype == TILEC_BOOL)
            return range_set(0, 1, lo, hi);
        if (!e->u.cast.a || !range_int_dtype(e->u.cast.a->dtype) || !range_rec(x, e->u.cast.a, &al, &ah, depth + 1))
            return 0;
        return range_set(al, ah, lo, hi);
    case TILEC_EX_SELECT:
        if (!range_rec(x, e->u.sel.a, &al, &ah, depth + 1) || !range_rec(x, e->u.sel.b, &bl, &bh, depth + 1))
            return 0;
        return range_set(al < bl ? al : bl, ah > bh ? ah : bh, lo, hi);
    case TILEC_EX_BINARY: break;
    default: return 0;
    }
    int op = e->u.bin.op;
    if (op >= TILEC_BIN_EQ && op <= TILEC_BIN_OR)
        return range_set(0, 1, lo, hi);
    if (!range_rec(x, e->u.bin.a, &al, &ah, depth + 1) || !range_rec(x, e->u.bin.b, &bl, &bh, depth + 1))
        return 0;
    switch (op) {
    case TILEC_BIN_ADD: return range_set(al + bl, ah + bh, lo, hi);
    case TILEC_BIN_SUB: return range_set(al - bh, ah - bl, lo, hi);
    case TILEC_BIN_MUL:
        return range_set(min4(al * bl, al * bh, ah * bl, ah * bh), max4(al * bl, al * bh, ah * bl, ah * bh), lo, hi);
    case TILEC_BIN_MIN: return range_set(al < bl ? al : bl, ah < bh ? ah : bh, lo, hi);
    case TILEC_BIN_MAX: return range_set(al > bl ? al : bl, ah > bh ? ah : bh, lo, hi);
    case TILEC_BIN_DIV:
    case TILEC_BIN_FLOORDIV:
        if (bl < 1)
            return 0;
        if (bl == bh) /* floor and truncation are monotone in the dividend */
            return op == TILEC_BIN_DIV ? range_set(al / bl, ah / bl, lo, hi)
                                       : range_set(fdiv64(al, bl), fdiv64(ah, bl), lo, hi);
        return al >= 0 ? range_set(al / bh, ah / bl, lo, hi) : 0;
    case TILEC_BIN_FLOORMOD:
        if (bl < 1)
            return 0;
        if (al >= 0 && ah < bl)
            return range_set(al, ah, lo, hi);
        return range_set(0, bh - 1, lo, hi);
    case TILEC_BIN_BITAND:
        if (al >= 0 && bl >= 0)
            return range_set(0, ah < bh ? ah : bh, lo, hi);
        return 0;
    case TILEC_BIN_SHR:
        if (al >= 0 && bl == bh && bl >= 0 && bl < 32)
            return range_set(al >> bl, ah >> bl, lo, hi);
        return 0;
    default: return 0;
    }
}

int tilec_cexpr_range(const tilec_cexpr_t *x, const tilec_ir_expr_t *e, int64_t *lo, int64_t *hi)
{
    return x && lo && hi && range_rec(x, e, lo, hi, 0);
}

/* a / b, a // b or a % b (op) on int32/int64 t as the unsigned C operator
 * when a >= 0 and b >= 1 are proved (then all three agree with C's); NULL
 * otherwise. */
static const char *udivmod(const tilec_cexpr_t *x, const tilec_ir_expr_t *e, tilec_dtype_t t, const char *a,
                           const char *b)
{
    int64_t al, ah, bl, bh;
    if (!x->var_range || (t != TILEC_INT32 && t != TILEC_INT64) || !tilec_cexpr_range(x, e->u.bin.a, &al, &ah) ||
        !tilec_cexpr_range(x, e->u.bin.b, &bl, &bh) || al < 0 || bl < 1)
        return NULL;
    const char *un = t == TILEC_INT32 ? x->uint32_name : x->uint64_name;
    /* an int32 constant divisor as an unsigned literal (C, OpenCL and GLSL spell it alike) */
    const char *ub = t == TILEC_INT32 && e->u.bin.b->kind == TILEC_EX_INT ? xfmt(x, "%" PRId64 "u", bl)
                                                                          : xcast(x, "((%s)(%s))", un, b);
    const char *q = xfmt(x, "%s %s %s", xcast(x, "((%s)(%s))", un, a), e->u.bin.op == TILEC_BIN_FLOORMOD ? "%" : "/", ub);
    return xcast(x, "((%s)(%s))", x->ctype(x->u, t), q);
}

static const char *binary(const tilec_cexpr_t *x, const tilec_ir_expr_t *e, const char *a, const char *b)
{
    tilec_dtype_t t = e->u.bin.a->dtype;
    int dbl = t == TILEC_FLOAT64;
    int op = e->u.bin.op;
    switch (op) {
    case TILEC_BIN_EQ: return xtruth(x, xfmt(x, "((%s) == (%s))", a, b));
    case TILEC_BIN_NE: return xtruth(x, xfmt(x, "((%s) != (%s))", a, b));
    case TILEC_BIN_LT: return xtruth(x, xfmt(x, "((%s) < (%s))", a, b));
    case TILEC_BIN_LE: return xtruth(x, xfmt(x, "((%s) <= (%s))", a, b));
    case TILEC_BIN_GT: return xtruth(x, xfmt(x, "((%s) > (%s))", a, b));
    case TILEC_BIN_GE: return xtruth(x, xfmt(x, "((%s) >= (%s))", a, b));
    case TILEC_BIN_AND: return xtruth(x, xfmt(x, "((%s) && (%s))", xcond(x, a), xcond(x, b)));
    case TILEC_BIN_OR: return xtruth(x, xfmt(x, "((%s) || (%s))", xcond(x, a), xcond(x, b)));
    case TILEC_BIN_ADD: return fres(x, tilec_cexpr_arith(x, "+", t, a, b), t);
    case TILEC_BIN_SUB: return fres(x, tilec_cexpr_arith(x, "-", t, a, b), t);
    case TILEC_BIN_MUL: return fres(x, tilec_cexpr_arith(x, "*", t, a, b), t);
    case TILEC_BIN_MIN: return fres(x, tilec_cexpr_minmax(x, 0, t, a, b), t);
    case TILEC_BIN_MAX: return fres(x, tilec_cexpr_minmax(x, 1, t, a, b), t);
    default: break;
    }
    if (tilec_cexpr_is_flt(t)) {
        switch (op) {
        case TILEC_BIN_DIV: return fres(x, xfmt(x, "((%s) / (%s))", a, b), t);
        case TILEC_BIN_FLOORDIV:
            return fres(x, xfmt(x, "%s((%s) / (%s))", tilec_cexpr_math(x, "floor", dbl), a, b), t);
        case TILEC_BIN_FLOORMOD:
            use_flt(x, dbl);
            return fres(x, xfmt(x, "tc_fmod%s(%s, %s)", dbl ? "d" : "f", a, b), t);
        case TILEC_BIN_POW: return fres(x, xfmt(x, "%s(%s, %s)", tilec_cexpr_math(x, "pow", dbl), a, b), t);
        default: break;
        }
    } else {
        const char *r = NULL;
        switch (op) {
        case TILEC_BIN_DIV:
        case TILEC_BIN_FLOORDIV:
        case TILEC_BIN_FLOORMOD:
            r = udivmod(x, e, t, a, b);
            if (r)
                break;
            r = ihelper(x, op == TILEC_BIN_DIV ? "div" : op == TILEC_BIN_FLOORDIV ? "fdiv" : "fmod", t, a, b);
            break;
        case TILEC_BIN_POW: r = ihelper(x, "pow", t, a, b); break;
        /* IR 1.1 bitwise operators (integer operands only) */
        case TILEC_BIN_BITAND: r = tilec_cexpr_arith(x, "&", t, a, b); break;
        case TILEC_BIN_BITOR: r = tilec_cexpr_arith(x, "|", t, a, b); break;
        case TILEC_BIN_BITXOR: r = tilec_cexpr_arith(x, "^", t, a, b); break;
        case TILEC_BIN_SHL: r = tilec_cexpr_arith(x, "<<", t, a, b); break;
        case TILEC_BIN_SHR: /* promotion keeps the sign: arithmetic on signed, logical on unsigned */
            r = tilec_cexpr_wrap4(x, t, xcast(x, "((%s)(%s))", x->ctype(x->u, t), xfmt(x, "(%s) >> (%s)", a, b)));
            break;
        default: break;
        }
        if (r)
            return t == TILEC_BOOL ? xtruth(x, xfmt(x, "((%s) != 0)", r)) : r;
    }
    xfail(x, "unknown binary operator %d", op);
    return "0";
}

static const char *conv(const tilec_cexpr_t *x, const char *v, tilec_dtype_t s, tilec_dtype_t t)
{
    return x->conv(x->u, v, s, t);
}

const char *tilec_cexpr_emit(const tilec_cexpr_t *x, const tilec_ir_expr_t *e)
{
    if (*x->failed)
        return "0";
    if (!e) {
        xfail(x, "%s", x->msg_missing);
        return "0";
    }
    if (!valid_dtype((int)e->dtype)) {
        xfail(x, "%s", x->msg_bad_dtype);
        return "0";
    }
    if (++*x->depth > x->max_depth) {
        xfail(x, "expression nested deeper than %d levels", x->max_depth);
        --*x->depth;
        return "0";
    }
    const char *r = "0";
    switch (e->kind) {
    case TILEC_EX_INT:
        r = tilec_cexpr_is_flt(e->dtype) ? x->flt_lit(x->u, (double)e->u.i, e->dtype)
                                         : x->int_lit(x->u, e->u.i, e->dtype);
        break;
    case TILEC_EX_FLOAT:
        if (tilec_cexpr_is_flt(e->dtype))
            r = x->flt_lit(x->u, e->u.f, e->dtype);
        else if (e->dtype == TILEC_BOOL)
            r = e->u.f != 0 ? "1" : "0";
        else
            r = xcast(x, "((%s)%s)", x->ctype(x->u, e->dtype), x->flt_lit(x->u, e->u.f, x->float_lit_via));
        break;
    case TILEC_EX_VAR: {
        const tilec_ir_var_t *v = e->u.var;
        if (!v || v->id < 0 || v->id >= x->k->nvars || x->k->vars[v->id] != v) {
            xfail(x, "reference to a variable not declared by the kernel");
            break;
        }
        r = conv(x, xfmt(x, "v%d", v->id), v->dtype, e->dtype);
        break;
    }
    case TILEC_EX_LOAD: {
        const tilec_ir_buffer_t *b = e->u.load.buf;
        const char *l = x->load(x->u, b, e->u.load.idx);
        if (l)
            r = conv(x, l, b->dtype, e->dtype);
        break;
    }
    case TILEC_EX_UNARY: {
        if (!e->u.un.a || !valid_dtype((int)e->u.un.a->dtype)) {
            xfail(x, "unary operator without a valid operand");
            break;
        }
        r = unary(x, e, tilec_cexpr_emit(x, e->u.un.a));
        tilec_dtype_t rt = e->u.un.op == TILEC_UN_NOT ? TILEC_BOOL : e->u.un.a->dtype;
        r = conv(x, r, rt, e->dtype);
        break;
    }
    case TILEC_EX_BINARY: {
        if (!e->u.bin.a || !e->u.bin.b || !valid_dtype((int)e->u.bin.a->dtype) ||
            !valid_dtype((int)e->u.bin.b->dtype)) {
            xfail(x, "binary operator without valid operands");
            break;
        }
        tilec_dtype_t ta = e->u.bin.a->dtype;
        const char *a = tilec_cexpr_emit(x, e->u.bin.a);
        /* operands have equal dtypes after typing; coerce b defensively */
        const char *b = conv(x, tilec_cexpr_emit(x, e->u.bin.b), e->u.bin.b->dtype, ta);
        r = binary(x, e, a, b);
        int cmp = e->u.bin.op >= TILEC_BIN_EQ;
        r = conv(x, r, cmp ? TILEC_BOOL : ta, e->dtype);
        break;
    }
    case TILEC_EX_SELECT: {
        if (!e->u.sel.cond || !e->u.sel.a || !e->u.sel.b) {
            xfail(x, "select without operands");
            break;
        }
        const char *c = tilec_cexpr_emit(x, e->u.sel.cond);
        const char *a = conv(x, tilec_cexpr_emit(x, e->u.sel.a), e->u.sel.a->dtype, e->dtype);
        const char *b = conv(x, tilec_cexpr_emit(x, e->u.sel.b), e->u.sel.b->dtype, e->dtype);
        r = xfmt(x, "((%s) ? (%s) : (%s))", xcond(x, c), a, b);
        break;
    }
    case TILEC_EX_CAST:
        if (!e->u.cast.a || !valid_dtype((int)e->u.cast.a->dtype)) {
            xfail(x, "cast without a valid operand");
            break;
        }
        r = conv(x, tilec_cexpr_emit(x, e->u.cast.a), e->u.cast.a->dtype, e->dtype);
        break;
    default:
        xfail(x, "unknown expression kind %d", (int)e->kind);
        break;
    }
    --*x->depth;
    return r;
}
