/*
 * core/tune_space.c — what `tilec tune` searches: value lists parsed from
 * --space, --shapes and @autotune, the product over them, and the default
 * space for a program that names none (docs/tuning.md).  The tuner
 * (tune.c) turns each combination into a candidate.
 */
#define TILEC_BUILDING_LIBRARY 1
#include "tune_space.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api_internal.h"
#include "loader.h"

static int starts_with_ci(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* "NAME=V1,V2,..." of the values in [lo, hi] among the default d's
 * neighbours (d/2, d, 2d; or d-1, d, d+1 when step is 1); NULL when only d
 * itself remains. */
static char *axis_around(const char *name, long long d, int step, long long lo, long long hi)
{
    long long v[3] = {step ? d - 1 : d / 2, d, step ? d + 1 : d * 2};
    char buf[160];
    int len = snprintf(buf, sizeof buf, "%s=", name), n = 0;
    for (int i = 0; i < 3 && len < (int)sizeof buf - 24; i++) {
        if (v[i] >= lo && v[i] <= hi && (step || i == 1 || d % 2 == 0)) {
            len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%lld", n++ ? "," : "", v[i]);
        }
    }
    return n > 1 ? strdup(buf) : NULL;
}

/* docs/tuning.md, "The default space"; tune_space.h says what it returns. */
int tilec_tune_default_space(const tilec_program_t *p, const tilec_define_kv_t *defs, int ndefs, int gpu,
                             long long max_threads, char ***out)
{
    int np = tilec_program_num_factory_params(p), n = 0;
    char **spec = calloc((size_t)np + 1, sizeof *spec);
    *out = spec;
    for (int i = 0; spec && i < np; i++) {
        const char *name, *dflt, *val;
        char *end;
        long long d;
        int fixed = 0;
        tilec_program_factory_param(p, i, &name, &dflt, &val);
        for (int k = 0; k < ndefs; k++) {
            fixed |= strcmp(defs[k].name, name) == 0;
        }
        if (fixed || !dflt || !*dflt) {
            continue;
        }
        errno = 0;
        d = strtoll(dflt, &end, 10);
        if (*end || errno || d <= 0) {
            continue;
        }
        if (starts_with_ci(name, "block") || starts_with_ci(name, "tile")) {
            spec[n] = axis_around(name, d, 0, 8, 512);
        } else if (gpu && (!strcmp(name, "num_stages") || !strcmp(name, "stages"))) {
            spec[n] = axis_around(name, d, 1, 1, 5);
        } else if (gpu && (!strcmp(name, "threads") || !strcmp(name, "num_threads"))) {
            spec[n] = axis_around(name, d, 0, 32, max_threads > 0 ? max_threads : 1024);
        }
        n += spec[n] != NULL;
    }
    return n;
}

void tilec_tune_axes_free(tilec_tune_axis_t *a, int n)
{
    for (int i = 0; a && i < n; i++) {
        for (int k = 0; k < a[i].n; k++) {
            free(a[i].v[k]);
        }
        free(a[i].v);
        free(a[i].name);
    }
    free(a);
}

int tilec_tune_axes_parse(const char *const *spec, int n, const char *what, tilec_tune_axis_t **out, char **msg)
{
    tilec_tune_axis_t *a = calloc((size_t)n + 1, sizeof *a);
    *out = a;
    if (!a) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const char *eq = spec[i] ? strchr(spec[i], '=') : NULL;
        const char *p;
        if (!eq || eq == spec[i] || !eq[1]) {
            *msg = tilec_strfmt("%s expects NAME=V1,V2,..., got '%s'", what, spec[i] ? spec[i] : "");
            return -1;
        }
        a[i].name = strndup(spec[i], (size_t)(eq - spec[i]));
        for (int k = 0; k < i; k++) {
            if (a[i].name && !strcmp(a[k].name, a[i].name)) {
                *msg = tilec_strfmt("%s names '%s' twice", what, a[i].name);
                return -1;
            }
        }
        a[i].v = calloc(strlen(eq) + 1, sizeof *a[i].v);
        if (!a[i].name || !a[i].v) {
            return -1;
        }
        for (p = eq + 1;;) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            if (len == 0 || memchr(p, ' ', len)) {
                *msg = tilec_strfmt("%s '%s': empty value or a value with a space", what, spec[i]);
                return -1;
            }
            if (!(a[i].v[a[i].n++] = strndup(p, len))) {
                return -1;
            }
            if (!e) {
                break;
            }
            p = e + 1;
        }
    }
    return 0;
}

long long tilec_tune_axes_product(const tilec_tune_axis_t *a, int n, long long max)
{
    long long c = 1;
    for (int i = 0; i < n; i++) {
        c *= a[i].n;
        if (c > max) {
            return -1;
        }
    }
    return c;
}

const char *tilec_tune_axes_value(const tilec_tune_axis_t *a, int n, long long k, int i)
{
    long long stride = 1;
    for (int j = n - 1; j > i; j--) {
        stride *= a[j].n;
    }
    return a[i].v[(k / stride) % a[i].n];
}
