/*
 * vk_glslc.c — GLSL compute source to SPIR-V with the system's GLSL
 * compiler, run as a child process the way the CPU backend runs cc.
 *
 * The compiler is $TILEC_GLSLC when set, else `glslc` found on PATH
 * (Debian's shaderc).  libshaderc is not loaded in process: Debian 12's
 * libshaderc.so.1 cannot be dlopen'ed by itself (it leaves SPIRV-Tools
 * symbols unresolved).  The source goes to a private temporary directory,
 * glslc writes the module there and its diagnostics to a log that a failed
 * compile returns (the kit never produces invalid GLSL on purpose, so a log
 * means a bug worth reporting).  About 80 ms for a small shader.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilec/sdk.h"
#include "vk_internal.h"

extern char **environ;

/* An executable path for name: itself when it has a slash, else the
 * first match on PATH; NULL when none. */
static char *find_exe(const char *name)
{
    if (!name || !*name)
        return NULL;
    if (strchr(name, '/'))
        return access(name, X_OK) == 0 ? strdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *e = strchr(path, ':');
        size_t n = e ? (size_t)(e - path) : strlen(path);
        char buf[4096];
        if (n > 0 && n + strlen(name) + 2 < sizeof buf) {
            snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, name);
            if (access(buf, X_OK) == 0)
                return strdup(buf);
        }
        path += n;
        if (*path == ':')
            path++;
    }
    return NULL;
}

const char *vk_glslc_path(void)
{
    static __thread char cached[4096];
    const char *env = getenv("TILEC_GLSLC");
    char *p = find_exe(env && *env ? env : "glslc");
    if (!p)
        return NULL;
    snprintf(cached, sizeof cached, "%s", p);
    free(p);
    return cached;
}

static const char *tmp_root(void)
{
    const char *t = secure_getenv("TMPDIR");
    return t && *t && strlen(t) < 512 ? t : "/tmp";
}

tilec_pstatus_t vk_glslc(const char *src, size_t len, const char *target_env, void **spv, size_t *spv_len)
{
    *spv = NULL;
    *spv_len = 0;
    const char *cc = vk_glslc_path();
    if (!cc) {
        tilec_sdk_error_set("vulkan: unavailable: no GLSL compiler (install glslc, or set TILEC_GLSLC)");
        return TILEC_PS_UNAVAILABLE;
    }
    char dir[600], in[640], out[640], log[640];
    snprintf(dir, sizeof dir, "%s/tilec-vulkan-XXXXXX", tmp_root());
    if (!mkdtemp(dir)) {
        tilec_sdk_error_set("vulkan: cannot create a temporary directory in %s: %s", tmp_root(), strerror(errno));
        return TILEC_PS_COMPILE_ERROR;
    }
    snprintf(in, sizeof in, "%s/k.comp", dir);
    snprintf(out, sizeof out, "%s/k.spv", dir);
    snprintf(log, sizeof log, "%s/glslc.log", dir);
    tilec_pstatus_t st = TILEC_PS_OK;
    char env[64];
    snprintf(env, sizeof env, "--target-env=%s", target_env);
    char *argv[] = {(char *)cc, "-fshader-stage=compute", env, "-O", "-o", out, in, NULL};
    if (tilec_sdk_cache_write(in, src, len) != 0) {
        tilec_sdk_error_set("vulkan: cannot write %s: %s", in, strerror(errno));
        st = TILEC_PS_COMPILE_ERROR;
        goto done;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, cc, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        tilec_sdk_error_set("vulkan: cannot run %s: %s", cc, strerror(rc));
        st = TILEC_PS_COMPILE_ERROR;
        goto done;
    }
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        void *text = NULL;
        size_t tl = 0;
        tilec_sdk_file_read(log, &text, &tl);
        if (text && tl > 8000)
            strcpy((char *)text + 8000 - 20, "\n... (log truncated)");
        tilec_sdk_error_set("vulkan: %s failed on the generated GLSL%s%s", cc, text ? ":\n" : "",
                            text ? (const char *)text : "");
        /* the first line the log blames, quoted */
        const char *at = text ? strstr(text, "k.comp:") : NULL;
        long ln = at ? strtol(at + 7, NULL, 10) : 0;
        const char *p = src, *end = src + len;
        for (long i = 1; ln > 0 && i < ln && p < end; i++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            p = nl ? nl + 1 : end;
        }
        if (ln > 0 && p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            int n = (int)((nl ? nl : end) - p);
            tilec_sdk_error_append("\nline %ld: %.*s", ln, n > 400 ? 400 : n, p);
        }
        free(text);
        st = TILEC_PS_COMPILE_ERROR;
        goto done;
    }
    if (tilec_sdk_file_read(out, spv, spv_len) != 0 || *spv_len < 20 || *spv_len % 4 != 0) {
        free(*spv);
        *spv = NULL;
        *spv_len = 0;
        tilec_sdk_error_set("vulkan: %s wrote no valid SPIR-V module", cc);
        st = TILEC_PS_COMPILE_ERROR;
    }
done:
    unlink(in);
    unlink(out);
    unlink(log);
    rmdir(dir);
    return st;
}
