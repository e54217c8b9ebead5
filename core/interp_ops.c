/*
 * core/interp_ops.c — the tile statements of the reference interpreter:
 * T.copy, T.fill/T.clear, T.gemm, the reductions, T.cumsum, the atomics and
 * T.print.  Each is a direct loop over evaluated extents and precomputed
 * strides; no expression is evaluated inside an inner loop.
 *
 * Semantics (docs/ir.md, tilec/ir.h):
 *  - COPY matches the two regions element by element in row-major order
 *    after dropping extent-1 dimensions (the element counts must agree).
 *    Elements of a GLOBAL region outside the tensor read as zero and are
 *    not written; outside an on-chip buffer they are an error.  FILL skips
 *    GLOBAL elements outside the tensor the same way.
 *  - GEMM accumulates in double (int64 when C is an integer buffer),
 *    starting from C unless clear_accum, and rounds once on the store to C.
 *    An operand of rank > 2 is the 2-D slice its leading indices select.
 *  - Every element read or written is checked against pending async
 *    copies (tilec_interp_pending, core/interp_async.c).
 *  - REDUCE accumulates in double (int64/uint64 for integer sources); with
 *    clear false the result combines with dst's value: sum and abssum add,
 *    max/min/absmax take the max/min (abs applies to src only).
 *  - CUMSUM is inclusive, accumulates in double (or int64) and stores the
 *    running value rounded to dst; src may equal dst.
 *  - ATOMIC is a read-modify-write: blocks run one after another.
 *  - PRINT writes "msg: value" (or the buffer, nested in brackets) to stdout:
 *    it is the user's own debug output, the one thing this library prints.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp_priv.h"

/* ---- regions -------------------------------------------------------------- */

typedef struct region {
    tilec_ibuf_t *b;
    int64_t base[TILEC_IR_MAX_DIMS];
    int64_t ext[TILEC_IR_MAX_DIMS];
    int nd;                        /* dimensions with extent > 1 */
    int dims[TILEC_IR_MAX_DIMS];
    int64_t count;                 /* elements in the region */
} region_t;

static int region_eval(tilec_ictx_t *c, const tilec_ir_region_t *r, region_t *out, const char *what)
{
    if (tilec_interp_buf(c, r->buf, &out->b)) {
        return -1;
    }
    tilec_ibuf_t *b = out->b;
    if (b->ndim > 0 && (!r->base || !r->extent)) {
        return tilec_interp_fail(c, "%s region of %s is incomplete", what, b->ir->name);
    }
    out->nd = 0;
    out->count = 1;
    for (int d = 0; d < b->ndim; d++) {
        int64_t e = r->extent[d];
        if (tilec_interp_eval_int(c, r->base[d], &out->base[d])) {
            return -1;
        }
        if (e < 1) {
            return tilec_interp_fail(c, "%s region of %s has extent %lld in dimension %d", what,
                                     b->ir->name, (long long)e, d);
        }
        if (out->count > INT64_MAX / e) {
            return tilec_interp_fail(c, "%s region of %s is too large", what, b->ir->name);
        }
        out->ext[d] = e;
        out->count *= e;
        if (e > 1) {
            out->dims[out->nd++] = d;
        }
    }
    return 0;
}

/* Offset of element idx; 0 when it lies outside the buffer. */
static int region_at(const region_t *r, const int64_t *idx, int64_t *off)
{
    const tilec_ibuf_t *b = r->b;
    int64_t o = 0;
    for (int d = 0; d < b->ndim; d++) {
        if (idx[d] < 0 || idx[d] >= b->shape[d]) {
            return 0;
        }
        o += idx[d] * b->stride[d];
    }
    *off = o;
    return 1;
}

/* Advances idx to the next element of the region in row-major order. */
static void region_next(const region_t *r, int64_t *idx)
{
    for (int j = r->nd - 1; j >= 0; j--) {
        int d = r->dims[j];
        if (++idx[d] < r->base[d] + r->ext[d]) {
            return;
        }
        idx[d] = r->base[d];
    }
}

static void region_extents(const region_t *r, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int d = 0; d < r->b->ndim && used < cap; d++) {
        int w = snprintf(out + used, cap - used, "%s%lld", d ? "x" : "", (long long)r->ext[d]);
        if (w < 0) {
            break;
        }
        used += (size_t)w;
    }
}

static tilec_ival_t zero_of(tilec_dtype_t t)
{
    tilec_ival_t v;
    if (tilec_interp_is_float(t)) {
        v.f = 0.0;
    } else {
        v.i = 0;
    }
    return v;
}

/* ---- copy and fill -------------------------------------------------------- */

int tilec_interp_copy(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    region_t src, dst;
    if (region_eval(c, &s->u.copy.src, &src, "copy source") ||
        region_eval(c, &s->u.copy.dst, &dst, "copy destination")) {
        return -1;
    }
    if (src.count != dst.count) {
        char se[256], de[256];
        region_extents(&src, se, sizeof se);
        region_extents(&dst, de, sizeof de);
        return tilec_interp_fail(c, "copy %s -> %s: regions %s and %s differ in size",
                                 src.b->ir->name, dst.b->ir->name, se, de);
    }
    int64_t si[TILEC_IR_MAX_DIMS], di[TILEC_IR_MAX_DIMS];
    memcpy(si, src.base, sizeof si);
    memcpy(di, dst.base, sizeof di);
    tilec_dtype_t st = src.b->dtype, dt = dst.b->dtype;
    size_t es = src.b->esize;
    for (int64_t n = 0; n < src.count; n++) {
        int64_t so = 0, doff = 0;
        int sin = region_at(&src, si, &so);
        int din = region_at(&dst, di, &doff);
        if (!sin && !src.b->global) {
            return tilec_interp_oob(c, "copy read", src.b, si);
        }
        if (!din && !dst.b->global) {
            return tilec_interp_oob(c, "copy write", dst.b, di);
        }
        if ((sin && tilec_interp_pending(c, src.b, so, 1, "read")) ||
            (din && tilec_interp_pending(c, dst.b, doff, 1, "write"))) {
            return -1;
        }
        if (din) {
            if (sin && st == dt) {
                memmove(dst.b->data + (size_t)doff * es, src.b->data + (size_t)so * es, es);
            } else {
                tilec_ival_t v = sin ? tilec_interp_load_raw(src.b, so) : zero_of(st);
                tilec_interp_store_raw(dst.b, doff, tilec_interp_cvt(v, st, dt));
            }
        }
        region_next(&src, si);
        region_next(&dst, di);
    }
    return 0;
}

int tilec_interp_fill(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    region_t dst;
    tilec_ival_t v;
    if (region_eval(c, &s->u.fill.dst, &dst, "fill") || tilec_interp_eval(c, s->u.fill.value, &v)) {
        return -1;
    }
    v = tilec_interp_cvt(v, s->u.fill.value->dtype, dst.b->dtype);
    int64_t di[TILEC_IR_MAX_DIMS];
    memcpy(di, dst.base, sizeof di);
    for (int64_t n = 0; n < dst.count; n++) {
        int64_t off = 0;
        if (region_at(&dst, di, &off)) {
            if (tilec_interp_pending(c, dst.b, off, 1, "write")) {
                return -1;
            }
            tilec_interp_store_raw(dst.b, off, v);
        } else if (!dst.b->global) {
            return tilec_interp_oob(c, "fill", dst.b, di);
        }
        region_next(&dst, di);
    }
    return 0;
}

/* ---- gemm ----------------------------------------------------------------- */

static void *scratch(tilec_ictx_t *c, size_t bytes)
{
    if (bytes > c->scratch_cap) {
        free(c->scratch);
        c->scratch = malloc(bytes);
        c->scratch_cap = c->scratch ? bytes : 0;
    }
    return c->scratch;
}

/* Offset of the 2-D slice of a gemm operand selected by its leading
 * (stage) indices; 0 for a 2-D operand. */
static int gemm_slice(tilec_ictx_t *c, const tilec_ibuf_t *b, tilec_ir_expr_t *const *lead, int64_t *base)
{
    int64_t o = 0;
    if (b->ndim < 2 || (b->ndim > 2 && !lead)) {
        return tilec_interp_fail(c, "gemm operand %s has rank %d without its leading indices", b->ir->name, b->ndim);
    }
    for (int d = 0; d < b->ndim - 2; d++) {
        int64_t i;
        if (tilec_interp_eval_int(c, lead[d], &i)) {
            return -1;
        }
        if (i < 0 || i >= b->shape[d]) {
            return tilec_interp_fail(c, "gemm operand %s: leading index %lld outside dimension %d of size %lld",
                                     b->ir->name, (long long)i, d, (long long)b->shape[d]);
        }
        o += i * b->stride[d];
    }
    *base = o;
    return 0;
}

int tilec_interp_gemm(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    tilec_ibuf_t *A, *B, *C;
    int64_t abase = 0, bbase = 0;
    if (tilec_interp_buf(c, s->u.gemm.a, &A) || tilec_interp_buf(c, s->u.gemm.b, &B) ||
        tilec_interp_buf(c, s->u.gemm.c, &C)) {
        return -1;
    }
    if (C->ndim != 2 || gemm_slice(c, A, s->u.gemm.a_lead, &abase) ||
        gemm_slice(c, B, s->u.gemm.b_lead, &bbase)) {
        return c->failed ? -1
                         : tilec_interp_fail(c, "gemm operands %s, %s, %s must be 2-D", A->ir->name, B->ir->name,
                                             C->ir->name);
    }
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    int64_t a0 = A->shape[A->ndim - 2], a1 = A->shape[A->ndim - 1];
    int64_t b0 = B->shape[B->ndim - 2], b1 = B->shape[B->ndim - 1];
    int64_t M = C->shape[0], N = C->shape[1];
    int64_t am = ta ? a1 : a0, K = ta ? a0 : a1;
    int64_t bk = tb ? b1 : b0, bn = tb ? b0 : b1;
    if (am != M || bk != K || bn != N) {
        return tilec_interp_fail(c,
                                 "gemm shapes disagree: %s %lldx%lld%s, %s %lldx%lld%s, %s %lldx%lld",
                                 A->ir->name, (long long)a0, (long long)a1,
                                 ta ? " (transposed)" : "", B->ir->name, (long long)b0,
                                 (long long)b1, tb ? " (transposed)" : "", C->ir->name,
                                 (long long)M, (long long)N);
    }
    if (tilec_interp_pending(c, A, abase, a0 * a1, "read") || tilec_interp_pending(c, B, bbase, b0 * b1, "read") ||
        tilec_interp_pending(c, C, 0, C->size, "write")) {
        return -1;
    }
    if ((uint64_t)(A->size + B->size) > SIZE_MAX / sizeof(tilec_ival_t) - 1) {
        return tilec_interp_fail(c, "gemm operands too large");
    }
    void *mem = scratch(c, ((size_t)(A->size + B->size) + 1) * sizeof(tilec_ival_t));
    if (!mem) {
        return tilec_interp_fail(c, "out of memory in gemm");
    }
    /* a[i*K+k] = op(A)[i][k];  b[j*K+k] = op(B)[k][j] (so the k loop is contiguous). */
    tilec_dtype_t wide = tilec_interp_is_float(C->dtype) ? TILEC_FLOAT64 : TILEC_INT64;
    tilec_ival_t *a = mem, *b = a + M * K;
    for (int64_t i = 0; i < M; i++) {
        for (int64_t k = 0; k < K; k++) {
            int64_t off = abase + (ta ? k * M + i : i * K + k);
            a[i * K + k] = tilec_interp_cvt(tilec_interp_load_raw(A, off), A->dtype, wide);
        }
    }
    for (int64_t j = 0; j < N; j++) {
        for (int64_t k = 0; k < K; k++) {
            int64_t off = bbase + (tb ? j * K + k : k * N + j);
            b[j * K + k] = tilec_interp_cvt(tilec_interp_load_raw(B, off), B->dtype, wide);
        }
    }
    for (int64_t i = 0; i < M; i++) {
        const tilec_ival_t *ar = a + i * K;
        for (int64_t j = 0; j < N; j++) {
            const tilec_ival_t *br = b + j * K;
            tilec_ival_t acc = s->u.gemm.clear_accum
                                   ? zero_of(wide)
                                   : tilec_interp_cvt(tilec_interp_load_raw(C, i * N + j), C->dtype, wide);
            if (wide == TILEC_FLOAT64) {
                double x = acc.f;
                for (int64_t k = 0; k < K; k++) {
                    x += ar[k].f * br[k].f;
                }
                acc.f = x;
            } else {
                uint64_t x = acc.u;
                for (int64_t k = 0; k < K; k++) {
                    x += ar[k].u * br[k].u;
                }
                acc.u = x;
            }
            tilec_interp_store_raw(C, i * N + j, tilec_interp_cvt(acc, wide, C->dtype));
        }
    }
    return 0;
}

/* ---- reduce and cumsum ---------------------------------------------------- */

/* Splits a buffer around dim: outer * n * inner elements. */
static int split_dim(tilec_ictx_t *c, const tilec_ibuf_t *b, int *dim, int64_t *outer, int64_t *n,
                     int64_t *inner, const char *what)
{
    int d = *dim < 0 ? *dim + b->ndim : *dim;
    if (d < 0 || d >= b->ndim) {
        return tilec_interp_fail(c, "%s of %s along dimension %d, which it does not have", what,
                                 b->ir->name, *dim);
    }
    *dim = d;
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < d; i++) {
        *outer *= b->shape[i];
    }
    for (int i = d + 1; i < b->ndim; i++) {
        *inner *= b->shape[i];
    }
    *n = b->shape[d];
    return 0;
}

/* acc = op(acc, x) in class wide; absolute values apply to x when abs_x. */
static tilec_ival_t combine(tilec_reduce_op_t op, tilec_dtype_t wide, tilec_ival_t acc, tilec_ival_t x,
                            int abs_x)
{
    int is_abs = abs_x && (op == TILEC_RED_ABSSUM || op == TILEC_RED_ABSMAX);
    int is_sum = op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM;
    int is_max = op == TILEC_RED_MAX || op == TILEC_RED_ABSMAX;
    if (wide == TILEC_FLOAT64) {
        double v = is_abs ? fabs(x.f) : x.f;
        acc.f = is_sum ? acc.f + v : is_max ? fmax(acc.f, v) : fmin(acc.f, v);
    } else if (wide == TILEC_UINT64) {
        uint64_t v = x.u;
        acc.u = is_sum ? acc.u + v : is_max ? (v > acc.u ? v : acc.u) : (v < acc.u ? v : acc.u);
    } else {
        int64_t v = x.i;
        if (is_abs && v < 0) {
            v = (int64_t)(0 - (uint64_t)v);
        }
        if (is_sum) {
            acc.u = acc.u + (uint64_t)v;
        } else {
            acc.i = is_max ? (v > acc.i ? v : acc.i) : (v < acc.i ? v : acc.i);
        }
    }
    return acc;
}

static tilec_ival_t reduce_init(tilec_reduce_op_t op, tilec_dtype_t wide)
{
    tilec_ival_t v = zero_of(wide);
    if (op == TILEC_RED_MAX) {
        if (wide == TILEC_FLOAT64) {
            v.f = -INFINITY;
        } else if (wide == TILEC_INT64) {
            v.i = INT64_MIN;
        }
    } else if (op == TILEC_RED_MIN) {
        if (wide == TILEC_FLOAT64) {
            v.f = INFINITY;
        } else if (wide == TILEC_INT64) {
            v.i = INT64_MAX;
        } else {
            v.u = UINT64_MAX;
        }
    }
    return v; /* sum, abssum, absmax: 0 (absmax of nothing is 0) */
}

int tilec_interp_reduce(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    tilec_ibuf_t *src, *dst;
    int dim = s->u.reduce.dim;
    int64_t outer, n, inner;
    if (tilec_interp_buf(c, s->u.reduce.src, &src) || tilec_interp_buf(c, s->u.reduce.dst, &dst) ||
        split_dim(c, src, &dim, &outer, &n, &inner, "reduce")) {
        return -1;
    }
    if (dst->size != outer * inner) {
        return tilec_interp_fail(c, "reduce %s -> %s along %d: %s has %lld elements, expected %lld",
                                 src->ir->name, dst->ir->name, dim, dst->ir->name,
                                 (long long)dst->size, (long long)(outer * inner));
    }
    if (src == dst && n != 1) {
        return tilec_interp_fail(c, "reduce of %s into itself", src->ir->name);
    }
    if (tilec_interp_pending(c, src, 0, src->size, "read") || tilec_interp_pending(c, dst, 0, dst->size, "write")) {
        return -1;
    }
    tilec_reduce_op_t op = s->u.reduce.op;
    if ((unsigned)op > TILEC_RED_ABSMAX) {
        return tilec_interp_fail(c, "unknown reduce operator %d", (int)op);
    }
    tilec_dtype_t wide = tilec_interp_wide(src->dtype);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            tilec_ival_t acc = reduce_init(op, wide);
            for (int64_t j = 0; j < n; j++) {
                tilec_ival_t x = tilec_interp_load_raw(src, (o * n + j) * inner + in);
                acc = combine(op, wide, acc, tilec_interp_cvt(x, src->dtype, wide), 1);
            }
            int64_t doff = o * inner + in;
            if (!s->u.reduce.clear) {
                tilec_ival_t old = tilec_interp_load_raw(dst, doff);
                acc = combine(op, wide, acc, tilec_interp_cvt(old, dst->dtype, wide), 0);
            }
            tilec_interp_store_raw(dst, doff, tilec_interp_cvt(acc, wide, dst->dtype));
        }
    }
    return 0;
}

int tilec_interp_cumsum(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    tilec_ibuf_t *src, *dst;
    int dim = s->u.cumsum.dim;
    int64_t outer, n, inner;
    if (tilec_interp_buf(c, s->u.cumsum.src, &src) || tilec_interp_buf(c, s->u.cumsum.dst, &dst) ||
        split_dim(c, src, &dim, &outer, &n, &inner, "cumsum")) {
        return -1;
    }
    int same = src->ndim == dst->ndim;
    for (int d = 0; same && d < src->ndim; d++) {
        same = src->shape[d] == dst->shape[d];
    }
    if (!same) {
        return tilec_interp_fail(c, "cumsum %s -> %s: shapes differ", src->ir->name, dst->ir->name);
    }
    if (tilec_interp_pending(c, src, 0, src->size, "read") || tilec_interp_pending(c, dst, 0, dst->size, "write")) {
        return -1;
    }
    tilec_dtype_t wide = tilec_interp_wide(src->dtype);
    int rev = s->u.cumsum.reverse;
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            tilec_ival_t acc = zero_of(wide);
            for (int64_t t = 0; t < n; t++) {
                int64_t j = rev ? n - 1 - t : t;
                int64_t off = (o * n + j) * inner + in;
                tilec_ival_t x = tilec_interp_cvt(tilec_interp_load_raw(src, off), src->dtype, wide);
                acc = combine(TILEC_RED_SUM, wide, acc, x, 0);
                tilec_interp_store_raw(dst, off, tilec_interp_cvt(acc, wide, dst->dtype));
            }
        }
    }
    return 0;
}

/* ---- atomics -------------------------------------------------------------- */

int tilec_interp_atomic(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    tilec_ibuf_t *b;
    int64_t off;
    tilec_ival_t v;
    if (tilec_interp_buf(c, s->u.atomic.buf, &b) ||
        tilec_interp_index(c, b, s->u.atomic.idx, "atomic", &off) ||
        tilec_interp_eval(c, s->u.atomic.value, &v) || tilec_interp_pending(c, b, off, 1, "write")) {
        return -1;
    }
    tilec_dtype_t wide = tilec_interp_wide(b->dtype);
    tilec_ival_t old = tilec_interp_cvt(tilec_interp_load_raw(b, off), b->dtype, wide);
    v = tilec_interp_cvt(v, s->u.atomic.value->dtype, wide);
    tilec_reduce_op_t op;
    switch (s->u.atomic.op) {
    case TILEC_ATOMIC_ADD: op = TILEC_RED_SUM; break;
    case TILEC_ATOMIC_MAX: op = TILEC_RED_MAX; break;
    case TILEC_ATOMIC_MIN: op = TILEC_RED_MIN; break;
    default:
        return tilec_interp_fail(c, "unknown atomic operator %d", (int)s->u.atomic.op);
    }
    tilec_interp_store_raw(b, off, tilec_interp_cvt(combine(op, wide, old, v, 0), wide, b->dtype));
    return 0;
}

/* ---- print ---------------------------------------------------------------- */

static void print_value(tilec_ival_t v, tilec_dtype_t t)
{
    if (tilec_interp_is_float(t)) {
        printf("%g", v.f);
    } else if (t == TILEC_UINT64) {
        printf("%llu", (unsigned long long)v.u);
    } else {
        printf("%lld", (long long)v.i);
    }
}

int tilec_interp_print(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    const char *msg = s->u.print.msg;
    if (s->u.print.value) {
        tilec_ival_t v;
        if (tilec_interp_eval(c, s->u.print.value, &v)) {
            return -1;
        }
        if (msg && *msg) {
            printf("%s: ", msg);
        }
        print_value(v, s->u.print.value->dtype);
        putchar('\n');
        return 0;
    }
    tilec_ibuf_t *b;
    if (tilec_interp_buf(c, s->u.print.buf, &b) || tilec_interp_pending(c, b, 0, b->size, "read")) {
        return -1;
    }
    printf("%s: ", msg && *msg ? msg : b->ir->name);
    if (b->size == 0) {
        fputs("[]\n", stdout);
        return 0;
    }
    /* Nested brackets: dimension d opens where the flat index is a multiple
     * of the product of the extents from d on, and closes symmetrically. */
    for (int64_t f = 0; f < b->size; f++) {
        int64_t span = 1;
        for (int d = b->ndim - 1; d >= 0; d--) {
            span *= b->shape[d];
            if (f % span == 0) {
                putchar('[');
            }
        }
        print_value(tilec_interp_load_raw(b, f), b->dtype);
        span = 1;
        for (int d = b->ndim - 1; d >= 0; d--) {
            span *= b->shape[d];
            if ((f + 1) % span == 0) {
                putchar(']');
            }
        }
        if (f + 1 < b->size) {
            fputs(", ", stdout);
        }
    }
    putchar('\n');
    return 0;
}
