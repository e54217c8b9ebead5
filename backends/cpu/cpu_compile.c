/*
 * cpu_compile.c — from IR text to a loaded shared object.
 *
 * Steps: parse the IR text (SDK reader, private arena), generate C
 * (cpu_codegen.c), then either find the shared object in the kernel cache
 * or run the system C compiler ($CC, default "cc", spawned directly with an
 * argument vector, never through a shell) and dlopen the result.
 *
 * Cache: when the host gave a cache directory, the key is the SHA-256 of
 * the IR text, the generated C, the plugin version, the compiler identity
 * (first line of `$CC --version`, computed once per process, and the
 * flags $CC itself carries), the host
 * CPU's feature flags (the code is built with -march=native) and the
 * compiler flags; the entry
 * is DIR/cpu-<hex>.so, written atomically (temp file + rename).  A hit
 * skips the compiler entirely.  Without a cache the compiler works in a
 * private temporary directory that is removed once the object is loaded.
 *
 * Flags: -O3 -march=native -fPIC -shared -std=c11 -ffp-contract=fast
 * -fno-math-errno -fwrapv (IR integers wrap; C's signed overflow is UB);
 * the fast-math option adds only what keeps the kernel's meaning (see
 * below).  Never -ffast-math: NaN and infinity must keep their IEEE
 * meaning (T.infinity, max with -inf); contraction into FMA is allowed, as
 * GPU compilers do by default.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpu_internal.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"

extern char **environ;

/* ---- the compiler command --------------------------------------------------- */

typedef struct argv_list {
    char **v;
    int n, cap;
    int oom;
} argv_list_t;

static void argv_push(argv_list_t *a, const char *s)
{
    if (a->oom)
        return;
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? a->cap * 2 : 16;
        char **v = realloc(a->v, sizeof(char *) * (size_t)cap);
        if (!v) {
            a->oom = 1;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    char *d = strdup(s);
    if (!d) {
        a->oom = 1;
        return;
    }
    a->v[a->n++] = d;
    a->v[a->n] = NULL;
}

/* Appends the blank-separated words of s. */
static void argv_split(argv_list_t *a, const char *s)
{
    while (s && *s) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        const char *e = s;
        while (*e && *e != ' ' && *e != '\t' && *e != '\n')
            e++;
        if (e > s) {
            char *w = strndup(s, (size_t)(e - s));
            if (!w) {
                a->oom = 1;
                return;
            }
            argv_push(a, w);
            free(w);
        }
        s = e;
    }
}

static void argv_free(argv_list_t *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof *a);
}

static const char *cc_env(void)
{
    const char *cc = secure_getenv("CC");
    return cc && *cc ? cc : "cc";
}

/* 1 when prog (a name looked up in PATH, or a path) is executable. */
static int program_exists(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0;
    const char *path = secure_getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    size_t plen = strlen(prog);
    while (*path) {
        const char *e = strchr(path, ':');
        size_t n = e ? (size_t)(e - path) : strlen(path);
        char *full = malloc(n + plen + 2);
        if (!full)
            return 0;
        if (n == 0)
            snprintf(full, plen + 3, "./%s", prog);
        else
            snprintf(full, n + plen + 2, "%.*s/%s", (int)n, path, prog);
        struct stat st;
        int ok = stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0;
        free(full);
        if (ok)
            return 1;
        if (!e)
            break;
        path = e + 1;
    }
    return 0;
}

int cpu_compiler_find(const char **why)
{
    argv_list_t a = {0};
    argv_split(&a, cc_env());
    int ok = !a.oom && a.n > 0 && program_exists(a.v[0]);
    argv_free(&a);
    if (!ok && why)
        *why = "no C compiler found: set CC or install cc (looked up in PATH)";
    return ok ? 0 : -1;
}

/* Runs argv with stdout+stderr captured into *out (malloc'd, NUL-terminated).
 * Returns the exit status (0..255), or -1 when it could not run (errno). */
static int run_capture(char *const *argv, char **out)
{
    *out = NULL;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        errno = rc;
        return -1;
    }
    tilec_sdk_str_t b = {0};
    char buf[4096];
    for (;;) {
        ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        /* keep at most 64 KiB of compiler chatter */
        if (b.len < 65536)
            tilec_sdk_str_putn(&b, buf, (size_t)n);
    }
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            tilec_sdk_str_free(&b);
            return -1;
        }
    }
    *out = b.s ? b.s : strdup("");
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Identity of the compiler: first line of `$CC --version`, once. */
static pthread_mutex_t ident_lock = PTHREAD_MUTEX_INITIALIZER;
static char *ident_cached;

const char *cpu_compiler_identity(void)
{
    pthread_mutex_lock(&ident_lock);
    if (!ident_cached) {
        argv_list_t a = {0};
        argv_split(&a, cc_env());
        argv_push(&a, "--version");
        char *out = NULL;
        int rc = a.oom ? -1 : run_capture(a.v, &out);
        if (rc == 0 && out) {
            size_t n = strcspn(out, "\n");
            ident_cached = strndup(out, n);
        } else {
            ident_cached = strdup(cc_env()); /* unknown version: the name */
        }
        free(out);
        argv_free(&a);
    }
    const char *r = ident_cached ? ident_cached : "unknown";
    pthread_mutex_unlock(&ident_lock);
    return r;
}

/* posix_spawn does not run atfork handlers, so the spawn that
 * cpu_compiler_identity makes under ident_lock cannot deadlock here. */
void cpu_compile_fork_prepare(void)
{
    pthread_mutex_lock(&ident_lock);
}

void cpu_compile_fork_parent(void)
{
    pthread_mutex_unlock(&ident_lock);
}

void cpu_compile_fork_child(void) { cpu_compile_fork_parent(); }

/* The "flags" line of /proc/cpuinfo, malloc'd ("" when unknown). */
static char *cpu_flags(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char *line = NULL, *r = NULL;
    size_t cap = 0;
    if (f) {
        while (getline(&line, &cap, f) > 0) {
            if (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0) {
                r = strdup(line);
                break;
            }
        }
        fclose(f);
    }
    free(line);
    return r ? r : strdup("");
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- modules ------------------------------------------------------------------ */

void cpu_module_free(tilec_shell_module_t *sm)
{
    cpu_module_t *mod = sm->data;
    if (mod->dl)
        dlclose(mod->dl);
    mod->dl = NULL;
}

/* dlopen path and bind the module's entry points; 0 or -1 (error set). */
static int module_bind(cpu_module_t *mod, const char *path)
{
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        tilec_sdk_error_set("cpu: cannot load compiled kernel %s: %s", path, e ? e : "?");
        return -1;
    }
    cpu_abi_fn abi = (cpu_abi_fn)dlsym(dl, "tilec_cpu_module_abi");
    cpu_count_fn np = (cpu_count_fn)dlsym(dl, "tilec_nparams");
    cpu_count_fn ns = (cpu_count_fn)dlsym(dl, "tilec_nsyms");
    mod->grid = (cpu_grid_fn)dlsym(dl, "tilec_grid");
    mod->scratch_size = (cpu_scratch_fn)dlsym(dl, "tilec_scratch_size");
    mod->param_bytes = (cpu_param_bytes_fn)dlsym(dl, "tilec_param_bytes");
    mod->packed4 = (cpu_packed4_fn)dlsym(dl, "tilec_param_packed4");
    mod->block = (cpu_block_fn)dlsym(dl, "tilec_block");
    cpu_group_fn grp = (cpu_group_fn)dlsym(dl, "tilec_group");
    mod->group[0] = mod->group[1] = 1;
    if (grp)
        grp(mod->group);
    if (!abi || !np || !ns || !mod->grid || !mod->scratch_size || !mod->param_bytes ||
        !mod->packed4 || !mod->block || abi() != TILEC_CPU_MODULE_ABI || !grp || mod->group[0] < 1 || mod->group[1] < 1 ||
        mod->group[0] > 64 || mod->group[1] > 64) {
        dlclose(dl);
        tilec_sdk_error_set("cpu: %s is not a kernel of this plugin version", path);
        return -1;
    }
    mod->nparams = np();
    mod->nsyms = ns();
    mod->dl = dl;
    return 0;
}

/* The shared object in sm->binary (a kernel bundle's), bound without the
 * compiler: written to an anonymous memory file and dlopen'ed from there,
 * so nothing lands on disk.  Its entry points must match the IR's counts. */
tilec_pstatus_t cpu_load_module(tilec_shell_module_t *sm)
{
    cpu_module_t *mod = sm->data;
    char path[64];
    size_t done = 0;
    int fd = memfd_create("tilec-kernel", MFD_CLOEXEC);
    if (fd < 0) {
        tilec_sdk_error_set("cpu: module_load: memfd_create: %s", strerror(errno));
        return TILEC_PS_LAUNCH_ERROR;
    }
    while (done < sm->binary_len) {
        ssize_t w = write(fd, (const char *)sm->binary + done, sm->binary_len - done);
        if (w <= 0) {
            tilec_sdk_error_set("cpu: module_load: cannot write the kernel: %s", strerror(errno));
            close(fd);
            return TILEC_PS_LAUNCH_ERROR;
        }
        done += (size_t)w;
    }
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int rc = module_bind(mod, path);
    close(fd);
    if (rc != 0) {
        return TILEC_PS_INVALID_ARGUMENT;
    }
    if (mod->nparams != sm->nparams || mod->nsyms != sm->nsyms) {
        tilec_sdk_error_set("cpu: module_load: the binary takes %u tensors and %u symbols, the IR %u and %u",
                            mod->nparams, mod->nsyms, sm->nparams, sm->nsyms);
        return TILEC_PS_INVALID_ARGUMENT;
    }
    tilec_shell_log("compile", "cpu: kernel loaded from a %zu-byte binary, no compiler run", sm->binary_len);
    return TILEC_PS_OK;
}

/* Removes dir and the files we put in it. */
static void rm_tmpdir(const char *dir)
{
    static const char *names[] = {"kernel.c", "kernel.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *p = tilec_sdk_cache_path(dir, "", names[i], "");
        if (p)
            unlink(p);
        free(p);
    }
    rmdir(dir);
}

static int arch_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.' || *s == '+'))
            return 0;
    return 1;
}

tilec_pstatus_t cpu_compile_module(tilec_shell_module_t *sm, const tilec_pcompile_options_t *opts)
{
    tilec_pstatus_t st = TILEC_PS_INTERNAL;
    char err[512];
    tilec_sdk_str_t src = {0};
    argv_list_t flags = {0}, cmd = {0};
    char *cache_path = NULL, *tmpdir = NULL, *cc_out = NULL, *cflags = NULL;
    char cache_key[65] = "";
    char *cache_dir = tilec_shell_cache_dir();
    cpu_module_t *mod = sm->data;
    double t0 = now_ms();

    if (cpu_codegen(sm->ir, &src, err, sizeof err) != 0) {
        tilec_sdk_error_set("cpu: cannot generate code: %s", err);
        st = TILEC_PS_INVALID_ARGUMENT;
        goto done;
    }
    sm->source = src.s;
    sm->source_len = src.len;
    src.s = NULL;

    /* flags */
    unsigned opt = opts->opt_level;
    char obuf[8];
    snprintf(obuf, sizeof obuf, "-O%u", opt);
    argv_push(&flags, obuf);
    const char *arch = opts->arch ? opts->arch : "native";
    if (!arch_ok(arch)) {
        tilec_sdk_error_set("cpu: bad target architecture \"%s\"", arch);
        st = TILEC_PS_INVALID_ARGUMENT;
        goto done;
    }
    char abuf[96];
    snprintf(abuf, sizeof abuf, "-march=%s", arch);
    argv_push(&flags, abuf);
    argv_push(&flags, "-fPIC");
    argv_push(&flags, "-shared");
    argv_push(&flags, "-std=c11");
    argv_push(&flags, "-ffp-contract=fast");
    argv_push(&flags, "-fno-math-errno");
    /* tile IR integers wrap (two's complement, docs/ir.md); in C a signed
     * overflow is undefined and -O3 exploits it */
    argv_push(&flags, "-fwrapv");
    /* TILEC_POPT_FAST_MATH (TileLang's TL_ENABLE_FAST_MATH): the parts of
     * -ffast-math that keep the kernel's meaning, as CUDA's --use_fast_math
     * keeps infinities and NaN.  Not -ffinite-math-only (kernels fill with
     * -T.infinity() and take max over it), not -fassociative-math (it folds
     * the prelude's (x + 0x1.8p23f) - 0x1.8p23f rounding to x, so exp2 went
     * wrong), and not -ffast-math itself (it links crtfastmath.o, which turns
     * on flush-to-zero for the whole process when the kernel is loaded). */
    if (tilec_shell_option(opts, TILEC_POPT_FAST_MATH, 0)) {
        argv_push(&flags, "-fno-signed-zeros");
        argv_push(&flags, "-fno-trapping-math");
        argv_push(&flags, "-freciprocal-math");
    }
    if (opts->extra)
        argv_split(&flags, opts->extra);
    if (flags.oom) {
        st = TILEC_PS_OUT_OF_MEMORY;
        tilec_sdk_error_set("cpu: out of memory");
        goto done;
    }

    /* cache lookup */
    if (cache_dir) {
        tilec_sha256_t h;
        uint8_t dg[32];
        char hex[65];
        const char *ident = cpu_compiler_identity();
        cflags = cpu_flags();
        tilec_sha256_init(&h);
        tilec_sha256_update(&h, "tilec-cpu", 10);
        tilec_sha256_update(&h, TILEC_CPU_PLUGIN_VERSION, sizeof TILEC_CPU_PLUGIN_VERSION);
        tilec_sha256_update(&h, ident, strlen(ident) + 1);
        /* the flags $CC carries ("clang -fsanitize=address" builds objects
         * that only load into an instrumented host), not its path */
        argv_list_t ccv = {0};
        argv_split(&ccv, cc_env());
        for (int i = 1; i < ccv.n; i++)
            tilec_sha256_update(&h, ccv.v[i], strlen(ccv.v[i]) + 1);
        int cc_oom = ccv.oom;
        argv_free(&ccv);
        if (cc_oom) {
            st = TILEC_PS_OUT_OF_MEMORY;
            tilec_sdk_error_set("cpu: out of memory");
            goto done;
        }
        if (cflags)
            tilec_sha256_update(&h, cflags, strlen(cflags) + 1);
        for (int i = 0; i < flags.n; i++)
            tilec_sha256_update(&h, flags.v[i], strlen(flags.v[i]) + 1);
        tilec_sha256_update(&h, "\n", 1);
        tilec_sha256_update(&h, sm->ir_text, sm->ir_len);
        /* the generated C too: a changed code generator never reuses an
         * entry made by an older one, even at the same plugin version */
        tilec_sha256_update(&h, "\n", 1);
        tilec_sha256_update(&h, sm->source, sm->source_len);
        tilec_sha256_final(&h, dg);
        tilec_sha256_hex(dg, hex);
        cache_path = tilec_sdk_cache_path(cache_dir, "cpu-", hex, ".so");
        memcpy(cache_key, hex, sizeof cache_key);
        char why[256];
        tilec_sdk_cache_result_t cr =
            cache_path ? tilec_sdk_cache_load(cache_path, hex, &sm->binary, &sm->binary_len, why,
                                              sizeof why)
                       : TILEC_SDK_CACHE_MISS;
        if (cr == TILEC_SDK_CACHE_HIT) {
            /* verified: payload, size and key match the entry's trailer */
            if (module_bind(mod, cache_path) == 0) {
                tilec_shell_log("compile", "cpu: cache hit %s (%.1f ms)", cache_path, now_ms() - t0);
                st = TILEC_PS_OK;
                goto done;
            }
            tilec_shell_log("compile", "cpu: cache entry %s unusable (%s); recompiling", cache_path,
                    tilec_sdk_error_get());
            free(sm->binary);
            sm->binary = NULL;
            sm->binary_len = 0;
        } else if (cr == TILEC_SDK_CACHE_BAD) {
            tilec_shell_log("compile", "cpu: cache entry %s rejected: %s; removed, recompiling",
                            cache_path, why);
        } else if (cache_path) {
            tilec_shell_log("compile", "cpu: cache miss %s", cache_path);
        }
    }

    /* compile in a private temporary directory */
    {
        const char *why = NULL;
        if (cpu_compiler_find(&why) != 0) {
            tilec_sdk_error_set("cpu: %s ('%s'; a kernel bundle from `tilec bundle` runs without one)",
                                why, cc_env());
            st = TILEC_PS_COMPILE_ERROR;
            goto done;
        }
    }
    {
        const char *tmp = secure_getenv("TMPDIR");
        if (!tmp || !*tmp)
            tmp = "/tmp";
        tmpdir = tilec_sdk_cache_path(tmp, "", "tilec-cpu-XXXXXX", "");
        if (!tmpdir || !mkdtemp(tmpdir)) {
            tilec_sdk_error_set("cpu: cannot create a temporary directory in %s: %s", tmp,
                                strerror(errno));
            st = TILEC_PS_COMPILE_ERROR;
            free(tmpdir);
            tmpdir = NULL;
            goto done;
        }
        char *cpath = tilec_sdk_cache_path(tmpdir, "", "kernel.c", "");
        char *sopath = tilec_sdk_cache_path(tmpdir, "", "kernel.so", "");
        if (!cpath || !sopath || tilec_sdk_cache_write(cpath, sm->source, sm->source_len) != 0) {
            tilec_sdk_error_set("cpu: cannot write the generated source: %s", strerror(errno));
            st = TILEC_PS_COMPILE_ERROR;
            free(cpath);
            free(sopath);
            goto done;
        }
        argv_split(&cmd, cc_env());
        for (int i = 0; i < flags.n; i++)
            argv_push(&cmd, flags.v[i]);
        argv_push(&cmd, "-o");
        argv_push(&cmd, sopath);
        argv_push(&cmd, cpath);
        argv_push(&cmd, "-lm");
        if (cmd.oom || cmd.n == 0) {
            st = TILEC_PS_OUT_OF_MEMORY;
            tilec_sdk_error_set("cpu: out of memory");
            free(cpath);
            free(sopath);
            goto done;
        }
        tilec_sdk_str_t cl = {0};
        for (int i = 0; i < cmd.n; i++)
            tilec_sdk_str_printf(&cl, "%s%s", i ? " " : "", cmd.v[i]);
        tilec_shell_log("compile", "cpu: %s", cl.s ? cl.s : "");
        double t1 = now_ms();
        int rc = run_capture(cmd.v, &cc_out);
        if (rc != 0) {
            if (rc < 0)
                tilec_sdk_error_set("cpu: cannot run the C compiler \"%s\": %s", cmd.v[0],
                                    strerror(errno));
            else
                tilec_sdk_error_set("cpu: C compiler failed (status %d): %s\n%s", rc,
                                    cl.s ? cl.s : "", cc_out ? cc_out : "");
            tilec_sdk_str_free(&cl);
            st = TILEC_PS_COMPILE_ERROR;
            free(cpath);
            free(sopath);
            goto done;
        }
        tilec_sdk_str_free(&cl);
        tilec_shell_log("compile", "cpu: compiled in %.1f ms", now_ms() - t1);
        if (tilec_sdk_file_read(sopath, &sm->binary, &sm->binary_len) != 0) {
            tilec_sdk_error_set("cpu: compiler produced no output %s: %s", sopath,
                                strerror(errno));
            st = TILEC_PS_COMPILE_ERROR;
            free(cpath);
            free(sopath);
            goto done;
        }
        if (module_bind(mod, sopath) != 0) {
            st = TILEC_PS_COMPILE_ERROR;
            free(cpath);
            free(sopath);
            goto done;
        }
        free(cpath);
        free(sopath);
        if (cache_path) {
            if (tilec_sdk_cache_store(cache_path, cache_key, sm->binary, sm->binary_len) != 0)
                tilec_shell_log("compile", "cpu: cannot write cache entry %s: %s", cache_path,
                        strerror(errno));
            else
                tilec_shell_log("compile", "cpu: cached %s", cache_path);
        }
        st = TILEC_PS_OK;
    }

done:
    if (tmpdir) {
        rm_tmpdir(tmpdir);
        free(tmpdir);
    }
    free(cache_path);
    free(cache_dir);
    free(cc_out);
    free(cflags);
    argv_free(&flags);
    argv_free(&cmd);
    tilec_sdk_str_free(&src);
    return st;
}
