/*
 * core/tunedb.h — the tuning database (docs/tuning.md): one SQLite file of
 * tuned configs, keyed by everything that names a problem and a device.
 *
 * SQLite is Debian's libsqlite3, opened with dlopen("libsqlite3.so.0") on
 * first use through one X-macro symbol table (tunedb.c), so building tilec
 * still needs only a C compiler; without the library every call fails with
 * TILEC_E_UNAVAILABLE and says why.  Rows are strings and numbers only;
 * keys use the -D text of the values (docs/tuning.md, "Keys").
 */
#ifndef TILEC_CORE_TUNEDB_H
#define TILEC_CORE_TUNEDB_H

#include "tilec/tilec.h"

typedef struct tilec_tunedb tilec_tunedb_t;

/* One row.  All strings malloc'd (by query) or borrowed (by put). */
typedef struct tilec_tunedb_row {
    char *source_hash, *entry, *fixed, *shape, *plugin, *plugin_version, *device, *arch;
    char *config;            /* "block_M=64 block_N=32" */
    double time_ms;          /* median of the chosen config */
    double default_ms;       /* median of the defaults; < 0 when not timed */
    long long candidates;    /* how many were tried */
    char *file;              /* the program's file name when tuned (information only) */
    char *tuned_at;          /* UTC, ISO 8601 */
} tilec_tunedb_row_t;

/* path NULL: TILEC_TUNE_DB, else $XDG_CACHE_HOME/tilec/tune.db, else
 * ~/.cache/tilec/tune.db (malloc'd; NULL when none can be named). */
char *tilec_tunedb_default_path(void);
/* Opens (writable: creating it and its directory when missing) the
 * database.  A file that is not SQLite, or a SQLite file that is not a
 * tilec tuning database, is refused with a message; a read-only file opens
 * for lookups when writable is 0.  *msg (malloc'd) says why on failure. */
tilec_status_t tilec_tunedb_open(const char *path, int writable, tilec_tunedb_t **out, char **msg);
void tilec_tunedb_close(tilec_tunedb_t *db);
const char *tilec_tunedb_path(const tilec_tunedb_t *db);
/* Inserts or replaces the row with the same key, in one transaction. */
tilec_status_t tilec_tunedb_put(tilec_tunedb_t *db, const tilec_tunedb_row_t *row, char **msg);
/* Rows whose key fields equal those of want that are not NULL (want NULL:
 * every row), ordered by key. */
tilec_status_t tilec_tunedb_query(tilec_tunedb_t *db, const tilec_tunedb_row_t *want,
                                  tilec_tunedb_row_t **rows, int *n, char **msg);
void tilec_tunedb_rows_free(tilec_tunedb_row_t *rows, int n);

/* JSON export/import of whole tables (tunedb_json.c): an array of objects
 * with the row's fields.  Import puts every row (replacing equal keys). */
tilec_status_t tilec_tunedb_write_json(const char *path, const tilec_tunedb_row_t *rows, int n,
                                       char **msg);
tilec_status_t tilec_tunedb_read_json(const char *path, tilec_tunedb_row_t **rows, int *n,
                                      char **msg);
/* The same from text in memory (len bytes, no NUL needed); name is shown
 * in messages. */
tilec_status_t tilec_tunedb_parse_json(const char *name, const char *text, size_t len,
                                       tilec_tunedb_row_t **rows, int *n, char **msg);

#endif
