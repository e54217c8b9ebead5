/*
 * cuda_tma.c — the CUDA dialect of barrier objects and of the tensor copy
 * engine (TMA, sm_90): what the lowering's tma pass wrote into the IR
 * (plugin-sdk/src/lower_tma.c, docs/ir.md §9.5-9.6) printed as mbarrier
 * and cp.async.bulk.tensor instructions, plus the host side of the
 * tensor maps those copies read through.
 *
 * The statements are block-level: one barrier_arrive is one arrival, so
 * thread 0 makes it (mbarrier.arrive.expect_tx with the bytes the stage
 * will receive) and issues every copy_async on an mbarrier as one bulk
 * tensor copy per column block (lower.tma = box rows, box columns,
 * swizzle bytes; the box lands where lower_smem's "dense"/"swizzleN"
 * layout puts it, column block j at element j R W of the plane); every
 * thread waits with try_wait.parity.  barrier_init is thread 0's, with the
 * fence that makes the initialization visible, and every thread's
 * fence.proxy.async (its earlier ordinary shared-memory stores, such as
 * lower.zero's, come before the copy engine's writes there); the block
 * barrier that follows it in the IR does the rest.  The barriers live after the shared-memory plan, 8 bytes
 * each.
 *
 * The tensor maps (one per tensor, box and swizzle) are kernel parameters
 * after the symbols, `const __grid_constant__ tl_tmap_t`, built at each
 * launch by cuTensorMapEncodeTiled (cuda_dl.c's driver table) from the
 * tensor's address and constant shape.
 *
 * The printer calls four functions (cuda_internal.h): cuda_tma_plan while
 * it places shared memory, cuda_tma_prelude, cuda_tma_params in the
 * kernel's signature and cuda_tma_stmt for each statement; the rest is
 * here, so a printer of the same dialect needs only those call sites.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"
#include "tilec/ir_walk.h"
#include "tilec/sdk.h"

static const char tma_prelude[] =
"struct __align__(64) tl_tmap_t { unsigned long long q[16]; };\n"
"static __device__ __forceinline__ unsigned tl_tma_sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }\n"
"static __device__ __forceinline__ void tl_mbar_init(unsigned bar, unsigned n) { asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\" :: \"r\"(bar), \"r\"(n) : \"memory\"); }\n"
"static __device__ __forceinline__ void tl_mbar_init_fence(void) { asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\"); }\n"
"static __device__ __forceinline__ void tl_proxy_fence(void) { asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); }\n"
"static __device__ __forceinline__ void tl_mbar_arrive(unsigned bar) { asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" :: \"r\"(bar) : \"memory\"); }\n"
"static __device__ __forceinline__ void tl_mbar_expect(unsigned bar, unsigned bytes) { asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" :: \"r\"(bar), \"r\"(bytes) : \"memory\"); }\n"
"static __device__ __forceinline__ void tl_mbar_wait(unsigned bar, unsigned parity) {\n"
"  asm volatile(\"{ .reg .pred p;\\n\"\n"
"               \"tl_again: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\\n\"\n"
"               \"@!p bra tl_again; }\" :: \"r\"(bar), \"r\"(parity) : \"memory\");\n"
"}\n"
"#define TL_TMA(D, C) asm volatile(\"cp.async.bulk.tensor.\" #D \"d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {\" C \"}], [%2];\"\n"
"static __device__ __forceinline__ void tl_tma2(unsigned dst, const tl_tmap_t *m, unsigned bar, int c0, int c1) {\n"
"  TL_TMA(2, \"%3, %4\") :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"r\"(c0), \"r\"(c1) : \"memory\");\n"
"}\n"
"static __device__ __forceinline__ void tl_tma3(unsigned dst, const tl_tmap_t *m, unsigned bar, int c0, int c1, int c2) {\n"
"  TL_TMA(3, \"%3, %4, %5\") :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"r\"(c0), \"r\"(c1), \"r\"(c2) : \"memory\");\n"
"}\n"
"static __device__ __forceinline__ void tl_tma4(unsigned dst, const tl_tmap_t *m, unsigned bar, int c0, int c1, int c2, int c3) {\n"
"  TL_TMA(4, \"%3, %4, %5, %6\") :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"r\"(c0), \"r\"(c1), \"r\"(c2), \"r\"(c3) : \"memory\");\n"
"}\n"
"static __device__ __forceinline__ void tl_tma5(unsigned dst, const tl_tmap_t *m, unsigned bar, int c0, int c1, int c2, int c3, int c4) {\n"
"  TL_TMA(5, \"%3, %4, %5, %6, %7\") :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"r\"(c0), \"r\"(c1), \"r\"(c2), \"r\"(c3), \"r\"(c4) : \"memory\");\n"
"}\n";

/* the box of a copy (lower.tma), 0 when it has none */
static int box_of(const tilec_ir_stmt_t *s, int64_t box[3])
{
    const tilec_ir_attr_t *a = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.tma");
    if (!a || a->kind != TILEC_ATTR_TUPLE || a->n != 3)
        return 0;
    memcpy(box, a->tuple, 3 * sizeof *box);
    return 1;
}

/* the tensor map of copy s in info, -1 when there is none */
static int map_of(const cuda_kinfo_t *info, const tilec_ir_stmt_t *s)
{
    int64_t box[3];
    if (!box_of(s, box))
        return -1;
    const tilec_ir_buffer_t *G = s->u.copy.src.buf;
    for (int i = 0; i < info->ntmap; i++) {
        const cuda_tmap_spec_t *m = &info->tmap[i];
        if (m->param == G->id && m->box[0] == (uint32_t)box[1] && m->box[1] == (uint32_t)box[0] &&
            m->swizzle == (int)box[2])
            return i;
    }
    return -1;
}

typedef struct plan {
    cuda_kinfo_t *info;
    int failed;
} plan_t;

static int plan_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    plan_t *p = w->user;
    int64_t box[3];
    if (s->kind != TILEC_ST_COPY_ASYNC || !s->u.copy.bar)
        return TILEC_WALK_CONTINUE;
    const tilec_ir_buffer_t *G = s->u.copy.src.buf;
    if (!box_of(s, box) || G->id >= 0x7fff || G->ndim < 2 || G->ndim > 5 || box[0] < 1 || box[1] < 1 ||
        box[0] > 256 || box[1] > 256) {
        p->failed = 1;
        return TILEC_WALK_STOP;
    }
    if (map_of(p->info, s) >= 0)
        return TILEC_WALK_CONTINUE;
    if (p->info->ntmap >= CUDA_MAX_TMAPS) {
        p->failed = 1;
        return TILEC_WALK_STOP;
    }
    cuda_tmap_spec_t *m = &p->info->tmap[p->info->ntmap++];
    memset(m, 0, sizeof *m);
    m->param = G->id;
    m->rank = G->ndim;
    m->esize = (int)tilec_dtype_size(G->dtype);
    m->swizzle = (int)box[2];
    m->box[0] = (uint32_t)box[1];
    m->box[1] = (uint32_t)box[0];
    for (int d = 2; d < m->rank; d++)
        m->box[d] = 1;
    return TILEC_WALK_CONTINUE;
}

int cuda_tma_plan(const tilec_ir_kernel_t *k, cuda_kinfo_t *info, uint64_t *smem_end)
{
    info->ntmap = 0;
    info->mbar_off = (*smem_end + 7) & ~(uint64_t)7;
    uint64_t n = 0;
    for (int i = 0; i < k->nmbars; i++)
        n += (uint64_t)k->mbars[i]->size;
    if (n)
        *smem_end = info->mbar_off + 8 * n;
    plan_t p = {info, 0};
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = plan_stmt;
    w.user = &p;
    if (tilec_ir_walk_block(&w, &((tilec_ir_kernel_t *)k)->body) < 0 || p.failed)
        return -1;
    return 0;
}

void cuda_tma_prelude(tilec_sdk_str_t *o, const tilec_ir_kernel_t *k)
{
    if (k->nmbars > 0) {
        tilec_sdk_str_puts(o, tma_prelude);
        cuda_cluster_prelude(o, k);
    }
}

void cuda_tma_params(tilec_sdk_str_t *o, const cuda_kinfo_t *info, int *first)
{
    for (int i = 0; i < info->ntmap; i++) {
        tilec_sdk_str_printf(o, "%sconst __grid_constant__ tl_tmap_t tl_tm%d", *first ? "" : ", ", i);
        *first = 0;
    }
}

/* ---- statements ----------------------------------------------------------------- */

static void line_start(const cuda_tma_out_t *t)
{
    tilec_sdk_str_printf(t->o, "%*s", t->indent, "");
}

/* "tl_tma_sa(SMEM) + OFF + 8u * (unsigned)(IDX)": barrier idx of bar */
static void bar_addr(const cuda_tma_out_t *t, const tilec_ir_mbarrier_t *bar, const tilec_ir_expr_t *idx)
{
    uint64_t off = t->info->mbar_off;
    for (int i = 0; i < bar->id; i++)
        off += 8u * (uint64_t)t->k->mbars[i]->size;
    tilec_sdk_str_printf(t->o, "tl_tma_sa(%s) + %" PRIu64 "u", t->smem, off);
    if (idx) {
        tilec_sdk_str_puts(t->o, " + 8u * (unsigned)(");
        t->expr(t->user, idx);
        tilec_sdk_str_puts(t->o, ")");
    }
}

/* thread 0: one bulk tensor copy per column block of the destination plane */
static int tma_copy(const cuda_tma_out_t *t, const tilec_ir_stmt_t *s)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *S = dst->buf;
    const tilec_ir_layout_t *L = S->layout;
    int64_t box[3], R, C, r0 = 0;
    int mi = map_of(t->info, s), q = 0, ncta = 0;
    int mc = cuda_cluster_multicast(s, &q, &ncta);
    if (mi < 0 || !box_of(s, box) || !L || L->kind != TILEC_LAYOUT_SMEM || S->ndim < 2 ||
        !tilec_ir_is_const_int(S->shape[S->ndim - 2], &R) || !tilec_ir_is_const_int(S->shape[S->ndim - 1], &C) ||
        C % box[1])
        return -1;
    /* the whole plane, or (a multicast half, lower_cluster.c) box rows from a constant row r0 */
    if (R != box[0] && (!mc || dst->extent[S->ndim - 2] != box[0] ||
                        !tilec_ir_is_const_int(dst->base[S->ndim - 2], &r0) || r0 < 0 || r0 + box[0] > R))
        return -1;
    int64_t es = (int64_t)tilec_dtype_size(S->dtype), plane = R * C;
    int nd = src->buf->ndim;
    line_start(t);
    if (mc)
        tilec_sdk_str_printf(t->o, "if (tl_tid == 0 && tl_cta_rank() == %du) { /* multicast to %d blocks */\n", q, ncta);
    else
        tilec_sdk_str_puts(t->o, "if (tl_tid == 0) {\n");
    for (int64_t j = 0; j < C / box[1]; j++) {
        tilec_sdk_str_printf(t->o, "%*stl_tma%d%s(tl_tma_sa(%s) + %lldu", t->indent + 2, "", nd, mc ? "_mc" : "", t->smem,
                             (long long)(L->offset + j * R * box[1] * es + r0 * box[1] * es));
        /* the plane: leading indices over the row-major leading dimensions */
        int64_t stride = plane * es;
        for (int d = S->ndim - 3; d >= 0; d--) {
            tilec_sdk_str_printf(t->o, " + %lldu * (unsigned)(", (long long)stride);
            t->expr(t->user, dst->base[d]);
            tilec_sdk_str_puts(t->o, ")");
            int64_t n;
            if (!tilec_ir_is_const_int(S->shape[d], &n))
                return -1;
            stride *= n;
        }
        tilec_sdk_str_printf(t->o, ", &tl_tm%d, ", mi);
        bar_addr(t, s->u.copy.bar, s->u.copy.bar_idx);
        if (mc)
            tilec_sdk_str_printf(t->o, ", (unsigned short)%uu", (1u << ncta) - 1u);
        for (int d = nd - 1; d >= 0; d--) {
            tilec_sdk_str_puts(t->o, ", (int)(");
            t->expr(t->user, src->base[d]);
            tilec_sdk_str_puts(t->o, ")");
            if (d == nd - 1 && j)
                tilec_sdk_str_printf(t->o, " + %lld", (long long)(j * box[1]));
        }
        tilec_sdk_str_puts(t->o, ");\n");
    }
    line_start(t);
    tilec_sdk_str_puts(t->o, "}\n");
    return 1;
}

/* the barrier's plain arrivals are one per consumer warp */
static int per_warp(const cuda_tma_out_t *t, const tilec_ir_mbarrier_t *bar)
{
    return bar->id >= 0 && bar->id < 32 && (t->warp_arrive >> bar->id & 1u) && t->arrive_warps > 0;
}

int cuda_tma_stmt(const cuda_tma_out_t *t, const tilec_ir_stmt_t *s)
{
    const tilec_ir_mbarrier_t *bar = s->u.mbar.bar;
    int rc = cuda_cluster_stmt(t, s, s->kind == TILEC_ST_MBAR_ARRIVE && bar && per_warp(t, bar), bar_addr);
    if (rc)
        return rc;
    switch (s->kind) {
    case TILEC_ST_COPY_ASYNC:
        return s->u.copy.bar ? tma_copy(t, s) : 0;
    case TILEC_ST_MBAR_INIT:
        line_start(t);
        tilec_sdk_str_printf(t->o, "if (tl_tid == 0) { for (int tl_b = 0; tl_b < %d; tl_b++) tl_mbar_init(",
                             bar->size);
        bar_addr(t, bar, NULL);
        tilec_sdk_str_printf(t->o, " + 8u * tl_b, %du); tl_mbar_init_fence(); } /* %s */\n",
                             bar->arrive * (per_warp(t, bar) ? t->arrive_warps : 1), bar->name);
        /* each thread's earlier ordinary stores before the copy engine's writes */
        line_start(t);
        tilec_sdk_str_puts(t->o, "tl_proxy_fence();\n");
        return 1;
    case TILEC_ST_MBAR_ARRIVE:
        line_start(t);
        tilec_sdk_str_puts(t->o, s->u.mbar.tx         ? "if (tl_tid == 0) tl_mbar_expect("
                                 : per_warp(t, bar) ? "if ((tl_tid & 31) == 0) tl_mbar_arrive("
                                                    : "if (tl_tid == 0) tl_mbar_arrive(");
        bar_addr(t, bar, s->u.mbar.idx);
        if (s->u.mbar.tx) {
            tilec_sdk_str_puts(t->o, ", (unsigned)(");
            t->expr(t->user, s->u.mbar.tx);
            tilec_sdk_str_puts(t->o, ")");
        }
        tilec_sdk_str_puts(t->o, ");\n");
        return 1;
    case TILEC_ST_MBAR_WAIT:
        line_start(t);
        tilec_sdk_str_puts(t->o, "tl_mbar_wait(");
        bar_addr(t, bar, s->u.mbar.idx);
        tilec_sdk_str_puts(t->o, ", (unsigned)(");
        t->expr(t->user, s->u.mbar.parity);
        tilec_sdk_str_puts(t->o, ") & 1u);\n");
        return 1;
    default:
        return 0;
    }
}

/* ---- host: the tensor maps of a launch --------------------------------------- */

tilec_pstatus_t cuda_tma_encode(const cuda_driver_api_t *d, const cuda_kinfo_t *info, const tilec_ir_kernel_t *k,
                                const CUdeviceptr *ptrs, CUtensorMap *maps)
{
    static const int swz[129] = {[32] = 1, [64] = 2, [128] = 3};
    for (int i = 0; i < info->ntmap; i++) {
        const cuda_tmap_spec_t *m = &info->tmap[i];
        const tilec_ir_buffer_t *b = m->param >= 0 && m->param < k->nparams ? k->bufs[m->param] : NULL;
        uint64_t dims[5], strides[5];
        uint32_t box[5], es[5];
        if (!b || b->ndim != m->rank || m->rank < 2 || m->rank > 5 || m->swizzle < 0 || m->swizzle > 128) {
            tilec_sdk_error_set("cuda: launch: tensor map %d does not fit its tensor", i);
            return TILEC_PS_INTERNAL;
        }
        uint64_t st = (uint64_t)m->esize;
        for (int j = 0; j < m->rank; j++) {
            int64_t n;
            if (!tilec_ir_is_const_int(b->shape[m->rank - 1 - j], &n) || n < 1) {
                tilec_sdk_error_set("cuda: launch: the tensor map of '%s' needs a constant shape", b->name);
                return TILEC_PS_INTERNAL;
            }
            dims[j] = (uint64_t)n;
            if (j > 0)
                strides[j - 1] = st;
            st *= (uint64_t)n;
            box[j] = m->box[j];
            es[j] = 1;
        }
        if (!d->TensorMapEncodeTiled) {
            tilec_sdk_error_set("cuda: launch: the driver has no cuTensorMapEncodeTiled (TILEC_CUDA_TMA=0 turns TMA off)");
            return TILEC_PS_UNAVAILABLE;
        }
        /* 1, 2, 4 bytes: UINT8, UINT16, UINT32 (a copy moves bits); no
         * interleave, the swizzle, L2 promotion 256 B, zero fill */
        int dt = m->esize == 1 ? 0 : m->esize == 2 ? 1 : 2;
        CUresult r = d->TensorMapEncodeTiled(&maps[i], dt, (unsigned)m->rank, (void *)(uintptr_t)ptrs[m->param], dims,
                                             strides, box, es, 0, swz[m->swizzle], 3, 0);
        if (r != CUDA_SUCCESS) {
            tilec_pstatus_t s = cuda_fail("cuTensorMapEncodeTiled", r, TILEC_PS_LAUNCH_ERROR);
            tilec_sdk_error_append(" (tensor '%s': TMA needs a 16-byte aligned address; TILEC_CUDA_TMA=0 turns it off)",
                                   b->name);
            return s;
        }
    }
    return TILEC_PS_OK;
}
