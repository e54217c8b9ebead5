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
 *
 * This file: errors, tokens, allocation and the statements; expressions
 * are in parse_expr.c.
 */
#include "parser_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


/* ---- errors --------------------------------------------------------------- */


int ps_perr(parser_t *p, int line, int col, const char *fmt, ...)
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
const char *ps_bracket_hint(const parser_t *p, char *buf, size_t n)
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
int ps_expected(parser_t *p, const char *what)
{
    char found[96], hint[80];
    tilec_lexer_describe(&p->tok, found, sizeof found);
    return ps_perr(p, p->tok.line, p->tok.col, "expected %s, found %s%s", what, found,
                ps_bracket_hint(p, hint, sizeof hint));
}

int ps_unsupported(parser_t *p, const char *what)
{
    return ps_perr(p, p->tok.line, p->tok.col, "%s is not supported in tile programs", what);
}

int ps_enter(parser_t *p)
{
    if (++p->depth > TILEC_PARSE_MAX_DEPTH)
        return ps_perr(p, p->tok.line, p->tok.col, "nesting too deep (more than %d levels)", TILEC_PARSE_MAX_DEPTH);
    return 0;
}

void ps_leave(parser_t *p)
{
    p->depth--;
}

/* ---- tokens --------------------------------------------------------------- */

int ps_advance(parser_t *p)
{
    p->prev_line = p->tok.line;
    return tilec_lexer_next(&p->lx, &p->tok);
}

int ps_is_op(const parser_t *p, int op)
{
    return p->tok.kind == TILEC_TOK_OP && p->tok.op == op;
}

int ps_is_kw(const parser_t *p, int kw)
{
    return p->tok.kind == TILEC_TOK_NAME && p->tok.kw == kw;
}

int ps_expect_op(parser_t *p, int op, const char *what)
{
    if (!ps_is_op(p, op))
        return ps_expected(p, what);
    return ps_advance(p);
}

ast_loc_t ps_here(const parser_t *p)
{
    ast_loc_t l = { p->tok.line, p->tok.col, p->file };
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
        ps_perr(p, p->tok.line, p->tok.col,
             "the program is too large to compile: its syntax tree needs more than %zu MiB "
             "(the file has %zu bytes); split it into smaller files or generate less code",
             p->max_bytes >> 20 ? p->max_bytes >> 20 : 1, p->src_len);
    p->over = 1;
    return 1;
}

void *ps_alloc(parser_t *p, size_t size)
{
    if (over_budget(p))
        return NULL;
    void *m = tilec_arena_alloc(p->a, size);
    if (!m)
        ps_perr(p, p->tok.line, p->tok.col, "out of memory");
    return m;
}

/* Makes room for one more element in an arena array of n elements. */
void *ps_grow(parser_t *p, void *arr, int n, int *cap, size_t elem)
{
    if (n < *cap)
        return arr;
    if (*cap > INT_MAX / 4) {
        ps_perr(p, p->tok.line, p->tok.col, "too many items");
        return NULL;
    }
    int nc = *cap ? *cap * 2 : 4;
    void *na = ps_alloc(p, (size_t)nc * elem);
    if (!na)
        return NULL;
    if (n)
        memcpy(na, arr, (size_t)n * elem);
    *cap = nc;
    return na;
}

ast_expr_t *ps_new_expr(parser_t *p, ast_expr_kind_t kind, ast_loc_t loc)
{
    ast_expr_t *e = ps_alloc(p, sizeof *e);
    if (e) {
        e->kind = kind;
        e->loc = loc;
    }
    return e;
}

ast_stmt_t *ps_new_stmt(parser_t *p, ast_stmt_kind_t kind, ast_loc_t loc)
{
    ast_stmt_t *s = ps_alloc(p, sizeof *s);
    if (s) {
        s->kind = kind;
        s->loc = loc;
    }
    return s;
}

const char *ps_tok_name(parser_t *p)
{
    if (over_budget(p))
        return NULL;
    char *s = tilec_arena_strndup(p->a, p->tok.text, p->tok.len);
    if (!s)
        ps_perr(p, p->tok.line, p->tok.col, "out of memory");
    return s;
}


int ps_push_expr(parser_t *p, expr_vec_t *vec, ast_expr_t *e)
{
    ast_expr_t **nv = ps_grow(p, vec->v, vec->n, &vec->cap, sizeof *nv);
    if (!nv)
        return -1;
    vec->v = nv;
    vec->v[vec->n++] = e;
    return 0;
}

/* ---- statements ----------------------------------------------------------- */

typedef struct stmt_vec { ast_stmt_t **v; int n, cap; } stmt_vec_t;

static int push_stmt(parser_t *p, stmt_vec_t *vec, ast_stmt_t *s)
{
    ast_stmt_t **nv = ps_grow(p, vec->v, vec->n, &vec->cap, sizeof *nv);
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
    if (ps_enter(p) < 0)
        return -1;
    if (p->tok.kind != TILEC_TOK_NEWLINE) {
        if (ps_is_kw(p, TILEC_KW_IF) || ps_is_kw(p, TILEC_KW_FOR) || ps_is_kw(p, TILEC_KW_WHILE) ||
            ps_is_kw(p, TILEC_KW_WITH) || ps_is_kw(p, TILEC_KW_DEF) || ps_is_kw(p, TILEC_KW_CLASS) ||
            ps_is_op(p, TILEC_OP_AT))
            return ps_expected(p, "a simple statement on the same line as ':' (a compound statement must start a new line)");
        if (parse_simple_stmts(p, &vec) < 0)
            return -1;
    } else {
        if (ps_advance(p) < 0)
            return -1;
        if (p->tok.kind != TILEC_TOK_INDENT) {
            char msg[96];
            snprintf(msg, sizeof msg, "an indented block after %s on line %d", what, line);
            return ps_expected(p, msg);
        }
        if (ps_advance(p) < 0)
            return -1;
        while (p->tok.kind != TILEC_TOK_DEDENT && p->tok.kind != TILEC_TOK_EOF)
            if (parse_statement(p, &vec) < 0)
                return -1;
        if (p->tok.kind == TILEC_TOK_DEDENT && ps_advance(p) < 0)
            return -1;
    }
    ps_leave(p);
    blk->n = vec.n;
    blk->s = vec.v;
    return 0;
}

static int expect_colon(parser_t *p, const char *what)
{
    return ps_expect_op(p, TILEC_OP_COLON, what);
}

static ast_stmt_t *parse_if(parser_t *p)
{
    ast_stmt_t *top = NULL, *cur = NULL;
    /* 'if' then any 'elif's: a chain of IFs, each in the previous orelse. */
    do {
        ast_loc_t loc = ps_here(p);
        int line = p->tok.line;
        int is_elif = ps_is_kw(p, TILEC_KW_ELIF);
        ast_stmt_t *s = ps_new_stmt(p, AST_S_IF, loc);
        if (!s || ps_advance(p) < 0)
            return NULL;
        if (!(s->u.cond.cond = ps_parse_test(p)))
            return NULL;
        if (expect_colon(p, is_elif ? "':' after elif condition" : "':' after if condition") < 0)
            return NULL;
        if (parse_block(p, &s->u.cond.body, is_elif ? "'elif' statement" : "'if' statement", line) < 0)
            return NULL;
        if (!top) {
            top = s;
        } else {
            ast_stmt_t **one = ps_alloc(p, sizeof *one);
            if (!one)
                return NULL;
            one[0] = s;
            cur->u.cond.orelse.n = 1;
            cur->u.cond.orelse.s = one;
        }
        cur = s;
    } while (ps_is_kw(p, TILEC_KW_ELIF));
    if (ps_is_kw(p, TILEC_KW_ELSE)) {
        int line = p->tok.line;
        if (ps_advance(p) < 0 || expect_colon(p, "':' after 'else'") < 0)
            return NULL;
        if (parse_block(p, &cur->u.cond.orelse, "'else' statement", line) < 0)
            return NULL;
    }
    return top;
}

static int reject_loop_else(parser_t *p, const char *loop)
{
    if (!ps_is_kw(p, TILEC_KW_ELSE))
        return 0;
    return ps_perr(p, p->tok.line, p->tok.col, "'else' on a '%s' loop is not supported in tile programs", loop);
}

static ast_stmt_t *parse_for(parser_t *p)
{
    ast_stmt_t *s = ps_new_stmt(p, AST_S_FOR, ps_here(p));
    int line = p->tok.line;
    if (!s || ps_advance(p) < 0)
        return NULL;
    if (!(s->u.loop.target = ps_parse_exprlist(p, 1)))
        return NULL;
    if (!ps_is_kw(p, TILEC_KW_IN))
        return ps_expected(p, "'in' after for loop target"), NULL;
    if (ps_check_target(p, s->u.loop.target, "a for loop") < 0 || ps_advance(p) < 0)
        return NULL;
    if (!(s->u.loop.iter = ps_parse_exprlist(p, 0)))
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
    ast_stmt_t *s = ps_new_stmt(p, AST_S_WHILE, ps_here(p));
    int line = p->tok.line;
    if (!s || ps_advance(p) < 0)
        return NULL;
    if (!(s->u.wloop.cond = ps_parse_test(p)))
        return NULL;
    if (expect_colon(p, "':' after while condition") < 0)
        return NULL;
    if (parse_block(p, &s->u.wloop.body, "'while' statement", line) < 0)
        return NULL;
    if (reject_loop_else(p, "while") < 0)
        return NULL;
    return s;
}

/* `with A as t, B, C: body` is Python's nested `with A as t: with B: with
 * C: body`; the items after the first take no `as` here. */
static ast_stmt_t *parse_with(parser_t *p)
{
    ast_stmt_t *s = ps_new_stmt(p, AST_S_WITH, ps_here(p));
    ast_expr_t *more[8];
    int nmore = 0, line = p->tok.line;
    if (!s || ps_advance(p) < 0)
        return NULL;
    if (!(s->u.with.ctx = ps_parse_test(p)))
        return NULL;
    while (ps_is_op(p, TILEC_OP_COMMA)) {
        if (nmore == 8)
            return ps_unsupported(p, "more than 9 context managers in a 'with' statement"), NULL;
        if (ps_advance(p) < 0 || !(more[nmore++] = ps_parse_test(p)))
            return NULL;
    }
    if (ps_is_kw(p, TILEC_KW_AS)) {
        if (nmore)
            return ps_unsupported(p, "'as' after the first of several context managers"), NULL;
        if (ps_advance(p) < 0)
            return NULL;
        ast_expr_t *t = ps_parse_exprlist(p, 1);
        if (!t)
            return NULL;
        if (ps_is_kw(p, TILEC_KW_AS))
            return ps_unsupported(p, "'as' after the first of several context managers"), NULL;
        /* `as x, ctx2`: what is not a target starts the further context managers */
        for (int i = 0; t->kind == AST_TUPLE && i < t->u.seq.n; i++) {
            ast_expr_kind_t k = t->u.seq.items[i]->kind;
            if (k != AST_NAME && k != AST_ATTR && k != AST_SUBSCRIPT && k != AST_TUPLE && k != AST_LIST &&
                k != AST_STARRED) {
                if (t->u.seq.n - i > 8)
                    return ps_unsupported(p, "more than 9 context managers in a 'with' statement"), NULL;
                for (int j = i; j < t->u.seq.n; j++) more[nmore++] = t->u.seq.items[j];
                t->u.seq.n = i;
                if (i == 1) t = t->u.seq.items[0];
                break;
            }
        }
        if (ps_check_target(p, t, "a with statement") < 0)
            return NULL;
        s->u.with.target = t;
    }
    if (expect_colon(p, s->u.with.target ? "':' after with target" : "'as' or ':' after with item") < 0)
        return NULL;
    if (nmore == 0)
        return parse_block(p, &s->u.with.body, "'with' statement", line) < 0 ? NULL : s;
    {
        ast_stmt_t *outer = s;
        for (int i = 0; i < nmore; i++) {
            ast_stmt_t *w = ps_new_stmt(p, AST_S_WITH, more[i]->loc);
            ast_stmt_t **one = ps_alloc(p, sizeof *one);
            if (!w || !one)
                return NULL;
            w->u.with.ctx = more[i];
            one[0] = w;
            s->u.with.body.n = 1;
            s->u.with.body.s = one;
            s = w;
        }
        if (parse_block(p, &s->u.with.body, "'with' statement", line) < 0)
            return NULL;
        return outer;
    }
}

static int parse_params(parser_t *p, ast_stmt_t *s)
{
    ast_param_t *params = NULL;
    int n = 0, cap = 0, seen_default = 0;
    while (!ps_is_op(p, TILEC_OP_RPAR)) {
        if (s->u.def.vararg)
            return ps_unsupported(p, "parameters after '*args' (keyword-only parameters)");
        if (ps_is_op(p, TILEC_OP_STAR)) {
            if (ps_parse_vararg(p, &s->u.def.vararg) < 0)
                return -1;
            if (ps_is_op(p, TILEC_OP_COMMA) && ps_advance(p) < 0)
                return -1;
            continue;
        }
        if (ps_is_op(p, TILEC_OP_DSTAR))
            return ps_unsupported(p, "'**kwargs'");
        if (ps_is_op(p, TILEC_OP_SLASH))
            return ps_unsupported(p, "the positional-only marker '/'");
        if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
            return ps_expected(p, "parameter name");
        ast_param_t *np = ps_grow(p, params, n, &cap, sizeof *np);
        if (!np)
            return -1;
        params = np;
        ast_param_t *pm = &params[n++];
        pm->loc = ps_here(p);
        if (!(pm->name = ps_tok_name(p)) || ps_advance(p) < 0)
            return -1;
        if (ps_is_op(p, TILEC_OP_COLON)) {
            if (ps_advance(p) < 0 || !(pm->annotation = ps_parse_test(p)))
                return -1;
        }
        if (ps_is_op(p, TILEC_OP_ASSIGN)) {
            if (ps_advance(p) < 0 || !(pm->dflt = ps_parse_test(p)))
                return -1;
            seen_default = 1;
        } else if (seen_default) {
            return ps_perr(p, pm->loc.line, pm->loc.col, "parameter '%s' without a default follows a parameter with a default",
                        pm->name);
        }
        if (ps_is_op(p, TILEC_OP_COMMA)) {
            if (ps_advance(p) < 0)
                return -1;
        } else if (!ps_is_op(p, TILEC_OP_RPAR)) {
            return ps_expected(p, "',' or ')' in parameter list");
        }
    }
    s->u.def.nparams = n;
    s->u.def.params = params;
    return 0;
}

static ast_stmt_t *parse_def(parser_t *p, expr_vec_t *decorators, ast_loc_t loc)
{
    ast_stmt_t *s = ps_new_stmt(p, AST_S_DEF, loc);
    int line = p->tok.line;
    if (!s || ps_advance(p) < 0)
        return NULL;
    if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
        return ps_expected(p, "function name after 'def'"), NULL;
    if (!(s->u.def.name = ps_tok_name(p)) || ps_advance(p) < 0)
        return NULL;
    if (ps_expect_op(p, TILEC_OP_LPAR, "'(' after function name") < 0)
        return NULL;
    if (parse_params(p, s) < 0 || ps_advance(p) < 0)
        return NULL;
    if (ps_is_op(p, TILEC_OP_ARROW)) {
        if (ps_advance(p) < 0 || !ps_parse_test(p)) /* return annotation: parsed, ignored */
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

/* class NAME[(object)]: body.  Bases other than `object` are not supported:
 * a class is a compile-time namespace with methods (frontend/classes.c). */
static ast_stmt_t *parse_class(parser_t *p)
{
    ast_stmt_t *s = ps_new_stmt(p, AST_S_CLASS, ps_here(p));
    int line = p->tok.line;
    if (!s || ps_advance(p) < 0)
        return NULL;
    if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
        return ps_expected(p, "class name after 'class'"), NULL;
    if (!(s->u.def.name = ps_tok_name(p)) || ps_advance(p) < 0)
        return NULL;
    if (ps_is_op(p, TILEC_OP_LPAR)) {
        if (ps_advance(p) < 0)
            return NULL;
        if (!ps_is_op(p, TILEC_OP_RPAR)) {
            if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw || p->tok.len != 6 || memcmp(p->tok.text, "object", 6))
                return ps_unsupported(p, "a base class other than object"), NULL;
            if (ps_advance(p) < 0)
                return NULL;
        }
        if (ps_expect_op(p, TILEC_OP_RPAR, "')' after the base class") < 0)
            return NULL;
    }
    if (expect_colon(p, "':' after class name") < 0)
        return NULL;
    if (parse_block(p, &s->u.def.body, "class definition", line) < 0)
        return NULL;
    return s;
}

static ast_stmt_t *parse_decorated(parser_t *p)
{
    ast_loc_t loc = ps_here(p);
    expr_vec_t decs = { 0 };
    while (ps_is_op(p, TILEC_OP_AT)) {
        if (ps_advance(p) < 0)
            return NULL;
        ast_expr_t *e = ps_parse_test(p);
        if (!e || ps_push_expr(p, &decs, e) < 0)
            return NULL;
        if (p->tok.kind != TILEC_TOK_NEWLINE)
            return ps_expected(p, "NEWLINE after decorator"), NULL;
        if (ps_advance(p) < 0)
            return NULL;
    }
    if (ps_is_kw(p, TILEC_KW_CLASS))
        return ps_unsupported(p, "a decorator on a class"), NULL;
    if (ps_is_kw(p, TILEC_KW_ASYNC))
        return ps_unsupported(p, "'async'"), NULL;
    if (!ps_is_kw(p, TILEC_KW_DEF))
        return ps_expected(p, "'def' after decorator"), NULL;
    return parse_def(p, &decs, loc);
}

/* dotted name: NAME ('.' NAME)*, as one arena string.  The tokens lie in
 * one stretch of source with only blanks and backslash-newlines between
 * them (no comment can sit inside), so the name is that stretch filtered. */
static const char *parse_dotted(parser_t *p, const char *what)
{
    if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
        return ps_expected(p, what), NULL;
    const char *start = p->tok.text, *end = p->tok.text + p->tok.len;
    if (ps_advance(p) < 0)
        return NULL;
    while (ps_is_op(p, TILEC_OP_DOT)) {
        if (ps_advance(p) < 0)
            return NULL;
        if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
            return ps_expected(p, "name after '.' in module path"), NULL;
        end = p->tok.text + p->tok.len;
        if (ps_advance(p) < 0)
            return NULL;
    }
    char *s = ps_alloc(p, (size_t)(end - start) + 1);
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
    if (!ps_is_kw(p, TILEC_KW_AS))
        return 0;
    if (ps_advance(p) < 0)
        return -1;
    if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
        return ps_expected(p, "name after 'as'");
    if (!(in->asname = ps_tok_name(p)))
        return -1;
    return ps_advance(p);
}

static ast_stmt_t *parse_import(parser_t *p)
{
    ast_stmt_t *s = ps_new_stmt(p, AST_S_IMPORT, ps_here(p));
    int is_from = ps_is_kw(p, TILEC_KW_FROM);
    ast_import_name_t *names = NULL;
    int n = 0, cap = 0, paren = 0;
    if (!s || ps_advance(p) < 0)
        return NULL;
    if (is_from) {
        if (ps_is_op(p, TILEC_OP_DOT) || ps_is_op(p, TILEC_OP_ELLIPSIS))
            return ps_unsupported(p, "relative import"), NULL;
        if (!(s->u.import.from = parse_dotted(p, "module name after 'from'")))
            return NULL;
        if (!ps_is_kw(p, TILEC_KW_IMPORT))
            return ps_expected(p, "'import' after module name"), NULL;
        if (ps_advance(p) < 0)
            return NULL;
        if (ps_is_op(p, TILEC_OP_LPAR)) {
            paren = 1;
            if (ps_advance(p) < 0)
                return NULL;
        }
    }
    for (;;) {
        ast_import_name_t *nn = ps_grow(p, names, n, &cap, sizeof *nn);
        if (!nn)
            return NULL;
        names = nn;
        ast_import_name_t *in = &names[n++];
        in->loc = ps_here(p);
        if (is_from && !paren && ps_is_op(p, TILEC_OP_STAR) && n == 1) {
            if (!(in->name = tilec_arena_strdup(p->a, "*")))
                return ps_perr(p, in->loc.line, in->loc.col, "out of memory"), NULL;
            if (ps_advance(p) < 0)
                return NULL;
            break;
        }
        if (is_from) {
            if (p->tok.kind != TILEC_TOK_NAME || p->tok.kw)
                return ps_expected(p, "name to import"), NULL;
            if (!(in->name = ps_tok_name(p)) || ps_advance(p) < 0)
                return NULL;
        } else if (!(in->name = parse_dotted(p, "module name after 'import'"))) {
            return NULL;
        }
        if (parse_as_name(p, in) < 0)
            return NULL;
        if (!ps_is_op(p, TILEC_OP_COMMA))
            break;
        if (ps_advance(p) < 0)
            return NULL;
        if (paren && ps_is_op(p, TILEC_OP_RPAR))
            break;
    }
    if (paren && ps_expect_op(p, TILEC_OP_RPAR, "',' or ')' after imported name") < 0)
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
    if (ps_is_kw(p, TILEC_KW_YIELD))
        return ps_unsupported(p, "'yield'"), NULL;
    if (!ps_starts_expr(p))
        return ps_expected(p, "expression"), NULL;
    return ps_parse_exprlist(p, 0);
}

static ast_stmt_t *parse_expr_stmt(parser_t *p)
{
    ast_loc_t loc = ps_here(p);
    ast_expr_t *first = ps_parse_exprlist(p, 0);
    if (!first)
        return NULL;
    if (ps_is_op(p, TILEC_OP_COLON)) {
        ast_stmt_t *s = ps_new_stmt(p, AST_S_ANNASSIGN, loc);
        if (!s || ps_check_single_target(p, first, "an annotated assignment") < 0 || ps_advance(p) < 0)
            return NULL;
        s->u.ann.target = first;
        if (!(s->u.ann.annotation = ps_parse_test(p)))
            return NULL;
        if (ps_is_op(p, TILEC_OP_ASSIGN)) {
            if (ps_advance(p) < 0 || !(s->u.ann.value = parse_rhs(p)))
                return NULL;
        }
        return s;
    }
    int aug = p->tok.kind == TILEC_TOK_OP ? augop_of(p->tok.op) : 0;
    if (aug) {
        ast_stmt_t *s = ps_new_stmt(p, AST_S_AUGASSIGN, loc);
        if (!s || ps_check_single_target(p, first, "an augmented assignment") < 0 || ps_advance(p) < 0)
            return NULL;
        s->u.aug.op = aug;
        s->u.aug.target = first;
        if (!(s->u.aug.value = parse_rhs(p)))
            return NULL;
        return s;
    }
    if (ps_is_op(p, TILEC_OP_ASSIGN)) {
        expr_vec_t all = { 0 };
        if (ps_push_expr(p, &all, first) < 0)
            return NULL;
        while (ps_is_op(p, TILEC_OP_ASSIGN)) {
            if (ps_advance(p) < 0)
                return NULL;
            ast_expr_t *e = parse_rhs(p);
            if (!e || ps_push_expr(p, &all, e) < 0)
                return NULL;
        }
        for (int i = 0; i + 1 < all.n; i++)
            if (ps_check_target(p, all.v[i], "an assignment") < 0)
                return NULL;
        ast_stmt_t *s = ps_new_stmt(p, AST_S_ASSIGN, loc);
        if (!s)
            return NULL;
        s->u.assign.ntargets = all.n - 1;
        s->u.assign.targets = all.v;
        s->u.assign.value = all.v[all.n - 1];
        return s;
    }
    ast_stmt_t *s = ps_new_stmt(p, AST_S_EXPR, loc);
    if (s)
        s->u.expr = first;
    return s;
}

static ast_stmt_t *parse_small(parser_t *p)
{
    ast_loc_t loc = ps_here(p);
    p->stmt_col = p->tok.col;
    ast_stmt_t *s;
    if (p->tok.kind == TILEC_TOK_NAME && p->tok.kw) {
        switch (p->tok.kw) {
        case TILEC_KW_PASS: case TILEC_KW_BREAK: case TILEC_KW_CONTINUE:
            s = ps_new_stmt(p, p->tok.kw == TILEC_KW_PASS ? AST_S_PASS : p->tok.kw == TILEC_KW_BREAK ? AST_S_BREAK
                                                                                                 : AST_S_CONTINUE, loc);
            return !s || ps_advance(p) < 0 ? NULL : s;
        case TILEC_KW_RETURN:
            s = ps_new_stmt(p, AST_S_RETURN, loc);
            if (!s || ps_advance(p) < 0)
                return NULL;
            if (ps_starts_expr(p) && !(s->u.ret.value = parse_rhs(p)))
                return NULL;
            return s;
        case TILEC_KW_ASSERT:
            s = ps_new_stmt(p, AST_S_ASSERT, loc);
            if (!s || ps_advance(p) < 0 || !(s->u.assert_.cond = ps_parse_test(p)))
                return NULL;
            if (ps_is_op(p, TILEC_OP_COMMA)) {
                if (ps_advance(p) < 0 || !(s->u.assert_.msg = ps_parse_test(p)))
                    return NULL;
            }
            return s;
        case TILEC_KW_IMPORT: case TILEC_KW_FROM:
            return parse_import(p);
        case TILEC_KW_GLOBAL: return ps_unsupported(p, "'global'"), NULL;
        case TILEC_KW_NONLOCAL: return ps_unsupported(p, "'nonlocal'"), NULL;
        case TILEC_KW_DEL: return ps_unsupported(p, "'del'"), NULL;
        case TILEC_KW_RAISE:
            s = ps_new_stmt(p, AST_S_RAISE, loc);
            if (!s || ps_advance(p) < 0)
                return NULL;
            if (ps_starts_expr(p) && !(s->u.ret.value = ps_parse_test(p)))
                return NULL;
            if (ps_is_kw(p, TILEC_KW_FROM)) {   /* raise X from Y: the cause is not kept */
                if (ps_advance(p) < 0 || !ps_parse_test(p))
                    return NULL;
            }
            return s;
        case TILEC_KW_YIELD: return ps_unsupported(p, "'yield'"), NULL;
        case TILEC_KW_CLASS: return ps_expected(p, "'class' at the start of a line"), NULL;
        case TILEC_KW_TRY: return ps_unsupported(p, "'try'"), NULL;
        case TILEC_KW_ASYNC: return ps_unsupported(p, "'async'"), NULL;
        case TILEC_KW_ELSE: case TILEC_KW_ELIF:
            return ps_perr(p, loc.line, loc.col, "'%s' without a matching 'if' (check the indentation)",
                        tilec_lexer_kw_text(p->tok.kw)), NULL;
        case TILEC_KW_EXCEPT: case TILEC_KW_FINALLY:
            return ps_unsupported(p, p->tok.kw == TILEC_KW_EXCEPT ? "'except' (and 'try')" : "'finally' (and 'try')"),
                   NULL;
        default:
            break; /* True/False/None/not/lambda/await...: expressions */
        }
    }
    if (ps_is_op(p, TILEC_OP_ELLIPSIS)) {
        /* `...` alone is a placeholder body, like pass */
        if (ps_advance(p) < 0)
            return NULL;
        if (p->tok.kind != TILEC_TOK_NEWLINE && !ps_is_op(p, TILEC_OP_SEMI))
            return ps_perr(p, loc.line, loc.col, "'...' (Ellipsis) is not supported in tile programs except as a "
                                              "placeholder statement"), NULL;
        return ps_new_stmt(p, AST_S_PASS, loc);
    }
    if (!ps_starts_expr(p))
        return ps_expected(p, "statement"), NULL;
    return parse_expr_stmt(p);
}

static int parse_simple_stmts(parser_t *p, stmt_vec_t *out)
{
    for (;;) {
        ast_stmt_t *s = parse_small(p);
        if (!s || push_stmt(p, out, s) < 0)
            return -1;
        if (!ps_is_op(p, TILEC_OP_SEMI))
            break;
        if (ps_advance(p) < 0)
            return -1;
        if (p->tok.kind == TILEC_TOK_NEWLINE)
            break;
    }
    if (p->tok.kind != TILEC_TOK_NEWLINE)
        return ps_expected(p, "NEWLINE or ';' after statement");
    return ps_advance(p);
}

static int parse_statement(parser_t *p, stmt_vec_t *out)
{
    ast_stmt_t *s = NULL;
    p->stmt_col = p->tok.col;
    switch (p->tok.kind) {
    case TILEC_TOK_NEWLINE:
        return ps_advance(p);
    case TILEC_TOK_INDENT:
        return ps_perr(p, p->tok.line, p->tok.col, "unexpected indent");
    case TILEC_TOK_DEDENT: case TILEC_TOK_EOF:
        return ps_expected(p, "statement");
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
        case TILEC_KW_DEF: s = parse_def(p, NULL, ps_here(p)); break;
        case TILEC_KW_CLASS: s = parse_class(p); break;
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

static int parse_any(tilec_arena_t *a, tilec_diag_t *d, const char *path, const char *src, size_t len,
                     size_t max_bytes, int file, ast_module_t **out);

int tilec_parse_limited(tilec_arena_t *a, tilec_diag_t *d, const char *path,
                        const char *src, size_t len, size_t max_bytes, ast_module_t **out)
{
    return parse_any(a, d, path, src, len, max_bytes, 0, out);
}

int tilec_parse_file(tilec_arena_t *a, tilec_diag_t *d, const char *path, const char *src, size_t len, int file,
                     ast_module_t **out)
{
    return parse_any(a, d, path, src, len, TILEC_FRONTEND_MAX_BYTES, file, out);
}

static int parse_any(tilec_arena_t *a, tilec_diag_t *d, const char *path, const char *src, size_t len,
                     size_t max_bytes, int file, ast_module_t **out)
{
    if (out)
        *out = NULL;
    parser_t *p = tilec_arena_alloc(a, sizeof *p);
    if (!p)
        return tilec_diag_error(d, 0, 0, "out of memory");
    memset(p, 0, sizeof *p);
    p->file = file;
    p->a = a;
    p->d = d;
    p->src_len = len;
    p->max_bytes = max_bytes;
    tilec_lexer_init(&p->lx, a, d, src, len);
    ast_module_t *m = tilec_arena_alloc(a, sizeof *m);
    if (!m)
        return tilec_diag_error(d, 0, 0, "out of memory");
    m->path = path;
    if (ps_advance(p) < 0)
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
