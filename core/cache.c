/*
 * core/cache.c — resolution and creation of the kernel cache directory.
 *
 * The core does not store anything in the cache itself: it only decides
 * where the cache is (docs/cli.md, "Environment") and makes sure the directory exists, so
 * every plugin gets a usable path or NULL.  A directory that cannot be
 * created is not an error: the host simply runs without a cache and says so
 * under TILEC_LOG=loader.
 */
#include "cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "log.h"

int tilec_mkdir_p(const char *path, unsigned mode)
{
    size_t len;
    char *buf;
    struct stat st;
    if (!path || !*path) {
        errno = EINVAL;
        return -1;
    }
    len = strlen(path);
    buf = malloc(len + 1);
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(buf, path, len + 1);
    /* Create each prefix ending before a '/', then the whole path. */
    for (size_t i = 1; i <= len; i++) {
        if (i < len && buf[i] != '/') {
            continue;
        }
        buf[i] = '\0';
        if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST) {
            int e = errno;
            free(buf);
            errno = e;
            return -1;
        }
        if (i < len) {
            buf[i] = '/';
        }
    }
    free(buf);
    if (stat(path, &st) != 0) {
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 2);
    if (!s) {
        return NULL;
    }
    memcpy(s, a, la);
    s[la] = '/';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

char *tilec_cache_dir(void)
{
    const char *v = secure_getenv("TILEC_CACHE");
    const char *dir;
    char *path;
    if (v && strcmp(v, "0") == 0) {
        tilec_log("loader", "cache disabled (TILEC_CACHE=0)");
        return NULL;
    }
    dir = secure_getenv("TILEC_CACHE_DIR");
    if (dir && *dir) {
        path = strdup(dir);
    } else if ((dir = secure_getenv("XDG_CACHE_HOME")) && *dir) {
        path = join(dir, "tilec");
    } else if ((dir = secure_getenv("HOME")) && *dir) {
        path = join(dir, ".cache/tilec");
    } else {
        tilec_log("loader", "no cache: neither TILEC_CACHE_DIR, XDG_CACHE_HOME nor HOME is set");
        return NULL;
    }
    if (!path) {
        return NULL;
    }
    if (tilec_mkdir_p(path, 0700) != 0) {
        tilec_log("loader", "no cache: cannot create %s: %s", path, strerror(errno));
        free(path);
        return NULL;
    }
    tilec_log("loader", "cache directory %s", path);
    return path;
}
