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
 * swizzle bytes: 0, 32, 64 or 128) on the copy.
 *
 * Then the rings of the pipeline pass whose copies are all marked move
 * from commit groups onto barrier objects (where the target has them,
 * TILEC_TARGET_BARRIER_OBJECT), for a pipelined loop at the top of the
 * kernel body: one mbarrier per stage (arrive count 1), and
 *
 *     barrier_init B; barrier            every thread sees the initialized barriers
 *     for p in serial(S - 1):            prologue, no commit
 *         if p < n:
 *             barrier_arrive B[p % S] expect_tx BYTES      one arrival announcing the stage's bytes
 *             copy_async ring[p % S] <- src(p) mbarrier B[p % S]
 *     for k in serial(n):
 *         if k + S - 1 < n: (the same for stage (k + S - 1) % S)
 *         barrier_wait B[k % S], (k / S) % 2                 instead of async_wait S - 1
 *         ...the body...
 *                                        (no async_wait 0 after the loop)
 *
 * and likewise for the wgmma deferral's schedule (the wait first, the
 * refill after the body).  Stage s is refilled for the n-th time in
 * iteration s + n S - (S - 1), so iteration k waits for phase k / S of
 * barrier k % S: parity (k / S) % 2.  Every thread waits, so the data is
 * visible without a block barrier: the barrier pass (which runs next)
 * places none for reads after the wait, only the one before a refill
 * that overwrites what the previous iteration read.  A printer issues
 * each such arrival and copy from one thread; the interpreter counts the
 * bytes (a phase completes when its arrival has come and the bytes
 * announced have been issued) and keeps the copies pending until a wait
 * on their barrier has seen the phase complete.
 */
#include <stdio.h>
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

/* ---- rings on mbarriers ------------------------------------------------------- */

/* The copies of a refill `if (cond) { copy_async ...; }`: bytes of the
 * stage, or 0 when it is not one of marked copies into one stage. */
static int64_t refill_bytes(const tilec_ir_stmt_t *s)
{
    if (!s || s->kind != TILEC_ST_IF || s->u.cond.els || !s->u.cond.then)
        return 0;
    int64_t bytes = 0;
    for (const tilec_ir_stmt_t *t = s->u.cond.then; t; t = t->next) {
        const tilec_ir_region_t *d = &t->u.copy.dst;
        if (t->kind != TILEC_ST_COPY_ASYNC || t->u.copy.bar || !lower_sattr(t, "lower.tma") ||
            !lower_battr(d->buf, "lower.stages") || d->buf->ndim < 1)
            return 0;
        int64_t n = (int64_t)tilec_dtype_size(d->buf->dtype);
        for (int i = 0; i < d->buf->ndim; i++)
            n *= d->extent[i];
        bytes += n;
    }
    return bytes < ((int64_t)1 << 20) ? bytes : 0;
}

static int is_wait(const tilec_ir_stmt_t *s, int n)
{
    return s && s->kind == TILEC_ST_ASYNC_WAIT && s->u.wait.n == n;
}

static tilec_ir_stmt_t *mbar_stmt(lower_ctx_t *c, tilec_stmt_kind_t kind, tilec_ir_mbarrier_t *bar,
                                  tilec_ir_expr_t *idx)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(c->a, kind);
    if (!s || (kind != TILEC_ST_MBAR_INIT && !idx)) {
        lower_oom(c);
        return NULL;
    }
    s->u.mbar.bar = bar;
    s->u.mbar.idx = idx;
    return s;
}

/* refill `if` s: an arrival announcing bytes first, every copy on the
 * stage's barrier (the stage is the copies' leading index) */
static int refill_on(lower_ctx_t *c, tilec_ir_stmt_t *s, tilec_ir_mbarrier_t *bar, int64_t bytes)
{
    tilec_ir_stmt_t *first = s->u.cond.then;
    tilec_ir_expr_t *st = first->u.copy.dst.base[0];
    tilec_ir_stmt_t *arr = mbar_stmt(c, TILEC_ST_MBAR_ARRIVE, bar, lower_subst(c, st, NULL, NULL));
    if (!arr || !(arr->u.mbar.tx = lower_int(c, bytes)))
        return -1;
    for (tilec_ir_stmt_t *t = first; t; t = t->next) {
        t->u.copy.bar = bar;
        if (!(t->u.copy.bar_idx = lower_subst(c, t->u.copy.dst.base[0], NULL, NULL)))
            return -1;
    }
    arr->line = first->line;
    arr->col = first->col;
    arr->next = first;
    s->u.cond.then = arr;
    return 0;
}

/* *link is a pipeline pass prologue: moves it, its loop and its epilogue
 * onto mbarriers when every ring copy is marked; 1 done, 0 left, -1 */
static int on_mbarriers(lower_ctx_t *c, tilec_ir_stmt_t **link, int64_t *end)
{
    tilec_ir_stmt_t *pro = *link, *loop = pro->next, *epi = loop ? loop->next : NULL;
    const tilec_ir_attr_t *sa = loop && loop->kind == TILEC_ST_FOR ? lower_sattr(loop, "lower.stages") : NULL;
    if (pro->kind != TILEC_ST_FOR || !sa || sa->kind != TILEC_ATTR_INT || !is_wait(epi, 0))
        return 0;
    int S = (int)sa->i;
    tilec_ir_stmt_t *pif = pro->u.loop.body, *b = loop->u.loop.body;
    if (!pif || !pif->next || pif->next->kind != TILEC_ST_ASYNC_COMMIT || pif->next->next || !b)
        return 0;
    int64_t bytes = refill_bytes(pif);
    /* the steady state: refill, commit, wait S-1, body; or wait S-2, body, refill, commit */
    tilec_ir_stmt_t *sif = NULL, **tail = NULL;
    int defer = 0;
    if (is_wait(b, S - 2) && S >= 2) {
        defer = 1;
        for (tail = &b->next; *tail && (*tail)->next && (*tail)->next->next; tail = &(*tail)->next)
            ;
        if (!*tail || !(*tail)->next || (*tail)->next->kind != TILEC_ST_ASYNC_COMMIT)
            return 0;
        sif = *tail;
    } else if (b->next && b->next->kind == TILEC_ST_ASYNC_COMMIT && is_wait(b->next->next, S - 1)) {
        sif = b;
    }
    if (!bytes || !sif || refill_bytes(sif) != bytes || *end + 8 * (int64_t)S > (int64_t)c->t->smem_optin)
        return 0;
    /* nothing else in the body uses the commit groups */
    tilec_ir_stmt_t *rest = defer ? b->next : b->next->next->next;
    for (tilec_ir_stmt_t *t = rest; t; t = t->next)
        if (t != sif && t != sif->next &&
            (t->kind == TILEC_ST_COPY_ASYNC || t->kind == TILEC_ST_ASYNC_COMMIT || t->kind == TILEC_ST_ASYNC_WAIT))
            return 0;
    tilec_ir_mbarrier_t *bar = lower_mbar_new(c, loop->u.loop.var->name, "full", S);
    if (!bar)
        return -1;
    *end += 8 * (int64_t)S;
    tilec_ir_stmt_t *init = mbar_stmt(c, TILEC_ST_MBAR_INIT, bar, NULL), *ib = tilec_ir_stmt(c->a, TILEC_ST_BARRIER);
    tilec_ir_expr_t *kv = tilec_ir_varref(c->a, loop->u.loop.var);
    tilec_ir_stmt_t *wait =
        mbar_stmt(c, TILEC_ST_MBAR_WAIT, bar, kv ? lower_opi(c, TILEC_BIN_FLOORMOD, kv, S) : NULL);
    if (!init || !ib || !wait || refill_on(c, pif, bar, bytes) || refill_on(c, sif, bar, bytes))
        return c->code != TILEC_LOWER_OK ? -1 : lower_oom(c);
    tilec_ir_expr_t *kv2 = tilec_ir_varref(c->a, loop->u.loop.var);
    wait->u.mbar.parity = kv2 ? lower_opi(c, TILEC_BIN_FLOORMOD, lower_opi(c, TILEC_BIN_FLOORDIV, kv2, S), 2) : NULL;
    if (!wait->u.mbar.parity)
        return lower_oom(c);
    wait->line = loop->line;
    wait->col = loop->col;
    /* prologue without its commit */
    pif->next = NULL;
    /* the steady state */
    if (defer) {
        sif->next = NULL; /* drops the commit */
        wait->next = b->next;
    } else {
        sif->next = wait;
        wait->next = rest;
    }
    loop->u.loop.body = defer ? wait : sif;
    /* init, barrier, prologue, loop; the epilogue wait goes */
    loop->next = epi->next;
    init->next = ib;
    ib->next = pro;
    *link = init;
    return 1;
}

int lower_tma(lower_ctx_t *c)
{
    if (!(c->t->async_copy & TILEC_TARGET_ASYNC_BULK))
        return 0;
    if (lower_walk_stmts(c, tma_stmt))
        return -1;
    if (!(c->t->barriers & TILEC_TARGET_BARRIER_OBJECT))
        return 0;
    int64_t end = lower_smem_end(c->k);
    for (tilec_ir_stmt_t **link = &c->k->body; *link; link = &(*link)->next) {
        int rc = on_mbarriers(c, link, &end);
        if (rc < 0)
            return -1;
        if (rc > 0) /* init, barrier, prologue, loop: go on after the loop */
            link = &(*link)->next->next->next;
    }
    return 0;
}
