/*
 * cuda_copy.c — T.copy and T.fill between any scopes: boundary-safe
 * element loops shared out over the block, 16-byte vector moves when the
 * rows allow them (with a scalar fallback at tensor edges and
 * misalignment), and the cp.async form the pipelined loops issue.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cg.h"

#define try_copy_vec(g, s, w) cg_copy_vec(g, s, w, 0)

void cg_emit_copy(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    int64_t ext[TILEC_IR_MAX_DIMS], sext[TILEC_IR_MAX_DIMS];
    int n = cg_region_shape(dst, ext), sn = cg_region_shape(src, sext);
    if (n != sn) {
        cg_fail(g, "copy: regions of different shapes");
        return;
    }
    int64_t total = 1;
    for (int i = 0; i < n; i++) {
        if (ext[i] != sext[i]) {
            cg_fail(g, "copy: regions of different shapes");
            return;
        }
        total *= ext[i];
    }
    if (try_copy_vec(g, s, w))
        return;
    int id = g->tmp++;
    cg_line(g, "{ /* copy %s -> %s */", src->buf->name, dst->buf->name);
    g->ind++;
    cg_hoist_bases(g, src, id * 3 + 0 + 1000000);
    cg_hoist_bases(g, dst, id * 3 + 1 + 1000000);
    int hs = id * 3 + 1000000, hd = id * 3 + 1 + 1000000, ib = id * 3 + 2 + 1000000;
    cg_out(g, "%*sfor (tl_i64 tl_k%d = %s; tl_k%d < %" PRId64 "; tl_k%d += ", 2 * (g->ind + 1), "",
        id, cg_w_start(w), id, total, id);
    cg_w_stride(g, w);
    cg_out(g, ") {\n");
    g->ind++;
    char kname[32];
    snprintf(kname, sizeof kname, "tl_k%d", id);
    cg_decompose(g, ib, kname, ext, n);
    int sg = src->buf->scope == TILEC_SCOPE_GLOBAL, dg = dst->buf->scope == TILEC_SCOPE_GLOBAL;
    tilec_dtype_t st = src->buf->dtype, dt = dst->buf->dtype;
    if (dg) {
        cg_out(g, "%*sif (", 2 * (g->ind + 1), "");
        cg_region_inbounds(g, dst, hd, ib);
        cg_out(g, ") ");
    } else {
        cg_out(g, "%*s", 2 * (g->ind + 1), "");
    }
    cg_out(g, "b%d[", dst->buf->id);
    cg_region_offset(g, dst, hd, ib);
    cg_out(g, "] = ");
    if (sg) {
        cg_out(g, "!");
        cg_region_inbounds(g, src, hs, ib);
        cg_out(g, " ? (%s)0 : ", cg_stype(dt));
    }
    if (st == dt) {
        cg_out(g, "b%d[", src->buf->id);
        cg_region_offset(g, src, hs, ib);
        cg_out(g, "]");
    } else {
        /* convert through the compute types, rounding once: float64 and
         * wide integers go to a 16-bit float straight from double, bool
         * is x != 0, the rest through the dst's store conversion */
        if (cg_is_f16ish(dt) && !cg_is_f16ish(st) && st != TILEC_FLOAT32 &&
            !(tilec_dtype_is_int(st) && tilec_dtype_size(st) <= 2) && st != TILEC_BOOL)
            cg_out(g, "%s(double)", dt == TILEC_FLOAT16 ? "tl_d2h(" : "tl_d2b(");
        else if (dt == TILEC_BOOL)
            cg_out(g, "(tl_u8)(0 != ");
        else
            cg_store_open(g, dt);
        cg_emit_load_conv_open(g, st);
        cg_out(g, "b%d[", src->buf->id);
        cg_region_offset(g, src, hs, ib);
        cg_out(g, "]))");
    }
    cg_out(g, ";\n");
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
}

/* 16-byte copies: src and dst of one dtype of 2 or 4 bytes, the innermost
 * dimension contiguous in both with an extent that is a multiple of the
 * vector, dst not global.  Global sources check alignment and bounds per
 * vector and fall back to elements. */
/* 16-byte copies between a tensor and shared memory (either direction)
 * when both have one dtype of 2 or 4 bytes and the innermost dimension of
 * both regions is the copied row: thread t moves vector t, t + nthreads,
 * ...; a vector that crosses the tensor's edge or is misaligned falls back
 * to element copies with the usual bounds checks. */
/* The fast path of a tile copy tensor -> on-chip of one dtype: when the
 * whole tile is inside the tensor and its rows are 16-byte aligned (the
 * common case away from the edges), thread t moves the vectors of one
 * column in rows t / vr + j * dr, j = 0, 1, ...: one address computed,
 * then constant steps, no bounds checks.  Opens "if (fast) { ... } else {"
 * and returns 1, or emits nothing and returns 0 when the tile's shape
 * doesn't divide among the threads. */
static int copy_fast(cg_t *g, const tilec_ir_stmt_t *s, int id, int vec, const int64_t *ext, int n,
                     int hs, int hd, int async)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *sb = src->buf, *db = dst->buf;
    /* a 2-D tile, or one stage [st, R, C] of a ring */
    int dl = db->ndim - 1;
    if (n != 2 || db->ndim < 2 || (db->scope != TILEC_SCOPE_SHARED && db->scope != TILEC_SCOPE_FRAGMENT))
        return 0;
    for (int d = 0; d + 2 < db->ndim; d++)
        if (dst->extent[d] != 1)
            return 0;
    int64_t rows = ext[0], vr = ext[1] / vec;
    if (vr <= 0 || g->nthreads % vr || (rows * vr) % g->nthreads)
        return 0;
    int64_t dr = g->nthreads / vr, per = rows * vr / g->nthreads;
    int srow = -1, last = sb->ndim - 1;
    for (int d = 0; d < last; d++)
        if (src->extent[d] > 1)
            srow = d;
    if (srow < 0 || dst->extent[dl - 1] != rows)
        return 0;
    int ib = id * 3 + 3000000, ie = ib + 1;
    /* first and last element of the tile in range, the first aligned */
    cg_line(g, "const int tl_%d_0 = 0, tl_%d_1 = 0, tl_%d_0 = %lld, tl_%d_1 = %lld;", ib, ib, ie,
         (long long)rows - 1, ie, (long long)ext[1] - 1);
    cg_out(g, "%*sconst %s *tl_fs%d = &b%d[", 2 * (g->ind + 1), "", cg_stype(sb->dtype), id, sb->id);
    cg_region_offset(g, src, hs, ib);
    cg_out(g, "];\n");
    cg_out(g, "%*sif (", 2 * (g->ind + 1), "");
    cg_region_inbounds(g, src, hs, ib);
    cg_out(g, " && ");
    cg_region_inbounds(g, src, hs, ie);
    cg_out(g, " && (((tl_u64)tl_fs%d | (tl_u64)(tl_s%d_%d * %d)) & 15) == 0) {\n", id, sb->id, last,
        (int)tilec_dtype_size(sb->dtype));
    g->ind++;
    cg_line(g, "const int tl_%d_0 = tl_tid / %lld, tl_%d_1 = (tl_tid %% %lld) * %d;", ib, (long long)vr,
         ib, (long long)vr, vec);
    /* the source row stride in elements */
    cg_out(g, "%*sconst tl_i64 tl_fst%d = (tl_i64)1", 2 * (g->ind + 1), "", id);
    for (int d = srow + 1; d <= last; d++)
        cg_out(g, " * tl_s%d_%d", sb->id, d);
    cg_out(g, ";\n");
    cg_out(g, "%*sconst %s *tl_fp%d = &b%d[", 2 * (g->ind + 1), "", cg_stype(sb->dtype), id, sb->id);
    cg_region_offset(g, src, hs, ib);
    cg_out(g, "];\n");
    /* rows r and r + 8m share their swizzle pattern, so a constant step
     * works for swizzled buffers when dr is a multiple of 8 */
    int64_t pitch = g->pitch[db->id] > 0 ? g->pitch[db->id] : cg_const_dim(db, dl);
    int linear = !g->swz[db->id] || dr % 8 == 0;
    int64_t dstep = g->swz[db->id] ? dr * g->swz[db->id] : dr * pitch;
    if (linear) {
        cg_out(g, "%*s%s *tl_fd%d = &b%d[", 2 * (g->ind + 1), "", cg_stype(db->dtype), id, db->id);
        cg_region_offset(g, dst, hd, ib);
        cg_out(g, "];\n");
    }
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_j = 0; tl_j < %lld; tl_j++) {", (long long)per);
    g->ind++;
    if (linear) {
        cg_line(g, "%s *tl_d = tl_fd%d + tl_j * %lld;", cg_stype(db->dtype), id, (long long)dstep);
    } else {
        cg_line(g, "const int tl_%d_0 = tl_%d_0 + tl_j * %lld, tl_%d_1 = tl_%d_1;", ie, ib,
             (long long)dr, ie, ib);
        cg_out(g, "%*s%s *tl_d = &b%d[", 2 * (g->ind + 1), "", cg_stype(db->dtype), db->id);
        cg_region_offset(g, dst, hd, ie);
        cg_out(g, "];\n");
    }
    if (async)
        cg_line(g, "tl_cp_async16(tl_d, tl_fp%d + tl_j * %lld * tl_fst%d, 1);", id, (long long)dr, id);
    else
        cg_line(g, "*(uint4 *)tl_d = *(const uint4 *)(tl_fp%d + tl_j * %lld * tl_fst%d);", id,
             (long long)dr, id);
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "} else {");
    g->ind++;
    return 1;
}

int cg_copy_vec(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w, int async)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *sb = src->buf, *db = dst->buf;
    /* conversions between float16, bfloat16 and float32 are done in
     * registers on the way (one rounding, like the scalar path) */
    int conv = sb->dtype != db->dtype;
    if (!w->coop || (conv && (async || !(cg_is_f16ish(sb->dtype) || sb->dtype == TILEC_FLOAT32) ||
                              !(cg_is_f16ish(db->dtype) || db->dtype == TILEC_FLOAT32))))
        return 0;
    int sg = sb->scope == TILEC_SCOPE_GLOBAL, dg = db->scope == TILEC_SCOPE_GLOBAL;
    if (sg == dg || cg_per_thread_scope(sb->scope) || cg_per_thread_scope(db->scope))
        return 0;
    size_t es = tilec_dtype_size(sg ? sb->dtype : db->dtype);
    if (es != 2 && es != 4)
        return 0;
    int vec = (int)(16 / es);
    int sd = sb->ndim - 1, dd = db->ndim - 1;
    int64_t ext[TILEC_IR_MAX_DIMS], sext[TILEC_IR_MAX_DIMS];
    int n = cg_region_shape(dst, ext);
    int sn = cg_region_shape(src, sext);
    if (n < 1 || n != sn || dst->extent[dd] != ext[n - 1] || src->extent[sd] != sext[n - 1] ||
        ext[n - 1] % vec != 0)
        return 0;
    int64_t total = 1;
    for (int i = 0; i < n; i++) {
        if (ext[i] != sext[i])
            return 0;
        total *= ext[i];
    }
    const tilec_ir_buffer_t *ob = sg ? db : sb; /* the on-chip side */
    int64_t opitch = g->pitch[ob->id] > 0 ? g->pitch[ob->id] : cg_const_dim(ob, ob->ndim - 1);
    if (opitch <= 0 || (!conv && opitch % vec != 0))
        return 0;
    int64_t vext[TILEC_IR_MAX_DIMS];
    memcpy(vext, ext, sizeof(int64_t) * (size_t)n);
    vext[n - 1] /= vec;
    int id = g->tmp++;
    int hs = id * 3 + 1000000, hd = hs + 1, iv = hs + 2, ib = id * 3 + 2000000,
        ie = id * 3 + 2000001;
    const tilec_ir_region_t *gr = sg ? src : dst;
    int hg = sg ? hs : hd;
    cg_line(g, "{ /* copy %s -> %s, 16-byte vectors%s */", sb->name, db->name,
         async ? " with cp.async" : "");
    g->ind++;
    cg_hoist_bases(g, src, hs);
    cg_hoist_bases(g, dst, hd);
    int fast = !conv && sg && copy_fast(g, s, id, vec, ext, n, hs, hd, async);
    cg_line(g, "for (tl_i64 tl_k%d = tl_tid; tl_k%d < %" PRId64 "; tl_k%d += %d) {", id, id,
         total / vec, id, g->nthreads);
    g->ind++;
    char kname[32];
    snprintf(kname, sizeof kname, "tl_k%d", id);
    cg_decompose(g, iv, kname, vext, n);
    for (int i = 0; i < n; i++)
        cg_line(g, "const int tl_%d_%d = tl_%d_%d%s;", ib, i, iv, i, i == n - 1 ? (vec == 8 ? " * 8" : " * 4") : "");
    cg_out(g, "%*sconst %s *tl_sp%d = &b%d[", 2 * (g->ind + 1), "", cg_stype(sb->dtype), id, sb->id);
    cg_region_offset(g, src, hs, ib);
    cg_out(g, "];\n");
    cg_out(g, "%*s%s *tl_dp%d = &b%d[", 2 * (g->ind + 1), "", cg_stype(db->dtype), id, db->id);
    cg_region_offset(g, dst, hd, ib);
    cg_out(g, "];\n");
    /* the whole vector inside the tensor: every index in range and the last
     * one's vec-th element too */
    if (conv)
        cg_out(g, "%*sif ((((tl_u64)tl_%cp%d) & 15) == 0 && ", 2 * (g->ind + 1), "", sg ? 's' : 'd', id);
    else
        cg_out(g, "%*sif (((((tl_u64)tl_sp%d) | ((tl_u64)tl_dp%d)) & 15) == 0 && ", 2 * (g->ind + 1),
            "", id, id);
    cg_region_inbounds(g, gr, hg, ib);
    {
        int nu = 0;
        int last = gr->buf->ndim - 1;
        cg_out(g, " && (tl_u64)");
        for (int d = 0; d < last; d++)
            if (gr->extent[d] > 1)
                nu++;
        cg_out(g, "(tl_%d_%d + tl_%d_%d + %d) < (tl_u64)tl_s%d_%d", hg, last, ib, nu, vec - 1,
            gr->buf->id, last);
    }
    cg_out(g, ") {\n");
    if (async) {
        cg_line(g, "  tl_cp_async16(tl_dp%d, tl_sp%d, 1);", id, id);
    } else if (!conv) {
        cg_line(g, "  *(uint4 *)tl_dp%d = *(const uint4 *)tl_sp%d;", id, id);
    } else if (sg) {
        cg_line(g, "  const uint4 tl_v = *(const uint4 *)tl_sp%d;", id);
        cg_line(g, "  const %s *tl_e = (const %s *)&tl_v;", cg_stype(sb->dtype), cg_stype(sb->dtype));
        cg_line(g, "  #pragma unroll");
        cg_out(g, "%*s  for (int tl_i = 0; tl_i < %d; tl_i++) tl_dp%d[tl_i] = ", 2 * (g->ind + 1), "",
            vec, id);
        cg_store_open(g, db->dtype);
        cg_emit_load_conv_open(g, sb->dtype);
        cg_out(g, "tl_e[tl_i]));\n");
    } else {
        cg_line(g, "  uint4 tl_v;");
        cg_line(g, "  %s *tl_e = (%s *)&tl_v;", cg_stype(db->dtype), cg_stype(db->dtype));
        cg_line(g, "  #pragma unroll");
        cg_out(g, "%*s  for (int tl_i = 0; tl_i < %d; tl_i++) tl_e[tl_i] = ", 2 * (g->ind + 1), "", vec);
        cg_store_open(g, db->dtype);
        cg_emit_load_conv_open(g, sb->dtype);
        cg_out(g, "tl_sp%d[tl_i]));\n", id);
        cg_line(g, "  *(uint4 *)tl_dp%d = tl_v;", id);
    }
    cg_line(g, "} else {");
    g->ind++;
    cg_line(g, "for (int tl_v = 0; tl_v < %d; tl_v++) {", vec);
    g->ind++;
    for (int i = 0; i < n; i++)
        cg_line(g, "const int tl_%d_%d = tl_%d_%d%s;", ie, i, ib, i, i == n - 1 ? " + tl_v" : "");
    cg_out(g, "%*s", 2 * (g->ind + 1), "");
    if (dg) {
        cg_out(g, "if (");
        cg_region_inbounds(g, dst, hd, ie);
        cg_out(g, ") ");
    }
    cg_out(g, "b%d[", db->id);
    cg_region_offset(g, dst, hd, ie);
    cg_out(g, "] = ");
    if (sg) {
        cg_out(g, "!");
        cg_region_inbounds(g, src, hs, ie);
        cg_out(g, " ? (%s)0 : ", cg_stype(db->dtype));
    }
    if (conv) {
        cg_store_open(g, db->dtype);
        cg_emit_load_conv_open(g, sb->dtype);
    }
    cg_out(g, "b%d[", sb->id);
    cg_region_offset(g, src, hs, ie);
    cg_out(g, "]%s;\n", conv ? "))" : "");
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    if (fast) {
        g->ind--;
        cg_line(g, "}");
    }
    g->ind--;
    cg_line(g, "}");
    return 1;
}

void cg_emit_fill(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    const tilec_ir_region_t *dst = &s->u.fill.dst;
    int64_t ext[TILEC_IR_MAX_DIMS];
    int n = cg_region_shape(dst, ext);
    int64_t total = 1;
    for (int i = 0; i < n; i++)
        total *= ext[i];
    int id = g->tmp++;
    int hd = id * 3 + 1000000, ib = hd + 2;
    cg_line(g, "{ /* fill %s */", dst->buf->name);
    g->ind++;
    cg_hoist_bases(g, dst, hd);
    cg_out(g, "%*sconst %s tl_fv%d = ", 2 * (g->ind + 1), "", cg_stype(dst->buf->dtype), id);
    cg_store_open(g, dst->buf->dtype);
    cg_emit_expr(g, s->u.fill.value);
    cg_out(g, ");\n");
    cg_out(g, "%*sfor (tl_i64 tl_k%d = %s; tl_k%d < %" PRId64 "; tl_k%d += ", 2 * (g->ind + 1), "", id,
        cg_w_start(w), id, total, id);
    cg_w_stride(g, w);
    cg_out(g, ") {\n");
    g->ind++;
    char kname[32];
    snprintf(kname, sizeof kname, "tl_k%d", id);
    cg_decompose(g, ib, kname, ext, n);
    cg_out(g, "%*s", 2 * (g->ind + 1), "");
    if (dst->buf->scope == TILEC_SCOPE_GLOBAL) {
        cg_out(g, "if (");
        cg_region_inbounds(g, dst, hd, ib);
        cg_out(g, ") ");
    }
    cg_out(g, "b%d[", dst->buf->id);
    cg_region_offset(g, dst, hd, ib);
    cg_out(g, "] = tl_fv%d;\n", id);
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
}
