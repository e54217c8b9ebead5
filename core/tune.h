/*
 * core/tune.h — what the tuner (tune.c), the lookup (tune_lookup.c) and
 * the bundles (bundle.c) share: the text form of a config or key part,
 * and the device key of a context.
 *
 * A config, a set of fixed defines or a shape bucket is written as
 * "NAME=VALUE NAME=VALUE" sorted by name (the -D text of the values), so
 * equal sets give equal keys whatever order the user typed them in.
 */
#ifndef TILEC_CORE_TUNE_H
#define TILEC_CORE_TUNE_H

#include "tilec/tilec.h"
#include "tunedb.h"

/* Sorted "NAME=VALUE ..." of n pairs, skipping those whose name is in
 * skip (a "NAME=... NAME=..." text, or NULL); malloc'd, NULL on OOM. */
char *tilec_tune_kv_text(const tilec_define_kv_t *kv, int n, const char *skip);
/* Splits such a text into pairs (malloc'd array of malloc'd strings; free
 * with tilec_tune_kv_free).  -1 on OOM or a word without '='. */
int tilec_tune_kv_parse(const char *text, tilec_define_kv_t **kv, int *n);
void tilec_tune_kv_free(tilec_define_kv_t *kv, int n);
/* Whether NAME appears in such a text. */
int tilec_tune_kv_has(const char *text, const char *name);

/* Shuffles order[first..n) in place, the same way for the same seed: a
 * Fisher-Yates shuffle on check.c's seeded stream (the tuner's candidate
 * order after the defaults, docs/tuning.md). */
void tilec_tune_shuffle(uint64_t seed, int *order, int n, int first);
/* The row of rows[0..n) that matches program p best (docs/tuning.md,
 * "Keys"; the rows are already those of p's source, entry and device),
 * or -1; *nearest: not its exact shape. */
int tilec_tune_best_row(const tilec_program_t *p, const tilec_tunedb_row_t *rows, int n, int *nearest);
/* A tuned config of row r that came from source (a database or bundle). */
tilec_tuned_t *tilec_tune_tuned_new(const tilec_tunedb_row_t *r, int nearest, const char *source);

/* The device key of a context with a backend: plugin name and version,
 * device name and arch (its TILEC_PROP_ARCH, "" when not reported). */
typedef struct tilec_tune_devkey {
    char plugin[64], version[64], device[160], arch[64];
} tilec_tune_devkey_t;
void tilec_tune_devkey_of(const tilec_context_t *ctx, tilec_tune_devkey_t *k);

/* A context without a backend: the tuner loads programs and runs the
 * interpreter with it, and never opens a device in its own process. */
tilec_context_t *tilec_tune_bare_context(void);

#endif
