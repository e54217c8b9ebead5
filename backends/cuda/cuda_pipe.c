/*
 * cuda_pipe.c — T.Pipelined on cp.async (sm_80 on): which leading copies
 * of a pipelined loop can run ahead (global to shared, same dtype,
 * 16-byte rows, indices without loads, the buffer private to the loop),
 * each becoming a ring of S stages in shared memory; the loop printed as
 * a prologue of S-1 stages, then per iteration: issue the copies S-1
 * ahead, wait until the current stage has landed, run the body.  A
 * register-resident wgmma GEMM reading only the loop's rings trails its
 * wait by one iteration (the wgmma of v runs while the copies of v + 1
 * land).
 *
 * Late copies: a copy of the same kind further down the body (flash
 * attention's V, loaded after the softmax) joins the ring too when no
 * statement before it in the body mentions its buffer: every read of the
 * buffer in iteration v then follows the copy and reads stage v % S, so
 * the copy can be issued with the leading ones, S-1 iterations ahead,
 * instead of stalling the body where it stands.  On by default for sm_90a
 * (measured there), TILEC_CUDA_PIPE_LATE=0/1 overrides (docs/backend-cuda.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cg.h"

/* ---- T.Pipelined with cp.async ----------------------------------------------- */

/* an index expression that can be evaluated for a later iteration by
 * setting the loop variable: no loads, no let variables */
static int expr_invariant(const tilec_ir_expr_t *e, int depth)
{
    if (!e || depth > CG_MAX_DEPTH)
        return 0;
    switch (e->kind) {
    case TILEC_EX_INT:
    case TILEC_EX_FLOAT: return 1;
    case TILEC_EX_VAR: return e->u.var->kind != TILEC_VAR_LET;
    case TILEC_EX_LOAD: return 0;
    case TILEC_EX_UNARY: return expr_invariant(e->u.un.a, depth + 1);
    case TILEC_EX_BINARY:
        return expr_invariant(e->u.bin.a, depth + 1) && expr_invariant(e->u.bin.b, depth + 1);
    case TILEC_EX_SELECT:
        return expr_invariant(e->u.sel.cond, depth + 1) && expr_invariant(e->u.sel.a, depth + 1) &&
               expr_invariant(e->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return expr_invariant(e->u.cast.a, depth + 1);
    default: return 0;
    }
}

/* Is copy statement c (at the head of pipelined loop `loop`) one that
 * can run ahead with cp.async into a ring of stages? */
static int async_copy_ok(cg_t *g, const tilec_ir_stmt_t *loop, const tilec_ir_stmt_t *c)
{
    if (c->kind != TILEC_ST_COPY)
        return 0;
    const tilec_ir_region_t *src = &c->u.copy.src, *dst = &c->u.copy.dst;
    if (src->buf->scope != TILEC_SCOPE_GLOBAL || dst->buf->scope != TILEC_SCOPE_SHARED ||
        src->buf->dtype != dst->buf->dtype)
        return 0;
    size_t es = tilec_dtype_size(src->buf->dtype);
    if (es != 2 && es != 4)
        return 0;
    int vec = (int)(16 / es);
    int64_t ext[TILEC_IR_MAX_DIMS], sext[TILEC_IR_MAX_DIMS];
    int n = cg_region_shape(dst, ext), sn = cg_region_shape(src, sext);
    int dd = dst->buf->ndim - 1, sd = src->buf->ndim - 1;
    if (n < 1 || n != sn || dst->extent[dd] != ext[n - 1] || src->extent[sd] != ext[n - 1] ||
        ext[n - 1] % vec)
        return 0;
    for (int i = 0; i < n; i++)
        if (ext[i] != sext[i])
            return 0;
    int64_t op = g->pitch[dst->buf->id] > 0 ? g->pitch[dst->buf->id] : cg_const_dim(dst->buf, dd);
    if (op <= 0 || op % vec)
        return 0;
    for (int d = 0; d < src->buf->ndim; d++)
        if (!expr_invariant(src->base[d], 0))
            return 0;
    for (int d = 0; d < dst->buf->ndim; d++)
        if (!expr_invariant(dst->base[d], 0))
            return 0;
    /* the ring replaces the buffer: nobody outside the loop may see it,
     * nothing else in the loop may write it, and the source stays put */
    if (cg_touches(g->k->body, dst->buf, loop, CG_READ | CG_WRITE) ||
        cg_touches(loop->u.loop.body, dst->buf, c, CG_WRITE) ||
        cg_touches(loop->u.loop.body, src->buf, NULL, CG_WRITE))
        return 0;
    return 1;
}

/* does top-level statement t (alone, with what it nests) mention b */
static int stmt_mentions(const tilec_ir_stmt_t *t, const tilec_ir_buffer_t *b)
{
    tilec_ir_stmt_t one = *t;
    one.next = NULL;
    return cg_touches(&one, b, NULL, CG_READ | CG_WRITE);
}

/* TILEC_CUDA_PIPE_LATE=0/1 overrides; the default is on for sm_90a,
 * where it was measured (bench/results/hopper_session3.txt) */
static int late_copies_on(const cg_t *g)
{
    const char *e = secure_getenv("TILEC_CUDA_PIPE_LATE");
    return e && *e ? atoi(e) > 0 : g->wgmma;
}

/* The copies of a pipelined loop that go asynchronous into rings, in
 * body order: the leading ones, then (late copies) the later top-level
 * copies no earlier statement mentions the buffer of.  Returns their
 * number (at most CG_MAX_RING), 0 when the loop is not pipelined. */
int cg_pipe_ring(cg_t *g, const tilec_ir_stmt_t *loop, const tilec_ir_stmt_t **ring)
{
    if (g->sm < 80 || loop->kind != TILEC_ST_FOR || loop->u.loop.kind != TILEC_LOOP_PIPELINED ||
        loop->u.loop.num_stages < 2 || g->nthreads % 32 != 0)
        return 0;
    int n = 0;
    const tilec_ir_stmt_t *c = loop->u.loop.body;
    for (; c && n < CG_MAX_RING && async_copy_ok(g, loop, c); c = c->next)
        ring[n++] = c;
    if (!c)
        return 0; /* something must follow the copies */
    if (!late_copies_on(g))
        return n;
    for (const tilec_ir_stmt_t *t = c; t && n < CG_MAX_RING; t = t->next) {
        if (!async_copy_ok(g, loop, t))
            continue;
        int early = 0;
        for (const tilec_ir_stmt_t *u = loop->u.loop.body; u != t && !early; u = u->next)
            early = stmt_mentions(u, t->u.copy.dst.buf);
        if (!early)
            ring[n++] = t;
    }
    return n;
}

int cg_pipe_copies(cg_t *g, const tilec_ir_stmt_t *loop)
{
    const tilec_ir_stmt_t *ring[CG_MAX_RING];
    return cg_pipe_ring(g, loop, ring);
}

void cg_pipe_walk(cg_t *g, const tilec_ir_stmt_t *s, int par, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return;
    for (; s; s = s->next) {
        if (s->kind == TILEC_ST_FOR) {
            int p = par || s->u.loop.kind == TILEC_LOOP_PARALLEL;
            const tilec_ir_stmt_t *ring[CG_MAX_RING];
            int n = p ? 0 : cg_pipe_ring(g, s, ring);
            for (int i = 0; i < n; i++)
                g->stages[ring[i]->u.copy.dst.buf->id] = s->u.loop.num_stages > 8 ? 8 : s->u.loop.num_stages;
            cg_pipe_walk(g, s->u.loop.body, p, depth + 1);
        } else if (s->kind == TILEC_ST_IF) {
            cg_pipe_walk(g, s->u.cond.then, par, depth + 1);
            cg_pipe_walk(g, s->u.cond.els, par, depth + 1);
        }
    }
}

/* points every staged buffer of the loop at stage (iter % S) */
static void pipe_point(cg_t *g, const tilec_ir_stmt_t *const *ring, int n, const char *iter)
{
    for (int i = 0; i < n; i++) {
        const tilec_ir_buffer_t *b = ring[i]->u.copy.dst.buf;
        cg_line(g, "b%d = (%s *)(tl_smem + %llu + (%s %% %d) * %llu);", b->id, cg_stype(b->dtype),
             (unsigned long long)g->smem_off[b->id], iter, g->stages[b->id],
             (unsigned long long)g->stage_bytes[b->id]);
    }
}

static void pipe_issue(cg_t *g, const tilec_ir_stmt_t *const *ring, int n)
{
    who_t coop = {1};
    for (int i = 0; i < n; i++)
        cg_copy_vec(g, ring[i], &coop, 1);
}

/* the body after the leading ring copies, with the late ones left out
 * where they stand (g->pipe_skip) */
static void pipe_body(cg_t *g, const tilec_ir_stmt_t *loop, const tilec_ir_stmt_t *const *ring, int n)
{
    const tilec_ir_stmt_t *rest = loop->u.loop.body;
    while (rest && n > 0 && rest == ring[0]) {
        rest = rest->next;
        ring++;
        n--;
    }
    const tilec_ir_stmt_t *const *skip = g->pipe_skip;
    int nskip = g->npipe_skip;
    g->pipe_skip = ring;
    g->npipe_skip = n;
    cg_emit_block(g, rest, 0);
    g->pipe_skip = skip;
    g->npipe_skip = nskip;
}

int cg_pipe_skipped(const cg_t *g, const tilec_ir_stmt_t *s)
{
    for (int i = 0; i < g->npipe_skip; i++)
        if (g->pipe_skip[i] == s)
            return 1;
    return 0;
}

/* Multi-stage buffering: iteration i's copies are issued S-1 iterations
 * ahead into stage i % S; before the body of iteration i runs, every
 * thread waits until at most S-1 groups are in flight (its own copies of
 * iteration i have landed) and a barrier makes everyone's visible.  The
 * barrier at the end of the body keeps a stage from being refilled while
 * it is being read. */
/* The loop's register-resident GEMM when it runs on wgmma from operands
 * that only this loop's cp.async ring writes: its wait can then trail by
 * one iteration (see emit_pipelined). */
static const tilec_ir_stmt_t *deferrable_wgmma(cg_t *g, const tilec_ir_stmt_t *loop,
                                              const tilec_ir_stmt_t *const *ring, int n)
{
    const tilec_ir_stmt_t *rg = g->resident, *t;
    mma_plan_t p;
    if (!rg || !cg_mma_plan(g, rg, &p) || !p.wg)
        return NULL;
    for (t = loop->u.loop.body; t && t != rg; t = t->next)
        ;
    if (!t)
        return NULL;
    int ha = 0, hb = 0;
    for (int i = 0; i < n; i++) {
        ha |= ring[i]->u.copy.dst.buf == rg->u.gemm.a;
        hb |= ring[i]->u.copy.dst.buf == rg->u.gemm.b;
    }
    return ha && hb ? rg : NULL;
}

void cg_emit_pipelined(cg_t *g, const tilec_ir_stmt_t *loop)
{
    const tilec_ir_stmt_t *ring[CG_MAX_RING];
    int n = cg_pipe_ring(g, loop, ring);
    int S = n > 0 ? g->stages[ring[0]->u.copy.dst.buf->id] : 0;
    if (S < 2) {
        cg_fail(g, "internal: pipelined loop without a ring");
        return;
    }
    int v = loop->u.loop.var->id, id = g->tmp++;
    const tilec_ir_stmt_t *defer = deferrable_wgmma(g, loop, ring, n);
    g->info->cp_async += n;
    cg_line(g, "{ /* T.Pipelined: %d copies issued %d iterations ahead with cp.async */", n, S - 1);
    g->ind++;
    cg_out(g, "%*sconst int tl_n%d = (int)(", 2 * (g->ind + 1), "", id);
    cg_emit_expr(g, loop->u.loop.extent);
    cg_out(g, ");\n");
    char it[32];
    snprintf(it, sizeof it, "v%d", v);
    cg_line(g, "for (int tl_s%d = 0; tl_s%d < %d; tl_s%d++) {", id, id, S - 1, id);
    g->ind++;
    cg_line(g, "if (tl_s%d < tl_n%d) {", id, id);
    g->ind++;
    cg_line(g, "v%d = tl_s%d;", v, id);
    pipe_point(g, ring, n, it);
    pipe_issue(g, ring, n);
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "tl_cp_commit();");
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "for (v%d = 0; v%d < tl_n%d; v%d++) {", v, v, id, v);
    g->ind++;
    if (defer) {
        /* wgmma of iteration v runs on while the threads wait for the
         * copies of v + 1 and refill the stage that v - 1 read, which the
         * wait for all but the newest wgmma group and the barrier after the
         * body have freed */
        cg_line(g, "tl_cp_wait<%d>();", S - 2);
        cg_emit_sync(g);
        pipe_point(g, ring, n, it);
        g->wg_defer = defer;
        pipe_body(g, loop, ring, n);
        g->wg_defer = NULL;
        cg_emit_sync(g);
    }
    cg_line(g, "{ /* issue iteration v + %d */", S - 1);
    g->ind++;
    cg_line(g, "const int tl_cur%d = v%d;", id, v);
    cg_line(g, "v%d = tl_cur%d + %d;", v, id, S - 1);
    cg_line(g, "if (v%d < tl_n%d) {", v, id);
    g->ind++;
    pipe_point(g, ring, n, it);
    pipe_issue(g, ring, n);
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "tl_cp_commit();");
    cg_line(g, "v%d = tl_cur%d;", v, id);
    g->ind--;
    cg_line(g, "}");
    if (!defer) {
        cg_line(g, "tl_cp_wait<%d>();", S - 1);
        cg_emit_sync(g);
        pipe_point(g, ring, n, it);
        pipe_body(g, loop, ring, n);
        cg_emit_sync(g);
    }
    g->ind--;
    cg_line(g, "}");
    if (defer) {
        mma_plan_t p;
        cg_mma_plan(g, defer, &p);
        cg_line(g, "tl_wg_wait<0>();");
        cg_line(g, "tl_keep_acc<%d>(&tl_c%d[0][0][0]);", p.mt * p.nt * 4, g->resident_id);
    }
    cg_line(g, "tl_cp_wait<0>();");
    g->ind--;
    cg_line(g, "}");
    cg_emit_sync(g);
}
