/*
 * core/probe.h — running untrusted plugin code in a forked child first.
 *
 * The loader calls every plugin entry of a scan (constructors, the query,
 * device_count, device_info) in a probe child before it calls them in the
 * host.  The child resets every signal disposition, runs the work and
 * reports each stage it enters, then "done", through a pipe; the parent
 * waits with a deadline.  Whatever the child did instead of saying "done"
 * (a signal, an exit, a hang, a fault swallowed by a handler that exits)
 * becomes a rejection reason naming the stage, e.g. "crashed while being
 * queried: signal 11 (Segmentation fault) in device_count".
 *
 * Results are remembered per file identity (device, inode, size, mtime),
 * so a scan that finds nothing new forks nothing.
 */
#ifndef TILEC_CORE_PROBE_H
#define TILEC_CORE_PROBE_H

#include <sys/stat.h>

/* Runs work(arg) in a forked child.  Returns 0 when the child reported
 * done, 1 when it did not (*reason: malloc'd rejection reason), -1 when
 * no probe could be made (fork or pipe failed; *reason: why, for the
 * log).  *reason is NULL on 0. */
int tilec_probe_run(void (*work)(void *), void *arg, char **reason);

/* Inside a probe child: announces the stage about to run ("tilec_plugin_query",
 * "device_info(2)").  Does nothing in the host. */
void tilec_probe_stage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Nonzero inside a probe child. */
int tilec_probe_in_child(void);

/* The remembered result for the file st describes: 1 and *reason (malloc'd,
 * "" when the probe passed) when known, 0 when not. */
int tilec_probe_cached(const struct stat *st, char **reason);
/* Remembers a probe result (reason NULL or "" = passed). */
void tilec_probe_remember(const struct stat *st, const char *reason);

/* The deadline of one probe, in milliseconds (default 10000); for tests.
 * Returns the previous value. */
int tilec_probe_set_timeout(int ms);

#endif
