/*
 * frontend/parser.c — recursive-descent parser for the tile-program subset
 * of Python, building the tree of ast.h.
 *
 * Grammar (Python's, cut down; what is outside the subset is recognised
 * far enough to say so in a diagnostic):
 *
 *   module      := (NEWLINE | statement)* EOF
 *   statement   := if | for | while | with | decorated | def
 *                | small (';' small)* [';'] NEWLINE
 *   block       := NEWLINE INDENT statement+ DEDENT | small-statements
 *   if          := 'if' test ':' block ('elif' test ':' block)* ['else' ':' block]
 *   for         := 'for' targets 'in' exprlist ':' block        (no else)
 *   while       := 'while' test ':' block                         (no else)
 *   with        := 'with' test ['as' targets] ':' block           (one item)
 *   decorated   := ('@' test NEWLINE)+ def
 *   def         := 'def' NAME '(' [param (',' param)* [',']] ')' ['->' test] ':' block
 *   param       := NAME [':' test] ['=' test]
 *   small       := pass | break | continue | return [exprlist] | assert test [',' test]
 *                | import dotted [as NAME] (',' ...)* | from dotted import names
 *                | exprlist (('=' exprlist)* | augop exprlist | ':' test ['=' exprlist])
 *   exprlist    := star_or_test (',' star_or_test)* [',']
 *   test        := or ['if' or 'else' test]
 *   or/and/not  := and ('or' and)* / not ('and' not)* / 'not' not | comparison
 *   comparison  := binary (compop binary)*
 *   binary      := precedence climbing over | ^ & << >> + - * / // % @
 *   factor      := ('-'|'+'|'~') factor | power
 *   power       := primary ['**' factor]
 *   primary     := atom ('.' NAME | '(' args ')' | '[' subscript ']')*
 *   atom        := NAME | number | string+ | True | False | None
 *                | '(' [exprlist] ')' | '[' [items] ']' | '{' [dict items] '}'
 *
 * Source positions of nodes: a statement is at its first token; an
 * expression is where it starts, except that BINOP, BOOLOP and COMPARE are
 * at their (first) operator, ATTR at the attribute name and SUBSCRIPT at
 * its '[' — the places a diagnostic about them should point to.
 *
 * Recursion is bounded: brackets, unary operators, '**', conditional
 * expressions and blocks each count one level, and more than
 * TILEC_PARSE_MAX_DEPTH levels is the diagnostic "nesting too deep".
 * Every syntax error says what was expected and what was found.
 */
#include "ast.h"
#include "lexer.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define TILEC_PARSE_MAX_DEPTH TILEC_LEX_MAX_DEPTH

typedef struct parser {
    tilec_lexer_t lx;
    tilec_arena_t *a;
    tilec_diag_t *d;
    tilec_token_t tok;   /* current token */
    int prev_line;       /* line of the token consumed before tok */
    int stmt_col;        /* column of the statement being parsed */
    int depth;
    size_t src_len, max_bytes; /* the file's size; the arena's budget */
    int over;                  /* the budget was exceeded (reported once) */
} parser_t;

/* ---- errors --------------------------------------------------------------- */

static int perr(parser_t *p, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int perr(parser_t *p, int line, int col, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tilec_diag_error(p->d, line, col, "%s", msg);
}

static char closer_of(char open)
{
    return open == '(' ? ')' : open == '[' ? ']' : '}';
}

/* When the current token starts a later line than the one before it, while
 * brackets are open, no further right than the statement it would be part
 * of, the likely cause of a syntax error is a bracket left open: writes a
 * hint naming it into buf ("" otherwise). */
static const char *bracket_hint(const parser_t *p, char *buf, size_t n)
{
    int nb = p->lx.nbracket;
    buf[0] = '\0';
    if (p->tok.kind == TILEC_TOK_OP &&
        (p->tok.op == TILEC_OP_LPAR || p->tok.op == TILEC_OP_LSQB || p->tok.op == TILEC_OP_LBRACE))
        nb--; /* the token itself opened one */
    if (nb > 0 && p->tok.line > p->prev_line && p->tok.col <= p->stmt_col) {
        char open = p->lx.bracket[nb - 1].ch;
        snprintf(buf, n, " (is the '%c' on line %d missing its '%c'?)", open, p->lx.bracket[nb - 1].line,
                 closer_of(open));
    }
    return buf;
}

/* "expected WHAT, found TOKEN" at the current token. */
static int expected(parser_t *p, const char *what)
{
    char found[96], hint[80];
    tilec_lexer_describe(&p->tok, found, sizeof found);
    return perr(p, p->tok.line, p->tok.col, "expected %s, found %s%s", what, found,
                bracket_hint(p, hint, sizeof hint));
}

static int unsupported(parser_t *p, const char *what)
{
    return perr(p, p->tok.line, p->tok.col, "%s is not supported in tile programs", what);
}

static int enter(parser_t *p)
{
    if (++p->depth > TILEC_PARSE_MAX_DEPTH)
        return perr(p, p->tok.line, p->tok.col, "nesting too deep (more than %d levels)", TILEC_PARSE_MAX_DEPTH);
    return 0;
}

static void leave(parser_t *p)
{
    p->depth--;
}

/* ---- tokens --------------------------------------------------------------- */

static int advance(parser_t *p)
{
    p->prev_line = p->tok.line;
    return tilec_lexer_next(&p->lx, &p->tok);
}

static int is_op(const parser_t *p, int op)
{
    return p->tok.kind == TILEC_TOK_OP && p->tok.op == op;
}

static int is_kw(const parser_t *p, int kw)
{
    return p->tok.kind == TILEC_TOK_NAME && p->tok.kw == kw;
}

static int expect_op(parser_t *p, int op, const char *what)
{
    if (!is_op(p, op))
        return expected(p, what);
    return advance(p);
}

static ast_loc_t here(const parser_t *p)
{
    ast_loc_t l = { p->tok.line, p->tok.col };
    return l;
}

/* ---- allocation ----------------------------------------------------------- */

/* Every allocation of the parser (and the lexer's strings, counted in the
 * same arena) stays within p->max_bytes. */
static int over_budget(parser_t *p)
{
    if (p->a->bytes <= p->max_bytes)
        return 0;
    if (!p->over)
        perr(p, p->tok.line, p->tok.col,
             "the program is too large to compile: its syntax tree needs more than %zu MiB "
             "(the file has %zu bytes); split it into smaller files or generate less code",
             p->max_bytes >> 20 ? p->max_bytes >> 20 : 1, p->src_len);
    p->over = 1;
    return 1;
}

static void *alloc(parser_t *p, size_t size)
{
    if (over_budget(p))
        return NULL;
    void *m = tilec_arena_alloc(p->a, size);
    if (!m)
        perr(p, p->tok.line, p->tok.col, "out of memory");
    return m;
}

/* Makes room for one more element in an arena array of n elements. */
static void *grow(parser_t *p, void *arr, int n, int *cap, size_t elem)
{
    if (n < *cap)
        return arr;
    if (*cap > INT_MAX / 4) {
        perr(p, p->tok.line, p->tok.col, "too many items");
        return NULL;
    }
    int nc = *cap ? *cap * 2 : 4;
    void *na = alloc(p, (size_t)nc * elem);
    if (!na)
        return NULL;
    if (n)
        memcpy(na, arr, (size_t)n * elem);
    *cap = nc;
    return na;
}

static ast_expr_t *new_expr(parser_t *p, ast_expr_kind_t kind, ast_loc_t loc)
{
    ast_expr_t *e = alloc(p, sizeof *e);
    if (e) {
        e->kind = kind;
        e->loc = loc;
    }
    return e;
}

static ast_stmt_t *new_stmt(parser_t *p, ast_stmt_kind_t kind, ast_loc_t loc)
{
    ast_stmt_t *s = alloc(p, sizeof *s);
    if (s) {
        s->kind = kind;
        s->loc = loc;
    }
    return s;
}

static const char *tok_name(parser_t *p)
{
    if (over_budget(p))
        return NULL;
    char *s = tilec_arena_strndup(p->a, p->tok.text, p->tok.len);
    if (!s)
        perr(p, p->tok.line, p->tok.col, "out of memory");
    return s;
}

typedef struct expr_vec { ast_expr_t **v; int n, cap; } expr_vec_t;

static int push_expr(parser_t *p, expr_vec_t *vec, ast_expr_t *e)
{
    ast_expr_t **nv = grow(p, vec->v, vec->n, &vec->cap, sizeof *nv);
    if (!nv)
        return -1;
    vec->v = nv;
    vec->v[vec->n++] = e;
    return 0;
}

/* ---- expressions ---------------------------------------------------------- */

static ast_expr_t *parse_test(parser_t *p);
static ast_expr_t *parse_binary(parser_t *p, int min_prec);
static ast_expr_t *parse_factor(parser_t *p);

/* Whether the current token can begin an expression. */
static int starts_expr(const parser_t *p)
{
    switch (p->tok.kind) {
    case TILEC_TOK_NAME:
        return !p->tok.kw || p->tok.kw == TILEC_KW_TRUE || p->tok.kw == TILEC_KW_FALSE ||
               p->tok.kw == TILEC_KW_NONE || p->tok.kw == TILEC_KW_NOT || p->tok.kw == TILEC_KW_LAMBDA ||
               p->tok.kw == TILEC_KW_AWAIT || p->tok.kw == TILEC_KW_YIELD;
    case TILEC_TOK_INT: case TILEC_TOK_FLOAT: case TILEC_TOK_STR:
        return 1;
    case TILEC_TOK_OP:
        switch (p->tok.op) {
        case TILEC_OP_LPAR: case TILEC_OP_LSQB: case TILEC_OP_LBRACE: case TILEC_OP_MINUS:
        case TILEC_OP_PLUS: case TILEC_OP_TILDE: case TILEC_OP_STAR: case TILEC_OP_ELLIPSIS:
            return 1;
        default:
            return 0;
        }
    default:
        return 0;
    }
}

/* A 'for' where no comprehension can start: after other items, or in a set. */
static int comprehension_error(parser_t *p, int set)
{
    char hint[80];
    if (*bracket_hint(p, hint, sizeof hint))
        return perr(p, p->tok.line, p->tok.col, "unexpected 'for' inside brackets%s", hint);
    if (set)
        return perr(p, p->tok.line, p->tok.col, "set comprehensions are not supported in tile programs");
    return perr(p, p->tok.line, p->tok.col, "a comprehension must be the only item inside its brackets");
}

/* '*' value, or a test. */
static ast_expr_t *parse_star_or_test(parser_t *p)
{
    if (!is_op(p, TILEC_OP_STAR))
        return parse_test(p);
    ast_loc_t loc = here(p);
    if (enter(p) < 0 || advance(p) < 0)
        return NULL;
    ast_expr_t *v = parse_binary(p, 0);
    leave(p);
    if (!v)
        return NULL;
    ast_expr_t *e = new_expr(p, AST_STARRED, loc);
    if (e)
        e->u.star.value = v;
    return e;
}

static ast_expr_t *parse_or(parser_t *p);
static ast_expr_t *parse_exprlist(parser_t *p, int targets);
static int check_target(parser_t *p, const ast_expr_t *e, const char *ctx);

/* The `for ... in ... [if ...]` clauses of a comprehension whose element
 * (elt, and value for a dict) is parsed; tok is 'for'.  The closing bracket
 * is left for the caller. */
static ast_expr_t *parse_comp(parser_t *p, int bracket, ast_expr_t *elt, ast_expr_t *value)
{
    ast_comp_for_t *fors = NULL;
    int nfor = 0, cap = 0;
    char hint[80];
    if (*bracket_hint(p, hint, sizeof hint))   /* a bracket left open before a `for` statement */
        return perr(p, p->tok.line, p->tok.col, "unexpected 'for' inside brackets%s", hint), NULL;
    if (elt->kind == AST_STARRED)
        return perr(p, elt->loc.line, elt->loc.col, "a starred element cannot be used in a comprehension"), NULL;
    while (is_kw(p, TILEC_KW_FOR)) {
        ast_comp_for_t *nf = grow(p, fors, nfor, &cap, sizeof *nf);
        expr_vec_t ifs = { 0 };
        if (!nf || advance(p) < 0)
            return NULL;
        fors = nf;
        memset(&fors[nfor], 0, sizeof fors[nfor]);
        if (!(fors[nfor].target = parse_exprlist(p, 1)))
            return NULL;
        if (!is_kw(p, TILEC_KW_IN))
            return expected(p, "'in' in a comprehension"), NULL;
        if (check_target(p, fors[nfor].target, "a comprehension") < 0 || advance(p) < 0)
            return NULL;
        if (!(fors[nfor].iter = parse_or(p)))
            return NULL;
        while (is_kw(p, TILEC_KW_IF)) {
            ast_expr_t *c;
            if (advance(p) < 0 || !(c = parse_or(p)) || push_expr(p, &ifs, c) < 0)
                return NULL;
        }
        fors[nfor].nifs = ifs.n;
        fors[nfor].ifs = ifs.v;
        nfor++;
    }
    ast_expr_t *e = new_expr(p, AST_COMP, elt->loc);
    if (e) {
        e->u.comp.bracket = bracket;
        e->u.comp.elt = elt;
        e->u.comp.value = value;
        e->u.comp.nfor = nfor;
        e->u.comp.fors = fors;
    }
    return e;
}

/* Items after an opening bracket up to the closer (not consumed): used for
 * '(' (tuples), '['; `first` is already parsed. */
static int parse_items(parser_t *p, expr_vec_t *vec, int closer, const char *what)
{
    while (is_op(p, TILEC_OP_COMMA)) {
        if (advance(p) < 0)
            return -1;
        if (is_op(p, closer))
            break;
        ast_expr_t *e = parse_star_or_test(p);
        if (!e || push_expr(p, vec, e) < 0)
            return -1;
    }
    if (is_kw(p, TILEC_KW_FOR))
        return comprehension_error(p, 0);
    if (!is_op(p, closer))
        return expected(p, what);
    return 0;
}

/* ---- f-strings ----------------------------------------------------------
 * The lexer checks an f-string like any string and keeps its source text;
 * here it is split into literal parts and `{expr[!conv][:spec]}` fields.
 * Each expression is parsed by a second parser over the same source bytes,
 * so its nodes carry their true positions. */

typedef struct fparts { ast_expr_t **parts; const char **specs; char *convs; int n, cap; } fparts_t;

static int fpush(parser_t *p, fparts_t *f, ast_expr_t *e, const char *spec, char conv)
{
    if (f->n == f->cap) {
        int nc = f->cap ? f->cap * 2 : 8;
        ast_expr_t **np = alloc(p, sizeof *np * (size_t)nc);
        const char **ns = alloc(p, sizeof *ns * (size_t)nc);
        char *nv = alloc(p, (size_t)nc);
        if (!np || !ns || !nv)
            return -1;
        if (f->n) {
            memcpy(np, f->parts, sizeof *np * (size_t)f->n);
            memcpy(ns, f->specs, sizeof *ns * (size_t)f->n);
            memcpy(nv, f->convs, (size_t)f->n);
        }
        f->parts = np;
        f->specs = ns;
        f->convs = nv;
        f->cap = nc;
    }
    f->parts[f->n] = e;
    f->specs[f->n] = spec;
    f->convs[f->n++] = conv;
    return 0;
}

static int flit(parser_t *p, fparts_t *f, const char *s, size_t n, ast_loc_t loc)
{
    ast_expr_t *e;
    char *c;
    if (n == 0)
        return 0;
    if (!(e = new_expr(p, AST_STR, loc)) || !(c = alloc(p, n + 1)))
        return -1;
    memcpy(c, s, n);
    e->u.str.s = c;
    e->u.str.len = n;
    return fpush(p, f, e, NULL, 0);
}

static int parse_test_or_fail(parser_t *q, ast_expr_t **out);

/* Parses source bytes [from, to) of the file as one expression. */
static ast_expr_t *fstring_expr(parser_t *p, size_t from, size_t to, int line, size_t line_start)
{
    parser_t *q = alloc(p, sizeof *q);
    ast_expr_t *e = NULL;
    if (!q)
        return NULL;
    q->a = p->a;
    q->d = p->d;
    q->depth = p->depth;
    q->src_len = p->src_len;
    q->max_bytes = p->max_bytes;
    tilec_lexer_init(&q->lx, p->a, p->d, p->lx.src, to);
    q->lx.pos = from;
    q->lx.line = line;
    q->lx.line_start = line_start;
    q->lx.at_line_start = 0;
    q->lx.prev_end_line = line;
    q->lx.prev_end_col = (int)(from - line_start) + 1;
    q->stmt_col = p->stmt_col;
    if (advance(q) < 0 || parse_test_or_fail(q, &e) < 0)
        return NULL;
    if (q->tok.kind != TILEC_TOK_NEWLINE && q->tok.kind != TILEC_TOK_EOF)
        return expected(q, "'}' after the expression of an f-string field"), NULL;
    return e;
}

/* One f-string token into parts. */
static int fstring_token(parser_t *p, const tilec_token_t *t, fparts_t *f)
{
    const char *src = p->lx.src, *s = t->text, *end = t->text + t->len;
    int raw = 0, line = t->line;
    size_t line_start = (size_t)(t->text - src) - (size_t)(t->col - 1);
    ast_loc_t loc = { t->line, t->col };
    char q;
    size_t qlen;
    while (*s != '\'' && *s != '"') {
        if (*s == 'r' || *s == 'R')
            raw = 1;
        s++;
    }
    q = *s;
    qlen = (s + 2 < end && s[1] == q && s[2] == q) ? 3 : 1;
    s += qlen;
    end -= qlen;
    char *lit = alloc(p, (size_t)(end - s) + 1);
    size_t nl = 0;
    if (!lit)
        return -1;
    while (s < end) {
        char c = *s;
        if (c == '\n') {
            line++;
            line_start = (size_t)(s + 1 - src);
        }
        if (c == '{' && s + 1 < end && s[1] == '{') { lit[nl++] = '{'; s += 2; continue; }
        if (c == '}' && s + 1 < end && s[1] == '}') { lit[nl++] = '}'; s += 2; continue; }
        if (c == '}')
            return perr(p, line, (int)((size_t)(s - src) - line_start) + 1, "single '}' is not allowed in an f-string"), -1;
        if (c == '\\' && !raw && s + 1 < end) {
            char e = s[1];
            lit[nl++] = e == 'n' ? '\n' : e == 't' ? '\t' : e == '\\' ? '\\' : e == '\'' ? '\'' : e == '"' ? '"' : '\\';
            if (e == 'n' || e == 't' || e == '\\' || e == '\'' || e == '"')
                s += 2;
            else
                s++;
            continue;
        }
        if (c != '{') {
            lit[nl++] = c;
            s++;
            continue;
        }
        /* a field */
        if (flit(p, f, lit, nl, loc) < 0)
            return -1;
        nl = 0;
        const char *x = s + 1, *xe;
        int depth = 0;
        char inq = 0;
        for (xe = x; xe < end; xe++) {
            char d = *xe;
            if (inq) {
                if (d == inq) inq = 0;
                continue;
            }
            if (d == '\'' || d == '"') inq = d;
            else if (d == '(' || d == '[' || d == '{') depth++;
            else if ((d == ')' || d == ']' || d == '}') && depth > 0) depth--;
            else if (depth == 0 && (d == '}' || d == ':' || (d == '!' && xe + 1 < end && xe[1] != '='))) break;
            else if (d == '\n')
                return perr(p, line, (int)((size_t)(x - src) - line_start), "an f-string field must fit on one line"), -1;
        }
        if (xe >= end)
            return perr(p, line, (int)((size_t)(s - src) - line_start) + 1, "f-string: expected '}'"), -1;
        ast_expr_t *e = fstring_expr(p, (size_t)(x - src), (size_t)(xe - src), line, line_start);
        if (!e)
            return -1;
        char conv = 0;
        const char *spec = NULL;
        if (*xe == '!') {
            conv = xe + 1 < end ? xe[1] : 0;
            if (conv != 'r' && conv != 's' && conv != 'a')
                return perr(p, line, (int)((size_t)(xe - src) - line_start) + 1,
                            "f-string: the conversion must be !r, !s or !a"), -1;
            xe += 2;
        }
        if (xe < end && *xe == ':') {
            const char *se = xe + 1;
            while (se < end && *se != '}' && *se != '{')
                se++;
            if (se >= end || *se == '{')
                return perr(p, line, (int)((size_t)(xe - src) - line_start) + 1,
                            "f-string: nested fields in a format spec are not supported in tile programs"), -1;
            char *sp = alloc(p, (size_t)(se - xe));
            if (!sp)
                return -1;
            memcpy(sp, xe + 1, (size_t)(se - xe - 1));
            spec = sp;
            xe = se;
        }
        if (xe >= end || *xe != '}')
            return perr(p, line, (int)((size_t)(xe - src) - line_start) + 1, "f-string: expected '}'"), -1;
        if (fpush(p, f, e, spec ? spec : "", conv) < 0)
            return -1;
        s = xe + 1;
    }
    return flit(p, f, lit, nl, loc);
}

/* One or more adjacent string literals, concatenated (in one copy, so a
 * long run of literals stays linear); with an f-string among them, an
 * AST_FSTRING. */
static ast_expr_t *parse_strings(parser_t *p)
{
    ast_loc_t loc = here(p);
    struct piece { const char *s; size_t len; } *pieces = NULL;
    int n = 0, cap = 0, any_f = 0;
    size_t total = 0;
    fparts_t f = { 0 };
    while (p->tok.kind == TILEC_TOK_STR) {
        struct piece *np = grow(p, pieces, n, &cap, sizeof *np);
        if (!np)
            return NULL;
        pieces = np;
        pieces[n].s = p->tok.str;
        pieces[n].len = p->tok.slen;
        total += p->tok.slen;
        n++;
        if (p->tok.fstr || any_f) {
            if (!any_f) {
                /* the plain literals before the first f-string */
                for (int i = 0; i + 1 < n; i++)
                    if (flit(p, &f, pieces[i].s, pieces[i].len, loc) < 0)
                        return NULL;
                any_f = 1;
            }
            if (p->tok.fstr ? fstring_token(p, &p->tok, &f) < 0 : flit(p, &f, p->tok.str, p->tok.slen, loc) < 0)
                return NULL;
        }
        if (advance(p) < 0)
            return NULL;
    }
    if (any_f) {
        ast_expr_t *e = new_expr(p, AST_FSTRING, loc);
        if (e) {
            e->u.fstr.n = f.n;
            e->u.fstr.parts = f.parts;
            e->u.fstr.specs = f.specs;
            e->u.fstr.convs = f.convs;
        }
        return e;
    }
    const char *s = pieces[0].s;
    if (n > 1) {
        char *cat = alloc(p, total + 1);
        if (!cat)
            return NULL;
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            memcpy(cat + off, pieces[i].s, pieces[i].len);
            off += pieces[i].len;
        }
        cat[off] = '\0';
        s = cat;
    }
    ast_expr_t *e = new_expr(p, AST_STR, loc);
    if (e) {
        e->u.str.s = s;
        e->u.str.len = total;
    }
    return e;
}

/* '(' ... ')': parenthesized expression or tuple. */
static ast_expr_t *parse_paren(parser_t *p)
{
    ast_loc_t loc = here(p);
    if (advance(p) < 0)
        return NULL;
    if (is_op(p, TILEC_OP_RPAR)) {
        if (advance(p) < 0)
            return NULL;
        return new_expr(p, AST_TUPLE, loc);
    }
    if (is_kw(p, TILEC_KW_YIELD))
        return unsupported(p, "'yield'"), NULL;
    ast_expr_t *first = parse_star_or_test(p);
    if (!first)
        return NULL;
    if (is_kw(p, TILEC_KW_FOR)) {
        ast_expr_t *g = parse_comp(p, '(', first, NULL);
        if (!g || expect_op(p, TILEC_OP_RPAR, "')' after a generator expression") < 0)
            return NULL;
        return g;
    }
    const char *what = "',' or ')'";
    if (is_op(p, TILEC_OP_RPAR)) {
        if (advance(p) < 0)
            return NULL;
        return first;
    }
    expr_vec_t items = { 0 };
    if (push_expr(p, &items, first) < 0)
        return NULL;
    if (!is_op(p, TILEC_OP_COMMA))
        return expected(p, what), NULL;
    if (parse_items(p, &items, TILEC_OP_RPAR, what) < 0 || advance(p) < 0)
        return NULL;
    ast_expr_t *e = new_expr(p, AST_TUPLE, loc);
    if (e) {
        e->u.seq.n = items.n;
        e->u.seq.items = items.v;
    }
    return e;
}

static ast_expr_t *parse_list(parser_t *p)
{
    ast_loc_t loc = here(p);
    if (advance(p) < 0)
        return NULL;
    expr_vec_t items = { 0 };
    if (!is_op(p, TILEC_OP_RSQB)) {
        ast_expr_t *first = parse_star_or_test(p);
        if (!first)
            return NULL;
        if (is_kw(p, TILEC_KW_FOR)) {
            ast_expr_t *c = parse_comp(p, '[', first, NULL);
            if (!c || expect_op(p, TILEC_OP_RSQB, "']' after a list comprehension") < 0)
                return NULL;
            return c;
        }
        if (push_expr(p, &items, first) < 0)
            return NULL;
        if (parse_items(p, &items, TILEC_OP_RSQB, "',' or ']' in list") < 0)
            return NULL;
    }
    if (advance(p) < 0)
        return NULL;
    ast_expr_t *e = new_expr(p, AST_LIST, loc);
    if (e) {
        e->u.seq.n = items.n;
        e->u.seq.items = items.v;
    }
    return e;
}

static ast_expr_t *parse_dict(parser_t *p)
{
    ast_loc_t loc = here(p);
    if (advance(p) < 0)
        return NULL;
    expr_vec_t items = { 0 };
    while (!is_op(p, TILEC_OP_RBRACE)) {
        if (is_op(p, TILEC_OP_DSTAR))
            return unsupported(p, "'**' unpacking in a dict"), NULL;
        ast_expr_t *k = parse_test(p);
        if (!k)
            return NULL;
        if (items.n == 0 && (is_op(p, TILEC_OP_COMMA) || is_op(p, TILEC_OP_RBRACE)))
            return perr(p, k->loc.line, k->loc.col, "set literals are not supported in tile programs"), NULL;
        if (is_kw(p, TILEC_KW_FOR))
            return comprehension_error(p, 1), NULL;
        if (expect_op(p, TILEC_OP_COLON, "':' after dict key") < 0)
            return NULL;
        ast_expr_t *v = parse_test(p);
        if (!v)
            return NULL;
        if (is_kw(p, TILEC_KW_FOR) && items.n == 0) {
            ast_expr_t *c = parse_comp(p, '{', k, v);
            if (!c || expect_op(p, TILEC_OP_RBRACE, "'}' after a dict comprehension") < 0)
                return NULL;
            return c;
        }
        if (push_expr(p, &items, k) < 0 || push_expr(p, &items, v) < 0)
            return NULL;
        if (is_kw(p, TILEC_KW_FOR))
            return comprehension_error(p, 0), NULL;
        if (is_op(p, TILEC_OP_COMMA)) {
            if (advance(p) < 0)
                return NULL;
        } else if (!is_op(p, TILEC_OP_RBRACE)) {
            return expected(p, "',' or '}' in dict"), NULL;
        }
    }
    if (advance(p) < 0)
        return NULL;
    ast_expr_t *e = new_expr(p, AST_DICT, loc);
    if (e) {
        e->u.seq.n = items.n;
        e->u.seq.items = items.v;
    }
    return e;
}

static ast_expr_t *parse_atom(parser_t *p)
{
    ast_loc_t loc = here(p);
    ast_expr_t *e;
    switch (p->tok.kind) {
    case TILEC_TOK_NAME:
        switch (p->tok.kw) {
        case TILEC_KW_NONE_:
            e = new_expr(p, AST_NAME, loc);
            if (!e || !(e->u.name = tok_name(p)))
                return NULL;
            break;
        case TILEC_KW_TRUE: case TILEC_KW_FALSE:
            e = new_expr(p, AST_BOOL, loc);
            if (!e)
                return NULL;
            e->u.ival = p->tok.kw == TILEC_KW_TRUE;
            break;
        case TILEC_KW_NONE:
            e = new_expr(p, AST_NONE, loc);
            if (!e)
                return NULL;
            break;
        case TILEC_KW_LAMBDA:
            return unsupported(p, "'lambda'"), NULL;
        case TILEC_KW_AWAIT:
            return unsupported(p, "'await'"), NULL;
        case TILEC_KW_YIELD:
            return unsupported(p, "'yield'"), NULL;
        default:
            return expected(p, "expression"), NULL;
        }
        return advance(p) < 0 ? NULL : e;
    case TILEC_TOK_INT:
        e = new_expr(p, AST_INT, loc);
        if (!e)
            return NULL;
        e->u.ival = p->tok.ival;
        return advance(p) < 0 ? NULL : e;
    case TILEC_TOK_FLOAT:
        e = new_expr(p, AST_FLOAT, loc);
        if (!e)
            return NULL;
        e->u.fval = p->tok.fval;
        return advance(p) < 0 ? NULL : e;
    case TILEC_TOK_STR:
        return parse_strings(p);
    case TILEC_TOK_OP:
        if (p->tok.op == TILEC_OP_LPAR || p->tok.op == TILEC_OP_LSQB || p->tok.op == TILEC_OP_LBRACE) {
            if (enter(p) < 0)
                return NULL;
            e = p->tok.op == TILEC_OP_LPAR ? parse_paren(p) : p->tok.op == TILEC_OP_LSQB ? parse_list(p) : parse_dict(p);
            leave(p);
            return e;
        }
        if (p->tok.op == TILEC_OP_ELLIPSIS) {
            /* `...` as a value (Callable[..., Any] in an annotation, x[..., 0]) reads the name
             * Ellipsis, which the evaluator knows but does not compute with */
            e = new_expr(p, AST_NAME, loc);
            if (!e)
                return NULL;
            e->u.name = "Ellipsis";
            if (advance(p) < 0)
                return NULL;
            return e;
        }
        return expected(p, "expression"), NULL;
    default:
        return expected(p, "expression"), NULL;
    }
}

/* 'lambda' [NAME ['=' test] (',' NAME ['=' test])*] ':' test.  The lambda
 * becomes a def named "<lambda>" whose body returns the expression, so the
 * evaluator calls it like any other function. */
static ast_expr_t *parse_lambda(parser_t *p)
{
    ast_loc_t loc = here(p);
    ast_param_t *params = NULL;
    int n = 0, cap = 0;
    if (enter(p) < 0 || advance(p) < 0)
        return NULL;
    while (!is_op(p, TILEC_OP_COLON)) {
        if (is_op(p, TILEC_OP_STAR) || is_op(p, TILEC_OP_DSTAR))
            return unsupported(p, "'*args' and '**kwargs' in a lambda"), NULL;
        if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
            return expected(p, "a parameter name or ':' in 'lambda'"), NULL;
        ast_param_t *np = grow(p, params, n, &cap, sizeof *np);
        if (!np)
            return NULL;
        params = np;
        memset(&params[n], 0, sizeof params[n]);
        params[n].loc = here(p);
        if (!(params[n].name = tok_name(p)) || advance(p) < 0)
            return NULL;
        if (is_op(p, TILEC_OP_ASSIGN) && (advance(p) < 0 || !(params[n].dflt = parse_test(p))))
            return NULL;
        n++;
        if (is_op(p, TILEC_OP_COMMA)) {
            if (advance(p) < 0)
                return NULL;
        } else if (!is_op(p, TILEC_OP_COLON)) {
            return expected(p, "':' after the parameters of 'lambda'"), NULL;
        }
    }
    if (advance(p) < 0)
        return NULL;
    ast_expr_t *body = parse_test(p);
    if (!body)
        return NULL;
    leave(p);
    ast_stmt_t *d = new_stmt(p, AST_S_DEF, loc), *r = new_stmt(p, AST_S_RETURN, body->loc);
    ast_stmt_t **blk = alloc(p, sizeof *blk);
    ast_expr_t *e = new_expr(p, AST_LAMBDA, loc);
    if (!d || !r || !blk || !e)
        return NULL;
    r->u.ret.value = body;
    blk[0] = r;
    d->u.def.name = "<lambda>";
    d->u.def.nparams = n;
    d->u.def.params = params;
    d->u.def.body.n = 1;
    d->u.def.body.s = blk;
    e->u.lam.def = d;
    return e;
}

/* '(' args ')' after func; tok is '('. */
static ast_expr_t *parse_call(parser_t *p, ast_expr_t *func, ast_loc_t loc)
{
    if (enter(p) < 0 || advance(p) < 0)
        return NULL;
    expr_vec_t args = { 0 };
    ast_keyword_t *kw = NULL;
    int nkw = 0, kwcap = 0;
    while (!is_op(p, TILEC_OP_RPAR)) {
        if (is_op(p, TILEC_OP_DSTAR))
            return unsupported(p, "'**' argument unpacking"), NULL;
        if (is_op(p, TILEC_OP_STAR)) {
            ast_expr_t *s = parse_star_or_test(p);
            if (!s || push_expr(p, &args, s) < 0)
                return NULL;
        } else {
            ast_expr_t *e = parse_test(p);
            if (!e)
                return NULL;
            if (is_kw(p, TILEC_KW_FOR) && !(e = parse_comp(p, '(', e, NULL)))   /* f(x for x in s) */
                return NULL;
            if (is_op(p, TILEC_OP_ASSIGN)) {
                if (e->kind != AST_NAME)
                    return perr(p, p->tok.line, p->tok.col,
                                "expected a parameter name before '=' in keyword argument"), NULL;
                if (advance(p) < 0)
                    return NULL;
                ast_expr_t *v = parse_test(p);
                if (!v)
                    return NULL;
                ast_keyword_t *nk = grow(p, kw, nkw, &kwcap, sizeof *nk);
                if (!nk)
                    return NULL;
                kw = nk;
                kw[nkw].name = e->u.name;
                kw[nkw].value = v;
                kw[nkw].loc = e->loc;
                nkw++;
            } else {
                if (nkw > 0)
                    return perr(p, e->loc.line, e->loc.col, "positional argument follows keyword argument"), NULL;
                if (push_expr(p, &args, e) < 0)
                    return NULL;
            }
        }
        if (is_op(p, TILEC_OP_COMMA)) {
            if (advance(p) < 0)
                return NULL;
        } else if (!is_op(p, TILEC_OP_RPAR)) {
            return expected(p, "',' or ')' after argument"), NULL;
        }
    }
    leave(p);
    if (advance(p) < 0)
        return NULL;
    ast_expr_t *c = new_expr(p, AST_CALL, loc);
    if (c) {
        c->u.call.func = func;
        c->u.call.nargs = args.n;
        c->u.call.args = args.v;
        c->u.call.nkw = nkw;
        c->u.call.kw = kw;
    }
    return c;
}

/* One subscript item: test, slice or starred. */
static ast_expr_t *parse_subscript_item(parser_t *p)
{
    if (is_op(p, TILEC_OP_STAR))
        return parse_star_or_test(p);
    ast_loc_t loc = here(p);
    ast_expr_t *lo = NULL, *hi = NULL, *step = NULL;
    if (!is_op(p, TILEC_OP_COLON)) {
        lo = parse_test(p);
        if (!lo || !is_op(p, TILEC_OP_COLON))
            return lo;
    }
    if (advance(p) < 0)
        return NULL;
    if (!is_op(p, TILEC_OP_COLON) && !is_op(p, TILEC_OP_COMMA) && !is_op(p, TILEC_OP_RSQB)) {
        if (!(hi = parse_test(p)))
            return NULL;
    }
    if (is_op(p, TILEC_OP_COLON)) {
        if (advance(p) < 0)
            return NULL;
        if (!is_op(p, TILEC_OP_COMMA) && !is_op(p, TILEC_OP_RSQB)) {
            if (!(step = parse_test(p)))
                return NULL;
        }
    }
    ast_expr_t *e = new_expr(p, AST_SLICE, loc);
    if (e) {
        e->u.slice.lo = lo;
        e->u.slice.hi = hi;
        e->u.slice.step = step;
    }
    return e;
}

static ast_expr_t *parse_subscript(parser_t *p, ast_expr_t *value)
{
    ast_loc_t loc = here(p);
    if (enter(p) < 0 || advance(p) < 0)
        return NULL;
    if (is_op(p, TILEC_OP_RSQB))
        return expected(p, "index or slice inside '[]'"), NULL;
    expr_vec_t items = { 0 };
    for (;;) {
        ast_expr_t *it = parse_subscript_item(p);
        if (!it || push_expr(p, &items, it) < 0)
            return NULL;
        if (is_op(p, TILEC_OP_COMMA)) {
            if (advance(p) < 0)
                return NULL;
            if (is_op(p, TILEC_OP_RSQB))
                break;
        } else if (is_op(p, TILEC_OP_RSQB)) {
            break;
        } else {
            return expected(p, "',' or ']' in subscript"), NULL;
        }
    }
    leave(p);
    if (advance(p) < 0)
        return NULL;
    ast_expr_t *e = new_expr(p, AST_SUBSCRIPT, loc);
    if (e) {
        e->u.sub.value = value;
        e->u.sub.n = items.n;
        e->u.sub.items = items.v;
    }
    return e;
}

static ast_expr_t *parse_primary(parser_t *p)
{
    ast_loc_t start = here(p);
    if (is_kw(p, TILEC_KW_AWAIT))
        return unsupported(p, "'await'"), NULL;
    ast_expr_t *e = parse_atom(p);
    while (e) {
        if (is_op(p, TILEC_OP_DOT)) {
            if (advance(p) < 0)
                return NULL;
            if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
                return expected(p, "attribute name after '.'"), NULL;
            ast_expr_t *a = new_expr(p, AST_ATTR, here(p));
            if (!a || !(a->u.attr.name = tok_name(p)) || advance(p) < 0)
                return NULL;
            a->u.attr.value = e;
            e = a;
        } else if (is_op(p, TILEC_OP_LPAR)) {
            e = parse_call(p, e, start);
        } else if (is_op(p, TILEC_OP_LSQB)) {
            e = parse_subscript(p, e);
        } else {
            break;
        }
    }
    return e;
}

static ast_expr_t *make_binop(parser_t *p, ast_expr_kind_t kind, int op, ast_loc_t loc, ast_expr_t *a, ast_expr_t *b)
{
    ast_expr_t *e = new_expr(p, kind, loc);
    if (e) {
        e->u.bin.op = op;
        e->u.bin.a = a;
        e->u.bin.b = b;
    }
    return e;
}

static ast_expr_t *parse_power(parser_t *p)
{
    ast_expr_t *a = parse_primary(p);
    if (!a || !is_op(p, TILEC_OP_DSTAR))
        return a;
    ast_loc_t loc = here(p);
    if (enter(p) < 0 || advance(p) < 0)
        return NULL;
    ast_expr_t *b = parse_factor(p);
    leave(p);
    if (!b)
        return NULL;
    return make_binop(p, AST_BINOP, AST_OP_POW, loc, a, b);
}

static ast_expr_t *parse_factor(parser_t *p)
{
    int op = 0;
    if (is_op(p, TILEC_OP_MINUS)) op = '-';
    else if (is_op(p, TILEC_OP_PLUS)) op = '+';
    else if (is_op(p, TILEC_OP_TILDE)) op = '~';
    if (!op)
        return parse_power(p);
    ast_loc_t loc = here(p);
    if (enter(p) < 0 || advance(p) < 0)
        return NULL;
    ast_expr_t *a = parse_factor(p);
    leave(p);
    if (!a)
        return NULL;
    ast_expr_t *e = new_expr(p, AST_UNARY, loc);
    if (e) {
        e->u.un.op = op;
        e->u.un.a = a;
    }
    return e;
}

/* Binary operator of the current token and its precedence (0 = none). */
static int binop_of(const parser_t *p, int *prec)
{
    if (p->tok.kind != TILEC_TOK_OP)
        return 0;
    switch (p->tok.op) {
    case TILEC_OP_PIPE: *prec = 1; return AST_OP_BITOR;
    case TILEC_OP_CARET: *prec = 2; return AST_OP_BITXOR;
    case TILEC_OP_AMP: *prec = 3; return AST_OP_BITAND;
    case TILEC_OP_LSHIFT: *prec = 4; return AST_OP_LSHIFT;
    case TILEC_OP_RSHIFT: *prec = 4; return AST_OP_RSHIFT;
    case TILEC_OP_PLUS: *prec = 5; return '+';
    case TILEC_OP_MINUS: *prec = 5; return '-';
    case TILEC_OP_STAR: *prec = 6; return '*';
    case TILEC_OP_SLASH: *prec = 6; return '/';
    case TILEC_OP_DSLASH: *prec = 6; return AST_OP_FLOORDIV;
    case TILEC_OP_PERCENT: *prec = 6; return '%';
    case TILEC_OP_AT: *prec = 6; return '@';
    default: return 0;
    }
}

/* Precedence climbing; recursion only goes up the 6 levels. */
static ast_expr_t *parse_binary(parser_t *p, int min_prec)
{
    ast_expr_t *lhs = parse_factor(p);
    while (lhs) {
        int prec = 0, op = binop_of(p, &prec);
        if (!op || prec < min_prec)
            break;
        ast_loc_t loc = here(p);
        if (advance(p) < 0)
            return NULL;
        ast_expr_t *rhs = parse_binary(p, prec + 1);
        if (!rhs)
            return NULL;
        lhs = make_binop(p, AST_BINOP, op, loc, lhs, rhs);
    }
    return lhs;
}

/* Comparison operator at the current token (consumed), or 0 if none. */
static int parse_compop(parser_t *p, int *op)
{
    *op = 0;
    if (p->tok.kind == TILEC_TOK_OP) {
        switch (p->tok.op) {
        case TILEC_OP_LT: *op = AST_OP_LT; break;
        case TILEC_OP_GT: *op = AST_OP_GT; break;
        case TILEC_OP_LE: *op = AST_OP_LE; break;
        case TILEC_OP_GE: *op = AST_OP_GE; break;
        case TILEC_OP_EQ: *op = AST_OP_EQ; break;
        case TILEC_OP_NE: *op = AST_OP_NE; break;
        default: return 0;
        }
        return advance(p);
    }
    if (is_kw(p, TILEC_KW_IN)) {
        *op = AST_OP_IN;
        return advance(p);
    }
    if (is_kw(p, TILEC_KW_NOT)) {
        if (advance(p) < 0)
            return -1;
        if (!is_kw(p, TILEC_KW_IN))
            return expected(p, "'in' after 'not' in comparison");
        *op = AST_OP_NOTIN;
        return advance(p);
    }
    if (is_kw(p, TILEC_KW_IS)) {
        if (advance(p) < 0)
            return -1;
        *op = AST_OP_IS;
        if (is_kw(p, TILEC_KW_NOT)) {
            *op = AST_OP_ISNOT;
            return advance(p);
        }
    }
    return 0;
}

static ast_expr_t *parse_comparison(parser_t *p)
{
    ast_expr_t *a = parse_binary(p, 0);
    if (!a)
        return NULL;
    ast_loc_t loc = here(p);
    int op;
    if (parse_compop(p, &op) < 0)
        return NULL;
    if (!op)
        return a;
    expr_vec_t operands = { 0 };
    int *ops = NULL, nops = 0, opcap = 0;
    if (push_expr(p, &operands, a) < 0)
        return NULL;
    while (op) {
        int *no = grow(p, ops, nops, &opcap, sizeof *no);
        if (!no)
            return NULL;
        ops = no;
        ops[nops++] = op;
        ast_expr_t *b = parse_binary(p, 0);
        if (!b || push_expr(p, &operands, b) < 0)
            return NULL;
        if (parse_compop(p, &op) < 0)
            return NULL;
    }
    ast_expr_t *e = new_expr(p, AST_COMPARE, loc);
    if (e) {
        e->u.cmp.n = operands.n;
        e->u.cmp.operands = operands.v;
        e->u.cmp.ops = ops;
    }
    return e;
}

static ast_expr_t *parse_not(parser_t *p)
{
    if (!is_kw(p, TILEC_KW_NOT))
        return parse_comparison(p);
    ast_loc_t loc = here(p);
    if (enter(p) < 0 || advance(p) < 0)
        return NULL;
    ast_expr_t *a = parse_not(p);
    leave(p);
    if (!a)
        return NULL;
    ast_expr_t *e = new_expr(p, AST_UNARY, loc);
    if (e) {
        e->u.un.op = AST_OP_NOT;
        e->u.un.a = a;
    }
    return e;
}

static ast_expr_t *parse_and(parser_t *p)
{
    ast_expr_t *e = parse_not(p);
    while (e && is_kw(p, TILEC_KW_AND)) {
        ast_loc_t loc = here(p);
        if (advance(p) < 0)
            return NULL;
        ast_expr_t *b = parse_not(p);
        if (!b)
            return NULL;
        e = make_binop(p, AST_BOOLOP, AST_OP_AND, loc, e, b);
    }
    return e;
}

static ast_expr_t *parse_or(parser_t *p)
{
    ast_expr_t *e = parse_and(p);
    while (e && is_kw(p, TILEC_KW_OR)) {
        ast_loc_t loc = here(p);
        if (advance(p) < 0)
            return NULL;
        ast_expr_t *b = parse_and(p);
        if (!b)
            return NULL;
        e = make_binop(p, AST_BOOLOP, AST_OP_OR, loc, e, b);
    }
    return e;
}

static ast_expr_t *parse_test(parser_t *p)
{
    if (is_kw(p, TILEC_KW_LAMBDA))
        return parse_lambda(p);
    ast_expr_t *a = parse_or(p);
    if (!a || !is_kw(p, TILEC_KW_IF))
        return a;
    if (enter(p) < 0 || advance(p) < 0)
        return NULL;
    ast_expr_t *cond = parse_or(p), *b = NULL;
    if (cond) {
        if (!is_kw(p, TILEC_KW_ELSE))
            return expected(p, "'else' in conditional expression"), NULL;
        if (advance(p) < 0)
            return NULL;
        b = parse_test(p);
    }
    leave(p);
    if (!b)
        return NULL;
    ast_expr_t *e = new_expr(p, AST_IFEXP, a->loc);
    if (e) {
        e->u.ifexp.cond = cond;
        e->u.ifexp.a = a;
        e->u.ifexp.b = b;
    }
    return e;
}

static int parse_test_or_fail(parser_t *q, ast_expr_t **out)
{
    *out = parse_test(q);
    return *out ? 0 : -1;
}

/* exprlist: star_or_test (',' star_or_test)* [','] — a tuple when a comma
 * appears.  With `targets`, items are parsed at the bitwise-or level so
 * that `for x in ...` stops before 'in'. */
static ast_expr_t *parse_exprlist(parser_t *p, int targets)
{
    ast_expr_t *first = targets && !is_op(p, TILEC_OP_STAR) ? parse_binary(p, 0) : parse_star_or_test(p);
    if (!first || !is_op(p, TILEC_OP_COMMA))
        return first;
    expr_vec_t items = { 0 };
    if (push_expr(p, &items, first) < 0)
        return NULL;
    while (is_op(p, TILEC_OP_COMMA)) {
        if (advance(p) < 0)
            return NULL;
        if (!starts_expr(p))
            break;
        ast_expr_t *e = targets && !is_op(p, TILEC_OP_STAR) ? parse_binary(p, 0) : parse_star_or_test(p);
        if (!e || push_expr(p, &items, e) < 0)
            return NULL;
    }
    ast_expr_t *t = new_expr(p, AST_TUPLE, first->loc);
    if (t) {
        t->u.seq.n = items.n;
        t->u.seq.items = items.v;
    }
    return t;
}

/* ---- targets -------------------------------------------------------------- */

static const char *expr_what(const ast_expr_t *e)
{
    switch (e->kind) {
    case AST_INT: case AST_FLOAT: case AST_STR: return "a literal";
    case AST_BOOL: return e->u.ival ? "True" : "False";
    case AST_NONE: return "None";
    case AST_CALL: return "a function call";
    case AST_COMPARE: return "a comparison";
    case AST_IFEXP: return "a conditional expression";
    case AST_DICT: return "a dict literal";
    case AST_SLICE: return "a slice";
    default: return "an expression";
    }
}

/* Checks that e can be assigned to (bounded recursion: tuples nest no deeper
 * than brackets do). */
static int check_target(parser_t *p, const ast_expr_t *e, const char *ctx)
{
    switch (e->kind) {
    case AST_NAME: case AST_ATTR: case AST_SUBSCRIPT:
        return 0;
    case AST_TUPLE: case AST_LIST:
        if (e->kind == AST_TUPLE && e->u.seq.n == 0)
            return perr(p, e->loc.line, e->loc.col, "cannot assign to () in %s", ctx);
        for (int i = 0; i < e->u.seq.n; i++)
            if (check_target(p, e->u.seq.items[i], ctx) < 0)
                return -1;
        return 0;
    case AST_STARRED:
        return perr(p, e->loc.line, e->loc.col, "starred targets are not supported in tile programs");
    default:
        return perr(p, e->loc.line, e->loc.col, "cannot assign to %s in %s", expr_what(e), ctx);
    }
}

static int check_single_target(parser_t *p, const ast_expr_t *e, const char *ctx)
{
    if (e->kind == AST_NAME || e->kind == AST_ATTR || e->kind == AST_SUBSCRIPT)
        return 0;
    if (e->kind == AST_TUPLE || e->kind == AST_LIST)
        return perr(p, e->loc.line, e->loc.col, "only a single target (not a tuple or list) is allowed in %s", ctx);
    return perr(p, e->loc.line, e->loc.col, "cannot assign to %s in %s", expr_what(e), ctx);
}

/* ---- statements ----------------------------------------------------------- */

typedef struct stmt_vec { ast_stmt_t **v; int n, cap; } stmt_vec_t;

static int push_stmt(parser_t *p, stmt_vec_t *vec, ast_stmt_t *s)
{
    ast_stmt_t **nv = grow(p, vec->v, vec->n, &vec->cap, sizeof *nv);
    if (!nv)
        return -1;
    vec->v = nv;
    vec->v[vec->n++] = s;
    return 0;
}

static int parse_statement(parser_t *p, stmt_vec_t *out);
static int parse_simple_stmts(parser_t *p, stmt_vec_t *out);

/* ':' has been consumed.  what/line name the header for the message about a
 * missing indented block. */
static int parse_block(parser_t *p, ast_block_t *blk, const char *what, int line)
{
    stmt_vec_t vec = { 0 };
    if (enter(p) < 0)
        return -1;
    if (p->tok.kind != TILEC_TOK_NEWLINE) {
        if (is_kw(p, TILEC_KW_IF) || is_kw(p, TILEC_KW_FOR) || is_kw(p, TILEC_KW_WHILE) ||
            is_kw(p, TILEC_KW_WITH) || is_kw(p, TILEC_KW_DEF) || is_op(p, TILEC_OP_AT))
            return expected(p, "a simple statement on the same line as ':' (a compound statement must start a new line)");
        if (parse_simple_stmts(p, &vec) < 0)
            return -1;
    } else {
        if (advance(p) < 0)
            return -1;
        if (p->tok.kind != TILEC_TOK_INDENT) {
            char msg[96];
            snprintf(msg, sizeof msg, "an indented block after %s on line %d", what, line);
            return expected(p, msg);
        }
        if (advance(p) < 0)
            return -1;
        while (p->tok.kind != TILEC_TOK_DEDENT && p->tok.kind != TILEC_TOK_EOF)
            if (parse_statement(p, &vec) < 0)
                return -1;
        if (p->tok.kind == TILEC_TOK_DEDENT && advance(p) < 0)
            return -1;
    }
    leave(p);
    blk->n = vec.n;
    blk->s = vec.v;
    return 0;
}

static int expect_colon(parser_t *p, const char *what)
{
    return expect_op(p, TILEC_OP_COLON, what);
}

static ast_stmt_t *parse_if(parser_t *p)
{
    ast_stmt_t *top = NULL, *cur = NULL;
    /* 'if' then any 'elif's: a chain of IFs, each in the previous orelse. */
    do {
        ast_loc_t loc = here(p);
        int line = p->tok.line;
        int is_elif = is_kw(p, TILEC_KW_ELIF);
        ast_stmt_t *s = new_stmt(p, AST_S_IF, loc);
        if (!s || advance(p) < 0)
            return NULL;
        if (!(s->u.cond.cond = parse_test(p)))
            return NULL;
        if (expect_colon(p, is_elif ? "':' after elif condition" : "':' after if condition") < 0)
            return NULL;
        if (parse_block(p, &s->u.cond.body, is_elif ? "'elif' statement" : "'if' statement", line) < 0)
            return NULL;
        if (!top) {
            top = s;
        } else {
            ast_stmt_t **one = alloc(p, sizeof *one);
            if (!one)
                return NULL;
            one[0] = s;
            cur->u.cond.orelse.n = 1;
            cur->u.cond.orelse.s = one;
        }
        cur = s;
    } while (is_kw(p, TILEC_KW_ELIF));
    if (is_kw(p, TILEC_KW_ELSE)) {
        int line = p->tok.line;
        if (advance(p) < 0 || expect_colon(p, "':' after 'else'") < 0)
            return NULL;
        if (parse_block(p, &cur->u.cond.orelse, "'else' statement", line) < 0)
            return NULL;
    }
    return top;
}

static int reject_loop_else(parser_t *p, const char *loop)
{
    if (!is_kw(p, TILEC_KW_ELSE))
        return 0;
    return perr(p, p->tok.line, p->tok.col, "'else' on a '%s' loop is not supported in tile programs", loop);
}

static ast_stmt_t *parse_for(parser_t *p)
{
    ast_stmt_t *s = new_stmt(p, AST_S_FOR, here(p));
    int line = p->tok.line;
    if (!s || advance(p) < 0)
        return NULL;
    if (!(s->u.loop.target = parse_exprlist(p, 1)))
        return NULL;
    if (!is_kw(p, TILEC_KW_IN))
        return expected(p, "'in' after for loop target"), NULL;
    if (check_target(p, s->u.loop.target, "a for loop") < 0 || advance(p) < 0)
        return NULL;
    if (!(s->u.loop.iter = parse_exprlist(p, 0)))
        return NULL;
    if (expect_colon(p, "':' after for clause") < 0)
        return NULL;
    if (parse_block(p, &s->u.loop.body, "'for' statement", line) < 0)
        return NULL;
    if (reject_loop_else(p, "for") < 0)
        return NULL;
    return s;
}

static ast_stmt_t *parse_while(parser_t *p)
{
    ast_stmt_t *s = new_stmt(p, AST_S_WHILE, here(p));
    int line = p->tok.line;
    if (!s || advance(p) < 0)
        return NULL;
    if (!(s->u.wloop.cond = parse_test(p)))
        return NULL;
    if (expect_colon(p, "':' after while condition") < 0)
        return NULL;
    if (parse_block(p, &s->u.wloop.body, "'while' statement", line) < 0)
        return NULL;
    if (reject_loop_else(p, "while") < 0)
        return NULL;
    return s;
}

static ast_stmt_t *parse_with(parser_t *p)
{
    ast_stmt_t *s = new_stmt(p, AST_S_WITH, here(p));
    int line = p->tok.line;
    if (!s || advance(p) < 0)
        return NULL;
    if (!(s->u.with.ctx = parse_test(p)))
        return NULL;
    if (is_op(p, TILEC_OP_COMMA))
        return unsupported(p, "more than one context manager in a 'with' statement"), NULL;
    if (is_kw(p, TILEC_KW_AS)) {
        if (advance(p) < 0)
            return NULL;
        ast_expr_t *t = parse_exprlist(p, 1);
        if (!t)
            return NULL;
        /* `as x, ctx2` or `as x, y as z`: Python's several context managers */
        if (is_kw(p, TILEC_KW_AS))
            return unsupported(p, "more than one context manager in a 'with' statement"), NULL;
        for (int i = 0; t->kind == AST_TUPLE && i < t->u.seq.n; i++) {
            ast_expr_kind_t k = t->u.seq.items[i]->kind;
            if (k != AST_NAME && k != AST_ATTR && k != AST_SUBSCRIPT && k != AST_TUPLE && k != AST_LIST &&
                k != AST_STARRED)
                return perr(p, t->u.seq.items[i]->loc.line, t->u.seq.items[i]->loc.col,
                            "more than one context manager in a 'with' statement is not supported in tile programs"),
                       NULL;
        }
        if (check_target(p, t, "a with statement") < 0)
            return NULL;
        s->u.with.target = t;
    }
    if (expect_colon(p, s->u.with.target ? "':' after with target" : "'as' or ':' after with item") < 0)
        return NULL;
    if (parse_block(p, &s->u.with.body, "'with' statement", line) < 0)
        return NULL;
    return s;
}

static int parse_params(parser_t *p, ast_stmt_t *s)
{
    ast_param_t *params = NULL;
    int n = 0, cap = 0, seen_default = 0;
    while (!is_op(p, TILEC_OP_RPAR)) {
        if (is_op(p, TILEC_OP_STAR))
            return unsupported(p, "'*args' (and keyword-only parameters after '*')");
        if (is_op(p, TILEC_OP_DSTAR))
            return unsupported(p, "'**kwargs'");
        if (is_op(p, TILEC_OP_SLASH))
            return unsupported(p, "the positional-only marker '/'");
        if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
            return expected(p, "parameter name");
        ast_param_t *np = grow(p, params, n, &cap, sizeof *np);
        if (!np)
            return -1;
        params = np;
        ast_param_t *pm = &params[n++];
        pm->loc = here(p);
        if (!(pm->name = tok_name(p)) || advance(p) < 0)
            return -1;
        if (is_op(p, TILEC_OP_COLON)) {
            if (advance(p) < 0 || !(pm->annotation = parse_test(p)))
                return -1;
        }
        if (is_op(p, TILEC_OP_ASSIGN)) {
            if (advance(p) < 0 || !(pm->dflt = parse_test(p)))
                return -1;
            seen_default = 1;
        } else if (seen_default) {
            return perr(p, pm->loc.line, pm->loc.col, "parameter '%s' without a default follows a parameter with a default",
                        pm->name);
        }
        if (is_op(p, TILEC_OP_COMMA)) {
            if (advance(p) < 0)
                return -1;
        } else if (!is_op(p, TILEC_OP_RPAR)) {
            return expected(p, "',' or ')' in parameter list");
        }
    }
    s->u.def.nparams = n;
    s->u.def.params = params;
    return 0;
}

static ast_stmt_t *parse_def(parser_t *p, expr_vec_t *decorators, ast_loc_t loc)
{
    ast_stmt_t *s = new_stmt(p, AST_S_DEF, loc);
    int line = p->tok.line;
    if (!s || advance(p) < 0)
        return NULL;
    if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
        return expected(p, "function name after 'def'"), NULL;
    if (!(s->u.def.name = tok_name(p)) || advance(p) < 0)
        return NULL;
    if (expect_op(p, TILEC_OP_LPAR, "'(' after function name") < 0)
        return NULL;
    if (parse_params(p, s) < 0 || advance(p) < 0)
        return NULL;
    if (is_op(p, TILEC_OP_ARROW)) {
        if (advance(p) < 0 || !parse_test(p)) /* return annotation: parsed, ignored */
            return NULL;
    }
    if (expect_colon(p, "':' after function signature") < 0)
        return NULL;
    if (parse_block(p, &s->u.def.body, "function definition", line) < 0)
        return NULL;
    s->u.def.ndecorators = decorators ? decorators->n : 0;
    s->u.def.decorators = decorators ? decorators->v : NULL;
    return s;
}

static ast_stmt_t *parse_decorated(parser_t *p)
{
    ast_loc_t loc = here(p);
    expr_vec_t decs = { 0 };
    while (is_op(p, TILEC_OP_AT)) {
        if (advance(p) < 0)
            return NULL;
        ast_expr_t *e = parse_test(p);
        if (!e || push_expr(p, &decs, e) < 0)
            return NULL;
        if (p->tok.kind != TILEC_TOK_NEWLINE)
            return expected(p, "NEWLINE after decorator"), NULL;
        if (advance(p) < 0)
            return NULL;
    }
    if (is_kw(p, TILEC_KW_CLASS))
        return unsupported(p, "'class'"), NULL;
    if (is_kw(p, TILEC_KW_ASYNC))
        return unsupported(p, "'async'"), NULL;
    if (!is_kw(p, TILEC_KW_DEF))
        return expected(p, "'def' after decorator"), NULL;
    return parse_def(p, &decs, loc);
}

/* dotted name: NAME ('.' NAME)*, as one arena string.  The tokens lie in
 * one stretch of source with only blanks and backslash-newlines between
 * them (no comment can sit inside), so the name is that stretch filtered. */
static const char *parse_dotted(parser_t *p, const char *what)
{
    if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
        return expected(p, what), NULL;
    const char *start = p->tok.text, *end = p->tok.text + p->tok.len;
    if (advance(p) < 0)
        return NULL;
    while (is_op(p, TILEC_OP_DOT)) {
        if (advance(p) < 0)
            return NULL;
        if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
            return expected(p, "name after '.' in module path"), NULL;
        end = p->tok.text + p->tok.len;
        if (advance(p) < 0)
            return NULL;
    }
    char *s = alloc(p, (size_t)(end - start) + 1);
    if (!s)
        return NULL;
    size_t n = 0;
    for (const char *c = start; c < end; c++)
        if (*c == '.' || *c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))
            s[n++] = *c;
    s[n] = '\0';
    return s;
}

static int parse_as_name(parser_t *p, ast_import_name_t *in)
{
    if (!is_kw(p, TILEC_KW_AS))
        return 0;
    if (advance(p) < 0)
        return -1;
    if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
        return expected(p, "name after 'as'");
    if (!(in->asname = tok_name(p)))
        return -1;
    return advance(p);
}

static ast_stmt_t *parse_import(parser_t *p)
{
    ast_stmt_t *s = new_stmt(p, AST_S_IMPORT, here(p));
    int is_from = is_kw(p, TILEC_KW_FROM);
    ast_import_name_t *names = NULL;
    int n = 0, cap = 0, paren = 0;
    if (!s || advance(p) < 0)
        return NULL;
    if (is_from) {
        if (is_op(p, TILEC_OP_DOT) || is_op(p, TILEC_OP_ELLIPSIS))
            return unsupported(p, "relative import"), NULL;
        if (!(s->u.import.from = parse_dotted(p, "module name after 'from'")))
            return NULL;
        if (!is_kw(p, TILEC_KW_IMPORT))
            return expected(p, "'import' after module name"), NULL;
        if (advance(p) < 0)
            return NULL;
        if (is_op(p, TILEC_OP_LPAR)) {
            paren = 1;
            if (advance(p) < 0)
                return NULL;
        }
    }
    for (;;) {
        ast_import_name_t *nn = grow(p, names, n, &cap, sizeof *nn);
        if (!nn)
            return NULL;
        names = nn;
        ast_import_name_t *in = &names[n++];
        in->loc = here(p);
        if (is_from && !paren && is_op(p, TILEC_OP_STAR) && n == 1) {
            if (!(in->name = tilec_arena_strdup(p->a, "*")))
                return perr(p, in->loc.line, in->loc.col, "out of memory"), NULL;
            if (advance(p) < 0)
                return NULL;
            break;
        }
        if (is_from) {
            if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
                return expected(p, "name to import"), NULL;
            if (!(in->name = tok_name(p)) || advance(p) < 0)
                return NULL;
        } else if (!(in->name = parse_dotted(p, "module name after 'import'"))) {
            return NULL;
        }
        if (parse_as_name(p, in) < 0)
            return NULL;
        if (!is_op(p, TILEC_OP_COMMA))
            break;
        if (advance(p) < 0)
            return NULL;
        if (paren && is_op(p, TILEC_OP_RPAR))
            break;
    }
    if (paren && expect_op(p, TILEC_OP_RPAR, "',' or ')' after imported name") < 0)
        return NULL;
    s->u.import.n = n;
    s->u.import.names = names;
    return s;
}

static int augop_of(int tokop)
{
    switch (tokop) {
    case TILEC_OP_PLUSEQ: return '+';
    case TILEC_OP_MINUSEQ: return '-';
    case TILEC_OP_STAREQ: return '*';
    case TILEC_OP_SLASHEQ: return '/';
    case TILEC_OP_DSLASHEQ: return AST_OP_FLOORDIV;
    case TILEC_OP_PERCENTEQ: return '%';
    case TILEC_OP_DSTAREQ: return AST_OP_POW;
    case TILEC_OP_ATEQ: return '@';
    case TILEC_OP_AMPEQ: return AST_OP_BITAND;
    case TILEC_OP_PIPEEQ: return AST_OP_BITOR;
    case TILEC_OP_CARETEQ: return AST_OP_BITXOR;
    case TILEC_OP_LSHIFTEQ: return AST_OP_LSHIFT;
    case TILEC_OP_RSHIFTEQ: return AST_OP_RSHIFT;
    default: return 0;
    }
}

/* Right-hand side of an assignment: exprlist, with 'yield' rejected. */
static ast_expr_t *parse_rhs(parser_t *p)
{
    if (is_kw(p, TILEC_KW_YIELD))
        return unsupported(p, "'yield'"), NULL;
    if (!starts_expr(p))
        return expected(p, "expression"), NULL;
    return parse_exprlist(p, 0);
}

static ast_stmt_t *parse_expr_stmt(parser_t *p)
{
    ast_loc_t loc = here(p);
    ast_expr_t *first = parse_exprlist(p, 0);
    if (!first)
        return NULL;
    if (is_op(p, TILEC_OP_COLON)) {
        ast_stmt_t *s = new_stmt(p, AST_S_ANNASSIGN, loc);
        if (!s || check_single_target(p, first, "an annotated assignment") < 0 || advance(p) < 0)
            return NULL;
        s->u.ann.target = first;
        if (!(s->u.ann.annotation = parse_test(p)))
            return NULL;
        if (is_op(p, TILEC_OP_ASSIGN)) {
            if (advance(p) < 0 || !(s->u.ann.value = parse_rhs(p)))
                return NULL;
        }
        return s;
    }
    int aug = p->tok.kind == TILEC_TOK_OP ? augop_of(p->tok.op) : 0;
    if (aug) {
        ast_stmt_t *s = new_stmt(p, AST_S_AUGASSIGN, loc);
        if (!s || check_single_target(p, first, "an augmented assignment") < 0 || advance(p) < 0)
            return NULL;
        s->u.aug.op = aug;
        s->u.aug.target = first;
        if (!(s->u.aug.value = parse_rhs(p)))
            return NULL;
        return s;
    }
    if (is_op(p, TILEC_OP_ASSIGN)) {
        expr_vec_t all = { 0 };
        if (push_expr(p, &all, first) < 0)
            return NULL;
        while (is_op(p, TILEC_OP_ASSIGN)) {
            if (advance(p) < 0)
                return NULL;
            ast_expr_t *e = parse_rhs(p);
            if (!e || push_expr(p, &all, e) < 0)
                return NULL;
        }
        for (int i = 0; i + 1 < all.n; i++)
            if (check_target(p, all.v[i], "an assignment") < 0)
                return NULL;
        ast_stmt_t *s = new_stmt(p, AST_S_ASSIGN, loc);
        if (!s)
            return NULL;
        s->u.assign.ntargets = all.n - 1;
        s->u.assign.targets = all.v;
        s->u.assign.value = all.v[all.n - 1];
        return s;
    }
    ast_stmt_t *s = new_stmt(p, AST_S_EXPR, loc);
    if (s)
        s->u.expr = first;
    return s;
}

static ast_stmt_t *parse_small(parser_t *p)
{
    ast_loc_t loc = here(p);
    p->stmt_col = p->tok.col;
    ast_stmt_t *s;
    if (p->tok.kind == TILEC_TOK_NAME && p->tok.kw) {
        switch (p->tok.kw) {
        case TILEC_KW_PASS: case TILEC_KW_BREAK: case TILEC_KW_CONTINUE:
            s = new_stmt(p, p->tok.kw == TILEC_KW_PASS ? AST_S_PASS : p->tok.kw == TILEC_KW_BREAK ? AST_S_BREAK
                                                                                                 : AST_S_CONTINUE, loc);
            return !s || advance(p) < 0 ? NULL : s;
        case TILEC_KW_RETURN:
            s = new_stmt(p, AST_S_RETURN, loc);
            if (!s || advance(p) < 0)
                return NULL;
            if (starts_expr(p) && !(s->u.ret.value = parse_rhs(p)))
                return NULL;
            return s;
        case TILEC_KW_ASSERT:
            s = new_stmt(p, AST_S_ASSERT, loc);
            if (!s || advance(p) < 0 || !(s->u.assert_.cond = parse_test(p)))
                return NULL;
            if (is_op(p, TILEC_OP_COMMA)) {
                if (advance(p) < 0 || !(s->u.assert_.msg = parse_test(p)))
                    return NULL;
            }
            return s;
        case TILEC_KW_IMPORT: case TILEC_KW_FROM:
            return parse_import(p);
        case TILEC_KW_GLOBAL: return unsupported(p, "'global'"), NULL;
        case TILEC_KW_NONLOCAL: return unsupported(p, "'nonlocal'"), NULL;
        case TILEC_KW_DEL: return unsupported(p, "'del'"), NULL;
        case TILEC_KW_RAISE:
            s = new_stmt(p, AST_S_RAISE, loc);
            if (!s || advance(p) < 0)
                return NULL;
            if (starts_expr(p) && !(s->u.ret.value = parse_test(p)))
                return NULL;
            if (is_kw(p, TILEC_KW_FROM)) {   /* raise X from Y: the cause is not kept */
                if (advance(p) < 0 || !parse_test(p))
                    return NULL;
            }
            return s;
        case TILEC_KW_YIELD: return unsupported(p, "'yield'"), NULL;
        case TILEC_KW_CLASS: return unsupported(p, "'class'"), NULL;
        case TILEC_KW_TRY: return unsupported(p, "'try'"), NULL;
        case TILEC_KW_ASYNC: return unsupported(p, "'async'"), NULL;
        case TILEC_KW_ELSE: case TILEC_KW_ELIF:
            return perr(p, loc.line, loc.col, "'%s' without a matching 'if' (check the indentation)",
                        tilec_lexer_kw_text(p->tok.kw)), NULL;
        case TILEC_KW_EXCEPT: case TILEC_KW_FINALLY:
            return unsupported(p, p->tok.kw == TILEC_KW_EXCEPT ? "'except' (and 'try')" : "'finally' (and 'try')"),
                   NULL;
        default:
            break; /* True/False/None/not/lambda/await...: expressions */
        }
    }
    if (is_op(p, TILEC_OP_ELLIPSIS)) {
        /* `...` alone is a placeholder body, like pass */
        if (advance(p) < 0)
            return NULL;
        if (p->tok.kind != TILEC_TOK_NEWLINE && !is_op(p, TILEC_OP_SEMI))
            return perr(p, loc.line, loc.col, "'...' (Ellipsis) is not supported in tile programs except as a "
                                              "placeholder statement"), NULL;
        return new_stmt(p, AST_S_PASS, loc);
    }
    if (!starts_expr(p))
        return expected(p, "statement"), NULL;
    return parse_expr_stmt(p);
}

static int parse_simple_stmts(parser_t *p, stmt_vec_t *out)
{
    for (;;) {
        ast_stmt_t *s = parse_small(p);
        if (!s || push_stmt(p, out, s) < 0)
            return -1;
        if (!is_op(p, TILEC_OP_SEMI))
            break;
        if (advance(p) < 0)
            return -1;
        if (p->tok.kind == TILEC_TOK_NEWLINE)
            break;
    }
    if (p->tok.kind != TILEC_TOK_NEWLINE)
        return expected(p, "NEWLINE or ';' after statement");
    return advance(p);
}

static int parse_statement(parser_t *p, stmt_vec_t *out)
{
    ast_stmt_t *s = NULL;
    p->stmt_col = p->tok.col;
    switch (p->tok.kind) {
    case TILEC_TOK_NEWLINE:
        return advance(p);
    case TILEC_TOK_INDENT:
        return perr(p, p->tok.line, p->tok.col, "unexpected indent");
    case TILEC_TOK_DEDENT: case TILEC_TOK_EOF:
        return expected(p, "statement");
    case TILEC_TOK_OP:
        if (p->tok.op == TILEC_OP_AT)
            s = parse_decorated(p);
        else
            return parse_simple_stmts(p, out);
        break;
    case TILEC_TOK_NAME:
        switch (p->tok.kw) {
        case TILEC_KW_IF: s = parse_if(p); break;
        case TILEC_KW_FOR: s = parse_for(p); break;
        case TILEC_KW_WHILE: s = parse_while(p); break;
        case TILEC_KW_WITH: s = parse_with(p); break;
        case TILEC_KW_DEF: s = parse_def(p, NULL, here(p)); break;
        default: return parse_simple_stmts(p, out);
        }
        break;
    default:
        return parse_simple_stmts(p, out);
    }
    if (!s)
        return -1;
    return push_stmt(p, out, s);
}

int tilec_parse(tilec_arena_t *a, tilec_diag_t *d, const char *path,
                const char *src, size_t len, ast_module_t **out)
{
    return tilec_parse_limited(a, d, path, src, len, TILEC_FRONTEND_MAX_BYTES, out);
}

int tilec_parse_limited(tilec_arena_t *a, tilec_diag_t *d, const char *path,
                        const char *src, size_t len, size_t max_bytes, ast_module_t **out)
{
    if (out)
        *out = NULL;
    parser_t *p = tilec_arena_alloc(a, sizeof *p);
    if (!p)
        return tilec_diag_error(d, 0, 0, "out of memory");
    p->a = a;
    p->d = d;
    p->src_len = len;
    p->max_bytes = max_bytes;
    tilec_lexer_init(&p->lx, a, d, src, len);
    ast_module_t *m = tilec_arena_alloc(a, sizeof *m);
    if (!m)
        return tilec_diag_error(d, 0, 0, "out of memory");
    m->path = path;
    if (advance(p) < 0)
        return -1;
    stmt_vec_t body = { 0 };
    while (p->tok.kind != TILEC_TOK_EOF)
        if (parse_statement(p, &body) < 0)
            return -1;
    m->body.n = body.n;
    m->body.s = body.v;
    if (out)
        *out = m;
    return 0;
}
