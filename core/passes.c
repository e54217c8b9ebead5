/*
 * core/passes.c — the core's pass pipeline over the tile IR
 * (tilec_passes_run, see passes.h).
 *
 * Passes, in order:
 *   simplify  constant folding and algebraic identities on every expression
 *             (shapes, grid, loop extents, indices, values).  Integer
 *             arithmetic wraps to the operand's width like the hardware
 *             does; DIV truncates, FLOORDIV/FLOORMOD floor like Python; a
 *             division by zero, an int POW with a negative exponent or a
 *             float-to-int cast out of range is left for run time.  Float
 *             results are computed in double and rounded once to the
 *             node's dtype.  Identities that change a float's value (x + 0
 *             turns -0 into +0) are applied to integers only.
 *   prune     an IF with a constant condition is replaced by the branch
 *             taken; a loop whose extent is a constant <= 0 is removed.
 *   safe_memory  guards the direct global loads, stores and atomics whose
 *             bounds it cannot prove (pass_safe_memory.c).
 * The module is verified before the first pass and after every pass
 * (tilec_ir_check_pass, the same check the SDK's lowering driver runs:
 * with TILEC_IR_ROUNDTRIP=1 the text also round-trips after every pass,
 * with TILEC_LOG=ir the IR is printed to stderr after each pass).  New
 * passes (one per concern, in their own file if large) go in passes[].
 *
 * Expressions may be shared between several parents (the frontend may
 * reuse a node); the passes never change a node in a way that alters its
 * value, so sharing is safe.  New nodes come from the caller's arena.
 */
#include "passes.h"
#include "log.h"
#include "tilec/ir_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pass_ctx {
    tilec_arena_t *a;
    int oom;
} pass_ctx_t;

/* ---- constant arithmetic ---------------------------------------------- */

/* x rounded once to float dtype t. */
static double round_float(double x, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_FLOAT16: return tilec_f16_to_f32(tilec_f64_to_f16(x));
    case TILEC_BFLOAT16: return tilec_bf16_to_f32(tilec_f64_to_bf16(x));
    case TILEC_FLOAT32: return (double)(float)x;
    default: return x;
    }
}

static int is_unsigned(tilec_dtype_t t) { return t >= TILEC_UINT8 && t <= TILEC_UINT64; }

/* Integer binary op on constants of int dtype t; 0 when not foldable. */
static int fold_int_binop(tilec_binop_t op, tilec_dtype_t t, int64_t a, int64_t b, int64_t *out, int *is_bool)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    int uns = is_unsigned(t);
    *is_bool = 0;
    switch (op) {
    case TILEC_BIN_ADD: *out = tilec_ir_wrap_int(ua + ub, t); return 1;
    case TILEC_BIN_SUB: *out = tilec_ir_wrap_int(ua - ub, t); return 1;
    case TILEC_BIN_MUL: *out = tilec_ir_wrap_int(ua * ub, t); return 1;
    case TILEC_BIN_DIV:
    case TILEC_BIN_FLOORDIV:
    case TILEC_BIN_FLOORMOD:
        if (b == 0) {
            return 0;
        }
        if (uns) {
            *out = tilec_ir_wrap_int(op == TILEC_BIN_FLOORMOD ? ua % ub : ua / ub, t);
            return 1;
        }
        if (a == INT64_MIN && b == -1) {
            return 0;
        }
        {
            int64_t q = a / b, r = a % b;
            if (op == TILEC_BIN_DIV) {
                *out = tilec_ir_wrap_int((uint64_t)q, t);
            } else {
                if (r != 0 && ((r < 0) != (b < 0))) {
                    q -= 1;
                    r += b;
                }
                *out = tilec_ir_wrap_int((uint64_t)(op == TILEC_BIN_FLOORDIV ? q : r), t);
            }
        }
        return 1;
    case TILEC_BIN_POW: {
        uint64_t r = 1, base = ua;
        uint64_t e = ub;
        if (!uns && b < 0) {
            return 0;
        }
        while (e) {
            if (e & 1) {
                r *= base;
            }
            base *= base;
            e >>= 1;
        }
        *out = tilec_ir_wrap_int(r, t);
        return 1;
    }
    case TILEC_BIN_MIN: *out = uns ? (ua < ub ? a : b) : (a < b ? a : b); return 1;
    case TILEC_BIN_MAX: *out = uns ? (ua > ub ? a : b) : (a > b ? a : b); return 1;
    case TILEC_BIN_EQ: *is_bool = 1; *out = a == b; return 1;
    case TILEC_BIN_NE: *is_bool = 1; *out = a != b; return 1;
    case TILEC_BIN_LT: *is_bool = 1; *out = uns ? ua < ub : a < b; return 1;
    case TILEC_BIN_LE: *is_bool = 1; *out = uns ? ua <= ub : a <= b; return 1;
    case TILEC_BIN_GT: *is_bool = 1; *out = uns ? ua > ub : a > b; return 1;
    case TILEC_BIN_GE: *is_bool = 1; *out = uns ? ua >= ub : a >= b; return 1;
    case TILEC_BIN_AND: *is_bool = 1; *out = a && b; return 1;
    case TILEC_BIN_OR: *is_bool = 1; *out = a || b; return 1;
    case TILEC_BIN_BITAND: *out = tilec_ir_wrap_int(ua & ub, t); return 1;
    case TILEC_BIN_BITOR: *out = tilec_ir_wrap_int(ua | ub, t); return 1;
    case TILEC_BIN_BITXOR: *out = tilec_ir_wrap_int(ua ^ ub, t); return 1;
    case TILEC_BIN_SHL:
    case TILEC_BIN_SHR:
        if (b < 0 || b >= (int64_t)tilec_dtype_size(t) * 8) {
            return 0; /* out-of-range count: left for run time */
        }
        *out = tilec_ir_wrap_int(op == TILEC_BIN_SHL ? ua << b : uns ? ua >> b : (uint64_t)(a < 0 ? ~(~a >> b) : a >> b), t);
        return 1;
    default: return 0;
    }
}

/* Float binary op; *kind: 0 float result, 1 bool result; 0 when not foldable. */
static int fold_float_binop(tilec_binop_t op, double a, double b, double *out, int *is_bool)
{
    *is_bool = 0;
    switch (op) {
    case TILEC_BIN_ADD: *out = a + b; return 1;
    case TILEC_BIN_SUB: *out = a - b; return 1;
    case TILEC_BIN_MUL: *out = a * b; return 1;
    case TILEC_BIN_DIV: *out = a / b; return 1;
    case TILEC_BIN_POW: *out = pow(a, b); return 1;
    case TILEC_BIN_MIN:
    case TILEC_BIN_MAX:
        if (isnan(a) || isnan(b)) {
            return 0;
        }
        *out = op == TILEC_BIN_MIN ? (a < b ? a : b) : (a > b ? a : b);
        return 1;
    case TILEC_BIN_EQ: *is_bool = 1; *out = a == b; return 1;
    case TILEC_BIN_NE: *is_bool = 1; *out = a != b; return 1;
    case TILEC_BIN_LT: *is_bool = 1; *out = a < b; return 1;
    case TILEC_BIN_LE: *is_bool = 1; *out = a <= b; return 1;
    case TILEC_BIN_GT: *is_bool = 1; *out = a > b; return 1;
    case TILEC_BIN_GE: *is_bool = 1; *out = a >= b; return 1;
    default: return 0; /* floordiv/floormod on floats: left to run time */
    }
}

static int fold_float_unop(tilec_unop_t op, double a, double *out)
{
    switch (op) {
    case TILEC_UN_NEG: *out = -a; return 1;
    case TILEC_UN_ABS: *out = fabs(a); return 1;
    case TILEC_UN_EXP: *out = exp(a); return 1;
    case TILEC_UN_EXP2: *out = exp2(a); return 1;
    case TILEC_UN_LOG: *out = log(a); return 1;
    case TILEC_UN_LOG2: *out = log2(a); return 1;
    case TILEC_UN_SQRT: *out = sqrt(a); return 1;
    case TILEC_UN_RSQRT: *out = 1.0 / sqrt(a); return 1;
    case TILEC_UN_TANH: *out = tanh(a); return 1;
    case TILEC_UN_SIGMOID: *out = 1.0 / (1.0 + exp(-a)); return 1;
    case TILEC_UN_FLOOR: *out = floor(a); return 1;
    case TILEC_UN_CEIL: *out = ceil(a); return 1;
    default: return 0;
    }
}

/* Value of an integer constant of dtype t as a double, exactly; 0 if the
 * value needs more than 53 bits (then folding a cast could round twice). */
static int int_to_double(int64_t v, tilec_dtype_t t, double *out)
{
    if (t == TILEC_UINT64 && v < 0) {
        return 0;
    }
    if (v > (INT64_C(1) << 53) || v < -(INT64_C(1) << 53)) {
        return 0;
    }
    *out = (double)v;
    return 1;
}

/* A float value converted to integer dtype t like C does (truncation); 0
 * when out of range or NaN. */
static int double_to_int(double d, tilec_dtype_t t, int64_t *out)
{
    double lo, hi; /* exclusive bounds */
    if (isnan(d)) {
        return 0;
    }
    switch (t) {
    case TILEC_INT8: lo = -129.0; hi = 128.0; break;
    case TILEC_INT16: lo = -32769.0; hi = 32768.0; break;
    case TILEC_INT32: lo = -2147483649.0; hi = 2147483648.0; break;
    case TILEC_INT64: lo = -9223372036854777856.0; hi = 9223372036854775808.0; break;
    case TILEC_UINT8: lo = -1.0; hi = 256.0; break;
    case TILEC_UINT16: lo = -1.0; hi = 65536.0; break;
    case TILEC_UINT32: lo = -1.0; hi = 4294967296.0; break;
    case TILEC_UINT64: lo = -1.0; hi = 18446744073709551616.0; break;
    default: return 0;
    }
    if (!(d > lo && d < hi)) {
        return 0;
    }
    if (t == TILEC_UINT64) {
        *out = (int64_t)(uint64_t)d;
    } else {
        *out = (int64_t)d;
    }
    return 1;
}

/* ---- simplify --------------------------------------------------------- */

static tilec_ir_expr_t *mk_int(pass_ctx_t *p, int64_t v, tilec_dtype_t t)
{
    tilec_ir_expr_t *e = tilec_ir_int(p->a, v, t);
    if (!e) {
        p->oom = 1;
    }
    return e;
}

static tilec_ir_expr_t *mk_float(pass_ctx_t *p, double v, tilec_dtype_t t)
{
    tilec_ir_expr_t *e = tilec_ir_float(p->a, v, t);
    if (!e) {
        p->oom = 1;
    }
    return e;
}

static int is_int_const(const tilec_ir_expr_t *e, int64_t v)
{
    return e->kind == TILEC_EX_INT && e->dtype != TILEC_BOOL && e->u.i == v;
}

static int is_float_const(const tilec_ir_expr_t *e, double v)
{
    return e->kind == TILEC_EX_FLOAT && e->u.f == v;
}

static tilec_ir_expr_t *fold(pass_ctx_t *p, tilec_ir_expr_t *e);

/* fold() that keeps the old node when a new one could not be allocated. */
static tilec_ir_expr_t *fold_keep(pass_ctx_t *p, tilec_ir_expr_t *e)
{
    tilec_ir_expr_t *n = fold(p, e);
    return n ? n : e;
}

static tilec_ir_expr_t *fold_binary(pass_ctx_t *p, tilec_ir_expr_t *e)
{
    tilec_ir_expr_t *a = e->u.bin.a, *b = e->u.bin.b;
    tilec_binop_t op = e->u.bin.op;
    int is_bool;
    if (a->kind == TILEC_EX_INT && b->kind == TILEC_EX_INT) {
        int64_t r;
        if (fold_int_binop(op, a->dtype, a->u.i, b->u.i, &r, &is_bool)) {
            return mk_int(p, r, is_bool ? TILEC_BOOL : e->dtype);
        }
        return e;
    }
    if (a->kind == TILEC_EX_FLOAT && b->kind == TILEC_EX_FLOAT) {
        double r;
        if (fold_float_binop(op, a->u.f, b->u.f, &r, &is_bool)) {
            return is_bool ? mk_int(p, r != 0, TILEC_BOOL) : mk_float(p, round_float(r, e->dtype), e->dtype);
        }
        return e;
    }
    if (tilec_dtype_is_int(e->dtype)) {
        switch (op) {
        case TILEC_BIN_ADD:
            if (is_int_const(b, 0)) {
                return a;
            }
            if (is_int_const(a, 0)) {
                return b;
            }
            break;
        case TILEC_BIN_SUB:
            if (is_int_const(b, 0)) {
                return a;
            }
            break;
        case TILEC_BIN_MUL:
            if (is_int_const(b, 1)) {
                return a;
            }
            if (is_int_const(a, 1)) {
                return b;
            }
            if (is_int_const(a, 0) || is_int_const(b, 0)) {
                return mk_int(p, 0, e->dtype);
            }
            break;
        case TILEC_BIN_DIV:
        case TILEC_BIN_FLOORDIV:
            if (is_int_const(b, 1)) {
                return a;
            }
            break;
        case TILEC_BIN_FLOORMOD:
            if (is_int_const(b, 1)) {
                return mk_int(p, 0, e->dtype);
            }
            break;
        case TILEC_BIN_BITOR:
        case TILEC_BIN_BITXOR:
            if (is_int_const(b, 0)) {
                return a;
            }
            if (is_int_const(a, 0)) {
                return b;
            }
            break;
        case TILEC_BIN_SHL:
        case TILEC_BIN_SHR:
            if (is_int_const(b, 0)) {
                return a;
            }
            break;
        case TILEC_BIN_BITAND:
            if (is_int_const(a, 0) || is_int_const(b, 0)) {
                return mk_int(p, 0, e->dtype);
            }
            break;
        default:
            break;
        }
    } else if (tilec_dtype_is_float(e->dtype)) {
        /* exact for every x, NaN and -0 included */
        if ((op == TILEC_BIN_MUL && is_float_const(b, 1.0)) || (op == TILEC_BIN_DIV && is_float_const(b, 1.0)) ||
            (op == TILEC_BIN_SUB && b->kind == TILEC_EX_FLOAT && b->u.f == 0.0 && !signbit(b->u.f))) {
            return a;
        }
        if (op == TILEC_BIN_MUL && is_float_const(a, 1.0)) {
            return b;
        }
    } else if (e->dtype == TILEC_BOOL && (op == TILEC_BIN_AND || op == TILEC_BIN_OR)) {
        tilec_ir_expr_t *c = a->kind == TILEC_EX_INT ? a : b->kind == TILEC_EX_INT ? b : NULL;
        tilec_ir_expr_t *x = c == a ? b : a;
        if (c) {
            int val = c->u.i != 0;
            if (op == TILEC_BIN_AND) {
                return val ? x : c;
            }
            return val ? c : x;
        }
    }
    return e;
}

static tilec_ir_expr_t *fold_cast(pass_ctx_t *p, tilec_ir_expr_t *e)
{
    tilec_ir_expr_t *a = e->u.cast.a;
    tilec_dtype_t to = e->dtype;
    if (a->dtype == to) {
        return a;
    }
    if (a->kind == TILEC_EX_INT) {
        if (to == TILEC_BOOL || tilec_dtype_is_int(to)) {
            uint64_t v = (uint64_t)a->u.i;
            return mk_int(p, to == TILEC_BOOL ? (int64_t)(v != 0) : tilec_ir_wrap_int(v, to), to);
        }
        if (tilec_dtype_is_float(to)) {
            double d;
            if (int_to_double(a->u.i, a->dtype, &d)) {
                return mk_float(p, round_float(d, to), to);
            }
        }
        return e;
    }
    if (a->kind == TILEC_EX_FLOAT) {
        if (to == TILEC_BOOL) {
            return mk_int(p, a->u.f != 0, to);
        }
        if (tilec_dtype_is_float(to)) {
            return mk_float(p, round_float(a->u.f, to), to);
        }
        if (tilec_dtype_is_int(to)) {
            int64_t v;
            if (double_to_int(a->u.f, to, &v)) {
                return mk_int(p, v, to);
            }
        }
    }
    return e;
}

static tilec_ir_expr_t *fold(pass_ctx_t *p, tilec_ir_expr_t *e)
{
    int i;
    if (!e || p->oom) {
        return e;
    }
    switch (e->kind) {
    case TILEC_EX_INT:
    case TILEC_EX_FLOAT:
    case TILEC_EX_VAR:
        return e;
    case TILEC_EX_LOAD:
        for (i = 0; i < e->u.load.buf->ndim; i++) {
            e->u.load.idx[i] = fold_keep(p, e->u.load.idx[i]);
        }
        return e;
    case TILEC_EX_UNARY: {
        tilec_ir_expr_t *a = e->u.un.a = fold_keep(p, e->u.un.a);
        if (a->kind == TILEC_EX_INT) {
            if (e->u.un.op == TILEC_UN_NOT) {
                return mk_int(p, a->u.i == 0, TILEC_BOOL);
            }
            if (e->u.un.op == TILEC_UN_NEG) {
                return mk_int(p, tilec_ir_wrap_int(0 - (uint64_t)a->u.i, e->dtype), e->dtype);
            }
            if (e->u.un.op == TILEC_UN_ABS) {
                int64_t v = a->u.i;
                return mk_int(p, is_unsigned(e->dtype) || v >= 0 ? v : tilec_ir_wrap_int(0 - (uint64_t)v, e->dtype), e->dtype);
            }
        } else if (a->kind == TILEC_EX_FLOAT) {
            double r;
            if (fold_float_unop(e->u.un.op, a->u.f, &r)) {
                return mk_float(p, round_float(r, e->dtype), e->dtype);
            }
        } else if (e->u.un.op == TILEC_UN_NEG && a->kind == TILEC_EX_UNARY && a->u.un.op == TILEC_UN_NEG) {
            return a->u.un.a;
        } else if (e->u.un.op == TILEC_UN_NOT && a->kind == TILEC_EX_UNARY && a->u.un.op == TILEC_UN_NOT) {
            return a->u.un.a;
        }
        return e;
    }
    case TILEC_EX_BINARY:
        e->u.bin.a = fold_keep(p, e->u.bin.a);
        e->u.bin.b = fold_keep(p, e->u.bin.b);
        return fold_binary(p, e);
    case TILEC_EX_SELECT:
        e->u.sel.cond = fold_keep(p, e->u.sel.cond);
        e->u.sel.a = fold_keep(p, e->u.sel.a);
        e->u.sel.b = fold_keep(p, e->u.sel.b);
        if (e->u.sel.cond->kind == TILEC_EX_INT) {
            return e->u.sel.cond->u.i ? e->u.sel.a : e->u.sel.b;
        }
        return e;
    case TILEC_EX_CAST:
        e->u.cast.a = fold_keep(p, e->u.cast.a);
        return fold_cast(p, e);
    }
    return e;
}

#define FOLD(p, field) ((field) = fold_keep((p), (field)))

static void fold_idx(pass_ctx_t *p, const tilec_ir_buffer_t *b, tilec_ir_expr_t **idx)
{
    int i;
    for (i = 0; i < b->ndim; i++) {
        FOLD(p, idx[i]);
    }
}

static void simplify_block(pass_ctx_t *p, tilec_ir_stmt_t *s)
{
    int i;
    for (; s && !p->oom; s = s->next) {
        switch (s->kind) {
        case TILEC_ST_FOR:
            FOLD(p, s->u.loop.extent);
            simplify_block(p, s->u.loop.body);
            break;
        case TILEC_ST_IF:
            FOLD(p, s->u.cond.cond);
            simplify_block(p, s->u.cond.then);
            simplify_block(p, s->u.cond.els);
            break;
        case TILEC_ST_STORE:
            fold_idx(p, s->u.store.buf, s->u.store.idx);
            FOLD(p, s->u.store.value);
            break;
        case TILEC_ST_ASSIGN:
            FOLD(p, s->u.assign.value);
            break;
        case TILEC_ST_COPY:
            fold_idx(p, s->u.copy.src.buf, s->u.copy.src.base);
            fold_idx(p, s->u.copy.dst.buf, s->u.copy.dst.base);
            break;
        case TILEC_ST_FILL:
            fold_idx(p, s->u.fill.dst.buf, s->u.fill.dst.base);
            FOLD(p, s->u.fill.value);
            break;
        case TILEC_ST_ATOMIC:
            fold_idx(p, s->u.atomic.buf, s->u.atomic.idx);
            FOLD(p, s->u.atomic.value);
            break;
        case TILEC_ST_PRINT:
            FOLD(p, s->u.print.value);
            break;
        case TILEC_ST_HINT:
            for (i = 0; i < s->u.hint.nargs; i++) {
                FOLD(p, s->u.hint.args[i]);
            }
            break;
        default:
            break;
        }
    }
}

static int pass_simplify(pass_ctx_t *p, tilec_ir_kernel_t *k)
{
    int i, j;
    for (i = 0; i < k->nbufs; i++) {
        for (j = 0; j < k->bufs[i]->ndim; j++) {
            FOLD(p, k->bufs[i]->shape[j]);
        }
    }
    for (i = 0; i < k->ngrid; i++) {
        FOLD(p, k->grid[i]);
    }
    simplify_block(p, k->body);
    return p->oom ? -1 : 0;
}

/* ---- prune ------------------------------------------------------------ */

static void prune_block(pass_ctx_t *p, tilec_ir_stmt_t **pp)
{
    while (*pp) {
        tilec_ir_stmt_t *s = *pp;
        int64_t v;
        if (s->kind == TILEC_ST_FOR) {
            prune_block(p, &s->u.loop.body);
            if (tilec_ir_is_const_int(s->u.loop.extent, &v) && v <= 0) {
                *pp = s->next;
                continue;
            }
        } else if (s->kind == TILEC_ST_IF) {
            prune_block(p, &s->u.cond.then);
            prune_block(p, &s->u.cond.els);
            if (s->u.cond.cond->kind == TILEC_EX_INT) {
                tilec_ir_stmt_t *taken = s->u.cond.cond->u.i ? s->u.cond.then : s->u.cond.els;
                if (!taken) {
                    *pp = s->next;
                    continue;
                }
                *pp = taken;
                while (taken->next) {
                    taken = taken->next;
                }
                taken->next = s->next;
                pp = &taken->next;
                continue;
            }
        }
        pp = &s->next;
    }
}

static int pass_prune(pass_ctx_t *p, tilec_ir_kernel_t *k)
{
    prune_block(p, &k->body);
    return 0;
}

/* ---- pipeline --------------------------------------------------------- */

typedef struct pass {
    const char *name;
    int (*run)(pass_ctx_t *p, tilec_ir_kernel_t *k);
} pass_t;

/* pass_safe_memory.c */
static int pass_safe_memory(pass_ctx_t *p, tilec_ir_kernel_t *k)
{
    int n = 0;
    if (tilec_pass_safe_memory(p->a, k, &n) < 0) return -1;
    if (n) tilec_log("compile", "safe_memory: %d global access(es) of kernel '%s' guarded", n, k->name);
    return 0;
}

static const pass_t passes[] = {
    {"simplify", pass_simplify},
    {"prune", pass_prune},
    {"safe_memory", pass_safe_memory},
};

int tilec_passes_run(tilec_arena_t *a, tilec_ir_module_t *m, char *err, size_t errlen)
{
    pass_ctx_t p;
    size_t i;
    if (tilec_ir_check_pass(NULL, m, err, errlen) < 0) {
        return -1;
    }
    p.a = a;
    p.oom = 0;
    for (i = 0; i < sizeof passes / sizeof passes[0]; i++) {
        if (passes[i].run(&p, m->kernel) < 0 || p.oom) {
            if (err && errlen) {
                snprintf(err, errlen, "pass %s: out of memory", passes[i].name);
            }
            return -1;
        }
        if (tilec_ir_check_pass(passes[i].name, m, err, errlen) < 0) {
            return -1;
        }
    }
    return 0;
}
