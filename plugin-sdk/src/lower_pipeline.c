/*
 * plugin-sdk/src/lower_pipeline.c — T.Pipelined(n, num_stages=S) to an
 * S-stage ring of asynchronous copies, where the target has them.
 *
 * The leading copies of a pipelined loop body that move a global region
 * into a shared buffer of the same dtype, at indices computable for a
 * later iteration (no loads, no let variables), whose rows the target's
 * async copies can move (cp.async of 16, 8 or 4 bytes), and whose shared
 * buffer nothing outside the loop sees and nothing else in the loop
 * writes, go asynchronous.  Each such buffer of shape X becomes a ring
 * [S, X...], every access in the loop indexing stage k % S explicitly
 * (IR11 §D: gemm operands through a_lead/b_lead).  The loop becomes
 *
 *     for p in serial(S - 1):             prologue: stages 0..S-2
 *         if p < n: copy_async ring[p] <- src(k := p)
 *         async_commit
 *     for k in serial(n):                  steady state (lower.stages = S)
 *         if k + S - 1 < n: copy_async ring[(k + S - 1) % S] <- src(k := k + S - 1)
 *         async_commit
 *         async_wait S - 1                 iteration k's group has landed
 *         ...the rest of the body, on stage k % S...
 *     async_wait 0                         epilogue: nothing left pending
 *
 * Every iteration commits one group (empty past the end), so "all but the
 * newest S - 1" is always iteration k's.
 *
 * Late copies: a copy of the same kind further down the body whose buffer
 * no earlier statement of the body mentions (flash attention's V, loaded
 * after the softmax) joins the ring too: it leaves its place and is issued
 * with the leading copies, in the same group.
 *
 * An asynchronous MMA (a target instruction with TILEC_TARGET_MMA_ASYNC,
 * wgmma) that is the body's one gemm, reads both operands from this
 * loop's rings and accumulates into a register fragment nothing else in
 * the loop touches, may complete one iteration late: the tensor cores
 * work on iteration k while the threads wait for k + 1's copies.  Then
 * the refill moves behind the body, into the stage that iteration k - 1
 * read, and the gemm gets lower.mma_wait = 1 (after issuing, wait until
 * at most one MMA group is in flight, so k - 1's has finished):
 *
 *     for k in serial(n):
 *         async_wait S - 2                 iteration k's group has landed
 *         ...the body; gemm ... attrs {lower.mma_wait = 1}
 *         if k + S - 1 < n: copy_async ring[(k + S - 1) % S] <- ...
 *         async_commit
 *
 * (the barrier pass then puts a barrier before the gemm and one before
 * the refill), and the dialect waits for every MMA group after the loop.
 *
 * The trip count n may be computed at run time (causal attention's
 * min(blocks, diagonal block + 1) held in a let variable): it must only
 * not depend on anything the loop changes (no loads, no let variable the
 * body assigns), as the prologue and the refills compare against it.
 *
 * A ring whose copy wrote all of its buffer says lower.stage_fill = 1:
 * every stage is written whole before the iteration that reads it, so
 * the smem pass need not zero it at kernel entry (the copy's buffer was
 * private to the loop and first touched by the copy in each iteration).
 *
 * S is capped by the target's max_stages and lowered while the rings
 * would not fit its shared memory.
 * The interpreter executes the copies as pending until their wait, so a
 * wrong schedule fails the lowering check instead of passing by luck.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

#define MAX_RING 32 /* async copies one loop may turn into rings */

static int chunk_bytes(const lower_ctx_t *c, const tilec_ir_stmt_t *cp)
{
    const tilec_ir_region_t *src = &cp->u.copy.src, *dst = &cp->u.copy.dst;
    size_t es = tilec_dtype_size(dst->buf->dtype);
    int64_t row = dst->extent[dst->buf->ndim - 1] * (int64_t)es;
    int64_t pitch = lower_dim(dst->buf, dst->buf->ndim - 1) * (int64_t)es;
    if (src->extent[src->buf->ndim - 1] != dst->extent[dst->buf->ndim - 1])
        return 0; /* the rows of both sides must run along the last dimension */
    static const struct { uint32_t bit; int bytes; } kinds[] = {
        {TILEC_TARGET_ASYNC_CP16, 16}, {TILEC_TARGET_ASYNC_CP8, 8}, {TILEC_TARGET_ASYNC_CP4, 4}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((c->t->async_copy & kinds[i].bit) && (int64_t)es <= kinds[i].bytes &&
            row % kinds[i].bytes == 0 && pitch > 0 && pitch % kinds[i].bytes == 0)
            return kinds[i].bytes;
    return 0;
}

typedef struct count_q {
    const tilec_ir_buffer_t *b;
    int n, bad_reader;
} count_q_t;

static void count_cb(void *user, tilec_ir_stmt_t *s, tilec_ir_buffer_t *b, int how)
{
    count_q_t *q = user;
    if (b != q->b)
        return;
    q->n++;
    if ((how & LOWER_READ) &&
        (s->kind == TILEC_ST_REDUCE || s->kind == TILEC_ST_CUMSUM || s->kind == TILEC_ST_PRINT))
        q->bad_reader = 1; /* whole-buffer readers cannot take a stage index */
}

static int count_uses(tilec_ir_stmt_t *list, const tilec_ir_buffer_t *b, int *bad_reader)
{
    count_q_t q = {b, 0, 0};
    for (tilec_ir_stmt_t *s = list; s; s = s->next)
        lower_accesses(s, count_cb, &q);
    if (bad_reader)
        *bad_reader = q.bad_reader;
    return q.n;
}

/* A gathered copy (lower_gather.c): a T.Parallel nest filling a shared
 * buffer from a tensor in vectors, which goes asynchronous as a copy does.
 * The bytes of one of its vectors that an async copy kind moves, or 0. */
static int gather_chunk(const lower_ctx_t *c, const tilec_ir_stmt_t *nest, lower_gather_form_t *f)
{
    static const struct { uint32_t bit; int bytes; } kinds[] = {
        {TILEC_TARGET_ASYNC_CP16, 16}, {TILEC_TARGET_ASYNC_CP8, 8}, {TILEC_TARGET_ASYNC_CP4, 4}};
    if (nest->kind != TILEC_ST_FOR)
        return 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (!(c->t->async_copy & kinds[i].bit))
            continue;
        int w = lower_gather_width(nest, kinds[i].bytes, f);
        if (w && (int64_t)w * (int64_t)tilec_dtype_size(f->store->u.store.buf->dtype) == kinds[i].bytes)
            return kinds[i].bytes;
    }
    return 0;
}

/* the shared buffer an async-capable copy or gather fills */
static tilec_ir_buffer_t *fill_dst(const tilec_ir_stmt_t *cp)
{
    lower_gather_form_t f;
    if (cp->kind == TILEC_ST_FOR) {
        const tilec_ir_stmt_t *in = lower_gather_inner((tilec_ir_stmt_t *)cp);
        return in && lower_gather_form(in->u.loop.body, &f) ? f.store->u.store.buf : NULL;
    }
    return cp->u.copy.dst.buf;
}

static int gather_pure(const lower_gather_form_t *f)
{
    const tilec_ir_buffer_t *S = f->store->u.store.buf, *G = f->load->u.load.buf;
    if (f->cond && !lower_expr_pure(f->cond))
        return 0;
    for (int i = 0; i < f->nsel; i++)
        if (!lower_expr_pure(f->sel[i]))
            return 0;
    for (int d = 0; d < S->ndim; d++)
        if (!lower_expr_pure(f->store->u.store.idx[d]))
            return 0;
    for (int d = 0; d < G->ndim; d++)
        if (!lower_expr_pure(f->load->u.load.idx[d]))
            return 0;
    return 1;
}

static int async_ok(const lower_ctx_t *c, tilec_ir_stmt_t *loop, tilec_ir_stmt_t *cp)
{
    const tilec_ir_buffer_t *sbuf, *dbuf;
    if (cp->kind == TILEC_ST_FOR) {
        lower_gather_form_t f;
        if (!gather_chunk(c, cp, &f) || !gather_pure(&f))
            return 0;
        sbuf = f.load->u.load.buf;
        dbuf = f.store->u.store.buf;
        if (tilec_ir_buffer_const_size(dbuf) < 1 || dbuf->ndim + 1 > TILEC_IR_MAX_DIMS)
            return 0;
    } else {
        if (cp->kind != TILEC_ST_COPY)
            return 0;
        const tilec_ir_region_t *src = &cp->u.copy.src, *dst = &cp->u.copy.dst;
        if (src->buf->scope != TILEC_SCOPE_GLOBAL || dst->buf->scope != TILEC_SCOPE_SHARED ||
            src->buf->dtype != dst->buf->dtype || tilec_ir_buffer_const_size(dst->buf) < 1 ||
            dst->buf->ndim + 1 > TILEC_IR_MAX_DIMS || !chunk_bytes(c, cp))
            return 0;
        for (int d = 0; d < src->buf->ndim; d++)
            if (!lower_expr_pure(src->base[d]))
                return 0;
        for (int d = 0; d < dst->buf->ndim; d++)
            if (!lower_expr_pure(dst->base[d]))
                return 0;
        sbuf = src->buf;
        dbuf = dst->buf;
    }
    int bad = 0;
    tilec_ir_stmt_t one = *loop;
    one.next = NULL;
    if (count_uses(c->k->body, dbuf, NULL) != count_uses(&one, dbuf, &bad) || bad)
        return 0;
    for (tilec_ir_stmt_t *t = loop->u.loop.body; t; t = t->next)
        if (t != cp && (lower_uses(t, dbuf) & LOWER_WRITE))
            return 0;
    if (lower_uses_list(loop->u.loop.body, sbuf) & LOWER_WRITE)
        return 0;
    return 1;
}

/* ---- rewriting accesses of the rings ---------------------------------------------- */

typedef struct ring_rw {
    lower_ctx_t *c;
    tilec_ir_buffer_t **ring;
    int nring;
    const tilec_ir_var_t *k;
    int S;
} ring_rw_t;

static int is_ring(const ring_rw_t *r, const tilec_ir_buffer_t *b)
{
    for (int i = 0; i < r->nring; i++)
        if (r->ring[i] == b)
            return 1;
    return 0;
}

static tilec_ir_expr_t *stage(ring_rw_t *r)
{
    lower_ctx_t *c = r->c;
    tilec_ir_expr_t *v = tilec_ir_varref(c->a, (tilec_ir_var_t *)r->k);
    return v ? lower_opi(c, TILEC_BIN_FLOORMOD, v, r->S) : (lower_oom(c), NULL);
}

/* [st, old...] */
static tilec_ir_expr_t **prepend(lower_ctx_t *c, tilec_ir_expr_t *st, tilec_ir_expr_t **old, int n)
{
    tilec_ir_expr_t **v = tilec_arena_alloc(c->a, sizeof *v * (size_t)(n + 1));
    if (!v || !st) {
        lower_oom(c);
        return NULL;
    }
    v[0] = st;
    for (int d = 0; d < n; d++)
        v[d + 1] = old[d];
    return v;
}

/* a region of ring buffer b (already of rank n + 1) at stage st */
static int ring_region(lower_ctx_t *c, tilec_ir_region_t *r, tilec_ir_expr_t *st)
{
    int n = r->buf->ndim - 1;
    int64_t *ext = tilec_arena_alloc(c->a, sizeof *ext * (size_t)(n + 1));
    tilec_ir_expr_t **base = prepend(c, st, r->base, n);
    if (!ext || !base)
        return lower_oom(c);
    ext[0] = 1;
    memcpy(ext + 1, r->extent, sizeof *ext * (size_t)n);
    r->base = base;
    r->extent = ext;
    return 0;
}

static int rw_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    ring_rw_t *r = w->user;
    if (e->kind == TILEC_EX_LOAD && is_ring(r, e->u.load.buf)) {
        tilec_ir_expr_t **idx = prepend(r->c, stage(r), e->u.load.idx, e->u.load.buf->ndim - 1);
        if (!idx)
            return -1;
        e->u.load.idx = idx;
        /* the walker goes on into the new indices (the stage has no loads) */
    }
    return TILEC_WALK_CONTINUE;
}

static int rw_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    ring_rw_t *r = w->user;
    lower_ctx_t *c = r->c;
    switch (s->kind) {
    case TILEC_ST_COPY:
        if (is_ring(r, s->u.copy.src.buf) && ring_region(c, &s->u.copy.src, stage(r)))
            return -1;
        if (is_ring(r, s->u.copy.dst.buf) && ring_region(c, &s->u.copy.dst, stage(r)))
            return -1;
        break;
    case TILEC_ST_GEMM:
        if (is_ring(r, s->u.gemm.a) && !(s->u.gemm.a_lead = prepend(c, stage(r), NULL, 0)))
            return -1;
        if (is_ring(r, s->u.gemm.b) && !(s->u.gemm.b_lead = prepend(c, stage(r), NULL, 0)))
            return -1;
        break;
    default:
        break;
    }
    return TILEC_WALK_CONTINUE;
}

/* ---- building the schedule ------------------------------------------------------- */

static tilec_ir_stmt_t *mk(lower_ctx_t *c, tilec_stmt_kind_t kind)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(c->a, kind);
    if (!s)
        lower_oom(c);
    return s;
}

/* copy_async ring[st] <- src with k := at, from the original copy */
static tilec_ir_stmt_t *issue(lower_ctx_t *c, const tilec_ir_stmt_t *cp, tilec_ir_buffer_t *ring,
                              const tilec_ir_var_t *k, tilec_ir_expr_t *at, int S, int chunk)
{
    if (cp->kind == TILEC_ST_FOR) {
        tilec_ir_stmt_t *g = lower_gather_issue(c, cp, ring, k, at, lower_opi(c, TILEC_BIN_FLOORMOD, at, S));
        if (!g || lower_sattr_int(c, lower_gather_inner(g), "lower.vector", chunk / (int)tilec_dtype_size(ring->dtype)))
            return NULL;
        return g;
    }
    tilec_ir_stmt_t *s = mk(c, TILEC_ST_COPY_ASYNC);
    if (!s)
        return NULL;
    s->line = cp->line;
    s->col = cp->col;
    s->u.copy = cp->u.copy;
    const tilec_ir_region_t *src = &cp->u.copy.src;
    tilec_ir_expr_t **base = tilec_arena_alloc(c->a, sizeof *base * (size_t)src->buf->ndim);
    if (!base) {
        lower_oom(c);
        return NULL;
    }
    for (int d = 0; d < src->buf->ndim; d++)
        if (!(base[d] = lower_subst(c, src->base[d], k, at)))
            return NULL;
    s->u.copy.src.base = base;
    s->u.copy.dst.buf = ring;
    if (ring_region(c, &s->u.copy.dst, lower_opi(c, TILEC_BIN_FLOORMOD, at, S)))
        return NULL;
    if (lower_sattr_int(c, s, "lower.vector", chunk / (int)tilec_dtype_size(ring->dtype)))
        return NULL;
    return s;
}


static int64_t smem_total(const lower_ctx_t *c)
{
    int64_t total = 0;
    for (int i = c->k->nparams; i < c->k->nbufs; i++) {
        const tilec_ir_buffer_t *b = c->k->bufs[i];
        int64_t n = tilec_ir_buffer_const_size(b);
        if ((b->scope == TILEC_SCOPE_SHARED || (b->scope == TILEC_SCOPE_FRAGMENT && !b->layout)) && n > 0)
            total += n * (int64_t)tilec_dtype_size(b->dtype) + c->t->smem_align;
    }
    return total;
}

/* The body's one gemm when it may complete an iteration late (above):
 * an async MMA of the target, both operands among rings[0..n), its
 * accumulator a register fragment the rest of the loop leaves alone. */
static tilec_ir_stmt_t *deferrable_mma(const lower_ctx_t *c, tilec_ir_stmt_t *rest,
                                       tilec_ir_buffer_t *const *rings, int n)
{
    tilec_ir_stmt_t *g = NULL;
    for (tilec_ir_stmt_t *s = rest; s; s = s->next)
        if (s->kind == TILEC_ST_GEMM) {
            if (g)
                return NULL;
            g = s;
        }
    const tilec_target_mma_t *mma = g ? lower_gemm_mma(c, g) : NULL;
    const tilec_ir_buffer_t *acc = g ? g->u.gemm.c : NULL;
    if (!mma || !(mma->flags & TILEC_TARGET_MMA_ASYNC) || !acc->layout ||
        acc->layout->kind != TILEC_LAYOUT_REGS || g->u.gemm.a == g->u.gemm.b)
        return NULL;
    int ha = 0, hb = 0;
    for (int i = 0; i < n; i++) {
        ha |= rings[i] == g->u.gemm.a;
        hb |= rings[i] == g->u.gemm.b;
    }
    if (!ha || !hb)
        return NULL;
    for (tilec_ir_stmt_t *s = rest; s; s = s->next)
        if (s != g && lower_uses(s, acc))
            return NULL;
    return g;
}

/* rewrites pipelined loop *link (n leading async copies): 1, or 0 when
 * it stays as it is (no room for two stages), or -1 */
static int pipeline(lower_ctx_t *c, tilec_ir_stmt_t **link, tilec_ir_stmt_t *const *cps, int nlead, int n)
{
    tilec_ir_stmt_t *loop = *link;
    int S = loop->u.loop.num_stages;
    if (c->t->max_stages > 0 && S > c->t->max_stages)
        S = c->t->max_stages;
    int64_t ring_bytes = 0, total = smem_total(c);
    for (int i = 0; i < n; i++)
        ring_bytes += tilec_ir_buffer_const_size(fill_dst(cps[i])) * (int64_t)tilec_dtype_size(fill_dst(cps[i])->dtype);
    while (S >= 2 && total + (S - 1) * ring_bytes > (int64_t)c->t->smem_optin)
        S--;
    if (S < 2 || !lower_expr_invariant(loop->u.loop.extent, loop->u.loop.body))
        return 0;
    tilec_ir_buffer_t *rings[MAX_RING];
    int chunks[MAX_RING];
    /* the buffers become rings [S, ...] */
    for (int i = 0; i < n; i++) {
        tilec_ir_buffer_t *b = fill_dst(cps[i]);
        lower_gather_form_t f;
        chunks[i] = cps[i]->kind == TILEC_ST_FOR ? gather_chunk(c, cps[i], &f) : chunk_bytes(c, cps[i]);
        rings[i] = b;
        /* the copy wrote all of b before anything in iteration k read it:
         * each stage is then written whole before its iteration reads it */
        int whole = lower_full_overwrite(cps[i], b);
        tilec_ir_expr_t **shape = prepend(c, lower_int(c, S), b->shape, b->ndim);
        if (!shape)
            return -1;
        b->shape = shape;
        b->ndim++;
        if (lower_battr_int(c, b, "lower.stages", S) || (whole && lower_battr_int(c, b, "lower.stage_fill", 1)))
            return -1;
    }
    const tilec_ir_var_t *k = loop->u.loop.var;
    /* the body after the leading async copies, without the late ones */
    tilec_ir_stmt_t *rest = cps[nlead - 1]->next;
    for (int i = nlead; i < n; i++)
        for (tilec_ir_stmt_t **l = &rest; *l; l = &(*l)->next)
            if (*l == cps[i]) {
                *l = cps[i]->next;
                break;
            }
    /* prologue */
    tilec_ir_var_t *p = lower_new_loop_var(c, "_pro", k->name);
    tilec_ir_stmt_t *pro = mk(c, TILEC_ST_FOR), *pif = mk(c, TILEC_ST_IF), *pcommit = mk(c, TILEC_ST_ASYNC_COMMIT);
    if (!p || !pro || !pif || !pcommit)
        return -1;
    pro->u.loop.var = p;
    pro->u.loop.kind = TILEC_LOOP_SERIAL;
    pro->u.loop.extent = lower_int(c, S - 1);
    pro->u.loop.body = pif;
    pif->next = pcommit;
    pif->u.cond.cond = tilec_ir_binary(c->a, TILEC_BIN_LT, tilec_ir_varref(c->a, p),
                                       lower_subst(c, loop->u.loop.extent, NULL, NULL));
    /* steady state head */
    tilec_ir_stmt_t *sif = mk(c, TILEC_ST_IF), *scommit = mk(c, TILEC_ST_ASYNC_COMMIT),
                    *swait = mk(c, TILEC_ST_ASYNC_WAIT), *epi = mk(c, TILEC_ST_ASYNC_WAIT);
    if (!sif || !scommit || !swait || !epi || !pif->u.cond.cond)
        return lower_oom(c);
    tilec_ir_expr_t *ahead = lower_opi(c, TILEC_BIN_ADD, tilec_ir_varref(c->a, (tilec_ir_var_t *)k), S - 1);
    sif->u.cond.cond = tilec_ir_binary(c->a, TILEC_BIN_LT, ahead,
                                       lower_subst(c, loop->u.loop.extent, NULL, NULL));
    if (!sif->u.cond.cond)
        return lower_oom(c);
    tilec_ir_stmt_t **ptail = &pif->u.cond.then, **stail = &sif->u.cond.then;
    for (int i = 0; i < n; i++) {
        tilec_ir_expr_t *pv = tilec_ir_varref(c->a, p);
        tilec_ir_stmt_t *a = issue(c, cps[i], rings[i], k, pv, S, chunks[i]);
        tilec_ir_stmt_t *b = issue(c, cps[i], rings[i], k, ahead, S, chunks[i]);
        if (!a || !b)
            return -1;
        *ptail = a;
        ptail = &a->next;
        *stail = b;
        stail = &b->next;
    }
    epi->u.wait.n = 0;
    /* the rest of the body reads stage k % S */
    ring_rw_t r = {c, rings, n, k, S};
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = rw_stmt;
    w.expr_pre = rw_expr;
    w.user = &r;
    if (tilec_ir_walk_block(&w, &rest) < 0)
        return c->code != TILEC_LOWER_OK ? -1 : lower_oom(c);
    tilec_ir_stmt_t *defer = deferrable_mma(c, rest, rings, n);
    if (defer) {
        /* wait, body, refill the freed stage, commit */
        if (lower_sattr_int(c, defer, "lower.mma_wait", 1))
            return -1;
        swait->u.wait.n = S - 2;
        swait->next = rest;
        tilec_ir_stmt_t *t = rest;
        while (t->next)
            t = t->next;
        t->next = sif;
        sif->next = scommit;
        scommit->next = NULL;
    } else {
        sif->next = scommit;
        scommit->next = swait;
        swait->u.wait.n = S - 1;
        swait->next = rest;
    }
    loop->u.loop.body = defer ? swait : sif;
    loop->u.loop.kind = TILEC_LOOP_SERIAL;
    if (lower_sattr_int(c, loop, "lower.stages", S))
        return -1;
    /* splice: prologue, loop, epilogue */
    epi->next = loop->next;
    loop->next = epi;
    pro->next = loop;
    *link = pro;
    return 1;
}

/* The copies of a pipelined loop that go asynchronous, in body order:
 * the leading ones (*nlead), then the late ones, later top-level copies
 * whose buffer no earlier statement of the body mentions (flash
 * attention's V): every use of that buffer in iteration k follows the
 * copy, so it may land with the leading ones, S - 1 iterations ahead,
 * instead of stalling the body where it stands.  Returns their number. */
static int ring_copies(const lower_ctx_t *c, tilec_ir_stmt_t *loop, tilec_ir_stmt_t **cps, int *nlead)
{
    *nlead = 0;
    if (loop->u.loop.kind != TILEC_LOOP_PIPELINED || loop->u.loop.num_stages < 2)
        return 0;
    int n = 0;
    tilec_ir_stmt_t *cp = loop->u.loop.body;
    for (; cp && n < MAX_RING && async_ok(c, loop, cp); cp = cp->next)
        cps[n++] = cp;
    if (!cp || n == 0)
        return 0; /* something must follow the copies */
    *nlead = n;
    for (tilec_ir_stmt_t *t = cp; t && n < MAX_RING; t = t->next) {
        if (!async_ok(c, loop, t))
            continue;
        int early = 0;
        for (tilec_ir_stmt_t *u = loop->u.loop.body; u != t && !early; u = u->next)
            early = lower_uses(u, fill_dst(t)) != 0;
        if (!early)
            cps[n++] = t;
    }
    return n;
}

/* pipelined loops in uniform code, in place */
static int walk_list(lower_ctx_t *c, tilec_ir_stmt_t **link, int depth)
{
    if (depth > TILEC_IR_MAX_DEPTH)
        return lower_fail(c, TILEC_LOWER_E_INVALID, "statements nested too deeply");
    while (*link) {
        tilec_ir_stmt_t *s = *link;
        if (s->kind == TILEC_ST_FOR && s->u.loop.kind != TILEC_LOOP_PARALLEL) {
            if (walk_list(c, &s->u.loop.body, depth + 1))
                return -1;
            tilec_ir_stmt_t *cps[MAX_RING];
            int nlead = 0, n = ring_copies(c, s, cps, &nlead);
            int rc = n > 0 ? pipeline(c, link, cps, nlead, n) : 0;
            if (rc < 0)
                return -1;
            if (rc > 0) {
                /* *link is the prologue now: step over prologue, loop, epilogue */
                link = &(*link)->next->next->next;
                continue;
            }
        } else if (s->kind == TILEC_ST_IF) {
            if (walk_list(c, &s->u.cond.then, depth + 1) || walk_list(c, &s->u.cond.els, depth + 1))
                return -1;
        }
        link = &s->next;
    }
    return 0;
}

int lower_pipeline(lower_ctx_t *c)
{
    if (!(c->t->async_copy & (TILEC_TARGET_ASYNC_CP4 | TILEC_TARGET_ASYNC_CP8 | TILEC_TARGET_ASYNC_CP16)))
        return 0;
    return walk_list(c, &c->k->body, 0);
}
