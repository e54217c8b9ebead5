/*
 * frontend/reinterpret.c — T.reinterpret / tvm.tirx.reinterpret: a value's
 * bits read as another dtype of the same size.
 *
 * TileLang's dequantizing kernels build a float16 or bfloat16 from packed
 * 4-bit fields (`reinterpret(T.float16, (e << 10 | m << 9).astype(uint16))`)
 * and reinterpret uint8 bits as int8.  Every backend runs integer and
 * float arithmetic, while only tile IR 1.4 has bit casts (the CPU backend
 * and the interpreter read it; the GPU plugins read up to 1.2), so the
 * frontend rebuilds a value from integer bits exactly: for an IEEE-style
 * float with E exponent and M mantissa bits (sign s, exponent e, mantissa
 * m, bias b)
 *     e == 0:            (-1)^s * (m * 2^-M) * 2^(1-b)          (subnormal)
 *     0 < e < 2^E - 1:   (-1)^s * (1 + m * 2^-M) * 2^(e-b)
 *     e == 2^E - 1:      +-inf when m == 0, else NaN (float8_e4m3fn has no
 *                        inf: only S.1111.111 is NaN)
 * computed in float32 (float64 for a float64 result), where every step is
 * exact: 2^k is a product of constant powers 2^(+-2^i) chosen by k's bits.
 * Integer to integer is the two's-complement wrap.  NaN payloads are not
 * kept (any NaN bits give a quiet NaN).  The other direction, a float's
 * bits as an integer or another float, is a 1.4 bit cast (bitcast(x):T).
 */
#include "eval_internal.h"

#include <math.h>

typedef struct fmt { int ebits, mbits, bias, has_inf; } fmt_t;

static int float_format(tilec_dtype_t t, fmt_t *f)
{
    switch (t) {
    case TILEC_FLOAT16: *f = (fmt_t){5, 10, 15, 1}; return 1;
    case TILEC_BFLOAT16: *f = (fmt_t){8, 7, 127, 1}; return 1;
    case TILEC_FLOAT32: *f = (fmt_t){8, 23, 127, 1}; return 1;
    case TILEC_FLOAT64: *f = (fmt_t){11, 52, 1023, 1}; return 1;
    case TILEC_FLOAT8_E4M3FN: *f = (fmt_t){4, 3, 7, 0}; return 1;
    case TILEC_FLOAT8_E5M2: *f = (fmt_t){5, 2, 15, 1}; return 1;
    default: return 0;
    }
}

static tilec_ir_expr_t *ic(ev_t *ev, int64_t v, tilec_dtype_t t) { return ev_chk(ev, tilec_ir_int(ev->a, v, t)); }
static tilec_ir_expr_t *fc(ev_t *ev, double v, tilec_dtype_t t) { return ev_chk(ev, tilec_ir_float(ev->a, v, t)); }
static tilec_ir_expr_t *bin(ev_t *ev, tilec_binop_t op, tilec_ir_expr_t *a, tilec_ir_expr_t *b)
{
    return ev_chk(ev, tilec_ir_binary(ev->a, op, a, b));
}
static tilec_ir_expr_t *sel(ev_t *ev, tilec_ir_expr_t *c, tilec_ir_expr_t *a, tilec_ir_expr_t *b)
{
    return ev_chk(ev, tilec_ir_select(ev->a, c, a, b));
}

/* 2^k for an int32 k with |k| < 2^nbits, in float type t. */
static tilec_ir_expr_t *pow2(ev_t *ev, tilec_ir_expr_t *k, int nbits, tilec_dtype_t t)
{
    tilec_ir_expr_t *neg = bin(ev, TILEC_BIN_LT, k, ic(ev, 0, TILEC_INT32));
    tilec_ir_expr_t *ka = sel(ev, neg, bin(ev, TILEC_BIN_SUB, ic(ev, 0, TILEC_INT32), k), k);
    tilec_ir_expr_t *up = fc(ev, 1.0, t), *down = fc(ev, 1.0, t);
    int i;
    for (i = 0; i < nbits; i++) {
        tilec_ir_expr_t *bit = bin(ev, TILEC_BIN_NE,
                                   bin(ev, TILEC_BIN_BITAND, bin(ev, TILEC_BIN_SHR, ka, ic(ev, i, TILEC_INT32)),
                                       ic(ev, 1, TILEC_INT32)),
                                   ic(ev, 0, TILEC_INT32));
        up = bin(ev, TILEC_BIN_MUL, up, sel(ev, bit, fc(ev, ldexp(1.0, 1 << i), t), fc(ev, 1.0, t)));
        down = bin(ev, TILEC_BIN_MUL, down, sel(ev, bit, fc(ev, ldexp(1.0, -(1 << i)), t), fc(ev, 1.0, t)));
    }
    return sel(ev, neg, down, up);
}

value_t *v_reinterpret(ev_t *ev, value_t *x, tilec_dtype_t to, ast_loc_t loc)
{
    tilec_ir_expr_t *e = ex_of(ev, x, loc), *u;
    tilec_dtype_t from = e->dtype, w;
    size_t n = tilec_dtype_size(from);
    int bits = (int)n * 8;
    fmt_t f;
    if (from == to) return x;
    if (n != tilec_dtype_size(to) || from == TILEC_BOOL || to == TILEC_BOOL)
        ev_fail(ev, loc, "T.reinterpret needs dtypes of the same size (%s is %zu bytes, %s %zu)", tilec_dtype_name(from),
                n, tilec_dtype_name(to), tilec_dtype_size(to));
    if (tilec_dtype_is_4bit(from) || tilec_dtype_is_4bit(to))
        ev_fail(ev, loc, "T.reinterpret of %s as %s: the 4-bit dtypes are read through T.cast and packed tensors, "
                "not reinterpreted", tilec_dtype_name(from), tilec_dtype_name(to));
    if (!tilec_dtype_is_int(from)) /* a float's bits: a bit cast (tile IR 1.4) */
        return v_expr(ev, ev_chk(ev, tilec_ir_bitcast(ev->a, to, e)));
    /* the bits, as a non-negative integer of a type wide enough */
    w = n <= 2 ? TILEC_INT32 : n == 4 ? TILEC_UINT32 : TILEC_UINT64;
    u = ex_cast(ev, e, w);
    if (n <= 2) u = bin(ev, TILEC_BIN_BITAND, u, ic(ev, ((int64_t)1 << bits) - 1, w));
    if (tilec_dtype_is_int(to)) {
        tilec_ir_expr_t *r = u;
        if (n <= 2 && !(to == TILEC_UINT8 || to == TILEC_UINT16))   /* two's complement: u - 2^N when the top bit is set */
            r = sel(ev, bin(ev, TILEC_BIN_GE, u, ic(ev, (int64_t)1 << (bits - 1), w)),
                    bin(ev, TILEC_BIN_SUB, u, ic(ev, (int64_t)1 << bits, w)), u);
        return v_expr(ev, ex_cast(ev, r, to));   /* 4 and 8 bytes: the cast wraps */
    }
    if (!float_format(to, &f)) ev_fail(ev, loc, "T.reinterpret to %s is not supported", tilec_dtype_name(to));
    {
        tilec_dtype_t ft = to == TILEC_FLOAT64 ? TILEC_FLOAT64 : TILEC_FLOAT32;
        int64_t emax = ((int64_t)1 << f.ebits) - 1;
        tilec_ir_expr_t *s = bin(ev, TILEC_BIN_BITAND, bin(ev, TILEC_BIN_SHR, u, ic(ev, f.ebits + f.mbits, w)), ic(ev, 1, w));
        tilec_ir_expr_t *ex = bin(ev, TILEC_BIN_BITAND, bin(ev, TILEC_BIN_SHR, u, ic(ev, f.mbits, w)), ic(ev, emax, w));
        tilec_ir_expr_t *m = bin(ev, TILEC_BIN_BITAND, u, ic(ev, ((int64_t)1 << f.mbits) - 1, w));
        tilec_ir_expr_t *ei = ex_cast(ev, ex, TILEC_INT32);
        tilec_ir_expr_t *frac = bin(ev, TILEC_BIN_MUL, ex_cast(ev, m, ft), fc(ev, ldexp(1.0, -f.mbits), ft));
        tilec_ir_expr_t *k = bin(ev, TILEC_BIN_SUB, ei, ic(ev, f.bias, TILEC_INT32));
        int kbits = 0;
        tilec_ir_expr_t *normal, *sub, *val, *special, *mzero;
        /* |k| of every finite exponent: 1 - bias for subnormals' neighbours, up to emax - bias (e4m3fn, no inf)
         * or emax - 1 - bias */
        int64_t kmax = f.bias - 1 > emax - f.has_inf - f.bias ? f.bias - 1 : emax - f.has_inf - f.bias;
        while (((int64_t)1 << kbits) <= kmax) kbits++;
        normal = bin(ev, TILEC_BIN_MUL, bin(ev, TILEC_BIN_ADD, fc(ev, 1.0, ft), frac), pow2(ev, k, kbits, ft));
        sub = bin(ev, TILEC_BIN_MUL, frac, fc(ev, ldexp(1.0, 1 - f.bias), ft));
        val = sel(ev, bin(ev, TILEC_BIN_EQ, ei, ic(ev, 0, TILEC_INT32)), sub, normal);
        mzero = bin(ev, TILEC_BIN_EQ, m, ic(ev, 0, w));
        if (f.has_inf) {
            special = sel(ev, mzero, fc(ev, INFINITY, ft), fc(ev, NAN, ft));
            val = sel(ev, bin(ev, TILEC_BIN_EQ, ei, ic(ev, emax, TILEC_INT32)), special, val);
        } else {   /* e4m3fn: S.1111.111 is NaN, the rest of e == 15 is finite */
            tilec_ir_expr_t *nan = bin(ev, TILEC_BIN_AND, bin(ev, TILEC_BIN_EQ, ei, ic(ev, emax, TILEC_INT32)),
                                       bin(ev, TILEC_BIN_EQ, m, ic(ev, ((int64_t)1 << f.mbits) - 1, w)));
            val = sel(ev, nan, fc(ev, NAN, ft), val);
        }
        val = sel(ev, bin(ev, TILEC_BIN_NE, s, ic(ev, 0, w)), ev_chk(ev, tilec_ir_unary(ev->a, TILEC_UN_NEG, val)), val);
        return v_expr(ev, ex_cast(ev, val, to));
    }
}
