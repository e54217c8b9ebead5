/*
 * plugin-sdk/src/lower_swizzle.c — T.use_swizzle(panel_size=P) honoured:
 * the blocks of a 2-D grid take their tiles in panels, so that the blocks
 * that run at the same time share their operands in the L2 cache.
 *
 * A GPU launches the blocks of a gx x gy grid in the order of the linear
 * index L = by * gx + bx, so the blocks resident together at any moment
 * cover a few whole rows of tiles: a GEMM's wave of 132 blocks on a
 * 32 x 64 grid of output tiles reads 4 row panels of A but 32 column
 * panels of B.  With panels of P tile rows walked column by column,
 *
 *     panel = L / (P gx),  r = L % (P gx),  rows = min(P, gy - panel P)
 *     by' = panel P + r % rows,  bx' = r / rows
 *
 * the same wave covers P rows by about 132 / P columns (10 x 13 for
 * P = 10), reading about half the operand bytes.  (bx, by) -> (bx', by')
 * is a bijection of the grid (a full panel is a P x gx transpose, the
 * last one a rows x gx one), so the kernel computes the same tiles, each
 * once: every use of bx and by in the body becomes the expression of bx'
 * and by' over the block indices (pure expressions, so nothing the other
 * passes decided changes).  The hint gets lower.swizzle = P.
 *
 * Left alone: a grid that is not 2-D with constant extents, a hint inside
 * control flow, a panel of one row or of the whole grid (nothing to gain).
 * Runs last, after every pass that decides from the indices' forms.
 */
#include <string.h>

#include "lower_internal.h"

typedef struct swz {
    lower_ctx_t *c;
    tilec_ir_var_t *bx, *by;
    tilec_ir_expr_t *nbx, *nby; /* their new values, copied into each use */
} swz_t;

static int subst_post(tilec_ir_walk_t *w, tilec_ir_expr_t **slot)
{
    swz_t *z = w->user;
    tilec_ir_expr_t *e = *slot;
    if (e->kind != TILEC_EX_VAR || (e->u.var != z->bx && e->u.var != z->by))
        return TILEC_WALK_CONTINUE;
    tilec_ir_expr_t *n = lower_subst(z->c, e->u.var == z->bx ? z->nbx : z->nby, NULL, NULL);
    if (!n)
        return -1;
    *slot = n;
    return TILEC_WALK_CONTINUE;
}

static tilec_ir_expr_t *ref(lower_ctx_t *c, tilec_ir_var_t *v)
{
    tilec_ir_expr_t *e = tilec_ir_varref(c->a, v);
    if (!e)
        lower_oom(c);
    return e;
}

int lower_swizzle(lower_ctx_t *c)
{
    tilec_ir_kernel_t *k = c->k;
    tilec_ir_stmt_t *hint = NULL;
    for (tilec_ir_stmt_t *s = k->body; s && !hint; s = s->next)
        if (s->kind == TILEC_ST_HINT && s->u.hint.name && strcmp(s->u.hint.name, "use_swizzle") == 0 &&
            s->u.hint.nargs >= 1 && !lower_sattr(s, "lower.swizzle"))
            hint = s;
    int64_t P = 0, gx = 0, gy = 0;
    if (!hint || k->ngrid != 2 || !tilec_ir_is_const_int(hint->u.hint.args[0], &P) ||
        !tilec_ir_is_const_int(k->grid[0], &gx) || !tilec_ir_is_const_int(k->grid[1], &gy) || P < 2 || P >= gy ||
        gx < 2 || gx * gy > ((int64_t)1 << 30) || !k->block[0] || !k->block[1])
        return 0;
    swz_t z = {c, k->block[0], k->block[1], NULL, NULL};
    /* L, panel, r, rows over the block indices */
    tilec_ir_expr_t *L = lower_op(c, TILEC_BIN_ADD, lower_opi(c, TILEC_BIN_MUL, ref(c, z.by), gx), ref(c, z.bx));
    tilec_ir_expr_t *panel = lower_opi(c, TILEC_BIN_FLOORDIV, L, P * gx);
    tilec_ir_expr_t *r = lower_opi(c, TILEC_BIN_FLOORMOD, lower_subst(c, L, NULL, NULL), P * gx);
    tilec_ir_expr_t *left = lower_op(c, TILEC_BIN_SUB, lower_int(c, gy),
                                     lower_opi(c, TILEC_BIN_MUL, lower_subst(c, panel, NULL, NULL), P));
    tilec_ir_expr_t *rows = lower_op(c, TILEC_BIN_MIN, lower_int(c, P), left);
    z.nby = lower_op(c, TILEC_BIN_ADD, lower_opi(c, TILEC_BIN_MUL, panel, P),
                     lower_op(c, TILEC_BIN_FLOORMOD, r, rows));
    z.nbx = lower_op(c, TILEC_BIN_FLOORDIV, lower_subst(c, r, NULL, NULL), lower_subst(c, rows, NULL, NULL));
    if (!z.nbx || !z.nby)
        return c->code != TILEC_LOWER_OK ? -1 : lower_oom(c);
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.expr_post = subst_post;
    w.user = &z;
    if (tilec_ir_walk_block(&w, &k->body) < 0)
        return c->code != TILEC_LOWER_OK ? -1 : lower_oom(c);
    return lower_sattr_int(c, hint, "lower.swizzle", P);
}
