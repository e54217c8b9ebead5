/*
 * ocl_api.c — opens the OpenCL ICD loader at run time and enumerates devices.
 *
 * dlopen("libOpenCL.so.1") (no link-time dependency, no vendor headers), then
 * every entry point of the OCL_SYMBOLS table (ocl_internal.h) is resolved
 * with the SDK's tilec_dl_resolve; a missing
 * library, a missing symbol, no platform or no device leaves the state "not
 * ok" with a reason the plugin reports as TILEC_PS_UNAVAILABLE.  Devices are
 * listed platform by platform in the loader's order, so opencl:N names the
 * same device from run to run on an unchanged machine.  The state is built
 * once (pthread_once) and lives until the process exits; the library is
 * never closed (vendor runtimes do not like being unloaded).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_internal.h"

#define OCL_ROW(field, sym, ret, args) {sym, offsetof(ocl_api_t, field)},
static const tilec_dl_sym_t ocl_syms[] = {OCL_SYMBOLS(OCL_ROW)};

static ocl_state_t g_state;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

const char *ocl_err_name(cl_int e)
{
    static __thread char buf[48];
    const char *n = NULL;
    switch (e) {
    case 0: n = "CL_SUCCESS"; break;
    case -1: n = "CL_DEVICE_NOT_FOUND"; break;
    case -2: n = "CL_DEVICE_NOT_AVAILABLE"; break;
    case -3: n = "CL_COMPILER_NOT_AVAILABLE"; break;
    case -4: n = "CL_MEM_OBJECT_ALLOCATION_FAILURE"; break;
    case -5: n = "CL_OUT_OF_RESOURCES"; break;
    case -6: n = "CL_OUT_OF_HOST_MEMORY"; break;
    case -11: n = "CL_BUILD_PROGRAM_FAILURE"; break;
    case -30: n = "CL_INVALID_VALUE"; break;
    case -33: n = "CL_INVALID_DEVICE"; break;
    case -34: n = "CL_INVALID_CONTEXT"; break;
    case -36: n = "CL_INVALID_COMMAND_QUEUE"; break;
    case -38: n = "CL_INVALID_MEM_OBJECT"; break;
    case -42: n = "CL_INVALID_BINARY"; break;
    case -43: n = "CL_INVALID_BUILD_OPTIONS"; break;
    case -44: n = "CL_INVALID_PROGRAM"; break;
    case -45: n = "CL_INVALID_PROGRAM_EXECUTABLE"; break;
    case -46: n = "CL_INVALID_KERNEL_NAME"; break;
    case -48: n = "CL_INVALID_KERNEL"; break;
    case -49: n = "CL_INVALID_ARG_INDEX"; break;
    case -50: n = "CL_INVALID_ARG_VALUE"; break;
    case -51: n = "CL_INVALID_ARG_SIZE"; break;
    case -52: n = "CL_INVALID_KERNEL_ARGS"; break;
    case -53: n = "CL_INVALID_WORK_DIMENSION"; break;
    case -54: n = "CL_INVALID_WORK_GROUP_SIZE"; break;
    case -55: n = "CL_INVALID_WORK_ITEM_SIZE"; break;
    case -56: n = "CL_INVALID_GLOBAL_OFFSET"; break;
    case -61: n = "CL_INVALID_BUFFER_SIZE"; break;
    case -63: n = "CL_INVALID_GLOBAL_WORK_SIZE"; break;
    case -1001: n = "CL_PLATFORM_NOT_FOUND_KHR"; break;
    default: break;
    }
    if (n)
        snprintf(buf, sizeof buf, "%s (%d)", n, (int)e);
    else
        snprintf(buf, sizeof buf, "OpenCL error %d", (int)e);
    return buf;
}

static void dev_str(const ocl_api_t *cl, cl_device_id d, cl_uint what, char *out, size_t n)
{
    out[0] = '\0';
    if (cl->GetDeviceInfo(d, what, n - 1, out, NULL) != CL_SUCCESS)
        out[0] = '\0';
    out[n - 1] = '\0';
}

/* Whole extension string (any length), malloc'd; NULL on failure. */
static char *dev_extensions(const ocl_api_t *cl, cl_device_id d)
{
    size_t n = 0;
    if (cl->GetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || n > (1u << 20))
        return NULL;
    char *s = calloc(1, n + 1);
    if (s && cl->GetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, s, NULL) != CL_SUCCESS) {
        free(s);
        return NULL;
    }
    return s;
}

static int has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; p && (p = strstr(p, w)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return 1;
    return 0;
}

static void load(void)
{
    ocl_state_t *s = &g_state;
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(s->why, sizeof s->why, "cannot load the OpenCL ICD loader libOpenCL.so.1 (%s); install "
                 "ocl-icd-libopencl1 and a vendor driver (e.g. pocl-opencl-icd)", e ? e : "not found");
        return;
    }
    if (tilec_dl_resolve(h, "libOpenCL.so.1", ocl_syms, sizeof ocl_syms / sizeof ocl_syms[0], &s->cl,
                         s->why, sizeof s->why) != 0)
        return;
    const ocl_api_t *cl = &s->cl;
    cl_uint np = 0;
    cl_int e = cl->GetPlatformIDs(0, NULL, &np);
    if (e != CL_SUCCESS || np == 0) {
        snprintf(s->why, sizeof s->why, "no OpenCL platform found (%s); is a vendor ICD installed "
                 "(/etc/OpenCL/vendors, OCL_ICD_VENDORS)?", e != CL_SUCCESS ? ocl_err_name(e) : "0 platforms");
        return;
    }
    if (np > 64)
        np = 64;
    cl_platform_id plats[64];
    if ((e = cl->GetPlatformIDs(np, plats, NULL)) != CL_SUCCESS) {
        snprintf(s->why, sizeof s->why, "clGetPlatformIDs failed: %s", ocl_err_name(e));
        return;
    }
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (cl->GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue;
        if (nd > 256)
            nd = 256;
        cl_device_id ids[256];
        if (cl->GetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL) != CL_SUCCESS)
            continue;
        ocl_dev_t *grown = realloc(s->devs, sizeof *s->devs * (s->ndevs + nd));
        if (!grown)
            break;
        s->devs = grown;
        char pname[128] = "";
        if (cl->GetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL) != CL_SUCCESS)
            pname[0] = '\0';
        pname[sizeof pname - 1] = '\0';
        for (cl_uint i = 0; i < nd; i++) {
            ocl_dev_t *d = &s->devs[s->ndevs++];
            memset(d, 0, sizeof *d);
            d->platform = plats[p];
            d->id = ids[i];
            snprintf(d->platform_name, sizeof d->platform_name, "OpenCL: %s", pname);
            dev_str(cl, ids[i], CL_DEVICE_NAME, d->name, sizeof d->name);
            dev_str(cl, ids[i], CL_DRIVER_VERSION, d->driver, sizeof d->driver);
            dev_str(cl, ids[i], CL_DEVICE_VERSION, d->version, sizeof d->version);
            cl->GetDeviceInfo(ids[i], CL_DEVICE_TYPE, sizeof d->type, &d->type, NULL);
            cl_ulong u = 0;
            if (cl->GetDeviceInfo(ids[i], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof u, &u, NULL) == CL_SUCCESS)
                d->global_mem = u;
            u = 0;
            if (cl->GetDeviceInfo(ids[i], CL_DEVICE_LOCAL_MEM_SIZE, sizeof u, &u, NULL) == CL_SUCCESS)
                d->local_mem = u;
            u = 0;
            if (cl->GetDeviceInfo(ids[i], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof u, &u, NULL) == CL_SUCCESS)
                d->max_alloc = u;
            size_t wg = 0;
            if (cl->GetDeviceInfo(ids[i], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) == CL_SUCCESS)
                d->max_wg = wg;
            size_t items[3] = {0, 0, 0};
            if (cl->GetDeviceInfo(ids[i], CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL) == CL_SUCCESS)
                memcpy(d->max_item, items, sizeof items);
            cl_uint cu = 0;
            if (cl->GetDeviceInfo(ids[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL) == CL_SUCCESS)
                d->compute_units = cu;
            cu = 0;
            if (cl->GetDeviceInfo(ids[i], CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof cu, &cu, NULL) == CL_SUCCESS)
                d->clock_mhz = cu;
            char *ext = dev_extensions(cl, ids[i]);
            cu = 0;
            if ((has_word(ext, "cl_nv_device_attribute_query") &&
                 cl->GetDeviceInfo(ids[i], CL_DEVICE_WARP_SIZE_NV, sizeof cu, &cu, NULL) == CL_SUCCESS) ||
                (has_word(ext, "cl_amd_device_attribute_query") &&
                 cl->GetDeviceInfo(ids[i], CL_DEVICE_WAVEFRONT_WIDTH_AMD, sizeof cu, &cu, NULL) == CL_SUCCESS))
                d->subgroup = cu;
            d->fp16 = has_word(ext, "cl_khr_fp16");
            /* TILEC_OPENCL_HALF=storage|native overrides the float16 mode
             * (debugging a driver; native needs cl_khr_fp16 to build) */
            const char *hm = secure_getenv("TILEC_OPENCL_HALF");
            if (hm && strcmp(hm, "storage") == 0)
                d->fp16 = 0;
            else if (hm && strcmp(hm, "native") == 0)
                d->fp16 = 1;
            d->fp64 = has_word(ext, "cl_khr_fp64");
            d->int64_atomics = has_word(ext, "cl_khr_int64_base_atomics");
            free(ext);
            /* "OpenCL 1.2 ..." or later has printf */
            int maj = 0, min = 0;
            if (sscanf(d->version, "OpenCL %d.%d", &maj, &min) == 2)
                d->printf_ok = maj > 1 || (maj == 1 && min >= 2);
        }
    }
    if (s->ndevs == 0) {
        snprintf(s->why, sizeof s->why, "%u OpenCL platform%s but no device", np, np == 1 ? "" : "s");
        return;
    }
    s->ok = 1;
}

const ocl_state_t *ocl_state(void)
{
    pthread_once(&g_once, load);
    return &g_state;
}

__attribute__((destructor)) static void ocl_state_fini(void)
{
    g_state.ok = 0;
    free(g_state.devs);
    g_state.devs = NULL;
    g_state.ndevs = 0;
}
