/*
 * tests/test_cache.c — kernel-cache entries are verified before use.
 *
 * First the SDK's entry format alone (tilec_sdk_cache_store/_load): every
 * kind of damage — truncated, one bit flipped, the payload patched with the
 * trailer kept, another key's entry swapped in, bytes appended, a FIFO, a
 * file without a trailer — is refused with its reason and removed.  Then
 * end to end on the cpu backend through the CLI: a damaged entry is
 * reported under TILEC_LOG=compile, never loaded (the run still passes its
 * --check), and rebuilt into a valid entry.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tilec/sdk.h"

static const char key_a[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char key_b[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

static char dir[64];

static void mk_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/tilec-cache-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void rm_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

static char *entry(const char *name)
{
    char *p = tilec_sdk_cache_path(dir, "", name, "");
    cr_assert_not_null(p);
    return p;
}

static void put_bytes(const char *path, const void *data, size_t len)
{
    cr_assert_eq(tilec_sdk_cache_write(path, data, len), 0);
}

static void get_raw(const char *path, unsigned char **data, size_t *len)
{
    cr_assert_eq(tilec_sdk_file_read(path, (void **)data, len), 0, "%s", strerror(errno));
}

/* The entry at path must be refused with a reason containing want, and
 * be gone afterwards. */
static void expect_bad(const char *path, const char *key, const char *want)
{
    void *d = (void *)1;
    size_t n = 99;
    char why[256];
    cr_expect_eq(tilec_sdk_cache_load(path, key, &d, &n, why, sizeof why), TILEC_SDK_CACHE_BAD,
                 "%s accepted", path);
    cr_expect_null(d);
    cr_expect_eq(n, 0u);
    cr_expect_not_null(strstr(why, want), "reason '%s' lacks '%s'", why, want);
    cr_expect_neq(access(path, F_OK), 0, "%s was not removed", path);
}

Test(cache_entry, round_trip_and_miss)
{
    char payload[5000];
    void *d = NULL;
    size_t n = 0;
    char why[256];
    mk_dir();
    for (size_t i = 0; i < sizeof payload; i++) {
        payload[i] = (char)(i * 7);
    }
    char *p = entry("e");
    cr_expect_eq(tilec_sdk_cache_load(p, key_a, &d, &n, why, sizeof why), TILEC_SDK_CACHE_MISS);
    cr_assert_eq(tilec_sdk_cache_store(p, key_a, payload, sizeof payload), 0);
    cr_assert_eq(tilec_sdk_cache_load(p, key_a, &d, &n, why, sizeof why), TILEC_SDK_CACHE_HIT, "%s", why);
    cr_expect_eq(n, sizeof payload);
    cr_expect_eq(memcmp(d, payload, n), 0);
    cr_expect_eq(((char *)d)[n], '\0');
    free(d);
    /* The empty payload is an entry too. */
    cr_assert_eq(tilec_sdk_cache_store(p, key_a, NULL, 0), 0);
    cr_assert_eq(tilec_sdk_cache_load(p, key_a, &d, &n, why, sizeof why), TILEC_SDK_CACHE_HIT, "%s", why);
    cr_expect_eq(n, 0u);
    free(d);
    /* A key longer than the trailer holds is refused at store time. */
    char longkey[100];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    cr_expect_eq(tilec_sdk_cache_store(p, longkey, "x", 1), -1);
    free(p);
    rm_dir();
}

Test(cache_entry, every_kind_of_damage_is_refused)
{
    static const char payload[] = "\177ELF pretend this is a kernel object of some length";
    unsigned char *raw;
    size_t len;
    mk_dir();
    char *p = entry("e");

    /* truncated: inside the trailer, and to less than a trailer */
    cr_assert_eq(tilec_sdk_cache_store(p, key_a, payload, sizeof payload), 0);
    get_raw(p, &raw, &len);
    put_bytes(p, raw, len - 10);
    expect_bad(p, key_a, "no valid trailer");
    put_bytes(p, raw, 20);
    expect_bad(p, key_a, "truncated");
    /* truncated in the payload, trailer kept (a torn copy) */
    {
        unsigned char *cut = malloc(len - 5);
        memcpy(cut, raw, 10);
        memcpy(cut + 10, raw + 15, len - 15);
        put_bytes(p, cut, len - 5);
        expect_bad(p, key_a, "truncated or extended");
        free(cut);
    }
    /* bytes appended after the trailer */
    {
        unsigned char *big = malloc(len + 3);
        memcpy(big, raw, len);
        memcpy(big + len, "xyz", 3);
        put_bytes(p, big, len + 3);
        expect_bad(p, key_a, "no valid trailer");
        free(big);
    }
    /* one bit flipped in the payload */
    raw[7] ^= 0x10;
    put_bytes(p, raw, len);
    expect_bad(p, key_a, "checksum mismatch");
    raw[7] ^= 0x10;
    /* patched: same size, other bytes (a kernel made a no-op) */
    memset(raw + 4, 0x90, 12);
    put_bytes(p, raw, len);
    expect_bad(p, key_a, "checksum mismatch");
    free(raw);
    /* swapped: a valid entry of another key at this key's path */
    cr_assert_eq(tilec_sdk_cache_store(p, key_b, payload, sizeof payload), 0);
    expect_bad(p, key_a, "another kernel's entry");
    /* an old-style entry without a trailer */
    {
        char old[300];
        memset(old, 'o', sizeof old);
        put_bytes(p, old, sizeof old);
        expect_bad(p, key_a, "no valid trailer");
    }
    /* a FIFO at the entry's path: refused at once, never read */
    cr_assert_eq(mkfifo(p, 0600), 0);
    expect_bad(p, key_a, "not a regular file");
    /* and after all of that, a store makes a good entry again */
    cr_assert_eq(tilec_sdk_cache_store(p, key_a, payload, sizeof payload), 0);
    {
        void *d = NULL;
        size_t n = 0;
        char why[256];
        cr_expect_eq(tilec_sdk_cache_load(p, key_a, &d, &n, why, sizeof why), TILEC_SDK_CACHE_HIT, "%s", why);
        free(d);
    }
    free(p);
    rm_dir();
}

/* ---- end to end on the cpu backend --------------------------------------- */

static const char *build_dir(void)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    return b && *b ? b : "build";
}

/* Runs `tilec run EXAMPLE --check` on cpu with the cache in dir and
 * TILEC_LOG=compile; returns the exit status, stderr+stdout in *log. */
static int run_example(const char *example, char **log)
{
    char cmd[1024], out[128];
    size_t n;
    snprintf(out, sizeof out, "%s/.log", dir);
    snprintf(cmd, sizeof cmd,
             "TILEC_PLUGIN_PATH= TILEC_CACHE_DIR='%s/c' TILEC_LOG=compile TILEC_BACKEND=cpu "
             "'%s/tilec' run '%s' --check > '%s' 2>&1",
             dir, build_dir(), example, out);
    int rc = system(cmd);
    cr_assert_eq(tilec_sdk_file_read(out, (void **)log, &n), 0);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

/* The one cpu-*.so entry in the cache, or "" (path into buf). */
static void only_entry(char *buf, size_t cap, const char *not_this)
{
    char c[128];
    snprintf(c, sizeof c, "%s/c", dir);
    DIR *d = opendir(c);
    struct dirent *e;
    buf[0] = '\0';
    cr_assert_not_null(d);
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "cpu-", 4) == 0 && (!not_this || !strstr(not_this, e->d_name))) {
            snprintf(buf, cap, "%s/%s", c, e->d_name);
        }
    }
    closedir(d);
    cr_assert(buf[0], "no cpu cache entry in %s", c);
}

static void expect_rebuilt(const char *example, const char *path, const char *want)
{
    char *log = NULL;
    int rc = run_example(example, &log);
    cr_expect_eq(rc, 0, "%s exited %d:\n%s", example, rc, log);
    cr_expect_not_null(strstr(log, "PASS"), "%s", log);
    cr_expect_not_null(strstr(log, "rejected"), "damage not reported:\n%s", log);
    cr_expect_not_null(strstr(log, want), "reason '%s' not reported:\n%s", want, log);
    cr_expect_null(strstr(log, "cache hit"), "a damaged entry was used:\n%s", log);
    free(log);
    /* rebuilt: the next run hits a valid entry */
    rc = run_example(example, &log);
    cr_expect_eq(rc, 0, "%s", log);
    cr_expect_not_null(strstr(log, "cache hit"), "not rebuilt:\n%s", log);
    free(log);
    (void)path;
}

Test(cache_entry, cpu_backend_rebuilds_damaged_entries)
{
    const char *ex = "examples/elementwise_add.py", *other = "examples/transpose.py";
    char path[PATH_MAX], path2[PATH_MAX], *log = NULL;
    unsigned char *raw;
    size_t len;
    mk_dir();
    cr_assert_eq(run_example(ex, &log), 0, "%s", log);
    free(log);
    only_entry(path, sizeof path, NULL);

    get_raw(path, &raw, &len);
    put_bytes(path, raw, len / 2);
    free(raw);
    expect_rebuilt(ex, path, "no valid trailer");

    get_raw(path, &raw, &len);
    raw[len / 3] ^= 0x04;
    put_bytes(path, raw, len);
    free(raw);
    expect_rebuilt(ex, path, "checksum mismatch");

    /* patched: the kernel's code bytes overwritten, trailer kept */
    get_raw(path, &raw, &len);
    memset(raw + len / 4, 0xc3, 64);
    put_bytes(path, raw, len);
    free(raw);
    expect_rebuilt(ex, path, "checksum mismatch");

    /* swapped: another kernel's valid entry under this name */
    cr_assert_eq(run_example(other, &log), 0, "%s", log);
    free(log);
    only_entry(path2, sizeof path2, path);
    get_raw(path2, &raw, &len);
    put_bytes(path, raw, len);
    free(raw);
    expect_rebuilt(ex, path, "another kernel's entry");

    /* a FIFO: the run must not block on it */
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(mkfifo(path, 0600), 0);
    expect_rebuilt(ex, path, "not a regular file");
    rm_dir();
}
