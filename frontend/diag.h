/*
 * frontend/diag.h — diagnostics with source spans.
 *
 * A diagnostic renders as
 *     FILE:LINE:COL: error: MESSAGE
 *         <the source line>
 *         <spaces>^
 * The first error is kept (later ones are ignored: the frontend stops at the
 * first error).  Library code never prints on its own; the caller takes the
 * rendered text from tilec_diag_text().
 */
#ifndef TILEC_FRONTEND_DIAG_H
#define TILEC_FRONTEND_DIAG_H

#include <stddef.h>

typedef struct tilec_diag {
    const char *path;     /* file name shown in messages (borrowed) */
    const char *src;      /* whole source text (borrowed), may be NULL */
    size_t src_len;
    int nerrors;
    int line, col;        /* position of the first error */
    char text[2048];      /* rendered first error, "" when none */
} tilec_diag_t;

void tilec_diag_init(tilec_diag_t *d, const char *path, const char *src, size_t len);
/* Records an error at line:col (1-based; 0 = unknown, no caret shown).
 * Columns count bytes; tabs in the echoed line are kept so the caret lines
 * up.  Returns -1 so callers can `return tilec_diag_error(...)`. */
int tilec_diag_error(tilec_diag_t *d, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const char *tilec_diag_text(const tilec_diag_t *d);

#endif
