/*
 * cuda_wgrs.c — wgmma with its A operand in registers (sm_90a), the way
 * FlashAttention-3 keeps P: when a 16-bit fragment is written only by a
 * whole copy from a register accumulator and read only by one wgmma GEMM
 * that follows it in the same statement list, it never goes to shared
 * memory.  The copy packs the accumulator's values, converted, into the
 * A-operand registers of wgmma.m64nNk16 (tl_pa<id>[mt][K/16][4]), and the
 * GEMM issues the register form of the instruction.  It needs the two
 * GEMMs' warpgroups to own the same rows (one warpgroup across N, the same
 * grid along M, the same tiles): then the m64nN accumulator's registers
 * of columns 16kk..16kk+15 are, pair by pair, exactly the A fragment of
 * k-step kk (rows l/4 and l/4 + 8 of each warp's 16, columns 2 (l % 4)
 * and + 8), so the packing moves no data between threads.
 *
 * On by default (sm_90a only: wgmma), TILEC_CUDA_WGMMA_RS=0 turns it off;
 * bench/results/hopper_session3.txt has what it changed.
 * The fragment keeps its layout in the IR; this is the printer's choice of
 * where a demoted fragment lives, like its cp.async rings.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_cg.h"
#include "tilec/ir_walk.h"

static int rs_on(void)
{
    const char *e = secure_getenv("TILEC_CUDA_WGMMA_RS");
    return !e || !*e || atoi(e) > 0;
}

static int mentions(const tilec_ir_stmt_t *t, const tilec_ir_buffer_t *b, int how)
{
    tilec_ir_stmt_t one = *t;
    one.next = NULL;
    return cg_touches(&one, b, NULL, how);
}

/* statements other than the copy and the gemm that mention the buffer */
typedef struct rs_q {
    const tilec_ir_buffer_t *a;
    const tilec_ir_stmt_t *copy, *gemm;
    int other;
} rs_q_t;

static int other_use(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    rs_q_t *q = w->user;
    if (s == q->copy || s == q->gemm)
        return TILEC_WALK_SKIP;
    if (s->kind == TILEC_ST_FOR)
        q->other |= cg_expr_loads(s->u.loop.extent, q->a);
    else if (s->kind == TILEC_ST_IF)
        q->other |= cg_expr_loads(s->u.cond.cond, q->a);
    else
        q->other |= mentions(s, q->a, CG_READ | CG_WRITE);
    return q->other ? TILEC_WALK_STOP : TILEC_WALK_CONTINUE;
}

/* Can gemm (in statement list `list`) read its A from registers packed
 * at a copy before it?  Returns that copy, or NULL. */
static const tilec_ir_stmt_t *rs_copy(cg_t *g, const tilec_ir_stmt_t *list, const tilec_ir_stmt_t *gm)
{
    const tilec_ir_buffer_t *A = gm->u.gemm.a;
    mma_plan_t p;
    if (A->scope != TILEC_SCOPE_FRAGMENT || g->rf[A->id] || gm->u.gemm.trans_a || A->ndim != 2 ||
        !cg_is_f16ish(A->dtype) || A->dtype != gm->u.gemm.b->dtype || !cg_mma_plan(g, gm, &p) ||
        !p.wg || p.gn != 1 || p.K % 16)
        return NULL;
    const tilec_ir_stmt_t *c = NULL;
    for (const tilec_ir_stmt_t *t = list; t && t != gm; t = t->next)
        if (t->kind == TILEC_ST_COPY && t->u.copy.dst.buf == A)
            c = t;
    if (!c || !cg_whole_region(&c->u.copy.src) || !cg_whole_region(&c->u.copy.dst))
        return NULL;
    const tilec_ir_buffer_t *R = c->u.copy.src.buf;
    const mma_plan_t *rp = &g->rf_plan[R->id];
    if (g->rf[R->id] != RF_ACC || g->rf_warprows || !rp->wg || rp->gn != 1 || rp->gm != p.gm ||
        rp->mt != p.mt || rp->M != p.M || rp->N != p.K || R->ndim != 2)
        return NULL;
    /* R keeps the values the copy packed until the gemm */
    for (const tilec_ir_stmt_t *t = c->next; t != gm; t = t->next)
        if (mentions(t, R, CG_WRITE))
            return NULL;
    rs_q_t q = {A, c, gm, 0};
    tilec_ir_walk_t w;
    tilec_ir_stmt_t *body = (tilec_ir_stmt_t *)g->k->body;
    memset(&w, 0, sizeof w);
    w.stmt_pre = other_use;
    w.user = &q;
    if (tilec_ir_walk_block(&w, &body) < 0 || q.other)
        return NULL;
    return c;
}

static void plan_list(cg_t *g, const tilec_ir_stmt_t *list, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return;
    for (const tilec_ir_stmt_t *s = list; s; s = s->next) {
        if (s->kind == TILEC_ST_GEMM) {
            const tilec_ir_stmt_t *c = rs_copy(g, list, s);
            if (c) {
                int a = s->u.gemm.a->id;
                g->rf[a] = RF_AOP;
                g->rf_id[a] = g->tmp++;
                g->rf_plan[a] = g->rf_plan[c->u.copy.src.buf->id];
            }
        } else if (s->kind == TILEC_ST_FOR && s->u.loop.kind != TILEC_LOOP_PARALLEL) {
            plan_list(g, s->u.loop.body, depth + 1);
        } else if (s->kind == TILEC_ST_IF) {
            plan_list(g, s->u.cond.then, depth + 1);
            plan_list(g, s->u.cond.els, depth + 1);
        }
    }
}

void cg_plan_wgrs(cg_t *g)
{
    if (g->wgmma && rs_on())
        plan_list(g, g->k->body, 0);
}

/* the copy into an RF_AOP fragment: pack the accumulator's registers */
void cg_emit_wgrs_pack(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *A = s->u.copy.dst.buf, *R = s->u.copy.src.buf;
    const mma_plan_t *p = &g->rf_plan[A->id];
    int id = g->rf_id[A->id], rid = g->rf_id[R->id];
    const char *cv = A->dtype == TILEC_BFLOAT16 ? "tl_f2b" : "tl_f2h";
    int ks = (int)(p->N / 16);
    cg_line(g, "/* copy %s -> %s: packed into wgmma A-operand registers (tl_pa%d) */", R->name,
            A->name, id);
    cg_line(g, "tl_u32 tl_pa%d[%d][%d][4];", id, p->mt, ks);
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_kk = 0; tl_kk < %d; tl_kk++)", ks);
    cg_line(g, "#pragma unroll");
    cg_line(g, "for (int tl_q = 0; tl_q < 4; tl_q++) {");
    g->ind++;
    cg_line(g, "const float *tl_x = &tl_c%d[tl_mi][2 * tl_kk + (tl_q >> 1)][(tl_q & 1) * 2];", rid);
    cg_line(g, "tl_pa%d[tl_mi][tl_kk][tl_q] = (tl_u32)%s(tl_x[0]) | ((tl_u32)%s(tl_x[1]) << 16);",
            id, cv, cv);
    g->ind--;
    cg_line(g, "}");
}

/* the wgmma helper with A from registers (see cg_emit_wgmma_fns) */
void cg_wgrs_fn(cg_t *g, const char *fn, const mma_plan_t *p, int tb)
{
    int nr = (int)(p->WN / 2);
    const char *ab = p->bf16 ? "bf16" : "f16";
    cg_out(g, "TL_INLINE void %s(float (*d)[4], const tl_u32 *a, tl_u64 db) {\n", fn);
    cg_out(g, "  asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0;\\n\"\n", nr + 5);
    cg_out(g, "    \"wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {", (long long)p->WN, ab, ab);
    for (int i = 0; i < nr; i++)
        cg_out(g, "%s%%%d", i ? "," : "", i);
    cg_out(g, "}, {%%%d,%%%d,%%%d,%%%d}, %%%d, p, 1, 1, %d; }\"\n    : ", nr, nr + 1, nr + 2, nr + 3,
           nr + 4, !tb);
    for (int i = 0; i < nr; i++)
        cg_out(g, "%s\"+f\"(d[%d][%d])", i ? ", " : "", i / 4, i % 4);
    cg_out(g, "\n    : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(db), \"r\"(1));\n}\n");
}
