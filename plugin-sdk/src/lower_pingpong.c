/*
 * plugin-sdk/src/lower_pingpong.c — the consumer warpgroups of a
 * warp-specialized attention loop take turns at the tensor cores
 * (FlashAttention-3's ping-pong).
 *
 * On a target with TILEC_TARGET_WG_PINGPONG, a loop of the warpspec pass
 * (lower.warpspec = (T, P), W = T / 128 >= 2 consumer warpgroups) that the
 * overlap pass rewrote
 *
 *     for k ... {
 *         barrier_wait F[...]; PRE
 *         G1 attrs {lower.mma_nowait = 1}
 *         if (k >= 1) { G2 attrs {lower.mma_nowait = 1}; hint "mma_wait" (1) } else { hint "mma_wait" (0) }
 *         X ...
 *     }
 *
 * with every gemm of the loop on W x 1 warpgroups of 128 threads (each
 * warpgroup its own rows: nothing but the ring is shared) becomes
 *
 *     hint "wg_turn" (2, W)                      the ring of turns starts at warpgroup 0
 *     for k ... {
 *         barrier_wait F[...]; PRE
 *         hint "wg_turn" (0, W)                  wait for my turn
 *         G1 ...
 *         if (k >= 1) { G2 ...; hint "wg_turn" (1, W); hint "mma_wait" (1) }
 *         else { hint "wg_turn" (1, W); hint "mma_wait" (0) }   pass the turn on
 *         X ...
 *     }
 *     hint "wg_turn" (3, W)                      warpgroup 0 takes the last turn back
 *
 * To a printer: warpgroup w waits (mode 0) until warpgroup w - 1 (mod W)
 * has passed (mode 1) the turn, so the warpgroups issue their gemms in
 * turn and each one's softmax runs while the others' gemms occupy the
 * tensor cores, instead of all softmaxes at once; mode 2 is the last
 * warpgroup's first pass, which lets warpgroup 0 start, mode 3 warpgroup
 * 0's wait for the last pass, so every pass is waited for.  Hints change
 * no result: in program order (the interpreter's) nothing moved.
 *
 * Last of the passes: the schedule is the overlap pass's.
 */
#include <string.h>

#include "lower_internal.h"

#define PP_WG 128 /* threads of a warpgroup */

static tilec_ir_stmt_t *turn(lower_ctx_t *c, int mode, int nwg, const tilec_ir_stmt_t *at)
{
    int64_t args[2] = {mode, nwg};
    return lower_hint(c, "wg_turn", args, 2, at);
}

static int is_mma_wait(const tilec_ir_stmt_t *s)
{
    return s && s->kind == TILEC_ST_HINT && s->u.hint.name && strcmp(s->u.hint.name, "mma_wait") == 0;
}

/* every gemm in list (nested too) runs on nwg x 1 groups of warpgroups */
static int gemms_by_warpgroup(const lower_ctx_t *c, const tilec_ir_stmt_t *s, int nwg, int depth)
{
    if (depth > 64)
        return 0;
    for (; s; s = s->next) {
        if (s->kind == TILEC_ST_GEMM) {
            const tilec_target_mma_t *mma = lower_gemm_mma(c, s);
            const tilec_ir_attr_t *w = lower_sattr(s, "lower.warp");
            if (!mma || mma->threads != PP_WG || !w || w->kind != TILEC_ATTR_TUPLE || w->n != 2 ||
                w->tuple[0] != nwg || w->tuple[1] != 1)
                return 0;
        } else if (s->kind == TILEC_ST_FOR && !gemms_by_warpgroup(c, s->u.loop.body, nwg, depth + 1)) {
            return 0;
        } else if (s->kind == TILEC_ST_IF && (!gemms_by_warpgroup(c, s->u.cond.then, nwg, depth + 1) ||
                                              !gemms_by_warpgroup(c, s->u.cond.els, nwg, depth + 1))) {
            return 0;
        }
    }
    return 1;
}

/* the loop's G1 (*g1p: the link to it) and the `if` after it holding G2 */
static int fits(const lower_ctx_t *c, tilec_ir_stmt_t *L, int *nwg, tilec_ir_stmt_t ***g1p)
{
    const tilec_ir_attr_t *a = L->kind == TILEC_ST_FOR ? lower_sattr(L, "lower.warpspec") : NULL;
    if (!a || a->kind != TILEC_ATTR_TUPLE || a->n != 2 || a->tuple[0] % PP_WG || a->tuple[0] / PP_WG < 2 ||
        a->tuple[0] / PP_WG > 8)
        return 0;
    *nwg = (int)(a->tuple[0] / PP_WG);
    if (!gemms_by_warpgroup(c, L->u.loop.body, *nwg, 0))
        return 0;
    for (tilec_ir_stmt_t **l = &L->u.loop.body; *l; l = &(*l)->next) {
        tilec_ir_stmt_t *g1 = *l, *gif = g1->next;
        if (g1->kind != TILEC_ST_GEMM || !lower_sattr(g1, "lower.mma_nowait"))
            continue;
        if (!gif || gif->kind != TILEC_ST_IF || !gif->u.cond.then || gif->u.cond.then->kind != TILEC_ST_GEMM ||
            !lower_sattr(gif->u.cond.then, "lower.mma_nowait") || !is_mma_wait(gif->u.cond.then->next) ||
            gif->u.cond.then->next->next || !is_mma_wait(gif->u.cond.els) || gif->u.cond.els->next)
            return 0;
        *g1p = l;
        return 1;
    }
    return 0;
}

int lower_pingpong(lower_ctx_t *c)
{
    if (!(c->t->flags & TILEC_TARGET_WG_PINGPONG))
        return 0;
    for (tilec_ir_stmt_t **l = &c->k->body; *l; l = &(*l)->next) {
        tilec_ir_stmt_t *L = *l, **g1p;
        int nwg;
        if (!fits(c, L, &nwg, &g1p))
            continue;
        tilec_ir_stmt_t *g1 = *g1p, *gif = g1->next, *g2 = gif->u.cond.then;
        tilec_ir_stmt_t *w = turn(c, 0, nwg, g1), *p1 = turn(c, 1, nwg, g2), *p0 = turn(c, 1, nwg, g2);
        tilec_ir_stmt_t *start = turn(c, 2, nwg, L), *end = turn(c, 3, nwg, L);
        if (!w || !p1 || !p0 || !start || !end)
            return -1;
        w->next = g1;
        *g1p = w;
        p1->next = g2->next;
        g2->next = p1;
        p0->next = gif->u.cond.els;
        gif->u.cond.els = p0;
        end->next = L->next;
        L->next = end;
        start->next = L;
        *l = start;
        return 0; /* one loop per kernel, as the warpspec pass */
    }
    return 0;
}
