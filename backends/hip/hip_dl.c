/*
 * hip_dl.c — hiprtc, the HIP runtime and comgr, opened with dlopen.
 *
 * The backend never links ROCm.  hip_internal.h lists every function it
 * calls in one X-macro table, tagged with the library it lives in; this
 * file resolves the rows of each library with the SDK's tilec_dl_resolve.
 * The compiler half and the runtime half are loaded apart, each once per
 * process (pthread_once), because compiling needs no GPU:
 *
 *  - hiprtc: libhiprtc.so.6, libhiprtc.so.5, then libamdhip64.so.6/.5
 *    themselves (ROCm 5.2, Debian 12's, keeps hiprtc inside libamdhip64);
 *    and the ISA list of libamd_comgr.so.3/.2, the code-object manager
 *    hiprtc compiles through.  hiprtc of ROCm 5.2 aborts the whole process
 *    when asked for a processor it does not know (gfx942, gfx1100), so
 *    hip_compile.c checks --arch against this list before calling it;
 *  - runtime: libamdhip64.so.6, then .so.5, then hipInit(0) and
 *    hipGetDeviceCount; no device is a reason ("no AMD GPU"), not an error.
 *
 * Each library is looked for in $ROCM_PATH/lib, through the dynamic
 * loader's search, then in /opt/rocm/lib.  A missing library or symbol is
 * a one-line reason every later call reports again; nothing here prints
 * or aborts.
 *
 * Every ROCm library goes into one private link-map namespace of its own
 * (dlmopen), not the process's: comgr carries LLVM and clang parts that
 * register the same command-line options as the libclang-cpp/libLLVM
 * another plugin brings (PoCL, under the OpenCL plugin), and LLVM aborts
 * the process ("Option ... registered more than once") when both are in
 * one namespace.  In its own namespace ROCm gets its own copies.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_internal.h"

static hip_state_t st;
static pthread_once_t rtc_once = PTHREAD_ONCE_INIT;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

/* The namespace every ROCm library is loaded into (created by the first
 * one that opens). */
static pthread_mutex_t ns_lock = PTHREAD_MUTEX_INITIALIZER;
static int ns_made;
static Lmid_t ns_id;

static void *ns_open(const char *path)
{
    pthread_mutex_lock(&ns_lock);
    void *h = dlmopen(ns_made ? ns_id : LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
    if (h && !ns_made && dlinfo(h, RTLD_DI_LMID, &ns_id) == 0)
        ns_made = 1;
    pthread_mutex_unlock(&ns_lock);
    return h;
}

/* One row array per library, from the same list. */
#define ROW_RT_RT(field, sym) {sym, offsetof(hip_api_t, field)},
#define ROW_RT_RTC(field, sym)
#define ROW_RT_COMGR(field, sym)
#define ROW_RTC_RT(field, sym)
#define ROW_RTC_RTC(field, sym) {sym, offsetof(hip_api_t, field)},
#define ROW_RTC_COMGR(field, sym)
#define ROW_COMGR_RT(field, sym)
#define ROW_COMGR_RTC(field, sym)
#define ROW_COMGR_COMGR(field, sym) {sym, offsetof(hip_api_t, field)},
#define RT_ROW(lib, field, sym, ret, args) ROW_RT_##lib(field, sym)
#define RTC_ROW(lib, field, sym, ret, args) ROW_RTC_##lib(field, sym)
#define COMGR_ROW(lib, field, sym, ret, args) ROW_COMGR_##lib(field, sym)
static const tilec_dl_sym_t rt_syms[] = {HIP_SYMBOLS(RT_ROW)};
static const tilec_dl_sym_t rtc_syms[] = {HIP_SYMBOLS(RTC_ROW)};
static const tilec_dl_sym_t comgr_syms[] = {HIP_SYMBOLS(COMGR_ROW)};
#define NSYMS(a) (sizeof(a) / sizeof((a)[0]))

/* Opens the first of names[] found in $ROCM_PATH/lib, the loader's search
 * or /opt/rocm/lib; path gets the one opened, err the first failure. */
static void *open_first(const char *const *names, size_t n, char *path, size_t plen, char *err, size_t elen)
{
    const char *roots[3] = {secure_getenv("ROCM_PATH"), NULL, "/opt/rocm"};
    for (int r = 0; r < 3; r++) {
        if (r != 1 && (!roots[r] || !*roots[r]))
            continue;
        for (size_t i = 0; i < n; i++) {
            if (r == 1)
                snprintf(path, plen, "%s", names[i]);
            else
                snprintf(path, plen, "%s/lib/%s", roots[r], names[i]);
            void *h = ns_open(path);
            if (h)
                return h;
            const char *e = dlerror();
            if (!err[0] && r == 1)
                snprintf(err, elen, "%s", e ? e : names[i]);
        }
    }
    return NULL;
}

/* The ISAs comgr knows, as "gfx900,gfx90a,..." (target features dropped). */
static void isa_list(void)
{
    size_t n = 0;
    if (st.api.IsaCount(&n) != 0)
        return;
    size_t len = 0;
    st.isas[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL;
        if (st.api.IsaName(i, &name) != 0 || !name)
            continue;
        const char *p = strstr(name, "--"); /* amdgcn-amd-amdhsa--gfx90a:xnack+ */
        p = p ? p + 2 : name;
        size_t k = strcspn(p, ":");
        char one[40];
        if (k == 0 || k >= sizeof one)
            continue;
        memcpy(one, p, k);
        one[k] = '\0';
        /* once each (comgr lists feature variants separately) */
        char probe[44];
        snprintf(probe, sizeof probe, ",%s,", one);
        char have[sizeof st.isas + 2];
        snprintf(have, sizeof have, ",%s,", st.isas);
        if (strstr(have, probe))
            continue;
        if (len + k + 2 >= sizeof st.isas)
            break;
        len += (size_t)snprintf(st.isas + len, sizeof st.isas - len, "%s%s", len ? "," : "", one);
    }
    st.isa_ok = len > 0;
}

static void rtc_load(void)
{
    static const char *const rtc_names[] = {"libhiprtc.so.6", "libhiprtc.so.5", "libamdhip64.so.6",
                                            "libamdhip64.so.5"};
    static const char *const comgr_names[] = {"libamd_comgr.so.3", "libamd_comgr.so.2"};
    char err[512] = "", path[256], why[512];
    void *h = NULL;
    /* the first library that opens and has every hiprtc symbol */
    for (size_t i = 0; i < NSYMS(rtc_names) && !h; i++) {
        h = open_first(&rtc_names[i], 1, path, sizeof path, err, sizeof err);
        if (h && tilec_dl_resolve(h, path, rtc_syms, NSYMS(rtc_syms), &st.api, why, sizeof why) != 0) {
            if (!err[0])
                snprintf(err, sizeof err, "%s", why);
            dlclose(h);
            h = NULL;
        }
    }
    if (!h) {
        snprintf(st.rtc_why, sizeof st.rtc_why, "hiprtc not found (%s; install ROCm, e.g. Debian's "
                 "libamdhip64-dev)", err[0] ? err : "no library");
        return;
    }
    snprintf(st.rtc_path, sizeof st.rtc_path, "%s", path);
    if (st.api.RtcVersion(&st.rtc_major, &st.rtc_minor) != HIPRTC_SUCCESS)
        st.rtc_major = st.rtc_minor = 0;
    st.rtc_ok = 1; /* handles stay open for the life of the process */
    err[0] = '\0';
    void *c = open_first(comgr_names, NSYMS(comgr_names), path, sizeof path, err, sizeof err);
    if (c && tilec_dl_resolve(c, path, comgr_syms, NSYMS(comgr_syms), &st.api, why, sizeof why) == 0)
        isa_list();
    else if (c)
        dlclose(c);
}

const hip_state_t *hip_rtc(void)
{
    pthread_once(&rtc_once, rtc_load);
    if (!st.rtc_ok) {
        tilec_sdk_error_set("hip: %s", st.rtc_why);
        return NULL;
    }
    return &st;
}

static void rt_load(void)
{
    static const char *const names[] = {"libamdhip64.so.6", "libamdhip64.so.5"};
    char err[512] = "", path[256];
    void *h = open_first(names, NSYMS(names), path, sizeof path, err, sizeof err);
    if (!h) {
        snprintf(st.rt_why, sizeof st.rt_why, "HIP runtime not found (%s)", err);
        return;
    }
    if (tilec_dl_resolve(h, path, rt_syms, NSYMS(rt_syms), &st.api, st.rt_why, sizeof st.rt_why) != 0) {
        dlclose(h);
        return;
    }
    if (st.api.RuntimeGetVersion(&st.runtime_version) != hipSuccess)
        st.runtime_version = 0;
    hipError_t e = st.api.Init(0);
    int n = 0;
    hipError_t ec = e == hipSuccess ? st.api.GetDeviceCount(&n) : e;
    if (ec != hipSuccess || n <= 0) {
        const char *name = st.api.GetErrorName(ec);
        snprintf(st.rt_why, sizeof st.rt_why, "no AMD GPU (%s: %s)", e == hipSuccess ? "hipGetDeviceCount" : "hipInit",
                 ec == hipSuccess ? "0 devices" : name ? name : "error");
        /* keep the library open: unloading a runtime that started is unsafe */
        return;
    }
    st.rt_ok = 1;
}

const hip_state_t *hip_rt(void)
{
    pthread_once(&rt_once, rt_load);
    if (!st.rt_ok) {
        tilec_sdk_error_set("hip: %s", st.rt_why);
        return NULL;
    }
    return &st;
}

tilec_pstatus_t hip_fail(const char *call, hipError_t e, tilec_pstatus_t status)
{
    const char *name = st.rt_ok ? st.api.GetErrorName(e) : NULL;
    const char *text = st.rt_ok ? st.api.GetErrorString(e) : NULL;
    if (name)
        tilec_sdk_error_set("hip: %s failed: %s (%s)", call, name, text ? text : "");
    else
        tilec_sdk_error_set("hip: %s failed: hipError_t %d", call, (int)e);
    return e == hipErrorOutOfMemory ? TILEC_PS_OUT_OF_MEMORY : status;
}
