/*
 * cuda_regs.c — register fragments.  Layout inference (the SDK's layout
 * pass) decides which fragments live in registers and how; this file
 * reads its REGS layouts into the printer's row maps and prints what the
 * registers support: parallel nests run by the owning threads, fills,
 * copies to and from whole fragments, and row reductions with shuffles.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cg.h"
#include "tilec/ir_walk.h"

/* ---- fragments in registers --------------------------------------------------
 *
 * Layout inference (plugin-sdk/src/lower_layout.c) decides which float32
 * fragments live in registers, with its demotion fixpoint; this printer
 * reads its REGS layouts.  "mma.acc": the accumulator layout of the GEMMs
 * accumulating into it (RF_ACC): thread (warp w, lane l) holds element e
 * of tile (mi, ni) at row tl_wm + mi * mstride + l / 4 + 8 * (e / 2) and
 * column tl_wn + ni * 8 + 2 * (l % 4) + e % 2.  "rows_over_warps": a 2-D
 * fragment no GEMM touches (RF_ACC too, rf_warprows).  "rows": a 1-D
 * fragment as long as those rows, each thread holding the rows it owns
 * (RF_ROW).  A T.Parallel nest the pass marks lower.dist = "regs" runs on
 * the threads owning the elements (emit_rf_nest).  All register fragments
 * of a kernel share one row map, the first accumulator's. */
/* The rows-over-warps layout of an R x C float32 fragment that no GEMM
 * touches (a block of rows loaded from a tensor, as in softmax): warp w
 * holds rows w, w + nw, ... (mt of them), lane l the ev consecutive
 * columns at (ni * 32 + l) * ev for ni < nt, ev up to 8 so that copies
 * move 16 bytes of a 16-bit tensor; a row is reduced across its warp. */
static void warprows_plan(const cg_t *g, const tilec_ir_buffer_t *b, mma_plan_t *p)
{
    int64_t R = cg_const_dim(b, 0), C = cg_const_dim(b, 1);
    int nw = g->nthreads / 32;
    int ev = C % 256 == 0 ? 8 : C % 128 == 0 ? 4 : C % 64 == 0 ? 2 : 1;
    memset(p, 0, sizeof *p);
    p->M = R;
    p->N = C;
    p->wm = nw;
    p->wn = 1;
    p->WM = 1;
    p->WN = ev;
    p->mt = (int)((R + nw - 1) / nw);
    p->nt = (int)(C / (32 * ev));
    p->ev = ev;
    p->mstride = nw;
}

/* the first GEMM (in s and what it nests) accumulating into b */
typedef struct find_q {
    const cg_t *g;
    const tilec_ir_buffer_t *b;
    const tilec_ir_stmt_t *found;
} find_q_t;

static int find_gemm(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    find_q_t *q = w->user;
    if (s->kind != TILEC_ST_GEMM || s->u.gemm.c != q->b)
        return TILEC_WALK_CONTINUE;
    q->found = s;
    return TILEC_WALK_STOP;
}

/* a statement that writes memory other than registers and per-thread
 * buffers: such a store, or a tile operation (run serially in the thread) */
static int find_mem_write(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    find_q_t *q = w->user;
    switch (s->kind) {
    case TILEC_ST_FOR:
    case TILEC_ST_IF:
    case TILEC_ST_ASSIGN:
    case TILEC_ST_SYNC:
    case TILEC_ST_HINT: return TILEC_WALK_CONTINUE;
    case TILEC_ST_STORE:
        if (q->g->rf[s->u.store.buf->id] || cg_per_thread_scope(s->u.store.buf->scope))
            return TILEC_WALK_CONTINUE;
        break;
    default: break;
    }
    q->found = s;
    return TILEC_WALK_STOP;
}

static const tilec_ir_stmt_t *find_stmt(const cg_t *g, const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b,
                                        int (*fn)(tilec_ir_walk_t *, tilec_ir_stmt_t *))
{
    find_q_t q = {g, b, NULL};
    tilec_ir_walk_t w;
    tilec_ir_stmt_t *list = (tilec_ir_stmt_t *)s;
    memset(&w, 0, sizeof w);
    w.stmt_pre = fn;
    w.user = &q;
    tilec_ir_walk_block(&w, &list);
    return q.found;
}

void cg_plan_regfrags(cg_t *g)
{
    const tilec_ir_kernel_t *k = g->k;
    int rows = -1;
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        const tilec_ir_layout_t *L = b->layout;
        const tilec_ir_stmt_t *gm;
        if (!L || L->kind != TILEC_LAYOUT_REGS || b->scope != TILEC_SCOPE_FRAGMENT ||
            b->dtype != TILEC_FLOAT32)
            continue;
        if (strcmp(L->name, "mma.acc") == 0 && (gm = find_stmt(g, k->body, b, find_gemm)) &&
            cg_mma_plan(g, gm, &g->rf_plan[i]))
            g->rf[i] = RF_ACC;
        else if (strcmp(L->name, "rows_over_warps") == 0 && b->ndim == 2 && g->nthreads % 32 == 0)
            g->rf[i] = RF_ACC, g->rf_warprows = 1, warprows_plan(g, b, &g->rf_plan[i]);
        else if (strcmp(L->name, "rows") == 0)
            g->rf[i] = RF_ROW;
        if (g->rf[i] == RF_ACC && rows < 0)
            rows = i, g->rf_rows = g->rf_plan[i];
    }
    g->rf_rowid = -1;
    for (int i = k->nparams; i < k->nbufs && rows >= 0; i++) {
        if (!g->rf[i])
            continue;
        g->any_rf = 1;
        g->rf_id[i] = g->tmp++;
        if (g->rf[i] == RF_ACC && g->rf_rowid < 0)
            g->rf_rowid = g->rf_id[i];
    }
    if (rows < 0) /* row fragments without an accumulator: no row map */
        for (int i = k->nparams; i < k->nbufs; i++)
            g->rf[i] = RF_NONE;
}

void cg_rf_nest_analyze(cg_t *g, const tilec_ir_stmt_t *s, rf_nest_t *nn)
{
    const tilec_ir_attr_t *d = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.dist");
    memset(nn, 0, sizeof *nn);
    nn->loop[0] = s;
    nn->n = 1;
    const tilec_ir_stmt_t *b = s->u.loop.body;
    if (b && !b->next && b->kind == TILEC_ST_FOR && b->u.loop.kind == TILEC_LOOP_PARALLEL) {
        nn->loop[1] = b;
        nn->n = 2;
    }
    if (!d || d->kind != TILEC_ATTR_STRING || strcmp(d->s, "regs") != 0)
        return;
    for (int i = g->k->nparams; i < g->k->nbufs && !nn->acc; i++)
        if (g->rf[i] == RF_ACC && cg_touches(nn->loop[nn->n - 1]->u.loop.body, g->k->bufs[i], NULL, CG_READ | CG_WRITE))
            nn->acc = g->k->bufs[i];
    nn->kind = nn->n == 2 && nn->acc ? 1 : 2;
    nn->writes_mem = find_stmt(g, nn->loop[nn->n - 1]->u.loop.body, NULL, find_mem_write) != NULL;
}

/* the register of fragment b for the element (row nest: row) being
 * emitted */
void cg_rf_ref(cg_t *g, const tilec_ir_buffer_t *b)
{
    if (g->rf[b->id] == RF_ACC)
        cg_out(g, "tl_c%d[tl_mi][tl_ni][tl_e]", g->rf_id[b->id]);
    else
        cg_out(g, "tl_c%d[tl_mi][%s]", g->rf_id[b->id],
            g->rf_nest != 1 ? "tl_h" : g->rf_warprows ? "0" : "tl_e >> 1");
}

/* row values a thread holds per row slot: 2 (rows l/4 and l/4 + 8 of an
 * mma tile), 1 for rows over warps */
int cg_rf_halves(const cg_t *g) { return g->rf_warprows ? 1 : 2; }

/* row of the current element / row of a register fragment */
static void rf_row(cg_t *g, const char *half)
{
    if (g->rf_warprows)
        cg_out(g, "tl_w%d + tl_mi * %d", g->rf_rowid, g->rf_rows.mstride);
    else
        cg_out(g, "tl_wm%d + tl_mi * %d + (tl_l%d >> 2) + %s * 8", g->rf_rowid, g->rf_rows.mstride,
            g->rf_rowid, half);
}

/* rows over warps whose count isn't a multiple of the warps: the slots
 * past the last row are skipped (a whole warp at a time) */
static void rf_row_guard(cg_t *g)
{
    if (!g->rf_warprows || g->rf_rows.M % g->rf_rows.mstride == 0)
        return;
    cg_out(g, "%*sif (", 2 * (g->ind + 1), "");
    rf_row(g, "0");
    cg_out(g, " >= %lld) continue;\n", (long long)g->rf_rows.M);
}

/* opens the loops over the registers of fragment b: (tl_mi, tl_ni, tl_e)
 * for an accumulator, (tl_mi, tl_h) for rows; closed by rf_loops_close */
static void rf_loops_open(cg_t *g, const tilec_ir_buffer_t *b)
{
    const mma_plan_t *p = g->rf[b->id] == RF_ACC ? &g->rf_plan[b->id] : &g->rf_rows;
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    if (g->rf[b->id] == RF_ACC) {
        cg_line(g, "#pragma unroll");
        cg_line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++)", p->nt);
        cg_line(g, "#pragma unroll");
        cg_line(g, "for (int tl_e = 0; tl_e < %d; tl_e++) {", p->ev);
    } else {
        cg_line(g, "#pragma unroll");
        cg_line(g, "for (int tl_h = 0; tl_h < %d; tl_h++) {", cg_rf_halves(g));
    }
    g->ind++;
    rf_row_guard(g);
}

static void rf_loops_close(cg_t *g)
{
    g->ind--;
    cg_line(g, "}");
}

/* the current element's row and column into variables rv and cv (names) */
static void rf_coords(cg_t *g, const tilec_ir_buffer_t *b, const char *rv, const char *cv)
{
    cg_out(g, "%*s%s = ", 2 * (g->ind + 1), "", rv);
    rf_row(g, g->rf[b->id] == RF_ACC ? "(tl_e >> 1)" : "tl_h");
    cg_out(g, ";\n");
    if (cv && g->rf_warprows)
        cg_line(g, "%s = (tl_ni * 32 + tl_l%d) * %d + tl_e;", cv, g->rf_rowid, g->rf_plan[b->id].ev);
    else if (cv)
        cg_line(g, "%s = tl_wn%d + tl_ni * 8 + (tl_l%d & 3) * 2 + (tl_e & 1);", cv, g->rf_id[b->id],
             g->rf_rowid);
}

void cg_emit_rf_nest(cg_t *g, const rf_nest_t *nn)
{
    const tilec_ir_buffer_t *lead = nn->acc;
    char rv[32], cv[32];
    snprintf(rv, sizeof rv, "v%d", nn->loop[0]->u.loop.var->id);
    if (nn->n == 2)
        snprintf(cv, sizeof cv, "v%d", nn->loop[1]->u.loop.var->id);
    if (!lead) /* a row nest: any row fragment it touches gives the loops */
        for (int i = g->k->nparams; i < g->k->nbufs && !lead; i++)
            if (g->rf[i] == RF_ROW)
                lead = g->k->bufs[i];
    cg_line(g, "{ /* parallel nest on registers: each thread its own %s */",
         nn->kind == 1 ? "elements" : "rows");
    g->ind++;
    rf_loops_open(g, lead);
    rf_coords(g, lead, rv, nn->kind == 1 ? cv : NULL);
    g->rf_nest = nn->kind;
    cg_emit_block(g, nn->loop[nn->n - 1]->u.loop.body, 1);
    g->rf_nest = 0;
    rf_loops_close(g);
    g->ind--;
    cg_line(g, "}");
}

void cg_emit_rf_fill(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *b = s->u.fill.dst.buf;
    int id = g->rf_id[b->id];
    const mma_plan_t *p = &g->rf_plan[b->id];
    int n = g->rf[b->id] == RF_ACC ? p->mt * p->nt * p->ev : g->rf_rows.mt * cg_rf_halves(g);
    cg_out(g, "%*s{ const float tl_fv = ", 2 * (g->ind + 1), "");
    cg_emit_expr(g, s->u.fill.value);
    cg_out(g, ";\n");
    cg_line(g, "#pragma unroll");
    cg_line(g, "  for (int tl_i = 0; tl_i < %d; tl_i++) (&tl_c%d[0][0]%s)[tl_i] = tl_fv; }", n, id,
         g->rf[b->id] == RF_ACC ? "[0]" : "");
}

/* A copy between a tensor and a rows-over-warps fragment whose ev
 * consecutive columns a thread holds make one 4-, 8- or 16-byte access:
 * one vector per (row slot, column chunk) where it lies inside the tensor
 * and is aligned, elements otherwise.  Returns 0 (nothing emitted) when
 * the copy isn't such a one. */
static int emit_rf_copy_vec(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    int tor = g->rf[src->buf->id] != 0;
    const tilec_ir_buffer_t *rb = tor ? src->buf : dst->buf;
    const tilec_ir_region_t *mr = tor ? dst : src;
    const tilec_ir_buffer_t *mb = mr->buf;
    const mma_plan_t *p = &g->rf_plan[rb->id];
    int last = mb->ndim - 1;
    size_t es = tilec_dtype_size(mb->dtype), bytes = es * (size_t)p->ev;
    if (!g->rf_warprows || g->rf[rb->id] != RF_ACC || mb->scope != TILEC_SCOPE_GLOBAL ||
        mr->extent[last] != p->N || p->ev < 2 || (bytes != 4 && bytes != 8 && bytes % 16 != 0) ||
        !(cg_is_flt(mb->dtype) && mb->dtype != TILEC_FLOAT64))
        return 0;
    /* nv vectors of vb bytes, per elements each */
    size_t vb = bytes > 16 ? 16 : bytes;
    int nv = (int)(bytes / vb), per = (int)(vb / es);
    const char *vt = vb == 16 ? "uint4" : vb == 8 ? "uint2" : "unsigned int";
    int id = g->tmp++, hb = id * 3 + 1000000, ib = hb + 2, ie = hb + 1;
    cg_line(g, "{ /* copy %s -> %s, registers %s memory, %d-byte vectors */", src->buf->name,
         dst->buf->name, tor ? "to" : "from", (int)bytes);
    g->ind++;
    cg_hoist_bases(g, mr, hb);
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++) {", p->nt);
    g->ind++;
    rf_row_guard(g);
    cg_out(g, "%*sconst int tl_%d_0 = ", 2 * (g->ind + 1), "", ib);
    rf_row(g, "0");
    cg_out(g, ";\n");
    cg_line(g, "const int tl_%d_1 = (tl_ni * 32 + tl_l%d) * %d;", ib, g->rf_rowid, p->ev);
    cg_line(g, "const int tl_%d_0 = tl_%d_0, tl_%d_1 = tl_%d_1 + %d;", ie, ib, ie, ib, p->ev - 1);
    cg_out(g, "%*s%s%s *tl_vp = &b%d[", 2 * (g->ind + 1), "", tor ? "" : "const ", cg_stype(mb->dtype),
        mb->id);
    cg_region_offset(g, mr, hb, ib);
    cg_out(g, "];\n");
    cg_out(g, "%*sif ((((tl_u64)tl_vp) & %d) == 0 && ", 2 * (g->ind + 1), "", (int)vb - 1);
    cg_region_inbounds(g, mr, hb, ib);
    cg_out(g, " && ");
    cg_region_inbounds(g, mr, hb, ie);
    cg_out(g, ") {\n");
    g->ind++;
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_k = 0; tl_k < %d; tl_k++) {", nv);
    g->ind++;
    if (tor) {
        cg_line(g, "%s tl_v; %s *tl_ve = (%s *)&tl_v;", vt, cg_stype(mb->dtype), cg_stype(mb->dtype));
        cg_line(g, "#pragma unroll");
        cg_out(g, "%*sfor (int tl_e = 0; tl_e < %d; tl_e++) tl_ve[tl_e] = ", 2 * (g->ind + 1), "", per);
        cg_store_open(g, mb->dtype);
        cg_out(g, "tl_c%d[tl_mi][tl_ni][tl_k * %d + tl_e]);\n", g->rf_id[rb->id], per);
        cg_line(g, "((%s *)tl_vp)[tl_k] = tl_v;", vt);
    } else {
        cg_line(g, "const %s tl_v = ((const %s *)tl_vp)[tl_k]; const %s *tl_ve = (const %s *)&tl_v;",
             vt, vt, cg_stype(mb->dtype), cg_stype(mb->dtype));
        cg_line(g, "#pragma unroll");
        cg_out(g, "%*sfor (int tl_e = 0; tl_e < %d; tl_e++) tl_c%d[tl_mi][tl_ni][tl_k * %d + tl_e] = (float)",
            2 * (g->ind + 1), "", per, g->rf_id[rb->id], per);
        cg_emit_load_conv_open(g, mb->dtype);
        cg_out(g, "tl_ve[tl_e]);\n");
    }
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "} else {");
    g->ind++;
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_e = 0; tl_e < %d; tl_e++) {", p->ev);
    cg_line(g, "  const int tl_%d_0 = tl_%d_0, tl_%d_1 = tl_%d_1 + tl_e;", ie, ib, ie, ib);
    if (tor) {
        cg_out(g, "%*s  if (", 2 * (g->ind + 1), "");
        cg_region_inbounds(g, mr, hb, ie);
        cg_out(g, ") b%d[", mb->id);
        cg_region_offset(g, mr, hb, ie);
        cg_out(g, "] = ");
        cg_store_open(g, mb->dtype);
        cg_out(g, "tl_c%d[tl_mi][tl_ni][tl_e]);\n", g->rf_id[rb->id]);
    } else {
        cg_out(g, "%*s  tl_c%d[tl_mi][tl_ni][tl_e] = !", 2 * (g->ind + 1), "", g->rf_id[rb->id]);
        cg_region_inbounds(g, mr, hb, ie);
        cg_out(g, " ? 0.0f : (float)");
        cg_emit_load_conv_open(g, mb->dtype);
        cg_out(g, "b%d[", mb->id);
        cg_region_offset(g, mr, hb, ie);
        cg_out(g, "]);\n");
    }
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    return 1;
}

/* copies that involve a register fragment (the forms layout inference keeps) */
void cg_emit_rf_copy(cg_t *g, const tilec_ir_stmt_t *s)
{
    if (emit_rf_copy_vec(g, s))
        return;
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *sb = src->buf, *db = dst->buf;
    if (g->rf[sb->id] && g->rf[db->id]) {
        cg_line(g, "#pragma unroll");
        cg_line(g, "for (int tl_i = 0; tl_i < %d; tl_i++) (&tl_c%d[0][0])[tl_i] = (&tl_c%d[0][0])[tl_i];",
             g->rf_rows.mt * cg_rf_halves(g), g->rf_id[db->id], g->rf_id[sb->id]);
        return;
    }
    int tor = g->rf[sb->id] != 0; /* registers -> memory */
    const tilec_ir_buffer_t *rb = tor ? sb : db;
    const tilec_ir_region_t *mr = tor ? dst : src;
    int id = g->tmp++, hb = id * 3 + 1000000, ib = hb + 2;
    cg_line(g, "{ /* copy %s -> %s, registers %s memory */", sb->name, db->name, tor ? "to" : "from");
    g->ind++;
    cg_hoist_bases(g, mr, hb);
    rf_loops_open(g, rb);
    char rv[32], cv[32];
    snprintf(rv, sizeof rv, "const int tl_%d_0", ib);
    snprintf(cv, sizeof cv, "const int tl_%d_1", ib);
    rf_coords(g, rb, rv, g->rf[rb->id] == RF_ACC ? cv : NULL);
    g->rf_nest = g->rf[rb->id] == RF_ACC ? 1 : 2;
    int glob = mr->buf->scope == TILEC_SCOPE_GLOBAL;
    if (tor) {
        /* a row is held by the four lanes of a quad: the first writes it */
        cg_out(g, "%*sif (%s", 2 * (g->ind + 1), "", g->rf[rb->id] == RF_ROW ? "" : "1");
        if (g->rf[rb->id] == RF_ROW)
            cg_out(g, "(tl_l%d & %d) == 0", g->rf_rowid, g->rf_warprows ? 31 : 3);
        if (glob) {
            cg_out(g, " && ");
            cg_region_inbounds(g, dst, hb, ib);
        }
        cg_out(g, ") b%d[", db->id);
        cg_region_offset(g, dst, hb, ib);
        cg_out(g, "] = ");
        cg_store_open(g, db->dtype);
        cg_rf_ref(g, rb);
        cg_out(g, ");\n");
    } else {
        cg_out(g, "%*s", 2 * (g->ind + 1), "");
        cg_rf_ref(g, rb);
        cg_out(g, " = ");
        if (glob) {
            cg_out(g, "!");
            cg_region_inbounds(g, src, hb, ib);
            cg_out(g, " ? 0.0f : ");
        }
        cg_out(g, "(float)");
        cg_emit_load_conv_open(g, sb->dtype);
        cg_out(g, "b%d[", sb->id);
        cg_region_offset(g, src, hb, ib);
        cg_out(g, "]);\n");
    }
    g->rf_nest = 0;
    rf_loops_close(g);
    g->ind--;
    cg_line(g, "}");
}

/* reduce along dim 1 of an accumulator into a row fragment */
void cg_emit_rf_reduce(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *src = s->u.reduce.src, *dst = s->u.reduce.dst;
    const mma_plan_t *p = &g->rf_plan[src->id];
    tilec_reduce_op_t op = s->u.reduce.op;
    int is_sum = op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM;
    int is_abs = op == TILEC_RED_ABSSUM || op == TILEC_RED_ABSMAX;
    const char *fn = op == TILEC_RED_MIN ? "tl_min" : "tl_max";
    int cs = g->rf_id[src->id], cd = g->rf_id[dst->id];
    /* a row's values: the thread's columns, then the lanes that share
     * the row (the quad of an mma tile, or the whole warp) */
    int wr = g->rf_warprows, ne = wr ? p->ev : 2;
    cg_line(g, "/* reduce %s %s -> %s dim 1 on registers: own columns, then the %s */",
         tilec_reduce_op_name(op), src->name, dst->name, wr ? "warp" : "quad");
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_h = 0; tl_h < %d; tl_h++) {", cg_rf_halves(g));
    g->ind++;
    rf_row_guard(g);
    cg_line(g, "float tl_a = %s;", is_sum || op == TILEC_RED_ABSMAX ? "0.0f"
                                : op == TILEC_RED_MAX ? "-tl_inff()" : "tl_inff()");
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++)", p->nt);
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_e = 0; tl_e < %d; tl_e++) {", ne);
    cg_line(g, "  const float tl_x = %s(tl_c%d[tl_mi][tl_ni][tl_h * %d + tl_e]);", is_abs ? "tl_abs" : "",
         cs, ne);
    if (is_sum)
        cg_line(g, "  tl_a += tl_x;");
    else
        cg_line(g, "  tl_a = %s(tl_a, tl_x);", fn);
    cg_line(g, "}");
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_s = 1; tl_s < %d; tl_s <<= 1) {", wr ? 32 : 4);
    cg_line(g, "  const float tl_y = __shfl_xor_sync(0xffffffffu, tl_a, tl_s);");
    if (is_sum)
        cg_line(g, "  tl_a += tl_y;");
    else
        cg_line(g, "  tl_a = %s(tl_a, tl_y);", fn);
    cg_line(g, "}");
    if (s->u.reduce.clear)
        cg_line(g, "tl_c%d[tl_mi][tl_h] = tl_a;", cd);
    else if (is_sum)
        cg_line(g, "tl_c%d[tl_mi][tl_h] += tl_a;", cd);
    else
        cg_line(g, "tl_c%d[tl_mi][tl_h] = %s(tl_c%d[tl_mi][tl_h], tl_a);", cd, fn, cd);
    g->ind--;
    cg_line(g, "}");
}
