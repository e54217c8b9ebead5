/*
 * core/bundle.c — ahead-of-time kernel bundles (`tilec bundle`, `tilec run
 * --bundle`, docs/tuning.md "Bundles").
 *
 * A bundle holds, for one program and one backend plugin/device, the
 * compiled kernels of its tuned configs (the tuning database's rows for
 * the program's fixed defines) and of its defaults: for each, the key
 * (the row), the tile IR it was compiled from, the kernel ABI (parameters
 * and symbols, as text) and the backend's binary.  Loading one needs no
 * compiler: the plugin binds the binary (its module-load extension).
 *
 * File format (all integers little-endian):
 *   "TILECBND" | u32 format (1) | u32 kernel count
 *   strings: tilec version, plugin, plugin version, device, arch
 *   per kernel: strings source_hash, entry, fixed, shape, config, abi;
 *               blobs ir, binary; f64 time_ms
 *   32 bytes: SHA-256 of everything before it
 * A string or blob is a u32 length and its bytes.  A bundle whose checksum,
 * format or device key does not match is refused with the reason.
 */
#define TILEC_BUILDING_LIBRARY 1
#include "tune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_internal.h"
#include "loader.h"
#include "log.h"
#include "tilec/sdk.h"

#define BUNDLE_MAGIC "TILECBND"
#define BUNDLE_FORMAT 1u
#define BUNDLE_MAX_KERNELS 4096
#define BUNDLE_MAX_BYTES ((size_t)1 << 31)

typedef struct bkernel {
    tilec_tunedb_row_t row;       /* key strings malloc'd */
    char *abi;
    char *ir;
    size_t ir_len;
    void *bin;
    size_t bin_len;
} bkernel_t;

struct tilec_bundle {
    char *path;
    tilec_tune_devkey_t key;
    char *tilec_version;
    int n;
    bkernel_t *k;
};

/* ---- writing ---------------------------------------------------------------------- */

typedef struct wbuf {
    unsigned char *p;
    size_t n, cap;
    int oom;
} wbuf_t;

static void put(wbuf_t *w, const void *d, size_t n)
{
    if (w->oom) return;
    if (w->n + n > w->cap) {
        size_t c = w->cap ? w->cap : 4096;
        while (c < w->n + n) c *= 2;
        unsigned char *g = realloc(w->p, c);
        if (!g) {
            w->oom = 1;
            return;
        }
        w->p = g;
        w->cap = c;
    }
    memcpy(w->p + w->n, d, n);
    w->n += n;
}

static void put_u32(wbuf_t *w, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put(w, b, 4);
}

static void put_blob(wbuf_t *w, const void *d, size_t n)
{
    put_u32(w, (uint32_t)n);
    put(w, d, n);
}

static void put_str(wbuf_t *w, const char *s)
{
    put_blob(w, s ? s : "", s ? strlen(s) : 0);
}

/* The kernel ABI as text: "A float32 [64, 32]; ...; syms m n". */
static char *abi_text(const tilec_program_t *p)
{
    tilec_sdk_str_t s = {0};
    for (int i = 0; i < p->nparams; i++) {
        const tilec_api_param_t *q = &p->params[i];
        tilec_sdk_str_printf(&s, "%s%s %s [", i ? "; " : "", q->name, tilec_api_elem_name(q->elem));
        for (int d = 0; d < q->ndim; d++) {
            tilec_sdk_str_printf(&s, "%s%lld", d ? ", " : "", (long long)q->shape[d]);
        }
        tilec_sdk_str_printf(&s, "]");
    }
    tilec_sdk_str_printf(&s, "; syms");
    for (int i = 0; i < p->nsyms; i++) {
        tilec_sdk_str_printf(&s, " %s", p->sym_names[i]);
    }
    return s.s;
}

/* Compiles one kernel of the bundle: the program with defs. */
static tilec_status_t build_one(tilec_context_t *ctx, const char *path, const tilec_define_kv_t *defs,
                                int ndefs, const char *entry, const tilec_tunedb_row_t *row, wbuf_t *w)
{
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    const void *bin;
    size_t len;
    char *abi;
    tilec_status_t st = tilec_program_load_file(ctx, path, defs, ndefs, entry, &p);
    if (st == TILEC_OK && p->next) {
        st = tilec_api_fail(ctx, TILEC_E_UNAVAILABLE, "%s: a program of several kernels cannot be bundled yet",
                            path);
    }
    if (st == TILEC_OK) {
        st = tilec_program_compile(ctx, p, &e);
    }
    if (st != TILEC_OK) {
        tilec_program_free(p);
        return st;
    }
    bin = tilec_executable_binary(e, &len);
    if (!bin || !len) {
        tilec_executable_free(e);
        tilec_program_free(p);
        return tilec_api_fail(ctx, TILEC_E_UNAVAILABLE,
                              "backend '%s' does not expose its compiled binaries, so it cannot be "
                              "bundled", ctx->backend);
    }
    abi = abi_text(p);
    put_str(w, row->source_hash);
    put_str(w, row->entry);
    put_str(w, row->fixed);
    put_str(w, row->shape);
    put_str(w, row->config);
    put_str(w, abi ? abi : "");
    put_blob(w, p->ir, p->ir_len);
    put_blob(w, bin, len);
    put(w, &row->time_ms, sizeof row->time_ms);
    free(abi);
    tilec_executable_free(e);
    tilec_program_free(p);
    return w->oom ? tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory") : TILEC_OK;
}

TILEC_API tilec_status_t tilec_bundle_build(tilec_context_t *ctx, const char *path,
                                            const tilec_define_kv_t *defs, int ndefs, const char *entry,
                                            const char *db, const char *out, int *nkernels)
{
    tilec_program_t *p0 = NULL;
    tilec_tunedb_t *h = NULL;
    tilec_tunedb_row_t want, *rows = NULL, dflt;
    tilec_tune_devkey_t key;
    tilec_status_t st;
    wbuf_t w = {0};
    char *fixed = NULL, *msg = NULL, *tmp = NULL;
    int n = 0, count = 0;
    uint8_t dg[32];
    if (nkernels) *nkernels = 0;
    if (!ctx || !path || !out || ndefs < 0 || (ndefs && !defs)) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_bundle_build: bad arguments");
    }
    if ((st = tilec_api_need_backend(ctx)) != TILEC_OK) {
        return st;
    }
    st = tilec_program_load_file(ctx, path, defs, ndefs, entry, &p0);
    if (st != TILEC_OK) {
        return st;
    }
    tilec_tune_devkey_of(ctx, &key);
    fixed = tilec_tune_kv_text(defs, ndefs, NULL);
    st = tilec_tunedb_open(db, 0, &h, &msg);
    if (st == TILEC_OK) {
        memset(&want, 0, sizeof want);
        want.source_hash = p0->source_hash;
        want.entry = (char *)p0->entry;
        want.fixed = fixed;
        want.plugin = key.plugin;
        want.plugin_version = key.version;
        want.device = key.device;
        want.arch = key.arch;
        st = tilec_tunedb_query(h, &want, &rows, &n, &msg);
        tilec_tunedb_close(h);
    } else if (st == TILEC_E_IO && msg && !strncmp(msg, "no tuning database", 18)) {
        st = TILEC_OK; /* nothing tuned: the bundle holds the defaults */
    }
    if (st != TILEC_OK || !fixed) {
        st = tilec_api_fail(ctx, fixed ? st : TILEC_E_NOMEM, "%s", msg ? msg : "out of memory");
        goto out;
    }
    put(&w, BUNDLE_MAGIC, 8);
    put_u32(&w, BUNDLE_FORMAT);
    put_u32(&w, (uint32_t)(n + 1));
    put_str(&w, TILEC_VERSION_STRING);
    put_str(&w, key.plugin);
    put_str(&w, key.version);
    put_str(&w, key.device);
    put_str(&w, key.arch);
    /* the tuned configs first (a lookup prefers the earlier of equals), then the defaults */
    for (int i = 0; i < n && st == TILEC_OK; i++) {
        tilec_define_kv_t *ck = NULL, *sk = NULL, *all = NULL;
        int nc = 0, ns = 0;
        if (tilec_tune_kv_parse(rows[i].config, &ck, &nc) != 0 ||
            tilec_tune_kv_parse(rows[i].shape, &sk, &ns) != 0 ||
            !(all = calloc((size_t)(ndefs + nc + ns) + 1, sizeof *all))) {
            st = tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
        } else {
            memcpy(all, defs, sizeof *defs * (size_t)ndefs);
            memcpy(all + ndefs, sk, sizeof *sk * (size_t)ns);
            memcpy(all + ndefs + ns, ck, sizeof *ck * (size_t)nc);
            st = build_one(ctx, path, all, ndefs + ns + nc, entry, &rows[i], &w);
            count++;
        }
        free(all);
        tilec_tune_kv_free(ck, nc);
        tilec_tune_kv_free(sk, ns);
    }
    if (st == TILEC_OK) {
        memset(&dflt, 0, sizeof dflt);
        dflt.source_hash = p0->source_hash;
        dflt.entry = (char *)p0->entry;
        dflt.fixed = fixed;
        dflt.shape = dflt.config = "";
        dflt.time_ms = -1;
        st = build_one(ctx, path, defs, ndefs, entry, &dflt, &w);
        count++;
    }
    if (st != TILEC_OK) {
        goto out;
    }
    tilec_sha256(w.p, w.n, dg);
    put(&w, dg, sizeof dg);
    tmp = tilec_strfmt("%s.tmp.%ld", out, (long)getpid());
    if (w.oom || !tmp) {
        st = tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
        goto out;
    }
    {
        FILE *f = fopen(tmp, "wb");
        int bad = !f || fwrite(w.p, 1, w.n, f) != w.n;
        if (f) bad |= fclose(f) != 0;
        if (bad || rename(tmp, out) != 0) {
            st = tilec_api_fail(ctx, TILEC_E_IO, "cannot write %s: %s", out, strerror(errno ? errno : EIO));
            unlink(tmp);
            goto out;
        }
    }
    if (nkernels) *nkernels = count;
    tilec_log("compile", "bundle %s: %d kernel(s), %zu bytes", out, count, w.n);
out:
    free(tmp);
    free(w.p);
    free(msg);
    free(fixed);
    tilec_tunedb_rows_free(rows, n);
    tilec_program_free(p0);
    return st;
}

/* ---- reading ---------------------------------------------------------------------- */

typedef struct rbuf {
    const unsigned char *p;
    size_t n, at;
    int bad;
} rbuf_t;

static uint32_t get_u32(rbuf_t *r)
{
    uint32_t v;
    if (r->bad || r->n - r->at < 4) {
        r->bad = 1;
        return 0;
    }
    v = (uint32_t)r->p[r->at] | (uint32_t)r->p[r->at + 1] << 8 | (uint32_t)r->p[r->at + 2] << 16 |
        (uint32_t)r->p[r->at + 3] << 24;
    r->at += 4;
    return v;
}

/* A blob as a malloc'd copy, NUL-terminated (so strings read as strings). */
static void *get_blob(rbuf_t *r, size_t *len)
{
    uint32_t n = get_u32(r);
    char *c;
    if (r->bad || r->n - r->at < n) {
        r->bad = 1;
        return NULL;
    }
    c = malloc((size_t)n + 1);
    if (!c) {
        r->bad = 1;
        return NULL;
    }
    memcpy(c, r->p + r->at, n);
    c[n] = '\0';
    r->at += n;
    if (len) *len = n;
    return c;
}

static char *get_str(rbuf_t *r)
{
    size_t n;
    char *s = get_blob(r, &n);
    if (s && strlen(s) != n) {
        r->bad = 1; /* a NUL inside a string */
    }
    return s;
}

TILEC_API void tilec_bundle_free(tilec_bundle_t *b)
{
    if (!b) return;
    for (int i = 0; i < b->n; i++) {
        bkernel_t *k = &b->k[i];
        free(k->row.source_hash);
        free(k->row.entry);
        free(k->row.fixed);
        free(k->row.shape);
        free(k->row.config);
        free(k->abi);
        free(k->ir);
        free(k->bin);
    }
    free(b->k);
    free(b->tilec_version);
    free(b->path);
    free(b);
}

static void copy_key(char *dst, size_t n, rbuf_t *r)
{
    char *s = get_str(r);
    snprintf(dst, n, "%s", s ? s : "");
    free(s);
}

TILEC_API tilec_status_t tilec_bundle_open(tilec_context_t *ctx, const char *path, tilec_bundle_t **out)
{
    unsigned char *data = NULL;
    size_t len = 0;
    uint8_t dg[32];
    rbuf_t r;
    tilec_bundle_t *b;
    tilec_tune_devkey_t mine;
    uint32_t fmt, n;
    if (out) *out = NULL;
    if (!ctx || !path || !out) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_bundle_open: bad arguments");
    }
    if (tilec_sdk_file_read(path, (void **)&data, &len) != 0) {
        return tilec_api_fail(ctx, TILEC_E_IO, "cannot read bundle %s: %s", path, strerror(errno ? errno : EIO));
    }
    if (len < 8 + 8 + 32 || memcmp(data, BUNDLE_MAGIC, 8) != 0) {
        free(data);
        return tilec_api_fail(ctx, TILEC_E_INVALID, "%s is not a tilec bundle (no TILECBND header)", path);
    }
    tilec_sha256(data, len - 32, dg);
    if (memcmp(dg, data + len - 32, 32) != 0) {
        free(data);
        return tilec_api_fail(ctx, TILEC_E_INVALID, "bundle %s is damaged: its checksum does not match", path);
    }
    memset(&r, 0, sizeof r);
    r.p = data;
    r.n = len - 32;
    r.at = 8;
    fmt = get_u32(&r);
    n = get_u32(&r);
    if (fmt != BUNDLE_FORMAT || n > BUNDLE_MAX_KERNELS) {
        free(data);
        return tilec_api_fail(ctx, TILEC_E_INVALID, "bundle %s has format %u (%u kernels); this tilec reads "
                              "format %u", path, fmt, n, BUNDLE_FORMAT);
    }
    b = calloc(1, sizeof *b);
    if (!b || !(b->k = calloc((size_t)n + 1, sizeof *b->k)) || !(b->path = strdup(path))) {
        free(data);
        tilec_bundle_free(b);
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    b->tilec_version = get_str(&r);
    copy_key(b->key.plugin, sizeof b->key.plugin, &r);
    copy_key(b->key.version, sizeof b->key.version, &r);
    copy_key(b->key.device, sizeof b->key.device, &r);
    copy_key(b->key.arch, sizeof b->key.arch, &r);
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        bkernel_t *k = &b->k[b->n++];
        k->row.source_hash = get_str(&r);
        k->row.entry = get_str(&r);
        k->row.fixed = get_str(&r);
        k->row.shape = get_str(&r);
        k->row.config = get_str(&r);
        k->abi = get_str(&r);
        k->ir = get_blob(&r, &k->ir_len);
        k->bin = get_blob(&r, &k->bin_len);
        if (!r.bad && r.n - r.at >= sizeof k->row.time_ms) {
            memcpy(&k->row.time_ms, r.p + r.at, sizeof k->row.time_ms);
            r.at += sizeof k->row.time_ms;
        } else {
            r.bad = 1;
        }
    }
    free(data);
    if (r.bad || r.at != r.n) {
        tilec_bundle_free(b);
        return tilec_api_fail(ctx, TILEC_E_INVALID, "bundle %s is malformed", path);
    }
    if ((n = (uint32_t)tilec_api_need_backend(ctx)) != TILEC_OK) {
        tilec_bundle_free(b);
        return (tilec_status_t)n;
    }
    tilec_tune_devkey_of(ctx, &mine);
    if (strcmp(mine.plugin, b->key.plugin) || strcmp(mine.version, b->key.version) ||
        strcmp(mine.device, b->key.device) || strcmp(mine.arch, b->key.arch)) {
        tilec_api_fail(ctx, TILEC_E_UNAVAILABLE,
                       "bundle %s was built for backend '%s' %s on '%s'%s%s, not for this backend '%s' %s "
                       "on '%s'%s%s: build it again with `tilec bundle` for this backend and device",
                       path, b->key.plugin, b->key.version, b->key.device, b->key.arch[0] ? " " : "",
                       b->key.arch, mine.plugin, mine.version, mine.device, mine.arch[0] ? " " : "",
                       mine.arch);
        tilec_bundle_free(b);
        return TILEC_E_UNAVAILABLE;
    }
    *out = b;
    return TILEC_OK;
}

TILEC_API int tilec_bundle_num_kernels(const tilec_bundle_t *b)
{
    return b ? b->n : 0;
}

/* The bundle's rows of p's source and entry, into a row array. */
TILEC_API tilec_status_t tilec_bundle_lookup(tilec_context_t *ctx, const tilec_bundle_t *b,
                                             const tilec_program_t *p, tilec_tuned_t **out)
{
    tilec_tunedb_row_t *rows;
    int n = 0, best, nearest = 0;
    if (out) *out = NULL;
    if (!ctx || !b || !p || !out) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_bundle_lookup: bad arguments");
    }
    rows = calloc((size_t)b->n + 1, sizeof *rows);
    if (!rows) {
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    for (int i = 0; i < b->n; i++) {
        if (!strcmp(b->k[i].row.source_hash, p->source_hash) && !strcmp(b->k[i].row.entry, p->entry)) {
            rows[n++] = b->k[i].row;
        }
    }
    if (n == 0) {
        free(rows);
        return tilec_api_fail(ctx, TILEC_E_INVALID,
                              "bundle %s holds no kernel of this program (another source or entry '%s')",
                              b->path, p->entry);
    }
    best = tilec_tune_best_row(p, rows, n, &nearest);
    if (best >= 0 && rows[best].config[0] &&
        !(*out = tilec_tune_tuned_new(&rows[best], nearest, b->path))) {
        free(rows);
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    free(rows);
    return TILEC_OK;
}

TILEC_API tilec_status_t tilec_bundle_executable(tilec_context_t *ctx, const tilec_bundle_t *b,
                                                 const tilec_program_t *p, tilec_executable_t **out)
{
    const bkernel_t *k = NULL;
    tilec_status_t st;
    char *abi;
    if (out) *out = NULL;
    if (!ctx || !b || !p || !out) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_bundle_executable: bad arguments");
    }
    if ((st = tilec_api_need_backend(ctx)) != TILEC_OK) {
        return st;
    }
    for (int i = 0; i < b->n && !k; i++) {
        if (b->k[i].ir_len == p->ir_len && !memcmp(b->k[i].ir, p->ir, p->ir_len)) {
            k = &b->k[i];
        }
    }
    if (!k) {
        return tilec_api_fail(ctx, TILEC_E_INVALID,
                              "bundle %s has no kernel compiled from this program with these -D values "
                              "(its kernels are for the tuned configs and the defaults of the -D values "
                              "it was built with)", b->path);
    }
    abi = abi_text(p);
    if (!abi || strcmp(abi, k->abi) != 0) {
        free(abi);
        return tilec_api_fail(ctx, TILEC_E_INVALID, "bundle %s: the kernel's ABI differs from the program's",
                              b->path);
    }
    free(abi);
    st = tilec_api_exe_load(ctx, p, k->bin, k->bin_len, out);
    if (st == TILEC_OK) {
        tilec_log("compile", "bundle %s: kernel '%s' loaded (%zu bytes), no compiler run", b->path,
                  p->entry, k->bin_len);
    }
    return st;
}
