/*
 * cpu_codegen.c — tile IR to C for the CPU backend.
 *
 * One block of the kernel becomes one C function, tilec_block(bx, by, bz,
 * args, syms, scratch); the launcher (cpu_plugin.c) runs blocks on a pool of
 * host threads, one block from start to end on one thread, so T.sync_threads
 * is a no-op and every on-chip buffer (shared, fragment, local, var) is a
 * per-block array: small local/var buffers are C locals, the others live in
 * the thread's 64-byte-aligned scratch area.  Alongside come tilec_grid,
 * tilec_scratch_size and tilec_param_bytes, all functions of the symbol
 * values so T.dynamic shapes work.
 *
 * Value representation: integers and float32/float64 are their C types;
 * float16 and bfloat16 are stored as uint16_t and computed in float
 * (rounded to the 16-bit format on a cast and on every store); bool is
 * stored as uint8_t and computed as int.  Global offsets are int64.
 * Scalar expressions are written by the SDK's shared C-family emitter
 * (tilec/cexpr.h) through the C hooks of cg_expr() below.
 * Integer division and modulo never trap (x/0 == 0, see cpu_prelude.h);
 * signed int32/int64 overflow in index arithmetic is undefined, as in CUDA
 * C, which lets the C compiler vectorize the usual affine accesses.
 *
 * Tile operations: T.Parallel loops become plain nested loops with an
 * "ivdep" pragma; COPY and FILL check once whether a GLOBAL region lies
 * fully inside its tensor and then run a straight (memcpy when contiguous)
 * loop, else a per-element guarded one (zero reads, skipped writes); GEMM
 * converts/transposes operands into the scratch area when needed and calls a
 * register-blocked micro-kernel; REDUCE/CUMSUM are loops over
 * (outer, reduced, inner) views; ATOMIC on GLOBAL uses __atomic builtins
 * (compare-and-swap loops for floats).
 *
 * Generated names never come from the program: buffer i is b<i>, var i is
 * v<i>, so any IR name is safe.  Nesting depth is bounded (CG_MAX_DEPTH).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_cg.h"
#include "cpu_internal.h"
#include "tilec/cexpr.h"
#include "cpu_prelude.h"

/* LOCAL/VAR buffers up to this many bytes become C locals. */
#define CG_LOCAL_MAX_BYTES 1024

/* ---- statements ------------------------------------------------------------------------ */

static void gen_stmts(cg_t *g, const tilec_ir_stmt_t *s);

/* Does the statement list contain an atomic?  T.Parallel iterations are
 * independent except for atomics, which may hit the same element (a
 * histogram): such a loop must not be vectorized on trust. */
static int has_atomic(const tilec_ir_stmt_t *s)
{
    for (; s; s = s->next) {
        if (s->kind == TILEC_ST_ATOMIC)
            return 1;
        if (s->kind == TILEC_ST_FOR && has_atomic(s->u.loop.body))
            return 1;
        if (s->kind == TILEC_ST_IF && (has_atomic(s->u.cond.then) || has_atomic(s->u.cond.els)))
            return 1;
    }
    return 0;
}

/* ---- loop-invariant loads of T.Parallel loops ------------------------------------ */

/* Does e mention variable v, or load anything? (an index that does
 * neither is fixed for the whole loop over v) */
int cg_varies(const tilec_ir_expr_t *e, const tilec_ir_var_t *v, int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4)
        return 1;
    switch (e->kind) {
    case TILEC_EX_INT: case TILEC_EX_FLOAT: return 0;
    case TILEC_EX_VAR: return e->u.var == v;
    case TILEC_EX_UNARY: return cg_varies(e->u.un.a, v, depth + 1);
    case TILEC_EX_BINARY: return cg_varies(e->u.bin.a, v, depth + 1) || cg_varies(e->u.bin.b, v, depth + 1);
    case TILEC_EX_CAST: return cg_varies(e->u.cast.a, v, depth + 1);
    default: return 1;
    }
}

/* Hoists the loads in e that are the same in every iteration of the loop
 * over v: on-chip buffers that the loop (body: stores only) never writes,
 * at indices that do not vary.  Loads under a select stay where they are
 * (the select may guard the index). */
static void hoist_loads(cg_t *g, const tilec_ir_expr_t *e, const tilec_ir_var_t *v, const tilec_ir_stmt_t *body,
                        int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4 || g->nhoist >= CG_MAX_HOIST)
        return;
    switch (e->kind) {
    case TILEC_EX_LOAD: {
        const tilec_ir_buffer_t *b = e->u.load.buf;
        if (!b || !e->u.load.idx || b->scope == TILEC_SCOPE_GLOBAL)
            return;
        for (int d = 0; d < b->ndim; d++)
            if (cg_varies(e->u.load.idx[d], v, 0))
                return;
        for (const tilec_ir_stmt_t *s = body; s; s = s->next)
            if (s->u.store.buf == b)
                return;
        for (int i = 0; i < g->nhoist; i++)
            if (g->hoist[i].idx == e->u.load.idx)
                return;
        int t = cg_newtmp(g);
        cg_line(g, "const %s h%d = %s;", cg_ct_type(b->dtype), t, cg_expr(g, e));
        g->hoist[g->nhoist].idx = e->u.load.idx;
        g->hoist[g->nhoist++].name = cg_fmt(g, "h%d", t);
        return;
    }
    case TILEC_EX_UNARY: hoist_loads(g, e->u.un.a, v, body, depth + 1); return;
    case TILEC_EX_BINARY:
        hoist_loads(g, e->u.bin.a, v, body, depth + 1);
        hoist_loads(g, e->u.bin.b, v, body, depth + 1);
        return;
    case TILEC_EX_CAST: hoist_loads(g, e->u.cast.a, v, body, depth + 1); return;
    default: return;
    }
}

/* Before a T.Parallel loop over v of constant extent >= 1 whose body is
 * stores only: the invariant loads of its values as C locals (the C
 * compiler would have to prove that the stores do not alias them, which it
 * often cannot, and then leaves the loop scalar). */
static void hoist_invariant_loads(cg_t *g, const tilec_ir_stmt_t *loop)
{
    int64_t c;
    if (!tilec_ir_is_const_int(loop->u.loop.extent, &c) || c < 1)
        return;
    for (const tilec_ir_stmt_t *s = loop->u.loop.body; s; s = s->next)
        if (s->kind != TILEC_ST_STORE)
            return;
    for (const tilec_ir_stmt_t *s = loop->u.loop.body; s; s = s->next)
        hoist_loads(g, s->u.store.value, loop->u.loop.var, loop->u.loop.body, 0);
}

/* 1 when e mentions variable v (in load indices too); deep nests count */
static int mentions_var(const tilec_ir_expr_t *e, const tilec_ir_var_t *v, int depth)
{
    if (!e)
        return 0;
    if (depth > CG_MAX_DEPTH * 4)
        return 1;
    switch (e->kind) {
    case TILEC_EX_VAR: return e->u.var == v;
    case TILEC_EX_LOAD:
        for (int d = 0; e->u.load.buf && e->u.load.idx && d < e->u.load.buf->ndim; d++)
            if (mentions_var(e->u.load.idx[d], v, depth + 1))
                return 1;
        return 0;
    case TILEC_EX_UNARY: return mentions_var(e->u.un.a, v, depth + 1);
    case TILEC_EX_BINARY: return mentions_var(e->u.bin.a, v, depth + 1) || mentions_var(e->u.bin.b, v, depth + 1);
    case TILEC_EX_SELECT:
        return mentions_var(e->u.sel.cond, v, depth + 1) || mentions_var(e->u.sel.a, v, depth + 1) ||
               mentions_var(e->u.sel.b, v, depth + 1);
    case TILEC_EX_CAST: return mentions_var(e->u.cast.a, v, depth + 1);
    default: return 0;
    }
}

/* e with every float32/float64 division a / b whose divisor does not vary
 * along the parallel loop over v rewritten as a * (1 / b) (through unary,
 * binary and cast nodes; new nodes in the generator's arena, the rest
 * shared), the rewrite the SDK's lower_arith.c makes for GPU targets and
 * under the same contract (docs/lowering.md: at most about one ulp from
 * the division).  The reciprocal is then loop-invariant: the C compiler
 * computes it once per row (softmax's x / row_sum: one vdivps per 8 floats
 * was a tenth of the kernel on AVX2).  *changed is set when e changed. */
static tilec_ir_expr_t *recip_divs(cg_t *g, tilec_ir_expr_t *e, const tilec_ir_var_t *v, int depth, int *changed)
{
    if (!e || depth > CG_MAX_DEPTH * 4)
        return e;
    tilec_ir_expr_t *a, *b;
    switch (e->kind) {
    case TILEC_EX_UNARY: a = recip_divs(g, e->u.un.a, v, depth + 1, changed); b = NULL; break;
    case TILEC_EX_CAST: a = recip_divs(g, e->u.cast.a, v, depth + 1, changed); b = NULL; break;
    case TILEC_EX_BINARY:
        a = recip_divs(g, e->u.bin.a, v, depth + 1, changed);
        b = recip_divs(g, e->u.bin.b, v, depth + 1, changed);
        break;
    default: return e;
    }
    int div = e->kind == TILEC_EX_BINARY && e->u.bin.op == TILEC_BIN_DIV &&
              (e->dtype == TILEC_FLOAT32 || e->dtype == TILEC_FLOAT64) && !mentions_var(e->u.bin.b, v, 0);
    int same = e->kind == TILEC_EX_BINARY ? a == e->u.bin.a && b == e->u.bin.b
                                          : a == (e->kind == TILEC_EX_UNARY ? e->u.un.a : e->u.cast.a);
    if (same && !div)
        return e;
    tilec_ir_expr_t *n = tilec_arena_alloc(&g->ar, sizeof *n);
    if (!n)
        return e;
    *n = *e;
    if (e->kind == TILEC_EX_UNARY)
        n->u.un.a = a;
    else if (e->kind == TILEC_EX_CAST)
        n->u.cast.a = a;
    else {
        n->u.bin.a = a;
        n->u.bin.b = b;
    }
    if (div) {
        tilec_ir_expr_t *one = tilec_ir_float(&g->ar, 1.0, e->dtype);
        tilec_ir_expr_t *r = one ? tilec_ir_binary(&g->ar, TILEC_BIN_DIV, one, b) : NULL;
        if (!r)
            return e;
        r->dtype = e->dtype;
        n->u.bin.op = TILEC_BIN_MUL;
        n->u.bin.b = r;
    }
    *changed = 1;
    return n;
}

/* The parallel loop s with recip_divs applied to its body's stores: *tmp
 * (a copy of s with a new body) when anything changed, else s. */
static const tilec_ir_stmt_t *recip_loop(cg_t *g, const tilec_ir_stmt_t *s, tilec_ir_stmt_t *tmp)
{
    int changed = 0;
    tilec_ir_stmt_t *head = NULL, **tail = &head;
    for (const tilec_ir_stmt_t *b = s->u.loop.body; b; b = b->next) {
        tilec_ir_stmt_t *c = tilec_arena_alloc(&g->ar, sizeof *c);
        if (!c)
            return s;
        *c = *b;
        c->next = NULL;
        if (b->kind == TILEC_ST_STORE)
            c->u.store.value = recip_divs(g, b->u.store.value, s->u.loop.var, 0, &changed);
        *tail = c;
        tail = &c->next;
    }
    if (!changed)
        return s;
    *tmp = *s;
    tmp->u.loop.body = head;
    return tmp;
}

static void gen_stmt(cg_t *g, const tilec_ir_stmt_t *s)
{
    switch (s->kind) {
    case TILEC_ST_FOR: {
        const tilec_ir_var_t *v = s->u.loop.var;
        if (!v || v->id < 0 || v->id >= g->k->nvars || g->k->vars[v->id] != v)
            { cg_fail(g, "loop over an undeclared variable"); return; }
        int64_t c;
        const char *ext;
        int t = cg_newtmp(g);
        cg_line(g, "{");
        g->ind++;
        if (tilec_ir_is_const_int(s->u.loop.extent, &c)) {
            ext = cg_fmt(g, "INT64_C(%" PRId64 ")", c);
        } else {
            cg_line(g, "const int64_t n%d = (int64_t)(%s);", t, cg_expr(g, s->u.loop.extent));
            ext = cg_fmt(g, "n%d", t);
            c = -1;
        }
        if (s == g->row_stmt) { /* cpu_rows.c: the iteration for row tc_r */
            cg_line(g, "const %s v%d = (%s)tc_r;", cg_ct_type(v->dtype), v->id, cg_ct_type(v->dtype));
            gen_stmts(g, s->u.loop.body);
            g->ind--;
            cg_line(g, "}");
            break;
        }
        int nhoist = g->nhoist, vec = 0;
        tilec_ir_stmt_t rl;
        switch (s->u.loop.kind) {
        case TILEC_LOOP_PARALLEL:
        case TILEC_LOOP_VECTORIZED:
            s = recip_loop(g, s, &rl);
            hoist_invariant_loads(g, s);
            vec = c >= 16 && cpu_vec_loop_head(g, s, c);
            if (!has_atomic(s->u.loop.body))
                cg_line(g, "TC_IVDEP");
            break;
        case TILEC_LOOP_UNROLL:
            if (c > 0 && c <= 64) {
                tilec_sdk_str_printf(g->o, "#if defined(__clang__)\n#pragma unroll\n#elif defined(__GNUC__)\n"
                                     "#pragma GCC unroll %d\n#endif\n", (int)c);
            }
            break;
        default:
            break;
        }
        const char *vt = cg_ct_type(v->dtype);
        int intvar = !cg_is_flt(v->dtype) && v->dtype != TILEC_BOOL;
        if (vec)
            cg_line(g, "for (; v%d < %s; ++v%d) {", v->id, ext, v->id);
        else if (intvar)
            cg_line(g, "for (%s v%d = 0; v%d < %s; ++v%d) {", vt, v->id, v->id, ext, v->id);
        else
            cg_line(g, "for (int64_t v%d = 0; v%d < %s; ++v%d) {", v->id, v->id, ext, v->id);
        g->ind++;
        if (s->u.loop.kind == TILEC_LOOP_PIPELINED && intvar)
            cg_prefetch_next(g, s, ext, NULL);
        gen_stmts(g, s->u.loop.body);
        g->nhoist = nhoist;
        g->ind--;
        cg_line(g, "}");
        g->ind--;
        cg_line(g, "}");
        break;
    }
    case TILEC_ST_IF:
        cg_line(g, "if (%s) {", cg_expr(g, s->u.cond.cond));
        g->ind++;
        gen_stmts(g, s->u.cond.then);
        g->ind--;
        if (s->u.cond.els) {
            cg_line(g, "} else {");
            g->ind++;
            gen_stmts(g, s->u.cond.els);
            g->ind--;
        }
        cg_line(g, "}");
        break;
    case TILEC_ST_STORE: {
        const tilec_ir_buffer_t *b = s->u.store.buf;
        if (!cg_buf_ok(g, b) || !s->u.store.value)
            { cg_fail(g, "store without a buffer or value"); return; }
        const char *off = cg_offset_exprs(g, b, s->u.store.idx);
        cg_line(g, "b%d[%s] = %s;", b->id, off,
             cg_to_store(g, cg_expr(g, s->u.store.value), s->u.store.value->dtype, b->dtype));
        break;
    }
    case TILEC_ST_ASSIGN: {
        const tilec_ir_var_t *v = s->u.assign.var;
        if (!v || v->id < 0 || v->id >= g->k->nvars || g->k->vars[v->id] != v ||
            v->kind != TILEC_VAR_LET || !s->u.assign.value)
            { cg_fail(g, "assignment to something other than a let variable"); return; }
        const char *val = cg_conv(g, cg_expr(g, s->u.assign.value), s->u.assign.value->dtype, v->dtype);
        if (v->dtype == TILEC_FLOAT16 && s->u.assign.value->dtype == TILEC_FLOAT16)
            val = cg_fmt(g, "tc_rh(%s)", val); /* round like a store */
        else if (v->dtype == TILEC_BFLOAT16 && s->u.assign.value->dtype == TILEC_BFLOAT16)
            val = cg_fmt(g, "tc_rb(%s)", val);
        cg_line(g, "v%d = %s;", v->id, val);
        break;
    }
    case TILEC_ST_COPY: cg_copy(g, s); break;
    case TILEC_ST_FILL: cg_fill(g, s); break;
    case TILEC_ST_GEMM: cpu_gemm_gen(g, s); break;
    case TILEC_ST_REDUCE: cg_reduce(g, s); break;
    case TILEC_ST_CUMSUM: cg_cumsum(g, s); break;
    case TILEC_ST_ATOMIC: cg_atomic(g, s); break;
    case TILEC_ST_SYNC: cg_line(g, "/* sync_threads: a block runs on one thread */"); break;
    case TILEC_ST_PRINT: cg_print(g, s); break;
    case TILEC_ST_HINT: cg_line(g, "/* layout/swizzle hint ignored */"); break;
    /* IR 1.1: a block runs on one thread, so an async copy is done at once
     * (a valid program reads nothing before its wait) and every barrier,
     * group and mbarrier operation has nothing to order */
    case TILEC_ST_COPY_ASYNC: cg_copy(g, s); break;
    case TILEC_ST_ASYNC_COMMIT:
    case TILEC_ST_ASYNC_WAIT:
    case TILEC_ST_BARRIER:
    case TILEC_ST_MBAR_INIT:
    case TILEC_ST_MBAR_ARRIVE:
    case TILEC_ST_MBAR_WAIT: cg_line(g, "/* %s: a block runs on one thread */", tilec_stmt_kind_name(s->kind)); break;
    default: cg_fail(g, "statement '%s' is not supported by the cpu backend yet", tilec_stmt_kind_name(s->kind)); break;
    }
}

static void gen_stmts(cg_t *g, const tilec_ir_stmt_t *s)
{
    if (++g->depth > CG_MAX_DEPTH) {
        cg_fail(g, "statements nested deeper than %d levels", CG_MAX_DEPTH);
        g->depth--;
        return;
    }
    for (; s && !g->failed; s = s->next)
        gen_stmt(g, s);
    g->depth--;
}

/* ---- kernel-level pieces ------------------------------------------------------------------ */

static void gen_syms(cg_t *g)
{
    int j = 0;
    for (int i = 0; i < g->k->nvars; i++) {
        const tilec_ir_var_t *v = g->k->vars[i];
        if (v->kind == TILEC_VAR_SYM)
            cg_line(g, "const %s v%d = (%s)syms[%d]; (void)v%d;", cg_ct_type(v->dtype), i,
                 cg_ct_type(v->dtype), j++, i);
    }
    cg_line(g, "(void)syms;");
}

static void gen_shapes(cg_t *g)
{
    for (int i = 0; i < g->k->nbufs; i++) {
        const tilec_ir_buffer_t *b = g->k->bufs[i];
        for (int d = 0; d < b->ndim; d++) {
            int64_t c;
            if (!tilec_ir_is_const_int(b->shape[d], &c))
                cg_line(g, "const int64_t b%d_s%d = (int64_t)(%s); (void)b%d_s%d;", i, d,
                     cg_expr(g, b->shape[d]), i, d);
        }
    }
}

/* Element count of buffer b as a C expression. */
static const char *elems(cg_t *g, const tilec_ir_buffer_t *b)
{
    const char *n = "INT64_C(1)";
    for (int d = cg_row_buf(g, b) ? 1 : 0; d < b->ndim; d++) /* a row buffer: one row */
        n = cg_fmt(g, "%s * %s", n, cg_dim(g, b, d));
    return n;
}

static void gen_layout(cg_t *g, const tilec_ir_stmt_t *body);

static void gen_layout(cg_t *g, const tilec_ir_stmt_t *body)
{
    cg_line(g, "int64_t tc_off = 0, tc_g = 0;");
    for (int i = g->k->nparams; i < g->k->nbufs; i++) {
        const tilec_ir_buffer_t *b = g->k->bufs[i];
        if (g->place[i] != PLACE_SCRATCH)
            continue;
        cg_line(g, "const int64_t o%d = tc_off; tc_off += TC_ALIGN(%s * %zu); (void)o%d;", i,
             elems(g, b), cg_st_size(b->dtype), i);
    }
    cpu_gemm_sizes(g, body, 0);
    cg_line(g, "const int64_t o_gemm = tc_off; tc_off += TC_ALIGN(tc_g); (void)o_gemm;");
}

/* The first top-level use_swizzle hint's panel size, else 0. */
static int64_t find_swizzle(const tilec_ir_stmt_t *s)
{
    for (; s; s = s->next)
        if (s->kind == TILEC_ST_HINT && s->u.hint.name &&
            strcmp(s->u.hint.name, "use_swizzle") == 0 && s->u.hint.nargs >= 1 && s->u.hint.args) {
            int64_t v = 0;
            if (tilec_ir_is_const_int(s->u.hint.args[0], &v) && v > 0)
                return v;
        }
    return 0;
}

/* ---- block groups (cpu_group.c decides) ------------------------------------------- */

/* The names one member (x, y) of a block group sees: its block indices, its
 * scratch area's buffers and GEMM temporaries; with a_from_row / b_from_col,
 * the GEMM's A comes from member (0, y)'s area and B from member (x, 0)'s,
 * where the K step's shared tile copies went. */
static void member_scope(cg_t *g, const char *x, const char *y, int shared_ab)
{
    const tilec_ir_kernel_t *k = g->k;
    cg_line(g, "const int64_t tc_mx = %s, tc_my = %s; (void)tc_mx; (void)tc_my;", x, y);
    cg_line(g, "char *tc_s = (char *)scratch + (tc_my * tc_nx + tc_mx) * tc_ms;");
    for (int d = 0; d < 2; d++)
        cg_line(g, "const %s v%d = (%s)(tc_%c0 + tc_m%c); (void)v%d;", cg_ct_type(k->block[d]->dtype),
                k->block[d]->id, cg_ct_type(k->block[d]->dtype), "xy"[d], "xy"[d], k->block[d]->id);
    for (int i = k->nparams; i < k->nbufs; i++) {
        if (g->place[i] != PLACE_SCRATCH)
            continue;
        const char *T = cg_st_type(k->bufs[i]->dtype);
        const char *area = "tc_s";
        if (shared_ab && k->bufs[i] == g->grp.gemm->u.gemm.a)
            area = "((char *)scratch + tc_my * tc_nx * tc_ms)";
        else if (shared_ab && k->bufs[i] == g->grp.gemm->u.gemm.b)
            area = "((char *)scratch + tc_mx * tc_ms)";
        cg_line(g, "%s *restrict b%d = (%s *)(%s + o%d); (void)b%d;", T, i, T, area, i, i);
    }
    cg_line(g, "char *restrict tc_gtmp = tc_s + o_gemm; (void)tc_gtmp;");
}

/* Top-level statements from s up to (not including) stop, for every member. */
static void group_each(cg_t *g, const tilec_ir_stmt_t *s, const tilec_ir_stmt_t *stop)
{
    if (s == stop)
        return;
    cg_line(g, "for (int tc_m = 0; tc_m < tc_nx * tc_ny; ++tc_m) {");
    g->ind++;
    member_scope(g, "tc_m % tc_nx", "tc_m / tc_nx", 0);
    for (; s != stop; s = s->next)
        gen_stmt(g, s);
    g->ind--;
    cg_line(g, "}");
}

/* Block groups whose GEMM reads A tiles in place (cpu_group.c): sets
 * tc_ad[j] (j: the C name of the member row) to A's tile in the tensor
 * when the copy's region lies inside it, else NULL (the tile is copied).
 * With step (merged K steps, step tc_u of the chunk), a tile also stays
 * in place only while each step's tile follows the first one's in its
 * rows (step tc_u at column tc_u * bk), as the GEMM reads them. */
static void a_tile_at(cg_t *g, const char *j, const char *step)
{
    const cpu_group_t *gr = &g->grp;
    const char *off, *in;
    cg_line(g, "{ /* is the A tile inside its tensor? then the GEMM reads it there */");
    g->ind++;
    in = cg_region_at(g, &gr->copy_a->u.copy.src, &off);
    const char *at = cg_fmt(g, "b%d + (%s)", gr->copy_a->u.copy.src.buf->id, off);
    if (!step)
        cg_line(g, "tc_ad[%s] = (%s) ? %s : NULL;", j, in, at);
    else {
        cg_line(g, "if (%s == 0) tc_ad[%s] = (%s) ? %s : NULL;", step, j, in, at);
        cg_line(g, "else if (tc_ad[%s] && (!(%s) || %s != tc_ad[%s] + %s * %" PRId64 ")) tc_ad[%s] = NULL;", j, in, at,
                j, step, gr->bk, j);
    }
    g->ind--;
    cg_line(g, "}");
}

/* A merged chunk's B tile (step tc_u, group column tc_j) into the staging
 * area as NR-column panels (kt x NR each, the last one zero-padded): the
 * micro-kernel then reads its B micro-panel contiguously.  Staged as the
 * tile's rows (kt x bn), each micro-panel's k rows lay bn floats apart,
 * every 8th L1 set at bn = 128: 2048^3 float32 at 64x128x64 tiles on
 * Zen 3, 0.87-0.92 -> 0.92-0.95 of OpenBLAS.  A tile inside its tensor
 * (cpu_group.c, b_direct) is packed straight from it; any other is copied
 * into member (tc_j, 0)'s B buffer as the kernel says, then packed. */
static void stage_b(cg_t *g)
{
    const cpu_group_t *gr = &g->grp;
    const tilec_ir_buffer_t *B = gr->gemm->u.gemm.b;
    const char *T = cg_ct_type(B->dtype), *sfx = B->dtype == TILEC_FLOAT64 ? "f64" : "f32";
    int64_t kt = gr->ku * gr->bk, bk = gr->bk, bn = gr->bn;
    cg_line(g, "{ /* into the staging area, as NR-column panels */");
    g->ind++;
    cg_line(g, "enum { tc_NR = TC_NR_%s };", sfx);
    cg_line(g, "%s *restrict tc_pk = (%s *)((char *)scratch + tc_sb) + tc_j * %" PRId64 " * TC_RUP(%" PRId64
            ", tc_NR) + tc_u * %" PRId64 " * tc_NR;", T, T, kt, bn, bk);
    const char *src = cg_fmt(g, "b%d", B->id), *ld = cg_fmt(g, "%" PRId64, bn), *in = NULL;
    if (gr->b_direct) {
        const tilec_ir_buffer_t *S = gr->copy_b->u.copy.src.buf;
        const char *off;
        in = cg_region_at(g, &gr->copy_b->u.copy.src, &off);
        cg_line(g, "const %s *tc_bs = b%d + (%s); int64_t tc_ldb = %s;", T, S->id, off, cg_dim(g, S, S->ndim - 1));
        cg_line(g, "if (!(%s)) {", in);
        g->ind++;
        gen_stmt(g, gr->copy_b);
        cg_line(g, "tc_bs = %s; tc_ldb = %s;", src, ld);
        g->ind--;
        cg_line(g, "}");
        src = "tc_bs";
        ld = "tc_ldb";
    } else {
        gen_stmt(g, gr->copy_b);
    }
    cg_line(g, "for (int64_t k = 0; k < %" PRId64 "; ++k) {", bk);
    g->ind++;
    cg_line(g, "for (int64_t jp = 0; jp < %" PRId64 " / tc_NR; ++jp) memcpy(tc_pk + jp * %" PRId64
                " * tc_NR + k * tc_NR, %s + k * %s + jp * tc_NR, tc_NR * sizeof(%s));", bn, kt, src, ld, T);
    cg_line(g, "if (%" PRId64 " %% tc_NR) /* the last columns, zero-padded */", bn);
    cg_line(g, "  for (int64_t c = 0; c < tc_NR; ++c) tc_pk[%" PRId64 " / tc_NR * %" PRId64
            " * tc_NR + k * tc_NR + c] = c < %" PRId64 " %% tc_NR ? %s[k * %s + %" PRId64 " / tc_NR * tc_NR + c] : (%s)0;",
            bn, kt, bn, src, ld, bn, T);
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
}

/* One K step's tile copies of a group (its gy A tiles, its gx B tiles),
 * each preceded by the prefetch of the next step's in a pipelined loop.
 * staged (merged K steps, step tc_u of the chunk): the A tile's rows go
 * on to their place in the staging area, the B tile is copied straight
 * into its place there. */
static void group_copies(cg_t *g, const char *ext, int staged)
{
    const cpu_group_t *gr = &g->grp;
    const tilec_ir_stmt_t *copies[2] = {gr->copy_a, gr->copy_b};
    const char *T = cg_ct_type(gr->gemm->u.gemm.a->dtype);
    int64_t kt = gr->ku * gr->bk;
    for (int c = 0; c < 2; c++) {
        cg_line(g, "for (int64_t tc_j = 0; tc_j < tc_n%c; ++tc_j) { /* the %c tiles of the group */", "yx"[c], "AB"[c]);
        g->ind++;
        member_scope(g, c ? "tc_j" : "0", c ? "0" : "tc_j", 0);
        /* the next step's tiles into L2; not the A tiles read in place by
         * merged steps: the whole chunk's (up to 1 MiB) would be fetched
         * just before its GEMMs, evicting their C and B tiles from L2 */
        if (gr->loop->u.loop.kind == TILEC_LOOP_PIPELINED && !(staged && c == 0 && gr->a_direct))
            cg_prefetch_next(g, gr->loop, ext, copies[c]);
        if (staged && c == 1) {
            stage_b(g);
            g->ind--;
            cg_line(g, "}");
            continue;
        }
        if (c == 0 && gr->a_direct && !staged)
            a_tile_at(g, "tc_j", NULL);
        if (c == 0 && gr->a_direct) {
            cg_line(g, "if (!tc_ad[tc_j]) {");
            g->ind++;
        }
        gen_stmt(g, copies[c]);
        if (staged && c == 0) {
            cg_line(g, "%s *restrict tc_d = (%s *)((char *)scratch + tc_sa) + tc_j * %" PRId64 " + tc_u * %" PRId64 ";",
                    T, T, gr->bm * kt, gr->bk);
            cg_line(g, "for (int64_t r = 0; r < %" PRId64 "; ++r) memcpy(tc_d + r * %" PRId64 ", b%d + r * %" PRId64
                    ", %" PRId64 " * sizeof(%s));", gr->bm, kt, gr->gemm->u.gemm.a->id, gr->bk, gr->bk, T);
        }
        if (c == 0 && gr->a_direct) {
            g->ind--;
            cg_line(g, "}");
        }
        g->ind--;
        cg_line(g, "}");
    }
}

/* The staging area of merged K steps (cpu_group.c), after the members'
 * areas: the group's A rows side by side (gy x bm x ku*bk), its B columns
 * as NR-column panels (gx x bn/NR rounded up x ku*bk x NR, see stage_b),
 * the GEMM's edge buffers; ends at tc_send. */
static void group_stage_layout(cg_t *g)
{
    const cpu_group_t *gr = &g->grp;
    const char *T = cg_ct_type(gr->gemm->u.gemm.a->dtype);
    int64_t kt = gr->ku * gr->bk;
    cg_line(g, "const int64_t tc_sa = TC_ALIGN(tc_off) * %d, tc_sb = tc_sa + TC_ALIGN(%" PRId64 " * sizeof(%s));",
            gr->gx * gr->gy, gr->gy * gr->bm * kt, T);
    cg_line(g, "const int64_t tc_se = tc_sb + TC_ALIGN(%" PRId64 " * TC_RUP(%" PRId64 ", TC_NR(%s)) * sizeof(%s)), tc_sf = tc_se + TC_ALIGN(TC_MR * %" PRId64
            " * sizeof(%s));", gr->gx * kt, gr->bn, T, T, kt, T);
    cg_line(g, "const int64_t tc_send = tc_sf + TC_ALIGN(%" PRId64 " * TC_NR(%s) * (int64_t)sizeof(%s)); (void)tc_send;",
            kt, T, T);
}

/* The K loop of a group whose small K steps are merged (cpu_group.c): per
 * ku steps, each step's A tiles copied as usual and their rows placed side
 * by side in the staging area, its B tiles copied straight into theirs,
 * then one GEMM call per member over the nu <= ku staged steps. */
static void group_merged_steps(cg_t *g, const char *ext)
{
    const cpu_group_t *gr = &g->grp;
    const tilec_ir_var_t *v = gr->loop->u.loop.var;
    const tilec_ir_buffer_t *A = gr->gemm->u.gemm.a, *C = gr->gemm->u.gemm.c;
    const char *T = cg_ct_type(A->dtype), *sfx = A->dtype == TILEC_FLOAT64 ? "f64" : "f32";
    int64_t kt = gr->ku * gr->bk;
    cg_line(g, "for (int64_t tc_k0 = 0; tc_k0 < %s; tc_k0 += %d) { /* %d K steps per GEMM call */", ext, gr->ku, gr->ku);
    g->ind++;
    cg_line(g, "const int64_t tc_nu = TC_MIN64(%d, %s - tc_k0);", gr->ku, ext);
    if (gr->a_direct) {
        cg_line(g, "for (int64_t tc_u = 0; tc_u < tc_nu; ++tc_u) { /* which A tiles stay in place */");
        g->ind++;
        cg_line(g, "%s v%d = (%s)(tc_k0 + tc_u);", cg_ct_type(v->dtype), v->id, cg_ct_type(v->dtype));
        cg_line(g, "for (int64_t tc_j = 0; tc_j < tc_ny; ++tc_j) {");
        g->ind++;
        member_scope(g, "0", "tc_j", 0);
        a_tile_at(g, "tc_j", "tc_u");
        g->ind--;
        cg_line(g, "}");
        g->ind--;
        cg_line(g, "}");
    }
    cg_line(g, "for (int64_t tc_u = 0; tc_u < tc_nu; ++tc_u) {");
    g->ind++;
    cg_line(g, "%s v%d = (%s)(tc_k0 + tc_u);", cg_ct_type(v->dtype), v->id, cg_ct_type(v->dtype));
    group_copies(g, ext, 1);
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "for (int64_t tc_m = 0; tc_m < tc_nx * tc_ny; ++tc_m) { /* C += A[:, staged] B[staged, :] */");
    g->ind++;
    member_scope(g, "tc_m % tc_nx", "tc_m / tc_nx", 0);
    cg_line(g, "const %s *tc_ap = (%s *)((char *)scratch + tc_sa) + tc_my * %" PRId64 "; int64_t tc_lda = %" PRId64 ";", T, T,
            gr->bm * kt, kt);
    if (gr->a_direct) {
        const tilec_ir_buffer_t *S = gr->copy_a->u.copy.src.buf;
        cg_line(g, "if (tc_ad[tc_my]) { tc_ap = tc_ad[tc_my]; tc_lda = %s; }", cg_dim(g, S, S->ndim - 1));
    }
    cg_line(g, "tc_mk_%s(%" PRId64 ", %" PRId64 ", tc_nu * %" PRId64 ", tc_ap, tc_lda, 1, TC_MR * tc_lda, (%s *)((char *)scratch + tc_sb) + tc_mx * %" PRId64
            " * TC_RUP(%" PRId64 ", TC_NR_%s), TC_NR_%s, %" PRId64 " * TC_NR_%s, b%d, %" PRId64 ", (%s *)((char *)scratch + tc_se), (%s *)((char *)scratch + tc_sf));",
            sfx, gr->bm, gr->bn, gr->bk, T, kt, gr->bn, sfx, sfx, kt, sfx, C->id, gr->bn, T, T);
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
}

/* tilec_block for a group of gx x gy blocks (bx, by: the group's indices):
 * the statements before the K loop for each member, then per K step the A
 * copies of the group's rows, the B copies of its columns, the GEMM of each
 * member, then the statements after the loop for each member.  Members past
 * the grid's edge do not exist. */
static void gen_group_block(cg_t *g)
{
    const tilec_ir_kernel_t *k = g->k;
    const cpu_group_t *gr = &g->grp;
    const tilec_ir_var_t *v = gr->loop->u.loop.var;
    cg_line(g, "TC_EXPORT void tilec_block(int32_t bx, int32_t by, int32_t bz, void *const *args, "
            "const int64_t *syms, void *scratch) { /* a group of %dx%d blocks */", gr->gx, gr->gy);
    g->ind++;
    gen_syms(g);
    cg_line(g, "(void)bz; (void)args;");
    gen_shapes(g);
    gen_layout(g, k->body);
    /* The launcher takes groups x fastest, so consecutive groups share an
     * A panel and each reads a new B panel (K x gx*block_N): at 4096^3 the
     * B panels (4 MiB each) come from memory again for every row of
     * groups.  Groups are renumbered in vertical strips of tc_P group
     * columns whose B panels fill half of L3 (as use_swizzle does on a
     * GPU), then walked down: B panels are read from memory once, A panels
     * once per strip.  A grid that fits one strip keeps its order. */
    const tilec_ir_buffer_t *B = gr->gemm->u.gemm.b;
    int64_t tile = (int64_t)cg_st_size(B->dtype) * gr->gx, d;
    for (int i = 0; i < B->ndim && tile > 0; i++)
        tile = tilec_ir_is_const_int(B->shape[i], &d) && d > 0 && d < (INT64_C(1) << 20) &&
               tile * d < (INT64_C(1) << 31) ? tile * d : 0; /* times an int32 extent: no overflow */
    cg_line(g, "const int64_t tc_GX = ((int64_t)(%s) + %d) / %d, tc_GY = ((int64_t)(%s) + %d) / %d;",
            cg_expr(g, k->grid[0]), gr->gx - 1, gr->gx, cg_expr(g, k->grid[1]), gr->gy - 1, gr->gy);
    cg_line(g, "const int64_t tc_bp = %" PRId64 " * (int64_t)(%s); /* one group column's B panel, bytes */", tile,
            cg_expr(g, gr->loop->u.loop.extent));
    cg_line(g, "const int64_t tc_P = tc_bp > 0 && TC_L3 / 2 / tc_bp < tc_GX ? (TC_L3 / 2 / tc_bp > 1 ? TC_L3 / 2 / tc_bp : 1) : tc_GX;");
    cg_line(g, "const int64_t tc_l = (int64_t)by * tc_GX + bx, tc_pn = tc_l / (tc_P * tc_GY);");
    cg_line(g, "const int64_t tc_pw = TC_MIN64(tc_P, tc_GX - tc_pn * tc_P), tc_q = tc_l - tc_pn * tc_P * tc_GY;");
    cg_line(g, "const int64_t tc_ms = TC_ALIGN(tc_off), tc_x0 = (tc_pn * tc_P + tc_q %% tc_pw) * %d, tc_y0 = tc_q / tc_pw * %d;",
            gr->gx, gr->gy);
    cg_line(g, "const int64_t tc_nx = TC_MIN64(%d, (int64_t)(%s) - tc_x0), tc_ny = TC_MIN64(%d, (int64_t)(%s) - tc_y0);",
            gr->gx, cg_expr(g, k->grid[0]), gr->gy, cg_expr(g, k->grid[1]));
    if (gr->ku > 1)
        group_stage_layout(g);
    for (int i = 0; i < k->nparams; i++) {
        const char *T = cg_st_type(k->bufs[i]->dtype);
        cg_line(g, "%s *restrict b%d = (%s *)args[%d]; (void)b%d;", T, i, T, i, i);
    }
    /* on-chip buffers start at zero in every member (see gen_kernel) */
    cg_line(g, "for (int64_t tc_m = 0; tc_m < tc_nx * tc_ny; ++tc_m) {");
    g->ind++;
    cg_line(g, "char *tc_s = (char *)scratch + tc_m * tc_ms; (void)tc_s;");
    for (int i = k->nparams; i < k->nbufs; i++)
        if (g->place[i] == PLACE_SCRATCH && cg_first_use(k->body, k->bufs[i], 0, 0) == 2)
            cg_line(g, "memset(tc_s + o%d, 0, (size_t)(%s * %zu));", i, elems(g, k->bufs[i]), cg_st_size(k->bufs[i]->dtype));
    g->ind--;
    cg_line(g, "}");
    group_each(g, k->body, gr->loop);
    cg_line(g, "{");
    g->ind++;
    const char *ext = cg_fmt(g, "(int64_t)(%s)", cg_expr(g, gr->loop->u.loop.extent));
    const tilec_ir_buffer_t *A = gr->gemm->u.gemm.a, *S = gr->copy_a->u.copy.src.buf;
    if (gr->a_direct)
        cg_line(g, "const %s *tc_ad[%d]; /* the A tiles read in place (NULL: copied) */", cg_ct_type(A->dtype), gr->gy);
    if (gr->ku > 1) {
        group_merged_steps(g, ext);
        g->ind--;
        cg_line(g, "}");
        group_each(g, gr->loop->next, NULL);
        g->ind--;
        cg_line(g, "}");
        return;
    }
    cg_line(g, "for (%s v%d = 0; v%d < %s; ++v%d) {", cg_ct_type(v->dtype), v->id, v->id, ext, v->id);
    g->ind++;
    group_copies(g, ext, 0);
    cg_line(g, "for (int64_t tc_m = 0; tc_m < tc_nx * tc_ny; ++tc_m) {");
    g->ind++;
    member_scope(g, "tc_m % tc_nx", "tc_m / tc_nx", 1);
    if (gr->a_direct) {
        cg_line(g, "const %s *tc_ap = tc_ad[tc_my] ? tc_ad[tc_my] : b%d;", cg_ct_type(A->dtype), A->id);
        cg_line(g, "const int64_t tc_lda = tc_ad[tc_my] ? %s : %s;", cg_dim(g, S, S->ndim - 1), cg_dim(g, A, 1));
        g->gemm_a = "tc_ap";
        g->gemm_lda = "tc_lda";
    }
    gen_stmt(g, gr->gemm);
    g->gemm_a = g->gemm_lda = NULL;
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    group_each(g, gr->loop->next, NULL);
    g->ind--;
    cg_line(g, "}");
}

/* The body one row at a time (cpu_rows.c): the hoisted statements, then
 * for each row tc_r the others restricted to it. */
static void gen_rows(cg_t *g)
{
    int i = 0;
    for (const tilec_ir_stmt_t *s = g->k->body; s; s = s->next, i++)
        if (g->rows.hoisted[i])
            gen_stmt(g, s);
    /* float16 buffers the hoisted statements fill (a weight row) are read
     * at every row: their values converted to float once, and the row
     * statements' loads read those (copies and reductions still read the
     * buffer itself, which stays as it was) */
    for (int b = g->k->nparams; b < g->k->nbufs; b++)
        if (g->rows.shadow[b]) {
            const char *n = elems(g, g->k->bufs[b]);
            cg_line(g, "float tc_sh%d[%s] __attribute__((aligned(64)));", b, n);
            cg_line(g, "tc_h2f_n(tc_sh%d, b%d, %s, NULL);", b, b, n);
        }
    g->rows.in_rows = 1;
    cg_line(g, "for (int64_t tc_r = 0; tc_r < %" PRId64 "; ++tc_r) { /* row by row (cpu_rows.c) */", g->rows.rows);
    g->ind++;
    /* each row of a row buffer starts at zero, as the whole buffer would */
    for (int b = g->k->nparams; b < g->k->nbufs; b++)
        if (cg_row_buf(g, g->k->bufs[b]) && cg_first_use(g->k->body, g->k->bufs[b], 0, 0) == 2)
            cg_line(g, "memset(b%d, 0, (size_t)(%s * %zu));", b, elems(g, g->k->bufs[b]),
                    cg_st_size(g->k->bufs[b]->dtype));
    i = 0;
    for (const tilec_ir_stmt_t *s = g->k->body; s && !g->failed; s = s->next, i++) {
        if (g->rows.hoisted[i])
            continue;
        const tilec_ir_var_t *sv;
        int div;
        const tilec_ir_expr_t *sc = cpu_rows_scale_fold(s, &sv, &div);
        if (sc && !g->rows.hoisted[i + 1]) { /* s folded into the copy after it (cpu_rows.c) */
            cg_line(g, "{ /* scale folded into the copy out */");
            g->ind++;
            cg_line(g, "const %s v%d = (%s)tc_r; (void)v%d;", cg_ct_type(sv->dtype), sv->id, cg_ct_type(sv->dtype), sv->id);
            const char *e = cg_expr(g, sc);
            cg_line(g, "const float tc_sc = %s;", div ? cg_fmt(g, "(0x1p+0f) / (%s)", e) : e);
            s = s->next;
            i++;
            g->copy_scale = "tc_sc";
        }
        g->row_stmt = s;
        gen_stmt(g, s);
        g->row_stmt = NULL;
        if (g->copy_scale) {
            g->copy_scale = NULL;
            g->ind--;
            cg_line(g, "}");
        }
    }
    g->rows.in_rows = 0;
    g->ind--;
    cg_line(g, "}");
}

static void gen_kernel(cg_t *g)
{
    const tilec_ir_kernel_t *k = g->k;
    tilec_sdk_str_t *o = g->o;
    tilec_sdk_str_printf(o, "/* tilec CPU kernel \"");
    for (const char *p = k->name ? k->name : ""; *p; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')
            tilec_sdk_str_putn(o, p, 1);
    tilec_sdk_str_printf(o, "\": %d params, %d syms, %d buffers */\n", k->nparams, g->nsyms, k->nbufs);
    cpu_gemm_cache_sizes(g);
    tilec_sdk_str_putn(o, cpu_prelude, sizeof cpu_prelude - 1);
    tilec_sdk_str_printf(o, "%s", cpu_gemm_prelude);
    cg_line(g, "TC_EXPORT int tilec_cpu_module_abi(void) { return %d; }", TILEC_CPU_MODULE_ABI);
    cg_line(g, "TC_EXPORT uint32_t tilec_nparams(void) { return %d; }", k->nparams);
    cg_line(g, "TC_EXPORT uint32_t tilec_nsyms(void) { return %d; }", g->nsyms);
    /* blocks per tilec_block call (cpu_group.c): the launcher runs the grid
     * of groups */
    cg_line(g, "TC_EXPORT void tilec_group(int32_t gs[2]) { gs[0] = %d; gs[1] = %d; }", g->grp.gx, g->grp.gy);

    /* grid */
    cg_line(g, "TC_EXPORT void tilec_grid(const int64_t *syms, int64_t g[3]) {");
    g->ind++;
    gen_syms(g);
    for (int d = 0; d < 3; d++)
        cg_line(g, "g[%d] = %s;", d, d < k->ngrid ? cg_fmt(g, "(int64_t)(%s)", cg_expr(g, k->grid[d])) : "1");
    g->ind--;
    cg_line(g, "}");

    /* parameter sizes */
    cg_line(g, "TC_EXPORT int64_t tilec_param_bytes(uint32_t i, const int64_t *syms) {");
    g->ind++;
    gen_syms(g);
    cg_line(g, "int64_t n = 1, d;");
    cg_line(g, "switch (i) {");
    for (int i = 0; i < k->nparams; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        cg_line(g, "case %d:", i);
        for (int d = 0; d < b->ndim; d++)
            cg_line(g, "  d = (int64_t)(%s); if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;",
                 cg_expr(g, b->shape[d]));
        if (tilec_dtype_is_4bit(b->dtype))
            cg_line(g, "  return n / 2 + n %% 2; /* packed, two per byte */");
        else
            cg_line(g, "  if (__builtin_mul_overflow(n, (int64_t)%zu, &n)) return -1;\n  return n;",
                    cg_st_size(b->dtype));
    }
    cg_line(g, "default: (void)d; return -1;");
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");

    /* 4-bit parameters (IR 1.3): the launcher unpacks them to one value per
     * byte, the form the block function reads, and packs them back after */
    cg_line(g, "TC_EXPORT int tilec_param_packed4(uint32_t i) {");
    g->ind++;
    cg_line(g, "switch (i) {");
    for (int i = 0; i < k->nparams; i++)
        if (tilec_dtype_is_4bit(k->bufs[i]->dtype))
            cg_line(g, "case %d: return %d;", i, (int)k->bufs[i]->dtype);
    cg_line(g, "default: return 0;");
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");

    /* scratch size */
    cg_line(g, "TC_EXPORT int64_t tilec_scratch_size(const int64_t *syms) {");
    g->ind++;
    gen_syms(g);
    gen_shapes(g);
    gen_layout(g, k->body);
    if (g->grp.gx > 1 && g->grp.ku > 1) {
        group_stage_layout(g);
        cg_line(g, "return tc_send; /* one area per member of a block group, and the group's staging */");
    } else if (g->grp.gx > 1)
        cg_line(g, "return TC_ALIGN(tc_off) * %d; /* one area per member of a block group */", g->grp.gx * g->grp.gy);
    else
        cg_line(g, "return tc_off;");
    g->ind--;
    cg_line(g, "}");

    /* the block */
    if (g->grp.gx > 1) {
        gen_group_block(g);
        return;
    }
    cg_line(g, "TC_EXPORT void tilec_block(int32_t bx, int32_t by, int32_t bz, void *const *args, "
            "const int64_t *syms, void *scratch) {");
    g->ind++;
    gen_syms(g);
    const char *bv[3] = {"bx", "by", "bz"};
    int64_t panel = find_swizzle(k->body);
    if (panel > 0 && k->ngrid >= 2) {
        /* use_swizzle(P): blocks numbered x fastest walk panels of P block
         * columns, down all rows of one panel before the next, so the
         * panels' B tiles stay in cache while A rows stream */
        cg_line(g, "int32_t tc_bx = bx, tc_by = by;");
        cg_line(g, "{ /* use_swizzle(%" PRId64 ") */", panel);
        g->ind++;
        cg_line(g, "const int64_t gx = (int64_t)(%s), gy = (int64_t)(%s), P = %" PRId64 ";",
             cg_expr(g, k->grid[0]), cg_expr(g, k->grid[1]), panel);
        cg_line(g, "const int64_t l = (int64_t)bx + gx * (int64_t)by, pan = l / (P * gy), in = l %% (P * gy);");
        cg_line(g, "const int64_t w = TC_MIN64(P, gx - pan * P);");
        cg_line(g, "tc_bx = (int32_t)(pan * P + in %% w); tc_by = (int32_t)(in / w);");
        g->ind--;
        cg_line(g, "}");
        bv[0] = "tc_bx";
        bv[1] = "tc_by";
    }
    for (int d = 0; d < k->ngrid; d++)
        if (k->block[d])
            cg_line(g, "const %s v%d = (%s)%s;", cg_ct_type(k->block[d]->dtype), k->block[d]->id,
                 cg_ct_type(k->block[d]->dtype), bv[d]);
    cg_line(g, "(void)bx; (void)by; (void)bz; (void)args; (void)scratch;");
    gen_shapes(g);
    gen_layout(g, k->body);
    cg_line(g, "char *restrict tc_gtmp = (char *)scratch + o_gemm; (void)tc_gtmp;");
    /* on-chip buffers start at zero in every block, as in the reference
     * interpreter, except those whose first use overwrites all of them
     * (a copy into the whole tile, T.clear, a clearing reduce or gemm),
     * which is the rule in kernels; the GEMM temporaries need nothing */
    for (int i = k->nparams; i < k->nbufs; i++)
        if (g->place[i] == PLACE_SCRATCH && !cg_row_buf(g, k->bufs[i]) &&
            cg_first_use(k->body, k->bufs[i], 0, 0) == 2)
            cg_line(g, "memset((char *)scratch + o%d, 0, (size_t)(%s * %zu));", i, elems(g, k->bufs[i]),
                 cg_st_size(k->bufs[i]->dtype));
    for (int i = 0; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        const char *T = cg_st_type(b->dtype);
        switch (g->place[i]) {
        case PLACE_PARAM:
            cg_line(g, "%s *restrict b%d = (%s *)args[%d]; (void)b%d;", T, i, T, i, i);
            break;
        case PLACE_SCRATCH:
            cg_line(g, "%s *restrict b%d = (%s *)((char *)scratch + o%d); (void)b%d;", T, i, T, i, i);
            break;
        default:
            cg_line(g, "%s b%d[%s] = {0}; (void)b%d;", T, i, elems(g, b), i);
            break;
        }
    }
    for (int i = 0; i < k->nvars; i++) {
        const tilec_ir_var_t *v = k->vars[i];
        if (v->kind == TILEC_VAR_LET)
            cg_line(g, "%s v%d = 0; (void)v%d;", cg_ct_type(v->dtype), i, i);
    }
    if (g->rows.rows)
        gen_rows(g);
    else
        gen_stmts(g, k->body);
    g->ind--;
    cg_line(g, "}");
}

/* 1 when e uses only constants and SYM vars (what grid extents and buffer
 * shapes may use: they are evaluated outside any block). */
static int syms_only(const tilec_ir_expr_t *e, int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4)
        return 0;
    switch (e->kind) {
    case TILEC_EX_INT:
    case TILEC_EX_FLOAT: return 1;
    case TILEC_EX_VAR: return e->u.var && e->u.var->kind == TILEC_VAR_SYM;
    case TILEC_EX_UNARY: return syms_only(e->u.un.a, depth + 1);
    case TILEC_EX_BINARY: return syms_only(e->u.bin.a, depth + 1) && syms_only(e->u.bin.b, depth + 1);
    case TILEC_EX_SELECT:
        return syms_only(e->u.sel.cond, depth + 1) && syms_only(e->u.sel.a, depth + 1) &&
               syms_only(e->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return syms_only(e->u.cast.a, depth + 1);
    default: return 0;
    }
}

/* Structural checks the generator relies on. */
static int check_kernel(cg_t *g)
{
    const tilec_ir_kernel_t *k = g->k;
    if (!k)
        return cg_fail(g, "module has no kernel"), -1;
    if (k->nparams < 0 || k->nparams > k->nbufs || (k->nbufs > 0 && !k->bufs) ||
        (k->nvars > 0 && !k->vars) || k->nvars < 0)
        return cg_fail(g, "kernel tables are inconsistent"), -1;
    if (k->ngrid < 1 || k->ngrid > 3)
        return cg_fail(g, "kernel grid has %d dimensions", k->ngrid), -1;
    for (int d = 0; d < k->ngrid; d++)
        if (!k->grid[d] || !syms_only(k->grid[d], 0))
            return cg_fail(g, "grid extent %d is missing or not a function of shape symbols", d), -1;
    for (int i = 0; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (!b || b->id != i || b->ndim < 0 || b->ndim > TILEC_IR_MAX_DIMS ||
            (b->ndim > 0 && !b->shape) || !cg_valid_dtype((int)b->dtype) ||
            (int)b->scope < 0 || b->scope >= TILEC_SCOPE_COUNT)
            return cg_fail(g, "buffer %d is malformed", i), -1;
        if ((i < k->nparams) != (b->scope == TILEC_SCOPE_GLOBAL))
            return cg_fail(g, "buffer %s: global buffers must be exactly the parameters",
                           b->name ? b->name : "?"), -1;
        for (int d = 0; d < b->ndim; d++)
            if (!b->shape[d] || !syms_only(b->shape[d], 0))
                return cg_fail(g, "buffer %s: dimension %d is missing or not a function of shape "
                                  "symbols", b->name ? b->name : "?", d), -1;
    }
    for (int i = 0; i < k->nvars; i++) {
        const tilec_ir_var_t *v = k->vars[i];
        if (!v || v->id != i || !cg_valid_dtype((int)v->dtype))
            return cg_fail(g, "variable %d is malformed", i), -1;
        if (v->kind == TILEC_VAR_SYM)
            g->nsyms++;
    }
    for (int d = 0; d < k->ngrid; d++) {
        const tilec_ir_var_t *v = k->block[d];
        if (v && (v->id < 0 || v->id >= k->nvars || k->vars[v->id] != v))
            return cg_fail(g, "block variable %d is not declared", d), -1;
    }
    return 0;
}

int cpu_codegen(const tilec_ir_module_t *m, tilec_sdk_str_t *out, char *err, size_t errlen)
{
    cg_t g;
    memset(&g, 0, sizeof g);
    g.k = m ? m->kernel : NULL;
    g.o = out;
    g.err = err;
    g.errlen = errlen;
    tilec_arena_init(&g.ar);
    if (check_kernel(&g) == 0) {
        g.place = tilec_arena_alloc(&g.ar, sizeof(int) * (size_t)(g.k->nbufs + 1));
        if (!g.place) {
            cg_fail(&g, "out of memory");
        } else {
            for (int i = 0; i < g.k->nbufs; i++) {
                const tilec_ir_buffer_t *b = g.k->bufs[i];
                int64_t n = tilec_ir_buffer_const_size(b);
                if (b->scope == TILEC_SCOPE_GLOBAL)
                    g.place[i] = PLACE_PARAM;
                else if ((b->scope == TILEC_SCOPE_LOCAL || b->scope == TILEC_SCOPE_VAR) && n > 0 &&
                         n * (int64_t)cg_st_size(b->dtype) <= CG_LOCAL_MAX_BYTES)
                    g.place[i] = PLACE_LOCAL;
                else
                    g.place[i] = PLACE_SCRATCH;
            }
            cpu_group_plan(g.k, g.place, &g.grp);
            cpu_rows_plan(&g, &g.rows);
            gen_kernel(&g);
        }
    }
    tilec_arena_destroy(&g.ar);
    if (!g.failed && out->oom)
        cg_fail(&g, "out of memory");
    return g.failed ? -1 : 0;
}
