/*
 * core/log.c — TILEC_LOG tracing (see log.h).  The topic list is parsed on
 * first use; checking a topic is a string search in it, cheap enough for
 * the paths that trace (loading, compiling, launching).
 */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static char log_topics[256];

static void log_init(void)
{
    const char *v = secure_getenv("TILEC_LOG");
    if (v) {
        snprintf(log_topics, sizeof log_topics, ",%s,", v);
    }
}

int tilec_log_enabled(const char *topic)
{
    char key[64];
    pthread_once(&log_once, log_init);
    if (!log_topics[0]) {
        return 0;
    }
    if (strstr(log_topics, ",all,")) {
        return 1;
    }
    snprintf(key, sizeof key, ",%s,", topic);
    return strstr(log_topics, key) != NULL;
}

void tilec_log(const char *topic, const char *fmt, ...)
{
    va_list ap;
    if (!tilec_log_enabled(topic)) {
        return;
    }
    va_start(ap, fmt);
    fprintf(stderr, "tilec[%s]: ", topic);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
