/*
 * hip_target.c — the HIP backend's target descriptions (tilec/target.h),
 * one per AMD architecture family, and the --arch parser.
 *
 * What the lowering passes and the dialect need to know about an AMD GPU,
 * as data:
 *  - wavefront: 64 lanes on GCN and CDNA (gfx9: gfx908, gfx90a, gfx942),
 *    32 on RDNA (gfx10, gfx11), where HIP compiles wave32;
 *  - LDS: 64 KiB a workgroup on all of them (nothing to opt into), 32
 *    banks of 4 bytes;
 *  - matrix instructions: MFMA on CDNA (v_mfma_f32_32x32x8f16,
 *    16x16x16f16, the bf16_1k forms from gfx90a on, i8), WMMA on RDNA3
 *    (v_wmma_f32_16x16x16_f16 in wave32), none on GCN and RDNA2, where
 *    T.gemm stays on FMA tiles;
 *  - no asynchronous global-to-LDS copies the passes could schedule, block
 *    barriers (s_barrier), cross-lane shuffles (ds_bpermute / DPP).
 *
 * The accumulator layouts, from AMD's CDNA ISA guides (and its matrix
 * instruction calculator), as CuTe-style modes: for 32x32 MFMA, element
 * (r, c) is in lane c + 32 * ((r / 4) % 2), register r % 4 + 4 * (r / 8);
 * for 16x16 MFMA, lane c + 16 * (r / 4), register r % 4; for RDNA3 WMMA
 * (f32 accumulator, wave32), lane c + 16 * (r % 2), register r / 2.
 * The operands come from registers (loaded from LDS by the kernel), so no
 * entry asks for swizzled or 16-byte-row shared operands.
 */
#include <stdio.h>
#include <string.h>

#include "hip_internal.h"

#define MODES_32x32 \
    .nrow_modes = 3, .row_modes = {{4, 0, 1}, {2, 32, 0}, {4, 0, 4}}, \
    .ncol_modes = 1, .col_modes = {{32, 1, 0}}
#define MODES_16x16 \
    .nrow_modes = 2, .row_modes = {{4, 0, 1}, {4, 16, 0}}, \
    .ncol_modes = 1, .col_modes = {{16, 1, 0}}
#define MODES_WMMA \
    .nrow_modes = 2, .row_modes = {{2, 16, 0}, {8, 0, 1}}, \
    .ncol_modes = 1, .col_modes = {{16, 1, 0}}

#define MMA(nm, M, N, K, ab, acc, thr, modes) \
    {.struct_size = sizeof(tilec_target_mma_t), .name = nm, .m = M, .n = N, .k = K, \
     .a_dtype = ab, .b_dtype = ab, .acc_dtype = acc, .threads = thr, .flags = 0, \
     .max_acc_regs = 128, modes}

static const tilec_target_mma_t mma_cdna1[] = {
    MMA("mfma.f32.32x32x8f16", 32, 32, 8, TILEC_FLOAT16, TILEC_FLOAT32, 64, MODES_32x32),
    MMA("mfma.f32.16x16x16f16", 16, 16, 16, TILEC_FLOAT16, TILEC_FLOAT32, 64, MODES_16x16),
    MMA("mfma.i32.32x32x8i8", 32, 32, 8, TILEC_INT8, TILEC_INT32, 64, MODES_32x32),
    MMA("mfma.i32.16x16x16i8", 16, 16, 16, TILEC_INT8, TILEC_INT32, 64, MODES_16x16),
};

static const tilec_target_mma_t mma_cdna2[] = {
    MMA("mfma.f32.32x32x8f16", 32, 32, 8, TILEC_FLOAT16, TILEC_FLOAT32, 64, MODES_32x32),
    MMA("mfma.f32.16x16x16f16", 16, 16, 16, TILEC_FLOAT16, TILEC_FLOAT32, 64, MODES_16x16),
    MMA("mfma.f32.32x32x8bf16_1k", 32, 32, 8, TILEC_BFLOAT16, TILEC_FLOAT32, 64, MODES_32x32),
    MMA("mfma.f32.16x16x16bf16_1k", 16, 16, 16, TILEC_BFLOAT16, TILEC_FLOAT32, 64, MODES_16x16),
    MMA("mfma.i32.32x32x8i8", 32, 32, 8, TILEC_INT8, TILEC_INT32, 64, MODES_32x32),
    MMA("mfma.i32.16x16x16i8", 16, 16, 16, TILEC_INT8, TILEC_INT32, 64, MODES_16x16),
};

/* gfx940..942 replaced the i8 forms by 32x32x16 and 16x16x32 */
static const tilec_target_mma_t mma_cdna3[] = {
    MMA("mfma.f32.32x32x8f16", 32, 32, 8, TILEC_FLOAT16, TILEC_FLOAT32, 64, MODES_32x32),
    MMA("mfma.f32.16x16x16f16", 16, 16, 16, TILEC_FLOAT16, TILEC_FLOAT32, 64, MODES_16x16),
    MMA("mfma.f32.32x32x8bf16_1k", 32, 32, 8, TILEC_BFLOAT16, TILEC_FLOAT32, 64, MODES_32x32),
    MMA("mfma.f32.16x16x16bf16_1k", 16, 16, 16, TILEC_BFLOAT16, TILEC_FLOAT32, 64, MODES_16x16),
    MMA("mfma.i32.32x32x16i8", 32, 32, 16, TILEC_INT8, TILEC_INT32, 64, MODES_32x32),
    MMA("mfma.i32.16x16x32i8", 16, 16, 32, TILEC_INT8, TILEC_INT32, 64, MODES_16x16),
};

static const tilec_target_mma_t mma_rdna3[] = {
    MMA("wmma.f32.16x16x16f16", 16, 16, 16, TILEC_FLOAT16, TILEC_FLOAT32, 32, MODES_WMMA),
    MMA("wmma.f32.16x16x16bf16", 16, 16, 16, TILEC_BFLOAT16, TILEC_FLOAT32, 32, MODES_WMMA),
};

#define COMMON(wave) \
    .struct_size = sizeof(tilec_target_desc_t), .version = TILEC_TARGET_DESC_VERSION, \
    .subgroup_size = wave, .max_threads = 1024, .smem_default = 64 * 1024, \
    .smem_optin = 64 * 1024, .smem_banks = 32, .bank_bytes = 4, .smem_align = 16, \
    .regs_per_thread = 256, .frag_regs = 128, .vector_bytes = 16, .async_copy = 0, \
    .max_stages = 0, .barriers = TILEC_TARGET_BARRIER_BLOCK, \
    .flags = TILEC_TARGET_SUBGROUP_SHUFFLE | TILEC_TARGET_ROWS_RAGGED

#define NMMA(a) (int32_t)(sizeof(a) / sizeof((a)[0]))
static const tilec_target_desc_t desc_gcn = {COMMON(64), .name = "hip gcn (wave64)"};
static const tilec_target_desc_t desc_cdna1 = {COMMON(64), .name = "hip cdna1 (gfx908)",
                                               .nmma = NMMA(mma_cdna1), .mma = mma_cdna1};
static const tilec_target_desc_t desc_cdna2 = {COMMON(64), .name = "hip cdna2 (gfx90a)",
                                               .nmma = NMMA(mma_cdna2), .mma = mma_cdna2};
static const tilec_target_desc_t desc_cdna3 = {COMMON(64), .name = "hip cdna3 (gfx942)",
                                               .nmma = NMMA(mma_cdna3), .mma = mma_cdna3};
static const tilec_target_desc_t desc_rdna2 = {COMMON(32), .name = "hip rdna2 (wave32)"};
static const tilec_target_desc_t desc_rdna3 = {COMMON(32), .name = "hip rdna3 (gfx11)",
                                               .nmma = NMMA(mma_rdna3), .mma = mma_rdna3};

static int is_hex(char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); }

int hip_arch_parse(const char *arch, hip_arch_t *out)
{
    memset(out, 0, sizeof *out);
    size_t n = arch ? strcspn(arch, ":") : 0;
    int ok = arch && n >= 6 && n <= 8 && strncmp(arch, "gfx", 3) == 0;
    for (size_t i = 3; ok && i < n; i++)
        ok = is_hex(arch[i]);
    /* target features: ":sramecc+", ":xnack-" */
    for (const char *p = arch ? arch + n : NULL; ok && *p;) {
        size_t k = strcspn(p + 1, ":");
        ok = k >= 2 && (p[k] == '+' || p[k] == '-');
        p += 1 + k;
    }
    if (!ok) {
        tilec_sdk_error_set("hip: bad target '%s' (expected an AMD GPU processor such as gfx90a, gfx942, "
                            "gfx1030, gfx1100)", arch ? arch : "");
        return -1;
    }
    memcpy(out->name, arch, n);
    out->name[n] = '\0';
    const char *v = out->name + 3;
    size_t nv = n - 3;
    if (nv == 3 && v[0] == '9') {
        out->wave = 64;
        if (!strcmp(v, "908")) {
            out->family = HIP_CDNA1;
            out->desc = &desc_cdna1;
        } else if (!strcmp(v, "90a")) {
            out->family = HIP_CDNA2;
            out->desc = &desc_cdna2;
        } else if (!strcmp(v, "940") || !strcmp(v, "941") || !strcmp(v, "942")) {
            out->family = HIP_CDNA3;
            out->desc = &desc_cdna3;
        } else {
            out->family = HIP_GCN;
            out->desc = &desc_gcn;
        }
    } else if (nv == 3 && v[0] >= '6' && v[0] <= '8') {
        out->wave = 64;
        out->family = HIP_GCN;
        out->desc = &desc_gcn;
    } else if (nv == 4 && v[0] == '1' && v[1] == '1') {
        out->wave = 32;
        out->family = HIP_RDNA3;
        out->desc = &desc_rdna3;
    } else if (nv == 4 && v[0] == '1') {
        /* gfx10 and later RDNA without a matrix layout known here */
        out->wave = 32;
        out->family = HIP_RDNA2;
        out->desc = &desc_rdna2;
    } else {
        tilec_sdk_error_set("hip: unknown AMD GPU processor '%s'", arch);
        return -1;
    }
    return 0;
}

const tilec_target_desc_t *hip_target_desc(const char *arch)
{
    hip_arch_t a;
    return hip_arch_parse(arch, &a) == 0 ? a.desc : NULL;
}
