/*
 * cuda_target.c — the CUDA backend's target descriptions (tilec/target.h)
 * for the SDK's lowering passes, one per architecture family.
 *
 * Everything the passes need to know about an NVIDIA GPU is here, as
 * data: warps of 32, the shared-memory sizes (48 KB without opting in,
 * the architecture's maximum with it), 32 banks of 4 bytes, 255 registers
 * a thread, the tensor-core instructions with their accumulator layouts
 * (mma.sync m16n8k16 from sm_80 on, wgmma m64nNk16 on sm_90a, and
 * m64nNk32 on 8-bit floats there), cp.async
 * from sm_80 on and bulk copies and mbarriers on sm_90.  The layouts are
 * those of the PTX ISA's "matrix fragments" figures, written as modes:
 * for m16n8, row r = r0 + 8 r1 and column c = c0 + 2 c1 put element (r, c)
 * in lane 4 r0 + c1, register 2 r1 + c0; for wgmma's m64nN, rows add a
 * third mode r2 (warp of the group, 32 lanes on) and columns one c2 (the
 * 8-column block, 4 registers on).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tilec/ir.h"
#include "tilec/target.h"

#define MODES_M16 \
    .nrow_modes = 2, .row_modes = {{8, 4, 0}, {2, 0, 2}}, \
    .ncol_modes = 2, .col_modes = {{2, 0, 1}, {4, 1, 0}}
#define MODES_M64 \
    .nrow_modes = 3, .row_modes = {{8, 4, 0}, {2, 0, 2}, {4, 32, 0}}, \
    .ncol_modes = 3, .col_modes = {{2, 0, 1}, {4, 1, 0}, {0, 0, 4}}

#define MMA_SYNC(nm, ab) \
    {.struct_size = sizeof(tilec_target_mma_t), .name = nm, .m = 16, .n = 8, .k = 16, \
     .a_dtype = ab, .b_dtype = ab, .acc_dtype = TILEC_FLOAT32, .threads = 32, \
     .flags = TILEC_TARGET_MMA_SMEM_ROWS16, .max_acc_regs = 256, MODES_M16}
#define WGMMA(nm, ab) \
    {.struct_size = sizeof(tilec_target_mma_t), .name = nm, .m = 64, .n = 256, .k = 16, \
     .n_step = 8, .a_dtype = ab, .b_dtype = ab, .acc_dtype = TILEC_FLOAT32, .threads = 128, \
     .flags = TILEC_TARGET_MMA_SMEM_SWIZZLED | TILEC_TARGET_MMA_ASYNC | TILEC_TARGET_MMA_A_REGS, \
     .max_acc_regs = 128, MODES_M64}

/* fp8: k = 32, both operands K-major (the PTX ISA allows no transpose for
 * 8-bit types) */
#define WGMMA8(nm, ab) \
    {.struct_size = sizeof(tilec_target_mma_t), .name = nm, .m = 64, .n = 256, .k = 32, \
     .n_step = 8, .a_dtype = ab, .b_dtype = ab, .acc_dtype = TILEC_FLOAT32, .threads = 128, \
     .flags = TILEC_TARGET_MMA_SMEM_SWIZZLED | TILEC_TARGET_MMA_ASYNC | TILEC_TARGET_MMA_KMAJOR, \
     .max_acc_regs = 128, MODES_M64}

static const tilec_target_mma_t mma_sm80[] = {
    MMA_SYNC("m16n8k16.f16.f32", TILEC_FLOAT16),
    MMA_SYNC("m16n8k16.bf16.f32", TILEC_BFLOAT16),
};

static const tilec_target_mma_t mma_sm90a[] = {
    WGMMA("wgmma.m64nNk16.f16.f32", TILEC_FLOAT16),
    WGMMA("wgmma.m64nNk16.bf16.f32", TILEC_BFLOAT16),
    MMA_SYNC("m16n8k16.f16.f32", TILEC_FLOAT16),
    MMA_SYNC("m16n8k16.bf16.f32", TILEC_BFLOAT16),
    WGMMA8("wgmma.m64nNk32.e4m3.f32", TILEC_FLOAT8_E4M3FN),
    WGMMA8("wgmma.m64nNk32.e5m2.f32", TILEC_FLOAT8_E5M2),
};

#define COMMON_FLAGS (TILEC_TARGET_SUBGROUP_SHUFFLE | TILEC_TARGET_SIMT_ACC_SHARED)
#define COMMON COMMON_F(COMMON_FLAGS)
#define COMMON_F(fl) \
    .struct_size = sizeof(tilec_target_desc_t), .version = TILEC_TARGET_DESC_VERSION, \
    .subgroup_size = 32, .max_threads = 1024, .smem_default = 48 * 1024, .smem_banks = 32, \
    .bank_bytes = 4, .smem_align = 128, .regs_per_thread = 255, .frag_regs = 128, \
    .vector_bytes = 16, .flags = (fl), \
    .frag_dtypes = 1u << TILEC_FLOAT32

/* before sm_80: no cp.async; T.gemm on the CUDA cores */
static const tilec_target_desc_t desc_sm70 = {
    COMMON, .name = "cuda sm_70", .smem_optin = 96 * 1024,
    .barriers = TILEC_TARGET_BARRIER_BLOCK | TILEC_TARGET_BARRIER_SUBGROUP,
};

#define AMPERE(nm, optin) \
    COMMON, .name = nm, .smem_optin = optin, \
    .async_copy = TILEC_TARGET_ASYNC_CP4 | TILEC_TARGET_ASYNC_CP8 | TILEC_TARGET_ASYNC_CP16, \
    .max_stages = 8, .barriers = TILEC_TARGET_BARRIER_BLOCK | TILEC_TARGET_BARRIER_SUBGROUP, \
    .nmma = 2, .mma = mma_sm80

static const tilec_target_desc_t desc_sm80 = {AMPERE("cuda sm_80", 163 * 1024)};
static const tilec_target_desc_t desc_sm86 = {AMPERE("cuda sm_86", 99 * 1024)};

#define CP_ASYNC (TILEC_TARGET_ASYNC_CP4 | TILEC_TARGET_ASYNC_CP8 | TILEC_TARGET_ASYNC_CP16)
#define HOPPER(nm, async) HOPPER_F(nm, async, COMMON_FLAGS)
#define HOPPER_F(nm, async, fl) \
    COMMON_F(fl), .name = nm, .smem_optin = 227 * 1024, .async_copy = async, \
    .max_stages = 8, \
    .barriers = TILEC_TARGET_BARRIER_BLOCK | TILEC_TARGET_BARRIER_SUBGROUP | \
                TILEC_TARGET_BARRIER_OBJECT

static const tilec_target_desc_t desc_sm90 = {HOPPER("cuda sm_90", CP_ASYNC | TILEC_TARGET_ASYNC_BULK), .nmma = 2,
                                              .mma = mma_sm80};
/* sm_90a: what it can do (cuda_target_desc, which the lowering tests use),
 * and what the backend lowers for unless TILEC_CUDA_WS=1: warp
 * specialization was slower than the plain TMA ring on the H200 for the
 * fp16 GEMM 8192^3 (0.791 of cuBLAS against 0.816,
 * bench/results/hopper_session6.md; with a one-warp producer 1.849 ms
 * against 1.837, bench/results/hopper_session7.md). */
#define SM90A(fl, pb) SM90A_C(fl, pb, 0)
#define SM90A_C(fl, pb, cl) \
    {HOPPER_F("cuda sm_90a", CP_ASYNC | TILEC_TARGET_ASYNC_BULK, COMMON_FLAGS | (fl)), .nmma = 6, .mma = mma_sm90a, \
     .persistent_blocks = (pb), .cluster_max = (cl)}
/* [ws + 2 persist]: persistent kernels (the persist pass) with
 * TILEC_CUDA_PERSIST=1, on CUDA_PERSIST_BLOCKS blocks: the SMs of an
 * H100 SXM or H200, one block of a GEMM's size each */
#define CUDA_PERSIST_BLOCKS 132
/* [+ 4 overlap]: the overlap pass (an attention loop's second wgmma under
 * the next iteration's softmax) with TILEC_CUDA_OVERLAP=1 */
#define WS TILEC_TARGET_WARP_SPECIALIZE
#define OV TILEC_TARGET_MMA_OVERLAP
/* [+ 8 cluster]: 2-block clusters multicasting a shared operand (the
 * cluster pass) with TILEC_CUDA_CLUSTER=1 (or 2, cuda_cluster.c): opt-in,
 * correct but 22-56% slower on the H200 (bench/results/hopper2_session10.md) */
static const tilec_target_desc_t desc_sm90a_v[16] = {
    SM90A(0, 0), SM90A(WS, 0), SM90A(0, CUDA_PERSIST_BLOCKS), SM90A(WS, CUDA_PERSIST_BLOCKS),
    SM90A(OV, 0), SM90A(WS | OV, 0), SM90A(OV, CUDA_PERSIST_BLOCKS), SM90A(WS | OV, CUDA_PERSIST_BLOCKS),
    SM90A_C(0, 0, 2), SM90A_C(WS, 0, 2), SM90A_C(0, CUDA_PERSIST_BLOCKS, 2), SM90A_C(WS, CUDA_PERSIST_BLOCKS, 2),
    SM90A_C(OV, 0, 2), SM90A_C(WS | OV, 0, 2), SM90A_C(OV, CUDA_PERSIST_BLOCKS, 2),
    SM90A_C(WS | OV, CUDA_PERSIST_BLOCKS, 2)};
#undef WS
#undef OV
/* [+ 16 attention]: the warpspec pass on attention loops too (a producer
 * warpgroup fills the K/V ring, the consumers compute between the gemms)
 * with TILEC_CUDA_WS_ATTN=1; [+ 32 ping-pong]: their consumer warpgroups
 * take turns at the gemms (the pingpong pass) with TILEC_CUDA_PINGPONG=1;
 * [+ 64 square]: a wgmma gemm's warpgroups follow its policy (Square: two
 * of 128 x 128 on a 128 x 256 tile, as TileLang's) with TILEC_CUDA_SQUARE=1;
 * [+ 128 order]: a grid whose blocks' work grows with bx starts its
 * heaviest blocks first (the order pass) unless TILEC_CUDA_ORDER=0.
 * desc_sm90a_x[i] is desc_sm90a_v[i % 16] with those flags. */
static tilec_target_desc_t desc_sm90a_x[256];
static pthread_once_t desc_sm90a_once = PTHREAD_ONCE_INIT;
static void desc_sm90a_fill(void)
{
    for (int i = 0; i < 256; i++) {
        desc_sm90a_x[i] = desc_sm90a_v[i % 16];
        desc_sm90a_x[i].flags |= (i & 16 ? TILEC_TARGET_WARP_SPECIALIZE_REGS : 0) | (i & 32 ? TILEC_TARGET_WG_PINGPONG : 0) |
                                 (i & 64 ? TILEC_TARGET_MMA_GRID_POLICY : 0) | (i & 128 ? TILEC_TARGET_BLOCK_ORDER : 0);
    }
}
static const tilec_target_desc_t *desc_sm90a(int i)
{
    pthread_once(&desc_sm90a_once, desc_sm90a_fill);
    return &desc_sm90a_x[i];
}
#define SM90A_ALL desc_sm90a(5 + 16 + 32 + 128)
/* the same without the tensor copy engine: what the backend lowers for
 * with TILEC_CUDA_TMA=0, and for sm_90 unless TILEC_CUDA_TMA=1 (TMA was
 * measured on sm_90a's schedules: GEMM 8192^3 0.728 -> 0.785 of cuBLAS,
 * flash 0.701 -> 0.749 of cuDNN on the H200, bench/results/hopper_session4.md) */
static const tilec_target_desc_t desc_sm90_cp = {HOPPER("cuda sm_90", CP_ASYNC), .nmma = 2, .mma = mma_sm80};
static const tilec_target_desc_t desc_sm90a_cp = {HOPPER("cuda sm_90a", CP_ASYNC), .nmma = 6, .mma = mma_sm90a};

int cuda_arch_sm(const char *arch)
{
    if (!arch)
        return -1;
    const char *p = arch;
    if (strncmp(p, "sm_", 3) == 0)
        p += 3;
    else if (strncmp(p, "compute_", 8) == 0)
        p += 8;
    int v = 0, nd = 0;
    while (*p >= '0' && *p <= '9' && nd < 4) {
        v = v * 10 + (*p - '0');
        p++;
        nd++;
    }
    if (nd < 2 || (*p && strcmp(p, "a") != 0 && strcmp(p, "f") != 0))
        return -1;
    return v;
}

int cuda_arch_has_wgmma(const char *arch)
{
    size_t n = arch ? strlen(arch) : 0;
    return cuda_arch_sm(arch) == 90 && n > 0 && arch[n - 1] == 'a';
}

const tilec_target_desc_t *cuda_target_desc(const char *arch)
{
    int sm = cuda_arch_sm(arch);
    if (sm < 0)
        return NULL;
    if (sm >= 90)
        return cuda_arch_has_wgmma(arch) ? SM90A_ALL : &desc_sm90;
    if (sm >= 86)
        return &desc_sm86;
    if (sm >= 80)
        return &desc_sm80;
    return &desc_sm70;
}

static int env_on(const char *name)
{
    const char *v = secure_getenv(name);
    return v && *v && atoi(v) > 0;
}

/* on unless NAME is set to 0 */
static int env_default_on(const char *name)
{
    const char *v = secure_getenv(name);
    return !(v && *v) || atoi(v) > 0;
}

const tilec_target_desc_t *cuda_lower_desc(const char *arch)
{
    const tilec_target_desc_t *t = cuda_target_desc(arch);
    const char *e = secure_getenv("TILEC_CUDA_TMA");
    int on = e && *e ? atoi(e) > 0 : t == SM90A_ALL;
    if (on && t == SM90A_ALL)
        /* attention's producer warpgroup and FA3's overlap are the default
         * (flash b4 h16 s8192 d128 4.56 -> 3.96 ms, causal 2.46 -> 2.20 on
         * the H200, sanitizers clean: bench/results/h200_session10.md);
         * TILEC_CUDA_WS_ATTN=0 / TILEC_CUDA_OVERLAP=0 turn them off */
        return desc_sm90a(env_on("TILEC_CUDA_WS") + 2 * env_on("TILEC_CUDA_PERSIST") +
                          4 * env_default_on("TILEC_CUDA_OVERLAP") + 8 * env_on("TILEC_CUDA_CLUSTER") +
                          16 * env_default_on("TILEC_CUDA_WS_ATTN") + 32 * env_on("TILEC_CUDA_PINGPONG") +
                          64 * env_on("TILEC_CUDA_SQUARE") + 128 * env_default_on("TILEC_CUDA_ORDER"));
    if (on)
        return t;
    return t == SM90A_ALL ? &desc_sm90a_cp : t == &desc_sm90 ? &desc_sm90_cp : t;
}

int cuda_fast_exp2(void)
{
    return env_default_on("TILEC_CUDA_FAST_EXP2");
}

int cuda_zero_init(void)
{
    return env_default_on("TILEC_CUDA_ZERO_INIT");
}
