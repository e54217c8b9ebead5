/*
 * cpu_group.c — which GEMM kernels run their blocks in lockstep groups.
 *
 * A tiled GEMM kernel copies, at every step of its K loop, an A tile that
 * depends on the block's row (by) and a B tile that depends on its column
 * (bx), then multiplies them.  Run one block at a time, every block reads
 * its whole A row panel and B column panel from memory: at 64x128 tiles
 * that traffic costs a fifth of the time on a CPU, whose caches are what a
 * GPU's shared memory is.  Run gx x gy neighbouring blocks of one thread in
 * lockstep — each K step copies the gy A tiles and the gx B tiles once,
 * then does the gx*gy GEMMs — and the copies fall by a factor of about
 * three, while each block computes exactly what it computed alone (its own
 * accumulator, its own prologue and epilogue; the tiles it multiplies are
 * the ones its own copies would have made).  The generator then reports a
 * grid of groups to the pool (cpu_codegen.c).
 *
 * This file decides whether a kernel has that shape, conservatively: a 2-D
 * grid; at top level only copies, fills and hints around one serial or
 * pipelined loop whose extent depends on shape symbols only; in the loop,
 * the two copies (global to on-chip, the A one free of bx, the B one free
 * of by, destinations at fixed places) then the GEMM reading exactly their
 * destinations, which nothing else in the kernel mentions; no let
 * variables and no buffers held in C locals.  It also decides whether
 * small K steps are merged into one GEMM call (see cpu_group_plan).
 */
#include <string.h>

#include "cpu_cg.h"

#define GROUP_X 2
#define GROUP_Y 4
#define GROUP_KC 512 /* K of one GEMM call when K steps of at most GROUP_KC/4 are merged */

/* Does e mention variable v (any: any variable but a shape symbol), or load? */
static int uses(const tilec_ir_expr_t *e, const tilec_ir_var_t *v, int any, int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4)
        return 1;
    switch (e->kind) {
    case TILEC_EX_INT: case TILEC_EX_FLOAT: return 0;
    case TILEC_EX_VAR: return any ? e->u.var->kind != TILEC_VAR_SYM : e->u.var == v;
    case TILEC_EX_UNARY: return uses(e->u.un.a, v, any, depth + 1);
    case TILEC_EX_BINARY: return uses(e->u.bin.a, v, any, depth + 1) || uses(e->u.bin.b, v, any, depth + 1);
    case TILEC_EX_SELECT:
        return uses(e->u.sel.cond, v, any, depth + 1) || uses(e->u.sel.a, v, any, depth + 1) ||
               uses(e->u.sel.b, v, any, depth + 1);
    case TILEC_EX_CAST: return uses(e->u.cast.a, v, any, depth + 1);
    default: return 1; /* loads */
    }
}

static int region_uses(const tilec_ir_region_t *r, const tilec_ir_var_t *v, int any)
{
    for (int d = 0; d < r->buf->ndim; d++)
        if (uses(r->base[d], v, any, 0))
            return 1;
    return 0;
}

/* Is c a copy from a global region into an on-chip scratch buffer at
 * fixed bases, whose source does not depend on the block variable other
 * (NULL: no variable is excluded)? */
static int tile_copy(const tilec_ir_stmt_t *c, const tilec_ir_var_t *other, const int *place)
{
    if (c->kind != TILEC_ST_COPY || !c->u.copy.src.buf || !c->u.copy.dst.buf)
        return 0;
    const tilec_ir_buffer_t *s = c->u.copy.src.buf, *d = c->u.copy.dst.buf;
    if (s->scope != TILEC_SCOPE_GLOBAL || d->scope == TILEC_SCOPE_GLOBAL || place[d->id] != PLACE_SCRATCH)
        return 0;
    if (other && region_uses(&c->u.copy.src, other, 0))
        return 0;
    return !region_uses(&c->u.copy.dst, NULL, 1);
}

/* Does statement s mention buffer b anywhere (regions, operands)? Only the
 * statement kinds allowed at top level need an answer. */
static int mentions(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b)
{
    switch (s->kind) {
    case TILEC_ST_COPY:
        return s->u.copy.src.buf == b || s->u.copy.dst.buf == b;
    case TILEC_ST_FILL: return s->u.fill.dst.buf == b;
    case TILEC_ST_HINT: return s->u.hint.buf == b;
    default: return 0;
    }
}

/* Does copy ca fill all of the 2-D tile A from the last two dimensions of
 * a tensor of A's dtype (so each tile row is contiguous there)? */
static int tile_of_tensor(const tilec_ir_stmt_t *ca, const tilec_ir_buffer_t *A)
{
    const tilec_ir_buffer_t *S = ca->u.copy.src.buf;
    int64_t v;
    if (A->ndim != 2 || S->dtype != A->dtype || S->ndim < 2)
        return 0;
    for (int d = 0; d < 2; d++)
        if (!tilec_ir_is_const_int(A->shape[d], &v) || ca->u.copy.dst.extent[d] != v ||
            !tilec_ir_is_const_int(ca->u.copy.dst.base[d], &v) || v != 0 ||
            ca->u.copy.src.extent[S->ndim - 2 + d] != ca->u.copy.dst.extent[d])
            return 0;
    for (int d = 0; d < S->ndim - 2; d++)
        if (ca->u.copy.src.extent[d] != 1)
            return 0;
    return 1;
}

/* Can the GEMM read its A tile straight from the tensor when the copy's
 * region lies inside it (cpu_codegen.c)?  When A is the compute type
 * (float32 or float64, as C), not transposed, the copy fills all of A
 * from the last two dimensions of a tensor of the same dtype (so a tile
 * row is contiguous there): the GEMM then sees the same values, with the
 * tensor's row stride.  Saves the copy of every A tile at every K step. */
static int a_in_place(const tilec_ir_stmt_t *ca, const tilec_ir_stmt_t *gemm)
{
    const tilec_ir_buffer_t *A = gemm->u.gemm.a, *C = gemm->u.gemm.c;
    if (gemm->u.gemm.trans_a || A->dtype != C->dtype || (A->dtype != TILEC_FLOAT32 && A->dtype != TILEC_FLOAT64))
        return 0;
    return tile_of_tensor(ca, A);
}

int cpu_group_plan(const tilec_ir_kernel_t *k, const int *place, cpu_group_t *out)
{
    memset(out, 0, sizeof *out);
    out->gx = out->gy = 1;
    if (k->ngrid != 2 || !k->block[0] || !k->block[1])
        return 0;
    for (int i = 0; i < k->nvars; i++)
        if (k->vars[i]->kind == TILEC_VAR_LET)
            return 0;
    for (int i = 0; i < k->nbufs; i++)
        if (place[i] == PLACE_LOCAL)
            return 0;
    int64_t gx = 0, gy = 0;
    if (tilec_ir_is_const_int(k->grid[0], &gx) && tilec_ir_is_const_int(k->grid[1], &gy) &&
        (gx < 2 * GROUP_X || gy < 2 * GROUP_Y))
        return 0; /* too few blocks for groups to pay */
    const tilec_ir_stmt_t *loop = NULL;
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next) {
        if (s->kind == TILEC_ST_FOR) {
            if (loop)
                return 0;
            loop = s;
        } else if (s->kind != TILEC_ST_COPY && s->kind != TILEC_ST_FILL && s->kind != TILEC_ST_HINT &&
                   s->kind != TILEC_ST_SYNC) {
            return 0;
        }
    }
    if (!loop || (loop->u.loop.kind != TILEC_LOOP_SERIAL && loop->u.loop.kind != TILEC_LOOP_PIPELINED) ||
        uses(loop->u.loop.extent, NULL, 1, 0) || loop->u.loop.var->dtype != TILEC_INT32)
        return 0;
    /* the loop body: copy A, copy B (either order), gemm; syncs and hints */
    const tilec_ir_stmt_t *copies[2] = {NULL, NULL}, *gemm = NULL;
    int ncopy = 0;
    for (const tilec_ir_stmt_t *s = loop->u.loop.body; s; s = s->next) {
        if (s->kind == TILEC_ST_SYNC || s->kind == TILEC_ST_HINT)
            continue;
        if (s->kind == TILEC_ST_COPY && !gemm && ncopy < 2)
            copies[ncopy++] = s;
        else if (s->kind == TILEC_ST_GEMM && !gemm && ncopy == 2)
            gemm = s;
        else
            return 0;
    }
    if (!gemm || gemm->u.gemm.a_lead || gemm->u.gemm.b_lead)
        return 0;
    const tilec_ir_buffer_t *A = gemm->u.gemm.a, *B = gemm->u.gemm.b, *C = gemm->u.gemm.c;
    if (!A || !B || !C || A == B || A == C || B == C || C->scope == TILEC_SCOPE_GLOBAL)
        return 0;
    const tilec_ir_stmt_t *ca = copies[0]->u.copy.dst.buf == A ? copies[0] : copies[1];
    const tilec_ir_stmt_t *cb = ca == copies[0] ? copies[1] : copies[0];
    if (ca->u.copy.dst.buf != A || cb->u.copy.dst.buf != B || !tile_copy(ca, k->block[0], place) ||
        !tile_copy(cb, k->block[1], place))
        return 0;
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next)
        if (s != loop && (mentions(s, A) || mentions(s, B)))
            return 0;
    /* more members while a group covers less than 256 columns x 512 rows
     * of C: every copied B tile then serves 512 rows of GEMMs (the A
     * tiles, read in place, cost no copy) and the members' C tiles
     * (512 KiB of float32) stay in a 1 MiB L2 */
    int64_t tm, tn;
    out->gx = GROUP_X;
    out->gy = GROUP_Y;
    if (A->ndim == 2 && B->ndim == 2 && tilec_ir_is_const_int(A->shape[gemm->u.gemm.trans_a ? 1 : 0], &tm) &&
        tilec_ir_is_const_int(B->shape[gemm->u.gemm.trans_b ? 0 : 1], &tn) && tm > 0 && tn > 0) {
        while (out->gx < 4 * GROUP_X && out->gx * tn < 256 && gx >= 2 * 2 * out->gx)
            out->gx *= 2;
        while (out->gy < 4 * GROUP_Y && out->gy * tm < 512 && gy >= 2 * 2 * out->gy)
            out->gy *= 2;
    }
    out->ku = 1;
    /* K steps of at most GROUP_KC / 4 (block_K <= 128): every step's GEMM
     * loads and stores its C tile around only block_K multiply-adds per
     * element (at 64 a tenth of the micro-kernel's speed on AVX-512, next
     * to 512 per call).  Where the
     * GEMM accumulates (no clear_accum) untransposed operands of its
     * compute type (float32, ...), ku steps' tiles are staged side by side
     * and multiplied by one call: the same products, summed in the same
     * order. */
    int64_t am, ak, bk2, bn;
    if (!gemm->u.gemm.clear_accum && !gemm->u.gemm.trans_a && !gemm->u.gemm.trans_b &&
        (A->dtype == TILEC_FLOAT32 || A->dtype == TILEC_FLOAT64) && B->dtype == A->dtype && C->dtype == A->dtype &&
        A->ndim == 2 && B->ndim == 2 && tilec_ir_is_const_int(A->shape[0], &am) &&
        tilec_ir_is_const_int(A->shape[1], &ak) && tilec_ir_is_const_int(B->shape[0], &bk2) &&
        tilec_ir_is_const_int(B->shape[1], &bn) && ak == bk2 && ak >= 1 && ak <= GROUP_KC / 4 &&
        am <= 1024 && bn <= 1024) {
        /* the chunk's staged B tiles (kc x gx*bn) within half the L2, where
         * each member's GEMM reads its part once per row of micro-tiles: at
         * 512 x 256 floats they were the whole 512 KiB L2 of a Zen 3 core
         * (2048^3 float32, 64x128x64 tiles, 1 thread: 0.86 -> 0.92 of
         * OpenBLAS, 4096^3 0.87 -> 0.89); hosts with 2 MiB keep 512 */
        int64_t kc = GROUP_KC, esz = A->dtype == TILEC_FLOAT64 ? 8 : 4;
        while (kc > 2 * ak && kc > 128 && kc * out->gx * bn * esz > cpu_gemm_l2_bytes() / 2)
            kc /= 2;
        out->ku = (int)(kc / ak);
        out->bm = am;
        out->bn = bn;
        out->bk = ak;
    }
    out->a_direct = a_in_place(ca, gemm);
    out->b_direct = out->ku > 1 && tile_of_tensor(cb, B);
    out->loop = loop;
    out->copy_a = ca;
    out->copy_b = cb;
    out->gemm = gemm;
    return 1;
}
