/*
 * plugin-sdk/src/lower_tma.c — which pipelined copies the tensor copy
 * engine can move (TMA: cp.async.bulk.tensor on NVIDIA's sm_90).
 *
 * On a target whose async copies include TILEC_TARGET_ASYNC_BULK, a copy
 * that feeds a software pipeline (an async copy, or a copy at the top of
 * a T.Pipelined body of at least two stages, which a printer that plans
 * its own rings turns into one) is marked when one bulk tensor copy per
 * column block can do it:
 *  - global to shared memory, one dtype of 1, 2 or 4 bytes;
 *  - the destination is a whole 2-D plane of its buffer (a buffer, or one
 *    stage of a ring), laid out "dense" or in the canonical XOR swizzle of
 *    lower_smem.c ("swizzle128/64/32": the hardware's 128-, 64- and 32-byte
 *    swizzles of absolute addresses, which is why those buffers are
 *    1024-byte aligned);
 *  - the source region has the destination's rows and columns in its last
 *    two dimensions and extent 1 in the others, with indices that are pure
 *    (no loads), so the printer can compute the box's corner;
 *  - the tensor's shape is constant, at most 5 dimensions, each at most
 *    2^32 elements, every row stride a multiple of 16 bytes (what a tensor
 *    map allows);
 *  - a box is at most 256 rows; a swizzled destination is cut into column
 *    blocks as wide as its swizzle (64, 32, 16 16-bit elements: one box
 *    each), a dense one is one box of at most 256 columns whose rows are a
 *    multiple of 16 bytes.
 * Elements of the box outside the tensor arrive as zeros, as T.copy reads
 * them.  The decision is the attribute lower.tma = (box rows, box columns,
 * swizzle bytes: 0, 32, 64 or 128) on the copy; its meaning as a copy does
 * not change, so the interpreter runs it as before.  Whether a printer uses
 * it is the printer's; none does yet (docs/backend-cuda.md, "Not done yet").
 */
#include <string.h>

#include "lower_internal.h"

#define TMA_MAX_BOX 256
#define TMA_MAX_RANK 5

static int swizzle_bytes(const tilec_ir_buffer_t *b)
{
    const tilec_ir_layout_t *L = b->layout;
    if (!L || L->kind != TILEC_LAYOUT_SMEM || !L->name)
        return -1;
    if (strcmp(L->name, "dense") == 0)
        return 0;
    if (strcmp(L->name, "swizzle128") == 0)
        return 128;
    if (strcmp(L->name, "swizzle64") == 0)
        return 64;
    if (strcmp(L->name, "swizzle32") == 0)
        return 32;
    return -1;
}

/* the box of copy s: 1 and box[3] set, or 0 when no bulk tensor copy fits */
static int tma_box(const tilec_ir_stmt_t *s, int64_t box[3])
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *G = src->buf, *S = dst->buf;
    int64_t es = (int64_t)tilec_dtype_size(G->dtype);
    if (G->scope != TILEC_SCOPE_GLOBAL || S->scope != TILEC_SCOPE_SHARED || G->dtype != S->dtype ||
        (es != 1 && es != 2 && es != 4) || S->ndim < 2 || G->ndim < 2 || G->ndim > TMA_MAX_RANK)
        return 0;
    int sw = swizzle_bytes(S);
    if (sw < 0)
        return 0;
    int64_t R = lower_dim(S, S->ndim - 2), C = lower_dim(S, S->ndim - 1);
    if (R < 1 || C < 1 || R > TMA_MAX_BOX)
        return 0;
    /* a whole plane of the destination */
    for (int d = 0; d < S->ndim; d++) {
        int64_t b0;
        int lead = d < S->ndim - 2;
        if (dst->extent[d] != (lead ? 1 : lower_dim(S, d)) || !lower_expr_pure(dst->base[d]))
            return 0;
        if (!lead && (!tilec_ir_is_const_int(dst->base[d], &b0) || b0 != 0))
            return 0;
    }
    /* rows and columns of the plane in the source's last two dimensions */
    for (int d = 0; d < G->ndim; d++) {
        int64_t want = d == G->ndim - 1 ? C : d == G->ndim - 2 ? R : 1;
        if (src->extent[d] != want || !lower_expr_pure(src->base[d]))
            return 0;
    }
    /* a tensor map of the tensor: constant shape, 16-byte row strides */
    int64_t stride = es;
    for (int d = G->ndim - 1; d >= 0; d--) {
        int64_t n = lower_dim(G, d);
        if (n < 1 || n > ((int64_t)1 << 32))
            return 0;
        if (d < G->ndim - 1 && (stride % 16 || stride >= ((int64_t)1 << 40)))
            return 0;
        stride *= n;
    }
    int64_t bc;
    if (sw) {
        bc = sw / es;
        if (C % bc)
            return 0;
    } else {
        bc = C;
        if (C > TMA_MAX_BOX || (C * es) % 16)
            return 0;
    }
    box[0] = R;
    box[1] = bc;
    box[2] = sw;
    return 1;
}

static int mark(lower_ctx_t *c, tilec_ir_stmt_t *s)
{
    int64_t box[3];
    if (lower_sattr(s, "lower.tma") || !tma_box(s, box))
        return 0;
    return lower_sattr_tuple(c, s, "lower.tma", box, 3);
}

static int tma_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    lower_ctx_t *c = w->user;
    if (s->kind == TILEC_ST_COPY_ASYNC && mark(c, s) < 0)
        return -1;
    if (s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PIPELINED && s->u.loop.num_stages >= 2)
        for (tilec_ir_stmt_t *t = s->u.loop.body; t; t = t->next)
            if (t->kind == TILEC_ST_COPY && mark(c, t) < 0)
                return -1;
    return TILEC_WALK_CONTINUE;
}

int lower_tma(lower_ctx_t *c)
{
    if (!(c->t->async_copy & TILEC_TARGET_ASYNC_BULK))
        return 0;
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = tma_stmt;
    w.user = c;
    if (tilec_ir_walk_block(&w, &c->k->body) < 0)
        return c->code != TILEC_LOWER_OK ? -1 : lower_oom(c);
    return 0;
}
