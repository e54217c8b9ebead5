/*
 * simt_reduce.c — the SIMT kit's T.reduce_* and T.cumsum on the v1 path
 * (block-wide and per-thread buffers; the lowered path's register
 * reductions are simt_regs.c's): one output element per thread, or, with
 * fewer outputs than threads, G threads per output combined by a tree in
 * block-wide scratch or by the dialect's xor shuffles within a subgroup.
 * Split from simt.c, whose statement walker calls simt_gen_reduce and
 * simt_gen_cumsum.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "simt_internal.h"

/* outer, extent and inner sizes of buffer b around dimension dim. */
static void split_dims(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, int dim, int64_t *outer, int64_t *r,
                       int64_t *inner)
{
    *outer = *inner = *r = 1;
    if (dim < 0 || dim >= b->ndim) {
        tilec_simt_fail(c, "dimension %d out of range for '%s'", dim, b->name ? b->name : "?");
        return;
    }
    for (int d = 0; d < b->ndim; d++) {
        int64_t v = simt_const_dim(c, b, d);
        if (d < dim)
            *outer *= v;
        else if (d == dim)
            *r = v;
        else
            *inner *= v;
    }
}

const char *simt_red_combine(tilec_simt_ctx_t *c, int op, tilec_dtype_t t, const char *a, const char *b)
{
    switch (op) {
    case TILEC_RED_SUM: case TILEC_RED_ABSSUM: return simt_add(c, t, a, b);
    case TILEC_RED_MAX: case TILEC_RED_ABSMAX: return simt_minmax(c, 1, t, a, b);
    default: return simt_minmax(c, 0, t, a, b);
    }
}

/* The partial result tc_acc of slot tc_s of a reduce with G threads per
 * output: elements tc_g, tc_g + G, ... of output tc_o's row (the loop
 * body shared by the shared-memory tree and the shuffles). */
static void reduce_partial(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int64_t R, int64_t inner, int64_t G)
{
    const tilec_ir_buffer_t *src = s->u.reduce.src, *dst = s->u.reduce.dst;
    int op = s->u.reduce.op;
    tilec_dtype_t at = simt_acc_dtype(dst->dtype);
    const char *act = tilec_simt_ctype(c, at);
    int isabs = op == TILEC_RED_ABSSUM || op == TILEC_RED_ABSMAX;
    int issum = op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM;
    tilec_simt_emit(c, "const int tc_o = tc_s / %" PRId64 ", tc_g = tc_s %% %" PRId64 ";", G, G);
    tilec_simt_emit(c, "const int tc_oo = tc_o / %" PRId64 ", tc_i = tc_o %% %" PRId64 ";", inner, inner);
    const char *x = tilec_simt_convert(
        c, tilec_simt_load(c, src, simt_fmt(c, "((tc_oo * %" PRId64 " + tc_r) * %" PRId64 " + tc_i)", R, inner)),
        src->dtype, at);
    if (isabs)
        x = simt_abs(c, at, x);
    if (issum) {
        tilec_simt_emit(c, "%s tc_acc = %s;", act, simt_zero(c, at));
        tilec_simt_emit(c, "for (int tc_r = tc_g; tc_r < %" PRId64 "; tc_r += %" PRId64 ")", R, G);
    } else {
        tilec_simt_emit(c, "%s tc_acc;", act);
        tilec_simt_emit(c, "{ const int tc_r = tc_g; tc_acc = %s; }", x);
        tilec_simt_emit(c, "for (int tc_r = tc_g + %" PRId64 "; tc_r < %" PRId64 "; tc_r += %" PRId64 ")", G, R, G);
    }
    tilec_simt_emit(c, "  tc_acc = %s;", simt_red_combine(c, op, at, "tc_acc", x));
}

/* The end of one output element of a reduction (tc_acc in the accumulator
 * dtype): folds in the old value of dst[idx] unless the reduce clears,
 * then stores tc_acc there.  Every reduction path (tree, shuffles, one
 * thread per output, registers) ends here. */
void simt_reduce_store(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const char *idx)
{
    const tilec_ir_buffer_t *dst = s->u.reduce.dst;
    tilec_dtype_t at = simt_acc_dtype(dst->dtype);
    if (!s->u.reduce.clear)
        tilec_simt_emit(c, "tc_acc = %s;",
                        simt_red_combine(c, s->u.reduce.op, at,
                                         tilec_simt_convert(c, tilec_simt_load(c, dst, idx), dst->dtype, at), "tc_acc"));
    tilec_simt_emit(c, "%s", tilec_simt_store(c, dst, idx, simt_store_conv(c, "tc_acc", at, dst->dtype)));
}

/* REDUCE with G (a power of two) threads per output element: strided
 * partial results, then a tree in the block-wide scratch array
 * tc_red_<dtype>[tc_nthreads] (declared with the kernel's other block-wide
 * arrays), one barrier per level.  Only at block level (uniform). */
static void gen_reduce_tree(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int64_t outer, int64_t R, int64_t inner,
                            int64_t G)
{
    const tilec_ir_buffer_t *src = s->u.reduce.src, *dst = s->u.reduce.dst;
    int op = s->u.reduce.op;
    (void)outer;
    tilec_dtype_t at = simt_acc_dtype(dst->dtype);
    const char *act = tilec_simt_ctype(c, at);
    int64_t nout = outer * inner;
    c->scratch |= 1u << at;
    const char *red = simt_fmt(c, "tc_red_%s", tilec_dtype_name(at));
    tilec_simt_emit(c, "{ /* reduce %s %s -> %s (%" PRId64 " threads per element) */",
                    tilec_reduce_op_name((tilec_reduce_op_t)op), src->name ? src->name : "?",
                    dst->name ? dst->name : "?", G);
    c->ind++;
    /* every phase is a loop over its slots spread over the threads (the
     * shape of every other cooperative loop; PoCL miscompiled a form with
     * thread-index arithmetic outside such loops) */
    int64_t slots = nout * G;
    if (c->scratch_dirty) /* a thread may still read the scratch of the last tree */
        tilec_simt_barrier(c);
    tilec_simt_emit(c, "for (int tc_s = tc_tid; tc_s < %" PRId64 "; tc_s += tc_nthreads) {", slots);
    c->ind++;
    reduce_partial(c, s, R, inner, G);
    tilec_simt_emit(c, "%s[tc_s] = tc_acc;", red);
    simt_close_block(c);
    tilec_simt_barrier(c);
    for (int64_t st = G / 2; st > 0; st /= 2) {
        tilec_simt_emit(c, "for (int tc_s = tc_tid; tc_s < %" PRId64 "; tc_s += tc_nthreads)", slots);
        tilec_simt_emit(c, "  if (tc_s %% %" PRId64 " < %" PRId64 ") %s[tc_s] = %s;", G, st, red,
                        simt_red_combine(c, op, at, simt_fmt(c, "%s[tc_s]", red),
                                    simt_fmt(c, "%s[tc_s + %" PRId64 "]", red, st)));
        tilec_simt_barrier(c);
    }
    tilec_simt_emit(c, "for (int tc_o = tc_tid; tc_o < %" PRId64 "; tc_o += tc_nthreads) {", nout);
    c->ind++;
    tilec_simt_emit(c, "%s tc_acc = %s[tc_o * %" PRId64 "];", act, red, G);
    simt_reduce_store(c, s, "tc_o");
    simt_close_block(c);
    simt_close_block(c);
    c->scratch_dirty = 1;
}

/* REDUCE with G threads per output element, G a power of two within one
 * subgroup (dialect shfl_xor): the G consecutive threads of an output
 * take strided partial results, then combine them with log2(G) xor
 * shuffles; the group's first lane writes the output.  No shared scratch
 * and no barrier.  Only at block level (uniform); nout * G <= threads, so
 * each thread has at most one slot and a group is wholly active or not. */
static void gen_reduce_shfl(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int64_t R, int64_t inner, int64_t G)
{
    const tilec_ir_buffer_t *src = s->u.reduce.src, *dst = s->u.reduce.dst;
    int op = s->u.reduce.op;
    tilec_dtype_t at = simt_acc_dtype(dst->dtype);
    int64_t slots = simt_const_size(c, dst) * G;
    tilec_simt_emit(c, "{ /* reduce %s %s -> %s (%" PRId64 " lanes per element, shuffles) */",
                    tilec_reduce_op_name((tilec_reduce_op_t)op), src->name ? src->name : "?",
                    dst->name ? dst->name : "?", G);
    c->ind++;
    tilec_simt_emit(c, "for (int tc_s = tc_tid; tc_s < %" PRId64 "; tc_s += tc_nthreads) {", slots);
    c->ind++;
    reduce_partial(c, s, R, inner, G);
    const char *keys[] = {"v", "m", "w"};
    for (int64_t st = G / 2; st > 0; st /= 2) {
        const char *vals[] = {"tc_acc", simt_fmt(c, "%" PRId64, st), simt_fmt(c, "%" PRId64, G)};
        tilec_simt_emit(c, "tc_acc = %s;", simt_red_combine(c, op, at, "tc_acc", simt_subst(c, c->dl.shfl_xor, 3, keys, vals)));
    }
    tilec_simt_emit(c, "if (tc_g == 0) {");
    c->ind++;
    simt_reduce_store(c, s, "tc_o");
    simt_close_block(c);
    simt_close_block(c);
    simt_close_block(c);
}

void simt_gen_reduce(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *src = s->u.reduce.src, *dst = s->u.reduce.dst;
    if (!simt_buf_ok(c, src) || !simt_buf_ok(c, dst))
        return;
    int op = s->u.reduce.op;
    if (op < TILEC_RED_SUM || op > TILEC_RED_ABSMAX) {
        tilec_simt_fail(c, "unknown reduce op %d", op);
        return;
    }
    int64_t outer, R, inner;
    split_dims(c, src, s->u.reduce.dim, &outer, &R, &inner);
    if (c->failed)
        return;
    if (simt_const_size(c, dst) != outer * inner) {
        tilec_simt_fail(c, "reduce: '%s' does not have the shape of '%s' without dimension %d", dst->name,
                        src->name, s->u.reduce.dim);
        return;
    }
    tilec_dtype_t at = simt_acc_dtype(dst->dtype);
    const char *act = tilec_simt_ctype(c, at);
    int isabs = op == TILEC_RED_ABSSUM || op == TILEC_RED_ABSMAX;
    int issum = op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM;
    /* fewer outputs than threads: G threads per output and a tree (in
     * registers across the lanes of a subgroup when the dialect shuffles) */
    int64_t nout = outer * inner, G = 1;
    int64_t sg = c->dl.shfl_xor && c->dl.subgroup_size >= 2 && c->nthreads % c->dl.subgroup_size == 0
                     ? (int64_t)c->dl.subgroup_size : 0;
    if (simt_coop_for(c, dst) && nout < c->nthreads && R >= 4)
        while (G * 2 * nout <= c->nthreads && G * 2 <= R && G < (sg ? sg : 1024))
            G *= 2;
    if (G >= 2 && sg) {
        gen_reduce_shfl(c, s, R, inner, G);
        return;
    }
    if (G >= 2) {
        gen_reduce_tree(c, s, outer, R, inner, G);
        return;
    }
    tilec_simt_emit(c, "{ /* reduce %s %s -> %s */", tilec_reduce_op_name((tilec_reduce_op_t)op),
                    src->name ? src->name : "?", dst->name ? dst->name : "?");
    c->ind++;
    const char *e = simt_open_elem_loop(c, outer * inner, simt_coop_for(c, dst));
    tilec_simt_emit(c, "const int tc_o = %s, tc_i = %s;", simt_cast(c, "(%s)(%s)", "int", simt_fmt(c, "%s / %" PRId64, e, inner)),
                    simt_cast(c, "(%s)(%s)", "int", simt_fmt(c, "%s %% %" PRId64, e, inner)));
    const char *x = tilec_simt_convert(c, tilec_simt_load(c, src, simt_fmt(c, "((tc_o * %" PRId64 " + tc_r) * %" PRId64 " + tc_i)", R, inner)),
                                       src->dtype, at);
    if (isabs)
        x = simt_abs(c, at, x);
    if (issum) {
        tilec_simt_emit(c, "%s tc_acc = %s;", act, simt_zero(c, at));
        tilec_simt_emit(c, "for (int tc_r = 0; tc_r < %" PRId64 "; tc_r++)", R);
    } else {
        tilec_simt_emit(c, "%s tc_acc;", act);
        tilec_simt_emit(c, "{ const int tc_r = 0; tc_acc = %s; }", x);
        tilec_simt_emit(c, "for (int tc_r = 1; tc_r < %" PRId64 "; tc_r++)", R);
    }
    tilec_simt_emit(c, "  tc_acc = %s;", simt_red_combine(c, op, at, "tc_acc", x));
    simt_reduce_store(c, s, e);
    simt_close_block(c);
    simt_close_block(c);
}

void simt_gen_cumsum(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *src = s->u.cumsum.src, *dst = s->u.cumsum.dst;
    if (!simt_buf_ok(c, src) || !simt_buf_ok(c, dst))
        return;
    int64_t outer, R, inner;
    split_dims(c, src, s->u.cumsum.dim, &outer, &R, &inner);
    if (c->failed)
        return;
    if (simt_const_size(c, dst) != outer * R * inner) {
        tilec_simt_fail(c, "cumsum: '%s' and '%s' differ in size", src->name, dst->name);
        return;
    }
    tilec_dtype_t at = simt_acc_dtype(dst->dtype);
    tilec_simt_emit(c, "{ /* cumsum %s -> %s */", src->name ? src->name : "?", dst->name ? dst->name : "?");
    c->ind++;
    const char *e = simt_open_elem_loop(c, outer * inner, simt_coop_for(c, dst));
    tilec_simt_emit(c, "const int tc_o = %s, tc_i = %s;", simt_cast(c, "(%s)(%s)", "int", simt_fmt(c, "%s / %" PRId64, e, inner)),
                    simt_cast(c, "(%s)(%s)", "int", simt_fmt(c, "%s %% %" PRId64, e, inner)));
    tilec_simt_emit(c, "%s tc_acc = %s;", tilec_simt_ctype(c, at), simt_zero(c, at));
    tilec_simt_emit(c, "for (int tc_r = 0; tc_r < %" PRId64 "; tc_r++) {", R);
    c->ind++;
    tilec_simt_emit(c, "const int tc_off = (tc_o * %" PRId64 " + %s) * %" PRId64 " + tc_i;", R,
                    s->u.cumsum.reverse ? simt_fmt(c, "(%" PRId64 " - 1 - tc_r)", R) : "tc_r", inner);
    tilec_simt_emit(c, "tc_acc = %s;",
                    simt_add(c, at, "tc_acc", tilec_simt_convert(c, tilec_simt_load(c, src, "tc_off"), src->dtype, at)));
    tilec_simt_emit(c, "%s", tilec_simt_store(c, dst, "tc_off", simt_store_conv(c, "tc_acc", at, dst->dtype)));
    simt_close_block(c);
    simt_close_block(c);
    simt_close_block(c);
}
