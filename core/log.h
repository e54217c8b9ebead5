/*
 * core/log.h — TILEC_LOG tracing.
 *
 * TILEC_LOG is a comma list of topics (loader, compile, ir, launch, or
 * "all").  Traces go to stderr prefixed with "tilec[topic]: ".  The variable
 * is read once, with secure_getenv.
 */
#ifndef TILEC_CORE_LOG_H
#define TILEC_CORE_LOG_H

int tilec_log_enabled(const char *topic);
void tilec_log(const char *topic, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
