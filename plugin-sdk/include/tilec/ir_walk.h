/*
 * tilec/ir_walk.h — the generic walker and rewriter of the tile IR.
 *
 * One recursion over statements and expressions for every pass and
 * analysis (core passes, SDK lowering passes, plugins), instead of one
 * hand-written recursion per pass.  The walker visits, in program order:
 * each statement (pre callback), the expression slots it holds (in field
 * order: loop extent, condition, indices, values, region bases, gemm
 * leading indices, mbarrier index/parity), its nested statement lists (for
 * body; if then, else), then the statement again (post callback).
 * Expression slots are visited depth first: expr_pre before the children,
 * expr_post after them; expr_post may replace the node in its slot
 * (*slot = new), which is how folding passes rewrite.
 *
 * A statement callback may edit the list it stands in, for the statement
 * being visited only: tilec_ir_walk_insert_before, tilec_ir_walk_replace,
 * tilec_ir_walk_remove.  Statements inserted or put in place are not
 * visited; a statement replaced or removed in its pre callback is not
 * descended into.
 *
 * Callbacks return TILEC_WALK_CONTINUE, TILEC_WALK_SKIP (pre callbacks:
 * do not visit the children), TILEC_WALK_STOP (end the walk, result 1) or
 * a negative value (end the walk with that error).  Nesting deeper than
 * TILEC_IR_MAX_DEPTH is an error (-1).
 */
#ifndef TILEC_IR_WALK_H
#define TILEC_IR_WALK_H

#include "tilec/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TILEC_WALK_CONTINUE = 0, TILEC_WALK_SKIP = 1, TILEC_WALK_STOP = 2 };

typedef struct tilec_ir_walk tilec_ir_walk_t;

struct tilec_ir_walk {
    /* set by the caller (all optional) */
    int (*stmt_pre)(tilec_ir_walk_t *w, tilec_ir_stmt_t *s);
    int (*stmt_post)(tilec_ir_walk_t *w, tilec_ir_stmt_t *s);
    int (*expr_pre)(tilec_ir_walk_t *w, tilec_ir_expr_t *e);
    int (*expr_post)(tilec_ir_walk_t *w, tilec_ir_expr_t **slot);
    void *user;
    int layouts;                /* walk_kernel: also visit layout expressions */
    /* maintained by the walker; read-only for callbacks */
    tilec_ir_kernel_t *kernel;  /* NULL when walking a lone list/expression */
    tilec_ir_stmt_t *stmt;      /* statement whose slots are visited; NULL at kernel level */
    const tilec_ir_buffer_t *buffer; /* walk_kernel: buffer whose shape/layout is visited */
    int depth;                  /* statement nesting of stmt (body = 1) */
    /* private */
    tilec_ir_stmt_t **link_;    /* the pointer that holds stmt in its list */
    int edited_;                /* the statement was replaced or removed */
};

/* Walks the buffer shapes (and layouts when w->layouts), the grid, then
 * the body.  0 when done, 1 when a callback stopped it, < 0 on error. */
int tilec_ir_walk_kernel(tilec_ir_walk_t *w, tilec_ir_kernel_t *k);
/* Walks the statement list *list (its head may be replaced). */
int tilec_ir_walk_block(tilec_ir_walk_t *w, tilec_ir_stmt_t **list);
/* Walks one expression slot. */
int tilec_ir_walk_expr(tilec_ir_walk_t *w, tilec_ir_expr_t **slot);

/* Edits from a statement callback, on w->stmt.  list may be a chain of
 * several statements (linked by next; its last next is overwritten). */
void tilec_ir_walk_insert_before(tilec_ir_walk_t *w, tilec_ir_stmt_t *list);
void tilec_ir_walk_replace(tilec_ir_walk_t *w, tilec_ir_stmt_t *list); /* NULL removes */
void tilec_ir_walk_remove(tilec_ir_walk_t *w);

#ifdef __cplusplus
}
#endif
#endif
