/*
 * simt_copy.c — copies and fills of the SIMT lowering kit (v1 statements,
 * and the lowered IR's copies between a tensor and shared memory): the
 * cooperative element loop with per-element bounds checks, and the vector
 * loop that moves W elements at a time (16 bytes on GPUs, also into padded
 * and swizzled shared rows, as asynchronous copies where the dialect has
 * them), whose threads compute their row and column once when a step of
 * the loop covers whole rows.  Also the groups of a gathered copy
 * (lower_gather.c): a T.Parallel nest whose innermost loop says
 * lower.vector = W moves each group of W elements as one vector, or one
 * cp.async, and stores zeros where the padding test fails.  Split from
 * simt.c, which dispatches here.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"
#include "simt_internal.h"

/* Index strings of element e (flat, row-major over the region) of r. */
static void region_idx(tilec_simt_ctx_t *c, const tilec_ir_region_t *r, int t, const char *e, const char **idx)
{
    const char *it = simt_idx_type(c, r->buf);
    int64_t stride = 1;
    for (int d = r->buf->ndim - 1; d >= 0; d--) {
        int64_t x = r->extent[d];
        if (x == 1)
            idx[d] = simt_fmt(c, "tc_r%d_%d", t, d);
        else if (stride == 1)
            idx[d] = simt_fmt(c, "(tc_r%d_%d + %s)", t, d,
                              simt_cast(c, "(%s)(%s)", it, simt_fmt(c, "%s %% %" PRId64, e, x)));
        else
            idx[d] = simt_fmt(c, "(tc_r%d_%d + %s)", t, d,
                              simt_cast(c, "(%s)(%s)", it, simt_fmt(c, "(%s / %" PRId64 ") %% %" PRId64, e, stride, x)));
        stride *= x;
    }
}

/* Index strings of r's element at (row, col): col along the innermost
 * dimension, row the flat index of the row over the outer ones.  The
 * outermost dimension of extent > 1 needs no modulo (row stays below the
 * region's row count). */
static void region_idx_rc(tilec_simt_ctx_t *c, const tilec_ir_region_t *r, int t, const char *row, const char *col,
                          const char **idx)
{
    const char *it = simt_idx_type(c, r->buf);
    int last = r->buf->ndim - 1, outer = -1;
    for (int d = 0; d < last && outer < 0; d++)
        if (r->extent[d] > 1)
            outer = d;
    idx[last] = simt_fmt(c, "(tc_r%d_%d + %s)", t, last, simt_cast(c, "(%s)(%s)", it, col));
    int64_t stride = 1;
    for (int d = last - 1; d >= 0; d--) {
        int64_t x = r->extent[d];
        if (x == 1) {
            idx[d] = simt_fmt(c, "tc_r%d_%d", t, d);
            continue;
        }
        const char *q = stride == 1 ? row : simt_fmt(c, "(%s / %" PRId64 ")", row, stride);
        if (d != outer)
            q = simt_fmt(c, "%s %% %" PRId64, q, x);
        idx[d] = simt_fmt(c, "(tc_r%d_%d + %s)", t, d, simt_cast(c, "(%s)(%s)", it, q));
        stride *= x;
    }
}

/* The cooperative loop of a vector copy of nv vectors of w elements,
 * thread tc_tid taking vectors tc_tid, tc_tid + T, ...: when every step of
 * T vectors covers whole rows of both regions (T * w a multiple of each
 * innermost extent, or a single step), a thread's column is the same at
 * every step and its row advances by a constant, so both are computed once
 * before the loop, which counts steps (a constant trip count the compiler
 * unrolls) instead of splitting a flat element index into indices per
 * vector (a division and a modulo per dimension, and a swizzle of them,
 * for every 16 bytes).  Fills is/id and returns 1 with the loop open, or
 * 0 when the copy keeps the flat loop. */
static int open_vec_rows(tilec_simt_ctx_t *c, const tilec_ir_region_t *rs, const tilec_ir_region_t *rd, int ts, int td,
                         int64_t nv, int64_t w, const char **is, const char **id)
{
    int64_t T = c->nthreads, steps = T > 0 ? (nv + T - 1) / T : 0;
    const tilec_ir_region_t *rr[2] = {rs, rd};
    if (T < 1 || nv * w > INT32_MAX - 65536 || T * w > INT32_MAX / 2)
        return 0;
    for (int i = 0; i < 2; i++)
        if (steps > 1 && (T * w) % rr[i]->extent[rr[i]->buf->ndim - 1] != 0)
            return 0;
    int t = tilec_simt_tmp(c);
    const char *row[2], *col[2];
    for (int i = 0; i < 2; i++) {
        int64_t X = rr[i]->extent[rr[i]->buf->ndim - 1];
        if (i == 1 && X == rs->extent[rs->buf->ndim - 1]) {
            row[1] = row[0];
            col[1] = col[0];
            continue;
        }
        tilec_simt_emit(c, "const int tc_vc%d_%d = (tc_tid * %" PRId64 ") %% %" PRId64 ", tc_vr%d_%d = (tc_tid * %" PRId64
                        ") / %" PRId64 ";", t, i, w, X, t, i, w, X);
        row[i] = steps > 1 ? simt_fmt(c, "(tc_vr%d_%d + tc_vk%d * %" PRId64 ")", t, i, t, T * w / X)
                           : simt_fmt(c, "tc_vr%d_%d", t, i);
        col[i] = simt_fmt(c, "tc_vc%d_%d", t, i);
    }
    tilec_simt_emit(c, "for (int tc_vk%d = 0; tc_vk%d < %" PRId64 "; tc_vk%d++) {", t, t, steps, t);
    c->ind++;
    if (nv % T) {
        tilec_simt_emit(c, "if (tc_vk%d * %" PRId64 " + tc_tid < %" PRId64 ") {", t, T, nv);
        c->ind++;
    }
    region_idx_rc(c, rs, ts, row[0], col[0], is);
    region_idx_rc(c, rd, td, row[1], col[1], id);
    return nv % T ? 2 : 1;
}

/* The scalar element loop of a copy: reads of a global source outside
 * its tensor give zero, writes of a global destination outside it are
 * skipped (unless the region is wholly inside: tc_in<t>). */
static void copy_scalar(tilec_simt_ctx_t *c, const tilec_ir_region_t *rs, const tilec_ir_region_t *rd, int ts,
                        int td, const char *ins, const char *ind, int64_t nd)
{
    const char *e = simt_open_elem_loop(c, nd, simt_coop_for(c, rd->buf));
    const char *is[TILEC_IR_MAX_DIMS], *id[TILEC_IR_MAX_DIMS];
    region_idx(c, rs, ts, e, is);
    region_idx(c, rd, td, e, id);
    tilec_dtype_t t = rs->buf->dtype;
    const char *ct = tilec_simt_ctype(c, t), *zero = simt_zero(c, t);
    const char *ld = tilec_simt_load(c, rs->buf, simt_offset_str(c, rs->buf, is)), *st = NULL;
    /* a 16-bit float copied to its own dtype, both stored as bit patterns:
     * the bits move as they are, not through float and back */
    if (t == rd->buf->dtype && simt_is_half(t) && (t == TILEC_FLOAT16 ? c->dl.f16.mode : c->dl.bf16.mode) ==
            TILEC_SIMT_HALF_BITS && !simt_is_private(rs->buf) && !simt_is_private(rd->buf)) {
        ct = simt_st_type(c, rs->buf);
        zero = simt_cast(c, "(%s)%s", ct, "0");
        ld = tilec_simt_elem(c, rs->buf, simt_offset_str(c, rs->buf, is));
        st = simt_fmt(c, "%s = tc_v;", tilec_simt_elem(c, rd->buf, simt_offset_str(c, rd->buf, id)));
    }
    if (rs->buf->scope == TILEC_SCOPE_GLOBAL)
        tilec_simt_emit(c, "const %s tc_v = (%s || (%s)) ? %s : %s;", ct, ins, simt_inside_str(c, rs->buf, is), ld, zero);
    else
        tilec_simt_emit(c, "const %s tc_v = %s;", ct, ld);
    if (!st)
        st = tilec_simt_store(c, rd->buf, simt_offset_str(c, rd->buf, id), simt_store_conv(c, "tc_v", t, rd->buf->dtype));
    if (rd->buf->scope == TILEC_SCOPE_GLOBAL)
        tilec_simt_emit(c, "if (%s || (%s)) %s", ind, simt_inside_str(c, rd->buf, id), st);
    else
        tilec_simt_emit(c, "%s", st);
    simt_close_block(c);
}

/* Vector width usable for the copy rs -> rd (see vec_width in tilec/simt.h),
 * 1 when the copy stays scalar; only checks what is known statically. */
static int64_t copy_vec_width(tilec_simt_ctx_t *c, const tilec_ir_region_t *rs, const tilec_ir_region_t *rd)
{
    const tilec_simt_dialect_t *d = &c->dl;
    if (d->vec_width < 2 || !d->vec_load || !d->vec_store || !simt_coop_for(c, rd->buf))
        return 1;
    const tilec_ir_buffer_t *bs = rs->buf, *bd = rd->buf;
    if (simt_is_private(bs) || simt_is_private(bd) || bs->dtype != bd->dtype || bs->dtype == TILEC_BOOL ||
        bs->ndim < 1 || bd->ndim < 1)
        return 1;
    size_t esz = tilec_dtype_size(bs->dtype);
    int64_t w = 1;
    while (w * 2 <= (int64_t)d->vec_width && w * 2 <= 16 && (size_t)(w * 2) * esz <= d->shared_align)
        w *= 2;
    const tilec_ir_region_t *rr[2] = {rs, rd};
    for (; w > 1; w /= 2) {
        int ok = 1;
        for (int i = 0; i < 2 && ok; i++) {
            const tilec_ir_region_t *r = rr[i];
            int last = r->buf->ndim - 1;
            int64_t v;
            if (r->extent[last] % w != 0)
                ok = 0;
            else if (last > 0 && r->buf->shape && tilec_ir_is_const_int(r->buf->shape[last], &v) && v % w != 0)
                ok = 0;
            else if (tilec_ir_is_const_int(r->base[last], &v) && v % w != 0)
                ok = 0;
        }
        if (ok)
            return w;
    }
    return 1;
}

/* Run-time condition for the vector loop of region r (bases tc_r<t>_*, in
 * bounds flag in or NULL), or NULL when it always holds. */
static const char *copy_vec_cond(tilec_simt_ctx_t *c, const tilec_ir_region_t *r, int t, const char *in, int64_t w)
{
    const char *cond = in;
    int last = r->buf->ndim - 1;
    int64_t v;
    const char *parts[2] = {NULL, NULL};
    if (last > 0 && !(r->buf->shape && tilec_ir_is_const_int(r->buf->shape[last], &v)))
        parts[0] = simt_fmt(c, "%s %% %" PRId64 " == 0", tilec_simt_dim(c, r->buf, last), w);
    if (!tilec_ir_is_const_int(r->base[last], &v))
        parts[1] = simt_fmt(c, "tc_r%d_%d %% %" PRId64 " == 0", t, last, w);
    for (int i = 0; i < 2; i++)
        if (parts[i])
            cond = cond ? simt_fmt(c, "%s && %s", cond, parts[i]) : parts[i];
    return cond;
}

/* A pointer to element idx of b for a vector access: b + offset, or the
 * layout's address of a lowered shared buffer that is not dense.  Its
 * element type *vt is the on-chip storage type of b's dtype: vectors move
 * stored bits, so a tensor of FUNCS-mode 16-bit floats (OpenCL half
 * without cl_khr_fp16, which has no halfN vectors) is addressed as its
 * 16-bit words. */
/* Pointer to element offset off of b, a vector of *vt. */
static const char *vec_ptr_off(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off, const char **vt)
{
    *vt = simt_st_type_dt(c, b->dtype, 0);
    const char *nm = tilec_simt_buf_name(c, b);
    if (strcmp(simt_st_type(c, b), *vt) == 0)
        return simt_fmt(c, "(%s + %s)", nm, off);
    const char *gq = c->dl.global_qual ? c->dl.global_qual : "";
    return simt_fmt(c, "((%s%s%s *)%s + %s)", gq, *gq ? " " : "", *vt, nm, off);
}

static const char *vec_ptr(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *const *idx, const char **vt)
{
    *vt = simt_st_type_dt(c, b->dtype, 0);
    if (c->lowered && simt_place(c, b) == SIMT_P_SHARED && !c->bi[b->id].dense)
        return simt_fmt(c, "(&%s)", tilec_simt_elem_at(c, b, idx));
    const char *nm = tilec_simt_buf_name(c, b), *off = simt_offset_str(c, b, idx);
    if (strcmp(simt_st_type(c, b), *vt) == 0)
        return simt_fmt(c, "(%s + %s)", nm, off);
    const char *gq = c->dl.global_qual ? c->dl.global_qual : "";
    return simt_fmt(c, "((%s%s%s *)%s + %s)", gq, *gq ? " " : "", *vt, nm, off);
}

void simt_gen_copy(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_region_t *rs = &s->u.copy.src, *rd = &s->u.copy.dst;
    if (!simt_buf_ok(c, rs->buf) || !simt_buf_ok(c, rd->buf))
        return;
    tilec_simt_emit(c, "{ /* copy %s -> %s */", rs->buf->name ? rs->buf->name : "?", rd->buf->name ? rd->buf->name : "?");
    c->ind++;
    int64_t ns, nd;
    int ts = simt_region_bases(c, rs, &ns), td = simt_region_bases(c, rd, &nd);
    if (ts < 0 || td < 0)
        return;
    if (ns != nd) {
        tilec_simt_fail(c, "copy: regions have %" PRId64 " and %" PRId64 " elements", ns, nd);
        return;
    }
    const char *ins = rs->buf->scope == TILEC_SCOPE_GLOBAL ? simt_region_inside(c, rs, ts) : NULL;
    const char *ind = rd->buf->scope == TILEC_SCOPE_GLOBAL ? simt_region_inside(c, rd, td) : NULL;
    int64_t w = copy_vec_width(c, rs, rd);
    if (c->lowered)
        w = simt_lowered_vec_cap(c, s, w);
    if (w > 1) {
        /* W consecutive elements of the flat order stay in one row of both
         * regions (innermost extents are multiples of W) */
        const char *cs = copy_vec_cond(c, rs, ts, ins, w);
        const char *cd = copy_vec_cond(c, rd, td, ind, w);
        const char *cond = cs && cd ? simt_fmt(c, "%s && %s", cs, cd) : cs ? cs : cd;
        if (cond) {
            tilec_simt_emit(c, "if (%s) { /* vector copy, %" PRId64 " elements at a time */", cond, w);
            c->ind++;
        } else {
            tilec_simt_emit(c, "{ /* vector copy, %" PRId64 " elements at a time */", w);
            c->ind++;
        }
        const char *is[TILEC_IR_MAX_DIMS], *id[TILEC_IR_MAX_DIMS];
        int open = open_vec_rows(c, rs, rd, ts, td, nd / w, w, is, id);
        if (!open) {
            const char *v = simt_open_elem_loop(c, nd / w, 1);
            /* 64-bit when the element count needs it (as open_elem_loop does) */
            const char *e = nd > INT32_MAX - 65536
                                ? simt_fmt(c, "(%s * %" PRId64 ")", simt_cast(c, "(%s)%s", c->dl.type_name[TILEC_INT64], v), w)
                                : simt_fmt(c, "(%s * %" PRId64 ")", v, w);
            region_idx(c, rs, ts, e, is);
            region_idx(c, rd, td, e, id);
            open = 1;
        }
        const char *wn = simt_fmt(c, "%" PRId64, w);
        const char *vts, *vtd;
        const char *ps = vec_ptr(c, rs->buf, is, &vts), *pd = vec_ptr(c, rd->buf, id, &vtd);
        const char *st;
        size_t bytes = (size_t)w * tilec_dtype_size(rs->buf->dtype);
        if (s->kind == TILEC_ST_COPY_ASYNC && c->dl.async_copy && rs->buf->scope == TILEC_SCOPE_GLOBAL &&
            simt_place(c, rd->buf) == SIMT_P_SHARED && (bytes == 4 || bytes == 8 || bytes == 16)) {
            const char *ak[] = {"d", "s", "n"}, *av[] = {pd, ps, simt_fmt(c, "%zu", bytes)};
            st = simt_subst(c, c->dl.async_copy, 3, ak, av);
        } else {
            const char *lk[] = {"n", "t", "p"}, *lv[] = {wn, vts, ps};
            const char *ld = simt_subst(c, c->dl.vec_load, 3, lk, lv);
            const char *sk[] = {"n", "t", "p", "v"}, *sv[] = {wn, vtd, pd, ld};
            st = simt_subst(c, c->dl.vec_store, 4, sk, sv);
        }
        size_t n = strlen(st);
        tilec_simt_emit(c, "%s%s", st, n && st[n - 1] == ';' ? "" : ";");
        while (open--)
            simt_close_block(c);
        if (!cond) {
            simt_close_block(c);
            simt_close_block(c);
            return;
        }
        c->ind--;
        tilec_simt_emit(c, "} else {");
        c->ind++;
        copy_scalar(c, rs, rd, ts, td, ins, ind, nd);
        simt_close_block(c);
    } else {
        copy_scalar(c, rs, rd, ts, td, ins, ind, nd);
    }
    simt_close_block(c);
}

void simt_gen_fill(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_region_t *rd = &s->u.fill.dst;
    if (!simt_buf_ok(c, rd->buf) || !s->u.fill.value)
        return;
    tilec_simt_emit(c, "{ /* fill %s */", rd->buf->name ? rd->buf->name : "?");
    c->ind++;
    int64_t nd;
    int td = simt_region_bases(c, rd, &nd);
    if (td < 0)
        return;
    tilec_dtype_t t = rd->buf->dtype;
    tilec_simt_emit(c, "const %s tc_v = %s;", tilec_simt_ctype(c, t),
                    tilec_simt_convert(c, tilec_simt_expr(c, s->u.fill.value), s->u.fill.value->dtype, t));
    const char *ind = rd->buf->scope == TILEC_SCOPE_GLOBAL ? simt_region_inside(c, rd, td) : NULL;
    const char *e = simt_open_elem_loop(c, nd, simt_coop_for(c, rd->buf));
    const char *id[TILEC_IR_MAX_DIMS];
    region_idx(c, rd, td, e, id);
    const char *st = tilec_simt_store(c, rd->buf, simt_offset_str(c, rd->buf, id), "tc_v");
    if (rd->buf->scope == TILEC_SCOPE_GLOBAL)
        tilec_simt_emit(c, "if (%s || (%s)) %s", ind, simt_inside_str(c, rd->buf, id), st);
    else
        tilec_simt_emit(c, "%s", st);
    simt_close_block(c);
    simt_close_block(c);
}

/* One group of a gathered copy: the loop variables name its first element
 * (simt.c's gen_parallel steps the innermost one by w).  The body of the
 * innermost loop (lower_gather_form) becomes one w-element vector move,
 * an asynchronous copy when the loop says lower.async = 1 and the dialect
 * has them (the pipeline's commit and wait complete it), or w zeros when
 * the conditions fail.  Returns 0 when body is not a gather. */
int simt_gen_gather(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *inner, int64_t w)
{
    lower_gather_form_t f;
    if (!lower_gather_form(inner->u.loop.body, &f))
        return 0;
    const tilec_ir_buffer_t *S = f.store->u.store.buf, *G = f.load->u.load.buf;
    if (!simt_buf_ok(c, S) || !simt_buf_ok(c, G))
        return 1;
    const tilec_ir_attr_t *aa = tilec_ir_attr_get(inner->nattrs, inner->attrs, "lower.async");
    const char *is[TILEC_IR_MAX_DIMS], *ig[TILEC_IR_MAX_DIMS], *iz[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < S->ndim; d++)
        is[d] = iz[d] = tilec_simt_expr(c, f.store->u.store.idx[d]);
    for (int d = 0; d < G->ndim; d++)
        ig[d] = tilec_simt_expr(c, f.load->u.load.idx[d]);
    const char *cond = NULL;
    if (f.cond)
        cond = simt_fmt(c, "(%s)", simt_cond(c, tilec_simt_expr(c, f.cond)));
    for (int i = 0; i < f.nsel; i++) {
        const char *c2 = simt_fmt(c, "(%s)", simt_cond(c, tilec_simt_expr(c, f.sel[i])));
        cond = cond ? simt_fmt(c, "%s && %s", cond, c2) : c2;
    }
    const char *vts, *vtd;
    /* the source through its expressions: a re-view's digits fold back to its flat index (simt_digits.c) */
    const char *ps = G->scope == TILEC_SCOPE_GLOBAL ? vec_ptr_off(c, G, tilec_simt_offset(c, G, f.load->u.load.idx), &vts)
                                                    : vec_ptr(c, G, ig, &vts);
    const char *pd = vec_ptr(c, S, is, &vtd);
    size_t bytes = (size_t)w * tilec_dtype_size(S->dtype);
    const char *mv;
    int async = aa && aa->kind == TILEC_ATTR_INT && aa->i == 1 && c->dl.async_copy && simt_place(c, S) == SIMT_P_SHARED &&
                (bytes == 4 || bytes == 8 || bytes == 16);
    int64_t numel = 1, e;
    for (int d = 0; d < G->ndim && numel > 0; d++)
        numel = tilec_ir_is_const_int(G->shape[d], &e) && e >= 0 && e < ((int64_t)1 << 32) ? numel * e : -1;
    /* a 32-bit offset (async_copy_zfill_off) where the source has fewer than
     * 2^32 elements: every element's fits, a wrapped one is never read (the
     * condition fails) */
    int off = async && cond && c->dl.async_copy_zfill_off && G->scope == TILEC_SCOPE_GLOBAL && numel > 0 &&
              numel < ((int64_t)1 << 32);
    if (off || (async && cond && c->dl.async_copy_zfill)) {
        const char *base = tilec_simt_buf_name(c, G), *n = simt_fmt(c, "%zu", bytes);
        const char *zk[] = {"d", "b", off ? "o" : "s", "n", "c"};
        const char *zv[] = {pd, base,
                            off ? simt_offset_typed(c, G, f.load->u.load.idx, c->dl.type_name[TILEC_UINT32]) : ps, n,
                            cond};
        mv = simt_subst(c, off ? c->dl.async_copy_zfill_off : c->dl.async_copy_zfill, 5, zk, zv);
        size_t nz = strlen(mv);
        tilec_simt_emit(c, "/* gathered copy %s -> %s, %" PRId64 " elements at a time, zeros where the condition fails */",
                        G->name ? G->name : "?", S->name ? S->name : "?", w);
        tilec_simt_emit(c, "%s%s", mv, nz && mv[nz - 1] == ';' ? "" : ";");
        return 1;
    }
    if (async) {
        const char *ak[] = {"d", "s", "n"}, *av[] = {pd, ps, simt_fmt(c, "%zu", bytes)};
        mv = simt_subst(c, c->dl.async_copy, 3, ak, av);
    } else {
        const char *wn = simt_fmt(c, "%" PRId64, w);
        const char *lk[] = {"n", "t", "p"}, *lv[] = {wn, vts, ps};
        const char *ld = simt_subst(c, c->dl.vec_load, 3, lk, lv);
        const char *sk[] = {"n", "t", "p", "v"}, *sv[] = {wn, vtd, pd, ld};
        mv = simt_subst(c, c->dl.vec_store, 4, sk, sv);
    }
    size_t n = strlen(mv);
    const char *semi = n && mv[n - 1] == ';' ? "" : ";";
    tilec_simt_emit(c, "/* gathered copy %s -> %s, %" PRId64 " elements at a time */", G->name ? G->name : "?",
                    S->name ? S->name : "?", w);
    if (!cond) {
        tilec_simt_emit(c, "%s%s", mv, semi);
        return 1;
    }
    tilec_simt_emit(c, "if (%s) {", cond);
    c->ind++;
    tilec_simt_emit(c, "%s%s", mv, semi);
    c->ind--;
    tilec_simt_emit(c, "} else {");
    c->ind++;
    tilec_dtype_t t = S->dtype;
    tilec_simt_emit(c, "const %s tc_z = %s;", tilec_simt_ctype(c, t), simt_zero(c, t));
    int last = S->ndim - 1;
    for (int64_t r = 0; r < w; r++) {
        iz[last] = simt_fmt(c, "(%s + %" PRId64 ")", is[last], r);
        tilec_simt_emit(c, "%s", tilec_simt_store(c, S, simt_offset_str(c, S, iz), simt_store_conv(c, "tc_z", t, t)));
    }
    simt_close_block(c);
    return 1;
}
