/*
 * plugin-sdk/src/ir_eval.c — tilec_ir_eval_int, the one evaluator of
 * integer expressions (grid extents, shapes, layout maps) for given
 * variable values (see tilec/ir.h).
 *
 * The host, the plugins, the verifier (layout checks) and the interpreter
 * (layout tables) all need "the value of this int expression when these
 * variables have these values"; this file is the only place that answers
 * it.  It follows docs/ir.md §2 exactly: each node's result wraps to its
 * dtype (two's complement), unsigned dtypes divide, compare and shift
 * unsigned, floordiv/floormod floor.  What it cannot answer (a load, a
 * float, an unbound variable, a division by zero) is -1, never a guess.
 */
#include "tilec/ir.h"

int64_t tilec_ir_wrap_int(uint64_t v, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_BOOL: return v != 0;
    case TILEC_INT8: return (int8_t)(uint8_t)v;
    case TILEC_INT16: return (int16_t)(uint16_t)v;
    case TILEC_INT32: return (int32_t)(uint32_t)v;
    case TILEC_UINT8: return (uint8_t)v;
    case TILEC_UINT16: return (uint16_t)v;
    case TILEC_UINT32: return (uint32_t)v;
    case TILEC_INT4: return (int64_t)((v & 15) ^ 8) - 8;
    case TILEC_UINT4: return (int64_t)(v & 15);
    default: return (int64_t)v;
    }
}

static int is_uns(tilec_dtype_t t) { return (t >= TILEC_UINT8 && t <= TILEC_UINT64) || t == TILEC_UINT4; }

static int bits_of(tilec_dtype_t t) { return (int)tilec_dtype_bits(t); }

static int binop(tilec_binop_t op, tilec_dtype_t t, int64_t a, int64_t b, int64_t *out)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    int uns = is_uns(t);
    switch (op) {
    case TILEC_BIN_ADD: *out = (int64_t)(ua + ub); return 0;
    case TILEC_BIN_SUB: *out = (int64_t)(ua - ub); return 0;
    case TILEC_BIN_MUL: *out = (int64_t)(ua * ub); return 0;
    case TILEC_BIN_DIV:
    case TILEC_BIN_FLOORDIV:
    case TILEC_BIN_FLOORMOD: {
        int64_t q, r;
        if (b == 0) {
            return -1;
        }
        if (uns) {
            *out = (int64_t)(op == TILEC_BIN_FLOORMOD ? ua % ub : ua / ub);
            return 0;
        }
        if (a == INT64_MIN && b == -1) {
            *out = op == TILEC_BIN_FLOORMOD ? 0 : INT64_MIN;
            return 0;
        }
        q = a / b;
        r = a % b;
        if (op != TILEC_BIN_DIV && r != 0 && ((r < 0) != (b < 0))) {
            q--;
            r += b;
        }
        *out = op == TILEC_BIN_FLOORMOD ? r : q;
        return 0;
    }
    case TILEC_BIN_POW: {
        uint64_t r = 1, base = ua, e = ub;
        if (!uns && b < 0) {
            return -1;
        }
        while (e) {
            if (e & 1) {
                r *= base;
            }
            base *= base;
            e >>= 1;
        }
        *out = (int64_t)r;
        return 0;
    }
    case TILEC_BIN_MIN: *out = (uns ? ua < ub : a < b) ? a : b; return 0;
    case TILEC_BIN_MAX: *out = (uns ? ua > ub : a > b) ? a : b; return 0;
    case TILEC_BIN_EQ: *out = a == b; return 0;
    case TILEC_BIN_NE: *out = a != b; return 0;
    case TILEC_BIN_LT: *out = uns ? ua < ub : a < b; return 0;
    case TILEC_BIN_LE: *out = uns ? ua <= ub : a <= b; return 0;
    case TILEC_BIN_GT: *out = uns ? ua > ub : a > b; return 0;
    case TILEC_BIN_GE: *out = uns ? ua >= ub : a >= b; return 0;
    case TILEC_BIN_AND: *out = a && b; return 0;
    case TILEC_BIN_OR: *out = a || b; return 0;
    case TILEC_BIN_BITAND: *out = (int64_t)(ua & ub); return 0;
    case TILEC_BIN_BITOR: *out = (int64_t)(ua | ub); return 0;
    case TILEC_BIN_BITXOR: *out = (int64_t)(ua ^ ub); return 0;
    case TILEC_BIN_SHL:
    case TILEC_BIN_SHR:
        if (b < 0 || b >= bits_of(t)) {
            return -1;
        }
        if (op == TILEC_BIN_SHL) {
            *out = (int64_t)(ua << b);
        } else if (uns) {
            /* the operand is already wrapped to t, so its high bits are 0 */
            *out = (int64_t)(ua >> b);
        } else {
            *out = a < 0 ? ~(~a >> b) : a >> b;
        }
        return 0;
    default:
        return -1;
    }
}

static int eval(const tilec_ir_expr_t *e, tilec_ir_bind_fn bind, void *ctx, int depth, int64_t *out)
{
    int64_t a, b, c;
    if (!e || depth > TILEC_IR_MAX_DEPTH || (!tilec_dtype_is_int(e->dtype) && e->dtype != TILEC_BOOL)) {
        return -1;
    }
    switch (e->kind) {
    case TILEC_EX_INT:
        *out = tilec_ir_wrap_int((uint64_t)e->u.i, e->dtype);
        return 0;
    case TILEC_EX_VAR:
        if (!e->u.var || !bind || bind(ctx, e->u.var, &a) != 0) {
            return -1;
        }
        *out = tilec_ir_wrap_int((uint64_t)a, e->dtype);
        return 0;
    case TILEC_EX_UNARY:
        if (eval(e->u.un.a, bind, ctx, depth + 1, &a) != 0) {
            return -1;
        }
        switch (e->u.un.op) {
        case TILEC_UN_NEG: *out = tilec_ir_wrap_int(0 - (uint64_t)a, e->dtype); return 0;
        case TILEC_UN_NOT: *out = a == 0; return 0;
        case TILEC_UN_ABS: *out = tilec_ir_wrap_int(is_uns(e->dtype) || a >= 0 ? (uint64_t)a : 0 - (uint64_t)a, e->dtype); return 0;
        case TILEC_UN_BITCAST: /* integer to integer of one width: the two's-complement wrap */
            if (!tilec_dtype_is_int(e->u.un.a->dtype) || !tilec_dtype_is_int(e->dtype)) {
                return -1;
            }
            *out = tilec_ir_wrap_int((uint64_t)a, e->dtype);
            return 0;
        default: return -1;
        }
    case TILEC_EX_BINARY: {
        tilec_dtype_t t = e->u.bin.a ? e->u.bin.a->dtype : e->dtype;
        if (eval(e->u.bin.a, bind, ctx, depth + 1, &a) != 0) {
            return -1;
        }
        if (e->u.bin.op == TILEC_BIN_AND || e->u.bin.op == TILEC_BIN_OR) {
            if ((e->u.bin.op == TILEC_BIN_AND) == (a == 0)) {
                *out = a != 0;
                return 0;
            }
        }
        if (eval(e->u.bin.b, bind, ctx, depth + 1, &b) != 0 || binop(e->u.bin.op, t, a, b, &c) != 0) {
            return -1;
        }
        *out = tilec_ir_wrap_int((uint64_t)c, e->dtype);
        return 0;
    }
    case TILEC_EX_SELECT:
        if (eval(e->u.sel.cond, bind, ctx, depth + 1, &c) != 0 ||
            eval(c ? e->u.sel.a : e->u.sel.b, bind, ctx, depth + 1, &a) != 0) {
            return -1;
        }
        *out = tilec_ir_wrap_int((uint64_t)a, e->dtype);
        return 0;
    case TILEC_EX_CAST:
        if (eval(e->u.cast.a, bind, ctx, depth + 1, &a) != 0) {
            return -1;
        }
        *out = tilec_ir_wrap_int((uint64_t)a, e->dtype);
        return 0;
    default:
        return -1; /* LOAD reads memory; FLOAT is not an integer */
    }
}

int tilec_ir_eval_int(const tilec_ir_expr_t *e, tilec_ir_bind_fn bind, void *ctx, int64_t *out)
{
    int64_t v;
    if (!out || eval(e, bind, ctx, 0, &v) != 0) {
        return -1;
    }
    *out = v;
    return 0;
}
