/*
 * core/loader.c — the plugin loader (docs/plugin-abi.md §7; docs/cli.md, "Environment").
 *
 * A scan builds the list of every plugin candidate in search order:
 *   1. each entry of TILEC_PLUGIN_PATH (a directory: its libtilec-*.so,
 *      sorted by name; a file: that file; a missing entry is skipped),
 *   2. the cpu backend embedded in libtilec,
 *   3. the build tree: the directory that holds libtilec itself, then its
 *      tilec/ subdirectory (an installed libtilec in PREFIX/lib finds
 *      PREFIX/lib/tilec wherever the tree was installed),
 *   4. TILEC_PREFIX/lib/tilec.
 * Each file must be a regular file; it is then loaded, queried, validated
 * and its devices listed in a forked probe child first (core/probe.c), so a
 * plugin that crashes, exits or hangs in a constructor, its query,
 * device_count or device_info is listed as rejected with the stage instead
 * of taking the host down; only then is it dlopen'ed in the host, its ABI
 * negotiated, its table validated and its devices counted.  Every candidate ends up with a state (ok, unavailable,
 * rejected, shadowed) and a reason; a bad plugin never hides the others.
 * The environment is read again on each scan; what is kept between scans
 * is the accepted plugins (resident) and the probe results by file identity.
 * TILEC_LOG=loader traces every step.
 */
#define TILEC_BUILDING_LIBRARY 1
#include "loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cache.h"
#include "log.h"
#include "probe.h"

#ifndef TILEC_PREFIX
#define TILEC_PREFIX "/usr/local"
#endif

/* Smallest table this host accepts: everything up to and including
 * `launch`, i.e. the ABI 1.0 table (a 1.1 table must reach `extension`). */
#define TABLE_MIN_SIZE TILEC_PLUGIN_TABLE_SIZE_1_0
/* A plugin reporting more devices than this is treated as broken. */
#define MAX_DEVICES 4096u

/* ---- small string helpers ---------------------------------------------- */

char *tilec_strfmt(const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return NULL;
    }
    s = malloc((size_t)n + 1);
    if (!s) {
        return NULL;
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

/* Growable string; on OOM it stops growing and sets oom. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf_t;

static void sb_add(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (b->oom) {
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        char *s;
        while (cap < b->len + (size_t)n + 1) {
            cap *= 2;
        }
        s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

TILEC_API const char *tilec_plugin_state_name(tilec_plugin_state_t s)
{
    switch (s) {
    case TILEC_PLUGIN_OK: return "ok";
    case TILEC_PLUGIN_UNAVAILABLE: return "unavailable";
    case TILEC_PLUGIN_REJECTED: return "rejected";
    case TILEC_PLUGIN_SHADOWED: return "shadowed";
    }
    return "?";
}

/* ---- the host struct ---------------------------------------------------- */

/* Plugins may keep the host pointer they were queried with (for its log
 * callback or cache_dir), so host structs live as long as the process: one
 * per distinct cache directory, freed at unload. */
typedef struct host_node {
    struct host_node *next;
    char *cache_dir;
    tilec_plugin_host_t host;
} host_node_t;

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static host_node_t *host_list;

static void host_log(void *user, const char *topic, const char *msg)
{
    (void)user;
    tilec_log(topic && *topic ? topic : "loader", "%s", msg ? msg : "");
}

static const tilec_plugin_host_t host_nocache = {
    sizeof(tilec_plugin_host_t), TILEC_HOST_ABI_MIN, TILEC_HOST_ABI_MAX, 0, host_log, NULL, NULL
};

const tilec_plugin_host_t *tilec_loader_host(void)
{
    char *dir = tilec_cache_dir();
    host_node_t *n;
    if (!dir) {
        return &host_nocache;
    }
    pthread_mutex_lock(&host_lock);
    for (n = host_list; n; n = n->next) {
        if (strcmp(n->cache_dir, dir) == 0) {
            break;
        }
    }
    if (!n && (n = calloc(1, sizeof *n)) != NULL) {
        n->cache_dir = dir;
        dir = NULL;
        n->host = host_nocache;
        n->host.cache_dir = n->cache_dir;
        n->next = host_list;
        host_list = n;
    }
    pthread_mutex_unlock(&host_lock);
    free(dir);
    return n ? &n->host : &host_nocache;
}

__attribute__((destructor)) static void host_list_free(void)
{
    while (host_list) {
        host_node_t *n = host_list;
        host_list = n->next;
        free(n->cache_dir);
        free(n);
    }
}

/* ---- the candidate list ------------------------------------------------- */

typedef struct scan {
    tilec_loader_list_t *list;
    int cap;
    char **seen;      /* real paths already probed */
    int nseen, seencap;
    const tilec_plugin_host_t *host;
    const char *want; /* a narrow scan: only the files named libtilec-WANT.so */
    int oom;
} scan_t;

static void entry_free(tilec_loader_entry_t *e)
{
    if (e->handle) {
        dlclose(e->handle);
    }
    free(e->name);
    free(e->path);
    free(e->vendor);
    free(e->version);
    free(e->reason);
    free(e->devices);
    free(e->props);
    memset(e, 0, sizeof *e);
}

void tilec_loader_release(tilec_loader_list_t *list)
{
    if (!list) {
        return;
    }
    for (int i = 0; i < list->n; i++) {
        entry_free(&list->items[i]);
    }
    free(list->items);
    list->items = NULL;
    list->n = 0;
}

void *tilec_loader_take(tilec_loader_list_t *list, int i)
{
    void *h;
    if (!list || i < 0 || i >= list->n) {
        return NULL;
    }
    h = list->items[i].handle;
    list->items[i].handle = NULL;
    return h;
}

/* "libtilec-NAME.so" -> "NAME"; any other file name is returned whole. */
static char *name_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    size_t len;
    base = base ? base + 1 : path;
    len = strlen(base);
    if (strncmp(base, "libtilec-", 9) == 0 && len > 12 && strcmp(base + len - 3, ".so") == 0) {
        return strndup(base + 9, len - 12);
    }
    return strdup(base);
}

static tilec_loader_entry_t *add_entry(scan_t *s, const char *path, int embedded)
{
    tilec_loader_list_t *l = s->list;
    tilec_loader_entry_t *e;
    if (l->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        tilec_loader_entry_t *items = realloc(l->items, (size_t)cap * sizeof *items);
        if (!items) {
            s->oom = 1;
            return NULL;
        }
        l->items = items;
        s->cap = cap;
    }
    e = &l->items[l->n];
    memset(e, 0, sizeof *e);
    e->embedded = embedded;
    e->path = strdup(embedded ? "(embedded)" : path);
    e->name = embedded ? strdup("cpu") : name_from_path(path);
    e->vendor = strdup("");
    e->version = strdup("");
    e->reason = strdup("");
    if (!e->path || !e->name || !e->vendor || !e->version || !e->reason) {
        entry_free(e);
        s->oom = 1;
        return NULL;
    }
    l->n++;
    return e;
}

static void set_state(scan_t *s, tilec_loader_entry_t *e, tilec_plugin_state_t st, char *reason)
{
    e->state = st;
    if (!reason) {
        s->oom = 1;
        return;
    }
    free(e->reason);
    e->reason = reason;
    tilec_log("loader", "%s: %s%s%s", e->path, tilec_plugin_state_name(st), *reason ? ": " : "",
              reason);
}

static void reject(scan_t *s, tilec_loader_entry_t *e, char *reason)
{
    set_state(s, e, TILEC_PLUGIN_REJECTED, reason);
    if (e->handle) {
        dlclose(e->handle);
        e->handle = NULL;
    }
    e->table = NULL;
    e->abi_version = 0;
    e->ir_min = e->ir_max = 0;
    e->caps = 0;
    if (e->vendor && *e->vendor) {
        free(e->vendor);
        e->vendor = strdup("");
    }
    if (e->version && *e->version) {
        free(e->version);
        e->version = strdup("");
    }
    if (!e->vendor || !e->version) {
        s->oom = 1;
    }
}

static int valid_name(const char *n)
{
    if (!*n || strlen(n) > 64) {
        return 0;
    }
    for (; *n; n++) {
        if (!((*n >= 'a' && *n <= 'z') || (*n >= '0' && *n <= '9') || *n == '_')) {
            return 0;
        }
    }
    return 1;
}

static const char *plugin_error(const tilec_plugin_t *t)
{
    const char *m = t->last_error ? t->last_error() : NULL;
    return m ? m : "";
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* The tile IR versions a table says it reads: 1.0..1.0 for an ABI 1.0
 * table (1.0 was the only IR then), else its ir_min..ir_max, which must be
 * a non-empty range of major version 1 that includes 1.0 or later.
 * 0, or -1 when the range is unusable. */
static int ir_range(const tilec_plugin_t *t, uint32_t abi, uint32_t *lo, uint32_t *hi)
{
    *lo = *hi = TILEC_IR_MAKE(1, 0);
    if (abi < TILEC_ABI_MAKE(1, 1)) {
        return 0;
    }
    if (t->ir_min > t->ir_max || TILEC_ABI_MAJOR(t->ir_min) != 1 || TILEC_ABI_MAJOR(t->ir_max) != 1) {
        return -1;
    }
    *lo = t->ir_min;
    *hi = t->ir_max;
    return 0;
}

/* Negotiates with query and validates the table; on success probes the
 * devices.  e->handle is the dlopen handle (NULL when embedded). */
static void validate(scan_t *s, tilec_loader_entry_t *e, tilec_plugin_query_fn query)
{
    uint32_t abi = 0, n = 0;
    const tilec_plugin_t *t = NULL;
    tilec_pstatus_t st;
    const char *missing = NULL;

    tilec_log("loader", "%s: calling tilec_plugin_query (host speaks %u.%u..%u.%u)", e->path,
              TILEC_ABI_MAJOR(TILEC_HOST_ABI_MIN), TILEC_ABI_MINOR(TILEC_HOST_ABI_MIN),
              TILEC_ABI_MAJOR(TILEC_HOST_ABI_MAX), TILEC_ABI_MINOR(TILEC_HOST_ABI_MAX));
    tilec_probe_stage("tilec_plugin_query");
    st = query(s->host, &abi, &t);
    if (st == TILEC_PS_UNSUPPORTED || (st == TILEC_PS_OK && abi != 0 &&
                                       (abi < TILEC_HOST_ABI_MIN || abi > TILEC_HOST_ABI_MAX))) {
        char offered[32] = "none";
        if (abi != 0) {
            snprintf(offered, sizeof offered, "%u.%u", TILEC_ABI_MAJOR(abi), TILEC_ABI_MINOR(abi));
        }
        reject(s, e, tilec_strfmt("no common ABI version (host speaks %u.%u..%u.%u, plugin offered %s)",
                                  TILEC_ABI_MAJOR(TILEC_HOST_ABI_MIN),
                                  TILEC_ABI_MINOR(TILEC_HOST_ABI_MIN),
                                  TILEC_ABI_MAJOR(TILEC_HOST_ABI_MAX),
                                  TILEC_ABI_MINOR(TILEC_HOST_ABI_MAX), offered));
        return;
    }
    if (st != TILEC_PS_OK) {
        reject(s, e, tilec_strfmt("tilec_plugin_query failed with status %d", (int)st));
        return;
    }
    if (!t) {
        reject(s, e, tilec_strfmt("tilec_plugin_query returned a NULL table"));
        return;
    }
    if (t->struct_size < TABLE_MIN_SIZE) {
        reject(s, e, tilec_strfmt("table struct_size %u smaller than ABI 1.0 minimum %u",
                                  t->struct_size, (unsigned)TABLE_MIN_SIZE));
        return;
    }
    if (abi == 0 || t->abi_version != abi) {
        reject(s, e, tilec_strfmt("table abi_version %u.%u differs from the negotiated version %u.%u",
                                  TILEC_ABI_MAJOR(t->abi_version), TILEC_ABI_MINOR(t->abi_version),
                                  TILEC_ABI_MAJOR(abi), TILEC_ABI_MINOR(abi)));
        return;
    }
    if (!t->name) missing = "name";
    else if (!t->last_error) missing = "last_error";
    else if (!t->device_count) missing = "device_count";
    else if (!t->device_info) missing = "device_info";
    else if (!t->device_open) missing = "device_open";
    else if (!t->device_close) missing = "device_close";
    else if (!t->compile) missing = "compile";
    else if (!t->module_data) missing = "module_data";
    else if (!t->module_free) missing = "module_free";
    else if (!t->mem_alloc) missing = "mem_alloc";
    else if (!t->mem_write) missing = "mem_write";
    else if (!t->mem_read) missing = "mem_read";
    else if (!t->mem_free) missing = "mem_free";
    else if (!t->launch) missing = "launch";
    if (!missing && abi >= TILEC_ABI_MAKE(1, 1)) {
        if (t->struct_size < TILEC_PLUGIN_TABLE_SIZE_1_1) {
            reject(s, e, tilec_strfmt("table struct_size %u smaller than ABI 1.1 minimum %u",
                                      t->struct_size, (unsigned)TILEC_PLUGIN_TABLE_SIZE_1_1));
            return;
        }
        if (!t->device_property) missing = "device_property";
        else if (!t->module_info) missing = "module_info";
        else if (!t->lower) missing = "lower";
        else if (!t->extension) missing = "extension";
    }
    if (missing) {
        reject(s, e, tilec_strfmt("table field '%s' is NULL", missing));
        return;
    }
    if (ir_range(t, abi, &e->ir_min, &e->ir_max) != 0) {
        reject(s, e, tilec_strfmt("table states no usable tile IR range (%u.%u..%u.%u; this host "
                                  "sends tile IR 1.x)", TILEC_ABI_MAJOR(t->ir_min),
                                  TILEC_ABI_MINOR(t->ir_min), TILEC_ABI_MAJOR(t->ir_max),
                                  TILEC_ABI_MINOR(t->ir_max)));
        return;
    }
    if (!valid_name(t->name)) {
        reject(s, e, tilec_strfmt("invalid plugin name '%.64s' (allowed: 1 to 64 of a-z 0-9 _)",
                                  t->name));
        return;
    }
    if (!e->embedded && strcmp(e->name, t->name) != 0) {
        tilec_log("loader", "%s: file name says '%s' but the plugin is named '%s'; using '%s'",
                  e->path, e->name, t->name, t->name);
    }
    free(e->name);
    e->name = strdup(t->name);
    if (!e->name) {
        s->oom = 1;
        reject(s, e, strdup(""));
        return;
    }
    e->table = t;
    e->abi_version = abi;
    tilec_log("loader", "%s: plugin '%s' negotiated ABI %u.%u, reads tile IR %u.%u..%u.%u", e->path,
              t->name, TILEC_ABI_MAJOR(abi), TILEC_ABI_MINOR(abi), TILEC_ABI_MAJOR(e->ir_min),
              TILEC_ABI_MINOR(e->ir_min), TILEC_ABI_MAJOR(e->ir_max), TILEC_ABI_MINOR(e->ir_max));

    free(e->vendor);
    free(e->version);
    e->vendor = dup_or_empty(t->vendor);
    e->version = dup_or_empty(t->version);
    if (!e->vendor || !e->version) {
        s->oom = 1;
    }
    e->caps = t->caps;

    /* Shadowing: the first plugin of a name wins. */
    for (tilec_loader_entry_t *o = s->list->items; o < e; o++) {
        if ((o->state == TILEC_PLUGIN_OK || o->state == TILEC_PLUGIN_UNAVAILABLE) &&
            strcmp(o->name, e->name) == 0) {
            set_state(s, e, TILEC_PLUGIN_SHADOWED, tilec_strfmt("shadowed by %s", o->path));
            if (e->handle) {
                dlclose(e->handle);
                e->handle = NULL;
            }
            e->table = NULL;
            return;
        }
    }
    /* A valid plugin stays resident for the life of the process: vendor
     * runtimes do not always survive being unloaded, and later scans then
     * cost a dlopen reference instead of a reload and a crash probe. */
    if (e->handle) {
        void *keep = dlopen(e->path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
        if (keep) {
            dlclose(keep);
        }
    }

    tilec_probe_stage("device_count");
    st = t->device_count(&n);
    if (st != TILEC_PS_OK || n == 0) {
        const char *why = plugin_error(t);
        if (*why) {
            set_state(s, e, TILEC_PLUGIN_UNAVAILABLE, strdup(why));
        } else if (st != TILEC_PS_OK) {
            set_state(s, e, TILEC_PLUGIN_UNAVAILABLE,
                      tilec_strfmt("device_count failed with status %d", (int)st));
        } else {
            set_state(s, e, TILEC_PLUGIN_UNAVAILABLE, strdup("no devices found"));
        }
        return;
    }
    if (n > MAX_DEVICES) {
        reject(s, e, tilec_strfmt("device_count reported %u devices (more than %u)", n, MAX_DEVICES));
        return;
    }
    e->devices = calloc(n, sizeof *e->devices);
    e->props = calloc(n, sizeof *e->props);
    if (!e->devices || !e->props) {
        s->oom = 1;
        reject(s, e, strdup("out of memory"));
        return;
    }
    e->ndevices = n;
    for (uint32_t i = 0; i < n; i++) {
        tilec_pdevice_info_t *d = &e->devices[i];
        d->struct_size = sizeof *d;
        tilec_probe_stage("device_info(%u)", i);
        st = t->device_info(i, d);
        d->struct_size = sizeof *d;
        if (st != TILEC_PS_OK) {
            memset(d, 0, sizeof *d);
            d->struct_size = sizeof *d;
            snprintf(d->name, sizeof d->name, "device %u (device_info failed: %s)", i,
                     plugin_error(t));
        }
        d->name[sizeof d->name - 1] = '\0';
        d->platform[sizeof d->platform - 1] = '\0';
        tilec_log("loader", "%s: device %u: %s%s%s", e->path, i, d->name,
                  d->platform[0] ? " / " : "", d->platform);
        tilec_props_probe(t, abi, i, d, &e->props[i]);
    }
    set_state(s, e, TILEC_PLUGIN_OK, strdup(""));
}

/* The probe child's work: everything the host is about to do with the
 * file (probe.h), through the same validate(), so the entries are called
 * in the same order with the same arguments. */
typedef struct probe_job {
    scan_t *s;
    tilec_loader_entry_t *e;
} probe_job_t;

static void probe_work(void *arg)
{
    probe_job_t *j = arg;
    tilec_plugin_query_fn q;
    tilec_probe_stage("dlopen (the plugin's constructors)");
    j->e->handle = dlopen(j->e->path, RTLD_NOW | RTLD_LOCAL);
    if (!j->e->handle) {
        return; /* the host says why */
    }
    q = (tilec_plugin_query_fn)dlsym(j->e->handle, TILEC_PLUGIN_QUERY_SYMBOL);
    if (q) {
        validate(j->s, j->e, q);
    }
}

/* Refuses what is not a regular file before anything reads it (a FIFO
 * would block even a RTLD_NOLOAD dlopen forever).  0 and *st, or -1. */
static int check_regular(scan_t *s, tilec_loader_entry_t *e, struct stat *st)
{
    int fd = open(e->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc;
    if (fd < 0) {
        reject(s, e, tilec_strfmt("cannot open: %s", strerror(errno)));
        return -1;
    }
    rc = fstat(fd, st);
    close(fd);
    if (rc != 0) {
        reject(s, e, tilec_strfmt("cannot stat: %s", strerror(errno)));
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        reject(s, e, tilec_strfmt("not a regular file (%s)",
                                  S_ISFIFO(st->st_mode)   ? "a FIFO"
                                  : S_ISDIR(st->st_mode)  ? "a directory"
                                  : S_ISSOCK(st->st_mode) ? "a socket"
                                                          : "a device"));
        return -1;
    }
    return 0;
}

/* Probes the file in a child unless this very file passed or failed
 * before.  Returns 0 when the host may load it. */
static int probe_in_child(scan_t *s, tilec_loader_entry_t *e, const struct stat *st)
{
    char *why = NULL;
    probe_job_t job = {s, e};
    if (tilec_probe_cached(st, &why)) {
        tilec_log("loader", "%s: probed before (%s)", e->path, *why ? why : "passed");
    } else {
        int rc = tilec_probe_run(probe_work, &job, &why);
        if (rc < 0) {
            /* No child: the in-process checks alone decide. */
            tilec_log("loader", "%s: no probe (%s); loading in-process", e->path, why ? why : "");
            free(why);
            return 0;
        }
        tilec_probe_remember(st, why);
    }
    if (why && *why) {
        reject(s, e, why);
        return -1;
    }
    free(why);
    return 0;
}

static int seen_before(scan_t *s, const char *path)
{
    char *real = realpath(path, NULL);
    if (!real) {
        return 0; /* dlopen will report the problem */
    }
    for (int i = 0; i < s->nseen; i++) {
        if (strcmp(s->seen[i], real) == 0) {
            tilec_log("loader", "%s: same file as %s, already probed; skipped", path, real);
            free(real);
            return 1;
        }
    }
    if (s->nseen == s->seencap) {
        int cap = s->seencap ? s->seencap * 2 : 16;
        char **seen = realloc(s->seen, (size_t)cap * sizeof *seen);
        if (!seen) {
            free(real);
            return 0;
        }
        s->seen = seen;
        s->seencap = cap;
    }
    s->seen[s->nseen++] = real;
    return 0;
}

static void probe_file(scan_t *s, const char *path)
{
    tilec_loader_entry_t *e;
    tilec_plugin_query_fn q;
    struct stat st;
    if (seen_before(s, path)) {
        return;
    }
    tilec_log("loader", "%s: candidate", path);
    e = add_entry(s, path, 0);
    if (!e) {
        return;
    }
    /* A plugin already loaded in this process (accepted by an earlier scan,
     * which made it resident) needs no probe. */
    if (check_regular(s, e, &st) != 0) {
        return;
    }
    e->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (e->handle) {
        tilec_log("loader", "%s: already resident; no probe", path);
    } else if (probe_in_child(s, e, &st) != 0) {
        return;
    }
    dlerror();
    if (!e->handle) {
        e->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!e->handle) {
        const char *err = dlerror();
        reject(s, e, tilec_strfmt("not a loadable shared object: %s", err ? err : "unknown error"));
        return;
    }
    q = (tilec_plugin_query_fn)dlsym(e->handle, TILEC_PLUGIN_QUERY_SYMBOL);
    if (!q) {
        reject(s, e, tilec_strfmt("does not export %s", TILEC_PLUGIN_QUERY_SYMBOL));
        return;
    }
    validate(s, e, q);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every libtilec-*.so of dir, sorted by name. */
static void probe_dir(scan_t *s, const char *dir, int quiet_missing)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    int n = 0, cap = 0;
    if (!d) {
        if (!quiet_missing || (errno != ENOENT && errno != ENOTDIR)) {
            tilec_log("loader", "%s: cannot open directory (%s); skipped", dir, strerror(errno));
        }
        return;
    }
    tilec_log("loader", "searching %s", dir);
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (strncmp(de->d_name, "libtilec-", 9) != 0 || len <= 12 ||
            strcmp(de->d_name + len - 3, ".so") != 0) {
            continue;
        }
        if (s->want && (len - 12 != strlen(s->want) || strncmp(de->d_name + 9, s->want, len - 12) != 0)) {
            continue;
        }
        if (n == cap) {
            int c = cap ? cap * 2 : 16;
            char **nn = realloc(names, (size_t)c * sizeof *nn);
            if (!nn) {
                s->oom = 1;
                break;
            }
            names = nn;
            cap = c;
        }
        if (!(names[n] = tilec_strfmt("%s/%s", dir, de->d_name))) {
            s->oom = 1;
            break;
        }
        n++;
    }
    closedir(d);
    if (n > 1) {
        qsort(names, (size_t)n, sizeof *names, cmp_str);
    }
    for (int i = 0; i < n; i++) {
        if (!s->oom) {
            probe_file(s, names[i]);
        }
        free(names[i]);
    }
    free(names);
}

static void probe_path_entry(scan_t *s, const char *p)
{
    struct stat st;
    if (stat(p, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            tilec_log("loader", "TILEC_PLUGIN_PATH entry %s: %s; skipped", p, strerror(errno));
            return;
        }
        st.st_mode = S_IFREG; /* a symlink loop, no permission: listed with the reason */
    }
    if (S_ISDIR(st.st_mode)) {
        probe_dir(s, p, 0);
    } else if (!strchr(p, '/')) {
        /* dlopen would search the library path for a bare file name */
        char *rel = tilec_strfmt("./%s", p);
        if (!rel) {
            s->oom = 1;
            return;
        }
        probe_file(s, rel);
        free(rel);
    } else {
        probe_file(s, p);
    }
}

static const char loader_anchor = 0;

/* The directory holding libtilec (the .so, or the executable it is linked
 * into); NULL when unknown. */
static char *build_tree_dir(void)
{
    Dl_info info;
    char *real, *slash;
    if (!dladdr(&loader_anchor, &info) || !info.dli_fname || !*info.dli_fname) {
        return NULL;
    }
    real = realpath(info.dli_fname, NULL);
    if (!real) {
        return NULL;
    }
    slash = strrchr(real, '/');
    if (!slash) {
        free(real);
        return NULL;
    }
    if (slash == real) {
        slash[1] = '\0';
    } else {
        *slash = '\0';
    }
    return real;
}

tilec_status_t tilec_loader_scan(tilec_loader_list_t *out)
{
    return tilec_loader_scan_for(out, NULL);
}

tilec_status_t tilec_loader_scan_for(tilec_loader_list_t *out, const char *name)
{
    scan_t s;
    const char *pp;
    char *dir;
    memset(&s, 0, sizeof s);
    out->n = 0;
    out->items = NULL;
    s.list = out;
    s.host = tilec_loader_host();
    s.want = name;
    if (name) {
        tilec_log("loader", "looking for '%s' only", name);
    }

    pp = secure_getenv("TILEC_PLUGIN_PATH");
    if (pp && *pp) {
        char *copy = strdup(pp), *save = NULL, *tok;
        if (!copy) {
            s.oom = 1;
        }
        tilec_log("loader", "TILEC_PLUGIN_PATH=%s", pp);
        for (tok = copy ? strtok_r(copy, ":", &save) : NULL; tok && !s.oom;
             tok = strtok_r(NULL, ":", &save)) {
            probe_path_entry(&s, tok);
        }
        free(copy);
    }
    if (!s.oom && (!name || strcmp(name, "cpu") == 0)) {
        tilec_loader_entry_t *e;
        tilec_log("loader", "embedded cpu backend");
        e = add_entry(&s, NULL, 1);
        if (e) {
            validate(&s, e, tilec_cpu_embedded_query);
        }
    }
    dir = build_tree_dir();
    if (dir && !s.oom) {
        char *sub = tilec_strfmt("%s/tilec", dir);
        tilec_log("loader", "build tree %s", dir);
        probe_dir(&s, dir, 1);
        if (!sub) {
            s.oom = 1;
        } else if (!s.oom) {
            probe_dir(&s, sub, 1); /* installed next to libtilec: PREFIX/lib/tilec */
        }
        free(sub);
    }
    free(dir);
    if (!s.oom) {
        probe_dir(&s, TILEC_PREFIX "/lib/tilec", 1);
    }
    for (int i = 0; i < s.nseen; i++) {
        free(s.seen[i]);
    }
    free(s.seen);
    if (s.oom) {
        tilec_loader_release(out);
        return TILEC_E_NOMEM;
    }
    tilec_log("loader", "%d candidate(s) found", out->n);
    return TILEC_OK;
}

/* ---- selection ---------------------------------------------------------- */

static void describe_list(sbuf_t *b, const tilec_loader_list_t *l)
{
    sb_add(b, "; found:");
    if (l->n == 0) {
        sb_add(b, " nothing");
    }
    for (int i = 0; i < l->n; i++) {
        const tilec_loader_entry_t *e = &l->items[i];
        sb_add(b, "%s %s (%s", i ? "," : "", e->name, tilec_plugin_state_name(e->state));
        if (e->state == TILEC_PLUGIN_OK) {
            sb_add(b, ", %s)", e->embedded ? "embedded" : e->path);
        } else {
            sb_add(b, ": %s; %s)", e->reason, e->embedded ? "embedded" : e->path);
        }
    }
}

static int parse_spec(const char *spec, char **name, int64_t *dev)
{
    const char *colon = strrchr(spec, ':');
    *dev = -1;
    if (colon) {
        const char *p = colon + 1;
        int64_t v = 0;
        if (!*p) {
            return -1;
        }
        for (; *p; p++) {
            if (*p < '0' || *p > '9' || v > 1000000) {
                return -1;
            }
            v = v * 10 + (*p - '0');
        }
        *dev = v;
        *name = strndup(spec, (size_t)(colon - spec));
    } else {
        *name = strdup(spec);
    }
    if (!*name) {
        return -2;
    }
    if (!**name) {
        free(*name);
        *name = NULL;
        return -1;
    }
    return 0;
}

tilec_status_t tilec_loader_select(const tilec_loader_list_t *l, const char *spec, int *index,
                                   uint32_t *device, char **msg)
{
    char *name = NULL;
    int64_t dev;
    int pick = -1, rc;
    sbuf_t b = {0};
    tilec_status_t status = TILEC_E_UNAVAILABLE;
    *msg = NULL;
    if (!spec || !*spec) {
        spec = "auto";
    }
    rc = parse_spec(spec, &name, &dev);
    if (rc == -2) {
        return TILEC_E_NOMEM;
    }
    if (rc != 0) {
        *msg = tilec_strfmt("malformed backend '%s' (expected NAME, NAME:N, auto)", spec);
        return TILEC_E_INVALID;
    }
    if (strcmp(name, "auto") == 0) {
        for (int i = 0; i < l->n && pick < 0; i++) {
            const tilec_loader_entry_t *e = &l->items[i];
            if (e->state == TILEC_PLUGIN_OK && e->ndevices > 0 && (e->devices[0].caps & TILEC_CAP_GPU)) {
                pick = i;
            }
        }
        if (pick >= 0) {
            tilec_log("loader", "auto: first GPU backend is '%s'", l->items[pick].name);
        } else {
            tilec_log("loader", "auto: no GPU backend; using cpu");
            free(name);
            if (!(name = strdup("cpu"))) {
                return TILEC_E_NOMEM;
            }
        }
    }
    if (pick < 0) {
        for (int i = 0; i < l->n && pick < 0; i++) {
            const tilec_loader_entry_t *e = &l->items[i];
            if (strcmp(e->name, name) != 0) {
                continue;
            }
            if (e->state == TILEC_PLUGIN_OK) {
                pick = i;
            } else if (e->state == TILEC_PLUGIN_UNAVAILABLE) {
                sb_add(&b, "backend '%s' is unavailable: %s (%s)", name, e->reason,
                       e->embedded ? "embedded" : e->path);
                goto fail;
            }
        }
    }
    if (pick < 0) {
        sb_add(&b, "no backend '%s'", name);
        describe_list(&b, l);
        goto fail;
    }
    {
        const tilec_loader_entry_t *e = &l->items[pick];
        if (dev < 0) {
            dev = 0;
        }
        if ((uint64_t)dev >= e->ndevices) {
            sb_add(&b, "backend '%s' has %u device%s (0..%u); there is no device %lld", e->name,
                   e->ndevices, e->ndevices == 1 ? "" : "s", e->ndevices - 1, (long long)dev);
            goto fail;
        }
        *index = pick;
        *device = (uint32_t)dev;
        tilec_log("loader", "selected '%s' device %u (%s) from %s", e->name, (unsigned)dev,
                  e->devices[dev].name, e->path);
        free(name);
        return TILEC_OK;
    }
fail:
    free(name);
    if (b.oom) {
        free(b.s);
        return TILEC_E_NOMEM;
    }
    *msg = b.s;
    tilec_log("loader", "%s", b.s ? b.s : "");
    return status;
}

/* ---- the public listing ------------------------------------------------- */

TILEC_API void tilec_plugins_free(tilec_plugin_desc_t *list, int n)
{
    if (!list) {
        return;
    }
    for (int i = 0; i < n; i++) {
        tilec_plugin_desc_t *d = &list[i];
        free((char *)d->name);
        free((char *)d->path);
        free((char *)d->vendor);
        free((char *)d->version);
        free((char *)d->reason);
        if (d->devices) {
            for (int j = 0; j < d->ndevices; j++) {
                free((char *)d->devices[j].name);
                free((char *)d->devices[j].platform);
                free((char *)d->devices[j].arch);
                free((char *)d->devices[j].mma_kinds);
                free((char *)d->devices[j].driver_version);
            }
            free((void *)d->devices);
        }
    }
    free(list);
}

TILEC_API tilec_status_t tilec_plugins_list(tilec_plugin_desc_t **out, int *n)
{
    tilec_loader_list_t l;
    tilec_plugin_desc_t *d;
    tilec_status_t st;
    int oom = 0;
    if (!out || !n) {
        return TILEC_E_INVALID;
    }
    *out = NULL;
    *n = 0;
    st = tilec_loader_scan(&l);
    if (st != TILEC_OK) {
        return st;
    }
    d = calloc(l.n ? (size_t)l.n : 1, sizeof *d);
    if (!d) {
        tilec_loader_release(&l);
        return TILEC_E_NOMEM;
    }
    for (int i = 0; i < l.n; i++) {
        tilec_loader_entry_t *e = &l.items[i];
        tilec_plugin_desc_t *p = &d[i];
        /* Move the strings over; entry_free frees the NULLs left behind. */
        p->name = e->name;
        p->path = e->path;
        p->vendor = e->vendor;
        p->version = e->version;
        p->reason = e->reason;
        e->name = e->path = e->vendor = e->version = e->reason = NULL;
        p->abi_version = e->abi_version;
        p->ir_min = e->ir_min;
        p->ir_max = e->ir_max;
        p->state = e->state;
        p->caps = e->caps;
        if (e->ndevices) {
            tilec_device_desc_t *dv = calloc(e->ndevices, sizeof *dv);
            if (!dv) {
                oom = 1;
                continue;
            }
            p->devices = dv;
            p->ndevices = (int)e->ndevices;
            for (uint32_t j = 0; j < e->ndevices; j++) {
                const tilec_pdevice_info_t *in = &e->devices[j];
                const tilec_pvalue_t *pv = e->props[j].v;
                dv[j].name = strdup(in->name);
                dv[j].platform = strdup(in->platform);
                dv[j].arch = strdup(pv[TILEC_PROP_ARCH].sval);
                dv[j].mma_kinds = strdup(pv[TILEC_PROP_MMA_KINDS].sval);
                dv[j].driver_version = strdup(pv[TILEC_PROP_DRIVER_VERSION].sval);
                if (!dv[j].name || !dv[j].platform || !dv[j].arch || !dv[j].mma_kinds ||
                    !dv[j].driver_version) {
                    oom = 1;
                }
#define PROP_INT(k) (pv[k].kind == TILEC_PVAL_INT ? pv[k].ival : -1)
                dv[j].subgroup_size = PROP_INT(TILEC_PROP_SUBGROUP_SIZE);
                dv[j].shared_mem_default_bytes = PROP_INT(TILEC_PROP_SHARED_MEM_PER_BLOCK);
                dv[j].shared_mem_optin_bytes = PROP_INT(TILEC_PROP_SHARED_MEM_PER_BLOCK_OPTIN);
                dv[j].clock_khz = PROP_INT(TILEC_PROP_CLOCK_KHZ);
                dv[j].registers_per_block = PROP_INT(TILEC_PROP_REGISTERS_PER_BLOCK);
#undef PROP_INT
                dv[j].caps = in->caps;
                dv[j].global_mem_bytes = in->global_mem_bytes;
                dv[j].shared_mem_bytes = in->shared_mem_bytes;
                dv[j].max_threads = in->max_threads;
                dv[j].compute_units = in->compute_units;
            }
        }
    }
    *n = l.n;
    tilec_loader_release(&l);
    if (oom) {
        tilec_plugins_free(d, *n);
        *n = 0;
        return TILEC_E_NOMEM;
    }
    *out = d;
    return TILEC_OK;
}
