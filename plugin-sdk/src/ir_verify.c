/*
 * plugin-sdk/src/ir_verify.c — the tile IR verifier (tilec_ir_verify, see
 * tilec/ir_verify.h).  It lives in the SDK so the core and every plugin
 * verify after their own passes with the same code.
 *
 * It checks what every backend is entitled to assume (docs/ir.md,
 * "Validity"): structure (no NULL where a node is required, tables whose
 * entries know their own index, index counts equal to buffer ranks, region
 * extents >= 1), scoping (every var and buffer referenced is in the
 * kernel's tables, loop vars only inside their loop and never assigned, LET
 * vars assigned before use in program order), typing (the rules of ir.h),
 * bounds (on-chip buffers at most TILEC_IR_MAX_ONCHIP_BYTES, loop extents
 * of the loop variable's int32, region extents below 2^31 with an element
 * count that fits in int64, pipelines at most TILEC_IR_MAX_STAGES deep,
 * sizes multiplied with overflow checks) and, where shapes are constant,
 * shape agreement of the tile operations.
 * It stops at the first problem and names the statement kind, its source
 * position when known, and the buffer or variable involved.
 *
 * IR 1.1's attributes, layouts, shared-memory plan and mbarrier statements
 * are checked in ir_verify_lower.c (ir_verify_internal.h is their
 * interface).
 *
 * Recursion follows the IR's nesting and is limited to TILEC_IR_MAX_DEPTH,
 * the same limit the text reader enforces.
 */
#include "tilec/ir_verify.h"
#include "ir_verify_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *stmt_name(const tilec_ir_stmt_t *s)
{
    const char *n = tilec_stmt_kind_name(s->kind);
    return strcmp(n, "?") == 0 ? "statement" : n;
}

void irv_fail(verifier_t *v, const char *fmt, ...)
{
    va_list ap;
    int n = 0;
    if (v->failed) {
        return;
    }
    v->failed = 1;
    if (!v->err || v->errlen == 0) {
        return;
    }
    if (v->st) {
        if (v->st->line > 0) {
            n = snprintf(v->err, v->errlen, "%d:%d: %s: ", v->st->line, v->st->col, stmt_name(v->st));
        } else {
            n = snprintf(v->err, v->errlen, "%s: ", stmt_name(v->st));
        }
    } else {
        n = snprintf(v->err, v->errlen, "kernel '%s': ", v->k && v->k->name ? v->k->name : "?");
    }
    if (n < 0 || (size_t)n >= v->errlen) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(v->err + n, v->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

const char *irv_bname(const tilec_ir_buffer_t *b) { return b && b->name ? b->name : "?"; }
static const char *vname(const tilec_ir_var_t *x) { return x && x->name ? x->name : "?"; }
static int dtype_ok(tilec_dtype_t t) { return (unsigned)t < TILEC_DTYPE_COUNT; }
static int is_numeric(tilec_dtype_t t) { return tilec_dtype_is_int(t) || tilec_dtype_is_float(t); }

static int var_in_table(const verifier_t *v, const tilec_ir_var_t *x)
{
    return x && x->id >= 0 && x->id < v->k->nvars && v->k->vars[x->id] == x;
}

static int buf_in_table(const verifier_t *v, const tilec_ir_buffer_t *b)
{
    return b && b->id >= 0 && b->id < v->k->nbufs && v->k->bufs[b->id] == b;
}

/* A buffer operand: present and in the kernel's table. */
static int check_buf(verifier_t *v, const tilec_ir_buffer_t *b, const char *role)
{
    if (!b) {
        irv_fail(v, "%s buffer is missing", role);
        return -1;
    }
    if (!buf_in_table(v, b)) {
        irv_fail(v, "%s buffer '%s' is not declared in the kernel", role, irv_bname(b));
        return -1;
    }
    return 0;
}

/* ---- expressions ------------------------------------------------------ */

/* An INT node's value is within its dtype (uint64 holds any bit pattern). */
static int int_fits(int64_t x, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: return x >= INT8_MIN && x <= INT8_MAX;
    case TILEC_INT16: return x >= INT16_MIN && x <= INT16_MAX;
    case TILEC_INT32: return x >= INT32_MIN && x <= INT32_MAX;
    case TILEC_UINT8: return x >= 0 && x <= UINT8_MAX;
    case TILEC_UINT16: return x >= 0 && x <= UINT16_MAX;
    case TILEC_UINT32: return x >= 0 && x <= (int64_t)UINT32_MAX;
    default: return 1;
    }
}



int irv_check_index(verifier_t *v, const tilec_ir_expr_t *e, const char *what, const tilec_ir_buffer_t *b,
                    int ctx, int depth)
{
    if (irv_check_expr(v, e, ctx, depth) < 0) {
        return -1;
    }
    if (!tilec_dtype_is_int(e->dtype)) {
        irv_fail(v, "%s of '%s' has dtype %s, must be an integer", what, irv_bname(b), tilec_dtype_name(e->dtype));
        return -1;
    }
    return 0;
}

int irv_check_expr(verifier_t *v, const tilec_ir_expr_t *e, int ctx, int depth)
{
    int i;
    if (v->failed) {
        return -1;
    }
    if (!e) {
        irv_fail(v, "missing expression");
        return -1;
    }
    if (depth > TILEC_IR_MAX_DEPTH) {
        irv_fail(v, "expression nested deeper than %d", TILEC_IR_MAX_DEPTH);
        return -1;
    }
    if (!dtype_ok(e->dtype)) {
        irv_fail(v, "expression with invalid dtype %d", (int)e->dtype);
        return -1;
    }
    switch (e->kind) {
    case TILEC_EX_INT:
        if (!tilec_dtype_is_int(e->dtype) && e->dtype != TILEC_BOOL) {
            irv_fail(v, "integer constant %lld has dtype %s", (long long)e->u.i, tilec_dtype_name(e->dtype));
            return -1;
        }
        if (e->dtype == TILEC_BOOL && e->u.i != 0 && e->u.i != 1) {
            irv_fail(v, "bool constant %lld is neither 0 nor 1", (long long)e->u.i);
            return -1;
        }
        if (!int_fits(e->u.i, e->dtype)) {
            irv_fail(v, "constant %lld does not fit in %s", (long long)e->u.i, tilec_dtype_name(e->dtype));
            return -1;
        }
        return 0;
    case TILEC_EX_FLOAT:
        if (!tilec_dtype_is_float(e->dtype)) {
            irv_fail(v, "float constant has dtype %s", tilec_dtype_name(e->dtype));
            return -1;
        }
        return 0;
    case TILEC_EX_VAR: {
        const tilec_ir_var_t *x = e->u.var;
        if (!x) {
            irv_fail(v, "variable reference without a variable");
            return -1;
        }
        if (ctx == CTX_LAYOUT || x->kind == TILEC_VAR_LAYOUT) {
            const tilec_ir_layout_t *l = v->lay;
            if (ctx != CTX_LAYOUT || !l || x->kind != TILEC_VAR_LAYOUT ||
                !(x == l->rvar || (x->id >= 0 && x->id < l->ndim && l->ivar[x->id] == x))) {
                irv_fail(v, ctx == CTX_LAYOUT ? "layout expression uses '%s'; only the layout's _i<d> and _r may appear"
                                          : "layout placeholder '%s' used outside its layout",
                     vname(x));
                return -1;
            }
            if (e->dtype != TILEC_INT32 || x->dtype != TILEC_INT32) {
                irv_fail(v, "layout placeholder '%s' must be int32", vname(x));
                return -1;
            }
            return 0;
        }
        if (!var_in_table(v, x)) {
            irv_fail(v, "variable '%s' is not declared in the kernel", vname(x));
            return -1;
        }
        if (e->dtype != x->dtype) {
            irv_fail(v, "reference to '%s' has dtype %s, the variable is %s", vname(x), tilec_dtype_name(e->dtype),
                 tilec_dtype_name(x->dtype));
            return -1;
        }
        if (ctx == CTX_SHAPE && x->kind != TILEC_VAR_SYM) {
            irv_fail(v, "'%s' appears in a shape or grid extent; only T.dynamic symbols may", vname(x));
            return -1;
        }
        if (x->kind == TILEC_VAR_LOOP && !v->bound[x->id]) {
            irv_fail(v, "loop variable '%s' used outside its loop", vname(x));
            return -1;
        }
        if (x->kind == TILEC_VAR_LET && !v->assigned[x->id]) {
            irv_fail(v, "variable '%s' used before it is assigned", vname(x));
            return -1;
        }
        return 0;
    }
    case TILEC_EX_LOAD: {
        const tilec_ir_buffer_t *b = e->u.load.buf;
        if (check_buf(v, b, "loaded") < 0) {
            return -1;
        }
        if (ctx != CTX_BODY) {
            irv_fail(v, "load of '%s' in a %s", irv_bname(b), ctx == CTX_LAYOUT ? "layout" : "shape or grid extent");
            return -1;
        }
        if (b->ndim > 0 && !e->u.load.idx) {
            irv_fail(v, "load of '%s' has no indices", irv_bname(b));
            return -1;
        }
        for (i = 0; i < b->ndim; i++) {
            if (irv_check_index(v, e->u.load.idx[i], "index", b, ctx, depth + 1) < 0) {
                return -1;
            }
        }
        if (e->dtype != b->dtype) {
            irv_fail(v, "load of '%s' has dtype %s, the buffer is %s", irv_bname(b), tilec_dtype_name(e->dtype),
                 tilec_dtype_name(b->dtype));
            return -1;
        }
        return 0;
    }
    case TILEC_EX_UNARY: {
        const tilec_ir_expr_t *a = e->u.un.a;
        tilec_unop_t op = e->u.un.op;
        if ((unsigned)op >= TILEC_UN_COUNT) {
            irv_fail(v, "invalid unary operator %d", (int)op);
            return -1;
        }
        if (irv_check_expr(v, a, ctx, depth + 1) < 0) {
            return -1;
        }
        if (op == TILEC_UN_NOT) {
            if (a->dtype != TILEC_BOOL || e->dtype != TILEC_BOOL) {
                irv_fail(v, "'not' takes and gives bool (operand is %s)", tilec_dtype_name(a->dtype));
                return -1;
            }
            return 0;
        }
        if (op == TILEC_UN_BITCAST) {
            if (a->dtype == TILEC_BOOL || e->dtype == TILEC_BOOL || tilec_dtype_is_4bit(a->dtype) ||
                tilec_dtype_is_4bit(e->dtype) || tilec_dtype_bits(a->dtype) != tilec_dtype_bits(e->dtype)) {
                irv_fail(v, "'bitcast' from %s to %s: both must be numeric dtypes of 8, 16, 32 or 64 bits, the same width",
                         tilec_dtype_name(a->dtype), tilec_dtype_name(e->dtype));
                return -1;
            }
            return 0;
        }
        if (op == TILEC_UN_NEG || op == TILEC_UN_ABS) {
            if (!is_numeric(a->dtype)) {
                irv_fail(v, "'%s' of a %s operand", tilec_unop_name(op), tilec_dtype_name(a->dtype));
                return -1;
            }
        } else if (!tilec_dtype_is_float(a->dtype)) {
            irv_fail(v, "'%s' takes a float operand, not %s", tilec_unop_name(op), tilec_dtype_name(a->dtype));
            return -1;
        }
        if (e->dtype != a->dtype) {
            irv_fail(v, "'%s' gives %s from a %s operand", tilec_unop_name(op), tilec_dtype_name(e->dtype),
                 tilec_dtype_name(a->dtype));
            return -1;
        }
        return 0;
    }
    case TILEC_EX_BINARY: {
        const tilec_ir_expr_t *a = e->u.bin.a, *b = e->u.bin.b;
        tilec_binop_t op = e->u.bin.op;
        if ((unsigned)op >= TILEC_BIN_COUNT) {
            irv_fail(v, "invalid binary operator %d", (int)op);
            return -1;
        }
        if (irv_check_expr(v, a, ctx, depth + 1) < 0 || irv_check_expr(v, b, ctx, depth + 1) < 0) {
            return -1;
        }
        if (a->dtype != b->dtype) {
            irv_fail(v, "operands of '%s' differ in dtype (%s and %s)", tilec_binop_name(op), tilec_dtype_name(a->dtype),
                 tilec_dtype_name(b->dtype));
            return -1;
        }
        if (op == TILEC_BIN_AND || op == TILEC_BIN_OR) {
            if (a->dtype != TILEC_BOOL) {
                irv_fail(v, "'%s' takes bool operands, not %s", tilec_binop_name(op), tilec_dtype_name(a->dtype));
                return -1;
            }
        } else if (op >= TILEC_BIN_BITAND) {
            if (!tilec_dtype_is_int(a->dtype)) {
                irv_fail(v, "'%s' takes integer operands, not %s", tilec_binop_name(op), tilec_dtype_name(a->dtype));
                return -1;
            }
        } else if (op >= TILEC_BIN_EQ && op <= TILEC_BIN_GE) {
            if (op > TILEC_BIN_NE && !is_numeric(a->dtype)) {
                irv_fail(v, "'%s' on %s operands", tilec_binop_name(op), tilec_dtype_name(a->dtype));
                return -1;
            }
        } else if (!is_numeric(a->dtype)) {
            irv_fail(v, "'%s' on %s operands", tilec_binop_name(op), tilec_dtype_name(a->dtype));
            return -1;
        }
        if ((op >= TILEC_BIN_EQ && op <= TILEC_BIN_OR) != (e->dtype == TILEC_BOOL) ||
            ((op < TILEC_BIN_EQ || op > TILEC_BIN_OR) && e->dtype != a->dtype)) {
            irv_fail(v, "'%s' of %s operands has dtype %s", tilec_binop_name(op), tilec_dtype_name(a->dtype),
                 tilec_dtype_name(e->dtype));
            return -1;
        }
        return 0;
    }
    case TILEC_EX_SELECT:
        if (irv_check_expr(v, e->u.sel.cond, ctx, depth + 1) < 0 || irv_check_expr(v, e->u.sel.a, ctx, depth + 1) < 0 ||
            irv_check_expr(v, e->u.sel.b, ctx, depth + 1) < 0) {
            return -1;
        }
        if (e->u.sel.cond->dtype != TILEC_BOOL) {
            irv_fail(v, "select condition has dtype %s, must be bool", tilec_dtype_name(e->u.sel.cond->dtype));
            return -1;
        }
        if (e->u.sel.a->dtype != e->u.sel.b->dtype || e->dtype != e->u.sel.a->dtype) {
            irv_fail(v, "select branches differ in dtype (%s and %s)", tilec_dtype_name(e->u.sel.a->dtype),
                 tilec_dtype_name(e->u.sel.b->dtype));
            return -1;
        }
        return 0;
    case TILEC_EX_CAST:
        return irv_check_expr(v, e->u.cast.a, ctx, depth + 1);
    }
    irv_fail(v, "invalid expression kind %d", (int)e->kind);
    return -1;
}

/* An expression that must have an integer dtype. */
int irv_check_int_expr(verifier_t *v, const tilec_ir_expr_t *e, const char *what)
{
    if (irv_check_expr(v, e, CTX_BODY, 0) < 0) {
        return -1;
    }
    if (!tilec_dtype_is_int(e->dtype)) {
        irv_fail(v, "%s has dtype %s, must be an integer", what, tilec_dtype_name(e->dtype));
        return -1;
    }
    return 0;
}

static int check_value(verifier_t *v, const tilec_ir_expr_t *e, tilec_dtype_t want, const char *target)
{
    if (irv_check_expr(v, e, CTX_BODY, 0) < 0) {
        return -1;
    }
    if (e->dtype != want) {
        irv_fail(v, "value of dtype %s stored into %s '%s'; cast it first", tilec_dtype_name(e->dtype),
             tilec_dtype_name(want), target);
        return -1;
    }
    return 0;
}

/* ---- shapes ----------------------------------------------------------- */

int irv_const_dim(const tilec_ir_buffer_t *b, int i, int64_t *out)
{
    return b->shape && i >= 0 && i < b->ndim && tilec_ir_is_const_int(b->shape[i], out);
}

static int check_indices(verifier_t *v, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    int i;
    if (b->ndim > 0 && !idx) {
        irv_fail(v, "'%s' is indexed without indices", irv_bname(b));
        return -1;
    }
    for (i = 0; i < b->ndim; i++) {
        if (irv_check_index(v, idx[i], "index", b, CTX_BODY, 0) < 0) {
            return -1;
        }
    }
    return 0;
}

static int check_region(verifier_t *v, const tilec_ir_region_t *r, const char *role)
{
    int64_t count = 1;
    int i;
    if (check_buf(v, r->buf, role) < 0) {
        return -1;
    }
    if (!r->base || !r->extent) {
        irv_fail(v, "%s region of '%s' lacks its base or extents", role, irv_bname(r->buf));
        return -1;
    }
    for (i = 0; i < r->buf->ndim; i++) {
        int64_t base, dim;
        if (irv_check_index(v, r->base[i], "region base", r->buf, CTX_BODY, 0) < 0) {
            return -1;
        }
        /* indices are int32, so no extent is larger; and the element count
         * fits in int64 for whoever multiplies the extents */
        if (r->extent[i] < 1 || r->extent[i] > INT32_MAX) {
            irv_fail(v, "%s region of '%s' has extent %lld in dimension %d (must be 1..%d)", role, irv_bname(r->buf),
                 (long long)r->extent[i], i, INT32_MAX);
            return -1;
        }
        if (__builtin_mul_overflow(count, r->extent[i], &count)) {
            irv_fail(v, "%s region of '%s' has more elements than int64 counts", role, irv_bname(r->buf));
            return -1;
        }
        /* Only global regions are boundary-safe; on-chip ones must fit. */
        if (r->buf->scope != TILEC_SCOPE_GLOBAL && irv_const_dim(r->buf, i, &dim)) {
            if (r->extent[i] > dim) {
                irv_fail(v, "%s region of '%s' has extent %lld in dimension %d, larger than the buffer (%lld)", role,
                     irv_bname(r->buf), (long long)r->extent[i], i, (long long)dim);
                return -1;
            }
            if (tilec_ir_is_const_int(r->base[i], &base) && (base < 0 || base > dim - r->extent[i])) {
                irv_fail(v, "%s region of '%s' [%lld, +%lld) is outside dimension %d of size %lld", role, irv_bname(r->buf),
                     (long long)base, (long long)r->extent[i], i, (long long)dim);
                return -1;
            }
        }
    }
    return 0;
}

/* ---- statements ------------------------------------------------------- */

static int scope_in(tilec_scope_t s, unsigned mask) { return (unsigned)s < 32 && ((mask >> s) & 1u); }
#define SC(x) (1u << TILEC_SCOPE_##x)

static int check_block(verifier_t *v, const tilec_ir_stmt_t *s, int depth);

static int check_gemm(verifier_t *v, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *a = s->u.gemm.a, *b = s->u.gemm.b, *c = s->u.gemm.c;
    int64_t a0, a1, b0, b1, c0, c1;
    if (check_buf(v, a, "A") < 0 || check_buf(v, b, "B") < 0 || check_buf(v, c, "C") < 0) {
        return -1;
    }
    if (a->ndim < 2 || b->ndim < 2 || c->ndim != 2) {
        irv_fail(v, "operands must be 2-D ('%s' %dD, '%s' %dD, '%s' %dD)", irv_bname(a), a->ndim, irv_bname(b), b->ndim,
             irv_bname(c), c->ndim);
        return -1;
    }
    if (irv_check_gemm_lead(v, a, s->u.gemm.a_lead, "A") < 0 || irv_check_gemm_lead(v, b, s->u.gemm.b_lead, "B") < 0) {
        return -1;
    }
    if (!scope_in(a->scope, SC(SHARED) | SC(FRAGMENT) | SC(LOCAL)) ||
        !scope_in(b->scope, SC(SHARED) | SC(FRAGMENT) | SC(LOCAL))) {
        const tilec_ir_buffer_t *bad = scope_in(a->scope, SC(SHARED) | SC(FRAGMENT) | SC(LOCAL)) ? b : a;
        irv_fail(v, "'%s' is %s; A and B must be shared, fragment or local", irv_bname(bad), tilec_scope_name(bad->scope));
        return -1;
    }
    if (!scope_in(c->scope, SC(FRAGMENT) | SC(LOCAL))) {
        irv_fail(v, "accumulator '%s' is %s; C must be fragment or local", irv_bname(c), tilec_scope_name(c->scope));
        return -1;
    }
    if (a->dtype != b->dtype || !is_numeric(a->dtype) || !is_numeric(c->dtype)) {
        irv_fail(v, "'%s' (%s) and '%s' (%s) must share a numeric dtype, '%s' (%s) must be numeric", irv_bname(a),
             tilec_dtype_name(a->dtype), irv_bname(b), tilec_dtype_name(b->dtype), irv_bname(c), tilec_dtype_name(c->dtype));
        return -1;
    }
    if ((s->u.gemm.trans_a & ~1) || (s->u.gemm.trans_b & ~1) || (s->u.gemm.clear_accum & ~1)) {
        irv_fail(v, "trans_a, trans_b and clear_accum must be 0 or 1");
        return -1;
    }
    if ((unsigned)s->u.gemm.policy > TILEC_POLICY_FULLCOL) {
        irv_fail(v, "invalid policy %d", (int)s->u.gemm.policy);
        return -1;
    }
    /* a deferred async MMA (docs/ir.md 9.1): completes while the loop goes
     * on, so its accumulator must be registers only its owners touch and
     * its operands ring stages that the schedule refills behind it */
    if (tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma_wait") &&
        (!v->serial || !c->layout || c->layout->kind != TILEC_LAYOUT_REGS || !s->u.gemm.a_lead ||
         !s->u.gemm.b_lead)) {
        irv_fail(v, "lower.mma_wait needs a gemm in a serial loop, on ring stages (A[st], B[st]), into a register "
                "fragment");
        return -1;
    }
    if (irv_const_dim(a, a->ndim - 2, &a0) && irv_const_dim(a, a->ndim - 1, &a1) && irv_const_dim(b, b->ndim - 2, &b0) &&
        irv_const_dim(b, b->ndim - 1, &b1) &&
        irv_const_dim(c, 0, &c0) && irv_const_dim(c, 1, &c1)) {
        int64_t m = s->u.gemm.trans_a ? a1 : a0, ka = s->u.gemm.trans_a ? a0 : a1;
        int64_t kb = s->u.gemm.trans_b ? b1 : b0, n = s->u.gemm.trans_b ? b0 : b1;
        if (ka != kb) {
            irv_fail(v, "K differs: '%s' gives %lld, '%s' gives %lld", irv_bname(a), (long long)ka, irv_bname(b), (long long)kb);
            return -1;
        }
        if (m != c0 || n != c1) {
            irv_fail(v, "'%s' is [%lld, %lld] but op(A) @ op(B) is [%lld, %lld]", irv_bname(c), (long long)c0, (long long)c1,
                 (long long)m, (long long)n);
            return -1;
        }
    }
    return 0;
}

static int check_reduce(verifier_t *v, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *src = s->u.reduce.src, *dst = s->u.reduce.dst;
    int dim = s->u.reduce.dim, i, j;
    if ((unsigned)s->u.reduce.op > TILEC_RED_ABSMAX) {
        irv_fail(v, "invalid reduce op %d", (int)s->u.reduce.op);
        return -1;
    }
    if (check_buf(v, src, "source") < 0 || check_buf(v, dst, "destination") < 0) {
        return -1;
    }
    if (src->scope == TILEC_SCOPE_GLOBAL || dst->scope == TILEC_SCOPE_GLOBAL) {
        irv_fail(v, "'%s' is global; reduce works on shared, fragment or local buffers",
             irv_bname(src->scope == TILEC_SCOPE_GLOBAL ? src : dst));
        return -1;
    }
    if (!is_numeric(src->dtype) || !is_numeric(dst->dtype)) {
        irv_fail(v, "'%s' and '%s' must be numeric", irv_bname(src), irv_bname(dst));
        return -1;
    }
    if (dim < 0 || dim >= src->ndim) {
        irv_fail(v, "dim %d out of range for '%s' (rank %d)", dim, irv_bname(src), src->ndim);
        return -1;
    }
    if (s->u.reduce.clear & ~1) {
        irv_fail(v, "clear must be 0 or 1");
        return -1;
    }
    if (src->ndim == 1) {
        int64_t d;
        if (dst->ndim != 1 || (irv_const_dim(dst, 0, &d) && d != 1)) {
            irv_fail(v, "reducing 1-D '%s' needs a destination of shape (1,), '%s' is not", irv_bname(src), irv_bname(dst));
            return -1;
        }
        return 0;
    }
    if (dst->ndim != src->ndim - 1) {
        irv_fail(v, "'%s' has rank %d; reducing rank-%d '%s' along dim %d gives rank %d", irv_bname(dst), dst->ndim,
             src->ndim, irv_bname(src), dim, src->ndim - 1);
        return -1;
    }
    for (i = 0, j = 0; i < src->ndim; i++) {
        int64_t ds, dd;
        if (i == dim) {
            continue;
        }
        if (irv_const_dim(src, i, &ds) && irv_const_dim(dst, j, &dd) && ds != dd) {
            irv_fail(v, "'%s' dimension %d is %lld, '%s' dimension %d is %lld", irv_bname(dst), j, (long long)dd, irv_bname(src), i,
                 (long long)ds);
            return -1;
        }
        j++;
    }
    return 0;
}

static int check_cumsum(verifier_t *v, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *src = s->u.cumsum.src, *dst = s->u.cumsum.dst;
    int i;
    if (check_buf(v, src, "source") < 0 || check_buf(v, dst, "destination") < 0) {
        return -1;
    }
    if (src->scope == TILEC_SCOPE_GLOBAL || dst->scope == TILEC_SCOPE_GLOBAL) {
        irv_fail(v, "'%s' is global; cumsum works on shared, fragment or local buffers",
             irv_bname(src->scope == TILEC_SCOPE_GLOBAL ? src : dst));
        return -1;
    }
    if (!is_numeric(src->dtype) || !is_numeric(dst->dtype)) {
        irv_fail(v, "'%s' and '%s' must be numeric", irv_bname(src), irv_bname(dst));
        return -1;
    }
    if (src->ndim != dst->ndim) {
        irv_fail(v, "'%s' (rank %d) and '%s' (rank %d) must have the same shape", irv_bname(src), src->ndim, irv_bname(dst),
             dst->ndim);
        return -1;
    }
    if (s->u.cumsum.dim < 0 || s->u.cumsum.dim >= src->ndim) {
        irv_fail(v, "dim %d out of range for '%s' (rank %d)", s->u.cumsum.dim, irv_bname(src), src->ndim);
        return -1;
    }
    if (s->u.cumsum.reverse & ~1) {
        irv_fail(v, "reverse must be 0 or 1");
        return -1;
    }
    for (i = 0; i < src->ndim; i++) {
        int64_t a, b;
        if (irv_const_dim(src, i, &a) && irv_const_dim(dst, i, &b) && a != b) {
            irv_fail(v, "'%s' and '%s' differ in dimension %d (%lld and %lld)", irv_bname(src), irv_bname(dst), i, (long long)a,
                 (long long)b);
            return -1;
        }
    }
    return 0;
}

int irv_check_copy(verifier_t *v, const tilec_ir_stmt_t *s)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    int i = 0, j = 0;
    if (check_region(v, src, "source") < 0 || check_region(v, dst, "destination") < 0) {
        return -1;
    }
    /* compare the extents that are not 1, in order */
    for (;;) {
        while (i < src->buf->ndim && src->extent[i] == 1) {
            i++;
        }
        while (j < dst->buf->ndim && dst->extent[j] == 1) {
            j++;
        }
        if (i == src->buf->ndim || j == dst->buf->ndim) {
            break;
        }
        if (src->extent[i] != dst->extent[j]) {
            irv_fail(v, "extents differ: '%s' dimension %d is %lld, '%s' dimension %d is %lld", irv_bname(src->buf), i,
                 (long long)src->extent[i], irv_bname(dst->buf), j, (long long)dst->extent[j]);
            return -1;
        }
        i++;
        j++;
    }
    if (i != src->buf->ndim || j != dst->buf->ndim) {
        irv_fail(v, "regions of '%s' and '%s' have different numbers of non-unit extents", irv_bname(src->buf),
             irv_bname(dst->buf));
        return -1;
    }
    return 0;
}

static int check_stmt(verifier_t *v, const tilec_ir_stmt_t *s, int depth)
{
    const tilec_ir_stmt_t *outer = v->st;
    int rc = 0;
    v->st = s;
    if (irv_check_attrs(v, s->nattrs, s->attrs, "", 1) < 0) {
        return -1;
    }
    switch (s->kind) {
    case TILEC_ST_FOR: {
        const tilec_ir_var_t *x = s->u.loop.var;
        if (!x || !var_in_table(v, x)) {
            irv_fail(v, "loop variable '%s' is missing or not declared", vname(x));
            return -1;
        }
        if (x->kind != TILEC_VAR_LOOP) {
            irv_fail(v, "'%s' is not a loop variable", vname(x));
            return -1;
        }
        if (v->bound[x->id]) {
            irv_fail(v, "loop variable '%s' is already bound by an enclosing loop", vname(x));
            return -1;
        }
        if ((unsigned)s->u.loop.kind > TILEC_LOOP_VECTORIZED) {
            irv_fail(v, "invalid loop kind %d", (int)s->u.loop.kind);
            return -1;
        }
        if (s->u.loop.kind == TILEC_LOOP_PIPELINED &&
            (s->u.loop.num_stages < 1 || s->u.loop.num_stages > TILEC_IR_MAX_STAGES)) {
            irv_fail(v, "pipelined loop over '%s' has num_stages %d (must be 1..%d)", vname(x), s->u.loop.num_stages,
                 TILEC_IR_MAX_STAGES);
            return -1;
        }
        if (irv_check_int_expr(v, s->u.loop.extent, "loop extent") < 0) {
            return -1;
        }
        /* the loop variable is int32 and counts up to extent - 1: a wider
         * extent (an int64 constant of 2^32, say) would never be reached */
        if (s->u.loop.extent->dtype != x->dtype) {
            irv_fail(v, "loop extent of '%s' has dtype %s; it must have the loop variable's dtype %s", vname(x),
                 tilec_dtype_name(s->u.loop.extent->dtype), tilec_dtype_name(x->dtype));
            return -1;
        }
        v->bound[x->id] = 1;
        v->serial += s->u.loop.kind != TILEC_LOOP_PARALLEL;
        rc = check_block(v, s->u.loop.body, depth + 1);
        v->serial -= s->u.loop.kind != TILEC_LOOP_PARALLEL;
        v->bound[x->id] = 0;
        break;
    }
    case TILEC_ST_IF:
        if (irv_check_expr(v, s->u.cond.cond, CTX_BODY, 0) < 0) {
            return -1;
        }
        if (s->u.cond.cond->dtype != TILEC_BOOL) {
            irv_fail(v, "condition has dtype %s, must be bool", tilec_dtype_name(s->u.cond.cond->dtype));
            return -1;
        }
        if (check_block(v, s->u.cond.then, depth + 1) < 0 || check_block(v, s->u.cond.els, depth + 1) < 0) {
            return -1;
        }
        break;
    case TILEC_ST_STORE:
        if (check_buf(v, s->u.store.buf, "stored") < 0 || check_indices(v, s->u.store.buf, s->u.store.idx) < 0 ||
            check_value(v, s->u.store.value, s->u.store.buf->dtype, irv_bname(s->u.store.buf)) < 0) {
            return -1;
        }
        break;
    case TILEC_ST_ASSIGN: {
        const tilec_ir_var_t *x = s->u.assign.var;
        if (!x || !var_in_table(v, x)) {
            irv_fail(v, "assigned variable '%s' is missing or not declared", vname(x));
            return -1;
        }
        if (x->kind != TILEC_VAR_LET) {
            irv_fail(v, "'%s' is a %s variable and cannot be assigned", vname(x), tilec_var_kind_name(x->kind));
            return -1;
        }
        if (check_value(v, s->u.assign.value, x->dtype, vname(x)) < 0) {
            return -1;
        }
        v->assigned[x->id] = 1;
        break;
    }
    case TILEC_ST_COPY:
        rc = irv_check_copy(v, s);
        break;
    case TILEC_ST_FILL:
        if (check_region(v, &s->u.fill.dst, "filled") < 0 ||
            check_value(v, s->u.fill.value, s->u.fill.dst.buf->dtype, irv_bname(s->u.fill.dst.buf)) < 0) {
            return -1;
        }
        break;
    case TILEC_ST_GEMM:
        rc = check_gemm(v, s);
        break;
    case TILEC_ST_REDUCE:
        rc = check_reduce(v, s);
        break;
    case TILEC_ST_CUMSUM:
        rc = check_cumsum(v, s);
        break;
    case TILEC_ST_ATOMIC:
        if ((unsigned)s->u.atomic.op > TILEC_ATOMIC_MIN) {
            irv_fail(v, "invalid atomic op %d", (int)s->u.atomic.op);
            return -1;
        }
        if (check_buf(v, s->u.atomic.buf, "atomic") < 0 || check_indices(v, s->u.atomic.buf, s->u.atomic.idx) < 0 ||
            check_value(v, s->u.atomic.value, s->u.atomic.buf->dtype, irv_bname(s->u.atomic.buf)) < 0) {
            return -1;
        }
        if (!is_numeric(s->u.atomic.buf->dtype)) {
            irv_fail(v, "'%s' has dtype %s; atomics need a numeric buffer", irv_bname(s->u.atomic.buf),
                 tilec_dtype_name(s->u.atomic.buf->dtype));
            return -1;
        }
        break;
    case TILEC_ST_SYNC:
        break;
    case TILEC_ST_PRINT:
        if (!s->u.print.value && !s->u.print.buf) {
            irv_fail(v, "nothing to print");
            return -1;
        }
        if (s->u.print.value && irv_check_expr(v, s->u.print.value, CTX_BODY, 0) < 0) {
            return -1;
        }
        if (s->u.print.buf && check_buf(v, s->u.print.buf, "printed") < 0) {
            return -1;
        }
        break;
    case TILEC_ST_HINT: {
        int i;
        if (!s->u.hint.name ||
            (strcmp(s->u.hint.name, "use_swizzle") != 0 && strcmp(s->u.hint.name, "annotate_layout") != 0 &&
             strcmp(s->u.hint.name, "mma_wait") != 0 && strcmp(s->u.hint.name, "wg_turn") != 0)) {
            irv_fail(v, "unknown hint '%s'", s->u.hint.name ? s->u.hint.name : "(null)");
            return -1;
        }
        if (s->u.hint.nargs < 0 || (s->u.hint.nargs > 0 && !s->u.hint.args)) {
            irv_fail(v, "bad argument list");
            return -1;
        }
        for (i = 0; i < s->u.hint.nargs; i++) {
            if (!tilec_ir_is_const_int(s->u.hint.args[i], NULL)) {
                irv_fail(v, "argument %d of hint '%s' is not an integer constant", i, s->u.hint.name);
                return -1;
            }
        }
        if (s->u.hint.buf && check_buf(v, s->u.hint.buf, "hinted") < 0) {
            return -1;
        }
        break;
    }
    case TILEC_ST_COPY_ASYNC:
        rc = irv_check_copy_async(v, s);
        break;
    case TILEC_ST_ASYNC_COMMIT:
    case TILEC_ST_BARRIER:
        break;
    case TILEC_ST_ASYNC_WAIT:
        if (s->u.wait.n < 0) {
            irv_fail(v, "async_wait %d: the count must be >= 0", s->u.wait.n);
            return -1;
        }
        break;
    case TILEC_ST_MBAR_INIT:
    case TILEC_ST_MBAR_ARRIVE:
    case TILEC_ST_MBAR_WAIT:
        rc = irv_check_mbar_ref(v, s);
        break;
    default:
        irv_fail(v, "invalid statement kind %d", (int)s->kind);
        return -1;
    }
    if (rc < 0 || v->failed) {
        return -1;
    }
    v->st = outer;
    return 0;
}

static int check_block(verifier_t *v, const tilec_ir_stmt_t *s, int depth)
{
    if (depth > TILEC_IR_MAX_DEPTH) {
        irv_fail(v, "statements nested deeper than %d", TILEC_IR_MAX_DEPTH);
        return -1;
    }
    for (; s; s = s->next) {
        if (check_stmt(v, s, depth) < 0) {
            return -1;
        }
    }
    return 0;
}

/* ---- kernel ----------------------------------------------------------- */

static int check_tables(verifier_t *v)
{
    const tilec_ir_kernel_t *k = v->k;
    tilec_irx_map_t names;
    int i, j, rc = -1;
    if (k->nvars < 0 || k->nbufs < 0 || k->nparams < 0 || k->nparams > k->nbufs) {
        irv_fail(v, "bad table sizes (nvars %d, nbufs %d, nparams %d)", k->nvars, k->nbufs, k->nparams);
        return -1;
    }
    if ((k->nvars > 0 && !k->vars) || (k->nbufs > 0 && !k->bufs)) {
        irv_fail(v, "missing var or buffer table");
        return -1;
    }
    tilec_irx_map_init(&names);
    for (i = 0; i < k->nvars; i++) {
        const tilec_ir_var_t *x = k->vars[i];
        if (!x || !x->name) {
            irv_fail(v, "var %d is missing or unnamed", i);
            goto out;
        }
        if (x->id != i) {
            irv_fail(v, "var '%s' has id %d but is entry %d of the table", x->name, x->id, i);
            goto out;
        }
        if (!dtype_ok(x->dtype) || (unsigned)x->kind > TILEC_VAR_LET) {
            irv_fail(v, "var '%s' has an invalid dtype or kind", x->name);
            goto out;
        }
        if (x->kind != TILEC_VAR_LET && x->dtype != TILEC_INT32) {
            irv_fail(v, "%s var '%s' must be int32, is %s", tilec_var_kind_name(x->kind), x->name,
                 tilec_dtype_name(x->dtype));
            goto out;
        }
        if ((j = tilec_irx_map_put(&names, x->name, i)) != 0) {
            irv_fail(v, j > 0 ? "duplicate var name '%s'" : "out of memory (var '%s')", x->name);
            goto out;
        }
    }
    tilec_irx_map_free(&names);
    for (i = 0; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (!b || !b->name) {
            irv_fail(v, "buffer %d is missing or unnamed", i);
            goto out;
        }
        if (b->id != i) {
            irv_fail(v, "buffer '%s' has id %d but is entry %d of the table", b->name, b->id, i);
            goto out;
        }
        if (!dtype_ok(b->dtype) || (unsigned)b->scope >= TILEC_SCOPE_COUNT) {
            irv_fail(v, "buffer '%s' has an invalid dtype or scope", b->name);
            goto out;
        }
        if (b->ndim < 1 || b->ndim > TILEC_IR_MAX_DIMS || !b->shape) {
            irv_fail(v, "buffer '%s' has rank %d (must be 1..%d)", b->name, b->ndim, TILEC_IR_MAX_DIMS);
            goto out;
        }
        if ((i < k->nparams) != (b->scope == TILEC_SCOPE_GLOBAL)) {
            irv_fail(v, i < k->nparams ? "parameter '%s' must be global" : "on-chip buffer '%s' cannot be global", b->name);
            goto out;
        }
        for (j = 0; j < b->ndim; j++) {
            int64_t d;
            if (irv_check_expr(v, b->shape[j], CTX_SHAPE, 0) < 0) {
                goto out;
            }
            if (!tilec_dtype_is_int(b->shape[j]->dtype)) {
                irv_fail(v, "shape of '%s' has a %s dimension", b->name, tilec_dtype_name(b->shape[j]->dtype));
                goto out;
            }
            if (tilec_ir_is_const_int(b->shape[j], &d) ? d < 1 : b->scope != TILEC_SCOPE_GLOBAL) {
                irv_fail(v, b->scope == TILEC_SCOPE_GLOBAL || tilec_ir_is_const_int(b->shape[j], NULL)
                            ? "buffer '%s' has a dimension smaller than 1"
                            : "on-chip buffer '%s' must have a constant shape",
                     b->name);
                goto out;
            }
        }
        if (b->scope == TILEC_SCOPE_VAR && tilec_ir_buffer_const_size(b) != 1) {
            irv_fail(v, "var buffer '%s' must have shape (1,)", b->name);
            goto out;
        }
        if (b->scope != TILEC_SCOPE_GLOBAL) {
            /* const_size is -1 when the element count overflows int64 */
            int64_t n = tilec_ir_buffer_const_size(b), es = (int64_t)tilec_dtype_size(b->dtype);
            if (n < 0 || n > TILEC_IR_MAX_ONCHIP_BYTES / (es > 0 ? es : 1)) {
                irv_fail(v, "on-chip buffer '%s' is too large (more than %lld bytes)", b->name,
                     (long long)TILEC_IR_MAX_ONCHIP_BYTES);
                goto out;
            }
        }
        {
            char what[160];
            snprintf(what, sizeof what, "buffer '%s': ", b->name);
            if (irv_check_attrs(v, b->nattrs, b->attrs, what, 1) < 0 || (b->layout && irv_check_layout(v, b) < 0)) {
                goto out;
            }
        }
        if ((j = tilec_irx_map_put(&names, b->name, i)) != 0) {
            irv_fail(v, j > 0 ? "duplicate buffer name '%s'" : "out of memory (buffer '%s')", b->name);
            goto out;
        }
    }
    tilec_irx_map_free(&names);
    if (k->nmbars < 0 || (k->nmbars > 0 && !k->mbars)) {
        irv_fail(v, "bad mbarrier table");
        goto out;
    }
    for (i = 0; i < k->nmbars; i++) {
        const tilec_ir_mbarrier_t *b = k->mbars[i];
        if (!b || !b->name || b->id != i || !irv_key_ok(b->name, 0)) {
            irv_fail(v, "mbarrier %d is missing, unnamed or not entry %d of the table", i, i);
            goto out;
        }
        if (b->size < 1 || b->arrive < 1) {
            irv_fail(v, "mbarrier '%s' has size %d and arrive count %d (each >= 1)", b->name, b->size, b->arrive);
            goto out;
        }
        if ((j = tilec_irx_map_put(&names, b->name, i)) != 0) {
            irv_fail(v, j > 0 ? "duplicate mbarrier name '%s'" : "out of memory (mbarrier '%s')", b->name);
            goto out;
        }
    }
    if (irv_check_smem_plan(v) < 0) {
        goto out;
    }
    if (k->nparams < 32 && (k->out_mask >> k->nparams) != 0) {
        irv_fail(v, "out_mask 0x%x marks buffers beyond the %d parameters", (unsigned)k->out_mask, k->nparams);
        goto out;
    }
    rc = 0;
out:
    tilec_irx_map_free(&names);
    return rc;
}

static int check_kernel(verifier_t *v)
{
    const tilec_ir_kernel_t *k = v->k;
    int i, j;
    if (!k->name || !k->name[0]) {
        irv_fail(v, "kernel has no name");
        return -1;
    }
    if (check_tables(v) < 0) {
        return -1;
    }
    if (k->ngrid < 1 || k->ngrid > 3) {
        irv_fail(v, "grid has %d dimensions (must be 1..3)", k->ngrid);
        return -1;
    }
    for (i = 0; i < k->ngrid; i++) {
        const tilec_ir_var_t *x = k->block[i];
        if (!x || !var_in_table(v, x) || x->kind != TILEC_VAR_BLOCK) {
            irv_fail(v, "grid dimension %d has no declared block variable", i);
            return -1;
        }
        for (j = 0; j < i; j++) {
            if (k->block[j] == x) {
                irv_fail(v, "block variable '%s' used for two grid dimensions", vname(x));
                return -1;
            }
        }
        if (irv_check_expr(v, k->grid[i], CTX_SHAPE, 0) < 0) {
            return -1;
        }
        if (!tilec_dtype_is_int(k->grid[i]->dtype)) {
            irv_fail(v, "grid extent %d has dtype %s", i, tilec_dtype_name(k->grid[i]->dtype));
            return -1;
        }
    }
    for (i = 0; i < k->nvars; i++) {
        if (k->vars[i]->kind == TILEC_VAR_BLOCK) {
            for (j = 0; j < k->ngrid && k->block[j] != k->vars[i]; j++) {
            }
            if (j == k->ngrid) {
                irv_fail(v, "block variable '%s' is not bound to a grid dimension", k->vars[i]->name);
                return -1;
            }
        }
    }
    for (i = 0; i < 3; i++) {
        if (k->threads[i] < 1) {
            irv_fail(v, "threads[%d] is %d (must be >= 1)", i, k->threads[i]);
            return -1;
        }
    }
    /* each factor at most 2^20 first, so the product fits in int64 */
    if (k->threads[0] > 1024 * 1024 || k->threads[1] > 1024 * 1024 || k->threads[2] > 1024 * 1024 ||
        (int64_t)k->threads[0] * k->threads[1] * k->threads[2] > 1024 * 1024) {
        irv_fail(v, "%d x %d x %d threads per block is too many", k->threads[0], k->threads[1], k->threads[2]);
        return -1;
    }
    return check_block(v, k->body, 1);
}

int tilec_ir_verify(const tilec_ir_module_t *m, char *err, size_t errlen)
{
    verifier_t v;
    int rc;
    memset(&v, 0, sizeof v);
    v.err = err;
    v.errlen = errlen;
    if (err && errlen) {
        err[0] = '\0';
    }
    if (!m || !m->kernel) {
        irv_fail(&v, "module has no kernel");
        return -1;
    }
    if (m->version_major != TILEC_IR_VERSION_MAJOR || m->version_minor > TILEC_IR_VERSION_MINOR ||
        m->version_minor < 0) {
        irv_fail(&v, "module has IR version %d.%d, this verifier knows %d.%d", m->version_major, m->version_minor,
             TILEC_IR_VERSION_MAJOR, TILEC_IR_VERSION_MINOR);
        return -1;
    }
    v.k = m->kernel;
    if (v.k->nvars > 0) {
        v.bound = calloc((size_t)v.k->nvars, 1);
        v.assigned = calloc((size_t)v.k->nvars, 1);
        if (!v.bound || !v.assigned) {
            free(v.bound);
            free(v.assigned);
            irv_fail(&v, "out of memory");
            return -1;
        }
    }
    rc = check_kernel(&v);
    free(v.bound);
    free(v.assigned);
    return rc < 0 || v.failed ? -1 : 0;
}
