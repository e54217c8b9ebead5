/*
 * cuda_cluster.c — the CUDA dialect of thread block clusters (sm_90):
 * what the cluster pass (plugin-sdk/src/lower_cluster.c) wrote into the
 * IR, printed as cluster instructions.
 *
 *  - lower.cluster = (x, y, z) on the ring loop: the launch runs the grid
 *    in clusters of that shape (cuLaunchKernelEx with the cluster
 *    dimension attribute, cuda_plugin.c; cuda_cluster_dims gives it);
 *  - barrier attrs {lower.cluster_sync = 1}: barrier.cluster arrive
 *    (release) and wait (acquire) by every thread of the cluster, after
 *    the proxy fence the block barrier has;
 *  - barrier_arrive B[i] attrs {lower.cluster_arrive = n}: thread 0 (each
 *    consumer warp's lane 0 for warp specialization's releases) arrives on
 *    barrier B[i] of each block of the cluster (mapa to the block's address
 *    of it, mbarrier.arrive.release.cluster.shared::cluster);
 *  - barrier_wait ... attrs {lower.issuer = 1}: thread 0 alone, with
 *    cluster-scope acquire (the other block's readers released the stage;
 *    TILEC_CUDA_CLUSTER=2 prints both with the default CTA scope instead);
 *  - copy_async ... attrs {lower.multicast = (q, n)}: cuda_tma.c prints it
 *    as a bulk tensor copy with .multicast::cluster to all n blocks, issued
 *    by the block of rank q (%cluster_ctarank) only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

static const char cluster_prelude[] =
"static __device__ __forceinline__ unsigned tl_cta_rank(void) { unsigned r; asm volatile(\"mov.u32 %0, %%cluster_ctarank;\" : \"=r\"(r)); return r; }\n"
"static __device__ __forceinline__ void tl_cluster_sync(void) {\n"
"  asm volatile(\"barrier.cluster.arrive.release.aligned;\\n\\tbarrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n"
"}\n";

static const char cluster_tma_prelude[] =
"#define TL_TMA_MC(D, C) asm volatile(\"cp.async.bulk.tensor.\" #D \"d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {\" C \"}], [%2], %3;\"\n"
"static __device__ __forceinline__ void tl_tma2_mc(unsigned dst, const tl_tmap_t *m, unsigned bar, unsigned short mask, int c0, int c1) {\n"
"  TL_TMA_MC(2, \"%4, %5\") :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"h\"(mask), \"r\"(c0), \"r\"(c1) : \"memory\");\n"
"}\n"
"static __device__ __forceinline__ void tl_tma3_mc(unsigned dst, const tl_tmap_t *m, unsigned bar, unsigned short mask, int c0, int c1, int c2) {\n"
"  TL_TMA_MC(3, \"%4, %5, %6\") :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"h\"(mask), \"r\"(c0), \"r\"(c1), \"r\"(c2) : \"memory\");\n"
"}\n"
"static __device__ __forceinline__ void tl_tma4_mc(unsigned dst, const tl_tmap_t *m, unsigned bar, unsigned short mask, int c0, int c1, int c2, int c3) {\n"
"  TL_TMA_MC(4, \"%4, %5, %6, %7\") :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"h\"(mask), \"r\"(c0), \"r\"(c1), \"r\"(c2), \"r\"(c3) : \"memory\");\n"
"}\n"
"static __device__ __forceinline__ void tl_tma5_mc(unsigned dst, const tl_tmap_t *m, unsigned bar, unsigned short mask, int c0, int c1, int c2, int c3, int c4) {\n"
"  TL_TMA_MC(5, \"%4, %5, %6, %7, %8\") :: \"r\"(dst), \"l\"(m), \"r\"(bar), \"h\"(mask), \"r\"(c0), \"r\"(c1), \"r\"(c2), \"r\"(c3), \"r\"(c4) : \"memory\");\n"
"}\n";

/* the stage releases: an arrival on a barrier of block `rank` (mapa), the
 * issuer's wait for them; SEM is ".release.cluster" / ".acquire.cluster"
 * (what was measured, bench/results/hopper2_session10.md) or nothing (the
 * instructions' default .release.cta / .acquire.cta, CUTLASS's form for
 * its pipelines' releases: TILEC_CUDA_CLUSTER=2, not yet timed) */
static const char release_helpers[] =
"static __device__ __forceinline__ void tl_mbar_arrive_cl(unsigned bar, unsigned rank) {\n"
"  asm volatile(\"{ .reg .b32 ra;\\n\\tmapa.shared::cluster.u32 ra, %%0, %%1;\\n\\t\"\n"
"               \"mbarrier.arrive%s.shared::cluster.b64 _, [ra]; }\" :: \"r\"(bar), \"r\"(rank) : \"memory\");\n"
"}\n"
"static __device__ __forceinline__ void tl_mbar_wait_cl(unsigned bar, unsigned parity) {\n"
"  asm volatile(\"{ .reg .pred p;\\n\"\n"
"               \"tl_again_cl: mbarrier.try_wait.parity%s.shared::cta.b64 p, [%%0], %%1;\\n\"\n"
"               \"@!p bra tl_again_cl; }\" :: \"r\"(bar), \"r\"(parity) : \"memory\");\n"
"}\n";

static int cta_scope_releases(void)
{
    const char *v = secure_getenv("TILEC_CUDA_CLUSTER");
    return v && atoi(v) == 2;
}

static const tilec_ir_attr_t *int_attr(const tilec_ir_stmt_t *s, const char *key)
{
    const tilec_ir_attr_t *a = tilec_ir_attr_get(s->nattrs, s->attrs, key);
    return a && a->kind == TILEC_ATTR_INT && a->i >= 1 ? a : NULL;
}

int cuda_cluster_dims(const tilec_ir_kernel_t *k, uint32_t dims[3])
{
    memset(dims, 0, 3 * sizeof *dims);
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next) {
        const tilec_ir_attr_t *a =
            s->kind == TILEC_ST_FOR ? tilec_ir_attr_get(s->nattrs, s->attrs, "lower.cluster") : NULL;
        if (!a || a->kind != TILEC_ATTR_TUPLE || a->n != 3)
            continue;
        for (int d = 0; d < 3; d++)
            if (a->tuple[d] < 1 || a->tuple[d] > 8)
                return 0;
        for (int d = 0; d < 3; d++)
            dims[d] = (uint32_t)a->tuple[d];
        return 1;
    }
    return 0;
}

void cuda_cluster_prelude(tilec_sdk_str_t *o, const tilec_ir_kernel_t *k)
{
    uint32_t dims[3];
    if (!cuda_cluster_dims(k, dims))
        return;
    int cta = cta_scope_releases();
    tilec_sdk_str_puts(o, cluster_prelude);
    tilec_sdk_str_printf(o, release_helpers, cta ? "" : ".release.cluster", cta ? "" : ".acquire.cluster");
    tilec_sdk_str_puts(o, cluster_tma_prelude);
}

int cuda_cluster_multicast(const tilec_ir_stmt_t *s, int *rank, int *n)
{
    const tilec_ir_attr_t *a = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.multicast");
    if (!a || a->kind != TILEC_ATTR_TUPLE || a->n != 2 || a->tuple[1] < 2 || a->tuple[1] > 16 || a->tuple[0] < 0 ||
        a->tuple[0] >= a->tuple[1])
        return 0;
    *rank = (int)a->tuple[0];
    *n = (int)a->tuple[1];
    return 1;
}

int cuda_cluster_stmt(const cuda_tma_out_t *t, const tilec_ir_stmt_t *s, int per_warp,
                      void (*bar_addr)(const cuda_tma_out_t *, const tilec_ir_mbarrier_t *, const tilec_ir_expr_t *))
{
    const tilec_ir_attr_t *a;
    if (s->kind == TILEC_ST_BARRIER && int_attr(s, "lower.cluster_sync")) {
        tilec_sdk_str_printf(t->o, "%*stl_proxy_fence(); tl_cluster_sync();\n", t->indent, "");
        return 1;
    }
    if (s->kind == TILEC_ST_MBAR_ARRIVE && !s->u.mbar.tx && (a = int_attr(s, "lower.cluster_arrive"))) {
        tilec_sdk_str_printf(t->o, "%*sif (%s == 0) for (unsigned tl_r = 0; tl_r < %du; tl_r++) tl_mbar_arrive_cl(",
                             t->indent, "", per_warp ? "(tl_tid & 31)" : "tl_tid", (int)a->i);
        bar_addr(t, s->u.mbar.bar, s->u.mbar.idx);
        tilec_sdk_str_puts(t->o, ", tl_r);\n");
        return 1;
    }
    if (s->kind == TILEC_ST_MBAR_WAIT && int_attr(s, "lower.issuer")) {
        tilec_sdk_str_printf(t->o, "%*sif (tl_tid == 0) tl_mbar_wait_cl(", t->indent, "");
        bar_addr(t, s->u.mbar.bar, s->u.mbar.idx);
        tilec_sdk_str_puts(t->o, ", (unsigned)(");
        t->expr(t->user, s->u.mbar.parity);
        tilec_sdk_str_puts(t->o, ") & 1u);\n");
        return 1;
    }
    return 0;
}
