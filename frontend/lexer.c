/*
 * frontend/lexer.c — Python tokens for the tile-program subset.
 *
 * The lexer is pulled one token at a time by the parser, so a huge file
 * never becomes a huge token array.  Logical lines follow Python: a line
 * ends with NEWLINE unless it is inside (), [] or {} or ends with a
 * backslash; blank and comment-only lines produce nothing; the indentation
 * of each logical line is compared with a stack (tabs advance to the next
 * multiple of 8, and also counted as 1 column to catch tab/space mixes that
 * only line up at one tab size, as CPython does) and yields INDENT or
 * DEDENTs.  Line ends are "\n", "\r\n" or a lone "\r" (diag.c counts the
 * same way).
 *
 * Every byte is checked: NUL, stray control bytes and invalid UTF-8 are
 * "invalid byte 0xNN" at their exact line:col (also inside comments and
 * strings), valid non-ASCII outside strings and comments is reported with
 * its code point.  Numbers follow Python's literal grammar (underscores
 * between digits, 0x/0o/0b prefixes); an integer that does not fit in int64
 * is an error.  String escapes are decoded into the arena; code points are
 * stored as UTF-8.
 */
#include "lexer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kw_names[TILEC_KW_COUNT] = {
    [TILEC_KW_FALSE] = "False", [TILEC_KW_NONE] = "None", [TILEC_KW_TRUE] = "True",
    [TILEC_KW_AND] = "and", [TILEC_KW_AS] = "as", [TILEC_KW_ASSERT] = "assert",
    [TILEC_KW_ASYNC] = "async", [TILEC_KW_AWAIT] = "await", [TILEC_KW_BREAK] = "break",
    [TILEC_KW_CLASS] = "class", [TILEC_KW_CONTINUE] = "continue", [TILEC_KW_DEF] = "def",
    [TILEC_KW_DEL] = "del", [TILEC_KW_ELIF] = "elif", [TILEC_KW_ELSE] = "else",
    [TILEC_KW_EXCEPT] = "except", [TILEC_KW_FINALLY] = "finally", [TILEC_KW_FOR] = "for",
    [TILEC_KW_FROM] = "from", [TILEC_KW_GLOBAL] = "global", [TILEC_KW_IF] = "if",
    [TILEC_KW_IMPORT] = "import", [TILEC_KW_IN] = "in", [TILEC_KW_IS] = "is",
    [TILEC_KW_LAMBDA] = "lambda", [TILEC_KW_NONLOCAL] = "nonlocal", [TILEC_KW_NOT] = "not",
    [TILEC_KW_OR] = "or", [TILEC_KW_PASS] = "pass", [TILEC_KW_RAISE] = "raise",
    [TILEC_KW_RETURN] = "return", [TILEC_KW_TRY] = "try", [TILEC_KW_WHILE] = "while",
    [TILEC_KW_WITH] = "with", [TILEC_KW_YIELD] = "yield",
};

/* Operators, longest spellings first so the first match is the longest. */
static const struct { const char *text; int op; } op_table[] = {
    { "**=", TILEC_OP_DSTAREQ }, { "//=", TILEC_OP_DSLASHEQ }, { ">>=", TILEC_OP_RSHIFTEQ },
    { "<<=", TILEC_OP_LSHIFTEQ }, { "...", TILEC_OP_ELLIPSIS },
    { "->", TILEC_OP_ARROW }, { "**", TILEC_OP_DSTAR }, { "//", TILEC_OP_DSLASH },
    { "<<", TILEC_OP_LSHIFT }, { ">>", TILEC_OP_RSHIFT }, { "<=", TILEC_OP_LE },
    { ">=", TILEC_OP_GE }, { "==", TILEC_OP_EQ }, { "!=", TILEC_OP_NE },
    { "+=", TILEC_OP_PLUSEQ }, { "-=", TILEC_OP_MINUSEQ }, { "*=", TILEC_OP_STAREQ },
    { "/=", TILEC_OP_SLASHEQ }, { "%=", TILEC_OP_PERCENTEQ }, { "@=", TILEC_OP_ATEQ },
    { "&=", TILEC_OP_AMPEQ }, { "|=", TILEC_OP_PIPEEQ }, { "^=", TILEC_OP_CARETEQ },
    { "(", TILEC_OP_LPAR }, { ")", TILEC_OP_RPAR }, { "[", TILEC_OP_LSQB }, { "]", TILEC_OP_RSQB },
    { "{", TILEC_OP_LBRACE }, { "}", TILEC_OP_RBRACE }, { ",", TILEC_OP_COMMA },
    { ":", TILEC_OP_COLON }, { ";", TILEC_OP_SEMI }, { ".", TILEC_OP_DOT }, { "@", TILEC_OP_AT },
    { "=", TILEC_OP_ASSIGN }, { "+", TILEC_OP_PLUS }, { "-", TILEC_OP_MINUS },
    { "*", TILEC_OP_STAR }, { "/", TILEC_OP_SLASH }, { "%", TILEC_OP_PERCENT },
    { "&", TILEC_OP_AMP }, { "|", TILEC_OP_PIPE }, { "^", TILEC_OP_CARET }, { "~", TILEC_OP_TILDE },
    { "<", TILEC_OP_LT }, { ">", TILEC_OP_GT },
};

const char *tilec_lexer_op_text(int op)
{
    for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
        if (op_table[i].op == op)
            return op_table[i].text;
    return "?";
}

const char *tilec_lexer_kw_text(int kw)
{
    if (kw <= 0 || kw >= TILEC_KW_COUNT)
        return "?";
    return kw_names[kw];
}

/* ---- errors and positions -------------------------------------------------- */

static int lex_error_at(tilec_lexer_t *lx, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int lex_error_at(tilec_lexer_t *lx, int line, int col, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lx->failed = 1;
    return tilec_diag_error(lx->diag, line, col, "%s", msg);
}

static int cur_col(const tilec_lexer_t *lx, size_t pos)
{
    return (int)(pos - lx->line_start) + 1;
}

/* Length of a valid UTF-8 sequence at s[0..n) and its code point, or 0. */
size_t tilec_utf8_decode(const unsigned char *s, size_t n, unsigned *cp_out)
{
    unsigned c = s[0], cp;
    size_t len;
    if (c < 0x80) { *cp_out = c; return 1; }
    if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
    else return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    *cp_out = cp;
    return len;
}

/* The error for a byte that cannot start a token at pos. */
static int bad_char(tilec_lexer_t *lx, size_t pos)
{
    const unsigned char *s = (const unsigned char *)lx->src + pos;
    unsigned cp;
    int col = cur_col(lx, pos);
    if (s[0] >= 0x80 && tilec_utf8_decode(s, lx->len - pos, &cp) > 1)
        return lex_error_at(lx, lx->line, col,
                            "non-ASCII character U+%04X is not allowed outside strings and "
                            "comments (names must be ASCII)", cp);
    if (s[0] < 0x20 || s[0] >= 0x7f)
        return lex_error_at(lx, lx->line, col, "invalid byte 0x%02x", s[0]);
    return lex_error_at(lx, lx->line, col, "unexpected character '%c'", s[0]);
}

static int is_newline_at(const tilec_lexer_t *lx, size_t p)
{
    return p < lx->len && (lx->src[p] == '\n' || lx->src[p] == '\r');
}

/* Consumes the line terminator at lx->pos. */
static void eat_newline(tilec_lexer_t *lx)
{
    if (lx->src[lx->pos] == '\r' && lx->pos + 1 < lx->len && lx->src[lx->pos + 1] == '\n')
        lx->pos++;
    lx->pos++;
    lx->line++;
    lx->line_start = lx->pos;
}

/* Skips a comment up to (not including) its line end, checking its bytes. */
static int skip_comment(tilec_lexer_t *lx)
{
    while (lx->pos < lx->len && !is_newline_at(lx, lx->pos)) {
        const unsigned char *s = (const unsigned char *)lx->src + lx->pos;
        unsigned cp;
        size_t k = s[0] ? tilec_utf8_decode(s, lx->len - lx->pos, &cp) : 0;
        if (k == 0)
            return lex_error_at(lx, lx->line, cur_col(lx, lx->pos), "invalid byte 0x%02x", s[0]);
        lx->pos += k;
    }
    return 0;
}

void tilec_lexer_init(tilec_lexer_t *lx, tilec_arena_t *a, tilec_diag_t *d,
                      const char *src, size_t len)
{
    memset(lx, 0, sizeof *lx);
    lx->arena = a;
    lx->diag = d;
    lx->src = src ? src : "";
    lx->len = src ? len : 0;
    lx->line = 1;
    lx->at_line_start = 1;
    lx->ndent = 1;
    lx->prev_end_line = 1;
    lx->prev_end_col = 1;
    if (lx->len >= 3 && memcmp(lx->src, "\xef\xbb\xbf", 3) == 0) {
        lx->pos = 3;
        lx->line_start = 3;
    }
}

static void set_tok(tilec_lexer_t *lx, tilec_token_t *t, tilec_tok_kind_t kind, int line, int col)
{
    (void)lx;
    t->kind = kind;
    t->line = line;
    t->col = col;
}

/* ---- indentation ---------------------------------------------------------- */

/* At the start of a logical line: skips blank and comment-only lines, then
 * compares the indentation with the stack.  Returns 1 with an INDENT/DEDENT
 * in *t, 0 when no token results, -1 on error. */
static int handle_indent(tilec_lexer_t *lx, tilec_token_t *t)
{
    for (;;) {
        int col = 0, alt = 0;
        while (lx->pos < lx->len) {
            char c = lx->src[lx->pos];
            if (c == ' ') { col++; alt++; }
            else if (c == '\t') { col = (col / 8 + 1) * 8; alt++; }
            else if (c == '\f') { col = 0; alt = 0; }
            else break;
            lx->pos++;
        }
        if (lx->pos >= lx->len)
            return 0; /* end of file: the caller closes the blocks */
        if (lx->src[lx->pos] == '#') {
            if (skip_comment(lx) < 0)
                return -1;
            if (lx->pos >= lx->len)
                return 0;
        }
        if (is_newline_at(lx, lx->pos)) {
            eat_newline(lx);
            continue;
        }
        lx->at_line_start = 0;
        int line = lx->line, tcol = cur_col(lx, lx->pos);
        int top = lx->indent[lx->ndent - 1], alttop = lx->altindent[lx->ndent - 1];
        if (col == top) {
            if (alt != alttop)
                return lex_error_at(lx, line, tcol, "inconsistent use of tabs and spaces in indentation");
            return 0;
        }
        if (col > top) {
            if (alt <= alttop)
                return lex_error_at(lx, line, tcol, "inconsistent use of tabs and spaces in indentation");
            if (lx->ndent > TILEC_LEX_MAX_DEPTH)
                return lex_error_at(lx, line, tcol, "nesting too deep: more than %d levels of indentation",
                                    TILEC_LEX_MAX_DEPTH);
            lx->indent[lx->ndent] = col;
            lx->altindent[lx->ndent] = alt;
            lx->ndent++;
            set_tok(lx, t, TILEC_TOK_INDENT, line, tcol);
            return 1;
        }
        int n = 0;
        while (lx->ndent > 1 && col < lx->indent[lx->ndent - 1]) {
            lx->ndent--;
            n++;
        }
        if (col != lx->indent[lx->ndent - 1])
            return lex_error_at(lx, line, tcol, "unindent does not match any outer indentation level");
        if (alt != lx->altindent[lx->ndent - 1])
            return lex_error_at(lx, line, tcol, "inconsistent use of tabs and spaces in indentation");
        lx->pending_dedents = n - 1;
        set_tok(lx, t, TILEC_TOK_DEDENT, line, tcol);
        return 1;
    }
}

/* ---- numbers -------------------------------------------------------------- */

static int is_name_char(unsigned c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int digit_value(unsigned c)
{
    if (c >= '0' && c <= '9') return (int)(c - '0');
    if (c >= 'a' && c <= 'f') return (int)(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return (int)(c - 'A' + 10);
    return 99;
}

static unsigned byte_at(const tilec_lexer_t *lx, size_t p)
{
    return p < lx->len ? (unsigned char)lx->src[p] : 0u;
}

/* Scans digits of `base` with single underscores between them, from lx->pos
 * (which must hold a digit unless allow_lead_underscore).  Returns -1 on a
 * misplaced underscore. */
static int scan_digits(tilec_lexer_t *lx, int base, int allow_lead_underscore, const char *what)
{
    int first = 1;
    for (;;) {
        unsigned c = byte_at(lx, lx->pos);
        if (c == '_' && (!first || allow_lead_underscore)) {
            if (digit_value(byte_at(lx, lx->pos + 1)) >= base)
                return lex_error_at(lx, lx->line, cur_col(lx, lx->pos), "invalid %s literal", what);
            lx->pos++;
            c = byte_at(lx, lx->pos);
        }
        if (digit_value(c) >= base)
            return 0;
        lx->pos++;
        first = 0;
    }
}

/* After a number, a name character or non-ASCII byte may not follow. */
static int check_number_end(tilec_lexer_t *lx, const char *what, int base)
{
    unsigned c = byte_at(lx, lx->pos);
    if (c == 'j' || c == 'J') {
        if (base == 10)
            return lex_error_at(lx, lx->line, cur_col(lx, lx->pos),
                                "complex literals are not supported in tile programs");
    }
    if (is_name_char(c) || c >= 0x80) {
        if (base != 10 && digit_value(c) < 16)
            return lex_error_at(lx, lx->line, cur_col(lx, lx->pos), "invalid digit '%c' in %s literal",
                                (char)c, what);
        return lex_error_at(lx, lx->line, cur_col(lx, lx->pos), "invalid %s literal", what);
    }
    return 0;
}

static int lex_number(tilec_lexer_t *lx, tilec_token_t *t)
{
    size_t start = lx->pos;
    int col = cur_col(lx, start);
    unsigned c0 = byte_at(lx, start), c1 = byte_at(lx, start + 1);
    set_tok(lx, t, TILEC_TOK_INT, lx->line, col);
    if (c0 == '0' && (c1 == 'x' || c1 == 'X' || c1 == 'o' || c1 == 'O' || c1 == 'b' || c1 == 'B')) {
        int base = (c1 == 'x' || c1 == 'X') ? 16 : (c1 == 'o' || c1 == 'O') ? 8 : 2;
        const char *what = base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary";
        lx->pos += 2;
        size_t dstart = lx->pos;
        if (scan_digits(lx, base, 1, what) < 0)
            return -1;
        if (check_number_end(lx, what, base) < 0)
            return -1;
        uint64_t v = 0;
        int ndig = 0;
        for (size_t p = dstart; p < lx->pos; p++) {
            if (lx->src[p] == '_')
                continue;
            unsigned d = (unsigned)digit_value((unsigned char)lx->src[p]);
            if (v > ((uint64_t)INT64_MAX - d) / (uint64_t)base)
                return lex_error_at(lx, t->line, col, "integer literal is too large (does not fit in 64 bits)");
            v = v * (uint64_t)base + d;
            ndig++;
        }
        if (ndig == 0)
            return lex_error_at(lx, t->line, col, "invalid %s literal", what);
        t->ival = (int64_t)v;
        t->text = lx->src + start;
        t->len = lx->pos - start;
        return 0;
    }
    int is_float = 0;
    if (c0 != '.') {
        if (scan_digits(lx, 10, 0, "decimal") < 0)
            return -1;
    }
    if (byte_at(lx, lx->pos) == '.') {
        is_float = 1;
        lx->pos++;
        if (digit_value(byte_at(lx, lx->pos)) < 10 && scan_digits(lx, 10, 0, "decimal") < 0)
            return -1;
    }
    unsigned e = byte_at(lx, lx->pos);
    if (e == 'e' || e == 'E') {
        size_t p = lx->pos + 1;
        if (byte_at(lx, p) == '+' || byte_at(lx, p) == '-')
            p++;
        if (digit_value(byte_at(lx, p)) >= 10)
            return lex_error_at(lx, lx->line, cur_col(lx, lx->pos), "invalid float literal: exponent has no digits");
        lx->pos = p;
        if (scan_digits(lx, 10, 0, "decimal") < 0)
            return -1;
        is_float = 1;
    }
    if (check_number_end(lx, "decimal", 10) < 0)
        return -1;
    t->text = lx->src + start;
    t->len = lx->pos - start;
    if (is_float) {
        char *buf = tilec_arena_alloc(lx->arena, t->len + 1);
        if (!buf)
            return lex_error_at(lx, t->line, col, "out of memory");
        size_t n = 0;
        for (size_t p = start; p < lx->pos; p++)
            if (lx->src[p] != '_')
                buf[n++] = lx->src[p];
        buf[n] = '\0';
        t->kind = TILEC_TOK_FLOAT;
        t->fval = strtod(buf, NULL);
        return 0;
    }
    uint64_t v = 0;
    int nonzero = 0;
    for (size_t p = start; p < lx->pos; p++) {
        if (lx->src[p] == '_')
            continue;
        unsigned d = (unsigned)(lx->src[p] - '0');
        if (d)
            nonzero = 1;
        if (v > ((uint64_t)INT64_MAX - d) / 10u)
            return lex_error_at(lx, t->line, col, "integer literal is too large (does not fit in 64 bits)");
        v = v * 10u + d;
    }
    if (c0 == '0' && nonzero)
        return lex_error_at(lx, t->line, col,
                            "leading zeros in decimal integer literals are not permitted; use 0o for octal");
    t->ival = (int64_t)v;
    return 0;
}

/* ---- strings -------------------------------------------------------------- */

static size_t utf8_encode(unsigned cp, char *out)
{
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Reads exactly n hex digits at lx->pos into *v. */
static int read_hex(tilec_lexer_t *lx, int n, unsigned *v, int esc_line, int esc_col, char which)
{
    unsigned acc = 0;
    for (int i = 0; i < n; i++) {
        int d = digit_value(byte_at(lx, lx->pos));
        if (d >= 16 || lx->pos >= lx->len)
            return lex_error_at(lx, esc_line, esc_col, "truncated \\%c escape in string literal", which);
        acc = acc * 16u + (unsigned)d;
        lx->pos++;
    }
    *v = acc;
    return 0;
}

/* The string starting with its opening quote at lx->pos; `raw` from an r
 * prefix; (line, col) is where the token (prefix included) starts. */
static int lex_string(tilec_lexer_t *lx, tilec_token_t *t, int raw, int line, int col, size_t tok_start)
{
    char q = lx->src[lx->pos];
    int triple = byte_at(lx, lx->pos + 1) == (unsigned char)q && byte_at(lx, lx->pos + 2) == (unsigned char)q;
    size_t qlen = triple ? 3 : 1;
    /* Pass 1: find the closing quote. */
    size_t i = lx->pos + qlen, end;
    for (;;) {
        if (i >= lx->len)
            return lex_error_at(lx, line, col, triple ? "unterminated triple-quoted string literal"
                                                      : "unterminated string literal");
        char c = lx->src[i];
        if (c == '\\') {
            if (i + 2 < lx->len && lx->src[i + 1] == '\r' && lx->src[i + 2] == '\n')
                i += 3;
            else
                i += 2;
            continue;
        }
        if (!triple && (c == '\n' || c == '\r'))
            return lex_error_at(lx, line, col, "unterminated string literal");
        if (c == q && (!triple || (i + 2 < lx->len && lx->src[i + 1] == q && lx->src[i + 2] == q))) {
            end = i;
            break;
        }
        i++;
    }
    /* Pass 2: decode; the result is never longer than the source text. */
    char *out = tilec_arena_alloc(lx->arena, end - lx->pos + 1);
    if (!out)
        return lex_error_at(lx, line, col, "out of memory");
    size_t n = 0;
    lx->pos += qlen;
    while (lx->pos < end) {
        const unsigned char *s = (const unsigned char *)lx->src + lx->pos;
        unsigned c = s[0], cp;
        if (c == '\n' || c == '\r') {
            eat_newline(lx);
            out[n++] = '\n';
            continue;
        }
        if (c == 0)
            return lex_error_at(lx, lx->line, cur_col(lx, lx->pos), "invalid byte 0x00");
        if (c >= 0x80) {
            size_t k = tilec_utf8_decode(s, end - lx->pos, &cp);
            if (k == 0)
                return lex_error_at(lx, lx->line, cur_col(lx, lx->pos), "invalid byte 0x%02x", c);
            memcpy(out + n, s, k);
            n += k;
            lx->pos += k;
            continue;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            lx->pos++;
            continue;
        }
        int eline = lx->line, ecol = cur_col(lx, lx->pos);
        unsigned e = byte_at(lx, lx->pos + 1);
        if (raw) {
            /* The backslash stays; the next character cannot end the string. */
            out[n++] = '\\';
            lx->pos++;
            if (e == (unsigned char)q || e == '\\') {
                out[n++] = (char)e;
                lx->pos++;
            }
            continue;
        }
        lx->pos += 2;
        switch (e) {
        case '\n': case '\r':
            lx->pos--;
            eat_newline(lx); /* backslash-newline: line continues */
            break;
        case '\\': out[n++] = '\\'; break;
        case '\'': out[n++] = '\''; break;
        case '"': out[n++] = '"'; break;
        case 'a': out[n++] = '\a'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'v': out[n++] = '\v'; break;
        case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
            unsigned v = e - '0';
            for (int k = 0; k < 2 && byte_at(lx, lx->pos) >= '0' && byte_at(lx, lx->pos) <= '7' && lx->pos < end; k++)
                v = v * 8u + (byte_at(lx, lx->pos++) - '0');
            n += utf8_encode(v, out + n);
            break;
        }
        case 'x': case 'u': case 'U': {
            unsigned v = 0;
            int nd = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            if (lx->pos + (size_t)nd > end || read_hex(lx, nd, &v, eline, ecol, (char)e) < 0) {
                if (!lx->failed)
                    lex_error_at(lx, eline, ecol, "truncated \\%c escape in string literal", (char)e);
                return -1;
            }
            if (v > 0x10ffff)
                return lex_error_at(lx, eline, ecol, "invalid Unicode code point in \\%c escape", (char)e);
            if (v >= 0xd800 && v <= 0xdfff)
                return lex_error_at(lx, eline, ecol, "surrogate code point in string literal is not supported");
            n += utf8_encode(v, out + n);
            break;
        }
        case 'N':
            return lex_error_at(lx, eline, ecol, "\\N{...} escapes are not supported in tile programs");
        default:
            /* Unknown escape: kept as written, as Python does. */
            out[n++] = '\\';
            lx->pos--;
            break;
        }
    }
    out[n] = '\0';
    lx->pos = end + qlen;
    t->kind = TILEC_TOK_STR;
    t->line = line;
    t->col = col;
    t->str = out;
    t->slen = n;
    t->text = lx->src + tok_start;
    t->len = lx->pos - tok_start;
    return 0;
}

/* A name that may be a string prefix: returns 1 and sets *raw if
 * src[start..start+n) followed by a quote is one of the prefixes we accept,
 * 0 when it is a plain name, -1 after an error for f/b prefixes. */
static int string_prefix(tilec_lexer_t *lx, size_t start, size_t n, int *raw, int *fstr, int line, int col)
{
    unsigned q = byte_at(lx, start + n);
    if (n > 2 || (q != '\'' && q != '"'))
        return 0;
    int r = 0, b = 0, u = 0, f = 0;
    for (size_t i = 0; i < n; i++) {
        switch (lx->src[start + i]) {
        case 'r': case 'R': r++; break;
        case 'b': case 'B': b++; break;
        case 'u': case 'U': u++; break;
        case 'f': case 'F': f++; break;
        default: return 0;
        }
    }
    if (r > 1 || b > 1 || u > 1 || f > 1 || (u && n > 1) || (b && f))
        return 0;
    *fstr = f;
    if (b)
        return lex_error_at(lx, line, col, "bytes literals are not supported in tile programs");
    *raw = r;
    return 1;
}

/* ---- brackets ------------------------------------------------------------- */

static int open_bracket(tilec_lexer_t *lx, char ch, int line, int col)
{
    if (lx->nbracket >= TILEC_LEX_MAX_DEPTH)
        return lex_error_at(lx, line, col, "nesting too deep: more than %d nested brackets", TILEC_LEX_MAX_DEPTH);
    lx->bracket[lx->nbracket].ch = ch;
    lx->bracket[lx->nbracket].line = line;
    lx->bracket[lx->nbracket].col = col;
    lx->nbracket++;
    return 0;
}

static int close_bracket(tilec_lexer_t *lx, char ch, int line, int col)
{
    char want = ch == ')' ? '(' : ch == ']' ? '[' : '{';
    if (lx->nbracket == 0)
        return lex_error_at(lx, line, col, "unmatched '%c'", ch);
    char have = lx->bracket[lx->nbracket - 1].ch;
    if (have != want)
        return lex_error_at(lx, line, col, "closing '%c' does not match opening '%c' at line %d", ch, have,
                            lx->bracket[lx->nbracket - 1].line);
    lx->nbracket--;
    return 0;
}

/* ---- the token loop ------------------------------------------------------- */

static int finish(tilec_lexer_t *lx, tilec_token_t *t)
{
    lx->prev_end_line = lx->line;
    lx->prev_end_col = cur_col(lx, lx->pos);
    (void)t;
    return 0;
}

static int at_eof(tilec_lexer_t *lx, tilec_token_t *t)
{
    if (lx->nbracket > 0) {
        int b = lx->nbracket - 1;
        return lex_error_at(lx, lx->bracket[b].line, lx->bracket[b].col, "'%c' was never closed",
                            lx->bracket[b].ch);
    }
    if (!lx->at_line_start) {
        lx->at_line_start = 1;
        set_tok(lx, t, TILEC_TOK_NEWLINE, lx->prev_end_line, lx->prev_end_col);
        return 0;
    }
    if (lx->ndent > 1) {
        lx->ndent--;
        set_tok(lx, t, TILEC_TOK_DEDENT, lx->prev_end_line, lx->prev_end_col);
        return 0;
    }
    lx->sent_eof = 1;
    set_tok(lx, t, TILEC_TOK_EOF, lx->prev_end_line, lx->prev_end_col);
    return 0;
}

int tilec_lexer_next(tilec_lexer_t *lx, tilec_token_t *t)
{
    memset(t, 0, sizeof *t);
    if (lx->failed)
        return -1;
    for (;;) {
        if (lx->pending_dedents > 0) {
            lx->pending_dedents--;
            set_tok(lx, t, TILEC_TOK_DEDENT, lx->line, cur_col(lx, lx->pos));
            return 0;
        }
        if (lx->at_line_start && lx->nbracket == 0 && lx->pos < lx->len) {
            int r = handle_indent(lx, t);
            if (r < 0)
                return -1;
            if (r > 0)
                return 0;
        }
        while (lx->pos < lx->len && (lx->src[lx->pos] == ' ' || lx->src[lx->pos] == '\t' ||
                                     lx->src[lx->pos] == '\f'))
            lx->pos++;
        if (lx->pos >= lx->len)
            return at_eof(lx, t) < 0 ? -1 : 0;
        unsigned c = (unsigned char)lx->src[lx->pos];
        if (c == '#') {
            if (skip_comment(lx) < 0)
                return -1;
            continue;
        }
        if (c == '\\') {
            size_t p = lx->pos + 1;
            if (p >= lx->len)
                return lex_error_at(lx, lx->line, cur_col(lx, lx->pos),
                                    "unexpected end of file after line continuation character");
            if (!is_newline_at(lx, p))
                return lex_error_at(lx, lx->line, cur_col(lx, lx->pos) + 1,
                                    "unexpected character after line continuation character");
            int bline = lx->line, bcol = cur_col(lx, lx->pos);
            lx->pos = p;
            eat_newline(lx);
            if (lx->pos >= lx->len)
                return lex_error_at(lx, bline, bcol,
                                    "unexpected end of file after line continuation character");
            continue;
        }
        if (c == '\n' || c == '\r') {
            eat_newline(lx);
            if (lx->nbracket > 0)
                continue;
            lx->at_line_start = 1;
            set_tok(lx, t, TILEC_TOK_NEWLINE, lx->prev_end_line, lx->prev_end_col);
            return 0;
        }
        int line = lx->line, col = cur_col(lx, lx->pos);
        size_t start = lx->pos;
        /* names, keywords, string prefixes */
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
            while (lx->pos < lx->len && is_name_char((unsigned char)lx->src[lx->pos]))
                lx->pos++;
            size_t n = lx->pos - start;
            int raw = 0, fstr = 0;
            int sp = string_prefix(lx, start, n, &raw, &fstr, line, col);
            if (sp < 0)
                return -1;
            if (sp > 0) {
                if (lex_string(lx, t, raw, line, col, start) < 0)
                    return -1;
                t->fstr = fstr;
                return finish(lx, t);
            }
            if (lx->pos < lx->len && (unsigned char)lx->src[lx->pos] >= 0x80)
                return bad_char(lx, lx->pos);
            set_tok(lx, t, TILEC_TOK_NAME, line, col);
            t->text = lx->src + start;
            t->len = n;
            /* first characters compared first: most names are no keyword */
            for (int k = 1; k < TILEC_KW_COUNT; k++)
                if ((unsigned char)kw_names[k][0] == c && strlen(kw_names[k]) == n &&
                    memcmp(kw_names[k], t->text, n) == 0) {
                    t->kw = k;
                    break;
                }
            return finish(lx, t);
        }
        if ((c >= '0' && c <= '9') || (c == '.' && digit_value(byte_at(lx, lx->pos + 1)) < 10)) {
            if (lex_number(lx, t) < 0)
                return -1;
            return finish(lx, t);
        }
        if (c == '\'' || c == '"') {
            if (lex_string(lx, t, 0, line, col, start) < 0)
                return -1;
            return finish(lx, t);
        }
        if (c == ':' && byte_at(lx, lx->pos + 1) == '=')
            return lex_error_at(lx, line, col, "the walrus operator ':=' is not supported in tile programs");
        for (size_t k = 0; k < sizeof op_table / sizeof op_table[0]; k++) {
            if ((unsigned char)op_table[k].text[0] != c)
                continue;
            size_t n = strlen(op_table[k].text);
            if (lx->pos + n <= lx->len && memcmp(lx->src + lx->pos, op_table[k].text, n) == 0) {
                int r = 0;
                if (n == 1 && (c == '(' || c == '[' || c == '{'))
                    r = open_bracket(lx, (char)c, line, col);
                else if (n == 1 && (c == ')' || c == ']' || c == '}'))
                    r = close_bracket(lx, (char)c, line, col);
                if (r < 0)
                    return -1;
                lx->pos += n;
                set_tok(lx, t, TILEC_TOK_OP, line, col);
                t->op = op_table[k].op;
                t->text = lx->src + start;
                t->len = n;
                return finish(lx, t);
            }
        }
        return bad_char(lx, lx->pos);
    }
}

const char *tilec_lexer_describe(const tilec_token_t *t, char *buf, size_t n)
{
    if (n == 0)
        return "";
    switch (t->kind) {
    case TILEC_TOK_EOF: snprintf(buf, n, "end of file"); break;
    case TILEC_TOK_NEWLINE: snprintf(buf, n, "NEWLINE"); break;
    case TILEC_TOK_INDENT: snprintf(buf, n, "INDENT"); break;
    case TILEC_TOK_DEDENT: snprintf(buf, n, "DEDENT"); break;
    case TILEC_TOK_NAME:
        if (t->kw)
            snprintf(buf, n, "keyword '%s'", kw_names[t->kw]);
        else if (t->len > 40)
            snprintf(buf, n, "name '%.37s...'", t->text);
        else
            snprintf(buf, n, "name '%.*s'", (int)t->len, t->text);
        break;
    case TILEC_TOK_INT:
    case TILEC_TOK_FLOAT:
        if (t->len > 40)
            snprintf(buf, n, "number '%.37s...'", t->text);
        else
            snprintf(buf, n, "number '%.*s'", (int)t->len, t->text);
        break;
    case TILEC_TOK_STR: snprintf(buf, n, "string literal"); break;
    case TILEC_TOK_OP: snprintf(buf, n, "'%s'", tilec_lexer_op_text(t->op)); break;
    }
    return buf;
}
