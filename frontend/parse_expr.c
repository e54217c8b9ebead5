/*
 * frontend/parse_expr.c — the expression half of the parser (parser.c has
 * the grammar, the statements and the helpers both use): atoms, strings and
 * f-strings, calls, subscripts, operators by precedence, lambdas,
 * comprehensions, and the checks on assignment targets.
 */
#include "parser_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* ---- expressions ---------------------------------------------------------- */

static ast_expr_t *parse_binary(parser_t *p, int min_prec);
static ast_expr_t *parse_factor(parser_t *p);

/* Whether the current token can begin an expression. */
int ps_starts_expr(const parser_t *p)
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
    if (*ps_bracket_hint(p, hint, sizeof hint))
        return ps_perr(p, p->tok.line, p->tok.col, "unexpected 'for' inside brackets%s", hint);
    if (set)
        return ps_perr(p, p->tok.line, p->tok.col, "set comprehensions are not supported in tile programs");
    return ps_perr(p, p->tok.line, p->tok.col, "a comprehension must be the only item inside its brackets");
}

/* '*' value, or a test. */
static ast_expr_t *parse_star_or_test(parser_t *p)
{
    if (!ps_is_op(p, TILEC_OP_STAR))
        return ps_parse_test(p);
    ast_loc_t loc = ps_here(p);
    if (ps_enter(p) < 0 || ps_advance(p) < 0)
        return NULL;
    ast_expr_t *v = parse_binary(p, 0);
    ps_leave(p);
    if (!v)
        return NULL;
    ast_expr_t *e = ps_new_expr(p, AST_STARRED, loc);
    if (e)
        e->u.star.value = v;
    return e;
}

static ast_expr_t *parse_or(parser_t *p);

/* The `for ... in ... [if ...]` clauses of a comprehension whose element
 * (elt, and value for a dict) is parsed; tok is 'for'.  The closing bracket
 * is left for the caller. */
static ast_expr_t *parse_comp(parser_t *p, int bracket, ast_expr_t *elt, ast_expr_t *value)
{
    ast_comp_for_t *fors = NULL;
    int nfor = 0, cap = 0;
    char hint[80];
    if (*ps_bracket_hint(p, hint, sizeof hint))   /* a bracket left open before a `for` statement */
        return ps_perr(p, p->tok.line, p->tok.col, "unexpected 'for' inside brackets%s", hint), NULL;
    if (elt->kind == AST_STARRED)
        return ps_perr(p, elt->loc.line, elt->loc.col, "a starred element cannot be used in a comprehension"), NULL;
    while (ps_is_kw(p, TILEC_KW_FOR)) {
        ast_comp_for_t *nf = ps_grow(p, fors, nfor, &cap, sizeof *nf);
        expr_vec_t ifs = { 0 };
        if (!nf || ps_advance(p) < 0)
            return NULL;
        fors = nf;
        memset(&fors[nfor], 0, sizeof fors[nfor]);
        if (!(fors[nfor].target = ps_parse_exprlist(p, 1)))
            return NULL;
        if (!ps_is_kw(p, TILEC_KW_IN))
            return ps_expected(p, "'in' in a comprehension"), NULL;
        if (ps_check_target(p, fors[nfor].target, "a comprehension") < 0 || ps_advance(p) < 0)
            return NULL;
        if (!(fors[nfor].iter = parse_or(p)))
            return NULL;
        while (ps_is_kw(p, TILEC_KW_IF)) {
            ast_expr_t *c;
            if (ps_advance(p) < 0 || !(c = parse_or(p)) || ps_push_expr(p, &ifs, c) < 0)
                return NULL;
        }
        fors[nfor].nifs = ifs.n;
        fors[nfor].ifs = ifs.v;
        nfor++;
    }
    ast_expr_t *e = ps_new_expr(p, AST_COMP, elt->loc);
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
    while (ps_is_op(p, TILEC_OP_COMMA)) {
        if (ps_advance(p) < 0)
            return -1;
        if (ps_is_op(p, closer))
            break;
        ast_expr_t *e = parse_star_or_test(p);
        if (!e || ps_push_expr(p, vec, e) < 0)
            return -1;
    }
    if (ps_is_kw(p, TILEC_KW_FOR))
        return comprehension_error(p, 0);
    if (!ps_is_op(p, closer))
        return ps_expected(p, what);
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
        ast_expr_t **np = ps_alloc(p, sizeof *np * (size_t)nc);
        const char **ns = ps_alloc(p, sizeof *ns * (size_t)nc);
        char *nv = ps_alloc(p, (size_t)nc);
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
    if (!(e = ps_new_expr(p, AST_STR, loc)) || !(c = ps_alloc(p, n + 1)))
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
    parser_t *q = ps_alloc(p, sizeof *q);
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
    q->file = p->file;
    if (ps_advance(q) < 0 || parse_test_or_fail(q, &e) < 0)
        return NULL;
    if (q->tok.kind != TILEC_TOK_NEWLINE && q->tok.kind != TILEC_TOK_EOF)
        return ps_expected(q, "'}' after the expression of an f-string field"), NULL;
    return e;
}

/* One f-string token into parts. */
static int fstring_token(parser_t *p, const tilec_token_t *t, fparts_t *f)
{
    const char *src = p->lx.src, *s = t->text, *end = t->text + t->len;
    int raw = 0, line = t->line;
    size_t line_start = (size_t)(t->text - src) - (size_t)(t->col - 1);
    ast_loc_t loc = { t->line, t->col, p->file };
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
    char *lit = ps_alloc(p, (size_t)(end - s) + 1);
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
            return ps_perr(p, line, (int)((size_t)(s - src) - line_start) + 1, "single '}' is not allowed in an f-string"), -1;
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
                return ps_perr(p, line, (int)((size_t)(x - src) - line_start), "an f-string field must fit on one line"), -1;
        }
        if (xe >= end)
            return ps_perr(p, line, (int)((size_t)(s - src) - line_start) + 1, "f-string: expected '}'"), -1;
        ast_expr_t *e = fstring_expr(p, (size_t)(x - src), (size_t)(xe - src), line, line_start);
        if (!e)
            return -1;
        char conv = 0;
        const char *spec = NULL;
        if (*xe == '!') {
            conv = xe + 1 < end ? xe[1] : 0;
            if (conv != 'r' && conv != 's' && conv != 'a')
                return ps_perr(p, line, (int)((size_t)(xe - src) - line_start) + 1,
                            "f-string: the conversion must be !r, !s or !a"), -1;
            xe += 2;
        }
        if (xe < end && *xe == ':') {
            const char *se = xe + 1;
            while (se < end && *se != '}' && *se != '{')
                se++;
            if (se >= end || *se == '{')
                return ps_perr(p, line, (int)((size_t)(xe - src) - line_start) + 1,
                            "f-string: nested fields in a format spec are not supported in tile programs"), -1;
            char *sp = ps_alloc(p, (size_t)(se - xe));
            if (!sp)
                return -1;
            memcpy(sp, xe + 1, (size_t)(se - xe - 1));
            spec = sp;
            xe = se;
        }
        if (xe >= end || *xe != '}')
            return ps_perr(p, line, (int)((size_t)(xe - src) - line_start) + 1, "f-string: expected '}'"), -1;
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
    ast_loc_t loc = ps_here(p);
    struct piece { const char *s; size_t len; } *pieces = NULL;
    int n = 0, cap = 0, any_f = 0;
    size_t total = 0;
    fparts_t f = { 0 };
    while (p->tok.kind == TILEC_TOK_STR) {
        struct piece *np = ps_grow(p, pieces, n, &cap, sizeof *np);
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
        if (ps_advance(p) < 0)
            return NULL;
    }
    if (any_f) {
        ast_expr_t *e = ps_new_expr(p, AST_FSTRING, loc);
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
        char *cat = ps_alloc(p, total + 1);
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
    ast_expr_t *e = ps_new_expr(p, AST_STR, loc);
    if (e) {
        e->u.str.s = s;
        e->u.str.len = total;
    }
    return e;
}

/* '(' ... ')': parenthesized expression or tuple. */
static ast_expr_t *parse_paren(parser_t *p)
{
    ast_loc_t loc = ps_here(p);
    if (ps_advance(p) < 0)
        return NULL;
    if (ps_is_op(p, TILEC_OP_RPAR)) {
        if (ps_advance(p) < 0)
            return NULL;
        return ps_new_expr(p, AST_TUPLE, loc);
    }
    if (ps_is_kw(p, TILEC_KW_YIELD))
        return ps_unsupported(p, "'yield'"), NULL;
    ast_expr_t *first = parse_star_or_test(p);
    if (!first)
        return NULL;
    if (ps_is_kw(p, TILEC_KW_FOR)) {
        ast_expr_t *g = parse_comp(p, '(', first, NULL);
        if (!g || ps_expect_op(p, TILEC_OP_RPAR, "')' after a generator expression") < 0)
            return NULL;
        return g;
    }
    const char *what = "',' or ')'";
    if (ps_is_op(p, TILEC_OP_RPAR)) {
        if (ps_advance(p) < 0)
            return NULL;
        return first;
    }
    expr_vec_t items = { 0 };
    if (ps_push_expr(p, &items, first) < 0)
        return NULL;
    if (!ps_is_op(p, TILEC_OP_COMMA))
        return ps_expected(p, what), NULL;
    if (parse_items(p, &items, TILEC_OP_RPAR, what) < 0 || ps_advance(p) < 0)
        return NULL;
    ast_expr_t *e = ps_new_expr(p, AST_TUPLE, loc);
    if (e) {
        e->u.seq.n = items.n;
        e->u.seq.items = items.v;
    }
    return e;
}

static ast_expr_t *parse_list(parser_t *p)
{
    ast_loc_t loc = ps_here(p);
    if (ps_advance(p) < 0)
        return NULL;
    expr_vec_t items = { 0 };
    if (!ps_is_op(p, TILEC_OP_RSQB)) {
        ast_expr_t *first = parse_star_or_test(p);
        if (!first)
            return NULL;
        if (ps_is_kw(p, TILEC_KW_FOR)) {
            ast_expr_t *c = parse_comp(p, '[', first, NULL);
            if (!c || ps_expect_op(p, TILEC_OP_RSQB, "']' after a list comprehension") < 0)
                return NULL;
            return c;
        }
        if (ps_push_expr(p, &items, first) < 0)
            return NULL;
        if (parse_items(p, &items, TILEC_OP_RSQB, "',' or ']' in list") < 0)
            return NULL;
    }
    if (ps_advance(p) < 0)
        return NULL;
    ast_expr_t *e = ps_new_expr(p, AST_LIST, loc);
    if (e) {
        e->u.seq.n = items.n;
        e->u.seq.items = items.v;
    }
    return e;
}

static ast_expr_t *parse_dict(parser_t *p)
{
    ast_loc_t loc = ps_here(p);
    if (ps_advance(p) < 0)
        return NULL;
    expr_vec_t items = { 0 };
    while (!ps_is_op(p, TILEC_OP_RBRACE)) {
        if (ps_is_op(p, TILEC_OP_DSTAR))
            return ps_unsupported(p, "'**' unpacking in a dict"), NULL;
        ast_expr_t *k = ps_parse_test(p);
        if (!k)
            return NULL;
        if (items.n == 0 && (ps_is_op(p, TILEC_OP_COMMA) || ps_is_op(p, TILEC_OP_RBRACE)))
            return ps_perr(p, k->loc.line, k->loc.col, "set literals are not supported in tile programs"), NULL;
        if (ps_is_kw(p, TILEC_KW_FOR))
            return comprehension_error(p, 1), NULL;
        if (ps_expect_op(p, TILEC_OP_COLON, "':' after dict key") < 0)
            return NULL;
        ast_expr_t *v = ps_parse_test(p);
        if (!v)
            return NULL;
        if (ps_is_kw(p, TILEC_KW_FOR) && items.n == 0) {
            ast_expr_t *c = parse_comp(p, '{', k, v);
            if (!c || ps_expect_op(p, TILEC_OP_RBRACE, "'}' after a dict comprehension") < 0)
                return NULL;
            return c;
        }
        if (ps_push_expr(p, &items, k) < 0 || ps_push_expr(p, &items, v) < 0)
            return NULL;
        if (ps_is_kw(p, TILEC_KW_FOR))
            return comprehension_error(p, 0), NULL;
        if (ps_is_op(p, TILEC_OP_COMMA)) {
            if (ps_advance(p) < 0)
                return NULL;
        } else if (!ps_is_op(p, TILEC_OP_RBRACE)) {
            return ps_expected(p, "',' or '}' in dict"), NULL;
        }
    }
    if (ps_advance(p) < 0)
        return NULL;
    ast_expr_t *e = ps_new_expr(p, AST_DICT, loc);
    if (e) {
        e->u.seq.n = items.n;
        e->u.seq.items = items.v;
    }
    return e;
}

static ast_expr_t *parse_atom(parser_t *p)
{
    ast_loc_t loc = ps_here(p);
    ast_expr_t *e;
    switch (p->tok.kind) {
    case TILEC_TOK_NAME:
        switch (p->tok.kw) {
        case TILEC_KW_NONE_:
            e = ps_new_expr(p, AST_NAME, loc);
            if (!e || !(e->u.name = ps_tok_name(p)))
                return NULL;
            break;
        case TILEC_KW_TRUE: case TILEC_KW_FALSE:
            e = ps_new_expr(p, AST_BOOL, loc);
            if (!e)
                return NULL;
            e->u.ival = p->tok.kw == TILEC_KW_TRUE;
            break;
        case TILEC_KW_NONE:
            e = ps_new_expr(p, AST_NONE, loc);
            if (!e)
                return NULL;
            break;
        case TILEC_KW_LAMBDA:
            return ps_unsupported(p, "'lambda'"), NULL;
        case TILEC_KW_AWAIT:
            return ps_unsupported(p, "'await'"), NULL;
        case TILEC_KW_YIELD:
            return ps_unsupported(p, "'yield'"), NULL;
        default:
            return ps_expected(p, "expression"), NULL;
        }
        return ps_advance(p) < 0 ? NULL : e;
    case TILEC_TOK_INT:
        e = ps_new_expr(p, AST_INT, loc);
        if (!e)
            return NULL;
        e->u.ival = p->tok.ival;
        return ps_advance(p) < 0 ? NULL : e;
    case TILEC_TOK_FLOAT:
        e = ps_new_expr(p, AST_FLOAT, loc);
        if (!e)
            return NULL;
        e->u.fval = p->tok.fval;
        return ps_advance(p) < 0 ? NULL : e;
    case TILEC_TOK_STR:
        return parse_strings(p);
    case TILEC_TOK_OP:
        if (p->tok.op == TILEC_OP_LPAR || p->tok.op == TILEC_OP_LSQB || p->tok.op == TILEC_OP_LBRACE) {
            if (ps_enter(p) < 0)
                return NULL;
            e = p->tok.op == TILEC_OP_LPAR ? parse_paren(p) : p->tok.op == TILEC_OP_LSQB ? parse_list(p) : parse_dict(p);
            ps_leave(p);
            return e;
        }
        if (p->tok.op == TILEC_OP_ELLIPSIS) {
            /* `...` as a value (Callable[..., Any] in an annotation, x[..., 0]) reads the name
             * Ellipsis, which the evaluator knows but does not compute with */
            e = ps_new_expr(p, AST_NAME, loc);
            if (!e)
                return NULL;
            e->u.name = "Ellipsis";
            if (ps_advance(p) < 0)
                return NULL;
            return e;
        }
        return ps_expected(p, "expression"), NULL;
    default:
        return ps_expected(p, "expression"), NULL;
    }
}

/* '*' NAME in a parameter list (tok is '*'): *name = NAME.  A bare '*'
 * (keyword-only parameters follow) is outside the subset. */
int ps_parse_vararg(parser_t *p, const char **name)
{
    if (ps_advance(p) < 0)
        return -1;
    if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
        return ps_unsupported(p, "a bare '*' (keyword-only parameters)");
    if (!(*name = ps_tok_name(p)) || ps_advance(p) < 0)
        return -1;
    return 0;
}

/* 'lambda' [NAME ['=' test] (',' NAME ['=' test])*] [',' '*' NAME] ':' test.  The lambda
 * becomes a def named "<lambda>" whose body returns the expression, so the
 * evaluator calls it like any other function. */
static ast_expr_t *parse_lambda(parser_t *p)
{
    ast_loc_t loc = ps_here(p);
    ast_param_t *params = NULL;
    int n = 0, cap = 0;
    const char *vararg = NULL;
    if (ps_enter(p) < 0 || ps_advance(p) < 0)
        return NULL;
    while (!ps_is_op(p, TILEC_OP_COLON)) {
        if (vararg)
            return ps_unsupported(p, "parameters after '*args' in a lambda (keyword-only parameters)"), NULL;
        if (ps_is_op(p, TILEC_OP_STAR)) {
            if (ps_parse_vararg(p, &vararg) < 0)
                return NULL;
            if (ps_is_op(p, TILEC_OP_COMMA) && ps_advance(p) < 0)
                return NULL;
            continue;
        }
        if (ps_is_op(p, TILEC_OP_DSTAR))
            return ps_unsupported(p, "'**kwargs' in a lambda"), NULL;
        if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
            return ps_expected(p, "a parameter name or ':' in 'lambda'"), NULL;
        ast_param_t *np = ps_grow(p, params, n, &cap, sizeof *np);
        if (!np)
            return NULL;
        params = np;
        memset(&params[n], 0, sizeof params[n]);
        params[n].loc = ps_here(p);
        if (!(params[n].name = ps_tok_name(p)) || ps_advance(p) < 0)
            return NULL;
        if (ps_is_op(p, TILEC_OP_ASSIGN) && (ps_advance(p) < 0 || !(params[n].dflt = ps_parse_test(p))))
            return NULL;
        n++;
        if (ps_is_op(p, TILEC_OP_COMMA)) {
            if (ps_advance(p) < 0)
                return NULL;
        } else if (!ps_is_op(p, TILEC_OP_COLON)) {
            return ps_expected(p, "':' after the parameters of 'lambda'"), NULL;
        }
    }
    if (ps_advance(p) < 0)
        return NULL;
    ast_expr_t *body = ps_parse_test(p);
    if (!body)
        return NULL;
    ps_leave(p);
    ast_stmt_t *d = ps_new_stmt(p, AST_S_DEF, loc), *r = ps_new_stmt(p, AST_S_RETURN, body->loc);
    ast_stmt_t **blk = ps_alloc(p, sizeof *blk);
    ast_expr_t *e = ps_new_expr(p, AST_LAMBDA, loc);
    if (!d || !r || !blk || !e)
        return NULL;
    r->u.ret.value = body;
    blk[0] = r;
    d->u.def.name = "<lambda>";
    d->u.def.nparams = n;
    d->u.def.params = params;
    d->u.def.vararg = vararg;
    d->u.def.body.n = 1;
    d->u.def.body.s = blk;
    e->u.lam.def = d;
    return e;
}

/* '(' args ')' after func; tok is '('. */
static ast_expr_t *parse_call(parser_t *p, ast_expr_t *func, ast_loc_t loc)
{
    if (ps_enter(p) < 0 || ps_advance(p) < 0)
        return NULL;
    expr_vec_t args = { 0 };
    ast_keyword_t *kw = NULL;
    int nkw = 0, kwcap = 0;
    while (!ps_is_op(p, TILEC_OP_RPAR)) {
        if (ps_is_op(p, TILEC_OP_DSTAR))
            return ps_unsupported(p, "'**' argument unpacking"), NULL;
        if (ps_is_op(p, TILEC_OP_STAR)) {
            ast_expr_t *s = parse_star_or_test(p);
            if (!s || ps_push_expr(p, &args, s) < 0)
                return NULL;
        } else {
            ast_expr_t *e = ps_parse_test(p);
            if (!e)
                return NULL;
            if (ps_is_kw(p, TILEC_KW_FOR) && !(e = parse_comp(p, '(', e, NULL)))   /* f(x for x in s) */
                return NULL;
            if (ps_is_op(p, TILEC_OP_ASSIGN)) {
                if (e->kind != AST_NAME)
                    return ps_perr(p, p->tok.line, p->tok.col,
                                "expected a parameter name before '=' in keyword argument"), NULL;
                if (ps_advance(p) < 0)
                    return NULL;
                ast_expr_t *v = ps_parse_test(p);
                if (!v)
                    return NULL;
                ast_keyword_t *nk = ps_grow(p, kw, nkw, &kwcap, sizeof *nk);
                if (!nk)
                    return NULL;
                kw = nk;
                kw[nkw].name = e->u.name;
                kw[nkw].value = v;
                kw[nkw].loc = e->loc;
                nkw++;
            } else {
                if (nkw > 0)
                    return ps_perr(p, e->loc.line, e->loc.col, "positional argument follows keyword argument"), NULL;
                if (ps_push_expr(p, &args, e) < 0)
                    return NULL;
            }
        }
        if (ps_is_op(p, TILEC_OP_COMMA)) {
            if (ps_advance(p) < 0)
                return NULL;
        } else if (!ps_is_op(p, TILEC_OP_RPAR)) {
            return ps_expected(p, "',' or ')' after argument"), NULL;
        }
    }
    ps_leave(p);
    if (ps_advance(p) < 0)
        return NULL;
    ast_expr_t *c = ps_new_expr(p, AST_CALL, loc);
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
    if (ps_is_op(p, TILEC_OP_STAR))
        return parse_star_or_test(p);
    ast_loc_t loc = ps_here(p);
    ast_expr_t *lo = NULL, *hi = NULL, *step = NULL;
    if (!ps_is_op(p, TILEC_OP_COLON)) {
        lo = ps_parse_test(p);
        if (!lo || !ps_is_op(p, TILEC_OP_COLON))
            return lo;
    }
    if (ps_advance(p) < 0)
        return NULL;
    if (!ps_is_op(p, TILEC_OP_COLON) && !ps_is_op(p, TILEC_OP_COMMA) && !ps_is_op(p, TILEC_OP_RSQB)) {
        if (!(hi = ps_parse_test(p)))
            return NULL;
    }
    if (ps_is_op(p, TILEC_OP_COLON)) {
        if (ps_advance(p) < 0)
            return NULL;
        if (!ps_is_op(p, TILEC_OP_COMMA) && !ps_is_op(p, TILEC_OP_RSQB)) {
            if (!(step = ps_parse_test(p)))
                return NULL;
        }
    }
    ast_expr_t *e = ps_new_expr(p, AST_SLICE, loc);
    if (e) {
        e->u.slice.lo = lo;
        e->u.slice.hi = hi;
        e->u.slice.step = step;
    }
    return e;
}

static ast_expr_t *parse_subscript(parser_t *p, ast_expr_t *value)
{
    ast_loc_t loc = ps_here(p);
    if (ps_enter(p) < 0 || ps_advance(p) < 0)
        return NULL;
    if (ps_is_op(p, TILEC_OP_RSQB))
        return ps_expected(p, "index or slice inside '[]'"), NULL;
    expr_vec_t items = { 0 };
    for (;;) {
        ast_expr_t *it = parse_subscript_item(p);
        if (!it || ps_push_expr(p, &items, it) < 0)
            return NULL;
        if (ps_is_op(p, TILEC_OP_COMMA)) {
            if (ps_advance(p) < 0)
                return NULL;
            if (ps_is_op(p, TILEC_OP_RSQB))
                break;
        } else if (ps_is_op(p, TILEC_OP_RSQB)) {
            break;
        } else {
            return ps_expected(p, "',' or ']' in subscript"), NULL;
        }
    }
    ps_leave(p);
    if (ps_advance(p) < 0)
        return NULL;
    ast_expr_t *e = ps_new_expr(p, AST_SUBSCRIPT, loc);
    if (e) {
        e->u.sub.value = value;
        e->u.sub.n = items.n;
        e->u.sub.items = items.v;
    }
    return e;
}

static ast_expr_t *parse_primary(parser_t *p)
{
    ast_loc_t start = ps_here(p);
    if (ps_is_kw(p, TILEC_KW_AWAIT))
        return ps_unsupported(p, "'await'"), NULL;
    ast_expr_t *e = parse_atom(p);
    while (e) {
        if (ps_is_op(p, TILEC_OP_DOT)) {
            if (ps_advance(p) < 0)
                return NULL;
            if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
                return ps_expected(p, "attribute name after '.'"), NULL;
            ast_expr_t *a = ps_new_expr(p, AST_ATTR, ps_here(p));
            if (!a || !(a->u.attr.name = ps_tok_name(p)) || ps_advance(p) < 0)
                return NULL;
            a->u.attr.value = e;
            e = a;
        } else if (ps_is_op(p, TILEC_OP_LPAR)) {
            e = parse_call(p, e, start);
        } else if (ps_is_op(p, TILEC_OP_LSQB)) {
            e = parse_subscript(p, e);
        } else {
            break;
        }
    }
    return e;
}

static ast_expr_t *make_binop(parser_t *p, ast_expr_kind_t kind, int op, ast_loc_t loc, ast_expr_t *a, ast_expr_t *b)
{
    ast_expr_t *e = ps_new_expr(p, kind, loc);
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
    if (!a || !ps_is_op(p, TILEC_OP_DSTAR))
        return a;
    ast_loc_t loc = ps_here(p);
    if (ps_enter(p) < 0 || ps_advance(p) < 0)
        return NULL;
    ast_expr_t *b = parse_factor(p);
    ps_leave(p);
    if (!b)
        return NULL;
    return make_binop(p, AST_BINOP, AST_OP_POW, loc, a, b);
}

static ast_expr_t *parse_factor(parser_t *p)
{
    int op = 0;
    if (ps_is_op(p, TILEC_OP_MINUS)) op = '-';
    else if (ps_is_op(p, TILEC_OP_PLUS)) op = '+';
    else if (ps_is_op(p, TILEC_OP_TILDE)) op = '~';
    if (!op)
        return parse_power(p);
    ast_loc_t loc = ps_here(p);
    if (ps_enter(p) < 0 || ps_advance(p) < 0)
        return NULL;
    ast_expr_t *a = parse_factor(p);
    ps_leave(p);
    if (!a)
        return NULL;
    ast_expr_t *e = ps_new_expr(p, AST_UNARY, loc);
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
        ast_loc_t loc = ps_here(p);
        if (ps_advance(p) < 0)
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
        return ps_advance(p);
    }
    if (ps_is_kw(p, TILEC_KW_IN)) {
        *op = AST_OP_IN;
        return ps_advance(p);
    }
    if (ps_is_kw(p, TILEC_KW_NOT)) {
        if (ps_advance(p) < 0)
            return -1;
        if (!ps_is_kw(p, TILEC_KW_IN))
            return ps_expected(p, "'in' after 'not' in comparison");
        *op = AST_OP_NOTIN;
        return ps_advance(p);
    }
    if (ps_is_kw(p, TILEC_KW_IS)) {
        if (ps_advance(p) < 0)
            return -1;
        *op = AST_OP_IS;
        if (ps_is_kw(p, TILEC_KW_NOT)) {
            *op = AST_OP_ISNOT;
            return ps_advance(p);
        }
    }
    return 0;
}

static ast_expr_t *parse_comparison(parser_t *p)
{
    ast_expr_t *a = parse_binary(p, 0);
    if (!a)
        return NULL;
    ast_loc_t loc = ps_here(p);
    int op;
    if (parse_compop(p, &op) < 0)
        return NULL;
    if (!op)
        return a;
    expr_vec_t operands = { 0 };
    int *ops = NULL, nops = 0, opcap = 0;
    if (ps_push_expr(p, &operands, a) < 0)
        return NULL;
    while (op) {
        int *no = ps_grow(p, ops, nops, &opcap, sizeof *no);
        if (!no)
            return NULL;
        ops = no;
        ops[nops++] = op;
        ast_expr_t *b = parse_binary(p, 0);
        if (!b || ps_push_expr(p, &operands, b) < 0)
            return NULL;
        if (parse_compop(p, &op) < 0)
            return NULL;
    }
    ast_expr_t *e = ps_new_expr(p, AST_COMPARE, loc);
    if (e) {
        e->u.cmp.n = operands.n;
        e->u.cmp.operands = operands.v;
        e->u.cmp.ops = ops;
    }
    return e;
}

static ast_expr_t *parse_not(parser_t *p)
{
    if (!ps_is_kw(p, TILEC_KW_NOT))
        return parse_comparison(p);
    ast_loc_t loc = ps_here(p);
    if (ps_enter(p) < 0 || ps_advance(p) < 0)
        return NULL;
    ast_expr_t *a = parse_not(p);
    ps_leave(p);
    if (!a)
        return NULL;
    ast_expr_t *e = ps_new_expr(p, AST_UNARY, loc);
    if (e) {
        e->u.un.op = AST_OP_NOT;
        e->u.un.a = a;
    }
    return e;
}

static ast_expr_t *parse_and(parser_t *p)
{
    ast_expr_t *e = parse_not(p);
    while (e && ps_is_kw(p, TILEC_KW_AND)) {
        ast_loc_t loc = ps_here(p);
        if (ps_advance(p) < 0)
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
    while (e && ps_is_kw(p, TILEC_KW_OR)) {
        ast_loc_t loc = ps_here(p);
        if (ps_advance(p) < 0)
            return NULL;
        ast_expr_t *b = parse_and(p);
        if (!b)
            return NULL;
        e = make_binop(p, AST_BOOLOP, AST_OP_OR, loc, e, b);
    }
    return e;
}

ast_expr_t *ps_parse_test(parser_t *p)
{
    if (ps_is_kw(p, TILEC_KW_LAMBDA))
        return parse_lambda(p);
    ast_expr_t *a = parse_or(p);
    if (!a || !ps_is_kw(p, TILEC_KW_IF))
        return a;
    if (ps_enter(p) < 0 || ps_advance(p) < 0)
        return NULL;
    ast_expr_t *cond = parse_or(p), *b = NULL;
    if (cond) {
        if (!ps_is_kw(p, TILEC_KW_ELSE))
            return ps_expected(p, "'else' in conditional expression"), NULL;
        if (ps_advance(p) < 0)
            return NULL;
        b = ps_parse_test(p);
    }
    ps_leave(p);
    if (!b)
        return NULL;
    ast_expr_t *e = ps_new_expr(p, AST_IFEXP, a->loc);
    if (e) {
        e->u.ifexp.cond = cond;
        e->u.ifexp.a = a;
        e->u.ifexp.b = b;
    }
    return e;
}

static int parse_test_or_fail(parser_t *q, ast_expr_t **out)
{
    *out = ps_parse_test(q);
    return *out ? 0 : -1;
}

/* exprlist: star_or_test (',' star_or_test)* [','] — a tuple when a comma
 * appears.  With `targets`, items are parsed at the bitwise-or level so
 * that `for x in ...` stops before 'in'. */
ast_expr_t *ps_parse_exprlist(parser_t *p, int targets)
{
    ast_expr_t *first = targets && !ps_is_op(p, TILEC_OP_STAR) ? parse_binary(p, 0) : parse_star_or_test(p);
    if (!first || !ps_is_op(p, TILEC_OP_COMMA))
        return first;
    expr_vec_t items = { 0 };
    if (ps_push_expr(p, &items, first) < 0)
        return NULL;
    while (ps_is_op(p, TILEC_OP_COMMA)) {
        if (ps_advance(p) < 0)
            return NULL;
        if (!ps_starts_expr(p))
            break;
        ast_expr_t *e = targets && !ps_is_op(p, TILEC_OP_STAR) ? parse_binary(p, 0) : parse_star_or_test(p);
        if (!e || ps_push_expr(p, &items, e) < 0)
            return NULL;
    }
    ast_expr_t *t = ps_new_expr(p, AST_TUPLE, first->loc);
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
int ps_check_target(parser_t *p, const ast_expr_t *e, const char *ctx)
{
    switch (e->kind) {
    case AST_NAME: case AST_ATTR: case AST_SUBSCRIPT:
        return 0;
    case AST_TUPLE: case AST_LIST:
        if (e->kind == AST_TUPLE && e->u.seq.n == 0)
            return ps_perr(p, e->loc.line, e->loc.col, "cannot assign to () in %s", ctx);
        for (int i = 0; i < e->u.seq.n; i++)
            if (ps_check_target(p, e->u.seq.items[i], ctx) < 0)
                return -1;
        return 0;
    case AST_STARRED:
        return ps_perr(p, e->loc.line, e->loc.col, "starred targets are not supported in tile programs");
    default:
        return ps_perr(p, e->loc.line, e->loc.col, "cannot assign to %s in %s", expr_what(e), ctx);
    }
}

int ps_check_single_target(parser_t *p, const ast_expr_t *e, const char *ctx)
{
    if (e->kind == AST_NAME || e->kind == AST_ATTR || e->kind == AST_SUBSCRIPT)
        return 0;
    if (e->kind == AST_TUPLE || e->kind == AST_LIST)
        return ps_perr(p, e->loc.line, e->loc.col, "only a single target (not a tuple or list) is allowed in %s", ctx);
    return ps_perr(p, e->loc.line, e->loc.col, "cannot assign to %s in %s", expr_what(e), ctx);
}

