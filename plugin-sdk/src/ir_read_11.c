/*
 * plugin-sdk/src/ir_read_11.c — the IR 1.1 part of the tile IR text reader
 * (docs/ir.md §9): attribute lists (namespaced keys, int/float/string/bool
 * and tuple values), buffer layouts (regs and smem, their placeholders and
 * maps), mbarrier declarations and references, gemm leading indices and
 * the 1.1 statements (copy_async, async_commit/wait, barrier, mbarrier
 * init/arrive/wait).  Each refuses to read under a 1.0 header.  The lexer
 * and the expression reader are ir_read.c's (ir_read_internal.h).
 */
#include "tilec/ir.h"
#include "ir_internal.h"
#include "ir_read_internal.h"

#include <math.h>
#include <string.h>

/* key = IDENT { "." IDENT }, into the arena (at most 127 characters). */
static char *read_key(reader_t *r)
{
    char d[40], buf[128];
    size_t n = 0;
    for (;;) {
        if (r->t.kind != T_IDENT) {
            FAIL(r, "expected an attribute key, found %s", irr_tok_desc(&r->t, d, sizeof d));
            return NULL;
        }
        if (n + r->t.n + 1 >= sizeof buf) {
            FAIL(r, "attribute key too long");
            return NULL;
        }
        memcpy(buf + n, r->t.s, r->t.n);
        n += r->t.n;
        irr_next_tok(r);
        if (r->failed || !irr_is_punct(r, ".")) {
            break;
        }
        buf[n++] = '.';
        irr_next_tok(r);
    }
    if (r->failed) {
        return NULL;
    }
    {
        char *k = tilec_arena_strndup(r->a, buf, n);
        if (!k) {
            irr_oom(r);
        }
        return k;
    }
}

static int read_attr_value(reader_t *r, tilec_ir_attr_t *v)
{
    char d[40];
    if (r->t.kind == T_STRING) {
        v->kind = TILEC_ATTR_STRING;
        v->s = irr_read_string(r);
        return v->s ? 0 : -1;
    }
    if (irr_is_punct(r, "(")) {
        int cap = 0;
        irr_next_tok(r);
        v->kind = TILEC_ATTR_TUPLE;
        while (!r->failed && !irr_is_punct(r, ")")) {
            int64_t x;
            if (v->n && irr_expect_punct(r, ",") < 0) {
                return -1;
            }
            if (v->n >= 64) {
                FAIL(r, "tuple too long (limit 64)");
                return -1;
            }
            if (irr_read_int(r, INT64_MIN, INT64_MAX, &x, "tuple element") < 0) {
                return -1;
            }
            if (v->n == cap) {
                int64_t *nt;
                cap = cap ? cap * 2 : 4;
                nt = tilec_arena_alloc(r->a, (size_t)cap * sizeof *nt);
                if (!nt) {
                    irr_oom(r);
                    return -1;
                }
                if (v->n) {
                    memcpy(nt, v->tuple, (size_t)v->n * sizeof *nt);
                }
                v->tuple = nt;
            }
            v->tuple[v->n++] = x;
        }
        if (!v->tuple) {
            v->tuple = tilec_arena_alloc(r->a, sizeof *v->tuple);
            if (!v->tuple) {
                irr_oom(r);
                return -1;
            }
        }
        return irr_expect_punct(r, ")");
    }
    {
        int neg = 0;
        if (irr_is_punct(r, "-")) {
            neg = 1;
            irr_next_tok(r);
            if (r->failed) {
                return -1;
            }
        }
        if (r->t.kind == T_INT) {
            uint64_t u = r->t.u;
            if (!neg && u > (uint64_t)INT64_MAX) {
                FAIL(r, "integer literal out of range");
                return -1;
            }
            v->kind = TILEC_ATTR_INT;
            v->i = !neg ? (int64_t)u : u == (UINT64_C(1) << 63) ? INT64_MIN : -(int64_t)u;
        } else if (r->t.kind == T_FLOAT || irr_is_word(r, "inf") || (irr_is_word(r, "nan") && !neg)) {
            v->kind = TILEC_ATTR_FLOAT;
            v->f = r->t.kind == T_FLOAT ? r->t.f : irr_is_word(r, "inf") ? INFINITY : NAN;
            if (neg) {
                v->f = -v->f;
            }
        } else {
            FAIL(r, "expected an attribute value (int, float, string or tuple), found %s",
                 irr_tok_desc(&r->t, d, sizeof d));
            return -1;
        }
        irr_next_tok(r);
        return r->failed ? -1 : 0;
    }
}

/* key = value { "," key = value } up to (not including) close. */
static int read_attr_list(reader_t *r, const char *close, int *n, tilec_ir_attr_t **list, int need_ns)
{
    int cap = 0;
    *n = 0;
    *list = NULL;
    while (!r->failed && !irr_is_punct(r, close)) {
        tilec_ir_attr_t v;
        int line = r->t.line, col = r->t.col, i;
        memset(&v, 0, sizeof v);
        if (*n && irr_expect_punct(r, ",") < 0) {
            return -1;
        }
        if (*n >= 256) {
            FAIL(r, "too many attributes (limit 256)");
            return -1;
        }
        line = r->t.line;
        col = r->t.col;
        if (!(v.key = read_key(r)) || irr_expect_punct(r, "=") < 0 || read_attr_value(r, &v) < 0) {
            return -1;
        }
        if (need_ns && !strchr(v.key, '.')) {
            irr_fail_at(r, line, col, "attribute key '%s' has no namespace (write ns.%s)", v.key, v.key);
            return -1;
        }
        for (i = 0; i < *n; i++) {
            if (strcmp((*list)[i].key, v.key) == 0) {
                irr_fail_at(r, line, col, "duplicate attribute '%s'", v.key);
                return -1;
            }
        }
        if (*n == cap) {
            tilec_ir_attr_t *nl;
            cap = cap ? cap * 2 : 4;
            nl = tilec_arena_alloc(r->a, (size_t)cap * sizeof *nl);
            if (!nl) {
                irr_oom(r);
                return -1;
            }
            if (*n) {
                memcpy(nl, *list, (size_t)*n * sizeof *nl);
            }
            *list = nl;
        }
        (*list)[(*n)++] = v;
    }
    return r->failed ? -1 : 0;
}

/* [ "attrs" "{" list "}" ] */
int irr_read_attrs_opt(reader_t *r, int *n, tilec_ir_attr_t **list)
{
    if (!irr_is_word(r, "attrs")) {
        return 0;
    }
    if (irr_need_11(r, "'attrs'") < 0) {
        return -1;
    }
    irr_next_tok(r);
    if (irr_expect_punct(r, "{") < 0 || read_attr_list(r, "}", n, list, 1) < 0) {
        return -1;
    }
    return irr_expect_punct(r, "}");
}

static int lookup_layout(const char *s) { return tilec_irx_layout_kind_from_name(s); }

/* NAME '=' expr, with the layout's placeholders in scope. */
static tilec_ir_expr_t *read_layout_expr(reader_t *r, const char *name)
{
    if (irr_expect_word(r, name) < 0 || irr_expect_punct(r, "=") < 0) {
        return NULL;
    }
    return irr_read_expr(r, 1);
}

/* "layout" KIND STRING "(" params ")" fields, after a buffer's shape. */
int irr_read_layout(reader_t *r, tilec_ir_buffer_t *b)
{
    tilec_ir_layout_t *l;
    const char *name;
    int kind, rc = -1, off;
    int64_t v;
    if (irr_need_11(r, "'layout'") < 0) {
        return -1;
    }
    irr_next_tok(r);
    if (irr_read_enum(r, lookup_layout, "layout kind", &kind) < 0 || !(name = irr_read_string(r))) {
        return -1;
    }
    l = tilec_ir_layout_new(r->a, (tilec_layout_kind_t)kind, name, b->ndim);
    if (!l) {
        irr_oom(r);
        return -1;
    }
    if (irr_expect_punct(r, "(") < 0 || read_attr_list(r, ")", &l->nparams, &l->params, 0) < 0 ||
        irr_expect_punct(r, ")") < 0) {
        return -1;
    }
    r->lay = l;
    if (kind == TILEC_LAYOUT_SMEM) {
        if (irr_read_attr(r, "offset", &off) < 0) {
            goto out;
        }
        l->offset = off;
        if (irr_expect_word(r, "size") < 0 || irr_expect_punct(r, "=") < 0 ||
            irr_read_int(r, 0, INT32_MAX, &v, "size") < 0 || !(l->addr = read_layout_expr(r, "addr"))) {
            goto out;
        }
        l->size = v;
    } else if (irr_read_attr(r, "threads", &l->threads) < 0 || irr_read_attr(r, "nlocal", &l->nlocal) < 0 ||
               irr_read_attr(r, "replicate", &l->replicate) < 0 || !(l->thread = read_layout_expr(r, "thread")) ||
               !(l->local = read_layout_expr(r, "local"))) {
        goto out;
    }
    b->layout = l;
    rc = 0;
out:
    r->lay = NULL;
    return r->failed ? -1 : rc;
}

/* "mbarrier" NAME "[" INT "]" "arrive" "=" INT */
int irr_read_mbarrier(reader_t *r)
{
    int line = r->t.line, col = r->t.col, size, arrive, rc;
    char *name;
    tilec_ir_mbarrier_t *b;
    if (irr_need_11(r, "'mbarrier'") < 0) {
        return -1;
    }
    irr_next_tok(r);
    if (!(name = irr_take_ident(r, "mbarrier name")) || irr_expect_punct(r, "[") < 0 ||
        irr_read_int32(r, &size, "mbarrier size") < 0 || irr_expect_punct(r, "]") < 0 ||
        irr_read_attr(r, "arrive", &arrive) < 0) {
        return -1;
    }
    b = tilec_ir_mbarrier_add(r->a, r->k, name, size, arrive);
    if (!b) {
        irr_oom(r);
        return -1;
    }
    rc = tilec_irx_map_put(&r->mbars, b->name, b->id);
    if (rc != 0) {
        if (rc > 0) {
            irr_fail_at(r, line, col, "duplicate mbarrier '%s'", name);
        } else {
            irr_oom(r);
        }
        return -1;
    }
    return 0;
}

static tilec_ir_mbarrier_t *read_mbar_ref(reader_t *r)
{
    int i = irr_read_ref(r, &r->mbars, "mbarrier");
    return i < 0 ? NULL : r->k->mbars[i];
}

/* "[" e, ... "]" leading indices of a gemm operand (1.1), when present. */
int irr_read_gemm_lead(reader_t *r, const tilec_ir_buffer_t *b, tilec_ir_expr_t ***lead)
{
    if (!irr_is_punct(r, "[")) {
        return 0;
    }
    if (irr_need_11(r, "a gemm operand's leading index") < 0) {
        return -1;
    }
    if (b->ndim <= 2) {
        FAIL(r, "gemm operand '%s' has rank %d and takes no leading indices", b->name, b->ndim);
        return -1;
    }
    *lead = irr_read_index_list(r, b->ndim - 2, b->name, 0);
    return *lead ? 0 : -1;
}

/* The 1.1 statements. */
tilec_ir_stmt_t *irr_read_stmt_11(reader_t *r, const char *kw)
{
    tilec_ir_stmt_t *s;
    int k = tilec_irx_stmt_kind_from_name(kw);
    if (k < TILEC_ST_COPY_ASYNC) {
        FAIL(r, "unknown statement '%s'", kw);
        return NULL;
    }
    if (irr_need_11(r, tilec_stmt_kind_name((tilec_stmt_kind_t)k)) < 0) {
        return NULL;
    }
    irr_next_tok(r);
    if (!(s = irr_new_stmt(r, (tilec_stmt_kind_t)k))) {
        return NULL;
    }
    switch (k) {
    case TILEC_ST_COPY_ASYNC:
        /* DST "<" "-" SRC: two tokens, so "(a<-1)" still lexes as less-than */
        if (irr_read_region(r, &s->u.copy.dst) < 0 || irr_expect_punct(r, "<") < 0 || irr_expect_punct(r, "-") < 0 ||
            irr_read_region(r, &s->u.copy.src) < 0) {
            return NULL;
        }
        if (irr_is_word(r, "mbarrier") &&
            (irr_expect_word(r, "mbarrier") < 0 || !(s->u.copy.bar = read_mbar_ref(r)) ||
             irr_expect_punct(r, "[") < 0 || !(s->u.copy.bar_idx = irr_read_expr(r, 1)) ||
             irr_expect_punct(r, "]") < 0)) {
            return NULL;
        }
        break;
    case TILEC_ST_ASYNC_WAIT:
        if (irr_read_int32(r, &s->u.wait.n, "async_wait count") < 0) {
            return NULL;
        }
        break;
    case TILEC_ST_MBAR_INIT:
        if (!(s->u.mbar.bar = read_mbar_ref(r))) {
            return NULL;
        }
        break;
    case TILEC_ST_MBAR_ARRIVE:
    case TILEC_ST_MBAR_WAIT:
        if (!(s->u.mbar.bar = read_mbar_ref(r)) || irr_expect_punct(r, "[") < 0 ||
            !(s->u.mbar.idx = irr_read_expr(r, 1)) ||
            irr_expect_punct(r, "]") < 0) {
            return NULL;
        }
        if (k == TILEC_ST_MBAR_WAIT && (irr_expect_punct(r, ",") < 0 || !(s->u.mbar.parity = irr_read_expr(r, 1)))) {
            return NULL;
        }
        if (k == TILEC_ST_MBAR_ARRIVE && irr_is_word(r, "expect_tx") &&
            (irr_expect_word(r, "expect_tx") < 0 || !(s->u.mbar.tx = irr_read_expr(r, 1)))) {
            return NULL;
        }
        break;
    default: /* async_commit, barrier: no operands */
        break;
    }
    return r->failed ? NULL : s;
}
