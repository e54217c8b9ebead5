/*
 * simt_internal.h — private state shared by the two halves of the SIMT
 * lowering kit: simt_expr.c (types, conversions, expressions, the helper
 * functions of the prelude) and simt.c (statements, barriers, the kernel).
 */
#ifndef TILEC_SIMT_INTERNAL_H
#define TILEC_SIMT_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "tilec/cexpr.h"
#include "tilec/ir.h"
#include "tilec/sdk.h"
#include "tilec/simt.h"

#define SIMT_MAX_DEPTH 600

/* ---- lowered IR (simt_lowered.c, simt_regs.c) ----------------------------
 * A module whose buffers carry layouts (IR 1.1, after the SDK's lowering
 * passes) is printed as the passes decided: where each buffer lives comes
 * from its layout, barriers only from the IR. */

/* Where a buffer lives in the generated code. */
enum { SIMT_P_GLOBAL = 0, SIMT_P_SHARED, SIMT_P_PRIVATE, SIMT_P_REGS };

/* One term ((t / a) % b) * c of a thread's coordinate (b == 0: no modulo). */
typedef struct simt_term { int64_t a, b, c; } simt_term_t;
#define SIMT_MAX_TERMS 12

/* The register map of a REGS fragment, inverted: slot l of thread t holds
 * the element whose coordinate D (the buffer's dimensions, then the
 * replica) is F_D(t) + g[l * nd + D], F_D a sum of terms.  fitted == 0:
 * no such closed form; the code then finds each thread's elements by
 * evaluating the layout (slow, always right). */
typedef struct simt_regmap {
    const tilec_ir_buffer_t *buf;
    int fitted, all_valid;
    int local_r_free;                         /* the register index does not depend on the replica */
    int scalar;                               /* printed as nlocal scalars b<i>_<l> (not a half dtype) */
    int T, L, R, nd;
    int64_t n;                                /* elements times replicas */
    int64_t ext[TILEC_IR_MAX_DIMS + 1];       /* extents, the replica count last */
    int nterms[TILEC_IR_MAX_DIMS + 1];
    simt_term_t term[TILEC_IR_MAX_DIMS + 1][SIMT_MAX_TERMS];
    int64_t fmax[TILEC_IR_MAX_DIMS + 1];      /* largest F_D over the threads */
    int64_t *g;                               /* [L * nd] */
    int32_t *inv;                             /* [T * L]: element * R + replica, or -1 */
    int32_t *fwd;                             /* [n]: thread * L + slot */
} simt_regmap_t;

typedef struct simt_bufinfo {
    int place;                 /* SIMT_P_* */
    int dense;                 /* SHARED: its addr is the row-major offset */
    int vrun;                  /* SHARED, not dense: runs of vrun elements (1, 2, 4, 8 or 16) along the last
                                  dimension stay contiguous and vrun-aligned (padded rows, 16-byte swizzles) */
    simt_regmap_t *rm;         /* REGS */
} simt_bufinfo_t;

/* The T.Parallel nest being printed for the owners of its register
 * elements (lower.dist = "regs"): its loop variables run over the
 * coordinates of slot `slot` (-1: a run-time slot) of map rm. */
typedef struct simt_regnest {
    const simt_regmap_t *rm;
    int nv;
    const tilec_ir_var_t *var[2];
    int slot;
    const char *slot_s;
    const char *coord[TILEC_IR_MAX_DIMS + 1];
} simt_regnest_t;

/* Helper functions of the prelude, emitted only when used. */
enum {
    SH_F16 = 1u << 0,      /* tc_h2f, tc_f2h, tc_rh */
    SH_BF16 = 1u << 1,     /* tc_b2f, tc_f2b, tc_rb */
    SH_FLT = 1u << 2,      /* tc_minf tc_maxf tc_fmodf tc_sigmoidf */
    SH_DBL = 1u << 3,      /* the double twins */
    SH_F8 = 1u << 4        /* tc_f_e4m3 tc_e4m3_f tc_f_e5m2 tc_e5m2_f (simt_f8.c) */
};

/* A variable's bounds (simt_range.c): known: lo <= v <= hi wherever the
 * printed code reads it. */
typedef struct simt_vrange { int64_t known, lo, hi; } simt_vrange_t;

struct tilec_simt_ctx {
    const tilec_ir_kernel_t *k;
    const tilec_simt_dialect_t *d;
    tilec_simt_dialect_t dl;   /* d copied with defaults filled in */
    tilec_sdk_str_t *o;             /* where lines go (body, or the prelude while the hook runs) */
    tilec_sdk_str_t body;
    tilec_arena_t ar;          /* temporary strings */
    char *err;
    size_t errlen;
    int failed;
    int depth, ind, tmp;
    int per_thread;            /* inside a T.Parallel body or a thread-0 section */
    int64_t nthreads;          /* threads per block */
    uint32_t uses;
    uint32_t helpers;          /* SH_* */
    uint32_t int_helpers;      /* bit t: integer helpers for dtype t */
    uint32_t nbarriers;
    uint32_t scratch;          /* bit t: tree-reduction scratch of dtype t */
    int scratch_dirty;         /* the scratch may be read since the last barrier */
    const tilec_ir_stmt_t *hooked_loop; /* the loop the dialect's loop_hook is printing */
    /* Barrier state at block level: buffers (bit id % 64) read, written and
     * updated atomically since the last barrier. */
    uint64_t dirty_r, dirty_w, dirty_a;
    /* lowered IR: set by simt_lowered_init when buffers carry layouts */
    int lowered;
    simt_bufinfo_t *bi;        /* [nbufs] (arena) */
    uint64_t pool_bytes;       /* the shared-memory plan's extent */
    uint64_t xoff, xbytes;     /* the lane-exchange scratch of row reductions, in the pool */
    uint64_t xelems[TILEC_DTYPE_COUNT]; /* its elements per dtype (a shared_decl dialect: one array each) */
    tilec_sdk_str_t *mod;      /* module-scope declarations (shared_decl arrays) */
    simt_regnest_t rn;         /* rn.rm != NULL inside a register nest */
    /* Tensor parameters (bit = id, ids < 64) whose 32-bit / 64-bit word
     * views a dialect without pointers declares for CAS loops. */
    uint64_t words32, words64;
    /* simt_range.c: the variables' bounds (vr_state 0: not built yet, 1: vr holds them, -1: none) */
    int vr_state;
    simt_vrange_t *vr;         /* [nvars] (arena) */
};

/* simt_expr.c */
char *simt_fmt(tilec_simt_ctx_t *c, const char *f, ...) __attribute__((format(printf, 2, 3)));
/* Replaces $x placeholders of a template (keys/values pairs, n of them). */
const char *simt_subst(tilec_simt_ctx_t *c, const char *tpl, int n, const char *const *keys,
                       const char *const *vals);
int simt_is_flt(tilec_dtype_t t);
int simt_is_half(tilec_dtype_t t);
int simt_is_private(const tilec_ir_buffer_t *b);
int simt_buf_ok(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b);
const char *simt_st_type(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b);
const char *simt_st_type_dt(tilec_simt_ctx_t *c, tilec_dtype_t t, int global);
const char *simt_idx_type(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b);
const char *simt_int_lit(tilec_simt_ctx_t *c, int64_t v, tilec_dtype_t t);
const char *simt_zero(tilec_simt_ctx_t *c, tilec_dtype_t t);
const char *simt_minmax(tilec_simt_ctx_t *c, int is_max, tilec_dtype_t t, const char *a, const char *b);
const char *simt_abs(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *a);
const char *simt_add(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *a, const char *b);
/* The expression emitter's description of the dialect of c. */
tilec_cexpr_t simt_cexpr_of(tilec_simt_ctx_t *c);
/* simt_digits.c: the offset of b at indices ix (index type it) with runs of indices that are the digits
 * of one flat index y >= 0 folded to y; NULL when no run folds */
const char *simt_offset_folded(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *ix,
                               const char *it);
/* simt_range.c: bounds of variable v (0: none known) */
int simt_var_range(tilec_simt_ctx_t *c, const tilec_ir_var_t *v, int64_t *lo, int64_t *hi);
/* Bits of a 16-bit float compute value and back (software or native). */
const char *simt_half_bits(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *v);
const char *simt_half_from_bits(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *bits);
void simt_emit_helpers(tilec_simt_ctx_t *c, tilec_sdk_str_t *out);
/* The addressing model and typing of the dialect (tilec/simt.h, cast ...
 * kernel_layout).  simt_cast: value v converted to type tname, written as
 * the C format cfmt (two %s: type, value) unless the dialect has a cast
 * template.  simt_cond: an int truth value as a condition.  simt_flag /
 * simt_true: the type and the true value of the kit's own flags.
 * simt_elem: element off of array name as an lvalue. */
const char *simt_cast(tilec_simt_ctx_t *c, const char *cfmt, const char *tname, const char *v);
const char *simt_cond(tilec_simt_ctx_t *c, const char *v);
const char *simt_flag(tilec_simt_ctx_t *c);
const char *simt_true(tilec_simt_ctx_t *c);
const char *simt_elem(tilec_simt_ctx_t *c, const char *name, const char *off);

/* simt_f8.c: 8-bit floats, stored as bits, computed as float32 */
const char *simt_f8_from_bits(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *bits);
const char *simt_f8_bits(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *v);
const char *simt_f8_round(tilec_simt_ctx_t *c, tilec_dtype_t t, const char *v);
void simt_f8_helpers(tilec_simt_ctx_t *c, tilec_sdk_str_t *o);

/* simt.c, for the other statement printers and the lowered-IR printer */
void simt_gen_stmts(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);
void simt_close_block(tilec_simt_ctx_t *c);
int64_t simt_const_dim(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, int d);
int64_t simt_const_size(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b);
/* a loop over total elements, spread over the threads when coop; returns the index name */
const char *simt_open_elem_loop(tilec_simt_ctx_t *c, int64_t total, int coop);
/* 1 when a tile op writing dst runs cooperatively over the block's threads */
int simt_coop_for(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *dst);
/* simt_reduce.c, simt_atomic.c: statements of the v1 path */
void simt_gen_reduce(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);
void simt_reduce_store(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, const char *idx);
void simt_gen_cumsum(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);
void simt_gen_atomic(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);
const char *simt_store_conv(tilec_simt_ctx_t *c, const char *v, tilec_dtype_t from, tilec_dtype_t to);
/* the printed value of a store of v into dtype `to` (a rounding cast to `to` left to the store) */
const char *simt_store_value(tilec_simt_ctx_t *c, const tilec_ir_expr_t *v, tilec_dtype_t to);
/* the operand simt_store_value prints, and in *vt the dtype of the printed value */
const tilec_ir_expr_t *simt_store_operand(const tilec_ir_expr_t *v, tilec_dtype_t to, tilec_dtype_t *vt);
tilec_dtype_t simt_acc_dtype(tilec_dtype_t t);
/* simt_reduce.c: a combined with b by reduce op (sum, max, min) in type t */
const char *simt_red_combine(tilec_simt_ctx_t *c, int op, tilec_dtype_t t, const char *a, const char *b);
int simt_region_bases(tilec_simt_ctx_t *c, const tilec_ir_region_t *r, int64_t *total);
const char *simt_inside_str(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *const *idx);
const char *simt_offset_str(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *const *idx);
const char *simt_offset_typed(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *ix, const char *it);
/* simt_copy.c: copy and fill statements */
void simt_gen_copy(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);
void simt_gen_fill(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);
/* One group of w elements of a gathered copy whose innermost loop is
 * inner (lower.vector = w); 0 when its body is not a gather. */
int simt_gen_gather(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *inner, int64_t w);
/* Declares tc_in<t>: region t of r lies wholly inside its buffer; returns the name. */
const char *simt_region_inside(tilec_simt_ctx_t *c, const tilec_ir_region_t *r, int t);
/* A gemm operand (side 0: A, 1: B) whose leading ring indices select a
 * stage: how many leading indices (0: none); the int64 row-major offset
 * of its element (row, col) in the stage the statement reads. */
int simt_gemm_lead(const tilec_ir_stmt_t *s, int side);
const char *simt_gemm_off(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int side, const char *row, const char *col);
/* Declares block-wide array `name` of n elements of `type` at module
 * scope through the dialect's shared_decl (what: a comment). */
void simt_shared_array(tilec_simt_ctx_t *c, const char *type, const char *name, int64_t n, const char *what);

/* simt_lowered.c */
/* Detects a lowered module and fills c->bi; 0, or -1 after tilec_simt_fail. */
int simt_lowered_init(tilec_simt_ctx_t *c);
int simt_place(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b);
/* Declares the shared-memory pool and the buffers in it (head); returns
 * the pool's bytes. */
uint64_t simt_lowered_decls(tilec_simt_ctx_t *c);
/* The physical element offset in b of logical row-major offset off. */
const char *simt_lowered_phys(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off);
/* Statements of lowered IR; 1 when printed, 0 when the v1 code prints it. */
int simt_lowered_stmt(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);
/* The vector width of copy s: the kit's own w capped by lower.vector. */
int64_t simt_lowered_vec_cap(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s, int64_t w);
/* An int32 layout expression with its placeholders replaced by idx[ndim]
 * and r (NULL: 0). */
const char *simt_layout_str(tilec_simt_ctx_t *c, const tilec_ir_expr_t *e, const char *const *idx, int ndim,
                            const char *r);
/* Value of a layout expression at element idx[ndim], replica r; 0 or -1. */
int simt_layout_eval(const tilec_ir_expr_t *e, const int64_t *idx, int ndim, int64_t r, int64_t *out);

/* simt_regs.c */
simt_regmap_t *simt_regmap_build(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b);
/* Head declarations of the thread coordinates of every fitted map. */
void simt_regs_decls(tilec_simt_ctx_t *c);
/* The register index of an access b[idx] inside a register nest. */
const char *simt_regs_offset(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx);
/* Reading / writing register off of a scalarized fragment (off a constant
 * or a run-time index); NULL when b is not scalarized. */
const char *simt_regs_ref(tilec_simt_ctx_t *c, const tilec_ir_buffer_t *b, const char *off, const char *store);
/* Tile statements and nests on register fragments; 1 when printed. */
int simt_regs_stmt(tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s);
/* 1 when a row reduction into row vector md combines its lanes with the
 * dialect's xor shuffles (no lane-exchange scratch). */
int simt_regs_lane_shuffle(const tilec_simt_ctx_t *c, const simt_regmap_t *md);

#endif
