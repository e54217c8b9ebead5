/*
 * simt.c — the statement half of the SIMT lowering kit: one tile IR kernel
 * to the source of one SIMT kernel (see tilec/simt.h, docs/simt-kit.md).
 *
 * Execution model of the generated code (v1, simple and correct):
 *  - one block is one work-group of threads[0]*threads[1]*threads[2]
 *    threads; tc_tid is the linear thread index, tc_nthreads the count;
 *  - SHARED and FRAGMENT buffers are block-wide arrays (shared/local
 *    memory); LOCAL and VAR buffers and `let` variables are per thread;
 *  - block-level scalar code (assignments, serial/pipelined loops, ifs)
 *    runs redundantly and uniformly in every thread, so its values are the
 *    same everywhere and barriers inside it are in uniform control flow;
 *  - block-level side effects on memory other threads can see (a STORE to
 *    a shared or global buffer, ATOMIC, PRINT) run in thread 0 only;
 *  - a T.Parallel nest is flattened and its iterations are spread over the
 *    threads (stride tc_nthreads); its body runs per thread;
 *  - tile operations (COPY, FILL, GEMM, REDUCE, CUMSUM) are loops over their
 *    output elements spread over the threads, except when the output is a
 *    per-thread buffer (then every thread computes all of it) or when they
 *    appear inside per-thread code (then they are plain loops); GEMM gives
 *    each thread register micro-tiles of C, REDUCE with fewer outputs than
 *    threads shares each output among several threads and a tree;
 *  - barriers: the kit tracks, per buffer, which block-wide and global
 *    buffers were read and written since the last barrier at block level,
 *    and puts a barrier before a statement that reads what another
 *    statement wrote, or writes what another statement read or wrote.
 *    Loops are treated as if their body had run before (loop-carried), ifs
 *    merge both branches.  Barriers are only emitted at block level, which
 *    is uniform control flow by construction.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"
#include "simt_internal.h"

/* ---- context API ---------------------------------------------------------------- */

void tilec_simt_fail(tilec_simt_ctx_t *c, const char *fmt, ...)
{
    if (!c || c->failed)
        return;
    c->failed = 1;
    if (c->err && c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
}

void tilec_simt_emit(tilec_simt_ctx_t *c, const char *fmt, ...)
{
    for (int i = 0; i < c->ind; i++)
        tilec_sdk_str_putn(c->o, "  ", 2);
    va_list ap;
    va_start(ap, fmt);
    tilec_sdk_str_vprintf(c->o, fmt, ap);
    va_end(ap);
    tilec_sdk_str_putn(c->o, "\n", 1);
}

void tilec_simt_indent(tilec_simt_ctx_t *c, int delta)
{
    c->ind += delta;
    if (c->ind < 0)
        c->ind = 0;
}

int tilec_simt_per_thread(tilec_simt_ctx_t *c) { return c->per_thread; }
uint32_t tilec_simt_uses(tilec_simt_ctx_t *c) { return c->uses; }
void tilec_simt_add_uses(tilec_simt_ctx_t *c, uint32_t bits) { c->uses |= bits; }
int tilec_simt_tmp(tilec_simt_ctx_t *c) { return c->tmp++; }
const tilec_simt_dialect_t *tilec_simt_dialect(tilec_simt_ctx_t *c) { return &c->dl; }

tilec_simt_place_t tilec_simt_place_of(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b)
{
    if (b && c->lowered && simt_place(c, b) == SIMT_P_REGS)
        return TILEC_SIMT_PLACE_PRIVATE;
    return b && simt_is_private(b) ? TILEC_SIMT_PLACE_PRIVATE : TILEC_SIMT_PLACE_SHARED;
}

void tilec_simt_barrier(tilec_simt_ctx_t *c)
{
    tilec_simt_emit(c, "%s", c->dl.barrier);
    c->nbarriers++;
    c->uses |= TILEC_SIMT_USES_BARRIER;
    c->dirty_r = c->dirty_w = c->dirty_a = 0;
    c->scratch_dirty = 0;
}

/* ---- access analysis -------------------------------------------------------------- */

/* One bit per buffer id (mod 64: a collision only adds a barrier) for
 * buffers other threads can see; private buffers have none. */
static uint64_t bit_of(const tilec_ir_buffer_t *b)
{
    if (!b || simt_is_private(b) || b->id < 0)
        return 0;
    return 1ull << (b->id % 64);
}

typedef struct acc { uint64_t r, w, at; } acc_t; /* reads, writes, atomics */

static void acc_expr(const tilec_ir_expr_t *e, acc_t *a, int depth)
{
    if (!e || depth > SIMT_MAX_DEPTH)
        return;
    switch (e->kind) {
    case TILEC_EX_LOAD:
        a->r |= bit_of(e->u.load.buf);
        if (e->u.load.buf && e->u.load.idx)
            for (int d = 0; d < e->u.load.buf->ndim; d++)
                acc_expr(e->u.load.idx[d], a, depth + 1);
        break;
    case TILEC_EX_UNARY: acc_expr(e->u.un.a, a, depth + 1); break;
    case TILEC_EX_BINARY:
        acc_expr(e->u.bin.a, a, depth + 1);
        acc_expr(e->u.bin.b, a, depth + 1);
        break;
    case TILEC_EX_SELECT:
        acc_expr(e->u.sel.cond, a, depth + 1);
        acc_expr(e->u.sel.a, a, depth + 1);
        acc_expr(e->u.sel.b, a, depth + 1);
        break;
    case TILEC_EX_CAST: acc_expr(e->u.cast.a, a, depth + 1); break;
    default: break;
    }
}

static void acc_region(const tilec_ir_region_t *r, acc_t *a, int depth)
{
    if (r->buf && r->base)
        for (int d = 0; d < r->buf->ndim; d++)
            acc_expr(r->base[d], a, depth + 1);
}

static void acc_stmts(const tilec_ir_stmt_t *s, acc_t *a, int depth);

static void acc_stmt(const tilec_ir_stmt_t *s, acc_t *a, int depth)
{
    if (depth > SIMT_MAX_DEPTH)
        return;
    switch (s->kind) {
    case TILEC_ST_FOR:
        acc_expr(s->u.loop.extent, a, depth);
        acc_stmts(s->u.loop.body, a, depth + 1);
        break;
    case TILEC_ST_IF:
        acc_expr(s->u.cond.cond, a, depth);
        acc_stmts(s->u.cond.then, a, depth + 1);
        acc_stmts(s->u.cond.els, a, depth + 1);
        break;
    case TILEC_ST_STORE:
        a->w |= bit_of(s->u.store.buf);
        if (s->u.store.buf && s->u.store.idx)
            for (int d = 0; d < s->u.store.buf->ndim; d++)
                acc_expr(s->u.store.idx[d], a, depth);
        acc_expr(s->u.store.value, a, depth);
        break;
    case TILEC_ST_ASSIGN: acc_expr(s->u.assign.value, a, depth); break;
    case TILEC_ST_COPY:
        a->r |= bit_of(s->u.copy.src.buf);
        a->w |= bit_of(s->u.copy.dst.buf);
        acc_region(&s->u.copy.src, a, depth);
        acc_region(&s->u.copy.dst, a, depth);
        break;
    case TILEC_ST_FILL:
        a->w |= bit_of(s->u.fill.dst.buf);
        acc_region(&s->u.fill.dst, a, depth);
        acc_expr(s->u.fill.value, a, depth);
        break;
    case TILEC_ST_GEMM:
        a->r |= bit_of(s->u.gemm.a) | bit_of(s->u.gemm.b) | bit_of(s->u.gemm.c);
        a->w |= bit_of(s->u.gemm.c);
        break;
    case TILEC_ST_REDUCE:
        a->r |= bit_of(s->u.reduce.src) | bit_of(s->u.reduce.dst);
        a->w |= bit_of(s->u.reduce.dst);
        break;
    case TILEC_ST_CUMSUM:
        a->r |= bit_of(s->u.cumsum.src);
        a->w |= bit_of(s->u.cumsum.dst);
        break;
    case TILEC_ST_ATOMIC: /* atomics do not race with each other */
        a->at |= bit_of(s->u.atomic.buf);
        if (s->u.atomic.buf && s->u.atomic.idx)
            for (int d = 0; d < s->u.atomic.buf->ndim; d++)
                acc_expr(s->u.atomic.idx[d], a, depth);
        acc_expr(s->u.atomic.value, a, depth);
        break;
    case TILEC_ST_PRINT:
        acc_expr(s->u.print.value, a, depth);
        a->r |= bit_of(s->u.print.buf);
        break;
    default: break;
    }
}

static void acc_stmts(const tilec_ir_stmt_t *s, acc_t *a, int depth)
{
    for (; s; s = s->next)
        acc_stmt(s, a, depth);
}

/* Barrier before an access set that conflicts with the pending one. */
static void sync_for(tilec_simt_ctx_t *c, const acc_t *a)
{
    if (c->lowered) /* the barrier pass placed them: `barrier` statements */
        return;
    if ((a->r & (c->dirty_w | c->dirty_a)) || (a->w & (c->dirty_r | c->dirty_w | c->dirty_a)) ||
        (a->at & (c->dirty_r | c->dirty_w)))
        tilec_simt_barrier(c);
}

static void note_acc(tilec_simt_ctx_t *c, const acc_t *a)
{
    c->dirty_r |= a->r;
    c->dirty_w |= a->w;
    c->dirty_a |= a->at;
}

/* ---- helpers for loops ---------------------------------------------------------------- */

/* Opens "for (T E = start; E < total; E += step) {" spreading iterations
 * over the threads when coop; returns the loop variable's name. */
static const char *open_elem_loop(tilec_simt_ctx_t *c, int64_t total, int coop)
{
    int t = tilec_simt_tmp(c);
    const char *it = c->dl.type_name[total > INT32_MAX - 65536 ? TILEC_INT64 : TILEC_INT32];
    const char *e = simt_fmt(c, "tc_e%d", t);
    if (coop)
        tilec_simt_emit(c, "for (%s %s = tc_tid; %s < %" PRId64 "; %s += tc_nthreads) {", it, e, e, total, e);
    else
        tilec_simt_emit(c, "for (%s %s = 0; %s < %" PRId64 "; %s++) {", it, e, e, total, e);
    c->ind++;
    return e;
}

static void close_block(tilec_simt_ctx_t *c)
{
    c->ind--;
    tilec_simt_emit(c, "}");
}

static int64_t const_dim(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, int d)
{
    int64_t v;
    if (d < 0 || d >= b->ndim || !b->shape || !tilec_ir_is_const_int(b->shape[d], &v) || v < 1) {
        tilec_simt_fail(c, "buffer '%s' needs a constant shape here", b->name ? b->name : "?");
        return 1;
    }
    return v;
}

static int64_t const_size(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b)
{
    int64_t n = 1;
    for (int d = 0; d < b->ndim; d++) {
        int64_t v = const_dim(c, b, d);
        if (n > INT64_MAX / 16 / v) {
            tilec_simt_fail(c, "buffer '%s' is too large", b->name ? b->name : "?");
            return 1;
        }
        n *= v;
    }
    return n;
}

/* Offset of index strings idx[] in b (row-major). */
static const char *offset_str(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *const *idx)
{
    if (b->ndim == 0)
        return "0";
    const char *o = idx[0];
    for (int d = 1; d < b->ndim; d++)
        o = simt_fmt(c, "(%s * %s + %s)", o, tilec_simt_dim(c, b, d), idx[d]);
    return o;
}

static const char *inside_str(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *const *idx)
{
    const char *r = NULL;
    for (int d = 0; d < b->ndim; d++) {
        const char *t = simt_fmt(c, "%s >= 0 && %s < %s", idx[d], idx[d], tilec_simt_dim(c, b, d));
        r = r ? simt_fmt(c, "%s && %s", r, t) : t;
    }
    return r ? r : simt_true(c);
}

/* Declares tc_in<t>: region t of r lies wholly inside its buffer (then the
 * per-element guards are skipped); returns the name. */
static const char *region_inside(tilec_simt_ctx_t *c, const tilec_ir_region_t *r, int t)
{
    const char *cond = NULL;
    for (int d = 0; d < r->buf->ndim; d++) {
        int64_t b0, n;
        /* a constant base inside a constant dimension needs no test (and a
         * C compiler warns about a constant operand of &&) */
        if (r->base && tilec_ir_is_const_int(r->base[d], &b0) && tilec_ir_is_const_int(r->buf->shape[d], &n) &&
            b0 >= 0 && b0 <= n - r->extent[d])
            continue;
        const char *x = simt_fmt(c, "tc_r%d_%d >= 0 && tc_r%d_%d + %" PRId64 " <= %s", t, d, t, d, r->extent[d],
                                 tilec_simt_dim(c, r->buf, d));
        cond = cond ? simt_fmt(c, "%s && %s", cond, x) : x;
    }
    const char *nm = simt_fmt(c, "tc_in%d", t);
    tilec_simt_emit(c, "const %s %s = %s;", simt_flag(c), nm, cond ? cond : simt_true(c));
    return nm;
}

/* ---- tile operations -------------------------------------------------------------------- */

/* Declares the bases of region r (names tc_r<t>_<d>) and returns t. */
static int region_bases(tilec_simt_ctx_t *c, const tilec_ir_region_t *r, int64_t *total)
{
    if (!simt_buf_ok(c, r->buf))
        return -1;
    if (r->buf->ndim > 0 && (!r->base || !r->extent)) {
        tilec_simt_fail(c, "region without bases or extents");
        return -1;
    }
    int t = tilec_simt_tmp(c);
    const char *it = simt_idx_type(c, r->buf);
    *total = 1;
    for (int d = 0; d < r->buf->ndim; d++) {
        if (r->extent[d] < 1 || r->extent[d] > INT32_MAX || *total > INT64_MAX / 16 / r->extent[d]) {
            tilec_simt_fail(c, "region extent %" PRId64 " out of range", r->extent[d]);
            return -1;
        }
        *total *= r->extent[d];
        tilec_simt_emit(c, "const %s tc_r%d_%d = %s;", it, t, d, simt_cast(c, "(%s)(%s)", it, tilec_simt_expr(c, r->base[d])));
    }
    return t;
}

/* v converted to dtype `to` for a store into a buffer of that dtype: a
 * store of a 16-bit float rounds by itself, so the float value goes as is. */
static const char *store_conv(tilec_simt_ctx_t *c, const char *v, tilec_dtype_t from, tilec_dtype_t to)
{
    if (simt_is_half(to) && (from == TILEC_FLOAT32 || simt_is_half(from)))
        return v;
    return tilec_simt_convert(c, v, from, to);
}

/* The operand a store of v into a buffer of dtype `to` prints, and in *vt
 * the dtype of the printed value: a cast to a 16-bit `to` of a float32 or
 * 16-bit operand is left out, since the store rounds the operand the same
 * way (rounding is idempotent: f2h(h2f(f2h(x))) == f2h(x), NaN stays NaN),
 * which saves two conversions an element (conv2d's epilogue). */
static const tilec_ir_expr_t *store_operand(const tilec_ir_expr_t *v, tilec_dtype_t to, tilec_dtype_t *vt)
{
    if (simt_is_half(to) && v->kind == TILEC_EX_CAST && v->dtype == to &&
        (v->u.cast.a->dtype == TILEC_FLOAT32 || v->u.cast.a->dtype == to))
        v = v->u.cast.a;
    *vt = simt_is_half(to) && (v->dtype == TILEC_FLOAT32 || simt_is_half(v->dtype)) ? v->dtype : to;
    return v;
}

/* The value a store of v into a buffer of dtype `to` prints */
static const char *store_value(tilec_simt_ctx_t *c, const tilec_ir_expr_t *v, tilec_dtype_t to)
{
    tilec_dtype_t vt;
    v = store_operand(v, to, &vt);
    return store_conv(c, tilec_simt_expr(c, (tilec_ir_expr_t *)v), v->dtype, to);
}

static int coop_for(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *dst)
{
    return !c->per_thread && !simt_is_private(dst);
}

/* Accumulator dtype for results of dtype t. */
static tilec_dtype_t acc_dtype(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_FLOAT16: case TILEC_BFLOAT16: return TILEC_FLOAT32;
    case TILEC_BOOL: case TILEC_INT8: case TILEC_INT16: case TILEC_UINT8: case TILEC_UINT16: return TILEC_INT32;
    default: return t;
    }
}

/* Largest of 4, 2, 1 dividing n and at most cap. */
static int64_t tile_div(int64_t n, int64_t cap)
{
    for (int64_t t = 4; t > 1; t /= 2)
        if (n % t == 0 && t <= cap)
            return t;
    return 1;
}

/* GEMM: each thread owns micro-tiles of TM x TN elements of C, accumulated
 * in registers (unrolled scalars) over K: TM + TN operand loads feed
 * TM * TN multiply-adds.  The summation order over K is that of the plain
 * loop, so the tile size never changes results. */
int simt_gemm_lead(const tilec_ir_stmt_t *s, int side)
{
    const tilec_ir_buffer_t *X = side ? s->u.gemm.b : s->u.gemm.a;
    return (side ? s->u.gemm.b_lead : s->u.gemm.a_lead) ? X->ndim - 2 : 0;
}

const char *simt_gemm_off(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int side, const char *row, const char *col)
{
    const tilec_ir_buffer_t *X = side ? s->u.gemm.b : s->u.gemm.a;
    tilec_ir_expr_t *const *lead = side ? s->u.gemm.b_lead : s->u.gemm.a_lead;
    int nl = simt_gemm_lead(s, side);
    const char *idx[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < nl; d++)
        idx[d] = tilec_simt_expr(c, lead[d]);
    idx[nl] = row;
    idx[nl + 1] = col;
    return offset_str(c, X, idx);
}

static void gen_gemm(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    if (!simt_buf_ok(c, A) || !simt_buf_ok(c, B) || !simt_buf_ok(c, C))
        return;
    int la = simt_gemm_lead(s, 0), lb = simt_gemm_lead(s, 1);
    if (A->ndim - la != 2 || B->ndim - lb != 2 || C->ndim != 2) {
        tilec_simt_fail(c, "gemm: operands must be 2-D");
        return;
    }
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    int64_t M = const_dim(c, C, 0), N = const_dim(c, C, 1);
    int64_t K = const_dim(c, A, la + (ta ? 0 : 1));
    if (c->failed)
        return;
    if (const_dim(c, A, la + (ta ? 1 : 0)) != M || const_dim(c, B, lb + (tb ? 1 : 0)) != K ||
        const_dim(c, B, lb + (tb ? 0 : 1)) != N) {
        tilec_simt_fail(c, "gemm: shapes of '%s', '%s', '%s' do not agree", A->name, B->name, C->name);
        return;
    }
    int coop = coop_for(c, C);
    int64_t nt = coop ? c->nthreads : 1;
    int64_t per = M * N / nt; /* elements per thread when spread evenly */
    int64_t TN = tile_div(N, per < 1 ? 1 : per);
    int64_t TM = tile_div(M, per / TN < 1 ? 1 : per / TN);
    int64_t NTN = N / TN, ntiles = (M / TM) * NTN;
    tilec_dtype_t at = acc_dtype(C->dtype);
    const char *act = tilec_simt_ctype(c, at);
    tilec_simt_emit(c, "{ /* gemm %s, %s -> %s (%" PRId64 "x%" PRId64 " per thread) */", A->name ? A->name : "?",
                    B->name ? B->name : "?", C->name ? C->name : "?", TM, TN);
    c->ind++;
    const char *e = open_elem_loop(c, ntiles, coop);
    tilec_simt_emit(c, "const int tc_m0 = %s * %" PRId64 ", tc_n0 = %s * %" PRId64 ";",
                    simt_cast(c, "(%s)(%s)", "int", simt_fmt(c, "%s / %" PRId64, e, NTN)), TM,
                    simt_cast(c, "(%s)(%s)", "int", simt_fmt(c, "%s %% %" PRId64, e, NTN)), TN);
    for (int64_t i = 0; i < TM; i++)
        for (int64_t j = 0; j < TN; j++) {
            const char *coff = simt_fmt(c, "((tc_m0 + %" PRId64 ") * %" PRId64 " + tc_n0 + %" PRId64 ")", i, N, j);
            tilec_simt_emit(c, "%s tc_c%" PRId64 "_%" PRId64 " = %s;", act, i, j,
                            s->u.gemm.clear_accum ? simt_zero(c, at)
                                                  : tilec_simt_convert(c, tilec_simt_load(c, C, coff), C->dtype, at));
        }
    tilec_simt_emit(c, "for (int tc_k = 0; tc_k < %" PRId64 "; tc_k++) {", K);
    c->ind++;
    for (int64_t i = 0; i < TM; i++) {
        const char *m = simt_fmt(c, "(tc_m0 + %" PRId64 ")", i);
        const char *aoff = ta ? simt_gemm_off(c, s, 0, "tc_k", m) : simt_gemm_off(c, s, 0, m, "tc_k");
        tilec_simt_emit(c, "const %s tc_a%" PRId64 " = %s;", act, i,
                        tilec_simt_convert(c, tilec_simt_load(c, A, aoff), A->dtype, at));
    }
    for (int64_t j = 0; j < TN; j++) {
        const char *n = simt_fmt(c, "(tc_n0 + %" PRId64 ")", j);
        const char *boff = tb ? simt_gemm_off(c, s, 1, n, "tc_k") : simt_gemm_off(c, s, 1, "tc_k", n);
        tilec_simt_emit(c, "const %s tc_b%" PRId64 " = %s;", act, j,
                        tilec_simt_convert(c, tilec_simt_load(c, B, boff), B->dtype, at));
    }
    for (int64_t i = 0; i < TM; i++)
        for (int64_t j = 0; j < TN; j++) {
            const char *acc = simt_fmt(c, "tc_c%" PRId64 "_%" PRId64, i, j);
            tilec_simt_emit(c, "%s = %s;", acc,
                            simt_add(c, at, acc, simt_fmt(c, "tc_a%" PRId64 " * tc_b%" PRId64, i, j)));
        }
    close_block(c);
    for (int64_t i = 0; i < TM; i++)
        for (int64_t j = 0; j < TN; j++) {
            const char *coff = simt_fmt(c, "((tc_m0 + %" PRId64 ") * %" PRId64 " + tc_n0 + %" PRId64 ")", i, N, j);
            tilec_simt_emit(c, "%s", tilec_simt_store(c, C, coff,
                                                      store_conv(c, simt_fmt(c, "tc_c%" PRId64 "_%" PRId64, i, j), at, C->dtype)));
        }
    close_block(c);
    close_block(c);
}

/* ---- T.print -------------------------------------------------------------------------------- */

/* A string literal for s; pct doubles every % (for a printf format). */
static const char *c_string(tilec_simt_ctx_t *c, const char *s, int pct)
{
    tilec_sdk_str_t b = {0};
    tilec_sdk_str_putn(&b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\' || *p == '?') {
            char e[3] = {'\\', (char)*p, 0};
            tilec_sdk_str_putn(&b, e, 2);
        } else if (*p == '%') {
            tilec_sdk_str_puts(&b, pct ? "%%" : "%");
        } else if (*p < 32 || *p >= 127) {
            tilec_sdk_str_printf(&b, "\\%03o", *p);
        } else {
            tilec_sdk_str_putn(&b, (const char *)p, 1);
        }
    }
    tilec_sdk_str_putn(&b, "\"", 1);
    const char *r = b.oom ? "\"\"" : simt_fmt(c, "%s", b.s);
    tilec_sdk_str_free(&b);
    return r;
}

static void print_value(tilec_simt_ctx_t *c, const char *prefix_fmt, const char *v, tilec_dtype_t t, const char *suffix)
{
    if (simt_is_flt(t))
        tilec_simt_emit(c, "printf(\"%s%%g%s\", %s(%s));", prefix_fmt, suffix,
                        t == TILEC_FLOAT64 ? "(double)" : "", v);
    else if (t == TILEC_UINT64)
        tilec_simt_emit(c, "printf(\"%s%s%s\", (%s)(%s));", prefix_fmt, c->dl.printf_i64, suffix,
                        c->dl.type_name[TILEC_INT64], v);
    else
        tilec_simt_emit(c, "printf(\"%s%s%s\", (%s)(%s));", prefix_fmt, c->dl.printf_i64, suffix,
                        c->dl.type_name[TILEC_INT64], v);
}

static void gen_print(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    c->uses |= TILEC_SIMT_USES_PRINT;
    if (!c->dl.has_printf) {
        tilec_simt_emit(c, "/* T.print: no printf in the %s dialect */", c->dl.name);
        return;
    }
    const char *m = s->u.print.msg;
    if (s->u.print.value) {
        const tilec_ir_expr_t *v = s->u.print.value;
        const char *lit = c_string(c, m && *m ? m : "", 1);
        /* strip the quotes: the message goes inside the format literal */
        const char *inner = simt_fmt(c, "%.*s%s", (int)strlen(lit) - 2, lit + 1, m && *m ? ": " : "");
        print_value(c, inner, tilec_simt_expr(c, v), v->dtype, "\\n");
        return;
    }
    const tilec_ir_buffer_t *b = s->u.print.buf;
    if (!simt_buf_ok(c, b))
        return;
    const char *lit = c_string(c, m && *m ? m : (b->name ? b->name : "?"), 1);
    tilec_simt_emit(c, "{");
    c->ind++;
    const char *I = c->dl.type_name[TILEC_INT64];
    const char *shp = NULL;
    for (int d = 0; d < b->ndim; d++)
        shp = shp ? simt_fmt(c, "%s, (%s)%s", shp, I, tilec_simt_dim(c, b, d)) : simt_fmt(c, "(%s)%s", I, tilec_simt_dim(c, b, d));
    tilec_simt_emit(c, "const %s tc_sh[%d] = {%s}; %s tc_n = 1;", I, b->ndim ? b->ndim : 1, shp ? shp : "1", I);
    tilec_simt_emit(c, "for (int tc_d = 0; tc_d < %d; ++tc_d) tc_n *= tc_sh[tc_d];", b->ndim);
    tilec_simt_emit(c, "printf(\"%.*s: \");", (int)strlen(lit) - 2, lit + 1);
    tilec_simt_emit(c, "if (tc_n == 0) printf(\"[]\");");
    tilec_simt_emit(c, "for (%s tc_f = 0; tc_f < tc_n; ++tc_f) {", I);
    c->ind++;
    tilec_simt_emit(c, "%s tc_span = 1;", I);
    tilec_simt_emit(c, "for (int tc_d = %d; tc_d >= 0; --tc_d) { tc_span *= tc_sh[tc_d]; if (tc_f %% tc_span == 0) printf(\"[\"); }",
                    b->ndim - 1);
    print_value(c, "", tilec_simt_load(c, b, "tc_f"), b->dtype, "");
    tilec_simt_emit(c, "tc_span = 1;");
    tilec_simt_emit(c, "for (int tc_d = %d; tc_d >= 0; --tc_d) { tc_span *= tc_sh[tc_d]; if ((tc_f + 1) %% tc_span == 0) printf(\"]\"); }",
                    b->ndim - 1);
    tilec_simt_emit(c, "if (tc_f + 1 < tc_n) printf(\", \");");
    close_block(c);
    tilec_simt_emit(c, "printf(\"\\n\");");
    close_block(c);
}

/* ---- statements ------------------------------------------------------------------------------ */

static void gen_stmts(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);

static int var_ok(tilec_simt_ctx_t *c, const tilec_ir_var_t *v)
{
    if (!v || v->id < 0 || v->id >= c->k->nvars || c->k->vars[v->id] != v) {
        tilec_simt_fail(c, "reference to a variable not declared by the kernel");
        return 0;
    }
    return 1;
}

/* A plain serial loop (per-thread code, or a uniform block-level loop). */
static void open_serial(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    if (!var_ok(c, s->u.loop.var))
        return;
    int id = s->u.loop.var->id;
    const char *ext = tilec_simt_convert(c, tilec_simt_expr(c, s->u.loop.extent), s->u.loop.extent->dtype, TILEC_INT32);
    int64_t v;
    if (tilec_ir_is_const_int(s->u.loop.extent, &v)) {
        tilec_simt_emit(c, "for (int v%d = 0; v%d < %s; v%d++) { /* %s %s */", id, id, ext, id,
                        tilec_loop_kind_name(s->u.loop.kind), s->u.loop.var->name ? s->u.loop.var->name : "");
    } else {
        int t = tilec_simt_tmp(c);
        const char *q = !c->per_thread && c->dl.uniform_trip_qual ? c->dl.uniform_trip_qual : "";
        tilec_simt_emit(c, "%s%sconst int tc_n%d = %s;", q, *q ? " " : "", t, ext);
        tilec_simt_emit(c, "for (int v%d = 0; v%d < tc_n%d; v%d++) { /* %s %s */", id, id, t, id,
                        tilec_loop_kind_name(s->u.loop.kind), s->u.loop.var->name ? s->u.loop.var->name : "");
    }
    c->ind++;
}

/* A T.Parallel nest at block level: flattened, iterations spread over the
 * threads; the body runs per thread. */
static void gen_parallel(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_stmt_t *lv[TILEC_IR_MAX_DIMS * 4];
    int n = 0;
    const tilec_ir_stmt_t *p = s;
    for (;;) {
        if (!var_ok(c, p->u.loop.var) || !p->u.loop.extent)
            return;
        lv[n++] = p;
        const tilec_ir_stmt_t *b = p->u.loop.body;
        if (n < (int)(sizeof lv / sizeof lv[0]) && b && !b->next && b->kind == TILEC_ST_FOR &&
            b->u.loop.kind == TILEC_LOOP_PARALLEL)
            p = b;
        else
            break;
    }
    /* a gathered copy (lower_gather.c): the innermost loop in steps of gw */
    int64_t gw = 1, gx = 0;
    if (c->lowered && c->dl.vec_load && c->dl.vec_store) {
        const tilec_ir_attr_t *va = tilec_ir_attr_get(lv[n - 1]->nattrs, lv[n - 1]->attrs, "lower.vector");
        lower_gather_form_t gf;
        if (va && va->kind == TILEC_ATTR_INT && va->i > 1 && tilec_ir_is_const_int(lv[n - 1]->u.loop.extent, &gx) &&
            gx > 0 && gx % va->i == 0 && lower_gather_form(lv[n - 1]->u.loop.body, &gf))
            gw = va->i;
    }
    int t = tilec_simt_tmp(c);
    const char *I = c->dl.type_name[c->dl.index32 ? TILEC_INT32 : TILEC_INT64];
    tilec_simt_emit(c, "{ /* parallel over %d loop%s */", n, n > 1 ? "s" : "");
    c->ind++;
    int all_const = 1;
    int64_t total = 1;
    const char *ext[TILEC_IR_MAX_DIMS * 4];
    int64_t exv[TILEC_IR_MAX_DIMS * 4];
    for (int i = 0; i < n; i++) {
        int64_t v;
        exv[i] = 0;
        if (tilec_ir_is_const_int(lv[i]->u.loop.extent, &v) && v >= 0 && v <= INT32_MAX && total <= INT32_MAX / (v ? v : 1)) {
            if (i == n - 1)
                v /= gw;
            exv[i] = v;
            ext[i] = simt_fmt(c, "%" PRId64, v);
            total *= v;
        } else {
            all_const = 0;
            ext[i] = simt_fmt(c, "tc_x%d_%d", t, i);
            tilec_simt_emit(c, "const %s %s = %s%s;", I, ext[i], simt_cast(c, "(%s)(%s)", I, tilec_simt_expr(c, lv[i]->u.loop.extent)),
                            i == n - 1 && gw > 1 ? simt_fmt(c, " / %" PRId64, gw) : "");
        }
    }
    const char *it = all_const ? c->dl.type_name[TILEC_INT32] : I;
    const char *tot;
    if (all_const) {
        tot = simt_fmt(c, "%" PRId64, total);
    } else {
        tot = ext[0];
        for (int i = 1; i < n; i++)
            tot = simt_fmt(c, "%s * %s", tot, ext[i]);
        tilec_simt_emit(c, "const %s tc_t%d = (%s < 0 ? 0 : %s);", I, t, ext[0], tot);
        tot = simt_fmt(c, "tc_t%d", t);
    }
    int unroll = gw > 1 && all_const && c->nthreads > 0 && total % c->nthreads == 0 && total / c->nthreads <= 16;
    if (unroll) {
        /* a gathered copy that every thread runs the same number of times: a loop of constant trip count j
           (unrolled), flat index tid + j * T.  While T (then T / e ...) is a multiple of the extent e being
           split off, that loop variable is the thread's own (tid % e, the same for every j) and j only adds
           to the outer ones: the compiler then sees which index terms a thread's groups share and which do
           not change between the iterations of an enclosing loop */
        int64_t S = c->nthreads;
        tilec_simt_emit(c, "for (int tc_j%d = 0; tc_j%d < %" PRId64 "; tc_j%d++) {", t, t, total / c->nthreads, t);
        c->ind++;
        tilec_simt_emit(c, "%s tc_q%d = tc_tid;", it, t);
        int mixed = 0;
        for (int i = n - 1; i >= 0; i--) {
            int id = lv[i]->u.loop.var->id;
            const char *sc = i == n - 1 && gw > 1 ? simt_fmt(c, " * %" PRId64, gw) : "";
            const char *nm = lv[i]->u.loop.var->name ? lv[i]->u.loop.var->name : "";
            if (!mixed && i == 0) {
                tilec_simt_emit(c, "const int v%d = (int)(tc_q%d + tc_j%d * %" PRId64 ")%s; /* %s */", id, t, t, S, sc, nm);
                continue;
            }
            if (!mixed && exv[i] > 0 && S % exv[i] == 0) {
                tilec_simt_emit(c, "const int v%d = (int)(tc_q%d %% %" PRId64 ")%s; tc_q%d /= %" PRId64 "; /* %s */", id, t,
                                exv[i], sc, t, exv[i], nm);
                S /= exv[i];
                continue;
            }
            if (!mixed) {
                tilec_simt_emit(c, "tc_q%d += tc_j%d * %" PRId64 ";", t, t, S);
                mixed = 1;
            }
            if (i == 0)
                tilec_simt_emit(c, "const int v%d = (int)tc_q%d%s; /* %s */", id, t, sc, nm);
            else
                tilec_simt_emit(c, "const int v%d = (int)(tc_q%d %% %" PRId64 ")%s; tc_q%d /= %" PRId64 "; /* %s */", id, t,
                                exv[i], sc, t, exv[i], nm);
        }
    } else {
        tilec_simt_emit(c, "for (%s tc_i%d = tc_tid; tc_i%d < %s; tc_i%d += tc_nthreads) {", it, t, t, tot, t);
        c->ind++;
        tilec_simt_emit(c, "%s tc_q%d = tc_i%d;", it, t, t);
    }
    for (int i = unroll ? -1 : n - 1; i >= 0; i--) { /* the flat index split into the loop variables */
        int id = lv[i]->u.loop.var->id;
        const char *sc = i == n - 1 && gw > 1 ? simt_fmt(c, " * %" PRId64, gw) : "";
        if (i == 0)
            tilec_simt_emit(c, "const int v%d = %s%s; /* %s */", id,
                            simt_cast(c, "(%s)%s", "int", simt_fmt(c, "tc_q%d", t)), sc,
                            lv[i]->u.loop.var->name ? lv[i]->u.loop.var->name : "");
        else
            tilec_simt_emit(c, "const int v%d = %s%s; tc_q%d /= %s; /* %s */", id,
                            simt_cast(c, "(%s)(%s)", "int", simt_fmt(c, "tc_q%d %% %s", t, ext[i])), sc, t, ext[i],
                            lv[i]->u.loop.var->name ? lv[i]->u.loop.var->name : "");
    }
    if (!c->dl.bool_type)
        tilec_simt_emit(c, "(void)tc_q%d;", t);
    int saved = c->per_thread;
    c->per_thread = 1;
    if (gw < 2 || !simt_gen_gather(c, lv[n - 1], gw))
        gen_stmts(c, lv[n - 1]->u.loop.body);
    c->per_thread = saved;
    close_block(c);
    close_block(c);
}

/* Lowers one statement that is not a block-level loop or if. */
static void gen_simple(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    if (c->dl.stmt_hook) {
        int r = c->dl.stmt_hook(c->dl.user, c, s);
        if (r == 1)
            return;
        if (r < 0) {
            tilec_simt_fail(c, "the %s backend's statement hook failed", c->dl.name);
            return;
        }
    }
    if (c->lowered && simt_lowered_stmt(c, s))
        return;
    int thread0 = 0;
    switch (s->kind) {
    case TILEC_ST_STORE:
        thread0 = !c->per_thread && s->u.store.buf && !simt_is_private(s->u.store.buf);
        break;
    case TILEC_ST_ATOMIC:
        thread0 = !c->per_thread && s->u.atomic.buf && !simt_is_private(s->u.atomic.buf);
        break;
    case TILEC_ST_PRINT: thread0 = !c->per_thread; break;
    default: break;
    }
    if (thread0) {
        tilec_simt_emit(c, "if (tc_tid == 0) {");
        c->ind++;
        c->per_thread = 1;
    }
    switch (s->kind) {
    case TILEC_ST_FOR:
        if (s->u.loop.kind == TILEC_LOOP_PARALLEL && !c->per_thread) {
            gen_parallel(c, s);
        } else {
            open_serial(c, s);
            gen_stmts(c, s->u.loop.body);
            close_block(c);
        }
        break;
    case TILEC_ST_IF:
        tilec_simt_emit(c, "if (%s) {", simt_cond(c, tilec_simt_expr(c, s->u.cond.cond)));
        c->ind++;
        gen_stmts(c, s->u.cond.then);
        if (s->u.cond.els) {
            c->ind--;
            tilec_simt_emit(c, "} else {");
            c->ind++;
            gen_stmts(c, s->u.cond.els);
        }
        close_block(c);
        break;
    case TILEC_ST_STORE: {
        const tilec_ir_buffer_t *b = s->u.store.buf;
        if (!simt_buf_ok(c, b) || !s->u.store.value)
            break;
        const char *off = tilec_simt_offset(c, b, s->u.store.idx);
        const char *v = store_value(c, s->u.store.value, b->dtype);
        tilec_simt_emit(c, "%s", tilec_simt_store(c, b, off, v));
        break;
    }
    case TILEC_ST_ASSIGN:
        if (!var_ok(c, s->u.assign.var) || !s->u.assign.value)
            break;
        tilec_simt_emit(c, "v%d = %s;", s->u.assign.var->id,
                        tilec_simt_convert(c, tilec_simt_expr(c, s->u.assign.value), s->u.assign.value->dtype,
                                           s->u.assign.var->dtype));
        break;
    case TILEC_ST_COPY: simt_gen_copy(c, s); break;
    case TILEC_ST_FILL: simt_gen_fill(c, s); break;
    case TILEC_ST_GEMM: gen_gemm(c, s); break;
    case TILEC_ST_REDUCE: simt_gen_reduce(c, s); break;
    case TILEC_ST_CUMSUM: simt_gen_cumsum(c, s); break;
    case TILEC_ST_ATOMIC: simt_gen_atomic(c, s); break;
    case TILEC_ST_PRINT: gen_print(c, s); break;
    case TILEC_ST_SYNC:
        if (c->per_thread)
            tilec_simt_emit(c, "/* T.sync_threads inside per-thread code: no barrier possible here */");
        else
            tilec_simt_barrier(c);
        break;
    case TILEC_ST_HINT:
        tilec_simt_emit(c, "/* hint %s ignored */", s->u.hint.name && strcmp(s->u.hint.name, "annotate_layout") == 0
                                                        ? "annotate_layout" : "use_swizzle");
        break;
    default: tilec_simt_fail(c, "statement '%s' is not supported by the SIMT kit yet", tilec_stmt_kind_name(s->kind)); break;
    }
    if (thread0) {
        c->per_thread = 0;
        close_block(c);
    }
}

static void gen_stmt1(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);

static void gen_stmt(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    int block = !c->per_thread;
    gen_stmt1(c, s);
    if (block && c->dl.stmt_after && !c->failed && c->dl.stmt_after(c->dl.user, c, s) < 0)
        tilec_simt_fail(c, "the %s backend's statement hook failed", c->dl.name);
}

static void gen_stmt1(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    if (c->per_thread) {
        gen_simple(c, s);
        return;
    }
    /* block level: uniform loops and ifs keep their structure; the barrier
     * state flows through them */
    if (s->kind == TILEC_ST_FOR && s->u.loop.kind != TILEC_LOOP_PARALLEL) {
        if (c->dl.loop_hook && c->hooked_loop != s) {
            int r = c->dl.loop_hook(c->dl.user, c, s);
            if (r < 0)
                tilec_simt_fail(c, "the %s backend's loop hook failed", c->dl.name);
            if (r != 0)
                return;
        }
        acc_t h = {0, 0, 0}, body = {0, 0, 0};
        acc_expr(s->u.loop.extent, &h, 0);
        sync_for(c, &h);
        note_acc(c, &h);
        acc_stmts(s->u.loop.body, &body, 0);
        open_serial(c, s);
        note_acc(c, &body); /* loop-carried: the previous iteration ran the body */
        c->scratch_dirty = 1;
        gen_stmts(c, s->u.loop.body);
        note_acc(c, &body);
        close_block(c);
        return;
    }
    if (s->kind == TILEC_ST_IF) {
        acc_t h = {0, 0, 0};
        acc_expr(s->u.cond.cond, &h, 0);
        sync_for(c, &h);
        note_acc(c, &h);
        uint64_t r0 = c->dirty_r, w0 = c->dirty_w, a0 = c->dirty_a;
        tilec_simt_emit(c, "if (%s) {", simt_cond(c, tilec_simt_expr(c, s->u.cond.cond)));
        c->ind++;
        gen_stmts(c, s->u.cond.then);
        uint64_t r1 = c->dirty_r, w1 = c->dirty_w, a1 = c->dirty_a;
        c->dirty_r = r0;
        c->dirty_w = w0;
        c->dirty_a = a0;
        if (s->u.cond.els) {
            c->ind--;
            tilec_simt_emit(c, "} else {");
            c->ind++;
            gen_stmts(c, s->u.cond.els);
        }
        c->dirty_r |= r1;
        c->dirty_w |= w1;
        c->dirty_a |= a1;
        close_block(c);
        return;
    }
    if (s->kind == TILEC_ST_SYNC || s->kind == TILEC_ST_BARRIER) {
        /* a barrier of lowered IR whose buffers have no layouts (none on
         * chip): the same as T.sync_threads here; one with attributes (a
         * cluster's, lower.cluster_sync) the dialect's hook may print, as a
         * barrier at least as wide */
        if (s->kind == TILEC_ST_BARRIER && s->nattrs && c->dl.stmt_hook && c->dl.stmt_hook(c->dl.user, c, s) == 1) {
            c->nbarriers++;
            c->uses |= TILEC_SIMT_USES_BARRIER;
            c->dirty_r = c->dirty_w = c->dirty_a = 0;
            c->scratch_dirty = 0;
            return;
        }
        tilec_simt_barrier(c);
        return;
    }
    acc_t a = {0, 0, 0};
    acc_stmt(s, &a, 0);
    sync_for(c, &a);
    gen_simple(c, s);
    note_acc(c, &a);
}

static void gen_stmts(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    if (++c->depth > SIMT_MAX_DEPTH) {
        tilec_simt_fail(c, "statements nested deeper than %d levels", SIMT_MAX_DEPTH);
        c->depth--;
        return;
    }
    for (; s && !c->failed; s = s->next)
        gen_stmt(c, s);
    c->depth--;
}

/* ---- the kernel -------------------------------------------------------------------------------- */

static const char *or_default(const char *s, const char *d) { return s ? s : d; }

/* Copies the caller's dialect (as much as its struct_size covers) and fills
 * defaults; checks the required fields. */
void tilec_simt_dialect_cuda_family(tilec_simt_dialect_t *d)
{
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->type_name[TILEC_BOOL] = "unsigned char";
    d->type_name[TILEC_INT8] = "signed char";
    d->type_name[TILEC_INT16] = "short";
    d->type_name[TILEC_INT32] = "int";
    d->type_name[TILEC_INT64] = "long long";
    d->type_name[TILEC_UINT8] = "unsigned char";
    d->type_name[TILEC_UINT16] = "unsigned short";
    d->type_name[TILEC_UINT32] = "unsigned int";
    d->type_name[TILEC_UINT64] = "unsigned long long";
    d->type_name[TILEC_FLOAT32] = "float";
    d->type_name[TILEC_FLOAT64] = "double";
    d->int64_suffix = "LL";
    d->uint64_suffix = "ULL";
    d->f32_as_bits = "__float_as_uint";
    d->bits_as_f32 = "__uint_as_float";
    d->f64_as_bits = "(unsigned long long)__double_as_longlong";
    d->bits_as_f64 = "__longlong_as_double";
    d->func_qual = "static __device__ __forceinline__";
    d->global_qual = "";
    d->shared_qual = "__shared__";
    d->private_qual = "";
    d->restrict_kw = "__restrict__";
    d->kernel_qual = "extern \"C\" __global__ void";
    d->kernel_attr = "__launch_bounds__($n)";
    static const char *const bidx[3] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
    static const char *const tidx[3] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
    for (int i = 0; i < 3; i++) {
        d->block_idx[i] = bidx[i];
        d->thread_idx[i] = tidx[i];
    }
    d->barrier = "__syncthreads();";
    static const char *const i32[3] = {"atomicAdd($p, $v);", "atomicMax($p, $v);", "atomicMin($p, $v);"};
    for (int o = 0; o < 3; o++) {
        d->atomic[TILEC_INT32][o] = i32[o];
        d->atomic[TILEC_UINT32][o] = i32[o];
        d->atomic[TILEC_UINT64][o] = i32[o];
    }
    d->atomic[TILEC_INT64][0] = "atomicAdd((unsigned long long *)$p, (unsigned long long)$v);";
    d->atomic[TILEC_FLOAT32][0] = "atomicAdd($p, $v);";
    d->atomic[TILEC_FLOAT64][0] = "atomicAdd($p, $v);";
    d->cas32 = "atomicCAS((unsigned int *)$p, $c, $v)";
    d->cas64 = "atomicCAS((unsigned long long *)$p, $c, $v)";
    d->math_generic = 1;
    d->has_rsqrt = 1;
    d->has_printf = 1;
    d->shared_align = 16;
    d->printf_i64 = "%lld";
    d->shared_ptr_qual = "";
}

static int load_dialect(tilec_simt_ctx_t *c, const tilec_simt_dialect_t *d)
{
    memset(&c->dl, 0, sizeof c->dl);
    size_t n = d->struct_size < sizeof c->dl ? d->struct_size : sizeof c->dl;
    memcpy(&c->dl, d, n);
    tilec_simt_dialect_t *x = &c->dl;
    x->name = or_default(x->name, "simt");
    x->int64_suffix = or_default(x->int64_suffix, "LL");
    x->uint64_suffix = or_default(x->uint64_suffix, "ULL");
    x->func_qual = or_default(x->func_qual, "");
    x->global_qual = or_default(x->global_qual, "");
    x->shared_qual = or_default(x->shared_qual, "");
    x->private_qual = or_default(x->private_qual, "");
    x->restrict_kw = or_default(x->restrict_kw, "");
    x->kernel_name = or_default(x->kernel_name, "tilec_kernel");
    x->printf_i64 = or_default(x->printf_i64, "%lld");
    x->shared_ptr_qual = or_default(x->shared_ptr_qual, x->shared_qual);
    if (!x->shared_align)
        x->shared_align = 16;
    for (int t = 0; t < TILEC_DTYPE_COUNT; t++) {
        /* float8 (IR 1.2) and the 4-bit dtypes (1.3) need no name: a dialect's plugin that reads them handles them */
        if (simt_is_half((tilec_dtype_t)t) || tilec_dtype_is_float8((tilec_dtype_t)t) ||
            tilec_dtype_is_4bit((tilec_dtype_t)t))
            continue;
        if (!x->type_name[t]) {
            tilec_simt_fail(c, "dialect %s: no type name for %s", x->name, tilec_dtype_name((tilec_dtype_t)t));
            return -1;
        }
    }
    x->sym_type = or_default(x->sym_type, x->type_name[TILEC_INT64]);
    const tilec_simt_half_t *hs[2] = {&x->f16, &x->bf16};
    for (int i = 0; i < 2; i++) {
        if (hs[i]->mode != TILEC_SIMT_HALF_BITS && !hs[i]->half_type) {
            tilec_simt_fail(c, "dialect %s: a native or function half mode needs half_type", x->name);
            return -1;
        }
        if (hs[i]->mode == TILEC_SIMT_HALF_FUNCS && (!hs[i]->half_load || !hs[i]->half_store)) {
            tilec_simt_fail(c, "dialect %s: half mode FUNCS needs half_load and half_store", x->name);
            return -1;
        }
    }
    if (!x->kernel_qual || !x->barrier || !x->block_idx[0] || !x->block_idx[1] || !x->block_idx[2] ||
        !x->thread_idx[0] || !x->thread_idx[1] || !x->thread_idx[2] || !x->f32_as_bits || !x->bits_as_f32) {
        tilec_simt_fail(c, "dialect %s: kernel_qual, barrier, block_idx, thread_idx and the float bit casts are required",
                        x->name);
        return -1;
    }
    return 0;
}

/* A block-wide array declared at module scope (dialect shared_decl). */
void simt_shared_array(tilec_simt_ctx_t *c, const char *type, const char *name, int64_t n, const char *what)
{
    const char *keys[] = {"t", "n", "c"}, *vals[] = {type, name, simt_fmt(c, "%" PRId64, n)};
    tilec_sdk_str_printf(c->mod, "%s /* %s */\n", simt_subst(c, c->dl.shared_decl, 3, keys, vals), what);
}

/* The module-scope declarations of a dialect without pointer parameters:
 * the work-group size, tensors as buffer blocks (and the word views of
 * their CAS loops), the symbol block. */
static int module_scope(tilec_simt_ctx_t *c, tilec_sdk_str_t *out, int nsyms)
{
    const tilec_ir_kernel_t *k = c->k;
    if (c->dl.kernel_layout) {
        const char *keys[] = {"x", "y", "z", "n"};
        const char *vals[] = {simt_fmt(c, "%d", k->threads[0]), simt_fmt(c, "%d", k->threads[1]),
                              simt_fmt(c, "%d", k->threads[2]), simt_fmt(c, "%" PRId64, c->nthreads)};
        tilec_sdk_str_printf(out, "%s\n", simt_subst(c, c->dl.kernel_layout, 4, keys, vals));
    }
    for (int i = 0; i < k->nparams && c->dl.tensor_decl; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (!simt_buf_ok(c, b))
            return -1;
        const char *keys[] = {"i", "t", "n"};
        const char *vals[] = {simt_fmt(c, "%d", i), simt_st_type(c, b), simt_fmt(c, "b%d", i)};
        tilec_sdk_str_printf(out, "%s /* %s */\n", simt_subst(c, c->dl.tensor_decl, 3, keys, vals),
                             b->name ? b->name : "");
        for (int w = 32; w <= 64; w += 32) {
            if (i >= 64 || !((w == 32 ? c->words32 : c->words64) >> i & 1))
                continue;
            const char *wv[] = {vals[0], c->dl.type_name[w == 32 ? TILEC_UINT32 : TILEC_UINT64],
                                simt_fmt(c, "b%d_w%d", i, w)};
            tilec_sdk_str_printf(out, "%s\n", simt_subst(c, c->dl.word_decl, 3, keys, wv));
        }
    }
    if (c->dl.sym_block && nsyms > 0) {
        tilec_sdk_str_t m = {0};
        for (int j = 0; j < nsyms; j++)
            tilec_sdk_str_printf(&m, "%s%s tc_sym%d;", j ? " " : "", c->dl.sym_type, j);
        const char *keys[] = {"m"}, *vals[] = {m.s ? simt_fmt(c, "%s", m.s) : ""};
        tilec_sdk_str_free(&m);
        tilec_sdk_str_printf(out, "%s\n", simt_subst(c, c->dl.sym_block, 1, keys, vals));
    }
    return c->failed ? -1 : 0;
}

/* The panel width of a T.use_swizzle at the top of a kernel with a 2-D
 * (or 3-D) grid, else 0; *order its explicit order (0 row, 1 column),
 * -1 without one. */
static int64_t use_swizzle_panel(const tilec_ir_kernel_t *k, int *order)
{
    int64_t v, o;
    *order = -1;
    for (const tilec_ir_stmt_t *s = k->body; s && k->ngrid >= 2; s = s->next)
        if (s->kind == TILEC_ST_HINT && s->u.hint.name && strcmp(s->u.hint.name, "use_swizzle") == 0 &&
            s->u.hint.nargs >= 1 && tilec_ir_is_const_int(s->u.hint.args[0], &v) && v > 0 && v < (1 << 20)) {
            if (s->u.hint.nargs >= 2 && tilec_ir_is_const_int(s->u.hint.args[1], &o) && (o == 0 || o == 1))
                *order = (int)o;
            return v;
        }
    return 0;
}

/* T.use_swizzle(panel, order=): TileLang's rasterizations.  "row": panels
 * of `panel` block rows (the last one lower), each walked column by
 * column, down the panel's rows first, odd panels from the right;
 * "column" the same with rows and columns exchanged. */
static void emit_swizzle_order(tilec_simt_ctx_t *c, const tilec_ir_kernel_t *k, int64_t panel, int order)
{
    const char *a = order ? "tc_gy" : "tc_gx", *b = order ? "tc_gx" : "tc_gy";
    tilec_simt_emit(c, "const int tc_psz = %" PRId64 " * %s, tc_poff = tc_lin %% tc_psz, tc_pidx = tc_lin / tc_psz;",
                    panel, a);
    tilec_simt_emit(c, "const int tc_pst = (tc_pidx + 1) * tc_psz < tc_gx * tc_gy ? %" PRId64 " : %s - tc_pidx * %" PRId64
                    ";", panel, b, panel);
    tilec_simt_emit(c, "const int tc_pa = (tc_pidx & 1) != 0 ? %s - 1 - tc_poff / tc_pst : tc_poff / tc_pst;", a);
    tilec_simt_emit(c, "const int tc_pb = tc_poff %% tc_pst + tc_pidx * %" PRId64 ";", panel);
    tilec_simt_emit(c, "const int v%d = %s; /* %s */", k->block[0]->id, order ? "tc_pb" : "tc_pa",
                    k->block[0]->name ? k->block[0]->name : "");
    tilec_simt_emit(c, "const int v%d = %s; /* %s */", k->block[1]->id, order ? "tc_pa" : "tc_pb",
                    k->block[1]->name ? k->block[1]->name : "");
}

int tilec_simt_generate(const tilec_ir_module_t *m, const tilec_simt_dialect_t *d, tilec_simt_result_t *res,
                        char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!res) {
        if (err && errlen)
            snprintf(err, errlen, "no result struct");
        return -1;
    }
    uint32_t rsz = res->struct_size;
    memset(res, 0, rsz && rsz < sizeof *res ? rsz : sizeof *res);
    res->struct_size = rsz;
    if (!m || !m->kernel || !d || d->struct_size < offsetof(tilec_simt_dialect_t, user)) {
        if (err && errlen)
            snprintf(err, errlen, "bad arguments (no module, no kernel or no dialect)");
        return -1;
    }
    tilec_simt_ctx_t cx;
    memset(&cx, 0, sizeof cx);
    tilec_simt_ctx_t *c = &cx;
    c->k = m->kernel;
    c->d = d;
    c->err = err;
    c->errlen = errlen;
    tilec_arena_init(&c->ar);
    tilec_sdk_str_t head = {0}, pre = {0}, out = {0}, mod = {0};
    c->mod = &mod;
    const tilec_ir_kernel_t *k = c->k;
    int nsyms = 0;
    uint64_t shared = 0;
    uint32_t nt = 1;
    if (load_dialect(c, d) < 0)
        goto done;
    if (k->ngrid < 1 || k->ngrid > 3 || k->nparams < 0 || k->nparams > k->nbufs) {
        tilec_simt_fail(c, "kernel with a bad grid or parameter count");
        goto done;
    }
    for (int i = 0; i < 3; i++) {
        if (k->threads[i] < 1 || k->threads[i] > 4096 || nt > 65536u / (uint32_t)k->threads[i]) {
            tilec_simt_fail(c, "threads per block out of range");
            goto done;
        }
        nt *= (uint32_t)k->threads[i];
    }
    c->nthreads = nt;

    /* head: thread index, block and symbol variables, buffers, lets */
    c->o = &head;
    c->ind = 1;
    if (c->dl.shared_dynamic_decl) {
        const char *keys[] = {"n"}, *vals[] = {"tc_smem"};
        tilec_simt_emit(c, "%s", simt_subst(c, c->dl.shared_dynamic_decl, 1, keys, vals));
    }
    const char *tid[3];
    for (int i = 0; i < 3; i++)
        tid[i] = simt_cast(c, "(%s)(%s)", "int", c->dl.thread_idx[i]);
    if (k->threads[1] == 1 && k->threads[2] == 1)
        tilec_simt_emit(c, "const int tc_tid = %s;", tid[0]);
    else
        tilec_simt_emit(c, "const int tc_tid = %s + %d * (%s + %d * %s);", tid[0], k->threads[0], tid[1], k->threads[1],
                        tid[2]);
    tilec_simt_emit(c, "const int tc_nthreads = %u;", nt);
    if (!c->dl.bool_type)
        tilec_simt_emit(c, "(void)tc_tid; (void)tc_nthreads;");
    for (int i = 0; i < k->nvars; i++) {
        const tilec_ir_var_t *v = k->vars[i];
        if (!v || v->id != i) {
            tilec_simt_fail(c, "variable table out of order");
            goto done;
        }
        if (v->kind == TILEC_VAR_SYM) {
            tilec_simt_emit(c, "const int v%d = %s; /* %s */", i, simt_cast(c, "(%s)%s", "int", simt_fmt(c, "tc_sym%d", nsyms)),
                            v->name ? v->name : "");
            nsyms++;
            c->uses |= TILEC_SIMT_USES_SYMS;
        } else if (v->kind == TILEC_VAR_LET) {
            const char *ct = tilec_simt_ctype(c, v->dtype);
            tilec_simt_emit(c, "%s v%d = %s; /* %s */", ct, i, c->dl.cast ? simt_cast(c, "", ct, "0") : "0",
                            v->name ? v->name : "");
        }
    }
    int order;
    int64_t panel = use_swizzle_panel(k, &order);
    for (int d2 = 0; d2 < k->ngrid; d2++) {
        if (!var_ok(c, k->block[d2]))
            goto done;
        if (panel && d2 < 2) {
            tilec_simt_emit(c, "const int tc_bid%d = %s;", d2, simt_cast(c, "(%s)(%s)", "int", c->dl.block_idx[d2]));
            continue;
        }
        tilec_simt_emit(c, "const int v%d = %s; /* %s */", k->block[d2]->id, simt_cast(c, "(%s)(%s)", "int", c->dl.block_idx[d2]),
                        k->block[d2]->name ? k->block[d2]->name : "");
    }
    if (panel) {
        /* T.use_swizzle(panel): the blocks run down panels of `panel`
         * block columns (the last panel narrower), so that blocks running
         * together share rows and columns of their operands in the cache */
        const char *gx = simt_cast(c, "(%s)(%s)", "int", tilec_simt_expr(c, k->grid[0]));
        const char *gy = simt_cast(c, "(%s)(%s)", "int", tilec_simt_expr(c, k->grid[1]));
        tilec_simt_emit(c, "const int tc_gx = %s, tc_gy = %s;", gx, gy);
        tilec_simt_emit(c, "const int tc_lin = tc_bid0 + tc_gx * tc_bid1;");
    }
    if (panel && order >= 0)
        emit_swizzle_order(c, k, panel, order);
    else if (panel) {
        tilec_simt_emit(c, "const int tc_pan = tc_lin / (%" PRId64 " * tc_gy), tc_pin = tc_lin %% (%" PRId64 " * tc_gy);",
                        panel, panel);
        tilec_simt_emit(c, "const int tc_pw = tc_gx - tc_pan * %" PRId64 " < %" PRId64 " ? tc_gx - tc_pan * %" PRId64
                        " : %" PRId64 ";", panel, panel, panel, panel);
        tilec_simt_emit(c, "const int v%d = tc_pan * %" PRId64 " + tc_pin %% tc_pw; /* %s */", k->block[0]->id, panel,
                        k->block[0]->name ? k->block[0]->name : "");
        tilec_simt_emit(c, "const int v%d = tc_pin / tc_pw; /* %s */", k->block[1]->id,
                        k->block[1]->name ? k->block[1]->name : "");
    }
    if (simt_lowered_init(c) < 0)
        goto done;
    if (c->lowered)
        shared = simt_lowered_decls(c);
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (!simt_buf_ok(c, b))
            goto done;
        int64_t n = const_size(c, b);
        if (c->failed)
            goto done;
        const char *st = simt_st_type(c, b);
        if (c->lowered && simt_place(c, b) == SIMT_P_REGS && c->bi[i].rm->scalar) {
            tilec_sdk_str_t regs = {0};
            for (int l = 0; l < c->bi[i].rm->L; l++)
                tilec_sdk_str_printf(&regs, "%sb%d_%d = %s", l ? ", " : "", i, l,
                                     c->dl.cast ? simt_cast(c, "", st, "0") : "0");
            tilec_simt_emit(c, "%s %s; /* %s %s: registers */", st, regs.s ? regs.s : "", tilec_scope_name(b->scope),
                            b->name ? b->name : "");
            tilec_sdk_str_free(&regs);
        } else if (c->lowered && simt_place(c, b) == SIMT_P_REGS) {
            n = c->bi[i].rm->L;
            tilec_simt_emit(c, "%s%s%s b%d[%" PRId64 "]; /* %s %s: registers */", c->dl.private_qual,
                            *c->dl.private_qual ? " " : "", st, i, n, tilec_scope_name(b->scope), b->name ? b->name : "");
        } else if (c->lowered && simt_place(c, b) == SIMT_P_SHARED) {
            continue; /* in the pool: simt_lowered_decls */
        } else if (simt_is_private(b)) {
            tilec_simt_emit(c, "%s%s%s b%d[%" PRId64 "]; /* %s %s */", c->dl.private_qual, *c->dl.private_qual ? " " : "",
                            st, i, n, tilec_scope_name(b->scope), b->name ? b->name : "");
        } else {
            uint64_t bytes = (uint64_t)n * tilec_dtype_size(b->dtype);
            bytes = (bytes + c->dl.shared_align - 1) / c->dl.shared_align * c->dl.shared_align;
            if (c->dl.shared_decl)
                simt_shared_array(c, st, simt_fmt(c, "b%d", i), n, simt_fmt(c, "%s %s", tilec_scope_name(b->scope),
                                                                              b->name ? b->name : ""));
            else if (c->dl.shared_dynamic_decl)
                tilec_simt_emit(c, "%s%s%s *const b%d = (%s%s%s *)(tc_smem + %" PRIu64 "); /* %s %s */",
                                c->dl.shared_ptr_qual, *c->dl.shared_ptr_qual ? " " : "", st, i, c->dl.shared_ptr_qual,
                                *c->dl.shared_ptr_qual ? " " : "", st, shared, tilec_scope_name(b->scope),
                                b->name ? b->name : "");
            else
                tilec_simt_emit(c, "%s %s b%d[%" PRId64 "] __attribute__((aligned(%u))); /* %s %s */", c->dl.shared_qual,
                                st, i, n, c->dl.shared_align, tilec_scope_name(b->scope), b->name ? b->name : "");
            shared += bytes;
        }
    }
    /* on-chip buffers start zeroed in every block, as in the reference
     * interpreter: block-wide ones cooperatively (the barrier state then
     * orders the first reader), private ones by each thread */
    for (int i = k->nparams; i < k->nbufs && !c->failed; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        int64_t n = const_size(c, b);
        const char *st = simt_st_type(c, b);
        if (c->lowered && simt_place(c, b) == SIMT_P_REGS) {
            if (!c->bi[i].rm->scalar) /* scalars start at 0 in their declaration */
                tilec_simt_emit(c, "for (int tc_z = 0; tc_z < %d; tc_z++) b%d[tc_z] = %s;", c->bi[i].rm->L, i,
                                simt_cast(c, "(%s)%s", st, "0"));
        } else if (c->lowered && simt_place(c, b) == SIMT_P_SHARED) {
            continue; /* the pool is zeroed by simt_lowered_decls */
        } else if (simt_is_private(b)) {
            tilec_simt_emit(c, "for (int tc_z = 0; tc_z < %" PRId64 "; tc_z++) b%d[tc_z] = %s;", n, i,
                            simt_cast(c, "(%s)%s", st, "0"));
        } else {
            tilec_simt_emit(c, "for (int tc_z = tc_tid; tc_z < %" PRId64 "; tc_z += tc_nthreads) b%d[tc_z] = %s;", n,
                            i, simt_cast(c, "(%s)%s", st, "0"));
            c->dirty_w |= bit_of(b);
        }
    }
    if (c->failed)
        goto done;
    if (c->lowered)
        simt_regs_decls(c);

    /* body */
    c->o = &c->body;
    gen_stmts(c, k->body);
    if (c->failed)
        goto done;

    /* block-wide scratch of the tree reductions */
    c->o = &head;
    c->ind = 1;
    for (int t = 0; t < TILEC_DTYPE_COUNT; t++) {
        if (!(c->scratch & (1u << t)))
            continue;
        uint64_t bytes = (uint64_t)nt * tilec_dtype_size((tilec_dtype_t)t);
        const char *ct = tilec_simt_ctype(c, (tilec_dtype_t)t), *pq = c->dl.shared_ptr_qual;
        if (c->dl.shared_decl)
            simt_shared_array(c, ct, simt_fmt(c, "tc_red_%s", tilec_dtype_name((tilec_dtype_t)t)), nt,
                         "reduction scratch");
        else if (c->dl.shared_dynamic_decl)
            tilec_simt_emit(c, "%s%s%s *const tc_red_%s = (%s%s%s *)(tc_smem + %" PRIu64 "); /* reduction scratch */", pq,
                            *pq ? " " : "", ct, tilec_dtype_name((tilec_dtype_t)t), pq, *pq ? " " : "", ct, shared);
        else
            tilec_simt_emit(c, "%s %s tc_red_%s[%u] __attribute__((aligned(%u))); /* reduction scratch */",
                            c->dl.shared_qual, ct, tilec_dtype_name((tilec_dtype_t)t), nt, c->dl.shared_align);
        shared += (bytes + c->dl.shared_align - 1) / c->dl.shared_align * c->dl.shared_align;
    }


    /* prelude: hook, extra text, helpers */
    c->o = &pre;
    c->ind = 0;
    if (c->dl.prelude_hook && c->dl.prelude_hook(c->dl.user, c) < 0) {
        tilec_simt_fail(c, "the %s backend's prelude hook failed", c->dl.name);
        goto done;
    }
    if (c->dl.extra_prelude) {
        tilec_sdk_str_puts(&pre, c->dl.extra_prelude);
        tilec_sdk_str_puts(&pre, "\n");
    }
    simt_emit_helpers(c, &pre);
    if (c->failed)
        goto done;

    /* assemble */
    tilec_sdk_str_printf(&out, "/* generated by the tilec SIMT kit (%s dialect) from kernel '%s' */\n", c->dl.name,
                    k->name ? k->name : "");
    tilec_sdk_str_putn(&out, pre.s ? pre.s : "", pre.len);
    if (module_scope(c, &out, nsyms) < 0)
        goto done;
    tilec_sdk_str_putn(&out, mod.s ? mod.s : "", mod.len);
    tilec_sdk_str_printf(&out, "%s ", c->dl.kernel_qual);
    if (c->dl.kernel_attr) {
        const char *keys[] = {"x", "y", "z", "n"};
        const char *vals[] = {simt_fmt(c, "%d", k->threads[0]), simt_fmt(c, "%d", k->threads[1]),
                              simt_fmt(c, "%d", k->threads[2]), simt_fmt(c, "%u", nt)};
        tilec_sdk_str_printf(&out, "%s ", simt_subst(c, c->dl.kernel_attr, 4, keys, vals));
    }
    tilec_sdk_str_printf(&out, "%s(", c->dl.kernel_name);
    int nargs = 0;
    for (int i = 0; i < k->nparams && !c->dl.tensor_decl; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (!simt_buf_ok(c, b))
            goto done;
        tilec_sdk_str_printf(&out, "%s%s%s%s *%s%sb%d", nargs++ ? ", " : "", c->dl.global_qual,
                             *c->dl.global_qual ? " " : "", simt_st_type(c, b), c->dl.restrict_kw,
                             *c->dl.restrict_kw ? " " : "", i);
    }
    for (int j = 0; j < nsyms && !c->dl.sym_block; j++)
        tilec_sdk_str_printf(&out, "%s%s tc_sym%d", nargs++ ? ", " : "", c->dl.sym_type, j);
    if (c->dl.extra_params && *c->dl.extra_params)
        tilec_sdk_str_printf(&out, "%s%s", nargs++ ? ", " : "", c->dl.extra_params);
    if (!nargs)
        tilec_sdk_str_puts(&out, "void");
    tilec_sdk_str_puts(&out, ")\n{\n");
    tilec_sdk_str_putn(&out, head.s ? head.s : "", head.len);
    tilec_sdk_str_putn(&out, c->body.s ? c->body.s : "", c->body.len);
    tilec_sdk_str_puts(&out, "}\n");
    if (out.oom || head.oom || pre.oom || mod.oom || c->body.oom)
        tilec_simt_fail(c, "out of memory");

done:;
    int rc = c->failed ? -1 : 0;
    if (rc == 0) {
        tilec_simt_result_t r;
        memset(&r, 0, sizeof r);
        r.struct_size = rsz;
        r.uses = c->uses;
        r.source = out.s;
        r.source_len = out.len;
        r.shared_bytes = shared;
        for (int i = 0; i < 3; i++)
            r.threads[i] = (uint32_t)k->threads[i];
        r.nthreads = nt;
        r.nparams = (uint32_t)k->nparams;
        r.nsyms = (uint32_t)nsyms;
        r.nbarriers = c->nbarriers;
        memcpy(res, &r, rsz && rsz < sizeof r ? rsz : sizeof r);
        if (rsz && rsz < offsetof(tilec_simt_result_t, source_len))
            free(out.s); /* caller cannot even hold the source */
        out.s = NULL;
    }
    tilec_sdk_str_free(&out);
    tilec_sdk_str_free(&head);
    tilec_sdk_str_free(&pre);
    tilec_sdk_str_free(&mod);
    tilec_sdk_str_free(&c->body);
    tilec_arena_destroy(&c->ar);
    return rc;
}

/* ---- for the lowered-IR printer (simt_lowered.c, simt_regs.c) ------------------------------- */

void simt_gen_stmts(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s) { gen_stmts(c, s); }

void tilec_simt_gen_loop(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    if (!s || s->kind != TILEC_ST_FOR || s->u.loop.kind == TILEC_LOOP_PARALLEL || c->per_thread) {
        tilec_simt_fail(c, "tilec_simt_gen_loop: not a block-level serial loop");
        return;
    }
    const tilec_ir_stmt_t *saved = c->hooked_loop;
    c->hooked_loop = s;
    gen_stmt(c, s);
    c->hooked_loop = saved;
}

/* ---- for the other statement printers (simt_reduce.c, simt_atomic.c) and the lowered-IR one ---- */

void simt_close_block(tilec_simt_ctx_t *c) { close_block(c); }
int64_t simt_const_dim(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, int d) { return const_dim(c, b, d); }
int64_t simt_const_size(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b) { return const_size(c, b); }
const char *simt_open_elem_loop(tilec_simt_ctx_t *c, int64_t total, int coop) { return open_elem_loop(c, total, coop); }
int simt_coop_for(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *dst) { return coop_for(c, dst); }
const char *simt_store_conv(tilec_simt_ctx_t *c, const char *v, tilec_dtype_t from, tilec_dtype_t to)
{
    return store_conv(c, v, from, to);
}
const char *simt_store_value(tilec_simt_ctx_t *c, const tilec_ir_expr_t *v, tilec_dtype_t to)
{
    return store_value(c, v, to);
}
const tilec_ir_expr_t *simt_store_operand(const tilec_ir_expr_t *v, tilec_dtype_t to, tilec_dtype_t *vt)
{
    return store_operand(v, to, vt);
}
tilec_dtype_t simt_acc_dtype(tilec_dtype_t t) { return acc_dtype(t); }
const char *simt_region_inside(tilec_simt_ctx_t *c, const tilec_ir_region_t *r, int t) { return region_inside(c, r, t); }
int simt_region_bases(tilec_simt_ctx_t *c, const tilec_ir_region_t *r, int64_t *total)
{
    return region_bases(c, r, total);
}
const char *simt_inside_str(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *const *idx)
{
    return inside_str(c, b, idx);
}
const char *simt_offset_str(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *const *idx)
{
    return offset_str(c, b, idx);
}

void tilec_simt_result_free(tilec_simt_result_t *res)
{
    if (!res)
        return;
    free(res->source);
    res->source = NULL;
    res->source_len = 0;
}
