/*
 * cpu_uses.c — what statements read and write, for the generator's
 * decisions: which on-chip buffers a block must zero at its start (those
 * whose first use does not certainly overwrite all of them, as the
 * reference interpreter starts every buffer at zero).
 */
#include <stdint.h>

#include "cpu_cg.h"

/* ---- which on-chip buffers need zeroing ---------------------------------------------- */

/* Does e read buffer b? */
int cg_expr_reads(const tilec_ir_expr_t *e, const tilec_ir_buffer_t *b, int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4)
        return e != NULL;
    switch (e->kind) {
    case TILEC_EX_LOAD:
        if (e->u.load.buf == b)
            return 1;
        for (int d = 0; e->u.load.buf && d < e->u.load.buf->ndim; d++)
            if (e->u.load.idx && cg_expr_reads(e->u.load.idx[d], b, depth + 1))
                return 1;
        return 0;
    case TILEC_EX_UNARY: return cg_expr_reads(e->u.un.a, b, depth + 1);
    case TILEC_EX_BINARY: return cg_expr_reads(e->u.bin.a, b, depth + 1) || cg_expr_reads(e->u.bin.b, b, depth + 1);
    case TILEC_EX_SELECT:
        return cg_expr_reads(e->u.sel.cond, b, depth + 1) || cg_expr_reads(e->u.sel.a, b, depth + 1) ||
               cg_expr_reads(e->u.sel.b, b, depth + 1);
    case TILEC_EX_CAST: return cg_expr_reads(e->u.cast.a, b, depth + 1);
    default: return 0;
    }
}

static int idx_reads(tilec_ir_expr_t *const *ix, int n, const tilec_ir_buffer_t *b)
{
    for (int d = 0; ix && d < n; d++)
        if (cg_expr_reads(ix[d], b, 0))
            return 1;
    return 0;
}

static int region_mentions(const tilec_ir_region_t *r, const tilec_ir_buffer_t *b)
{
    return r->buf == b || (r->buf && idx_reads(r->base, r->buf->ndim, b));
}

/* The region is all of its buffer: bases 0 and extents the (constant) shape. */
static int region_whole(const tilec_ir_region_t *r)
{
    const tilec_ir_buffer_t *b = r->buf;
    for (int d = 0; d < b->ndim; d++) {
        int64_t z, n;
        if (!r->base || !tilec_ir_is_const_int(r->base[d], &z) || z != 0 ||
            !tilec_ir_is_const_int(b->shape[d], &n) || !r->extent || r->extent[d] != n)
            return 0;
    }
    return 1;
}

/* Is loop s a nest of one loop per dimension of b, each over all of it,
 * around one store of b[v0, v1, ...] that reads nothing of b?  (It
 * overwrites all of b: `for i, j in T.Parallel(M, N): b[i, j] = ...`.) */
static int stores_all(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b)
{
    const tilec_ir_var_t *v[TILEC_IR_MAX_DIMS];
    if (b->ndim < 1 || b->ndim > TILEC_IR_MAX_DIMS)
        return 0;
    for (int d = 0; d < b->ndim; d++) {
        int64_t n, e;
        if (!s || s->kind != TILEC_ST_FOR)
            return 0;
        if (!tilec_ir_is_const_int(s->u.loop.extent, &e) || !tilec_ir_is_const_int(b->shape[d], &n) || e != n)
            return 0;
        v[d] = s->u.loop.var;
        s = s->u.loop.body;
        if (!s || s->next)
            return 0;
    }
    if (s->kind != TILEC_ST_STORE || s->u.store.buf != b || !s->u.store.idx ||
        cg_expr_reads(s->u.store.value, b, 0))
        return 0;
    for (int d = 0; d < b->ndim; d++) {
        const tilec_ir_expr_t *i = s->u.store.idx[d];
        if (!i || i->kind != TILEC_EX_VAR || i->u.var != v[d])
            return 0;
    }
    return 1;
}

/* First mention of b in the list s, in program order: 0 none, 1 a write
 * of all of b that certainly runs (not under an IF or a loop that may run
 * zero times) and reads nothing of b, 2 anything else (b must start
 * zeroed, as the interpreter's). */
int cg_first_use(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b, int maybe, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return 2;
    for (; s; s = s->next) {
        int r = 0;
        switch (s->kind) {
        case TILEC_ST_FOR: {
            int64_t n;
            if (cg_expr_reads(s->u.loop.extent, b, 0))
                return 2;
            int sure = tilec_ir_is_const_int(s->u.loop.extent, &n) && n >= 1;
            r = !maybe && stores_all(s, b) ? 1 : cg_first_use(s->u.loop.body, b, maybe || !sure, depth + 1);
            break;
        }
        case TILEC_ST_IF:
            if (cg_expr_reads(s->u.cond.cond, b, 0))
                return 2;
            r = cg_first_use(s->u.cond.then, b, 1, depth + 1);
            if (!r)
                r = cg_first_use(s->u.cond.els, b, 1, depth + 1);
            break;
        case TILEC_ST_COPY:
            if (region_mentions(&s->u.copy.src, b) ||
                (s->u.copy.dst.buf && idx_reads(s->u.copy.dst.base, s->u.copy.dst.buf->ndim, b)))
                return 2;
            if (s->u.copy.dst.buf == b)
                r = !maybe && region_whole(&s->u.copy.dst) ? 1 : 2;
            break;
        case TILEC_ST_FILL:
            if (cg_expr_reads(s->u.fill.value, b, 0) ||
                (s->u.fill.dst.buf && idx_reads(s->u.fill.dst.base, s->u.fill.dst.buf->ndim, b)))
                return 2;
            if (s->u.fill.dst.buf == b)
                r = !maybe && region_whole(&s->u.fill.dst) ? 1 : 2;
            break;
        case TILEC_ST_REDUCE:
            if (s->u.reduce.src == b)
                return 2;
            if (s->u.reduce.dst == b)
                r = !maybe && s->u.reduce.clear ? 1 : 2;
            break;
        case TILEC_ST_GEMM:
            if (s->u.gemm.a == b || s->u.gemm.b == b)
                return 2;
            if (s->u.gemm.c == b)
                r = !maybe && s->u.gemm.clear_accum ? 1 : 2;
            break;
        case TILEC_ST_STORE:
            r = s->u.store.buf == b || (s->u.store.buf && idx_reads(s->u.store.idx, s->u.store.buf->ndim, b)) ||
                cg_expr_reads(s->u.store.value, b, 0) ? 2 : 0;
            break;
        case TILEC_ST_ASSIGN: r = cg_expr_reads(s->u.assign.value, b, 0) ? 2 : 0; break;
        case TILEC_ST_ATOMIC:
            r = s->u.atomic.buf == b || (s->u.atomic.buf && idx_reads(s->u.atomic.idx, s->u.atomic.buf->ndim, b)) ||
                cg_expr_reads(s->u.atomic.value, b, 0) ? 2 : 0;
            break;
        case TILEC_ST_PRINT: r = s->u.print.buf == b || cg_expr_reads(s->u.print.value, b, 0) ? 2 : 0; break;
        case TILEC_ST_CUMSUM: r = s->u.cumsum.src == b || s->u.cumsum.dst == b ? 2 : 0; break;
        case TILEC_ST_SYNC: case TILEC_ST_HINT: break;
        default: return 2; /* a kind this analysis does not know */
        }
        if (r)
            return r;
    }
    return 0;
}

/* Scratch layout: offsets o<i> of scratch buffers, then the GEMM area; the
 * total ends in tc_off.  Emitted identically in scratch_size and block. */
