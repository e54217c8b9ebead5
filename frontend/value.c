/*
 * frontend/value.c — compile-time values and the typing of runtime
 * expressions.
 *
 * Compile-time arithmetic follows Python (/ gives a float, // and % floor,
 * ** is a power, int64 overflow is a diagnostic instead of a bignum).  As
 * soon as an operand is a runtime value (an IR expression, a T.dynamic
 * symbol or a T.alloc_var scalar) the operation builds an IR expression
 * instead, typed by the rules of tilec/ir.h: both operands are brought to a
 * common dtype (float beats int, wider beats narrower, a Python literal
 * adopts the dtype of the other operand) and the frontend inserts the casts.
 */
#include "eval_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

value_t *v_new(ev_t *ev, vkind_t k)
{
    value_t *v = ev_alloc(ev, sizeof *v);
    v->kind = k;
    return v;
}

value_t *v_int(ev_t *ev, int64_t i)
{
    value_t *v = v_new(ev, V_INT);
    v->u.i = i;
    return v;
}

value_t *v_float(ev_t *ev, double f)
{
    value_t *v = v_new(ev, V_FLOAT);
    v->u.f = f;
    return v;
}

value_t *v_bool(ev_t *ev, int b)
{
    return b ? ev->vtrue : ev->vfalse;
}

value_t *v_str(ev_t *ev, const char *s, size_t len)
{
    value_t *v = v_new(ev, V_STR);
    char *c = ev_alloc(ev, len + 1);
    memcpy(c, s, len);
    v->u.s.s = c;
    v->u.s.len = len;
    return v;
}

/* ---- size of run-time expressions ------------------------------------------
 * Compile-time code can build an expression DAG whose tree is exponential
 * (a macro returning x + x, applied in a loop); printers and interpreters
 * walk trees, so every expression handed out is measured (memoized by node)
 * and rejected past EV_MAX_IR_DEPTH levels or EV_MAX_IR_NODES nodes. */

static size_t memo_slot(ev_t *ev, const void *k)
{
    size_t h = ((uintptr_t)k >> 4) * 0x9E3779B97F4A7C15ull;
    size_t i = h & (ev->mcap - 1);
    while (ev->mk[i] && ev->mk[i] != k) i = (i + 1) & (ev->mcap - 1);
    return i;
}

static void memo_put(ev_t *ev, const void *k, int32_t d, int64_t sz)
{
    size_t i;
    if (ev->mn * 2 >= ev->mcap) {
        const void **ok = ev->mk;
        int32_t *od = ev->md;
        int64_t *os = ev->ms;
        size_t ocap = ev->mcap, j;
        ev->mcap = ocap ? ocap * 2 : 1024;
        ev->mk = ev_alloc(ev, sizeof *ev->mk * ev->mcap);
        ev->md = ev_alloc(ev, sizeof *ev->md * ev->mcap);
        ev->ms = ev_alloc(ev, sizeof *ev->ms * ev->mcap);
        for (j = 0; j < ocap; j++) {
            if (!ok[j]) continue;
            i = memo_slot(ev, ok[j]);
            ev->mk[i] = ok[j];
            ev->md[i] = od[j];
            ev->ms[i] = os[j];
        }
    }
    i = memo_slot(ev, k);
    if (!ev->mk[i]) ev->mn++;
    ev->mk[i] = k;
    ev->md[i] = d;
    ev->ms[i] = sz;
}

static void ex_measure(ev_t *ev, const tilec_ir_expr_t *e, int32_t *depth, int64_t *size, int guard)
{
    const tilec_ir_expr_t *kids[TILEC_IR_MAX_DIMS + 3];
    int nk = 0, i;
    int32_t d = 0;
    int64_t sz = 1;
    if (ev->mcap) {
        size_t slot = memo_slot(ev, e);
        if (ev->mk[slot] == e) {
            *depth = ev->md[slot];
            *size = ev->ms[slot];
            return;
        }
    }
    if (guard > 2 * EV_MAX_IR_DEPTH) {
        *depth = INT32_MAX / 2;
        *size = EV_MAX_IR_NODES + 1;
        return;
    }
    switch (e->kind) {
    case TILEC_EX_LOAD:
        for (i = 0; i < e->u.load.buf->ndim; i++) kids[nk++] = e->u.load.idx[i];
        break;
    case TILEC_EX_UNARY: kids[nk++] = e->u.un.a; break;
    case TILEC_EX_BINARY: kids[nk++] = e->u.bin.a; kids[nk++] = e->u.bin.b; break;
    case TILEC_EX_SELECT: kids[nk++] = e->u.sel.cond; kids[nk++] = e->u.sel.a; kids[nk++] = e->u.sel.b; break;
    case TILEC_EX_CAST: kids[nk++] = e->u.cast.a; break;
    default: break;
    }
    for (i = 0; i < nk; i++) {
        int32_t cd;
        int64_t cs;
        if (!kids[i]) continue;
        ex_measure(ev, kids[i], &cd, &cs, guard + 1);
        if (cd > d) d = cd;
        sz += cs;
        if (sz > EV_MAX_IR_NODES) sz = EV_MAX_IR_NODES + 1;
    }
    *depth = d + 1;
    *size = sz;
    if (nk) memo_put(ev, e, *depth, *size);
}

value_t *v_expr(ev_t *ev, tilec_ir_expr_t *e)
{
    value_t *v = v_new(ev, V_EXPR);
    int32_t d;
    int64_t sz;
    v->u.ex = ev_chk(ev, e);
    ex_measure(ev, e, &d, &sz, 0);
    if (d > EV_MAX_IR_DEPTH || sz > EV_MAX_IR_NODES)
        ev_fail(ev, ev->cur_loc, "this run-time expression is too large (%s); compute it in steps with "
                "intermediate variables inside the kernel", d > EV_MAX_IR_DEPTH ? "nested too deeply" : "too many terms");
    return v;
}

value_t *v_seq(ev_t *ev, int n, int is_list)
{
    value_t *v = v_new(ev, V_SEQ);
    v->u.seq.n = n;
    v->u.seq.is_list = is_list;
    v->u.seq.items = ev_alloc(ev, (size_t)(n > 0 ? n : 1) * sizeof(value_t *));
    return v;
}

const char *v_kind_name(const value_t *v)
{
    switch (v->kind) {
    case V_NONE: return "None";
    case V_BOOL: return "bool";
    case V_INT: return "int";
    case V_FLOAT: return "float";
    case V_STR: return "str";
    case V_SEQ: return v->u.seq.is_list ? "list" : "tuple";
    case V_RANGE: return "range";
    case V_DICT: return "dict";
    case V_DTYPE: return "dtype";
    case V_SYM: return "T.dynamic symbol";
    case V_EXPR: return "runtime expression";
    case V_BUF: return "buffer";
    case V_REGION: return "buffer region";
    case V_FUNC: return "function";
    case V_BUILTIN: return "builtin function";
    case V_NS: return "module";
    case V_POLICY: return "T.GemmWarpPolicy";
    case V_TENSORTYPE: return "T.Tensor type";
    case V_JIT: return "decorator";
    case V_KERNEL: return "T.Kernel";
    case V_LOOPITER: return "loop range";
    case V_DEADLOOP: return "ended loop variable";
    case V_CLASS: return "class";
    case V_OBJECT: return "object";
    case V_REDUCER: return "T.comm_reducer";
    case V_OPAQUE: return v->u.opq;
    case V_BARRIER: return "barrier";
    case V_WSCOPE: return "T.ws region";
    }
    return "value";
}

int v_is_num(const value_t *v)
{
    return v->kind == V_BOOL || v->kind == V_INT || v->kind == V_FLOAT;
}

int v_is_rt(const value_t *v)
{
    return v->kind == V_EXPR || v->kind == V_SYM ||
           (v->kind == V_BUF && v->u.buf->scope == TILEC_SCOPE_VAR);
}

int v_truth(ev_t *ev, value_t *v, ast_loc_t loc)
{
    switch (v->kind) {
    case V_NONE: return 0;
    case V_BOOL: case V_INT: return v->u.i != 0;
    case V_FLOAT: return v->u.f != 0.0;
    case V_STR: return v->u.s.len != 0;
    case V_SEQ: case V_DICT: return v->u.seq.n != 0;
    case V_RANGE: {
        int64_t st = v->u.range.step;
        return st > 0 ? v->u.range.start < v->u.range.stop : v->u.range.start > v->u.range.stop;
    }
    case V_EXPR: case V_SYM:
        ev_fail(ev, loc, "this condition is only known at run time; it cannot be used where a "
                "compile-time value is needed");
    default:
        return 1;
    }
}

int64_t v_want_int(ev_t *ev, value_t *v, ast_loc_t loc, const char *what)
{
    if (v->kind == V_INT || v->kind == V_BOOL) {
        return v->u.i;
    }
    if (v->kind == V_EXPR) {
        int64_t c;
        if (tilec_ir_is_const_int(v->u.ex, &c)) {
            return c;
        }
    }
    if (v_is_rt(v)) {
        ev_fail(ev, loc, "%s must be a compile-time integer, not a value known only at run time", what);
    }
    ev_fail(ev, loc, "%s must be an integer, got %s", what, v_kind_name(v));
}

int v_as_dtype(const value_t *v, tilec_dtype_t *out)
{
    if (v->kind == V_DTYPE) {
        *out = v->u.dt;
        return 1;
    }
    if (v->kind == V_STR) {
        int t = tilec_dtype_from_name(v->u.s.s);
        if (t < 0 && strncmp(v->u.s.s, "T.", 2) == 0) {
            t = tilec_dtype_from_name(v->u.s.s + 2);
        }
        if (t < 0 && (!strcmp(v->u.s.s, "tfloat32") || !strcmp(v->u.s.s, "T.tfloat32"))) {
            t = TILEC_FLOAT32;   /* float32 storage (bi_lookup_ns) */
        }
        if (t >= 0) {
            *out = (tilec_dtype_t)t;
            return 1;
        }
    }
    return 0;
}

tilec_dtype_t v_want_dtype(ev_t *ev, value_t *v, ast_loc_t loc)
{
    tilec_dtype_t t;
    if (v_as_dtype(v, &t)) {
        return t;
    }
    if (v->kind == V_STR) {
        ev_fail(ev, loc, "unknown dtype '%s' (use float16, bfloat16, float32, float64, int8, int16, "
                "int32, int64, uint8, uint16, uint32, uint64 or bool)", v->u.s.s);
    }
    ev_fail(ev, loc, "expected a dtype such as T.float16 or \"float32\", got %s", v_kind_name(v));
}

/* ---- IR expression helpers ------------------------------------------------ */

tilec_ir_expr_t *ex_int32(ev_t *ev, int64_t v)
{
    return ev_chk(ev, tilec_ir_int(ev->a, v, TILEC_INT32));
}

tilec_ir_expr_t *sym_expr(ev_t *ev, sym_t *s)
{
    if (!s->var) {
        s->var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, s->name), TILEC_INT32,
                                             TILEC_VAR_SYM));
    }
    return ev_chk(ev, tilec_ir_varref(ev->a, s->var));
}

static int int_fits_dtype(int64_t x, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: return x >= INT8_MIN && x <= INT8_MAX;
    case TILEC_INT16: return x >= INT16_MIN && x <= INT16_MAX;
    case TILEC_INT32: return x >= INT32_MIN && x <= INT32_MAX;
    case TILEC_UINT8: return x >= 0 && x <= UINT8_MAX;
    case TILEC_UINT16: return x >= 0 && x <= UINT16_MAX;
    case TILEC_UINT32: return x >= 0 && x <= (int64_t)UINT32_MAX;
    case TILEC_UINT64: return x >= 0;
    default: return 1;
    }
}

/* An integer converted to an integer dtype wraps around (two's complement),
 * as a store or T.cast of a run-time value does. */
static int64_t int_wrap(int64_t x, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: return (int8_t)(uint8_t)(uint64_t)x;
    case TILEC_INT16: return (int16_t)(uint16_t)(uint64_t)x;
    case TILEC_INT32: return (int32_t)(uint32_t)(uint64_t)x;
    case TILEC_UINT8: return (uint8_t)(uint64_t)x;
    case TILEC_UINT16: return (uint16_t)(uint64_t)x;
    case TILEC_UINT32: return (uint32_t)(uint64_t)x;
    default: return x;
    }
}

static tilec_ir_expr_t *const_of(ev_t *ev, value_t *v, tilec_dtype_t t)
{
    if (v->kind == V_FLOAT) {
        if (tilec_dtype_is_float(t)) {
            return ev_chk(ev, tilec_ir_float(ev->a, v->u.f, t));
        }
        return ex_cast(ev, ev_chk(ev, tilec_ir_float(ev->a, v->u.f, TILEC_FLOAT64)), t);
    }
    if (tilec_dtype_is_float(t)) {
        return ev_chk(ev, tilec_ir_float(ev->a, (double)v->u.i, t));
    }
    if (t == TILEC_BOOL) {
        return ev_chk(ev, tilec_ir_int(ev->a, v->u.i != 0, t));
    }
    return ev_chk(ev, tilec_ir_int(ev->a, int_wrap(v->u.i, t), t));
}

tilec_ir_expr_t *ex_cast(ev_t *ev, tilec_ir_expr_t *e, tilec_dtype_t t)
{
    if (e->dtype == t) {
        return e;
    }
    if (e->kind == TILEC_EX_INT && t != TILEC_BOOL && !tilec_dtype_is_float(t)) {
        return ev_chk(ev, tilec_ir_int(ev->a, int_wrap(e->u.i, t), t));
    }
    if (e->kind == TILEC_EX_INT && (t == TILEC_FLOAT32 || t == TILEC_FLOAT64) &&
        e->u.i > -(1 << 24) && e->u.i < (1 << 24)) {
        return ev_chk(ev, tilec_ir_float(ev->a, (double)e->u.i, t));
    }
    if (e->kind == TILEC_EX_FLOAT && tilec_dtype_is_float(t) && (isinf(e->u.f) || e->u.f == 0.0)) {
        return ev_chk(ev, tilec_ir_float(ev->a, e->u.f, t));
    }
    return ev_chk(ev, tilec_ir_cast(ev->a, t, e));
}

tilec_ir_expr_t *ex_of(ev_t *ev, value_t *v, ast_loc_t loc)
{
    switch (v->kind) {
    case V_EXPR: return v->u.ex;
    case V_SYM: return sym_expr(ev, v->u.sym);
    case V_INT:
        if (v->u.i >= INT32_MIN && v->u.i <= INT32_MAX) {
            return ex_int32(ev, v->u.i);
        }
        return ev_chk(ev, tilec_ir_int(ev->a, v->u.i, TILEC_INT64));
    case V_BOOL: return ev_chk(ev, tilec_ir_int(ev->a, v->u.i, TILEC_BOOL));
    case V_FLOAT: return ev_chk(ev, tilec_ir_float(ev->a, v->u.f, TILEC_FLOAT32));
    case V_BUF:
        if (v->u.buf->scope == TILEC_SCOPE_VAR) {
            tilec_ir_expr_t *z = ex_int32(ev, 0);
            return lk_load(ev, v->u.buf, &z);
        }
        ev_fail(ev, loc, "buffer '%s' is used as a scalar; index it (%s[i, ...]) or use a tile "
                "primitive such as T.copy", v->u.buf->name, v->u.buf->name);
    case V_REGION:
        ev_fail(ev, loc, "a buffer region (slice) cannot be used as a scalar value");
    default:
        ev_fail(ev, loc, "expected a numeric value, got %s", v_kind_name(v));
    }
}

tilec_ir_expr_t *ex_as(ev_t *ev, value_t *v, tilec_dtype_t t, ast_loc_t loc)
{
    if (v->kind == V_INT || v->kind == V_BOOL || v->kind == V_FLOAT) {
        return const_of(ev, v, t);
    }
    return ex_cast(ev, ex_of(ev, v, loc), t);
}

tilec_ir_expr_t *ex_index(ev_t *ev, value_t *v, ast_loc_t loc)
{
    tilec_ir_expr_t *e;
    if (v->kind == V_FLOAT) {
        ev_fail(ev, loc, "an index must be an integer, got a float");
    }
    if (v->kind == V_SEQ || v->kind == V_REGION || (v->kind == V_BUF && v->u.buf->scope != TILEC_SCOPE_VAR)) {
        ev_fail(ev, loc, "an index must be an integer, got %s", v_kind_name(v));
    }
    e = ex_of(ev, v, loc);
    if (tilec_dtype_is_float(e->dtype)) {
        ev_fail(ev, loc, "an index must be an integer, got a %s value; use T.cast(x, \"int32\")",
                tilec_dtype_name(e->dtype));
    }
    if (e->kind == TILEC_EX_INT && !int_fits_dtype(e->u.i, TILEC_INT32))
        ev_fail(ev, loc, "index %lld does not fit in int32", (long long)e->u.i);
    return ex_cast(ev, e, TILEC_INT32);
}

tilec_ir_expr_t *ex_bool(ev_t *ev, tilec_ir_expr_t *e)
{
    if (e->dtype == TILEC_BOOL) {
        return e;
    }
    if (tilec_dtype_is_float(e->dtype)) {
        return ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_NE, e,
                                          ev_chk(ev, tilec_ir_float(ev->a, 0.0, e->dtype))));
    }
    return ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_NE, e,
                                      ev_chk(ev, tilec_ir_int(ev->a, 0, e->dtype))));
}

tilec_dtype_t dt_promote(tilec_dtype_t x, tilec_dtype_t y)
{
    int fx = tilec_dtype_is_float(x), fy = tilec_dtype_is_float(y);
    size_t sx = tilec_dtype_size(x), sy = tilec_dtype_size(y);
    if (x == y) return x;
    if (fx && !fy) return x;
    if (fy && !fx) return y;
    if (fx && fy) {
        if (sx == sy) return TILEC_FLOAT32;   /* float16 with bfloat16 */
        return sx > sy ? x : y;
    }
    if (x == TILEC_BOOL) return y;
    if (y == TILEC_BOOL) return x;
    if (sx != sy) return sx > sy ? x : y;
    return tilec_dtype_is_signed(x) ? y : x;  /* same width: unsigned wins (C) */
}

/* dtype a Python literal takes next to a runtime operand of dtype t. */
static tilec_dtype_t dt_adopt(const value_t *lit, tilec_dtype_t t)
{
    if (lit->kind == V_FLOAT) {
        return tilec_dtype_is_float(t) ? t : TILEC_FLOAT32;
    }
    if (t == TILEC_BOOL) {
        return lit->kind == V_BOOL ? TILEC_BOOL : TILEC_INT32;
    }
    /* An integer literal the run-time operand's type cannot hold (x * 2**31
     * on int32, u - 1 on an unsigned) does not adopt it: the operation is
     * done in int32 or int64, whichever holds both. */
    if (tilec_dtype_is_int(t) && !int_fits_dtype(lit->u.i, t)) {
        tilec_dtype_t r = dt_promote(t, int_fits_dtype(lit->u.i, TILEC_INT32) ? TILEC_INT32 : TILEC_INT64);
        if (!int_fits_dtype(lit->u.i, r)) r = dt_promote(t, TILEC_INT64);
        return int_fits_dtype(lit->u.i, r) ? r : TILEC_INT64;
    }
    return t;
}

/* Common dtype of two operands, at least one runtime. */
static tilec_dtype_t dt_common(ev_t *ev, value_t *a, value_t *b, tilec_ir_expr_t **ea,
                               tilec_ir_expr_t **eb, ast_loc_t loc)
{
    tilec_dtype_t t;
    if (!v_is_rt(a)) {
        *eb = ex_of(ev, b, loc);
        t = v_is_num(a) ? dt_adopt(a, (*eb)->dtype) : (*eb)->dtype;
        if (!v_is_num(a)) {
            *ea = ex_of(ev, a, loc);
            t = dt_promote((*ea)->dtype, (*eb)->dtype);
        }
    } else if (!v_is_rt(b)) {
        *ea = ex_of(ev, a, loc);
        t = v_is_num(b) ? dt_adopt(b, (*ea)->dtype) : (*ea)->dtype;
        if (!v_is_num(b)) {
            *eb = ex_of(ev, b, loc);
            t = dt_promote((*ea)->dtype, (*eb)->dtype);
        }
    } else {
        *ea = ex_of(ev, a, loc);
        *eb = ex_of(ev, b, loc);
        t = dt_promote((*ea)->dtype, (*eb)->dtype);
    }
    return t;
}

static void rt_operands(ev_t *ev, value_t *a, value_t *b, tilec_dtype_t t, tilec_ir_expr_t **ea,
                        tilec_ir_expr_t **eb, ast_loc_t loc)
{
    *ea = ex_as(ev, a, t, loc);
    *eb = ex_as(ev, b, t, loc);
}

/* ---- compile-time arithmetic ---------------------------------------------- */

static int64_t ct_floordiv(ev_t *ev, int64_t a, int64_t b, ast_loc_t loc)
{
    int64_t q;
    if (b == 0) ev_fail(ev, loc, "integer division by zero");
    if (a == INT64_MIN && b == -1) ev_fail(ev, loc, "integer overflow in //");
    q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static int64_t ct_mod(ev_t *ev, int64_t a, int64_t b, ast_loc_t loc)
{
    int64_t r;
    if (b == 0) ev_fail(ev, loc, "integer modulo by zero");
    if (b == -1) return 0;
    r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static value_t *ct_arith_int(ev_t *ev, int op, int64_t a, int64_t b, ast_loc_t loc)
{
    int64_t r;
    switch (op) {
    case '+': if (__builtin_add_overflow(a, b, &r)) goto ovf; return v_int(ev, r);
    case '-': if (__builtin_sub_overflow(a, b, &r)) goto ovf; return v_int(ev, r);
    case '*': if (__builtin_mul_overflow(a, b, &r)) goto ovf; return v_int(ev, r);
    case '/':
        if (b == 0) ev_fail(ev, loc, "division by zero");
        return v_float(ev, (double)a / (double)b);
    case AST_OP_FLOORDIV: return v_int(ev, ct_floordiv(ev, a, b, loc));
    case '%': return v_int(ev, ct_mod(ev, a, b, loc));
    case AST_OP_POW: {
        int64_t base = a, res = 1, e = b;
        if (e < 0) {
            if (a == 0) ev_fail(ev, loc, "0 cannot be raised to a negative power");
            return v_float(ev, pow((double)a, (double)b));
        }
        while (e > 0) {
            if (e & 1) {
                if (__builtin_mul_overflow(res, base, &res)) goto ovf;
            }
            e >>= 1;
            if (e > 0 && __builtin_mul_overflow(base, base, &base)) goto ovf;
        }
        return v_int(ev, res);
    }
    case AST_OP_LSHIFT:
        if (b < 0 || b > 62 || (a != 0 && (a > (INT64_MAX >> b) || a < (INT64_MIN >> b)))) {
            if (b < 0) ev_fail(ev, loc, "negative shift count");
            if (a != 0) goto ovf;
        }
        return v_int(ev, (int64_t)((uint64_t)a << (b > 62 ? 0 : b)) * (a != 0));
    case AST_OP_RSHIFT:
        if (b < 0) ev_fail(ev, loc, "negative shift count");
        return v_int(ev, b > 63 ? (a < 0 ? -1 : 0) : a >> b);
    case AST_OP_BITAND: return v_int(ev, a & b);
    case AST_OP_BITOR: return v_int(ev, a | b);
    case AST_OP_BITXOR: return v_int(ev, a ^ b);
    default: break;
    }
    ev_fail(ev, loc, "unsupported operator on integers");
ovf:
    ev_fail(ev, loc, "integer overflow: compile-time integers are limited to 64 bits");
}

static double num_f(const value_t *v)
{
    return v->kind == V_FLOAT ? v->u.f : (double)v->u.i;
}

static value_t *ct_arith_float(ev_t *ev, int op, double a, double b, ast_loc_t loc)
{
    switch (op) {
    case '+': return v_float(ev, a + b);
    case '-': return v_float(ev, a - b);
    case '*': return v_float(ev, a * b);
    case '/':
        if (b == 0.0) ev_fail(ev, loc, "float division by zero");
        return v_float(ev, a / b);
    case AST_OP_FLOORDIV:
        if (b == 0.0) ev_fail(ev, loc, "float floor division by zero");
        return v_float(ev, floor(a / b));
    case '%': {
        double r;
        if (b == 0.0) ev_fail(ev, loc, "float modulo by zero");
        r = fmod(a, b);
        if (r != 0.0 && ((r < 0) != (b < 0))) r += b;
        return v_float(ev, r);
    }
    case AST_OP_POW:
        if (a < 0 && b != floor(b)) ev_fail(ev, loc, "a negative number raised to a fractional power is complex");
        if (a == 0.0 && b < 0) ev_fail(ev, loc, "0.0 cannot be raised to a negative power");
        return v_float(ev, pow(a, b));
    default: break;
    }
    ev_fail(ev, loc, "this operator is not supported on floats");
}

static value_t *seq_concat(ev_t *ev, value_t *a, value_t *b, ast_loc_t loc)
{
    value_t *r;
    if ((long)a->u.seq.n + b->u.seq.n > EV_MAX_SEQ) ev_fail(ev, loc, "sequence too long");
    r = v_seq(ev, a->u.seq.n + b->u.seq.n, a->u.seq.is_list);
    memcpy(r->u.seq.items, a->u.seq.items, (size_t)a->u.seq.n * sizeof(value_t *));
    memcpy(r->u.seq.items + a->u.seq.n, b->u.seq.items, (size_t)b->u.seq.n * sizeof(value_t *));
    return r;
}

static value_t *seq_repeat(ev_t *ev, value_t *s, int64_t n, ast_loc_t loc)
{
    value_t *r;
    int64_t i;
    /* An empty sequence repeated is empty whatever the count: no loop of n steps. */
    if (n < 0 || (s->kind == V_STR ? s->u.s.len == 0 : s->u.seq.n == 0)) n = 0;
    if (s->kind == V_STR) {
        char *c;
        if (s->u.s.len && (uint64_t)n > EV_MAX_SEQ / s->u.s.len) ev_fail(ev, loc, "string too long");
        r = v_new(ev, V_STR);
        c = ev_alloc(ev, s->u.s.len * (size_t)n + 1);
        for (i = 0; i < n; i++) memcpy(c + (size_t)i * s->u.s.len, s->u.s.s, s->u.s.len);
        r->u.s.s = c;
        r->u.s.len = s->u.s.len * (size_t)n;
        return r;
    }
    if (s->u.seq.n && n > EV_MAX_SEQ / s->u.seq.n) ev_fail(ev, loc, "sequence too long");
    r = v_seq(ev, (int)(s->u.seq.n * n), s->u.seq.is_list);
    for (i = 0; i < n; i++)
        memcpy(r->u.seq.items + i * s->u.seq.n, s->u.seq.items, (size_t)s->u.seq.n * sizeof(value_t *));
    return r;
}

static const char *op_text(int op)
{
    switch (op) {
    case '+': return "+"; case '-': return "-"; case '*': return "*"; case '/': return "/";
    case '%': return "%"; case '@': return "@"; case AST_OP_FLOORDIV: return "//";
    case AST_OP_POW: return "**"; case AST_OP_LSHIFT: return "<<"; case AST_OP_RSHIFT: return ">>";
    case AST_OP_BITAND: return "&"; case AST_OP_BITOR: return "|"; case AST_OP_BITXOR: return "^";
    case AST_OP_EQ: return "=="; case AST_OP_NE: return "!="; case AST_OP_LT: return "<";
    case AST_OP_LE: return "<="; case AST_OP_GT: return ">"; case AST_OP_GE: return ">=";
    case AST_OP_IN: return "in"; case AST_OP_NOTIN: return "not in"; case AST_OP_IS: return "is";
    case AST_OP_ISNOT: return "is not";
    default: return "?";
    }
}

value_t *v_binop(ev_t *ev, int op, value_t *a, value_t *b, ast_loc_t loc)
{
    tilec_ir_expr_t *ea = NULL, *eb = NULL;
    tilec_dtype_t t;
    tilec_binop_t bop;
    if (v_is_num(a) && v_is_num(b)) {
        if (a->kind == V_FLOAT || b->kind == V_FLOAT) {
            if (op == AST_OP_LSHIFT || op == AST_OP_RSHIFT || op == AST_OP_BITAND ||
                op == AST_OP_BITOR || op == AST_OP_BITXOR)
                ev_fail(ev, loc, "operator %s needs integers", op_text(op));
            return ct_arith_float(ev, op, num_f(a), num_f(b), loc);
        }
        if (a->kind == V_BOOL && b->kind == V_BOOL &&
            (op == AST_OP_BITAND || op == AST_OP_BITOR || op == AST_OP_BITXOR)) {
            value_t *r = ct_arith_int(ev, op, a->u.i, b->u.i, loc);
            return v_bool(ev, (int)r->u.i);
        }
        return ct_arith_int(ev, op, a->u.i, b->u.i, loc);
    }
    if (op == '+' && a->kind == V_STR && b->kind == V_STR) {
        value_t *r;
        char *c;
        if (a->u.s.len + b->u.s.len > EV_MAX_SEQ) ev_fail(ev, loc, "string too long");
        r = v_new(ev, V_STR);
        c = ev_alloc(ev, a->u.s.len + b->u.s.len + 1);
        memcpy(c, a->u.s.s, a->u.s.len);
        memcpy(c + a->u.s.len, b->u.s.s, b->u.s.len);
        r->u.s.s = c;
        r->u.s.len = a->u.s.len + b->u.s.len;
        return r;
    }
    if (op == '+' && a->kind == V_SEQ && b->kind == V_SEQ) return seq_concat(ev, a, b, loc);
    if (op == '*' && (a->kind == V_SEQ || a->kind == V_STR) && (b->kind == V_INT || b->kind == V_BOOL))
        return seq_repeat(ev, a, b->u.i, loc);
    if (op == '*' && (b->kind == V_SEQ || b->kind == V_STR) && (a->kind == V_INT || a->kind == V_BOOL))
        return seq_repeat(ev, b, a->u.i, loc);
    if ((op == AST_OP_BITAND || op == AST_OP_BITOR || op == AST_OP_BITXOR) &&
        (v_is_rt(a) || a->kind == V_BOOL) && (v_is_rt(b) || b->kind == V_BOOL)) {
        /* masks: (i < M) & (j < N) on run-time booleans is a logical operation */
        ea = ex_of(ev, a, loc);
        eb = ex_of(ev, b, loc);
        if (ea->dtype == TILEC_BOOL && eb->dtype == TILEC_BOOL) {
            tilec_binop_t lop = op == AST_OP_BITAND ? TILEC_BIN_AND : op == AST_OP_BITOR ? TILEC_BIN_OR : TILEC_BIN_NE;
            return v_expr(ev, tilec_ir_binary(ev->a, lop, ea, eb));
        }
    }
    if ((v_is_rt(a) || v_is_num(a)) && (v_is_rt(b) || v_is_num(b))) {
        t = dt_common(ev, a, b, &ea, &eb, loc);
        switch (op) {
        case '+': bop = TILEC_BIN_ADD; break;
        case '-': bop = TILEC_BIN_SUB; break;
        case '*': bop = TILEC_BIN_MUL; break;
        case '/': bop = TILEC_BIN_DIV; break;
        case AST_OP_FLOORDIV: bop = TILEC_BIN_FLOORDIV; break;
        case '%': bop = TILEC_BIN_FLOORMOD; break;
        case AST_OP_POW: bop = TILEC_BIN_POW; break;
        case AST_OP_BITAND: bop = TILEC_BIN_BITAND; break;
        case AST_OP_BITOR: bop = TILEC_BIN_BITOR; break;
        case AST_OP_BITXOR: bop = TILEC_BIN_BITXOR; break;
        case AST_OP_LSHIFT: bop = TILEC_BIN_SHL; break;
        case AST_OP_RSHIFT: bop = TILEC_BIN_SHR; break;
        default:
            ev_fail(ev, loc, "operator %s is not supported on run-time values (only + - * / // %% ** & | ^ << >> "
                    "and comparisons)", op_text(op));
        }
        if (t == TILEC_BOOL) t = TILEC_INT32;
        if (bop >= TILEC_BIN_BITAND && !tilec_dtype_is_int(t))
            ev_fail(ev, loc, "operator %s needs integers, got %s", op_text(op), tilec_dtype_name(t));
        if ((bop == TILEC_BIN_SHL || bop == TILEC_BIN_SHR) && b->kind == V_INT &&
            (b->u.i < 0 || b->u.i >= 8 * (int64_t)tilec_dtype_size(t)))
            ev_fail(ev, loc, "shift count %lld is out of range for %s", (long long)b->u.i, tilec_dtype_name(t));
        if ((bop == TILEC_BIN_DIV || bop == TILEC_BIN_FLOORDIV || bop == TILEC_BIN_FLOORMOD) && v_is_num(b) &&
            (b->kind == V_FLOAT ? b->u.f == 0.0 : b->u.i == 0))
            ev_fail(ev, loc, "%s by zero", bop == TILEC_BIN_FLOORMOD ? "modulo" : "division");
        if (bop == TILEC_BIN_POW && !tilec_dtype_is_float(t) && b->kind == V_INT && b->u.i == 2) {
            rt_operands(ev, a, a, t, &ea, &eb, loc);
            return v_expr(ev, tilec_ir_binary(ev->a, TILEC_BIN_MUL, ea, eb));
        }
        rt_operands(ev, a, b, t, &ea, &eb, loc);
        return v_expr(ev, tilec_ir_binary(ev->a, bop, ea, eb));
    }
    ev_fail(ev, loc, "unsupported operand types for %s: %s and %s", op_text(op), v_kind_name(a),
            v_kind_name(b));
}

/* ---- comparisons ------------------------------------------------------------ */

static int dtype_name_eq(value_t *a, value_t *b, int *out)
{
    tilec_dtype_t x, y;
    if ((a->kind == V_DTYPE || b->kind == V_DTYPE) && v_as_dtype(a, &x) && v_as_dtype(b, &y)) {
        *out = x == y;
        return 1;
    }
    if ((a->kind == V_DTYPE && b->kind == V_STR) || (b->kind == V_DTYPE && a->kind == V_STR)) {
        *out = 0;
        return 1;
    }
    return 0;
}

int v_equal(ev_t *ev, value_t *a, value_t *b, int depth)
{
    int r, i;
    if (depth > 100) return 0;
    if (v_is_num(a) && v_is_num(b)) {
        if (a->kind != V_FLOAT && b->kind != V_FLOAT) return a->u.i == b->u.i;
        return num_f(a) == num_f(b);
    }
    if (dtype_name_eq(a, b, &r)) return r;
    if (a->kind != b->kind) return 0;
    switch (a->kind) {
    case V_NONE: return 1;
    case V_STR: return a->u.s.len == b->u.s.len && memcmp(a->u.s.s, b->u.s.s, a->u.s.len) == 0;
    case V_SEQ:
        if (a->u.seq.n != b->u.seq.n || a->u.seq.is_list != b->u.seq.is_list) return 0;
        for (i = 0; i < a->u.seq.n; i++)
            if (!v_equal(ev, a->u.seq.items[i], b->u.seq.items[i], depth + 1)) return 0;
        return 1;
    case V_DICT:
        if (a->u.seq.n != b->u.seq.n) return 0;
        for (i = 0; i + 1 < a->u.seq.n; i += 2) {
            value_t *o = v_dict_get(ev, b, a->u.seq.items[i]);
            if (!o || !v_equal(ev, a->u.seq.items[i + 1], o, depth + 1)) return 0;
        }
        return 1;
    case V_OPAQUE: return !strcmp(a->u.opq, b->u.opq);
    case V_BUF: return a->u.buf == b->u.buf;
    case V_FUNC: return a->u.fn == b->u.fn;
    case V_POLICY: return a->u.policy == b->u.policy;
    case V_NS: return a->u.ns == b->u.ns;
    case V_BUILTIN: return a->u.bi.id == b->u.bi.id && a->u.bi.self == b->u.bi.self;
    default: return a == b;
    }
}

value_t *v_dict_get(ev_t *ev, value_t *d, value_t *key)
{
    int i;
    for (i = 0; i + 1 < d->u.seq.n; i += 2)
        if (v_equal(ev, d->u.seq.items[i], key, 0)) return d->u.seq.items[i + 1];
    return NULL;
}

void v_dict_set(ev_t *ev, value_t *d, value_t *key, value_t *val, ast_loc_t loc)
{
    value_t **items;
    int i;
    if (v_is_rt(key)) ev_fail(ev, loc, "a dict key must be known at compile time");
    for (i = 0; i + 1 < d->u.seq.n; i += 2) {
        if (v_equal(ev, d->u.seq.items[i], key, 0)) {
            d->u.seq.items[i + 1] = val;
            return;
        }
    }
    if (d->u.seq.n + 2 > EV_MAX_SEQ) ev_fail(ev, loc, "dict too large");
    items = ev_alloc(ev, sizeof *items * (size_t)(d->u.seq.n + 2));
    if (d->u.seq.n) memcpy(items, d->u.seq.items, sizeof *items * (size_t)d->u.seq.n);
    items[d->u.seq.n] = key;
    items[d->u.seq.n + 1] = val;
    d->u.seq.items = items;
    d->u.seq.n += 2;
}

static int ct_less(ev_t *ev, value_t *a, value_t *b, ast_loc_t loc, int *lt, int *eq, int depth)
{
    if (depth > 100) ev_fail(ev, loc, "comparison of values nested too deeply");
    if (v_is_num(a) && v_is_num(b)) {
        if (a->kind != V_FLOAT && b->kind != V_FLOAT) {
            *lt = a->u.i < b->u.i;
            *eq = a->u.i == b->u.i;
        } else {
            *lt = num_f(a) < num_f(b);
            *eq = num_f(a) == num_f(b);
        }
        return 1;
    }
    if (a->kind == V_STR && b->kind == V_STR) {
        size_t n = a->u.s.len < b->u.s.len ? a->u.s.len : b->u.s.len;
        int c = memcmp(a->u.s.s, b->u.s.s, n);
        if (c == 0) c = (a->u.s.len > b->u.s.len) - (a->u.s.len < b->u.s.len);
        *lt = c < 0;
        *eq = c == 0;
        return 1;
    }
    if (a->kind == V_SEQ && b->kind == V_SEQ) {
        int i;
        for (i = 0; i < a->u.seq.n && i < b->u.seq.n; i++) {
            if (!v_equal(ev, a->u.seq.items[i], b->u.seq.items[i], 0))
                return ct_less(ev, a->u.seq.items[i], b->u.seq.items[i], loc, lt, eq, depth + 1) && ((*eq = 0), 1);
        }
        *lt = a->u.seq.n < b->u.seq.n;
        *eq = a->u.seq.n == b->u.seq.n;
        return 1;
    }
    return 0;
}

static int ct_contains(ev_t *ev, value_t *item, value_t *c, ast_loc_t loc)
{
    int i;
    if (c->kind == V_SEQ) {
        for (i = 0; i < c->u.seq.n; i++)
            if (v_equal(ev, item, c->u.seq.items[i], 0)) return 1;
        return 0;
    }
    if (c->kind == V_STR && item->kind == V_STR) {
        if (item->u.s.len == 0) return 1;
        return item->u.s.len <= c->u.s.len && memmem(c->u.s.s, c->u.s.len, item->u.s.s, item->u.s.len) != NULL;
    }
    if (c->kind == V_DICT) return v_dict_get(ev, c, item) != NULL;
    if (c->kind == V_RANGE && (item->kind == V_INT || item->kind == V_BOOL)) {
        int64_t x = item->u.i, s = c->u.range.start, e = c->u.range.stop, st = c->u.range.step;
        if (st > 0 ? (x < s || x >= e) : (x > s || x <= e)) return 0;
        return (x - s) % st == 0;
    }
    ev_fail(ev, loc, "'in' needs a tuple, list, dict, string or range on its right, got %s", v_kind_name(c));
}

value_t *v_compare(ev_t *ev, int op, value_t *a, value_t *b, ast_loc_t loc)
{
    int lt, eq;
    if (op == AST_OP_IS || op == AST_OP_ISNOT) {
        int same;
        if (v_is_rt(a) || v_is_rt(b)) {
            same = 0;
        } else if (a->kind == V_NONE || b->kind == V_NONE || a->kind == V_BOOL || b->kind == V_BOOL) {
            same = a->kind == b->kind && (a->kind == V_NONE || a->u.i == b->u.i);
        } else {
            same = v_equal(ev, a, b, 0);
        }
        return v_bool(ev, op == AST_OP_IS ? same : !same);
    }
    if (op == AST_OP_IN || op == AST_OP_NOTIN) {
        int r = ct_contains(ev, a, b, loc);
        return v_bool(ev, op == AST_OP_IN ? r : !r);
    }
    if ((v_is_rt(a) && (v_is_rt(b) || v_is_num(b))) || (v_is_rt(b) && v_is_num(a))) {
        tilec_ir_expr_t *ea, *eb;
        tilec_dtype_t t = dt_common(ev, a, b, &ea, &eb, loc);
        tilec_binop_t bop;
        rt_operands(ev, a, b, t, &ea, &eb, loc);
        switch (op) {
        case AST_OP_EQ: bop = TILEC_BIN_EQ; break;
        case AST_OP_NE: bop = TILEC_BIN_NE; break;
        case AST_OP_LT: bop = TILEC_BIN_LT; break;
        case AST_OP_LE: bop = TILEC_BIN_LE; break;
        case AST_OP_GT: bop = TILEC_BIN_GT; break;
        default: bop = TILEC_BIN_GE; break;
        }
        return v_expr(ev, tilec_ir_binary(ev->a, bop, ea, eb));
    }
    if (v_is_rt(a) || v_is_rt(b)) {
        ev_fail(ev, loc, "cannot compare %s with %s", v_kind_name(a), v_kind_name(b));
    }
    if (op == AST_OP_EQ) return v_bool(ev, v_equal(ev, a, b, 0));
    if (op == AST_OP_NE) return v_bool(ev, !v_equal(ev, a, b, 0));
    if (!ct_less(ev, a, b, loc, &lt, &eq, 0))
        ev_fail(ev, loc, "'%s' is not supported between %s and %s", op_text(op), v_kind_name(a), v_kind_name(b));
    switch (op) {
    case AST_OP_LT: return v_bool(ev, lt);
    case AST_OP_LE: return v_bool(ev, lt || eq);
    case AST_OP_GT: return v_bool(ev, !lt && !eq);
    default: return v_bool(ev, !lt);
    }
}

value_t *v_logic(ev_t *ev, int is_and, value_t *a, value_t *b, ast_loc_t loc)
{
    tilec_ir_expr_t *ea = ex_bool(ev, ex_of(ev, a, loc));
    tilec_ir_expr_t *eb = ex_bool(ev, ex_of(ev, b, loc));
    return v_expr(ev, tilec_ir_binary(ev->a, is_and ? TILEC_BIN_AND : TILEC_BIN_OR, ea, eb));
}

value_t *v_unary(ev_t *ev, int op, value_t *a, ast_loc_t loc)
{
    if (op == AST_OP_NOT) {
        if (v_is_rt(a)) {
            return v_expr(ev, tilec_ir_unary(ev->a, TILEC_UN_NOT, ex_bool(ev, ex_of(ev, a, loc))));
        }
        return v_bool(ev, !v_truth(ev, a, loc));
    }
    if (a->kind == V_INT || a->kind == V_BOOL) {
        if (op == '-') {
            if (a->u.i == INT64_MIN) ev_fail(ev, loc, "integer overflow");
            return v_int(ev, -a->u.i);
        }
        if (op == '+') return v_int(ev, a->u.i);
        if (op == '~') return v_int(ev, ~a->u.i);
    }
    if (a->kind == V_FLOAT) {
        if (op == '-') return v_float(ev, -a->u.f);
        if (op == '+') return a;
    }
    if (v_is_rt(a)) {
        tilec_ir_expr_t *e = ex_of(ev, a, loc);
        if (e->dtype == TILEC_BOOL) e = ex_cast(ev, e, TILEC_INT32);
        if (op == '~') {
            if (!tilec_dtype_is_int(e->dtype))
                ev_fail(ev, loc, "operator ~ needs an integer, got %s", tilec_dtype_name(e->dtype));
            return v_expr(ev, tilec_ir_binary(ev->a, TILEC_BIN_BITXOR, e, tilec_ir_int(ev->a, -1, e->dtype)));
        }
        if (op == '+') return v_expr(ev, e);
        if (e->kind == TILEC_EX_INT && e->u.i != INT64_MIN)
            return v_expr(ev, tilec_ir_int(ev->a, -e->u.i, e->dtype));
        if (e->kind == TILEC_EX_FLOAT) return v_expr(ev, tilec_ir_float(ev->a, -e->u.f, e->dtype));
        return v_expr(ev, tilec_ir_unary(ev->a, TILEC_UN_NEG, e));
    }
    ev_fail(ev, loc, "bad operand type for unary %s: %s", op == '-' ? "-" : op == '+' ? "+" : "~",
            v_kind_name(a));
}

value_t *v_select(ev_t *ev, value_t *c, value_t *a, value_t *b, ast_loc_t loc)
{
    tilec_ir_expr_t *ec, *ea, *eb;
    tilec_dtype_t t;
    if (!v_is_rt(c)) {
        return v_truth(ev, c, loc) ? a : b;
    }
    ec = ex_bool(ev, ex_of(ev, c, loc));
    if (v_is_rt(a) || v_is_rt(b)) {
        t = dt_common(ev, a, b, &ea, &eb, loc);
    } else if (v_is_num(a) && v_is_num(b)) {
        t = (a->kind == V_FLOAT || b->kind == V_FLOAT) ? TILEC_FLOAT32
            : (a->kind == V_BOOL && b->kind == V_BOOL) ? TILEC_BOOL : TILEC_INT32;
    } else {
        ev_fail(ev, loc, "both branches of a run-time selection must be numbers, got %s and %s",
                v_kind_name(a), v_kind_name(b));
    }
    rt_operands(ev, a, b, t, &ea, &eb, loc);
    return v_expr(ev, tilec_ir_select(ev->a, ec, ea, eb));
}

value_t *v_math(ev_t *ev, tilec_unop_t op, value_t *a, ast_loc_t loc)
{
    tilec_ir_expr_t *e;
    if (op == TILEC_UN_ABS) {
        if (a->kind == V_INT || a->kind == V_BOOL) {
            if (a->u.i == INT64_MIN) ev_fail(ev, loc, "integer overflow");
            return v_int(ev, a->u.i < 0 ? -a->u.i : a->u.i);
        }
        if (a->kind == V_FLOAT) return v_float(ev, fabs(a->u.f));
        e = ex_of(ev, a, loc);
        if (e->dtype == TILEC_BOOL) e = ex_cast(ev, e, TILEC_INT32);
        return v_expr(ev, tilec_ir_unary(ev->a, op, e));
    }
    if (!v_is_num(a) && !v_is_rt(a)) {
        ev_fail(ev, loc, "expected a number, got %s", v_kind_name(a));
    }
    if (v_is_num(a)) {
        /* A compile-time argument is folded (T.sqrt(16.0) == 4.0), in
         * float64 as Python's math module would. */
        double x = a->kind == V_FLOAT ? a->u.f : (double)a->u.i, r;
        switch (op) {
        case TILEC_UN_EXP: r = exp(x); break;
        case TILEC_UN_EXP2: r = exp2(x); break;
        case TILEC_UN_LOG: r = log(x); break;
        case TILEC_UN_LOG2: r = log2(x); break;
        case TILEC_UN_SQRT: r = sqrt(x); break;
        case TILEC_UN_RSQRT: r = 1.0 / sqrt(x); break;
        case TILEC_UN_TANH: r = tanh(x); break;
        case TILEC_UN_SIGMOID: r = 1.0 / (1.0 + exp(-x)); break;
        case TILEC_UN_FLOOR: r = floor(x); break;
        case TILEC_UN_CEIL: r = ceil(x); break;
        default: goto runtime;
        }
        return v_float(ev, r);
    }
runtime:
    e = ex_of(ev, a, loc);
    if (!tilec_dtype_is_float(e->dtype)) e = ex_cast(ev, e, TILEC_FLOAT32);
    return v_expr(ev, tilec_ir_unary(ev->a, op, e));
}

value_t *v_minmax(ev_t *ev, int is_max, value_t *a, value_t *b, ast_loc_t loc)
{
    tilec_ir_expr_t *ea, *eb;
    tilec_dtype_t t;
    if (!v_is_rt(a) && !v_is_rt(b)) {
        int lt, eq;
        if (!ct_less(ev, a, b, loc, &lt, &eq, 0))
            ev_fail(ev, loc, "cannot compare %s with %s", v_kind_name(a), v_kind_name(b));
        if (is_max) return lt ? b : a;
        return (!lt && !eq) ? b : a;
    }
    if (!(v_is_rt(a) || v_is_num(a)) || !(v_is_rt(b) || v_is_num(b)))
        ev_fail(ev, loc, "min/max need numbers, got %s and %s", v_kind_name(a), v_kind_name(b));
    t = dt_common(ev, a, b, &ea, &eb, loc);
    if (t == TILEC_BOOL) t = TILEC_INT32;
    rt_operands(ev, a, b, t, &ea, &eb, loc);
    return v_expr(ev, tilec_ir_binary(ev->a, is_max ? TILEC_BIN_MAX : TILEC_BIN_MIN, ea, eb));
}

value_t *v_cast(ev_t *ev, value_t *a, tilec_dtype_t t, ast_loc_t loc)
{
    if (!v_is_num(a) && !v_is_rt(a)) {
        ev_fail(ev, loc, "cannot cast %s to %s", v_kind_name(a), tilec_dtype_name(t));
    }
    return v_expr(ev, ex_as(ev, a, t, loc));
}

/* ---- attributes and subscripts ---------------------------------------------- */

static value_t *shape_tuple(ev_t *ev, tilec_ir_buffer_t *b)
{
    value_t *r = v_seq(ev, b->ndim, 0);
    int i;
    for (i = 0; i < b->ndim; i++) {
        int64_t c;
        if (tilec_ir_is_const_int(b->shape[i], &c)) r->u.seq.items[i] = v_int(ev, c);
        else r->u.seq.items[i] = v_expr(ev, b->shape[i]);
    }
    return r;
}

value_t *v_getattr(ev_t *ev, value_t *v, const char *name, ast_loc_t loc)
{
    value_t *r;
    switch (v->kind) {
    case V_NS:
        r = bi_lookup_ns(ev, v->u.ns, name);
        if (r) return r;
        if (v->u.ns == NS_T && bi_unsupported_reason(name))
            ev_fail(ev, loc, "T.%s is outside the subset tilec supports: %s", name, bi_unsupported_reason(name));
        ev_fail(ev, loc, "'%s' has no member '%s' in the supported subset of TileLang", mod_ns_name(v->u.ns), name);
    case V_CLASS: case V_OBJECT:
        return cls_getattr(ev, v, name, loc);
    case V_OPAQUE: {
        size_t n = strlen(v->u.opq) + strlen(name) + 2;
        char *p = ev_alloc(ev, n);
        snprintf(p, n, "%s.%s", v->u.opq, name);
        return mod_opaque(ev, p);
    }
    case V_BUF:
        if (!strcmp(name, "shape")) return shape_tuple(ev, v->u.buf);
        if (!strcmp(name, "dtype")) {
            r = v_new(ev, V_DTYPE);
            r->u.dt = v->u.buf->dtype;
            return r;
        }
        if (!strcmp(name, "ndim")) return v_int(ev, v->u.buf->ndim);
        if (!strcmp(name, "name")) return v_str(ev, v->u.buf->name, strlen(v->u.buf->name));
        if (v->u.buf->scope == TILEC_SCOPE_VAR && !strcmp(name, "astype")) goto astype;
        if (!strcmp(name, "data")) return v; /* T.Tensor(shape, dtype, A.data): a re-view (views.c) */
        ev_fail(ev, loc, "a buffer has no attribute '%s' (use .shape, .dtype or .data)", name);
    case V_TENSORTYPE:
        if (!strcmp(name, "shape")) return v->u.tt.shape;
        if (!strcmp(name, "dtype")) {
            r = v_new(ev, V_DTYPE);
            r->u.dt = v->u.tt.dt;
            return r;
        }
        break;
    case V_EXPR: case V_SYM:
        if (!strcmp(name, "astype")) goto astype;
        if (!strcmp(name, "dtype")) {
            r = v_new(ev, V_DTYPE);
            r->u.dt = v->kind == V_SYM ? TILEC_INT32 : v->u.ex->dtype;
            return r;
        }
        break;
    case V_DTYPE:
        if (!strcmp(name, "bits")) return v_int(ev, (int64_t)tilec_dtype_size(v->u.dt) * 8);
        break;
    case V_STR: {
        /* a dtype given as its name (-D dtype=float16 binds the string): TileLang's dtype object has .bits */
        tilec_dtype_t t;
        if (!strcmp(name, "bits") && v_as_dtype(v, &t)) return v_int(ev, (int64_t)tilec_dtype_size(t) * 8);
        break;
    }
    default:
        break;
    }
    r = py_method(ev, v, name);
    if (r) return r;
    ev_fail(ev, loc, "%s has no attribute '%s'", v_kind_name(v), name);
astype:
    r = v_new(ev, V_BUILTIN);
    r->u.bi.id = -1;   /* bound .astype */
    r->u.bi.self = v;
    return r;
}

