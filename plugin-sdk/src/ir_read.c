/*
 * plugin-sdk/src/ir_read.c — reads the text form of the tile IR back into a
 * module (grammar in docs/ir.md).
 *
 * This is what every plugin runs on the text the core hands it, so it must
 * survive any input: it works on (text, len) without needing a NUL, checks
 * every number for range, limits expression and statement nesting to
 * TILEC_IR_MAX_DEPTH, resolves every name against the kernel's declarations
 * (vars and buffers are declared before the grid and body), checks index
 * counts against buffer ranks, and reports the first problem as
 * "LINE:COL: message".  Floats are parsed in the "C" locale.
 *
 * Structure: a hand-written lexer (irr_next_tok) and a recursive-descent
 * parser with one function per grammar rule; errors set a flag and unwind
 * by return values.  IR 1.1 constructs are accepted only when the header
 * says 1.1 (the 1.1 operators here; attribute lists, layouts, mbarriers and
 * the 1.1 statements in ir_read_11.c), the 1.2 float8 dtypes only when it
 * says 1.2.
 */
#include "tilec/ir.h"
#include "ir_internal.h"
#include "ir_read_internal.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void irr_fail_at(reader_t *r, int line, int col, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (r->failed) {
        return;
    }
    r->failed = 1;
    if (!r->err || r->errlen == 0) {
        return;
    }
    n = snprintf(r->err, r->errlen, "%d:%d: ", line, col);
    if (n >= 0 && (size_t)n < r->errlen) {
        va_start(ap, fmt);
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
}

/* Quoted token text for messages (at most 24 chars, printable). */
const char *irr_tok_desc(const tok_t *t, char *buf, size_t len)
{
    size_t i, j = 0, n = t->n;
    if (t->kind == T_EOF) {
        return "end of input";
    }
    if (n > 24) {
        n = 24;
    }
    buf[j++] = '\'';
    for (i = 0; i < n && j + 3 < len; i++) {
        unsigned char c = (unsigned char)t->s[i];
        buf[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (n < t->n && j + 4 < len) {
        buf[j++] = '.';
        buf[j++] = '.';
    }
    buf[j++] = '\'';
    buf[j] = '\0';
    return buf;
}

/* ---- lexer ------------------------------------------------------------ */

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int id_start(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int id_char(int c) { return id_start(c) || is_digit(c); }

static int peekc(reader_t *r, size_t off)
{
    return (size_t)(r->end - r->p) > off ? (unsigned char)r->p[off] : -1;
}

static void adv(reader_t *r, size_t n)
{
    while (n-- && r->p < r->end) {
        if (*r->p == '\n') {
            r->line++;
            r->col = 1;
        } else {
            r->col++;
        }
        r->p++;
    }
}

void irr_next_tok(reader_t *r)
{
    tok_t *t = &r->t;
    int c;
    for (;;) {
        c = peekc(r, 0);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            adv(r, 1);
        } else if (c == '#') {
            while (peekc(r, 0) != -1 && peekc(r, 0) != '\n') {
                adv(r, 1);
            }
        } else {
            break;
        }
    }
    t->s = r->p;
    t->line = r->line;
    t->col = r->col;
    t->n = 0;
    t->u = 0;
    t->f = 0;
    if (c == -1) {
        t->kind = T_EOF;
        return;
    }
    if (id_start(c)) {
        size_t n = 1;
        while (peekc(r, n) != -1 && id_char(peekc(r, n))) {
            n++;
        }
        t->kind = T_IDENT;
        t->n = n;
        adv(r, n);
        return;
    }
    if (is_digit(c)) {
        size_t n = 0;
        int isf = 0;
        while (peekc(r, n) != -1 && is_digit(peekc(r, n))) {
            n++;
        }
        if (peekc(r, n) == '.') {
            isf = 1;
            n++;
            while (peekc(r, n) != -1 && is_digit(peekc(r, n))) {
                n++;
            }
        }
        if (peekc(r, n) == 'e' || peekc(r, n) == 'E') {
            size_t m = n + 1;
            if (peekc(r, m) == '+' || peekc(r, m) == '-') {
                m++;
            }
            if (peekc(r, m) != -1 && is_digit(peekc(r, m))) {
                isf = 1;
                n = m;
                while (peekc(r, n) != -1 && is_digit(peekc(r, n))) {
                    n++;
                }
            }
        }
        t->n = n;
        if (peekc(r, n) != -1 && id_char(peekc(r, n))) {
            t->kind = T_BAD;
            FAIL(r, "malformed number");
            return;
        }
        if (isf) {
            char tmp[512];
            if (n >= sizeof tmp) {
                t->kind = T_BAD;
                FAIL(r, "float literal too long");
                return;
            }
            memcpy(tmp, t->s, n);
            tmp[n] = '\0';
            errno = 0;
            t->f = strtod(tmp, NULL);
            if (isinf(t->f)) {
                t->kind = T_BAD;
                FAIL(r, "float literal out of range (write inf)");
                return;
            }
            t->kind = T_FLOAT;
        } else {
            size_t i;
            uint64_t v = 0;
            for (i = 0; i < n; i++) {
                unsigned d = (unsigned)(t->s[i] - '0');
                if (v > (UINT64_C(1) << 63) / 10 || v * 10 + d > (UINT64_C(1) << 63)) {
                    t->kind = T_BAD;
                    FAIL(r, "integer literal out of range");
                    return;
                }
                v = v * 10 + d;
            }
            t->u = v;
            t->kind = T_INT;
        }
        adv(r, n);
        return;
    }
    if (c == '"') {
        size_t n = 1;
        for (;;) {
            int d = peekc(r, n);
            if (d == -1 || d == '\n') {
                t->kind = T_BAD;
                FAIL(r, "unterminated string");
                return;
            }
            n++;
            if (d == '\\') {
                if (peekc(r, n) == -1) {
                    continue;
                }
                n++;
            } else if (d == '"') {
                break;
            }
        }
        t->kind = T_STRING;
        t->n = n;
        adv(r, n);
        return;
    }
    {
        static const char *const two[] = {"->", "+:", "//", "**", "==", "!=", "<=", ">=", "&&", "||",
                                          "<<", ">>", NULL};
        int i;
        for (i = 0; two[i]; i++) {
            if (c == two[i][0] && peekc(r, 1) == two[i][1]) {
                t->kind = T_PUNCT;
                t->n = 2;
                adv(r, 2);
                return;
            }
        }
        if (strchr("()[]{},:=+-*/%<>.&|^", c)) {
            t->kind = T_PUNCT;
            t->n = 1;
            adv(r, 1);
            return;
        }
    }
    t->kind = T_BAD;
    t->n = 1;
    if (c >= 0x20 && c < 0x7f) {
        FAIL(r, "unexpected character '%c'", c);
    } else {
        FAIL(r, "unexpected byte 0x%02x", (unsigned)c);
    }
}

/* ---- token helpers ---------------------------------------------------- */

int irr_is_punct(const reader_t *r, const char *p)
{
    return r->t.kind == T_PUNCT && r->t.n == strlen(p) && memcmp(r->t.s, p, r->t.n) == 0;
}

int irr_is_word(const reader_t *r, const char *w)
{
    return r->t.kind == T_IDENT && r->t.n == strlen(w) && memcmp(r->t.s, w, r->t.n) == 0;
}

int irr_expect_punct(reader_t *r, const char *p)
{
    char d[40];
    if (r->failed) {
        return -1;
    }
    if (!irr_is_punct(r, p)) {
        FAIL(r, "expected '%s', found %s", p, irr_tok_desc(&r->t, d, sizeof d));
        return -1;
    }
    irr_next_tok(r);
    return r->failed ? -1 : 0;
}

int irr_expect_word(reader_t *r, const char *w)
{
    char d[40];
    if (r->failed) {
        return -1;
    }
    if (!irr_is_word(r, w)) {
        FAIL(r, "expected '%s', found %s", w, irr_tok_desc(&r->t, d, sizeof d));
        return -1;
    }
    irr_next_tok(r);
    return r->failed ? -1 : 0;
}

/* Copies the current identifier into the arena and advances. */
char *irr_take_ident(reader_t *r, const char *what)
{
    char d[40];
    char *s;
    if (r->failed) {
        return NULL;
    }
    if (r->t.kind != T_IDENT) {
        FAIL(r, "expected %s, found %s", what, irr_tok_desc(&r->t, d, sizeof d));
        return NULL;
    }
    s = tilec_arena_strndup(r->a, r->t.s, r->t.n);
    if (!s) {
        FAIL(r, "out of memory");
        return NULL;
    }
    irr_next_tok(r);
    return r->failed ? NULL : s;
}

/* Reads an identifier into a small stack buffer (for keywords / names
 * looked up, not stored).  Long identifiers are rejected. */
static int ident_tmp(reader_t *r, char *buf, size_t len, const char *what)
{
    char d[40];
    if (r->failed) {
        return -1;
    }
    if (r->t.kind != T_IDENT) {
        FAIL(r, "expected %s, found %s", what, irr_tok_desc(&r->t, d, sizeof d));
        return -1;
    }
    if (r->t.n >= len) {
        FAIL(r, "%s too long", what);
        return -1;
    }
    memcpy(buf, r->t.s, r->t.n);
    buf[r->t.n] = '\0';
    return 0;
}

/* Optional '-' then an integer in [lo, hi]. */
int irr_read_int(reader_t *r, int64_t lo, int64_t hi, int64_t *out, const char *what)
{
    char d[40];
    int neg = 0, line = r->t.line, col = r->t.col;
    int64_t v;
    if (r->failed) {
        return -1;
    }
    if (irr_is_punct(r, "-")) {
        neg = 1;
        irr_next_tok(r);
        if (r->failed) {
            return -1;
        }
    }
    if (r->t.kind != T_INT) {
        FAIL(r, "expected %s (an integer), found %s", what, irr_tok_desc(&r->t, d, sizeof d));
        return -1;
    }
    if (!neg && r->t.u > (uint64_t)INT64_MAX) {
        FAIL(r, "integer literal out of range");
        return -1;
    }
    if (neg && r->t.u == (UINT64_C(1) << 63)) {
        v = INT64_MIN;
    } else {
        v = neg ? -(int64_t)r->t.u : (int64_t)r->t.u;
    }
    if (v < lo || v > hi) {
        irr_fail_at(r, line, col, "%s %lld out of range [%lld, %lld]", what, (long long)v, (long long)lo,
                (long long)hi);
        return -1;
    }
    irr_next_tok(r);
    *out = v;
    return r->failed ? -1 : 0;
}

int irr_read_int32(reader_t *r, int *out, const char *what)
{
    int64_t v;
    if (irr_read_int(r, INT32_MIN, INT32_MAX, &v, what) < 0) {
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* NAME '=' INT */
int irr_read_attr(reader_t *r, const char *name, int *out)
{
    if (irr_expect_word(r, name) < 0 || irr_expect_punct(r, "=") < 0) {
        return -1;
    }
    return irr_read_int32(r, out, name);
}

/* A dtype newer than the header: float8 needs 1.2, the 4-bit ones 1.3. */
static int dtype_too_new(reader_t *r, tilec_dtype_t t, const char *name)
{
    int need = tilec_dtype_is_4bit(t) ? 3 : tilec_dtype_is_float8(t) ? 2 : 0;
    if (r->minor < need) {
        FAIL(r, "dtype %s needs tileir 1.%d (the header says %d.%d)", name, need, TILEC_IR_VERSION_MAJOR, r->minor);
        return 1;
    }
    return 0;
}

static int read_dtype(reader_t *r, tilec_dtype_t *out)
{
    char buf[32];
    int t;
    if (ident_tmp(r, buf, sizeof buf, "dtype") < 0) {
        return -1;
    }
    t = tilec_dtype_from_name(buf);
    if (t < 0 || strcmp(buf, "float") == 0 || strcmp(buf, "float8_e4m3") == 0) {
        FAIL(r, "unknown dtype '%s'", buf);
        return -1;
    }
    if (dtype_too_new(r, (tilec_dtype_t)t, buf)) {
        return -1;
    }
    *out = (tilec_dtype_t)t;
    irr_next_tok(r);
    return r->failed ? -1 : 0;
}

/* Name of a table entry ("kind"): looks the current ident up with lookup. */
int irr_read_enum(reader_t *r, int (*lookup)(const char *), const char *what, int *out)
{
    char buf[32];
    int v;
    if (ident_tmp(r, buf, sizeof buf, what) < 0) {
        return -1;
    }
    v = lookup(buf);
    if (v < 0) {
        FAIL(r, "unknown %s '%s'", what, buf);
        return -1;
    }
    *out = v;
    irr_next_tok(r);
    return r->failed ? -1 : 0;
}

static int lookup_scope(const char *s) { return tilec_scope_from_name(s); }
static int lookup_var_kind(const char *s) { return tilec_irx_var_kind_from_name(s); }
static int lookup_loop(const char *s) { return tilec_irx_loop_kind_from_name(s); }
static int lookup_reduce(const char *s) { return tilec_irx_reduce_op_from_name(s); }
static int lookup_atomic(const char *s) { return tilec_irx_atomic_op_from_name(s); }
static int lookup_policy(const char *s) { return tilec_irx_policy_from_name(s); }

/* Resolves the current identifier in map (what: "variable" or "buffer")
 * and advances; the index, or -1 after reporting the error. */
int irr_read_ref(reader_t *r, const tilec_irx_map_t *map, const char *what)
{
    char d[40];
    char *tmp;
    int i;
    if (r->failed) {
        return -1;
    }
    if (r->t.kind != T_IDENT) {
        FAIL(r, "expected a %s name, found %s", what, irr_tok_desc(&r->t, d, sizeof d));
        return -1;
    }
    tmp = malloc(r->t.n + 1);
    if (!tmp) {
        FAIL(r, "out of memory");
        return -1;
    }
    memcpy(tmp, r->t.s, r->t.n);
    tmp[r->t.n] = '\0';
    i = tilec_irx_map_get(map, tmp);
    if (i < 0) {
        FAIL(r, "unknown %s %s", what, irr_tok_desc(&r->t, d, sizeof d));
    }
    free(tmp);
    if (i < 0) {
        return -1;
    }
    irr_next_tok(r);
    return r->failed ? -1 : i;
}

/* Inside a layout only its placeholders (_i<d>, _r) are variables. */
static tilec_ir_var_t *read_placeholder(reader_t *r)
{
    char d[40];
    const tilec_ir_layout_t *l = r->lay;
    tilec_ir_var_t *v = NULL;
    int i;
    if (r->t.kind == T_IDENT && r->t.n == 2 && memcmp(r->t.s, "_r", 2) == 0) {
        v = l->rvar;
    }
    for (i = 0; i < l->ndim && !v; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "_i%d", i);
        if (r->t.kind == T_IDENT && r->t.n == strlen(nm) && memcmp(r->t.s, nm, r->t.n) == 0) {
            v = l->ivar[i];
        }
    }
    if (!v) {
        char ph[32];
        snprintf(ph, sizeof ph, l->ndim > 1 ? "_i0.._i%d, _r" : l->ndim ? "_i0, _r" : "_r", l->ndim - 1);
        FAIL(r, "unknown variable %s in a layout (only %s)", irr_tok_desc(&r->t, d, sizeof d), ph);
        return NULL;
    }
    irr_next_tok(r);
    return r->failed ? NULL : v;
}

static tilec_ir_var_t *read_var_ref(reader_t *r)
{
    int i;
    if (r->lay) {
        return read_placeholder(r);
    }
    i = irr_read_ref(r, &r->vars, "variable");
    return i < 0 ? NULL : r->k->vars[i];
}

/* A 1.1 construct in a text whose header says 1.0 is an error. */
int irr_need_11(reader_t *r, const char *what)
{
    if (r->minor < 1) {
        FAIL(r, "%s needs tileir 1.1 (the header says %d.%d)", what, TILEC_IR_VERSION_MAJOR, r->minor);
        return -1;
    }
    return 0;
}

static tilec_ir_buffer_t *read_buf_ref(reader_t *r)
{
    int i = irr_read_ref(r, &r->bufs, "buffer");
    return i < 0 ? NULL : r->k->bufs[i];
}

const char *irr_read_string(reader_t *r)
{
    char d[40];
    const char *s;
    char *out;
    size_t i, j = 0, n;
    if (r->failed) {
        return NULL;
    }
    if (r->t.kind != T_STRING) {
        FAIL(r, "expected a string, found %s", irr_tok_desc(&r->t, d, sizeof d));
        return NULL;
    }
    s = r->t.s + 1;
    n = r->t.n - 2;
    out = tilec_arena_alloc(r->a, n + 1);
    if (!out) {
        FAIL(r, "out of memory");
        return NULL;
    }
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\') {
            char e = s[++i];
            if (e == 'n') {
                out[j++] = '\n';
            } else if (e == 't') {
                out[j++] = '\t';
            } else if (e == '"' || e == '\\') {
                out[j++] = e;
            } else if (e == 'x' && i + 2 < n) {
                unsigned v = 0;
                int h;
                for (h = 1; h <= 2; h++) {
                    char x = s[i + (size_t)h];
                    v <<= 4;
                    if (x >= '0' && x <= '9') {
                        v |= (unsigned)(x - '0');
                    } else if (x >= 'a' && x <= 'f') {
                        v |= (unsigned)(x - 'a' + 10);
                    } else if (x >= 'A' && x <= 'F') {
                        v |= (unsigned)(x - 'A' + 10);
                    } else {
                        FAIL(r, "bad \\x escape in string");
                        return NULL;
                    }
                }
                if (v == 0) {
                    FAIL(r, "NUL byte in string");
                    return NULL;
                }
                out[j++] = (char)v;
                i += 2;
            } else {
                FAIL(r, "bad escape in string");
                return NULL;
            }
        } else {
            out[j++] = c;
        }
    }
    out[j] = '\0';
    irr_next_tok(r);
    return r->failed ? NULL : out;
}

/* ---- expressions ------------------------------------------------------ */

tilec_ir_expr_t *irr_oom(reader_t *r)
{
    FAIL(r, "out of memory");
    return NULL;
}

/* '[' expr {',' expr} ']' with exactly n entries into a new array. */
tilec_ir_expr_t **irr_read_index_list(reader_t *r, int n, const char *bufname, int depth)
{
    tilec_ir_expr_t **v;
    int i = 0;
    int line = r->t.line, col = r->t.col;
    if (irr_expect_punct(r, "[") < 0) {
        return NULL;
    }
    v = tilec_arena_alloc(r->a, (size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!v) {
        return (tilec_ir_expr_t **)irr_oom(r);
    }
    if (!irr_is_punct(r, "]")) {
        for (;;) {
            tilec_ir_expr_t *e;
            if (i >= n) {
                FAIL(r, "too many indices for buffer '%s' (rank %d)", bufname, n);
                return NULL;
            }
            e = irr_read_expr(r, depth + 1);
            if (!e) {
                return NULL;
            }
            v[i++] = e;
            if (!irr_is_punct(r, ",")) {
                break;
            }
            irr_next_tok(r);
        }
    }
    if (i != n) {
        irr_fail_at(r, line, col, "buffer '%s' has rank %d but %d indices are given", bufname, n, i);
        return NULL;
    }
    if (irr_expect_punct(r, "]") < 0) {
        return NULL;
    }
    return v;
}

static int binop_from_punct(const reader_t *r)
{
    static const char *const ops[] = {"+", "-", "*", "/", "//", "%", "**", NULL, NULL,
                                      "==", "!=", "<", "<=", ">", ">=", "&&", "||",
                                      "&", "|", "^", "<<", ">>"};
    int i;
    if (r->t.kind != T_PUNCT) {
        return -1;
    }
    for (i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++) {
        if (ops[i] && r->t.n == strlen(ops[i]) && memcmp(r->t.s, ops[i], r->t.n) == 0) {
            return i;
        }
    }
    return -1;
}

/* '(' args ')' after a function name; n arguments. */
static int read_call_args(reader_t *r, tilec_ir_expr_t **args, int n, const char *fname, int depth)
{
    int i;
    if (irr_expect_punct(r, "(") < 0) {
        return -1;
    }
    for (i = 0; i < n; i++) {
        if (i && irr_expect_punct(r, ",") < 0) {
            return -1;
        }
        args[i] = irr_read_expr(r, depth + 1);
        if (!args[i]) {
            return -1;
        }
    }
    if (!irr_is_punct(r, ")")) {
        char d[40];
        FAIL(r, "'%s' takes %d argument%s; expected ')', found %s", fname, n, n == 1 ? "" : "s",
             irr_tok_desc(&r->t, d, sizeof d));
        return -1;
    }
    irr_next_tok(r);
    return r->failed ? -1 : 0;
}

static tilec_ir_expr_t *read_primary(reader_t *r, int depth)
{
    char d[40];
    tilec_ir_expr_t *e = NULL;
    int has_derived = 1;
    if (r->failed) {
        return NULL;
    }
    if (depth > TILEC_IR_MAX_DEPTH) {
        FAIL(r, "expression nested too deeply (limit %d)", TILEC_IR_MAX_DEPTH);
        return NULL;
    }
    if (irr_is_punct(r, "-") || r->t.kind == T_INT || r->t.kind == T_FLOAT || irr_is_word(r, "inf") ||
        irr_is_word(r, "nan")) {
        int neg = 0, line = r->t.line, col = r->t.col;
        if (irr_is_punct(r, "-")) {
            neg = 1;
            irr_next_tok(r);
            if (r->failed) {
                return NULL;
            }
        }
        if (r->t.kind == T_INT) {
            int64_t v;
            if (!neg && r->t.u > (uint64_t)INT64_MAX) {
                FAIL(r, "integer literal out of range");
                return NULL;
            }
            if (neg && r->t.u == (UINT64_C(1) << 63)) {
                v = INT64_MIN;
            } else {
                v = neg ? -(int64_t)r->t.u : (int64_t)r->t.u;
            }
            e = tilec_ir_int(r->a, v, TILEC_INT32);
        } else if (r->t.kind == T_FLOAT) {
            e = tilec_ir_float(r->a, neg ? -r->t.f : r->t.f, TILEC_FLOAT32);
        } else if (irr_is_word(r, "inf")) {
            e = tilec_ir_float(r->a, neg ? -INFINITY : INFINITY, TILEC_FLOAT32);
        } else if (irr_is_word(r, "nan") && !neg) {
            e = tilec_ir_float(r->a, NAN, TILEC_FLOAT32);
        } else {
            irr_fail_at(r, line, col, "expected a number after '-', found %s", irr_tok_desc(&r->t, d, sizeof d));
            return NULL;
        }
        if (!e) {
            return irr_oom(r);
        }
        irr_next_tok(r);
    } else if (irr_is_word(r, "true") || irr_is_word(r, "false")) {
        e = tilec_ir_int(r->a, irr_is_word(r, "true"), TILEC_BOOL);
        if (!e) {
            return irr_oom(r);
        }
        irr_next_tok(r);
        return r->failed ? NULL : e; /* no annotation: bool is implied */
    } else if (irr_is_punct(r, "(")) {
        int op;
        tilec_ir_expr_t *a, *b;
        irr_next_tok(r);
        a = irr_read_expr(r, depth + 1);
        if (!a) {
            return NULL;
        }
        op = binop_from_punct(r);
        if (op < 0) {
            FAIL(r, "expected a binary operator, found %s", irr_tok_desc(&r->t, d, sizeof d));
            return NULL;
        }
        if (op >= TILEC_BIN_BITAND && irr_need_11(r, "a bitwise operator") < 0) {
            return NULL;
        }
        irr_next_tok(r);
        b = irr_read_expr(r, depth + 1);
        if (!b || irr_expect_punct(r, ")") < 0) {
            return NULL;
        }
        e = tilec_ir_binary(r->a, (tilec_binop_t)op, a, b);
        if (!e) {
            return irr_oom(r);
        }
    } else if (r->t.kind == T_IDENT) {
        char name[32];
        int is_call = 0;
        /* one token of lookahead past the identifier */
        {
            const char *q = r->t.s + r->t.n;
            while (q < r->end && (*q == ' ' || *q == '\t')) {
                q++;
            }
            if (q < r->end && *q == '(') {
                is_call = 1;
            } else if (q < r->end && *q == '[') {
                is_call = 2;
            }
        }
        if (is_call == 1) {
            int op;
            tilec_ir_expr_t *args[3];
            if (ident_tmp(r, name, sizeof name, "function name") < 0) {
                return NULL;
            }
            irr_next_tok(r);
            if ((op = tilec_unop_from_name(name)) >= 0) {
                if (op == TILEC_UN_BITCAST && r->minor < 4) {
                    FAIL(r, "bitcast needs tileir 1.4 (the header says %d.%d)", TILEC_IR_VERSION_MAJOR, r->minor);
                    return NULL;
                }
                if (read_call_args(r, args, 1, name, depth) < 0) {
                    return NULL;
                }
                e = tilec_ir_unary(r->a, (tilec_unop_t)op, args[0]);
            } else if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0) {
                if (read_call_args(r, args, 2, name, depth) < 0) {
                    return NULL;
                }
                e = tilec_ir_binary(r->a, name[1] == 'i' ? TILEC_BIN_MIN : TILEC_BIN_MAX, args[0], args[1]);
            } else if (strcmp(name, "select") == 0) {
                if (read_call_args(r, args, 3, name, depth) < 0) {
                    return NULL;
                }
                e = tilec_ir_select(r->a, args[0], args[1], args[2]);
            } else if ((op = tilec_dtype_from_name(name)) >= 0 && strcmp(name, "float") != 0 &&
                       strcmp(name, "float8_e4m3") != 0) {
                if (dtype_too_new(r, (tilec_dtype_t)op, name)) {
                    return NULL;
                }
                if (read_call_args(r, args, 1, name, depth) < 0) {
                    return NULL;
                }
                e = tilec_ir_cast(r->a, (tilec_dtype_t)op, args[0]);
                has_derived = 0;
            } else {
                FAIL(r, "unknown function '%s'", name);
                return NULL;
            }
            if (!e) {
                return irr_oom(r);
            }
        } else if (is_call == 2) {
            tilec_ir_buffer_t *b = read_buf_ref(r);
            tilec_ir_expr_t **idx;
            if (!b) {
                return NULL;
            }
            idx = irr_read_index_list(r, b->ndim, b->name, depth);
            if (!idx) {
                return NULL;
            }
            e = tilec_ir_load(r->a, b, idx);
            if (!e) {
                return irr_oom(r);
            }
        } else {
            tilec_ir_var_t *v = read_var_ref(r);
            if (!v) {
                return NULL;
            }
            e = tilec_ir_varref(r->a, v);
            if (!e) {
                return irr_oom(r);
            }
        }
    } else {
        FAIL(r, "expected an expression, found %s", irr_tok_desc(&r->t, d, sizeof d));
        return NULL;
    }
    if (r->failed) {
        return NULL;
    }
    if (has_derived && irr_is_punct(r, ":")) {
        tilec_dtype_t t;
        irr_next_tok(r);
        if (read_dtype(r, &t) < 0) {
            return NULL;
        }
        e->dtype = t;
    }
    return e;
}

tilec_ir_expr_t *irr_read_expr(reader_t *r, int depth)
{
    return read_primary(r, depth);
}

/* ---- statements ------------------------------------------------------- */

/* NAME '[' base ['+:' INT] {, ...} ']' */
int irr_read_region(reader_t *r, tilec_ir_region_t *rg)
{
    tilec_ir_buffer_t *b = read_buf_ref(r);
    int i = 0, n, line, col;
    if (!b) {
        return -1;
    }
    n = b->ndim;
    rg->buf = b;
    rg->base = tilec_arena_alloc(r->a, (size_t)(n > 0 ? n : 1) * sizeof *rg->base);
    rg->extent = tilec_arena_alloc(r->a, (size_t)(n > 0 ? n : 1) * sizeof *rg->extent);
    if (!rg->base || !rg->extent) {
        irr_oom(r);
        return -1;
    }
    line = r->t.line;
    col = r->t.col;
    if (irr_expect_punct(r, "[") < 0) {
        return -1;
    }
    if (!irr_is_punct(r, "]")) {
        for (;;) {
            if (i >= n) {
                FAIL(r, "too many indices for buffer '%s' (rank %d)", b->name, n);
                return -1;
            }
            rg->base[i] = irr_read_expr(r, 1);
            if (!rg->base[i]) {
                return -1;
            }
            rg->extent[i] = 1;
            if (irr_is_punct(r, "+:")) {
                irr_next_tok(r);
                if (irr_read_int(r, INT64_MIN, INT64_MAX, &rg->extent[i], "extent") < 0) {
                    return -1;
                }
            }
            i++;
            if (!irr_is_punct(r, ",")) {
                break;
            }
            irr_next_tok(r);
        }
    }
    if (i != n) {
        irr_fail_at(r, line, col, "buffer '%s' has rank %d but the region has %d dimensions", b->name, n, i);
        return -1;
    }
    return irr_expect_punct(r, "]");
}

static tilec_ir_stmt_t *read_block(reader_t *r, int depth);

tilec_ir_stmt_t *irr_new_stmt(reader_t *r, tilec_stmt_kind_t kind)
{
    tilec_ir_stmt_t *s = tilec_ir_stmt(r->a, kind);
    if (!s) {
        irr_oom(r);
    }
    return s;
}

static tilec_ir_stmt_t *read_stmt_kw(reader_t *r, int depth)
{
    char d[40];
    char kw[16];
    tilec_ir_stmt_t *s = NULL;
    int v;
    if (r->t.kind != T_IDENT || r->t.n >= sizeof kw) {
        FAIL(r, "expected a statement, found %s", irr_tok_desc(&r->t, d, sizeof d));
        return NULL;
    }
    memcpy(kw, r->t.s, r->t.n);
    kw[r->t.n] = '\0';
    if (strcmp(kw, "for") == 0) {
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, TILEC_ST_FOR))) {
            return NULL;
        }
        if (!(s->u.loop.var = read_var_ref(r)) || irr_expect_word(r, "in") < 0 ||
            irr_read_enum(r, lookup_loop, "loop kind", &v) < 0) {
            return NULL;
        }
        s->u.loop.kind = (tilec_loop_kind_t)v;
        if (irr_expect_punct(r, "(") < 0 || !(s->u.loop.extent = irr_read_expr(r, 1))) {
            return NULL;
        }
        if (s->u.loop.kind == TILEC_LOOP_PIPELINED) {
            if (irr_expect_punct(r, ",") < 0 || irr_read_attr(r, "stages", &s->u.loop.num_stages) < 0) {
                return NULL;
            }
        }
        if (irr_expect_punct(r, ")") < 0 || irr_read_attrs_opt(r, &s->nattrs, &s->attrs) < 0) {
            return NULL;
        }
        s->u.loop.body = read_block(r, depth + 1);
        return r->failed ? NULL : s;
    }
    if (strcmp(kw, "if") == 0) {
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, TILEC_ST_IF)) || !(s->u.cond.cond = irr_read_expr(r, 1)) ||
            irr_read_attrs_opt(r, &s->nattrs, &s->attrs) < 0) {
            return NULL;
        }
        s->u.cond.then = read_block(r, depth + 1);
        if (r->failed) {
            return NULL;
        }
        if (irr_is_word(r, "else")) {
            irr_next_tok(r);
            s->u.cond.els = read_block(r, depth + 1);
        }
        return r->failed ? NULL : s;
    }
    if (strcmp(kw, "store") == 0 || strcmp(kw, "atomic") == 0) {
        int atomic = kw[0] == 'a';
        tilec_ir_buffer_t *b;
        tilec_ir_expr_t **idx;
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, atomic ? TILEC_ST_ATOMIC : TILEC_ST_STORE))) {
            return NULL;
        }
        if (atomic) {
            if (irr_read_enum(r, lookup_atomic, "atomic op", &v) < 0) {
                return NULL;
            }
            s->u.atomic.op = (tilec_atomic_op_t)v;
        }
        if (!(b = read_buf_ref(r)) || !(idx = irr_read_index_list(r, b->ndim, b->name, 0))) {
            return NULL;
        }
        if (irr_expect_punct(r, atomic ? "," : "=") < 0) {
            return NULL;
        }
        if (atomic) {
            s->u.atomic.buf = b;
            s->u.atomic.idx = idx;
            s->u.atomic.value = irr_read_expr(r, 1);
        } else {
            s->u.store.buf = b;
            s->u.store.idx = idx;
            s->u.store.value = irr_read_expr(r, 1);
        }
        return r->failed ? NULL : s;
    }
    if (strcmp(kw, "assign") == 0) {
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, TILEC_ST_ASSIGN)) || !(s->u.assign.var = read_var_ref(r)) ||
            irr_expect_punct(r, "=") < 0 || !(s->u.assign.value = irr_read_expr(r, 1))) {
            return NULL;
        }
        return s;
    }
    if (strcmp(kw, "copy") == 0) {
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, TILEC_ST_COPY)) || irr_read_region(r, &s->u.copy.src) < 0 ||
            irr_expect_punct(r, "->") < 0 || irr_read_region(r, &s->u.copy.dst) < 0) {
            return NULL;
        }
        return s;
    }
    if (strcmp(kw, "fill") == 0) {
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, TILEC_ST_FILL)) || irr_read_region(r, &s->u.fill.dst) < 0 ||
            irr_expect_punct(r, "=") < 0 || !(s->u.fill.value = irr_read_expr(r, 1))) {
            return NULL;
        }
        return s;
    }
    if (strcmp(kw, "gemm") == 0) {
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, TILEC_ST_GEMM)) || !(s->u.gemm.a = read_buf_ref(r)) ||
            irr_read_gemm_lead(r, s->u.gemm.a, &s->u.gemm.a_lead) < 0 || irr_expect_punct(r, ",") < 0 ||
            !(s->u.gemm.b = read_buf_ref(r)) || irr_read_gemm_lead(r, s->u.gemm.b, &s->u.gemm.b_lead) < 0 ||
            irr_expect_punct(r, ",") < 0 || !(s->u.gemm.c = read_buf_ref(r)) ||
            irr_read_attr(r, "trans_a", &s->u.gemm.trans_a) < 0 ||
            irr_read_attr(r, "trans_b", &s->u.gemm.trans_b) < 0 ||
            irr_read_attr(r, "clear_accum", &s->u.gemm.clear_accum) < 0 || irr_expect_word(r, "policy") < 0 ||
            irr_expect_punct(r, "=") < 0 || irr_read_enum(r, lookup_policy, "gemm policy", &v) < 0) {
            return NULL;
        }
        s->u.gemm.policy = (tilec_gemm_policy_t)v;
        return s;
    }
    if (strcmp(kw, "reduce") == 0) {
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, TILEC_ST_REDUCE)) || irr_read_enum(r, lookup_reduce, "reduce op", &v) < 0) {
            return NULL;
        }
        s->u.reduce.op = (tilec_reduce_op_t)v;
        if (!(s->u.reduce.src = read_buf_ref(r)) || irr_expect_punct(r, "->") < 0 ||
            !(s->u.reduce.dst = read_buf_ref(r)) || irr_read_attr(r, "dim", &s->u.reduce.dim) < 0 ||
            irr_read_attr(r, "clear", &s->u.reduce.clear) < 0) {
            return NULL;
        }
        return s;
    }
    if (strcmp(kw, "cumsum") == 0) {
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, TILEC_ST_CUMSUM)) || !(s->u.cumsum.src = read_buf_ref(r)) ||
            irr_expect_punct(r, "->") < 0 || !(s->u.cumsum.dst = read_buf_ref(r)) ||
            irr_read_attr(r, "dim", &s->u.cumsum.dim) < 0 || irr_read_attr(r, "reverse", &s->u.cumsum.reverse) < 0) {
            return NULL;
        }
        return s;
    }
    if (strcmp(kw, "sync") == 0) {
        irr_next_tok(r);
        return irr_new_stmt(r, TILEC_ST_SYNC);
    }
    if (strcmp(kw, "print") == 0) {
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, TILEC_ST_PRINT))) {
            return NULL;
        }
        if (irr_is_word(r, "null")) {
            irr_next_tok(r);
        } else if (!(s->u.print.msg = irr_read_string(r))) {
            return NULL;
        }
        if (irr_is_word(r, "value")) {
            irr_next_tok(r);
            if (!(s->u.print.value = irr_read_expr(r, 1))) {
                return NULL;
            }
        }
        if (irr_is_word(r, "buffer")) {
            irr_next_tok(r);
            if (!(s->u.print.buf = read_buf_ref(r))) {
                return NULL;
            }
        }
        return r->failed ? NULL : s;
    }
    if (strcmp(kw, "hint") == 0) {
        int cap = 0;
        irr_next_tok(r);
        if (!(s = irr_new_stmt(r, TILEC_ST_HINT))) {
            return NULL;
        }
        if (irr_is_word(r, "null")) {
            irr_next_tok(r);
        } else if (!(s->u.hint.name = irr_read_string(r))) {
            return NULL;
        }
        if (irr_expect_punct(r, "(") < 0) {
            return NULL;
        }
        while (!irr_is_punct(r, ")") && !r->failed) {
            tilec_ir_expr_t *e;
            if (s->u.hint.nargs && irr_expect_punct(r, ",") < 0) {
                return NULL;
            }
            if (s->u.hint.nargs >= 64) {
                FAIL(r, "too many hint arguments (limit 64)");
                return NULL;
            }
            if (!(e = irr_read_expr(r, 1))) {
                return NULL;
            }
            if (s->u.hint.nargs == cap) {
                tilec_ir_expr_t **na;
                cap = cap ? cap * 2 : 4;
                na = tilec_arena_alloc(r->a, (size_t)cap * sizeof *na);
                if (!na) {
                    irr_oom(r);
                    return NULL;
                }
                if (s->u.hint.nargs) {
                    memcpy(na, s->u.hint.args, (size_t)s->u.hint.nargs * sizeof *na);
                }
                s->u.hint.args = na;
            }
            s->u.hint.args[s->u.hint.nargs++] = e;
        }
        if (irr_expect_punct(r, ")") < 0) {
            return NULL;
        }
        if (irr_is_word(r, "buffer")) {
            irr_next_tok(r);
            if (!(s->u.hint.buf = read_buf_ref(r))) {
                return NULL;
            }
        }
        return r->failed ? NULL : s;
    }
    return irr_read_stmt_11(r, kw);
}

/* A statement, then its attributes (for and if read theirs before the body). */
static tilec_ir_stmt_t *read_stmt(reader_t *r, int depth)
{
    tilec_ir_stmt_t *s = read_stmt_kw(r, depth);
    if (!s || r->failed) {
        return NULL;
    }
    if (s->kind != TILEC_ST_FOR && s->kind != TILEC_ST_IF && irr_read_attrs_opt(r, &s->nattrs, &s->attrs) < 0) {
        return NULL;
    }
    return s;
}

/* '{' stmt* '}' */
static tilec_ir_stmt_t *read_block(reader_t *r, int depth)
{
    tilec_ir_stmt_t *head = NULL, **tail = &head;
    if (depth > TILEC_IR_MAX_DEPTH) {
        FAIL(r, "statements nested too deeply (limit %d)", TILEC_IR_MAX_DEPTH);
        return NULL;
    }
    if (irr_expect_punct(r, "{") < 0) {
        return NULL;
    }
    while (!irr_is_punct(r, "}")) {
        tilec_ir_stmt_t *s;
        if (r->failed) {
            return NULL;
        }
        if (r->t.kind == T_EOF) {
            FAIL(r, "unexpected end of input: missing '}'");
            return NULL;
        }
        s = read_stmt(r, depth);
        if (!s || r->failed) {
            return NULL;
        }
        *tail = s;
        tail = &s->next;
    }
    irr_next_tok(r);
    return head;
}

/* ---- kernel ----------------------------------------------------------- */

static int read_kernel(reader_t *r)
{
    char d[40];
    tilec_ir_kernel_t *k;
    char *name;
    int seen_alloc = 0;
    if (irr_expect_word(r, "kernel") < 0 || !(name = irr_take_ident(r, "kernel name"))) {
        return -1;
    }
    k = tilec_ir_kernel_new(r->a, name);
    if (!k) {
        irr_oom(r);
        return -1;
    }
    r->k = k;
    if (irr_expect_punct(r, "{") < 0) {
        return -1;
    }
    /* declarations */
    for (;;) {
        int line = r->t.line, col = r->t.col;
        if (irr_is_word(r, "var")) {
            tilec_dtype_t t;
            int kind, rc;
            tilec_ir_var_t *v;
            irr_next_tok(r);
            if (!(name = irr_take_ident(r, "variable name")) || read_dtype(r, &t) < 0 ||
                irr_read_enum(r, lookup_var_kind, "variable kind", &kind) < 0) {
                return -1;
            }
            if (k->nbufs > 0) {
                irr_fail_at(r, line, col, "variable '%s' declared after buffers", name);
                return -1;
            }
            v = tilec_ir_var_add(r->a, k, name, t, (tilec_var_kind_t)kind);
            if (!v) {
                irr_oom(r);
                return -1;
            }
            rc = tilec_irx_map_put(&r->vars, v->name, v->id);
            if (rc != 0) {
                if (rc > 0) {
                    irr_fail_at(r, line, col, "duplicate variable '%s'", name);
                } else {
                    irr_oom(r);
                }
                return -1;
            }
        } else if (irr_is_word(r, "param") || irr_is_word(r, "alloc")) {
            int param = irr_is_word(r, "param"), scope, ndim = 0, rc;
            tilec_dtype_t t;
            tilec_ir_expr_t *shape[TILEC_IR_MAX_DIMS];
            tilec_ir_buffer_t *b;
            irr_next_tok(r);
            if (!(name = irr_take_ident(r, "buffer name")) || irr_read_enum(r, lookup_scope, "scope", &scope) < 0 ||
                read_dtype(r, &t) < 0 || irr_expect_punct(r, "[") < 0) {
                return -1;
            }
            if (param && seen_alloc) {
                irr_fail_at(r, line, col, "parameter '%s' declared after on-chip buffers", name);
                return -1;
            }
            while (!irr_is_punct(r, "]")) {
                if (ndim && irr_expect_punct(r, ",") < 0) {
                    return -1;
                }
                if (ndim >= TILEC_IR_MAX_DIMS) {
                    FAIL(r, "buffer '%s' has more than %d dimensions", name, TILEC_IR_MAX_DIMS);
                    return -1;
                }
                if (!(shape[ndim++] = irr_read_expr(r, 1))) {
                    return -1;
                }
            }
            irr_next_tok(r);
            if (r->failed) {
                return -1;
            }
            b = tilec_ir_buffer_add(r->a, k, name, (tilec_scope_t)scope, t, ndim, shape);
            if (!b) {
                irr_oom(r);
                return -1;
            }
            rc = tilec_irx_map_put(&r->bufs, b->name, b->id);
            if (rc != 0) {
                if (rc > 0) {
                    irr_fail_at(r, line, col, "duplicate buffer '%s'", name);
                } else {
                    irr_oom(r);
                }
                return -1;
            }
            if (param) {
                k->nparams++;
                if (irr_is_word(r, "out")) {
                    if (b->id >= 32) {
                        FAIL(r, "only the first 32 parameters can be outputs");
                        return -1;
                    }
                    k->out_mask |= 1u << b->id;
                    irr_next_tok(r);
                }
            } else {
                seen_alloc = 1;
            }
            if ((irr_is_word(r, "layout") && irr_read_layout(r, b) < 0) ||
                irr_read_attrs_opt(r, &b->nattrs, &b->attrs) < 0) {
                return -1;
            }
        } else if (irr_is_word(r, "mbarrier")) {
            if (irr_read_mbarrier(r) < 0) {
                return -1;
            }
        } else {
            break;
        }
        if (r->failed) {
            return -1;
        }
    }
    /* grid [v = e, ...] */
    if (irr_expect_word(r, "grid") < 0 || irr_expect_punct(r, "[") < 0) {
        return -1;
    }
    while (!irr_is_punct(r, "]")) {
        if (k->ngrid && irr_expect_punct(r, ",") < 0) {
            return -1;
        }
        if (k->ngrid >= 3) {
            FAIL(r, "a grid has at most 3 dimensions");
            return -1;
        }
        if (!(k->block[k->ngrid] = read_var_ref(r)) || irr_expect_punct(r, "=") < 0 ||
            !(k->grid[k->ngrid] = irr_read_expr(r, 1))) {
            return -1;
        }
        k->ngrid++;
    }
    irr_next_tok(r);
    if (irr_expect_word(r, "threads") < 0 || irr_read_int32(r, &k->threads[0], "threads") < 0 ||
        irr_read_int32(r, &k->threads[1], "threads") < 0 || irr_read_int32(r, &k->threads[2], "threads") < 0) {
        return -1;
    }
    if (irr_expect_word(r, "body") < 0) {
        return -1;
    }
    k->body = read_block(r, 1);
    if (r->failed) {
        return -1;
    }
    if (!irr_is_punct(r, "}")) {
        FAIL(r, "expected '}' closing kernel '%s', found %s", k->name, irr_tok_desc(&r->t, d, sizeof d));
        return -1;
    }
    irr_next_tok(r);
    return r->failed ? -1 : 0;
}

/* "tileir MAJOR.MINOR" on the first line. */
static int read_header(reader_t *r, tilec_ir_module_t *m)
{
    const char *p = r->p, *e = r->end;
    uint64_t maj = 0, min = 0;
    int nd;
    if ((size_t)(e - p) < 7 || memcmp(p, "tileir", 6) != 0 || (p[6] != ' ' && p[6] != '\t')) {
        irr_fail_at(r, 1, 1, "not a tile IR text: expected 'tileir MAJOR.MINOR' on the first line");
        return -1;
    }
    p += 6;
    while (p < e && (*p == ' ' || *p == '\t')) {
        p++;
    }
    r->col = (int)(p - r->p) + 1;
    for (nd = 0; p < e && is_digit((unsigned char)*p) && nd < 9; nd++, p++) {
        maj = maj * 10 + (uint64_t)(*p - '0');
    }
    if (nd == 0 || nd == 9 || p >= e || *p != '.') {
        irr_fail_at(r, 1, r->col, "malformed version: expected MAJOR.MINOR");
        return -1;
    }
    p++;
    for (nd = 0; p < e && is_digit((unsigned char)*p) && nd < 9; nd++, p++) {
        min = min * 10 + (uint64_t)(*p - '0');
    }
    if (nd == 0 || nd == 9 || (p < e && *p != '\n' && *p != ' ' && *p != '\t' && *p != '\r')) {
        irr_fail_at(r, 1, r->col, "malformed version: expected MAJOR.MINOR");
        return -1;
    }
    if (maj != TILEC_IR_VERSION_MAJOR) {
        irr_fail_at(r, 1, r->col, "unsupported tile IR version %llu.%llu: this reader reads %d.x (x <= %d)",
                (unsigned long long)maj, (unsigned long long)min, TILEC_IR_VERSION_MAJOR, TILEC_IR_VERSION_MINOR);
        return -1;
    }
    if (min > TILEC_IR_VERSION_MINOR) {
        irr_fail_at(r, 1, r->col, "tile IR version %llu.%llu is newer than this reader (%d.%d)",
                (unsigned long long)maj, (unsigned long long)min, TILEC_IR_VERSION_MAJOR, TILEC_IR_VERSION_MINOR);
        return -1;
    }
    m->version_major = (int)maj;
    m->version_minor = (int)min;
    r->minor = (int)min;
    r->col = 1 + (int)(p - r->p);
    r->p = p;
    return 0;
}

int tilec_ir_read(tilec_arena_t *a, const char *text, size_t len, tilec_ir_module_t **out, char *err,
                  size_t errlen)
{
    reader_t r;
    tilec_ir_module_t *m;
    locale_t cloc, old = (locale_t)0;
    int rc = -1;
    if (out) {
        *out = NULL;
    }
    if (err && errlen) {
        err[0] = '\0';
    }
    memset(&r, 0, sizeof r);
    r.a = a;
    r.err = err;
    r.errlen = errlen;
    r.line = 1;
    r.col = 1;
    r.p = text ? text : "";
    r.end = r.p + (text ? len : 0);
    if (!a || !out) {
        irr_fail_at(&r, 0, 0, "bad arguments");
        return -1;
    }
    {
        /* The text form is text: a raw NUL would silently cut a string
         * literal or a comment short, so none is accepted anywhere. */
        const char *nul = memchr(r.p, '\0', (size_t)(r.end - r.p));
        if (nul) {
            int line = 1, col = 1;
            for (const char *q = r.p; q < nul; q++) {
                line += *q == '\n';
                col = *q == '\n' ? 1 : col + 1;
            }
            irr_fail_at(&r, line, col, "raw NUL byte (the text form is text)");
            return -1;
        }
    }
    m = tilec_ir_module_new(a);
    if (!m) {
        irr_fail_at(&r, 1, 1, "out of memory");
        return -1;
    }
    tilec_irx_map_init(&r.vars);
    tilec_irx_map_init(&r.bufs);
    tilec_irx_map_init(&r.mbars);
    cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (cloc) {
        old = uselocale(cloc);
    }
    if (read_header(&r, m) == 0) {
        irr_next_tok(&r);
        if (!r.failed && read_kernel(&r) == 0) {
            if (r.t.kind != T_EOF) {
                char d[40];
                FAIL(&r, "unexpected %s after the kernel", irr_tok_desc(&r.t, d, sizeof d));
            } else {
                m->kernel = r.k;
                *out = m;
                rc = 0;
            }
        }
    }
    if (cloc) {
        uselocale(old);
        freelocale(cloc);
    }
    tilec_irx_map_free(&r.vars);
    tilec_irx_map_free(&r.bufs);
    tilec_irx_map_free(&r.mbars);
    if (r.failed) {
        rc = -1;
        *out = NULL;
    }
    return rc;
}
