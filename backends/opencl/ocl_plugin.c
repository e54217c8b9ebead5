/*
 * ocl_plugin.c — the OpenCL backend's plugin table: negotiation, devices,
 * compile (SIMT kit + clBuildProgram + the kernel cache), memory, launch.
 *
 * Devices are those ocl_api.c enumerated (every platform, stable order).
 * Opening one creates a context and an in-order command queue with
 * profiling enabled, so a timed launch reports the kernel's device-side
 * time from its event (CL_PROFILING_COMMAND_START/END).
 *
 * Compile: the tile IR is printed by the SDK's SIMT kit with the OpenCL C
 * dialect of ocl_codegen.c, checked against the device (work-group size,
 * local memory, fp64, 64-bit atomics) and built.  The module is first
 * lowered by the SDK's lowering passes for the device
 * (ocl_target_for_device: register fragments, the shared-memory plan,
 * vector widths, barriers) and the kit prints the lowered module; with
 * TILEC_OPENCL_LOWER=0 in the environment the kit's high-level path prints
 * it instead (every fragment in local memory, the kit's own barriers: the
 * "before" of bench/opencl_lowered.sh).  A lowered .tir is always printed
 * as it is.  A failing build returns TILEC_PS_COMPILE_ERROR with the
 * compiler's log in the message.  The kernel cache is the plugin shell's
 * (tilec_shell_cache_find): the key covers the plugin version, platform,
 * device, driver version, build options and the generated source; an
 * entry the driver rejects is rebuilt from source and overwritten.
 *
 * Launch: the grid and parameter sizes are evaluated from the symbol values
 * (tilec_simt_grid / tilec_simt_param_bytes); NDRange global =
 * grid * threads, local = threads; arguments are the buffers, then one
 * cl_long per symbol.  A module's kernel object is shared, so launches of
 * one module are serialized by its lock.
 *
 * The ABI table is the SDK's plugin shell (tilec/shell.h): argument
 * checks, handles, the module's source and binary, module_data and the
 * host's cache directory are its; the hooks below get valid arguments.
 * module_info asks the driver (clGetKernelWorkGroupInfo).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ocl_internal.h"
#include "tilec/lower.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"

#define MAX_LOG 16384

/* The backend's state in the shell's handles. */
typedef struct ocl_devh {
    uint32_t index;
    const ocl_dev_t *dev;
    cl_context ctx;
    cl_command_queue q;
} ocl_devh_t;

typedef struct ocl_mem {
    cl_mem m;
} ocl_mem_t;

typedef struct ocl_module {
    cl_program prog;
    cl_kernel kern;
    size_t threads[3];
    int lock_ok;
    pthread_mutex_t lock;
} ocl_module_t;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- devices --------------------------------------------------------------------- */

static const ocl_state_t *state_or_error(void)
{
    const ocl_state_t *s = ocl_state();
    if (!s->ok) {
        tilec_sdk_error_set("opencl: %s", s->why);
        return NULL;
    }
    return s;
}

static tilec_pstatus_t ocl_device_count(uint32_t *count)
{
    const ocl_state_t *s = state_or_error();
    if (!s) {
        *count = 0;
        return TILEC_PS_UNAVAILABLE;
    }
    *count = s->ndevs;
    return TILEC_PS_OK;
}

static uint64_t dev_caps(const ocl_dev_t *d)
{
    uint64_t c = TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_INT64 | TILEC_CAP_ATOMIC_FLOAT |
                 TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_DEVICE_TIMER | TILEC_CAP_EMIT_SOURCE |
                 TILEC_CAP_EMIT_BINARY;
    if (d->fp64)
        c |= TILEC_CAP_FLOAT64;
    if (d->printf_ok)
        c |= TILEC_CAP_PRINT;
    if (d->type & CL_DEVICE_TYPE_GPU)
        c |= TILEC_CAP_GPU;
    return c;
}

static tilec_pstatus_t ocl_device_info(uint32_t index, tilec_pdevice_info_t *full)
{
    const ocl_dev_t *d = &ocl_state()->devs[index];
    snprintf(full->name, sizeof full->name, "%s", d->name);
    snprintf(full->platform, sizeof full->platform, "%s", d->platform_name);
    full->caps = dev_caps(d);
    full->global_mem_bytes = d->global_mem;
    full->shared_mem_bytes = d->local_mem;
    full->max_threads = d->max_wg > UINT32_MAX ? UINT32_MAX : (uint32_t)d->max_wg;
    full->compute_units = d->compute_units;
    return TILEC_PS_OK;
}

static tilec_pstatus_t ocl_device_property(uint32_t index, uint32_t key, tilec_pvalue_t *v)
{
    const ocl_dev_t *d = &ocl_state()->devs[index];
    switch (key) {
    case TILEC_PROP_ARCH: return tilec_shell_value_str(v, d->version); /* "OpenCL 3.0 ..." */
    case TILEC_PROP_DRIVER_VERSION: return tilec_shell_value_str(v, d->driver);
    case TILEC_PROP_MMA_KINDS: return tilec_shell_value_str(v, ""); /* none used */
    case TILEC_PROP_SHARED_MEM_PER_BLOCK_OPTIN: return tilec_shell_value_int(v, (int64_t)d->local_mem);
    case TILEC_PROP_CLOCK_KHZ:
        return d->clock_mhz ? tilec_shell_value_int(v, (int64_t)d->clock_mhz * 1000) : TILEC_PS_UNSUPPORTED;
    case TILEC_PROP_SUBGROUP_SIZE:
        return d->subgroup ? tilec_shell_value_int(v, d->subgroup) : TILEC_PS_UNSUPPORTED;
    default: return TILEC_PS_UNSUPPORTED;
    }
}

static tilec_pstatus_t ocl_device_open(uint32_t index, void *state)
{
    const ocl_state_t *s = ocl_state();
    const ocl_dev_t *d = &s->devs[index];
    ocl_devh_t *dv = state;
    cl_int e = CL_SUCCESS;
    cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->platform, 0};
    dv->ctx = s->cl.CreateContext(props, 1, &d->id, NULL, NULL, &e);
    if (!dv->ctx || e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: cannot create a context on %s: %s", d->name, ocl_err_name(e));
        return TILEC_PS_UNAVAILABLE;
    }
    dv->q = s->cl.CreateCommandQueue(dv->ctx, d->id, CL_QUEUE_PROFILING_ENABLE, &e);
    if (!dv->q || e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: cannot create a command queue on %s: %s", d->name, ocl_err_name(e));
        s->cl.ReleaseContext(dv->ctx);
        return TILEC_PS_UNAVAILABLE;
    }
    dv->index = index;
    dv->dev = d;
    return TILEC_PS_OK;
}

static void ocl_device_close(void *state)
{
    ocl_devh_t *d = state;
    const ocl_state_t *s = ocl_state();
    s->cl.Finish(d->q);
    s->cl.ReleaseCommandQueue(d->q);
    s->cl.ReleaseContext(d->ctx);
}

/* ---- compile ------------------------------------------------------------------------ */

static void ocl_module_free(tilec_shell_module_t *sm)
{
    ocl_module_t *m = sm->data;
    const ocl_state_t *s = ocl_state();
    if (m->kern)
        s->cl.ReleaseKernel(m->kern);
    if (m->prog)
        s->cl.ReleaseProgram(m->prog);
    if (m->lock_ok)
        pthread_mutex_destroy(&m->lock);
}

/* The build log of prog on dev, malloc'd (at most MAX_LOG bytes). */
static char *build_log(const ocl_state_t *s, cl_program prog, cl_device_id dev)
{
    size_t n = 0;
    if (s->cl.GetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0)
        return NULL;
    char *log = calloc(1, n + 1);
    if (!log)
        return NULL;
    if (s->cl.GetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) {
        free(log);
        return NULL;
    }
    size_t len = strlen(log);
    while (len && (log[len - 1] == '\n' || log[len - 1] == ' '))
        log[--len] = '\0';
    if (len > MAX_LOG)
        strcpy(log + MAX_LOG - 20, "\n... (log truncated)");
    return log;
}

/* Reads the program's binary into sm (best effort: 0 or -1). */
static int fetch_binary(const ocl_state_t *s, const ocl_module_t *m, tilec_shell_module_t *sm)
{
    size_t sz = 0;
    if (s->cl.GetProgramInfo(m->prog, CL_PROGRAM_BINARY_SIZES, sizeof sz, &sz, NULL) != CL_SUCCESS || sz == 0)
        return -1;
    unsigned char *bin = malloc(sz);
    if (!bin)
        return -1;
    unsigned char *ptrs[1] = {bin};
    if (s->cl.GetProgramInfo(m->prog, CL_PROGRAM_BINARIES, sizeof ptrs, ptrs, NULL) != CL_SUCCESS) {
        free(bin);
        return -1;
    }
    sm->binary = bin;
    sm->binary_len = sz;
    return 0;
}

static char *build_options(const tilec_pcompile_options_t *opts)
{
    const char *extra = opts && opts->extra ? opts->extra : "";
    const char *opt = opts && opts->opt_level == 0 ? "-cl-opt-disable" : "";
    size_t n = strlen(extra) + strlen(opt) + 2;
    char *o = malloc(n);
    if (o)
        snprintf(o, n, "%s%s%s", opt, *opt && *extra ? " " : "", extra);
    return o;
}

/* --emit lowered: the SDK's lowering passes for the OpenCL description */
static tilec_pstatus_t ocl_lower(void *devstate, const tilec_pcompile_options_t *opts, tilec_shell_module_t *sm)
{
    (void)devstate;
    return tilec_lower_shell("opencl", ocl_target_desc(opts->arch), sm);
}

static tilec_pstatus_t ocl_compile(void *devstate, const tilec_pcompile_options_t *opts,
                                   tilec_shell_module_t *sm)
{
    const ocl_state_t *s = ocl_state();
    ocl_devh_t *dv = devstate;
    const ocl_dev_t *d = dv->dev;
    ocl_module_t *m = sm->data;
    tilec_pstatus_t st = TILEC_PS_INTERNAL;
    char err[1024];
    char *options = NULL;
    tilec_shell_cache_t ce = {0};
    double t0 = now_ms();
    const tilec_ir_kernel_t *k = sm->kernel;
    tilec_simt_dialect_t dl;
    ocl_dialect(d, &dl);
    tilec_simt_result_t res;
    memset(&res, 0, sizeof res);
    res.struct_size = sizeof res;
    tilec_target_desc_t td;
    ocl_target_for_device(d, opts ? opts->arch : NULL, &td);
    tilec_arena_t ar;
    tilec_arena_init(&ar);
    const char *lw = secure_getenv("TILEC_OPENCL_LOWER");
    const tilec_ir_module_t *lm =
        lw && strcmp(lw, "0") == 0 ? sm->ir : tilec_lower_shell_module("opencl", &td, sm, &ar, &st);
    if (!lm) {
        char why[600];
        snprintf(why, sizeof why, "%s", tilec_sdk_error_get());
        tilec_sdk_error_set("opencl: kernel '%s' does not lower for %s (%llu bytes of local memory, %zu threads per "
                            "work-group): %s", k->name ? k->name : "", d->name, (unsigned long long)d->local_mem,
                            d->max_wg, why);
        tilec_arena_destroy(&ar);
        goto fail;
    }
    int gen = tilec_simt_generate(lm, &dl, &res, err, sizeof err);
    tilec_arena_destroy(&ar);
    if (gen != 0) {
        tilec_sdk_error_set("opencl: cannot print kernel '%s': %s", k->name ? k->name : "", err);
        st = TILEC_PS_UNSUPPORTED;
        goto fail;
    }
    sm->source = res.source;
    sm->source_len = res.source_len;
    sm->info.shared_static_bytes = (int64_t)res.shared_bytes;
    sm->info.shared_dynamic_bytes = 0;
    for (int i = 0; i < 3; i++)
        m->threads[i] = res.threads[i];
    if ((res.uses & TILEC_SIMT_USES_F64) && !d->fp64) {
        tilec_sdk_error_set("opencl: kernel '%s' uses float64 but %s has no cl_khr_fp64", k->name, d->name);
        st = TILEC_PS_UNSUPPORTED;
        goto fail;
    }
    if ((res.uses & TILEC_SIMT_USES_ATOMIC_64) && !d->int64_atomics) {
        tilec_sdk_error_set("opencl: kernel '%s' uses 64-bit atomics but %s has no cl_khr_int64_base_atomics",
                            k->name, d->name);
        st = TILEC_PS_UNSUPPORTED;
        goto fail;
    }
    if (d->max_wg && res.nthreads > d->max_wg) {
        tilec_sdk_error_set("opencl: kernel '%s' uses %u threads per block, %s allows at most %zu per work-group",
                            k->name, res.nthreads, d->name, d->max_wg);
        st = TILEC_PS_UNSUPPORTED;
        goto fail;
    }
    for (int i = 0; i < 3; i++)
        if (d->max_item[i] && m->threads[i] > d->max_item[i]) {
            tilec_sdk_error_set("opencl: kernel '%s' uses %zu threads in dimension %d, %s allows at most %zu",
                                k->name, m->threads[i], i, d->name, d->max_item[i]);
            st = TILEC_PS_UNSUPPORTED;
            goto fail;
        }
    if (d->local_mem && res.shared_bytes > d->local_mem) {
        tilec_sdk_error_set("opencl: kernel '%s' needs %llu bytes of shared/fragment memory per block, %s has "
                            "%llu bytes of local memory (use smaller tiles)",
                            k->name, (unsigned long long)res.shared_bytes, d->name, (unsigned long long)d->local_mem);
        st = TILEC_PS_UNSUPPORTED;
        goto fail;
    }
    options = build_options(opts);
    if (!options) {
        tilec_sdk_error_set("opencl: out of memory");
        st = TILEC_PS_OUT_OF_MEMORY;
        goto fail;
    }
    cl_int e = CL_SUCCESS;
    /* the shell's kernel cache; an entry the driver rejects is rebuilt
     * from source and overwritten */
    const char *parts[] = {TILEC_OCL_PLUGIN_VERSION, d->platform_name, d->name, d->driver, d->version, options};
    if (tilec_shell_cache_find(&ce, "opencl", ".bin", parts, 6, sm, NULL)) {
        const unsigned char *bp = sm->binary;
        size_t blen = sm->binary_len;
        cl_int bst = CL_SUCCESS;
        m->prog = s->cl.CreateProgramWithBinary(dv->ctx, 1, &d->id, &blen, &bp, &bst, &e);
        if (!m->prog || e != CL_SUCCESS || bst != CL_SUCCESS ||
            s->cl.BuildProgram(m->prog, 1, &d->id, options, NULL, NULL) != CL_SUCCESS) {
            tilec_shell_log("compile", "opencl: cache entry %s rejected by the driver; rebuilding", ce.path);
            if (m->prog)
                s->cl.ReleaseProgram(m->prog);
            m->prog = NULL;
            free(sm->binary);
            sm->binary = NULL;
            sm->binary_len = 0;
        }
    }
    if (!m->prog) {
        const char *src = sm->source;
        size_t slen = sm->source_len;
        m->prog = s->cl.CreateProgramWithSource(dv->ctx, 1, &src, &slen, &e);
        if (!m->prog || e != CL_SUCCESS) {
            tilec_sdk_error_set("opencl: clCreateProgramWithSource failed: %s", ocl_err_name(e));
            st = TILEC_PS_COMPILE_ERROR;
            goto fail;
        }
        e = s->cl.BuildProgram(m->prog, 1, &d->id, options, NULL, NULL);
        if (e != CL_SUCCESS) {
            char *log = build_log(s, m->prog, d->id);
            tilec_sdk_error_set("opencl: building kernel '%s' for %s failed (%s)%s%s", k->name, d->name,
                                ocl_err_name(e), log && *log ? "; compiler log:\n" : "", log ? log : "");
            free(log);
            st = TILEC_PS_COMPILE_ERROR;
            goto fail;
        }
        tilec_shell_log("compile", "opencl: built kernel '%s' for %s in %.1f ms", k->name, d->name, now_ms() - t0);
        if (fetch_binary(s, m, sm) == 0)
            tilec_shell_cache_store(&ce, "opencl", sm);
    }
    m->kern = s->cl.CreateKernel(m->prog, OCL_KERNEL_NAME, &e);
    if (!m->kern || e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: clCreateKernel failed: %s", ocl_err_name(e));
        st = TILEC_PS_COMPILE_ERROR;
        goto fail;
    }
    m->lock_ok = pthread_mutex_init(&m->lock, NULL) == 0;
    if (!m->lock_ok) {
        tilec_sdk_error_set("opencl: cannot create a lock");
        st = TILEC_PS_OUT_OF_MEMORY;
        goto fail;
    }
    st = TILEC_PS_OK;
fail:
    tilec_shell_cache_done(&ce);
    free(options);
    return st;
}

/* What the driver says the kernel uses. */
static void ocl_module_info(tilec_shell_module_t *sm, tilec_pmodule_info_t *info)
{
    const ocl_state_t *s = ocl_state();
    const ocl_module_t *m = sm->data;
    const ocl_devh_t *dv = sm->dev;
    cl_ulong u = 0;
    size_t wg = 0;
    if (s->cl.GetKernelWorkGroupInfo(m->kern, dv->dev->id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof u, &u, NULL) ==
        CL_SUCCESS)
        info->shared_static_bytes = (int64_t)u;
    u = 0;
    if (s->cl.GetKernelWorkGroupInfo(m->kern, dv->dev->id, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof u, &u, NULL) ==
        CL_SUCCESS)
        info->local_bytes = (int64_t)u;
    if (s->cl.GetKernelWorkGroupInfo(m->kern, dv->dev->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) ==
        CL_SUCCESS)
        info->max_threads = (int64_t)wg;
}

/* ---- memory --------------------------------------------------------------------------- */

static tilec_pstatus_t ocl_mem_alloc(void *devstate, tilec_pmem_scope_t scope, size_t size, void *state)
{
    (void)scope;
    ocl_devh_t *dev = devstate;
    ocl_mem_t *m = state;
    if (dev->dev->max_alloc && size > dev->dev->max_alloc) {
        tilec_sdk_error_set("opencl: mem_alloc: %zu bytes exceed the device's largest allocation (%llu)", size,
                            (unsigned long long)dev->dev->max_alloc);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    cl_int e = CL_SUCCESS;
    m->m = ocl_state()->cl.CreateBuffer(dev->ctx, CL_MEM_READ_WRITE, size ? size : 4, NULL, &e);
    if (!m->m || e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: mem_alloc: clCreateBuffer(%zu bytes) failed: %s", size, ocl_err_name(e));
        return TILEC_PS_OUT_OF_MEMORY;
    }
    return TILEC_PS_OK;
}

static tilec_pstatus_t ocl_mem_write(void *devstate, void *mem, size_t offset, const void *src, size_t size)
{
    ocl_devh_t *dev = devstate;
    cl_int e = ocl_state()->cl.EnqueueWriteBuffer(dev->q, ((ocl_mem_t *)mem)->m, CL_TRUE, offset, size, src, 0,
                                                  NULL, NULL);
    if (e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: mem_write: %s", ocl_err_name(e));
        return TILEC_PS_LAUNCH_ERROR;
    }
    return TILEC_PS_OK;
}

static tilec_pstatus_t ocl_mem_read(void *devstate, void *mem, size_t offset, void *dst, size_t size)
{
    ocl_devh_t *dev = devstate;
    cl_int e = ocl_state()->cl.EnqueueReadBuffer(dev->q, ((ocl_mem_t *)mem)->m, CL_TRUE, offset, size, dst, 0,
                                                 NULL, NULL);
    if (e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: mem_read: %s", ocl_err_name(e));
        return TILEC_PS_LAUNCH_ERROR;
    }
    return TILEC_PS_OK;
}

static void ocl_mem_free(void *dev, void *mem)
{
    (void)dev;
    ocl_state()->cl.ReleaseMemObject(((ocl_mem_t *)mem)->m);
}

/* ---- launch ------------------------------------------------------------------------------ */

static tilec_pstatus_t launch_locked(ocl_devh_t *dev, ocl_module_t *mod, const tilec_shell_launch_t *a)
{
    const int64_t *syms = a->syms;
    const int64_t *grid = a->grid;
    const ocl_state_t *s = ocl_state();
    cl_int e;
    for (uint32_t i = 0; i < a->nargs; i++) {
        if ((e = s->cl.SetKernelArg(mod->kern, i, sizeof(cl_mem), &((ocl_mem_t *)a->args[i])->m)) != CL_SUCCESS) {
            tilec_sdk_error_set("opencl: launch: setting argument %u failed: %s", i, ocl_err_name(e));
            return TILEC_PS_LAUNCH_ERROR;
        }
    }
    for (uint32_t j = 0; j < a->nsyms; j++) {
        int64_t v = syms[j];
        if ((e = s->cl.SetKernelArg(mod->kern, a->nargs + j, sizeof v, &v)) != CL_SUCCESS) {
            tilec_sdk_error_set("opencl: launch: setting symbol %u failed: %s", j, ocl_err_name(e));
            return TILEC_PS_LAUNCH_ERROR;
        }
    }
    size_t global[3], local[3];
    for (int d = 0; d < 3; d++) {
        local[d] = mod->threads[d];
        global[d] = (size_t)grid[d] * mod->threads[d];
    }
    cl_event ev = NULL;
    double t0 = now_ms();
    e = s->cl.EnqueueNDRangeKernel(dev->q, mod->kern, 3, NULL, global, local, 0, NULL, &ev);
    if (e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: launch: clEnqueueNDRangeKernel (global %zu x %zu x %zu, local %zu x %zu x %zu) "
                            "failed: %s", global[0], global[1], global[2], local[0], local[1], local[2], ocl_err_name(e));
        return TILEC_PS_LAUNCH_ERROR;
    }
    e = s->cl.WaitForEvents(1, &ev);
    if (e == CL_SUCCESS)
        e = s->cl.Finish(dev->q);
    double host_ms = now_ms() - t0;
    tilec_pstatus_t st = TILEC_PS_OK;
    if (e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: launch: kernel execution failed: %s", ocl_err_name(e));
        st = TILEC_PS_LAUNCH_ERROR;
    } else if (a->timed) {
        cl_ulong ts = 0, te = 0;
        if (s->cl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof ts, &ts, NULL) == CL_SUCCESS &&
            s->cl.GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof te, &te, NULL) == CL_SUCCESS && te >= ts)
            *a->elapsed_ms = (double)(te - ts) / 1e6;
        else
            *a->elapsed_ms = host_ms;
    }
    s->cl.ReleaseEvent(ev);
    tilec_shell_log("launch", "opencl: grid %lld x %lld x %lld, %zu x %zu x %zu threads, %.3f ms", (long long)grid[0],
            (long long)grid[1], (long long)grid[2], local[0], local[1], local[2], host_ms);
    return st;
}

static tilec_pstatus_t ocl_launch(void *devstate, tilec_shell_module_t *sm, const tilec_shell_launch_t *a)
{
    ocl_module_t *mod = sm->data;
    pthread_mutex_lock(&mod->lock);
    tilec_pstatus_t st = launch_locked(devstate, mod, a);
    pthread_mutex_unlock(&mod->lock);
    return st;
}

/* ---- the backend description and the query ------------------------------------------------------ */

#define OCL_CAPS                                                                                                  \
    (TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 | TILEC_CAP_ATOMIC_FLOAT |        \
     TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_PRINT | TILEC_CAP_DEVICE_TIMER |                   \
     TILEC_CAP_EMIT_SOURCE | TILEC_CAP_EMIT_BINARY | TILEC_CAP_GPU)

static const tilec_shell_backend_t ocl_backend = {
    .name = "opencl",
    .vendor = "tilec",
    .version = TILEC_OCL_PLUGIN_VERSION,
    .caps = OCL_CAPS,
    .abi_max = TILEC_PLUGIN_ABI_VERSION,
    .ir_min = TILEC_IR_MAKE(1, 0),
    .ir_max = TILEC_IR_MAKE(1, 4), /* high-level IR is lowered here; a lowered .tir is printed as it is; 1.2: float8;
                                      1.4: bit casts (the SIMT kit); 1.3's 4-bit dtypes refused (TILEC_SHELL_NO_4BIT) */
    .flags = TILEC_SHELL_MODULE_ON_ITS_DEVICE | TILEC_SHELL_NO_4BIT,
    .device_size = sizeof(ocl_devh_t),
    .mem_size = sizeof(ocl_mem_t),
    .module_size = sizeof(ocl_module_t),
    .device_count = ocl_device_count,
    .device_info = ocl_device_info,
    .device_property = ocl_device_property,
    .device_open = ocl_device_open,
    .device_close = ocl_device_close,
    .compile = ocl_compile,
    .lower = ocl_lower,
    .module_info = ocl_module_info,
    .module_free = ocl_module_free,
    .mem_alloc = ocl_mem_alloc,
    .mem_write = ocl_mem_write,
    .mem_read = ocl_mem_read,
    .mem_free = ocl_mem_free,
    .launch = ocl_launch,
};

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out);

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out)
{
    return tilec_shell_query(&ocl_backend, host, abi_out, table_out);
}
