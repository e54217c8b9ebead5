/*
 * vk_copy.c — T.copy of a global tile into shared memory for the GLSL
 * dialect (vk_codegen.c's statement and loop hooks).
 *
 * The kit copies element by element in a loop that stores each element
 * before it loads the next, so a thread keeps one load in flight: on the
 * H200 the staged kernels were latency bound (the GEMM's copies alone ran
 * at 0.027 of CUDA's).  GLSL has no pointers to reinterpret, so each
 * tensor of 2- or 4-byte elements also gets a uvec4 view (a second buffer
 * block on its binding, declared by the prelude): a tile that lies inside
 * its tensor with rows at multiples of 16 bytes moves 16 bytes a load,
 * all of a thread's loads before its stores; a tile on the tensor's edge
 * goes element by element, zeros outside.  In a K loop ([barrier,] such
 * copies, barrier, the rest) the registers also prefetch: each iteration
 * stores the tiles it loaded the iteration before, then loads the next
 * iteration's, so their latency passes under the gemm (GLSL has no
 * asynchronous copies; this is what T.Pipelined becomes here).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tilec/ir_walk.h"
#include "vk_internal.h"

int vk_vec_dtype(tilec_dtype_t t)
{
    size_t n = tilec_dtype_size(t);
    return t != TILEC_BOOL && (n == 2 || n == 4);
}


const char *vk_fmt(vk_gen_t *g, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    const char *r = tilec_arena_strdup(&g->ar, buf);
    return r ? r : "0";
}

/* The storage type of dtype t in block-wide arrays (16-bit floats are
 * their bit patterns) and component k of uvec4 tc_v as one: W = 16 / size
 * elements per vector, the low half of a word first. */
static const char *st_type(const tilec_simt_dialect_t *d, tilec_dtype_t t)
{
    return t == TILEC_FLOAT16 || t == TILEC_BFLOAT16 ? "uint16_t" : d->type_name[t];
}

static void unpack(char *out, size_t n, const tilec_simt_dialect_t *d, tilec_dtype_t t, int k, const char *v)
{
    if (tilec_dtype_size(t) == 2)
        snprintf(out, n, "%s(uint16_t(%s[%d]%s))", st_type(d, t), v, k / 2, k % 2 ? " >> 16" : " & 0xffffu");
    else if (t == TILEC_FLOAT32)
        snprintf(out, n, "uintBitsToFloat(%s[%d])", v, k);
    else
        snprintf(out, n, "%s(%s[%d])", st_type(d, t), v, k);
}

/* The element offset in tensor S of row i, column j (expressions) of the
 * tile whose corner is tc_vr<t>_*. */
static const char *vec_off(vk_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_buffer_t *S, int t, int nd, const char *i,
                           const char *j);

/* A copy src (a global tensor, rows of its last two dimensions, leading
 * extents 1) -> the whole of a 2-D block-wide buffer dst of its dtype,
 * which vector loads can move: W elements (16 bytes) a load, or 0. */
static int64_t vec_copy_ok(const tilec_ir_stmt_t *s)
{
    const tilec_ir_region_t *rs = &s->u.copy.src, *rd = &s->u.copy.dst;
    const tilec_ir_buffer_t *S = rs->buf, *D = rd->buf;
    int nd = S ? S->ndim : 0;
    if (s->kind != TILEC_ST_COPY || !S || !D || S->scope != TILEC_SCOPE_GLOBAL || S->dtype != D->dtype ||
        !vk_vec_dtype(S->dtype) || nd < 2 || D->ndim != 2 || !D->layout || D->layout->kind != TILEC_LAYOUT_SMEM)
        return 0;
    int64_t W = 16 / (int64_t)tilec_dtype_size(S->dtype), R = rs->extent[nd - 2], E = rs->extent[nd - 1], v;
    for (int i = 0; i < nd - 2; i++)
        if (rs->extent[i] != 1)
            return 0;
    for (int i = 0; i < 2; i++)
        if (!tilec_ir_is_const_int(rd->base[i], &v) || v != 0 || vk_cdim(D, i) != rd->extent[i])
            return 0;
    if (E % W || rd->extent[0] != R || rd->extent[1] != E)
        return 0;
    if (tilec_ir_is_const_int(S->shape[nd - 1], &v) && v % W)
        return 0;
    return W;
}

/* The vector loads of one thread when they divide evenly among the
 * threads and are few (then all of them are issued before the first
 * store: a loop that stores each vector before loading the next keeps one
 * in flight, and at low occupancy that is the whole kernel's speed), or 0. */
static int64_t vec_per_thread(const vk_gen_t *g, const tilec_ir_stmt_t *s, int64_t W)
{
    const tilec_ir_region_t *rs = &s->u.copy.src;
    int nd = rs->buf->ndim;
    int64_t n = rs->extent[nd - 2] * rs->extent[nd - 1] / W;
    return g->nthreads > 0 && n % g->nthreads == 0 && n / g->nthreads <= 8 ? n / g->nthreads : 0;
}

/* Declares the tile's corner tc_vr<t>_* (the source region's bases, with
 * whatever the loop variables are where this is printed) and returns the
 * condition for the vector path: the tile inside the tensor, its rows at
 * multiples of W. */
static const char *vec_bases(vk_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int t, int64_t W)
{
    const tilec_ir_region_t *rs = &s->u.copy.src;
    const tilec_ir_buffer_t *S = rs->buf;
    int nd = S->ndim;
    const char *in = "true";
    for (int i = 0; i < nd; i++) {
        tilec_simt_emit(c, "const int tc_vr%d_%d = int(%s);", t, i, tilec_simt_expr(c, rs->base[i]));
        in = vk_fmt(g, "%s && tc_vr%d_%d >= 0 && tc_vr%d_%d + %" PRId64 " <= int(%s)", in, t, i, t, i, rs->extent[i],
                  tilec_simt_dim(c, S, i));
    }
    return vk_fmt(g, "%s && tc_vr%d_%d %% %" PRId64 " == 0 && int(%s) %% %" PRId64 " == 0", in, t, nd - 1, W,
                tilec_simt_dim(c, S, nd - 1), W);
}

/* Thread tc_tid's vector q of the tile: its row and column (declared),
 * and the load of it (an expression). */
static const char *vec_load(vk_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int t, int64_t W, int64_t q)
{
    const tilec_ir_buffer_t *S = s->u.copy.src.buf;
    int nd = S->ndim;
    int64_t cols = s->u.copy.src.extent[nd - 1] / W;
    tilec_simt_emit(c, "const int tc_i%" PRId64 " = (tc_tid + %" PRId64 ") / %" PRId64 ", tc_j%" PRId64
                    " = ((tc_tid + %" PRId64 ") %% %" PRId64 ") * %" PRId64 ";",
                    q, q * g->nthreads, cols, q, q * g->nthreads, cols, W);
    return vk_fmt(g, "tc_v4_%d[(%s) / %" PRId64 "]", S->id,
                vec_off(g, c, S, t, nd, vk_fmt(g, "tc_i%" PRId64, q), vk_fmt(g, "tc_j%" PRId64, q)), W);
}

/* The stores of vectors <v>0.. (per of them) into the destination. */
static void vec_stores(vk_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int64_t W, int64_t per,
                       const char *v)
{
    const tilec_ir_buffer_t *S = s->u.copy.src.buf, *D = s->u.copy.dst.buf;
    int64_t cols = s->u.copy.src.extent[S->ndim - 1] / W;
    char val[128];
    for (int64_t q = 0; q < per; q++) {
        tilec_simt_emit(c, "const int tc_i%" PRId64 " = (tc_tid + %" PRId64 ") / %" PRId64 ", tc_j%" PRId64
                        " = ((tc_tid + %" PRId64 ") %% %" PRId64 ") * %" PRId64 ";",
                        q, q * g->nthreads, cols, q, q * g->nthreads, cols, W);
        for (int k = 0; k < W; k++) {
            const char *idx[2] = {vk_fmt(g, "tc_i%" PRId64, q), vk_fmt(g, "tc_j%" PRId64 " + %d", q, k)};
            unpack(val, sizeof val, tilec_simt_dialect(c), S->dtype, k, vk_fmt(g, "%s%" PRId64, v, q));
            tilec_simt_emit(c, "%s = %s;", tilec_simt_elem_at(c, D, idx), val);
        }
    }
}

/* The tile element by element, zeros outside the tensor (corner tc_vr<t>_*). */
static void scalar_tile(vk_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int t)
{
    const tilec_ir_region_t *rs = &s->u.copy.src;
    const tilec_ir_buffer_t *S = rs->buf, *D = s->u.copy.dst.buf;
    int nd = S->ndim;
    int64_t R = rs->extent[nd - 2], E = rs->extent[nd - 1];
    tilec_simt_emit(c, "for (int tc_e = tc_tid; tc_e < %" PRId64 "; tc_e += tc_nthreads) {", R * E);
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "const int tc_i = tc_e / %" PRId64 ", tc_j = tc_e %% %" PRId64 ";", E, E);
    const char *ok = "true";
    for (int i = 0; i < nd; i++) {
        const char *x = vk_fmt(g, "tc_vr%d_%d%s", t, i, i == nd - 2 ? " + tc_i" : i == nd - 1 ? " + tc_j" : "");
        ok = vk_fmt(g, "%s && %s >= 0 && %s < int(%s)", ok, x, x, tilec_simt_dim(c, S, i));
    }
    const char *idx[2] = {"tc_i", "tc_j"};
    tilec_simt_emit(c, "%s = (%s) ? %s : %s(0);", tilec_simt_elem_at(c, D, idx), ok,
                    tilec_simt_elem(c, S, vk_fmt(g, "(%s) ? (%s) : 0", ok, vec_off(g, c, S, t, nd, "tc_i", "tc_j"))),
                    st_type(tilec_simt_dialect(c), S->dtype));
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
}

/* T.copy of a global tile to block-wide memory (vec_copy_ok): when it
 * lies inside the tensor with aligned rows, each thread moves 16 bytes a
 * load through the tensor's uvec4 view (8 float16s, 4 floats), all its
 * loads before its stores when they are few; else (a tile on the
 * tensor's edge) element by element.  Anything else: the kit's copy (0). */
int vk_copy_vec(vk_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    int64_t W = vec_copy_ok(s);
    if (!W || tilec_simt_per_thread(c))
        return 0;
    const tilec_ir_region_t *rs = &s->u.copy.src;
    const tilec_ir_buffer_t *S = rs->buf, *D = s->u.copy.dst.buf;
    int nd = S->ndim, t = tilec_simt_tmp(c);
    int64_t per = vec_per_thread(g, s, W), n = rs->extent[nd - 2] * rs->extent[nd - 1] / W;
    tilec_simt_emit(c, "{ /* copy %s -> %s, %" PRId64 " elements a load */", S->name ? S->name : "?",
                    D->name ? D->name : "?", W);
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "if (%s) {", vec_bases(g, c, s, t, W));
    tilec_simt_indent(c, 1);
    if (per > 0) {
        for (int64_t q = 0; q < per; q++) {
            const char *ld = vec_load(g, c, s, t, W, q);
            tilec_simt_emit(c, "const uvec4 tc_v%" PRId64 " = %s;", q, ld);
        }
        tilec_simt_emit(c, "{");
        tilec_simt_indent(c, 1);
        vec_stores(g, c, s, W, per, "tc_v");
        tilec_simt_indent(c, -1);
        tilec_simt_emit(c, "}");
    } else {
        tilec_simt_emit(c, "for (int tc_e = tc_tid; tc_e < %" PRId64 "; tc_e += tc_nthreads) {", n);
        tilec_simt_indent(c, 1);
        int64_t cols = rs->extent[nd - 1] / W;
        tilec_simt_emit(c, "const int tc_i = tc_e / %" PRId64 ", tc_j = (tc_e %% %" PRId64 ") * %" PRId64 ";", cols, cols, W);
        tilec_simt_emit(c, "const uvec4 tc_v = tc_v4_%d[(%s) / %" PRId64 "];", S->id,
                        vec_off(g, c, S, t, nd, "tc_i", "tc_j"), W);
        char val[128];
        for (int k = 0; k < W; k++) {
            const char *idx[2] = {"tc_i", vk_fmt(g, "tc_j + %d", k)};
            unpack(val, sizeof val, tilec_simt_dialect(c), S->dtype, k, "tc_v");
            tilec_simt_emit(c, "%s = %s;", tilec_simt_elem_at(c, D, idx), val);
        }
        tilec_simt_indent(c, -1);
        tilec_simt_emit(c, "}");
    }
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "} else {");
    tilec_simt_indent(c, 1);
    scalar_tile(g, c, s, t);
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    return 1;
}

static const char *vec_off(vk_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_buffer_t *S, int t, int nd, const char *i,
                           const char *j)
{
    const char *off = "0";
    for (int d = 0; d < nd; d++)
        off = vk_fmt(g, "(%s) * int(%s) + tc_vr%d_%d%s%s", off, tilec_simt_dim(c, S, d), t, d,
                   d == nd - 2 ? " + " : d == nd - 1 ? " + " : "", d == nd - 2 ? i : d == nd - 1 ? j : "");
    return off;
}

/* ---- register prefetch of the next K step's tiles ---------------------------------------

   A block-level loop whose body is [barrier,] copies vk_copy_vec takes,
   barrier, the rest (a K loop: the copies fill shared tiles the rest
   reads) is printed with the copies split: each iteration stores the
   tiles it loaded into registers the iteration before, then loads the
   next iteration's, so that their latency passes under the rest (GLSL
   has no asynchronous copies).  A tile that is
   not inside its tensor with aligned rows is copied element by element at
   its place instead (the flag the prefetch sets, uniform in the block). */

/* 1 when statement list s writes buffer b (stores, copies, atomics, fills). */
static int writes(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b);
static int writes_walk(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *b = w->user;
    int hit = (s->kind == TILEC_ST_STORE && s->u.store.buf == b) || (s->kind == TILEC_ST_ATOMIC && s->u.atomic.buf == b) ||
              ((s->kind == TILEC_ST_COPY || s->kind == TILEC_ST_COPY_ASYNC) && s->u.copy.dst.buf == b) ||
              (s->kind == TILEC_ST_FILL && s->u.fill.dst.buf == b) || (s->kind == TILEC_ST_GEMM && s->u.gemm.c == b) ||
              (s->kind == TILEC_ST_REDUCE && s->u.reduce.dst == b) || (s->kind == TILEC_ST_CUMSUM && s->u.cumsum.dst == b);
    return hit ? TILEC_WALK_STOP : TILEC_WALK_CONTINUE;
}
static int writes(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b)
{
    tilec_ir_walk_t w = {.stmt_pre = writes_walk, .user = (void *)b};
    tilec_ir_stmt_t *l = (tilec_ir_stmt_t *)s;
    return tilec_ir_walk_block(&w, &l) != 0;
}

/* Loads the next tiles of every prefetched copy (their corners with the
 * loop variable as printed here) into tc_p<J>_<q>, setting tc_ok<J>. */
static void prefetch(vk_gen_t *g, tilec_simt_ctx_t *c)
{
    for (int j = 0; j < g->npipe; j++) {
        const tilec_ir_stmt_t *s = g->pipe[j];
        int64_t W = vec_copy_ok(s), per = vec_per_thread(g, s, W);
        int t = tilec_simt_tmp(c);
        tilec_simt_emit(c, "{");
        tilec_simt_indent(c, 1);
        tilec_simt_emit(c, "tc_ok%d = %s;", j, vec_bases(g, c, s, t, W));
        tilec_simt_emit(c, "if (tc_ok%d) {", j);
        tilec_simt_indent(c, 1);
        for (int64_t q = 0; q < per; q++) {
            const char *ld = vec_load(g, c, s, t, W, q);
            tilec_simt_emit(c, "tc_p%d_%" PRId64 " = %s;", j, q, ld);
        }
        tilec_simt_indent(c, -1);
        tilec_simt_emit(c, "}");
        tilec_simt_indent(c, -1);
        tilec_simt_emit(c, "}");
    }
}

/* Sets up the prefetch of loop s's copies and prints the declarations
 * and the first iteration's loads; 0 when s is not such a loop. */
int vk_pipe_begin(vk_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    if (g->npipe || tilec_simt_per_thread(c) || s->kind != TILEC_ST_FOR || s->u.loop.kind == TILEC_LOOP_PARALLEL)
        return 0;
    const tilec_ir_stmt_t *st = s->u.loop.body, *head = NULL;
    if (st && st->kind == TILEC_ST_BARRIER)
        head = st, st = st->next;
    int n = 0;
    int64_t regs = 0;
    for (; st && st->kind == TILEC_ST_COPY && n < VK_PIPE_MAX; st = st->next) {
        int64_t W = vec_copy_ok(st), per = W ? vec_per_thread(g, st, W) : 0;
        if (!per || (regs += per) > 16)
            return 0;
        g->pipe[n++] = st;
    }
    if (!n || !st || st->kind != TILEC_ST_BARRIER)
        return 0;
    /* nothing else in the loop writes what the copies read or fill */
    for (int j = 0; j < n; j++)
        if ((head && writes(head, g->pipe[j]->u.copy.src.buf)) || writes(st, g->pipe[j]->u.copy.src.buf) ||
            writes(st, g->pipe[j]->u.copy.dst.buf))
            return 0;
    tilec_ir_expr_t *vr = tilec_ir_varref(&g->ar, s->u.loop.var);
    if (!vr)
        return 0;
    g->npipe = n;
    g->pipe_var = tilec_simt_expr(c, vr);
    g->pipe_ext = tilec_simt_expr(c, s->u.loop.extent);
    tilec_simt_emit(c, "{ /* the loop's tiles are loaded an iteration ahead, into registers */");
    tilec_simt_indent(c, 1);
    for (int j = 0; j < n; j++) {
        int64_t per = vec_per_thread(g, g->pipe[j], vec_copy_ok(g->pipe[j]));
        for (int64_t q = 0; q < per; q++)
            tilec_simt_emit(c, "uvec4 tc_p%d_%" PRId64 ";", j, q);
        tilec_simt_emit(c, "bool tc_ok%d = false;", j);
    }
    tilec_simt_emit(c, "if (0 < %s) {", g->pipe_ext);
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "const int %s = 0;", g->pipe_var);
    prefetch(g, c);
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    return 1;
}

void vk_pipe_end(vk_gen_t *g, tilec_simt_ctx_t *c)
{
    g->npipe = 0;
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
}

/* Inside the loop: a prefetched copy stores its registers (or copies
 * element by element); after the last one, the next iteration's loads
 * (the registers are free; the barrier that follows orders only shared
 * memory). */
int vk_pipe_stmt(vk_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    for (int j = 0; j < g->npipe; j++) {
        if (g->pipe[j] != s)
            continue;
        int64_t W = vec_copy_ok(s), per = vec_per_thread(g, s, W);
        tilec_simt_emit(c, "{ /* copy %s -> %s, loaded the iteration before */", s->u.copy.src.buf->name ? s->u.copy.src.buf->name : "?",
                        s->u.copy.dst.buf->name ? s->u.copy.dst.buf->name : "?");
        tilec_simt_indent(c, 1);
        tilec_simt_emit(c, "if (tc_ok%d) {", j);
        tilec_simt_indent(c, 1);
        vec_stores(g, c, s, W, per, vk_fmt(g, "tc_p%d_", j));
        tilec_simt_indent(c, -1);
        tilec_simt_emit(c, "} else {");
        tilec_simt_indent(c, 1);
        int t = tilec_simt_tmp(c);
        (void)vec_bases(g, c, s, t, W);
        scalar_tile(g, c, s, t);
        tilec_simt_indent(c, -1);
        tilec_simt_emit(c, "}");
        if (j == g->npipe - 1) {
            /* every register stored: the next iteration's tiles */
            tilec_simt_emit(c, "if (%s + 1 < %s) {", g->pipe_var, g->pipe_ext);
            tilec_simt_indent(c, 1);
            tilec_simt_emit(c, "const int tc_kn%d = %s + 1;", t, g->pipe_var);
            tilec_simt_emit(c, "{");
            tilec_simt_indent(c, 1);
            tilec_simt_emit(c, "const int %s = tc_kn%d;", g->pipe_var, t);
            prefetch(g, c);
            tilec_simt_indent(c, -1);
            tilec_simt_emit(c, "}");
            tilec_simt_indent(c, -1);
            tilec_simt_emit(c, "}");
        }
        tilec_simt_indent(c, -1);
        tilec_simt_emit(c, "}");
        return 1;
    }
    return 0;
}

