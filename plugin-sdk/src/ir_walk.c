/*
 * plugin-sdk/src/ir_walk.c — the generic walker and rewriter of the tile IR
 * (tilec/ir_walk.h).
 *
 * Every pass and analysis that needs "each statement" or "each expression"
 * calls this instead of writing its own recursion.  The walk follows the
 * statement lists through the link pointers that hold them, so a statement
 * callback can splice its own list (insert before, replace, remove) without
 * the caller tracking predecessors.  Recursion is bounded by
 * TILEC_IR_MAX_DEPTH for statements and expressions alike.
 */
#include "tilec/ir_walk.h"

#include <stddef.h>

static int walk_expr(tilec_ir_walk_t *w, tilec_ir_expr_t **slot, int depth)
{
    tilec_ir_expr_t *e = *slot;
    int rc = TILEC_WALK_CONTINUE, i;
    if (!e) {
        return 0;
    }
    if (depth > TILEC_IR_MAX_DEPTH) {
        return -1;
    }
    if (w->expr_pre) {
        rc = w->expr_pre(w, e);
        if (rc < 0 || rc == TILEC_WALK_STOP) {
            return rc;
        }
    }
    if (rc != TILEC_WALK_SKIP) {
        switch (e->kind) {
        case TILEC_EX_LOAD:
            for (i = 0; e->u.load.buf && e->u.load.idx && i < e->u.load.buf->ndim; i++) {
                if ((rc = walk_expr(w, &e->u.load.idx[i], depth + 1)) != 0) {
                    return rc;
                }
            }
            break;
        case TILEC_EX_UNARY:
            rc = walk_expr(w, &e->u.un.a, depth + 1);
            break;
        case TILEC_EX_BINARY:
            if ((rc = walk_expr(w, &e->u.bin.a, depth + 1)) == 0) {
                rc = walk_expr(w, &e->u.bin.b, depth + 1);
            }
            break;
        case TILEC_EX_SELECT:
            if ((rc = walk_expr(w, &e->u.sel.cond, depth + 1)) == 0 &&
                (rc = walk_expr(w, &e->u.sel.a, depth + 1)) == 0) {
                rc = walk_expr(w, &e->u.sel.b, depth + 1);
            }
            break;
        case TILEC_EX_CAST:
            rc = walk_expr(w, &e->u.cast.a, depth + 1);
            break;
        default:
            rc = 0;
            break;
        }
        if (rc != 0) {
            return rc;
        }
    }
    if (w->expr_post) {
        rc = w->expr_post(w, slot);
        if (rc < 0 || rc == TILEC_WALK_STOP) {
            return rc;
        }
    }
    return 0;
}

int tilec_ir_walk_expr(tilec_ir_walk_t *w, tilec_ir_expr_t **slot)
{
    int rc = walk_expr(w, slot, 0);
    return rc == TILEC_WALK_STOP ? 1 : rc;
}

/* n slots of an array (which may be NULL). */
static int walk_exprs(tilec_ir_walk_t *w, tilec_ir_expr_t **v, int n)
{
    int i, rc;
    for (i = 0; v && i < n; i++) {
        if ((rc = walk_expr(w, &v[i], 0)) != 0) {
            return rc;
        }
    }
    return 0;
}

static int walk_region(tilec_ir_walk_t *w, tilec_ir_region_t *r)
{
    return r->buf ? walk_exprs(w, r->base, r->buf->ndim) : 0;
}

static int ndim_of(const tilec_ir_buffer_t *b) { return b ? b->ndim : 0; }

static int walk_slots(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    int rc = 0;
    switch (s->kind) {
    case TILEC_ST_FOR: return walk_expr(w, &s->u.loop.extent, 0);
    case TILEC_ST_IF: return walk_expr(w, &s->u.cond.cond, 0);
    case TILEC_ST_STORE:
        if ((rc = walk_exprs(w, s->u.store.idx, ndim_of(s->u.store.buf))) != 0) {
            return rc;
        }
        return walk_expr(w, &s->u.store.value, 0);
    case TILEC_ST_ASSIGN: return walk_expr(w, &s->u.assign.value, 0);
    case TILEC_ST_COPY:
    case TILEC_ST_COPY_ASYNC:
        if ((rc = walk_region(w, &s->u.copy.src)) != 0 || (rc = walk_region(w, &s->u.copy.dst)) != 0) {
            return rc;
        }
        return walk_expr(w, &s->u.copy.bar_idx, 0);
    case TILEC_ST_FILL:
        if ((rc = walk_region(w, &s->u.fill.dst)) != 0) {
            return rc;
        }
        return walk_expr(w, &s->u.fill.value, 0);
    case TILEC_ST_GEMM:
        if ((rc = walk_exprs(w, s->u.gemm.a_lead, ndim_of(s->u.gemm.a) - 2)) != 0) {
            return rc;
        }
        return walk_exprs(w, s->u.gemm.b_lead, ndim_of(s->u.gemm.b) - 2);
    case TILEC_ST_ATOMIC:
        if ((rc = walk_exprs(w, s->u.atomic.idx, ndim_of(s->u.atomic.buf))) != 0) {
            return rc;
        }
        return walk_expr(w, &s->u.atomic.value, 0);
    case TILEC_ST_PRINT: return walk_expr(w, &s->u.print.value, 0);
    case TILEC_ST_HINT: return walk_exprs(w, s->u.hint.args, s->u.hint.nargs);
    case TILEC_ST_MBAR_ARRIVE:
    case TILEC_ST_MBAR_WAIT:
        if ((rc = walk_expr(w, &s->u.mbar.idx, 0)) != 0 || (rc = walk_expr(w, &s->u.mbar.parity, 0)) != 0) {
            return rc;
        }
        return walk_expr(w, &s->u.mbar.tx, 0);
    default:
        return 0;
    }
}

static int walk_block(tilec_ir_walk_t *w, tilec_ir_stmt_t **list, int depth);

/* The statement in *link: pre, slots, children, post. */
static int walk_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t **link, int depth, tilec_ir_stmt_t ***next_link)
{
    tilec_ir_stmt_t *s = *link, *outer = w->stmt, **outer_link = w->link_;
    int outer_depth = w->depth, outer_edited = w->edited_, rc = 0, pre = TILEC_WALK_CONTINUE;
    w->stmt = s;
    w->link_ = link;
    w->depth = depth;
    w->edited_ = 0;
    if (w->stmt_pre) {
        pre = w->stmt_pre(w, s);
        if (pre < 0 || pre == TILEC_WALK_STOP) {
            rc = pre;
            goto out;
        }
    }
    if (!w->edited_ && pre != TILEC_WALK_SKIP) {
        if ((rc = walk_slots(w, s)) != 0) {
            goto out;
        }
        w->stmt = s;
        if (s->kind == TILEC_ST_FOR) {
            rc = walk_block(w, &s->u.loop.body, depth + 1);
        } else if (s->kind == TILEC_ST_IF) {
            if ((rc = walk_block(w, &s->u.cond.then, depth + 1)) == 0) {
                rc = walk_block(w, &s->u.cond.els, depth + 1);
            }
        }
        if (rc != 0) {
            goto out;
        }
        w->stmt = s;
        w->depth = depth;
    }
    if (!w->edited_ && w->stmt_post) {
        rc = w->stmt_post(w, s);
        if (rc < 0 || rc == TILEC_WALK_STOP) {
            goto out;
        }
        rc = 0;
    }
out:
    /* the statement now at w->link_ (s unless edited) is followed by the rest */
    if (w->edited_) {
        /* replaced: skip what was put in place; removed: the link holds the rest */
        tilec_ir_stmt_t **l = w->link_;
        while (*l && *l != s->next) {
            l = &(*l)->next;
        }
        *next_link = l;
    } else {
        *next_link = &s->next;
    }
    w->stmt = outer;
    w->link_ = outer_link;
    w->depth = outer_depth;
    w->edited_ = outer_edited;
    return rc;
}

static int walk_block(tilec_ir_walk_t *w, tilec_ir_stmt_t **list, int depth)
{
    tilec_ir_stmt_t **link = list;
    if (depth > TILEC_IR_MAX_DEPTH + 1) {
        return -1;
    }
    while (*link) {
        tilec_ir_stmt_t **next;
        int rc = walk_stmt(w, link, depth, &next);
        if (rc != 0) {
            return rc;
        }
        link = next;
    }
    return 0;
}

int tilec_ir_walk_block(tilec_ir_walk_t *w, tilec_ir_stmt_t **list)
{
    int rc = walk_block(w, list, w->depth > 0 ? w->depth : 1);
    return rc == TILEC_WALK_STOP ? 1 : rc;
}

int tilec_ir_walk_kernel(tilec_ir_walk_t *w, tilec_ir_kernel_t *k)
{
    int i, rc = 0;
    w->kernel = k;
    w->stmt = NULL;
    w->depth = 0;
    for (i = 0; i < k->nbufs && rc == 0; i++) {
        tilec_ir_buffer_t *b = k->bufs[i];
        if (!b) {
            continue;
        }
        w->buffer = b;
        rc = walk_exprs(w, b->shape, b->ndim);
        if (rc == 0 && w->layouts && b->layout) {
            tilec_ir_layout_t *l = b->layout;
            if ((rc = walk_expr(w, &l->thread, 0)) == 0 && (rc = walk_expr(w, &l->local, 0)) == 0) {
                rc = walk_expr(w, &l->addr, 0);
            }
        }
    }
    w->buffer = NULL;
    for (i = 0; i < k->ngrid && i < 3 && rc == 0; i++) {
        rc = walk_expr(w, &k->grid[i], 0);
    }
    if (rc == 0) {
        rc = walk_block(w, &k->body, 1);
    }
    return rc == TILEC_WALK_STOP ? 1 : rc;
}

/* ---- edits ------------------------------------------------------------ */

static tilec_ir_stmt_t *last_of(tilec_ir_stmt_t *list)
{
    while (list->next) {
        list = list->next;
    }
    return list;
}

void tilec_ir_walk_insert_before(tilec_ir_walk_t *w, tilec_ir_stmt_t *list)
{
    tilec_ir_stmt_t *s = w->stmt;
    if (!list || !w->link_ || !s || w->edited_) {
        return;
    }
    last_of(list)->next = s;
    *w->link_ = list;
    w->link_ = &last_of(list)->next;
}

void tilec_ir_walk_replace(tilec_ir_walk_t *w, tilec_ir_stmt_t *list)
{
    tilec_ir_stmt_t *s = w->stmt;
    if (!w->link_ || !s || w->edited_) {
        return;
    }
    if (list) {
        last_of(list)->next = s->next;
        *w->link_ = list;
    } else {
        *w->link_ = s->next;
    }
    w->edited_ = 1;
}

void tilec_ir_walk_remove(tilec_ir_walk_t *w) { tilec_ir_walk_replace(w, NULL); }
