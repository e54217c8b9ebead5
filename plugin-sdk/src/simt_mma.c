/*
 * simt_mma.c — what every dialect's matrix-instruction hook needs to know
 * of a T.gemm the gemm_warp pass put on a matrix instruction: the plan
 * (instruction, group grid, tiles, from the statement's lower.*
 * attributes and the target description) and where the accumulators are
 * (whether C's register layout is the instructions' own, and the row and
 * column of each accumulator register of a lane, from the description's
 * modes).
 *
 * The instruction-specific part (mma.sync with ldmatrix, wgmma with its
 * descriptors, MFMA, WMMA) stays in the dialect; the bookkeeping is the
 * same for all of them, so it is here once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "simt_internal.h"

/* an int tuple attribute of n values into v; 0, or -1 when absent */
static int tuple(const tilec_ir_stmt_t *s, const char *key, int64_t *v, int n)
{
    const tilec_ir_attr_t *a = tilec_ir_attr_get(s->nattrs, s->attrs, key);
    if (!a || a->kind != TILEC_ATTR_TUPLE || a->n != n)
        return -1;
    for (int i = 0; i < n; i++)
        v[i] = a->tuple[i];
    return 0;
}

/* constant extent of dimension d of b counted from the end (0: last) */
static int64_t cdim_end(const tilec_ir_buffer_t *b, int d)
{
    int64_t v;
    int i = b->ndim - 1 - d;
    return i >= 0 && b->shape && b->shape[i] && tilec_ir_is_const_int(b->shape[i], &v) ? v : -1;
}

typedef struct lbind {
    int64_t idx[2];
} lbind_t;

static int lay_bind(void *ctx, const tilec_ir_var_t *v, int64_t *out)
{
    const lbind_t *b = ctx;
    if (!v || v->kind != TILEC_VAR_LAYOUT || v->id < 0 || v->id > 2)
        return -1;
    *out = v->id == 2 ? 0 : b->idx[v->id];
    return 0;
}

int tilec_simt_mma_regs_match(const tilec_ir_buffer_t *C, const tilec_simt_mma_plan_t *p)
{
    const tilec_ir_layout_t *l = C->layout;
    if (!l || l->kind != TILEC_LAYOUT_REGS || l->replicate != 1 || !l->thread || !l->local)
        return 0;
    lbind_t b;
    for (int64_t r = 0; r < p->M; r++)
        for (int64_t c = 0; c < p->N; c++) {
            int64_t rr = r % p->WM, cc = c % p->WN, t, g;
            int32_t lane, j;
            if (tilec_target_mma_place(p->e, (int32_t)p->in, (int32_t)(rr % p->im), (int32_t)(cc % p->in), &lane, &j))
                return 0;
            b.idx[0] = r;
            b.idx[1] = c;
            if (tilec_ir_eval_int(l->thread, lay_bind, &b, &t) || tilec_ir_eval_int(l->local, lay_bind, &b, &g) ||
                t != ((r / p->WM) * p->gn + c / p->WN) * p->e->threads + lane ||
                g != ((rr / p->im) * p->nt + cc / p->in) * p->rpt + j)
                return 0;
        }
    return 1;
}

int tilec_simt_mma_plan(tilec_simt_ctx_t *c, const tilec_target_desc_t *t, const tilec_ir_stmt_t *s,
                        tilec_simt_mma_plan_t *p)
{
    memset(p, 0, sizeof *p);
    const tilec_ir_attr_t *a = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma");
    if (s->kind != TILEC_ST_GEMM || !a || a->kind != TILEC_ATTR_STRING || !t)
        return 0;
    for (int i = 0; i < t->nmma && !p->e; i++)
        if (t->mma[i].name && strcmp(t->mma[i].name, a->s) == 0)
            p->e = &t->mma[i];
    if (!p->e)
        return 0;
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    int64_t warp[2], tiles[2], shape[3];
    int lead_a = s->u.gemm.a_lead ? A->ndim - 2 : 0, lead_b = s->u.gemm.b_lead ? B->ndim - 2 : 0;
    if (c->per_thread || A->ndim - lead_a != 2 || B->ndim - lead_b != 2 || C->ndim != 2 ||
        tuple(s, "lower.warp", warp, 2) || tuple(s, "lower.mma_tiles", tiles, 2) ||
        tuple(s, "lower.mma_shape", shape, 3)) {
        tilec_simt_fail(c, "gemm %s, %s -> %s on %s: per-thread code, operands of rank other than 2 or no "
                        "lower.warp/mma_tiles/mma_shape", A->name, B->name, C->name, a->s);
        return -1;
    }
    p->M = cdim_end(C, 1);
    p->N = cdim_end(C, 0);
    p->K = cdim_end(A, s->u.gemm.trans_a ? 1 : 0);
    p->gm = warp[0];
    p->gn = warp[1];
    p->mt = tiles[0];
    p->nt = tiles[1];
    p->im = shape[0];
    p->in = shape[1];
    if (p->M <= 0 || p->N <= 0 || p->K <= 0 || p->gm <= 0 || p->gn <= 0 || p->M % p->gm || p->N % p->gn ||
        p->K % p->e->k || p->im != p->e->m || p->in <= 0 || p->in > p->e->n) {
        tilec_simt_fail(c, "gemm %s, %s -> %s on %s: shapes that are not constant multiples of the instruction",
                        A->name, B->name, C->name, a->s);
        return -1;
    }
    p->WM = p->M / p->gm;
    p->WN = p->N / p->gn;
    p->rpt = (int)(p->im * p->in / p->e->threads);
    if (p->WM != p->mt * p->im || p->WN != p->nt * p->in) {
        tilec_simt_fail(c, "gemm %s -> %s on %s: the group tile is not the instruction tiles", A->name, C->name, a->s);
        return -1;
    }
    p->regs = simt_place(c, C) == SIMT_P_REGS && tilec_simt_mma_regs_match(C, p);
    if (simt_place(c, C) == SIMT_P_REGS && !p->regs) {
        tilec_simt_fail(c, "gemm %s -> %s on %s: the accumulator's register layout is not the instruction's tiles "
                        "over the group grid", A->name, C->name, a->s);
        return -1;
    }
    return 1;
}

const char *tilec_simt_mma_acc_coord(tilec_simt_ctx_t *c, const tilec_simt_mma_plan_t *p, int axis, int j,
                                     const char *lane)
{
    const tilec_target_mma_t *e = p->e;
    int nm = axis ? e->ncol_modes : e->nrow_modes;
    const tilec_target_mode_t *md = axis ? e->col_modes : e->row_modes;
    int64_t len = axis ? p->in : p->im, mult = 1, cst = 0;
    const char *out = NULL;
    for (int i = 0; i < nm; i++) {
        int64_t ext = md[i].extent ? md[i].extent : len / mult;
        if (md[i].reg_stride) {
            cst += ((j / md[i].reg_stride) % ext) * mult;
        } else if (md[i].thread_stride) {
            const char *t = md[i].thread_stride == 1 ? simt_fmt(c, "((%s) %% %" PRId64 ")", lane, ext)
                                                     : simt_fmt(c, "(((%s) / %d) %% %" PRId64 ")", lane,
                                                                md[i].thread_stride, ext);
            if (mult > 1)
                t = simt_fmt(c, "%s * %" PRId64, t, mult);
            out = out ? simt_fmt(c, "%s + %s", out, t) : t;
        }
        mult *= ext;
    }
    if (!out)
        return simt_fmt(c, "%" PRId64, cst);
    return cst ? simt_fmt(c, "(%s + %" PRId64 ")", out, cst) : simt_fmt(c, "(%s)", out);
}
