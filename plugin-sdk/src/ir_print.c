/*
 * plugin-sdk/src/ir_print.c — writes a tile IR module in its text form
 * ("tileir 1.x", grammar in docs/ir.md).  The header says 1.0 unless the
 * module uses a 1.1 construct (tilec_ir_module_minor_needed), so modules
 * without lowering decisions still read in 1.0 plugins.
 *
 * The text form is the serialized form that crosses the plugin ABI, so the
 * printer is exact: floats are printed with the fewest digits that read back
 * to the same double, every dtype that the reader could not derive is
 * written as a ":dtype" annotation, and every field of every node appears.
 * Names are printed as identifiers; a name that is not a valid identifier,
 * is a reserved word or repeats an earlier name of the same table is
 * rewritten deterministically (so print(read(print(m))) == print(m) even for
 * IR that breaks the uniqueness contract).  Numbers are formatted in the "C"
 * locale whatever the host application set.
 */
#include "tilec/ir.h"
#include "ir_internal.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct out {
    char *buf;
    size_t len, cap;
    int oom;
} out_t;

typedef struct printer {
    out_t o;
    const tilec_ir_kernel_t *k;
    int nvars, nbufs, nmbars; /* table sizes, 0 when a table is missing */
    char **vnames;    /* [nvars] malloc'd display names */
    char **bnames;    /* [nbufs] */
    char **mnames;    /* [nmbars] */
} printer_t;

static void put(out_t *o, const char *s, size_t n)
{
    if (o->oom) {
        return;
    }
    if (o->len + n + 1 > o->cap) {
        size_t ncap = o->cap ? o->cap : 1024;
        char *nb;
        while (ncap < o->len + n + 1) {
            if (ncap > SIZE_MAX / 2) {
                o->oom = 1;
                return;
            }
            ncap *= 2;
        }
        nb = realloc(o->buf, ncap);
        if (!nb) {
            o->oom = 1;
            return;
        }
        o->buf = nb;
        o->cap = ncap;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

static void puts_(out_t *o, const char *s) { put(o, s, strlen(s)); }

static void putf(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(out_t *o, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        o->oom = 1; /* only short numeric formats go through here */
        return;
    }
    put(o, tmp, (size_t)n);
}

static void indent(out_t *o, int depth)
{
    int i;
    for (i = 0; i < depth; i++) {
        put(o, "  ", 2);
    }
}

/* ---- names ------------------------------------------------------------ */

static const char *const reserved[] = {"inf", "nan", "true", "false", "null", NULL};

static int is_reserved(const char *s)
{
    int i;
    for (i = 0; reserved[i]; i++) {
        if (strcmp(s, reserved[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

static int id_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int id_char(int c) { return id_start(c) || (c >= '0' && c <= '9'); }

/* A valid identifier made from s (malloc'd). */
static char *sanitize(const char *s)
{
    size_t n = s ? strlen(s) : 0, i, j = 0;
    char *r = malloc(n + 3);
    if (!r) {
        return NULL;
    }
    if (n == 0 || !id_start((unsigned char)s[0])) {
        r[j++] = '_';
    }
    for (i = 0; i < n; i++) {
        r[j++] = id_char((unsigned char)s[i]) ? s[i] : '_';
    }
    r[j] = '\0';
    if (is_reserved(r)) {
        r[j++] = '_';
        r[j] = '\0';
    }
    return r;
}

/* Display names for a table: sanitized, then made unique; a repeat of an
 * earlier name becomes NAME_ID (and more '_' until unique). */
static char **make_names(const char *const *names, int n)
{
    tilec_irx_map_t used;
    char **r;
    int i;
    if (n <= 0) {
        return calloc(1, sizeof(char *));
    }
    r = calloc((size_t)n, sizeof *r);
    if (!r) {
        return NULL;
    }
    tilec_irx_map_init(&used);
    for (i = 0; i < n; i++) {
        char *s = sanitize(names[i]);
        int rc;
        if (!s) {
            goto fail;
        }
        rc = tilec_irx_map_put(&used, s, i);
        if (rc == 1) {
            size_t len = strlen(s);
            char *t = malloc(len + 16);
            if (!t) {
                free(s);
                goto fail;
            }
            snprintf(t, len + 16, "%s_%d", s, i);
            free(s);
            s = t;
            for (;;) {
                char *u;
                rc = tilec_irx_map_put(&used, s, i);
                if (rc != 1) {
                    break;
                }
                len = strlen(s);
                u = realloc(s, len + 2);
                if (!u) {
                    free(s);
                    goto fail;
                }
                s = u;
                s[len] = '_';
                s[len + 1] = '\0';
            }
        }
        if (rc < 0) {
            free(s);
            goto fail;
        }
        r[i] = s;
    }
    tilec_irx_map_free(&used);
    return r;
fail:
    tilec_irx_map_free(&used);
    for (i = 0; i < n; i++) {
        free(r[i]);
    }
    free(r);
    return NULL;
}

static void free_names(char **names, int n)
{
    int i;
    if (!names) {
        return;
    }
    for (i = 0; i < n; i++) {
        free(names[i]);
    }
    free(names);
}

static void put_var(printer_t *p, const tilec_ir_var_t *v)
{
    int i;
    if (!v) {
        puts_(&p->o, "?");
        return;
    }
    if (v->kind == TILEC_VAR_LAYOUT) {
        /* layout placeholders are named by the layout: _i<d>, _r */
        if (v->id >= 0 && v->id < TILEC_IR_MAX_DIMS && v->name && v->name[0] == '_' && v->name[1] == 'i') {
            putf(&p->o, "_i%d", v->id);
        } else {
            puts_(&p->o, "_r");
        }
        return;
    }
    if (v->id >= 0 && v->id < p->nvars && p->k->vars[v->id] == v) {
        puts_(&p->o, p->vnames[v->id]);
        return;
    }
    for (i = 0; i < p->nvars; i++) {
        if (p->k->vars[i] == v) {
            puts_(&p->o, p->vnames[i]);
            return;
        }
    }
    /* not in the table: the reader will reject it */
    puts_(&p->o, "?");
    puts_(&p->o, v->name ? v->name : "");
}

static void put_buf(printer_t *p, const tilec_ir_buffer_t *b)
{
    int i;
    if (!b) {
        puts_(&p->o, "?");
        return;
    }
    if (b->id >= 0 && b->id < p->nbufs && p->k->bufs[b->id] == b) {
        puts_(&p->o, p->bnames[b->id]);
        return;
    }
    for (i = 0; i < p->nbufs; i++) {
        if (p->k->bufs[i] == b) {
            puts_(&p->o, p->bnames[i]);
            return;
        }
    }
    puts_(&p->o, "?");
    puts_(&p->o, b->name ? b->name : "");
}

static void put_string(out_t *o, const char *s)
{
    if (!s) {
        puts_(o, "null");
        return;
    }
    put(o, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            put(o, esc, 2);
        } else if (c == '\n') {
            put(o, "\\n", 2);
        } else if (c == '\t') {
            put(o, "\\t", 2);
        } else if (c < 0x20 || c >= 0x7f) {
            putf(o, "\\x%02x", c);
        } else {
            put(o, (const char *)&c, 1);
        }
    }
    put(o, "\"", 1);
}

/* ---- expressions ------------------------------------------------------ */

/* Shortest "%.Ng" that reads back to the same double; always contains a
 * '.' or an exponent so the reader sees a float. */
static void put_double(out_t *o, double d)
{
    char tmp[64];
    int prec;
    if (isnan(d)) {
        puts_(o, "nan");
        return;
    }
    if (isinf(d)) {
        puts_(o, d < 0 ? "-inf" : "inf");
        return;
    }
    for (prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, d);
        if (strtod(tmp, NULL) == d) {
            break;
        }
    }
    if (!strpbrk(tmp, ".eE")) {
        size_t n = strlen(tmp);
        memcpy(tmp + n, ".0", 3);
    }
    puts_(o, tmp);
}

static int binop_is_bool(tilec_binop_t op)
{
    return (op >= TILEC_BIN_EQ && op <= TILEC_BIN_GE) || op == TILEC_BIN_AND || op == TILEC_BIN_OR;
}

static const char *const binop_infix[TILEC_BIN_COUNT] = {
    "+", "-", "*", "/", "//", "%", "**", NULL, NULL, "==", "!=", "<", "<=", ">", ">=", "&&", "||",
    "&", "|", "^", "<<", ">>",
};

static void put_expr(printer_t *p, const tilec_ir_expr_t *e, int depth);

static void put_expr_list(printer_t *p, tilec_ir_expr_t *const *v, int n, int depth)
{
    int i;
    for (i = 0; i < n; i++) {
        if (i) {
            puts_(&p->o, ", ");
        }
        put_expr(p, v ? v[i] : NULL, depth);
    }
}

/* The dtype the reader gives a node when no annotation follows it. */
static int derived_dtype(const tilec_ir_expr_t *e)
{
    switch (e->kind) {
    case TILEC_EX_INT: return TILEC_INT32;
    case TILEC_EX_FLOAT: return TILEC_FLOAT32;
    case TILEC_EX_VAR: return e->u.var ? (int)e->u.var->dtype : -1;
    case TILEC_EX_LOAD: return e->u.load.buf ? (int)e->u.load.buf->dtype : -1;
    case TILEC_EX_UNARY:
        if (e->u.un.op == TILEC_UN_NOT) {
            return TILEC_BOOL;
        }
        return e->u.un.a ? (int)e->u.un.a->dtype : -1;
    case TILEC_EX_BINARY:
        if (binop_is_bool(e->u.bin.op)) {
            return TILEC_BOOL;
        }
        return e->u.bin.a ? (int)e->u.bin.a->dtype : -1;
    case TILEC_EX_SELECT: return e->u.sel.a ? (int)e->u.sel.a->dtype : -1;
    case TILEC_EX_CAST: return e->dtype;
    }
    return -1;
}

static void put_expr(printer_t *p, const tilec_ir_expr_t *e, int depth)
{
    out_t *o = &p->o;
    if (!e || depth > TILEC_IR_MAX_DEPTH) {
        puts_(o, "?");
        return;
    }
    switch (e->kind) {
    case TILEC_EX_INT:
        if (e->dtype == TILEC_BOOL && (e->u.i == 0 || e->u.i == 1)) {
            puts_(o, e->u.i ? "true" : "false");
            return; /* bool is implied */
        }
        putf(o, "%lld", (long long)e->u.i);
        break;
    case TILEC_EX_FLOAT:
        put_double(o, e->u.f);
        break;
    case TILEC_EX_VAR:
        put_var(p, e->u.var);
        break;
    case TILEC_EX_LOAD:
        put_buf(p, e->u.load.buf);
        puts_(o, "[");
        if (e->u.load.buf) {
            put_expr_list(p, e->u.load.idx, e->u.load.buf->ndim, depth + 1);
        }
        puts_(o, "]");
        break;
    case TILEC_EX_UNARY:
        puts_(o, tilec_unop_name(e->u.un.op));
        puts_(o, "(");
        put_expr(p, e->u.un.a, depth + 1);
        puts_(o, ")");
        break;
    case TILEC_EX_BINARY: {
        tilec_binop_t op = e->u.bin.op;
        const char *inf = (unsigned)op < TILEC_BIN_COUNT ? binop_infix[op] : "?";
        if (inf) {
            puts_(o, "(");
            put_expr(p, e->u.bin.a, depth + 1);
            puts_(o, " ");
            puts_(o, inf);
            puts_(o, " ");
            put_expr(p, e->u.bin.b, depth + 1);
            puts_(o, ")");
        } else {
            puts_(o, tilec_binop_name(op));
            puts_(o, "(");
            put_expr(p, e->u.bin.a, depth + 1);
            puts_(o, ", ");
            put_expr(p, e->u.bin.b, depth + 1);
            puts_(o, ")");
        }
        break;
    }
    case TILEC_EX_SELECT:
        puts_(o, "select(");
        put_expr(p, e->u.sel.cond, depth + 1);
        puts_(o, ", ");
        put_expr(p, e->u.sel.a, depth + 1);
        puts_(o, ", ");
        put_expr(p, e->u.sel.b, depth + 1);
        puts_(o, ")");
        break;
    case TILEC_EX_CAST:
        puts_(o, tilec_dtype_name(e->dtype));
        puts_(o, "(");
        put_expr(p, e->u.cast.a, depth + 1);
        puts_(o, ")");
        return; /* the dtype is explicit */
    default:
        puts_(o, "?");
        return;
    }
    if (derived_dtype(e) != (int)e->dtype) {
        puts_(o, ":");
        puts_(o, tilec_dtype_name(e->dtype));
    }
}

/* ---- attributes and layouts (1.1) ------------------------------------ */

/* A key as the reader reads it: IDENT { "." IDENT }, invalid characters
 * replaced by '_' (an empty key or segment becomes "_"). */
static void put_key(out_t *o, const char *k)
{
    const char *seg = k ? k : "";
    for (;;) {
        const char *end = strchr(seg, '.');
        size_t n = end ? (size_t)(end - seg) : strlen(seg), i;
        if (n == 0 || !id_start((unsigned char)seg[0])) {
            put(o, "_", 1);
        }
        for (i = 0; i < n; i++) {
            put(o, id_char((unsigned char)seg[i]) ? &seg[i] : "_", 1);
        }
        if (!end) {
            return;
        }
        put(o, ".", 1);
        seg = end + 1;
    }
}

static void put_attr_list(out_t *o, int n, const tilec_ir_attr_t *v)
{
    int i, j;
    for (i = 0; v && i < n; i++) {
        if (i) {
            puts_(o, ", ");
        }
        put_key(o, v[i].key);
        puts_(o, " = ");
        switch (v[i].kind) {
        case TILEC_ATTR_INT: putf(o, "%lld", (long long)v[i].i); break;
        case TILEC_ATTR_FLOAT: put_double(o, v[i].f); break;
        case TILEC_ATTR_STRING: put_string(o, v[i].s ? v[i].s : ""); break;
        case TILEC_ATTR_TUPLE:
            puts_(o, "(");
            for (j = 0; v[i].tuple && j < v[i].n; j++) {
                putf(o, j ? ", %lld" : "%lld", (long long)v[i].tuple[j]);
            }
            puts_(o, ")");
            break;
        default: puts_(o, "?"); break;
        }
    }
}

/* " attrs {k = v, ...}" when the list is not empty. */
static void put_attrs(out_t *o, int n, const tilec_ir_attr_t *v)
{
    if (n <= 0 || !v) {
        return;
    }
    puts_(o, " attrs {");
    put_attr_list(o, n, v);
    puts_(o, "}");
}

static void put_layout(printer_t *p, const tilec_ir_layout_t *l)
{
    out_t *o = &p->o;
    puts_(o, " layout ");
    puts_(o, tilec_layout_kind_name(l->kind));
    puts_(o, " ");
    put_string(o, l->name ? l->name : "");
    puts_(o, "(");
    put_attr_list(o, l->nparams, l->params);
    puts_(o, ")");
    if (l->kind == TILEC_LAYOUT_SMEM) {
        putf(o, " offset=%lld", (long long)l->offset);
        putf(o, " size=%lld", (long long)l->size);
        puts_(o, " addr=");
        put_expr(p, l->addr, 1);
    } else {
        putf(o, " threads=%d nlocal=%d replicate=%d thread=", l->threads, l->nlocal, l->replicate);
        put_expr(p, l->thread, 1);
        puts_(o, " local=");
        put_expr(p, l->local, 1);
    }
}

static void put_mbar(printer_t *p, const tilec_ir_mbarrier_t *b)
{
    int i;
    if (b && b->id >= 0 && b->id < p->nmbars && p->k->mbars[b->id] == b) {
        puts_(&p->o, p->mnames[b->id]);
        return;
    }
    for (i = 0; b && i < p->nmbars; i++) {
        if (p->k->mbars[i] == b) {
            puts_(&p->o, p->mnames[i]);
            return;
        }
    }
    puts_(&p->o, "?");
}

static void put_region(printer_t *p, const tilec_ir_region_t *r)
{
    int i;
    put_buf(p, r->buf);
    puts_(&p->o, "[");
    if (r->buf) {
        for (i = 0; i < r->buf->ndim; i++) {
            if (i) {
                puts_(&p->o, ", ");
            }
            put_expr(p, r->base ? r->base[i] : NULL, 1);
            if (!r->extent) {
                puts_(&p->o, " +: ?");
            } else if (r->extent[i] != 1) {
                putf(&p->o, " +: %lld", (long long)r->extent[i]);
            }
        }
    }
    puts_(&p->o, "]");
}

/* ---- statements ------------------------------------------------------- */

static void put_block(printer_t *p, const tilec_ir_stmt_t *s, int depth);

/* "[e, ...]" for the leading (stage) indices of a gemm operand of rank > 2. */
static void put_lead(printer_t *p, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *lead)
{
    if (!b || (b->ndim <= 2 && !lead)) {
        return;
    }
    puts_(&p->o, "[");
    put_expr_list(p, lead, b->ndim > 2 ? b->ndim - 2 : 0, 1);
    puts_(&p->o, "]");
}

static void put_stmt(printer_t *p, const tilec_ir_stmt_t *s, int depth)
{
    out_t *o = &p->o;
    indent(o, depth);
    switch (s->kind) {
    case TILEC_ST_FOR:
        puts_(o, "for ");
        put_var(p, s->u.loop.var);
        puts_(o, " in ");
        puts_(o, tilec_loop_kind_name(s->u.loop.kind));
        puts_(o, "(");
        put_expr(p, s->u.loop.extent, 1);
        if (s->u.loop.kind == TILEC_LOOP_PIPELINED) {
            putf(o, ", stages=%d", s->u.loop.num_stages);
        }
        puts_(o, ")");
        put_attrs(o, s->nattrs, s->attrs);
        puts_(o, " {\n");
        put_block(p, s->u.loop.body, depth + 1);
        indent(o, depth);
        puts_(o, "}\n");
        return;
    case TILEC_ST_IF:
        puts_(o, "if ");
        put_expr(p, s->u.cond.cond, 1);
        put_attrs(o, s->nattrs, s->attrs);
        puts_(o, " {\n");
        put_block(p, s->u.cond.then, depth + 1);
        indent(o, depth);
        if (s->u.cond.els) {
            puts_(o, "} else {\n");
            put_block(p, s->u.cond.els, depth + 1);
            indent(o, depth);
        }
        puts_(o, "}\n");
        return;
    case TILEC_ST_STORE:
        puts_(o, "store ");
        put_buf(p, s->u.store.buf);
        puts_(o, "[");
        if (s->u.store.buf) {
            put_expr_list(p, s->u.store.idx, s->u.store.buf->ndim, 1);
        }
        puts_(o, "] = ");
        put_expr(p, s->u.store.value, 1);
        break;
    case TILEC_ST_ASSIGN:
        puts_(o, "assign ");
        put_var(p, s->u.assign.var);
        puts_(o, " = ");
        put_expr(p, s->u.assign.value, 1);
        break;
    case TILEC_ST_COPY:
        puts_(o, "copy ");
        put_region(p, &s->u.copy.src);
        puts_(o, " -> ");
        put_region(p, &s->u.copy.dst);
        break;
    case TILEC_ST_FILL:
        puts_(o, "fill ");
        put_region(p, &s->u.fill.dst);
        puts_(o, " = ");
        put_expr(p, s->u.fill.value, 1);
        break;
    case TILEC_ST_GEMM:
        puts_(o, "gemm ");
        put_buf(p, s->u.gemm.a);
        put_lead(p, s->u.gemm.a, s->u.gemm.a_lead);
        puts_(o, ", ");
        put_buf(p, s->u.gemm.b);
        put_lead(p, s->u.gemm.b, s->u.gemm.b_lead);
        puts_(o, ", ");
        put_buf(p, s->u.gemm.c);
        putf(o, " trans_a=%d trans_b=%d clear_accum=%d policy=", s->u.gemm.trans_a, s->u.gemm.trans_b,
             s->u.gemm.clear_accum);
        puts_(o, tilec_policy_name(s->u.gemm.policy));
        break;
    case TILEC_ST_REDUCE:
        puts_(o, "reduce ");
        puts_(o, tilec_reduce_op_name(s->u.reduce.op));
        puts_(o, " ");
        put_buf(p, s->u.reduce.src);
        puts_(o, " -> ");
        put_buf(p, s->u.reduce.dst);
        putf(o, " dim=%d clear=%d", s->u.reduce.dim, s->u.reduce.clear);
        break;
    case TILEC_ST_CUMSUM:
        puts_(o, "cumsum ");
        put_buf(p, s->u.cumsum.src);
        puts_(o, " -> ");
        put_buf(p, s->u.cumsum.dst);
        putf(o, " dim=%d reverse=%d", s->u.cumsum.dim, s->u.cumsum.reverse);
        break;
    case TILEC_ST_ATOMIC:
        puts_(o, "atomic ");
        puts_(o, tilec_atomic_op_name(s->u.atomic.op));
        puts_(o, " ");
        put_buf(p, s->u.atomic.buf);
        puts_(o, "[");
        if (s->u.atomic.buf) {
            put_expr_list(p, s->u.atomic.idx, s->u.atomic.buf->ndim, 1);
        }
        puts_(o, "], ");
        put_expr(p, s->u.atomic.value, 1);
        break;
    case TILEC_ST_SYNC:
        puts_(o, "sync");
        break;
    case TILEC_ST_PRINT:
        puts_(o, "print ");
        put_string(o, s->u.print.msg);
        if (s->u.print.value) {
            puts_(o, " value ");
            put_expr(p, s->u.print.value, 1);
        }
        if (s->u.print.buf) {
            puts_(o, " buffer ");
            put_buf(p, s->u.print.buf);
        }
        break;
    case TILEC_ST_HINT:
        puts_(o, "hint ");
        put_string(o, s->u.hint.name);
        puts_(o, " (");
        put_expr_list(p, s->u.hint.args, s->u.hint.nargs, 1);
        puts_(o, ")");
        if (s->u.hint.buf) {
            puts_(o, " buffer ");
            put_buf(p, s->u.hint.buf);
        }
        break;
    case TILEC_ST_COPY_ASYNC:
        puts_(o, "copy_async ");
        put_region(p, &s->u.copy.dst);
        puts_(o, " <- ");
        put_region(p, &s->u.copy.src);
        if (s->u.copy.bar) {
            puts_(o, " mbarrier ");
            put_mbar(p, s->u.copy.bar);
            puts_(o, "[");
            put_expr(p, s->u.copy.bar_idx, 1);
            puts_(o, "]");
        }
        break;
    case TILEC_ST_ASYNC_COMMIT:
        puts_(o, "async_commit");
        break;
    case TILEC_ST_ASYNC_WAIT:
        putf(o, "async_wait %d", s->u.wait.n);
        break;
    case TILEC_ST_BARRIER:
        puts_(o, "barrier");
        break;
    case TILEC_ST_MBAR_INIT:
        puts_(o, "barrier_init ");
        put_mbar(p, s->u.mbar.bar);
        break;
    case TILEC_ST_MBAR_ARRIVE:
    case TILEC_ST_MBAR_WAIT:
        puts_(o, s->kind == TILEC_ST_MBAR_ARRIVE ? "barrier_arrive " : "barrier_wait ");
        put_mbar(p, s->u.mbar.bar);
        puts_(o, "[");
        put_expr(p, s->u.mbar.idx, 1);
        puts_(o, "]");
        if (s->kind == TILEC_ST_MBAR_WAIT) {
            puts_(o, ", ");
            put_expr(p, s->u.mbar.parity, 1);
        } else if (s->u.mbar.tx) {
            puts_(o, " expect_tx ");
            put_expr(p, s->u.mbar.tx, 1);
        }
        break;
    default:
        puts_(o, "?");
        break;
    }
    put_attrs(o, s->nattrs, s->attrs);
    puts_(o, "\n");
}

static void put_block(printer_t *p, const tilec_ir_stmt_t *s, int depth)
{
    if (depth > TILEC_IR_MAX_DEPTH + 1) {
        indent(&p->o, depth);
        puts_(&p->o, "?\n");
        return;
    }
    for (; s; s = s->next) {
        put_stmt(p, s, depth);
    }
}

/* ---- kernel and module ------------------------------------------------ */

static void put_shape(printer_t *p, const tilec_ir_buffer_t *b)
{
    puts_(&p->o, "[");
    put_expr_list(p, b->shape, b->ndim, 1);
    puts_(&p->o, "]");
}

static void put_kernel(printer_t *p)
{
    const tilec_ir_kernel_t *k = p->k;
    out_t *o = &p->o;
    char *kname = sanitize(k->name);
    int i;
    if (!kname) {
        o->oom = 1;
        return;
    }
    puts_(o, "kernel ");
    puts_(o, kname);
    free(kname);
    puts_(o, " {\n");
    for (i = 0; i < p->nvars; i++) {
        const tilec_ir_var_t *v = k->vars[i];
        puts_(o, "  var ");
        puts_(o, p->vnames[i]);
        if (v) {
            puts_(o, " ");
            puts_(o, tilec_dtype_name(v->dtype));
            puts_(o, " ");
            puts_(o, tilec_var_kind_name(v->kind));
        }
        puts_(o, "\n");
    }
    for (i = 0; i < p->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        puts_(o, i < k->nparams ? "  param " : "  alloc ");
        puts_(o, p->bnames[i]);
        if (b) {
            puts_(o, " ");
            puts_(o, tilec_scope_name(b->scope));
            puts_(o, " ");
            puts_(o, tilec_dtype_name(b->dtype));
            puts_(o, " ");
            put_shape(p, b);
            if (i < k->nparams && i < 32 && (k->out_mask >> i) & 1u) {
                puts_(o, " out");
            }
            if (b->layout) {
                put_layout(p, b->layout);
            }
            put_attrs(o, b->nattrs, b->attrs);
        }
        puts_(o, "\n");
    }
    for (i = 0; i < p->nmbars; i++) {
        const tilec_ir_mbarrier_t *b = k->mbars[i];
        puts_(o, "  mbarrier ");
        puts_(o, p->mnames[i]);
        putf(o, "[%d] arrive=%d\n", b ? b->size : 0, b ? b->arrive : 0);
    }
    puts_(o, "  grid [");
    for (i = 0; i < k->ngrid && i < 3; i++) {
        if (i) {
            puts_(o, ", ");
        }
        put_var(p, k->block[i]);
        puts_(o, " = ");
        put_expr(p, k->grid[i], 1);
    }
    if (k->ngrid < 0 || k->ngrid > 3) {
        puts_(o, "?");
    }
    puts_(o, "]\n");
    putf(o, "  threads %d %d %d\n", k->threads[0], k->threads[1], k->threads[2]);
    puts_(o, "  body {\n");
    put_block(p, k->body, 2);
    puts_(o, "  }\n}\n");
}

char *tilec_ir_print(const tilec_ir_module_t *m)
{
    printer_t p;
    locale_t cloc, old = (locale_t)0;
    memset(&p, 0, sizeof p);
    if (!m) {
        return NULL;
    }
    cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (cloc) {
        old = uselocale(cloc);
    }
    putf(&p.o, "tileir %d.%d\n", TILEC_IR_VERSION_MAJOR, tilec_ir_module_minor_needed(m));
    if (m->kernel) {
        const tilec_ir_kernel_t *k = m->kernel;
        const char **names;
        int i, n;
        p.k = k;
        p.nvars = k->vars && k->nvars > 0 ? k->nvars : 0;
        p.nbufs = k->bufs && k->nbufs > 0 ? k->nbufs : 0;
        p.nmbars = k->mbars && k->nmbars > 0 ? k->nmbars : 0;
        n = p.nvars > p.nbufs ? p.nvars : p.nbufs;
        n = n > p.nmbars ? n : p.nmbars;
        names = calloc(n > 0 ? (size_t)n : 1, sizeof *names);
        if (!names) {
            p.o.oom = 1;
        } else {
            for (i = 0; i < p.nvars; i++) {
                names[i] = k->vars[i] ? k->vars[i]->name : NULL;
            }
            p.vnames = make_names(names, p.nvars);
            for (i = 0; i < p.nbufs; i++) {
                names[i] = k->bufs[i] ? k->bufs[i]->name : NULL;
            }
            p.bnames = make_names(names, p.nbufs);
            for (i = 0; i < p.nmbars; i++) {
                names[i] = k->mbars[i] ? k->mbars[i]->name : NULL;
            }
            p.mnames = make_names(names, p.nmbars);
            free(names);
            if (!p.vnames || !p.bnames || !p.mnames) {
                p.o.oom = 1;
            } else {
                put_kernel(&p);
            }
        }
        free_names(p.vnames, p.nvars);
        free_names(p.bnames, p.nbufs);
        free_names(p.mnames, p.nmbars);
    }
    if (cloc) {
        uselocale(old);
        freelocale(cloc);
    }
    if (p.o.oom) {
        free(p.o.buf);
        return NULL;
    }
    return p.o.buf;
}

int tilec_ir_fprint(FILE *f, const tilec_ir_module_t *m)
{
    char *s = tilec_ir_print(m);
    int rc = 0;
    if (!s) {
        return -1;
    }
    if (fputs(s, f) == EOF) {
        rc = -1;
    }
    free(s);
    return rc;
}
