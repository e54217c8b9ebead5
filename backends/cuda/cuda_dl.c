/*
 * cuda_dl.c — NVRTC and the CUDA Driver API, opened with dlopen.
 *
 * The backend never links CUDA: the subsets of the two C APIs it calls are
 * declared by hand in cuda_internal.h (as Blender's CUEW does), one X-macro
 * list per library, and resolved here into function tables with the SDK's
 * tilec_dl_resolve, each once per process (pthread_once).
 *
 * NVRTC is looked for as libnvrtc.so.13, then libnvrtc.so.12, first in the
 * toolkit named by $CUDA_PATH or $CUDA_HOME (lib64, targets/<arch>/lib,
 * lib), then through the dynamic loader's own search, then under
 * /usr/local/cuda.  The driver is libcuda.so.1 through the loader's search
 * only (it comes with the kernel driver, never with a toolkit), followed by
 * cuInit(0).  A missing library or symbol, or a failing cuInit, is recorded
 * as a one-line reason that every later call reports again; nothing here
 * prints or aborts.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"
#include "tilec/sdk.h"

#if defined(__aarch64__)
#define CUDA_TARGET_DIR "targets/sbsa-linux/lib"
#else
#define CUDA_TARGET_DIR "targets/x86_64-linux/lib"
#endif

static cuda_nvrtc_api_t nvrtc_api;
static char nvrtc_why[1100];
static int nvrtc_ok;
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;

static cuda_driver_api_t drv_api;
static char drv_why[1100];
static int drv_ok;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static pid_t drv_pid; /* the process that ran cuInit */

#define NVRTC_ROW(field, sym, ret, args) {sym, offsetof(cuda_nvrtc_api_t, field)},
#define DRIVER_ROW(field, sym, ret, args) {sym, offsetof(cuda_driver_api_t, field)},
static const tilec_dl_sym_t nvrtc_syms[] = {CUDA_NVRTC_SYMBOLS(NVRTC_ROW)};
static const tilec_dl_sym_t drv_syms[] = {CUDA_DRIVER_SYMBOLS(DRIVER_ROW)};

static void *try_open(const char *path, char *first_err, size_t n)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h && first_err[0] == '\0') {
        const char *e = dlerror();
        snprintf(first_err, n, "%s", e ? e : path);
    }
    return h;
}

static void nvrtc_load(void)
{
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12"};
    static const char *const subdirs[] = {"lib64", CUDA_TARGET_DIR, "lib"};
    const char *roots[3] = {secure_getenv("CUDA_PATH"), secure_getenv("CUDA_HOME"), NULL};
    char err[1024] = "", path[600];
    void *h = NULL;
    /* 1. the toolkit the operator named */
    for (int r = 0; r < 2 && !h; r++) {
        if (!roots[r] || !*roots[r])
            continue;
        for (size_t d = 0; d < 3 && !h; d++)
            for (size_t i = 0; i < 2 && !h; i++) {
                snprintf(path, sizeof path, "%s/%s/%s", roots[r], subdirs[d], names[i]);
                h = try_open(path, err, sizeof err);
            }
    }
    /* 2. the dynamic loader's search, 3. /usr/local/cuda */
    for (size_t i = 0; i < 2 && !h; i++) {
        snprintf(path, sizeof path, "%s", names[i]);
        h = try_open(path, err, sizeof err);
    }
    for (size_t d = 0; d < 3 && !h; d++)
        for (size_t i = 0; i < 2 && !h; i++) {
            snprintf(path, sizeof path, "/usr/local/cuda/%s/%s", subdirs[d], names[i]);
            h = try_open(path, err, sizeof err);
        }
    if (!h) {
        snprintf(nvrtc_why, sizeof nvrtc_why, "NVRTC not found (%s)", err);
        return;
    }
    cuda_nvrtc_api_t *a = &nvrtc_api;
    if (tilec_dl_resolve(h, path, nvrtc_syms, sizeof nvrtc_syms / sizeof nvrtc_syms[0], a, nvrtc_why,
                         sizeof nvrtc_why) != 0) {
        dlclose(h);
        return;
    }
    if (a->Version(&a->major, &a->minor) != NVRTC_SUCCESS)
        a->major = a->minor = 0;
    snprintf(a->path, sizeof a->path, "%s", path);
    nvrtc_ok = 1; /* the handle stays open for the life of the process */
}

const cuda_nvrtc_api_t *cuda_nvrtc(void)
{
    pthread_once(&nvrtc_once, nvrtc_load);
    if (!nvrtc_ok) {
        tilec_sdk_error_set("cuda: %s", nvrtc_why);
        return NULL;
    }
    return &nvrtc_api;
}

static void drv_load(void)
{
    char err[1024] = "";
    void *h = try_open("libcuda.so.1", err, sizeof err);
    if (!h) {
        snprintf(drv_why, sizeof drv_why, "CUDA driver not found (%s)", err);
        return;
    }
    cuda_driver_api_t *a = &drv_api;
    if (tilec_dl_resolve(h, "libcuda.so.1", drv_syms, sizeof drv_syms / sizeof drv_syms[0], a, drv_why,
                         sizeof drv_why) != 0) {
        dlclose(h);
        return;
    }
    void *enc = dlsym(h, "cuTensorMapEncodeTiled");
    memcpy(&a->TensorMapEncodeTiled, &enc, sizeof enc);
    void *lex = dlsym(h, "cuLaunchKernelEx");
    memcpy(&a->LaunchKernelEx, &lex, sizeof lex);
    CUresult r = a->Init(0);
    if (r != CUDA_SUCCESS) {
        const char *name = NULL, *text = NULL;
        if (a->GetErrorName(r, &name) != CUDA_SUCCESS)
            name = NULL;
        if (a->GetErrorString(r, &text) != CUDA_SUCCESS)
            text = NULL;
        snprintf(drv_why, sizeof drv_why, "cuInit failed: %s (%s)", name ? name : "error",
                 text ? text : "no description");
        /* keep the library open: unloading a driver that started is unsafe */
        return;
    }
    drv_pid = getpid();
    drv_ok = 1;
}

/* In a child forked after cuInit (a conformance runner forks per case)
 * the driver must be initialized again; some drivers refuse, which is then
 * the reason reported. */
static pid_t drv_child_pid;
static int drv_child_ok;
static pthread_mutex_t drv_child_lock = PTHREAD_MUTEX_INITIALIZER;

const cuda_driver_api_t *cuda_driver(void)
{
    pthread_once(&drv_once, drv_load);
    if (!drv_ok) {
        tilec_sdk_error_set("cuda: %s", drv_why);
        return NULL;
    }
    pid_t me = getpid();
    if (me != drv_pid) {
        pthread_mutex_lock(&drv_child_lock);
        if (drv_child_pid != me) {
            drv_child_pid = me;
            CUresult r = drv_api.Init(0);
            drv_child_ok = r == CUDA_SUCCESS;
            if (!drv_child_ok) {
                const char *name = NULL;
                if (drv_api.GetErrorName(r, &name) != CUDA_SUCCESS)
                    name = NULL;
                snprintf(drv_why, sizeof drv_why,
                         "cuInit failed in a process forked after the driver started: %s (CUDA "
                         "cannot be used across fork; run the child with exec)",
                         name ? name : "error");
            }
        }
        int ok = drv_child_ok;
        pthread_mutex_unlock(&drv_child_lock);
        if (!ok) {
            tilec_sdk_error_set("cuda: %s", drv_why);
            return NULL;
        }
    }
    return &drv_api;
}

tilec_pstatus_t cuda_fail(const char *call, CUresult r, tilec_pstatus_t st)
{
    const char *name = NULL, *text = NULL;
    if (drv_ok) {
        if (drv_api.GetErrorName(r, &name) != CUDA_SUCCESS)
            name = NULL;
        if (drv_api.GetErrorString(r, &text) != CUDA_SUCCESS)
            text = NULL;
    }
    if (name)
        tilec_sdk_error_set("cuda: %s failed: %s (%s)", call, name, text ? text : "");
    else
        tilec_sdk_error_set("cuda: %s failed: CUresult %d", call, (int)r);
    /* out-of-memory is its own status whatever the call */
    if (r == 2 /* CUDA_ERROR_OUT_OF_MEMORY */)
        return TILEC_PS_OUT_OF_MEMORY;
    return st;
}
