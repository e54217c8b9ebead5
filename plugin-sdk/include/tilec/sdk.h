/*
 * tilec/sdk.h — small utilities every backend plugin shares.
 *
 * A plugin links libtilec-sdk.a statically, so each plugin carries its own
 * copy of these functions and of their state (the error buffer is per
 * plugin and per thread).  Three concerns:
 *  - SHA-256 (sha256.c), our own implementation, for kernel cache keys;
 *  - the kernel cache (sdk_cache.c): the path of an entry for a key, an
 *    atomic write (temporary file in the same directory, then rename, so a
 *    reader never sees a half-written entry), a whole-file read, and
 *    verified entries (a checksum and the key in a trailer, checked before
 *    anything is loaded from the entry);
 *  - the last-error message (sdk_error.c): a thread-local buffer with a
 *    printf-style setter, which is what a plugin's last_error() returns.
 */
#ifndef TILEC_SDK_H
#define TILEC_SDK_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "tilec/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- SHA-256 (FIPS 180-4) ------------------------------------------------ */

typedef struct tilec_sha256 {
    uint32_t h[8];
    uint64_t nbytes;      /* total bytes hashed so far */
    uint8_t buf[64];      /* pending partial block */
    size_t nbuf;
} tilec_sha256_t;

void tilec_sha256_init(tilec_sha256_t *s);
void tilec_sha256_update(tilec_sha256_t *s, const void *data, size_t len);
void tilec_sha256_final(tilec_sha256_t *s, uint8_t digest[32]);
/* One-shot digest. */
void tilec_sha256(const void *data, size_t len, uint8_t digest[32]);
/* 64 lowercase hex digits and a NUL into hex[65]. */
void tilec_sha256_hex(const uint8_t digest[32], char hex[65]);

/* ---- kernel cache --------------------------------------------------------- */

/* "DIR/PREFIXKEYSUFFIX" (e.g. dir "/c", prefix "cpu-", key hex, suffix
 * ".so"), malloc'd (caller frees); NULL when out of memory or an argument
 * is NULL. */
char *tilec_sdk_cache_path(const char *dir, const char *prefix, const char *key,
                           const char *suffix);
/* Creates dir and its parents as needed (mode 0700).  0 or -1 (errno set). */
int tilec_sdk_mkdirs(const char *dir);
/* Writes len bytes to path atomically: a temporary file in the same
 * directory, fsync-free, then rename(2) over path.  Creates the directory
 * when missing.  0, or -1 with errno set (the temporary file is removed). */
int tilec_sdk_cache_write(const char *path, const void *data, size_t len);
/* Reads a whole file into a malloc'd buffer (caller frees; one extra NUL
 * byte is appended, not counted in *len).  0, or -1 with errno set
 * (ENOENT when the entry is absent). */
int tilec_sdk_file_read(const char *path, void **data, size_t *len);

/* Verified entries.  An entry is the payload followed by a 128-byte trailer:
 * a magic, the payload size, the key it was stored under and a SHA-256 of
 * key and payload.  The payload comes first, so an ELF object stays
 * loadable from the entry's path; but nothing should be loaded before
 * tilec_sdk_cache_load() said it is intact. */
#define TILEC_SDK_CACHE_TRAILER 128u
#define TILEC_SDK_CACHE_KEY_MAX 71u
/* Stores data under key (at most TILEC_SDK_CACHE_KEY_MAX bytes) atomically,
 * as tilec_sdk_cache_write does.  0, or -1 with errno set. */
int tilec_sdk_cache_store(const char *path, const char *key, const void *data, size_t len);

typedef enum tilec_sdk_cache_result {
    TILEC_SDK_CACHE_HIT = 0,   /* *data, *len: the payload (malloc'd, NUL appended) */
    TILEC_SDK_CACHE_MISS = 1,  /* no entry */
    TILEC_SDK_CACHE_BAD = 2    /* an entry that must not be used: why says what
                                * (truncated, damaged, stored under another key,
                                * not a regular file, unreadable); it was removed */
} tilec_sdk_cache_result_t;
/* Reads and verifies the entry at path for key.  Never blocks on a FIFO and
 * never returns a payload whose checksum, size or key does not match. */
tilec_sdk_cache_result_t tilec_sdk_cache_load(const char *path, const char *key, void **data,
                                              size_t *len, char *why, size_t whylen);

/* ---- growable string (code generators) -------------------------------------- */

typedef struct tilec_sdk_str {
    char *s;      /* owned, NUL-terminated once anything was appended */
    size_t len, cap;
    int oom;      /* set once an allocation failed; later appends are no-ops */
} tilec_sdk_str_t;

void tilec_sdk_str_putn(tilec_sdk_str_t *b, const char *s, size_t n);
void tilec_sdk_str_puts(tilec_sdk_str_t *b, const char *s);
void tilec_sdk_str_vprintf(tilec_sdk_str_t *b, const char *fmt, va_list ap);
void tilec_sdk_str_printf(tilec_sdk_str_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void tilec_sdk_str_free(tilec_sdk_str_t *b);

/* ---- last error ----------------------------------------------------------- */

/* Formats the message of the calling thread's last error (any length). */
void tilec_sdk_error_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Appends to the current message. */
void tilec_sdk_error_append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tilec_sdk_error_clear(void);
/* The calling thread's message, "" when none; valid until the next set,
 * append or clear on the same thread. */
const char *tilec_sdk_error_get(void);

#ifdef __cplusplus
}
#endif
#endif
