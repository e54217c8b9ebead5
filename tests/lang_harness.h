/*
 * tests/lang_harness.h — the harness of the tests/lang/ programs' hand-checked
 * tests (test_language.c, test_language_threads.c): load a program through
 * the public API, fill its tensors with known data, run it in the reference
 * interpreter and on the CPU backend, check that the two agree, and hand the
 * interpreter's results to the test.  Run from the repository root.
 */
#ifndef TILEC_TESTS_LANG_HARNESS_H
#define TILEC_TESTS_LANG_HARNESS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"

#define MAXP 16

typedef struct run {
    int n;                        /* tensor parameters */
    tilec_elem_t elem[MAXP];
    int ndim[MAXP];
    int64_t shape[MAXP][8];
    int64_t count[MAXP];
    size_t bytes[MAXP];
    void *ref[MAXP];              /* after the interpreter */
    void *dev[MAXP];              /* after the CPU backend */
} run_t;

/* Fills parameter i (count elements of its type) before the launch. */
typedef void (*fill_fn)(int i, void *data, int64_t count, tilec_elem_t e);

/* Bits of one element: the 4-bit dtypes are packed two per byte. */
static __attribute__((unused)) int elem_bits(tilec_elem_t e)
{
    switch (e) {
    case TILEC_ELEM_INT4: case TILEC_ELEM_UINT4: case TILEC_ELEM_FLOAT4_E2M1FN: return 4;
    case TILEC_ELEM_BOOL: case TILEC_ELEM_INT8: case TILEC_ELEM_UINT8: return 8;
    case TILEC_ELEM_FLOAT8_E4M3FN: case TILEC_ELEM_FLOAT8_E5M2: return 8;
    case TILEC_ELEM_INT16: case TILEC_ELEM_UINT16: case TILEC_ELEM_FLOAT16: case TILEC_ELEM_BFLOAT16: return 16;
    case TILEC_ELEM_INT32: case TILEC_ELEM_UINT32: case TILEC_ELEM_FLOAT32: return 32;
    default: return 64;
    }
}

/* Bytes of one element (a 4-bit element's byte holds two) */
static __attribute__((unused)) size_t elem_size(tilec_elem_t e)
{
    return elem_bits(e) < 8 ? 1 : (size_t)elem_bits(e) / 8;
}

/* Bytes of a tensor of count elements */
static __attribute__((unused)) size_t elems_bytes(tilec_elem_t e, int64_t count)
{
    return ((size_t)count * (size_t)elem_bits(e) + 7) / 8;
}

/* Load `path`, fill every tensor with fill(), run the interpreter and the
 * CPU backend on identical copies, and require that they agree (exactly
 * for integers, within 1e-5 relative for floats). */
static __attribute__((unused)) void run_entry(run_t *r, const char *path, const char *entry, const tilec_define_kv_t *defs, int ndefs,
                      fill_fn fill)
{
    tilec_context_t *ctx = NULL;
    tilec_program_t *p = NULL;
    tilec_executable_t *exe = NULL;
    tilec_buffer_t *bufs[MAXP];
    int64_t syms[8];
    int i, nsyms;

    setenv("TILEC_CACHE", "0", 1);
    memset(r, 0, sizeof *r);
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK, "%s", ctx ? tilec_context_message(ctx) : "");
    cr_assert_eq(tilec_program_load_file(ctx, path, defs, ndefs, entry, &p), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    r->n = tilec_program_num_params(p);
    cr_assert(r->n > 0 && r->n <= MAXP);
    nsyms = tilec_program_num_syms(p);
    cr_assert(nsyms <= 8);
    for (i = 0; i < nsyms; i++) {
        const char *name;
        cr_assert_eq(tilec_program_sym(p, i, &name, &syms[i]), TILEC_OK);
        cr_assert(syms[i] >= 0, "symbol %s needs a -D value", name);
    }
    for (i = 0; i < r->n; i++) {
        const char *name;
        int d;
        cr_assert_eq(tilec_program_param(p, i, &name, &r->elem[i], &r->ndim[i], r->shape[i]), TILEC_OK);
        r->count[i] = 1;
        for (d = 0; d < r->ndim[i]; d++) r->count[i] *= r->shape[i][d];
        r->bytes[i] = elems_bytes(r->elem[i], r->count[i]);
        r->ref[i] = calloc(1, r->bytes[i]);
        r->dev[i] = calloc(1, r->bytes[i]);
        cr_assert(r->ref[i] && r->dev[i]);
        if (fill) fill(i, r->ref[i], r->count[i], r->elem[i]);
        memcpy(r->dev[i], r->ref[i], r->bytes[i]);
    }
    cr_assert_eq(tilec_program_interpret(ctx, p, r->ref, nsyms ? syms : NULL), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_assert_eq(tilec_program_compile(ctx, p, &exe), TILEC_OK, "%s", tilec_context_message(ctx));
    for (i = 0; i < r->n; i++) {
        cr_assert_eq(tilec_buffer_create(ctx, r->elem[i], r->ndim[i], r->shape[i], &bufs[i]), TILEC_OK, "%s",
                     tilec_context_message(ctx));
        cr_assert_eq(tilec_buffer_write(bufs[i], r->dev[i], r->bytes[i]), TILEC_OK);
    }
    cr_assert_eq(tilec_launch(ctx, exe, bufs, r->n, NULL), TILEC_OK, "%s", tilec_context_message(ctx));
    for (i = 0; i < r->n; i++) {
        cr_assert_eq(tilec_buffer_read(bufs[i], r->dev[i], r->bytes[i]), TILEC_OK);
        tilec_buffer_free(bufs[i]);
    }
    tilec_executable_free(exe);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
    /* backend == interpreter */
    for (i = 0; i < r->n; i++) {
        int64_t k;
        if (r->elem[i] == TILEC_ELEM_FLOAT16 || r->elem[i] == TILEC_ELEM_BFLOAT16) {
            continue;
        }
        if (r->elem[i] != TILEC_ELEM_FLOAT32 && r->elem[i] != TILEC_ELEM_FLOAT64) {
            cr_assert(memcmp(r->ref[i], r->dev[i], r->bytes[i]) == 0, "%s: parameter %d differs", path, i);
            continue;
        }
        for (k = 0; k < r->count[i]; k++) {
            double a, b;
            if (r->elem[i] == TILEC_ELEM_FLOAT32) {
                a = ((float *)r->ref[i])[k];
                b = ((float *)r->dev[i])[k];
            } else {
                a = ((double *)r->ref[i])[k];
                b = ((double *)r->dev[i])[k];
            }
            cr_assert(a == b || fabs(a - b) <= 1e-5 * fmax(1.0, fabs(a)) || (isinf(a) && a == b) ||
                          (isnan(a) && isnan(b)),
                      "%s: parameter %d element %lld: interpreter %g, backend %g", path, i, (long long)k, a, b);
        }
    }
}

static __attribute__((unused)) void run_file(run_t *r, const char *path, const tilec_define_kv_t *defs, int ndefs, fill_fn fill)
{
    run_entry(r, path, NULL, defs, ndefs, fill);
}

static __attribute__((unused)) void run_free(run_t *r)
{
    int i;
    for (i = 0; i < r->n; i++) {
        free(r->ref[i]);
        free(r->dev[i]);
    }
}

/* Known inputs: element k of a float parameter is a small exact value that
 * depends on k and the parameter (not symmetric, with negatives); ints
 * likewise; outputs get the same pattern, so a missing write shows too. */
static __attribute__((unused)) double pattern(int i, int64_t k)
{
    return (double)((k * 7 + i * 3) % 11) * 0.25 - 1.25;
}

static __attribute__((unused)) void fill_pattern(int i, void *data, int64_t count, tilec_elem_t e)
{
    int64_t k;
    if (elem_bits(e) < 8) { /* packed: zero (the 4-bit programs bring their own fills) */
        memset(data, 0, elems_bytes(e, count));
        return;
    }
    for (k = 0; k < count; k++) {
        double v = pattern(i, k);
        switch (e) {
        case TILEC_ELEM_FLOAT32: ((float *)data)[k] = (float)v; break;
        case TILEC_ELEM_FLOAT64: ((double *)data)[k] = v; break;
        case TILEC_ELEM_INT32: ((int32_t *)data)[k] = (int32_t)((k * 13 + i * 5) % 41) - 20; break;
        case TILEC_ELEM_BOOL: ((uint8_t *)data)[k] = (uint8_t)(k % 3 == 0); break;
        default: memset((char *)data + k * (int64_t)elem_size(e), 0, elem_size(e)); break;
        }
    }
}

static __attribute__((unused)) void fill_zero(int i, void *data, int64_t count, tilec_elem_t e)
{
    (void)i; (void)data; (void)count; (void)e; /* calloc'd already */
}

/* Python's floor division and modulo on ints. */
static __attribute__((unused)) int64_t py_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static __attribute__((unused)) int64_t py_mod(int64_t a, int64_t b)
{
    return a - py_floordiv(a, b) * b;
}

#define F(r, p) ((float *)(r).ref[p])
#define I32(r, p) ((int32_t *)(r).ref[p])
#define EXPECT_NEAR(got, want, what, ...)                                                                 \
    cr_expect(fabs((double)(got) - (double)(want)) <= 1e-5 * fmax(1.0, fabs((double)(want))),              \
              what ": got %.9g, want %.9g", __VA_ARGS__, (double)(got), (double)(want))

#endif
