/*
 * cpu_cg.h — the C generator's state and helpers, shared by the files that
 * write parts of a kernel's C: cpu_cg.c (types, conversions, expressions),
 * cpu_codegen.c (the kernel and its statements), cpu_tileops.c (copy,
 * fill, reduce, cumsum, atomic, print), cpu_gemm.c (T.gemm: the BLIS loop
 * nest, packing and the micro-kernels), cpu_uses.c (what statements read
 * and write).  Private to the CPU backend.
 */
#ifndef TILEC_CPU_CG_H
#define TILEC_CPU_CG_H

#include "tilec/ir.h"
#include "tilec/sdk.h"

#define CG_MAX_DEPTH 200
#define CG_MAX_HOIST 16

enum { PLACE_PARAM = 0, PLACE_SCRATCH, PLACE_LOCAL };

/* Blocks in lockstep groups (cpu_group.c): gx x gy neighbouring blocks of
 * a GEMM kernel run by one call, sharing each K step's tile copies. */
typedef struct cpu_group {
    int gx, gy;                    /* members per group; 1 x 1: no groups */
    int ku;                        /* K steps merged into one GEMM call (>= 1) */
    int a_direct;                  /* the GEMM reads an in-bounds A tile from the tensor (no copy) */
    int b_direct;                  /* merged steps: an in-bounds B tile is packed from the tensor (no copy) */
    int64_t bm, bn, bk;            /* the tiles, when ku > 1 */
    const tilec_ir_stmt_t *loop;   /* the K loop (top level) */
    const tilec_ir_stmt_t *copy_a, *copy_b, *gemm; /* its body */
} cpu_group_t;

/* Row-by-row blocks (cpu_rows.c): the top-level statements run for row 0,
 * then row 1, ...; hoisted[i] marks the i-th top-level statement, which
 * runs once before the row loop.  The row buffers (rowbuf[id]) hold one
 * row, the current one: their index in dimension 0 is always tc_r, so
 * it is dropped, and that row stays in L1 from one statement to the next. */
typedef struct cpu_rows {
    int64_t rows;                  /* 0: no row loop */
    unsigned char *hoisted;        /* [top-level statements] */
    unsigned char *rowbuf;         /* [nbufs] */
    unsigned char *shadow;         /* [nbufs] float16, read in rows through a float copy tc_sh<id> */
    int in_rows;                   /* generating the row statements (the copies exist) */
} cpu_rows_t;

typedef struct cg {
    const tilec_ir_kernel_t *k;
    tilec_sdk_str_t *o;
    tilec_arena_t ar;      /* temporary strings, freed at the end */
    char *err;
    size_t errlen;
    int failed;
    int depth;             /* current expression/statement nesting */
    int ind;               /* indentation level */
    int tmp;               /* counter for unique local names */
    int *place;            /* [nbufs] PLACE_* */
    int nsyms;
    int ngemm;             /* GEMM statements needing temporaries */
    /* loads hoisted out of the T.Parallel loop being generated: the load's
     * index array (identifies the IR node) and the C local holding it */
    struct { tilec_ir_expr_t *const *idx; const char *name; } hoist[CG_MAX_HOIST];
    int nhoist;
    /* the loads of a loop written with explicit vectors (cpu_vec.c), while
     * vec is set: expressions name their vectors and vector functions */
    struct { tilec_ir_expr_t *const *idx; const char *name, *off; int buf; } vload[CG_MAX_HOIST];
    int nvload, vec;
    cpu_group_t grp;
    cpu_rows_t rows;
    const tilec_ir_stmt_t *row_stmt; /* the top-level statement being generated for row tc_r */
    /* set while a block group's GEMM is generated with its A tile read in
     * place: the C names of A's first element and of its row stride */
    const char *gemm_a, *gemm_lda;
    /* set while a row copy is generated with a scale folded in (cpu_rows.c):
     * the C name of the float each element read is multiplied by */
    const char *copy_scale;
    /* while a row copy is generated (cpu_tileops.c): the row two rows on
     * to prefetch, [0] in the source and [1] in the destination, is named
     * tc_pf0 / tc_pf1 (its bytes in row_pf_bytes[]) and not yet prefetched */
    int row_pf[2];
    int64_t row_pf_bytes[2];
} cg_t;

/* ---- helpers (cpu_cg.c) ---- */

/* Records the first error (later ones are dropped); generation goes on
 * producing throw-away text until the caller sees g->failed. */
void cg_fail(cg_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* printf into the generator's arena ("0" on out of memory, with g failed) */
char *cg_fmt(cg_t *g, const char *f, ...) __attribute__((format(printf, 2, 3)));
/* one indented line of output */
void cg_line(cg_t *g, const char *f, ...) __attribute__((format(printf, 2, 3)));
/* C compute type of dtype t (float for 16- and 8-bit floats, int for bool) */
const char *cg_ct_type(tilec_dtype_t t);
/* value v of compute type for dtype s as a value of dtype t (rounded to t) */
const char *cg_conv(cg_t *g, const char *v, tilec_dtype_t s, tilec_dtype_t t);
/* value v of compute type for dtype s in t's storage type */
const char *cg_to_store(cg_t *g, const char *v, tilec_dtype_t s, tilec_dtype_t t);
/* stored value v of dtype t in its compute type */
const char *cg_from_store(cg_t *g, const char *v, tilec_dtype_t t);
/* 1 when b is one of the kernel's buffers, else 0 with g failed */
int cg_buf_ok(cg_t *g, const tilec_ir_buffer_t *b);
/* dimension d of b as an int64 C expression (a literal when constant) */
const char *cg_dim(cg_t *g, const tilec_ir_buffer_t *b, int d);
/* scalar expression e as C */
const char *cg_expr(cg_t *g, const tilec_ir_expr_t *e);
/* a fresh number for unique local names */
int cg_newtmp(cg_t *g);
/* 1 when t is a dtype of the IR */
int cg_valid_dtype(int t);
/* C storage type of dtype t (uint16_t for 16-bit floats, uint8_t for bool) and its size */
const char *cg_st_type(tilec_dtype_t t);
size_t cg_st_size(tilec_dtype_t t);
/* row-major int64 offset in b of the indices idx (C expressions) / ix (IR) */
const char *cg_offset(cg_t *g, const tilec_ir_buffer_t *b, const char *const *idx);
const char *cg_offset_exprs(cg_t *g, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *ix);
static inline int cg_is_flt(tilec_dtype_t t) { return tilec_dtype_is_float(t); }
static inline int cg_is_global(const tilec_ir_buffer_t *b) { return b->scope == TILEC_SCOPE_GLOBAL; }
/* b is stored as its current row only (cpu_rows.c) */
static inline int cg_row_buf(const cg_t *g, const tilec_ir_buffer_t *b) { return g->rows.rows && g->rows.rowbuf[b->id]; }

/* ---- tile operations (cpu_tileops.c) ---- */

void cg_copy(cg_t *g, const tilec_ir_stmt_t *s);   /* COPY, COPY_ASYNC */
void cg_fill(cg_t *g, const tilec_ir_stmt_t *s);
void cg_reduce(cg_t *g, const tilec_ir_stmt_t *s);
void cg_cumsum(cg_t *g, const tilec_ir_stmt_t *s);
void cg_atomic(cg_t *g, const tilec_ir_stmt_t *s);
void cg_print(cg_t *g, const tilec_ir_stmt_t *s);
/* In a pipelined loop's body (ext: its extent as C): L2 prefetch of the
 * global regions the top-level copies (only that one when only != NULL)
 * read in the next iteration. */
void cg_prefetch_next(cg_t *g, const tilec_ir_stmt_t *loop, const char *ext, const tilec_ir_stmt_t *only);
/* A global region read in place: declares its bases, sets *off to the
 * offset of its first element, returns the C condition "inside its buffer". */
const char *cg_region_at(cg_t *g, const tilec_ir_region_t *r, const char **off);

/* ---- uses (cpu_uses.c) ---- */

/* Does e read buffer b (in a load or a load's index)? */
int cg_expr_reads(const tilec_ir_expr_t *e, const tilec_ir_buffer_t *b, int depth);
/* First mention of b in the statement list s: 0 none, 1 a write of all of
 * b that certainly runs (maybe: s may not run) and reads nothing of b,
 * 2 anything else (b must start zeroed). */
int cg_first_use(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b, int maybe, int depth);

/* ---- block groups (cpu_group.c) ---- */

/* 1 with *out filled when kernel k (buffer placement place[]) runs its
 * blocks in groups, else 0 with out->gx = out->gy = 1. */
int cpu_group_plan(const tilec_ir_kernel_t *k, const int *place, cpu_group_t *out);

/* Does e mention variable v, or load anything? (an index that does
 * neither is fixed for the whole loop over v; cpu_codegen.c) */
int cg_varies(const tilec_ir_expr_t *e, const tilec_ir_var_t *v, int depth);

/* ---- explicit vectors (cpu_vec.c) ---- */
/* Before the T.Parallel loop `loop` of constant extent: when it qualifies,
 * its iterations TC_VEXPW at a time with explicit vectors (under TC_VEXP), from
 * its declared variable, and 1: the caller's scalar loop then starts where
 * that one stopped (`for (; v < extent; ...)`). */
int cpu_vec_loop_head(cg_t *g, const tilec_ir_stmt_t *loop, int64_t extent);

/* ---- row-by-row blocks (cpu_rows.c) ---- */

/* 1 with *out filled when kernel g->k (not in block groups) runs its
 * top-level statements one row of its tiles at a time, else 0. */
int cpu_rows_plan(cg_t *g, cpu_rows_t *out);
/* A row T.Parallel loop scaling a row buffer that the next, last statement
 * copies out, to fold into that copy: the scale (and the rows' variable,
 * and whether the scale divides), or NULL (cpu_rows.c) */
const tilec_ir_expr_t *cpu_rows_scale_fold(const tilec_ir_stmt_t *s, const tilec_ir_var_t **i, int *div);

/* ---- GEMM (cpu_gemm.c) ---- */

/* The GEMM part of the kernel's fixed C text (micro- and macro-kernels,
 * blocking constants), emitted after cpu_prelude. */
extern const char cpu_gemm_prelude[];
/* #defines of the host's L1d/L2/L3 sizes the blocking is computed from
 * (emitted before the preludes, so part of the kernel-cache key). */
void cpu_gemm_cache_sizes(cg_t *g);
/* Bytes of the host's L2 (cpu0's, from sysfs, else sysconf; 1 MiB when
 * neither says), which the block groups' merged K chunk is sized from. */
long cpu_gemm_l2_bytes(void);
/* A T.gemm statement. */
void cpu_gemm_gen(cg_t *g, const tilec_ir_stmt_t *s);
/* Lines raising tc_g to the temporaries of every GEMM under s (the
 * scratch layout). */
void cpu_gemm_sizes(cg_t *g, const tilec_ir_stmt_t *s, int depth);

#endif
