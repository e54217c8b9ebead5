/*
 * sdk_error.c — the per-thread last-error message of a plugin.
 *
 * The ABI says a failing entry point leaves a message, owned by the
 * plugin, that last_error() returns until the next call on the same
 * thread.  Messages can be long (a compiler's whole output), so the buffer
 * is heap-allocated and grown as needed; a pthread key frees it when the
 * thread exits.  When memory runs out the message degrades to a fixed
 * string rather than failing.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/sdk.h"

typedef struct sdk_errbuf {
    char *msg;
    size_t len, cap;
} sdk_errbuf_t;

static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;
static int err_key_ok;

static void errbuf_free(void *p)
{
    sdk_errbuf_t *b = p;
    if (b) {
        free(b->msg);
        free(b);
    }
}

static void err_key_init(void) { err_key_ok = pthread_key_create(&err_key, errbuf_free) == 0; }

/* When the object holding this code is unloaded (dlclose of a plugin), the
 * key must go too, or a thread exiting later would call a destructor that
 * is no longer mapped.  The calling thread's buffer is freed here; other
 * threads' buffers are abandoned (bounded: one per thread). */
__attribute__((destructor)) static void err_key_fini(void)
{
    if (err_key_ok) {
        errbuf_free(pthread_getspecific(err_key));
        pthread_setspecific(err_key, NULL);
        pthread_key_delete(err_key);
        err_key_ok = 0;
    }
}

static sdk_errbuf_t *errbuf(void)
{
    pthread_once(&err_once, err_key_init);
    if (!err_key_ok)
        return NULL;
    sdk_errbuf_t *b = pthread_getspecific(err_key);
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b || pthread_setspecific(err_key, b) != 0) {
            free(b);
            return NULL;
        }
    }
    return b;
}

static void errbuf_vappend(sdk_errbuf_t *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    size_t need = b->len + (size_t)n + 1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        while (cap < need)
            cap *= 2;
        char *m = realloc(b->msg, cap);
        if (!m)
            return; /* keep the old message */
        b->msg = m;
        b->cap = cap;
    }
    vsnprintf(b->msg + b->len, b->cap - b->len, fmt, ap);
    b->len += (size_t)n;
}

void tilec_sdk_error_set(const char *fmt, ...)
{
    sdk_errbuf_t *b = errbuf();
    if (!b)
        return;
    b->len = 0;
    if (b->msg)
        b->msg[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    errbuf_vappend(b, fmt, ap);
    va_end(ap);
}

void tilec_sdk_error_append(const char *fmt, ...)
{
    sdk_errbuf_t *b = errbuf();
    if (!b)
        return;
    va_list ap;
    va_start(ap, fmt);
    errbuf_vappend(b, fmt, ap);
    va_end(ap);
}

void tilec_sdk_error_clear(void)
{
    sdk_errbuf_t *b = errbuf();
    if (b) {
        b->len = 0;
        if (b->msg)
            b->msg[0] = '\0';
    }
}

const char *tilec_sdk_error_get(void)
{
    sdk_errbuf_t *b = errbuf();
    if (!b)
        return "out of memory (no error buffer)";
    return b->msg ? b->msg : "";
}
