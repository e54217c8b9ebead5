/*
 * core/interp_async.c — the IR 1.1 statements of the reference interpreter
 * that have state across statements: async copies (copy_async,
 * async_commit, async_wait) and mbarriers (barrier_init/arrive/wait).
 *
 * The interpreter is the oracle for the lowering passes, so it executes
 * the weakest semantics docs/ir.md §9 allows and turns every use the
 * hardware would leave undefined into an error:
 *  - copy_async reads its (global) source at once and queues the values;
 *    the destination elements are marked pending.  async_commit gives the
 *    uncommitted copies of the block a group number; async_wait N applies
 *    the copies of every group but the newest N, in issue order, and
 *    clears their marks.  Any other read or write of a pending element is
 *    an error (tilec_interp_pending, called by every access in interp.c
 *    and interp_ops.c), as is a copy still queued when the block ends.
 *  - an mbarrier array keeps, per barrier, the phases completed, the
 *    arrivals of the current phase and its transaction balance (bytes
 *    announced by barrier_arrive ... expect_tx minus bytes of the copies
 *    issued on it).  A phase completes when every arrival has come and the
 *    balance is zero.  A wait for parity P passes when the phases completed
 *    so far have the other parity (the hardware's try_wait.parity rule);
 *    otherwise no arrival can come any more in program order, so the wait
 *    would hang: an error.
 *  - a cluster of blocks (lower_cluster.c) runs as blocks of one grid, each
 *    on its own: a multicast copy lands in the block that runs it, and an
 *    arrival with lower.cluster_arrive = N counts N (each block makes it).
 *  - a copy_async bound to an mbarrier (copy_async ... mbarrier B[i]) joins
 *    no group: it stays pending until a wait on B[i] passes after the
 *    phase it was issued in has completed, so a reader that does not wait
 *    on that barrier reads a pending element, an error.
 */
#include <stdlib.h>
#include <string.h>

#include "interp_priv.h"

/* "[i, j, k]" of the element at offset off of b. */
static void index_of(const tilec_ibuf_t *b, int64_t off, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int d = 0; d < b->ndim && used < cap; d++) {
        int64_t i = b->stride[d] ? (off / b->stride[d]) % (b->shape[d] ? b->shape[d] : 1) : 0;
        int w = snprintf(out + used, cap - used, "%s%lld", d ? ", " : "", (long long)i);
        if (w < 0) {
            break;
        }
        used += (size_t)w;
    }
}

int tilec_interp_pending(tilec_ictx_t *c, const tilec_ibuf_t *b, int64_t off, int64_t n, const char *what)
{
    if (!b->npending) {
        return 0;
    }
    for (int64_t i = off; i < off + n; i++) {
        if (b->pending[i]) {
            char is[200];
            int on_bar = 0;
            index_of(b, i, is, sizeof is);
            for (int q = 0; q < c->nasync && !on_bar; q++) {
                for (int64_t e = 0; c->asyncs[q].dst == b && c->asyncs[q].group == -2 && e < c->asyncs[q].n; e++) {
                    on_bar |= c->asyncs[q].offs[e] == i;
                }
            }
            return tilec_interp_fail(c, "%s of %s[%s] while an async copy to it is pending (missing %s)", what,
                                     b->ir->name, is, on_bar ? "barrier_wait" : "async_wait");
        }
    }
    return 0;
}

/* ---- async copies --------------------------------------------------------- */

static void free_copy(tilec_iasync_t *a)
{
    free(a->offs);
    free(a->bytes);
}

void tilec_interp_async_reset(tilec_ictx_t *c)
{
    for (int i = 0; i < c->nasync; i++) {
        tilec_iasync_t *a = &c->asyncs[i];
        if (a->dst->pending) {
            memset(a->dst->pending, 0, (size_t)a->dst->size);
        }
        a->dst->npending = 0;
        free_copy(a);
    }
    c->nasync = 0;
    c->ngroups = 0;
}

/* Element offsets of a region in row-major order (region of an on-chip
 * buffer must lie inside it; global positions outside give -1). */
static int region_offsets(tilec_ictx_t *c, const tilec_ir_region_t *r, tilec_ibuf_t **bo, int64_t **offs,
                          int64_t *count, const char *what)
{
    tilec_ibuf_t *b;
    int64_t base[TILEC_IR_MAX_DIMS], idx[TILEC_IR_MAX_DIMS], n = 1;
    if (tilec_interp_buf(c, r->buf, &b)) {
        return -1;
    }
    if (b->ndim > 0 && (!r->base || !r->extent)) {
        return tilec_interp_fail(c, "%s region of %s is incomplete", what, b->ir->name);
    }
    for (int d = 0; d < b->ndim; d++) {
        if (tilec_interp_eval_int(c, r->base[d], &base[d])) {
            return -1;
        }
        if (r->extent[d] < 1 || n > INT64_MAX / r->extent[d]) {
            return tilec_interp_fail(c, "%s region of %s has a bad extent", what, b->ir->name);
        }
        n *= r->extent[d];
    }
    if ((uint64_t)n > SIZE_MAX / sizeof(int64_t)) {
        return tilec_interp_fail(c, "%s region of %s is too large", what, b->ir->name);
    }
    int64_t *o = malloc((size_t)(n ? n : 1) * sizeof *o);
    if (!o) {
        return tilec_interp_fail(c, "out of memory in copy_async");
    }
    memcpy(idx, base, sizeof idx);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        int in = 1;
        for (int d = 0; d < b->ndim; d++) {
            in &= idx[d] >= 0 && idx[d] < b->shape[d];
            off += idx[d] * b->stride[d];
        }
        if (!in && !b->global) {
            free(o);
            return tilec_interp_oob(c, what, b, idx);
        }
        o[k] = in ? off : -1;
        for (int d = b->ndim - 1; d >= 0; d--) {
            if (++idx[d] < base[d] + r->extent[d]) {
                break;
            }
            idx[d] = base[d];
        }
    }
    *bo = b;
    *offs = o;
    *count = n;
    return 0;
}

/* the queued writes of a land; the queue entry is freed */
static void land(tilec_iasync_t *a)
{
    tilec_ibuf_t *b = a->dst;
    for (int64_t k = 0; k < a->n; k++) {
        if (a->offs[k] >= 0) {
            memcpy(b->data + (size_t)a->offs[k] * b->esize, a->bytes + (size_t)k * b->esize, b->esize);
            b->pending[a->offs[k]] = 0;
        }
    }
    b->npending -= a->n;
    free_copy(a);
}

/* element idx of mbarrier ir, initialized: *m and *i */
static int mbar_elem(tilec_ictx_t *c, const tilec_ir_mbarrier_t *ir, const tilec_ir_expr_t *idx, const char *what,
                     tilec_imbar_t **m, int64_t *i)
{
    if (!ir || ir->id < 0 || ir->id >= c->k->nmbars || c->k->mbars[ir->id] != ir || !c->mbars) {
        return tilec_interp_fail(c, "mbarrier %s is not declared", ir && ir->name ? ir->name : "?");
    }
    *m = &c->mbars[ir->id];
    if (tilec_interp_eval_int(c, idx, i)) {
        return -1;
    }
    if (!(*m)->inited) {
        return tilec_interp_fail(c, "%s of %s[%lld] before barrier_init", what, ir->name, (long long)*i);
    }
    if (*i < 0 || *i >= ir->size) {
        return tilec_interp_fail(c, "mbarrier index %s[%lld] out of range (size %d)", ir->name, (long long)*i,
                                 ir->size);
    }
    return 0;
}

/* completes the current phase of barrier i of m when every arrival has
 * come and the bytes announced equal the bytes issued */
static void mbar_settle(const tilec_ir_mbarrier_t *ir, tilec_imbar_t *m, int64_t i)
{
    if (m->arrivals[i] == ir->arrive && m->tx[i] == 0) {
        m->arrivals[i] = 0;
        m->phase[i]++;
    }
}

int tilec_interp_copy_async(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    tilec_ibuf_t *src, *dst;
    int64_t *so = NULL, *doff = NULL, ns, nd;
    if (region_offsets(c, &s->u.copy.src, &src, &so, &ns, "copy_async read") ||
        region_offsets(c, &s->u.copy.dst, &dst, &doff, &nd, "copy_async write")) {
        free(so);
        return -1;
    }
    int rc = -1;
    if (ns != nd) {
        tilec_interp_fail(c, "copy_async %s <- %s: regions differ in size (%lld and %lld elements)", dst->ir->name,
                          src->ir->name, (long long)nd, (long long)ns);
        goto out;
    }
    if (dst->global || src->dtype != dst->dtype) {
        tilec_interp_fail(c, "copy_async %s <- %s: needs a shared destination of the source's dtype",
                          dst->ir->name, src->ir->name);
        goto out;
    }
    if (!dst->pending) {
        dst->pending = calloc((size_t)(dst->size ? dst->size : 1), 1);
        if (!dst->pending) {
            tilec_interp_fail(c, "out of memory in copy_async");
            goto out;
        }
    }
    if (c->nasync == c->async_cap) {
        int ncap = c->async_cap ? c->async_cap * 2 : 16;
        tilec_iasync_t *na = realloc(c->asyncs, (size_t)ncap * sizeof *na);
        if (!na) {
            tilec_interp_fail(c, "out of memory in copy_async");
            goto out;
        }
        c->asyncs = na;
        c->async_cap = ncap;
    }
    tilec_iasync_t *a = &c->asyncs[c->nasync];
    a->dst = dst;
    a->n = nd;
    a->offs = doff;
    a->group = -1;
    a->bar = -1;
    if (s->u.copy.bar) {
        tilec_imbar_t *m;
        if (mbar_elem(c, s->u.copy.bar, s->u.copy.bar_idx, "copy_async", &m, &a->bar_i)) {
            goto out;
        }
        a->group = -2;
        a->bar = s->u.copy.bar->id;
        a->bar_phase = m->phase[a->bar_i];
    }
    a->bytes = malloc((size_t)(nd ? nd : 1) * dst->esize);
    if (!a->bytes) {
        tilec_interp_fail(c, "out of memory in copy_async");
        goto out;
    }
    for (int64_t k = 0; k < nd; k++) {
        if (doff[k] >= 0 && dst->pending[doff[k]]) {
            free(a->bytes);
            tilec_interp_pending(c, dst, doff[k], 1, "write");
            goto out;
        }
        if (so[k] >= 0) {
            memcpy(a->bytes + (size_t)k * dst->esize, src->data + (size_t)so[k] * src->esize, dst->esize);
        } else {
            memset(a->bytes + (size_t)k * dst->esize, 0, dst->esize); /* past the tensor's edge: zero */
        }
    }
    for (int64_t k = 0; k < nd; k++) {
        dst->pending[doff[k]] = 1;
    }
    dst->npending += nd;
    c->nasync++;
    if (a->bar >= 0) {
        tilec_imbar_t *m = &c->mbars[a->bar];
        m->tx[a->bar_i] -= nd * (int64_t)dst->esize;
        mbar_settle(c->k->mbars[a->bar], m, a->bar_i);
    }
    doff = NULL; /* owned by the queue now */
    rc = 0;
out:
    free(so);
    free(doff);
    return rc;
}

int tilec_interp_async_commit(tilec_ictx_t *c)
{
    for (int i = 0; i < c->nasync; i++) {
        if (c->asyncs[i].group == -1) {
            c->asyncs[i].group = c->ngroups;
        }
    }
    c->ngroups++;
    return 0;
}

int tilec_interp_async_wait(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    int64_t keep = s->u.wait.n;
    int j = 0;
    if (keep < 0) {
        return tilec_interp_fail(c, "async_wait %lld: negative count", (long long)keep);
    }
    for (int i = 0; i < c->nasync; i++) {
        tilec_iasync_t *a = &c->asyncs[i];
        if (a->group >= 0 && a->group < c->ngroups - keep) {
            land(a);
        } else {
            c->asyncs[j++] = *a;
        }
    }
    c->nasync = j;
    return 0;
}

int tilec_interp_async_end(tilec_ictx_t *c)
{
    if (c->nasync) {
        int uncommitted = 0;
        for (int i = 0; i < c->nasync; i++) {
            uncommitted += c->asyncs[i].group < 0;
        }
        return tilec_interp_fail(c,
                                 "%d async cop%s to %s still pending at the end of the block (missing %s)",
                                 c->nasync, c->nasync == 1 ? "y" : "ies", c->asyncs[0].dst->ir->name,
                                 c->asyncs[0].group == -2 ? "barrier_wait"
                                 : uncommitted             ? "async_commit and async_wait"
                                                           : "async_wait");
    }
    return 0;
}

/* ---- mbarriers ------------------------------------------------------------ */

int tilec_interp_mbar(tilec_ictx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_mbarrier_t *ir = s->u.mbar.bar;
    if (s->kind == TILEC_ST_MBAR_INIT) {
        if (!ir || ir->id < 0 || ir->id >= c->k->nmbars || c->k->mbars[ir->id] != ir || !c->mbars) {
            return tilec_interp_fail(c, "mbarrier %s is not declared", ir && ir->name ? ir->name : "?");
        }
        tilec_imbar_t *m = &c->mbars[ir->id];
        for (int j = 0; j < c->nasync; j++) {
            if (c->asyncs[j].bar == ir->id) {
                return tilec_interp_fail(c, "barrier_init %s while a copy on it is pending", ir->name);
            }
        }
        memset(m->phase, 0, (size_t)ir->size * sizeof *m->phase);
        memset(m->arrivals, 0, (size_t)ir->size * sizeof *m->arrivals);
        memset(m->tx, 0, (size_t)ir->size * sizeof *m->tx);
        m->inited = 1;
        return 0;
    }
    tilec_imbar_t *m;
    int64_t i, parity = 0;
    if (mbar_elem(c, ir, s->u.mbar.idx, tilec_stmt_kind_name(s->kind), &m, &i)) {
        return -1;
    }
    if (s->kind == TILEC_ST_MBAR_ARRIVE) {
        int64_t tx = 0;
        if (s->u.mbar.tx && tilec_interp_eval_int(c, s->u.mbar.tx, &tx)) {
            return -1;
        }
        if (tx < 0) {
            return tilec_interp_fail(c, "barrier_arrive %s[%lld] expects %lld bytes", ir->name, (long long)i,
                                     (long long)tx);
        }
        /* lower.cluster_arrive = N: the arrival on this barrier in each of
         * the N blocks of a cluster; the other blocks make the same one,
         * so this block's barrier receives N (lower_cluster.c) */
        const tilec_ir_attr_t *ca = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.cluster_arrive");
        int64_t n = ca && ca->kind == TILEC_ATTR_INT && ca->i >= 1 && ca->i <= 16 ? ca->i : 1;
        m->tx[i] += tx;
        m->arrivals[i] += (int)n;
        mbar_settle(ir, m, i);
        return 0;
    }
    if (tilec_interp_eval_int(c, s->u.mbar.parity, &parity)) {
        return -1;
    }
    if (parity != 0 && parity != 1) {
        return tilec_interp_fail(c, "barrier_wait %s[%lld] with parity %lld (must be 0 or 1)", ir->name,
                                 (long long)i, (long long)parity);
    }
    if ((m->phase[i] & 1) == parity) {
        return tilec_interp_fail(c,
                                 "barrier_wait %s[%lld], %lld can never complete: %lld phases done, "
                                 "%lld of %d arrivals and %lld bytes outstanding in the current one "
                                 "(missing barrier_arrive, or expect_tx bytes unlike the copies')",
                                 ir->name, (long long)i, (long long)parity, (long long)m->phase[i],
                                 (long long)m->arrivals[i], ir->arrive, (long long)m->tx[i]);
    }
    /* the copies of the completed phases land for the waiting block */
    int j = 0;
    for (int n = 0; n < c->nasync; n++) {
        tilec_iasync_t *a = &c->asyncs[n];
        if (a->group == -2 && a->bar == ir->id && a->bar_i == i && a->bar_phase < m->phase[i]) {
            land(a);
        } else {
            c->asyncs[j++] = *a;
        }
    }
    c->nasync = j;
    return 0;
}
