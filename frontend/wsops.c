/*
 * frontend/wsops.c — TileLang's Hopper/Blackwell objects that keep a
 * meaning at tilec's block level: warp-specialized regions, mbarriers,
 * TMA copies, warpgroup and tensor-memory MMAs.
 *
 * In TileLang, `with T.ws(k):` runs its body on warp group k only, and the
 * groups hand tiles to each other through mbarriers (`T.barrier_arrive`,
 * `T.barrier_wait`, `T.mbarrier_wait_parity`) that `T.tma_copy` and
 * `T.tcgen05_gemm` signal.  tilec's statements are block-collective and run
 * in program order (the lowering places the barriers it needs), so such a
 * program has one block-level reading: each `T.ws` body runs, in the order
 * written, by the whole block; a TMA copy is a `T.copy`; a TCGEN05 GEMM is a
 * `T.gemm`; a tensor-memory buffer is a fragment; arrive and wait have
 * nothing left to order.  That reading is the producer/consumer protocol run
 * with its waits already satisfied, which is how TileLang's examples write
 * it (the producer's code before the consumer's in each step).  The
 * barriers themselves are compile-time tokens (V_BARRIER): they can be
 * indexed (`mbars[k % stages]`) and passed, and nothing else.
 *
 * `if tx < 128: ... else: ...` roles that meet only at these barriers are
 * ordered by wsroles.c.  Clusters and the T.ptx_* intrinsics stay outside
 * the subset (builtins.c names them).
 */
#include "eval_internal.h"

#include <string.h>

static const struct { const char *name; int id; } ws_members[] = {
    {"ws", BI_WS}, {"alloc_barrier", BI_ALLOC_BARRIER}, {"barrier_arrive", BI_BARRIER_ARRIVE},
    {"mbarrier_arrive", BI_MBARRIER_ARRIVE}, {"barrier_wait", BI_BARRIER_WAIT},
    {"mbarrier_wait_parity", BI_MBARRIER_WAIT}, {"mbarrier_arrive_expect_tx", BI_MBARRIER_EXPECT_TX},
    {"fence_proxy_async", BI_FENCE_ASYNC}, {"tma_store_wait", BI_TMA_STORE_WAIT}, {"tma_copy", BI_TMA_COPY},
    {"alloc_tmem", BI_ALLOC_TMEM}, {"tcgen05_gemm", BI_TCGEN05_GEMM}, {"wgmma_gemm", BI_WGMMA_GEMM},
    {"wait_wgmma", BI_WAIT_WGMMA}, {"cp_async_barrier_noinc", BI_CP_ASYNC_BAR}, {"access_ptr", BI_ACCESS_PTR},
    {"ptx_cp_async", BI_PTX_CP_ASYNC}, {"tcgen05_mma_arrive", BI_TCGEN05_ARRIVE},
    {"ptx_commit_group", BI_PTX_COMMIT}, {"ptx_wait_group", BI_PTX_WAIT}, {NULL, 0}
};

value_t *ws_member(ev_t *ev, const char *name)
{
    int i;
    for (i = 0; ws_members[i].name; i++) {
        if (!strcmp(ws_members[i].name, name)) {
            value_t *v = v_new(ev, V_BUILTIN);
            v->u.bi.id = ws_members[i].id;
            return v;
        }
    }
    return NULL;
}

const char *ws_name(int id)
{
    int i;
    for (i = 0; ws_members[i].name; i++)
        if (ws_members[i].id == id) return ws_members[i].name;
    return NULL;
}

/* An mbarrier argument: a barrier token, or an element of a barrier list.
 * Inside warp roles (wsroles.c) the schedule itself runs every barrier
 * operation it sees; one it does not see (in a macro or a helper's body)
 * would go unscheduled, so it is refused there. */
static void want_barrier(ev_t *ev, value_t *v, ast_loc_t loc, const char *fname)
{
    if (!v || v->kind != V_BARRIER)
        ev_fail(ev, loc, "T.%s takes a barrier from T.alloc_barrier, got %s", fname, v ? v_kind_name(v) : "nothing");
    if (ev->wr_plain)
        ev_fail(ev, loc, "T.%s inside a call in warp-role code is outside the subset tilec supports: tilec orders the "
                "roles by the barrier operations written in the roles themselves; write it there", fname);
}

/* A parity or phase: an integer, at compile time or at run time (only checked). */
static void want_index(ev_t *ev, value_t *v, ast_loc_t loc, const char *what)
{
    if (v_is_rt(v)) {
        tilec_ir_expr_t *e = ex_of(ev, v, loc);
        if (!tilec_dtype_is_int(e->dtype) && e->dtype != TILEC_BOOL)
            ev_fail(ev, loc, "%s must be an integer, got %s", what, tilec_dtype_name(e->dtype));
        return;
    }
    (void)v_want_int(ev, v, loc, what);
}

/* T.ptx_cp_async(dst, src, n) of two T.access_ptr runs: one thread's copy of
 * n contiguous elements, complete where it stands (its barrier is the
 * thread's T.cp_async_barrier_noinc, which warp roles order). */
static void cp_async(ev_t *ev, value_t *d, value_t *s, value_t *n, ast_loc_t at, ast_loc_t dl, ast_loc_t sl,
                     ast_loc_t nl)
{
    region_t *rd, *rs;
    int64_t len, cnt;
    tilec_ir_stmt_t *loop, *st, **saved;
    tilec_ir_var_t *e;
    tilec_ir_expr_t **di, **si;
    int i;
    if (d->kind != V_REGION || s->kind != V_REGION || !d->u.rg->ext || !s->u.rg->ext)
        ev_fail(ev, at, "T.ptx_cp_async copies between two T.access_ptr(element, mode, extent) runs");
    rd = d->u.rg;
    rs = s->u.rg;
    len = rd->ext[rd->buf->ndim - 1];
    if (rs->ext[rs->buf->ndim - 1] != len)
        ev_fail(ev, at, "T.ptx_cp_async: the runs have %lld and %lld elements", (long long)len,
                (long long)rs->ext[rs->buf->ndim - 1]);
    if (rd->buf->dtype != rs->buf->dtype)
        ev_fail(ev, at, "T.ptx_cp_async copies bytes: '%s' is %s and '%s' %s", rd->buf->name,
                tilec_dtype_name(rd->buf->dtype), rs->buf->name, tilec_dtype_name(rs->buf->dtype));
    if (rd->buf->scope != TILEC_SCOPE_SHARED) ev_fail(ev, dl, "T.ptx_cp_async writes shared memory");
    if (rs->buf->scope != TILEC_SCOPE_GLOBAL) ev_fail(ev, sl, "T.ptx_cp_async reads a kernel tensor");
    cnt = v_want_int(ev, n, nl, "the size of the copy");
    if (cnt != len && cnt != len * (int64_t)tilec_dtype_size(rd->buf->dtype))
        ev_fail(ev, nl, "T.ptx_cp_async of %lld: the runs are %lld elements (%lld bytes)", (long long)cnt,
                (long long)len, (long long)(len * (int64_t)tilec_dtype_size(rd->buf->dtype)));
    loop = ev_stmt(ev, TILEC_ST_FOR, at);
    loop->u.loop.kind = TILEC_LOOP_SERIAL;
    loop->u.loop.num_stages = 1;
    loop->u.loop.extent = ex_int32(ev, len);
    e = ev_chk(ev, tilec_ir_var_add(ev->a, ev->k, ev_unique_var(ev, "e"), TILEC_INT32, TILEC_VAR_LOOP));
    loop->u.loop.var = e;
    ev_set_loop_extent(ev, e, loop->u.loop.extent);
    di = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *di * (size_t)rd->buf->ndim));   /* IR: the kernel's arena */
    si = ev_chk(ev, tilec_arena_alloc(ev->a, sizeof *si * (size_t)rs->buf->ndim));
    for (i = 0; i < rd->buf->ndim; i++) di[i] = rd->base[i];
    for (i = 0; i < rs->buf->ndim; i++) si[i] = rs->base[i];
    di[rd->buf->ndim - 1] = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, di[rd->buf->ndim - 1],
                                                       ev_chk(ev, tilec_ir_varref(ev->a, e))));
    si[rs->buf->ndim - 1] = ev_chk(ev, tilec_ir_binary(ev->a, TILEC_BIN_ADD, si[rs->buf->ndim - 1],
                                                       ev_chk(ev, tilec_ir_varref(ev->a, e))));
    saved = ev->tail;
    ev->tail = &loop->u.loop.body;
    st = ev_stmt(ev, TILEC_ST_STORE, at);
    st->u.store.buf = rd->buf;
    st->u.store.idx = di;
    st->u.store.value = ev_chk(ev, tilec_ir_load(ev->a, rs->buf, si));
    ev_emit(ev, st, at);
    ev->tail = saved;
    ev_emit(ev, loop, at);
}

value_t *ws_call(ev_t *ev, int id, args_t *ar_)
{
    args_t ar = *ar_;
    ast_loc_t at = ar.at;
    switch (id) {
    case BI_WS: {
        value_t *v;
        int i;
        if (ar.n < 1 || ar.nkw) ev_fail(ev, at, "T.ws takes one or more warp-group indices");
        for (i = 0; i < ar.n; i++) {
            int64_t g = v_want_int(ev, ar.v[i], ar.loc[i], "a warp-group index");
            if (g < -1) ev_fail(ev, ar.loc[i], "warp-group index %lld must be -1 or more", (long long)g);
        }
        ev_require_kernel(ev, at, "T.ws");
        v = v_new(ev, V_WSCOPE);
        return v;
    }
    case BI_ALLOC_BARRIER: {
        BIND("T.alloc_barrier", 1, "arrive_count");
        value_t *v, *c = a_[0];
        int n = 1, i;
        if (c->kind == V_SEQ) {
            n = c->u.seq.n;
            if (n < 1) ev_fail(ev, l_[0], "T.alloc_barrier needs at least one arrive count");
            for (i = 0; i < n; i++)
                if (v_want_int(ev, c->u.seq.items[i], l_[0], "an arrive count") < 1)
                    ev_fail(ev, l_[0], "arrive counts must be positive");
        } else if (v_want_int(ev, c, l_[0], "the arrive count") < 1) {
            ev_fail(ev, l_[0], "the arrive count must be positive");
        }
        ev_require_kernel(ev, at, "T.alloc_barrier");
        v = v_new(ev, V_BARRIER);
        v->u.bar.n = n;
        v->u.bar.idx = -1;
        v->u.bar.counts = ev_alloc(ev, sizeof *v->u.bar.counts * (size_t)n);
        for (i = 0; i < n; i++) v->u.bar.counts[i] = v_want_int(ev, c->kind == V_SEQ ? c->u.seq.items[i] : c, l_[0], "an arrive count");
        return v;
    }
    case BI_BARRIER_ARRIVE: case BI_MBARRIER_ARRIVE: {
        BIND(id == BI_BARRIER_ARRIVE ? "T.barrier_arrive" : "T.mbarrier_arrive", 1, "mbarrier", "cta_id");
        want_barrier(ev, a_[0], l_[0], ws_name(id));
        ev_require_kernel(ev, at, ws_name(id));
        return ev->none;
    }
    case BI_BARRIER_WAIT: case BI_MBARRIER_WAIT: {
        BIND(id == BI_BARRIER_WAIT ? "T.barrier_wait" : "T.mbarrier_wait_parity", 2, "mbarrier", "parity");
        want_barrier(ev, a_[0], l_[0], ws_name(id));
        want_index(ev, a_[1], l_[1], "the parity");
        ev_require_kernel(ev, at, ws_name(id));
        return ev->none;
    }
    case BI_MBARRIER_EXPECT_TX: {
        BIND("T.mbarrier_arrive_expect_tx", 2, "mbarrier", "tx");
        want_barrier(ev, a_[0], l_[0], ws_name(id));
        want_index(ev, a_[1], l_[1], "the transaction count");
        ev_require_kernel(ev, at, ws_name(id));
        return ev->none;
    }
    case BI_TCGEN05_ARRIVE: {
        /* the MMAs issued before it signal the barrier once they complete: one arrival (tilec's MMA is
         * complete where it stands) */
        BIND("T.tcgen05_mma_arrive", 1, "mbar", "arrive_2cta");
        want_barrier(ev, a_[0], l_[0], ws_name(id));
        if (a_[1] && a_[1]->kind != V_NONE && v_truth(ev, a_[1], l_[1]))
            ev_fail(ev, l_[1], "T.tcgen05_mma_arrive(arrive_2cta=True) also signals the peer block of a cluster; "
                    "clusters are outside the subset tilec supports");
        ev_require_kernel(ev, at, ws_name(id));
        return ev->none;
    }
    case BI_CP_ASYNC_BAR: {
        BIND("T.cp_async_barrier_noinc", 1, "mbarrier");
        want_barrier(ev, a_[0], l_[0], ws_name(id));
        ev_require_kernel(ev, at, ws_name(id));
        return ev->none;
    }
    case BI_ACCESS_PTR: {
        BIND("T.access_ptr", 3, "ptr", "access_mask", "extent");
        value_t *r;
        region_t *rg;
        int64_t n;
        int i;
        if (a_[1]->kind != V_STR || (strcmp(a_[1]->u.s.s, "r") && strcmp(a_[1]->u.s.s, "w") && strcmp(a_[1]->u.s.s, "rw")))
            ev_fail(ev, l_[1], "T.access_ptr's mode is \"r\", \"w\" or \"rw\"");
        if (!(a_[0]->kind == V_EXPR && a_[0]->u.ex->kind == TILEC_EX_LOAD))
            ev_fail(ev, l_[0], "T.access_ptr takes one element of a buffer (buf[i, j])");
        n = v_want_int(ev, a_[2], l_[2], "the extent");
        rg = rg_of(ev, a_[0], l_[0], "T.access_ptr");
        if (view_is(rg->buf)) ev_fail(ev, l_[0], "T.access_ptr of a re-view (T.view, T.reshape) is outside the subset");
        if (n < 1 || n > (int64_t)1 << 20) ev_fail(ev, l_[2], "T.access_ptr's extent must be 1 to 1048576");
        rg->corner = 0;
        for (i = 0; i < rg->buf->ndim; i++) rg->ext[i] = i == rg->buf->ndim - 1 ? n : 1;
        r = v_new(ev, V_REGION);
        r->u.rg = rg;
        return r;
    }
    case BI_PTX_CP_ASYNC: {
        BIND("T.ptx_cp_async", 3, "dst", "src", "bytes");
        ev_require_kernel(ev, at, ws_name(id));
        cp_async(ev, a_[0], a_[1], a_[2], at, l_[0], l_[1], l_[2]);
        return ev->none;
    }
    case BI_WAIT_WGMMA: {
        BIND("T.wait_wgmma", 1, "id");
        (void)v_want_int(ev, a_[0], l_[0], "the number of warpgroup MMAs left in flight");
        ev_require_kernel(ev, at, ws_name(id));
        return ev->none;
    }
    case BI_PTX_COMMIT: case BI_PTX_WAIT:
        /* cp.async groups: tilec's copies (a T.Parallel with prefer_async=True too) are complete where they
         * stand, so committing and waiting for groups have nothing left to order */
        if (id == BI_PTX_COMMIT ? ar.n || ar.nkw : ar.n != 1 || ar.nkw)
            ev_fail(ev, at, id == BI_PTX_COMMIT ? "T.ptx_commit_group() takes no arguments"
                                                : "T.ptx_wait_group takes the number of groups left in flight");
        if (id == BI_PTX_WAIT) (void)v_want_int(ev, ar.v[0], ar.loc[0], "the number of groups left in flight");
        ev_require_kernel(ev, at, ws_name(id));
        return ev->none;
    case BI_FENCE_ASYNC: case BI_TMA_STORE_WAIT:
        if (ar.n || ar.nkw) ev_fail(ev, at, "T.%s takes no arguments", ws_name(id));
        ev_require_kernel(ev, at, ws_name(id));
        return ev->none;
    case BI_TMA_COPY: {
        BIND("T.tma_copy", 2, "src", "dst", "barrier", "cluster_mask", "leader_scope_threads", "eviction_policy",
             "annotations");
        if (a_[2] && a_[2]->kind != V_NONE) want_barrier(ev, a_[2], l_[2], "tma_copy");
        if (a_[3] && a_[3]->kind != V_NONE)
            ev_fail(ev, l_[3], "T.tma_copy(cluster_mask=...) multicasts within a thread-block cluster; clusters are "
                    "outside the subset");
        op_copy(ev, a_[0], a_[1], at, l_[0], l_[1]);
        return ev->none;
    }
    case BI_ALLOC_TMEM: {
        BIND("T.alloc_tmem", 2, "shape", "dtype");
        value_t *shape = a_[0];
        if (shape->kind != V_SEQ) {
            shape = v_seq(ev, 1, 0);
            shape->u.seq.items[0] = a_[0];
        }
        shape = op_alloc(ev, TILEC_SCOPE_FRAGMENT, shape, a_[1], NULL, ev->name_hint, at);
        if (ev->ntmem == ev->cap_tmem) {   /* block-wide memory: warp roles may share it (wsroles.c) */
            tilec_ir_buffer_t **nt = ev_alloc(ev, sizeof *nt * (size_t)(ev->cap_tmem * 2 + 8));
            if (ev->ntmem) memcpy(nt, ev->tmem, sizeof *nt * (size_t)ev->ntmem);
            ev->tmem = nt;
            ev->cap_tmem = ev->cap_tmem * 2 + 8;
        }
        ev->tmem[ev->ntmem++] = shape->u.buf;
        return shape;
    }
    case BI_TCGEN05_GEMM: {
        BIND("T.tcgen05_gemm", 3, "A", "B", "C", "transpose_A", "transpose_B", "policy", "clear_accum", "mbar",
             "use_2cta", "annotations");
        value_t *g[10];
        ast_loc_t gl[10];
        int i;
        if (a_[7] && a_[7]->kind != V_NONE) want_barrier(ev, a_[7], l_[7], "tcgen05_gemm");
        if (a_[8] && a_[8]->kind != V_NONE && v_truth(ev, a_[8], l_[8]))
            ev_fail(ev, l_[8], "T.tcgen05_gemm(use_2cta=True) pairs the blocks of a cluster; clusters are outside "
                    "the subset");
        /* T.gemm's A, B, C, transpose_A, transpose_B, policy, clear_accum */
        for (i = 0; i < 10; i++) {
            g[i] = i < 7 ? a_[i] : NULL;
            gl[i] = i < 7 ? l_[i] : at;
        }
        op_gemm(ev, g, gl, at);
        return ev->none;
    }
    case BI_WGMMA_GEMM: {
        /* a warpgroup MMA is a T.gemm whose result is complete at T.wait_wgmma; read in program
         * order, it is complete at once */
        BIND("T.wgmma_gemm", 3, "A", "B", "C", "transpose_A", "transpose_B", "policy", "clear_accum");
        value_t *g[10];
        ast_loc_t gl[10];
        int i;
        for (i = 0; i < 10; i++) {
            g[i] = i < NN_ ? a_[i] : NULL;
            gl[i] = i < NN_ ? l_[i] : at;
        }
        op_gemm(ev, g, gl, at);
        return ev->none;
    }
    default:
        break;
    }
    ev_fail(ev, at, "internal error: unknown builtin %d", id);
}
