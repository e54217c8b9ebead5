/*
 * plugin-sdk/src/sdk_str.c — the growable string every code generator
 * writes its source into (the CPU, CUDA and OpenCL backends, the SIMT kit).
 * An allocation failure is sticky (oom) so generators check once at the end
 * instead of after every append.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/sdk.h"

void tilec_sdk_str_putn(tilec_sdk_str_t *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void tilec_sdk_str_puts(tilec_sdk_str_t *b, const char *s) { tilec_sdk_str_putn(b, s, strlen(s)); }

void tilec_sdk_str_vprintf(tilec_sdk_str_t *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        tilec_sdk_str_putn(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    tilec_sdk_str_putn(b, big, (size_t)n);
    free(big);
}

void tilec_sdk_str_printf(tilec_sdk_str_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tilec_sdk_str_vprintf(b, fmt, ap);
    va_end(ap);
}

void tilec_sdk_str_free(tilec_sdk_str_t *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}
