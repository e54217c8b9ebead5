/*
 * simt_lowered.c — the SIMT kit on lowered tile IR (IR 1.1): where each
 * buffer lives, the shared-memory plan, and the statements only lowered
 * IR has.
 *
 * A module whose on-chip buffers carry layouts (the SDK's lowering passes
 * ran: tilec/lower.h) is printed as the passes decided, not by the kit's
 * own v1 rules (docs/simt-kit.md §2b):
 *  - a fragment with a REGS layout is a per-thread array of nlocal
 *    registers (simt_regs.c); a shared buffer or a fragment with an SMEM
 *    layout lives at its offset in one block-wide byte pool, element
 *    (i0, ...) at `addr` — one pool rather than one array per buffer,
 *    because the plan lets buffers whose lives do not overlap share bytes
 *    (lower.reuse_of) and writes padding and swizzles into addr, which
 *    separate arrays cannot express;
 *  - barriers are the IR's `barrier` and `sync` statements only (the
 *    barrier pass placed them); the kit's own access analysis is off;
 *  - copies move lower.vector elements at a time at most;
 *  - async copies (targets without them never get any) run as plain
 *    copies, which completes them early: their commits and waits print
 *    nothing.
 * A module without layouts keeps the v1 rules, so a dialect that does not
 * lower (or an ABI-1.0 plugin reading IR 1.0) prints as before.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/ir_walk.h"
#include "simt_internal.h"

int simt_place(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b)
{
    if (c->lowered && c->bi && b && b->id >= 0 && b->id < c->k->nbufs)
        return c->bi[b->id].place;
    if (!b || b->scope == TILEC_SCOPE_GLOBAL)
        return SIMT_P_GLOBAL;
    return simt_is_private(b) ? SIMT_P_PRIVATE : SIMT_P_SHARED;
}

/* ---- layout expressions ------------------------------------------------------------- */

typedef struct lbind {
    const int64_t *idx;
    int ndim;
    int64_t r;
} lbind_t;

static int lay_bind(void *ctx, const tilec_ir_var_t *v, int64_t *out)
{
    const lbind_t *b = ctx;
    if (!v || v->kind != TILEC_VAR_LAYOUT || v->id < 0 || v->id > b->ndim)
        return -1;
    *out = v->id == b->ndim ? b->r : b->idx[v->id];
    return 0;
}

int simt_layout_eval(const tilec_ir_expr_t *e, const int64_t *idx, int ndim, int64_t r, int64_t *out)
{
    lbind_t b = {idx, ndim, r};
    return tilec_ir_eval_int(e, lay_bind, &b, out);
}

const char *simt_layout_str(tilec_simt_ctx_t *c, const tilec_ir_expr_t *e, const char *const *idx, int ndim,
                            const char *r)
{
    if (!e) {
        tilec_simt_fail(c, "layout without an expression");
        return "0";
    }
    int64_t v;
    switch (e->kind) {
    case TILEC_EX_INT:
        if (tilec_ir_is_const_int(e, &v))
            return simt_fmt(c, "%" PRId64, v);
        break;
    case TILEC_EX_VAR:
        if (e->u.var && e->u.var->kind == TILEC_VAR_LAYOUT) {
            const tilec_ir_var_t *x = e->u.var;
            if (x->id >= 0 && x->id <= ndim)
                return simt_fmt(c, "(%s)", x->id == ndim ? (r ? r : "0") : idx[x->id]);
        }
        break;
    case TILEC_EX_BINARY: {
        const char *op = NULL;
        switch (e->u.bin.op) {
        case TILEC_BIN_ADD: op = "+"; break;
        case TILEC_BIN_MUL: op = "*"; break;
        case TILEC_BIN_BITAND: op = "&"; break;
        case TILEC_BIN_BITOR: op = "|"; break;
        case TILEC_BIN_BITXOR: op = "^"; break;
        case TILEC_BIN_SHL: op = "<<"; break;
        case TILEC_BIN_SHR: op = ">>"; break;
        case TILEC_BIN_FLOORDIV:
        case TILEC_BIN_FLOORMOD:
            /* operands of a layout are non-negative: C's / and % agree
             * with floor semantics for a positive constant divisor */
            if (tilec_ir_is_const_int(e->u.bin.b, &v) && v > 0)
                op = e->u.bin.op == TILEC_BIN_FLOORDIV ? "/" : "%";
            break;
        default: break;
        }
        if (!op)
            break;
        return simt_fmt(c, "(%s %s %s)", simt_layout_str(c, e->u.bin.a, idx, ndim, r), op,
                        simt_layout_str(c, e->u.bin.b, idx, ndim, r));
    }
    default: break;
    }
    tilec_simt_fail(c, "a layout expression of a form the SIMT kit does not print (only + * // %% by constants and "
                       "bit operations)");
    return "0";
}

/* ---- buffers ---------------------------------------------------------------------------- */

/* 1 when an smem layout's addr is the row-major offset of every element. */
static int smem_dense(const tilec_ir_buffer_t *b, int64_t n)
{
    const tilec_ir_layout_t *l = b->layout;
    if (n > (1 << 20))
        return 0;
    int64_t ext[TILEC_IR_MAX_DIMS], idx[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < b->ndim; d++)
        if (!tilec_ir_is_const_int(b->shape[d], &ext[d]))
            return 0;
    for (int64_t e = 0; e < n; e++) {
        int64_t q = e, a;
        for (int d = b->ndim - 1; d >= 0; d--) {
            idx[d] = q % ext[d];
            q /= ext[d];
        }
        if (simt_layout_eval(l->addr, idx, b->ndim, 0, &a) != 0 || a != e)
            return 0;
    }
    return 1;
}

/* The longest run (16, 8, 4, 2, else 1) of elements along the last
 * dimension that an smem layout keeps contiguous and aligned to the run:
 * vector copies may then move a run at its address (rows padded by whole
 * vectors, swizzles that permute 16-byte chunks). */
static int smem_vrun(const tilec_ir_buffer_t *b, int64_t n)
{
    const tilec_ir_layout_t *l = b->layout;
    int64_t ext[TILEC_IR_MAX_DIMS], idx[TILEC_IR_MAX_DIMS];
    int nd = b->ndim;
    if (n > (1 << 20) || nd < 1)
        return 1;
    for (int d = 0; d < nd; d++)
        if (!tilec_ir_is_const_int(b->shape[d], &ext[d]))
            return 1;
    for (int w = 16; w > 1; w /= 2) {
        int ok = ext[nd - 1] % w == 0;
        for (int64_t e = 0; ok && e < n; e += w) {
            int64_t q = e, a0, a;
            for (int d = nd - 1; d >= 0; d--) {
                idx[d] = q % ext[d];
                q /= ext[d];
            }
            if (simt_layout_eval(l->addr, idx, nd, 0, &a0) != 0 || a0 % w != 0)
                ok = 0;
            for (int j = 1; ok && j < w; j++) {
                idx[nd - 1]++;
                if (simt_layout_eval(l->addr, idx, nd, 0, &a) != 0 || a != a0 + j)
                    ok = 0;
            }
        }
        if (ok)
            return w;
    }
    return 1;
}

/* Bytes of the lane-exchange scratch a row reduction across lanes needs
 * (simt_regs.c: one slot per row and lane), unless its lanes combine with
 * the dialect's shuffles. */
static int xscratch_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    tilec_simt_ctx_t *c = w->user;
    uint64_t *xelems = c->xelems;
    if (s->kind != TILEC_ST_REDUCE)
        return TILEC_WALK_CONTINUE;
    const tilec_ir_buffer_t *d = s->u.reduce.dst;
    const tilec_ir_attr_t *a = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.reduce");
    int64_t n = tilec_ir_buffer_const_size(d);
    if (a && a->kind == TILEC_ATTR_STRING && strcmp(a->s, "shuffle") == 0 && d->layout &&
        d->layout->kind == TILEC_LAYOUT_REGS && n > 0 &&
        !(c->bi[d->id].rm && simt_regs_lane_shuffle(c, c->bi[d->id].rm))) {
        uint64_t e = (uint64_t)n * (uint64_t)d->layout->replicate;
        tilec_dtype_t at = simt_acc_dtype(d->dtype);
        if (e > xelems[at])
            xelems[at] = e;
    }
    return TILEC_WALK_CONTINUE;
}

int simt_lowered_init(tilec_simt_ctx_t *c)
{
    const tilec_ir_kernel_t *k = c->k;
    int any = 0;
    for (int i = k->nparams; i < k->nbufs; i++)
        if (k->bufs[i] && k->bufs[i]->layout)
            any = 1;
    if (!any)
        return 0;
    c->bi = tilec_arena_alloc(&c->ar, sizeof *c->bi * (size_t)(k->nbufs + 1));
    if (!c->bi) {
        tilec_simt_fail(c, "out of memory");
        return -1;
    }
    memset(c->bi, 0, sizeof *c->bi * (size_t)(k->nbufs + 1));
    c->lowered = 1;
    uint64_t pool = 0;
    for (int i = 0; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        simt_bufinfo_t *x = &c->bi[i];
        if (!simt_buf_ok(c, b))
            return -1;
        const tilec_ir_layout_t *l = b->layout;
        const char *nm = b->name ? b->name : "?";
        if (b->scope == TILEC_SCOPE_GLOBAL) {
            x->place = SIMT_P_GLOBAL;
        } else if (simt_is_private(b)) {
            x->place = SIMT_P_PRIVATE; /* every thread holds all of it ("replicated") */
        } else if (l && l->kind == TILEC_LAYOUT_REGS) {
            if (b->scope != TILEC_SCOPE_FRAGMENT) {
                tilec_simt_fail(c, "shared buffer '%s' has a register layout", nm);
                return -1;
            }
            x->place = SIMT_P_REGS;
            x->rm = simt_regmap_build(c, b);
            if (!x->rm)
                return -1;
        } else if (l && l->kind == TILEC_LAYOUT_SMEM) {
            int64_t n = tilec_ir_buffer_const_size(b);
            if (n < 0 || l->offset < 0 || l->size < 0 || (uint64_t)l->size < (uint64_t)n * tilec_dtype_size(b->dtype) ||
                l->offset % (int64_t)tilec_dtype_size(b->dtype) != 0) {
                tilec_simt_fail(c, "shared buffer '%s': its layout does not hold it", nm);
                return -1;
            }
            x->place = SIMT_P_SHARED;
            x->dense = smem_dense(b, n);
            x->vrun = x->dense ? 1 : smem_vrun(b, n);
            if ((uint64_t)(l->offset + l->size) > pool)
                pool = (uint64_t)(l->offset + l->size);
        } else {
            tilec_simt_fail(c, "buffer '%s' has no layout in a lowered module (run every lowering pass)", nm);
            return -1;
        }
    }
    if (c->dl.pool_min > pool)
        pool = c->dl.pool_min;
    pool = (pool + 15) / 16 * 16;
    uint64_t need = 0;
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = xscratch_stmt;
    w.user = c;
    tilec_ir_stmt_t *body = k->body;
    if (tilec_ir_walk_block(&w, &body) < 0) {
        tilec_simt_fail(c, "statements nested too deeply");
        return -1;
    }
    for (int t = 0; t < TILEC_DTYPE_COUNT; t++)
        if (c->xelems[t] * tilec_dtype_size((tilec_dtype_t)t) > need)
            need = c->xelems[t] * tilec_dtype_size((tilec_dtype_t)t);
    if (need) {
        c->xoff = pool;
        c->xbytes = need;
        pool += (need + 15) / 16 * 16;
    }
    c->pool_bytes = pool;
    return 0;
}

/* A dialect without pointers (shared_decl: GLSL) cannot carve typed
 * buffers out of one byte pool: each shared buffer is its own
 * module-scope array of its layout's size (buffers the plan lets share
 * bytes then do not share them), and the lane-exchange scratch is one
 * array per dtype. */
static uint64_t decl_arrays(tilec_simt_ctx_t *c)
{
    const tilec_ir_kernel_t *k = c->k;
    uint64_t bytes = 0, al = c->dl.shared_align;
    int zeroed = 0;
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (c->bi[i].place != SIMT_P_SHARED)
            continue;
        const char *st = simt_st_type(c, b), *nm = simt_fmt(c, "b%d", i);
        int64_t n = b->layout->size / (int64_t)tilec_dtype_size(b->dtype);
        simt_shared_array(c, st, nm, n,
                          simt_fmt(c, "%s %s, %s", tilec_scope_name(b->scope), b->name ? b->name : "",
                                   b->layout->name ? b->layout->name : ""));
        /* the zero start of on-chip memory, for the buffers whose first
         * use does not overwrite them (lower.zero; own arrays: no reuse) */
        const tilec_ir_attr_t *z = tilec_ir_attr_get(b->nattrs, b->attrs, "lower.zero");
        if (z && z->kind == TILEC_ATTR_INT && z->i) {
            tilec_simt_emit(c, "for (int tc_z = tc_tid; tc_z < %" PRId64 "; tc_z += tc_nthreads) %s = %s;", n,
                            simt_elem(c, nm, "tc_z"), simt_cast(c, "(%s)%s", st, "0"));
            zeroed = 1;
        }
        bytes += ((uint64_t)b->layout->size + al - 1) / al * al;
    }
    for (int t = 0; t < TILEC_DTYPE_COUNT; t++) {
        if (!c->xelems[t])
            continue;
        simt_shared_array(c, tilec_simt_ctype(c, (tilec_dtype_t)t),
                          simt_fmt(c, "tc_x_%s", tilec_dtype_name((tilec_dtype_t)t)), (int64_t)c->xelems[t],
                          "lane exchange of row reductions");
        bytes += (c->xelems[t] * tilec_dtype_size((tilec_dtype_t)t) + al - 1) / al * al;
    }
    if (zeroed)
        tilec_simt_barrier(c);
    return bytes;
}

uint64_t simt_lowered_decls(tilec_simt_ctx_t *c)
{
    const tilec_ir_kernel_t *k = c->k;
    uint64_t pool = c->pool_bytes;
    if (!pool)
        return 0;
    if (c->dl.shared_decl)
        return decl_arrays(c);
    const char *pq = c->dl.shared_ptr_qual, *sp = *pq ? " " : "";
    if (!c->dl.shared_dynamic_decl) { /* else declared with the frame */
        tilec_simt_emit(c, "%s %s tc_smem[%" PRIu64 "] __attribute__((aligned(%u))); /* the shared-memory plan */",
                        c->dl.shared_qual, c->dl.type_name[TILEC_UINT8], pool, c->dl.shared_align);
    }
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (c->bi[i].place != SIMT_P_SHARED)
            continue;
        const char *st = simt_st_type(c, b);
        tilec_simt_emit(c, "%s%s%s *const b%d = (%s%s%s *)(tc_smem + %" PRId64 "); /* %s %s, %s */", pq, sp, st, i, pq,
                        sp, st, b->layout->offset, tilec_scope_name(b->scope), b->name ? b->name : "",
                        b->layout->name ? b->layout->name : "");
    }
    /* on-chip memory starts zeroed, as in the interpreter, where the
     * program reads that start: the buffers the smem pass marked
     * (lower.zero), in whole 32-bit words (nothing else is live yet); the
     * barrier orders the zeros before every thread's first access */
    const char *u32 = c->dl.type_name[TILEC_UINT32];
    int any = 0;
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (c->bi[i].place != SIMT_P_SHARED || !tilec_ir_attr_get(b->nattrs, b->attrs, "lower.zero"))
            continue;
        uint64_t w0 = (uint64_t)b->layout->offset / 4, w1 = ((uint64_t)(b->layout->offset + b->layout->size) + 3) / 4;
        tilec_simt_emit(c, "for (int tc_z = tc_tid; tc_z < %" PRIu64 "; tc_z += tc_nthreads) ((%s%s%s *)tc_smem)[%" PRIu64
                        " + tc_z] = 0; /* %s starts zeroed */", w1 - w0, pq, sp, u32, w0, b->name ? b->name : "");
        any = 1;
    }
    if (any)
        tilec_simt_barrier(c);
    return pool;
}

const char *tilec_simt_elem_at(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *const *idx)
{
    if (c->lowered && simt_place(c, b) == SIMT_P_SHARED && !c->bi[b->id].dense)
        return simt_elem(c, simt_fmt(c, "b%d", b->id), simt_layout_str(c, b->layout->addr, idx, b->ndim, NULL));
    return tilec_simt_elem(c, b, simt_offset_str(c, b, idx));
}

const char *simt_lowered_phys(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off)
{
    if (!c->lowered || simt_place(c, b) != SIMT_P_SHARED || c->bi[b->id].dense)
        return off;
    /* the logical row-major offset back to indices, then addr */
    const char *idx[TILEC_IR_MAX_DIMS];
    const char *stride = "1";
    for (int d = b->ndim - 1; d >= 0; d--) {
        const char *dim = tilec_simt_dim(c, b, d);
        idx[d] = d == 0 ? simt_fmt(c, "((%s) / %s)", off, stride) : simt_fmt(c, "(((%s) / %s) %% %s)", off, stride, dim);
        stride = simt_fmt(c, "(%s * %s)", stride, dim);
    }
    return simt_layout_str(c, b->layout->addr, idx, b->ndim, NULL);
}

int64_t simt_lowered_vec_cap(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int64_t w)
{
    const tilec_ir_attr_t *a = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.vector");
    if (!a || a->kind != TILEC_ATTR_INT)
        return 1;
    const tilec_ir_buffer_t *bs = s->u.copy.src.buf, *bd = s->u.copy.dst.buf;
    for (int i = 0; i < 2; i++) {
        const tilec_ir_buffer_t *b = i ? bd : bs;
        int p = simt_place(c, b);
        if (p != SIMT_P_GLOBAL && !(p == SIMT_P_SHARED && c->bi[b->id].dense)) {
            if (p != SIMT_P_SHARED || c->bi[b->id].vrun < 2)
                return 1;
            while (w > c->bi[b->id].vrun)
                w /= 2;
        }
    }
    while (w > 1 && w > a->i)
        w /= 2;
    return w;
}

/* ---- statements --------------------------------------------------------------------------- */

int simt_lowered_stmt(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    switch (s->kind) {
    case TILEC_ST_BARRIER:
        if (c->per_thread)
            tilec_simt_emit(c, "/* barrier inside per-thread code: not possible here */");
        else
            tilec_simt_barrier(c);
        return 1;
    case TILEC_ST_COPY_ASYNC:
        simt_gen_copy(c, s); /* complete at once: a valid schedule of an async copy */
        return 1;
    case TILEC_ST_ASYNC_COMMIT:
    case TILEC_ST_ASYNC_WAIT:
        if (c->dl.async_copy && c->dl.async_commit && c->dl.async_wait) {
            const char *keys[] = {"n"}, *vals[] = {simt_fmt(c, "%d", s->u.wait.n)};
            tilec_simt_emit(c, "%s", s->kind == TILEC_ST_ASYNC_COMMIT ? c->dl.async_commit
                                                                      : simt_subst(c, c->dl.async_wait, 1, keys, vals));
        } else {
            tilec_simt_emit(c, "/* %s: the copies above completed synchronously */", tilec_stmt_kind_name(s->kind));
        }
        return 1;
    case TILEC_ST_MBAR_INIT:
    case TILEC_ST_MBAR_ARRIVE:
    case TILEC_ST_MBAR_WAIT:
        tilec_simt_fail(c, "barrier objects (%s) are not supported by the SIMT kit yet", tilec_stmt_kind_name(s->kind));
        return 1;
    default: break;
    }
    return simt_regs_stmt(c, s);
}
