/*
 * frontend/mma_emitter.c — TileLang's TensorCoreIntrinEmitter at block level.
 *
 * Some TileLang kernels drive the tensor cores through a helper object
 * instead of T.gemm: `mma_emitter = TensorCoreIntrinEmitter(a_dtype=...,
 * block_row_warps=2, block_col_warps=2, warp_row_tiles=64, ...)`, then in
 * the kernel ldmatrix_a(A_local, A_shared, ki), ldmatrix_b(B_local,
 * B_shared, ki), mma(A_local, B_local, C_local) and stmatrix(C_local,
 * C_shared), where A_local, B_local and C_local are each thread's register
 * pieces (T.alloc_local) of warp-level MMA fragments.  Together the calls
 * mean: the block tile C (block_M x block_N, block_M = block_row_warps *
 * warp_row_tiles, block_N = block_col_warps * warp_col_tiles) accumulates
 * A[:, k] @ B[:, k]^T over the k-slices ki * k_dim ... (k_dim = 256 / the
 * input dtype's bits), and stmatrix stores it as 16 x n_dim tiles
 * (C_shared[i // 16, j // n_dim, i % 16, j % n_dim], or a 2-D buffer
 * as it is, or global C at (pid_m, pid_n)).
 *
 * tilec's kernels are block-level, so the emitter keeps each of those
 * register buffers as a hidden block-level fragment of the whole tile: an
 * ldmatrix is a T.copy of the k-slice into it, mma is a T.gemm, stmatrix a
 * copy out.  The accumulator starts as the user's T.clear(C_local) left it
 * (the clear is found in the kernel and repeated on the hidden tile).  The
 * user's own register buffers then hold nothing, so any other use of them
 * is a diagnostic when the kernel ends.  The emitter is a compile-time
 * object: its sizes (local_size_a, warp_rows, micro_size_k, ...) read as
 * attributes.
 */
#include "eval_internal.h"
#include "tilec/ir_walk.h"

#include <string.h>

enum { MM_A = 0, MM_B, MM_C };

/* The emitter's configuration, kept in its object's attributes. */
typedef struct mmcfg {
    tilec_dtype_t a_dt, b_dt, acc_dt;
    int a_trans, b_trans, block_m, block_n, k_dim, n_dim, chunk;
} mmcfg_t;

static value_t *attr(ev_t *ev, value_t *o, const char *n) { return cls_getattr(ev, o, n, ev->cur_loc); }

static int64_t attr_int(ev_t *ev, value_t *o, const char *n)
{
    return v_want_int(ev, attr(ev, o, n), ev->cur_loc, n);
}

static mmcfg_t cfg_of(ev_t *ev, value_t *o)
{
    mmcfg_t c;
    c.a_dt = v_want_dtype(ev, attr(ev, o, "a_dtype"), ev->cur_loc);
    c.b_dt = v_want_dtype(ev, attr(ev, o, "b_dtype"), ev->cur_loc);
    c.acc_dt = v_want_dtype(ev, attr(ev, o, "accum_dtype"), ev->cur_loc);
    c.a_trans = (int)attr_int(ev, o, "a_transposed");
    c.b_trans = (int)attr_int(ev, o, "b_transposed");
    c.block_m = (int)(attr_int(ev, o, "block_row_warps") * attr_int(ev, o, "warp_row_tiles"));
    c.block_n = (int)(attr_int(ev, o, "block_col_warps") * attr_int(ev, o, "warp_col_tiles"));
    c.k_dim = (int)attr_int(ev, o, "micro_size_k");
    c.n_dim = (int)attr_int(ev, o, "micro_size_y");
    c.chunk = (int)attr_int(ev, o, "chunk");
    return c;
}

static void set_int(ev_t *ev, env_t *e, const char *n, int64_t v) { env_set(ev, e, n, v_int(ev, v)); }

static value_t *method(ev_t *ev, value_t *self, int id)
{
    value_t *m = v_new(ev, V_BUILTIN);
    m->u.bi.id = id;
    m->u.bi.self = self;
    return m;
}

/* TensorCoreIntrinEmitter(a_dtype=..., ...): the emitter object. */
value_t *mma_new(ev_t *ev, args_t *ar)
{
    static const char *const names[] = {"a_dtype", "b_dtype", "accum_dtype", "a_transposed", "b_transposed",
                                        "block_row_warps", "block_col_warps", "warp_row_tiles", "warp_col_tiles",
                                        "chunk", "reduce_k", "num_elems_per_byte", "is_m_first", "thread_var"};
    enum { NN = sizeof names / sizeof names[0] };
    value_t *a[NN], *o, *cls;
    ast_loc_t l[NN];
    int64_t iv[NN];
    tilec_dtype_t dt[3];
    int i, bits;
    static const int64_t dflt[NN] = {0, 0, 0, 0, 0, 2, 2, 8, 8, 16, 1, 1, 0, 0};
    bi_bind(ev, ar, "TensorCoreIntrinEmitter", names, NN, 0, a, l);
    for (i = 0; i < 3; i++) dt[i] = a[i] ? v_want_dtype(ev, a[i], l[i]) : TILEC_FLOAT16;
    for (i = 3; i < 13; i++) iv[i] = a[i] ? v_want_int(ev, a[i], l[i], names[i]) : dflt[i];
    if (a[13] && a[13]->kind != V_NONE) ev_fail(ev, l[13], "TensorCoreIntrinEmitter: thread_var is not supported");
    if (iv[10] != 1 || iv[11] != 1)
        ev_fail(ev, ar->at, "TensorCoreIntrinEmitter with reduce_k or num_elems_per_byte other than 1 is outside the "
                "subset tilec supports");
    bits = (int)tilec_dtype_size(dt[0]) * 8;
    if (bits != 16 && bits != 8 && bits != 32) ev_fail(ev, l[0], "TensorCoreIntrinEmitter: unsupported a_dtype");
    if (iv[7] < 16 || iv[7] % 16 || iv[8] < 8 || iv[8] % 8 || iv[5] < 1 || iv[6] < 1 || iv[9] < 1)
        ev_fail(ev, ar->at, "TensorCoreIntrinEmitter: warp_row_tiles must be a multiple of 16 and warp_col_tiles of 8");
    cls = v_new(ev, V_CLASS);
    cls->u.obj.name = "TensorCoreIntrinEmitter";
    cls->u.obj.attrs = ev_env_new(ev, NULL);
    o = v_new(ev, V_OBJECT);
    o->u.obj.name = cls->u.obj.name;
    o->u.obj.cls = cls;
    o->u.obj.attrs = ev_env_new(ev, NULL);
    for (i = 0; i < 3; i++) {
        value_t *d = v_new(ev, V_DTYPE);
        d->u.dt = dt[i];
        env_set(ev, o->u.obj.attrs, names[i], d);
    }
    for (i = 3; i < 13; i++) env_set(ev, o->u.obj.attrs, names[i], i == 3 || i == 4 || i == 12 ? v_bool(ev, iv[i] != 0)
                                                                                               : v_int(ev, iv[i]));
    {
        env_t *e = o->u.obj.attrs;
        int64_t k_dim = 256 / bits, n_dim = iv[8] % 16 == 0 ? 16 : 8;
        set_int(ev, e, "M_DIM", 16);
        set_int(ev, e, "n_dim", n_dim);
        set_int(ev, e, "WARP_SIZE", 32);
        set_int(ev, e, "k_dim", k_dim);
        set_int(ev, e, "micro_size_x", 16);
        set_int(ev, e, "micro_size_y", n_dim);
        set_int(ev, e, "micro_size_k", k_dim);
        set_int(ev, e, "warp_rows", iv[7] / 16);
        set_int(ev, e, "warp_cols", iv[8] / n_dim);
        set_int(ev, e, "local_size_a", 16 * k_dim / 32);
        set_int(ev, e, "local_size_b", n_dim * k_dim / 32);
        set_int(ev, e, "local_size_out", 16 * n_dim / 32);
        set_int(ev, e, "threads", 32 * iv[5] * iv[6]);
        env_set(ev, e, "ldmatrix_a", method(ev, o, BI_MMA_LDA));
        env_set(ev, e, "ldmatrix_b", method(ev, o, BI_MMA_LDB));
        env_set(ev, e, "mma", method(ev, o, BI_MMA_MMA));
        env_set(ev, e, "stmatrix", method(ev, o, BI_MMA_STMATRIX));
    }
    return o;
}

/* ---- the hidden tiles ----------------------------------------------------- */

static struct mma_bind *find_bind(ev_t *ev, const tilec_ir_buffer_t *user)
{
    int i;
    for (i = 0; i < ev->nmma; i++)
        if (ev->mma[i].k == ev->k && ev->mma[i].user == user) return &ev->mma[i];
    return NULL;
}

static value_t *buf_value(ev_t *ev, tilec_ir_buffer_t *b)
{
    value_t *v = v_new(ev, V_BUF);
    v->u.buf = b;
    return v;
}

static tilec_ir_buffer_t *want_buf(ev_t *ev, value_t *v, ast_loc_t loc, const char *what)
{
    if (v->kind != V_BUF) ev_fail(ev, loc, "%s of the MMA emitter must be a buffer, got %s", what, v_kind_name(v));
    return v->u.buf;
}

/* The hidden tile of user buffer b (role MM_*), made r x c of dtype t on first use. */
static tilec_ir_buffer_t *hidden(ev_t *ev, tilec_ir_buffer_t *b, int role, int64_t r, int64_t c, tilec_dtype_t t,
                                 ast_loc_t loc)
{
    struct mma_bind *m = find_bind(ev, b);
    value_t *shape, *dtv;
    if (m) {
        if (m->role != role) ev_fail(ev, loc, "'%s' is used as two different operands of the MMA emitter", b->name);
        return m->tile;
    }
    if (ev->nmma == ev->cap_mma) {
        int nc = ev->cap_mma ? 2 * ev->cap_mma : 8;
        struct mma_bind *n = ev_alloc(ev, sizeof *n * (size_t)nc);
        if (ev->nmma) memcpy(n, ev->mma, sizeof *n * (size_t)ev->nmma);
        ev->mma = n;
        ev->cap_mma = nc;
    }
    shape = v_seq(ev, 2, 0);
    shape->u.seq.items[0] = v_int(ev, r);
    shape->u.seq.items[1] = v_int(ev, c);
    dtv = v_new(ev, V_DTYPE);
    dtv->u.dt = t;
    m = &ev->mma[ev->nmma++];
    m->k = ev->k;
    m->user = b;
    m->role = role;
    m->tile = op_alloc(ev, TILEC_SCOPE_FRAGMENT, shape, dtv, NULL, b->name, loc)->u.buf;
    return m->tile;
}

/* A region value buf[b0:b0+e0, b1:b1+e1]. */
static value_t *region2(ev_t *ev, tilec_ir_buffer_t *buf, tilec_ir_expr_t *b0, int64_t e0, tilec_ir_expr_t *b1,
                        int64_t e1)
{
    value_t *v = v_new(ev, V_REGION);
    region_t *r = ev_alloc(ev, sizeof *r);
    r->buf = buf;
    r->base = ev_alloc(ev, sizeof *r->base * 2);
    r->ext = ev_alloc(ev, sizeof *r->ext * 2);
    r->base[0] = b0;
    r->base[1] = b1;
    r->ext[0] = e0;
    r->ext[1] = e1;
    r->corner = 0;
    v->u.rg = r;
    return v;
}

/* ldmatrix_a / ldmatrix_b: the k-slice rk * chunk + ki * k_dim of the shared operand into the hidden tile. */
static void ldmatrix(ev_t *ev, value_t *self, int is_a, args_t *ar)
{
    static const char *const names[] = {"local_buf", "shared_buf", "ki", "rk", "thread_bindings", "thread_binding"};
    value_t *a[6];
    ast_loc_t l[6];
    mmcfg_t c = cfg_of(ev, self);
    tilec_ir_buffer_t *user, *sh, *t;
    tilec_ir_expr_t *k0, *zero = ex_int32(ev, 0);
    int trans = is_a ? c.a_trans : !c.b_trans;   /* the k dimension first */
    int64_t rows = is_a ? c.block_m : c.block_n;
    value_t *src;
    bi_bind(ev, ar, is_a ? "ldmatrix_a" : "ldmatrix_b", names, 6, 3, a, l);
    user = want_buf(ev, a[0], l[0], "the local buffer");
    sh = want_buf(ev, a[1], l[1], "the shared buffer");
    if (sh->ndim != 2) ev_fail(ev, l[1], "the MMA emitter loads from a 2-D shared buffer");
    k0 = ex_index(ev, v_binop(ev, '*', a[2], v_int(ev, c.k_dim), l[2]), l[2]);
    if (a[3]) k0 = ex_index(ev, v_binop(ev, '+', v_expr(ev, k0), v_binop(ev, '*', a[3], v_int(ev, c.chunk), l[3]), l[3]), l[3]);
    t = hidden(ev, user, is_a ? MM_A : MM_B, trans ? c.k_dim : rows, trans ? rows : c.k_dim, is_a ? c.a_dt : c.b_dt,
               ar->at);
    src = trans ? region2(ev, sh, k0, c.k_dim, zero, rows) : region2(ev, sh, zero, rows, k0, c.k_dim);
    op_copy(ev, src, buf_value(ev, t), ar->at, l[1], l[0]);
}

/* The user's T.clear / T.fill of C_local (already in the kernel body) is
 * repeated on its hidden tile, just before it (after it, the frontend's
 * next statement would take its place). */
typedef struct clearfind { ev_t *ev; struct mma_bind *m; int n; } clearfind_t;

static int find_clear(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    clearfind_t *f = w->user;
    ev_t *ev = f->ev;
    tilec_ir_stmt_t *st;
    int i;
    if (s->kind != TILEC_ST_FILL || s->u.fill.dst.buf != f->m->user) return TILEC_WALK_CONTINUE;
    if (f->n++) return TILEC_WALK_CONTINUE;
    st = ev_stmt(ev, TILEC_ST_FILL, ev->cur_loc);
    st->u.fill.dst.buf = f->m->tile;
    st->u.fill.dst.base = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *st->u.fill.dst.base * 2));
    st->u.fill.dst.extent = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *st->u.fill.dst.extent * 2));
    for (i = 0; i < 2; i++) {
        int64_t e = 0;
        st->u.fill.dst.base[i] = ex_int32(ev, 0);
        tilec_ir_is_const_int(f->m->tile->shape[i], &e);
        st->u.fill.dst.extent[i] = e;
    }
    st->u.fill.value = ex_cast(ev, s->u.fill.value, f->m->tile->dtype);
    tilec_ir_walk_insert_before(w, st);
    return TILEC_WALK_CONTINUE;
}

static void accumulator_init(ev_t *ev, struct mma_bind *m, ast_loc_t loc)
{
    tilec_ir_walk_t w;
    clearfind_t f;
    memset(&w, 0, sizeof w);
    f.ev = ev;
    f.m = m;
    f.n = 0;
    w.stmt_pre = find_clear;
    w.user = &f;
    if (tilec_ir_walk_block(&w, &ev->k->body) < 0 || f.n != 1)
        ev_fail(ev, loc, "the MMA emitter's accumulator '%s' must be cleared once (T.clear or T.fill) at the kernel's "
                "top level before its first mma", m->user->name);
}

static void mma_op(ev_t *ev, value_t *self, args_t *ar)
{
    static const char *const names[] = {"A_local_buf", "B_local_buf", "C_local_buf", "k_inner"};
    value_t *a[4], *g[10];
    ast_loc_t l[4], gl[10];
    mmcfg_t c = cfg_of(ev, self);
    struct mma_bind *ma, *mb, *mc;
    tilec_ir_buffer_t *cb;
    int i;
    bi_bind(ev, ar, "mma", names, 4, 3, a, l);
    if (a[3] && (a[3]->kind != V_INT || a[3]->u.i != 0)) ev_fail(ev, l[3], "mma: k_inner other than 0 is not supported");
    ma = find_bind(ev, want_buf(ev, a[0], l[0], "A"));
    mb = find_bind(ev, want_buf(ev, a[1], l[1], "B"));
    if (!ma || ma->role != MM_A) ev_fail(ev, l[0], "mma: '%s' was not loaded by ldmatrix_a", a[0]->u.buf->name);
    if (!mb || mb->role != MM_B) ev_fail(ev, l[1], "mma: '%s' was not loaded by ldmatrix_b", a[1]->u.buf->name);
    cb = want_buf(ev, a[2], l[2], "C");
    mc = find_bind(ev, cb);
    if (!mc) {
        hidden(ev, cb, MM_C, c.block_m, c.block_n, c.acc_dt, ar->at);
        mc = find_bind(ev, cb);
        accumulator_init(ev, mc, ar->at);
    } else if (mc->role != MM_C) {
        ev_fail(ev, l[2], "'%s' is used as two different operands of the MMA emitter", cb->name);
    }
    for (i = 0; i < 10; i++) {
        g[i] = NULL;
        gl[i] = ar->at;
    }
    g[0] = buf_value(ev, ma->tile);
    g[1] = buf_value(ev, mb->tile);
    g[2] = buf_value(ev, mc->tile);
    g[3] = v_bool(ev, c.a_trans);
    g[4] = v_bool(ev, c.b_trans);   /* the hidden B tile is block_N x k (b_transposed) or k x block_N */
    op_gemm(ev, g, gl, ar->at);
}

/* stmatrix(C_local, C_buf, pid_m=None, pid_n=None) */
static void stmatrix(ev_t *ev, value_t *self, args_t *ar)
{
    static const char *const names[] = {"C_local_buf", "C_buf", "pid_m", "pid_n", "thread_bindings", "thread_binding"};
    value_t *a[6];
    ast_loc_t l[6];
    mmcfg_t c = cfg_of(ev, self);
    struct mma_bind *mc;
    tilec_ir_buffer_t *dst;
    bi_bind(ev, ar, "stmatrix", names, 6, 2, a, l);
    mc = find_bind(ev, want_buf(ev, a[0], l[0], "the accumulator"));
    if (!mc || mc->role != MM_C) ev_fail(ev, l[0], "stmatrix: '%s' is not an accumulator of mma", a[0]->u.buf->name);
    if ((a[2] && a[2]->kind != V_NONE) || (a[3] && a[3]->kind != V_NONE)) {   /* global, at block (pid_m, pid_n) */
        if (!a[2] || !a[3] || a[2]->kind == V_NONE || a[3]->kind == V_NONE)
            ev_fail(ev, ar->at, "stmatrix: give both pid_m and pid_n");
        dst = want_buf(ev, a[1], l[1], "the destination");
        if (dst->ndim != 2) ev_fail(ev, l[1], "stmatrix to a global buffer needs a 2-D one");
        op_copy(ev, buf_value(ev, mc->tile),
                region2(ev, dst, ex_index(ev, v_binop(ev, '*', a[2], v_int(ev, c.block_m), l[2]), l[2]), c.block_m,
                        ex_index(ev, v_binop(ev, '*', a[3], v_int(ev, c.block_n), l[3]), l[3]), c.block_n),
                ar->at, l[0], l[1]);
        return;
    }
    dst = want_buf(ev, a[1], l[1], "the destination");
    if (dst->ndim == 2) {
        op_copy(ev, buf_value(ev, mc->tile), a[1], ar->at, l[0], l[1]);
        return;
    }
    if (dst->ndim != 4) ev_fail(ev, l[1], "stmatrix stores to a 2-D or 4-D buffer");
    {   /* for i, j in T.Parallel(block_M, block_N): C[i // 16, j // n, i % 16, j % n] = tile[i, j] */
        tilec_ir_stmt_t *li = ev_stmt(ev, TILEC_ST_FOR, ar->at), *lj = ev_stmt(ev, TILEC_ST_FOR, ar->at);
        tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_STORE, ar->at);
        tilec_ir_var_t *vi = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "i"), TILEC_INT32, TILEC_VAR_LOOP));
        tilec_ir_var_t *vj = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "j"), TILEC_INT32, TILEC_VAR_LOOP));
        tilec_ir_expr_t *ei = ev_chk(ev, tilec_ir_varref(ev->a, vi)), *ej = ev_chk(ev, tilec_ir_varref(ev->a, vj));
        tilec_ir_expr_t *src[2], **idx = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *idx * 4));
        li->u.loop.kind = lj->u.loop.kind = TILEC_LOOP_PARALLEL;
        li->u.loop.num_stages = lj->u.loop.num_stages = 1;
        li->u.loop.extent = ex_int32(ev, c.block_m);
        lj->u.loop.extent = ex_int32(ev, c.block_n);
        li->u.loop.var = vi;
        lj->u.loop.var = vj;
        ev_set_loop_extent(ev, vi, li->u.loop.extent);
        ev_set_loop_extent(ev, vj, lj->u.loop.extent);
        idx[0] = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_FLOORDIV, ei, ex_int32(ev, 16)));
        idx[1] = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_FLOORDIV, ej, ex_int32(ev, c.n_dim)));
        idx[2] = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_FLOORMOD, ei, ex_int32(ev, 16)));
        idx[3] = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_FLOORMOD, ej, ex_int32(ev, c.n_dim)));
        src[0] = ei;
        src[1] = ej;
        st->u.store.buf = dst;
        st->u.store.idx = idx;
        st->u.store.value = ex_cast(ev, ev_chk(ev, tilec_ir_load(ev->a, mc->tile, src)), dst->dtype);
        lj->u.loop.body = st;
        li->u.loop.body = lj;
        ev_emit(ev, li, ar->at);
    }
}

value_t *mma_call(ev_t *ev, int id, value_t *self, args_t *ar)
{
    ev_require_kernel(ev, ar->at, "the MMA emitter");
    th_reject(ev, "the MMA emitter", ar->at);
    switch (id) {
    case BI_MMA_LDA: ldmatrix(ev, self, 1, ar); break;
    case BI_MMA_LDB: ldmatrix(ev, self, 0, ar); break;
    case BI_MMA_MMA: mma_op(ev, self, ar); break;
    default: stmatrix(ev, self, ar); break;
    }
    return ev->none;
}

/* ---- at the kernel's end: the user's register buffers hold nothing -------- */

static int check_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    ev_t *ev = w->user;
    const tilec_ir_buffer_t *b[4] = {NULL, NULL, NULL, NULL};
    int i;
    switch (s->kind) {
    case TILEC_ST_STORE: b[0] = s->u.store.buf; break;
    case TILEC_ST_COPY: case TILEC_ST_COPY_ASYNC: b[0] = s->u.copy.src.buf; b[1] = s->u.copy.dst.buf; break;
    case TILEC_ST_GEMM: b[0] = s->u.gemm.a; b[1] = s->u.gemm.b; b[2] = s->u.gemm.c; break;
    case TILEC_ST_REDUCE: b[0] = s->u.reduce.src; b[1] = s->u.reduce.dst; break;
    case TILEC_ST_CUMSUM: b[0] = s->u.cumsum.src; b[1] = s->u.cumsum.dst; break;
    case TILEC_ST_ATOMIC: b[0] = s->u.atomic.buf; break;
    case TILEC_ST_PRINT: b[0] = s->u.print.buf; break;
    default: break;
    }
    for (i = 0; i < 4; i++)
        if (b[i] && find_bind(ev, b[i])) goto used;
    return TILEC_WALK_CONTINUE;
used:
    ev->cur_loc.line = s->line;
    ev->cur_loc.col = s->col;
    ev_fail(ev, ev->cur_loc, "'%s' belongs to the MMA emitter (its ldmatrix / mma / stmatrix), which keeps it as a "
            "block-level tile; other uses of it are outside the subset", b[i]->name);
}

static int check_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    ev_t *ev = w->user;
    if (e->kind == TILEC_EX_LOAD && find_bind(ev, e->u.load.buf)) {
        if (w->stmt) {
            ev->cur_loc.line = w->stmt->line;
            ev->cur_loc.col = w->stmt->col;
        }
        ev_fail(ev, ev->cur_loc, "'%s' belongs to the MMA emitter (its ldmatrix / mma / stmatrix), which keeps it as a "
                "block-level tile; other uses of it are outside the subset", e->u.load.buf->name);
    }
    return TILEC_WALK_CONTINUE;
}

void mma_check(ev_t *ev)
{
    tilec_ir_walk_t w;
    int i, any = 0;
    for (i = 0; i < ev->nmma; i++) any |= ev->mma[i].k == ev->k;
    if (!any) return;
    memset(&w, 0, sizeof w);
    w.stmt_pre = check_stmt;
    w.expr_pre = check_expr;
    w.user = ev;
    tilec_ir_walk_block(&w, &ev->k->body);
}
