/*
 * plugin-sdk/src/lower_smem.c — the shared-memory plan: where each shared
 * buffer, and each fragment that layout inference left out of registers,
 * lives in the block's shared memory.
 *
 * Form, from the access patterns: a 16-bit (or 8-bit) buffer read by gemms whose
 * instruction takes swizzled operands (TILEC_TARGET_MMA_SMEM_SWIZZLED) is
 * laid out in the canonical swizzle over its last two dimensions: column
 * blocks of W = 64, 32 or 16 elements (128, 64, 32 of 8 bits; 128-, 64-, 32-byte swizzle), each
 * R rows of W, the 16-byte chunks of a row XOR-permuted by the bits that
 * count 128-byte lines ("swizzle128" ...; aligned to 1024 bytes, the
 * pattern's period).  A buffer read by gemms whose instruction loads
 * 16-byte rows eight at a time (TILEC_TARGET_MMA_SMEM_ROWS16) gets its
 * rows padded by 16 bytes so those rows fall in distinct banks ("pad"),
 * as do operands of gemms without an MMA entry on a target that says
 * TILEC_TARGET_SIMT_PAD_ROWS (its dialect's own matrix loads).
 * A buffer that some T.Parallel nest walks down a column (the lanes one
 * row apart, lower_bank.c) with rows of an even number of 4-byte words
 * gets one word of padding per row ("pad", pitch = row + 4 bytes): the
 * lanes' elements then fall in distinct banks instead of all in one (a
 * transpose's 32-way conflict), at the price of copies into it moving 4
 * bytes a thread instead of 16.
 * Anything else, and any buffer a reduce, cumsum or print touches, is
 * dense row-major ("dense").  Leading (ring) dimensions
 * stack whole copies of the 2-D form.
 *
 * Placement: offsets aligned to the target's smem_align, first fit in
 * order of first use.  Two buffers whose lifetimes (the span of top-level
 * statements that mention them) do not meet may share bytes when the
 * later one's first use overwrites all of it (on-chip buffers start at
 * zero otherwise); the later one says so with lower.reuse_of = "OTHER".
 * The plan must fit the target's opt-in shared memory.
 *
 * Start values: a buffer whose first use does not overwrite all of it
 * reads the zeros on-chip memory starts with (as in the interpreter); it
 * gets lower.zero = 1, and the dialect zeroes it at kernel entry.  A ring
 * the pipeline pass marks lower.stage_fill (each stage written whole
 * before the iteration that reads it) is not zeroed, though its first
 * statement, the prologue, fills only S - 1 stages; it still shares
 * bytes with no other buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

enum { F_DENSE = 0, F_PAD, F_SWZ };

typedef struct sbuf {
    tilec_ir_buffer_t *b;
    int form, W;
    int64_t pitch;            /* F_PAD: padded row length, elements */
    int64_t bytes, align;
    int first, last;          /* top-level statements that mention it */
    int overwrite_first;      /* its first use overwrites all of it */
    int stage_fill;           /* a ring whose stages are written whole before read (lower.stage_fill) */
    int64_t off;
    int placed, reuse;        /* reuse: index of the buffer it shares bytes with, -1 */
} sbuf_t;

typedef struct sm {
    lower_ctx_t *c;
    int *swz, *pad, *noswz, *nopad, *col;
} sm_t;

static int gemm_wants(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    sm_t *q = w->user;
    if (s->kind != TILEC_ST_GEMM)
        return TILEC_WALK_CONTINUE;
    const tilec_target_mma_t *mma = lower_gemm_mma(q->c, s);
    const tilec_ir_buffer_t *ops[2] = {s->u.gemm.a, s->u.gemm.b};
    for (int i = 0; i < 2; i++) {
        int id = ops[i]->id;
        if (mma && (mma->flags & TILEC_TARGET_MMA_SMEM_SWIZZLED))
            q->swz[id] = 1;
        else
            q->noswz[id] = 1;
        if (mma ? (mma->flags & TILEC_TARGET_MMA_SMEM_ROWS16) != 0 : (q->c->t->flags & TILEC_TARGET_SIMT_PAD_ROWS) != 0)
            q->pad[id] = 1;
        else
            q->nopad[id] = 1;
    }
    return TILEC_WALK_CONTINUE;
}

static int placed_in_smem(const tilec_ir_buffer_t *b)
{
    return b->scope == TILEC_SCOPE_SHARED ||
           (b->scope == TILEC_SCOPE_FRAGMENT && (!b->layout || b->layout->kind == TILEC_LAYOUT_SMEM));
}

#define OP(op, x, y) lower_op(c, TILEC_BIN_##op, x, y)
#define OPI(op, x, y) lower_opi(c, TILEC_BIN_##op, x, y)

static tilec_ir_expr_t *var(lower_ctx_t *c, tilec_ir_layout_t *l, int d)
{
    tilec_ir_expr_t *e = tilec_ir_varref(c->a, l->ivar[d]);
    if (!e)
        lower_oom(c);
    return e;
}

/* the element address of the form, over the layout's placeholders */
static int make_layout(lower_ctx_t *c, sbuf_t *sb)
{
    tilec_ir_buffer_t *b = sb->b;
    char name[32];
    int es = (int)tilec_dtype_size(b->dtype);
    if (sb->form == F_SWZ)
        snprintf(name, sizeof name, "swizzle%d", sb->W * es);
    else
        snprintf(name, sizeof name, "%s", sb->form == F_PAD ? "pad" : "dense");
    tilec_ir_layout_t *l = tilec_ir_layout_new(c->a, TILEC_LAYOUT_SMEM, name, b->ndim);
    if (!l)
        return lower_oom(c);
    int nd = b->ndim;
    tilec_ir_expr_t *addr = lower_int(c, 0);
    if (sb->form == F_DENSE) {
        for (int d = 0; d < nd; d++)
            addr = OP(ADD, OPI(MUL, addr, lower_dim(b, d)), var(c, l, d));
    } else {
        int64_t R = lower_dim(b, nd - 2), C = lower_dim(b, nd - 1);
        int64_t plane = sb->form == F_PAD ? R * sb->pitch : R * C;
        tilec_ir_expr_t *lead = lower_int(c, 0);
        for (int d = 0; d < nd - 2; d++)
            lead = OP(ADD, OPI(MUL, lead, lower_dim(b, d)), var(c, l, d));
        tilec_ir_expr_t *r = var(c, l, nd - 2), *col = var(c, l, nd - 1), *in;
        if (sb->form == F_PAD) {
            in = OP(ADD, OPI(MUL, r, sb->pitch), col);
        } else {
            /* e = r * W + (c % W); (c / W) * R * W + (e ^ (((e >> L) & (W/C - 1)) << log2 C)):
             * 16-byte chunks of C = 16 / es elements XORed by the 128-byte
             * line (L = log2(128 / es)) within the swizzle's repeat */
            int W = sb->W, C = 16 / es, L = es == 1 ? 7 : 6, lc = es == 1 ? 4 : 3;
            tilec_ir_expr_t *e = OP(ADD, OPI(MUL, r, W), OPI(FLOORMOD, col, W));
            tilec_ir_expr_t *e2 = OP(ADD, OPI(MUL, var(c, l, nd - 2), W), OPI(FLOORMOD, var(c, l, nd - 1), W));
            tilec_ir_expr_t *sel = OPI(SHL, OPI(BITAND, OPI(SHR, e2, L), W / C - 1), lc);
            in = OP(ADD, OPI(MUL, OPI(FLOORDIV, var(c, l, nd - 1), W), R * W), OP(BITXOR, e, sel));
        }
        addr = OP(ADD, OPI(MUL, lead, plane), in);
    }
    if (!addr)
        return lower_oom(c);
    l->addr = addr;
    l->offset = sb->off;
    l->size = sb->bytes;
    if (tilec_ir_attr_set_int(c->a, &l->nparams, &l->params, "align", sb->align))
        return lower_oom(c);
    if (sb->form == F_PAD && tilec_ir_attr_set_int(c->a, &l->nparams, &l->params, "pitch", sb->pitch))
        return lower_oom(c);
    b->layout = l;
    return 0;
}

static int64_t round_up(int64_t x, int64_t a)
{
    return (x + a - 1) / a * a;
}

static int overlaps(const sbuf_t *a, int64_t off, int64_t bytes)
{
    return a->off < off + bytes && off < a->off + a->bytes;
}

static int lives_meet(const sbuf_t *a, const sbuf_t *b)
{
    return a->first <= b->last && b->first <= a->last;
}

/* first fit; a dead buffer's bytes may be reused by one that overwrites first */
static void place(sbuf_t *v, int n, sbuf_t *sb)
{
    int64_t cand = 0;
    for (int round = 0; round <= n; round++) {
        int64_t off = round_up(cand, sb->align), next = -1;
        int ok = 1, reuse = -1;
        for (int i = 0; i < n && ok; i++) {
            sbuf_t *p = &v[i];
            if (!p->placed || p == sb || !overlaps(p, off, sb->bytes))
                continue;
            if (!lives_meet(p, sb) && sb->overwrite_first && reuse < 0 && p->reuse < 0) {
                reuse = i;
                continue;
            }
            ok = 0;
            if (next < 0 || p->off + p->bytes > next)
                next = p->off + p->bytes;
        }
        if (ok) {
            sb->off = off;
            sb->reuse = reuse;
            sb->placed = 1;
            return;
        }
        cand = next;
    }
    /* not reached: past every placed buffer always fits */
    sb->off = round_up(cand, sb->align);
    sb->placed = 1;
}

int lower_smem(lower_ctx_t *c)
{
    tilec_ir_kernel_t *k = c->k;
    int nb = k->nbufs, rc = 0;
    sm_t q = {c, calloc((size_t)nb + 1, sizeof(int)), calloc((size_t)nb + 1, sizeof(int)),
              calloc((size_t)nb + 1, sizeof(int)), calloc((size_t)nb + 1, sizeof(int)),
              calloc((size_t)nb + 1, sizeof(int))};
    sbuf_t *v = calloc((size_t)nb + 1, sizeof *v);
    int n = 0;
    if (!q.swz || !q.pad || !q.noswz || !q.nopad || !q.col || !v) {
        rc = lower_oom(c);
        goto done;
    }
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = gemm_wants;
    w.user = &q;
    tilec_ir_walk_block(&w, &k->body);
    if (lower_dense_uses(k, q.noswz) < 0 || lower_dense_uses(k, q.nopad) < 0 || lower_column_uses(k, q.col) < 0) {
        rc = lower_oom(c);
        goto done;
    }
    for (int i = k->nparams; i < nb; i++) {
        tilec_ir_buffer_t *b = k->bufs[i];
        if (!placed_in_smem(b) || (b->layout && b->layout->kind == TILEC_LAYOUT_SMEM))
            continue;
        int64_t elems = tilec_ir_buffer_const_size(b);
        if (elems < 0) {
            rc = lower_fail(c, TILEC_LOWER_E_UNSUPPORTED, "buffer '%s' has no constant shape", b->name);
            goto done;
        }
        sbuf_t *sb = &v[n++];
        sb->b = b;
        sb->reuse = -1;
        sb->align = c->t->smem_align;
        size_t es = tilec_dtype_size(b->dtype);
        int64_t last = b->ndim >= 2 ? lower_dim(b, b->ndim - 1) : -1;
        int W = lower_swizzle_width(b);
        if (q.swz[i] && !q.noswz[i] && W) {
            sb->form = F_SWZ;
            sb->W = W;
            sb->align = sb->align > 1024 ? sb->align : 1024;
        } else if (q.pad[i] && !q.nopad[i] && last > 0 && (last * (int64_t)es) % 16 == 0) {
            sb->form = F_PAD;
            sb->pitch = last + 16 / (int64_t)es;
            elems = elems / last * sb->pitch;
        } else if (q.col[i] && !q.swz[i] && !q.pad[i] && !q.nopad[i] && es <= 4 && last > 0 &&
                   (last * (int64_t)es) % 8 == 0) {
            sb->form = F_PAD;
            sb->pitch = last + 4 / (int64_t)es;
            elems = elems / last * sb->pitch;
        }
        sb->bytes = elems * (int64_t)es;
        if (sb->bytes < 1)
            sb->bytes = 1;
        sb->first = sb->last = -1;
        sb->stage_fill = lower_battr(b, "lower.stage_fill") != NULL;
        int idx = 0;
        for (tilec_ir_stmt_t *s = k->body; s; s = s->next, idx++) {
            if (!lower_uses(s, b))
                continue;
            if (sb->first < 0)
                sb->overwrite_first = lower_full_overwrite(s, b), sb->first = idx;
            sb->last = idx;
        }
    }
    /* in order of first use (unused buffers last) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int a = v[j - 1].first < 0 ? 1 << 30 : v[j - 1].first, b = v[j].first < 0 ? 1 << 30 : v[j].first;
            if (a <= b)
                break;
            sbuf_t t = v[j - 1];
            v[j - 1] = v[j];
            v[j] = t;
        }
    int64_t top = 0;
    for (int i = 0; i < n; i++) {
        if (v[i].first < 0)
            v[i].first = v[i].last = -2; /* never used: lives nowhere, shares nothing */
        place(v, n, &v[i]);
        if (v[i].off + v[i].bytes > top)
            top = v[i].off + v[i].bytes;
    }
    if (top > (int64_t)c->t->smem_optin) {
        rc = lower_fail(c, TILEC_LOWER_E_UNSUPPORTED,
                        "shared memory: the kernel needs %lld bytes, the target allows %u",
                        (long long)top, c->t->smem_optin);
        goto done;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        rc = make_layout(c, &v[i]);
        if (rc == 0 && v[i].reuse >= 0)
            rc = lower_battr_str(c, v[i].b, "lower.reuse_of", v[v[i].reuse].b->name);
        /* the program reads the zero start of on-chip memory (the
         * interpreter's): the dialect zeroes the buffer at kernel entry */
        if (rc == 0 && v[i].first >= 0 && !v[i].overwrite_first && !v[i].stage_fill)
            rc = lower_battr_int(c, v[i].b, "lower.zero", 1);
    }
done:
    free(q.swz);
    free(q.pad);
    free(q.noswz);
    free(q.nopad);
    free(q.col);
    free(v);
    return rc;
}
