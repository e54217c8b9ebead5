/*
 * sdk_cache.c — the on-disk kernel cache shared by plugins.
 *
 * An entry is one file named after its key (a SHA-256 hex digest).  Writers
 * never expose a partial file: the bytes go to a unique temporary file in
 * the same directory (mkstemp), which is then renamed over the entry's
 * name; rename(2) within one file system is atomic, so concurrent
 * processes compiling the same kernel at worst both write it, and every
 * reader sees either no entry or a complete one.
 *
 * Complete is not intact: a disk, a copy or a hand can truncate, flip or
 * patch an entry, or put another kernel's entry in its place, and a backend
 * that dlopen's or loads such a file runs whatever it holds.  So entries
 * carry a trailer (tilec_sdk_cache_store) that tilec_sdk_cache_load checks
 * before it hands the payload out: the payload size, the key the entry was
 * stored under, and a SHA-256 over both.  A bad entry is removed so the
 * caller rebuilds it.  What this guards against is damage, not an attacker
 * who can write the (0700) cache directory between the check and a
 * backend's dlopen of the same path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "tilec/sdk.h"

char *tilec_sdk_cache_path(const char *dir, const char *prefix, const char *key,
                           const char *suffix)
{
    if (!dir || !key)
        return NULL;
    if (!prefix)
        prefix = "";
    if (!suffix)
        suffix = "";
    size_t n = strlen(dir) + strlen(prefix) + strlen(key) + strlen(suffix) + 2;
    char *p = malloc(n);
    if (!p)
        return NULL;
    snprintf(p, n, "%s/%s%s%s", dir, prefix, key, suffix);
    return p;
}

int tilec_sdk_mkdirs(const char *dir)
{
    if (!dir || !*dir) {
        errno = EINVAL;
        return -1;
    }
    char *p = strdup(dir);
    if (!p)
        return -1;
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST) {
                rc = -1;
                break;
            }
            *s = c;
            if (c == '\0')
                break;
        }
    }
    if (rc == 0) {
        struct stat st;
        if (stat(p, &st) != 0)
            rc = -1;
        else if (!S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            rc = -1;
        }
    }
    int e = errno;
    free(p);
    errno = e;
    return rc;
}

int tilec_sdk_cache_write(const char *path, const void *data, size_t len)
{
    if (!path || (!data && len)) {
        errno = EINVAL;
        return -1;
    }
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char *dir = strndup(path, (size_t)(slash - path));
        if (!dir)
            return -1;
        int rc = tilec_sdk_mkdirs(dir);
        int e = errno;
        free(dir);
        if (rc != 0) {
            errno = e;
            return -1;
        }
    }
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp)
        return -1;
    snprintf(tmp, n, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        errno = e;
        return -1;
    }
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        p += w;
        left -= (size_t)w;
    }
    /* Entries are read-only once written; readable by the owner and group
     * like a compiler's output would be. */
    if (fchmod(fd, 0644) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0)
        goto fail;
    free(tmp);
    return 0;
fail : {
    int e = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    free(tmp);
    errno = e;
    return -1;
}
}

int tilec_sdk_file_read(const char *path, void **data, size_t *len)
{
    if (!path || !data || !len) {
        errno = EINVAL;
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return -1;
    }
    for (;;) {
        if (cap - n < 2) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) {
                int e = errno ? errno : EIO;
                free(buf);
                fclose(f);
                errno = e;
                return -1;
            }
            break;
        }
    }
    fclose(f);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

/* ---- verified entries ----------------------------------------------------- */

static const char trailer_magic[16] = "tilec-cache-v1\n";

typedef struct trailer {
    char magic[16];
    uint8_t size[8];                         /* payload bytes, little endian */
    uint8_t digest[32];                      /* SHA-256(key, NUL, payload) */
    char key[TILEC_SDK_CACHE_KEY_MAX + 1];   /* NUL-padded */
} trailer_t;

_Static_assert(sizeof(trailer_t) == TILEC_SDK_CACHE_TRAILER, "trailer layout");

static void entry_digest(const char *key, const void *data, size_t len, uint8_t dg[32])
{
    tilec_sha256_t h;
    tilec_sha256_init(&h);
    tilec_sha256_update(&h, key, strlen(key) + 1);
    tilec_sha256_update(&h, data, len);
    tilec_sha256_final(&h, dg);
}

int tilec_sdk_cache_store(const char *path, const char *key, const void *data, size_t len)
{
    trailer_t t;
    char *buf;
    int rc, e;
    if (!path || !key || strlen(key) > TILEC_SDK_CACHE_KEY_MAX || (!data && len) ||
        len > SIZE_MAX - sizeof t) {
        errno = EINVAL;
        return -1;
    }
    memset(&t, 0, sizeof t);
    memcpy(t.magic, trailer_magic, sizeof t.magic);
    for (int i = 0; i < 8; i++)
        t.size[i] = (uint8_t)((uint64_t)len >> (8 * i));
    entry_digest(key, data, len, t.digest);
    memcpy(t.key, key, strlen(key));
    buf = malloc(len + sizeof t);
    if (!buf)
        return -1;
    if (len)
        memcpy(buf, data, len);
    memcpy(buf + len, &t, sizeof t);
    rc = tilec_sdk_cache_write(path, buf, len + sizeof t);
    e = errno;
    free(buf);
    errno = e;
    return rc;
}

static tilec_sdk_cache_result_t bad(const char *path, char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static tilec_sdk_cache_result_t bad(const char *path, char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    if (why && whylen) {
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    if (*path)
        unlink(path);
    return TILEC_SDK_CACHE_BAD;
}

tilec_sdk_cache_result_t tilec_sdk_cache_load(const char *path, const char *key, void **data,
                                              size_t *len, char *why, size_t whylen)
{
    struct stat st;
    trailer_t t;
    uint64_t size = 0;
    uint8_t dg[32];
    char *buf;
    size_t n = 0, total;
    int fd;
    if (why && whylen)
        why[0] = '\0';
    if (!path || !key || !data || !len)
        return bad("", why, whylen, "invalid arguments");
    *data = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return TILEC_SDK_CACHE_MISS;
        return bad(path, why, whylen, "cannot open: %s", strerror(errno));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return bad(path, why, whylen, "not a regular file");
    }
    if ((uint64_t)st.st_size < sizeof t) {
        close(fd);
        return bad(path, why, whylen, "truncated (%lld bytes, less than its %u-byte trailer)",
                   (long long)st.st_size, TILEC_SDK_CACHE_TRAILER);
    }
    if ((uint64_t)st.st_size > SIZE_MAX - 1) {
        close(fd);
        return bad(path, why, whylen, "too large");
    }
    total = (size_t)st.st_size;
    buf = malloc(total + 1);
    if (!buf) {
        close(fd);
        if (why && whylen)
            snprintf(why, whylen, "out of memory");
        return TILEC_SDK_CACHE_MISS;
    }
    while (n < total) {
        ssize_t r = read(fd, buf + n, total - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n != total) {
        free(buf);
        return bad(path, why, whylen, "short read (%zu of %zu bytes)", n, total);
    }
    memcpy(&t, buf + total - sizeof t, sizeof t);
    for (int i = 0; i < 8; i++)
        size |= (uint64_t)t.size[i] << (8 * i);
    if (memcmp(t.magic, trailer_magic, sizeof t.magic) != 0) {
        free(buf);
        return bad(path, why, whylen, "no valid trailer (truncated, or not written by tilec_sdk_cache_store)");
    }
    if (size != total - sizeof t) {
        free(buf);
        return bad(path, why, whylen, "truncated or extended (%zu payload bytes, the trailer says %llu)",
                   total - sizeof t, (unsigned long long)size);
    }
    t.key[sizeof t.key - 1] = '\0';
    if (strcmp(t.key, key) != 0) {
        free(buf);
        return bad(path, why, whylen, "stored under key %.16s..., not %.16s... (another kernel's entry)",
                   t.key, key);
    }
    entry_digest(key, buf, (size_t)size, dg);
    if (memcmp(dg, t.digest, sizeof dg) != 0) {
        free(buf);
        return bad(path, why, whylen, "checksum mismatch (the entry was damaged or modified)");
    }
    buf[size] = '\0';
    *data = buf;
    *len = (size_t)size;
    return TILEC_SDK_CACHE_HIT;
}
