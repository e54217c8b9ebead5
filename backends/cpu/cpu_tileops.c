/*
 * cpu_tileops.c — the C of the tile operations that are loops over
 * regions and buffers: COPY and FILL (a fully-inside GLOBAL region takes a
 * straight loop, memcpy for contiguous rows, else a guarded one that reads
 * zeros and skips writes outside), REDUCE and CUMSUM (loops over an
 * (outer, reduced, inner) view; float rows reduced in interleaved lanes so
 * they vectorize), ATOMIC (__atomic builtins on GLOBAL), PRINT (the
 * interpreter's format), and the L2 prefetch of a pipelined loop's next
 * tiles.  GEMM is cpu_gemm.c; statements and the kernel are cpu_codegen.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cpu_cg.h"
#include "tilec/cexpr.h"

static int is_sint(tilec_dtype_t t) { return t >= TILEC_INT8 && t <= TILEC_INT64; }

/* ---- regions (COPY, FILL) ------------------------------------------------------- */

/* Declares int64 locals holding the region's base indices; names r<t>_<d>;
 * row: dimension 0 is moved to row tc_r of the region (cpu_rows.c). */
static int region_bases(cg_t *g, const tilec_ir_region_t *r, int row)
{
    if (!cg_buf_ok(g, r->buf))
        return -1;
    if (r->buf->ndim > TILEC_IR_MAX_DIMS || (r->buf->ndim > 0 && (!r->base || !r->extent))) {
        cg_fail(g, "region without bases or extents");
        return -1;
    }
    int t = cg_newtmp(g);
    for (int d = 0; d < r->buf->ndim; d++) {
        if (r->extent[d] < 1) {
            cg_fail(g, "region extent %" PRId64 " < 1", r->extent[d]);
            return -1;
        }
        cg_line(g, "const int64_t r%d_%d = (int64_t)(%s)%s;", t, d, cg_expr(g, r->base[d]),
                row && d == 0 ? " + tc_r" : "");
    }
    return t;
}

/* C condition: region fully inside its buffer. */
static const char *region_inside(cg_t *g, const tilec_ir_region_t *r, int t)
{
    const char *c = "1";
    for (int d = 0; d < r->buf->ndim; d++)
        c = cg_fmt(g, "%s && r%d_%d >= 0 && r%d_%d + %" PRId64 " <= %s", c, t, d, t, d, r->extent[d],
                cg_dim(g, r->buf, d));
    return c;
}

/* A global region read in place (block groups' A tiles, cpu_codegen.c):
 * declares its bases, sets *off to the row-major offset of its first
 * element and returns the C condition that it lies inside its buffer. */
const char *cg_region_at(cg_t *g, const tilec_ir_region_t *r, const char **off)
{
    int t = region_bases(g, r, 0);
    if (t < 0) {
        *off = "0";
        return "0";
    }
    const char *idx[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < r->buf->ndim; d++)
        idx[d] = cg_fmt(g, "r%d_%d", t, d);
    *off = cg_offset(g, r->buf, idx);
    return region_inside(g, r, t);
}

/* Index expressions of the region's element for loop variables lv[] where
 * dims[] maps region dimensions to loop levels (-1: extent-1 dimension). */
static void region_index(cg_t *g, const tilec_ir_region_t *r, int t, const int *map,
                         const char *const *lv, const char **idx)
{
    for (int d = 0; d < r->buf->ndim; d++)
        idx[d] = map[d] < 0 ? cg_fmt(g, "r%d_%d", t, d) : cg_fmt(g, "(r%d_%d + %s)", t, d, lv[map[d]]);
}

static const char *index_inside(cg_t *g, const tilec_ir_buffer_t *b, const char *const *idx)
{
    const char *c = "1";
    for (int d = 0; d < b->ndim; d++)
        c = cg_fmt(g, "%s && (%s) >= 0 && (%s) < %s", c, idx[d], idx[d], cg_dim(g, b, d));
    return c;
}

/* Loop nest header over extents ext[0..n-1] with variables lv; the innermost
 * gets the ivdep pragma when allowed.  Returns the number of braces opened. */
static int open_loops(cg_t *g, int n, const int64_t *ext, const char *const *lv, int ivdep)
{
    for (int l = 0; l < n; l++) {
        if (l == n - 1 && ivdep)
            cg_line(g, "TC_IVDEP");
        cg_line(g, "for (int64_t %s = 0; %s < %" PRId64 "; ++%s) {", lv[l], lv[l], ext[l], lv[l]);
        g->ind++;
    }
    return n;
}

static void close_loops(cg_t *g, int n)
{
    for (int l = 0; l < n; l++) {
        g->ind--;
        cg_line(g, "}");
    }
}

static void row_prefetch_burst(cg_t *g);

/* Whether a float16 row converter writes its rows to db with streaming
 * stores (the prelude's TC_NTH), as a C expression: "0" for an on-chip
 * destination, else whether the tensor is larger than a quarter of the
 * host's L3 (TC_L3, in every kernel's text): a tensor that size does not
 * stay in cache for whoever reads it next, and its lines no longer have
 * to be read from memory before they are written (softmax 8192x1024 fp16
 * on Zen 3: 8% less time). */
static const char *stream_rows(cg_t *g, const tilec_ir_buffer_t *db)
{
    if (!cg_is_global(db))
        return "0";
    const char *bytes = cg_fmt(g, "(int64_t)%zu", cg_st_size(db->dtype));
    for (int d = 0; d < db->ndim; d++)
        bytes = cg_fmt(g, "%s * %s", bytes, cg_dim(g, db, d));
    return cg_fmt(g, "(%s > (int64_t)TC_L3 / 4)", bytes);
}

static void gen_copy_body(cg_t *g, const tilec_ir_stmt_t *s, int ts, int td, int n,
                          const int64_t *ext, const int *smap, const int *dmap, int guarded,
                          int linear, const int64_t *sext, const int64_t *dext)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *sb = src->buf, *db = dst->buf;
    const char *lv[TILEC_IR_MAX_DIMS] = {0};
    int t = cg_newtmp(g);
    for (int l = 0; l < n; l++)
        lv[l] = cg_fmt(g, "i%d_%d", t, l);
    const char *sidx[TILEC_IR_MAX_DIMS], *didx[TILEC_IR_MAX_DIMS];
    int same = sb == db;

    if (linear) {
        /* different non-1 extents with the same element count: walk element
         * k and unflatten it in each region */
        row_prefetch_burst(g);
        cg_line(g, "for (int64_t %s = 0; %s < %" PRId64 "; ++%s) {", lv[0], lv[0], ext[0], lv[0]);
        g->ind++;
        const char *rem = lv[0];
        for (int d = sb->ndim - 1; d >= 0; d--) {
            sidx[d] = cg_fmt(g, "(r%d_%d + (%s) %% %" PRId64 ")", ts, d, rem, sext[d]);
            rem = cg_fmt(g, "((%s) / %" PRId64 ")", rem, sext[d]);
        }
        rem = lv[0];
        for (int d = db->ndim - 1; d >= 0; d--) {
            didx[d] = cg_fmt(g, "(r%d_%d + (%s) %% %" PRId64 ")", td, d, rem, dext[d]);
            rem = cg_fmt(g, "((%s) / %" PRId64 ")", rem, dext[d]);
        }
    } else {
        region_index(g, src, ts, smap, lv, sidx);
        region_index(g, dst, td, dmap, lv, didx);
        /* contiguous rows of the same storage type: memcpy the innermost */
        int contig = n > 0 && smap[sb->ndim - 1] == n - 1 && dmap[db->ndim - 1] == n - 1 &&
                     !guarded && strcmp(cg_st_type(sb->dtype), cg_st_type(db->dtype)) == 0 &&
                     sb->dtype == db->dtype && !g->copy_scale;
        if (contig && ext[n - 1] > 1) {
            row_prefetch_burst(g);
            open_loops(g, n - 1, ext, lv, 0);
            const char *lv2[TILEC_IR_MAX_DIMS];
            memcpy(lv2, lv, sizeof lv2);
            lv2[n - 1] = "0";
            region_index(g, src, ts, smap, lv2, sidx);
            region_index(g, dst, td, dmap, lv2, didx);
            cg_line(g, "%s(&b%d[%s], &b%d[%s], (size_t)%" PRId64 " * sizeof(%s));",
                 same ? "memmove" : "memcpy", db->id, cg_offset(g, db, didx), sb->id,
                 cg_offset(g, sb, sidx), ext[n - 1], cg_st_type(db->dtype));
            close_loops(g, n - 1);
            return;
        }
        /* contiguous float32 rows to float16 and back: the prelude's row
         * converters (the hardware's instruction where there is one) */
        int f2h = sb->dtype == TILEC_FLOAT32 && db->dtype == TILEC_FLOAT16;
        int h2f = sb->dtype == TILEC_FLOAT16 && db->dtype == TILEC_FLOAT32;
        if ((f2h || (h2f && !g->copy_scale)) && !same && n > 0 && smap[sb->ndim - 1] == n - 1 && dmap[db->ndim - 1] == n - 1 &&
            !guarded && ext[n - 1] > 1) {
            open_loops(g, n - 1, ext, lv, 0);
            const char *lv2[TILEC_IR_MAX_DIMS];
            memcpy(lv2, lv, sizeof lv2);
            lv2[n - 1] = "0";
            region_index(g, src, ts, smap, lv2, sidx);
            region_index(g, dst, td, dmap, lv2, didx);
            /* a row prefetch of this row's 16-bit side, spread over the conversion */
            int w = f2h ? 1 : 0;
            const char *pf = "NULL";
            if (n == 1 && g->row_pf[w] && g->row_pf_bytes[w] == ext[0] * 2) {
                pf = cg_fmt(g, "tc_pf%d", w);
                g->row_pf[w] = 0;
            }
            row_prefetch_burst(g);
            const char *nt = f2h ? stream_rows(g, db) : NULL;
            if (f2h && g->copy_scale)
                cg_line(g, "tc_f2h_scale_n(&b%d[%s], &b%d[%s], %" PRId64 ", %s, %s, %s);", db->id, cg_offset(g, db, didx),
                        sb->id, cg_offset(g, sb, sidx), ext[n - 1], g->copy_scale, pf, nt);
            else if (f2h)
                cg_line(g, "tc_f2h_n(&b%d[%s], &b%d[%s], %" PRId64 ", %s, %s);", db->id, cg_offset(g, db, didx), sb->id,
                        cg_offset(g, sb, sidx), ext[n - 1], pf, nt);
            else
                cg_line(g, "tc_h2f_n(&b%d[%s], &b%d[%s], %" PRId64 ", %s);", db->id, cg_offset(g, db, didx), sb->id,
                        cg_offset(g, sb, sidx), ext[n - 1], pf);
            close_loops(g, n - 1);
            return;
        }
        row_prefetch_burst(g);
        open_loops(g, n, ext, lv, !same);
    }
    const char *val = cg_from_store(g, cg_fmt(g, "b%d[%s]", sb->id, cg_offset(g, sb, sidx)), sb->dtype);
    if (g->copy_scale) /* a float32 on-chip source (cpu_rows_scale_fold) */
        val = cg_fmt(g, "((%s) * %s)", val, g->copy_scale);
    if (guarded && cg_is_global(sb))
        val = cg_fmt(g, "((%s) ? %s : (%s)0)", index_inside(g, sb, sidx), val, cg_ct_type(sb->dtype));
    const char *store = cg_fmt(g, "b%d[%s] = %s;", db->id, cg_offset(g, db, didx),
                            cg_to_store(g, val, sb->dtype, db->dtype));
    if (guarded && cg_is_global(db))
        cg_line(g, "if (%s) %s", index_inside(g, db, didx), store);
    else
        cg_line(g, "%s", store);
    close_loops(g, linear ? 1 : n);
}

/* The row statement s (cpu_rows.c) as its part for row tc_r: dimension 0
 * of region r (*r of s2, a copy of s) is one row; ext: room for extents. */
static void one_row(const tilec_ir_stmt_t **s, tilec_ir_stmt_t *s2, tilec_ir_region_t *r, int64_t *ext)
{
    if (r->buf->ndim < 1 || r->buf->ndim > TILEC_IR_MAX_DIMS || !r->extent)
        return;
    memcpy(ext, r->extent, sizeof(int64_t) * (size_t)r->buf->ndim);
    ext[0] = 1;
    r->extent = ext;
    *s = s2;
}

/* Row tc_r's copy to or from a global tensor (cpu_rows.c): the same row
 * of the tensor two rows on is prefetched (for writing when it is the
 * destination), when the row is contiguous in it (every dimension but
 * the first and the last of extent 1) and spans 256 B to 16 KiB.  The
 * block's rows follow each other in memory and each is computed between
 * its two copies: without this the hardware prefetcher, which stops at
 * pages and runs only a few lines ahead, left the copies waiting for
 * memory (softmax 8192x1024 fp16, AVX2: 14.1 -> 9.9 ms, 1 thread).  A
 * prefetch past the tensor's end is harmless (the address is computed as
 * an integer, and prefetches do not fault). */
static void row_prefetch(cg_t *g, const tilec_ir_region_t *r, int t, int write)
{
    g->row_pf[write] = 0;
    const tilec_ir_buffer_t *b = r->buf;
    int nd = b->ndim;
    if (!cg_is_global(b) || nd < 2 || nd > TILEC_IR_MAX_DIMS)
        return;
    for (int d = 1; d < nd - 1; d++)
        if (r->extent[d] != 1)
            return;
    int64_t bytes = r->extent[nd - 1] * (int64_t)tilec_dtype_size(b->dtype);
    if (bytes < 256 || bytes > 16384)
        return;
    const char *idx[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        idx[d] = d == 0 ? cg_fmt(g, "(r%d_0 + 2)", t) : cg_fmt(g, "r%d_%d", t, d);
    cg_line(g, "const char *tc_pf%d = (const char *)((uintptr_t)b%d + (uintptr_t)((%s) * (int64_t)sizeof(%s)));",
            write, b->id, cg_offset(g, b, idx), cg_st_type(b->dtype));
    g->row_pf[write] = 1;
    g->row_pf_bytes[write] = bytes;
}

/* The row prefetches row_prefetch declared and no row converter took
 * (gen_copy_body), as one burst each. */
static void row_prefetch_burst(cg_t *g)
{
    for (int w = 0; w < 2; w++)
        if (g->row_pf[w])
            cg_line(g, "for (int64_t q = 0; q < %" PRId64 "; q += 64) __builtin_prefetch(tc_pf%d + q, %d);",
                    g->row_pf_bytes[w], w, w);
    g->row_pf[0] = g->row_pf[1] = 0;
}

void cg_copy(cg_t *g, const tilec_ir_stmt_t *s)
{
    int row = s == g->row_stmt && s->u.copy.src.buf && s->u.copy.dst.buf;
    tilec_ir_stmt_t s2;
    int64_t se[TILEC_IR_MAX_DIMS], de[TILEC_IR_MAX_DIMS];
    if (row) {
        s2 = *s;
        one_row(&s, &s2, &s2.u.copy.src, se);
        one_row(&s, &s2, &s2.u.copy.dst, de);
    }
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    cg_line(g, "{ /* copy%s */", row ? ": row tc_r" : "");
    g->ind++;
    int ts = region_bases(g, src, row), td = ts < 0 ? -1 : region_bases(g, dst, row);
    if (ts < 0 || td < 0)
        return;
    g->row_pf[0] = g->row_pf[1] = 0;
    if (row) {
        row_prefetch(g, src, ts, 0);
        row_prefetch(g, dst, td, 1);
    }
    int smap[TILEC_IR_MAX_DIMS], dmap[TILEC_IR_MAX_DIMS];
    int64_t sext[TILEC_IR_MAX_DIMS], dext[TILEC_IR_MAX_DIMS];
    int ns = 0, nd = 0;
    int64_t stotal = 1, dtotal = 1;
    for (int d = 0; d < src->buf->ndim; d++) {
        smap[d] = src->extent[d] == 1 ? -1 : ns;
        if (src->extent[d] != 1)
            sext[ns++] = src->extent[d];
        if (stotal > INT64_MAX / src->extent[d]) {
            cg_fail(g, "copy region too large");
            return;
        }
        stotal *= src->extent[d];
    }
    for (int d = 0; d < dst->buf->ndim; d++) {
        dmap[d] = dst->extent[d] == 1 ? -1 : nd;
        if (dst->extent[d] != 1)
            dext[nd++] = dst->extent[d];
        if (dtotal > INT64_MAX / dst->extent[d]) {
            cg_fail(g, "copy region too large");
            return;
        }
        dtotal *= dst->extent[d];
    }
    int linear = 0;
    if (ns != nd || memcmp(sext, dext, sizeof(int64_t) * (size_t)ns) != 0) {
        if (stotal != dtotal) {
            cg_fail(g, "copy between regions of %" PRId64 " and %" PRId64 " elements", stotal,
                    dtotal);
            return;
        }
        linear = 1;
    }
    int64_t ext1[1] = {stotal};
    const int64_t *ext = linear ? ext1 : sext;
    int n = linear ? 1 : ns;
    /* for the linear walk, unflatten with the full region extents */
    int64_t sfull[TILEC_IR_MAX_DIMS], dfull[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < src->buf->ndim; d++)
        sfull[d] = src->extent[d];
    for (int d = 0; d < dst->buf->ndim; d++)
        dfull[d] = dst->extent[d];
    int guard = cg_is_global(src->buf) || cg_is_global(dst->buf);
    if (guard) {
        const char *c = "1";
        if (cg_is_global(src->buf))
            c = cg_fmt(g, "%s && %s", c, region_inside(g, src, ts));
        if (cg_is_global(dst->buf))
            c = cg_fmt(g, "%s && %s", c, region_inside(g, dst, td));
        cg_line(g, "if (%s) {", c);
        g->ind++;
        gen_copy_body(g, s, ts, td, n, ext, smap, dmap, 0, linear, sfull, dfull);
        g->ind--;
        cg_line(g, "} else {");
        g->ind++;
        gen_copy_body(g, s, ts, td, n, ext, smap, dmap, 1, linear, sfull, dfull);
        g->ind--;
        cg_line(g, "}");
    } else {
        gen_copy_body(g, s, ts, td, n, ext, smap, dmap, 0, linear, sfull, dfull);
    }
    g->ind--;
    cg_line(g, "}");
}

void cg_fill(cg_t *g, const tilec_ir_stmt_t *s)
{
    int row = s == g->row_stmt && s->u.fill.dst.buf;
    tilec_ir_stmt_t s2;
    int64_t ext[TILEC_IR_MAX_DIMS];
    if (row) {
        s2 = *s;
        one_row(&s, &s2, &s2.u.fill.dst, ext);
    }
    const tilec_ir_region_t *r = &s->u.fill.dst;
    const tilec_ir_buffer_t *b = r->buf;
    cg_line(g, "{ /* fill%s */", row ? ": row tc_r" : "");
    g->ind++;
    int t = region_bases(g, r, row);
    if (t < 0 || !s->u.fill.value)
        { cg_fail(g, "fill without a region or value"); return; }
    const tilec_ir_expr_t *v = s->u.fill.value;
    int tv = cg_newtmp(g);
    cg_line(g, "const %s f%d = %s;", cg_st_type(b->dtype), tv,
         cg_to_store(g, cg_expr(g, v), v->dtype, b->dtype));
    const char *lv[TILEC_IR_MAX_DIMS], *idx[TILEC_IR_MAX_DIMS];
    int map[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < b->ndim; d++) {
        lv[d] = cg_fmt(g, "i%d_%d", tv, d);
        map[d] = d;
    }
    region_index(g, r, t, map, lv, idx);
    const char *st = cg_fmt(g, "b%d[%s] = f%d;", b->id, cg_offset(g, b, idx), tv);
    if (cg_is_global(b)) {
        cg_line(g, "if (%s) {", region_inside(g, r, t));
        g->ind++;
        open_loops(g, b->ndim, r->extent, lv, 1);
        cg_line(g, "%s", st);
        close_loops(g, b->ndim);
        g->ind--;
        cg_line(g, "} else {");
        g->ind++;
        open_loops(g, b->ndim, r->extent, lv, 1);
        cg_line(g, "if (%s) %s", index_inside(g, b, idx), st);
        close_loops(g, b->ndim);
        g->ind--;
        cg_line(g, "}");
    } else {
        open_loops(g, b->ndim, r->extent, lv, 1);
        cg_line(g, "%s", st);
        close_loops(g, b->ndim);
    }
    g->ind--;
    cg_line(g, "}");
}

/* ---- REDUCE, CUMSUM ------------------------------------------------------------------ */

/* outer/len/inner extents of b around dimension d, as C expressions */
static void split_dims(cg_t *g, const tilec_ir_buffer_t *b, int d, const char **outer,
                       const char **len, const char **inner)
{
    *outer = "INT64_C(1)";
    *inner = "INT64_C(1)";
    for (int i = 0; i < d; i++)
        *outer = cg_fmt(g, "%s * %s", *outer, cg_dim(g, b, i));
    for (int i = d + 1; i < b->ndim; i++)
        *inner = cg_fmt(g, "%s * %s", *inner, cg_dim(g, b, i));
    *len = cg_dim(g, b, d);
}

static const char *type_min(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: return "INT8_MIN";
    case TILEC_INT16: return "INT16_MIN";
    case TILEC_INT32: return "INT32_MIN";
    case TILEC_INT64: return "INT64_MIN";
    case TILEC_FLOAT64: return "(-(double)INFINITY)";
    case TILEC_FLOAT16: case TILEC_BFLOAT16: case TILEC_FLOAT32:
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: case TILEC_FLOAT4_E2M1FN: return "(-(float)INFINITY)";
    case TILEC_INT4: return "((int8_t)-8)";
    default: return "0";
    }
}

static const char *type_max(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: return "INT8_MAX";
    case TILEC_INT16: return "INT16_MAX";
    case TILEC_INT32: return "INT32_MAX";
    case TILEC_INT64: return "INT64_MAX";
    case TILEC_UINT8: return "UINT8_MAX";
    case TILEC_UINT16: return "UINT16_MAX";
    case TILEC_UINT32: return "UINT32_MAX";
    case TILEC_UINT64: return "UINT64_MAX";
    case TILEC_BOOL: return "1";
    case TILEC_FLOAT64: return "((double)INFINITY)";
    default: return "((float)INFINITY)";
    }
}

static const char *absval(cg_t *g, const char *x, tilec_dtype_t t)
{
    if (t == TILEC_FLOAT64)
        return cg_fmt(g, "fabs(%s)", x);
    if (cg_is_flt(t))
        return cg_fmt(g, "fabsf(%s)", x);
    if (is_sint(t))
        return cg_fmt(g, "tc_abs_%s(%s)", tilec_cexpr_isfx(t), x);
    return x;
}

static const char *maxof(cg_t *g, const char *a, const char *b, tilec_dtype_t t, int mx)
{
    if (t == TILEC_FLOAT64)
        return cg_fmt(g, "tc_%sd(%s, %s)", mx ? "max" : "min", a, b);
    if (cg_is_flt(t))
        return cg_fmt(g, "tc_%sf(%s, %s)", mx ? "max" : "min", a, b);
    return cg_fmt(g, "tc_%s_%s(%s, %s)", mx ? "max" : "min", tilec_cexpr_isfx(t), a, b);
}

static const char *addof(cg_t *g, const char *a, const char *b, tilec_dtype_t t)
{
    if (cg_is_flt(t) || t == TILEC_INT32 || t == TILEC_INT64 || t == TILEC_UINT32 || t == TILEC_UINT64)
        return cg_fmt(g, "(%s + %s)", a, b);
    return cg_fmt(g, "((%s)((uint32_t)(%s) + (uint32_t)(%s)))", cg_ct_type(t), a, b);
}

void cg_reduce(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *S = s->u.reduce.src, *D = s->u.reduce.dst;
    if (!cg_buf_ok(g, S) || !cg_buf_ok(g, D))
        return;
    int dimn = s->u.reduce.dim;
    if (dimn < 0 || dimn >= S->ndim)
        { cg_fail(g, "reduce dimension %d out of range", dimn); return; }
    int op = s->u.reduce.op;
    if (op < TILEC_RED_SUM || op > TILEC_RED_ABSMAX)
        { cg_fail(g, "unknown reduce op %d", op); return; }
    tilec_dtype_t t = D->dtype;
    if (t == TILEC_BOOL)
        t = TILEC_INT32;
    const char *T = cg_ct_type(t);
    const char *outer, *len, *inner;
    split_dims(g, S, dimn, &outer, &len, &inner);
    cg_line(g, "{ /* reduce_%s dim %d */", tilec_reduce_op_name((tilec_reduce_op_t)op), dimn);
    g->ind++;
    cg_line(g, "const int64_t RO = %s, RL = %s, RI = %s;", outer, len, inner);
    /* row tc_r (cpu_rows.c): the outer indices of its row, o in buffers
     * stored whole, ro (from 0) in the row buffers */
    const char *so = "o", *dso = "o";
    if (s == g->row_stmt) {
        cg_line(g, "for (int64_t ro = 0; ro < RO / %" PRId64 "; ++ro)", g->rows.rows);
        cg_line(g, "  for (int64_t ii = 0, o = tc_r * (RO / %" PRId64 ") + ro; ii < RI; ++ii) {", g->rows.rows);
        so = cg_row_buf(g, S) ? "ro" : "o";
        dso = cg_row_buf(g, D) ? "ro" : "o";
    } else {
        cg_line(g, "for (int64_t o = 0; o < RO; ++o)");
        cg_line(g, "  for (int64_t ii = 0; ii < RI; ++ii) {");
    }
    g->ind += 2;
    const char *init = op == TILEC_RED_MAX ? type_min(t) : op == TILEC_RED_MIN ? type_max(t) : "0";
    cg_line(g, "%s acc = (%s)%s;", T, T, init);
    const char *x = cg_conv(g, cg_from_store(g, cg_fmt(g, "b%d[(%s * RL + r) * RI + ii]", S->id, so), S->dtype),
                         S->dtype, t);
    const char *comb, *lcomb, *ccomb, *tcomb;
    switch (op) {
    case TILEC_RED_SUM: comb = addof(g, "acc", "x", t); break;
    case TILEC_RED_ABSSUM: comb = addof(g, "acc", absval(g, "x", t), t); break;
    case TILEC_RED_MAX: comb = maxof(g, "acc", "x", t, 1); break;
    case TILEC_RED_MIN: comb = maxof(g, "acc", "x", t, 0); break;
    default: comb = maxof(g, "acc", absval(g, "x", t), t, 1); break;
    }
    if (cg_is_flt(t)) {
        /* Float sums do not vectorize in order (no -ffast-math), so a
         * contiguous row (RI == 1) is reduced in TC_RLANES interleaved
         * partial results, combined at the end (the order a GPU tree
         * reduction also changes); the same for max/min, which then
         * vectorize too. */
        const char *xl = cg_conv(g, cg_from_store(g, cg_fmt(g, "b%d[%s * RL + r + l]", S->id, so), S->dtype),
                              S->dtype, t);
        int mx = op != TILEC_RED_MIN, sum = op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM;
        const char *xa = op == TILEC_RED_ABSSUM || op == TILEC_RED_ABSMAX ? absval(g, "x", t) : "x";
        lcomb = sum ? addof(g, "lane[l]", xa, t) : maxof(g, "lane[l]", xa, t, mx);
        tcomb = sum ? addof(g, "lane[l]", "lane[l + h]", t) : maxof(g, "lane[l]", "lane[l + h]", t, mx);
        ccomb = sum ? addof(g, "acc", "lane[0]", t) : maxof(g, "acc", "lane[0]", t, mx);
        cg_line(g, "int64_t r = 0;");
        cg_line(g, "if (RI == 1 && RL >= 2 * TC_RLANES) {");
        g->ind++;
        /* float32 rows: the same lanes with explicit vectors (the
         * prelude's tc_rred_f32, same order and bits) where the target
         * has them */
        int vec = S->dtype == TILEC_FLOAT32 && t == TILEC_FLOAT32;
        if (vec) {
            int rop = op == TILEC_RED_SUM ? 0 : op == TILEC_RED_MAX ? 1 : op == TILEC_RED_MIN ? 2
                    : op == TILEC_RED_ABSSUM ? 3 : 4;
            cg_line(g, "#ifdef TC_RVEC");
            cg_line(g, "r = RL / TC_RLANES * TC_RLANES;");
            cg_line(g, "{ const float lane0 = tc_rred_f32(%d, (float)%s, &b%d[%s * RL], r); acc = %s; }", rop, init,
                    S->id, so, sum ? addof(g, "acc", "lane0", t) : maxof(g, "acc", "lane0", t, mx));
            cg_line(g, "#else");
        }
        cg_line(g, "%s lane[TC_RLANES];", T);
        cg_line(g, "for (int l = 0; l < TC_RLANES; ++l) lane[l] = (%s)%s;", T, init);
        cg_line(g, "for (; r + TC_RLANES <= RL; r += TC_RLANES)");
        cg_line(g, "  TC_IVDEP for (int l = 0; l < TC_RLANES; ++l) { const %s x = %s; lane[l] = %s; }", T, xl, lcomb);
        /* the lanes pairwise (TC_RLANES is a power of two): a few vector
         * operations, where a sequential combine was a chain of TC_RLANES
         * dependent scalar ones per row */
        cg_line(g, "TC_UNROLL for (int h = TC_RLANES / 2; h >= 1; h /= 2)");
        cg_line(g, "  TC_IVDEP for (int l = 0; l < h; ++l) lane[l] = %s;", tcomb);
        cg_line(g, "acc = %s;", ccomb);
        if (vec)
            cg_line(g, "#endif");
        g->ind--;
        cg_line(g, "}");
        cg_line(g, "for (; r < RL; ++r) {");
    } else {
        cg_line(g, "for (int64_t r = 0; r < RL; ++r) {");
    }
    g->ind++;
    cg_line(g, "%s x = %s;", T, x);
    cg_line(g, "acc = %s;", comb);
    g->ind--;
    cg_line(g, "}");
    const char *dv = cg_conv(g, cg_from_store(g, cg_fmt(g, "b%d[%s * RI + ii]", D->id, dso), D->dtype), D->dtype, t);
    if (!s->u.reduce.clear) {
        const char *c2;
        switch (op) {
        case TILEC_RED_SUM:
        case TILEC_RED_ABSSUM: c2 = addof(g, dv, "acc", t); break;
        case TILEC_RED_MIN: c2 = maxof(g, dv, "acc", t, 0); break;
        default: c2 = maxof(g, dv, "acc", t, 1); break;
        }
        cg_line(g, "acc = %s;", c2);
    }
    cg_line(g, "b%d[%s * RI + ii] = %s;", D->id, dso, cg_to_store(g, "acc", t, D->dtype));
    g->ind -= 2;
    cg_line(g, "  }");
    g->ind--;
    cg_line(g, "}");
}

void cg_cumsum(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *S = s->u.cumsum.src, *D = s->u.cumsum.dst;
    if (!cg_buf_ok(g, S) || !cg_buf_ok(g, D))
        return;
    int dimn = s->u.cumsum.dim;
    if (dimn < 0 || dimn >= S->ndim)
        { cg_fail(g, "cumsum dimension %d out of range", dimn); return; }
    tilec_dtype_t t = D->dtype == TILEC_BOOL ? TILEC_INT32 : D->dtype;
    const char *T = cg_ct_type(t);
    const char *outer, *len, *inner;
    split_dims(g, S, dimn, &outer, &len, &inner);
    cg_line(g, "{ /* cumsum dim %d%s */", dimn, s->u.cumsum.reverse ? " reverse" : "");
    g->ind++;
    cg_line(g, "const int64_t RO = %s, RL = %s, RI = %s;", outer, len, inner);
    cg_line(g, "for (int64_t o = 0; o < RO; ++o)");
    cg_line(g, "  for (int64_t ii = 0; ii < RI; ++ii) {");
    g->ind += 2;
    cg_line(g, "%s acc = 0;", T);
    cg_line(g, "for (int64_t q = 0; q < RL; ++q) {");
    g->ind++;
    cg_line(g, "const int64_t r = %s;", s->u.cumsum.reverse ? "RL - 1 - q" : "q");
    cg_line(g, "acc = %s;",
         addof(g, "acc",
               cg_conv(g, cg_from_store(g, cg_fmt(g, "b%d[(o * RL + r) * RI + ii]", S->id), S->dtype),
                    S->dtype, t),
               t));
    cg_line(g, "b%d[(o * RL + r) * RI + ii] = %s;", D->id, cg_to_store(g, "acc", t, D->dtype));
    g->ind--;
    cg_line(g, "}");
    g->ind -= 2;
    cg_line(g, "  }");
    g->ind--;
    cg_line(g, "}");
}

/* ---- ATOMIC, PRINT --------------------------------------------------------------------- */

void cg_atomic(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *b = s->u.atomic.buf;
    if (!cg_buf_ok(g, b) || !s->u.atomic.value)
        { cg_fail(g, "atomic without a buffer or value"); return; }
    int op = s->u.atomic.op;
    if (op < TILEC_ATOMIC_ADD || op > TILEC_ATOMIC_MIN)
        { cg_fail(g, "unknown atomic op %d", op); return; }
    const char *opn = op == TILEC_ATOMIC_ADD ? "add" : op == TILEC_ATOMIC_MAX ? "max" : "min";
    const char *off = cg_offset_exprs(g, b, s->u.atomic.idx);
    const tilec_ir_expr_t *v = s->u.atomic.value;
    tilec_dtype_t t = b->dtype;
    if (tilec_dtype_is_float8(t) || tilec_dtype_is_4bit(t)) {
        cg_fail(g, "cpu: atomics on %s are not supported (unsupported dtype)", tilec_dtype_name(t));
        return;
    }
    const char *val = cg_conv(g, cg_expr(g, v), v->dtype, t);
    if (cg_is_global(b)) {
        const char *sfx;
        switch (t) {
        case TILEC_FLOAT16: sfx = "f16"; break;
        case TILEC_BFLOAT16: sfx = "bf16"; break;
        case TILEC_FLOAT32: sfx = "f32"; break;
        case TILEC_FLOAT64: sfx = "f64"; break;
        case TILEC_BOOL: sfx = "u8"; val = cg_fmt(g, "(uint8_t)((%s) != 0)", val); break;
        default: sfx = tilec_cexpr_isfx(t); break;
        }
        if (t == TILEC_BOOL && op == TILEC_ATOMIC_ADD)
            opn = "max"; /* bool + bool saturates: or */
        cg_line(g, "tc_atomic_%s_%s(&b%d[%s], %s);", opn, sfx, b->id, off, val);
        return;
    }
    /* on-chip buffers belong to this block, which runs on one thread */
    int tv = cg_newtmp(g);
    cg_line(g, "{ %s *p%d = &b%d[%s];", cg_st_type(t), tv, b->id, off);
    g->ind++;
    const char *cur = cg_from_store(g, cg_fmt(g, "*p%d", tv), t);
    const char *nv = op == TILEC_ATOMIC_ADD ? addof(g, cur, cg_fmt(g, "(%s)", val), t == TILEC_BOOL ? TILEC_INT32 : t)
                                            : maxof(g, cur, val, t == TILEC_BOOL ? TILEC_INT32 : t, op == TILEC_ATOMIC_MAX);
    cg_line(g, "*p%d = %s;", tv, cg_to_store(g, nv, t, t));
    g->ind--;
    cg_line(g, "}");
}

/* A C string literal for s (escapes everything unusual, trigraphs too;
 * pct: double every %% for a printf format). */
static const char *c_string(cg_t *g, const char *s, int pct)
{
    tilec_sdk_str_t b = {0};
    tilec_sdk_str_putn(&b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\' || *p == '?') {
            char e[3] = {'\\', (char)*p, 0};
            tilec_sdk_str_putn(&b, e, 2);
        } else if (*p < 32 || *p >= 127 || (pct && *p == '%')) {
            if (*p == '%')
                tilec_sdk_str_putn(&b, "%%", 2);
            else
                tilec_sdk_str_printf(&b, "\\%03o", *p);
        } else {
            tilec_sdk_str_putn(&b, (const char *)p, 1);
        }
    }
    tilec_sdk_str_putn(&b, "\"", 1);
    const char *r = b.oom ? "\"\"" : cg_fmt(g, "%s", b.s);
    tilec_sdk_str_free(&b);
    return r;
}

static const char *print_fmt(tilec_dtype_t t)
{
    if (cg_is_flt(t))
        return "%g";
    if (t == TILEC_UINT64)
        return "%llu";
    return "%lld";
}

static const char *print_arg(cg_t *g, const char *v, tilec_dtype_t t)
{
    if (cg_is_flt(t))
        return cg_fmt(g, "(double)(%s)", v);
    if (t == TILEC_UINT64)
        return cg_fmt(g, "(unsigned long long)(%s)", v);
    return cg_fmt(g, "(long long)(%s)", v);
}

/* T.print, in the reference interpreter's format: "msg: value", or
 * "msg: " and the buffer in nested brackets ("name: " without a msg). */
void cg_print(cg_t *g, const tilec_ir_stmt_t *s)
{
    const char *m = s->u.print.msg;
    if (s->u.print.value) {
        const tilec_ir_expr_t *v = s->u.print.value;
        cg_line(g, "printf(%s \"%s\\n\", %s); fflush(stdout);", c_string(g, m && *m ? m : "", 1),
             cg_fmt(g, "%s%s", m && *m ? ": " : "", print_fmt(v->dtype)),
             print_arg(g, cg_expr(g, v), v->dtype));
        return;
    }
    const tilec_ir_buffer_t *b = s->u.print.buf;
    if (!cg_buf_ok(g, b))
        return;
    const char *shp = "0";
    for (int d = 0; d < b->ndim; d++)
        shp = d ? cg_fmt(g, "%s, %s", shp, cg_dim(g, b, d)) : cg_dim(g, b, d);
    cg_line(g, "{");
    g->ind++;
    cg_line(g, "const int64_t sh[%d] = {%s}; int64_t n = 1;", b->ndim + 1, shp);
    cg_line(g, "for (int d = 0; d < %d; ++d) n *= sh[d];", b->ndim);
    cg_line(g, "flockfile(stdout); fputs(%s, stdout); fputs(\": \", stdout);",
         c_string(g, m && *m ? m : (b->name ? b->name : "?"), 0));
    cg_line(g, "if (n == 0) fputs(\"[]\", stdout);");
    cg_line(g, "for (int64_t f = 0; f < n; ++f) {");
    g->ind++;
    cg_line(g, "int64_t span = 1;");
    cg_line(g, "for (int d = %d; d >= 0; --d) { span *= sh[d]; if (f %% span == 0) putchar('['); }",
         b->ndim - 1);
    cg_line(g, "printf(\"%s\", %s);", print_fmt(b->dtype),
         print_arg(g, cg_from_store(g, cg_fmt(g, "b%d[f]", b->id), b->dtype), b->dtype));
    cg_line(g, "span = 1;");
    cg_line(g, "for (int d = %d; d >= 0; --d) { span *= sh[d]; if ((f + 1) %% span == 0) putchar(']'); }",
         b->ndim - 1);
    cg_line(g, "if (f + 1 < n) fputs(\", \", stdout);");
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "putchar('\\n'); fflush(stdout); funlockfile(stdout);");
    g->ind--;
    cg_line(g, "}");
}



/* T.Pipelined: the program allows the loads of later iterations to
 * overlap this one.  On the CPU that is a software prefetch (into L2) of
 * every cache line of the global regions the body's top-level copies read
 * in the next iteration: tile rows of a large matrix each sit in their own
 * page, where the hardware prefetchers do not follow.  The loop variable
 * is stepped to compute the next bases and restored. */
void cg_prefetch_next(cg_t *g, const tilec_ir_stmt_t *loop, const char *ext, const tilec_ir_stmt_t *only)
{
    const tilec_ir_var_t *v = loop->u.loop.var;
    int any = 0;
    for (const tilec_ir_stmt_t *b = loop->u.loop.body; b; b = b->next)
        any |= (!only || b == only) && b->kind == TILEC_ST_COPY && b->u.copy.src.buf && cg_is_global(b->u.copy.src.buf) &&
               b->u.copy.src.buf->ndim >= 1;
    if (!any)
        return;
    int t = cg_newtmp(g);
    cg_line(g, "if (v%d + 1 < %s) { /* prefetch the next iteration's tiles */", v->id, ext);
    g->ind++;
    cg_line(g, "const %s pf%d = v%d; v%d = (%s)(v%d + 1);", cg_ct_type(v->dtype), t, v->id, v->id,
         cg_ct_type(v->dtype), v->id);
    for (const tilec_ir_stmt_t *b = loop->u.loop.body; b && !g->failed; b = b->next) {
        if (!(b->kind == TILEC_ST_COPY && b->u.copy.src.buf && cg_is_global(b->u.copy.src.buf) &&
              b->u.copy.src.buf->ndim >= 1) || (only && b != only))
            continue;
        const tilec_ir_region_t *r = &b->u.copy.src;
        cg_line(g, "{");
        g->ind++;
        int rt = region_bases(g, r, 0);
        if (rt < 0)
            return;
        const tilec_ir_buffer_t *sb = r->buf;
        int nd = sb->ndim;
        const char *lv[TILEC_IR_MAX_DIMS], *idx[TILEC_IR_MAX_DIMS];
        int map[TILEC_IR_MAX_DIMS];
        int64_t ext_[TILEC_IR_MAX_DIMS];
        int nl = 0;
        for (int d = 0; d < nd; d++) {
            map[d] = -1;
            if (d < nd - 1 && r->extent[d] > 1) {
                lv[nl] = cg_fmt(g, "p%d_%d", rt, nl);
                ext_[nl] = r->extent[d];
                map[d] = nl++;
            }
        }
        region_index(g, r, rt, map, lv, idx);
        cg_line(g, "if (%s) {", region_inside(g, r, rt));
        g->ind++;
        open_loops(g, nl, ext_, lv, 0);
        cg_line(g, "const char *pp = (const char *)&b%d[%s];", sb->id, cg_offset(g, sb, idx));
        cg_line(g, "for (int64_t c = 0; c < %" PRId64 " * (int64_t)sizeof(%s); c += 64) __builtin_prefetch(pp + c, 0, 2);",
             r->extent[nd - 1], cg_st_type(sb->dtype));
        close_loops(g, nl);
        g->ind--;
        cg_line(g, "}");
        g->ind--;
        cg_line(g, "}");
    }
    cg_line(g, "v%d = pf%d;", v->id, t);
    g->ind--;
    cg_line(g, "}");
}
