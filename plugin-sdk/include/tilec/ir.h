/*
 * tilec/ir.h — the in-memory model of the stable tile IR.
 *
 * The tile IR is what the backend-neutral core hands to every backend.  It
 * crosses the plugin ABI only in its serialized text form ("tileir 1.x", see
 * docs/ir.md); each side parses that text into these structures in an arena
 * of its own, so no pointer ever crosses the ABI.  The core and the SDK share
 * this header and the code behind it (ir.c, ir_print.c, ir_read.c).
 *
 * IR 1.1 adds the lowering vocabulary (attributes, buffer layouts, bitwise
 * operators, gemm stage indices, async copies, barriers; docs/ir.md §9).
 * A module that uses none of it prints as "tileir 1.0".
 *
 * Ownership: every node, string and array reachable from a tilec_ir_module_t
 * lives in the tilec_arena_t that built it and is freed with it at once.
 * No field owns anything on its own.
 *
 * Conventions:
 *  - Tensors are row-major and contiguous.  float16/bfloat16 values are
 *    stored as their 16-bit patterns.
 *  - Loops always run from 0 to extent-1 with step 1; the frontend rewrites
 *    other ranges into this form.
 *  - All buffers of a kernel (parameters and on-chip allocations) are
 *    declared at kernel level; on-chip buffers are per block.
 */
#ifndef TILEC_IR_H
#define TILEC_IR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILEC_IR_VERSION_MAJOR 1
#define TILEC_IR_VERSION_MINOR 4   /* newest minor version this SDK reads and writes */
#define TILEC_IR_MAX_DIMS 8
/* Deepest expression nesting and statement nesting the text form allows;
 * the reader rejects deeper input, the verifier rejects deeper IR. */
#define TILEC_IR_MAX_DEPTH 512
/* Largest on-chip (shared, fragment, local, var) buffer the verifier
 * accepts, in bytes: sizes derived from it never overflow. */
#define TILEC_IR_MAX_ONCHIP_BYTES ((int64_t)1 << 30)
/* Deepest software pipeline (num_stages of a pipelined loop) the verifier
 * accepts; the frontend's T.Pipelined limit. */
#define TILEC_IR_MAX_STAGES 64

/* ---- arena ------------------------------------------------------------ */

typedef struct tilec_arena_chunk tilec_arena_chunk_t;
typedef struct tilec_arena {
    tilec_arena_chunk_t *head; /* owned: chunk list, freed by _destroy */
    size_t bytes;              /* total bytes handed out */
} tilec_arena_t;

void tilec_arena_init(tilec_arena_t *a);
void tilec_arena_destroy(tilec_arena_t *a);
/* Zeroed, 16-byte aligned memory; NULL only when out of memory. */
void *tilec_arena_alloc(tilec_arena_t *a, size_t size);
char *tilec_arena_strdup(tilec_arena_t *a, const char *s);
char *tilec_arena_strndup(tilec_arena_t *a, const char *s, size_t n);

/* ---- types ------------------------------------------------------------ */

typedef enum tilec_dtype {
    TILEC_BOOL = 0,
    TILEC_INT8, TILEC_INT16, TILEC_INT32, TILEC_INT64,
    TILEC_UINT8, TILEC_UINT16, TILEC_UINT32, TILEC_UINT64,
    TILEC_FLOAT16, TILEC_BFLOAT16, TILEC_FLOAT32, TILEC_FLOAT64,
    /* 1.2: 8-bit float storage formats (OCP FP8, as ml_dtypes/PyTorch):
     * e4m3fn has no infinity (max 448, S.1111.111 is NaN), e5m2 is IEEE-like */
    TILEC_FLOAT8_E4M3FN, TILEC_FLOAT8_E5M2,
    /* 1.3: 4-bit storage formats (as ml_dtypes): int4 and uint4 integers and
     * float4_e2m1fn (OCP MX FP4: values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
     * negatives, no infinity or NaN).  A kernel tensor of one packs two
     * elements in each byte, the even element in the low nibble (PyTorch's
     * packed int8 and float4_e2m1fn_x2 layout); on-chip storage is the
     * backend's (subbyte.c) */
    TILEC_INT4, TILEC_UINT4, TILEC_FLOAT4_E2M1FN,
    TILEC_DTYPE_COUNT
} tilec_dtype_t;

const char *tilec_dtype_name(tilec_dtype_t t);         /* "float16" ... */
/* Accepts every name of docs/language.md ("float" is float32); -1 if unknown. */
int tilec_dtype_from_name(const char *name);
/* bytes of one element on chip; 1 for the 4-bit dtypes, whose kernel
 * tensors hold two per byte (tilec_dtype_bits, tilec_dtype_tensor_bytes) */
size_t tilec_dtype_size(tilec_dtype_t t);
unsigned tilec_dtype_bits(tilec_dtype_t t);            /* 1..64: the width of its values (bool 8) */
int tilec_dtype_is_4bit(tilec_dtype_t t);              /* int4, uint4, float4_e2m1fn (1.3) */
/* Bytes that n elements of a kernel tensor of dtype t occupy (4-bit: packed). */
size_t tilec_dtype_tensor_bytes(tilec_dtype_t t, size_t n);
int tilec_dtype_is_float(tilec_dtype_t t);
int tilec_dtype_is_int(tilec_dtype_t t);               /* signed or not, not bool */
int tilec_dtype_is_signed(tilec_dtype_t t);

/* Exact conversions of the 16-bit float formats (round to nearest even). */
uint16_t tilec_f32_to_f16(float f);
float tilec_f16_to_f32(uint16_t h);
uint16_t tilec_f32_to_bf16(float f);
float tilec_bf16_to_f32(uint16_t h);
uint16_t tilec_f64_to_f16(double d);   /* one rounding, not via float */
uint16_t tilec_f64_to_bf16(double d);
/* 8-bit floats (1.2), round to nearest even from double, non-saturating as
 * ml_dtypes and PyTorch: e4m3fn overflow (>= 464 in magnitude), infinity and
 * NaN give NaN (0x7f | sign); e5m2 overflow gives infinity. */
uint8_t tilec_f64_to_f8e4m3fn(double d);
uint8_t tilec_f64_to_f8e5m2(double d);
float tilec_f8e4m3fn_to_f32(uint8_t x);
float tilec_f8e5m2_to_f32(uint8_t x);
int tilec_dtype_is_float8(tilec_dtype_t t);
/* 4-bit values (1.3, subbyte.c).  float4_e2m1fn from double rounds to
 * nearest even and saturates at +-6 (infinities too); NaN gives a zero of
 * the opposite sign, bit for bit as ml_dtypes converts.  The code is the
 * low nibble. */
uint8_t tilec_f64_to_f4e2m1fn(double d);
float tilec_f4e2m1fn_to_f32(uint8_t code);
/* Packed kernel-tensor storage and the one-value-per-byte form backends
 * compute on: int4 sign-extended to int8, uint4 and float4_e2m1fn as their
 * code 0..15.  unpack reads n elements from packed (ceil(n/2) bytes), pack
 * writes them back (a last odd element keeps the byte's high nibble). */
void tilec_unpack4(tilec_dtype_t t, const uint8_t *packed, uint8_t *bytes, size_t n);
void tilec_pack4(const uint8_t *bytes, uint8_t *packed, size_t n);

typedef enum tilec_scope {
    TILEC_SCOPE_GLOBAL = 0, /* kernel parameter, device memory */
    TILEC_SCOPE_SHARED,     /* T.alloc_shared: per block, visible to all its threads */
    TILEC_SCOPE_FRAGMENT,   /* T.alloc_fragment: per block, distributed over threads */
    TILEC_SCOPE_LOCAL,      /* T.alloc_local: per thread */
    TILEC_SCOPE_VAR,        /* T.alloc_var: one scalar per thread, shape (1,) */
    TILEC_SCOPE_COUNT
} tilec_scope_t;

const char *tilec_scope_name(tilec_scope_t s); /* "global" "shared" ... */
int tilec_scope_from_name(const char *name);   /* -1 if unknown */

/* ---- variables and buffers --------------------------------------------- */

typedef enum tilec_var_kind {
    TILEC_VAR_BLOCK = 0, /* block index bx/by/bz, int32 */
    TILEC_VAR_LOOP,      /* loop variable, int32, 0..extent-1 */
    TILEC_VAR_SYM,       /* T.dynamic shape symbol, int32, bound at launch */
    TILEC_VAR_LET,       /* scalar local assigned by TILEC_ST_ASSIGN */
    TILEC_VAR_LAYOUT     /* 1.1: placeholder index var of a layout (_i0.., _r); not in kernel vars */
} tilec_var_kind_t;

const char *tilec_var_kind_name(tilec_var_kind_t k); /* "block" "loop" "sym" "let" "layout" */

typedef struct tilec_ir_var {
    int id;                /* index in tilec_ir_kernel_t.vars; LAYOUT: dimension (ndim for _r) */
    const char *name;      /* arena; unique within the kernel */
    tilec_dtype_t dtype;
    tilec_var_kind_t kind;
} tilec_ir_var_t;

typedef struct tilec_ir_expr tilec_ir_expr_t;

/* ---- attributes (1.1) ----------------------------------------------------
 * Decisions that do not change semantics, as an ordered list of key/value
 * pairs on a statement or a buffer.  Keys are namespaced "ns.name": "lower.*"
 * keys are set by the SDK's lowering passes (docs/ir.md lists them and the
 * verifier checks their types), "<backend>.*" keys by a backend's own passes
 * (the verifier ignores namespaces it does not know).  The interpreter
 * ignores attributes.  Text: attrs {key = value, ...}. */

typedef enum tilec_attr_kind {
    TILEC_ATTR_INT = 0, /* i */
    TILEC_ATTR_FLOAT,   /* f */
    TILEC_ATTR_STRING,  /* s (arena, non-NULL) */
    TILEC_ATTR_TUPLE    /* n ints in tuple (arena) */
} tilec_attr_kind_t;

typedef struct tilec_ir_attr {
    const char *key;    /* arena */
    tilec_attr_kind_t kind;
    int64_t i;
    double f;
    const char *s;
    int n;
    int64_t *tuple;
} tilec_ir_attr_t;

/* The attribute named key in list (n entries), or NULL. */
const tilec_ir_attr_t *tilec_ir_attr_get(int n, const tilec_ir_attr_t *list, const char *key);
/* Sets (replaces or appends) *v in the list (*n entries at *list), copying key, string
 * and tuple into arena a.  0, or -1 when out of memory. */
int tilec_ir_attr_set(tilec_arena_t *a, int *n, tilec_ir_attr_t **list, const tilec_ir_attr_t *v);
int tilec_ir_attr_set_int(tilec_arena_t *a, int *n, tilec_ir_attr_t **list, const char *key, int64_t v);
int tilec_ir_attr_set_str(tilec_arena_t *a, int *n, tilec_ir_attr_t **list, const char *key, const char *v);
int tilec_ir_attr_set_tuple(tilec_arena_t *a, int *n, tilec_ir_attr_t **list, const char *key,
                            const int64_t *v, int count);

/* ---- layouts (1.1) -------------------------------------------------------
 * Where the elements of an on-chip buffer live, decided by the lowering.
 * The expressions are int32 expressions over the layout's own placeholder
 * variables: ivar[d] ("_i<d>", the element's index in dimension d) and rvar
 * ("_r", the replica 0..replicate-1); they are not in the kernel's tables.
 *  REGS (fragment/local buffers): element (i0..) of replica r is register
 *       `local` (0..nlocal-1) of thread `thread` (0..threads-1).
 *  SMEM (shared buffers): element (i0..) is element `addr` of the buffer's
 *       bytes [offset, offset+size) of the block's shared memory (padding
 *       and swizzles are written into addr).
 * name + params name the form for printers ("mma.acc", "swizzle128", ...);
 * the verifier and the interpreter use the explicit expressions. */

typedef enum tilec_layout_kind { TILEC_LAYOUT_REGS = 0, TILEC_LAYOUT_SMEM } tilec_layout_kind_t;

typedef struct tilec_ir_layout {
    tilec_layout_kind_t kind;
    const char *name;                 /* arena */
    int nparams;
    tilec_ir_attr_t *params;          /* arena [nparams]; keys need no namespace */
    int ndim;                         /* rank of the buffer it describes */
    tilec_ir_var_t *ivar[TILEC_IR_MAX_DIMS]; /* [ndim] placeholders _i0.. */
    tilec_ir_var_t *rvar;             /* placeholder _r */
    /* REGS */
    int threads, nlocal, replicate;   /* each >= 1 */
    tilec_ir_expr_t *thread, *local;
    /* SMEM */
    int64_t offset, size;             /* bytes */
    tilec_ir_expr_t *addr;            /* in elements of the buffer's dtype */
} tilec_ir_layout_t;

/* A layout of kind for a rank-ndim buffer, with its placeholder vars made
 * (int32, kind LAYOUT); replicate/threads/nlocal start at 1.  NULL on OOM. */
tilec_ir_layout_t *tilec_ir_layout_new(tilec_arena_t *a, tilec_layout_kind_t kind, const char *name, int ndim);
const char *tilec_layout_kind_name(tilec_layout_kind_t k); /* "regs" "smem" */

typedef struct tilec_ir_buffer {
    int id;                  /* index in tilec_ir_kernel_t.bufs; params come first */
    const char *name;        /* arena; unique within the kernel */
    tilec_scope_t scope;
    tilec_dtype_t dtype;
    int ndim;
    tilec_ir_expr_t **shape;    /* arena array [ndim]; constants or int exprs of symbols */
    tilec_ir_layout_t *layout;  /* 1.1; NULL: not decided (always in 1.0) */
    int nattrs;                 /* 1.1 */
    tilec_ir_attr_t *attrs;     /* arena [nattrs] */
} tilec_ir_buffer_t;

/* ---- expressions ------------------------------------------------------- */

typedef enum tilec_expr_kind {
    TILEC_EX_INT = 0,   /* i */
    TILEC_EX_FLOAT,     /* f (may be +-inf) */
    TILEC_EX_VAR,       /* var */
    TILEC_EX_LOAD,      /* buf[idx...] */
    TILEC_EX_UNARY,     /* uop(a) */
    TILEC_EX_BINARY,    /* bop(a, b) */
    TILEC_EX_SELECT,    /* a ? b : c  (T.if_then_else, x if c else y) */
    TILEC_EX_CAST       /* (dtype) a */
} tilec_expr_kind_t;

typedef enum tilec_unop {
    TILEC_UN_NEG = 0, TILEC_UN_NOT, TILEC_UN_ABS,
    TILEC_UN_EXP, TILEC_UN_EXP2, TILEC_UN_LOG, TILEC_UN_LOG2,
    TILEC_UN_SQRT, TILEC_UN_RSQRT, TILEC_UN_TANH, TILEC_UN_SIGMOID,
    TILEC_UN_FLOOR, TILEC_UN_CEIL,
    /* 1.4: the operand's bits read as the node's dtype, of the same width
     * (8, 16, 32 or 64 bits; not bool, not a 4-bit dtype); text form
     * bitcast(a):DTYPE.  Made with tilec_ir_bitcast. */
    TILEC_UN_BITCAST,
    TILEC_UN_COUNT
} tilec_unop_t;

typedef enum tilec_binop {
    TILEC_BIN_ADD = 0, TILEC_BIN_SUB, TILEC_BIN_MUL,
    TILEC_BIN_DIV,       /* floats: true division; ints: truncating (C) */
    TILEC_BIN_FLOORDIV,  /* Python // (floor) */
    TILEC_BIN_FLOORMOD,  /* Python %  (sign of divisor) */
    TILEC_BIN_POW,
    TILEC_BIN_MIN, TILEC_BIN_MAX,
    TILEC_BIN_EQ, TILEC_BIN_NE, TILEC_BIN_LT, TILEC_BIN_LE, TILEC_BIN_GT, TILEC_BIN_GE,
    TILEC_BIN_AND, TILEC_BIN_OR,   /* logical, on bools */
    /* 1.1: on integers; shr is arithmetic on signed, logical on unsigned
     * dtypes; a shift count outside [0, bits) is undefined behaviour. */
    TILEC_BIN_BITAND, TILEC_BIN_BITOR, TILEC_BIN_BITXOR, TILEC_BIN_SHL, TILEC_BIN_SHR,
    TILEC_BIN_COUNT
} tilec_binop_t;

const char *tilec_unop_name(tilec_unop_t op);   /* "neg" "exp" ... (text IR) */
const char *tilec_binop_name(tilec_binop_t op); /* "add" "floordiv" ... */
int tilec_unop_from_name(const char *name);     /* -1 if unknown */
int tilec_binop_from_name(const char *name);

/* Typing rules (the frontend applies them, the verifier checks them):
 * comparisons and AND/OR/NOT are bool; every other op has the dtype of its
 * operands, which are equal (the frontend inserts casts).  Math unops take
 * and give a float dtype. */
struct tilec_ir_expr {
    tilec_expr_kind_t kind;
    tilec_dtype_t dtype;
    union {
        int64_t i;                                   /* INT */
        double f;                                    /* FLOAT */
        tilec_ir_var_t *var;                            /* VAR (kernel-owned) */
        struct { tilec_ir_buffer_t *buf; tilec_ir_expr_t **idx; } load; /* idx[buf->ndim] */
        struct { tilec_unop_t op; tilec_ir_expr_t *a; } un;
        struct { tilec_binop_t op; tilec_ir_expr_t *a, *b; } bin;
        struct { tilec_ir_expr_t *cond, *a, *b; } sel;
        struct { tilec_ir_expr_t *a; } cast;            /* to dtype */
    } u;
};

/* ---- statements -------------------------------------------------------- */

/* A rectangular piece of a buffer: base index per dimension and a constant
 * extent per dimension (extent 1 for an indexed dimension). */
typedef struct tilec_ir_region {
    tilec_ir_buffer_t *buf;
    tilec_ir_expr_t **base;     /* arena array [buf->ndim] */
    int64_t *extent;         /* arena array [buf->ndim], each >= 1 */
} tilec_ir_region_t;

typedef enum tilec_stmt_kind {
    TILEC_ST_FOR = 0,  /* for var in 0..extent-1 (kind) { body } */
    TILEC_ST_IF,       /* if cond { then } else { els } */
    TILEC_ST_STORE,    /* buf[idx...] = value */
    TILEC_ST_ASSIGN,   /* var = value (var kind LET) */
    TILEC_ST_COPY,     /* dst region <- src region, boundary-safe on global */
    TILEC_ST_FILL,     /* region <- value (T.fill, T.clear) */
    TILEC_ST_GEMM,     /* C (+)= op(A) @ op(B) */
    TILEC_ST_REDUCE,   /* dst = reduce(src, dim) */
    TILEC_ST_CUMSUM,   /* dst = cumsum(src, dim) */
    TILEC_ST_ATOMIC,   /* buf[idx] = op(buf[idx], value), atomically */
    TILEC_ST_SYNC,     /* T.sync_threads */
    TILEC_ST_PRINT,    /* T.print: debug output of a value or buffer */
    TILEC_ST_HINT,     /* T.use_swizzle / T.annotate_layout: may be ignored */
    /* 1.1: what the lowering decides (docs/ir.md §9) */
    TILEC_ST_COPY_ASYNC,   /* dst (shared) <- src (global), pending until waited for */
    TILEC_ST_ASYNC_COMMIT, /* closes the current group of pending async copies */
    TILEC_ST_ASYNC_WAIT,   /* completes every committed group except the newest n */
    TILEC_ST_BARRIER,      /* block-wide barrier inserted by the lowering */
    TILEC_ST_MBAR_INIT,    /* barrier_init NAME: every barrier of the array, phase 0 */
    TILEC_ST_MBAR_ARRIVE,  /* barrier_arrive NAME[idx] [expect_tx BYTES] */
    TILEC_ST_MBAR_WAIT     /* barrier_wait NAME[idx], parity */
} tilec_stmt_kind_t;
#define TILEC_ST_KIND_COUNT (TILEC_ST_MBAR_WAIT + 1)

const char *tilec_stmt_kind_name(tilec_stmt_kind_t k); /* "for" "copy_async" ... (text IR keyword) */

typedef enum tilec_loop_kind {
    TILEC_LOOP_SERIAL = 0,  /* T.serial, range */
    TILEC_LOOP_PARALLEL,    /* T.Parallel: iterations independent */
    TILEC_LOOP_PIPELINED,   /* T.Pipelined(num_stages) */
    TILEC_LOOP_UNROLL,      /* T.unroll */
    TILEC_LOOP_VECTORIZED   /* T.vectorized */
} tilec_loop_kind_t;

typedef enum tilec_reduce_op {
    TILEC_RED_SUM = 0, TILEC_RED_MAX, TILEC_RED_MIN, TILEC_RED_ABSSUM, TILEC_RED_ABSMAX
} tilec_reduce_op_t;

typedef enum tilec_atomic_op { TILEC_ATOMIC_ADD = 0, TILEC_ATOMIC_MAX, TILEC_ATOMIC_MIN } tilec_atomic_op_t;

typedef enum tilec_gemm_policy {
    TILEC_POLICY_SQUARE = 0, TILEC_POLICY_FULLROW, TILEC_POLICY_FULLCOL
} tilec_gemm_policy_t;

const char *tilec_loop_kind_name(tilec_loop_kind_t k);   /* "serial" "parallel" ... */
const char *tilec_reduce_op_name(tilec_reduce_op_t op);  /* "sum" "max" ... */
const char *tilec_atomic_op_name(tilec_atomic_op_t op);  /* "add" "max" "min" */
const char *tilec_policy_name(tilec_gemm_policy_t p);    /* "square" ... */

typedef struct tilec_ir_stmt tilec_ir_stmt_t;

/* 1.1: an array of `size` barrier objects (mbarrier), each completing a
 * phase after `arrive` barrier_arrive executions (the lowering counts
 * block-level statements, not threads).  Declared at kernel level. */
typedef struct tilec_ir_mbarrier {
    int id;                /* index in tilec_ir_kernel_t.mbars */
    const char *name;      /* arena; unique among the kernel's mbarriers */
    int size;              /* >= 1 */
    int arrive;            /* >= 1 */
} tilec_ir_mbarrier_t;

struct tilec_ir_stmt {
    tilec_stmt_kind_t kind;
    int line, col;            /* source position, 0 if unknown (not serialized) */
    tilec_ir_stmt_t *next;       /* next statement in the same block */
    int nattrs;               /* 1.1 */
    tilec_ir_attr_t *attrs;   /* arena [nattrs] */
    union {
        struct {
            tilec_ir_var_t *var; tilec_ir_expr_t *extent; tilec_loop_kind_t kind;
            int num_stages;   /* PIPELINED only, >= 1 */
            tilec_ir_stmt_t *body;
        } loop;
        struct { tilec_ir_expr_t *cond; tilec_ir_stmt_t *then, *els; } cond; /* els may be NULL */
        struct { tilec_ir_buffer_t *buf; tilec_ir_expr_t **idx; tilec_ir_expr_t *value; } store;
        struct { tilec_ir_var_t *var; tilec_ir_expr_t *value; } assign;
        /* COPY (and COPY_ASYNC) semantics: after dropping extent-1 dimensions both regions
         * have the same extents; element k of src goes to element k of dst,
         * converted to dst's dtype.  Elements of a GLOBAL region outside
         * the tensor read as zero and are not written. */
        /* COPY_ASYNC (1.1): bar != NULL binds the copy to mbarrier bar[bar_idx]:
         * its bytes complete that barrier's current phase's transactions
         * instead of joining a commit group (docs/ir.md §9.5). */
        struct {
            tilec_ir_region_t src, dst;
            tilec_ir_mbarrier_t *bar; tilec_ir_expr_t *bar_idx;
        } copy;
        struct { tilec_ir_region_t dst; tilec_ir_expr_t *value; } fill;
        /* GEMM: C[M,N] (+)= A'[M,K] * B'[K,N] where A' = trans_a ? A^T : A
         * (A stored [K,M] when transposed) and likewise B (stored [N,K]).
         * clear_accum zeroes C first.  A, B, C are whole 2-D buffers, or
         * (1.1) A/B have leading dimensions selected by a_lead/b_lead
         * (arena arrays [ndim-2], NULL when the buffer is 2-D): the operand
         * is the 2-D slice A[a_lead..., :, :] (a pipeline stage). */
        struct {
            tilec_ir_buffer_t *a, *b, *c; int trans_a, trans_b, clear_accum;
            tilec_gemm_policy_t policy;
            tilec_ir_expr_t **a_lead, **b_lead;
        } gemm;
        /* REDUCE: dst has src's shape without dimension dim.  clear: dst is
         * overwritten; otherwise the result is combined with dst's value. */
        struct { tilec_reduce_op_t op; tilec_ir_buffer_t *src, *dst; int dim, clear; } reduce;
        /* CUMSUM: inclusive scan of src along dim into dst (same shape);
         * reverse scans from the end.  src may equal dst. */
        struct { tilec_ir_buffer_t *src, *dst; int dim, reverse; } cumsum;
        struct { tilec_atomic_op_t op; tilec_ir_buffer_t *buf; tilec_ir_expr_t **idx; tilec_ir_expr_t *value; } atomic;
        /* PRINT: value != NULL prints a scalar, else buf prints a buffer. */
        struct { const char *msg; tilec_ir_expr_t *value; tilec_ir_buffer_t *buf; } print;
        /* HINT: name is "use_swizzle" or "annotate_layout"; args are
         * constant int expressions (may be empty). */
        struct { const char *name; int nargs; tilec_ir_expr_t **args; tilec_ir_buffer_t *buf; } hint;
        /* ASYNC_WAIT: n >= 0 newest committed groups may stay pending. */
        struct { int n; } wait;
        /* MBAR_*: idx (ARRIVE, WAIT) selects the barrier of the array;
         * parity (WAIT) is the parity of the phase waited for; tx (ARRIVE,
         * NULL for a plain arrival) the transaction bytes the arrival adds
         * to the current phase (expect_tx). */
        struct { tilec_ir_mbarrier_t *bar; tilec_ir_expr_t *idx, *parity, *tx; } mbar;
    } u;
};

/* ---- kernels and modules ----------------------------------------------- */

typedef struct tilec_ir_kernel {
    const char *name;          /* arena */
    int nparams;               /* params are bufs[0..nparams-1], scope GLOBAL */
    int nbufs;
    tilec_ir_buffer_t **bufs;     /* arena array [nbufs] */
    int nvars;
    tilec_ir_var_t **vars;        /* arena array [nvars]; block vars, syms, loops, lets */
    int ngrid;                 /* 1..3 */
    tilec_ir_expr_t *grid[3];     /* grid extents (int32 exprs of syms/constants) */
    tilec_ir_var_t *block[3];     /* block index vars, [ngrid] used */
    int threads[3];            /* threads per block, x y z (unused ones 1) */
    uint32_t out_mask;         /* bit i: param i is an output (out_idx) */
    tilec_ir_stmt_t *body;
    int nmbars;                /* 1.1 */
    tilec_ir_mbarrier_t **mbars; /* arena array [nmbars] */
} tilec_ir_kernel_t;

/* version_major/minor: the version the text said (reader) or the newest
 * (constructor).  The printer ignores them and writes the lowest version
 * that can express the module (tilec_ir_module_minor_needed). */
typedef struct tilec_ir_module {
    int version_major, version_minor;
    tilec_ir_kernel_t *kernel;   /* one kernel per module in IR 1.x */
} tilec_ir_module_t;

/* ---- construction (ir.c) ------------------------------------------------
 * Every constructor allocates from the arena and returns NULL only when out
 * of memory. */

tilec_ir_module_t *tilec_ir_module_new(tilec_arena_t *a);
tilec_ir_kernel_t *tilec_ir_kernel_new(tilec_arena_t *a, const char *name);
/* Append a var/buffer to the kernel's tables (grows them in the arena). */
tilec_ir_var_t *tilec_ir_var_add(tilec_arena_t *a, tilec_ir_kernel_t *k, const char *name,
                              tilec_dtype_t t, tilec_var_kind_t kind);
tilec_ir_buffer_t *tilec_ir_buffer_add(tilec_arena_t *a, tilec_ir_kernel_t *k, const char *name,
                                    tilec_scope_t s, tilec_dtype_t t, int ndim,
                                    tilec_ir_expr_t *const *shape);

tilec_ir_expr_t *tilec_ir_int(tilec_arena_t *a, int64_t v, tilec_dtype_t t);
tilec_ir_expr_t *tilec_ir_float(tilec_arena_t *a, double v, tilec_dtype_t t);
tilec_ir_expr_t *tilec_ir_varref(tilec_arena_t *a, tilec_ir_var_t *v);
tilec_ir_expr_t *tilec_ir_load(tilec_arena_t *a, tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx);
tilec_ir_expr_t *tilec_ir_unary(tilec_arena_t *a, tilec_unop_t op, tilec_ir_expr_t *x);
/* dtype: bool for comparisons/logic, else x's dtype. */
tilec_ir_expr_t *tilec_ir_binary(tilec_arena_t *a, tilec_binop_t op, tilec_ir_expr_t *x, tilec_ir_expr_t *y);
tilec_ir_expr_t *tilec_ir_select(tilec_arena_t *a, tilec_ir_expr_t *c, tilec_ir_expr_t *x, tilec_ir_expr_t *y);
tilec_ir_expr_t *tilec_ir_cast(tilec_arena_t *a, tilec_dtype_t t, tilec_ir_expr_t *x);
/* 1.4: x's bits as dtype t (TILEC_UN_BITCAST; the verifier checks the widths) */
tilec_ir_expr_t *tilec_ir_bitcast(tilec_arena_t *a, tilec_dtype_t t, tilec_ir_expr_t *x);
tilec_ir_stmt_t *tilec_ir_stmt(tilec_arena_t *a, tilec_stmt_kind_t kind);
/* 1.1: appends an mbarrier array to the kernel. */
tilec_ir_mbarrier_t *tilec_ir_mbarrier_add(tilec_arena_t *a, tilec_ir_kernel_t *k, const char *name, int size,
                                           int arrive);

/* Helpers on expressions. */
/* v reduced to the width of integer dtype t: two's complement wrap, bool is
 * v != 0, uint64 keeps the bit pattern (ir_eval.c). */
int64_t tilec_ir_wrap_int(uint64_t v, tilec_dtype_t t);
int tilec_ir_is_const_int(const tilec_ir_expr_t *e, int64_t *out);
/* Product of a buffer's shape when all constant; -1 otherwise. */
int64_t tilec_ir_buffer_const_size(const tilec_ir_buffer_t *b);
/* The lowest minor version (0..3) whose vocabulary covers the module:
 * 3 when it uses a 4-bit dtype, else 2 when it uses a float8 dtype, else 1 when it uses any 1.1 construct
 * (attributes, layouts, mbarriers, the 1.1 statements and binary operators,
 * gemm leading indices). */
int tilec_ir_module_minor_needed(const tilec_ir_module_t *m);
/* Kernel k uses a dtype for which is() holds (a buffer, a variable or an
 * expression node): tilec_ir_kernel_uses_dtype(k, tilec_dtype_is_4bit). */
int tilec_ir_kernel_uses_dtype(const tilec_ir_kernel_t *k, int (*is)(tilec_dtype_t));

/* ---- integer evaluation (ir_eval.c) -------------------------------------
 * The one evaluator of integer expressions (grids, shapes, layout maps) for
 * given variable values.  bind gives the value of a variable (0) or says it
 * has none (-1).  Semantics are docs/ir.md §2's: every node's result wraps
 * to its integer dtype, comparisons and logic give 0/1, casts between
 * integer dtypes wrap.  Returns 0 with *out, or -1 when the expression reads
 * memory, has a float node, an unbound variable, divides by zero, raises
 * to a negative power or shifts outside [0, bits). */
typedef int (*tilec_ir_bind_fn)(void *ctx, const tilec_ir_var_t *v, int64_t *out);
int tilec_ir_eval_int(const tilec_ir_expr_t *e, tilec_ir_bind_fn bind, void *ctx, int64_t *out);

/* ---- text form (ir_print.c / ir_read.c) --------------------------------
 * The text form is the serialized form: "tileir MAJOR.MINOR" then the
 * kernel.  print(read(print(m))) == print(m) byte for byte.  The header
 * says 1.0 unless the module needs 1.1 or 1.2 (tilec_ir_module_minor_needed). */

/* Returns a malloc'd NUL-terminated string (caller frees) or NULL on OOM. */
char *tilec_ir_print(const tilec_ir_module_t *m);
int tilec_ir_fprint(FILE *f, const tilec_ir_module_t *m);
/* Parses text into a module in arena a.  On error returns -1 and writes
 * "LINE:COL: message" into err (errlen bytes).  Rejects a different major
 * version, a higher minor version than this reader knows, and a 1.1
 * construct in a text that says 1.0. */
int tilec_ir_read(tilec_arena_t *a, const char *text, size_t len,
                  tilec_ir_module_t **out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
