/*
 * core/tune_space.h — the tuning space of `tilec tune`: value lists
 * ("NAME=V1,V2,..." from --space, --shapes or @autotune), their product,
 * and the default space when nothing names one (docs/tuning.md).
 */
#ifndef TILEC_CORE_TUNE_SPACE_H
#define TILEC_CORE_TUNE_SPACE_H

#include "tilec/tilec.h"

/* One value list "NAME=V1,V2,..." */
typedef struct tilec_tune_axis {
    char *name;
    int n;
    char **v;
} tilec_tune_axis_t;

/* Parses n specs into *out (always allocated, free with
 * tilec_tune_axes_free even on failure); -1 with *msg (malloc'd) on a
 * malformed spec or a name given twice (what names the source in it),
 * -1 with *msg NULL on OOM. */
int tilec_tune_axes_parse(const char *const *spec, int n, const char *what, tilec_tune_axis_t **out, char **msg);
void tilec_tune_axes_free(tilec_tune_axis_t *a, int n);
/* The count of combinations of the n axes, -1 above max. */
long long tilec_tune_axes_product(const tilec_tune_axis_t *a, int n, long long max);
/* Combination k's value of axis i: v[(k / stride_i) % n_i], the last
 * axis varying fastest. */
const char *tilec_tune_axes_value(const tilec_tune_axis_t *a, int n, long long k, int i);

/* The default space of program p: specs for its integer factory
 * parameters named block* or tile* (half, once and twice the default,
 * 8..512), and on a GPU num_stages (default -1..+1, 1..5) and threads
 * (half..twice, 32..max_threads or 1024); parameters fixed in defs stay
 * fixed.  Returns the count of specs in *out (owned strings, NULL-padded
 * array; *out is NULL on OOM). */
int tilec_tune_default_space(const tilec_program_t *p, const tilec_define_kv_t *defs, int ndefs, int gpu,
                             long long max_threads, char ***out);

#endif
