/*
 * plugin-sdk/src/lower_internal.h — what the lowering passes share: the
 * pass context, the pass entry points, and small helpers over the IR
 * (constant dimensions, folded integer expressions, buffer accesses of a
 * statement, attributes, the target's MMA entries).  Not public API.
 */
#ifndef TILEC_LOWER_INTERNAL_H
#define TILEC_LOWER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/ir.h"
#include "tilec/ir_walk.h"
#include "tilec/lower.h"
#include "tilec/target.h"

typedef struct lower_ctx {
    tilec_arena_t *a;
    tilec_ir_module_t *m;
    tilec_ir_kernel_t *k;
    const tilec_target_desc_t *t;
    int nthreads;
    const char *pass;           /* name of the running pass */
    tilec_lower_code_t code;    /* first failure */
    char *err;
    size_t errlen;
} lower_ctx_t;

/* Records the first failure ("PASS: message"); returns -1. */
int lower_fail(lower_ctx_t *c, tilec_lower_code_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Out of memory: lower_fail(c, NOMEM); returns -1. */
int lower_oom(lower_ctx_t *c);
int64_t lower_smem_end(const tilec_ir_kernel_t *k);
int64_t lower_mbar_bytes(const tilec_ir_kernel_t *k);
tilec_ir_mbarrier_t *lower_mbar_new(lower_ctx_t *c, const char *base, const char *suffix, int size);
/* hint NAME (args...) of integer constants at at's source position; NULL on OOM (recorded) */
tilec_ir_stmt_t *lower_hint(lower_ctx_t *c, const char *name, const int64_t *args, int nargs, const tilec_ir_stmt_t *at);

/* The passes, in order (each in its own lower_*.c).  0 or -1 (c says why). */
int lower_gemm_warp(lower_ctx_t *c);
int lower_layout(lower_ctx_t *c);
int lower_pipeline(lower_ctx_t *c);
int lower_smem(lower_ctx_t *c);
int lower_vector(lower_ctx_t *c);
int lower_tma(lower_ctx_t *c);
int lower_barrier(lower_ctx_t *c);
int lower_arith(lower_ctx_t *c);
int lower_warpspec(lower_ctx_t *c);
int lower_split(lower_ctx_t *c);
int lower_persist(lower_ctx_t *c);
int lower_overlap(lower_ctx_t *c);
int lower_pingpong(lower_ctx_t *c);
int lower_cluster(lower_ctx_t *c);
int lower_order(lower_ctx_t *c);

/* ---- helpers (lower_util.c) ---------------------------------------------------- */

/* constant extent of dimension d, -1 when symbolic */
int64_t lower_dim(const tilec_ir_buffer_t *b, int d);
/* int32 constant; NULL on OOM (c records it) */
tilec_ir_expr_t *lower_int(lower_ctx_t *c, int64_t v);
/* x OP y on int32 with constants folded and identities (x+0, x*1, x*0,
 * x/1, x%1) simplified; NULL when an operand is NULL or on OOM */
tilec_ir_expr_t *lower_op(lower_ctx_t *c, tilec_binop_t op, tilec_ir_expr_t *x, tilec_ir_expr_t *y);
tilec_ir_expr_t *lower_opi(lower_ctx_t *c, tilec_binop_t op, tilec_ir_expr_t *x, int64_t y);
/* x // d and x % d for 0 <= x < bound, folded when bound <= d */
tilec_ir_expr_t *lower_divb(lower_ctx_t *c, tilec_ir_expr_t *x, int64_t d, int64_t bound);
tilec_ir_expr_t *lower_modb(lower_ctx_t *c, tilec_ir_expr_t *x, int64_t d, int64_t bound);
/* e with every reference to var v replaced by a copy of `by` (a new tree) */
tilec_ir_expr_t *lower_subst(lower_ctx_t *c, const tilec_ir_expr_t *e, const tilec_ir_var_t *v,
                             tilec_ir_expr_t *by);
/* a new int32 loop variable of the kernel named BASE SUFFIX [N], unique */
tilec_ir_var_t *lower_new_loop_var(lower_ctx_t *c, const char *suffix, const char *base);
/* e has no loads and no let variables (it can be evaluated anywhere) */
int lower_expr_pure(const tilec_ir_expr_t *e);
/* e has no loads and no let variable that the statements of body (a loop's)
 * assign: evaluated just before the loop, it is the loop's value of e */
int lower_expr_invariant(const tilec_ir_expr_t *e, tilec_ir_stmt_t *body);
/* A new statement of kind placed at at's line and column; NULL on OOM
 * (recorded). */
tilec_ir_stmt_t *lower_stmt_at(lower_ctx_t *c, tilec_stmt_kind_t kind, const tilec_ir_stmt_t *at);
/* e refers to variable v somewhere */
int lower_mentions(tilec_ir_expr_t *e, const tilec_ir_var_t *v);
/* The three functions of a ring counter k over S stages: its stage k % S,
 * its phase parity (k / S) % 2, and the stage S - 1 loads ahead of it. */
int64_t lower_ring_stage(int64_t k, int S);
int64_t lower_ring_parity(int64_t k, int S);
int64_t lower_ring_ahead(int64_t k, int S);
/* e, an expression of loop variable k only, equals f(k, S) for every k in
 * 0..3S (checked by evaluation: the patterns the pipeline pass writes) */
int lower_is_fn_of_k(const tilec_ir_expr_t *e, const tilec_ir_var_t *k, int S,
                     int64_t (*f)(int64_t, int));
/* s is T.use_swizzle(panel) with a constant panel in 1..2^20 (the SIMT
 * kit's block rasterization): the panel, else 0 */
int64_t lower_swizzle_panel(const tilec_ir_stmt_t *s);
/* its explicit order (T.use_swizzle(panel, order=): 0 "row", 1 "column",
 * TileLang's rasterizations), -1 without one (the kit's own: panels of
 * block columns) */
int lower_swizzle_order(const tilec_ir_stmt_t *s);
/* Walks the kernel body with statement callback pre (w->user is c): 0, or
 * -1 with the failure recorded (a callback's, or too deep: out of memory). */
int lower_walk_stmts(lower_ctx_t *c, int (*pre)(tilec_ir_walk_t *w, tilec_ir_stmt_t *s));

/* Attributes on statements and buffers; 0 or -1 on OOM (recorded). */
int lower_sattr_int(lower_ctx_t *c, tilec_ir_stmt_t *s, const char *key, int64_t v);
int lower_sattr_str(lower_ctx_t *c, tilec_ir_stmt_t *s, const char *key, const char *v);
int lower_sattr_tuple(lower_ctx_t *c, tilec_ir_stmt_t *s, const char *key, const int64_t *v, int n);
int lower_battr_int(lower_ctx_t *c, tilec_ir_buffer_t *b, const char *key, int64_t v);
int lower_battr_str(lower_ctx_t *c, tilec_ir_buffer_t *b, const char *key, const char *v);
const tilec_ir_attr_t *lower_sattr(const tilec_ir_stmt_t *s, const char *key);
const tilec_ir_attr_t *lower_battr(const tilec_ir_buffer_t *b, const char *key);

/* The buffer accesses of a statement and everything nested in it.  Reads
 * include loads in every expression (indices, values, conditions). */
enum { LOWER_READ = 1, LOWER_WRITE = 2 };
typedef void (*lower_access_fn)(void *user, tilec_ir_stmt_t *s, tilec_ir_buffer_t *b, int how);
/* 0, or -1 when the nesting is too deep */
int lower_accesses(tilec_ir_stmt_t *s, lower_access_fn fn, void *user);
/* How (LOWER_READ | LOWER_WRITE) statement s (with its nest) uses b; 0: not at all. */
int lower_uses(tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b);
/* Same over a whole statement list. */
int lower_uses_list(tilec_ir_stmt_t *list, const tilec_ir_buffer_t *b);
/* s writes all of b without reading it first (b starts undefined) */
int lower_full_overwrite(tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b);
/* region covers the whole buffer */
int lower_region_whole(const tilec_ir_region_t *r);

/* The target's MMA entry named by a gemm's lower.mma attribute; NULL when
 * none (no attribute, "simt", or an unknown name). */
const tilec_target_mma_t *lower_gemm_mma(const lower_ctx_t *c, const tilec_ir_stmt_t *s);
/* Swizzle width in elements (128-, 64-, 32-byte rows: 64, 32, 16 for a
 * 16-bit, 128, 64, 32 for an 8-bit dtype) of the last two dimensions of an
 * on-chip buffer in the canonical swizzled layouts, 0 when it has none. */
int lower_swizzle_width(const tilec_ir_buffer_t *b);
/* Sets dense[id] for every buffer a reduce, cumsum or print of kernel k
 * touches: the printers walk those rows with plain strides, so such a
 * buffer is neither swizzled nor padded.  0, or -1 when out of memory. */
int lower_dense_uses(tilec_ir_kernel_t *k, int *dense);
/* Sets col[id] for every on-chip buffer of 2+ dimensions that a T.Parallel
 * nest run by the block's threads indexes with its innermost loop's
 * variable in the row dimension and not in the last one (lanes one row
 * apart: lower_bank.c).  0, or -1 when out of memory. */
int lower_column_uses(tilec_ir_kernel_t *k, int *col);

/* ---- gathered copies (lower_gather.c) ------------------------------------------- */

/* The body of a gather's innermost loop: one store of a global element into
 * shared memory (its value the load, or select(c, ..., 0) around it, up to
 * LOWER_GATHER_SEL deep), maybe under `if cond` with an else storing zero
 * to the same element. */
#define LOWER_GATHER_SEL 4
typedef struct lower_gather_form {
    const tilec_ir_stmt_t *store;
    const tilec_ir_stmt_t *zstore;                 /* NULL: no else branch */
    const tilec_ir_expr_t *cond;                   /* NULL: none */
    const tilec_ir_expr_t *sel[LOWER_GATHER_SEL]; /* the selects' conditions */
    int nsel;
    const tilec_ir_expr_t *load;
} lower_gather_form_t;
/* 1 when body has that form (*f filled), else 0; only the structure
 * (the SIMT kit's printer reads it too). */
int lower_gather_form(const tilec_ir_stmt_t *body, lower_gather_form_t *f);
/* The widest power of two W >= 2 of at most max_bytes whose groups of the
 * innermost loop of parallel nest `nest` move as one vector each (the
 * proof at the top of lower_gather.c); 0 when none.  f may be NULL. */
int lower_gather_width(const tilec_ir_stmt_t *nest, int64_t max_bytes, lower_gather_form_t *f);
/* 1 when expressions a and b are the same tree (variables by identity);
 * depth: the caller's nesting, 0 at the top. */
int lower_expr_same(const tilec_ir_expr_t *a, const tilec_ir_expr_t *b, int depth);
/* The innermost loop of a parallel nest (NULL: not one). */
tilec_ir_stmt_t *lower_gather_inner(tilec_ir_stmt_t *nest);
/* A copy of gather `nest` with k := at, storing into stage st of `ring`
 * (the buffer the nest wrote, now [S, ...]); its innermost loop marked
 * lower.async = 1.  NULL on failure (recorded). */
tilec_ir_stmt_t *lower_gather_issue(lower_ctx_t *c, const tilec_ir_stmt_t *nest, tilec_ir_buffer_t *ring,
                                    const tilec_ir_var_t *k, tilec_ir_expr_t *at, tilec_ir_expr_t *st);

#endif
