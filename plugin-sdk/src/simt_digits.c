/*
 * simt_digits.c — a row-major offset whose indices are the digits of one
 * flat index, folded back to that index.
 *
 * A re-view (T.Tensor(shape, dtype, X.data)) reaches the IR as indices of
 * X computed from the view's flat index y: conv2d's filter bank, read as
 * the (KH * KW * C, F) matrix it is, indexes Wt[(y / C) / KW, (y / C) % KW,
 * y % C, f], its output Out[(m / OW) / OH, (m / OW) % OH, m % OW, f].
 * Printed as they are, the offset ((i0 * KW + i1) * C + i2) * F + f
 * recomputes y with two divisions and two modulos per access; for y >= 0
 * the sum of the digits times their strides is y itself, so the offset is
 * y * F + f.  A digit is (y / p) % q (q = 0: no modulo; nested divisions
 * multiply, a modulo of a modulo by a divisor of it is the inner one's
 * digit); indices d .. e of a buffer fold when they are digits of one y
 * whose place values are the buffer's strides within that run (q_k =
 * shape[k] and p_{k-1} = p_k * shape[k] for k in d+1 .. e, p_e = 1, the
 * top one unbounded) and y >= 0 is proved (tilec_cexpr_range).  The same
 * address for every value, so no bounds are assumed.
 */
#include <inttypes.h>
#include <stdint.h>

#include "lower_internal.h"
#include "simt_internal.h"
#include "tilec/cexpr.h"

#define DIGIT_MAX_DEPTH 16

typedef struct digit { const tilec_ir_expr_t *y; int64_t p, q; } digit_t;

static digit_t digit_of(const tilec_ir_expr_t *e, int depth)
{
    digit_t d = {e, 1, 0};
    int64_t c;
    if (!e || depth > DIGIT_MAX_DEPTH || e->kind != TILEC_EX_BINARY || e->dtype != TILEC_INT32 ||
        !tilec_ir_is_const_int(e->u.bin.b, &c) || c < 1 || c > INT32_MAX)
        return d;
    digit_t a = digit_of(e->u.bin.a, depth + 1);
    switch (e->u.bin.op) {
    case TILEC_BIN_DIV:
    case TILEC_BIN_FLOORDIV:
        if (a.q == 0 && a.p <= INT32_MAX / c)
            return (digit_t){a.y, a.p * c, 0};
        return d;
    case TILEC_BIN_FLOORMOD:
        if (a.q == 0 || a.q % c == 0)
            return (digit_t){a.y, a.p, c};
        return d;
    default: return d;
    }
}

/* The last index e > d such that indices d .. e of b fold (above), or -1. */
static int fold_run(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *ix, int d,
                    const tilec_ir_expr_t **y)
{
    digit_t top = digit_of(ix[d], 0);
    if (top.q != 0 || !top.y || (top.y->dtype != TILEC_INT32 && top.y->dtype != TILEC_INT64))
        return -1;
    int best = -1;
    int64_t p = top.p;
    for (int k = d + 1; k < b->ndim; k++) {
        int64_t dim;
        if (!b->shape[k] || !tilec_ir_is_const_int(b->shape[k], &dim) || dim < 1)
            break;
        digit_t g = digit_of(ix[k], 0);
        if (g.q != dim || g.p * dim != p || !lower_expr_same(g.y, top.y, 0))
            break;
        p = g.p;
        if (p == 1)
            best = k;
        if (p == 1 || p > INT32_MAX) /* the place values are products of the run's shape: within int32 */
            break;
    }
    if (best < 0)
        return -1;
    int64_t lo, hi;
    tilec_cexpr_t x = simt_cexpr_of(c);
    if (!tilec_cexpr_range(&x, top.y, &lo, &hi) || lo < 0)
        return -1;
    *y = top.y;
    return best;
}

const char *simt_offset_folded(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *ix,
                               const char *it)
{
    int any = 0;
    for (int d = 0; d + 1 < b->ndim && !any; d++) {
        const tilec_ir_expr_t *y;
        any = fold_run(c, b, ix, d, &y) > d;
    }
    if (!any)
        return NULL;
    const char *o = NULL; /* Horner over the runs: o * (shape[d] * ... * shape[e]) + value */
    for (int d = 0; d < b->ndim;) {
        const tilec_ir_expr_t *y = NULL;
        int e = d + 1 < b->ndim ? fold_run(c, b, ix, d, &y) : -1;
        const char *v = simt_cast(c, "(%s)(%s)", it, tilec_simt_expr(c, e > d ? y : ix[d]));
        if (e <= d)
            e = d;
        if (o) {
            int64_t m = 1, dim = 0, sd;
            for (int k = d + 1; k <= e; k++) /* constant (fold_run) */
                if (tilec_ir_is_const_int(b->shape[k], &dim))
                    m *= dim;
            const char *sc = tilec_ir_is_const_int(b->shape[d], &sd) && sd >= 0 && sd <= INT32_MAX && sd * m <= INT32_MAX
                                 ? simt_fmt(c, "%" PRId64, sd * m)
                             : m == 1 ? tilec_simt_dim(c, b, d)
                                      : simt_fmt(c, "%s * %" PRId64, tilec_simt_dim(c, b, d), m);
            o = simt_fmt(c, "(%s * %s + %s)", o, sc, v);
        } else {
            o = v;
        }
        d = e + 1;
    }
    return o;
}
