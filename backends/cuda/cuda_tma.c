/*
 * cuda_tma.c — T.Pipelined on the tensor copy engine (TMA, sm_90a): the
 * ring copies the lowering's tma pass marked (lower.tma = box rows, box
 * columns, swizzle bytes; plugin-sdk/src/lower_tma.c) are issued by one
 * thread as cp.async.bulk.tensor loads, one per column block, completing
 * on an mbarrier per stage, instead of every thread issuing 16-byte
 * cp.async copies.  The consumers wait on the stage's barrier with phase
 * parity (use n of barrier s is iteration s + n S, parity n & 1); one
 * block barrier per iteration, after the body, frees the stage the
 * previous iteration read before thread 0 refills it.  The swizzled
 * layouts of the printer (tl_swz<W, R>: column blocks of W elements, 16-
 * byte chunks XOR-permuted by row within 8-row groups, absolute address
 * bits) are what the hardware's 128/64/32-byte swizzle writes for a box of
 * W columns, so a box lands at column block j's R x W array.
 *
 * Kernel side: the prelude of mbarrier and bulk tensor copy helpers, one
 * `const __grid_constant__ tl_tmap_t tl_tm<i>` parameter per marked copy
 * (after the symbols), the barriers after the shared buffers, the loop.
 * Host side: the tensor maps (cuTensorMapEncodeTiled, through cuda_dl.c's
 * table) built at each launch from the tensor's address and constant
 * shape.  Opt-in with TILEC_CUDA_TMA=1 until measured
 * (docs/backend-cuda.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cg.h"
#include "tilec/sdk.h"

static const char tma_prelude[] =
"struct __align__(64) tl_tmap_t { unsigned long long q[16]; };\n"
"TL_INLINE void tl_mbar_init(tl_u32 bar, tl_u32 n) { asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\" :: \"r\"(bar), \"r\"(n) : \"memory\"); }\n"
"TL_INLINE void tl_mbar_inval(tl_u32 bar) { asm volatile(\"mbarrier.inval.shared::cta.b64 [%0];\" :: \"r\"(bar) : \"memory\"); }\n"
"TL_INLINE void tl_mbar_init_fence(void) { asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\"); }\n"
"TL_INLINE void tl_mbar_expect(tl_u32 bar, tl_u32 bytes) { asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" :: \"r\"(bar), \"r\"(bytes) : \"memory\"); }\n"
/* spins on try_wait (which itself suspends for a while); labels are local to the braces */
"TL_INLINE void tl_mbar_wait(tl_u32 bar, tl_u32 parity) {\n"
"  asm volatile(\"{ .reg .pred p;\\n\"\n"
"               \"tl_again: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\\n\"\n"
"               \"@!p bra tl_again; }\" :: \"r\"(bar), \"r\"(parity) : \"memory\");\n"
"}\n"
"TL_INLINE void tl_tma2(tl_u32 dst, const tl_tmap_t *m, tl_u32 bar, int c0, int c1) {\n"
"  asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\"\n"
"               :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"r\"(c0), \"r\"(c1) : \"memory\");\n"
"}\n"
"TL_INLINE void tl_tma3(tl_u32 dst, const tl_tmap_t *m, tl_u32 bar, int c0, int c1, int c2) {\n"
"  asm volatile(\"cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\"\n"
"               :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"r\"(c0), \"r\"(c1), \"r\"(c2) : \"memory\");\n"
"}\n"
"TL_INLINE void tl_tma4(tl_u32 dst, const tl_tmap_t *m, tl_u32 bar, int c0, int c1, int c2, int c3) {\n"
"  asm volatile(\"cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\"\n"
"               :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"r\"(c0), \"r\"(c1), \"r\"(c2), \"r\"(c3) : \"memory\");\n"
"}\n"
"TL_INLINE void tl_tma5(tl_u32 dst, const tl_tmap_t *m, tl_u32 bar, int c0, int c1, int c2, int c3, int c4) {\n"
"  asm volatile(\"cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\"\n"
"               :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"r\"(c0), \"r\"(c1), \"r\"(c2), \"r\"(c3), \"r\"(c4) : \"memory\");\n"
"}\n";

static int tma_on(void)
{
    const char *e = secure_getenv("TILEC_CUDA_TMA");
    return e && atoi(e) > 0;
}

static int tma_box(const tilec_ir_stmt_t *c, int64_t box[3])
{
    const tilec_ir_attr_t *a = tilec_ir_attr_get(c->nattrs, c->attrs, "lower.tma");
    if (!a || a->kind != TILEC_ATTR_TUPLE || a->n != 3)
        return 0;
    memcpy(box, a->tuple, 3 * sizeof *box);
    return 1;
}

/* ---- planning (before the kernel's frame is printed) ------------------------ */

void cg_tma_plan_loop(cg_t *g, const tilec_ir_stmt_t *loop, const tilec_ir_stmt_t *const *ring, int n,
                      int stages)
{
    int64_t box[3];
    if (!g->wgmma || !tma_on() || n < 1 || g->ntma_loops >= CG_MAX_TMA_LOOPS ||
        g->info->ntmap + n > CUDA_MAX_TMAPS)
        return;
    for (int i = 0; i < n; i++) {
        const tilec_ir_buffer_t *S = ring[i]->u.copy.dst.buf;
        if (!tma_box(ring[i], box) || S->ndim != 2 ||
            (box[2] ? g->swz[S->id] * (int64_t)tilec_dtype_size(S->dtype) != box[2]
                    : g->swz[S->id] != 0 || g->pitch[S->id] > 0))
            return; /* the printer's layout of the buffer is not the box's */
    }
    cg_tma_loop_t *L = &g->tma_loops[g->ntma_loops++];
    L->loop = loop;
    L->stages = stages;
    L->first_map = g->info->ntmap;
    L->bytes = 0;
    for (int i = 0; i < n; i++) {
        const tilec_ir_region_t *src = &ring[i]->u.copy.src;
        const tilec_ir_buffer_t *G = src->buf, *S = ring[i]->u.copy.dst.buf;
        tma_box(ring[i], box);
        cuda_tmap_spec_t *m = &g->info->tmap[g->info->ntmap++];
        memset(m, 0, sizeof *m);
        m->param = G->id;
        m->rank = G->ndim;
        m->esize = (int)tilec_dtype_size(G->dtype);
        m->swizzle = (int)box[2];
        m->box[0] = (uint32_t)box[1];
        m->box[1] = (uint32_t)box[0];
        for (int d = 2; d < m->rank; d++)
            m->box[d] = 1;
        L->bytes += (uint64_t)cg_const_dim(S, 0) * (uint64_t)cg_const_dim(S, 1) * (uint64_t)m->esize;
    }
}

static const cg_tma_loop_t *tma_loop(const cg_t *g, const tilec_ir_stmt_t *loop)
{
    for (int i = 0; i < g->ntma_loops; i++)
        if (g->tma_loops[i].loop == loop)
            return &g->tma_loops[i];
    return NULL;
}

uint64_t cg_tma_smem(cg_t *g, uint64_t off)
{
    for (int i = 0; i < g->ntma_loops; i++) {
        off = (off + 7) & ~(uint64_t)7;
        g->tma_loops[i].bar_off = off;
        off += 8u * (uint64_t)g->tma_loops[i].stages;
    }
    return off;
}

void cg_tma_prelude(cg_t *g)
{
    if (g->ntma_loops)
        tilec_sdk_str_puts(g->o, tma_prelude);
}

void cg_tma_params(cg_t *g, int *first)
{
    for (int i = 0; i < g->info->ntmap; i++) {
        cg_out(g, "%sconst __grid_constant__ tl_tmap_t tl_tm%d", *first ? "" : ", ", i);
        *first = 0;
    }
}

/* ---- the loop ------------------------------------------------------------------ */

/* thread 0: arm stage (v % S) of the loop's barriers and issue the loads
 * of iteration v into it (the ring pointers already at that stage) */
static void tma_issue(cg_t *g, const cg_tma_loop_t *L, const tilec_ir_stmt_t *const *ring, int n,
                      int id, int v)
{
    cg_line(g, "tl_mbar_expect(tl_bar%d + 8u * (tl_u32)(v%d %% %d), %" PRIu64 "u);", id, v,
            L->stages, L->bytes);
    for (int i = 0; i < n; i++) {
        const tilec_ir_region_t *src = &ring[i]->u.copy.src;
        const tilec_ir_buffer_t *S = ring[i]->u.copy.dst.buf;
        const cuda_tmap_spec_t *m = &g->info->tmap[L->first_map + i];
        int64_t R = cg_const_dim(S, 0), C = cg_const_dim(S, 1);
        int nd = m->rank;
        for (int64_t j = 0; j < C / m->box[0]; j++) {
            cg_out(g, "%*stl_tma%d(tl_sa(b%d) + %" PRId64 "u, &tl_tm%d, tl_bar%d + 8u * (tl_u32)(v%d %% %d)",
                   2 * (g->ind + 1), "", nd, S->id,
                   j * R * (int64_t)m->box[0] * m->esize, L->first_map + i, id, v, L->stages);
            for (int d = nd - 1; d >= 0; d--) {
                cg_out(g, ", (int)(");
                cg_emit_expr(g, src->base[d]);
                if (d == nd - 1 && j)
                    cg_out(g, ") + %" PRId64, j * (int64_t)m->box[0]);
                else
                    cg_out(g, ")");
            }
            cg_out(g, ");\n");
        }
    }
}

int cg_tma_emit_pipelined(cg_t *g, const tilec_ir_stmt_t *loop, const tilec_ir_stmt_t *const *ring,
                          int n, const tilec_ir_stmt_t *defer)
{
    const cg_tma_loop_t *L = tma_loop(g, loop);
    if (!L)
        return 0;
    int S = L->stages, v = loop->u.loop.var->id, id = g->tmp++;
    cg_line(g, "{ /* T.Pipelined: %d copies by the tensor copy engine (TMA), %d stages on mbarriers */",
            n, S);
    g->ind++;
    cg_out(g, "%*sconst int tl_n%d = (int)(", 2 * (g->ind + 1), "", id);
    cg_emit_expr(g, loop->u.loop.extent);
    cg_out(g, ");\n");
    cg_line(g, "const tl_u32 tl_bar%d = tl_sa(tl_smem) + %" PRIu64 "u;", id, L->bar_off);
    cg_line(g, "if (tl_tid == 0) {");
    g->ind++;
    cg_line(g, "for (int tl_i = 0; tl_i < %d; tl_i++) tl_mbar_init(tl_bar%d + 8u * tl_i, 1);", S, id);
    cg_line(g, "tl_mbar_init_fence();");
    g->ind--;
    cg_line(g, "}");
    cg_emit_sync(g);
    char it[32];
    snprintf(it, sizeof it, "v%d", v);
    cg_line(g, "if (tl_tid == 0) {");
    g->ind++;
    cg_line(g, "for (v%d = 0; v%d < %d && v%d < tl_n%d; v%d++) {", v, v, S - 1, v, id, v);
    g->ind++;
    cg_pipe_point(g, ring, n, it);
    tma_issue(g, L, ring, n, id, v);
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "for (v%d = 0; v%d < tl_n%d; v%d++) {", v, v, id, v);
    g->ind++;
    cg_line(g, "tl_mbar_wait(tl_bar%d + 8u * (tl_u32)(v%d %% %d), (tl_u32)(v%d / %d) & 1u);", id, v, S,
            v, S);
    cg_pipe_point(g, ring, n, it);
    g->wg_defer = defer;
    cg_pipe_body(g, loop, ring, n);
    g->wg_defer = NULL;
    /* every warpgroup is past the wgmma wait that freed the stage of v - 1 */
    cg_emit_sync(g);
    cg_line(g, "if (tl_tid == 0) {");
    g->ind++;
    cg_line(g, "const int tl_cur%d = v%d;", id, v);
    cg_line(g, "v%d = tl_cur%d + %d;", v, id, S - 1);
    cg_line(g, "if (v%d < tl_n%d) {", v, id);
    g->ind++;
    cg_pipe_point(g, ring, n, it);
    tma_issue(g, L, ring, n, id, v);
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "v%d = tl_cur%d;", v, id);
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    if (defer) {
        mma_plan_t p;
        cg_mma_plan(g, defer, &p);
        cg_line(g, "tl_wg_wait<0>();");
        cg_line(g, "tl_keep_acc<%d>(&tl_c%d[0][0][0]);", p.mt * p.nt * 4, g->resident_id);
    }
    /* every thread is past its last wait (the barrier ending the last
     * iteration): the barriers may be initialized again */
    cg_line(g, "if (tl_tid == 0) for (int tl_i = 0; tl_i < %d; tl_i++) tl_mbar_inval(tl_bar%d + 8u * tl_i);",
            S, id);
    g->ind--;
    cg_line(g, "}");
    cg_emit_sync(g);
    return 1;
}

/* ---- host: the tensor maps of a launch -------------------------------------- */

tilec_pstatus_t cuda_tma_encode(const cuda_driver_api_t *d, const cuda_kinfo_t *info,
                                const tilec_ir_kernel_t *k, const CUdeviceptr *ptrs, CUtensorMap *maps)
{
    static const int swz[129] = {[32] = 1, [64] = 2, [128] = 3};
    for (int i = 0; i < info->ntmap; i++) {
        const cuda_tmap_spec_t *m = &info->tmap[i];
        const tilec_ir_buffer_t *b = m->param >= 0 && m->param < k->nparams ? k->bufs[m->param] : NULL;
        uint64_t dims[5], strides[5];
        uint32_t box[5], es[5];
        if (!b || b->ndim != m->rank || m->rank < 2 || m->rank > 5) {
            tilec_sdk_error_set("cuda: launch: tensor map %d does not fit its tensor", i);
            return TILEC_PS_INTERNAL;
        }
        uint64_t st = (uint64_t)m->esize;
        for (int j = 0; j < m->rank; j++) {
            int64_t n;
            if (!tilec_ir_is_const_int(b->shape[m->rank - 1 - j], &n) || n < 1) {
                tilec_sdk_error_set("cuda: launch: tensor map of '%s' needs a constant shape", b->name);
                return TILEC_PS_INTERNAL;
            }
            dims[j] = (uint64_t)n;
            if (j > 0)
                strides[j - 1] = st;
            st *= (uint64_t)n;
            box[j] = m->box[j];
            es[j] = 1;
        }
        /* 1, 2, 4 bytes: UINT8, UINT16, UINT32 (a copy moves bits) */
        int dt = m->esize == 1 ? 0 : m->esize == 2 ? 1 : 2;
        CUresult r = d->TensorMapEncodeTiled(&maps[i], dt, (unsigned)m->rank, (void *)(uintptr_t)ptrs[m->param],
                                             dims, strides, box, es, 0, swz[m->swizzle], 3, 0);
        if (r != CUDA_SUCCESS) {
            tilec_pstatus_t s = cuda_fail("cuTensorMapEncodeTiled", r, TILEC_PS_LAUNCH_ERROR);
            tilec_sdk_error_append(" (tensor '%s': TMA needs a 16-byte aligned address; "
                                   "TILEC_CUDA_TMA=0 turns it off)", b->name);
            return s;
        }
    }
    return TILEC_PS_OK;
}
