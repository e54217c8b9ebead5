/*
 * plugin-sdk/src/lower_target.c — checks and queries of a target
 * description (tilec/target.h): the plain SIMT GPU a plugin's
 * description starts from, that a plugin's description is consistent
 * before any pass relies on it, and where an MMA instruction's
 * accumulator element lives (the modes evaluated for one element).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/ir.h"
#include "tilec/target.h"

tilec_target_desc_t tilec_target_simt_default(const char *name)
{
    tilec_target_desc_t t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    t.version = TILEC_TARGET_DESC_VERSION;
    t.name = name;
    t.max_threads = 1024;
    t.smem_default = t.smem_optin = 48 * 1024;
    t.smem_banks = 32;
    t.bank_bytes = 4;
    t.smem_align = 16;
    t.regs_per_thread = 255;
    t.frag_regs = 64;
    t.vector_bytes = 16;
    t.barriers = TILEC_TARGET_BARRIER_BLOCK;
    return t;
}

/* extent of mode j of an axis of length len: 0 stands for the rest */
static int32_t mode_extent(const tilec_target_mode_t *modes, int n, int j, int32_t len)
{
    if (modes[j].extent > 0)
        return modes[j].extent;
    int32_t inner = 1;
    for (int i = 0; i < n; i++)
        if (i != j && modes[i].extent > 0)
            inner *= modes[i].extent;
    return inner > 0 && len % inner == 0 ? len / inner : 0;
}

static void axis_place(const tilec_target_mode_t *modes, int n, int32_t len, int32_t x,
                       int32_t *thread, int32_t *reg)
{
    for (int j = 0; j < n; j++) {
        int32_t e = mode_extent(modes, n, j, len);
        if (e <= 0)
            return;
        *thread += (x % e) * modes[j].thread_stride;
        *reg += (x % e) * modes[j].reg_stride;
        x /= e;
    }
}

int tilec_target_mma_place(const tilec_target_mma_t *mma, int32_t ncols, int32_t r, int32_t c,
                           int32_t *thread, int32_t *reg)
{
    if (!mma || r < 0 || r >= mma->m || c < 0 || c >= ncols)
        return -1;
    *thread = *reg = 0;
    axis_place(mma->row_modes, mma->nrow_modes, mma->m, r, thread, reg);
    axis_place(mma->col_modes, mma->ncol_modes, ncols, c, thread, reg);
    return 0;
}

/* every element of an m x ncols tile lands on a distinct (thread, reg)
 * inside threads x (m * ncols / threads) */
static int mma_layout_ok(const tilec_target_mma_t *mma, int32_t ncols, char *err, size_t errlen)
{
    int32_t nregs = mma->m * ncols / mma->threads;
    if ((int64_t)mma->m * ncols > 65536 || nregs < 1 ||
        (int64_t)nregs * mma->threads != (int64_t)mma->m * ncols) {
        snprintf(err, errlen, "mma '%s': an %dx%d tile does not spread evenly over %d threads",
                 mma->name, mma->m, ncols, mma->threads);
        return -1;
    }
    unsigned char *seen = calloc((size_t)mma->m * (size_t)ncols, 1);
    if (!seen) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int32_t r = 0; r < mma->m; r++)
        for (int32_t c = 0; c < ncols; c++) {
            int32_t t, g;
            tilec_target_mma_place(mma, ncols, r, c, &t, &g);
            if (t < 0 || t >= mma->threads || g < 0 || g >= nregs || seen[t * nregs + g]) {
                snprintf(err, errlen, "mma '%s': its accumulator modes do not map an %dx%d tile "
                         "one to one onto %d threads x %d registers", mma->name, mma->m, ncols,
                         mma->threads, nregs);
                free(seen);
                return -1;
            }
            seen[t * nregs + g] = 1;
        }
    free(seen);
    return 0;
}

int tilec_target_check(const tilec_target_desc_t *t, char *err, size_t errlen)
{
    if (!t || t->struct_size < offsetof(tilec_target_desc_t, mma) + sizeof t->mma) {
        snprintf(err, errlen, "description missing or older than version 1 (struct_size)");
        return -1;
    }
    if (t->version < 1 || t->version > TILEC_TARGET_DESC_VERSION) {
        snprintf(err, errlen, "version %u unknown (this SDK reads 1..%d)", t->version,
                 TILEC_TARGET_DESC_VERSION);
        return -1;
    }
    if (t->subgroup_size < 0 || t->max_threads < 1 || t->smem_default > t->smem_optin ||
        t->smem_banks < 1 || t->bank_bytes < 1 || t->smem_align < 1 ||
        (t->smem_align & (t->smem_align - 1)) || t->regs_per_thread < 1 || t->frag_regs < 0 ||
        t->frag_regs > t->regs_per_thread || t->vector_bytes < 1 || t->max_stages < 0 ||
        t->nmma < 0 || (t->nmma > 0 && !t->mma)) {
        snprintf(err, errlen, "'%s': a size is out of range", t->name ? t->name : "?");
        return -1;
    }
    for (int i = 0; i < t->nmma; i++) {
        const tilec_target_mma_t *mma = &t->mma[i];
        if (mma->struct_size < sizeof *mma || !mma->name || mma->m < 1 || mma->n < 1 ||
            mma->k < 1 || mma->threads < 1 || mma->n_step < 0 ||
            (mma->n_step && mma->n % mma->n_step) || mma->nrow_modes < 1 ||
            mma->ncol_modes < 1 || mma->nrow_modes > TILEC_TARGET_MAX_MODES ||
            mma->ncol_modes > TILEC_TARGET_MAX_MODES || mma->max_acc_regs < 1) {
            snprintf(err, errlen, "mma %d ('%s'): a field is out of range", i,
                     mma->name ? mma->name : "?");
            return -1;
        }
        /* a variable width: the narrowest, the next and the widest tile (the
         * check runs on every lowering, so not all 32 widths of wgmma) */
        int32_t step = mma->n_step ? mma->n_step : mma->n;
        int32_t widths[3] = {step, 2 * step <= mma->n ? 2 * step : step, mma->n};
        for (int w = 0; w < 3; w++)
            if (mma_layout_ok(mma, widths[w], err, errlen) != 0)
                return -1;
    }
    return 0;
}
