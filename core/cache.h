/*
 * core/cache.h — where the kernel cache lives.
 *
 * The host resolves the cache directory once per plugin scan and hands it to
 * every plugin in tilec_plugin_host_t.cache_dir; the plugins decide what to
 * keep there.  Resolution follows docs/cli.md ("Environment"): TILEC_CACHE=0 disables the
 * cache, else TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else
 * ~/.cache/tilec.  Variables are read with secure_getenv on every call so a
 * long-running process sees changes.
 */
#ifndef TILEC_CORE_CACHE_H
#define TILEC_CORE_CACHE_H

/* A malloc'd absolute-or-as-given path of an existing directory (created
 * with mode 0700, parents included), or NULL when the cache is disabled or
 * the directory cannot be created (traced under TILEC_LOG=loader). */
char *tilec_cache_dir(void);

/* mkdir -p PATH with the given mode for every component it creates.
 * Returns 0, or -1 with errno set. */
int tilec_mkdir_p(const char *path, unsigned mode);

#endif
