/*
 * cuda_compile.c — from IR text to a cubin, through NVRTC and the cache.
 *
 * Steps: parse the IR text with the SDK reader into the module's own arena
 * (the launcher evaluates grid and shape expressions from it), generate
 * CUDA C++ (cuda_codegen.c), then find the cubin in the kernel cache or
 * compile it with NVRTC (--gpu-architecture=sm_XY, -default-device,
 * -std=c++17, --use_fast_math off: NaN and infinity keep their meaning)
 * and fetch it with nvrtcGetCUBIN.  No driver is needed here, so
 * `tilec compile --backend cuda --arch sm_90 --emit binary` works on a
 * machine without a GPU.
 *
 * Cache: when the host gave a directory, the key is the SHA-256 of the
 * plugin version, the NVRTC version, the target, the options and the
 * generated source; the entry DIR/cuda-<hex>.cubin is written atomically.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_internal.h"
#include "tilec/sdk.h"

static cuda_host_t host;
static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;

void cuda_host_set(const char *cache_dir, void (*log)(void *, const char *, const char *),
                   void *log_user)
{
    char *d = cache_dir && *cache_dir ? strdup(cache_dir) : NULL;
    pthread_mutex_lock(&host_lock);
    free(host.cache_dir);
    host.cache_dir = d;
    host.log = log;
    host.log_user = log_user;
    pthread_mutex_unlock(&host_lock);
}

void cuda_host_fini(void)
{
    pthread_mutex_lock(&host_lock);
    free(host.cache_dir);
    host.cache_dir = NULL;
    pthread_mutex_unlock(&host_lock);
}

static char *cache_dir_dup(void)
{
    pthread_mutex_lock(&host_lock);
    char *d = host.cache_dir ? strdup(host.cache_dir) : NULL;
    pthread_mutex_unlock(&host_lock);
    return d;
}

void cuda_log(const char *topic, const char *fmt, ...)
{
    pthread_mutex_lock(&host_lock);
    void (*log)(void *, const char *, const char *) = host.log;
    void *user = host.log_user;
    pthread_mutex_unlock(&host_lock);
    if (!log)
        return;
    va_list ap;
    va_start(ap, fmt);
    tilec_sdk_str_t b = {0};
    tilec_sdk_str_vprintf(&b, fmt, ap);
    va_end(ap);
    if (!b.oom && b.s)
        log(user, topic, b.s);
    tilec_sdk_str_free(&b);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int cuda_arch_sm(const char *arch)
{
    if (!arch)
        return -1;
    const char *p = arch;
    if (strncmp(p, "sm_", 3) == 0)
        p += 3;
    else if (strncmp(p, "compute_", 8) == 0)
        p += 8;
    int v = 0, nd = 0;
    while (*p >= '0' && *p <= '9' && nd < 4) {
        v = v * 10 + (*p - '0');
        p++;
        nd++;
    }
    if (nd < 2 || (*p && strcmp(p, "a") != 0 && strcmp(p, "f") != 0))
        return -1;
    return v;
}

int cuda_arch_has_wgmma(const char *arch)
{
    size_t n = arch ? strlen(arch) : 0;
    return cuda_arch_sm(arch) == 90 && n > 0 && arch[n - 1] == 'a';
}

/* ---- integer expressions on the host ---------------------------------------- */

static int eval(const tilec_ir_kernel_t *k, const tilec_ir_expr_t *e, const int64_t *syms,
                int depth, int64_t *out)
{
    int64_t a, b;
    if (!e || depth > 512)
        return -1;
    switch (e->kind) {
    case TILEC_EX_INT:
        *out = e->u.i;
        return 0;
    case TILEC_EX_VAR: {
        if (e->u.var->kind != TILEC_VAR_SYM)
            return -1;
        int s = 0;
        for (int i = 0; i < k->nvars && k->vars[i] != e->u.var; i++)
            if (k->vars[i]->kind == TILEC_VAR_SYM)
                s++;
        *out = syms[s];
        return 0;
    }
    case TILEC_EX_CAST:
        return eval(k, e->u.cast.a, syms, depth + 1, out);
    case TILEC_EX_UNARY:
        if (e->u.un.op != TILEC_UN_NEG || eval(k, e->u.un.a, syms, depth + 1, &a))
            return -1;
        *out = -a;
        return 0;
    case TILEC_EX_SELECT:
        return -1;
    case TILEC_EX_BINARY:
        if (eval(k, e->u.bin.a, syms, depth + 1, &a) || eval(k, e->u.bin.b, syms, depth + 1, &b))
            return -1;
        switch (e->u.bin.op) {
        case TILEC_BIN_ADD: *out = (int64_t)((uint64_t)a + (uint64_t)b); return 0;
        case TILEC_BIN_SUB: *out = (int64_t)((uint64_t)a - (uint64_t)b); return 0;
        case TILEC_BIN_MUL: *out = (int64_t)((uint64_t)a * (uint64_t)b); return 0;
        case TILEC_BIN_MIN: *out = a < b ? a : b; return 0;
        case TILEC_BIN_MAX: *out = a > b ? a : b; return 0;
        case TILEC_BIN_DIV:
            if (b == 0 || (a == INT64_MIN && b == -1))
                return -1;
            *out = a / b;
            return 0;
        case TILEC_BIN_FLOORDIV:
        case TILEC_BIN_FLOORMOD: {
            if (b == 0 || (a == INT64_MIN && b == -1))
                return -1;
            int64_t q = a / b, r = a % b;
            if (r != 0 && ((r < 0) != (b < 0))) {
                q--;
                r += b;
            }
            *out = e->u.bin.op == TILEC_BIN_FLOORDIV ? q : r;
            return 0;
        }
        default:
            return -1;
        }
    default:
        return -1;
    }
}

int cuda_eval_int(const tilec_ir_kernel_t *k, const tilec_ir_expr_t *e, const int64_t *syms,
                  int64_t *out)
{
    return eval(k, e, syms, 0, out);
}

/* ---- compile -------------------------------------------------------------- */

void cuda_module_free(tilec_pmodule_t *mod)
{
    if (!mod)
        return;
    mod->magic = 0;
    tilec_arena_destroy(&mod->arena);
    free(mod->source);
    free(mod->binary);
    free(mod);
}

/* NVRTC compile of src for arch into a malloc'd cubin. */
static tilec_pstatus_t nvrtc_compile(const cuda_nvrtc_api_t *nv, const char *src,
                                     const char *arch, unsigned opt_level, const char *extra,
                                     void **bin, size_t *bin_len)
{
    nvrtcProgram prog = NULL;
    nvrtcResult r = nv->CreateProgram(&prog, src, "tilec_kernel.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        tilec_sdk_error_set("cuda: nvrtcCreateProgram failed: %s", nv->GetErrorString(r));
        return r == 1 ? TILEC_PS_OUT_OF_MEMORY : TILEC_PS_COMPILE_ERROR;
    }
    char archopt[64], optopt[32];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    snprintf(optopt, sizeof optopt, "-Xptxas=-O%u", opt_level > 3 ? 3 : opt_level);
    const char *opts[8];
    int no = 0;
    opts[no++] = archopt;
    opts[no++] = "-std=c++17";
    opts[no++] = "-default-device";
    opts[no++] = "--fmad=true";
    opts[no++] = optopt;
    if (extra && *extra)
        opts[no++] = extra;
    r = nv->CompileProgram(prog, no, opts);
    if (r != NVRTC_SUCCESS) {
        size_t ln = 0;
        char *log = NULL;
        if (nv->GetProgramLogSize(prog, &ln) == NVRTC_SUCCESS && ln > 1 && (log = malloc(ln + 1))) {
            if (nv->GetProgramLog(prog, log) != NVRTC_SUCCESS)
                log[0] = '\0';
            log[ln] = '\0';
            /* one line: the first error */
            char *first = strstr(log, "error");
            char *msg = first ? first : log;
            msg[strcspn(msg, "\n")] = '\0';
        }
        tilec_sdk_error_set("cuda: nvrtc (%s): %s%s%s", arch, nv->GetErrorString(r),
                            log && *log ? ": " : "", log ? log : "");
        /* quote the generated line the first error points at */
        const char *lp = log ? strstr(log, ".cu(") : NULL;
        long ln_no = lp ? strtol(lp + 4, NULL, 10) : 0;
        const char *q = src;
        for (long i = 1; ln_no > 0 && i < ln_no && q; i++) {
            q = strchr(q, '\n');
            q = q ? q + 1 : NULL;
        }
        if (ln_no > 0 && q) {
            while (*q == ' ')
                q++;
            int len = (int)strcspn(q, "\n");
            tilec_sdk_error_append(" [line %ld: %.*s%s]", ln_no, len > 300 ? 300 : len, q,
                                   len > 300 ? "..." : "");
        }
        free(log);
        nv->DestroyProgram(&prog);
        return TILEC_PS_COMPILE_ERROR;
    }
    size_t n = 0;
    r = nv->GetCUBINSize(prog, &n);
    if (r != NVRTC_SUCCESS || n == 0) {
        tilec_sdk_error_set("cuda: nvrtcGetCUBINSize failed for %s: %s (a virtual compute_ "
                            "target gives PTX only)", arch, nv->GetErrorString(r));
        nv->DestroyProgram(&prog);
        return TILEC_PS_COMPILE_ERROR;
    }
    char *b = malloc(n);
    if (!b) {
        nv->DestroyProgram(&prog);
        tilec_sdk_error_set("cuda: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    r = nv->GetCUBIN(prog, b);
    nv->DestroyProgram(&prog);
    if (r != NVRTC_SUCCESS) {
        free(b);
        tilec_sdk_error_set("cuda: nvrtcGetCUBIN failed: %s", nv->GetErrorString(r));
        return TILEC_PS_COMPILE_ERROR;
    }
    *bin = b;
    *bin_len = n;
    return TILEC_PS_OK;
}

tilec_pstatus_t cuda_compile_module(const char *ir, size_t ir_len, const char *arch,
                                    unsigned opt_level, const char *extra,
                                    tilec_pmodule_t **out)
{
    double t0 = now_ms();
    int sm = cuda_arch_sm(arch);
    if (sm < 0) {
        tilec_sdk_error_set("cuda: bad target '%s' (expected sm_XY, e.g. sm_90)", arch ? arch : "");
        return TILEC_PS_INVALID_ARGUMENT;
    }
    tilec_pmodule_t *mod = calloc(1, sizeof *mod);
    if (!mod) {
        tilec_sdk_error_set("cuda: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    mod->magic = CUDA_MOD_MAGIC;
    tilec_arena_init(&mod->arena);
    snprintf(mod->arch, sizeof mod->arch, "%s", arch);
    tilec_ir_module_t *m = NULL;
    char err[512];
    if (tilec_ir_read(&mod->arena, ir, ir_len, &m, err, sizeof err) != 0 || !m || !m->kernel) {
        tilec_sdk_error_set("cuda: bad tile IR: %s", m ? err : err);
        cuda_module_free(mod);
        return TILEC_PS_INVALID_ARGUMENT;
    }
    mod->k = m->kernel;
    mod->nparams = (uint32_t)m->kernel->nparams;
    for (int i = 0; i < m->kernel->nvars; i++)
        if (m->kernel->vars[i]->kind == TILEC_VAR_SYM)
            mod->nsyms++;
    tilec_sdk_str_t src = {0};
    if (cuda_codegen(m, sm, cuda_arch_has_wgmma(arch), &src, &mod->info, err, sizeof err) != 0) {
        tilec_sdk_error_set("cuda: codegen: %s", err);
        tilec_sdk_str_free(&src);
        cuda_module_free(mod);
        return TILEC_PS_UNSUPPORTED;
    }
    mod->source = src.s;
    mod->source_len = src.len;
    const cuda_nvrtc_api_t *nv = cuda_nvrtc();
    if (!nv) {
        cuda_module_free(mod);
        return TILEC_PS_UNAVAILABLE;
    }
    char *dir = cache_dir_dup();
    char *path = NULL, key[65] = "";
    if (dir) {
        tilec_sha256_t h;
        uint8_t dg[32];
        char hex[65], ver[64];
        snprintf(ver, sizeof ver, "nvrtc %d.%d", nv->major, nv->minor);
        tilec_sha256_init(&h);
        tilec_sha256_update(&h, "tilec-cuda\n", 11);
        tilec_sha256_update(&h, TILEC_CUDA_PLUGIN_VERSION, sizeof TILEC_CUDA_PLUGIN_VERSION);
        tilec_sha256_update(&h, ver, strlen(ver) + 1);
        tilec_sha256_update(&h, arch, strlen(arch) + 1);
        char o[16];
        snprintf(o, sizeof o, "O%u", opt_level);
        tilec_sha256_update(&h, o, strlen(o) + 1);
        tilec_sha256_update(&h, extra ? extra : "", extra ? strlen(extra) + 1 : 1);
        tilec_sha256_update(&h, mod->source, mod->source_len);
        tilec_sha256_final(&h, dg);
        tilec_sha256_hex(dg, hex);
        path = tilec_sdk_cache_path(dir, "cuda-", hex, ".cubin");
        memcpy(key, hex, sizeof key);
        char why[256];
        tilec_sdk_cache_result_t cr =
            path ? tilec_sdk_cache_load(path, key, &mod->binary, &mod->binary_len, why, sizeof why)
                 : TILEC_SDK_CACHE_MISS;
        if (cr == TILEC_SDK_CACHE_HIT && mod->binary_len > 4 && memcmp(mod->binary, "\177ELF", 4) == 0) {
            cuda_log("compile", "cuda: cache hit %s (%.1f ms)", path, now_ms() - t0);
            free(path);
            free(dir);
            *out = mod;
            return TILEC_PS_OK;
        }
        if (cr == TILEC_SDK_CACHE_BAD)
            cuda_log("compile", "cuda: cache entry %s rejected: %s; removed, rebuilding", path, why);
        free(mod->binary);
        mod->binary = NULL;
        mod->binary_len = 0;
    }
    tilec_pstatus_t st = nvrtc_compile(nv, mod->source, arch, opt_level, extra, &mod->binary,
                                       &mod->binary_len);
    if (st == TILEC_PS_OK && path) {
        if (tilec_sdk_cache_store(path, key, mod->binary, mod->binary_len) != 0)
            cuda_log("compile", "cuda: cannot write cache entry %s", path);
    }
    free(path);
    free(dir);
    if (st != TILEC_PS_OK) {
        cuda_module_free(mod);
        return st;
    }
    cuda_log("compile", "cuda: nvrtc %s: %zu bytes of source -> %zu bytes of cubin, %llu bytes "
             "of shared memory (%.1f ms)", arch, mod->source_len, mod->binary_len,
             (unsigned long long)mod->info.smem_bytes, now_ms() - t0);
    *out = mod;
    return TILEC_PS_OK;
}
