/*
 * cpu_rows.c — which kernels run their block one row at a time.
 *
 * Row kernels (softmax, rmsnorm, layernorm: copy block_M rows in, reduce
 * each row, scale it, copy it out) are written as a sequence of tile
 * statements, each over the whole block tile.  On a GPU the tile sits in
 * registers; on a CPU each statement is a pass over block_M x N floats,
 * and at 8 x 1024 floats (32 KiB, the L1 of most cores) every pass
 * streams from L2 and the copy-in fights the input stream for L1: the
 * copies alone then cost as much as a whole memcpy of the data.  When every
 * statement works on each row independently, running all of them on row 0,
 * then all on row 1, ... computes the same values with a working set of one
 * row (4 KiB at N = 1024) that stays in L1.
 *
 * This file decides whether a kernel's top level has that shape, with R =
 * dimension 0 of the on-chip buffer the first whole copy or fill writes:
 * - row statements: a COPY or FILL writing all R rows of an on-chip buffer
 *   (bases 0 in dimension 0) or copying R rows of one into a global
 *   region; a REDUCE of an R-row buffer over a dimension other than 0; a
 *   T.Parallel loop of extent R whose stores to on-chip buffers index
 *   dimension 0 with its variable (loops, ifs and stores only inside);
 *   the on-chip buffers they write are the row buffers;
 * - invariant statements: a COPY or FILL into an on-chip buffer that no
 *   row statement writes, nor any statement before it mentions (rmsnorm's
 *   weight row), emitted once before the row loop;
 * - hints and syncs (no-ops here);
 * and nothing else.  Every read of a row buffer by a row statement must be
 * of its own row (bases 0; loads indexed by the loop variable in
 * dimension 0); a global buffer the kernel writes must not be read; no let
 * variables are assigned.  Then each row statement restricted to row r is
 * exactly its iterations for row r, and no iteration for row r reads what
 * another row's iterations write, so the order of rows does not matter.
 * The plan also names the float16 buffers the hoisted statements fill
 * (small enough for the stack), which the row statements read through a
 * float copy made once (cpu_codegen.c gen_rows).
 */
#include <string.h>

#include "cpu_cg.h"

enum { K_NONE = 0, K_ROW, K_INVARIANT, K_NEUTRAL };

typedef struct rp {
    const tilec_ir_kernel_t *k;
    int64_t R;
    unsigned char *rowbuf;    /* [nbufs] written by a row statement */
    unsigned char *gwritten;  /* [nbufs] global, written */
    int ok;
} rp_t;

static int const_is(const tilec_ir_expr_t *e, int64_t v)
{
    int64_t c;
    return e && tilec_ir_is_const_int(e, &c) && c == v;
}

static int onchip(const tilec_ir_buffer_t *b) { return b && !cg_is_global(b); }

/* An on-chip region of all R rows of an R-row buffer, from row 0. */
static int all_rows(const rp_t *p, const tilec_ir_region_t *r)
{
    return onchip(r->buf) && r->buf->ndim >= 1 && r->base && r->extent && const_is(r->buf->shape[0], p->R) &&
           const_is(r->base[0], 0) && r->extent[0] == p->R;
}

/* Both regions of a copy have R rows in dimension 0 and the same non-1
 * extents in the same order (so row i of one is row i of the other). */
static int rows_match(const rp_t *p, const tilec_ir_region_t *a, const tilec_ir_region_t *b)
{
    if (!a->buf || !b->buf || a->buf->ndim < 1 || b->buf->ndim < 1 || !a->extent || !b->extent ||
        !a->base || !b->base || a->extent[0] != p->R || b->extent[0] != p->R)
        return 0;
    int i = 1, j = 1;
    for (;;) {
        while (i < a->buf->ndim && a->extent[i] == 1)
            i++;
        while (j < b->buf->ndim && b->extent[j] == 1)
            j++;
        if (i == a->buf->ndim || j == b->buf->ndim)
            return i == a->buf->ndim && j == b->buf->ndim;
        if (a->extent[i++] != b->extent[j++])
            return 0;
    }
}

/* Inside a row loop over v: stores only, in loops and ifs; on-chip stores
 * index dimension 0 with v.  Marks what they write. */
static int body_writes(rp_t *p, const tilec_ir_stmt_t *s, const tilec_ir_var_t *v, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return 0;
    for (; s; s = s->next) {
        switch (s->kind) {
        case TILEC_ST_FOR:
            if (!body_writes(p, s->u.loop.body, v, depth + 1))
                return 0;
            break;
        case TILEC_ST_IF:
            if (!body_writes(p, s->u.cond.then, v, depth + 1) || !body_writes(p, s->u.cond.els, v, depth + 1))
                return 0;
            break;
        case TILEC_ST_STORE: {
            const tilec_ir_buffer_t *b = s->u.store.buf;
            if (!b || b->ndim < 1 || !s->u.store.idx)
                return 0;
            if (cg_is_global(b)) {
                p->gwritten[b->id] = 1;
                break;
            }
            const tilec_ir_expr_t *i0 = s->u.store.idx[0];
            if (!i0 || i0->kind != TILEC_EX_VAR || i0->u.var != v || !const_is(b->shape[0], p->R))
                return 0;
            p->rowbuf[b->id] = 1;
            break;
        }
        default: return 0;
        }
    }
    return 1;
}

/* Reads in e are allowed for a row statement over v (v NULL: an invariant
 * statement, which reads no row buffer at all). */
static int expr_ok(const rp_t *p, const tilec_ir_expr_t *e, const tilec_ir_var_t *v, int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4)
        return 0;
    switch (e->kind) {
    case TILEC_EX_INT: case TILEC_EX_FLOAT: case TILEC_EX_VAR: return 1;
    case TILEC_EX_LOAD: {
        const tilec_ir_buffer_t *b = e->u.load.buf;
        if (!b || (b->ndim > 0 && !e->u.load.idx))
            return 0;
        if (p->gwritten[b->id])
            return 0;
        if (p->rowbuf[b->id]) {
            const tilec_ir_expr_t *i0 = b->ndim ? e->u.load.idx[0] : NULL;
            if (!v || !i0 || i0->kind != TILEC_EX_VAR || i0->u.var != v)
                return 0;
        }
        for (int d = 0; d < b->ndim; d++)
            if (!expr_ok(p, e->u.load.idx[d], v, depth + 1))
                return 0;
        return 1;
    }
    case TILEC_EX_UNARY: return expr_ok(p, e->u.un.a, v, depth + 1);
    case TILEC_EX_BINARY: return expr_ok(p, e->u.bin.a, v, depth + 1) && expr_ok(p, e->u.bin.b, v, depth + 1);
    case TILEC_EX_SELECT:
        return expr_ok(p, e->u.sel.cond, v, depth + 1) && expr_ok(p, e->u.sel.a, v, depth + 1) &&
               expr_ok(p, e->u.sel.b, v, depth + 1);
    case TILEC_EX_CAST: return expr_ok(p, e->u.cast.a, v, depth + 1);
    default: return 0;
    }
}

static int idx_ok(const rp_t *p, tilec_ir_expr_t *const *ix, int n, const tilec_ir_var_t *v)
{
    for (int d = 0; d < n; d++)
        if (!ix || !expr_ok(p, ix[d], v, 0))
            return 0;
    return 1;
}

static int body_reads_ok(const rp_t *p, const tilec_ir_stmt_t *s, const tilec_ir_var_t *v, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return 0;
    for (; s; s = s->next) {
        switch (s->kind) {
        case TILEC_ST_FOR:
            if (!expr_ok(p, s->u.loop.extent, v, 0) || !body_reads_ok(p, s->u.loop.body, v, depth + 1))
                return 0;
            break;
        case TILEC_ST_IF:
            if (!expr_ok(p, s->u.cond.cond, v, 0) || !body_reads_ok(p, s->u.cond.then, v, depth + 1) ||
                !body_reads_ok(p, s->u.cond.els, v, depth + 1))
                return 0;
            break;
        default: /* a store (body_writes let nothing else through) */
            if (!idx_ok(p, s->u.store.idx, s->u.store.buf->ndim, v) || !expr_ok(p, s->u.store.value, v, 0))
                return 0;
            break;
        }
    }
    return 1;
}

/* Does statement s mention buffer b at all? */
static int mentions(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return 1;
    switch (s->kind) {
    case TILEC_ST_COPY:
        return s->u.copy.src.buf == b || s->u.copy.dst.buf == b;
    case TILEC_ST_FILL: return s->u.fill.dst.buf == b || cg_expr_reads(s->u.fill.value, b, 0);
    case TILEC_ST_REDUCE: return s->u.reduce.src == b || s->u.reduce.dst == b;
    case TILEC_ST_FOR:
        for (const tilec_ir_stmt_t *c = s->u.loop.body; c; c = c->next)
            if (mentions(c, b, depth + 1))
                return 1;
        return cg_expr_reads(s->u.loop.extent, b, 0);
    case TILEC_ST_IF:
        for (const tilec_ir_stmt_t *c = s->u.cond.then; c; c = c->next)
            if (mentions(c, b, depth + 1))
                return 1;
        for (const tilec_ir_stmt_t *c = s->u.cond.els; c; c = c->next)
            if (mentions(c, b, depth + 1))
                return 1;
        return cg_expr_reads(s->u.cond.cond, b, 0);
    case TILEC_ST_STORE:
        if (s->u.store.buf == b || cg_expr_reads(s->u.store.value, b, 0))
            return 1;
        for (int d = 0; s->u.store.buf && d < s->u.store.buf->ndim; d++)
            if (cg_expr_reads(s->u.store.idx[d], b, 0))
                return 1;
        return 0;
    default: return 0;
    }
}

/* First pass: the kind of top-level statement s, marking what row
 * statements write (an invariant statement is confirmed later). */
static int classify(rp_t *p, const tilec_ir_stmt_t *s)
{
    switch (s->kind) {
    case TILEC_ST_HINT: case TILEC_ST_SYNC: return K_NEUTRAL;
    case TILEC_ST_COPY: {
        const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
        if (!src->buf || !dst->buf)
            return K_NONE;
        if (onchip(dst->buf) && !all_rows(p, dst))
            return K_INVARIANT;
        if (!rows_match(p, src, dst) || (onchip(src->buf) && !all_rows(p, src)) ||
            (cg_is_global(dst->buf) && !onchip(src->buf)))
            return K_NONE;
        if (cg_is_global(dst->buf))
            p->gwritten[dst->buf->id] = 1;
        else
            p->rowbuf[dst->buf->id] = 1;
        return K_ROW;
    }
    case TILEC_ST_FILL:
        if (!onchip(s->u.fill.dst.buf))
            return K_NONE;
        if (!all_rows(p, &s->u.fill.dst))
            return K_INVARIANT;
        p->rowbuf[s->u.fill.dst.buf->id] = 1;
        return K_ROW;
    case TILEC_ST_REDUCE: {
        const tilec_ir_buffer_t *S = s->u.reduce.src, *D = s->u.reduce.dst;
        if (!onchip(S) || !onchip(D) || S->ndim < 2 || s->u.reduce.dim < 1 || s->u.reduce.dim >= S->ndim ||
            D->ndim < 1 || !const_is(S->shape[0], p->R) || !const_is(D->shape[0], p->R))
            return K_NONE;
        p->rowbuf[D->id] = 1;
        return K_ROW;
    }
    case TILEC_ST_FOR:
        if (s->u.loop.kind != TILEC_LOOP_PARALLEL || !const_is(s->u.loop.extent, p->R) ||
            !body_writes(p, s->u.loop.body, s->u.loop.var, 0))
            return K_NONE;
        return K_ROW;
    default: return K_NONE;
    }
}

/* Second pass: the reads of statement s of kind kind are allowed. */
static int reads_ok(const rp_t *p, const tilec_ir_stmt_t *s, int kind)
{
    switch (s->kind) {
    case TILEC_ST_COPY: {
        const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
        if (p->gwritten[src->buf->id] || !idx_ok(p, src->base, src->buf->ndim, NULL) ||
            !idx_ok(p, dst->base, dst->buf->ndim, NULL))
            return 0;
        if (kind == K_INVARIANT)
            return !p->rowbuf[src->buf->id] && !p->rowbuf[dst->buf->id];
        return !p->rowbuf[src->buf->id] || all_rows(p, src);
    }
    case TILEC_ST_FILL:
        if (kind == K_INVARIANT && p->rowbuf[s->u.fill.dst.buf->id])
            return 0;
        return expr_ok(p, s->u.fill.value, NULL, 0) &&
               idx_ok(p, s->u.fill.dst.base, s->u.fill.dst.buf->ndim, NULL);
    case TILEC_ST_REDUCE: return 1; /* its own rows of a row buffer, or a buffer nothing writes */
    case TILEC_ST_FOR: return body_reads_ok(p, s->u.loop.body, s->u.loop.var, 0);
    default: return 1;
    }
}

int cpu_rows_plan(cg_t *g, cpu_rows_t *out)
{
    const tilec_ir_kernel_t *k = g->k;
    memset(out, 0, sizeof *out);
    if (g->grp.gx > 1 || g->grp.gy > 1 || !k->body)
        return 0;
    for (int i = 0; i < k->nvars; i++)
        if (k->vars[i]->kind == TILEC_VAR_LET)
            return 0;
    rp_t p = {.k = k};
    int n = 0;
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next) {
        n++;
        const tilec_ir_region_t *r = s->kind == TILEC_ST_COPY ? &s->u.copy.dst
                                   : s->kind == TILEC_ST_FILL ? &s->u.fill.dst : NULL;
        int64_t rows;
        if (!p.R && r && onchip(r->buf) && r->buf->ndim >= 1 && r->extent &&
            tilec_ir_is_const_int(r->buf->shape[0], &rows) && rows >= 2 && r->extent[0] == rows)
            p.R = rows;
    }
    if (!p.R)
        return 0;
    p.rowbuf = tilec_arena_alloc(&g->ar, (size_t)k->nbufs + 1);
    p.gwritten = tilec_arena_alloc(&g->ar, (size_t)k->nbufs + 1);
    unsigned char *kind = tilec_arena_alloc(&g->ar, (size_t)n + 1);
    if (!p.rowbuf || !p.gwritten || !kind)
        return 0;
    memset(p.rowbuf, 0, (size_t)k->nbufs + 1);
    memset(p.gwritten, 0, (size_t)k->nbufs + 1);
    int i = 0, nrow = 0;
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next, i++) {
        kind[i] = (unsigned char)classify(&p, s);
        if (kind[i] == K_NONE)
            return 0;
        nrow += kind[i] == K_ROW;
    }
    if (nrow < 2)
        return 0;
    i = 0;
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next, i++) {
        if (!reads_ok(&p, s, kind[i]))
            return 0;
        if (kind[i] != K_INVARIANT)
            continue;
        /* moved before the row loop: nothing before it may mention its destination */
        const tilec_ir_buffer_t *d = s->kind == TILEC_ST_COPY ? s->u.copy.dst.buf : s->u.fill.dst.buf;
        for (const tilec_ir_stmt_t *e = k->body; e != s; e = e->next)
            if (mentions(e, d, 0))
                return 0;
    }
    /* float16 destinations of hoisted statements, of at most 4096 elements
     * (the float copy lives on the stack), get a float copy (cpu_codegen.c) */
    unsigned char *shadow = tilec_arena_alloc(&g->ar, (size_t)k->nbufs + 1);
    if (!shadow)
        return 0;
    memset(shadow, 0, (size_t)k->nbufs + 1);
    i = 0;
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next, i++) {
        const tilec_ir_buffer_t *d = kind[i] != K_INVARIANT ? NULL
                                   : s->kind == TILEC_ST_COPY ? s->u.copy.dst.buf : s->u.fill.dst.buf;
        int64_t e = 1, c;
        for (int j = 0; d && j < d->ndim && e <= 4096; j++)
            e = tilec_ir_is_const_int(d->shape[j], &c) && c >= 0 ? e * c : 4097;
        if (d && d->dtype == TILEC_FLOAT16 && e <= 4096 && d->id >= k->nparams)
            shadow[d->id] = 1;
    }
    for (i = 0; i < n; i++)
        kind[i] = kind[i] == K_INVARIANT;
    out->rows = p.R;
    out->hoisted = kind;
    out->rowbuf = p.rowbuf;
    out->shadow = shadow;
    return 1;
}

/* The row statement s folded into the copy after it: s is a T.Parallel
 * loop over the rows (variable i) whose body is one T.Parallel loop over
 * all N columns (j) storing b[i, j] = b[i, j] * e or b[i, j] / e, b an
 * on-chip float32 buffer of shape (R, N), e a float constant or a load
 * of another buffer at indices free of j; s->next, the kernel's last
 * statement, a row copy of b out to a global tensor.  Returns e (and i
 * and whether e divides), or NULL.  The copy then multiplies each element
 * it reads by e (by 1 / e, the reciprocal recip_loop would take) as it
 * converts it: the same products, the same bits, one pass over the row
 * fewer (softmax's x / row_sum before its float16 write-out). */
const tilec_ir_expr_t *cpu_rows_scale_fold(const tilec_ir_stmt_t *s, const tilec_ir_var_t **i, int *div)
{
    const tilec_ir_stmt_t *c = s->next, *in = s->u.loop.body, *st;
    if (s->kind != TILEC_ST_FOR || s->u.loop.kind != TILEC_LOOP_PARALLEL || !c || c->next ||
        c->kind != TILEC_ST_COPY || !in || in->next || in->kind != TILEC_ST_FOR ||
        (in->u.loop.kind != TILEC_LOOP_PARALLEL && in->u.loop.kind != TILEC_LOOP_VECTORIZED))
        return NULL;
    st = in->u.loop.body;
    const tilec_ir_buffer_t *b = st ? st->u.store.buf : NULL;
    int64_t n, ext;
    if (!st || st->next || st->kind != TILEC_ST_STORE || !b || b->ndim != 2 || b->dtype != TILEC_FLOAT32 ||
        !onchip(b) || c->u.copy.src.buf != b || !c->u.copy.dst.buf || !cg_is_global(c->u.copy.dst.buf) ||
        !tilec_ir_is_const_int(b->shape[1], &n) || !tilec_ir_is_const_int(in->u.loop.extent, &ext) || ext != n)
        return NULL;
    const tilec_ir_var_t *vi = s->u.loop.var, *vj = in->u.loop.var;
    tilec_ir_expr_t *const *x = st->u.store.idx;
    const tilec_ir_expr_t *v = st->u.store.value;
    if (!x[0] || x[0]->kind != TILEC_EX_VAR || x[0]->u.var != vi || !x[1] || x[1]->kind != TILEC_EX_VAR ||
        x[1]->u.var != vj || !v || v->kind != TILEC_EX_BINARY || v->dtype != TILEC_FLOAT32 ||
        (v->u.bin.op != TILEC_BIN_MUL && v->u.bin.op != TILEC_BIN_DIV))
        return NULL;
    const tilec_ir_expr_t *a = v->u.bin.a, *e = v->u.bin.b;
    if (!a || a->kind != TILEC_EX_LOAD || a->u.load.buf != b || !a->u.load.idx[0] || !a->u.load.idx[1] ||
        a->u.load.idx[0]->kind != TILEC_EX_VAR || a->u.load.idx[0]->u.var != vi ||
        a->u.load.idx[1]->kind != TILEC_EX_VAR || a->u.load.idx[1]->u.var != vj || !e || e->dtype != TILEC_FLOAT32)
        return NULL;
    if (e->kind == TILEC_EX_LOAD) {
        if (e->u.load.buf == b || !onchip(e->u.load.buf) || !e->u.load.idx)
            return NULL;
        for (int d = 0; d < e->u.load.buf->ndim; d++)
            if (cg_varies(e->u.load.idx[d], vj, 0))
                return NULL;
    } else if (e->kind != TILEC_EX_FLOAT) {
        return NULL;
    }
    *i = vi;
    *div = v->u.bin.op == TILEC_BIN_DIV;
    return e;
}
