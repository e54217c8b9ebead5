/*
 * simt_eval.c — host-side evaluation of a kernel's grid and parameter
 * shapes for the symbol values of a launch (tilec/simt.h).
 *
 * Shapes and grid extents are integer expressions of constants and
 * T.dynamic symbols; a SIMT backend compiles the kernel once and needs
 * their values at every launch to size the NDRange and check the buffers it
 * is given.  Arithmetic is checked: overflow or division by zero fails
 * instead of producing a wrong launch.  Recursion is bounded (the reader
 * already limits nesting to 512).
 */
#include <stdint.h>

#include "tilec/simt.h"

#define EVAL_MAX_DEPTH 600

int tilec_simt_sym_count(const tilec_ir_kernel_t *k)
{
    int n = 0;
    for (int i = 0; k && i < k->nvars; i++)
        if (k->vars[i] && k->vars[i]->kind == TILEC_VAR_SYM)
            n++;
    return n;
}

static int sym_value(const tilec_ir_kernel_t *k, const tilec_ir_var_t *v, const int64_t *syms, uint32_t nsyms,
                     int64_t *out)
{
    uint32_t j = 0;
    for (int i = 0; i < k->nvars; i++) {
        if (!k->vars[i] || k->vars[i]->kind != TILEC_VAR_SYM)
            continue;
        if (k->vars[i] == v) {
            if (j >= nsyms || !syms)
                return -1;
            *out = syms[j];
            return 0;
        }
        j++;
    }
    return -1;
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int eval(const tilec_ir_kernel_t *k, const tilec_ir_expr_t *e, const int64_t *syms, uint32_t nsyms,
                int64_t *out, int depth)
{
    if (!e || depth > EVAL_MAX_DEPTH)
        return -1;
    int64_t a, b, c;
    switch (e->kind) {
    case TILEC_EX_INT: *out = e->u.i; return 0;
    case TILEC_EX_VAR:
        if (!e->u.var || e->u.var->kind != TILEC_VAR_SYM)
            return -1;
        return sym_value(k, e->u.var, syms, nsyms, out);
    case TILEC_EX_CAST:
        if (tilec_dtype_is_float(e->dtype))
            return -1;
        if (eval(k, e->u.cast.a, syms, nsyms, &a, depth + 1))
            return -1;
        switch (e->dtype) {
        case TILEC_INT32: a = (int32_t)a; break;
        case TILEC_INT16: a = (int16_t)a; break;
        case TILEC_INT8: a = (int8_t)a; break;
        case TILEC_UINT32: a = (uint32_t)a; break;
        case TILEC_UINT16: a = (uint16_t)a; break;
        case TILEC_UINT8: a = (uint8_t)a; break;
        case TILEC_BOOL: a = a != 0; break;
        default: break;
        }
        *out = a;
        return 0;
    case TILEC_EX_UNARY:
        if (eval(k, e->u.un.a, syms, nsyms, &a, depth + 1))
            return -1;
        switch (e->u.un.op) {
        case TILEC_UN_NEG: if (a == INT64_MIN) return -1; *out = -a; return 0;
        case TILEC_UN_ABS: if (a == INT64_MIN) return -1; *out = a < 0 ? -a : a; return 0;
        case TILEC_UN_NOT: *out = !a; return 0;
        default: return -1;
        }
    case TILEC_EX_SELECT:
        if (eval(k, e->u.sel.cond, syms, nsyms, &c, depth + 1))
            return -1;
        return eval(k, c ? e->u.sel.a : e->u.sel.b, syms, nsyms, out, depth + 1);
    case TILEC_EX_BINARY:
        if (eval(k, e->u.bin.a, syms, nsyms, &a, depth + 1) || eval(k, e->u.bin.b, syms, nsyms, &b, depth + 1))
            return -1;
        switch (e->u.bin.op) {
        case TILEC_BIN_ADD: return __builtin_add_overflow(a, b, out) ? -1 : 0;
        case TILEC_BIN_SUB: return __builtin_sub_overflow(a, b, out) ? -1 : 0;
        case TILEC_BIN_MUL: return __builtin_mul_overflow(a, b, out) ? -1 : 0;
        case TILEC_BIN_DIV:
            if (b == 0 || (a == INT64_MIN && b == -1))
                return -1;
            *out = a / b;
            return 0;
        case TILEC_BIN_FLOORDIV:
            if (b == 0 || (a == INT64_MIN && b == -1))
                return -1;
            *out = floordiv(a, b);
            return 0;
        case TILEC_BIN_FLOORMOD:
            if (b == 0 || (a == INT64_MIN && b == -1))
                return -1;
            *out = a - floordiv(a, b) * b;
            return 0;
        case TILEC_BIN_MIN: *out = a < b ? a : b; return 0;
        case TILEC_BIN_MAX: *out = a > b ? a : b; return 0;
        case TILEC_BIN_EQ: *out = a == b; return 0;
        case TILEC_BIN_NE: *out = a != b; return 0;
        case TILEC_BIN_LT: *out = a < b; return 0;
        case TILEC_BIN_LE: *out = a <= b; return 0;
        case TILEC_BIN_GT: *out = a > b; return 0;
        case TILEC_BIN_GE: *out = a >= b; return 0;
        case TILEC_BIN_AND: *out = a && b; return 0;
        case TILEC_BIN_OR: *out = a || b; return 0;
        default: return -1;
        }
    default: return -1;
    }
}

int tilec_simt_eval_int(const tilec_ir_kernel_t *k, const tilec_ir_expr_t *e, const int64_t *syms, uint32_t nsyms,
                        int64_t *out)
{
    if (!k || !e || !out)
        return -1;
    return eval(k, e, syms, nsyms, out, 0);
}

int tilec_simt_grid(const tilec_ir_kernel_t *k, const int64_t *syms, uint32_t nsyms, int64_t grid[3])
{
    if (!k || !grid || k->ngrid < 1 || k->ngrid > 3)
        return -1;
    for (int d = 0; d < 3; d++) {
        grid[d] = 1;
        if (d < k->ngrid) {
            int64_t v;
            if (tilec_simt_eval_int(k, k->grid[d], syms, nsyms, &v) || v < 0 || v > INT32_MAX)
                return -1;
            grid[d] = v;
        }
    }
    return 0;
}

int tilec_simt_param_bytes(const tilec_ir_kernel_t *k, int i, const int64_t *syms, uint32_t nsyms, uint64_t *bytes)
{
    if (!k || !bytes || i < 0 || i >= k->nparams || !k->bufs[i])
        return -1;
    const tilec_ir_buffer_t *b = k->bufs[i];
    uint64_t n = tilec_dtype_size(b->dtype);
    for (int d = 0; d < b->ndim; d++) {
        int64_t v;
        if (tilec_simt_eval_int(k, b->shape[d], syms, nsyms, &v) || v < 0)
            return -1;
        if (v && n > UINT64_MAX / (uint64_t)v)
            return -1;
        n *= (uint64_t)v;
    }
    *bytes = tilec_dtype_is_4bit(b->dtype) ? n / 2 + n % 2 : n; /* 4-bit: two per byte */
    return 0;
}
