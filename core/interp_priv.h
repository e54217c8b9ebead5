/*
 * core/interp_priv.h — state shared by the two halves of the reference
 * interpreter: core/interp.c (driver, values, expressions, control flow)
 * and core/interp_ops.c (the tile statements: copy, fill, gemm, reduce,
 * cumsum, atomic, print).  Private to those two files.
 *
 * A value is a tilec_ival_t whose meaning follows a dtype kept beside it:
 * float dtypes use .f (double), uint64 uses .u, every other integer dtype
 * and bool use .i (int64, bool as 0/1).  The "wide" dtype of a class
 * (FLOAT64, UINT64, INT64) is the dtype in which that class computes.
 */
#ifndef TILEC_CORE_INTERP_PRIV_H
#define TILEC_CORE_INTERP_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include "tilec/ir.h"

typedef union tilec_ival {
    int64_t i;
    uint64_t u;
    double f;
} tilec_ival_t;

/* One buffer as the interpreter sees it: shapes evaluated, strides
 * precomputed, data either the caller's (parameters) or owned (on-chip). */
typedef struct tilec_ibuf {
    const tilec_ir_buffer_t *ir;
    unsigned char *data;       /* owned when .owned */
    int owned;
    int global;                /* scope GLOBAL: copies are boundary-safe */
    int ready;                 /* set up; a shape may not read a buffer */
    tilec_dtype_t dtype;
    size_t esize;
    int ndim;
    int64_t shape[TILEC_IR_MAX_DIMS];
    int64_t stride[TILEC_IR_MAX_DIMS];
    int64_t size;              /* element count */
} tilec_ibuf_t;

typedef struct tilec_ictx {
    const tilec_ir_kernel_t *k;
    tilec_ibuf_t *bufs;        /* owned, [k->nbufs] */
    tilec_ival_t *vars;        /* owned, [k->nvars], meaning by var dtype */
    int64_t block[3];
    int in_block;              /* errors name the block once blocks run */
    int line, col;             /* statement being executed, 0 if unknown */
    int depth;                 /* recursion depth (expressions + statements) */
    int failed;                /* first error wins */
    char *err;
    size_t errlen;
    void *scratch;             /* owned, grown on demand (gemm operands) */
    size_t scratch_cap;
} tilec_ictx_t;

/* Deepest expression/statement nesting the interpreter follows. */
#define TILEC_INTERP_MAX_DEPTH 4000

/* Writes the first error (with block and source position) and returns -1. */
int tilec_interp_fail(tilec_ictx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Out-of-bounds report: "out-of-bounds WHAT NAME[i, j] (shape AxB)". */
int tilec_interp_oob(tilec_ictx_t *c, const char *what, const tilec_ibuf_t *b, const int64_t *idx);

/* Values. */
int tilec_interp_is_float(tilec_dtype_t t);
tilec_dtype_t tilec_interp_wide(tilec_dtype_t t); /* FLOAT64, UINT64 or INT64 */
tilec_ival_t tilec_interp_cvt(tilec_ival_t v, tilec_dtype_t from, tilec_dtype_t to);
tilec_ival_t tilec_interp_load_raw(const tilec_ibuf_t *b, int64_t off);
/* v must already have b's dtype (see tilec_interp_cvt). */
void tilec_interp_store_raw(tilec_ibuf_t *b, int64_t off, tilec_ival_t v);
int tilec_interp_truth(tilec_ival_t v, tilec_dtype_t t);

/* Buffers and expressions. */
int tilec_interp_buf(tilec_ictx_t *c, const tilec_ir_buffer_t *ir, tilec_ibuf_t **out);
int tilec_interp_eval(tilec_ictx_t *c, const tilec_ir_expr_t *e, tilec_ival_t *out);
int tilec_interp_eval_int(tilec_ictx_t *c, const tilec_ir_expr_t *e, int64_t *out);
/* Evaluates b->ndim indices and checks them; what names the access. */
int tilec_interp_index(tilec_ictx_t *c, tilec_ibuf_t *b, tilec_ir_expr_t *const *idx,
                       const char *what, int64_t *off);

/* Tile statements (interp_ops.c). */
int tilec_interp_copy(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_fill(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_gemm(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_reduce(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_cumsum(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_atomic(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_print(tilec_ictx_t *c, const tilec_ir_stmt_t *s);

#endif
