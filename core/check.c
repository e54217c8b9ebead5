/*
 * core/check.c — seeded inputs, the reference run and result comparison
 * for `tilec run --check`, `tilec conform` and the tuner's candidate
 * validation (core/tune.c) (see check.h for the rules,
 * which docs/cli.md fixes).  The generator
 * is splitmix64: tiny, fast, and the same stream on every platform, so a
 * seed names the same inputs for every backend and for the interpreter.
 */
#include "check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/ir.h"

void check_rng_seed(check_rng_t *r, uint64_t seed)
{
    r->state = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
}

static uint64_t rng_next(check_rng_t *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1]. */
static double rng_unit(check_rng_t *r)
{
    return (double)(rng_next(r) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

int64_t check_rng_int(check_rng_t *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* Element i of a packed 4-bit tensor: its code 0..15 (the even element in
 * the low nibble), and the same nibble set. */
static unsigned nib_get(const void *p, size_t i)
{
    return (((const uint8_t *)p)[i / 2] >> (4 * (i % 2))) & 15u;
}

static void nib_set(void *p, size_t i, unsigned v)
{
    uint8_t *b = (uint8_t *)p + i / 2;
    unsigned sh = 4 * (unsigned)(i % 2);
    *b = (uint8_t)((*b & ~(15u << sh)) | (v & 15u) << sh);
}

void check_fill(check_rng_t *r, int dtype, void *data, size_t n)
{
    if (tilec_dtype_is_4bit((tilec_dtype_t)dtype)) {
        /* int4 over its whole range, uint4 too, float4_e2m1fn from [-6, 6] */
        memset(data, 0, tilec_dtype_tensor_bytes((tilec_dtype_t)dtype, n));
        for (size_t i = 0; i < n; i++) {
            unsigned v = dtype == TILEC_FLOAT4_E2M1FN ? tilec_f64_to_f4e2m1fn(6.0 * rng_unit(r))
                                                      : (unsigned)check_rng_int(r, 0, 15);
            nib_set(data, i, v);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        switch ((tilec_dtype_t)dtype) {
        case TILEC_FLOAT16: ((uint16_t *)data)[i] = tilec_f64_to_f16(rng_unit(r)); break;
        case TILEC_BFLOAT16: ((uint16_t *)data)[i] = tilec_f64_to_bf16(rng_unit(r)); break;
        case TILEC_FLOAT32: ((float *)data)[i] = (float)rng_unit(r); break;
        case TILEC_FLOAT64: ((double *)data)[i] = rng_unit(r); break;
        case TILEC_FLOAT8_E4M3FN: ((uint8_t *)data)[i] = tilec_f64_to_f8e4m3fn(rng_unit(r)); break;
        case TILEC_FLOAT8_E5M2: ((uint8_t *)data)[i] = tilec_f64_to_f8e5m2(rng_unit(r)); break;
        case TILEC_BOOL: ((uint8_t *)data)[i] = (uint8_t)check_rng_int(r, 0, 1); break;
        case TILEC_INT8: ((int8_t *)data)[i] = (int8_t)check_rng_int(r, -64, 64); break;
        case TILEC_INT16: ((int16_t *)data)[i] = (int16_t)check_rng_int(r, -64, 64); break;
        case TILEC_INT32: ((int32_t *)data)[i] = (int32_t)check_rng_int(r, -64, 64); break;
        case TILEC_INT64: ((int64_t *)data)[i] = check_rng_int(r, -64, 64); break;
        case TILEC_UINT8: ((uint8_t *)data)[i] = (uint8_t)check_rng_int(r, 0, 64); break;
        case TILEC_UINT16: ((uint16_t *)data)[i] = (uint16_t)check_rng_int(r, 0, 64); break;
        case TILEC_UINT32: ((uint32_t *)data)[i] = (uint32_t)check_rng_int(r, 0, 64); break;
        case TILEC_UINT64: ((uint64_t *)data)[i] = (uint64_t)check_rng_int(r, 0, 64); break;
        default: break;
        }
    }
}

/* Element i of a tensor as a double (exact for every integer we generate
 * and for every float dtype). */
static double elem(int dtype, const void *p, size_t i)
{
    switch ((tilec_dtype_t)dtype) {
    case TILEC_FLOAT16: return tilec_f16_to_f32(((const uint16_t *)p)[i]);
    case TILEC_BFLOAT16: return tilec_bf16_to_f32(((const uint16_t *)p)[i]);
    case TILEC_FLOAT32: return ((const float *)p)[i];
    case TILEC_FLOAT64: return ((const double *)p)[i];
    case TILEC_FLOAT8_E4M3FN: return tilec_f8e4m3fn_to_f32(((const uint8_t *)p)[i]);
    case TILEC_FLOAT8_E5M2: return tilec_f8e5m2_to_f32(((const uint8_t *)p)[i]);
    case TILEC_BOOL: return ((const uint8_t *)p)[i] != 0;
    case TILEC_INT8: return ((const int8_t *)p)[i];
    case TILEC_INT16: return ((const int16_t *)p)[i];
    case TILEC_INT32: return ((const int32_t *)p)[i];
    case TILEC_INT64: return (double)((const int64_t *)p)[i];
    case TILEC_UINT8: return ((const uint8_t *)p)[i];
    case TILEC_UINT16: return ((const uint16_t *)p)[i];
    case TILEC_UINT32: return ((const uint32_t *)p)[i];
    case TILEC_UINT64: return (double)((const uint64_t *)p)[i];
    case TILEC_INT4: return (double)(((int)nib_get(p, i) ^ 8) - 8);
    case TILEC_UINT4: return nib_get(p, i);
    case TILEC_FLOAT4_E2M1FN: return tilec_f4e2m1fn_to_f32((uint8_t)nib_get(p, i));
    default: return 0.0;
    }
}

/* Whether any of the n elements of p is a NaN, from the bits (a loop the
 * compiler vectorizes; integers have none). */
static int any_nan(int dtype, const void *p, size_t n)
{
    int nan = 0;
    switch ((tilec_dtype_t)dtype) {
    case TILEC_FLOAT16:
    case TILEC_BFLOAT16: {
        const uint16_t *q = p;
        uint16_t exp = dtype == TILEC_FLOAT16 ? 0x7c00 : 0x7f80, man = dtype == TILEC_FLOAT16 ? 0x03ff : 0x007f;
        for (size_t i = 0; i < n; i++) nan |= (q[i] & exp) == exp && (q[i] & man) != 0;
        break;
    }
    case TILEC_FLOAT32: {
        const uint32_t *q = p;
        for (size_t i = 0; i < n; i++) nan |= (q[i] & 0x7fffffffu) > 0x7f800000u;
        break;
    }
    case TILEC_FLOAT64: {
        const uint64_t *q = p;
        for (size_t i = 0; i < n; i++) nan |= (q[i] & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
        break;
    }
    case TILEC_FLOAT8_E4M3FN: {
        const uint8_t *q = p;
        for (size_t i = 0; i < n; i++) nan |= (q[i] & 0x7f) == 0x7f;
        break;
    }
    case TILEC_FLOAT8_E5M2: {
        const uint8_t *q = p;
        for (size_t i = 0; i < n; i++) nan |= (q[i] & 0x7c) == 0x7c && (q[i] & 0x03) != 0;
        break;
    }
    default:
        break;
    }
    return nan;
}

/* Element i of a and b (of dtype t) differ in their bits. */
static int bits_differ(tilec_dtype_t t, const void *a, const void *b, size_t i)
{
    size_t esize = tilec_dtype_size(t);
    if (tilec_dtype_is_4bit(t)) {
        return nib_get(a, i) != nib_get(b, i);
    }
    switch (esize) {
    case 1: return ((const uint8_t *)a)[i] != ((const uint8_t *)b)[i];
    case 2: return ((const uint16_t *)a)[i] != ((const uint16_t *)b)[i];
    case 4: return ((const uint32_t *)a)[i] != ((const uint32_t *)b)[i];
    case 8: return ((const uint64_t *)a)[i] != ((const uint64_t *)b)[i];
    default: return memcmp((const char *)a + i * esize, (const char *)b + i * esize, esize) != 0;
    }
}

void check_compare(int dtype, const void *out, const void *ref, size_t n, check_stats_t *s)
{
    double diff2 = 0.0, ref2 = 0.0;
    memset(s, 0, sizeof *s);
    /* Bit for bit the reference (every input the kernel leaves alone): no
     * error, and a NaN only where the reference has one (no NaN passes). */
    if (memcmp(out, ref, tilec_dtype_tensor_bytes((tilec_dtype_t)dtype, n)) == 0) {
        if (any_nan(dtype, ref, n)) {
            s->has_nan = 1;
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double o = elem(dtype, out, i), r = elem(dtype, ref, i);
        if (isnan(o) || isnan(r)) {
            /* No NaN passes, even where the reference has one too. */
            s->has_nan = 1;
            s->mismatches += !(isnan(o) && isnan(r));
            continue;
        }
        if (isinf(o) || isinf(r)) {
            if (o != r) {
                s->mismatches++;
                s->max_abs = INFINITY;
                s->max_rel = INFINITY;
                diff2 = INFINITY;
            }
            continue;
        }
        double d = fabs(o - r);
        s->mismatches += (size_t)bits_differ((tilec_dtype_t)dtype, out, ref, i);
        if (d > s->max_abs) {
            s->max_abs = d;
        }
        double rel = d / fmax(fabs(r), 1e-30);
        if (d > 0 && rel > s->max_rel) {
            s->max_rel = rel;
        }
        diff2 += d * d;
        ref2 += r * r;
    }
    s->rel_fro = ref2 > 0 ? sqrt(diff2) / sqrt(ref2) : sqrt(diff2);
}

/* ---- check sets ------------------------------------------------------------ */

int check_tol_from_name(const char *name)
{
    static const char *const names[] = {"auto", "fp16", "fp32", "exact"};
    for (int i = 0; i < 4; i++) {
        if (!strcmp(name, names[i])) {
            return i;
        }
    }
    return -1;
}

const char *check_tol_name(check_tol_t t)
{
    switch (t) {
    case CHECK_TOL_AUTO: return "auto";
    case CHECK_TOL_FP16: return "fp16";
    case CHECK_TOL_FP32: return "fp32";
    case CHECK_TOL_EXACT: return "exact";
    }
    return "?";
}

char *check_strfmt(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

void check_set_free(check_set_t *set)
{
    if (!set) {
        return;
    }
    for (int i = 0; set->t && i < set->n; i++) {
        if (!set->borrowed) {
            free(set->t[i].init);
            free(set->t[i].ref);
        }
        free(set->t[i].out);
    }
    free(set->t);
    free(set->syms);
    memset(set, 0, sizeof *set);
}

/* src holds the same tensors as set (dtype and shape, in order). */
static int same_tensors(const check_set_t *src, const check_set_t *set)
{
    if (!src || src->n != set->n) {
        return 0;
    }
    for (int i = 0; i < set->n; i++) {
        const check_tensor_t *a = &src->t[i], *b = &set->t[i];
        if (a->elem != b->elem || a->ndim != b->ndim || a->bytes != b->bytes ||
            memcmp(a->shape, b->shape, sizeof a->shape[0] * (size_t)a->ndim) != 0) {
            return 0;
        }
    }
    return 1;
}

check_rc_t check_set_make(const tilec_program_t *p, const char *file, uint64_t seed,
                          check_set_t *set, char **msg)
{
    return check_set_make_like(p, file, seed, NULL, set, msg);
}

check_rc_t check_set_make_like(const tilec_program_t *p, const char *file, uint64_t seed,
                               const check_set_t *src, check_set_t *set, char **msg)
{
    check_rng_t rng;
    memset(set, 0, sizeof *set);
    *msg = NULL;
    set->n = tilec_program_num_params(p);
    set->nsyms = tilec_program_num_syms(p);
    set->t = calloc((size_t)set->n + 1, sizeof *set->t);
    set->syms = calloc((size_t)set->nsyms + 1, sizeof *set->syms);
    if (!set->t || !set->syms) {
        check_set_free(set);
        return CHECK_E_NOMEM;
    }
    for (int k = 0; k < set->nsyms; k++) {
        const char *sname;
        tilec_program_sym(p, k, &sname, &set->syms[k]);
    }
    check_rng_seed(&rng, seed);
    for (int i = 0; i < set->n; i++) {
        check_tensor_t *t = &set->t[i];
        if (tilec_program_param(p, i, &t->name, &t->elem, &t->ndim, t->shape) != TILEC_OK) {
            check_set_free(set);
            return CHECK_E_NOMEM;
        }
        t->count = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (t->shape[d] < 0) {
                for (int k = 0; k < set->nsyms; k++) {
                    const char *sname;
                    int64_t v;
                    if (tilec_program_sym(p, k, &sname, &v) == TILEC_OK && v < 0) {
                        *msg = check_strfmt("%s: error: T.dynamic symbol '%s' has no value; pass -D %s=N "
                                      "to give tensor '%s' a size",
                                      file, sname, sname, t->name);
                        check_set_free(set);
                        return CHECK_E_UNBOUND;
                    }
                }
                *msg = check_strfmt("%s: error: tensor '%s' has an unbound dimension %d", file, t->name, d);
                check_set_free(set);
                return CHECK_E_UNBOUND;
            }
            /* A T.dynamic value can make the product overflow size_t:
             * refuse it rather than allocate a wrapped-around size. */
            if (__builtin_mul_overflow(t->count, (size_t)t->shape[d], &t->count)) {
                t->count = SIZE_MAX;
            }
        }
        if (t->count == SIZE_MAX ||
            __builtin_mul_overflow(t->count, tilec_dtype_size((tilec_dtype_t)t->elem), &t->bytes)) {
            *msg = check_strfmt("tensor '%s' is too large: its size overflows the address space", t->name);
            check_set_free(set);
            return CHECK_E_NOMEM;
        }
        t->bytes = tilec_dtype_tensor_bytes((tilec_dtype_t)t->elem, t->count); /* 4-bit: packed */
    }
    set->borrowed = same_tensors(src, set);
    for (int i = 0; i < set->n; i++) {
        check_tensor_t *t = &set->t[i];
        size_t alloc = t->bytes ? t->bytes : 1;
        t->out = malloc(alloc);
        if (set->borrowed) {
            t->init = src->t[i].init;
            t->ref = src->t[i].ref;
        } else {
            t->init = malloc(alloc);
            t->ref = malloc(alloc);
        }
        if (!t->init || !t->out || !t->ref) {
            *msg = check_strfmt("out of memory for tensor '%s' (%zu bytes)", t->name, t->bytes);
            check_set_free(set);
            return CHECK_E_NOMEM;
        }
    }
    for (int i = 0; i < set->n; i++) {
        check_tensor_t *t = &set->t[i];
        if (!set->borrowed) {
            check_fill(&rng, (int)t->elem, t->init, t->count);
            memcpy(t->ref, t->init, t->bytes);
            memcpy(t->out, t->init, t->bytes);
        }
    }
    return CHECK_OK;
}

tilec_status_t check_set_reference(tilec_context_t *ctx, const tilec_program_t *p, check_set_t *set)
{
    void **refs = calloc((size_t)set->n + 1, sizeof *refs);
    if (!refs) {
        return TILEC_E_NOMEM;
    }
    for (int i = 0; i < set->n; i++) {
        memcpy(set->t[i].ref, set->t[i].init, set->t[i].bytes);
        refs[i] = set->t[i].ref;
    }
    tilec_status_t s = tilec_program_interpret(ctx, p, refs, set->nsyms ? set->syms : NULL);
    free(refs);
    return s;
}

tilec_status_t check_set_reference_backend(tilec_context_t *rctx, const char *file,
                                           const tilec_define_kv_t *defs, int ndefs,
                                           const char *entry, check_set_t *set, char **msg)
{
    tilec_program_t *prog = NULL;
    tilec_executable_t *exe = NULL;
    tilec_buffer_t **bufs = calloc((size_t)set->n + 1, sizeof *bufs);
    tilec_status_t s = TILEC_E_NOMEM;
    *msg = NULL;
    if (!bufs) {
        goto out;
    }
    s = tilec_program_load_file(rctx, file, defs, ndefs, entry, &prog);
    if (s != TILEC_OK) {
        *msg = check_strfmt("%s", tilec_context_message(rctx));
        goto out;
    }
    /* The same file and defines give the same parameters; should the file
     * change in between, refuse rather than compare unlike tensors. */
    s = TILEC_E_INVALID;
    if (tilec_program_num_params(prog) != set->n) {
        *msg = check_strfmt("%s: the reference program has %d tensor parameters, not %d", file,
                            tilec_program_num_params(prog), set->n);
        goto out;
    }
    for (int i = 0; i < set->n; i++) {
        const check_tensor_t *t = &set->t[i];
        const char *name;
        tilec_elem_t elem;
        int ndim;
        int64_t shape[8];
        if (tilec_program_param(prog, i, &name, &elem, &ndim, shape) != TILEC_OK || elem != t->elem ||
            ndim != t->ndim || memcmp(shape, t->shape, (size_t)ndim * sizeof shape[0]) != 0) {
            *msg = check_strfmt("%s: tensor '%s' differs between the program and its reference run",
                                file, t->name);
            goto out;
        }
    }
    if ((s = tilec_program_compile(rctx, prog, &exe)) != TILEC_OK) {
        *msg = check_strfmt("%s", tilec_context_message(rctx));
        goto out;
    }
    for (int i = 0; i < set->n; i++) {
        const check_tensor_t *t = &set->t[i];
        if ((s = tilec_buffer_create(rctx, t->elem, t->ndim, t->shape, &bufs[i])) != TILEC_OK ||
            (s = tilec_buffer_write(bufs[i], t->init, t->bytes)) != TILEC_OK) {
            *msg = check_strfmt("%s", tilec_context_message(rctx));
            goto out;
        }
    }
    if ((s = tilec_launch(rctx, exe, bufs, set->n, NULL)) != TILEC_OK) {
        *msg = check_strfmt("%s", tilec_context_message(rctx));
        goto out;
    }
    for (int i = 0; i < set->n; i++) {
        if ((s = tilec_buffer_read(bufs[i], set->t[i].ref, set->t[i].bytes)) != TILEC_OK) {
            *msg = check_strfmt("%s", tilec_context_message(rctx));
            goto out;
        }
    }
out:
    for (int i = 0; bufs && i < set->n; i++) {
        tilec_buffer_free(bufs[i]);
    }
    free(bufs);
    tilec_executable_free(exe);
    tilec_program_free(prog);
    return s;
}

void check_set_judge(const check_set_t *set, check_tol_t tol, check_verdict_t *v)
{
    int any16 = 0;
    size_t dlen = 0;
    memset(v, 0, sizeof *v);
    v->worst_name = "";
    for (int i = 0; i < set->n; i++) {
        any16 |= set->t[i].elem == TILEC_ELEM_FLOAT16 || set->t[i].elem == TILEC_ELEM_BFLOAT16 ||
                 tilec_dtype_is_float8((tilec_dtype_t)set->t[i].elem);
    }
    v->tol = tol == CHECK_TOL_FP16 ? 1e-2 : tol == CHECK_TOL_FP32 ? 1e-4 : tol == CHECK_TOL_EXACT ? 0.0
             : any16 ? 1e-2 : 1e-4;
    v->ok = 1;
    v->detail = calloc(1, 1);
    for (int i = 0; i < set->n; i++) {
        const check_tensor_t *t = &set->t[i];
        check_stats_t s;
        check_compare((int)t->elem, t->out, t->ref, t->count, &s);
        int exact = !tilec_dtype_is_float((tilec_dtype_t)t->elem) || tol == CHECK_TOL_EXACT;
        int tensor_ok = !s.has_nan && (exact ? s.mismatches == 0 : s.rel_fro <= v->tol);
        if (!tensor_ok && v->detail) {
            char *line = check_strfmt("tensor '%s' differs from the reference: rel_fro_err=%.3e "
                                "max_abs_err=%.3e mismatches=%zu/%zu%s\n",
                                t->name, s.rel_fro, s.max_abs, s.mismatches, t->count,
                                s.has_nan ? " (NaN in the output or the reference)" : "");
            char *grown = line ? realloc(v->detail, dlen + strlen(line) + 1) : NULL;
            if (grown) {
                memcpy(grown + dlen, line, strlen(line) + 1);
                dlen += strlen(line);
                v->detail = grown;
            }
            free(line);
        }
        v->ok &= tensor_ok;
        if (s.rel_fro >= v->worst.rel_fro || s.has_nan) {
            v->worst_name = t->name;
        }
        v->worst.max_abs = fmax(v->worst.max_abs, s.max_abs);
        v->worst.max_rel = fmax(v->worst.max_rel, s.max_rel);
        v->worst.rel_fro = fmax(v->worst.rel_fro, s.rel_fro);
        v->worst.has_nan |= s.has_nan;
        v->worst.mismatches += s.mismatches;
    }
}
