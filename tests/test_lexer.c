/*
 * tests/test_lexer.c — the tokenizer of the tile-program subset.
 *
 * Each test lexes a small source and compares a compact rendering of the
 * token stream ("NAME:x OP:= INT:1 NL EOF"), or checks the diagnostic an
 * invalid input must produce (message and exact line:col).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"

typedef struct lexed {
    tilec_arena_t arena;
    tilec_diag_t diag;
    char out[8192];
    int rc;
} lexed_t;

static void append(char *out, size_t cap, const char *s)
{
    size_t n = strlen(out);
    if (n && n + 1 < cap)
        out[n++] = ' ';
    snprintf(out + n, cap - n, "%s", s);
}

/* Lexes src (len bytes) to the end or the first error. */
static void lex_len(lexed_t *L, const char *src, size_t len)
{
    tilec_arena_init(&L->arena);
    tilec_diag_init(&L->diag, "t.py", src, len);
    L->out[0] = '\0';
    L->rc = 0;
    tilec_lexer_t *lx = malloc(sizeof *lx);
    cr_assert(lx);
    tilec_lexer_init(lx, &L->arena, &L->diag, src, len);
    for (int i = 0; i < 100000; i++) {
        tilec_token_t t;
        if (tilec_lexer_next(lx, &t) < 0) {
            L->rc = -1;
            break;
        }
        char buf[256];
        switch (t.kind) {
        case TILEC_TOK_EOF: snprintf(buf, sizeof buf, "EOF"); break;
        case TILEC_TOK_NEWLINE: snprintf(buf, sizeof buf, "NL"); break;
        case TILEC_TOK_INDENT: snprintf(buf, sizeof buf, "IND"); break;
        case TILEC_TOK_DEDENT: snprintf(buf, sizeof buf, "DED"); break;
        case TILEC_TOK_NAME:
            snprintf(buf, sizeof buf, "%s:%.*s", t.kw ? "KW" : "NAME", (int)t.len, t.text);
            break;
        case TILEC_TOK_INT: snprintf(buf, sizeof buf, "INT:%lld", (long long)t.ival); break;
        case TILEC_TOK_FLOAT: snprintf(buf, sizeof buf, "FLOAT:%g", t.fval); break;
        case TILEC_TOK_STR: snprintf(buf, sizeof buf, "STR:%s", t.str); break;
        case TILEC_TOK_OP: snprintf(buf, sizeof buf, "OP:%s", tilec_lexer_op_text(t.op)); break;
        }
        append(L->out, sizeof L->out, buf);
        if (t.kind == TILEC_TOK_EOF)
            break;
    }
    free(lx);
}

static void lex(lexed_t *L, const char *src)
{
    lex_len(L, src, strlen(src));
}

static void done(lexed_t *L)
{
    tilec_arena_destroy(&L->arena);
}

#define EXPECT_TOKENS(src, want)                                                   \
    do {                                                                           \
        lexed_t L_;                                                                \
        lex(&L_, src);                                                             \
        cr_expect_eq(L_.rc, 0, "lexing %s failed: %s", #src, tilec_diag_text(&L_.diag)); \
        cr_expect_str_eq(L_.out, want, "tokens of %s", #src);                      \
        done(&L_);                                                                 \
    } while (0)

/* Lexing must fail with a first line "t.py:LINE:COL: error: MSG". */
static void expect_error_len(const char *src, size_t len, int line, int col, const char *msg)
{
    lexed_t L;
    lex_len(&L, src, len);
    cr_expect_eq(L.rc, -1, "expected an error lexing %s (tokens: %s)", src, L.out);
    char want[512];
    snprintf(want, sizeof want, "t.py:%d:%d: error: %s\n", line, col, msg);
    const char *text = tilec_diag_text(&L.diag);
    cr_expect(strncmp(text, want, strlen(want)) == 0, "diagnostic\n%s\nexpected to start with\n%s", text, want);
    done(&L);
}

static void expect_error(const char *src, int line, int col, const char *msg)
{
    expect_error_len(src, strlen(src), line, col, msg);
}

Test(lexer, empty_and_blank)
{
    EXPECT_TOKENS("", "EOF");
    /* f-strings are strings to the lexer; the parser splits their fields */
    EXPECT_TOKENS("x = f'{y}'\n", "NAME:x OP:= STR:{y} NL EOF");
    EXPECT_TOKENS("x = rF\"{y}\\n\"\n", "NAME:x OP:= STR:{y}\\n NL EOF");
    EXPECT_TOKENS("\n\n   \n# only a comment\n", "EOF");
    EXPECT_TOKENS("x", "NAME:x NL EOF");
    EXPECT_TOKENS("x\n", "NAME:x NL EOF");
    EXPECT_TOKENS("x # comment\n\n# c\ny", "NAME:x NL NAME:y NL EOF");
}

Test(lexer, indentation)
{
    EXPECT_TOKENS("if a:\n    b\n    c\nd\n",
                  "KW:if NAME:a OP:: NL IND NAME:b NL NAME:c NL DED NAME:d NL EOF");
    EXPECT_TOKENS("if a:\n  if b:\n    c\n\n   # odd comment\nd\n",
                  "KW:if NAME:a OP:: NL IND KW:if NAME:b OP:: NL IND NAME:c NL DED DED NAME:d NL EOF");
    /* blocks still open at the end of the file */
    EXPECT_TOKENS("def f():\n  if x:\n    y", "KW:def NAME:f OP:( OP:) OP:: NL IND KW:if NAME:x OP:: NL IND NAME:y NL DED DED EOF");
    EXPECT_TOKENS("if a:\n\tif b:\n\t\tc\n\td\n",
                  "KW:if NAME:a OP:: NL IND KW:if NAME:b OP:: NL IND NAME:c NL DED NAME:d NL DED EOF");
}

Test(lexer, indentation_errors)
{
    expect_error("if a:\n    b\n  c\n", 3, 3, "unindent does not match any outer indentation level");
    /* 4 spaces + tab = column 8 = one tab, but not at tab size 1 */
    expect_error("if a:\n\tb\n    \tc\n", 3, 6, "inconsistent use of tabs and spaces in indentation");
    /* a tab is 8 columns wide, as wide as 8 spaces, which is ambiguous */
    expect_error("if a:\n\tb\n        c\n", 3, 9, "inconsistent use of tabs and spaces in indentation");
    expect_error("if a:\n\tb\n  c\n", 3, 3, "unindent does not match any outer indentation level");
}

Test(lexer, deep_indentation_is_an_error)
{
    size_t cap = 400 * 410;
    char *src = malloc(cap), *p = src;
    for (int i = 0; i < 300; i++) {
        memset(p, ' ', (size_t)i);
        p += i;
        p += sprintf(p, "if x:\n");
    }
    *p = '\0';
    lexed_t L;
    lex(&L, src);
    cr_expect_eq(L.rc, -1);
    cr_expect(strstr(tilec_diag_text(&L.diag), "nesting too deep") != NULL, "%s", tilec_diag_text(&L.diag));
    done(&L);
    free(src);
}

Test(lexer, implicit_joining_and_continuation)
{
    EXPECT_TOKENS("f(a,\n      b)\n", "NAME:f OP:( NAME:a OP:, NAME:b OP:) NL EOF");
    EXPECT_TOKENS("x = [1,\n# comment\n\n  2]\n", "NAME:x OP:= OP:[ INT:1 OP:, INT:2 OP:] NL EOF");
    EXPECT_TOKENS("x = 1 + \\\n    2\n", "NAME:x OP:= INT:1 OP:+ INT:2 NL EOF");
    EXPECT_TOKENS("d = {1: 2}\n", "NAME:d OP:= OP:{ INT:1 OP:: INT:2 OP:} NL EOF");
    expect_error("x = 1 \\ 2\n", 1, 8, "unexpected character after line continuation character");
    expect_error("x = 1 \\", 1, 7, "unexpected end of file after line continuation character");
}

Test(lexer, line_endings_and_bom)
{
    EXPECT_TOKENS("a\r\nb\r\n", "NAME:a NL NAME:b NL EOF");
    EXPECT_TOKENS("a\rb\r", "NAME:a NL NAME:b NL EOF");
    EXPECT_TOKENS("\xef\xbb\xbfx = 1\n", "NAME:x OP:= INT:1 NL EOF");
    /* columns after a BOM count from the first character after it */
    expect_error("\xef\xbb\xbfx = $\n", 1, 5, "unexpected character '$'");
    expect_error("a\r\nb\r\n  $", 3, 3, "unexpected character '$'");
}

Test(lexer, names_and_keywords)
{
    EXPECT_TOKENS("_x1 if else True None inf match", "NAME:_x1 KW:if KW:else KW:True KW:None NAME:inf NAME:match NL EOF");
    EXPECT_TOKENS("and or not in is lambda", "KW:and KW:or KW:not KW:in KW:is KW:lambda NL EOF");
    expect_error("caf\xc3\xa9 = 1\n", 1, 4,
                 "non-ASCII character U+00E9 is not allowed outside strings and comments (names must be ASCII)");
    expect_error("x = \xce\xb1\n", 1, 5,
                 "non-ASCII character U+03B1 is not allowed outside strings and comments (names must be ASCII)");
}

Test(lexer, integers)
{
    EXPECT_TOKENS("0 00 7 1_000 0x1F 0XfF 0o17 0b1010 0x_ff 0b_1",
                  "INT:0 INT:0 INT:7 INT:1000 INT:31 INT:255 INT:15 INT:10 INT:255 INT:1 NL EOF");
    EXPECT_TOKENS("9223372036854775807 0x7fffffffffffffff", "INT:9223372036854775807 INT:9223372036854775807 NL EOF");
    expect_error("x = 9223372036854775808\n", 1, 5, "integer literal is too large (does not fit in 64 bits)");
    expect_error("x = 0x8000000000000000\n", 1, 5, "integer literal is too large (does not fit in 64 bits)");
    expect_error("x = 123456789012345678901234567890\n", 1, 5,
                 "integer literal is too large (does not fit in 64 bits)");
    expect_error("x = 0123\n", 1, 5, "leading zeros in decimal integer literals are not permitted; use 0o for octal");
    expect_error("x = 1__0\n", 1, 6, "invalid decimal literal");
    expect_error("x = 1_\n", 1, 6, "invalid decimal literal");
    expect_error("x = 0b102\n", 1, 9, "invalid digit '2' in binary literal");
    expect_error("x = 0o8\n", 1, 7, "invalid digit '8' in octal literal");
    expect_error("x = 0x\n", 1, 5, "invalid hexadecimal literal");
    expect_error("x = 12abc\n", 1, 7, "invalid decimal literal");
    expect_error("x = 3j\n", 1, 6, "complex literals are not supported in tile programs");
}

Test(lexer, floats)
{
    EXPECT_TOKENS("1.0 1e-3 .5 1_000.0 1. 1.e2 2E+2 0.25e1_0", "FLOAT:1 FLOAT:0.001 FLOAT:0.5 FLOAT:1000 FLOAT:1 "
                                                         "FLOAT:100 FLOAT:200 FLOAT:2.5e+09 NL EOF");
    EXPECT_TOKENS("x[1:]", "NAME:x OP:[ INT:1 OP:: OP:] NL EOF");
    EXPECT_TOKENS("a.b", "NAME:a OP:. NAME:b NL EOF");
    expect_error("x = 1e\n", 1, 6, "invalid float literal: exponent has no digits");
    expect_error("x = 1.5x\n", 1, 8, "invalid decimal literal");
}

Test(lexer, strings)
{
    EXPECT_TOKENS("'a' \"b\" 'it''s'", "STR:a STR:b STR:it STR:s NL EOF");
    EXPECT_TOKENS("'\\n' '\\x41\\101\\u00e9' r'\\n' u'x'", "STR:\n STR:AA\xc3\xa9 STR:\\n STR:x NL EOF");
    EXPECT_TOKENS("'\\'' \"\\\"\" '\\q'", "STR:' STR:\" STR:\\q NL EOF");
    EXPECT_TOKENS("R'\\d+' rb", "STR:\\d+ NAME:rb NL EOF");
    EXPECT_TOKENS("'caf\xc3\xa9'", "STR:caf\xc3\xa9 NL EOF");
    /* triple-quoted strings span lines; the line count goes on after them */
    EXPECT_TOKENS("\"\"\"doc\nstring\"\"\"\nx\n", "STR:doc\nstring NL NAME:x NL EOF");
    EXPECT_TOKENS("'''a'b''c'''", "STR:a'b''c NL EOF");
    EXPECT_TOKENS("'a\\\nb'", "STR:ab NL EOF");
    expect_error("x = \"\"\"doc\nstring\"\"\"\ny = $\n", 3, 5, "unexpected character '$'");
}

Test(lexer, string_errors)
{
    expect_error("x = 'abc\ny = 1\n", 1, 5, "unterminated string literal");
    expect_error("x = 'abc", 1, 5, "unterminated string literal");
    expect_error("x = '''abc\n\n", 1, 5, "unterminated triple-quoted string literal");
    expect_error("x = f'{y}\n", 1, 5, "unterminated string literal");
    expect_error("x = b'ab'\n", 1, 5, "bytes literals are not supported in tile programs");
    expect_error("x = '\\x4'\n", 1, 6, "truncated \\x escape in string literal");
    expect_error("x = '\\N{DASH}'\n", 1, 6, "\\N{...} escapes are not supported in tile programs");
    expect_error("x = '\\U00110000'\n", 1, 6, "invalid Unicode code point in \\U escape");
    expect_error("x = 'ab\xffz'\n", 1, 8, "invalid byte 0xff");
    expect_error_len("x = 'a\0b'\n", 10, 1, 7, "invalid byte 0x00");
}

Test(lexer, operators)
{
    EXPECT_TOKENS("+ - * / // % ** @ << >> & | ^ ~ < > <= >= == != -> ... . , : ; =",
                  "OP:+ OP:- OP:* OP:/ OP:// OP:% OP:** OP:@ OP:<< OP:>> OP:& OP:| OP:^ OP:~ OP:< OP:> "
                  "OP:<= OP:>= OP:== OP:!= OP:-> OP:... OP:. OP:, OP:: OP:; OP:= NL EOF");
    EXPECT_TOKENS("+= -= *= /= //= %= **= @= &= |= ^= <<= >>=",
                  "OP:+= OP:-= OP:*= OP:/= OP://= OP:%= OP:**= OP:@= OP:&= OP:|= OP:^= OP:<<= OP:>>= NL EOF");
    EXPECT_TOKENS("a**-b", "NAME:a OP:** OP:- NAME:b NL EOF");
    expect_error("if (n := 3):\n", 1, 7, "the walrus operator ':=' is not supported in tile programs");
    expect_error("x = !y\n", 1, 5, "unexpected character '!'");
    expect_error("x = a ? b\n", 1, 7, "unexpected character '?'");
}

Test(lexer, brackets)
{
    expect_error("x = (1, 2]\n", 1, 10, "closing ']' does not match opening '(' at line 1");
    expect_error("x = 1)\n", 1, 6, "unmatched ')'");
    expect_error("x = f(1,\n  [2,\n  3)\n", 3, 4, "closing ')' does not match opening '[' at line 2");
    expect_error("x = f(1,\n  2\n", 1, 6, "'(' was never closed");
    expect_error("y = 1\nx = {'a': [1,\n", 2, 11, "'[' was never closed");
}

Test(lexer, binary_bytes)
{
    expect_error_len("x = 1\n\0y", 8, 2, 1, "invalid byte 0x00");
    expect_error("x = 1 \x01\n", 1, 7, "invalid byte 0x01");
    expect_error("x = 1\n  y\x7f\n", 2, 4, "invalid byte 0x7f");
    expect_error("x = \xff\xfe\n", 1, 5, "invalid byte 0xff");
    expect_error("# comment \xc3\x28\n", 1, 11, "invalid byte 0xc3");
    /* overlong encoding and a UTF-16 surrogate are not UTF-8 */
    expect_error("# \xc0\xaf\n", 1, 3, "invalid byte 0xc0");
    expect_error("# \xed\xa0\x80\n", 1, 3, "invalid byte 0xed");
    /* valid UTF-8 in comments is fine */
    EXPECT_TOKENS("x # \xe2\x9c\x93 done\n", "NAME:x NL EOF");
}

Test(lexer, positions)
{
    const char *src = "def f(x):\n    return x  # c\n\n  \ny = 'a\\\nb' + 2\n";
    tilec_arena_t a;
    tilec_diag_t d;
    tilec_arena_init(&a);
    tilec_diag_init(&d, "t.py", src, strlen(src));
    tilec_lexer_t *lx = malloc(sizeof *lx);
    tilec_lexer_init(lx, &a, &d, src, strlen(src));
    struct { int kind, line, col; } want[] = {
        { TILEC_TOK_NAME, 1, 1 }, { TILEC_TOK_NAME, 1, 5 }, { TILEC_TOK_OP, 1, 6 }, { TILEC_TOK_NAME, 1, 7 },
        { TILEC_TOK_OP, 1, 8 }, { TILEC_TOK_OP, 1, 9 }, { TILEC_TOK_NEWLINE, 1, 10 },
        { TILEC_TOK_INDENT, 2, 5 }, { TILEC_TOK_NAME, 2, 5 }, { TILEC_TOK_NAME, 2, 12 },
        { TILEC_TOK_NEWLINE, 2, 13 }, { TILEC_TOK_DEDENT, 5, 1 }, { TILEC_TOK_NAME, 5, 1 },
        { TILEC_TOK_OP, 5, 3 }, { TILEC_TOK_STR, 5, 5 }, { TILEC_TOK_OP, 6, 4 }, { TILEC_TOK_INT, 6, 6 },
        { TILEC_TOK_NEWLINE, 6, 7 }, { TILEC_TOK_EOF, 6, 7 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        tilec_token_t t;
        cr_assert_eq(tilec_lexer_next(lx, &t), 0);
        cr_expect_eq((int)t.kind, want[i].kind, "token %zu kind %d", i, (int)t.kind);
        cr_expect_eq(t.line, want[i].line, "token %zu line %d want %d", i, t.line, want[i].line);
        cr_expect_eq(t.col, want[i].col, "token %zu col %d want %d", i, t.col, want[i].col);
    }
    /* EOF repeats */
    tilec_token_t t;
    cr_expect_eq(tilec_lexer_next(lx, &t), 0);
    cr_expect_eq((int)t.kind, TILEC_TOK_EOF);
    free(lx);
    tilec_arena_destroy(&a);
}

Test(lexer, errors_are_sticky)
{
    const char *src = "x = $ + 1\n";
    tilec_arena_t a;
    tilec_diag_t d;
    tilec_arena_init(&a);
    tilec_diag_init(&d, "t.py", src, strlen(src));
    tilec_lexer_t *lx = malloc(sizeof *lx);
    tilec_lexer_init(lx, &a, &d, src, strlen(src));
    tilec_token_t t;
    cr_expect_eq(tilec_lexer_next(lx, &t), 0);
    cr_expect_eq(tilec_lexer_next(lx, &t), 0);
    cr_expect_eq(tilec_lexer_next(lx, &t), -1);
    cr_expect_eq(tilec_lexer_next(lx, &t), -1);
    cr_expect_eq(d.nerrors, 1);
    free(lx);
    tilec_arena_destroy(&a);
}

Test(lexer, describe)
{
    lexed_t L;
    const char *src = "foo for 12 'x' (\n";
    tilec_arena_init(&L.arena);
    tilec_diag_init(&L.diag, "t.py", src, strlen(src));
    tilec_lexer_t *lx = malloc(sizeof *lx);
    tilec_lexer_init(lx, &L.arena, &L.diag, src, strlen(src));
    const char *want[] = { "name 'foo'", "keyword 'for'", "number '12'", "string literal", "'('" };
    for (int i = 0; i < 5; i++) {
        tilec_token_t t;
        char buf[64];
        cr_assert_eq(tilec_lexer_next(lx, &t), 0);
        cr_expect_str_eq(tilec_lexer_describe(&t, buf, sizeof buf), want[i]);
    }
    tilec_token_t t = { .kind = TILEC_TOK_NEWLINE };
    char buf[64];
    cr_expect_str_eq(tilec_lexer_describe(&t, buf, sizeof buf), "NEWLINE");
    t.kind = TILEC_TOK_EOF;
    cr_expect_str_eq(tilec_lexer_describe(&t, buf, sizeof buf), "end of file");
    free(lx);
    done(&L);
}

Test(lexer, random_bytes_never_crash)
{
    /* Seeded random inputs, plain and biased towards source-like bytes. */
    size_t n = 1 << 16;
    char *buf = malloc(n);
    const char alphabet[] = "abcxyz_019 ()[]{}:,.=+-*/%'\"\\#\n\t\r@!<>&|^~;\xc3\xa9\xff";
    for (unsigned seed = 1; seed <= 40; seed++) {
        srand(seed);
        for (size_t i = 0; i < n; i++)
            buf[i] = seed % 2 ? (char)(rand() & 0xff) : alphabet[(size_t)rand() % (sizeof alphabet - 1)];
        size_t len = (size_t)rand() % n;
        lexed_t L;
        lex_len(&L, buf, len);
        if (L.rc < 0) {
            cr_expect_eq(L.diag.nerrors, 1);
            cr_expect(L.diag.line >= 1, "seed %u: line %d", seed, L.diag.line);
        }
        done(&L);
    }
    free(buf);
}
