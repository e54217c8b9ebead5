/*
 * core/tunedb.c — the tuning database on SQLite (see tunedb.h).
 *
 * Why dlopen and not -lsqlite3: docs/architecture.md keeps the build to a C compiler
 * and libc, and a host without libsqlite3 must still run every kernel; it
 * only loses the database, with the reason.  The symbols come from one
 * X-macro table, as the backends load their vendor runtimes.
 *
 * Concurrency: every write is one BEGIN IMMEDIATE transaction and every
 * connection waits up to TUNEDB_BUSY_MS for a lock, so two tuners writing
 * at once serialise instead of failing or corrupting the file.  The file
 * keeps SQLite's rollback journal rather than WAL: a WAL database cannot be
 * opened where its directory is read-only (no -shm file can be made),
 * which is exactly how a shipped table is deployed, and tuners write a few
 * rows per run, so WAL's concurrent readers buy nothing here.
 */
#include "tunedb.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "loader.h"
#include "log.h"

#define TUNEDB_FORMAT "tilec-tune 1"
#define TUNEDB_BUSY_MS 30000

/* ---- libsqlite3, through dlopen ------------------------------------------ */

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
enum { SQ_OK = 0, SQ_NOTADB = 26, SQ_ROW = 100, SQ_DONE = 101 };
enum { SQ_OPEN_READONLY = 0x1, SQ_OPEN_READWRITE = 0x2, SQ_OPEN_CREATE = 0x4 };
#define SQ_TRANSIENT ((void (*)(void *))-1)

#define SQLITE_SYMBOLS(X)                                                                      \
    X(int, sqlite3_open_v2, (const char *, sqlite3 **, int, const char *))                    \
    X(int, sqlite3_close_v2, (sqlite3 *))                                                      \
    X(int, sqlite3_exec, (sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, \
                          char **))                                                            \
    X(int, sqlite3_prepare_v2, (sqlite3 *, const char *, int, sqlite3_stmt **, const char **)) \
    X(int, sqlite3_bind_text, (sqlite3_stmt *, int, const char *, int, void (*)(void *)))      \
    X(int, sqlite3_bind_double, (sqlite3_stmt *, int, double))                                 \
    X(int, sqlite3_bind_int64, (sqlite3_stmt *, int, long long))                               \
    X(int, sqlite3_step, (sqlite3_stmt *))                                                     \
    X(const unsigned char *, sqlite3_column_text, (sqlite3_stmt *, int))                       \
    X(double, sqlite3_column_double, (sqlite3_stmt *, int))                                    \
    X(long long, sqlite3_column_int64, (sqlite3_stmt *, int))                                  \
    X(int, sqlite3_finalize, (sqlite3_stmt *))                                                 \
    X(const char *, sqlite3_errmsg, (sqlite3 *))                                               \
    X(int, sqlite3_busy_timeout, (sqlite3 *, int))                                             \
    X(void, sqlite3_free, (void *))

static struct {
#define X(ret, name, args) ret(*name) args;
    SQLITE_SYMBOLS(X)
#undef X
} sq;
static char *sq_error; /* why libsqlite3 is unusable, NULL when loaded */
static pthread_once_t sq_once = PTHREAD_ONCE_INIT;

static void sq_load(void)
{
    void *h = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        sq_error = tilec_strfmt("the tuning database needs SQLite (Debian: apt-get install "
                                "libsqlite3-0): %s", e ? e : "libsqlite3.so.0 not found");
        return;
    }
#define X(ret, name, args)                                                                     \
    *(void **)&sq.name = dlsym(h, #name);                                                      \
    if (!sq.name) {                                                                            \
        sq_error = tilec_strfmt("libsqlite3.so.0 lacks %s: too old a SQLite", #name);          \
        dlclose(h);                                                                            \
        return;                                                                                \
    }
    SQLITE_SYMBOLS(X)
#undef X
}

/* ---- the database ------------------------------------------------------------ */

struct tilec_tunedb {
    sqlite3 *h;
    char *path;
};

static const char *const COLS[] = {"source_hash", "entry", "fixed", "shape", "plugin",
                                   "plugin_version", "device", "arch"};
enum { NKEY = 8 };

static char **key_field(tilec_tunedb_row_t *r, int i)
{
    char **f[NKEY] = {&r->source_hash, &r->entry, &r->fixed, &r->shape, &r->plugin,
                      &r->plugin_version, &r->device, &r->arch};
    return f[i];
}

char *tilec_tunedb_default_path(void)
{
    const char *v = secure_getenv("TILEC_TUNE_DB");
    const char *x = secure_getenv("XDG_CACHE_HOME");
    const char *home = secure_getenv("HOME");
    if (v && *v) {
        return strdup(v);
    }
    if (x && *x) {
        return tilec_strfmt("%s/tilec/tune.db", x);
    }
    return home && *home ? tilec_strfmt("%s/.cache/tilec/tune.db", home) : NULL;
}

static tilec_status_t db_fail(tilec_tunedb_t *db, char **msg, tilec_status_t st, const char *what)
{
    *msg = tilec_strfmt("tuning database %s: %s: %s", db->path, what, sq.sqlite3_errmsg(db->h));
    return st;
}

static int exec(tilec_tunedb_t *db, const char *sql)
{
    return sq.sqlite3_exec(db->h, sql, NULL, NULL, NULL);
}

/* The schema check: 1 ours, 0 an empty file, -1 foreign or unreadable.
 * tries: how often to look again when another process created the tables
 * between the two queries (its first open of a new file, concurrent with
 * ours: the first query saw no tilec_meta, the second sees its tables). */
static int schema_state_try(tilec_tunedb_t *db, char **msg, int tries)
{
    sqlite3_stmt *st = NULL;
    int rc = sq.sqlite3_prepare_v2(db->h, "SELECT value FROM tilec_meta WHERE key = 'format'", -1,
                                   &st, NULL);
    if (rc == SQ_OK) {
        int ours = -1;
        if (sq.sqlite3_step(st) == SQ_ROW) {
            const char *v = (const char *)sq.sqlite3_column_text(st, 0);
            if (v && !strcmp(v, TUNEDB_FORMAT)) {
                ours = 1;
            } else {
                *msg = tilec_strfmt("tuning database %s has format '%s'; this tilec reads '%s'",
                                    db->path, v ? v : "", TUNEDB_FORMAT);
            }
        } else {
            *msg = tilec_strfmt("tuning database %s has no format record", db->path);
        }
        sq.sqlite3_finalize(st);
        return ours;
    }
    if (rc == SQ_NOTADB) {
        *msg = tilec_strfmt("%s is not a tuning database (not an SQLite file, or corrupt): %s",
                            db->path, sq.sqlite3_errmsg(db->h));
        return -1;
    }
    /* no tilec_meta: empty (a new file) or someone else's database; one
     * query, so one snapshot, counts both */
    rc = sq.sqlite3_prepare_v2(db->h,
                               "SELECT count(*), coalesce(sum(name = 'tilec_meta'), 0) FROM sqlite_master",
                               -1, &st, NULL);
    if (rc != SQ_OK || sq.sqlite3_step(st) != SQ_ROW) {
        *msg = tilec_strfmt("%s is not a tuning database (not an SQLite file, or corrupt): %s",
                            db->path, sq.sqlite3_errmsg(db->h));
        sq.sqlite3_finalize(st);
        return -1;
    }
    long long n = sq.sqlite3_column_int64(st, 0), meta = sq.sqlite3_column_int64(st, 1);
    sq.sqlite3_finalize(st);
    if (meta > 0 && tries > 0) {
        return schema_state_try(db, msg, tries - 1);
    }
    if (n != 0) {
        *msg = tilec_strfmt("%s is an SQLite database but not a tilec tuning database (no "
                            "tilec_meta table); leaving it alone", db->path);
        return -1;
    }
    return 0;
}

static int schema_state(tilec_tunedb_t *db, char **msg)
{
    return schema_state_try(db, msg, 3);
}

static int create_schema(tilec_tunedb_t *db)
{
    return exec(db, "BEGIN IMMEDIATE;"
                    "CREATE TABLE IF NOT EXISTS tilec_meta(key TEXT PRIMARY KEY, value TEXT);"
                    "INSERT OR IGNORE INTO tilec_meta VALUES('format', '" TUNEDB_FORMAT "');"
                    "CREATE TABLE IF NOT EXISTS tuned("
                    " source_hash TEXT NOT NULL, entry TEXT NOT NULL, fixed TEXT NOT NULL,"
                    " shape TEXT NOT NULL, plugin TEXT NOT NULL, plugin_version TEXT NOT NULL,"
                    " device TEXT NOT NULL, arch TEXT NOT NULL, config TEXT NOT NULL,"
                    " time_ms REAL, default_ms REAL, candidates INTEGER, file TEXT, tuned_at TEXT,"
                    " PRIMARY KEY(source_hash, entry, fixed, shape, plugin, plugin_version, device,"
                    " arch));"
                    "COMMIT;");
}

tilec_status_t tilec_tunedb_open(const char *path, int writable, tilec_tunedb_t **out, char **msg)
{
    tilec_tunedb_t *db;
    char *p;
    int state;
    *out = NULL;
    *msg = NULL;
    pthread_once(&sq_once, sq_load);
    if (sq_error) {
        *msg = strdup(sq_error);
        return TILEC_E_UNAVAILABLE;
    }
    p = path ? strdup(path) : tilec_tunedb_default_path();
    if (!p) {
        *msg = strdup("no tuning database: set TILEC_TUNE_DB (neither XDG_CACHE_HOME nor HOME is set)");
        return TILEC_E_IO;
    }
    if (!writable && access(p, F_OK) != 0) {
        *msg = tilec_strfmt("no tuning database at %s", p);
        free(p);
        return TILEC_E_IO;
    }
    if (writable) {
        char *slash = strrchr(p, '/');
        if (slash && slash != p) {
            *slash = '\0';
            if (tilec_mkdir_p(p, 0700) != 0) {
                int e = errno;
                *slash = '/';
                *msg = tilec_strfmt("cannot create the directory of %s: %s", p, strerror(e));
                free(p);
                return TILEC_E_IO;
            }
            *slash = '/';
        }
    }
    db = calloc(1, sizeof *db);
    if (!db) {
        free(p);
        return TILEC_E_NOMEM;
    }
    db->path = p;
    if (sq.sqlite3_open_v2(p, &db->h, writable ? SQ_OPEN_READWRITE | SQ_OPEN_CREATE : SQ_OPEN_READONLY,
                           NULL) != SQ_OK) {
        *msg = tilec_strfmt("cannot open tuning database %s: %s", p,
                            db->h ? sq.sqlite3_errmsg(db->h) : "out of memory");
        tilec_tunedb_close(db);
        return TILEC_E_IO;
    }
    sq.sqlite3_busy_timeout(db->h, TUNEDB_BUSY_MS);
    state = schema_state(db, msg);
    if (state == 0 && writable) {
        if (create_schema(db) != SQ_OK) {
            tilec_status_t st = db_fail(db, msg, TILEC_E_IO, "cannot create the tables");
            exec(db, "ROLLBACK");
            tilec_tunedb_close(db);
            return st;
        }
        state = schema_state(db, msg);
    } else if (state == 0) {
        *msg = tilec_strfmt("tuning database %s is empty", p);
        state = -1;
    }
    if (state < 0) {
        tilec_tunedb_close(db);
        return TILEC_E_IO;
    }
    tilec_log("compile", "tuning database %s opened%s", p, writable ? "" : " read-only");
    *out = db;
    return TILEC_OK;
}

const char *tilec_tunedb_path(const tilec_tunedb_t *db)
{
    return db->path;
}

void tilec_tunedb_close(tilec_tunedb_t *db)
{
    if (!db) {
        return;
    }
    if (db->h) {
        sq.sqlite3_close_v2(db->h);
    }
    free(db->path);
    free(db);
}

tilec_status_t tilec_tunedb_put(tilec_tunedb_t *db, const tilec_tunedb_row_t *row, char **msg)
{
    static const char sql[] =
        "INSERT OR REPLACE INTO tuned(source_hash, entry, fixed, shape, plugin, plugin_version,"
        " device, arch, config, time_ms, default_ms, candidates, file, tuned_at)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
    sqlite3_stmt *st = NULL;
    tilec_tunedb_row_t r = *row;
    int rc;
    *msg = NULL;
    if (exec(db, "BEGIN IMMEDIATE") != SQ_OK) {
        return db_fail(db, msg, TILEC_E_IO, "cannot start a transaction");
    }
    if (sq.sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQ_OK) {
        tilec_status_t s = db_fail(db, msg, TILEC_E_IO, "cannot write");
        exec(db, "ROLLBACK");
        return s;
    }
    for (int i = 0; i < NKEY; i++) {
        const char *v = *key_field(&r, i);
        sq.sqlite3_bind_text(st, i + 1, v ? v : "", -1, SQ_TRANSIENT);
    }
    sq.sqlite3_bind_text(st, 9, r.config ? r.config : "", -1, SQ_TRANSIENT);
    sq.sqlite3_bind_double(st, 10, r.time_ms);
    sq.sqlite3_bind_double(st, 11, r.default_ms);
    sq.sqlite3_bind_int64(st, 12, r.candidates);
    sq.sqlite3_bind_text(st, 13, r.file ? r.file : "", -1, SQ_TRANSIENT);
    sq.sqlite3_bind_text(st, 14, r.tuned_at ? r.tuned_at : "", -1, SQ_TRANSIENT);
    rc = sq.sqlite3_step(st);
    sq.sqlite3_finalize(st);
    if (rc != SQ_DONE) {
        tilec_status_t s = db_fail(db, msg, TILEC_E_IO, "cannot write");
        exec(db, "ROLLBACK");
        return s;
    }
    if (exec(db, "COMMIT") != SQ_OK) {
        tilec_status_t s = db_fail(db, msg, TILEC_E_IO, "cannot commit");
        exec(db, "ROLLBACK");
        return s;
    }
    return TILEC_OK;
}

static char *col_dup(sqlite3_stmt *st, int i)
{
    const char *v = (const char *)sq.sqlite3_column_text(st, i);
    return strdup(v ? v : "");
}

tilec_status_t tilec_tunedb_query(tilec_tunedb_t *db, const tilec_tunedb_row_t *want,
                                  tilec_tunedb_row_t **rows, int *n, char **msg)
{
    char sql[1024];
    size_t len;
    sqlite3_stmt *st = NULL;
    tilec_tunedb_row_t w;
    int nb = 0, cap = 0, rc;
    tilec_tunedb_row_t *out = NULL;
    *rows = NULL;
    *n = 0;
    *msg = NULL;
    memset(&w, 0, sizeof w);
    if (want) {
        w = *want;
    }
    len = (size_t)snprintf(sql, sizeof sql,
                           "SELECT source_hash, entry, fixed, shape, plugin, plugin_version, device,"
                           " arch, config, time_ms, default_ms, candidates, file, tuned_at FROM tuned"
                           " WHERE 1");
    for (int i = 0; i < NKEY; i++) {
        if (*key_field(&w, i)) {
            len += (size_t)snprintf(sql + len, sizeof sql - len, " AND %s = ?%d", COLS[i], ++nb);
        }
    }
    snprintf(sql + len, sizeof sql - len,
             " ORDER BY source_hash, entry, fixed, shape, plugin, plugin_version, device, arch");
    if (sq.sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQ_OK) {
        return db_fail(db, msg, TILEC_E_IO, "cannot read");
    }
    nb = 0;
    for (int i = 0; i < NKEY; i++) {
        if (*key_field(&w, i)) {
            sq.sqlite3_bind_text(st, ++nb, *key_field(&w, i), -1, SQ_TRANSIENT);
        }
    }
    while ((rc = sq.sqlite3_step(st)) == SQ_ROW) {
        tilec_tunedb_row_t *r;
        if (*n == cap) {
            int c = cap ? 2 * cap : 8;
            tilec_tunedb_row_t *g = realloc(out, sizeof *out * (size_t)c);
            if (!g) {
                rc = -1;
                break;
            }
            out = g;
            cap = c;
        }
        r = &out[(*n)++];
        memset(r, 0, sizeof *r);
        for (int i = 0; i < NKEY; i++) {
            *key_field(r, i) = col_dup(st, i);
        }
        r->config = col_dup(st, 8);
        r->time_ms = sq.sqlite3_column_double(st, 9);
        r->default_ms = sq.sqlite3_column_double(st, 10);
        r->candidates = sq.sqlite3_column_int64(st, 11);
        r->file = col_dup(st, 12);
        r->tuned_at = col_dup(st, 13);
    }
    if (rc != SQ_DONE) {
        tilec_status_t s = rc == -1 ? (*msg = strdup("out of memory"), TILEC_E_NOMEM)
                                    : db_fail(db, msg, TILEC_E_IO, "cannot read");
        sq.sqlite3_finalize(st);
        tilec_tunedb_rows_free(out, *n);
        *n = 0;
        return s;
    }
    sq.sqlite3_finalize(st);
    *rows = out;
    return TILEC_OK;
}

void tilec_tunedb_rows_free(tilec_tunedb_row_t *rows, int n)
{
    for (int i = 0; rows && i < n; i++) {
        for (int k = 0; k < NKEY; k++) {
            free(*key_field(&rows[i], k));
        }
        free(rows[i].config);
        free(rows[i].file);
        free(rows[i].tuned_at);
    }
    free(rows);
}
