/*
 * plugin-sdk/src/lower_gemm_warp.c — warp tiling of T.gemm.
 *
 * For each gemm the pass picks the target's first matrix instruction
 * (target.h: mma[], best first) whose operand and accumulator dtypes match
 * and whose tile divides the problem, then the grid of issuing groups
 * (warps, or warpgroups of four for an instruction issued by 128 threads)
 * that tiles C: gm groups along M times gn along N.  The policy chooses
 * among the grids that divide evenly: FullRow puts every group along M,
 * FullCol along N, Square makes the group's tile closest to square; an
 * instruction of variable width (n_step) takes the fewest groups along N,
 * so each instruction is as wide as possible.  A grid whose accumulators
 * would pass the instruction's register budget is refused, as is a
 * swizzled-operand instruction when an operand cannot be swizzled.
 * Without a fitting instruction the gemm runs on the plain cores with a
 * thread grid (ty x tx) in which each thread owns a strided block of C
 * ("simt"), when that block fits the fragment register budget.
 *
 * Decisions are attributes: lower.mma (instruction name or "simt"),
 * lower.mma_shape (m, n, k of one instruction), lower.warp (gm, gn),
 * lower.mma_tiles (instructions per group along M and N), lower.simt
 * (ty, tx).  A buffer that is an operand of both a swizzled-operand
 * instruction and of a gemm that cannot read swizzled operands, or of a
 * reduce, cumsum or print (which read dense rows), makes the first fall
 * back to its next choice, until no such conflict remains.
 */
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

typedef struct gemm_dims {
    int64_t M, N, K;
} gemm_dims_t;

static int dims_of(const tilec_ir_stmt_t *s, gemm_dims_t *d)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    int la = A->ndim - 2, lb = B->ndim - 2;
    if (C->ndim != 2 || la < 0 || lb < 0)
        return 0;
    d->M = lower_dim(C, 0);
    d->N = lower_dim(C, 1);
    d->K = s->u.gemm.trans_a ? lower_dim(A, la) : lower_dim(A, la + 1);
    int64_t kb = s->u.gemm.trans_b ? lower_dim(B, lb + 1) : lower_dim(B, lb);
    return d->M > 0 && d->N > 0 && d->K > 0 && kb == d->K;
}

static int on_chip(const tilec_ir_buffer_t *b)
{
    return b->scope == TILEC_SCOPE_SHARED || b->scope == TILEC_SCOPE_FRAGMENT;
}

typedef struct plan {
    const tilec_target_mma_t *mma;
    int gm, gn, mt, nt;
    int64_t inst_n;
} plan_t;

/* best group grid for instruction mma; 0 when none fits */
static int fit(const lower_ctx_t *c, const tilec_ir_stmt_t *s, const gemm_dims_t *d,
               const tilec_target_mma_t *mma, plan_t *out)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    if (A->dtype != (tilec_dtype_t)mma->a_dtype || B->dtype != (tilec_dtype_t)mma->b_dtype ||
        C->dtype != (tilec_dtype_t)mma->acc_dtype || !on_chip(A) || !on_chip(B) || !on_chip(C) ||
        A == B || A == C || B == C || c->nthreads % mma->threads || d->M % mma->m || d->K % mma->k)
        return 0;
    if ((mma->flags & TILEC_TARGET_MMA_KMAJOR) && (s->u.gemm.trans_a || !s->u.gemm.trans_b))
        return 0; /* an operand whose K is not its contiguous dimension */
    int wb = 0;
    if (mma->flags & TILEC_TARGET_MMA_SMEM_SWIZZLED) {
        int wa = lower_swizzle_width(A);
        wb = lower_swizzle_width(B);
        if (!wa || !wb)
            return 0;
    }
    int ng = c->nthreads / mma->threads, found = 0;
    int64_t best = 0;
    int step = mma->n_step ? mma->n_step : mma->n;
    for (int gm = 1; gm <= ng; gm++) {
        if (ng % gm)
            continue;
        int gn = ng / gm;
        if (d->M % gm || d->N % gn)
            continue;
        int64_t WM = d->M / gm, WN = d->N / gn;
        if (WM % mma->m || WN % step || (mma->n_step && WN > mma->n))
            continue;
        if (wb && !s->u.gemm.trans_b && WN % wb)
            continue; /* B's swizzle blocks run along N */
        int64_t inst_n = mma->n_step ? WN : mma->n;
        int64_t mt = WM / mma->m, nt = WN / inst_n;
        int64_t regs = mt * nt * (mma->m * inst_n / mma->threads);
        if (regs > mma->max_acc_regs)
            continue;
        int64_t score;
        if (mma->n_step && !(c->t->flags & TILEC_TARGET_MMA_GRID_POLICY))
            score = -gm;
        else if (s->u.gemm.policy == TILEC_POLICY_FULLROW)
            score = -gm;
        else if (s->u.gemm.policy == TILEC_POLICY_FULLCOL)
            score = -gn;
        else
            score = WM > WN ? WM - WN : WN - WM;
        if (mma->n_step && (c->t->flags & TILEC_TARGET_MMA_GRID_POLICY))
            score = score * 64 - gm; /* a tie: more groups along M, each instruction wider */
        if ((mma->flags & TILEC_TARGET_MMA_SMEM_ROWS16) && WN % (2 * mma->n))
            score += 1000000; /* operand loads of half width: a last resort */
        if (!found || score < best) {
            found = 1;
            best = score;
            out->mma = mma;
            out->gm = gm;
            out->gn = gn;
            out->mt = (int)mt;
            out->nt = (int)nt;
            out->inst_n = inst_n;
        }
    }
    return found;
}

/* thread grid of a gemm on the plain cores: ty * tx = threads, each
 * thread (M/ty) x (N/tx) elements within the fragment budget, as square
 * as possible; 0 when none */
static int fit_simt(const lower_ctx_t *c, const gemm_dims_t *d, const tilec_ir_stmt_t *s,
                    int *ty, int *tx)
{
    const tilec_ir_buffer_t *C = s->u.gemm.c;
    if (C->scope != TILEC_SCOPE_FRAGMENT || tilec_dtype_size(C->dtype) > 4 || c->t->frag_regs < 1)
        return 0;
    int found = 0;
    int64_t best = 0;
    for (int y = 1; y <= c->nthreads; y++) {
        if (c->nthreads % y)
            continue;
        int x = c->nthreads / y;
        if (d->M % y || d->N % x)
            continue;
        int64_t tm = d->M / y, tn = d->N / x;
        if (tm * tn > c->t->frag_regs / 2)
            continue;
        int64_t score = tm > tn ? tm - tn : tn - tm;
        if (!found || score < best) {
            found = 1;
            best = score;
            *ty = y;
            *tx = x;
        }
    }
    return found;
}

static int swizzled(const plan_t *p)
{
    return p->mma && (p->mma->flags & TILEC_TARGET_MMA_SMEM_SWIZZLED);
}

static int plan_gemm(lower_ctx_t *c, const tilec_ir_stmt_t *s, int no_swizzle, plan_t *p)
{
    gemm_dims_t d;
    memset(p, 0, sizeof *p);
    if (!dims_of(s, &d))
        return 0;
    for (int i = 0; i < c->t->nmma; i++) {
        const tilec_target_mma_t *mma = &c->t->mma[i];
        if (no_swizzle && (mma->flags & TILEC_TARGET_MMA_SMEM_SWIZZLED))
            continue;
        if (fit(c, s, &d, mma, p))
            return 1;
    }
    return 0;
}

static int set_attrs(lower_ctx_t *c, tilec_ir_stmt_t *s, const plan_t *p)
{
    gemm_dims_t d;
    if (p->mma) {
        int64_t shape[3] = {p->mma->m, p->inst_n, p->mma->k};
        int64_t warp[2] = {p->gm, p->gn}, tiles[2] = {p->mt, p->nt};
        if (lower_sattr_str(c, s, "lower.mma", p->mma->name) ||
            lower_sattr_tuple(c, s, "lower.mma_shape", shape, 3) ||
            lower_sattr_tuple(c, s, "lower.warp", warp, 2) ||
            lower_sattr_tuple(c, s, "lower.mma_tiles", tiles, 2))
            return -1;
        return 0;
    }
    int ty, tx;
    if (dims_of(s, &d) && fit_simt(c, &d, s, &ty, &tx)) {
        int64_t g[2] = {ty, tx};
        if (lower_sattr_str(c, s, "lower.mma", "simt") || lower_sattr_tuple(c, s, "lower.simt", g, 2))
            return -1;
    }
    return 0;
}

/* ---- the walk: plan, then settle swizzle conflicts -------------------------- */

typedef struct gemm_list {
    tilec_ir_stmt_t **s;
    int n, cap;
} gemm_list_t;

static int collect(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    gemm_list_t *l = w->user;
    if (s->kind != TILEC_ST_GEMM)
        return TILEC_WALK_CONTINUE;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        tilec_ir_stmt_t **ns = realloc(l->s, sizeof *ns * (size_t)cap);
        if (!ns)
            return -1;
        l->s = ns;
        l->cap = cap;
    }
    l->s[l->n++] = s;
    return TILEC_WALK_CONTINUE;
}

int lower_gemm_warp(lower_ctx_t *c)
{
    gemm_list_t l = {NULL, 0, 0};
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = collect;
    w.user = &l;
    if (tilec_ir_walk_block(&w, &c->k->body) < 0) {
        free(l.s);
        return lower_oom(c);
    }
    int nb = c->k->nbufs;
    plan_t *plans = calloc((size_t)l.n + 1, sizeof *plans);
    int *noswz_gemm = calloc((size_t)l.n + 1, sizeof(int));
    int *noswz_buf = calloc((size_t)nb + 1, sizeof(int));
    int *dense = calloc((size_t)nb + 1, sizeof(int));
    int rc = 0;
    if (!plans || !noswz_gemm || !noswz_buf || !dense || lower_dense_uses(c->k, dense) < 0) {
        rc = lower_oom(c);
        goto done;
    }
    for (;;) {
        for (int i = 0; i < l.n; i++)
            plan_gemm(c, l.s[i], noswz_gemm[i], &plans[i]);
        /* a buffer read by a gemm that does not use swizzled operands, or
         * by a reduce, cumsum or print, cannot be swizzled for another */
        memcpy(noswz_buf, dense, sizeof(int) * (size_t)nb);
        for (int i = 0; i < l.n; i++)
            if (!swizzled(&plans[i]))
                noswz_buf[l.s[i]->u.gemm.a->id] = noswz_buf[l.s[i]->u.gemm.b->id] = 1;
        int changed = 0;
        for (int i = 0; i < l.n; i++)
            if (swizzled(&plans[i]) &&
                (noswz_buf[l.s[i]->u.gemm.a->id] || noswz_buf[l.s[i]->u.gemm.b->id])) {
                noswz_gemm[i] = 1;
                changed = 1;
            }
        if (!changed)
            break;
    }
    for (int i = 0; i < l.n && rc == 0; i++)
        rc = set_attrs(c, l.s[i], &plans[i]);
done:
    free(plans);
    free(noswz_gemm);
    free(noswz_buf);
    free(dense);
    free(l.s);
    return rc;
}
