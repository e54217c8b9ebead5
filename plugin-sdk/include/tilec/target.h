/*
 * tilec/target.h — the target description a GPU plugin fills for the
 * SDK's lowering passes (docs/lowering.md).
 *
 * The lowering passes (plugin-sdk/src/lower_*.c) decide warp tiling,
 * register-fragment layouts, the shared-memory plan, pipelines, barriers
 * and vector widths for any GPU.  They read only this description, never
 * a backend's name: adding a GPU target is filling one of these and
 * writing a dialect.  This is the role of Mesa's per-driver compiler
 * options and of IREE's GPU target attribute.
 *
 * Versioning: like the ABI structs, a description starts with struct_size
 * and grows only at the end; the SDK reads a field only when struct_size
 * covers it (tilec_target_field_ok) and treats a missing one as zero.  A
 * description is const data owned by the plugin and lives as long as it.
 */
#ifndef TILEC_TARGET_H
#define TILEC_TARGET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILEC_TARGET_DESC_VERSION 1

/* One mode of an accumulator layout, CuTe-style: a coordinate of extent
 * `extent` (0: whatever is left of the tile along this axis) contributes
 * coordinate * thread_stride to the thread and coordinate * reg_stride to
 * the register.  The modes of an axis run innermost first: row r of the
 * tile is r0 + e0 * (r1 + e1 * (r2 + ...)). */
typedef struct tilec_target_mode {
    int32_t extent;
    int32_t thread_stride;
    int32_t reg_stride;
} tilec_target_mode_t;

#define TILEC_TARGET_MAX_MODES 4

/* mma flags */
/* A and B are read from shared memory through descriptors, in the
 * canonical swizzled layouts (a warpgroup MMA): the shared-memory plan
 * swizzles its operands and the instruction cannot read padded rows. */
#define TILEC_TARGET_MMA_SMEM_SWIZZLED (1u << 0)
/* A and B are loaded from shared memory 16-byte rows at a time, eight
 * rows per load (ldmatrix): the plan pads rows so those rows hit distinct
 * banks. */
#define TILEC_TARGET_MMA_SMEM_ROWS16 (1u << 1)
/* The instruction completes asynchronously (a wait follows it). */
#define TILEC_TARGET_MMA_ASYNC (1u << 2)
/* Both operands must be K-major in shared memory: A stored [M, K] (not
 * transposed) and B stored [N, K] (transpose_B); wgmma on 8-bit floats. */
#define TILEC_TARGET_MMA_KMAJOR (1u << 3)
/* A may come from registers: a 16-bit fragment in the accumulator layout
 * this instruction would have with n = A's columns (wgmma's register A:
 * FlashAttention's P).  The layout pass gives such a layout ("mma.a") to a
 * fragment that one whole copy of an accumulator in that layout writes and
 * one later gemm of the same statement list reads as A. */
#define TILEC_TARGET_MMA_A_REGS (1u << 4)

/* A matrix instruction: D[m,n] += A[m,k] * B[k,n], issued by `threads`
 * threads together (a warp, or a warpgroup of four). */
typedef struct tilec_target_mma {
    uint32_t struct_size;        /* sizeof(tilec_target_mma_t) */
    const char *name;            /* "m16n8k16.f16.f32": the value of lower.mma */
    int32_t m, n, k;             /* shape; with n_step, n is the largest N */
    int32_t n_step;              /* > 0: any multiple of n_step up to n; 0: exactly n */
    int32_t a_dtype, b_dtype;    /* tilec_dtype_t of the operands */
    int32_t acc_dtype;           /* tilec_dtype_t of the accumulator */
    int32_t threads;             /* threads that issue it together */
    uint32_t flags;              /* TILEC_TARGET_MMA_* */
    int32_t max_acc_regs;        /* accumulator registers a thread may give it */
    /* the accumulator's thread/value layout on one m x n tile: element
     * (r, c) is register sum(reg) of thread sum(thread) of the group */
    int32_t nrow_modes, ncol_modes;
    tilec_target_mode_t row_modes[TILEC_TARGET_MAX_MODES];
    tilec_target_mode_t col_modes[TILEC_TARGET_MAX_MODES];
} tilec_target_mma_t;

/* async_copy bits: the asynchronous global -> shared copies there are */
#define TILEC_TARGET_ASYNC_CP4   (1u << 0)   /* cp.async of 4 bytes a thread */
#define TILEC_TARGET_ASYNC_CP8   (1u << 1)   /* 8 bytes */
#define TILEC_TARGET_ASYNC_CP16  (1u << 2)   /* 16 bytes */
#define TILEC_TARGET_ASYNC_BULK  (1u << 3)   /* a bulk tensor copy (TMA) */

/* barriers bits */
#define TILEC_TARGET_BARRIER_BLOCK    (1u << 0)   /* block-wide barrier */
#define TILEC_TARGET_BARRIER_SUBGROUP (1u << 1)   /* warp/subgroup barrier */
#define TILEC_TARGET_BARRIER_OBJECT   (1u << 2)   /* arrive/wait barrier objects (mbarrier) */

/* flags */
#define TILEC_TARGET_SUBGROUP_SHUFFLE (1u << 0)   /* subgroup shuffles (warp reductions) */
/* Accumulators of gemms on the plain cores stay in shared memory (no
 * "simt.acc" register layout): the dialect keeps register accumulators
 * for MMA instructions only. */
#define TILEC_TARGET_SIMT_ACC_SHARED  (1u << 1)
/* Rows over subgroups may be ragged: a row whose length is not a multiple
 * of the subgroup (but at least one per lane) still lives in registers,
 * the last registers of some lanes holding nothing.  The dialect's
 * printer must then skip unheld registers (the SIMT kit does). */
#define TILEC_TARGET_ROWS_RAGGED      (1u << 2)
/* 2-D fragments of the shape of the first gemm accumulator get its
 * register layout too (without the flag only accumulators and row vectors
 * live in registers once a kernel has a gemm), and a T.Parallel(M) nest
 * reading such a fragment at [i, c] runs on its owners (a guarded
 * T.Parallel(M, N) nest): for targets whose shared memory is small. */
#define TILEC_TARGET_REGS_LIKE_ACC    (1u << 3)
/* Operands of gemms that no MMA entry runs get their rows padded by 16
 * bytes in shared memory, as TILEC_TARGET_MMA_SMEM_ROWS16 does for an
 * entry's: for a dialect that prints such gemms on matrix instructions
 * of its own which load 16-byte rows (Vulkan's cooperative matrices). */
#define TILEC_TARGET_SIMT_PAD_ROWS    (1u << 4)
/* Rows over subgroups hold one column a lane at a time (lane l: columns
 * l, l + L, ...), not runs of consecutive columns: for a dialect whose
 * register fragments load and store element by element, so that the
 * lanes of one access read consecutive elements (Vulkan's GLSL). */
#define TILEC_TARGET_ROWS_INTERLEAVED (1u << 5)
/* Warp specialization (the warpspec pass): a warpgroup of 128 threads
 * added to the block may issue the bulk copies of a ring on barrier
 * objects while the block's threads compute, the two meeting only at
 * barrier objects (a "full" and an "empty" one per stage).  The dialect
 * runs the producer's statements on the added threads and may move
 * registers from them to the consumers (sm_90's setmaxnreg). */
#define TILEC_TARGET_WARP_SPECIALIZE  (1u << 6)
/* Asynchronous MMAs may stay in flight across other statements (the
 * overlap pass): the dialect prints a gemm with lower.mma_nowait without
 * its wait and hint "mma_wait" (N) as a wait until N MMA groups are left. */
#define TILEC_TARGET_MMA_OVERLAP      (1u << 7)
/* Warp specialization as above for loops whose body also computes on
 * register fragments between its gemms (attention's softmax), which the
 * consumers alone run; TILEC_TARGET_WARP_SPECIALIZE alone takes loops of
 * gemms only. */
#define TILEC_TARGET_WARP_SPECIALIZE_REGS (1u << 8)
/* The consumer warpgroups of a warp-specialized attention loop under the
 * overlap pass take turns at issuing their gemms (the pingpong pass): the
 * dialect prints hint "wg_turn" (mode, W) as named barriers between them. */
#define TILEC_TARGET_WG_PINGPONG      (1u << 9)
/* The group grid of a variable-width instruction (n_step) follows the
 * gemm's policy like any other (Square: the group's tile closest to
 * square, e.g. two warpgroups of 128 x 128 on a 128 x 256 tile, each
 * issuing two m64n128) instead of taking the fewest groups along N (two of
 * 64 x 256, one m64n256 each). */
#define TILEC_TARGET_MMA_GRID_POLICY  (1u << 10)
/* Blocks start roughly in the order of their linear index, each on the
 * first free processor (a GPU's block scheduler): a grid whose blocks'
 * work grows with bx may be launched heaviest first (the order pass). */
#define TILEC_TARGET_BLOCK_ORDER      (1u << 11)

typedef struct tilec_target_desc {
    uint32_t struct_size;        /* sizeof(tilec_target_desc_t) of the plugin's SDK */
    uint32_t version;            /* TILEC_TARGET_DESC_VERSION */
    const char *name;            /* for logs only ("cuda sm_90a"); passes never read it */
    int32_t subgroup_size;       /* warp / subgroup / wavefront; 0: none to rely on */
    int32_t max_threads;         /* per block */
    uint32_t smem_default;       /* shared memory a block gets without asking, bytes */
    uint32_t smem_optin;         /* the most it may ask for (>= smem_default) */
    int32_t smem_banks;          /* shared-memory banks (32) */
    int32_t bank_bytes;          /* bytes per bank (4) */
    int32_t smem_align;          /* alignment of each shared buffer, bytes (power of 2) */
    int32_t regs_per_thread;     /* 32-bit registers a thread may hold */
    int32_t frag_regs;           /* of those, how many register fragments may take */
    int32_t vector_bytes;        /* widest vector load/store of one thread, bytes */
    uint32_t async_copy;         /* TILEC_TARGET_ASYNC_* */
    int32_t max_stages;          /* deepest pipeline ring (0: no limit but smem) */
    uint32_t barriers;           /* TILEC_TARGET_BARRIER_* */
    uint32_t flags;              /* TILEC_TARGET_* */
    int32_t nmma;
    const tilec_target_mma_t *mma; /* [nmma], best first */
    /* dtypes a register fragment may hold, bits (1u << tilec_dtype_t);
     * 0 (or a description without the field): any of at most 4 bytes */
    uint32_t frag_dtypes;
    /* > 0: a kernel of more tiles than this may run as that many blocks,
     * each looping over tiles (the persist pass, lowering.md); 0 (or a
     * description without the field): one block per tile */
    int32_t persistent_blocks;
    /* >= 2: blocks may run in clusters of up to this many that share
     * shared-memory barriers and multicast bulk copies (the cluster pass,
     * lowering.md); 0, 1 (or a description without the field): none */
    int32_t cluster_max;
} tilec_target_desc_t;

/* 1 when description t (of struct_size bytes) holds field f. */
#define tilec_target_field_ok(t, f) \
    ((t)->struct_size >= offsetof(tilec_target_desc_t, f) + sizeof((t)->f))

/* The description of a plain SIMT GPU, for a plugin to start from and
 * change what its device differs in: this header's size and version, name,
 * no subgroup to rely on, 1024 threads, 48 KiB of shared memory in 32 banks
 * of 4 bytes, 16-byte alignment and vector accesses, 255 registers of
 * which 64 for fragments, block barriers, no MMA, no async copies. */
tilec_target_desc_t tilec_target_simt_default(const char *name);

/* Checks a description for consistency: versions and sizes, positive
 * sizes, each MMA's modes tiling its m x n tile over its threads exactly
 * once.  0, or -1 with a message in err. */
int tilec_target_check(const tilec_target_desc_t *t, char *err, size_t errlen);

/* Thread and register of element (r, c) of an m x ncols accumulator tile
 * of mma (ncols = n, or a multiple of n_step).  0, or -1 when out of the tile. */
int tilec_target_mma_place(const tilec_target_mma_t *mma, int32_t ncols, int32_t r, int32_t c,
                           int32_t *thread, int32_t *reg);

#ifdef __cplusplus
}
#endif
#endif
