/*
 * sdk_cache.c — the on-disk kernel cache shared by plugins.
 *
 * An entry is one file named after its key (a SHA-256 hex digest).  Writers
 * never expose a partial file: the bytes go to a unique temporary file in
 * the same directory (mkstemp), which is then renamed over the entry's
 * name; rename(2) within one file system is atomic, so concurrent
 * processes compiling the same kernel at worst both write it, and every
 * reader sees either no entry or a complete one.
 */
#include <errno.h>
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
