/*
 * core/check.h — seeded inputs, the reference run and result comparison,
 * shared by `tilec run --check`, `tilec conform` and the tuner (one
 * implementation of the rules, so all judge a backend the same way).  It
 * is part of libtilec (the tuner uses it) and its object is linked into
 * the CLI too, where libtilec's hidden symbols are out of reach.
 *
 * docs/cli.md ("tilec run") fixes both: floats uniform in [-1, 1] (rounded to the
 * tensor's dtype), integers uniform in [-64, 64] ([0, 64] when unsigned),
 * one stream from --seed shared by every tensor in parameter order; and the
 * tolerance classes: relative Frobenius error at most 1e-2 when any operand
 * is a 16-bit float, 1e-4 otherwise, exact for integers, no NaN passes.
 */
#ifndef TILEC_CORE_CHECK_H
#define TILEC_CORE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/tilec.h"

typedef struct check_rng { uint64_t state; } check_rng_t;

void check_rng_seed(check_rng_t *r, uint64_t seed);
/* The next number of the stream, uniform in [lo, hi] (hi - lo < 2^63; the
 * modulo bias is below 2^-50 for the small ranges it serves). */
int64_t check_rng_int(check_rng_t *r, int64_t lo, int64_t hi);
/* Fill n elements of dtype (a tilec_dtype_t value) with seeded random data. */
void check_fill(check_rng_t *r, int dtype, void *data, size_t n);

typedef struct check_stats {
    double max_abs;      /* max |out - ref| */
    double max_rel;      /* max |out - ref| / max(|ref|, tiny) */
    double rel_fro;      /* ||out - ref|| / ||ref|| (absolute norm if ||ref|| = 0) */
    size_t mismatches;   /* elements that differ at all */
    int has_nan;         /* a NaN in out or ref (never passes) */
} check_stats_t;

/* Compare n elements of dtype (one tensor). */
void check_compare(int dtype, const void *out, const void *ref, size_t n, check_stats_t *s);

/* ---- one program's tensors: inputs, results, judgement -------------------
 * A check set holds one host tensor per kernel parameter (seeded inputs in
 * init, the backend's results in out, the interpreter's in ref) and the
 * T.dynamic symbol values in kernel order. */

typedef struct check_tensor {
    const char *name;    /* owned by the program */
    tilec_elem_t elem;
    int ndim;
    int64_t shape[8];
    size_t count, bytes;
    void *init, *out, *ref; /* malloc'd, bytes each (at least 1) */
} check_tensor_t;

typedef struct check_set {
    int n;
    check_tensor_t *t;   /* [n] */
    int nsyms;
    int64_t *syms;       /* [nsyms] */
} check_set_t;

/* Tolerance classes (docs/cli.md).  AUTO: 1e-2 when any tensor is a
 * 16-bit float, else 1e-4; integer tensors are always exact. */
typedef enum check_tol { CHECK_TOL_AUTO = 0, CHECK_TOL_FP16, CHECK_TOL_FP32, CHECK_TOL_EXACT } check_tol_t;
/* "auto" "fp16" "fp32" "exact" -> class; -1 when unknown. */
int check_tol_from_name(const char *name);
const char *check_tol_name(check_tol_t t);

typedef enum check_rc { CHECK_OK = 0, CHECK_E_UNBOUND = 1, CHECK_E_NOMEM = 2 } check_rc_t;

/* Builds the set for program p: shapes from its parameters, seeded inputs
 * (copied into out and ref too).  On failure *msg gets a malloc'd message
 * (file names the program in it) and the set is freed. */
check_rc_t check_set_make(const tilec_program_t *p, const char *file, uint64_t seed,
                          check_set_t *set, char **msg);
/* The same, with the inputs copied from src's init wherever a tensor of src
 * has the same dtype and shape (seeded as above otherwise): a set made from
 * the same seed without drawing every input again (the tuner makes one per
 * candidate, and drawing 8192x8192 tensors costs seconds). */
check_rc_t check_set_make_like(const tilec_program_t *p, const char *file, uint64_t seed,
                               const check_set_t *src, check_set_t *set, char **msg);
void check_set_free(check_set_t *set);
/* Runs the reference interpreter on ref (reset to init first). */
tilec_status_t check_set_reference(tilec_context_t *ctx, const tilec_program_t *p, check_set_t *set);
/* The reference from another backend instead (tilec run --reference):
 * loads FILE again in rctx with the same defines and entry, checks that
 * its parameters match the set's, compiles it, uploads every init, launches
 * once and reads every tensor back into ref.  For full-size problems, where
 * the interpreter is far too slow; rctx's backend should be a certified one
 * (e.g. cpu).  On failure *msg gets a malloc'd message (the context's, or
 * ours when the parameters differ; NULL when out of memory). */
tilec_status_t check_set_reference_backend(tilec_context_t *rctx, const char *file,
                                           const tilec_define_kv_t *defs, int ndefs,
                                           const char *entry, check_set_t *set, char **msg);

typedef struct check_verdict {
    int ok;
    double tol;            /* relative Frobenius bound applied to float tensors */
    check_stats_t worst;   /* maxima over tensors */
    const char *worst_name;
    char *detail;          /* malloc'd: one line per failing tensor ("" when ok); NULL on OOM */
} check_verdict_t;

/* Compares out against ref for every tensor under class tol. */
void check_set_judge(const check_set_t *set, check_tol_t tol, check_verdict_t *v);

/* printf into a new malloc'd string (caller frees); NULL when out of memory. */
char *check_strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
