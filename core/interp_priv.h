/*
 * core/interp_priv.h — state shared by the parts of the reference
 * interpreter: core/interp.c (driver, values, expressions, control flow),
 * core/interp_ops.c (the tile statements: copy, fill, gemm, reduce,
 * cumsum, atomic, print) and core/interp_async.c (IR 1.1 async copies and
 * mbarriers).  Private to those files.
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
    unsigned char *packed;     /* a 4-bit parameter's tensor: data is its unpacked copy (one per byte) */
    int owned;
    int global;                /* scope GLOBAL: copies are boundary-safe */
    int ready;                 /* set up; a shape may not read a buffer */
    tilec_dtype_t dtype;
    size_t esize;
    int ndim;
    int64_t shape[TILEC_IR_MAX_DIMS];
    int64_t stride[TILEC_IR_MAX_DIMS];
    int64_t size;              /* element count */
    unsigned char *pending;    /* owned, [size] or NULL: 1 where an async copy's write is pending */
    int64_t npending;          /* elements marked in pending */
} tilec_ibuf_t;

/* One copy_async waiting for its group to complete: the values it read,
 * to be written to dst at offs when an async_wait completes group. */
typedef struct tilec_iasync {
    tilec_ibuf_t *dst;
    int64_t n;
    int64_t *offs;             /* owned, [n] */
    unsigned char *bytes;      /* owned, [n * dst->esize], dst's dtype */
    int64_t group;             /* -1 until an async_commit closes the group; -2: on an mbarrier */
    int bar;                   /* group -2: mbarrier id, element bar_i, issued in phase bar_phase */
    int64_t bar_i, bar_phase;
} tilec_iasync_t;

/* The state of one mbarrier array of the kernel. */
typedef struct tilec_imbar {
    int inited;
    int64_t *phase;            /* owned, [size]: phases completed */
    int64_t *arrivals;         /* owned, [size]: arrivals in the current phase */
    int64_t *tx;               /* owned, [size]: bytes expected minus bytes issued in the current phase */
} tilec_imbar_t;

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
    tilec_iasync_t *asyncs;    /* owned, [nasync] in issue order (cap: async_cap) */
    int nasync, async_cap;
    int64_t ngroups;           /* async groups committed in this block */
    tilec_imbar_t *mbars;      /* owned, [k->nmbars] */
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

/* Async copies: 0 when none of the n elements of b from off on has a
 * pending write, else the error "read of B[i, j] while an async copy to it
 * is pending" (what: "read" or "write"). */
int tilec_interp_pending(tilec_ictx_t *c, const tilec_ibuf_t *b, int64_t off, int64_t n, const char *what);

/* Tile statements (interp_ops.c). */
int tilec_interp_copy(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_fill(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_gemm(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_reduce(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_cumsum(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_atomic(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_print(tilec_ictx_t *c, const tilec_ir_stmt_t *s);

/* IR 1.1: async copies and mbarriers (interp_async.c). */
int tilec_interp_copy_async(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
int tilec_interp_async_commit(tilec_ictx_t *c);
int tilec_interp_async_wait(tilec_ictx_t *c, const tilec_ir_stmt_t *s);
/* End of a block: a copy still pending is an error. */
int tilec_interp_async_end(tilec_ictx_t *c);
void tilec_interp_async_reset(tilec_ictx_t *c); /* drops the queue (block start, run end) */
int tilec_interp_mbar(tilec_ictx_t *c, const tilec_ir_stmt_t *s);

#endif
