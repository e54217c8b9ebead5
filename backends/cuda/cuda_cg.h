/*
 * cuda_cg.h — the CUDA dialect's shared state, between the files of the
 * printer: cuda_codegen.c and the cuda_*.c files that include it.
 *
 * The printer turns lowered tile IR (the SDK's passes ran first, see
 * cuda_lower) into CUDA C++.  It is split by concern: expressions and
 * addressing (cuda_emit.c), copies (cuda_copy.c), the tensor-core
 * intrinsics of T.gemm (cuda_mma.c), reductions and the other block
 * operations (cuda_ops.c), register fragments (cuda_regs.c) and the
 * statements with the kernel frame (cuda_codegen.c).  cg_t is the state
 * of one kernel being printed; every cg_* function writes into g->o.
 */
#ifndef TILEC_CUDA_CG_H
#define TILEC_CUDA_CG_H

#include <stdint.h>

#include "cuda_internal.h"

#define CG_MAX_DEPTH 600
#define CG_LOCAL_MAX_ELEMS 4096
#define CG_MAX_RING 8          /* copies one T.Pipelined loop turns into cp.async rings */

/* ---- generator state ------------------------------------------------------ */

/* Warp tiling of a tensor-core GEMM. */
typedef struct mma_plan {
    int64_t M, N, K;
    int wm, wn;          /* warps along M and N */
    int64_t WM, WN;      /* warp tile */
    int mt, nt;          /* 16x8 mma tiles per warp along M and N */
    int bf16;
    int wg;              /* 1: wgmma (sm_90a) by warpgroups of 4 warps */
    int gm, gn;          /* warpgroups along M and N (wg) */
    int mstride;         /* rows between a warp's mma tiles: 16, or 64 for wg */
    int ev;              /* registers of one tile: 4 (m16n8), or the vector of a row layout */
} mma_plan_t;

typedef struct cg {
    const tilec_ir_kernel_t *k;
    tilec_sdk_str_t *o;
    char *err;
    size_t errlen;
    int failed;
    int depth;
    tilec_arena_t ar;        /* the strings of the expression being written */
    int ind;
    int tmp;
    int sm;
    int wgmma;               /* target has sm_90a's wgmma */
    int any_swz;             /* some buffer is swizzled for wgmma */
    int nthreads;
    uint64_t *smem_off;      /* [nbufs] byte offset in shared memory */
    int64_t *pitch;          /* [nbufs] row pitch in elements (shared 2-D: padded) */
    int *swz;                /* [nbufs] >0: wgmma operand layout, swizzle width in elements */
    uint64_t smem_bytes;
    cuda_kinfo_t *info;
    /* a GEMM whose accumulator lives in registers across the enclosing
     * loop (see emit_loop_with_resident_acc) */
    const tilec_ir_stmt_t *resident;
    int resident_id;
    /* a wgmma GEMM whose wait is deferred by one iteration
     * (lower.mma_wait, set by the pipeline pass) */
    const tilec_ir_stmt_t *wg_defer;
    /* fragments that live in registers (see plan_regfrags) */
    int *rf;                 /* [nbufs] RF_ACC, RF_ROW or 0 */
    mma_plan_t *rf_plan;     /* [nbufs] an RF_ACC fragment's GEMM plan */
    int *rf_id;              /* [nbufs] its registers are tl_c<id> */
    mma_plan_t rf_rows;      /* the row map every register fragment shares */
    int rf_rowid;            /* the id whose tl_wm / tl_l (tl_w / tl_l) give the rows */
    int rf_warprows;         /* the layout is rows over warps (no GEMM), not mma's */
    int any_rf;
    int rf_nest;             /* emitting for one element (1) or one row (2) */
} cg_t;



/* Who runs a block-wide statement: "tl_tid"/NT shared out with a barrier
 * after, or "0"/1 in one thread (inside a parallel body, or per-thread
 * destinations). */
typedef struct who {
    int coop;     /* 1: over the block's threads */
} who_t;

/* RF_AOP: a 16-bit fragment held as wgmma's A-operand registers (cuda_wgrs.c) */
enum { RF_NONE = 0, RF_ACC, RF_ROW, RF_AOP };

/* A T.Parallel nest that runs on the registers (lower.dist = "regs"). */
typedef struct rf_nest {
    const tilec_ir_stmt_t *loop[2];
    int n;                         /* parallel loops in the nest: 1 or 2 */
    const tilec_ir_buffer_t *acc;  /* the accumulator fragment it indexes */
    int writes_mem;                /* stores to shared or global memory */
    int kind;                      /* 0 not on registers, 1 element nest, 2 row nest */
} rf_nest_t;

/* cuda_emit.c: output, types, expressions, regions, buffer references */
void cg_fail(cg_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_out(cg_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_line(cg_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *cg_stype(tilec_dtype_t t);
const char *cg_ctype(tilec_dtype_t t);
int cg_is_f16ish(tilec_dtype_t t);
int cg_is_flt(tilec_dtype_t t);
int64_t cg_const_dim(const tilec_ir_buffer_t *b, int d);
void cg_emit_offset(cg_t *g, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx);
void cg_emit_load_conv_open(cg_t *g, tilec_dtype_t t);
void cg_emit_expr(cg_t *g, const tilec_ir_expr_t *e);
void cg_store_open(cg_t *g, tilec_dtype_t t);
const char *cg_w_start(const who_t *w);
void cg_w_stride(cg_t *g, const who_t *w);
void cg_emit_sync(cg_t *g);
int cg_per_thread_scope(tilec_scope_t s);
void cg_decompose(cg_t *g, int base, const char *k, const int64_t *ext, int n);
void cg_hoist_bases(cg_t *g, const tilec_ir_region_t *r, int hb);
void cg_region_offset(cg_t *g, const tilec_ir_region_t *r, int hb, int ib);
void cg_region_inbounds(cg_t *g, const tilec_ir_region_t *r, int hb, int ib);
int cg_region_shape(const tilec_ir_region_t *r, int64_t *ext);
/* Does statement list s (statement skip and what it nests aside) touch
 * b: with CG_READ any mention (loads in any expression, operands), with
 * CG_WRITE only a write?  b NULL: any per-thread (local/var) buffer.
 * Too deep counts as touching. */
enum { CG_READ = 1, CG_WRITE = 2 };
int cg_touches(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b, const tilec_ir_stmt_t *skip, int how);
/* does expression e load b */
int cg_expr_loads(const tilec_ir_expr_t *e, const tilec_ir_buffer_t *b);
int cg_whole_region(const tilec_ir_region_t *r);

/* cuda_copy.c: copies and fills (vectorized, cp.async) */
void cg_emit_copy(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w);
int cg_copy_vec(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w, int async);
void cg_emit_fill(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w);

/* cuda_mma.c: T.gemm (CUDA cores, mma.sync with ldmatrix, wgmma) */
void cg_emit_gemm(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w);
int cg_mma_plan(cg_t *g, const tilec_ir_stmt_t *s, mma_plan_t *p);
void cg_mma_decl(cg_t *g, const mma_plan_t *p, int id);
void cg_mma_cmove(cg_t *g, const mma_plan_t *p, const tilec_ir_buffer_t *C, int id, int load,
                      int zero);
void cg_emit_wgmma_fns(cg_t *g, const tilec_ir_stmt_t *body);
const tilec_ir_stmt_t *cg_resident_gemm(cg_t *g, const tilec_ir_stmt_t *loop);

/* cuda_ops.c: reduce, cumsum, atomics, print */
void cg_emit_reduce(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w);
void cg_emit_cumsum(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w);
void cg_emit_atomic(cg_t *g, const tilec_ir_stmt_t *s);
void cg_emit_print(cg_t *g, const tilec_ir_stmt_t *s);

/* cuda_regs.c: register fragments */
void cg_plan_regfrags(cg_t *g);
void cg_rf_nest_analyze(cg_t *g, const tilec_ir_stmt_t *s, rf_nest_t *nn);
void cg_rf_ref(cg_t *g, const tilec_ir_buffer_t *b);
int cg_rf_halves(const cg_t *g);
void cg_emit_rf_nest(cg_t *g, const rf_nest_t *nn);
void cg_emit_rf_fill(cg_t *g, const tilec_ir_stmt_t *s);
void cg_emit_rf_copy(cg_t *g, const tilec_ir_stmt_t *s);
void cg_emit_rf_reduce(cg_t *g, const tilec_ir_stmt_t *s);

/* cuda_wgrs.c: wgmma with A in registers */
void cg_plan_wgrs(cg_t *g);
void cg_emit_wgrs_pack(cg_t *g, const tilec_ir_stmt_t *s);
void cg_wgrs_fn(cg_t *g, const char *fn, const mma_plan_t *p, int tb);

/* cuda_codegen.c: statements and the kernel frame */
void cg_emit_block(cg_t *g, const tilec_ir_stmt_t *s, int par);

#endif
