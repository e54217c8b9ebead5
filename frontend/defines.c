/*
 * frontend/defines.c — `-D NAME=VALUE`: reading a value as Python would
 * (True/False/None, ints, floats, quoted strings, tuples and lists of
 * those, else the bare text as a string) and saying what is wrong with one
 * that starts like a number but is not one.
 */
#include "eval_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- -D values ------------------------------------------------------------- */

static value_t *parse_seq(ev_t *ev, const char *text, size_t n, const char **why);

/* Reads a -D value (or the text of int("...")): True/False/None, an int
 * (decimal or 0x), a float, a quoted string, else the bare text as a string
 * (`T.float16` names the dtype).  A text that starts like a number but is
 * not one, or does not fit, is not taken as a string: *why (when given)
 * says what is wrong with it and the result is NULL. */
value_t *v_parse_define(ev_t *ev, const char *text, const char **why)
{
    char *end;
    size_t n = strlen(text);
    long long ll;
    double d;
    const char *p;
    int hex;
    if (why) *why = NULL;
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\t')) n--;
    while (n && (*text == ' ' || *text == '\t')) { text++; n--; }
    if (n == 0) return v_str(ev, "", 0);
    if (n >= 2 && (text[0] == '"' || text[0] == '\'') && text[n - 1] == text[0])
        return v_str(ev, text + 1, n - 2);
    if (n >= 2 && ((text[0] == '(' && text[n - 1] == ')') || (text[0] == '[' && text[n - 1] == ']')))
        return parse_seq(ev, text, n, why);
    {
        char *t = ev_alloc(ev, n + 1);
        memcpy(t, text, n);
        text = t;
    }
    if (!strcmp(text, "True") || !strcmp(text, "true")) return v_bool(ev, 1);
    if (!strcmp(text, "False") || !strcmp(text, "false")) return v_bool(ev, 0);
    if (!strcmp(text, "None")) return ev->none;
    p = text + (*text == '-' || *text == '+');
    hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
    errno = 0;
    ll = strtoll(text, &end, hex ? 16 : 10);
    if (*end == '\0' && end != text && (!hex || end > p + 2)) {
        if (errno != ERANGE) return v_int(ev, ll);
        if (why) *why = "out of range for int64 (-9223372036854775808 to 9223372036854775807)";
        return NULL;
    }
    if (!hex) {
        errno = 0;
        d = strtod(text, &end);
        if (*end == '\0' && end != text && !(errno == ERANGE && isinf(d))) return v_float(ev, d);
        if (*end == '\0' && end != text) {
            if (why) *why = "out of range for float64";
            return NULL;
        }
    }
    if ((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9')) {
        if (why) *why = hex ? "not a hexadecimal integer" : "not a number";
        return NULL;
    }
    {
        /* -D policy=T.GemmWarpPolicy.Square: the policy value */
        const char *q = !strncmp(text, "T.", 2) ? text + 2 : !strncmp(text, "tilelang.language.", 18) ? text + 18 : text;
        if (!strncmp(q, "GemmWarpPolicy.", 15)) {
            static const char *const pol[] = {"Square", "FullRow", "FullCol"};
            int i;
            for (i = 0; i < 3; i++) {
                if (strcmp(q + 15, pol[i])) continue;
                value_t *v = v_new(ev, V_POLICY);
                v->u.policy = i;
                return v;
            }
            if (why) *why = "T.GemmWarpPolicy is Square, FullRow or FullCol";
            return NULL;
        }
    }
    if (!strncmp(text, "T.", 2)) return v_str(ev, text + 2, n - 2);
    if (!strncmp(text, "tilelang.language.", 18)) return v_str(ev, text + 18, n - 18);
    return v_str(ev, text, n);
}

/* "(64, 128)" or "[64, 128]": a tuple or list of -D values (one level of
 * brackets; items are split at commas, so they are not strings with commas). */
static value_t *parse_seq(ev_t *ev, const char *text, size_t n, const char **why)
{
    value_t *items[64], *r;
    int k = 0, i;
    size_t a = 1, j;
    for (j = 1; j < n - 1 && strchr("([])", text[j]) == NULL; j++) {}
    if (j < n - 1) {
        if (why) *why = "a tuple or list value takes one level of brackets";
        return NULL;
    }
    for (j = 1; j <= n - 1; j++) {
        if (j == n - 1 || text[j] == ',') {
            char *it = ev_alloc(ev, j - a + 1);
            size_t m = j - a, b = 0;
            memcpy(it, text + a, m);
            it[m] = '\0';
            while (b < m && (it[b] == ' ' || it[b] == '\t')) b++;
            if (b == m) {   /* "(1,)" and "()": nothing after the last comma */
                if (j == n - 1 && (k > 0 || m == 0)) break;
                if (why) *why = "an empty item in a tuple or list value";
                return NULL;
            }
            if (k == 64) {
                if (why) *why = "a tuple or list value has at most 64 items";
                return NULL;
            }
            if (!(items[k++] = v_parse_define(ev, it, why))) return NULL;
            a = j + 1;
        }
    }
    r = v_seq(ev, k, text[0] == '[');
    for (i = 0; i < k; i++) r->u.seq.items[i] = items[i];
    return r;
}
