/*
 * tools/check.c — seeded inputs and result comparison for `tilec run`
 * (see check.h for the rules, which come from DESIGN.md §3).  The generator
 * is splitmix64: tiny, fast, and the same stream on every platform, so a
 * seed names the same inputs for every backend and for the interpreter.
 */
#include "check.h"

#include <math.h>
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

static int64_t rng_int(check_rng_t *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

void check_fill(check_rng_t *r, int dtype, void *data, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch ((tilec_dtype_t)dtype) {
        case TILEC_FLOAT16: ((uint16_t *)data)[i] = tilec_f64_to_f16(rng_unit(r)); break;
        case TILEC_BFLOAT16: ((uint16_t *)data)[i] = tilec_f64_to_bf16(rng_unit(r)); break;
        case TILEC_FLOAT32: ((float *)data)[i] = (float)rng_unit(r); break;
        case TILEC_FLOAT64: ((double *)data)[i] = rng_unit(r); break;
        case TILEC_BOOL: ((uint8_t *)data)[i] = (uint8_t)rng_int(r, 0, 1); break;
        case TILEC_INT8: ((int8_t *)data)[i] = (int8_t)rng_int(r, -64, 64); break;
        case TILEC_INT16: ((int16_t *)data)[i] = (int16_t)rng_int(r, -64, 64); break;
        case TILEC_INT32: ((int32_t *)data)[i] = (int32_t)rng_int(r, -64, 64); break;
        case TILEC_INT64: ((int64_t *)data)[i] = rng_int(r, -64, 64); break;
        case TILEC_UINT8: ((uint8_t *)data)[i] = (uint8_t)rng_int(r, 0, 64); break;
        case TILEC_UINT16: ((uint16_t *)data)[i] = (uint16_t)rng_int(r, 0, 64); break;
        case TILEC_UINT32: ((uint32_t *)data)[i] = (uint32_t)rng_int(r, 0, 64); break;
        case TILEC_UINT64: ((uint64_t *)data)[i] = (uint64_t)rng_int(r, 0, 64); break;
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
    case TILEC_BOOL: return ((const uint8_t *)p)[i] != 0;
    case TILEC_INT8: return ((const int8_t *)p)[i];
    case TILEC_INT16: return ((const int16_t *)p)[i];
    case TILEC_INT32: return ((const int32_t *)p)[i];
    case TILEC_INT64: return (double)((const int64_t *)p)[i];
    case TILEC_UINT8: return ((const uint8_t *)p)[i];
    case TILEC_UINT16: return ((const uint16_t *)p)[i];
    case TILEC_UINT32: return ((const uint32_t *)p)[i];
    case TILEC_UINT64: return (double)((const uint64_t *)p)[i];
    default: return 0.0;
    }
}

void check_compare(int dtype, const void *out, const void *ref, size_t n, check_stats_t *s)
{
    size_t esize = tilec_dtype_size((tilec_dtype_t)dtype);
    double diff2 = 0.0, ref2 = 0.0;
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < n; i++) {
        double o = elem(dtype, out, i), r = elem(dtype, ref, i);
        if (isnan(o) || isnan(r)) {
            /* No NaN passes, even where the reference has one too. */
            s->has_nan |= isnan(o);
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
        if (memcmp((const char *)out + i * esize, (const char *)ref + i * esize, esize) != 0) {
            s->mismatches++;
        }
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
