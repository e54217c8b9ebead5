/*
 * frontend/lexer.h — tokens of the tile-program subset of Python.
 *
 * The lexer turns source bytes into Python tokens on demand: NEWLINE,
 * INDENT and DEDENT from an indentation stack, names (keywords flagged),
 * numbers, strings (escapes decoded, adjacent literals are separate tokens)
 * and operators.  Lines inside (), [] and {} and after a backslash are
 * joined.  Anything outside the subset (binary bytes, invalid UTF-8,
 * non-ASCII names, ':=', integers past int64, unclosed brackets)
 * becomes one diagnostic at its exact position and the call returns -1;
 * after that the lexer keeps returning -1.
 */
#ifndef TILEC_FRONTEND_LEXER_H
#define TILEC_FRONTEND_LEXER_H

#include <stddef.h>
#include <stdint.h>
#include "tilec/ir.h"
#include "diag.h"

/* Deepest bracket nesting and indentation the lexer accepts; the parser uses
 * the same bound for its recursion. */
#define TILEC_LEX_MAX_DEPTH 200

typedef enum tilec_tok_kind {
    TILEC_TOK_EOF,
    TILEC_TOK_NEWLINE,
    TILEC_TOK_INDENT,
    TILEC_TOK_DEDENT,
    TILEC_TOK_NAME,   /* text/len; kw != 0 for a keyword */
    TILEC_TOK_INT,    /* ival */
    TILEC_TOK_FLOAT,  /* fval */
    TILEC_TOK_STR,    /* str/slen: decoded bytes, arena, NUL-terminated */
    TILEC_TOK_OP      /* op */
} tilec_tok_kind_t;

typedef enum tilec_kw {
    TILEC_KW_NONE_ = 0, /* not a keyword */
    TILEC_KW_FALSE, TILEC_KW_NONE, TILEC_KW_TRUE, TILEC_KW_AND, TILEC_KW_AS,
    TILEC_KW_ASSERT, TILEC_KW_ASYNC, TILEC_KW_AWAIT, TILEC_KW_BREAK, TILEC_KW_CLASS,
    TILEC_KW_CONTINUE, TILEC_KW_DEF, TILEC_KW_DEL, TILEC_KW_ELIF, TILEC_KW_ELSE,
    TILEC_KW_EXCEPT, TILEC_KW_FINALLY, TILEC_KW_FOR, TILEC_KW_FROM, TILEC_KW_GLOBAL,
    TILEC_KW_IF, TILEC_KW_IMPORT, TILEC_KW_IN, TILEC_KW_IS, TILEC_KW_LAMBDA,
    TILEC_KW_NONLOCAL, TILEC_KW_NOT, TILEC_KW_OR, TILEC_KW_PASS, TILEC_KW_RAISE,
    TILEC_KW_RETURN, TILEC_KW_TRY, TILEC_KW_WHILE, TILEC_KW_WITH, TILEC_KW_YIELD,
    TILEC_KW_COUNT
} tilec_kw_t;

typedef enum tilec_op {
    TILEC_OP_NONE = 0,
    TILEC_OP_LPAR, TILEC_OP_RPAR, TILEC_OP_LSQB, TILEC_OP_RSQB, TILEC_OP_LBRACE, TILEC_OP_RBRACE,
    TILEC_OP_COMMA, TILEC_OP_COLON, TILEC_OP_SEMI, TILEC_OP_DOT, TILEC_OP_ELLIPSIS,
    TILEC_OP_ARROW, TILEC_OP_AT, TILEC_OP_ASSIGN,
    TILEC_OP_PLUS, TILEC_OP_MINUS, TILEC_OP_STAR, TILEC_OP_SLASH, TILEC_OP_DSLASH,
    TILEC_OP_PERCENT, TILEC_OP_DSTAR, TILEC_OP_LSHIFT, TILEC_OP_RSHIFT,
    TILEC_OP_AMP, TILEC_OP_PIPE, TILEC_OP_CARET, TILEC_OP_TILDE,
    TILEC_OP_LT, TILEC_OP_GT, TILEC_OP_LE, TILEC_OP_GE, TILEC_OP_EQ, TILEC_OP_NE,
    /* augmented assignments */
    TILEC_OP_PLUSEQ, TILEC_OP_MINUSEQ, TILEC_OP_STAREQ, TILEC_OP_SLASHEQ, TILEC_OP_DSLASHEQ,
    TILEC_OP_PERCENTEQ, TILEC_OP_DSTAREQ, TILEC_OP_ATEQ, TILEC_OP_AMPEQ, TILEC_OP_PIPEEQ,
    TILEC_OP_CARETEQ, TILEC_OP_LSHIFTEQ, TILEC_OP_RSHIFTEQ,
    TILEC_OP_COUNT
} tilec_op_t;

typedef struct tilec_token {
    tilec_tok_kind_t kind;
    int line, col;          /* 1-based; col counts bytes */
    const char *text;       /* the token's bytes in the source (borrowed) */
    size_t len;
    int kw;                 /* NAME: tilec_kw_t */
    int op;                 /* OP: tilec_op_t */
    int64_t ival;           /* INT */
    double fval;            /* FLOAT */
    const char *str;        /* STR: decoded, arena */
    size_t slen;
    int fstr;               /* STR: an f-string; the parser reads its parts from text */
} tilec_token_t;

typedef struct tilec_lexer {
    tilec_arena_t *arena;
    tilec_diag_t *diag;
    const char *src;
    size_t len, pos;
    int line;
    size_t line_start;       /* offset of the current line's first byte */
    int at_line_start;       /* next token begins a logical line */
    int failed;
    int pending_dedents;
    int ndent;               /* indentation stack depth (>= 1) */
    int indent[TILEC_LEX_MAX_DEPTH + 1];
    int altindent[TILEC_LEX_MAX_DEPTH + 1]; /* same with tabs counted as 1 */
    int nbracket;
    struct { char ch; int line, col; } bracket[TILEC_LEX_MAX_DEPTH];
    int prev_end_line, prev_end_col; /* just past the last real token */
    int sent_eof;
} tilec_lexer_t;

void tilec_lexer_init(tilec_lexer_t *lx, tilec_arena_t *a, tilec_diag_t *d,
                      const char *src, size_t len);
/* Next token into *t; 0 on success, -1 after a diagnostic. At the end it
 * returns NEWLINE (if the last line had tokens), the closing DEDENTs, then
 * EOF forever. */
int tilec_lexer_next(tilec_lexer_t *lx, tilec_token_t *t);
/* Spelling of an operator ("+=", "(" ...). */
const char *tilec_lexer_op_text(int op);
/* Spelling of a keyword ("for" ...). */
const char *tilec_lexer_kw_text(int kw);
/* Human description of a token for "found ..." in messages, e.g. "name 'x'",
 * "'('", "NEWLINE", "end of file".  Written into buf (always terminated). */
const char *tilec_lexer_describe(const tilec_token_t *t, char *buf, size_t n);

/* Decodes one UTF-8 sequence at s (n bytes available): its length, with
 * the code point in *cp_out, or 0 when the bytes are not valid UTF-8
 * (overlong forms, surrogates and values past U+10FFFF included). */
size_t tilec_utf8_decode(const unsigned char *s, size_t n, unsigned *cp_out);

#endif
