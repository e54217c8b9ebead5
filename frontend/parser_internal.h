/*
 * frontend/parser_internal.h — what the two halves of the parser share:
 * the parser state, error and token helpers, allocation from the arena
 * (parser.c), and the expression entry points (parse_expr.c) that
 * statements use.
 */
#ifndef TILEC_PARSER_INTERNAL_H
#define TILEC_PARSER_INTERNAL_H

#include "ast.h"
#include "lexer.h"

#include <stddef.h>

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
    int file;                  /* ast_loc_t.file of what it parses */
} parser_t;

typedef struct expr_vec { ast_expr_t **v; int n, cap; } expr_vec_t;

/* parser.c: errors (each returns -1 after reporting), tokens, allocation */
int ps_perr(parser_t *p, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
const char *ps_bracket_hint(const parser_t *p, char *buf, size_t n);
int ps_expected(parser_t *p, const char *what);   /* "expected WHAT, found TOKEN" */
int ps_unsupported(parser_t *p, const char *what); /* "WHAT is not supported in tile programs" */
int ps_enter(parser_t *p);                         /* one nesting level; -1 when too deep */
void ps_leave(parser_t *p);
int ps_advance(parser_t *p);
int ps_is_op(const parser_t *p, int op);
int ps_is_kw(const parser_t *p, int kw);
int ps_expect_op(parser_t *p, int op, const char *what);
ast_loc_t ps_here(const parser_t *p);
void *ps_alloc(parser_t *p, size_t size);          /* NULL (reported) past the budget */
void *ps_grow(parser_t *p, void *arr, int n, int *cap, size_t elem);
ast_expr_t *ps_new_expr(parser_t *p, ast_expr_kind_t kind, ast_loc_t loc);
ast_stmt_t *ps_new_stmt(parser_t *p, ast_stmt_kind_t kind, ast_loc_t loc);
const char *ps_tok_name(parser_t *p);
int ps_parse_vararg(parser_t *p, const char **name); /* '*' NAME of a parameter list (parse_expr.c) */
int ps_push_expr(parser_t *p, expr_vec_t *vec, ast_expr_t *e);

/* parse_expr.c */
int ps_starts_expr(const parser_t *p);
ast_expr_t *ps_parse_test(parser_t *p);
ast_expr_t *ps_parse_exprlist(parser_t *p, int targets); /* a tuple when there is a comma */
int ps_check_target(parser_t *p, const ast_expr_t *e, const char *ctx);
int ps_check_single_target(parser_t *p, const ast_expr_t *e, const char *ctx);

#endif
