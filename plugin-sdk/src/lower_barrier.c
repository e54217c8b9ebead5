/*
 * plugin-sdk/src/lower_barrier.c — block barriers from RAW/WAR analysis.
 *
 * In uniform code each tile operation spreads its elements over the
 * block's threads in its own way, so a thread may read what another wrote
 * in an earlier statement (read after write) or overwrite what another has
 * yet to read (write after read, write after write).  The pass walks the
 * statements in order with the sets of buffers read and written since the
 * last barrier, and puts a `barrier` before the first statement that
 * conflicts with them.  Tracked are shared buffers, fragments placed in
 * shared memory and tensors; register fragments (REGS layouts: each
 * element touched only by the thread holding it, as layout inference
 * guarantees) and per-thread buffers are not.  A T.Parallel nest is one
 * operation; loops are analysed to a fixpoint with their back edge (what
 * the end of one iteration leaves conflicts with the start of the next, so
 * a ring stage is not refilled while it is read); both branches of an if
 * start from the state before it and join.  An async copy writes its
 * destination when issued; the barrier that makes the data visible lands
 * after its wait, before the first reader.  Async copies do not conflict
 * with earlier async copies into the same buffer: they fill distinct
 * stages, and two pending writes to one element are an error the
 * interpreter reports, so the schedule, not a barrier, keeps them apart.  An async copy on an
 * mbarrier (lower_tma.c) waits for earlier readers and writers like any write, but leaves
 * nothing behind: every thread that reads its data waits on the barrier first (barrier_wait,
 * which the interpreter checks), so no block barrier is needed before those reads.  Atomic updates do
 * not conflict with other atomic updates of the same buffer (they commute; the SIMT kit's own
 * analysis had the same rule), only with plain reads and writes.  Shared buffers whose byte
 * ranges in the shared-memory plan overlap (lower.reuse_of) are one buffer here: a write to
 * the new one conflicts with reads of the old one still in flight.  T.sync_threads and existing
 * barriers clear the sets.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

typedef struct bstate {
    unsigned char *r, *w;     /* [nbufs] read / written since the last barrier */
    unsigned char *wa;        /* [nbufs] written by async copies since the last barrier */
    unsigned char *at;        /* [nbufs] updated atomically since the last barrier */
    unsigned char *wt;        /* [nbufs] an operation's writes by copies on mbarriers (never kept) */
} bstate_t;

typedef struct bar {
    lower_ctx_t *c;
    int nb;
    int inserted;
    unsigned char *alias;     /* [nb * nb]: the byte ranges of two smem layouts overlap */
} bar_t;

static int tracked(const tilec_ir_buffer_t *b)
{
    if (b->scope == TILEC_SCOPE_SHARED || b->scope == TILEC_SCOPE_GLOBAL)
        return 1;
    return b->scope == TILEC_SCOPE_FRAGMENT && (!b->layout || b->layout->kind != TILEC_LAYOUT_REGS);
}

static void st_free(bstate_t *s)
{
    free(s->r);
    free(s->w);
    free(s->wa);
    free(s->at);
    free(s->wt);
}

static int st_new(bar_t *B, bstate_t *s)
{
    s->r = calloc((size_t)B->nb + 1, 1);
    s->w = calloc((size_t)B->nb + 1, 1);
    s->wa = calloc((size_t)B->nb + 1, 1);
    s->at = calloc((size_t)B->nb + 1, 1);
    s->wt = calloc((size_t)B->nb + 1, 1);
    if (!s->r || !s->w || !s->wa || !s->at || !s->wt) {
        st_free(s);
        s->r = s->w = s->wa = s->at = s->wt = NULL;
        return lower_oom(B->c);
    }
    return 0;
}

static void st_copy(bar_t *B, bstate_t *d, const bstate_t *s)
{
    memcpy(d->r, s->r, (size_t)B->nb);
    memcpy(d->w, s->w, (size_t)B->nb);
    memcpy(d->wa, s->wa, (size_t)B->nb);
    memcpy(d->at, s->at, (size_t)B->nb);
}

/* d |= s; returns 1 when d changed */
static int st_join(bar_t *B, bstate_t *d, const bstate_t *s)
{
    int ch = 0;
    for (int i = 0; i < B->nb; i++) {
        ch |= (s->r[i] && !d->r[i]) || (s->w[i] && !d->w[i]) || (s->wa[i] && !d->wa[i]) || (s->at[i] && !d->at[i]);
        d->r[i] |= s->r[i];
        d->w[i] |= s->w[i];
        d->wa[i] |= s->wa[i];
        d->at[i] |= s->at[i];
    }
    return ch;
}

static void st_clear(bar_t *B, bstate_t *s)
{
    memset(s->r, 0, (size_t)B->nb);
    memset(s->w, 0, (size_t)B->nb);
    memset(s->wa, 0, (size_t)B->nb);
    memset(s->at, 0, (size_t)B->nb);
    memset(s->wt, 0, (size_t)B->nb);
}

typedef struct acc {
    bar_t *B;
    bstate_t *st;   /* the statement's own accesses */
} acc_t;

/* sets flag id (and every buffer sharing its bytes) in set */
static void mark(const bar_t *B, unsigned char *set, int id)
{
    set[id] = 1;
    if (B->alias)
        for (int j = 0; j < B->nb; j++)
            if (B->alias[(size_t)id * (size_t)B->nb + (size_t)j])
                set[j] = 1;
}

static void acc_cb(void *user, tilec_ir_stmt_t *s, tilec_ir_buffer_t *b, int how)
{
    acc_t *a = user;
    if (!tracked(b))
        return;
    if (s->kind == TILEC_ST_ATOMIC && b == s->u.atomic.buf && how == (LOWER_READ | LOWER_WRITE)) {
        mark(a->B, a->st->at, b->id);
        return;
    }
    if (how & LOWER_READ)
        mark(a->B, a->st->r, b->id);
    if (how & LOWER_WRITE)
        mark(a->B, s->kind != TILEC_ST_COPY_ASYNC ? a->st->w : s->u.copy.bar ? a->st->wt : a->st->wa, b->id);
}

static int loads_pre(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    acc_t *a = w->user;
    if (e->kind == TILEC_EX_LOAD && tracked(e->u.load.buf))
        mark(a->B, a->st->r, e->u.load.buf->id);
    return TILEC_WALK_CONTINUE;
}

static int conflicts(bar_t *B, const bstate_t *st, const bstate_t *op)
{
    for (int i = 0; i < B->nb; i++)
        if ((op->r[i] && (st->w[i] || st->wa[i] || st->at[i])) ||
            (op->w[i] && (st->r[i] || st->w[i] || st->wa[i] || st->at[i])) ||
            (op->wa[i] && (st->r[i] || st->w[i] || st->at[i])) || (op->at[i] && (st->r[i] || st->w[i] || st->wa[i])) ||
            (op->wt[i] && (st->r[i] || st->w[i] || st->at[i])))
            return 1;
    return 0;
}

/* a barrier before *link, unless one is there; state cleared */
static int barrier_before(bar_t *B, tilec_ir_stmt_t **link, bstate_t *st)
{
    tilec_ir_stmt_t *b = tilec_ir_stmt(B->c->a, TILEC_ST_BARRIER);
    if (!b)
        return lower_oom(B->c);
    b->line = (*link)->line;
    b->col = (*link)->col;
    b->next = *link;
    *link = b;
    B->inserted++;
    st_clear(B, st);
    return 0;
}

/* an operation with accesses op at *link: a barrier first when needed */
static int apply(bar_t *B, tilec_ir_stmt_t **link, bstate_t *st, const bstate_t *op)
{
    if (conflicts(B, st, op) && barrier_before(B, link, st))
        return -1;
    st_join(B, st, op);
    return 0;
}

static int process(bar_t *B, tilec_ir_stmt_t **link, bstate_t *st, int depth);

static int process_loop(bar_t *B, tilec_ir_stmt_t *s, bstate_t *st, int depth)
{
    bstate_t in, cur;
    if (st_new(B, &in) || st_new(B, &cur)) {
        st_free(&in);
        return -1;
    }
    st_copy(B, &in, st);
    int rc = 0;
    for (int iter = 0; iter < 8 && rc == 0; iter++) {
        st_copy(B, &cur, &in);
        rc = process(B, &s->u.loop.body, &cur, depth + 1);
        if (rc == 0 && !st_join(B, &in, &cur))
            break; /* the back edge brings nothing new */
    }
    if (rc == 0) {
        st_copy(B, st, &in);
        st_join(B, st, &cur);
    }
    st_free(&in);
    st_free(&cur);
    return rc;
}

static int process(bar_t *B, tilec_ir_stmt_t **link, bstate_t *st, int depth)
{
    if (depth > TILEC_IR_MAX_DEPTH)
        return lower_fail(B->c, TILEC_LOWER_E_INVALID, "statements nested too deeply");
    bstate_t op;
    if (st_new(B, &op))
        return -1;
    int rc = 0;
    for (; *link && rc == 0; link = &(*link)->next) {
        tilec_ir_stmt_t *s = *link;
        st_clear(B, &op);
        if (s->kind == TILEC_ST_SYNC || s->kind == TILEC_ST_BARRIER) {
            st_clear(B, st);
            continue;
        }
        if (s->kind == TILEC_ST_FOR && s->u.loop.kind != TILEC_LOOP_PARALLEL) {
            tilec_ir_walk_t w;
            memset(&w, 0, sizeof w);
            w.expr_pre = loads_pre;
            acc_t a = {B, &op};
            w.user = &a;
            tilec_ir_walk_expr(&w, &s->u.loop.extent);
            rc = apply(B, link, st, &op);
            if (rc == 0 && (*link)->kind == TILEC_ST_BARRIER)
                link = &(*link)->next;
            if (rc == 0)
                rc = process_loop(B, s, st, depth);
        } else if (s->kind == TILEC_ST_IF) {
            tilec_ir_walk_t w;
            memset(&w, 0, sizeof w);
            w.expr_pre = loads_pre;
            acc_t a = {B, &op};
            w.user = &a;
            tilec_ir_walk_expr(&w, &s->u.cond.cond);
            rc = apply(B, link, st, &op);
            if (rc == 0 && (*link)->kind == TILEC_ST_BARRIER)
                link = &(*link)->next;
            bstate_t els;
            if (rc == 0 && (rc = st_new(B, &els)) == 0) {
                st_copy(B, &els, st);
                rc = process(B, &s->u.cond.then, st, depth + 1);
                if (rc == 0)
                    rc = process(B, &s->u.cond.els, &els, depth + 1);
                st_join(B, st, &els);
                st_free(&els);
            }
        } else {
            /* a tile op, a store, a whole T.Parallel nest: one operation */
            acc_t a = {B, &op};
            if (lower_accesses(s, acc_cb, &a) != 0)
                rc = lower_fail(B->c, TILEC_LOWER_E_INVALID, "statements nested too deeply");
            if (rc == 0)
                rc = apply(B, link, st, &op);
            if (rc == 0 && (*link)->kind == TILEC_ST_BARRIER)
                link = &(*link)->next;
        }
    }
    st_free(&op);
    return rc;
}

int lower_barrier(lower_ctx_t *c)
{
    bar_t B = {c, c->k->nbufs, 0, NULL};
    const tilec_ir_kernel_t *k = c->k;
    for (int i = 0; i < B.nb; i++)
        for (int j = i + 1; j < B.nb; j++) {
            const tilec_ir_layout_t *x = k->bufs[i]->layout, *y = k->bufs[j]->layout;
            if (!x || !y || x->kind != TILEC_LAYOUT_SMEM || y->kind != TILEC_LAYOUT_SMEM ||
                x->offset >= y->offset + y->size || y->offset >= x->offset + x->size)
                continue;
            if (!B.alias && !(B.alias = calloc((size_t)B.nb * (size_t)B.nb, 1)))
                return lower_oom(c);
            B.alias[(size_t)i * (size_t)B.nb + (size_t)j] = B.alias[(size_t)j * (size_t)B.nb + (size_t)i] = 1;
        }
    bstate_t st;
    if (st_new(&B, &st)) {
        free(B.alias);
        return -1;
    }
    int rc = process(&B, &c->k->body, &st, 0);
    st_free(&st);
    free(B.alias);
    return rc;
}
