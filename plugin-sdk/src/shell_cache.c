/*
 * plugin-sdk/src/shell_cache.c — the kernel cache of a compiling backend,
 * as the plugin shell's helpers: look the module's source up before
 * running the vendor compiler, store what it produced after.
 *
 * Every backend that compiles through a vendor compiler (NVRTC, hiprtc,
 * ...) keys its entry the same way: the SHA-256 of "tilec-NAME", the
 * backend's parts (plugin version, compiler and its version, arch,
 * options), each with its NUL, then the generated source; the entry is
 * DIR/NAME-<key>EXT in the host's cache directory (tilec_shell_cache_dir),
 * stored and verified by sdk_cache.c.  An entry that fails verification
 * or the backend's own check of the binary is removed, logged and
 * rebuilt.  Without a cache directory both calls do nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "tilec/sdk.h"
#include "tilec/shell.h"

int tilec_shell_cache_find(tilec_shell_cache_t *e, const char *name, const char *ext, const char *const *parts,
                           int nparts, tilec_shell_module_t *mod, int (*valid)(const void *data, size_t len))
{
    memset(e, 0, sizeof *e);
    char *dir = tilec_shell_cache_dir();
    if (!dir)
        return 0;
    tilec_sha256_t h;
    uint8_t dg[32];
    tilec_sha256_init(&h);
    tilec_sha256_update(&h, "tilec-", 6);
    tilec_sha256_update(&h, name, strlen(name) + 1);
    for (int i = 0; i < nparts; i++)
        tilec_sha256_update(&h, parts[i] ? parts[i] : "", parts[i] ? strlen(parts[i]) + 1 : 1);
    tilec_sha256_update(&h, mod->source, mod->source_len);
    tilec_sha256_final(&h, dg);
    tilec_sha256_hex(dg, e->key);
    size_t n = strlen(name);
    char *prefix = malloc(n + 2);
    if (prefix) {
        memcpy(prefix, name, n);
        memcpy(prefix + n, "-", 2);
        e->path = tilec_sdk_cache_path(dir, prefix, e->key, ext);
    }
    free(prefix);
    free(dir);
    if (!e->path)
        return 0;
    char why[256];
    tilec_sdk_cache_result_t r = tilec_sdk_cache_load(e->path, e->key, &mod->binary, &mod->binary_len, why, sizeof why);
    if (r == TILEC_SDK_CACHE_BAD)
        tilec_shell_log("compile", "%s: cache entry %s rejected: %s; removed, rebuilding", name, e->path, why);
    if (r == TILEC_SDK_CACHE_HIT && (!valid || valid(mod->binary, mod->binary_len))) {
        tilec_shell_log("compile", "%s: cache hit %s", name, e->path);
        return 1;
    }
    free(mod->binary);
    mod->binary = NULL;
    mod->binary_len = 0;
    return 0;
}

int tilec_shell_cache_store(const tilec_shell_cache_t *e, const char *name, const tilec_shell_module_t *mod)
{
    if (!e->path)
        return 0;
    if (tilec_sdk_cache_store(e->path, e->key, mod->binary, mod->binary_len) == 0)
        return 0;
    tilec_shell_log("compile", "%s: cannot write cache entry %s", name, e->path);
    return -1;
}

void tilec_shell_cache_done(tilec_shell_cache_t *e)
{
    free(e->path);
    e->path = NULL;
}
