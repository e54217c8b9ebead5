/*
 * plugin-sdk/src/lower_bank.c — which on-chip buffers the block's threads
 * walk down a column (used by the smem pass to pick a padded row pitch).
 *
 * The SIMT kit runs a T.Parallel nest with its innermost loop fastest
 * across the threads: the lanes of a subgroup hold consecutive values of
 * that loop's variable.  An access buf[..., r, c] whose row index r
 * mentions that variable and whose last index c does not (a transpose's
 * tile[i, j] read with i innermost) gives the lanes elements one row
 * apart.  With rows a multiple of 128 bytes (64 float16 elements, 32
 * floats) every one of them is in the same bank: a 32-way conflict, one
 * shared-memory cycle per lane.  The smem pass gives such a buffer rows an
 * odd number of 4-byte words long (one word of padding), so consecutive
 * rows start one bank apart and a column of 32 elements of up to 4 bytes
 * is 32 distinct banks.  Nests run by the owners of register fragments
 * (lower.dist) place their iterations by the fragment's layout, not in
 * this order, and are not counted.
 */
#include <string.h>

#include "lower_internal.h"

#define BANK_MAX_NEST 64

typedef struct bank {
    int *col;
    const tilec_ir_stmt_t *loops[BANK_MAX_NEST]; /* enclosing parallel loops */
    int n, deeper;
} bank_t;

static void access(bank_t *B, const tilec_ir_buffer_t *b, tilec_ir_expr_t **idx)
{
    if (B->n == 0 || B->deeper || b->ndim < 2 || b->scope == TILEC_SCOPE_GLOBAL)
        return;
    const tilec_ir_stmt_t *in = B->loops[B->n - 1];
    if (lower_sattr(in, "lower.dist"))
        return;
    const tilec_ir_var_t *v = in->u.loop.var;
    if (lower_mentions(idx[b->ndim - 2], v) && !lower_mentions(idx[b->ndim - 1], v))
        B->col[b->id] = 1;
}

static int bank_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    if (e->kind == TILEC_EX_LOAD)
        access(w->user, e->u.load.buf, e->u.load.idx);
    return TILEC_WALK_CONTINUE;
}

static int is_par(const tilec_ir_stmt_t *s)
{
    return s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PARALLEL;
}

static int bank_pre(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    bank_t *B = w->user;
    if (is_par(s)) {
        if (B->n < BANK_MAX_NEST)
            B->loops[B->n++] = s;
        else
            B->deeper++;
    } else if (s->kind == TILEC_ST_STORE) {
        access(B, s->u.store.buf, s->u.store.idx);
    }
    return TILEC_WALK_CONTINUE;
}

static int bank_post(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    bank_t *B = w->user;
    if (is_par(s)) {
        if (B->deeper)
            B->deeper--;
        else if (B->n > 0)
            B->n--;
    }
    return TILEC_WALK_CONTINUE;
}

int lower_column_uses(tilec_ir_kernel_t *k, int *col)
{
    bank_t B;
    memset(&B, 0, sizeof B);
    B.col = col;
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = bank_pre;
    w.stmt_post = bank_post;
    w.expr_pre = bank_expr;
    w.user = &B;
    return tilec_ir_walk_block(&w, &k->body) < 0 ? -1 : 0;
}
