/*
 * plugin-sdk/src/lower_layout.c — layout inference: which fragments live
 * in registers, in which thread/value layout.
 *
 * Candidates.  A fragment that gemms in uniform code accumulate into, all
 * with one plan (lower_gemm_warp's attributes), is an accumulator in that
 * plan's layout: the target instruction's accumulator modes repeated over
 * the group grid and the instruction tiles ("mma.acc"), or each thread a
 * strided block of C ("simt.acc").  Without any gemm accumulator, 2-D
 * fragments get rows over subgroups ("rows_over_warps": subgroup w holds
 * rows w, w + nw, ...; lane l holds ev consecutive columns every L*ev),
 * all with the first one's row count (with TILEC_TARGET_ROWS_RAGGED also
 * rows whose length is not a multiple of the lanes: the last registers
 * of some lanes then hold nothing).  1-D fragments as long as the rows
 * are row vectors ("rows"): each thread holds the rows it owns, replicated
 * over the lanes that share a row, which needs each row inside one
 * subgroup (or one thread).  Local and var buffers are per thread
 * ("replicated": thread _r holds all of it).  Every register fragment of a
 * kernel shares the first accumulator's row map.
 *
 * The demotion fixpoint.  Registers support only what each thread can do
 * on the elements it owns: gemms accumulating in the same plan; fills of
 * the whole fragment; T.Parallel(M, N) nests that index accumulators
 * [i, j] and row vectors [i]; T.Parallel(M) nests over row vectors that
 * write no memory; reduce along dim 1 of an accumulator into a row vector
 * (the thread's own columns, then a shuffle across the lanes of a row);
 * copies between whole row vectors, and of a whole fragment to or from a
 * buffer of its shape.  Anything else demotes the fragments it mentions
 * to shared memory (no REGS layout: lower_smem places them), and the
 * checks run again until nothing changes.  This is the decision CUDA's
 * generator made in its own arrays (rf_* / plan_regfrags), now written
 * into the IR where the verifier checks the maps are one to one.
 *
 * Register A operands.  Where the target's instruction takes A from
 * registers (TILEC_TARGET_MMA_A_REGS: wgmma), a 16-bit fragment P that
 * exactly two statements touch — a whole copy from a register accumulator
 * R, then, later in the same statement list with nothing between
 * mentioning P or writing R, one gemm reading P as its untransposed A with
 * one group across N — lives in registers too ("mma.a": the layout R has,
 * which is the accumulator layout of the instruction with n = P's
 * columns, so its registers are the A fragments of the gemm's k-steps and
 * the copy moves nothing between threads).  Flash attention's P then
 * never goes through shared memory, and the barrier pass, which only sees
 * shared buffers, puts no barriers around it.  Any other use demotes it.
 *
 * Attributes: reduce gets lower.reduce ("shuffle", "thread" or "block")
 * and lower.width (lanes combined); T.Parallel nests whose iterations run
 * on the threads owning register elements get lower.dist = "regs".
 */
#include <stdlib.h>
#include <string.h>

#include "lower_internal.h"

enum { RF_NONE = 0, RF_ACC, RF_ROW, RF_AOP };
enum { FORM_MMA = 1, FORM_SIMT, FORM_WARPROWS };

typedef struct fplan {
    int form;
    const tilec_target_mma_t *mma;
    int64_t M, N;
    int gm, gn, mt, nt;
    int64_t inst_n;          /* MMA */
    int ty, tx;              /* SIMT */
    int L, nw, ev;           /* WARPROWS: lanes, subgroups, consecutive columns */
    int64_t per;             /* WARPROWS: registers a lane gives a row (ragged: the most) */
} fplan_t;

typedef struct lay {
    lower_ctx_t *c;
    int nb;
    int *rf;                 /* [nbufs] RF_* */
    fplan_t *plan;           /* [nbufs] RF_ACC plans */
    fplan_t rows;            /* the row map */
    int have_rows;
} lay_t;

static int rows_eq(const fplan_t *a, const fplan_t *b)
{
    if (a->form != b->form || a->M != b->M)
        return 0;
    switch (a->form) {
    case FORM_MMA:
        return a->mma->m == b->mma->m && a->mma->threads == b->mma->threads &&
               a->mma->nrow_modes == b->mma->nrow_modes &&
               !memcmp(a->mma->row_modes, b->mma->row_modes, sizeof a->mma->row_modes) &&
               a->gm == b->gm && a->gn == b->gn && a->mt == b->mt;
    case FORM_SIMT: return a->ty == b->ty && a->tx == b->tx;
    default: return a->nw == b->nw && a->L == b->L;
    }
}

static int plan_eq(const fplan_t *a, const fplan_t *b)
{
    return rows_eq(a, b) && a->N == b->N && a->nt == b->nt && a->inst_n == b->inst_n &&
           a->tx == b->tx && a->ev == b->ev &&
           (a->form != FORM_MMA || !memcmp(a->mma->col_modes, b->mma->col_modes, sizeof a->mma->col_modes));
}

/* threads sharing one row of the row map (the width of a row reduction);
 * 0 when a row spans more than one subgroup */
static int row_width(const lay_t *L, const fplan_t *p)
{
    const tilec_target_desc_t *t = L->c->t;
    int w = 1;
    switch (p->form) {
    case FORM_MMA:
        if (p->gn != 1)
            return 0;
        for (int j = 0; j < p->mma->ncol_modes; j++)
            if (p->mma->col_modes[j].thread_stride) {
                int e = p->mma->col_modes[j].extent;
                w *= e > 0 ? e : 1;
            }
        break;
    case FORM_SIMT: w = p->tx; break;
    default: w = p->L; break;
    }
    if (w > 1 && (t->subgroup_size < w || t->subgroup_size % w || !(t->flags & TILEC_TARGET_SUBGROUP_SHUFFLE)))
        return 0;
    return w;
}

/* may a register fragment hold b's dtype on this target? */
static int regs_dtype_ok(const lay_t *L, const tilec_ir_buffer_t *b)
{
    const tilec_target_desc_t *t = L->c->t;
    if (tilec_target_field_ok(t, frag_dtypes) && t->frag_dtypes)
        return b->dtype >= 0 && b->dtype < 32 && (t->frag_dtypes >> b->dtype & 1u);
    return tilec_dtype_size(b->dtype) <= 4;
}

static int gemm_plan(lay_t *L, const tilec_ir_stmt_t *s, fplan_t *p)
{
    lower_ctx_t *c = L->c;
    memset(p, 0, sizeof *p);
    const tilec_ir_attr_t *m = lower_sattr(s, "lower.mma");
    const tilec_ir_buffer_t *C = s->u.gemm.c;
    if (!m || m->kind != TILEC_ATTR_STRING)
        return 0;
    p->M = lower_dim(C, 0);
    p->N = lower_dim(C, 1);
    if (strcmp(m->s, "simt") == 0) {
        const tilec_ir_attr_t *g = lower_sattr(s, "lower.simt");
        if (!g || g->kind != TILEC_ATTR_TUPLE || g->n != 2)
            return 0;
        p->form = FORM_SIMT;
        p->ty = (int)g->tuple[0];
        p->tx = (int)g->tuple[1];
        return 1;
    }
    const tilec_ir_attr_t *w = lower_sattr(s, "lower.warp"), *sh = lower_sattr(s, "lower.mma_shape"),
                          *ti = lower_sattr(s, "lower.mma_tiles");
    p->mma = lower_gemm_mma(c, s);
    if (!p->mma || !w || !sh || !ti || w->n != 2 || sh->n != 3 || ti->n != 2)
        return 0;
    p->form = FORM_MMA;
    p->gm = (int)w->tuple[0];
    p->gn = (int)w->tuple[1];
    p->inst_n = sh->tuple[1];
    p->mt = (int)ti->tuple[0];
    p->nt = (int)ti->tuple[1];
    return 1;
}

static int warprows_plan(lay_t *L, const tilec_ir_buffer_t *b, fplan_t *p)
{
    const tilec_target_desc_t *t = L->c->t;
    int lanes = t->subgroup_size > 0 && (t->flags & TILEC_TARGET_SUBGROUP_SHUFFLE) ? t->subgroup_size : 1;
    int64_t R = lower_dim(b, 0), C = lower_dim(b, 1);
    int T = L->c->nthreads;
    /* ragged rows: every lane still holds a column of each row */
    int ragged = C % lanes && C > lanes && (t->flags & TILEC_TARGET_ROWS_RAGGED);
    if (T % lanes || R <= 0 || C <= 0 || (C % lanes && !ragged))
        return 0;
    memset(p, 0, sizeof *p);
    p->form = FORM_WARPROWS;
    p->M = R;
    p->N = C;
    p->L = lanes;
    p->nw = T / lanes;
    p->per = (C + lanes - 1) / lanes;
    /* ev consecutive columns a lane: the widest that divides the row and
     * costs no register over per (a ragged row: ceil of chunks per lane) */
    p->ev = 1;
    for (int ev = t->flags & TILEC_TARGET_ROWS_INTERLEAVED ? 1 : 8; ev > 1 && p->ev == 1; ev /= 2)
        if (C % ev == 0 && p->per % ev == 0 && C / ev >= lanes && (C / ev + lanes - 1) / lanes * ev == p->per)
            p->ev = ev;
    p->mt = (int)((R + p->nw - 1) / p->nw);
    if (p->mt * p->per > t->frag_regs)
        return 0;
    return 1;
}

/* The plan of fragment a as the register A operand of gemm s: the
 * accumulator plan of s's instruction with n = a's columns; 0 when the
 * instruction or the gemm cannot take it so. */
static int aop_plan(lay_t *L, const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *a, fplan_t *q)
{
    fplan_t p;
    if (s->kind != TILEC_ST_GEMM || s->u.gemm.a != a || s->u.gemm.b == a || s->u.gemm.c == a || s->u.gemm.trans_a ||
        s->u.gemm.a_lead || a->scope != TILEC_SCOPE_FRAGMENT || a->ndim != 2 || !gemm_plan(L, s, &p) ||
        p.form != FORM_MMA || !(p.mma->flags & TILEC_TARGET_MMA_A_REGS) || p.gn != 1 || (int)a->dtype != (int)p.mma->a_dtype ||
        tilec_dtype_size(a->dtype) != 2)
        return 0;
    int64_t K = lower_dim(a, 1);
    if (lower_dim(a, 0) != p.M || K <= 0 || K % p.mma->k || K > p.mma->n || (p.mma->n_step && K % p.mma->n_step))
        return 0;
    *q = p;
    q->N = q->inst_n = K;
    q->nt = 1;
    return 1;
}

typedef struct aq {
    const tilec_ir_buffer_t *b;
    int n;
} aq_t;

static void count_cb(void *user, tilec_ir_stmt_t *s, tilec_ir_buffer_t *b, int how)
{
    aq_t *q = user;
    (void)s;
    (void)how;
    q->n += b == q->b;
}

/* accesses of b in s; a walk that fails counts as many (as lower_uses
 * answers read and write), so a pair is never taken on a partial count */
static int count_in(tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b)
{
    aq_t q = {b, 0};
    if (lower_accesses(s, count_cb, &q) != 0)
        return 1 << 20;
    return q.n;
}

/* is there, in list (or a list nested in it), the whole copy from a
 * register accumulator of b's plan into b, then the gemm reading b as A
 * in that plan, with nothing between mentioning b or writing the source? */
static int aop_pair(lay_t *L, tilec_ir_stmt_t *list, const tilec_ir_buffer_t *b, int depth)
{
    if (depth > TILEC_IR_MAX_DEPTH)
        return 0;
    for (tilec_ir_stmt_t *s = list; s; s = s->next) {
        if (s->kind == TILEC_ST_FOR && aop_pair(L, s->u.loop.body, b, depth + 1))
            return 1;
        if (s->kind == TILEC_ST_IF &&
            (aop_pair(L, s->u.cond.then, b, depth + 1) || aop_pair(L, s->u.cond.els, b, depth + 1)))
            return 1;
        if (s->kind != TILEC_ST_COPY || s->u.copy.dst.buf != b)
            continue;
        const tilec_ir_buffer_t *r = s->u.copy.src.buf;
        if (L->rf[r->id] != RF_ACC || !plan_eq(&L->plan[r->id], &L->plan[b->id]) ||
            !lower_region_whole(&s->u.copy.src) || !lower_region_whole(&s->u.copy.dst))
            return 0;
        for (tilec_ir_stmt_t *t = s->next; t; t = t->next) {
            fplan_t q;
            if (t->kind == TILEC_ST_GEMM && t->u.gemm.a == b)
                return aop_plan(L, t, b, &q) && plan_eq(&q, &L->plan[b->id]);
            if (count_in(t, b) || (lower_uses(t, r) & LOWER_WRITE))
                return 0;
        }
        return 0;
    }
    return 0;
}

/* demotes the register A operands that are no longer such a pair */
static int aop_check(lay_t *L)
{
    tilec_ir_kernel_t *k = L->c->k;
    int n = 0;
    for (int i = k->nparams; i < L->nb; i++) {
        if (L->rf[i] != RF_AOP)
            continue;
        int uses = 0;
        for (tilec_ir_stmt_t *s = k->body; s; s = s->next)
            uses += count_in(s, k->bufs[i]);
        if (uses != 2 || !aop_pair(L, k->body, k->bufs[i], 0))
            L->rf[i] = RF_NONE, n++;
    }
    return n;
}

static int seed_aop_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    lay_t *L = w->user;
    fplan_t q;
    if (s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PARALLEL)
        return TILEC_WALK_SKIP;
    if (s->kind == TILEC_ST_GEMM && L->rf[s->u.gemm.a->id] == RF_NONE && aop_plan(L, s, s->u.gemm.a, &q) &&
        rows_eq(&q, &L->rows)) {
        L->rf[s->u.gemm.a->id] = RF_AOP;
        L->plan[s->u.gemm.a->id] = q;
    }
    return TILEC_WALK_CONTINUE;
}

/* ---- demotion ----------------------------------------------------------------- */

static int demote(lay_t *L, const tilec_ir_buffer_t *b)
{
    if (!b || !L->rf[b->id])
        return 0;
    L->rf[b->id] = RF_NONE;
    return 1;
}

typedef struct dm {
    lay_t *L;
    int n;
} dm_t;

static void demote_cb(void *user, tilec_ir_stmt_t *s, tilec_ir_buffer_t *b, int how)
{
    dm_t *d = user;
    (void)s;
    (void)how;
    d->n += demote(d->L, b);
}

/* demotes every register fragment statement s (with its nest) mentions */
static int demote_stmt(lay_t *L, tilec_ir_stmt_t *s)
{
    dm_t d = {L, 0};
    lower_accesses(s, demote_cb, &d);
    return d.n;
}

static int demote_expr_pre(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    dm_t *d = w->user;
    if (e->kind == TILEC_EX_LOAD)
        d->n += demote(d->L, e->u.load.buf);
    return TILEC_WALK_CONTINUE;
}

static int demote_expr(lay_t *L, tilec_ir_expr_t *e)
{
    dm_t d = {L, 0};
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.expr_pre = demote_expr_pre;
    w.user = &d;
    tilec_ir_walk_expr(&w, &e);
    return d.n;
}

static int demote_region_bases(lay_t *L, const tilec_ir_region_t *r)
{
    int n = 0;
    for (int d = 0; d < r->buf->ndim; d++)
        n += demote_expr(L, r->base[d]);
    return n;
}

static int per_thread(const tilec_ir_buffer_t *b)
{
    return b->scope == TILEC_SCOPE_LOCAL || b->scope == TILEC_SCOPE_VAR;
}

/* ---- T.Parallel nests ------------------------------------------------------------ */

typedef struct nest {
    lay_t *L;
    tilec_ir_stmt_t *loop[2];
    int n;
    const tilec_ir_buffer_t *acc;
    int writes_mem, bad, mentions;
} nest_t;

static int is_var(const tilec_ir_expr_t *e, const tilec_ir_var_t *v)
{
    return e && e->kind == TILEC_EX_VAR && e->u.var == v;
}

static void nest_access(nest_t *nn, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    lay_t *L = nn->L;
    int k = L->rf[b->id];
    if (!k)
        return;
    nn->mentions = 1;
    if (k == RF_AOP) {
        nn->bad = 1; /* only its copy and its gemm touch a register A operand */
        return;
    }
    if (k == RF_ROW) {
        if (!is_var(idx[0], nn->loop[0]->u.loop.var))
            nn->bad = 1;
        return;
    }
    if (nn->n != 2 || !is_var(idx[0], nn->loop[0]->u.loop.var) || !is_var(idx[1], nn->loop[1]->u.loop.var)) {
        nn->bad = 1;
        return;
    }
    if (!nn->acc)
        nn->acc = b;
    else if (!plan_eq(&L->plan[b->id], &L->plan[nn->acc->id]))
        nn->bad = 1;
}

static int nest_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    nest_t *nn = w->user;
    if (e->kind == TILEC_EX_LOAD)
        nest_access(nn, e->u.load.buf, e->u.load.idx);
    return TILEC_WALK_CONTINUE;
}

static void mention_cb(void *user, tilec_ir_stmt_t *s, tilec_ir_buffer_t *b, int how)
{
    nest_t *nn = user;
    (void)s;
    (void)how;
    if (nn->L->rf[b->id])
        nn->bad = nn->mentions = 1;
}

static int nest_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    nest_t *nn = w->user;
    lay_t *L = nn->L;
    switch (s->kind) {
    case TILEC_ST_FOR:
    case TILEC_ST_IF:
    case TILEC_ST_ASSIGN:
    case TILEC_ST_SYNC:
    case TILEC_ST_HINT:
        return TILEC_WALK_CONTINUE; /* their expressions are checked by nest_expr */
    case TILEC_ST_STORE: {
        const tilec_ir_buffer_t *b = s->u.store.buf;
        if (L->rf[b->id] == RF_ROW && nn->n != 1)
            nn->bad = 1; /* every column of a row would write it */
        nest_access(nn, b, s->u.store.idx);
        if (!L->rf[b->id] && !per_thread(b))
            nn->writes_mem = 1;
        return TILEC_WALK_CONTINUE;
    }
    default: { /* tile operations run serially in the thread */
        tilec_ir_stmt_t one = *s;
        one.next = NULL;
        lower_accesses(&one, mention_cb, nn);
        nn->writes_mem = 1;
        return TILEC_WALK_SKIP;
    }
    }
}

static void wpt_cb(void *user, tilec_ir_stmt_t *s, tilec_ir_buffer_t *b, int how)
{
    (void)s;
    if ((how & LOWER_WRITE) && per_thread(b))
        *(int *)user = 1;
}

/* 1: element nest, 2: row nest, 0: mentions no register fragment, -1: neither */
static int nest_kind(lay_t *L, tilec_ir_stmt_t *s, nest_t *nn)
{
    memset(nn, 0, sizeof *nn);
    nn->L = L;
    nn->loop[0] = s;
    nn->n = 1;
    tilec_ir_stmt_t *b = s->u.loop.body;
    if (b && !b->next && b->kind == TILEC_ST_FOR && b->u.loop.kind == TILEC_LOOP_PARALLEL) {
        nn->loop[1] = b;
        nn->n = 2;
    }
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = nest_stmt;
    w.expr_pre = nest_expr;
    w.user = nn;
    if (nn->n == 2)
        tilec_ir_walk_expr(&w, &nn->loop[1]->u.loop.extent);
    tilec_ir_walk_block(&w, &nn->loop[nn->n - 1]->u.loop.body);
    if (!nn->mentions)
        return 0;
    int64_t e0 = -1, e1 = -1;
    tilec_ir_is_const_int(nn->loop[0]->u.loop.extent, &e0);
    if (nn->n == 2)
        tilec_ir_is_const_int(nn->loop[1]->u.loop.extent, &e1);
    if (!nn->bad && nn->n == 2 && nn->acc && e0 == L->rows.M && e1 == L->plan[nn->acc->id].N)
        return 1;
    if (!nn->bad && nn->n == 1 && !nn->acc && e0 == L->rows.M && !nn->writes_mem)
        return 2;
    return -1;
}

/* ---- T.Parallel(M) nests reading a register fragment at [i, c] ---------------------- */

typedef struct colnest {
    lay_t *L;
    const tilec_ir_var_t *v;     /* the nest's variable */
    const tilec_ir_buffer_t *frag; /* the first register fragment read at [v, c] */
    int64_t col;
    int bad;
    tilec_ir_var_t *j;           /* rewrite: the new column variable */
} colnest_t;

static int col_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    colnest_t *cn = w->user;
    lay_t *L = cn->L;
    if (e->kind == TILEC_EX_LOAD && L->rf[e->u.load.buf->id] == RF_ROW && !is_var(e->u.load.idx[0], cn->v))
        demote(L, e->u.load.buf); /* the nest would demote it anyway */
    if (e->kind != TILEC_EX_LOAD || L->rf[e->u.load.buf->id] != RF_ACC)
        return TILEC_WALK_CONTINUE;
    const tilec_ir_buffer_t *b = e->u.load.buf;
    int64_t col;
    if (!is_var(e->u.load.idx[0], cn->v) || !tilec_ir_is_const_int(e->u.load.idx[1], &col) || col < 0 ||
        col >= lower_dim(b, 1) || (cn->frag && (col != cn->col || !plan_eq(&L->plan[b->id], &L->plan[cn->frag->id]))))
        cn->bad = 1;
    else if (!cn->frag)
        cn->frag = b, cn->col = col;
    return TILEC_WALK_CONTINUE;
}

static int col_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    colnest_t *cn = w->user;
    if (s->kind == TILEC_ST_STORE && cn->L->rf[s->u.store.buf->id] == RF_ACC)
        cn->bad = 1;
    else if (s->kind == TILEC_ST_STORE && cn->L->rf[s->u.store.buf->id] == RF_ROW)
        demote(cn->L, s->u.store.buf); /* each column would write it; the nest would demote it anyway */
    else if (s->kind != TILEC_ST_STORE && s->kind != TILEC_ST_ASSIGN && s->kind != TILEC_ST_IF)
        cn->bad = 1; /* loops and tile operations: the nest stays as it is */
    return TILEC_WALK_CONTINUE;
}

/* the matching loads read column j instead of the constant */
static int col_subst(tilec_ir_walk_t *w, tilec_ir_expr_t **slot)
{
    colnest_t *cn = w->user;
    tilec_ir_expr_t *e = *slot;
    lower_ctx_t *c = cn->L->c;
    if (e->kind != TILEC_EX_LOAD || cn->L->rf[e->u.load.buf->id] != RF_ACC)
        return TILEC_WALK_CONTINUE;
    tilec_ir_expr_t *idx[2] = {e->u.load.idx[0], tilec_ir_varref(c->a, cn->j)};
    tilec_ir_expr_t *n = idx[1] ? tilec_ir_load(c->a, e->u.load.buf, idx) : NULL;
    if (!n)
        return lower_oom(c);
    *slot = n;
    return TILEC_WALK_CONTINUE;
}

/* With TILEC_TARGET_REGS_LIKE_ACC: T.Parallel(M) nest s, whose register
 * fragments are register accumulators read at [i, c] (one column c, one
 * plan; no stores to them, no inner loops or tile operations), becomes
 * T.Parallel(M, N) with its body under `if j == c` and the reads at
 * [i, j], which the owners of those elements run (instead of demoting the
 * fragments; row vectors it writes, or reads elsewhere than at [i], are
 * demoted as the nest would demote them).  1 when rewritten. */
static int widen_column_nest(lay_t *L, tilec_ir_stmt_t *s)
{
    lower_ctx_t *c = L->c;
    int64_t e;
    tilec_ir_stmt_t *body = s->u.loop.body;
    if (!(c->t->flags & TILEC_TARGET_REGS_LIKE_ACC) || !tilec_ir_is_const_int(s->u.loop.extent, &e) ||
        e != L->rows.M || !body || (body->kind == TILEC_ST_FOR && !body->next))
        return 0;
    colnest_t cn = {.L = L, .v = s->u.loop.var};
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = col_stmt;
    w.expr_pre = col_expr;
    w.user = &cn;
    if (tilec_ir_walk_block(&w, &body) != 0 || cn.bad || !cn.frag)
        return 0;
    cn.j = lower_new_loop_var(c, "_col", s->u.loop.var->name ? s->u.loop.var->name : "j");
    tilec_ir_stmt_t *in = tilec_ir_stmt(c->a, TILEC_ST_FOR), *cond = tilec_ir_stmt(c->a, TILEC_ST_IF);
    tilec_ir_expr_t *jr = cn.j ? tilec_ir_varref(c->a, cn.j) : NULL, *cv = lower_int(c, cn.col);
    if (!cn.j || !in || !cond || !jr || !cv)
        return lower_oom(c), 0;
    memset(&w, 0, sizeof w);
    w.expr_post = col_subst;
    w.user = &cn;
    if (tilec_ir_walk_block(&w, &body) != 0)
        return 0;
    cond->u.cond.cond = tilec_ir_binary(c->a, TILEC_BIN_EQ, jr, cv);
    cond->u.cond.then = body;
    in->u.loop.var = cn.j;
    in->u.loop.extent = lower_int(c, lower_dim(cn.frag, 1));
    in->u.loop.kind = TILEC_LOOP_PARALLEL;
    in->u.loop.body = cond;
    if (!cond->u.cond.cond || !in->u.loop.extent)
        return lower_oom(c), 0;
    s->u.loop.body = in;
    return 1;
}

/* the region's non-unit extents equal b's shape */
static int region_fits(const tilec_ir_region_t *r, const tilec_ir_buffer_t *b)
{
    int n = 0;
    for (int d = 0; d < r->buf->ndim; d++) {
        if (r->extent[d] == 1)
            continue;
        if (n >= b->ndim || r->extent[d] != lower_dim(b, n))
            return 0;
        n++;
    }
    for (; n < b->ndim; n++)
        if (lower_dim(b, n) != 1)
            return 0;
    return 1;
}

/* one pass over uniform code; returns the number of demotions */
static int check_list(lay_t *L, tilec_ir_stmt_t *s, int depth)
{
    int n = 0;
    if (depth > TILEC_IR_MAX_DEPTH)
        return 0;
    for (; s; s = s->next) {
        switch (s->kind) {
        case TILEC_ST_FOR:
            n += demote_expr(L, s->u.loop.extent);
            if (s->u.loop.kind != TILEC_LOOP_PARALLEL) {
                n += check_list(L, s->u.loop.body, depth + 1);
            } else {
                int wpt = 0;
                lower_accesses(s, wpt_cb, &wpt);
                nest_t nn;
                if (!wpt && nest_kind(L, s, &nn) < 0 && widen_column_nest(L, s))
                    n++; /* look at the widened nest again */
                else if (wpt || nest_kind(L, s, &nn) < 0)
                    n += demote_stmt(L, s);
            }
            break;
        case TILEC_ST_IF:
            n += demote_expr(L, s->u.cond.cond) + check_list(L, s->u.cond.then, depth + 1) +
                 check_list(L, s->u.cond.els, depth + 1);
            break;
        case TILEC_ST_COPY: {
            const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
            n += demote_region_bases(L, src) + demote_region_bases(L, dst);
            int rs = L->rf[src->buf->id], rd = L->rf[dst->buf->id], ok = 1;
            if (rd == RF_AOP && rs == RF_ACC)
                break; /* aop_check decides */
            if (rs && rd) {
                /* registers to registers only between row vectors; else
                 * the destination goes to shared memory first (a copy
                 * from registers to shared memory may serve) */
                if (!(rs == RF_ROW && rd == RF_ROW && lower_region_whole(src) && lower_region_whole(dst)))
                    n += demote(L, dst->buf);
                break;
            } else if (rs)
                ok = lower_region_whole(src) && !per_thread(dst->buf) && region_fits(dst, src->buf);
            else if (rd)
                ok = lower_region_whole(dst) && !per_thread(src->buf) && region_fits(src, dst->buf);
            if (!ok)
                n += demote(L, src->buf) + demote(L, dst->buf);
            break;
        }
        case TILEC_ST_FILL:
            n += demote_expr(L, s->u.fill.value) + demote_region_bases(L, &s->u.fill.dst);
            if (L->rf[s->u.fill.dst.buf->id] && !lower_region_whole(&s->u.fill.dst))
                n += demote(L, s->u.fill.dst.buf);
            break;
        case TILEC_ST_GEMM: {
            const tilec_ir_buffer_t *cb = s->u.gemm.c;
            fplan_t p;
            if (L->rf[s->u.gemm.a->id] != RF_AOP) /* aop_check decides */
                n += demote(L, s->u.gemm.a);
            n += demote(L, s->u.gemm.b);
            if (L->rf[cb->id] &&
                (L->rf[cb->id] != RF_ACC || !gemm_plan(L, s, &p) || !plan_eq(&p, &L->plan[cb->id])))
                n += demote(L, cb);
            break;
        }
        case TILEC_ST_REDUCE: {
            const tilec_ir_buffer_t *a = s->u.reduce.src, *b = s->u.reduce.dst;
            if ((L->rf[a->id] || L->rf[b->id]) &&
                !(L->rf[a->id] == RF_ACC && L->rf[b->id] == RF_ROW && s->u.reduce.dim == 1 &&
                  row_width(L, &L->plan[a->id]) > 0))
                n += demote(L, a) + demote(L, b);
            break;
        }
        case TILEC_ST_SYNC:
        case TILEC_ST_HINT:
            break;
        default:
            n += demote_stmt(L, s);
            break;
        }
    }
    return n;
}

/* ---- seeds ------------------------------------------------------------------------ */

static int seed_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    lay_t *L = w->user;
    if (s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PARALLEL)
        return TILEC_WALK_SKIP;
    if (s->kind != TILEC_ST_GEMM)
        return TILEC_WALK_CONTINUE;
    const tilec_ir_buffer_t *cb = s->u.gemm.c;
    fplan_t p;
    if (cb->scope != TILEC_SCOPE_FRAGMENT || !regs_dtype_ok(L, cb) || !gemm_plan(L, s, &p) ||
        (p.form == FORM_SIMT && (L->c->t->flags & TILEC_TARGET_SIMT_ACC_SHARED)))
        L->rf[cb->id] = -1;
    else if (L->rf[cb->id] == RF_NONE)
        L->rf[cb->id] = RF_ACC, L->plan[cb->id] = p;
    else if (L->rf[cb->id] == RF_ACC && !plan_eq(&p, &L->plan[cb->id]))
        L->rf[cb->id] = -1;
    return TILEC_WALK_CONTINUE;
}

static void seed(lay_t *L)
{
    tilec_ir_kernel_t *k = L->c->k;
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = seed_stmt;
    w.user = L;
    tilec_ir_walk_block(&w, &k->body);
    /* -1 marks a fragment some gemm cannot accumulate in registers */
    int *bad = calloc((size_t)L->nb + 1, sizeof *bad);
    if (!bad) {
        lower_oom(L->c);
        return;
    }
    for (int i = 0; i < L->nb; i++)
        if (L->rf[i] < 0)
            bad[i] = 1, L->rf[i] = RF_NONE;
    for (int i = k->nparams; i < L->nb; i++) {
        if (L->rf[i] != RF_ACC)
            continue;
        if (!L->have_rows) {
            L->rows = L->plan[i];
            L->have_rows = 1;
        } else if (!rows_eq(&L->plan[i], &L->rows)) {
            L->rf[i] = RF_NONE;
        }
    }
    if (!L->have_rows) {
        for (int i = k->nparams; i < L->nb; i++) {
            const tilec_ir_buffer_t *b = k->bufs[i];
            fplan_t p;
            if (bad[i] || b->scope != TILEC_SCOPE_FRAGMENT || b->ndim != 2 ||
                !regs_dtype_ok(L, b) || !warprows_plan(L, b, &p) ||
                (L->have_rows && !rows_eq(&p, &L->rows)))
                continue;
            if (!L->have_rows) {
                L->rows = p;
                L->have_rows = 1;
            }
            L->rf[i] = RF_ACC;
            L->plan[i] = p;
        }
    }
    /* with TILEC_TARGET_REGS_LIKE_ACC, 2-D fragments shaped like the first
     * accumulator take its plan */
    int first = -1;
    for (int i = k->nparams; i < L->nb && first < 0 && (L->c->t->flags & TILEC_TARGET_REGS_LIKE_ACC); i++)
        if (L->rf[i] == RF_ACC && L->plan[i].form != FORM_WARPROWS)
            first = i;
    for (int i = k->nparams; first >= 0 && i < L->nb; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (L->rf[i] == RF_NONE && !bad[i] && b->scope == TILEC_SCOPE_FRAGMENT && b->ndim == 2 &&
            regs_dtype_ok(L, b) && lower_dim(b, 0) == L->plan[first].M && lower_dim(b, 1) == L->plan[first].N) {
            L->rf[i] = RF_ACC;
            L->plan[i] = L->plan[first];
        }
    }
    free(bad);
    if (L->have_rows && row_width(L, &L->rows) > 0)
        for (int i = k->nparams; i < L->nb; i++) {
            const tilec_ir_buffer_t *b = k->bufs[i];
            if (b->scope == TILEC_SCOPE_FRAGMENT && b->ndim == 1 && regs_dtype_ok(L, b) &&
                lower_dim(b, 0) == L->rows.M && L->rf[i] == RF_NONE)
                L->rf[i] = RF_ROW;
        }
}

/* ---- the layout expressions ------------------------------------------------------------ */

typedef struct lb {
    lower_ctx_t *c;
    tilec_ir_layout_t *lay;
} lb_t;

static tilec_ir_expr_t *iv(lb_t *b, int d)
{
    tilec_ir_expr_t *e = tilec_ir_varref(b->c->a, d < 0 ? b->lay->rvar : b->lay->ivar[d]);
    if (!e)
        lower_oom(b->c);
    return e;
}

#define OP(op, x, y) lower_op(c, TILEC_BIN_##op, x, y)
#define OPI(op, x, y) lower_opi(c, TILEC_BIN_##op, x, y)

static int32_t mode_ext(const tilec_target_mode_t *m, int n, int j, int64_t len)
{
    if (m[j].extent > 0)
        return m[j].extent;
    int64_t inner = 1;
    for (int i = 0; i < n; i++)
        if (i != j && m[i].extent > 0)
            inner *= m[i].extent;
    return (int32_t)(len / inner);
}

/* thread and register contributions of coordinate x along one axis; with
 * only_threads, x counts only the thread modes (a replica index) */
static void axis(lower_ctx_t *c, const tilec_target_mode_t *m, int n, int64_t len, tilec_ir_expr_t *x,
                 int only_threads, tilec_ir_expr_t **thr, tilec_ir_expr_t **reg, int64_t *rcount)
{
    int64_t pre = 1, rpre = 1;
    for (int j = 0; j < n; j++) {
        int32_t e = mode_ext(m, n, j, len);
        if (only_threads && !m[j].thread_stride)
            continue;
        tilec_ir_expr_t *co = OPI(FLOORMOD, OPI(FLOORDIV, x, pre), e);
        pre *= e;
        if (m[j].thread_stride)
            *thr = OP(ADD, *thr, OPI(MUL, co, m[j].thread_stride));
        if (reg && m[j].reg_stride) {
            *reg = OP(ADD, *reg, OPI(MUL, co, rpre));
            rpre *= e;
        }
    }
    if (rcount)
        *rcount = rpre;
}

static int regs_layout(lower_ctx_t *c, tilec_ir_buffer_t *b, const char *name, int threads,
                       int64_t nlocal, int replicate, lb_t *out)
{
    tilec_ir_layout_t *lay = tilec_ir_layout_new(c->a, TILEC_LAYOUT_REGS, name, b->ndim);
    if (!lay)
        return lower_oom(c);
    lay->threads = threads;
    lay->nlocal = (int)nlocal;
    lay->replicate = replicate;
    out->c = c;
    out->lay = lay;
    b->layout = lay;
    return 0;
}

static void acc_layout(lay_t *L, tilec_ir_buffer_t *b, const fplan_t *p, const char *mma_name)
{
    lower_ctx_t *c = L->c;
    int T = c->nthreads;
    lb_t B = {NULL, NULL};
    if (p->form == FORM_MMA) {
        const tilec_target_mma_t *mm = p->mma;
        int64_t WM = p->M / p->gm, WN = p->N / p->gn, rpt = mm->m * p->inst_n / mm->threads;
        if (regs_layout(c, b, mma_name, T, (int64_t)p->mt * p->nt * rpt, 1, &B))
            return;
        tilec_ir_expr_t *i0 = iv(&B, 0), *i1 = iv(&B, 1);
        tilec_ir_expr_t *grp = OP(ADD, OPI(MUL, lower_divb(c, i0, WM, p->M), p->gn), lower_divb(c, i1, WN, p->N));
        tilec_ir_expr_t *rr = lower_modb(c, i0, WM, p->M), *cc = lower_modb(c, i1, WN, p->N);
        tilec_ir_expr_t *thr = OPI(MUL, grp, mm->threads), *reg = lower_int(c, 0);
        tilec_ir_expr_t *r = lower_modb(c, rr, mm->m, WM), *cl = lower_modb(c, cc, p->inst_n, WN);
        axis(c, mm->row_modes, mm->nrow_modes, mm->m, r, 0, &thr, NULL, NULL);
        /* registers: the modes' own strides */
        int64_t pre = 1;
        for (int j = 0; j < mm->nrow_modes; j++) {
            int32_t e = mode_ext(mm->row_modes, mm->nrow_modes, j, mm->m);
            reg = OP(ADD, reg, OPI(MUL, OPI(FLOORMOD, OPI(FLOORDIV, r, pre), e), mm->row_modes[j].reg_stride));
            pre *= e;
        }
        pre = 1;
        for (int j = 0; j < mm->ncol_modes; j++) {
            int32_t e = mode_ext(mm->col_modes, mm->ncol_modes, j, p->inst_n);
            tilec_ir_expr_t *co = OPI(FLOORMOD, OPI(FLOORDIV, cl, pre), e);
            reg = OP(ADD, reg, OPI(MUL, co, mm->col_modes[j].reg_stride));
            thr = OP(ADD, thr, OPI(MUL, co, mm->col_modes[j].thread_stride));
            pre *= e;
        }
        tilec_ir_expr_t *tile = OP(ADD, OPI(MUL, lower_divb(c, rr, mm->m, WM), p->nt), lower_divb(c, cc, p->inst_n, WN));
        B.lay->thread = thr;
        B.lay->local = OP(ADD, OPI(MUL, tile, rpt), reg);
    } else if (p->form == FORM_SIMT) {
        int64_t tm = p->M / p->ty, tn = p->N / p->tx;
        if (regs_layout(c, b, "simt.acc", T, tm * tn, 1, &B))
            return;
        tilec_ir_expr_t *i0 = iv(&B, 0), *i1 = iv(&B, 1);
        B.lay->thread = OP(ADD, OPI(MUL, OPI(FLOORMOD, i0, p->ty), p->tx), OPI(FLOORMOD, i1, p->tx));
        B.lay->local = OP(ADD, OPI(MUL, OPI(FLOORDIV, i0, p->ty), tn), OPI(FLOORDIV, i1, p->tx));
    } else {
        int64_t per = p->per;
        if (regs_layout(c, b, "rows_over_warps", T, (int64_t)p->mt * per, 1, &B))
            return;
        tilec_ir_expr_t *i0 = iv(&B, 0), *i1 = iv(&B, 1);
        B.lay->thread = OP(ADD, OPI(MUL, OPI(FLOORMOD, i0, p->nw), p->L),
                           OPI(FLOORMOD, OPI(FLOORDIV, i1, p->ev), p->L));
        B.lay->local = OP(ADD, OP(ADD, OPI(MUL, OPI(FLOORDIV, i0, p->nw), per),
                                  OPI(MUL, OPI(FLOORDIV, i1, (int64_t)p->L * p->ev), p->ev)),
                          OPI(FLOORMOD, i1, p->ev));
    }
}

static void row_layout(lay_t *L, tilec_ir_buffer_t *b)
{
    lower_ctx_t *c = L->c;
    const fplan_t *p = &L->rows;
    int T = c->nthreads, w = row_width(L, p);
    lb_t B = {NULL, NULL};
    if (p->form == FORM_MMA) {
        const tilec_target_mma_t *mm = p->mma;
        int64_t WM = p->M / p->gm, rcount = 1;
        int64_t rpt = 1;
        for (int j = 0; j < mm->nrow_modes; j++)
            if (mm->row_modes[j].reg_stride)
                rpt *= mm->row_modes[j].extent;
        if (regs_layout(c, b, "rows", T, p->mt * rpt, w, &B))
            return;
        tilec_ir_expr_t *i0 = iv(&B, 0), *rr = lower_modb(c, i0, WM, p->M);
        tilec_ir_expr_t *thr = OPI(MUL, OPI(MUL, lower_divb(c, i0, WM, p->M), p->gn), mm->threads);
        tilec_ir_expr_t *reg = lower_int(c, 0);
        axis(c, mm->row_modes, mm->nrow_modes, mm->m, lower_modb(c, rr, mm->m, WM), 0, &thr, &reg, &rcount);
        axis(c, mm->col_modes, mm->ncol_modes, p->inst_n, iv(&B, -1), 1, &thr, NULL, NULL);
        B.lay->thread = thr;
        B.lay->local = OP(ADD, OPI(MUL, lower_divb(c, rr, mm->m, WM), rcount), reg);
    } else if (p->form == FORM_SIMT) {
        if (regs_layout(c, b, "rows", T, p->M / p->ty, w, &B))
            return;
        tilec_ir_expr_t *i0 = iv(&B, 0);
        B.lay->thread = OP(ADD, OPI(MUL, OPI(FLOORMOD, i0, p->ty), p->tx), iv(&B, -1));
        B.lay->local = OPI(FLOORDIV, i0, p->ty);
    } else {
        if (regs_layout(c, b, "rows", T, p->mt, w, &B))
            return;
        tilec_ir_expr_t *i0 = iv(&B, 0);
        B.lay->thread = OP(ADD, OPI(MUL, OPI(FLOORMOD, i0, p->nw), p->L), iv(&B, -1));
        B.lay->local = OPI(FLOORDIV, i0, p->nw);
    }
}

/* a per-thread buffer: every thread holds all of it */
static void local_layout(lay_t *L, tilec_ir_buffer_t *b)
{
    lower_ctx_t *c = L->c;
    int64_t n = tilec_ir_buffer_const_size(b);
    lb_t B = {NULL, NULL};
    if (n < 1 || n > (1 << 20) || regs_layout(c, b, "replicated", c->nthreads, n, c->nthreads, &B))
        return;
    tilec_ir_expr_t *lin = lower_int(c, 0);
    for (int d = 0; d < b->ndim; d++)
        lin = OP(ADD, OPI(MUL, lin, lower_dim(b, d)), iv(&B, d));
    B.lay->thread = iv(&B, -1);
    B.lay->local = lin;
}

/* ---- attributes on reduces and nests -------------------------------------------------------- */

static int mark_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    lay_t *L = w->user;
    lower_ctx_t *c = L->c;
    if (s->kind == TILEC_ST_FOR && s->u.loop.kind == TILEC_LOOP_PARALLEL) {
        nest_t nn;
        if (nest_kind(L, s, &nn) > 0 && lower_sattr_str(c, s, "lower.dist", "regs"))
            return -1;
        return TILEC_WALK_SKIP;
    }
    if (s->kind == TILEC_ST_REDUCE) {
        const tilec_ir_buffer_t *a = s->u.reduce.src;
        const char *how = "block";
        int width = c->nthreads;
        if (L->rf[a->id] == RF_ACC) {
            width = row_width(L, &L->plan[a->id]);
            how = width > 1 ? "shuffle" : "thread";
        }
        if (lower_sattr_str(c, s, "lower.reduce", how) || lower_sattr_int(c, s, "lower.width", width))
            return -1;
    }
    return TILEC_WALK_CONTINUE;
}

int lower_layout(lower_ctx_t *c)
{
    tilec_ir_kernel_t *k = c->k;
    lay_t L;
    memset(&L, 0, sizeof L);
    L.c = c;
    L.nb = k->nbufs;
    L.rf = calloc((size_t)L.nb + 1, sizeof *L.rf);
    L.plan = calloc((size_t)L.nb + 1, sizeof *L.plan);
    if (!L.rf || !L.plan) {
        free(L.rf);
        free(L.plan);
        return lower_oom(c);
    }
    seed(&L);
    if (L.have_rows) {
        tilec_ir_walk_t w;
        memset(&w, 0, sizeof w);
        w.stmt_pre = seed_aop_stmt;
        w.user = &L;
        tilec_ir_walk_block(&w, &k->body);
        /* register A operands first: one that some other statement
         * mentions goes to shared memory before that statement's checks
         * could demote the accumulators beside it */
        for (int n = 1; n > 0;) {
            n = aop_check(&L);
            n += check_list(&L, k->body, 0);
        }
    }
    int any_acc = 0;
    for (int i = k->nparams; i < L.nb; i++)
        any_acc |= L.rf[i] == RF_ACC;
    for (int i = k->nparams; i < L.nb && c->code == TILEC_LOWER_OK; i++) {
        tilec_ir_buffer_t *b = k->bufs[i];
        if (b->layout)
            continue; /* decided before (a .tir input): keep */
        if (L.rf[i] == RF_ACC || L.rf[i] == RF_AOP)
            acc_layout(&L, b, &L.plan[i], L.rf[i] == RF_AOP ? "mma.a" : "mma.acc");
        else if (L.rf[i] == RF_ROW && any_acc)
            row_layout(&L, b);
        else if (b->scope == TILEC_SCOPE_LOCAL)
            local_layout(&L, b);
        if (L.rf[i] == RF_ROW && !any_acc)
            L.rf[i] = RF_NONE;
    }
    if (c->code == TILEC_LOWER_OK) {
        tilec_ir_walk_t w;
        memset(&w, 0, sizeof w);
        w.stmt_pre = mark_stmt;
        w.user = &L;
        if (tilec_ir_walk_block(&w, &k->body) < 0 && c->code == TILEC_LOWER_OK)
            lower_oom(c);
    }
    free(L.rf);
    free(L.plan);
    return c->code == TILEC_LOWER_OK ? 0 : -1;
}
