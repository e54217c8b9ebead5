/*
 * plugin-sdk/src/lower_vector.c — vector widths of tile copies and fills.
 *
 * A copy moves v elements per thread access when v divides the run of
 * its last dimension on both sides, v elements fit the target's widest
 * access (vector_bytes), and each side keeps v consecutive elements
 * together and aligned: a tensor or an unplaced buffer when its rows are
 * a multiple of v long; a placed buffer when its layout, evaluated over
 * the whole buffer, maps every aligned group of v elements along the last
 * dimension to v consecutive aligned addresses (shared memory) or to v
 * consecutive registers of one thread (register fragments).  So a padded
 * or swizzled buffer gets the width its layout allows, an accumulator in
 * the MMA layout gets pairs, rows over warps their ev columns.  A base
 * that turns out misaligned at run time is the printer's to handle (a
 * scalar fallback), as at tensor edges.  The width is lower.vector; async
 * copies keep the width their async copy kind fixed.
 *
 * Gathered copies (lower_gather.c: T.Parallel nests filling a shared
 * buffer from a tensor, T.im2col's and re-views') get lower.vector = W on
 * their innermost loop when the shared layout keeps W elements together
 * (an asynchronous one, from the pipeline pass, keeps its width or drops
 * to 1, which the printer runs element by element, completing it early);
 * only on targets with 16-byte async copies (whose printer the kit's
 * gather path was written for).
 */
#include <string.h>

#include "lower_internal.h"

#define MAX_CHECK (1 << 16)

typedef struct binding {
    int64_t idx[TILEC_IR_MAX_DIMS + 1];
} binding_t;

static int bind(void *ctx, const tilec_ir_var_t *v, int64_t *out)
{
    binding_t *b = ctx;
    if (v->kind != TILEC_VAR_LAYOUT || v->id < 0 || v->id > TILEC_IR_MAX_DIMS)
        return -1;
    *out = b->idx[v->id];
    return 0;
}

/* does the layout keep aligned groups of v along the last dimension together? */
static int layout_keeps(const tilec_ir_buffer_t *b, int v)
{
    const tilec_ir_layout_t *l = b->layout;
    int64_t n = tilec_ir_buffer_const_size(b), last = lower_dim(b, b->ndim - 1);
    if (n < 1 || n > MAX_CHECK || last % v)
        return 0;
    binding_t bd;
    memset(&bd, 0, sizeof bd);
    for (int64_t e = 0; e < n; e += v) {
        int64_t rem = e;
        for (int d = b->ndim - 1; d >= 0; d--) {
            int64_t ext = lower_dim(b, d);
            bd.idx[d] = rem % ext;
            rem /= ext;
        }
        bd.idx[b->ndim] = 0; /* replica 0 */
        int64_t a0 = 0, t0 = 0;
        for (int j = 0; j < v; j++) {
            int64_t a, t = 0;
            tilec_ir_expr_t *ae = l->kind == TILEC_LAYOUT_SMEM ? l->addr : l->local;
            if (tilec_ir_eval_int(ae, bind, &bd, &a) != 0)
                return 0;
            if (l->kind == TILEC_LAYOUT_REGS && tilec_ir_eval_int(l->thread, bind, &bd, &t) != 0)
                return 0;
            if (j == 0) {
                a0 = a;
                t0 = t;
                if (a0 % v)
                    return 0;
            } else if (a != a0 + j || t != t0) {
                return 0;
            }
            bd.idx[b->ndim - 1]++;
        }
    }
    return 1;
}

static int side_ok(const tilec_ir_region_t *r, int v)
{
    const tilec_ir_buffer_t *b = r->buf;
    if (b->ndim < 1)
        return 0;
    if (r->extent[b->ndim - 1] % v)
        return 0;
    if (b->layout)
        return layout_keeps(b, v);
    int64_t last = lower_dim(b, b->ndim - 1);
    return last < 0 ? 0 : last % v == 0; /* symbolic rows: unknown alignment */
}

/* a gathered copy: 1 when s is one (marked, or left scalar), 0 when not, -1 */
static int vec_gather(lower_ctx_t *c, tilec_ir_stmt_t *s)
{
    lower_gather_form_t f;
    tilec_ir_stmt_t *in = s->kind == TILEC_ST_FOR ? lower_gather_inner(s) : NULL;
    if (!in || !(c->t->async_copy & TILEC_TARGET_ASYNC_CP16))
        return 0;
    int v = lower_gather_width(s, c->t->vector_bytes, &f);
    const tilec_ir_attr_t *had = lower_sattr(in, "lower.vector");
    if (!v)
        return had ? (lower_sattr_int(c, in, "lower.vector", 1) ? -1 : 1) : 0;
    if (had && had->i < v)
        v = (int)had->i;
    const tilec_ir_buffer_t *S = f.store->u.store.buf;
    while (v > 1 && (!S->layout || !layout_keeps(S, v)))
        v /= 2;
    if ((v > 1 || had) && lower_sattr_int(c, in, "lower.vector", v))
        return -1;
    return 1;
}

static int vec_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    lower_ctx_t *c = w->user;
    const tilec_ir_region_t *a = NULL, *b = NULL;
    tilec_dtype_t dt;
    if (s->kind == TILEC_ST_COPY || s->kind == TILEC_ST_COPY_ASYNC) { /* copy_async: a lowered input's */
        a = &s->u.copy.src;
        b = &s->u.copy.dst;
        if (a->extent[a->buf->ndim - 1] != b->extent[b->buf->ndim - 1])
            return TILEC_WALK_CONTINUE; /* not one run along the last dimension */
        dt = tilec_dtype_size(a->buf->dtype) > tilec_dtype_size(b->buf->dtype) ? a->buf->dtype : b->buf->dtype;
    } else if (s->kind == TILEC_ST_FILL) {
        b = &s->u.fill.dst;
        dt = b->buf->dtype;
    } else if (s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PARALLEL) {
        int g = vec_gather(c, s);
        return g < 0 ? -1 : g ? TILEC_WALK_SKIP : TILEC_WALK_CONTINUE;
    } else {
        return TILEC_WALK_CONTINUE;
    }
    int v = c->t->vector_bytes / (int)tilec_dtype_size(dt);
    for (; v > 1; v /= 2)
        if ((!a || side_ok(a, v)) && side_ok(b, v))
            break;
    if (v > 1 && lower_sattr_int(c, s, "lower.vector", v))
        return -1;
    return TILEC_WALK_CONTINUE;
}

int lower_vector(lower_ctx_t *c)
{
    return lower_walk_stmts(c, vec_stmt);
}
