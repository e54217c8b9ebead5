/*
 * tools/check.h — seeded inputs and result comparison for `tilec run`.
 *
 * DESIGN.md §3 fixes both: floats uniform in [-1, 1] (rounded to the
 * tensor's dtype), integers uniform in [-64, 64] ([0, 64] when unsigned),
 * one stream from --seed shared by every tensor in parameter order; and the
 * tolerance classes: relative Frobenius error at most 1e-2 when any operand
 * is a 16-bit float, 1e-4 otherwise, exact for integers, no NaN passes.
 */
#ifndef TILEC_TOOLS_CHECK_H
#define TILEC_TOOLS_CHECK_H

#include <stddef.h>
#include <stdint.h>

typedef struct check_rng { uint64_t state; } check_rng_t;

void check_rng_seed(check_rng_t *r, uint64_t seed);
/* Fill n elements of dtype (a tilec_dtype_t value) with seeded random data. */
void check_fill(check_rng_t *r, int dtype, void *data, size_t n);

typedef struct check_stats {
    double max_abs;      /* max |out - ref| */
    double max_rel;      /* max |out - ref| / max(|ref|, tiny) */
    double rel_fro;      /* ||out - ref|| / ||ref|| (absolute norm if ||ref|| = 0) */
    size_t mismatches;   /* elements that differ at all */
    int has_nan;         /* out has a NaN (never passes) */
} check_stats_t;

/* Compare n elements of dtype (one tensor). */
void check_compare(int dtype, const void *out, const void *ref, size_t n, check_stats_t *s);

#endif
