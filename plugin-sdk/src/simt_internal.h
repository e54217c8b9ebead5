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

#include "tilec/ir.h"
#include "tilec/sdk.h"
#include "tilec/simt.h"

#define SIMT_MAX_DEPTH 600

/* Helper functions of the prelude, emitted only when used. */
enum {
    SH_F16 = 1u << 0,      /* tc_h2f, tc_f2h, tc_rh */
    SH_BF16 = 1u << 1,     /* tc_b2f, tc_f2b, tc_rb */
    SH_FLT = 1u << 2,      /* tc_minf tc_maxf tc_fmodf tc_sigmoidf */
    SH_DBL = 1u << 3       /* the double twins */
};

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
    /* Barrier state at block level: buffers (bit id % 64) read, written and
     * updated atomically since the last barrier. */
    uint64_t dirty_r, dirty_w, dirty_a;
    /* Tensor parameters (bit = id, ids < 64) whose 32-bit / 64-bit word
     * views a dialect without pointers declares for CAS loops. */
    uint64_t words32, words64;
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

#endif
