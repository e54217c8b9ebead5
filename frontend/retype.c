/*
 * frontend/retype.c — re-views that change the dtype of on-chip memory:
 * `acc = T.view(KV_shared, shape=[BS // 2, D], dtype=T.float32)`.
 *
 * TileLang kernels use such a view to reuse the shared memory of a tile
 * whose contents are dead as scratch of another dtype (a bfloat16 K/V tile
 * as float32 partial sums between two loads of the tile).  The tile IR has
 * no aliasing buffers and no bit casts between buffers, so the view gets a
 * buffer of its own, of the view's shape, dtype and scope, at most the
 * base's size.  That gives the program's results exactly when nothing reads
 * through one name what was written through the other: the base's next
 * access after a write through the view is a write, and the view's next
 * access after a write through the base is a write.  retype_check() proves
 * that at the kernel's end by walking the statements in program order (each
 * loop body twice, for the next iteration) and names the first read that
 * would see the other name's bits; reading a tile's bits as another dtype
 * that way (T.reinterpret's job) stays outside the subset.  Global tensors
 * are never re-typed (their bytes are the caller's).
 */
#include "eval_internal.h"

#include <string.h>

enum { LAST_NONE = 0, LAST_BASE, LAST_VIEW };

typedef struct rwalk {
    ev_t *ev;
    const tilec_ir_buffer_t *base, *view;
    int last;                 /* which name wrote last */
    const tilec_ir_stmt_t *wst; /* that write */
} rwalk_t;

static void touch(rwalk_t *w, const tilec_ir_buffer_t *b, int write, const tilec_ir_stmt_t *st)
{
    int who = b == w->base ? LAST_BASE : b == w->view ? LAST_VIEW : LAST_NONE;
    ast_loc_t loc;
    if (who == LAST_NONE) return;
    if (!write && w->last != LAST_NONE && w->last != who) {
        memset(&loc, 0, sizeof loc);
        loc.line = st->line;
        loc.col = st->col;
        ev_fail(w->ev, loc, "this reads '%s' (%s) where the last write went through '%s' (%s, line %d): a re-view "
                "that changes the dtype is scratch of its own in tilec, so reading one dtype's bits as the other "
                "is outside the subset (use T.reinterpret on values)", b->name, tilec_dtype_name(b->dtype),
                who == LAST_BASE ? w->view->name : w->base->name,
                tilec_dtype_name(who == LAST_BASE ? w->view->dtype : w->base->dtype), w->wst->line);
    }
    if (write) {
        w->last = who;
        w->wst = st;
    }
}

static void reads_e(rwalk_t *w, const tilec_ir_expr_t *e, const tilec_ir_stmt_t *st, int depth)
{
    int i;
    if (!e || depth > 2 * EV_MAX_IR_DEPTH) return;
    switch (e->kind) {
    case TILEC_EX_LOAD:
        for (i = 0; i < e->u.load.buf->ndim; i++) reads_e(w, e->u.load.idx[i], st, depth + 1);
        touch(w, e->u.load.buf, 0, st);
        break;
    case TILEC_EX_UNARY: reads_e(w, e->u.un.a, st, depth + 1); break;
    case TILEC_EX_BINARY: reads_e(w, e->u.bin.a, st, depth + 1); reads_e(w, e->u.bin.b, st, depth + 1); break;
    case TILEC_EX_SELECT:
        reads_e(w, e->u.sel.cond, st, depth + 1);
        reads_e(w, e->u.sel.a, st, depth + 1);
        reads_e(w, e->u.sel.b, st, depth + 1);
        break;
    case TILEC_EX_CAST: reads_e(w, e->u.cast.a, st, depth + 1); break;
    default: break;
    }
}

static void reads_idx(rwalk_t *w, tilec_ir_expr_t *const *idx, int n, const tilec_ir_stmt_t *st)
{
    int i;
    for (i = 0; idx && i < n; i++) reads_e(w, idx[i], st, 0);
}

static void walk(rwalk_t *w, const tilec_ir_stmt_t *s, int depth)
{
    if (depth > EV_MAX_IR_DEPTH) return;
    for (; s; s = s->next) {
        switch (s->kind) {
        case TILEC_ST_FOR:
            reads_e(w, s->u.loop.extent, s, 0);
            walk(w, s->u.loop.body, depth + 1);
            if (depth < 8) walk(w, s->u.loop.body, depth + 1);   /* the next iteration (2^8 walks at most) */
            break;
        case TILEC_ST_IF:
            reads_e(w, s->u.cond.cond, s, 0);
            walk(w, s->u.cond.then, depth + 1);
            walk(w, s->u.cond.els, depth + 1);
            break;
        case TILEC_ST_STORE:
            reads_idx(w, s->u.store.idx, s->u.store.buf->ndim, s);
            reads_e(w, s->u.store.value, s, 0);
            touch(w, s->u.store.buf, 1, s);
            break;
        case TILEC_ST_ASSIGN: reads_e(w, s->u.assign.value, s, 0); break;
        case TILEC_ST_COPY: case TILEC_ST_COPY_ASYNC:
            reads_idx(w, s->u.copy.src.base, s->u.copy.src.buf->ndim, s);
            reads_idx(w, s->u.copy.dst.base, s->u.copy.dst.buf->ndim, s);
            touch(w, s->u.copy.src.buf, 0, s);
            touch(w, s->u.copy.dst.buf, 1, s);
            break;
        case TILEC_ST_FILL:
            reads_e(w, s->u.fill.value, s, 0);
            touch(w, s->u.fill.dst.buf, 1, s);
            break;
        case TILEC_ST_GEMM:
            touch(w, s->u.gemm.a, 0, s);
            touch(w, s->u.gemm.b, 0, s);
            if (!s->u.gemm.clear_accum) touch(w, s->u.gemm.c, 0, s);
            touch(w, s->u.gemm.c, 1, s);
            break;
        case TILEC_ST_REDUCE:
            touch(w, s->u.reduce.src, 0, s);
            if (!s->u.reduce.clear) touch(w, s->u.reduce.dst, 0, s);
            touch(w, s->u.reduce.dst, 1, s);
            break;
        case TILEC_ST_CUMSUM:
            touch(w, s->u.cumsum.src, 0, s);
            touch(w, s->u.cumsum.dst, 1, s);
            break;
        case TILEC_ST_ATOMIC:
            reads_idx(w, s->u.atomic.idx, s->u.atomic.buf->ndim, s);
            reads_e(w, s->u.atomic.value, s, 0);
            touch(w, s->u.atomic.buf, 0, s);
            touch(w, s->u.atomic.buf, 1, s);
            break;
        case TILEC_ST_PRINT:
            reads_e(w, s->u.print.value, s, 0);
            if (s->u.print.buf) touch(w, s->u.print.buf, 0, s);
            break;
        default: break;
        }
    }
}

tilec_ir_buffer_t *retype_new(ev_t *ev, tilec_ir_buffer_t *base, const int64_t *dims, int nd, tilec_dtype_t t,
                              ast_loc_t loc, const char *what)
{
    tilec_ir_expr_t *shape[TILEC_IR_MAX_DIMS];
    tilec_ir_buffer_t *b;
    int64_t n = 1, nb = 1, c;
    int i;
    if (base->scope == TILEC_SCOPE_GLOBAL)
        ev_fail(ev, loc, "%s of the kernel tensor '%s' as %s changes the dtype of the caller's bytes; only on-chip "
                "memory may be re-viewed as another dtype (the tile IR has no bit casts between buffers)", what,
                base->name, tilec_dtype_name(t));
    for (i = 0; i < nd; i++) {
        n *= dims[i];
        shape[i] = ex_int32(ev, dims[i]);
    }
    for (i = 0; i < base->ndim; i++) {
        if (!tilec_ir_is_const_int(base->shape[i], &c))
            ev_fail(ev, loc, "%s: the shape of '%s' is not a compile-time constant", what, base->name);
        nb *= c;
    }
    if ((double)n * (double)tilec_dtype_size(t) > (double)nb * (double)tilec_dtype_size(base->dtype))
        ev_fail(ev, loc, "%s: the view (%lld x %s) is larger than '%s' (%lld x %s)", what, (long long)n,
                tilec_dtype_name(t), base->name, (long long)nb, tilec_dtype_name(base->dtype));
    b = ev_chk(ev, tilec_ir_buffer_add(ev->a, ev->k, ev_unique_buf(ev, ev->name_hint ? ev->name_hint : base->name),
                                       base->scope, t, nd, shape));
    ev->name_hint = NULL;
    if (ev->nretype == ev->cap_retype) {
        int cap = ev->cap_retype ? 2 * ev->cap_retype : 4;
        struct retype *nr = ev_alloc(ev, sizeof *nr * (size_t)cap);
        if (ev->nretype) memcpy(nr, ev->retype, sizeof *nr * (size_t)ev->nretype);
        ev->retype = nr;
        ev->cap_retype = cap;
    }
    ev->retype[ev->nretype].k = ev->k;
    ev->retype[ev->nretype].base = base;
    ev->retype[ev->nretype++].view = b;
    return b;
}

void retype_check(ev_t *ev)
{
    int i;
    for (i = 0; i < ev->nretype; i++) {
        rwalk_t w;
        if (ev->retype[i].k != ev->k) continue;
        memset(&w, 0, sizeof w);
        w.ev = ev;
        w.base = ev->retype[i].base;
        w.view = ev->retype[i].view;
        walk(&w, ev->k->body, 0);
    }
}
