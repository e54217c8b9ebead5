/*
 * cuda_compile.c — from IR text to a cubin, through NVRTC and the cache.
 *
 * Steps: parse the IR text with the SDK reader into the module's own arena
 * (the launcher evaluates grid and shape expressions from it), lower a
 * copy with the SDK's passes for the arch's target description
 * (cuda_lower), print it as CUDA C++ (the SIMT kit's CUDA dialect,
 * cuda_kit.c), then find the
 * cubin in the kernel cache or compile it with NVRTC (--gpu-architecture=sm_XY, -default-device,
 * -std=c++17, --use_fast_math off: NaN and infinity keep their meaning)
 * and fetch it with nvrtcGetCUBIN.  No driver is needed here, so
 * `tilec compile --backend cuda --arch sm_90 --emit binary` works on a
 * machine without a GPU.
 *
 * Cache: when the host gave a directory, the key is the SHA-256 of the
 * plugin version, the NVRTC version, the target, the options and the
 * generated source; the entry DIR/cuda-<hex>.cubin is written atomically.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_internal.h"
#include "tilec/ir_walk.h"
#include "tilec/lower.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- compile -------------------------------------------------------------- */

/* The number just before the first `mark` in log ("40 bytes smem"); 0 or -1. */
static int num_before(const char *log, const char *mark, long long *out)
{
    const char *p = strstr(log, mark);
    if (!p)
        return -1;
    const char *e = p;
    while (e > log && e[-1] >= '0' && e[-1] <= '9')
        e--;
    if (e == p)
        return -1;
    *out = strtoll(e, NULL, 10);
    return 0;
}

/* What ptxas reported (-v) in the program log: registers, static shared
 * memory, stack frame (local memory) and spill bytes.  Fields it does not
 * mention stay as they are. */
static void ptxas_info(const char *log, tilec_pmodule_info_t *info)
{
    long long a, b;
    if (!log)
        return;
    if (num_before(log, " registers", &a) == 0)
        info->registers = a;
    if (num_before(log, " bytes smem", &a) == 0)
        info->shared_static_bytes = a;
    if (num_before(log, " bytes stack frame", &a) == 0)
        info->local_bytes = a;
    if (num_before(log, " bytes spill stores", &a) == 0 && num_before(log, " bytes spill loads", &b) == 0)
        info->spill_bytes = a + b;
}

/* The ptxas figures of a cached cubin: a one-line sidecar "R S L P" (-1
 * unknown) next to it. */
static char *info_path(const char *cubin_path)
{
    size_t n = strlen(cubin_path) + 6;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s.info", cubin_path);
    return p;
}

static void info_save(const char *cubin_path, const tilec_pmodule_info_t *i)
{
    char *path = info_path(cubin_path);
    char line[128];
    int n = snprintf(line, sizeof line, "%lld %lld %lld %lld\n", (long long)i->registers,
                     (long long)i->shared_static_bytes, (long long)i->local_bytes,
                     (long long)i->spill_bytes);
    if (path && tilec_sdk_cache_write(path, line, (size_t)n) != 0)
        tilec_shell_log("compile", "cuda: cannot write %s", path);
    free(path);
}

static void info_load(const char *cubin_path, tilec_pmodule_info_t *i)
{
    char *path = info_path(cubin_path);
    void *text = NULL;
    size_t len = 0;
    long long r, s, l, sp;
    if (path && tilec_sdk_file_read(path, &text, &len) == 0 &&
        sscanf(text, "%lld %lld %lld %lld", &r, &s, &l, &sp) == 4) {
        i->registers = r;
        i->shared_static_bytes = s;
        i->local_bytes = l;
        i->spill_bytes = sp;
    }
    free(text);
    free(path);
}

/* NVRTC compile of src for arch into a malloc'd cubin; what ptxas says of
 * it into info. */
static tilec_pstatus_t nvrtc_compile(const cuda_nvrtc_api_t *nv, const char *src,
                                     const char *arch, unsigned opt_level, int fast_math,
                                     const char *extra, void **bin, size_t *bin_len,
                                     tilec_pmodule_info_t *info)
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
    const char *opts[10];
    int no = 0;
    opts[no++] = archopt;
    opts[no++] = "-std=c++17";
    opts[no++] = "-default-device";
    opts[no++] = "--fmad=true";
    opts[no++] = optopt;
    opts[no++] = "-Xptxas=-v"; /* registers, shared memory and spills into the log */
    if (fast_math)
        opts[no++] = "--use_fast_math";
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
    {
        size_t ln = 0;
        char *log = NULL;
        if (nv->GetProgramLogSize(prog, &ln) == NVRTC_SUCCESS && ln > 1 && (log = malloc(ln + 1))) {
            if (nv->GetProgramLog(prog, log) != NVRTC_SUCCESS)
                log[0] = '\0';
            log[ln] = '\0';
            ptxas_info(log, info);
        }
        free(log);
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

/* keeps the attributes of a list that are not lower.* */
static void drop_lower_attrs(int *n, tilec_ir_attr_t *list)
{
    int k = 0;
    for (int i = 0; i < *n; i++)
        if (strncmp(list[i].key, "lower.", 6) != 0)
            list[k++] = list[i];
    *n = k;
}

static int drop_stmt_attrs(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    (void)w;
    drop_lower_attrs(&s->nattrs, s->attrs);
    return TILEC_WALK_CONTINUE;
}

int cuda_lower(tilec_arena_t *a, const tilec_ir_module_t *m, const char *arch, tilec_ir_module_t **out,
               char *err, size_t errlen)
{
    const tilec_target_desc_t *t = cuda_lower_desc(arch);
    char *text = tilec_ir_print(m);
    if (!t || !text) {
        free(text);
        snprintf(err, errlen, t ? "out of memory" : "no target description for '%s'", arch);
        return -1;
    }
    int rc = tilec_ir_read(a, text, strlen(text), out, err, errlen);
    free(text);
    if (rc != 0)
        return -1;
    /* Placement is this target's to decide: an input that is lowered
     * already (IR 1.1, for another target perhaps) keeps its statements
     * (async copies, rings, barriers) but loses its layouts and lower.*
     * decisions, which the passes make again, consistently for the
     * printer. */
    tilec_ir_kernel_t *k = (*out)->kernel;
    for (int i = 0; i < k->nbufs; i++) {
        k->bufs[i]->layout = NULL;
        drop_lower_attrs(&k->bufs[i]->nattrs, k->bufs[i]->attrs);
    }
    tilec_ir_walk_t w;
    memset(&w, 0, sizeof w);
    w.stmt_pre = drop_stmt_attrs;
    if (tilec_ir_walk_block(&w, &k->body) < 0) {
        snprintf(err, errlen, "statements nested too deeply");
        return -1;
    }
    tilec_lower_status_t st;
    if (tilec_lower_module(a, *out, t, NULL, &st) != TILEC_LOWER_OK) {
        snprintf(err, errlen, "%s", st.msg);
        return -1;
    }
    return 0;
}

/* TILEC_CUDA_SOURCE=FILE: NVRTC compiles FILE instead of the printed source
 * (an edited `tilec compile --emit source`), for studying a kernel by hand,
 * as Triton's TRITON_KERNEL_OVERRIDE does.  Everything the launcher takes
 * from the lowering stays the printer's (kernel names, parameters, block,
 * grid, dynamic shared memory), so FILE must keep them; the cache key
 * covers the source, so an edit compiles anew.  Each compile says so on
 * stderr: a replaced kernel must never pass for tilec's own. */
static tilec_pstatus_t source_override(tilec_shell_module_t *sm)
{
    const char *path = secure_getenv("TILEC_CUDA_SOURCE");
    if (!path || !*path)
        return TILEC_PS_OK;
    void *data = NULL;
    size_t len = 0;
    if (tilec_sdk_file_read(path, &data, &len) != 0) {
        tilec_sdk_error_set("cuda: TILEC_CUDA_SOURCE=%s: cannot read it (%s); unset the variable to "
                            "compile the printed source", path, strerror(errno));
        return TILEC_PS_INVALID_ARGUMENT;
    }
    fprintf(stderr, "tilec: cuda: the kernel source is %s (TILEC_CUDA_SOURCE), not the printer's\n", path);
    free(sm->source);
    sm->source = data;
    sm->source_len = len;
    return TILEC_PS_OK;
}

/* The CUDA C++ of sm for arch and what launch needs to know of it
 * (mod->info, mod->arch); compile and load share it. */
static tilec_pstatus_t codegen_module(tilec_shell_module_t *sm, const char *arch)
{
    if (cuda_arch_sm(arch) < 0) {
        tilec_sdk_error_set("cuda: bad target '%s' (expected sm_XY, e.g. sm_90)", arch ? arch : "");
        return TILEC_PS_INVALID_ARGUMENT;
    }
    cuda_module_t *mod = sm->data;
    snprintf(mod->arch, sizeof mod->arch, "%s", arch);
    char err[512];
    tilec_sdk_str_t src = {0};
    tilec_ir_module_t *low = NULL;
    if (cuda_lower(sm->arena, sm->ir, arch, &low, err, sizeof err) != 0) {
        tilec_sdk_error_set("cuda: %s", err);
        return TILEC_PS_UNSUPPORTED;
    }
    if (cuda_kit_codegen(low, arch, &src, &mod->info, err, sizeof err) != 0) {
        tilec_sdk_error_set("cuda: codegen: %s", err);
        tilec_sdk_str_free(&src);
        return TILEC_PS_UNSUPPORTED;
    }
    sm->source = src.s;
    sm->source_len = src.len;
    if (source_override(sm) != TILEC_PS_OK)
        return TILEC_PS_INVALID_ARGUMENT;
    sm->info.shared_dynamic_bytes = (int64_t)mod->info.smem_bytes;
    sm->info.shared_static_bytes = 0; /* every shared buffer is in the dynamic block */
    return TILEC_PS_OK;
}

/* 1 when data is an ELF object (a cubin) */
static int is_cubin(const void *data, size_t len) { return len > 4 && memcmp(data, "\177ELF", 4) == 0; }

tilec_pstatus_t cuda_load_module(tilec_shell_module_t *sm, const char *arch)
{
    tilec_pstatus_t st = codegen_module(sm, arch);
    if (st != TILEC_PS_OK)
        return st;
    if (!is_cubin(sm->binary, sm->binary_len)) {
        tilec_sdk_error_set("cuda: module_load: the binary is not a cubin");
        return TILEC_PS_INVALID_ARGUMENT;
    }
    tilec_shell_log("compile", "cuda: %zu-byte cubin for %s loaded, no NVRTC run", sm->binary_len, arch);
    return TILEC_PS_OK;
}

tilec_pstatus_t cuda_compile_module(tilec_shell_module_t *sm, const char *arch,
                                    const tilec_pcompile_options_t *opts)
{
    double t0 = now_ms();
    unsigned opt_level = opts->opt_level;
    const char *extra = opts->extra;
    int fast = tilec_shell_option(opts, TILEC_POPT_FAST_MATH, 0) != 0;
    tilec_pstatus_t cst = codegen_module(sm, arch);
    if (cst != TILEC_PS_OK)
        return cst;
    cuda_module_t *mod = sm->data;
    const cuda_nvrtc_api_t *nv = cuda_nvrtc();
    if (!nv)
        return TILEC_PS_UNAVAILABLE;
    char ver[64], o[24];
    snprintf(ver, sizeof ver, "nvrtc %d.%d", nv->major, nv->minor);
    snprintf(o, sizeof o, "O%u%s", opt_level, fast ? " fast-math" : "");
    const char *parts[] = {TILEC_CUDA_PLUGIN_VERSION, ver, arch, o, extra};
    tilec_shell_cache_t ce;
    if (tilec_shell_cache_find(&ce, "cuda", ".cubin", parts, 5, sm, is_cubin)) {
        info_load(ce.path, &sm->info);
        tilec_shell_cache_done(&ce);
        return TILEC_PS_OK;
    }
    tilec_pstatus_t st = nvrtc_compile(nv, sm->source, arch, opt_level, fast, extra, &sm->binary,
                                       &sm->binary_len, &sm->info);
    if (st == TILEC_PS_OK && ce.path && tilec_shell_cache_store(&ce, "cuda", sm) == 0)
        info_save(ce.path, &sm->info);
    tilec_shell_cache_done(&ce);
    if (st != TILEC_PS_OK)
        return st;
    tilec_shell_log("compile", "cuda: nvrtc %s: %zu bytes of source -> %zu bytes of cubin, %llu "
                    "bytes of shared memory (%.1f ms)", arch, sm->source_len, sm->binary_len,
                    (unsigned long long)mod->info.smem_bytes, now_ms() - t0);
    return TILEC_PS_OK;
}
