/*
 * frontend/diag.c — renders the first error of a compilation as
 *     FILE:LINE:COL: error: MESSAGE
 *     <the source line>
 *     <spaces, tabs kept>^
 * into the fixed buffer of tilec_diag_t.
 *
 * The echoed line is made safe to print whatever the input holds: control
 * bytes and bytes that are not part of a valid UTF-8 sequence become '?',
 * and a very long line is cut to a window around the column, marked with
 * "...".  The caret line counts one column per character shown (a tab stays
 * a tab), so it lines up under the reported byte in a terminal.  Line ends
 * are "\n", "\r\n" or a lone "\r", as the lexer counts them.  Only the first
 * error is rendered; later calls just count.
 */
#include "diag.h"
#include "lexer.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Widest slice of a source line that is echoed; longer lines are cut to a
 * window around the column. */
#define DIAG_ECHO_MAX 160
#define DIAG_ECHO_BEFORE 80

typedef struct diag_buf { char *p; size_t cap, len; } diag_buf_t;

static void buf_putc(diag_buf_t *b, char c)
{
    if (b->len + 1 < b->cap) {
        b->p[b->len++] = c;
        b->p[b->len] = '\0';
    }
}

static void buf_puts(diag_buf_t *b, const char *s)
{
    for (; *s; s++)
        buf_putc(b, *s);
}

/* Finds line `line` (1-based) in src: *start and *end (exclusive, before
 * the line terminator).  Returns 0 when the file has fewer lines. */
static int find_line(const char *src, size_t n, int line, size_t *start, size_t *end)
{
    size_t i = 0;
    int cur = 1;
    while (cur < line) {
        while (i < n && src[i] != '\n' && src[i] != '\r')
            i++;
        if (i >= n)
            return 0;
        if (src[i] == '\r' && i + 1 < n && src[i + 1] == '\n')
            i++;
        i++;
        cur++;
    }
    size_t e = i;
    while (e < n && src[e] != '\n' && src[e] != '\r')
        e++;
    if (line == 1 && e - i >= 3 && memcmp(src + i, "\xef\xbb\xbf", 3) == 0)
        i += 3; /* the lexer skips a byte-order mark and so does the echo */
    *start = i;
    *end = e;
    return 1;
}

/* Appends src[from..to) to the echo line (made printable) and, for the part
 * before byte `caret`, the matching caret prefix. */
static void echo_slice(diag_buf_t *line, diag_buf_t *pre, const unsigned char *s,
                       size_t from, size_t to, size_t caret)
{
    size_t i = from;
    while (i < to) {
        unsigned cp;
        size_t k = tilec_utf8_decode(s + i, to - i, &cp);
        unsigned c = s[i];
        if (k == 1 && (c == '\t' || (c >= 0x20 && c != 0x7f))) {
            buf_putc(line, (char)c);
        } else if (k > 1) {
            for (size_t j = 0; j < k; j++)
                buf_putc(line, (char)s[i + j]);
        } else {
            buf_putc(line, '?');
            k = 1;
        }
        if (i < caret)
            buf_putc(pre, c == '\t' ? '\t' : ' ');
        i += k;
    }
}

static void sanitize_message(char *m)
{
    for (unsigned char *p = (unsigned char *)m; *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            *p = '?';
}

void tilec_diag_init(tilec_diag_t *d, const char *path, const char *src, size_t len)
{
    memset(d, 0, sizeof *d);
    d->path = path;
    d->src = src;
    d->src_len = len;
}

int tilec_diag_error(tilec_diag_t *d, int line, int col, const char *fmt, ...)
{
    if (!d)
        return -1;
    d->nerrors++;
    if (d->nerrors > 1)
        return -1;
    if (line < 0)
        line = 0;
    if (col < 0)
        col = 0;
    d->line = line;
    d->col = col;

    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sanitize_message(msg);

    diag_buf_t out = { d->text, sizeof d->text, 0 };
    d->text[0] = '\0';
    char head[64];
    const char *path = d->path ? d->path : "<input>";
    /* The path is the caller's; keep it on one line too. */
    for (const char *p = path; *p; p++)
        buf_putc(&out, (*p == '\n' || *p == '\r') ? '?' : *p);
    if (line > 0 && col > 0)
        snprintf(head, sizeof head, ":%d:%d: error: ", line, col);
    else if (line > 0)
        snprintf(head, sizeof head, ":%d: error: ", line);
    else
        snprintf(head, sizeof head, ": error: ");
    buf_puts(&out, head);
    buf_puts(&out, msg);
    buf_putc(&out, '\n');

    size_t ls, le;
    if (line <= 0 || !d->src || !find_line(d->src, d->src_len, line, &ls, &le))
        return -1;

    /* Window of at most DIAG_ECHO_MAX bytes around the column. */
    size_t caret = col > 0 ? ls + (size_t)(col - 1) : ls;
    size_t from = ls, to = le;
    if (le - ls > DIAG_ECHO_MAX) {
        if (caret > ls + DIAG_ECHO_BEFORE)
            from = caret - DIAG_ECHO_BEFORE;
        if (from > le)
            from = le;
        /* do not start inside a multi-byte character */
        while (from > ls && from < le && ((unsigned char)d->src[from] & 0xc0) == 0x80)
            from++;
        to = from + DIAG_ECHO_MAX < le ? from + DIAG_ECHO_MAX : le;
        while (to < le && to > from && ((unsigned char)d->src[to] & 0xc0) == 0x80)
            to--;
    }
    char linebuf[DIAG_ECHO_MAX * 4 + 16], prebuf[DIAG_ECHO_MAX * 2 + 16];
    diag_buf_t lb = { linebuf, sizeof linebuf, 0 }, pb = { prebuf, sizeof prebuf, 0 };
    linebuf[0] = prebuf[0] = '\0';
    if (from > ls) {
        buf_puts(&lb, "...");
        buf_puts(&pb, "   ");
    }
    echo_slice(&lb, &pb, (const unsigned char *)d->src, from, to, caret);
    if (to < le)
        buf_puts(&lb, "...");
    buf_puts(&out, linebuf);
    buf_putc(&out, '\n');
    if (col > 0) {
        /* A column past the shown text (end of line, end of file) */
        if (caret > to) {
            size_t extra = caret - to;
            if (to < le)
                extra = 3; /* past the "..." */
            for (size_t i = 0; i < extra && i < DIAG_ECHO_MAX; i++)
                buf_putc(&pb, ' ');
        }
        buf_puts(&out, prebuf);
        buf_puts(&out, "^\n");
    }
    return -1;
}

const char *tilec_diag_text(const tilec_diag_t *d)
{
    return d ? d->text : "";
}
