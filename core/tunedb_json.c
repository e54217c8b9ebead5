/*
 * core/tunedb_json.c — tuned tables as JSON, for shipping them between
 * machines (`tilec tune --export F.json`, `--import F.json`).
 *
 * The file is an array of flat objects, one per row, with the fields of
 * tilec_tunedb_row_t (strings and numbers).  The reader takes exactly that
 * shape — a small recursive-descent parser, not a general JSON library —
 * and reports the first thing it does not understand with its byte offset;
 * unknown fields are ignored so newer files stay readable.
 */
#include "tunedb.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "tilec/sdk.h"

#define JSON_MAX_BYTES ((size_t)64 << 20)

static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

tilec_status_t tilec_tunedb_write_json(const char *path, const tilec_tunedb_row_t *rows, int n,
                                       char **msg)
{
    FILE *f = fopen(path, "w");
    *msg = NULL;
    if (!f) {
        *msg = tilec_strfmt("cannot write %s: %s", path, strerror(errno));
        return TILEC_E_IO;
    }
    fputs("[\n", f);
    for (int i = 0; i < n; i++) {
        const tilec_tunedb_row_t *r = &rows[i];
        const char *names[] = {"source_hash", "entry", "fixed", "shape", "plugin", "plugin_version",
                               "device", "arch", "config", "file", "tuned_at"};
        const char *vals[] = {r->source_hash, r->entry, r->fixed, r->shape, r->plugin,
                              r->plugin_version, r->device, r->arch, r->config, r->file, r->tuned_at};
        fputs("  {", f);
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
            fprintf(f, "%s\"%s\": ", k ? ", " : "", names[k]);
            put_str(f, vals[k]);
        }
        fprintf(f, ", \"time_ms\": %.17g, \"default_ms\": %.17g, \"candidates\": %lld}%s\n",
                r->time_ms, r->default_ms, r->candidates, i + 1 < n ? "," : "");
    }
    fputs("]\n", f);
    if (ferror(f) | (fclose(f) != 0)) {
        *msg = tilec_strfmt("error writing %s", path);
        return TILEC_E_IO;
    }
    return TILEC_OK;
}

/* ---- reading ------------------------------------------------------------------ */

typedef struct jp {
    const char *s;
    size_t n, i;
    char *err;
} jp_t;

static void ws(jp_t *p)
{
    while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]) && p->s[p->i]) {
        p->i++;
    }
}

static int fail(jp_t *p, const char *what)
{
    if (!p->err) {
        p->err = tilec_strfmt("byte %zu: %s", p->i, what);
    }
    return -1;
}

static int eat(jp_t *p, char c)
{
    ws(p);
    if (p->i < p->n && p->s[p->i] == c) {
        p->i++;
        return 0;
    }
    char m[32];
    snprintf(m, sizeof m, "expected '%c'", c);
    return fail(p, m);
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* A string into a new malloc'd buffer. */
static char *string(jp_t *p)
{
    size_t cap, len = 0;
    char *o;
    if (eat(p, '"') != 0) {
        return NULL;
    }
    cap = 32;
    o = malloc(cap);
    while (o) {
        char c;
        if (p->i >= p->n) {
            free(o);
            fail(p, "unterminated string");
            return NULL;
        }
        if (len + 5 >= cap) {
            char *g = realloc(o, cap *= 2);
            if (!g) break;
            o = g;
        }
        c = p->s[p->i++];
        if (c == '"') {
            o[len] = '\0';
            return o;
        }
        if (c == '\\' && p->i < p->n) {
            char e = p->s[p->i++];
            unsigned u;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case '"': case '\\': case '/': c = e; break;
            case 'u':
                if (p->i + 4 > p->n || hex4(p->s + p->i, &u) != 0 || u == 0) {
                    free(o);
                    fail(p, "bad \\u escape");
                    return NULL;
                }
                p->i += 4;
                if (u < 0x80) {
                    c = (char)u;
                    break;
                }
                /* BMP only (surrogates read as U+FFFD): the writer never
                 * escapes past ASCII control characters */
                if (u >= 0xd800 && u < 0xe000) u = 0xfffd;
                if (u < 0x800) {
                    o[len++] = (char)(0xc0 | (u >> 6));
                } else {
                    o[len++] = (char)(0xe0 | (u >> 12));
                    o[len++] = (char)(0x80 | ((u >> 6) & 0x3f));
                }
                c = (char)(0x80 | (u & 0x3f));
                break;
            default:
                free(o);
                fail(p, "bad escape");
                return NULL;
            }
        } else if ((unsigned char)c < 0x20) {
            free(o);
            fail(p, "control character in a string");
            return NULL;
        }
        o[len++] = c;
    }
    free(o);
    fail(p, "out of memory");
    return NULL;
}

static int number(jp_t *p, double *out)
{
    char *end;
    char buf[64];
    size_t k = 0;
    ws(p);
    while (p->i + k < p->n && k + 1 < sizeof buf && strchr("+-0123456789.eE", p->s[p->i + k]) &&
           p->s[p->i + k]) {
        buf[k] = p->s[p->i + k];
        k++;
    }
    buf[k] = '\0';
    *out = strtod(buf, &end);
    if (k == 0 || *end) {
        return fail(p, "expected a number");
    }
    if (!isfinite(*out)) {
        return fail(p, "number out of range"); /* 1e999: JSON has no infinity */
    }
    p->i += k;
    return 0;
}

static int row(jp_t *p, tilec_tunedb_row_t *r)
{
    if (eat(p, '{') != 0) {
        return -1;
    }
    ws(p);
    if (p->i < p->n && p->s[p->i] == '}') {
        p->i++;
        return 0;
    }
    for (;;) {
        char *k = string(p);
        char **dst = NULL;
        double *num = NULL;
        double v;
        if (!k || eat(p, ':') != 0) {
            free(k);
            return -1;
        }
        struct { const char *name; char **s; double *d; } f[] = {
            {"source_hash", &r->source_hash, NULL}, {"entry", &r->entry, NULL}, {"fixed", &r->fixed, NULL},
            {"shape", &r->shape, NULL}, {"plugin", &r->plugin, NULL},
            {"plugin_version", &r->plugin_version, NULL}, {"device", &r->device, NULL},
            {"arch", &r->arch, NULL}, {"config", &r->config, NULL}, {"file", &r->file, NULL},
            {"tuned_at", &r->tuned_at, NULL}, {"time_ms", NULL, &r->time_ms},
            {"default_ms", NULL, &r->default_ms}, {"candidates", NULL, &v}};
        for (size_t j = 0; j < sizeof f / sizeof f[0]; j++) {
            if (!strcmp(f[j].name, k)) {
                dst = f[j].s;
                num = f[j].d;
            }
        }
        ws(p);
        if (p->i < p->n && p->s[p->i] == '"') {
            char *s = string(p);
            if (!s || (num && (free(s), fail(p, "expected a number")))) {
                free(k);
                return -1;
            }
            if (dst) {
                free(*dst);
                *dst = s;
            } else {
                free(s);
            }
        } else {
            if (number(p, &v) != 0 || (dst && fail(p, "expected a string"))) {
                free(k);
                return -1;
            }
            if (num == &v) {
                /* a count: integral and exact in a double */
                if (v != floor(v) || fabs(v) > 9007199254740992.0) {
                    free(k);
                    return fail(p, "candidates must be a whole number");
                }
                r->candidates = (long long)v;
            } else if (num) {
                *num = v;
            }
        }
        free(k);
        ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        return eat(p, '}');
    }
}

tilec_status_t tilec_tunedb_parse_json(const char *name, const char *text, size_t len,
                                       tilec_tunedb_row_t **rows, int *n, char **msg)
{
    jp_t p;
    int cap = 0;
    tilec_tunedb_row_t *out = NULL;
    *rows = NULL;
    *n = 0;
    *msg = NULL;
    if (len > JSON_MAX_BYTES) {
        *msg = tilec_strfmt("%s: larger than %zu MiB, not a tuning table", name, JSON_MAX_BYTES >> 20);
        return TILEC_E_IO;
    }
    memset(&p, 0, sizeof p);
    p.s = text;
    p.n = len;
    if (eat(&p, '[') == 0) {
        ws(&p);
        if (p.i < p.n && p.s[p.i] == ']') {
            p.i++;
        } else {
            for (;;) {
                if (*n == cap) {
                    int c = cap ? 2 * cap : 16;
                    tilec_tunedb_row_t *g = realloc(out, sizeof *out * (size_t)c);
                    if (!g) {
                        fail(&p, "out of memory");
                        break;
                    }
                    out = g;
                    cap = c;
                }
                memset(&out[*n], 0, sizeof out[*n]);
                (*n)++;
                if (row(&p, &out[*n - 1]) != 0) {
                    break;
                }
                ws(&p);
                if (p.i < p.n && p.s[p.i] == ',') {
                    p.i++;
                    continue;
                }
                eat(&p, ']');
                break;
            }
        }
    }
    for (int i = 0; !p.err && i < *n; i++) {
        tilec_tunedb_row_t *r = &out[i];
        if (!r->source_hash || !r->entry || !r->plugin || !r->device || !r->config) {
            p.err = tilec_strfmt("row %d lacks source_hash, entry, plugin, device or config", i);
        }
    }
    if (p.err) {
        *msg = tilec_strfmt("%s is not a tuning table: %s", name, p.err);
        free(p.err);
        tilec_tunedb_rows_free(out, *n);
        *n = 0;
        return TILEC_E_IO;
    }
    *rows = out;
    return TILEC_OK;
}

tilec_status_t tilec_tunedb_read_json(const char *path, tilec_tunedb_row_t **rows, int *n,
                                      char **msg)
{
    char *text = NULL;
    size_t len = 0;
    *rows = NULL;
    *n = 0;
    *msg = NULL;
    if (tilec_sdk_file_read(path, (void **)&text, &len) != 0) {
        *msg = tilec_strfmt("cannot read %s: %s", path, strerror(errno ? errno : EIO));
        return TILEC_E_IO;
    }
    tilec_status_t st = tilec_tunedb_parse_json(path, text, len, rows, n, msg);
    free(text);
    return st;
}
