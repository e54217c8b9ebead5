/*
 * plugin-sdk/src/lower_cluster.c — 2-block clusters that share one
 * operand's tiles (NVIDIA sm_90: thread block clusters, TMA multicast).
 *
 * On a target whose description allows clusters (cluster_max >= 2), the
 * tma pass's ring (barrier_init F; barrier; the prologue; the ring loop of
 * lower.stages = S, either schedule, not warp-specialized, not persistent)
 * whose refill copies include one whose source does not mention the block
 * variable of grid dimension d (a GEMM's A tile does not depend on bx, its
 * B tile not on by) runs as clusters of 2 blocks along d: the two blocks
 * of a cluster (d's indices 2j and 2j + 1) load the same tile of that
 * operand, so each issues half of its rows and the copy engine writes the
 * half into the shared memory of both (multicast): that operand's L2
 * traffic halves.  In the IR:
 *
 *     barrier_init F; barrier_init E                E: "empty", 2 arrivals a phase
 *     barrier attrs {lower.cluster_sync = 1}        the barriers of both blocks are initialized
 *     ...prologue, each shared copy split in two...
 *     for k in serial(n) attrs {lower.stages = S, lower.cluster = (cx, cy, cz)} {
 *         ...
 *         if (k + S - 1 < n) {
 *             barrier_arrive F[(k + S - 1) % S] expect_tx BYTES    the whole stage, as before
 *             barrier                                               this block is done with load k - 1
 *             if (k >= 1) {
 *                 barrier_arrive E[(k - 1) % S] attrs {lower.cluster_arrive = 2}
 *                 barrier_wait E[(k - 1) % S], ((k - 1) / S) % 2 attrs {lower.issuer = 1}
 *             }
 *             copy_async X[s, 0 +: R/2, ...] <- ... attrs {lower.tma = (R/2, ..), lower.multicast = (0, 2)}
 *             copy_async X[s, R/2 +: R/2, ...] <- ... rows + R/2 ... attrs {.., lower.multicast = (1, 2)}
 *             copy_async Y[s] <- ...                                the block's own operand
 *         }
 *     }
 *     ...
 *     barrier attrs {lower.cluster_sync = 1}        no block leaves while the other may still arrive on its barriers
 *
 * Meaning: a copy with lower.multicast = (q, n) is issued by the block of
 * rank q in its cluster of n and lands in every block of the cluster, at
 * the same place, completing the same barrier there (F's expect_tx keeps
 * counting the whole stage: half of X comes from the other block); an
 * arrival with lower.cluster_arrive = n arrives on that barrier in each of
 * the n blocks; a wait with lower.issuer = 1 is only the copies' issuing
 * thread's; a barrier with lower.cluster_sync = 1 is a barrier of all the
 * cluster's threads.  So a stage is refilled only when both blocks have
 * released its previous load (E: one arrival from each), and the rest of
 * the blocks' threads go on without waiting for the other block.
 *
 * A warp-specialized ring (lower_warpspec.c) has its E already: the
 * consumers' release `barrier_arrive E[...]` becomes a cluster arrival (E
 * counts 2 a phase), the producer's wait for it the issuer's, and the
 * copies are split the same way; the block barrier is the consumers'.
 *
 * The interpreter runs a cluster as blocks of one grid, each on its own:
 * a multicast copy lands in the block that runs it (the other block's
 * copy of the same rows would bring the same bytes: this pass proves the
 * source does not depend on the cluster's block index), and a cluster
 * arrival counts n arrivals (the other block makes the same one).  A
 * dropped half then leaves half a stage unwritten and its barrier short of
 * bytes, and an expect_tx of the wrong size completes a phase early or
 * never: both fail there.
 *
 * Hardware pairing: the cluster's blocks are consecutive along d; with
 * T.use_swizzle(panel) (the SIMT kit's rasterization) only d = 0 with an
 * even panel and an even grid width keeps the pair in one block row; with
 * an explicit order (TileLang's rasterizations) there is no cluster.  The
 * halves start on 1024-byte boundaries (the swizzle's period), so each
 * lands in the layout the whole tile had.
 */
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"

#define CLUSTER 2

typedef struct ring {
    tilec_ir_stmt_t *init, *sync, *pro, *loop; /* top-level statements */
    tilec_ir_stmt_t *refill;                   /* the ring loop's refill `if` */
    tilec_ir_stmt_t *fill;                     /* its expecting arrival on F */
    tilec_ir_mbarrier_t *full;
    /* warp specialization's (lower_warpspec.c): the empty barriers, the
     * producer's wait for a release, the consumers' release; else NULL */
    tilec_ir_mbarrier_t *empty;
    tilec_ir_stmt_t *pwait, *release;
    int S;
} ring_t;

/* the T.use_swizzle panel at the top of the body, 0 without one; -1 for
 * TileLang's orders (row and column panels walked in a serpentine), whose
 * consecutive blocks need not share a tile row */
static int64_t swizzle_panel(const tilec_ir_kernel_t *k)
{
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next)
        if (lower_swizzle_panel(s))
            return lower_swizzle_order(s) >= 0 ? -1 : lower_swizzle_panel(s);
    return 0;
}

/* `if (c) { x }` with x a single statement of kind kind: x, else NULL */
static tilec_ir_stmt_t *guarded(const tilec_ir_stmt_t *s, tilec_stmt_kind_t kind)
{
    if (!s || s->kind != TILEC_ST_IF || s->u.cond.els || !s->u.cond.then || s->u.cond.then->next ||
        s->u.cond.then->kind != kind)
        return NULL;
    return s->u.cond.then;
}

/* a refill's then-list: (the producer's guarded wait for a release,) an
 * expecting arrival on F, then (block barriers and) copies on F: the
 * arrival, else NULL */
static tilec_ir_stmt_t *refill_on(const tilec_ir_stmt_t *s, const tilec_ir_mbarrier_t *F, tilec_ir_stmt_t **pwait)
{
    if (!s || s->kind != TILEC_ST_IF || s->u.cond.els)
        return NULL;
    tilec_ir_stmt_t *t = s->u.cond.then, *w = guarded(t, TILEC_ST_MBAR_WAIT);
    if (w && w->u.mbar.bar != F) {
        *pwait = w;
        t = t->next;
    }
    if (!t || t->kind != TILEC_ST_MBAR_ARRIVE || t->u.mbar.bar != F || !t->u.mbar.tx)
        return NULL;
    int n = 0;
    for (const tilec_ir_stmt_t *u = t->next; u; u = u->next) {
        if (u->kind == TILEC_ST_BARRIER && !u->nattrs)
            continue;
        if (u->kind != TILEC_ST_COPY_ASYNC || u->u.copy.bar != F || !lower_sattr(u, "lower.tma") ||
            lower_sattr(u, "lower.multicast"))
            return NULL;
        n++;
    }
    return n > 0 ? t : NULL;
}

static int has_attr_deep(const tilec_ir_stmt_t *s, const char *key, int depth)
{
    for (; s && depth < 600; s = s->next) {
        if (lower_sattr(s, key))
            return 1;
        if ((s->kind == TILEC_ST_FOR && has_attr_deep(s->u.loop.body, key, depth + 1)) ||
            (s->kind == TILEC_ST_IF &&
             (has_attr_deep(s->u.cond.then, key, depth + 1) || has_attr_deep(s->u.cond.els, key, depth + 1))))
            return 1;
    }
    return 0;
}

/* the ring loop's statements: 1 with r's refill, wait count and (warp
 * specialization) release filled, 0 when something else is there */
static int ring_body(ring_t *r, int *nwait)
{
    for (tilec_ir_stmt_t *t = r->loop->u.loop.body; t; t = t->next) {
        tilec_ir_stmt_t *pw = NULL, *fill = NULL, *rel = guarded(t, TILEC_ST_MBAR_ARRIVE);
        if (t->kind == TILEC_ST_MBAR_WAIT && t->u.mbar.bar == r->full) {
            (*nwait)++;
        } else if (t->kind == TILEC_ST_IF && !r->refill && (fill = refill_on(t, r->full, &pw))) {
            r->refill = t;
            r->fill = fill;
            r->pwait = pw;
        } else if ((rel || t->kind == TILEC_ST_MBAR_ARRIVE) && !r->release) {
            r->release = rel ? rel : t;
        } else if (t->kind == TILEC_ST_IF || t->kind == TILEC_ST_MBAR_ARRIVE || t->kind == TILEC_ST_MBAR_WAIT ||
                   t->kind == TILEC_ST_COPY_ASYNC) {
            return 0;
        }
    }
    return 1;
}

/* the ring at the top of the kernel body, 1 when found */
static int find_ring(const lower_ctx_t *c, ring_t *r)
{
    memset(r, 0, sizeof *r);
    for (tilec_ir_stmt_t *s = c->k->body; s; s = s->next) {
        tilec_ir_stmt_t *b = s->next, *p = b ? b->next : NULL, *L = p ? p->next : NULL;
        const tilec_ir_attr_t *sa = L && L->kind == TILEC_ST_FOR ? lower_sattr(L, "lower.stages") : NULL;
        if (!L || s->kind != TILEC_ST_MBAR_INIT || b->kind != TILEC_ST_BARRIER || b->nattrs || p->kind != TILEC_ST_FOR ||
            !sa || sa->kind != TILEC_ATTR_INT || sa->i < 2 || L->u.loop.kind != TILEC_LOOP_SERIAL ||
            lower_sattr(L, "lower.cluster"))
            continue;
        r->init = s;
        r->sync = b;
        r->pro = p;
        r->loop = L;
        r->S = (int)sa->i;
        for (tilec_ir_stmt_t *t = L->u.loop.body; t && !r->full; t = t->next)
            if (t->kind == TILEC_ST_MBAR_WAIT)
                r->full = t->u.mbar.bar;
        tilec_ir_stmt_t *pw = NULL;
        int nwait = 0;
        if (!r->full || !p->u.loop.body || p->u.loop.body->next || !refill_on(p->u.loop.body, r->full, &pw) || pw ||
            !ring_body(r, &nwait) || nwait != 1 || !r->refill ||
            !lower_is_fn_of_k(r->fill->u.mbar.idx, L->u.loop.var, r->S, lower_ring_ahead))
            return 0;
        if (lower_sattr(L, "lower.warpspec")) {
            /* the producer waits for the consumers' release on E */
            if (!r->pwait || !r->release || r->release->u.mbar.tx || r->release->u.mbar.bar != r->pwait->u.mbar.bar ||
                r->pwait->u.mbar.bar->arrive != 1)
                return 0;
            r->empty = r->pwait->u.mbar.bar;
            return 1;
        }
        /* a block barrier before the refill's copies: this block's readers are done */
        int bar = 0;
        for (const tilec_ir_stmt_t *t = r->refill->u.cond.then; t && t->kind != TILEC_ST_COPY_ASYNC; t = t->next)
            bar |= t->kind == TILEC_ST_BARRIER;
        return bar && !r->pwait && !r->release;
    }
    return 0;
}

/* e is the same in both blocks of a cluster along d: no loads, no let
 * variables, not that block index */
static int same_in_cluster(const lower_ctx_t *c, tilec_ir_expr_t *e, int d)
{
    return lower_expr_pure(e) && !lower_mentions(e, c->k->block[d]);
}

/* both blocks run the same loads: the trip counts and refill conditions
 * of the prologue and the ring loop agree */
static int same_schedule(const lower_ctx_t *c, const ring_t *r, int d)
{
    return same_in_cluster(c, r->pro->u.loop.extent, d) && same_in_cluster(c, r->pro->u.loop.body->u.cond.cond, d) &&
           same_in_cluster(c, r->loop->u.loop.extent, d) && same_in_cluster(c, r->refill->u.cond.cond, d);
}

/* bytes of copy s when it can be shared along grid dimension d, else 0:
 * a source that does not mention that block index, a box of an even
 * number of rows whose halves start on 1024-byte boundaries */
static int64_t shareable(const lower_ctx_t *c, const tilec_ir_stmt_t *s, int d)
{
    const tilec_ir_attr_t *box = lower_sattr(s, "lower.tma");
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *X = dst->buf;
    if (!box || box->kind != TILEC_ATTR_TUPLE || box->n != 3 || X->ndim < 3 || src->buf->ndim < 2)
        return 0;
    for (int i = 0; i < src->buf->ndim; i++)
        if (!same_in_cluster(c, src->base[i], d))
            return 0;
    int64_t R = box->tuple[0], bc = box->tuple[1], es = (int64_t)tilec_dtype_size(X->dtype), r0;
    if (R % 2 || (R / 2) * bc * es % 1024 || dst->extent[X->ndim - 2] != R ||
        !tilec_ir_is_const_int(dst->base[X->ndim - 2], &r0) || r0 != 0)
        return 0;
    int64_t n = es;
    for (int i = 0; i < X->ndim; i++)
        n *= dst->extent[i];
    return n;
}

/* a clone of copy s with every attribute (copied, so they can change) */
static tilec_ir_stmt_t *clone_copy(lower_ctx_t *c, const tilec_ir_stmt_t *s)
{
    tilec_ir_stmt_t *n = tilec_ir_stmt(c->a, s->kind);
    if (!n)
        return NULL;
    *n = *s;
    n->next = NULL;
    n->nattrs = 0;
    n->attrs = NULL;
    for (int i = 0; i < s->nattrs; i++)
        if (tilec_ir_attr_set(c->a, &n->nattrs, &n->attrs, &s->attrs[i]))
            return NULL;
    for (int w = 0; w < 2; w++) {
        tilec_ir_region_t *r = w ? &n->u.copy.dst : &n->u.copy.src;
        int nd = r->buf->ndim;
        tilec_ir_expr_t **b = tilec_arena_alloc(c->a, (size_t)nd * sizeof *b);
        int64_t *e = tilec_arena_alloc(c->a, (size_t)nd * sizeof *e);
        if (!b || !e)
            return NULL;
        for (int i = 0; i < nd; i++)
            if (!(b[i] = lower_subst(c, r->base[i], NULL, NULL)))
                return NULL;
        memcpy(e, r->extent, (size_t)nd * sizeof *e);
        r->base = b;
        r->extent = e;
    }
    if (!(n->u.copy.bar_idx = lower_subst(c, s->u.copy.bar_idx, NULL, NULL)))
        return NULL;
    return n;
}

/* *link, a copy of X: replaced by its two multicast halves */
static int split(lower_ctx_t *c, tilec_ir_stmt_t **link)
{
    tilec_ir_stmt_t *s = *link, *h[CLUSTER];
    const tilec_ir_attr_t *box = lower_sattr(s, "lower.tma");
    int64_t R = box->tuple[0], half = R / CLUSTER;
    for (int q = 0; q < CLUSTER; q++) {
        if (!(h[q] = clone_copy(c, s)))
            return lower_oom(c);
        tilec_ir_region_t *src = &h[q]->u.copy.src, *dst = &h[q]->u.copy.dst;
        int rs = src->buf->ndim - 2, rd = dst->buf->ndim - 2;
        src->extent[rs] = dst->extent[rd] = half;
        src->base[rs] = lower_opi(c, TILEC_BIN_ADD, src->base[rs], q * half);
        dst->base[rd] = lower_int(c, q * half);
        int64_t nb[3] = {half, box->tuple[1], box->tuple[2]}, mc[2] = {q, CLUSTER};
        if (!src->base[rs] || !dst->base[rd] || lower_sattr_tuple(c, h[q], "lower.tma", nb, 3) ||
            lower_sattr_tuple(c, h[q], "lower.multicast", mc, 2))
            return lower_oom(c);
    }
    h[0]->next = h[1];
    h[1]->next = s->next;
    *link = h[0];
    return 0;
}

/* in a refill's then-list, the copies into X become halves */
static int split_in(lower_ctx_t *c, tilec_ir_stmt_t *refill, const tilec_ir_buffer_t *X)
{
    int n = 0;
    for (tilec_ir_stmt_t **l = &refill->u.cond.then; *l; l = &(*l)->next)
        if ((*l)->kind == TILEC_ST_COPY_ASYNC && (*l)->u.copy.dst.buf == X && !lower_sattr(*l, "lower.multicast")) {
            if (split(c, l))
                return -1;
            l = &(*l)->next; /* past the first half */
            n++;
        }
    return n == 1 ? 0 : lower_fail(c, TILEC_LOWER_E_PASS, "refill of '%s' with %d copies into it", X->name, n);
}

/* (k - 1) % S and ((k - 1) / S) % 2 */
static tilec_ir_expr_t *prev_load(lower_ctx_t *c, const tilec_ir_var_t *k, int S, int parity)
{
    tilec_ir_expr_t *km1 = lower_opi(c, TILEC_BIN_SUB, tilec_ir_varref(c->a, (tilec_ir_var_t *)k), 1);
    if (!parity)
        return lower_opi(c, TILEC_BIN_FLOORMOD, km1, S);
    return lower_opi(c, TILEC_BIN_FLOORMOD, lower_opi(c, TILEC_BIN_FLOORDIV, km1, S), 2);
}

/* after the refill's block barrier: if (k >= 1) { release load k - 1 in
 * both blocks; the issuer waits until both have } */
static int release(lower_ctx_t *c, ring_t *r, tilec_ir_mbarrier_t *E)
{
    const tilec_ir_var_t *k = r->loop->u.loop.var;
    tilec_ir_stmt_t *g = lower_stmt_at(c, TILEC_ST_IF, r->refill), *arr = lower_stmt_at(c, TILEC_ST_MBAR_ARRIVE, r->refill),
                    *w = lower_stmt_at(c, TILEC_ST_MBAR_WAIT, r->refill);
    if (!g || !arr || !w)
        return -1;
    arr->u.mbar.bar = w->u.mbar.bar = E;
    arr->u.mbar.idx = prev_load(c, k, r->S, 0);
    w->u.mbar.idx = prev_load(c, k, r->S, 0);
    w->u.mbar.parity = prev_load(c, k, r->S, 1);
    g->u.cond.cond = tilec_ir_binary(c->a, TILEC_BIN_GE, tilec_ir_varref(c->a, (tilec_ir_var_t *)k), lower_int(c, 1));
    if (!arr->u.mbar.idx || !w->u.mbar.idx || !w->u.mbar.parity || !g->u.cond.cond ||
        lower_sattr_int(c, arr, "lower.cluster_arrive", CLUSTER) || lower_sattr_int(c, w, "lower.issuer", 1))
        return lower_oom(c);
    arr->next = w;
    g->u.cond.then = arr;
    /* after the last block barrier before the copies */
    tilec_ir_stmt_t **at = NULL;
    for (tilec_ir_stmt_t **l = &r->refill->u.cond.then; *l && (*l)->kind != TILEC_ST_COPY_ASYNC; l = &(*l)->next)
        if ((*l)->kind == TILEC_ST_BARRIER)
            at = &(*l)->next;
    g->next = *at;
    *at = g;
    return 0;
}

int lower_cluster(lower_ctx_t *c)
{
    const tilec_target_desc_t *t = c->t;
    tilec_ir_kernel_t *k = c->k;
    if (!tilec_target_field_ok(t, cluster_max) || t->cluster_max < CLUSTER ||
        !(t->barriers & TILEC_TARGET_BARRIER_OBJECT) || has_attr_deep(k->body, "lower.persistent", 0))
        return 0;
    ring_t r;
    if (!find_ring(c, &r))
        return 0;
    /* the dimension and the shared copy: the most bytes saved */
    int64_t panel = k->ngrid >= 2 ? swizzle_panel(k) : 0, best = 0;
    if (panel < 0)
        return 0;
    int bd = -1;
    const tilec_ir_buffer_t *X = NULL;
    for (int d = 0; d < k->ngrid && d < 2; d++) {
        int64_t g;
        if (!tilec_ir_is_const_int(k->grid[d], &g) || g % CLUSTER || g > 65535 || (panel && (d != 0 || panel % 2)) ||
            !same_schedule(c, &r, d))
            continue;
        for (const tilec_ir_stmt_t *s = r.refill->u.cond.then; s; s = s->next) {
            int64_t n = s->kind == TILEC_ST_COPY_ASYNC ? shareable(c, s, d) : 0;
            if (n > best) {
                best = n;
                bd = d;
                X = s->u.copy.dst.buf;
            }
        }
    }
    /* the prologue's copy of X must be shareable too (the same indices but the loop variable) */
    if (!X)
        return 0;
    for (const tilec_ir_stmt_t *s = r.pro->u.loop.body->u.cond.then; s; s = s->next)
        if (s->kind == TILEC_ST_COPY_ASYNC && s->u.copy.dst.buf == X && !shareable(c, s, bd))
            return 0;
    if (r.empty) {
        /* warp specialization's empty barriers: released by both blocks' consumers */
        r.empty->arrive = CLUSTER;
        if (lower_sattr_int(c, r.release, "lower.cluster_arrive", CLUSTER) ||
            lower_sattr_int(c, r.pwait, "lower.issuer", 1))
            return -1;
    } else {
        if (lower_smem_end(k) + lower_mbar_bytes(k) + 8 * (int64_t)r.S > (int64_t)t->smem_optin)
            return 0;
        tilec_ir_mbarrier_t *E = lower_mbar_new(c, r.loop->u.loop.var->name, "empty", r.S);
        tilec_ir_stmt_t *init = lower_stmt_at(c, TILEC_ST_MBAR_INIT, r.init);
        if (!E || !init)
            return -1;
        E->arrive = CLUSTER;
        init->u.mbar.bar = E;
        init->next = r.init->next;
        r.init->next = init;
        if (release(c, &r, E))
            return -1;
    }
    tilec_ir_stmt_t *end = lower_stmt_at(c, TILEC_ST_BARRIER, r.loop);
    if (!end)
        return -1;
    int64_t dims[3] = {1, 1, 1};
    dims[bd] = CLUSTER;
    if (lower_sattr_int(c, r.sync, "lower.cluster_sync", 1) || lower_sattr_int(c, end, "lower.cluster_sync", 1) ||
        lower_sattr_tuple(c, r.loop, "lower.cluster", dims, 3))
        return -1;
    if (split_in(c, r.pro->u.loop.body, X) || split_in(c, r.refill, X))
        return -1;
    tilec_ir_stmt_t **l = &k->body;
    while (*l)
        l = &(*l)->next;
    *l = end;
    return 0;
}
