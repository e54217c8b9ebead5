/*
 * cpu_vec.c — T.Parallel loops written with explicit vectors.
 *
 * The generator writes a T.Parallel loop as a scalar C loop that the C
 * compiler vectorizes, and the prelude's math functions are written so
 * that it can.  One thing it cannot do from scalar code: scale by a power
 * of two with AVX-512's vscalefps, which exp2 wants (the portable form
 * builds the two factors with eight integer and float operations), or, on
 * AVX2, take a per-vector shortcut when every result is a normal float
 * (one integer add, cpu_prelude.h), which needs a branch.  Softmax
 * spends about half of its time in its exp2 loop, so a loop whose body is
 * one store of a float32 expression built from float32 loads at [..., v]
 * (contiguous in the loop variable v, the other indices fixed), the loop's
 * hoisted invariant loads, float constants, + - * / and exp2 of values
 * that vary with v, with at least one exp2, is written with the prelude's
 * float vector type where the prelude provides tc_exp2f_v (TC_VEXP: gcc
 * with AVX-512F, 16 floats; gcc or clang with AVX2, FMA and F16C, 8): the
 * same operations in the same order per element, exp2 bit-identical to
 * tc_exp2f, TC_VEXPW iterations at a time, the rest by the scalar loop.
 */
#include <inttypes.h>
#include <string.h>

#include "cpu_cg.h"

/* An on-chip float32 element at [fixed..., v]: contiguous in v. */
static int contiguous(const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx, const tilec_ir_var_t *v)
{
    if (!b || !idx || b->ndim < 1 || b->dtype != TILEC_FLOAT32 || cg_is_global(b))
        return 0;
    const tilec_ir_expr_t *last = idx[b->ndim - 1];
    if (!last || last->kind != TILEC_EX_VAR || last->u.var != v)
        return 0;
    for (int d = 0; d < b->ndim - 1; d++)
        if (cg_varies(idx[d], v, 0))
            return 0;
    return 1;
}

static int hoisted(const cg_t *g, tilec_ir_expr_t *const *idx)
{
    for (int i = 0; i < g->nhoist; i++)
        if (g->hoist[i].idx == idx)
            return 1;
    return 0;
}

/* e (in the subset) reads a vector: a load that is not hoisted */
static int vector_valued(const cg_t *g, const tilec_ir_expr_t *e, int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4)
        return 0;
    switch (e->kind) {
    case TILEC_EX_LOAD: return !hoisted(g, e->u.load.idx);
    case TILEC_EX_UNARY: return vector_valued(g, e->u.un.a, depth + 1);
    case TILEC_EX_BINARY: return vector_valued(g, e->u.bin.a, depth + 1) || vector_valued(g, e->u.bin.b, depth + 1);
    default: return 0;
    }
}

/* e is in the subset above; *nexp counts its exp2s, g->vload its loads */
static int vec_ok(cg_t *g, const tilec_ir_expr_t *e, const tilec_ir_var_t *v, int *nexp, int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4 || e->dtype != TILEC_FLOAT32)
        return 0;
    switch (e->kind) {
    case TILEC_EX_FLOAT: return 1;
    case TILEC_EX_LOAD:
        if (hoisted(g, e->u.load.idx))
            return 1;
        if (!contiguous(e->u.load.buf, e->u.load.idx, v) || g->nvload >= CG_MAX_HOIST)
            return 0;
        g->vload[g->nvload++].idx = e->u.load.idx;
        return 1;
    case TILEC_EX_UNARY:
        /* an exp2 of a loop-invariant value is a scalar: tc_exp2f_v takes vectors only */
        if (e->u.un.op != TILEC_UN_EXP2 || !vector_valued(g, e->u.un.a, 0))
            return 0;
        *nexp += 1;
        return vec_ok(g, e->u.un.a, v, nexp, depth + 1);
    case TILEC_EX_BINARY:
        return (e->u.bin.op == TILEC_BIN_ADD || e->u.bin.op == TILEC_BIN_SUB || e->u.bin.op == TILEC_BIN_MUL ||
                e->u.bin.op == TILEC_BIN_DIV) &&
               vec_ok(g, e->u.bin.a, v, nexp, depth + 1) && vec_ok(g, e->u.bin.b, v, nexp, depth + 1);
    default: return 0;
    }
}

int cpu_vec_loop_head(cg_t *g, const tilec_ir_stmt_t *loop, int64_t extent)
{
    const tilec_ir_stmt_t *st = loop->u.loop.body;
    const tilec_ir_var_t *v = loop->u.loop.var;
    int nexp = 0;
    g->nvload = 0;
    if (extent < 16 || !st || st->next || st->kind != TILEC_ST_STORE || v->dtype != TILEC_INT32 ||
        !contiguous(st->u.store.buf, st->u.store.idx, v) || !vec_ok(g, st->u.store.value, v, &nexp, 0) ||
        nexp == 0) {
        g->nvload = 0;
        return 0;
    }
    const tilec_ir_buffer_t *b = st->u.store.buf;
    cg_line(g, "int32_t v%d = 0; /* TC_VEXPW at a time with explicit vectors (cpu_vec.c) */", v->id);
    cg_line(g, "#ifdef TC_VEXP");
    cg_line(g, "for (; v%d + TC_VEXPW <= %" PRId64 "; v%d += TC_VEXPW) {", v->id, extent, v->id);
    g->ind++;
    for (int i = 0; i < g->nvload; i++)
        g->vload[i].name = cg_fmt(g, "w%d", cg_newtmp(g));
    /* the expression over the vectors; the load hook (cpu_cg.c) names each
     * load's vector and notes its buffer and offset */
    g->vec = 1;
    const char *val = cg_expr(g, st->u.store.value);
    g->vec = 0;
    for (int i = 0; i < g->nvload; i++)
        cg_line(g, "tc_vf_ %s; memcpy(&%s, &b%d[%s], sizeof %s);", g->vload[i].name, g->vload[i].name,
                g->vload[i].buf, g->vload[i].off ? g->vload[i].off : "0", g->vload[i].name);
    int t = cg_newtmp(g);
    cg_line(g, "const tc_vf_ r%d = %s;", t, val);
    cg_line(g, "memcpy(&b%d[%s], &r%d, sizeof r%d);", b->id, cg_offset_exprs(g, b, st->u.store.idx), t, t);
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "#endif");
    g->nvload = 0;
    return 1;
}
