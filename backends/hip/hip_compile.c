/*
 * hip_compile.c — from IR to an AMD code object, through the kit and hiprtc.
 *
 * Steps: parse --arch (hip_target.c), print the kernel with the kit and
 * the HIP dialect (hip_codegen.c), check what the kernel needs against the
 * target (threads per block, 64 KiB of LDS), then find the code object in
 * the kernel cache or compile it with hiprtc (--offload-arch=ARCH, -O3 or
 * the asked level; RDNA pinned to wave32, CDNA to wave64) and fetch it
 * with hiprtcGetCode.  No GPU and no HIP runtime are needed here, so
 * `tilec compile --backend hip --arch gfx90a --emit binary` works on any
 * machine with hiprtc.
 *
 * Arch check: hiprtc of ROCm 5.2 (Debian 12's) aborts the process when the
 * processor is one it does not know (gfx942, gfx1100: "munmap_chunk():
 * invalid pointer").  So before calling it, the processor must be in the
 * list of ISAs of the code-object manager hiprtc compiles through
 * (hip_dl.c); otherwise compile fails with a message naming what this
 * hiprtc knows.  Without that list nothing is compiled (the message says
 * why), rather than risk the host process.
 *
 * Cache: the plugin shell's (tilec_shell_cache_find): the key covers the
 * plugin version, the hiprtc library and version, the arch, the options
 * and the source; the entry is DIR/hip-<hex>.hsaco.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hip_internal.h"
#include "tilec/lower.h"

#define MAX_LOG 4000

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* 1 when data is an AMDGPU ELF code object (EM_AMDGPU = 224). */
static int is_code_object(const void *data, size_t len)
{
    const unsigned char *p = data;
    return p && len > 64 && memcmp(p, "\177ELF", 4) == 0 && p[18] == 224 && p[19] == 0;
}

/* The kit's source for arch into sm (source, info) and mod: the module
 * lowered for the arch's description (a lowered .tir as it is), printed
 * by the kit with the HIP dialect. */
static tilec_pstatus_t codegen(tilec_shell_module_t *sm, const char *arch)
{
    hip_module_t *mod = sm->data;
    if (hip_arch_parse(arch, &mod->arch) != 0)
        return TILEC_PS_INVALID_ARGUMENT;
    const tilec_ir_kernel_t *k = sm->kernel;
    tilec_arena_t ar;
    tilec_arena_init(&ar);
    tilec_pstatus_t st;
    const tilec_ir_module_t *lm = tilec_lower_shell_module("hip", mod->arch.desc, sm, &ar, &st);
    if (!lm) {
        tilec_arena_destroy(&ar);
        return st; /* "hip: lower: ..." */
    }
    hip_gen_t g;
    memset(&g, 0, sizeof g);
    g.arch = mod->arch;
    tilec_simt_dialect_t dl;
    hip_dialect(&g, &dl);
    tilec_simt_result_t res;
    memset(&res, 0, sizeof res);
    res.struct_size = sizeof res;
    char err[1024];
    int gen = tilec_simt_generate(lm, &dl, &res, err, sizeof err);
    tilec_arena_destroy(&ar);
    if (gen != 0) {
        tilec_sdk_error_set("hip: cannot print kernel '%s' for %s: %s", k->name ? k->name : "", mod->arch.name, err);
        return TILEC_PS_UNSUPPORTED;
    }
    sm->source = res.source;
    sm->source_len = res.source_len;
    sm->info.shared_static_bytes = (int64_t)res.shared_bytes;
    sm->info.shared_dynamic_bytes = 0;
    mod->lds_bytes = res.shared_bytes;
    mod->ngemm_mma = g.ngemm_mma;
    const tilec_target_desc_t *t = mod->arch.desc;
    if (res.nthreads > (uint32_t)t->max_threads) {
        tilec_sdk_error_set("hip: kernel '%s' uses %u threads per block; %s allows at most %d", k->name,
                            res.nthreads, mod->arch.name, t->max_threads);
        return TILEC_PS_UNSUPPORTED;
    }
    if (res.shared_bytes > t->smem_optin) {
        tilec_sdk_error_set("hip: kernel '%s' needs %llu bytes of LDS per block; %s has %u (use smaller tiles)",
                            k->name, (unsigned long long)res.shared_bytes, mod->arch.name, t->smem_optin);
        return TILEC_PS_UNSUPPORTED;
    }
    return TILEC_PS_OK;
}

/* 0 when hiprtc knows the processor; -1 with the message set. */
static int arch_known(const hip_state_t *s, const char *proc)
{
    if (!s->isa_ok) {
        tilec_sdk_error_set("hip: cannot tell which processors hiprtc (%s) knows: libamd_comgr.so.3/.2 not "
                            "found; not compiling for %s (hiprtc aborts the process on one it does not know)",
                            s->rtc_path, proc);
        return -1;
    }
    char have[sizeof s->isas + 2], probe[48];
    snprintf(have, sizeof have, ",%s,", s->isas);
    snprintf(probe, sizeof probe, ",%s,", proc);
    if (strstr(have, probe))
        return 0;
    tilec_sdk_error_set("hip: this hiprtc (%s, version %d.%d) cannot compile for %s; it knows %s", s->rtc_path,
                        s->rtc_major, s->rtc_minor, proc, s->isas);
    return -1;
}

/* The first error line of the log, and the generated line it points at. */
static void log_error(const char *arch, const char *what, char *log, const char *src)
{
    char *first = log ? strstr(log, "error") : NULL;
    char *msg = first ? first : log;
    const char *lp = log ? strstr(log, ".hip:") : NULL;
    long ln_no = lp ? strtol(lp + 5, NULL, 10) : 0;
    if (msg)
        msg[strcspn(msg, "\n")] = '\0';
    if (msg && strlen(msg) > MAX_LOG)
        msg[MAX_LOG] = '\0';
    tilec_sdk_error_set("hip: hiprtc (%s): %s%s%s", arch, what, msg && *msg ? ": " : "", msg ? msg : "");
    const char *q = src;
    for (long i = 1; ln_no > 0 && i < ln_no && q; i++) {
        q = strchr(q, '\n');
        q = q ? q + 1 : NULL;
    }
    if (ln_no > 0 && q) {
        while (*q == ' ')
            q++;
        int len = (int)strcspn(q, "\n");
        tilec_sdk_error_append(" [line %ld: %.*s%s]", ln_no, len > 300 ? 300 : len, q, len > 300 ? "..." : "");
    }
}

static tilec_pstatus_t rtc_compile(const hip_state_t *s, const hip_module_t *mod, const char *arch,
                                   const char *src, unsigned opt_level, int fast, const char *extra, void **bin,
                                   size_t *bin_len)
{
    const hip_api_t *a = &s->api;
    hiprtcProgram prog = NULL;
    hiprtcResult r = a->RtcCreateProgram(&prog, src, "tilec_kernel.hip", 0, NULL, NULL);
    if (r != HIPRTC_SUCCESS) {
        tilec_sdk_error_set("hip: hiprtcCreateProgram failed: %s", a->RtcGetErrorString(r));
        return TILEC_PS_COMPILE_ERROR;
    }
    char archopt[64], optopt[8];
    snprintf(archopt, sizeof archopt, "--offload-arch=%s", arch);
    snprintf(optopt, sizeof optopt, "-O%u", opt_level > 3 ? 3 : opt_level);
    const char *opts[10];
    int no = 0;
    opts[no++] = archopt;
    opts[no++] = optopt;
    opts[no++] = mod->arch.wave == 32 ? "-mno-wavefrontsize64" : "-mwavefrontsize64";
    if (fast) {
        /* not -ffast-math: finite-math-only would break -inf masks
         * (tests/lang/fast_math_inf.py) */
        opts[no++] = "-fno-signed-zeros";
        opts[no++] = "-freciprocal-math";
        opts[no++] = "-ffp-contract=fast";
    }
    if (extra && *extra)
        opts[no++] = extra;
    r = a->RtcCompileProgram(prog, no, opts);
    if (r != HIPRTC_SUCCESS) {
        size_t ln = 0;
        char *log = NULL;
        if (a->RtcGetProgramLogSize(prog, &ln) == HIPRTC_SUCCESS && ln > 1 && (log = malloc(ln + 1))) {
            if (a->RtcGetProgramLog(prog, log) != HIPRTC_SUCCESS)
                log[0] = '\0';
            log[ln] = '\0';
        }
        log_error(arch, a->RtcGetErrorString(r), log, src);
        free(log);
        a->RtcDestroyProgram(&prog);
        return TILEC_PS_COMPILE_ERROR;
    }
    size_t n = 0;
    r = a->RtcGetCodeSize(prog, &n);
    char *b = r == HIPRTC_SUCCESS && n > 0 ? malloc(n) : NULL;
    if (!b) {
        tilec_sdk_error_set("hip: hiprtcGetCodeSize (%s): %s", arch,
                            r != HIPRTC_SUCCESS ? a->RtcGetErrorString(r) : n ? "out of memory" : "no code");
        a->RtcDestroyProgram(&prog);
        return n ? TILEC_PS_OUT_OF_MEMORY : TILEC_PS_COMPILE_ERROR;
    }
    r = a->RtcGetCode(prog, b);
    a->RtcDestroyProgram(&prog);
    if (r != HIPRTC_SUCCESS || !is_code_object(b, n)) {
        free(b);
        tilec_sdk_error_set("hip: hiprtcGetCode (%s): %s", arch,
                            r != HIPRTC_SUCCESS ? a->RtcGetErrorString(r) : "not an AMDGPU code object");
        return TILEC_PS_COMPILE_ERROR;
    }
    *bin = b;
    *bin_len = n;
    return TILEC_PS_OK;
}

tilec_pstatus_t hip_compile_module(tilec_shell_module_t *sm, const char *arch, const tilec_pcompile_options_t *opts)
{
    double t0 = now_ms();
    tilec_pstatus_t st = codegen(sm, arch);
    if (st != TILEC_PS_OK)
        return st;
    hip_module_t *mod = sm->data;
    const hip_state_t *s = hip_rtc();
    if (!s)
        return TILEC_PS_UNAVAILABLE;
    if (arch_known(s, mod->arch.name) != 0)
        return TILEC_PS_UNSUPPORTED;
    unsigned opt_level = opts->opt_level;
    int fast = tilec_shell_option(opts, TILEC_POPT_FAST_MATH, 0) != 0;
    const char *extra = opts->extra;
    char ver[300], o[32];
    snprintf(ver, sizeof ver, "%s hiprtc %d.%d", s->rtc_path, s->rtc_major, s->rtc_minor);
    snprintf(o, sizeof o, "O%u%s", opt_level, fast ? " fast-math" : "");
    const char *parts[] = {TILEC_HIP_PLUGIN_VERSION, ver, arch, o, extra};
    tilec_shell_cache_t ce;
    if (tilec_shell_cache_find(&ce, "hip", ".hsaco", parts, 5, sm, is_code_object)) {
        tilec_shell_cache_done(&ce);
        return TILEC_PS_OK;
    }
    st = rtc_compile(s, mod, arch, sm->source, opt_level, fast, extra, &sm->binary, &sm->binary_len);
    if (st == TILEC_PS_OK)
        tilec_shell_cache_store(&ce, "hip", sm);
    tilec_shell_cache_done(&ce);
    if (st == TILEC_PS_OK)
        tilec_shell_log("compile", "hip: hiprtc %s: %zu bytes of source -> %zu-byte code object, %llu bytes of "
                        "LDS, %d GEMMs on matrix cores (%.1f ms)", arch, sm->source_len, sm->binary_len,
                        (unsigned long long)mod->lds_bytes, mod->ngemm_mma, now_ms() - t0);
    return st;
}

tilec_pstatus_t hip_load_module(tilec_shell_module_t *sm, const char *arch)
{
    tilec_pstatus_t st = codegen(sm, arch);
    if (st != TILEC_PS_OK)
        return st;
    if (!is_code_object(sm->binary, sm->binary_len)) {
        tilec_sdk_error_set("hip: module_load: the binary is not an AMDGPU code object");
        return TILEC_PS_INVALID_ARGUMENT;
    }
    tilec_shell_log("compile", "hip: %zu-byte code object for %s loaded, no hiprtc run", sm->binary_len, arch);
    return TILEC_PS_OK;
}
