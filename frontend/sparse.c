/*
 * frontend/sparse.c — 2:4 structured-sparse GEMM (T.gemm_sp) and tilelang's
 * sparse-layout helpers.
 *
 * T.gemm_sp(A_sparse, E, B, C) multiplies a matrix A whose K dimension is
 * 2:4 sparse (two nonzeros in every group of four; 1:2 for float32) by B,
 * with A given compressed: A_sparse holds the nonzeros (block_M x block_K/2)
 * and E the metadata, one 4-bit field per group, little-endian inside each
 * E element: bits 1:0 are the position of the group's first nonzero, bits
 * 3:2 that of its second (for float32, whose groups are of two, the field
 * is 0b0100 for position 0 and 0b1110 for position 1: the positions of the
 * element's two 16-bit halves).  One E element thus covers
 * e_factor = (bits of E / 4) * group elements of K (get_e_factor).
 *
 * The tile IR has dense GEMMs only, so T.gemm_sp becomes the decompression
 * of the A tile into an on-chip buffer of its dense shape (block_M x
 * block_K, zeros where the metadata puts none) followed by T.gemm of it:
 * the same products and sums as the sparse tensor-core instruction, whose
 * only gain is to skip the zeros.  transpose_A and transpose_E read A_sparse
 * and E as (K/2, M) and (K/e_factor, M) tiles; transpose_B and the rest pass
 * to T.gemm.
 */
#include "eval_internal.h"

#include <string.h>

/* (nonzeros, group) of an A dtype, as tilelang's GROUP_CONFIG; 0 when the
 * dtype has no sparse tensor-core form */
static int sp_group(tilec_dtype_t t, int *elem)
{
    switch (t) {
    case TILEC_FLOAT32: *elem = 1; return 2;
    case TILEC_FLOAT16: case TILEC_BFLOAT16: case TILEC_INT8: case TILEC_UINT8:
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2:
        *elem = 2;
        return 4;
    default: return 0;
    }
}

static int meta_ok(tilec_dtype_t t)
{
    return t == TILEC_INT8 || t == TILEC_UINT8 || t == TILEC_INT16 || t == TILEC_UINT16 || t == TILEC_INT32 ||
           t == TILEC_UINT32;
}

static int64_t e_factor(ev_t *ev, tilec_dtype_t a, tilec_dtype_t m, ast_loc_t loc)
{
    int elem = 0, g = sp_group(a, &elem);
    if (!g) ev_fail(ev, loc, "2:4 sparsity has no layout for %s (float32, float16, bfloat16, int8, uint8 and the "
                    "float8 types have one)", tilec_dtype_name(a));
    if (!meta_ok(m)) ev_fail(ev, loc, "sparse metadata is an 8, 16 or 32-bit integer type, not %s",
                             tilec_dtype_name(m));
    return (int64_t)tilec_dtype_size(m) * 8 / 4 * g;
}

/* get_e_factor(a_dtype, meta_dtype), get_e_replicate_factor(a_dtype) */
value_t *sp_call(ev_t *ev, int id, args_t *ar)
{
    tilec_dtype_t a;
    int elem = 0;
    if (ar->nkw) ev_fail(ev, ar->at, "%s takes positional arguments", id == BI_SP_E_FACTOR ? "get_e_factor" :
                         "get_e_replicate_factor");
    if (id == BI_SP_E_FACTOR) {
        if (ar->n != 2) ev_fail(ev, ar->at, "get_e_factor(a_dtype, meta_dtype) takes two dtypes");
        a = v_want_dtype(ev, ar->v[0], ar->loc[0]);
        return v_int(ev, e_factor(ev, a, v_want_dtype(ev, ar->v[1], ar->loc[1]), ar->loc[1]));
    }
    if (ar->n != 1) ev_fail(ev, ar->at, "get_e_replicate_factor(a_dtype) takes one dtype");
    a = v_want_dtype(ev, ar->v[0], ar->loc[0]);
    if (!sp_group(a, &elem)) (void)e_factor(ev, a, TILEC_INT16, ar->loc[0]);
    return v_int(ev, tilec_dtype_size(a) <= 1 ? 1 : 2);
}

static tilec_ir_buffer_t *onchip(ev_t *ev, value_t *v, ast_loc_t loc, const char *what)
{
    tilec_ir_buffer_t *b;
    int64_t c;
    int i;
    if (!v || v->kind != V_BUF)
        ev_fail(ev, loc, "T.gemm_sp: %s must be a whole on-chip buffer (T.alloc_shared or T.alloc_fragment)", what);
    b = v->u.buf;
    if (b->scope == TILEC_SCOPE_GLOBAL || b->scope == TILEC_SCOPE_VAR)
        ev_fail(ev, loc, "T.gemm_sp: %s ('%s') must be a T.alloc_shared or T.alloc_fragment buffer; copy its tile in "
                "first", what, b->name);
    if (b->ndim != 2) ev_fail(ev, loc, "T.gemm_sp: %s ('%s') must be 2-D", what, b->name);
    for (i = 0; i < 2; i++)
        if (!tilec_ir_is_const_int(b->shape[i], &c))
            ev_fail(ev, loc, "T.gemm_sp: the shape of %s ('%s') must be compile-time", what, b->name);
    return b;
}

static int64_t dim(const tilec_ir_buffer_t *b, int i)
{
    int64_t c = -1;
    tilec_ir_is_const_int(b->shape[i], &c);
    return c;
}

#define BIN(op, x, y) ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_##op, (x), (y)))

static tilec_ir_expr_t *ld2(ev_t *ev, tilec_ir_buffer_t *b, tilec_ir_expr_t *r, tilec_ir_expr_t *c, int trans)
{
    tilec_ir_expr_t *idx[2];
    idx[0] = trans ? c : r;
    idx[1] = trans ? r : c;
    return ev_chk(ev, tilec_ir_load(ev->a, b, idx));
}

static tilec_ir_stmt_t *par_loop(ev_t *ev, int64_t ext, const char *nm, tilec_ir_expr_t **iv, ast_loc_t loc)
{
    tilec_ir_var_t *var = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, nm), TILEC_INT32,
                                                      TILEC_VAR_LOOP));
    tilec_ir_stmt_t *st = ev_stmt(ev, TILEC_ST_FOR, loc);
    st->u.loop.var = var;
    st->u.loop.kind = TILEC_LOOP_PARALLEL;
    st->u.loop.extent = ex_int32(ev, ext);
    ev_set_loop_extent(ev, var, st->u.loop.extent);
    *iv = ev_chk(ev, tilec_ir_varref(ev->a, var));
    return st;
}

/* v: A_sparse, E, B, C, transpose_A, transpose_E, transpose_B, policy, clear_accum, k_pack, wg_wait */
void op_gemm_sp(ev_t *ev, value_t **v, ast_loc_t *l, ast_loc_t loc)
{
    tilec_ir_buffer_t *As, *E, *Ad;
    int ta, te, elem = 2, group, i;
    int64_t bm, bk, ef, gpe;
    tilec_ir_expr_t *m, *k, *g, *e, *nib, *val, *zero, *idx[2];
    tilec_ir_stmt_t *outer, *inner, *st;
    value_t *shape, *dt, *gv[10];
    ast_loc_t gl[10];
    char nm[64];
    ev_require_kernel(ev, loc, "T.gemm_sp");
    for (i = 0; i < 2; i++) v[i] = view_src(ev, v[i], l[i]);
    As = onchip(ev, v[0], l[0], "A_sparse");
    E = onchip(ev, v[1], l[1], "E");
    ta = v[4] && v[4]->kind != V_NONE && v_truth(ev, v[4], l[4]);
    te = v[5] && v[5]->kind != V_NONE && v_truth(ev, v[5], l[5]);
    if ((v[4] && v_is_rt(v[4])) || (v[5] && v_is_rt(v[5])))
        ev_fail(ev, loc, "T.gemm_sp: transpose_A and transpose_E must be compile-time True/False");
    group = sp_group(As->dtype, &elem);
    ef = e_factor(ev, As->dtype, E->dtype, l[1]);
    gpe = ef / group;                        /* 4-bit fields per E element */
    bm = dim(As, ta ? 1 : 0);
    bk = dim(As, ta ? 0 : 1) * group / elem; /* the dense K of the tile */
    if (dim(E, te ? 1 : 0) != bm || dim(E, te ? 0 : 1) * ef != bk)
        ev_fail(ev, l[1], "T.gemm_sp: the metadata E ('%s') is %lld x %lld; for A_sparse ('%s', %lld x %lld dense, "
                "%s with %s metadata: one E element per %lld of K) it must be %lld x %lld", E->name,
                (long long)dim(E, 0), (long long)dim(E, 1), As->name, (long long)bm, (long long)bk,
                tilec_dtype_name(As->dtype), tilec_dtype_name(E->dtype), (long long)ef,
                (long long)(te ? bk / ef : bm), (long long)(te ? bm : bk / ef));
    /* the dense tile, in shared memory as T.gemm's A */
    shape = v_seq(ev, 2, 0);
    shape->u.seq.items[0] = v_int(ev, bm);
    shape->u.seq.items[1] = v_int(ev, bk);
    dt = v_new(ev, V_DTYPE);
    dt->u.dt = As->dtype;
    snprintf(nm, sizeof nm, "%.40s_dense", As->name);
    Ad = op_alloc(ev, TILEC_SCOPE_SHARED, shape, dt, NULL, nm, loc)->u.buf;
    /* for m, k in T.Parallel(bm, bk): Ad[m, k] = the nonzero the metadata puts at k, else 0 */
    outer = par_loop(ev, bm, "sp_m", &m, loc);
    inner = par_loop(ev, bk, "sp_k", &k, loc);
    outer->u.loop.body = inner;
    g = BIN(FLOORDIV, k, ex_int32(ev, group));
    e = ex_cast(ev, ld2(ev, E, m, BIN(FLOORDIV, g, ex_int32(ev, gpe)), te), TILEC_INT32);
    nib = BIN(BITAND, BIN(SHR, e, BIN(MUL, BIN(FLOORMOD, g, ex_int32(ev, gpe)), ex_int32(ev, 4))), ex_int32(ev, 15));
    zero = ev_chk(ev, tilec_dtype_is_float(As->dtype) ? tilec_ir_float(ev->a, 0.0, As->dtype)
                                                      : tilec_ir_int(ev->a, 0, As->dtype));
    if (elem == 1) {
        /* one nonzero per pair: position (field & 3) >> 1 */
        tilec_ir_expr_t *pos = BIN(SHR, BIN(BITAND, nib, ex_int32(ev, 3)), ex_int32(ev, 1));
        val = ev_chk(ev, tilec_ir_select(ev->a, BIN(EQ, BIN(FLOORMOD, k, ex_int32(ev, 2)), pos),
                                         ld2(ev, As, m, g, ta), zero));
    } else {
        tilec_ir_expr_t *p = BIN(FLOORMOD, k, ex_int32(ev, 4));
        tilec_ir_expr_t *i0 = BIN(BITAND, nib, ex_int32(ev, 3));
        tilec_ir_expr_t *i1 = BIN(BITAND, BIN(SHR, nib, ex_int32(ev, 2)), ex_int32(ev, 3));
        tilec_ir_expr_t *c0 = BIN(MUL, g, ex_int32(ev, 2));
        val = ev_chk(ev, tilec_ir_select(ev->a, BIN(EQ, p, i1), ld2(ev, As, m, BIN(ADD, c0, ex_int32(ev, 1)), ta),
                                         zero));
        val = ev_chk(ev, tilec_ir_select(ev->a, BIN(EQ, p, i0), ld2(ev, As, m, c0, ta), val));
    }
    idx[0] = m;
    idx[1] = k;
    st = ev_stmt(ev, TILEC_ST_STORE, loc);
    st->u.store.buf = Ad;
    st->u.store.idx = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *idx * 2));   /* IR: the caller's arena */
    memcpy(st->u.store.idx, idx, sizeof *idx * 2);
    st->u.store.value = val;
    inner->u.loop.body = st;
    ev_emit(ev, outer, loc);
    /* T.gemm(Ad, B, C, transpose_B=..., policy=..., clear_accum=..., k_pack=..., wg_wait=...) */
    for (i = 0; i < 10; i++) {
        gv[i] = NULL;
        gl[i] = loc;
    }
    gv[0] = v_new(ev, V_BUF);
    gv[0]->u.buf = Ad;
    gl[0] = l[0];
    gv[1] = v[2]; gl[1] = l[2];
    gv[2] = v[3]; gl[2] = l[3];
    gv[3] = ev->vfalse;
    gv[4] = v[6]; gl[4] = l[6];
    gv[5] = v[7]; gl[5] = l[7];
    gv[6] = v[8]; gl[6] = l[8];
    gv[7] = v[9]; gl[7] = l[9];
    gv[8] = v[10]; gl[8] = l[10];
    op_gemm(ev, gv, gl, loc);
}
