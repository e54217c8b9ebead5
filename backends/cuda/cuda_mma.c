/*
 * cuda_mma.c — T.gemm: on the CUDA cores (a thread grid over C), or on
 * the tensor cores with the instruction and warp grid the SDK's
 * gemm_warp pass chose (lower.mma, lower.warp, lower.mma_tiles):
 * mma.sync m16n8k16 with operands read by ldmatrix from padded shared
 * memory, or wgmma m64nNk16 (sm_90a) with shared-memory descriptors over
 * swizzled operands; accumulators in registers (tl_c<id>), loaded and
 * stored around a GEMM or kept across a loop.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cg.h"
#include "tilec/ir_walk.h"

/* element (i, j) of a 2-D on-chip buffer as a computed value */
static void elem2(cg_t *g, const tilec_ir_buffer_t *b, const char *i, const char *j)
{
    int64_t pitch = g->pitch[b->id] > 0 ? g->pitch[b->id] : cg_const_dim(b, 1);
    cg_emit_load_conv_open(g, b->dtype);
    cg_out(g, "b%d[(%s) * %" PRId64 " + (%s)])", b->id, i, pitch, j);
}

static int try_gemm_mma(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w);

/* Points b<id> at the 2-D slice lead selects (a ring's stage, IR 1.1) in
 * an inner scope, and makes *view the slice's buffer. */
static void open_slice(cg_t *g, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *lead,
                       tilec_ir_buffer_t *view)
{
    int n = b->ndim;
    int64_t C = cg_const_dim(b, n - 1);
    int64_t plane = cg_const_dim(b, n - 2) * (g->pitch[b->id] > 0 ? g->pitch[b->id] : C);
    *view = *b;
    view->ndim = 2;
    view->shape = b->shape + n - 2;
    cg_out(g, "%*s{ %s *const tl_sl%d = b%d + (tl_i64)(0", 2 * (g->ind + 1), "", cg_stype(b->dtype), b->id, b->id);
    for (int d = 0; d < n - 2; d++) {
        int64_t st = plane;
        for (int e = d + 1; e < n - 2; e++)
            st *= cg_const_dim(b, e);
        cg_out(g, " + (int)(");
        cg_emit_expr(g, lead[d]);
        cg_out(g, ") * %" PRId64, st);
    }
    cg_out(g, ");\n");
    cg_line(g, "{ %s *const b%d = tl_sl%d; /* %s, one stage */", cg_stype(b->dtype), b->id, b->id, b->name);
}

/* A gemm whose operands are stages of rings (a_lead/b_lead): the same
 * gemm over 2-D views of the slices. */
static void emit_gemm_slices(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    tilec_ir_stmt_t t = *s;
    tilec_ir_buffer_t va, vb;
    int opened = 0;
    if (s->u.gemm.a_lead) {
        open_slice(g, s->u.gemm.a, s->u.gemm.a_lead, &va);
        t.u.gemm.a = &va;
        t.u.gemm.a_lead = NULL;
        opened++;
    }
    if (s->u.gemm.b_lead && s->u.gemm.b != s->u.gemm.a) {
        open_slice(g, s->u.gemm.b, s->u.gemm.b_lead, &vb);
        t.u.gemm.b = &vb;
        t.u.gemm.b_lead = NULL;
        opened++;
    } else if (s->u.gemm.b_lead) {
        cg_fail(g, "gemm: A and B are stages of one ring");
        return;
    }
    const tilec_ir_stmt_t *res = g->resident, *def = g->wg_defer;
    if (res == s)
        g->resident = &t;
    if (def == s)
        g->wg_defer = &t;
    cg_emit_gemm(g, &t, w);
    g->resident = res;
    g->wg_defer = def;
    while (opened--)
        cg_line(g, "} }");
}

void cg_emit_gemm(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    if (s->u.gemm.a_lead || s->u.gemm.b_lead) {
        emit_gemm_slices(g, s, w);
        return;
    }
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    int64_t M = cg_const_dim(C, 0), N = cg_const_dim(C, 1);
    int64_t K = ta ? cg_const_dim(A, 0) : cg_const_dim(A, 1);
    if (M <= 0 || N <= 0 || K <= 0 || A->ndim != 2 || B->ndim != 2 || C->ndim != 2) {
        cg_fail(g, "gemm: operands must be 2-D buffers of constant shape");
        return;
    }
    if (try_gemm_mma(g, s, w))
        return;
    int id = g->tmp++;
    tilec_dtype_t ct = C->dtype;
    const char *acc = cg_is_flt(ct) ? (ct == TILEC_FLOAT64 ? "double" : "float") : cg_ctype(ct);
    cg_line(g, "/* gemm %s = %s%s x %s%s on CUDA cores */", C->name, A->name, ta ? "^T" : "",
         B->name, tb ? "^T" : "");
    cg_line(g, "for (int tl_e%d = %s; tl_e%d < %" PRId64 "; tl_e%d += %d) {", id, cg_w_start(w), id,
         M * N, id, w->coop ? g->nthreads : 1);
    g->ind++;
    cg_line(g, "const int tl_i%d = tl_e%d / %" PRId64 ", tl_j%d = tl_e%d %% %" PRId64 ";", id, id, N,
         id, id, N);
    char ci[32], cj[32], kk[32];
    snprintf(ci, sizeof ci, "tl_i%d", id);
    snprintf(cj, sizeof cj, "tl_j%d", id);
    snprintf(kk, sizeof kk, "tl_kk%d", id);
    if (s->u.gemm.clear_accum) {
        cg_line(g, "%s tl_acc%d = 0;", acc, id);
    } else {
        cg_out(g, "%*s%s tl_acc%d = (%s)", 2 * (g->ind + 1), "", acc, id, acc);
        elem2(g, C, ci, cj);
        cg_out(g, ";\n");
    }
    cg_line(g, "#pragma unroll 4");
    cg_line(g, "for (int %s = 0; %s < %" PRId64 "; %s++)", kk, kk, K, kk);
    cg_out(g, "%*s  tl_acc%d += (%s)", 2 * (g->ind + 1), "", id, acc);
    if (ta)
        elem2(g, A, kk, ci);
    else
        elem2(g, A, ci, kk);
    cg_out(g, " * (%s)", acc);
    if (tb)
        elem2(g, B, cj, kk);
    else
        elem2(g, B, kk, cj);
    cg_out(g, ";\n");
    int64_t cp = g->pitch[C->id] > 0 ? g->pitch[C->id] : N;
    cg_out(g, "%*sb%d[tl_i%d * %" PRId64 " + tl_j%d] = ", 2 * (g->ind + 1), "", C->id, id, cp, id);
    cg_store_open(g, ct);
    cg_out(g, "tl_acc%d);\n", id);
    g->ind--;
    cg_line(g, "}");
}

/* Tensor-core GEMM (sm_80+): A, B float16/bfloat16 in shared memory
 * (shared or fragment buffers, any transpose), C a float32 fragment.
 * Warps tile C; each warp owns a WM x WN sub-tile made of 16x8 mma tiles
 * whose accumulators it keeps in registers (the m16n8k16 layout: lane l
 * holds rows l/4 and l/4+8, columns 2(l%4) and 2(l%4)+1 of each tile),
 * loads its operands with ldmatrix (.trans for a K-major B or an M-major
 * A), and reads/writes C in shared memory before/after the K loop — or
 * once around a whole loop when the accumulator is loop-resident. */
/* The tensor-core plan of a GEMM as the gemm_warp pass chose it
 * (lower.mma, lower.warp, lower.mma_tiles): 0 when it runs on the CUDA
 * cores.  A wgmma instruction (sm_90a) is issued by warpgroups of four
 * warps, lower.warp being gm x gn groups each issuing wgmma.m64nWNk16 for
 * every 64 rows of its (M/gm) x WN tile; warp w of a group holds rows
 * 16w..16w+15 of each 64, in the same register layout as mma.sync's
 * m16n8 accumulators, so the rest of the generator (accumulator loads,
 * stores, register-only fragments) serves both. */
int cg_mma_plan(cg_t *g, const tilec_ir_stmt_t *s, mma_plan_t *p)
{
    const tilec_ir_attr_t *mma = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma");
    const tilec_ir_attr_t *w = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.warp");
    const tilec_ir_attr_t *t = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma_tiles");
    const tilec_ir_attr_t *sh = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma_shape");
    const tilec_ir_buffer_t *A = s->u.gemm.a, *C = s->u.gemm.c;
    memset(p, 0, sizeof *p);
    if (!mma || mma->kind != TILEC_ATTR_STRING || strcmp(mma->s, "simt") == 0 || !w || w->n != 2 ||
        !t || t->n != 2 || !sh || sh->n != 3)
        return 0;
    p->wg = strncmp(mma->s, "wgmma.", 6) == 0;
    p->M = cg_const_dim(C, 0);
    p->N = cg_const_dim(C, 1);
    p->K = cg_const_dim(A, A->ndim - (s->u.gemm.trans_a ? 2 : 1)); /* the last two dimensions */
    p->bf16 = A->dtype == TILEC_BFLOAT16;
    p->ev = 4;
    p->mt = (int)t->tuple[0];
    if (p->wg) {
        p->gm = (int)w->tuple[0];
        p->gn = (int)w->tuple[1];
        p->wm = g->nthreads / 32; /* for the accumulator code: one warp a 16-row slice */
        p->wn = 1;
        p->WM = p->M / p->gm;
        p->WN = sh->tuple[1];
        p->nt = (int)(p->WN / 8);
        p->mstride = 64;
    } else {
        p->wm = (int)w->tuple[0];
        p->wn = (int)w->tuple[1];
        p->WM = p->M / p->wm;
        p->WN = p->N / p->wn;
        p->nt = (int)t->tuple[1];
        p->mstride = 16;
    }
    return 1;
}

/* warp coordinates and the accumulator array tl_c<id> */
void cg_mma_decl(cg_t *g, const mma_plan_t *p, int id)
{
    cg_line(g, "const int tl_w%d = tl_tid >> 5, tl_l%d = tl_tid & 31;", id, id);
    if (p->wg)
        cg_line(g, "const int tl_wm%d = ((tl_w%d >> 2) / %d) * %lld + (tl_w%d & 3) * 16, "
             "tl_wn%d = ((tl_w%d >> 2) %% %d) * %lld;", id, id, p->gn, (long long)p->WM, id, id,
             id, p->gn, (long long)p->WN);
    else
        cg_line(g, "const int tl_wm%d = (tl_w%d / %d) * %lld, tl_wn%d = (tl_w%d %% %d) * %lld;", id,
             id, p->wn, (long long)p->WM, id, id, p->wn, (long long)p->WN);
    cg_line(g, "float tl_c%d[%d][%d][4] = {};", id, p->mt, p->nt);
}

/* C (shared memory) <-> registers; load=1 reads, 0 writes; zero=1 clears */
void cg_mma_cmove(cg_t *g, const mma_plan_t *p, const tilec_ir_buffer_t *C, int id, int load,
                      int zero)
{
    int64_t pc = g->pitch[C->id] > 0 ? g->pitch[C->id] : p->N;
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++) {", p->nt);
    g->ind++;
    if (zero) {
        cg_line(g, "tl_c%d[tl_mi][tl_ni][0] = tl_c%d[tl_mi][tl_ni][1] = tl_c%d[tl_mi][tl_ni][2] = "
             "tl_c%d[tl_mi][tl_ni][3] = 0.0f;", id, id, id, id);
    } else {
        cg_line(g, "const int tl_r = tl_wm%d + tl_mi * %d + (tl_l%d >> 2), tl_q = tl_wn%d + tl_ni * 8 "
             "+ (tl_l%d & 3) * 2;", id, p->mstride, id, id, id);
        cg_line(g, "float2 *tl_p0 = (float2 *)&b%d[tl_r * %lld + tl_q];", C->id, (long long)pc);
        cg_line(g, "float2 *tl_p1 = (float2 *)&b%d[(tl_r + 8) * %lld + tl_q];", C->id, (long long)pc);
        if (load) {
            cg_line(g, "const float2 tl_v0 = *tl_p0, tl_v1 = *tl_p1;");
            cg_line(g, "tl_c%d[tl_mi][tl_ni][0] = tl_v0.x; tl_c%d[tl_mi][tl_ni][1] = tl_v0.y;", id, id);
            cg_line(g, "tl_c%d[tl_mi][tl_ni][2] = tl_v1.x; tl_c%d[tl_mi][tl_ni][3] = tl_v1.y;", id, id);
        } else {
            cg_line(g, "*tl_p0 = make_float2(tl_c%d[tl_mi][tl_ni][0], tl_c%d[tl_mi][tl_ni][1]);", id, id);
            cg_line(g, "*tl_p1 = make_float2(tl_c%d[tl_mi][tl_ni][2], tl_c%d[tl_mi][tl_ni][3]);", id, id);
        }
    }
    g->ind--;
    cg_line(g, "}");
}

/* name of the wgmma helper for a plan and transposes (see emit_wgmma_fns) */
static void wg_name(char *buf, size_t n, const mma_plan_t *p, int ta, int tb, int rs)
{
    snprintf(buf, n, "tl_wgmma_%lld%s%s%s%s", (long long)p->WN, p->bf16 ? "_bf16" : "",
             ta ? "_ta" : "", tb ? "_tb" : "", rs ? "_rs" : "");
}

/* descriptor arguments of a swizzled operand read by wgmma: kmajor = rows
 * of the buffer are M or N and K runs along them; else rows are K */
static void wg_desc(cg_t *g, const tilec_ir_buffer_t *b, int kmajor, const char *mn,
                    const char *dst)
{
    int W = g->swz[b->id];
    int64_t R = cg_const_dim(b, 0);
    int mode = W == 64 ? 1 : W == 32 ? 2 : 3;
    if (kmajor)
        cg_line(g, "const tl_u64 %s = tl_desc(tl_sa(b%d) + 2u * (tl_u32)((tl_k0 / %d) * %lld + (%s) * %d "
             "+ (tl_k0 %% %d)), 16u, %du, %d);", dst, b->id, W, (long long)(R * W), mn, W, W,
             16 * W, mode);
    else
        cg_line(g, "const tl_u64 %s = tl_desc(tl_sa(b%d) + 2u * (tl_u32)(((%s) / %d) * %lld + tl_k0 * %d), "
             "%lldu, %du, %d);", dst, b->id, mn, W, (long long)(R * W), W, (long long)(R * W * 2),
             16 * W, mode);
}

/* The K loop on wgmma: each warpgroup issues, for every 16 of K and every
 * 64 rows of its tile, one wgmma.m64nWNk16 reading A and B through
 * shared-memory descriptors, then waits for them all. */
static void wg_kloop(cg_t *g, const tilec_ir_stmt_t *s, const mma_plan_t *p, int id)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b;
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    char fn[64];
    int rs = g->rf[A->id] == RF_AOP; /* A in registers (cuda_wgrs.c) */
    wg_name(fn, sizeof fn, p, ta, tb, rs);
    g->info->wgmma++;
    cg_line(g, "tl_keep_acc<%d>(&tl_c%d[0][0][0]);", p->mt * p->nt * 4, id);
    cg_line(g, "tl_wg_fence();");
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_k0 = 0; tl_k0 < %lld; tl_k0 += 16) {", (long long)p->K);
    g->ind++;
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++) {", p->mt);
    g->ind++;
    char mrow[64], ncol[64];
    snprintf(mrow, sizeof mrow, "(tl_wm%d & ~63) + tl_mi * 64", id);
    snprintf(ncol, sizeof ncol, "tl_wn%d", id);
    wg_desc(g, B, tb, ncol, "tl_db");
    if (rs) {
        cg_line(g, "%s(tl_c%d[tl_mi], tl_pa%d[tl_mi][tl_k0 / 16], tl_db);", fn, id, g->rf_id[A->id]);
    } else {
        wg_desc(g, A, !ta, mrow, "tl_da");
        cg_line(g, "%s(tl_c%d[tl_mi], tl_da, tl_db);", fn, id);
    }
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "tl_wg_commit();");
    cg_line(g, "tl_wg_wait<%d>();", g->wg_defer == s ? 1 : 0);
    cg_line(g, "tl_keep_acc<%d>(&tl_c%d[0][0][0]);", p->mt * p->nt * 4, id);
}

/* the K loop of mma.sync over the accumulators tl_c<id> */
static void mma_kloop(cg_t *g, const tilec_ir_stmt_t *s, const mma_plan_t *p, int id)
{
    if (p->wg) {
        wg_kloop(g, s, p, id);
        return;
    }
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b;
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    int64_t pa = g->pitch[A->id] > 0 ? g->pitch[A->id] : cg_const_dim(A, 1);
    int64_t pb = g->pitch[B->id] > 0 ? g->pitch[B->id] : cg_const_dim(B, 1);
    cg_line(g, "#pragma unroll 2");
    cg_line(g, "for (int tl_k0 = 0; tl_k0 < %lld; tl_k0 += 16) {", (long long)p->K);
    g->ind++;
    cg_line(g, "tl_u32 tl_a[%d][4], tl_b[%d][2];", p->mt, p->nt);
    cg_line(g, "const int tl_li = tl_l%d & 7, tl_lj = tl_l%d >> 3;", id, id);
    /* A: rows m, cols k (ta=0) or rows k, cols m (ta=1) */
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++) {", p->mt);
    g->ind++;
    cg_line(g, "const int tl_m0 = tl_wm%d + tl_mi * 16;", id);
    if (!ta)
        cg_line(g, "tl_ldsm_x4(tl_a[tl_mi], &b%d[(tl_m0 + (tl_l%d & 15)) * %lld + tl_k0 + (tl_l%d >> 4) * 8]);",
             A->id, id, (long long)pa, id);
    else
        cg_line(g, "tl_ldsm_x4_t(tl_a[tl_mi], &b%d[(tl_k0 + tl_li + (tl_lj >> 1) * 8) * %lld + tl_m0 + (tl_lj & 1) * 8]);",
             A->id, (long long)pa);
    g->ind--;
    cg_line(g, "}");
    /* B: rows k, cols n (tb=0, .trans) or rows n, cols k (tb=1) */
    if (p->WN % 16 == 0) {
        cg_line(g, "#pragma unroll");
        cg_line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni += 2) {", p->nt);
        g->ind++;
        cg_line(g, "const int tl_n0 = tl_wn%d + tl_ni * 8;", id);
        cg_line(g, "tl_u32 tl_t[4];");
        if (!tb)
            cg_line(g, "tl_ldsm_x4_t(tl_t, &b%d[(tl_k0 + tl_li + (tl_lj & 1) * 8) * %lld + tl_n0 + (tl_lj >> 1) * 8]);",
                 B->id, (long long)pb);
        else
            cg_line(g, "tl_ldsm_x4(tl_t, &b%d[(tl_n0 + tl_li + (tl_lj >> 1) * 8) * %lld + tl_k0 + (tl_lj & 1) * 8]);",
                 B->id, (long long)pb);
        cg_line(g, "tl_b[tl_ni][0] = tl_t[0]; tl_b[tl_ni][1] = tl_t[1]; tl_b[tl_ni + 1][0] = tl_t[2]; tl_b[tl_ni + 1][1] = tl_t[3];");
        g->ind--;
        cg_line(g, "}");
    } else {
        cg_line(g, "#pragma unroll");
        cg_line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++) {", p->nt);
        g->ind++;
        cg_line(g, "const int tl_n0 = tl_wn%d + tl_ni * 8;", id);
        cg_line(g, "const int tl_lk = tl_l%d & 15;", id);
        if (!tb)
            cg_line(g, "tl_ldsm_x2_t(tl_b[tl_ni], &b%d[(tl_k0 + (tl_lk & 7) + (tl_lk >> 3) * 8) * %lld + tl_n0]);",
                 B->id, (long long)pb);
        else
            cg_line(g, "tl_ldsm_x2(tl_b[tl_ni], &b%d[(tl_n0 + (tl_lk & 7)) * %lld + tl_k0 + (tl_lk >> 3) * 8]);",
                 B->id, (long long)pb);
        g->ind--;
        cg_line(g, "}");
    }
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++)", p->nt);
    cg_line(g, "  %s(tl_c%d[tl_mi][tl_ni], tl_a[tl_mi], tl_b[tl_ni]);", p->bf16 ? "tl_mma_bf16" : "tl_mma_f16", id);
    g->ind--;
    cg_line(g, "}");
}

static int try_gemm_mma(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    mma_plan_t p;
    if (!w->coop || !cg_mma_plan(g, s, &p))
        return 0;
    g->info->mma++;
    const tilec_ir_buffer_t *C = s->u.gemm.c;
    if (p.wg)
        cg_line(g, "/* gemm %s = %s%s x %s%s on tensor cores (wgmma): %dx%d warpgroups of %lldx%lld */",
             C->name, s->u.gemm.a->name, s->u.gemm.trans_a ? "^T" : "", s->u.gemm.b->name,
             s->u.gemm.trans_b ? "^T" : "", p.gm, p.gn, (long long)p.WM, (long long)p.WN);
    else
        cg_line(g, "/* gemm %s = %s%s x %s%s on tensor cores: %dx%d warps of %lldx%lld */", C->name,
             s->u.gemm.a->name, s->u.gemm.trans_a ? "^T" : "", s->u.gemm.b->name,
             s->u.gemm.trans_b ? "^T" : "", p.wm, p.wn, (long long)p.WM, (long long)p.WN);
    if (g->resident == s || g->rf[C->id]) {
        /* accumulators already in registers (loop-resident, or the
         * fragment's home) */
        int id = g->resident == s ? g->resident_id : g->rf_id[C->id];
        if (s->u.gemm.clear_accum)
            cg_mma_cmove(g, &p, C, id, 1, 1);
        mma_kloop(g, s, &p, id);
        return 1;
    }
    int id = g->tmp++;
    cg_line(g, "{");
    g->ind++;
    cg_mma_decl(g, &p, id);
    cg_mma_cmove(g, &p, C, id, 1, s->u.gemm.clear_accum);
    mma_kloop(g, s, &p, id);
    cg_mma_cmove(g, &p, C, id, 0, 0);
    g->ind--;
    cg_line(g, "}");
    return 1;
}

/* Emits one wgmma helper per distinct instruction the kernel's GEMMs use:
 * tl_wgmma_<N>[_bf16][_ta][_tb](acc, descA, descB) with the N/2
 * accumulators of a warp's 64xN slice as operands. */
typedef struct wg_fns {
    cg_t *g;
    char (*seen)[64];
    int nseen;
} wg_fns_t;

static int wg_fn(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    wg_fns_t *q = w->user;
    cg_t *g = q->g;
    mma_plan_t p;
    if (s->kind != TILEC_ST_GEMM || !cg_mma_plan(g, s, &p) || !p.wg)
        return TILEC_WALK_CONTINUE;
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b, dup = 0;
    int rs = g->rf[s->u.gemm.a->id] == RF_AOP;
    char fn[64];
    wg_name(fn, sizeof fn, &p, ta, tb, rs);
    for (int i = 0; i < q->nseen; i++)
        dup |= strcmp(q->seen[i], fn) == 0;
    if (dup || q->nseen >= 64)
        return TILEC_WALK_CONTINUE;
    snprintf(q->seen[q->nseen++], 64, "%s", fn);
    if (rs) {
        cg_wgrs_fn(g, fn, &p, tb);
        return TILEC_WALK_CONTINUE;
    }
    int nr = (int)(p.WN / 2);
    const char *ab = p.bf16 ? "bf16" : "f16";
    cg_out(g, "TL_INLINE void %s(float (*d)[4], tl_u64 da, tl_u64 db) {\n", fn);
    cg_out(g, "  asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0;\\n\"\n", nr + 2);
    cg_out(g, "    \"wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {", (long long)p.WN, ab, ab);
    for (int i = 0; i < nr; i++)
        cg_out(g, "%s%%%d", i ? "," : "", i);
    cg_out(g, "}, %%%d, %%%d, p, 1, 1, %d, %d; }\"\n    : ", nr, nr + 1, ta, !tb);
    for (int i = 0; i < nr; i++)
        cg_out(g, "%s\"+f\"(d[%d][%d])", i ? ", " : "", i / 4, i % 4);
    cg_out(g, "\n    : \"l\"(da), \"l\"(db), \"r\"(1));\n}\n");
    return TILEC_WALK_CONTINUE;
}

void cg_emit_wgmma_fns(cg_t *g, const tilec_ir_stmt_t *body)
{
    char(*seen)[64] = calloc(64, sizeof *seen);
    wg_fns_t q = {g, seen, 0};
    tilec_ir_walk_t w;
    tilec_ir_stmt_t *list = (tilec_ir_stmt_t *)body;
    memset(&w, 0, sizeof w);
    w.stmt_pre = wg_fn;
    w.user = &q;
    if (!seen || tilec_ir_walk_block(&w, &list) < 0)
        cg_fail(g, seen ? "statements nested too deeply" : "out of memory");
    free(seen);
}

/* A serial/pipelined loop whose body holds one tensor-core GEMM at top
 * level, the accumulator of which nothing else in the body touches: the
 * accumulator is loaded into registers before the loop and stored after. */
const tilec_ir_stmt_t *cg_resident_gemm(cg_t *g, const tilec_ir_stmt_t *loop)
{
    const tilec_ir_stmt_t *found = NULL;
    for (const tilec_ir_stmt_t *s = loop->u.loop.body; s; s = s->next) {
        if (s->kind != TILEC_ST_GEMM)
            continue;
        if (found)
            return NULL;
        found = s;
    }
    mma_plan_t p;
    if (!found || g->resident || !cg_mma_plan(g, found, &p))
        return NULL;
    if (cg_touches(loop->u.loop.body, found->u.gemm.c, found, CG_READ | CG_WRITE) ||
        cg_expr_loads(loop->u.loop.extent, found->u.gemm.c))
        return NULL;
    return found;
}
