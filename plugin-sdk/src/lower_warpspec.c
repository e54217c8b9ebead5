/*
 * plugin-sdk/src/lower_warpspec.c — warp specialization: one warpgroup of
 * its own issues the bulk copies of a ring on barrier objects (the
 * producer), the block's threads compute on what lands (the consumers).
 *
 * On a target with TILEC_TARGET_WARP_SPECIALIZE, a pipelined loop at the
 * top of the kernel body that the tma pass put on mbarriers
 *
 *     for k in serial(n) attrs {lower.stages = S} {
 *         barrier_wait F[k % S], (k / S) % 2
 *         gemm ...                           (and only gemms on MMA instructions)
 *         if (k + S - 1 < n) {               the refill of the stage k - 1 read
 *             barrier_arrive F[(k + S - 1) % S] expect_tx BYTES
 *             barrier                        (the block barrier before the refill)
 *             copy_async ring[(k + S - 1) % S] <- ... mbarrier F[...]
 *         }
 *     }
 *
 * (or with the refill first, the schedule without the wgmma deferral)
 * becomes, with a second barrier array E ("empty": a stage's readers are
 * done with it) initialized beside F:
 *
 *     for k in serial(n) attrs {lower.stages = S, lower.warpspec = (T, P)} {
 *         barrier_wait F[k % S], (k / S) % 2
 *         gemm ...
 *         if (k >= 1) { barrier_arrive E[(k - 1) % S] }     stage of iteration k - 1 released
 *         if (k + S - 1 < n) attrs {lower.producer = 1} {
 *             if (k >= 1) { barrier_wait E[(k - 1) % S], ((k - 1) / S) % 2 }
 *             barrier_arrive F[(k + S - 1) % S] expect_tx BYTES
 *             copy_async ...
 *         }
 *     }
 *
 * and the block grows by P = 128 threads (threads T + P).  The release
 * names iteration k - d, d = 1 when the gemm's wait is deferred by one
 * iteration (lower.mma_wait: the stage read in iteration k - 1 is free
 * once iteration k's wait returns), placed before the refill; d = 0
 * releases stage k at the end of the body.  The refill of the stage of
 * load k + S - 1 waits for the release of its previous load k - 1.
 *
 * What this means to a printer: threads [T, T + P) run the loop with only
 * the statements marked lower.producer (their arrivals and copies from
 * one thread), threads [0, T) run it without them; the two meet only at
 * the barrier objects, so neither waits for the other at a block barrier
 * and the producer runs up to S - 1 loads ahead.  Everything outside the
 * loop is the whole block's as before: register fragments keep their
 * layouts over threads [0, T), so the added threads hold none of their
 * elements.  Run in program order, as the interpreter runs it, the
 * schedule is one interleaving of the two roles: every wait finds its
 * phase complete, and a wrong parity or a missing release fails there.
 *
 * With TILEC_TARGET_WARP_SPECIALIZE_REGS the body may also hold
 * statements on register fragments only between the gemms (attention's
 * softmax: stores, copies, fills, reductions within a subgroup or a
 * thread, T.Parallel nests run by the register owners), which the
 * consumers alone hold and run; TILEC_TARGET_WARP_SPECIALIZE alone takes
 * loops of gemms only.  The trip count and the refill's condition may
 * read let variables assigned before the loop (causal attention's
 * loop_range): every thread computes them.
 *
 * The loop is left alone when anything else is in its body (another
 * statement could need all T + P threads, or a block barrier the
 * producer would never reach), when the block cannot grow by P threads,
 * or when shared memory has no room for S more barriers.
 */
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"

#define WS_PRODUCER 128 /* one warpgroup */

typedef struct ws_loop {
    tilec_ir_stmt_t *loop, *wait, *refill;
    tilec_ir_mbarrier_t *full;
    int S, defer;
} ws_loop_t;

/* a gemm on one of the target's MMA instructions, its groups within the block */
static int consumer_gemm(const lower_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_target_mma_t *mma = s->kind == TILEC_ST_GEMM ? lower_gemm_mma(c, s) : NULL;
    const tilec_ir_attr_t *w = mma ? lower_sattr(s, "lower.warp") : NULL;
    if (!w || w->kind != TILEC_ATTR_TUPLE || w->n != 2)
        return 0;
    return w->tuple[0] * w->tuple[1] * mma->threads <= c->nthreads;
}

/* one buffer access of a consumer statement: register fragments only */
static void regs_only(void *user, tilec_ir_stmt_t *s, tilec_ir_buffer_t *b, int how)
{
    (void)s;
    (void)how;
    if (!b->layout || b->layout->kind != TILEC_LAYOUT_REGS)
        *(int *)user = 0;
}

/* statements the consumers can run alone: nothing that synchronizes or
 * copies asynchronously, no let assignments (the producer would not see
 * them), no nested gemms, reductions within a subgroup or a thread, and
 * T.Parallel nests run by the register owners */
static int consumer_nest(const tilec_ir_stmt_t *s, int depth)
{
    if (depth > 64)
        return 0;
    for (; s; s = s->next) {
        const tilec_ir_attr_t *a;
        switch (s->kind) {
        case TILEC_ST_STORE: case TILEC_ST_COPY: case TILEC_ST_FILL:
            break;
        case TILEC_ST_REDUCE:
            a = lower_sattr(s, "lower.reduce");
            if (!a || a->kind != TILEC_ATTR_STRING || strcmp(a->s, "block") == 0)
                return 0;
            break;
        case TILEC_ST_FOR:
            a = lower_sattr(s, "lower.dist");
            if (s->u.loop.kind == TILEC_LOOP_PARALLEL && depth == 0 &&
                (!a || a->kind != TILEC_ATTR_STRING || strcmp(a->s, "regs") != 0))
                return 0;
            if (!consumer_nest(s->u.loop.body, depth + 1))
                return 0;
            break;
        case TILEC_ST_IF:
            if (!consumer_nest(s->u.cond.then, depth + 1) || !consumer_nest(s->u.cond.els, depth + 1))
                return 0;
            break;
        default:
            return 0;
        }
        if (!depth)
            break; /* the caller walks the top-level list */
    }
    return 1;
}

/* a statement between the gemms (attention's softmax): it touches register
 * fragments only, which the consumers [0, T) hold */
static int consumer_stmt(tilec_ir_stmt_t *s)
{
    int ok = consumer_nest(s, 0);
    return ok && lower_accesses(s, regs_only, &ok) == 0 && ok;
}

/* the refill `if` (its condition the same for every thread): an expecting
 * arrival on F, block barriers, copies on F */
static int is_refill(tilec_ir_stmt_t *s, const tilec_ir_mbarrier_t *F, tilec_ir_stmt_t *body)
{
    if (!s || s->kind != TILEC_ST_IF || s->u.cond.els || !lower_expr_invariant(s->u.cond.cond, body))
        return 0;
    const tilec_ir_stmt_t *t = s->u.cond.then;
    if (!t || t->kind != TILEC_ST_MBAR_ARRIVE || t->u.mbar.bar != F || !t->u.mbar.tx)
        return 0;
    int ncopies = 0;
    for (t = t->next; t; t = t->next) {
        if (t->kind == TILEC_ST_BARRIER)
            continue;
        if (t->kind != TILEC_ST_COPY_ASYNC || t->u.copy.bar != F || !lower_sattr(t, "lower.tma"))
            return 0;
        ncopies++;
    }
    return ncopies > 0;
}

/* loop s fits the form above: 1 with *w filled, else 0 */
static int fits(const lower_ctx_t *c, tilec_ir_stmt_t *s, ws_loop_t *w)
{
    const tilec_ir_attr_t *sa = s->kind == TILEC_ST_FOR ? lower_sattr(s, "lower.stages") : NULL;
    if (!sa || sa->kind != TILEC_ATTR_INT || s->u.loop.kind != TILEC_LOOP_SERIAL || sa->i < 2 ||
        lower_sattr(s, "lower.warpspec") || !lower_expr_invariant(s->u.loop.extent, s->u.loop.body))
        return 0;
    memset(w, 0, sizeof *w);
    w->loop = s;
    w->S = (int)sa->i;
    const tilec_ir_var_t *k = s->u.loop.var;
    int ngemm = 0, nregs = 0;
    for (tilec_ir_stmt_t *t = s->u.loop.body; t; t = t->next) {
        if (t->kind == TILEC_ST_MBAR_WAIT && !w->wait) {
            w->wait = t;
            w->full = t->u.mbar.bar;
            w->defer = w->refill == NULL;
        } else if (t->kind == TILEC_ST_IF && !w->refill && t->u.cond.then &&
                   t->u.cond.then->kind == TILEC_ST_MBAR_ARRIVE) {
            w->refill = t;
        } else if (consumer_gemm(c, t)) {
            ngemm++;
        } else if (consumer_stmt(t)) {
            nregs++;
        } else {
            return 0;
        }
    }
    if (!(c->t->flags & (nregs ? TILEC_TARGET_WARP_SPECIALIZE_REGS : TILEC_TARGET_WARP_SPECIALIZE)))
        return 0;
    if (!w->wait || !w->refill || !ngemm || !is_refill(w->refill, w->full, s->u.loop.body) ||
        !lower_is_fn_of_k(w->wait->u.mbar.idx, k, w->S, lower_ring_stage) || !lower_is_fn_of_k(w->wait->u.mbar.parity, k, w->S, lower_ring_parity))
        return 0;
    /* every copy refills the stage of load k + S - 1 */
    for (const tilec_ir_stmt_t *t = w->refill->u.cond.then->next; t; t = t->next)
        if (t->kind == TILEC_ST_COPY_ASYNC &&
            (!lower_is_fn_of_k(t->u.copy.bar_idx, k, w->S, lower_ring_ahead) || !lower_is_fn_of_k(t->u.copy.dst.base[0], k, w->S, lower_ring_ahead)))
            return 0;
    if (!lower_is_fn_of_k(w->refill->u.cond.then->u.mbar.idx, k, w->S, lower_ring_ahead))
        return 0;
    /* the deferral releases the previous stage: the gemms wait one group late */
    for (tilec_ir_stmt_t *t = s->u.loop.body; t; t = t->next)
        if (t->kind == TILEC_ST_GEMM && (lower_sattr(t, "lower.mma_wait") != NULL) != w->defer)
            return 0;
    return 1;
}

static tilec_ir_expr_t *kref(lower_ctx_t *c, const tilec_ir_var_t *k)
{
    tilec_ir_expr_t *e = tilec_ir_varref(c->a, (tilec_ir_var_t *)k);
    if (!e)
        lower_oom(c);
    return e;
}

/* if (k >= 1) { s } */
static tilec_ir_stmt_t *after_first(lower_ctx_t *c, const tilec_ir_var_t *k, tilec_ir_stmt_t *s, tilec_ir_stmt_t *at)
{
    tilec_ir_stmt_t *g = lower_stmt_at(c, TILEC_ST_IF, at);
    tilec_ir_expr_t *kv = kref(c, k), *one = lower_int(c, 1);
    if (!g || !kv || !one || !(g->u.cond.cond = tilec_ir_binary(c->a, TILEC_BIN_GE, kv, one))) {
        lower_oom(c);
        return NULL;
    }
    g->u.cond.then = s;
    return g;
}

static int rewrite(lower_ctx_t *c, ws_loop_t *w, tilec_ir_stmt_t *init_f)
{
    tilec_ir_stmt_t *L = w->loop;
    const tilec_ir_var_t *k = L->u.loop.var;
    int S = w->S;
    tilec_ir_mbarrier_t *E = lower_mbar_new(c, k->name, "empty", S);
    if (!E)
        return -1;
    /* barrier_init E beside F's */
    tilec_ir_stmt_t *init = lower_stmt_at(c, TILEC_ST_MBAR_INIT, init_f);
    if (!init)
        return -1;
    init->u.mbar.bar = E;
    init->next = init_f->next;
    init_f->next = init;
    /* the consumers' release of the stage of iteration k - d */
    tilec_ir_stmt_t *rel = lower_stmt_at(c, TILEC_ST_MBAR_ARRIVE, w->wait);
    if (!rel)
        return -1;
    rel->u.mbar.bar = E;
    rel->u.mbar.idx = lower_opi(c, TILEC_BIN_FLOORMOD, lower_opi(c, TILEC_BIN_SUB, kref(c, k), w->defer), S);
    if (!rel->u.mbar.idx)
        return lower_oom(c);
    if (w->defer && !(rel = after_first(c, k, rel, w->wait)))
        return -1;
    /* the producer's wait for the release of load k - 1 */
    tilec_ir_stmt_t *pw = lower_stmt_at(c, TILEC_ST_MBAR_WAIT, w->refill);
    if (!pw)
        return -1;
    pw->u.mbar.bar = E;
    pw->u.mbar.idx = lower_opi(c, TILEC_BIN_FLOORMOD, lower_opi(c, TILEC_BIN_SUB, kref(c, k), 1), S);
    pw->u.mbar.parity = lower_opi(
        c, TILEC_BIN_FLOORMOD, lower_opi(c, TILEC_BIN_FLOORDIV, lower_opi(c, TILEC_BIN_SUB, kref(c, k), 1), S), 2);
    if (!pw->u.mbar.idx || !pw->u.mbar.parity)
        return lower_oom(c);
    tilec_ir_stmt_t *pg = after_first(c, k, pw, w->refill);
    if (!pg)
        return -1;
    /* the refill: the wait first, its block barriers go */
    tilec_ir_stmt_t **l = &w->refill->u.cond.then;
    while (*l) {
        if ((*l)->kind == TILEC_ST_BARRIER)
            *l = (*l)->next;
        else
            l = &(*l)->next;
    }
    pg->next = w->refill->u.cond.then;
    w->refill->u.cond.then = pg;
    if (lower_sattr_int(c, w->refill, "lower.producer", 1))
        return -1;
    /* place the release: before the refill (deferred) or at the end */
    for (l = &L->u.loop.body; *l && (!w->defer || *l != w->refill); l = &(*l)->next)
        ;
    rel->next = *l;
    *l = rel;
    int64_t ws[2] = {c->nthreads, WS_PRODUCER};
    if (lower_sattr_tuple(c, L, "lower.warpspec", ws, 2))
        return -1;
    c->k->threads[0] += WS_PRODUCER;
    c->nthreads += WS_PRODUCER;
    return 0;
}

int lower_warpspec(lower_ctx_t *c)
{
    const tilec_target_desc_t *t = c->t;
    tilec_ir_kernel_t *k = c->k;
    if (!(t->flags & (TILEC_TARGET_WARP_SPECIALIZE | TILEC_TARGET_WARP_SPECIALIZE_REGS)) ||
        !(t->barriers & TILEC_TARGET_BARRIER_OBJECT) ||
        k->threads[1] != 1 || k->threads[2] != 1 || c->nthreads % WS_PRODUCER ||
        c->nthreads + WS_PRODUCER > t->max_threads)
        return 0;
    for (tilec_ir_stmt_t *s = k->body; s; s = s->next) {
        ws_loop_t w;
        if (!fits(c, s, &w))
            continue;
        /* F initialized at the top level before the loop */
        tilec_ir_stmt_t *init_f = NULL;
        for (tilec_ir_stmt_t *u = k->body; u != s && !init_f; u = u->next)
            if (u->kind == TILEC_ST_MBAR_INIT && u->u.mbar.bar == w.full)
                init_f = u;
        if (!init_f || lower_smem_end(k) + lower_mbar_bytes(k) + 8 * (int64_t)w.S > (int64_t)t->smem_optin)
            continue;
        /* one loop per kernel: the block grows once */
        return rewrite(c, &w, init_f);
    }
    return 0;
}
