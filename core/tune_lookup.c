/*
 * core/tune_lookup.c — finding a program's tuned config (tilec run, the C
 * API), the database commands of the public API (list, export, import),
 * and the key text the tuner and the lookup share (tune.h).
 *
 * Matching (docs/tuning.md, "Keys"): rows are fetched by source hash,
 * entry, plugin name and version, device and arch; a row matches when the
 * program's -D values, less the names the row's config and shape set, are
 * exactly the row's fixed defines.  Among matching rows the exact shape
 * wins, else the nearest one (the sum of |log(value / stored)| over the
 * shape's names), and the caller is told it was the nearest.
 */
#define TILEC_BUILDING_LIBRARY 1
#include "tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_internal.h"
#include "loader.h"
#include "tunedb.h"

TILEC_API void tilec_free(void *p)
{
    free(p);
}

/* ---- key text ----------------------------------------------------------------- */

int tilec_tune_kv_has(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; p && *p;) {
        while (*p == ' ') p++;
        if (!strncmp(p, name, n) && p[n] == '=') {
            return 1;
        }
        p = strchr(p, ' ');
    }
    return 0;
}

static int kv_cmp(const void *a, const void *b)
{
    const tilec_define_kv_t *x = *(const tilec_define_kv_t *const *)a;
    const tilec_define_kv_t *y = *(const tilec_define_kv_t *const *)b;
    return strcmp(x->name, y->name);
}

char *tilec_tune_kv_text(const tilec_define_kv_t *kv, int n, const char *skip)
{
    const tilec_define_kv_t **v = calloc((size_t)n + 1, sizeof *v);
    size_t len = 1;
    int m = 0;
    char *out;
    if (!v) {
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (!skip || !tilec_tune_kv_has(skip, kv[i].name)) {
            v[m++] = &kv[i];
            len += strlen(kv[i].name) + strlen(kv[i].value) + 2;
        }
    }
    qsort(v, (size_t)m, sizeof *v, kv_cmp);
    out = malloc(len);
    if (out) {
        size_t at = 0;
        out[0] = '\0';
        for (int i = 0; i < m; i++) {
            at += (size_t)sprintf(out + at, "%s%s=%s", i ? " " : "", v[i]->name, v[i]->value);
        }
    }
    free(v);
    return out;
}

void tilec_tune_kv_free(tilec_define_kv_t *kv, int n)
{
    for (int i = 0; kv && i < n; i++) {
        free((char *)kv[i].name); /* name and value share one allocation */
    }
    free(kv);
}

int tilec_tune_kv_parse(const char *text, tilec_define_kv_t **kv, int *n)
{
    int cap = 1;
    *kv = NULL;
    *n = 0;
    for (const char *p = text; *p; p++) {
        cap += *p == ' ';
    }
    *kv = calloc((size_t)cap, sizeof **kv);
    if (!*kv) {
        return -1;
    }
    for (const char *p = text; *p;) {
        const char *e, *eq;
        char *w;
        while (*p == ' ') p++;
        if (!*p) break;
        e = strchr(p, ' ');
        if (!e) e = p + strlen(p);
        w = strndup(p, (size_t)(e - p));
        eq = w ? strchr(w, '=') : NULL;
        if (!eq || eq == w) {
            free(w);
            tilec_tune_kv_free(*kv, *n);
            *kv = NULL;
            *n = 0;
            return -1;
        }
        w[eq - w] = '\0';
        (*kv)[*n].name = w;
        (*kv)[(*n)++].value = w + (eq - w) + 1;
        p = e;
    }
    return 0;
}

/* ---- device keys and the bare context ---------------------------------------- */

void tilec_tune_devkey_of(const tilec_context_t *ctx, tilec_tune_devkey_t *k)
{
    memset(k, 0, sizeof *k);
    snprintf(k->plugin, sizeof k->plugin, "%s", ctx->backend ? ctx->backend : "");
    snprintf(k->version, sizeof k->version, "%s",
             ctx->table && ctx->table->version ? ctx->table->version : "");
    snprintf(k->device, sizeof k->device, "%s", ctx->dev ? ctx->info.name : "");
    /* the device's arch (ABI 1.1 property; "" from a 1.0 plugin) */
    tilec_prop_t arch;
    if (ctx->dev && tilec_device_property((tilec_context_t *)ctx, TILEC_PROP_ARCH, &arch) == TILEC_OK &&
        arch.kind == 2) {
            snprintf(k->arch, sizeof k->arch, "%.63s", arch.sval);
    }
}

tilec_context_t *tilec_tune_bare_context(void)
{
    tilec_context_t *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        return NULL;
    }
    ctx->refs = 1;
    ctx->backend = strdup("");
    ctx->plugin_path = strdup("");
    ctx->no_backend = TILEC_E_UNAVAILABLE;
    ctx->no_backend_msg = strdup("the tuner's own process opens no device");
    if (!ctx->backend || !ctx->plugin_path || !ctx->no_backend_msg) {
        tilec_api_ctx_unref(ctx);
        return NULL;
    }
    return ctx;
}

/* ---- lookup ------------------------------------------------------------------- */

/* The program's value of NAME as a number: its -D value, else its
 * T.dynamic symbol's, else its factory parameter's.  0 when it has none. */
static int program_value(const tilec_program_t *p, const char *name, double *out)
{
    const char *v = NULL;
    char *end;
    for (int i = 0; i < p->ndefs && !v; i++) {
        if (!strcmp(p->defs[i].name, name)) v = p->defs[i].value;
    }
    for (int i = 0; i < p->nsyms && !v; i++) {
        if (!strcmp(p->sym_names[i], name) && p->sym_values[i] >= 0) {
            *out = (double)p->sym_values[i];
            return 1;
        }
    }
    for (int i = 0; i < p->nfparams && !v; i++) {
        if (!strcmp(p->fparams[i].name, name)) v = p->fparams[i].value;
    }
    if (!v) {
        return 0;
    }
    *out = strtod(v, &end);
    return end != v && *end == '\0';
}

/* Distance of the program's shape to a stored bucket; < 0: not comparable. */
static double shape_distance(const tilec_program_t *p, const char *shape)
{
    tilec_define_kv_t *kv;
    int n;
    double d = 0;
    if (tilec_tune_kv_parse(shape, &kv, &n) != 0) {
        return -1;
    }
    for (int i = 0; i < n && d >= 0; i++) {
        double mine, theirs;
        char *end;
        theirs = strtod(kv[i].value, &end);
        if (!program_value(p, kv[i].name, &mine) || *end || end == kv[i].value) {
            d = -1;
        } else if (mine != theirs) {
            d += mine > 0 && theirs > 0 ? fabs(log(mine / theirs)) : 1e9 + fabs(mine - theirs);
        }
    }
    tilec_tune_kv_free(kv, n);
    return d;
}

int tilec_tune_best_row(const tilec_program_t *p, const tilec_tunedb_row_t *rows, int n, int *nearest)
{
    int best = -1;
    double bestd = 0;
    for (int i = 0; i < n; i++) {
        char *skip = tilec_strfmt("%s %s", rows[i].config, rows[i].shape);
        char *fixed = skip ? tilec_tune_kv_text(p->defs, p->ndefs, skip) : NULL;
        double d;
        if (fixed && !strcmp(fixed, rows[i].fixed) && (d = shape_distance(p, rows[i].shape)) >= 0 &&
            (best < 0 || d < bestd)) {
            best = i;
            bestd = d;
        }
        free(skip);
        free(fixed);
    }
    *nearest = best >= 0 && bestd > 0;
    return best;
}

tilec_tuned_t *tilec_tune_tuned_new(const tilec_tunedb_row_t *r, int nearest, const char *source)
{
    tilec_tuned_t *t = calloc(1, sizeof *t);
    if (!t || tilec_tune_kv_parse(r->config, &t->config, &t->n) != 0 || !(t->text = strdup(r->config)) ||
        !(t->shape = strdup(r->shape)) || !(t->db = strdup(source))) {
        tilec_tuned_free(t);
        return NULL;
    }
    t->nearest = nearest;
    t->time_ms = r->time_ms;
    t->default_ms = r->default_ms;
    return t;
}

TILEC_API void tilec_tuned_free(tilec_tuned_t *t)
{
    if (!t) {
        return;
    }
    tilec_tune_kv_free(t->config, t->n);
    free(t->text);
    free(t->shape);
    free(t->db);
    free(t);
}

TILEC_API tilec_status_t tilec_tune_lookup(tilec_context_t *ctx, const tilec_program_t *p,
                                           const char *db, tilec_tuned_t **out)
{
    tilec_tunedb_t *h = NULL;
    tilec_tunedb_row_t want, *rows = NULL;
    tilec_tune_devkey_t k;
    tilec_status_t st;
    char *msg = NULL;
    int n = 0, best, nearest = 0;
    if (out) {
        *out = NULL;
    }
    if (!ctx || !p || !out) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_tune_lookup: bad arguments");
    }
    if ((st = tilec_api_need_backend(ctx)) != TILEC_OK) {
        return st;
    }
    st = tilec_tunedb_open(db, 0, &h, &msg);
    if (st != TILEC_OK) {
        /* no database yet: nothing is tuned, which is not an error */
        int missing = st == TILEC_E_IO && msg && !strncmp(msg, "no tuning database", 18);
        if (!missing) {
            tilec_api_fail(ctx, st, "%s", msg ? msg : "out of memory");
        }
        free(msg);
        return missing ? TILEC_OK : st;
    }
    tilec_tune_devkey_of(ctx, &k);
    memset(&want, 0, sizeof want);
    want.source_hash = (char *)p->source_hash;
    want.entry = (char *)p->entry;
    want.plugin = k.plugin;
    want.plugin_version = k.version;
    want.device = k.device;
    want.arch = k.arch;
    st = tilec_tunedb_query(h, &want, &rows, &n, &msg);
    if (st != TILEC_OK) {
        tilec_api_fail(ctx, st, "%s", msg ? msg : "out of memory");
        free(msg);
        tilec_tunedb_close(h);
        return st;
    }
    best = tilec_tune_best_row(p, rows, n, &nearest);
    if (best >= 0 && !(*out = tilec_tune_tuned_new(&rows[best], nearest, tilec_tunedb_path(h)))) {
        st = tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    tilec_tunedb_rows_free(rows, n);
    tilec_tunedb_close(h);
    return st;
}

/* ---- list, export, import ---------------------------------------------------- */

static tilec_status_t all_rows(const char *db, tilec_tunedb_row_t **rows, int *n, char **msg)
{
    tilec_tunedb_t *h = NULL;
    tilec_status_t st = tilec_tunedb_open(db, 0, &h, msg);
    if (st != TILEC_OK) {
        return st;
    }
    st = tilec_tunedb_query(h, NULL, rows, n, msg);
    tilec_tunedb_close(h);
    return st;
}

TILEC_API tilec_status_t tilec_tunedb_list(const char *db, char ***lines, int *n, char **msg)
{
    tilec_tunedb_row_t *rows = NULL;
    tilec_status_t st;
    if (!lines || !n || !msg) {
        return TILEC_E_INVALID;
    }
    *lines = NULL;
    st = all_rows(db, &rows, n, msg);
    if (st != TILEC_OK) {
        return st;
    }
    *lines = calloc((size_t)*n + 1, sizeof **lines);
    for (int i = 0; *lines && i < *n; i++) {
        const tilec_tunedb_row_t *r = &rows[i];
        char sp[32] = "";
        if (r->default_ms > 0 && r->time_ms > 0) {
            snprintf(sp, sizeof sp, ", %.2fx the defaults", r->default_ms / r->time_ms);
        }
        (*lines)[i] = tilec_strfmt("%s %s [%s]%s%s on %s %s / %s%s%s: %s  (%.4f ms%s, %lld "
                                   "candidates, %s, source %.12s)",
                                   r->file, r->entry, r->fixed, r->shape[0] ? " shape " : "", r->shape,
                                   r->plugin, r->plugin_version, r->device, r->arch[0] ? " " : "",
                                   r->arch, r->config, r->time_ms, sp, r->candidates, r->tuned_at,
                                   r->source_hash);
    }
    tilec_tunedb_rows_free(rows, *n);
    if (!*lines) {
        *msg = strdup("out of memory");
        return TILEC_E_NOMEM;
    }
    return TILEC_OK;
}

TILEC_API tilec_status_t tilec_tunedb_export(const char *db, const char *json, int *n, char **msg)
{
    tilec_tunedb_row_t *rows = NULL;
    tilec_status_t st;
    if (!json || !n || !msg) {
        return TILEC_E_INVALID;
    }
    st = all_rows(db, &rows, n, msg);
    if (st == TILEC_OK) {
        st = tilec_tunedb_write_json(json, rows, *n, msg);
    }
    tilec_tunedb_rows_free(rows, *n);
    return st;
}

TILEC_API tilec_status_t tilec_tunedb_import(const char *db, const char *json, int *n, char **msg)
{
    tilec_tunedb_row_t *rows = NULL;
    tilec_tunedb_t *h = NULL;
    tilec_status_t st;
    if (!json || !n || !msg) {
        return TILEC_E_INVALID;
    }
    *msg = NULL;
    st = tilec_tunedb_read_json(json, &rows, n, msg);
    if (st == TILEC_OK) {
        st = tilec_tunedb_open(db, 1, &h, msg);
    }
    for (int i = 0; st == TILEC_OK && i < *n; i++) {
        st = tilec_tunedb_put(h, &rows[i], msg);
    }
    tilec_tunedb_close(h);
    tilec_tunedb_rows_free(rows, *n);
    return st;
}
