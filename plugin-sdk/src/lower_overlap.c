/*
 * plugin-sdk/src/lower_overlap.c — the second GEMM of an attention loop
 * runs under the next iteration's softmax (FlashAttention-3's overlap
 * inside a warpgroup).
 *
 * On a target with TILEC_TARGET_MMA_OVERLAP, a ring of the tma pass (the
 * schedule without the wgmma deferral) whose body, after the refill and
 * the wait, is
 *
 *     PRE; G1; X; Y; G2
 *
 * with G1 and G2 the body's only gemms, both on asynchronous MMA
 * instructions into register accumulators, G2 last, its A a register
 * fragment ("mma.a": flash attention's P) and its B a ring that only G2
 * reads (V), PRE and G1 not mentioning G2's operands, X the statements
 * after G1 that do not either and Y the rest (the copy into P, the
 * rescale of O), becomes
 *
 *     prologue: loads 0 .. S-1, load j = {early rings at j, late ring at j - 1}
 *     for k in serial(n) {
 *         barrier_wait F[k % S], (k / S) % 2
 *         PRE; G1 attrs {lower.mma_nowait = 1}
 *         if (k >= 1) { G2 (iteration k - 1's, on stage k % S) attrs {lower.mma_nowait = 1}; hint "mma_wait" (1) }
 *         else { hint "mma_wait" (0) }
 *         X                                   G2 of k - 1 still running
 *         hint "mma_wait" (0)
 *         Y
 *         if (k + S <= n) { barrier_arrive F[k % S] expect_tx B; barrier; copies of load k + S }
 *     }
 *     if (n >= 1) { barrier_wait F[n % S], (n / S) % 2; G2 on stage n % S }
 *
 * In program order (the interpreter's) only G2 moved: from the end of
 * iteration k - 1 past the refill, the wait, PRE and G1 of iteration k,
 * none of which mention its operands; the late ring is loaded one load
 * later (load j brings V[j - 1], so the copy of load 0 reads rows before
 * the tensor: zeros, and nobody reads them) so that the stage G2 reads
 * is the one its iteration waits for; and every load is issued at the
 * end of the iteration that last read its stage, after a block barrier.
 * To a printer, lower.mma_nowait leaves an asynchronous MMA in flight
 * and hint "mma_wait" (N) waits until N MMA groups are left: G2 runs on
 * the tensor cores while X (the row maxima, exponentials and sums of the
 * next block's scores) runs on the others.  Between the issue of G2 and
 * the wait for it, X does not touch G2's registers (checked here).
 *
 * A loop of the warpspec pass (its refill the producer's, with its wait
 * `if (k >= 1) { barrier_wait E[(k - 1) % S] }`, and the consumers'
 * release `barrier_arrive E[k % S]` last) is rewritten the same way; the
 * release then stands after Y (the wait for G2 is before it, so both
 * gemms of the stage are done) and the refill of load k + S after it,
 * waiting for that release, `barrier_wait E[k % S], (k / S) % 2`; the
 * epilogue's G2 ends the consumers' last iteration (`if (k + 1 == n)`)
 * instead of following the loop, so that it runs under the consumers'
 * register share (on CUDA the code after the loop has the block's, and
 * P V's registers spilled there).
 *
 * After the warpspec pass: every earlier decision is the plain ring's.
 */
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"

typedef struct ov {
    tilec_ir_stmt_t *pro, *loop, *refill, *wait, *g1, *g2;
    tilec_ir_stmt_t *arr;     /* the refill's expecting arrival on F */
    tilec_ir_stmt_t *ewait;   /* warpspec loop: the refill's wait on E (in an `if`), else NULL */
    tilec_ir_stmt_t *rel;     /* warpspec loop: the consumers' release of E, last, else NULL */
    tilec_ir_stmt_t *pre_g2;  /* the statement before G2 */
    tilec_ir_stmt_t *x_last;  /* last statement of X (G1 when X is empty) */
    tilec_ir_mbarrier_t *F;
    int S;
} ov_t;

/* an `if` (no else; its condition is rewritten) holding an expecting arrival on F,
 * block barriers (barriers = 1: allowed) and bulk copies on F; with ewait, the
 * warpspec pass's refill: `if (k >= 1) { barrier_wait E[...] }` first (*ewait) */
static int is_load(const tilec_ir_stmt_t *s, const tilec_ir_mbarrier_t *F, int barriers, tilec_ir_stmt_t **ewait)
{
    if (!s || s->kind != TILEC_ST_IF || s->u.cond.els)
        return 0;
    tilec_ir_stmt_t *t = s->u.cond.then;
    if (ewait) {
        if (!t || t->kind != TILEC_ST_IF || t->u.cond.els || !t->u.cond.then ||
            t->u.cond.then->kind != TILEC_ST_MBAR_WAIT || t->u.cond.then->next)
            return 0;
        *ewait = t;
        t = t->next;
    }
    if (!t || t->kind != TILEC_ST_MBAR_ARRIVE || t->u.mbar.bar != F || !t->u.mbar.tx)
        return 0;
    int ncopies = 0;
    for (t = t->next; t; t = t->next) {
        if (t->kind == TILEC_ST_BARRIER && barriers)
            continue;
        if (t->kind != TILEC_ST_COPY_ASYNC || t->u.copy.bar != F || !lower_sattr(t, "lower.tma"))
            return 0;
        ncopies++;
    }
    return ncopies > 0;
}

/* a gemm on an asynchronous MMA instruction into a register accumulator,
 * its wait not deferred */
static int async_gemm(const lower_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_target_mma_t *mma = s && s->kind == TILEC_ST_GEMM ? lower_gemm_mma(c, s) : NULL;
    const tilec_ir_buffer_t *C = mma ? s->u.gemm.c : NULL;
    return C && (mma->flags & TILEC_TARGET_MMA_ASYNC) && C->layout && C->layout->kind == TILEC_LAYOUT_REGS &&
           !lower_sattr(s, "lower.mma_wait") && !lower_sattr(s, "lower.mma_nowait");
}

/* statements (and their nests) that the move could cross wrongly: barriers,
 * barrier objects, async copies and their waits, nested gemms */
static int plain(const tilec_ir_stmt_t *s, int depth)
{
    if (depth > 64)
        return 0;
    for (; s; s = s->next) {
        switch (s->kind) {
        case TILEC_ST_BARRIER: case TILEC_ST_SYNC: case TILEC_ST_MBAR_INIT: case TILEC_ST_MBAR_ARRIVE:
        case TILEC_ST_MBAR_WAIT: case TILEC_ST_COPY_ASYNC: case TILEC_ST_ASYNC_COMMIT: case TILEC_ST_ASYNC_WAIT:
        case TILEC_ST_HINT:
            return 0;
        case TILEC_ST_GEMM:
            if (depth)
                return 0;
            break;
        case TILEC_ST_FOR:
            if (!plain(s->u.loop.body, depth + 1))
                return 0;
            break;
        case TILEC_ST_IF:
            if (!plain(s->u.cond.then, depth + 1) || !plain(s->u.cond.els, depth + 1))
                return 0;
            break;
        default:
            break;
        }
        if (!depth)
            break; /* the caller walks the top-level list */
    }
    return 1;
}

static int uses_g2(const tilec_ir_stmt_t *s, const tilec_ir_stmt_t *g2)
{
    tilec_ir_stmt_t one = *s;
    one.next = NULL;
    return lower_uses(&one, g2->u.gemm.a) || lower_uses(&one, g2->u.gemm.c) || lower_uses(&one, g2->u.gemm.b);
}

static int fits(const lower_ctx_t *c, tilec_ir_stmt_t *pro, tilec_ir_stmt_t *s, ov_t *o)
{
    const tilec_ir_attr_t *sa = s->kind == TILEC_ST_FOR ? lower_sattr(s, "lower.stages") : NULL;
    if (!sa || sa->kind != TILEC_ATTR_INT || s->u.loop.kind != TILEC_LOOP_SERIAL || sa->i < 2 || sa->i > 64 ||
        lower_sattr(s, "lower.persistent") || !lower_expr_invariant(s->u.loop.extent, s->u.loop.body))
        return 0;
    memset(o, 0, sizeof *o);
    o->loop = s;
    o->S = (int)sa->i;
    const tilec_ir_var_t *k = s->u.loop.var;
    int ws = lower_sattr(s, "lower.warpspec") != NULL;
    /* the refill, then the wait */
    o->refill = s->u.loop.body;
    o->wait = o->refill ? o->refill->next : NULL;
    if (!o->wait || o->wait->kind != TILEC_ST_MBAR_WAIT || (ws && !lower_sattr(o->refill, "lower.producer")))
        return 0;
    o->F = o->wait->u.mbar.bar;
    if (o->F->size != o->S || !is_load(o->refill, o->F, 1, ws ? &o->ewait : NULL))
        return 0;
    o->arr = ws ? o->ewait->next : o->refill->u.cond.then;
    if (!lower_is_fn_of_k(o->wait->u.mbar.idx, k, o->S, lower_ring_stage) ||
        !lower_is_fn_of_k(o->wait->u.mbar.parity, k, o->S, lower_ring_parity) ||
        !lower_is_fn_of_k(o->arr->u.mbar.idx, k, o->S, lower_ring_ahead))
        return 0;
    if (ws) {
        /* the warpspec pass's release of stage k, last; its refill waits on the same array */
        for (o->rel = o->wait; o->rel->next; o->rel = o->rel->next)
            ;
        if (o->rel->kind != TILEC_ST_MBAR_ARRIVE || o->rel->u.mbar.tx)
            return 0;
        const tilec_ir_mbarrier_t *E = o->rel->u.mbar.bar;
        if (E == o->F || E->size != o->S || o->ewait->u.cond.then->u.mbar.bar != E ||
            !lower_is_fn_of_k(o->rel->u.mbar.idx, k, o->S, lower_ring_stage))
            return 0;
    }
    for (const tilec_ir_stmt_t *t = o->arr->next; t; t = t->next)
        if (t->kind == TILEC_ST_COPY_ASYNC &&
            (!lower_is_fn_of_k(t->u.copy.bar_idx, k, o->S, lower_ring_ahead) || !lower_is_fn_of_k(t->u.copy.dst.base[0], k, o->S, lower_ring_ahead)))
            return 0;
    /* the rest: plain statements, two gemms, the second last */
    int ngemm = 0;
    for (tilec_ir_stmt_t *t = o->wait->next; t != o->rel; t = t->next) {
        if (!plain(t, 0))
            return 0;
        if (t->kind == TILEC_ST_GEMM) {
            if (++ngemm > 2 || !async_gemm(c, t))
                return 0;
            if (ngemm == 1)
                o->g1 = t;
            else
                o->g2 = t;
        }
        if (t->next && t->next->kind == TILEC_ST_GEMM && ngemm == 1)
            o->pre_g2 = t;
    }
    if (ngemm != 2 || o->g2->next != o->rel || !o->pre_g2)
        return 0;
    const tilec_ir_stmt_t *g2 = o->g2;
    const tilec_ir_buffer_t *A = g2->u.gemm.a, *B = g2->u.gemm.b;
    if (!A->layout || A->layout->kind != TILEC_LAYOUT_REGS || !A->layout->name ||
        strcmp(A->layout->name, "mma.a") != 0 || B->ndim != 3 || !g2->u.gemm.b_lead ||
        !lower_is_fn_of_k(g2->u.gemm.b_lead[0], k, o->S, lower_ring_stage) || B == o->g1->u.gemm.a || B == o->g1->u.gemm.b)
        return 0;
    /* the late ring (B) is loaded by the refill and the prologue, read by G2 only */
    int late = 0;
    for (const tilec_ir_stmt_t *t = o->arr->next; t; t = t->next)
        late += t->kind == TILEC_ST_COPY_ASYNC && t->u.copy.dst.buf == B;
    if (!late)
        return 0;
    /* PRE and G1 do not mention G2's operands; X is what follows until the first that does */
    for (tilec_ir_stmt_t *t = o->wait->next; t != o->g1; t = t->next)
        if (uses_g2(t, g2))
            return 0;
    if (uses_g2(o->g1, g2))
        return 0;
    o->x_last = o->g1;
    while (o->x_last->next != g2 && !uses_g2(o->x_last->next, g2))
        o->x_last = o->x_last->next;
    for (tilec_ir_stmt_t *t = o->x_last->next; t != g2; t = t->next) {
        tilec_ir_stmt_t one = *t;
        one.next = NULL;
        if (lower_uses(&one, B))
            return 0;
    }
    /* the prologue: for kp in serial(S - 1) { if (...) { the loads of kp } } */
    int64_t np;
    if (!pro || pro->kind != TILEC_ST_FOR || pro->u.loop.kind != TILEC_LOOP_SERIAL ||
        !tilec_ir_is_const_int(pro->u.loop.extent, &np) || np != o->S - 1 || !pro->u.loop.body ||
        pro->u.loop.body->next || !is_load(pro->u.loop.body, o->F, 0, NULL))
        return 0;
    const tilec_ir_var_t *kp = pro->u.loop.var;
    if (!lower_is_fn_of_k(pro->u.loop.body->u.cond.then->u.mbar.idx, kp, o->S, lower_ring_stage))
        return 0;
    for (const tilec_ir_stmt_t *t = pro->u.loop.body->u.cond.then->next; t; t = t->next)
        if (!lower_is_fn_of_k(t->u.copy.bar_idx, kp, o->S, lower_ring_stage) || !lower_is_fn_of_k(t->u.copy.dst.base[0], kp, o->S, lower_ring_stage))
            return 0;
    o->pro = pro;
    return 1;
}

static tilec_ir_expr_t *vref(lower_ctx_t *c, const tilec_ir_var_t *k)
{
    tilec_ir_expr_t *e = tilec_ir_varref(c->a, (tilec_ir_var_t *)k);
    if (!e)
        lower_oom(c);
    return e;
}

static tilec_ir_expr_t *cmp(lower_ctx_t *c, tilec_binop_t op, tilec_ir_expr_t *x, tilec_ir_expr_t *y)
{
    tilec_ir_expr_t *e = x && y ? tilec_ir_binary(c->a, op, x, y) : NULL;
    if (!e)
        lower_oom(c);
    return e;
}

/* hint "mma_wait" (n) */
static tilec_ir_stmt_t *mma_wait(lower_ctx_t *c, int64_t n, const tilec_ir_stmt_t *at)
{
    return lower_hint(c, "mma_wait", &n, 1, at);
}

/* every base of region r with v := by (new trees) */
static int sub_region(lower_ctx_t *c, tilec_ir_region_t *r, const tilec_ir_var_t *v, tilec_ir_expr_t *by)
{
    tilec_ir_expr_t **nb = tilec_arena_alloc(c->a, sizeof *nb * (size_t)r->buf->ndim);
    if (!nb)
        return lower_oom(c);
    for (int d = 0; d < r->buf->ndim; d++)
        if (!(nb[d] = lower_subst(c, r->base[d], v, by)))
            return lower_oom(c);
    r->base = nb;
    return 0;
}

static int rewrite(lower_ctx_t *c, ov_t *o)
{
    tilec_ir_stmt_t *L = o->loop, *g2 = o->g2;
    const tilec_ir_var_t *k = L->u.loop.var, *kp = o->pro->u.loop.var;
    const tilec_ir_buffer_t *B = g2->u.gemm.b;
    int S = o->S;
    tilec_ir_expr_t *n = L->u.loop.extent;
#define N() lower_subst(c, n, NULL, NULL)
    /* the prologue: S loads, the late ring one load behind */
    tilec_ir_stmt_t *pif = o->pro->u.loop.body;
    if (!(o->pro->u.loop.extent = lower_int(c, S)) ||
        !(pif->u.cond.cond = cmp(c, TILEC_BIN_AND, cmp(c, TILEC_BIN_LE, vref(c, kp), N()),
                                 cmp(c, TILEC_BIN_GE, N(), lower_int(c, 1)))))
        return lower_oom(c);
    for (tilec_ir_stmt_t *t = pif->u.cond.then->next; t; t = t->next)
        if (t->u.copy.dst.buf == B && sub_region(c, &t->u.copy.src, kp, lower_opi(c, TILEC_BIN_SUB, vref(c, kp), 1)))
            return -1;
    /* the refill: load k + S into stage k % S at the end of the body */
    tilec_ir_stmt_t *R = o->refill;
    L->u.loop.body = o->wait;
    tilec_ir_expr_t *k1 = lower_opi(c, TILEC_BIN_ADD, vref(c, k), 1);
    if (!k1 || !(R->u.cond.cond = cmp(c, TILEC_BIN_LE, lower_opi(c, TILEC_BIN_ADD, vref(c, k), S), N())))
        return lower_oom(c);
    tilec_ir_stmt_t *arr = o->arr;
    if (!(arr->u.mbar.idx = lower_opi(c, TILEC_BIN_FLOORMOD, vref(c, k), S)))
        return lower_oom(c);
    if (o->ewait) {
        /* the producer waits for the release of stage k % S (load k's) */
        tilec_ir_stmt_t *ew = o->ewait->u.cond.then;
        if (!(ew->u.mbar.idx = lower_opi(c, TILEC_BIN_FLOORMOD, vref(c, k), S)) ||
            !(ew->u.mbar.parity =
                  lower_opi(c, TILEC_BIN_FLOORMOD, lower_opi(c, TILEC_BIN_FLOORDIV, vref(c, k), S), 2)))
            return lower_oom(c);
        ew->next = arr;
        R->u.cond.then = ew;
    }
    for (tilec_ir_stmt_t *t = arr->next; t; t = t->next) {
        if (t->kind != TILEC_ST_COPY_ASYNC)
            continue;
        if (t->u.copy.dst.buf != B && sub_region(c, &t->u.copy.src, k, k1))
            return -1;
        if (sub_region(c, &t->u.copy.dst, k, k1) || !(t->u.copy.bar_idx = lower_opi(c, TILEC_BIN_FLOORMOD, vref(c, k), S)))
            return lower_oom(c);
    }
    /* the epilogue's G2, before the in-loop one gets its attribute */
    tilec_ir_stmt_t *eg = lower_stmt_at(c, TILEC_ST_GEMM, g2);
    if (!eg)
        return -1;
    *eg = *g2;
    eg->next = NULL;
    eg->attrs = tilec_arena_alloc(c->a, sizeof *eg->attrs * (size_t)(g2->nattrs ? g2->nattrs : 1));
    if (!eg->attrs)
        return lower_oom(c);
    memcpy(eg->attrs, g2->attrs, sizeof *eg->attrs * (size_t)g2->nattrs);
    if (!(eg->u.gemm.b_lead = tilec_arena_alloc(c->a, sizeof *eg->u.gemm.b_lead)) ||
        !(eg->u.gemm.b_lead[0] = lower_opi(c, TILEC_BIN_FLOORMOD, N(), S)))
        return lower_oom(c);
    tilec_ir_stmt_t *ew = lower_stmt_at(c, TILEC_ST_MBAR_WAIT, o->wait);
    if (!ew)
        return -1;
    *ew = *o->wait;
    if (!(ew->u.mbar.idx = lower_opi(c, TILEC_BIN_FLOORMOD, N(), S)) ||
        !(ew->u.mbar.parity = lower_opi(c, TILEC_BIN_FLOORMOD, lower_opi(c, TILEC_BIN_FLOORDIV, N(), S), 2)))
        return lower_oom(c);
    ew->next = eg;
    tilec_ir_stmt_t *eif = lower_stmt_at(c, TILEC_ST_IF, L);
    if (!eif)
        return -1;
    eif->u.cond.then = ew;
    if (o->rel) {
        /* a warpspec loop: the consumers' last iteration ends with it (after
         * the loop the block's threads would run it under their common
         * register share, not the consumers') */
        if (!(eif->u.cond.cond = cmp(c, TILEC_BIN_EQ, lower_opi(c, TILEC_BIN_ADD, vref(c, k), 1), N())))
            return -1;
    } else {
        if (!(eif->u.cond.cond = cmp(c, TILEC_BIN_GE, N(), lower_int(c, 1))))
            return -1;
        eif->next = L->next;
        L->next = eif;
    }
    /* G2 of iteration k - 1 after G1, both left in flight */
    tilec_ir_stmt_t *w1 = mma_wait(c, 1, g2), *w0 = mma_wait(c, 0, g2), *wy = mma_wait(c, 0, g2);
    tilec_ir_stmt_t *gif = lower_stmt_at(c, TILEC_ST_IF, g2);
    if (!w1 || !w0 || !wy || !gif || !(gif->u.cond.cond = cmp(c, TILEC_BIN_GE, vref(c, k), lower_int(c, 1))))
        return -1;
    o->pre_g2->next = NULL;
    g2->next = w1;
    gif->u.cond.then = g2;
    gif->u.cond.els = w0;
    if (lower_sattr_int(c, g2, "lower.mma_nowait", 1) || lower_sattr_int(c, o->g1, "lower.mma_nowait", 1))
        return -1;
    /* X, then the wait for G2, Y, the refill */
    tilec_ir_stmt_t *x0 = o->g1->next;
    tilec_ir_stmt_t *y0 = o->x_last == o->pre_g2 ? NULL : o->x_last->next;
    if (o->x_last == o->g1) {
        gif->next = wy;
    } else {
        gif->next = x0;
        o->x_last->next = wy;
    }
    o->g1->next = gif;
    wy->next = y0;
    tilec_ir_stmt_t **tail = &wy->next;
    while (*tail)
        tail = &(*tail)->next;
    if (o->rel) {
        *tail = o->rel;
        tail = &o->rel->next;
    }
    *tail = R;
    R->next = o->rel ? eif : NULL;
#undef N
    return 0;
}

int lower_overlap(lower_ctx_t *c)
{
    const tilec_target_desc_t *t = c->t;
    tilec_ir_kernel_t *k = c->k;
    if (!(t->flags & TILEC_TARGET_MMA_OVERLAP) || !(t->barriers & TILEC_TARGET_BARRIER_OBJECT))
        return 0;
    tilec_ir_stmt_t *prev = NULL;
    for (tilec_ir_stmt_t *s = k->body; s; prev = s, s = s->next) {
        ov_t o;
        if (fits(c, prev, s, &o))
            return rewrite(c, &o);
    }
    return 0;
}
