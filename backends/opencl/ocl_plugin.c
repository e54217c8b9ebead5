/*
 * ocl_plugin.c — the OpenCL backend's plugin table: negotiation, devices,
 * compile (SIMT kit + clBuildProgram + the kernel cache), memory, launch.
 *
 * Devices are those ocl_api.c enumerated (every platform, stable order).
 * Opening one creates a context and an in-order command queue with
 * profiling enabled, so a timed launch reports the kernel's device-side
 * time from its event (CL_PROFILING_COMMAND_START/END).
 *
 * Compile: the tile IR is read, lowered by the SDK's SIMT kit with the
 * OpenCL C dialect of ocl_codegen.c, checked against the device (work-group
 * size, local memory, fp64, 64-bit atomics) and built.  A failing build
 * returns TILEC_PS_COMPILE_ERROR with the compiler's log in the message.
 * With a cache directory, the program binary (clGetProgramInfo BINARIES)
 * is stored under the SHA-256 of the plugin version, platform, device,
 * driver version, build options, IR and generated source; a later compile
 * of the same kernel loads the binary instead of compiling (falling back
 * to the source when the driver rejects it).
 *
 * Launch: the grid and parameter sizes are evaluated from the symbol values
 * (tilec_simt_grid / tilec_simt_param_bytes); NDRange global =
 * grid * threads, local = threads; arguments are the buffers, then one
 * cl_long per symbol.  A module's kernel object is shared, so launches of
 * one module are serialized by its lock.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ocl_internal.h"
#include "tilec/sdk.h"

#define OCL_DEV_MAGIC 0x6f634456u
#define OCL_MEM_MAGIC 0x6f634d45u
#define OCL_MOD_MAGIC 0x6f634d4fu

#define INFO_MIN_SIZE (offsetof(tilec_pdevice_info_t, name))
#define FIELD_END(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))
#define MAX_LOG 16384

#define BAD_ARG(...)                                                                                     \
    do {                                                                                                 \
        tilec_sdk_error_set(__VA_ARGS__);                                                                \
        return TILEC_PS_INVALID_ARGUMENT;                                                                \
    } while (0)

struct tilec_pdevice {
    uint32_t magic;
    uint32_t index;
    const ocl_dev_t *dev;
    cl_context ctx;
    cl_command_queue q;
};

struct tilec_pmem {
    uint32_t magic;
    cl_mem m;
    size_t size;
};

struct tilec_pmodule {
    uint32_t magic;
    struct tilec_pdevice *owner;
    tilec_arena_t ar;
    tilec_ir_module_t *ir;
    char *source;
    size_t source_len;
    unsigned char *binary;
    size_t binary_len;
    cl_program prog;
    cl_kernel kern;
    uint32_t nparams, nsyms;
    size_t threads[3];
    pthread_mutex_t lock;
};

/* ---- host configuration ------------------------------------------------------ */

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*host_log)(void *, const char *, const char *);
static void *host_log_user;
static char *host_cache_dir;

void ocl_log(const char *topic, const char *fmt, ...)
{
    pthread_mutex_lock(&host_lock);
    void (*fn)(void *, const char *, const char *) = host_log;
    void *user = host_log_user;
    pthread_mutex_unlock(&host_lock);
    if (!fn)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fn(user, topic, buf);
}

static char *cache_dir_dup(void)
{
    pthread_mutex_lock(&host_lock);
    char *d = host_cache_dir ? strdup(host_cache_dir) : NULL;
    pthread_mutex_unlock(&host_lock);
    return d;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- devices --------------------------------------------------------------------- */

static const char *ocl_last_error(void) { return tilec_sdk_error_get(); }

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
    if (!count)
        BAD_ARG("opencl: device_count: count is NULL");
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

static tilec_pstatus_t ocl_device_info(uint32_t index, tilec_pdevice_info_t *info)
{
    if (!info)
        BAD_ARG("opencl: device_info: info is NULL");
    if (info->struct_size < INFO_MIN_SIZE)
        BAD_ARG("opencl: device_info: struct_size %u is smaller than %zu", info->struct_size, INFO_MIN_SIZE);
    const ocl_state_t *s = state_or_error();
    if (!s)
        return TILEC_PS_UNAVAILABLE;
    if (index >= s->ndevs)
        BAD_ARG("opencl: device_info: device index %u out of range (%u devices)", index, s->ndevs);
    const ocl_dev_t *d = &s->devs[index];
    tilec_pdevice_info_t full;
    memset(&full, 0, sizeof full);
    snprintf(full.name, sizeof full.name, "%s", d->name);
    snprintf(full.platform, sizeof full.platform, "%s", d->platform_name);
    full.caps = dev_caps(d);
    full.global_mem_bytes = d->global_mem;
    full.shared_mem_bytes = d->local_mem;
    full.max_threads = d->max_wg > UINT32_MAX ? UINT32_MAX : (uint32_t)d->max_wg;
    full.compute_units = d->compute_units;
    uint32_t size = info->struct_size;
    full.struct_size = size;
    memcpy(info, &full, size < sizeof full ? size : sizeof full);
    return TILEC_PS_OK;
}

static tilec_pstatus_t ocl_device_open(uint32_t index, tilec_pdevice_t **out)
{
    if (!out)
        BAD_ARG("opencl: device_open: out is NULL");
    const ocl_state_t *s = state_or_error();
    if (!s)
        return TILEC_PS_UNAVAILABLE;
    if (index >= s->ndevs)
        BAD_ARG("opencl: device_open: device index %u out of range (%u devices)", index, s->ndevs);
    const ocl_dev_t *d = &s->devs[index];
    struct tilec_pdevice *dv = calloc(1, sizeof *dv);
    if (!dv) {
        tilec_sdk_error_set("opencl: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    cl_int e = CL_SUCCESS;
    cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->platform, 0};
    dv->ctx = s->cl.CreateContext(props, 1, &d->id, NULL, NULL, &e);
    if (!dv->ctx || e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: cannot create a context on %s: %s", d->name, ocl_err_name(e));
        free(dv);
        return TILEC_PS_UNAVAILABLE;
    }
    dv->q = s->cl.CreateCommandQueue(dv->ctx, d->id, CL_QUEUE_PROFILING_ENABLE, &e);
    if (!dv->q || e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: cannot create a command queue on %s: %s", d->name, ocl_err_name(e));
        s->cl.ReleaseContext(dv->ctx);
        free(dv);
        return TILEC_PS_UNAVAILABLE;
    }
    dv->magic = OCL_DEV_MAGIC;
    dv->index = index;
    dv->dev = d;
    *out = dv;
    return TILEC_PS_OK;
}

static int dev_ok(const tilec_pdevice_t *d) { return d && d->magic == OCL_DEV_MAGIC; }

static void ocl_device_close(tilec_pdevice_t *d)
{
    if (!dev_ok(d))
        return;
    const ocl_state_t *s = ocl_state();
    s->cl.Finish(d->q);
    s->cl.ReleaseCommandQueue(d->q);
    s->cl.ReleaseContext(d->ctx);
    d->magic = 0;
    free(d);
}

/* ---- compile ------------------------------------------------------------------------ */

static void module_free(tilec_pmodule_t *m)
{
    if (!m)
        return;
    const ocl_state_t *s = ocl_state();
    if (m->kern)
        s->cl.ReleaseKernel(m->kern);
    if (m->prog)
        s->cl.ReleaseProgram(m->prog);
    free(m->source);
    free(m->binary);
    tilec_arena_destroy(&m->ar);
    if (m->magic == OCL_MOD_MAGIC)
        pthread_mutex_destroy(&m->lock);
    m->magic = 0;
    free(m);
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

/* Reads the program's binary into m (best effort: 0 or -1). */
static int fetch_binary(const ocl_state_t *s, tilec_pmodule_t *m)
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
    m->binary = bin;
    m->binary_len = sz;
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

static tilec_pstatus_t compile_module(struct tilec_pdevice *dv, const char *ir, size_t ir_len,
                                      const tilec_pcompile_options_t *opts, tilec_pmodule_t **out)
{
    const ocl_state_t *s = ocl_state();
    const ocl_dev_t *d = dv->dev;
    tilec_pstatus_t st = TILEC_PS_INTERNAL;
    char err[1024];
    char *cache_dir = cache_dir_dup(), *cache_path = NULL, *options = NULL;
    char cache_key[65] = "";
    double t0 = now_ms();
    tilec_pmodule_t *m = calloc(1, sizeof *m);
    if (!m) {
        tilec_sdk_error_set("opencl: out of memory");
        free(cache_dir);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    tilec_arena_init(&m->ar);
    if (tilec_ir_read(&m->ar, ir, ir_len, &m->ir, err, sizeof err) != 0 || !m->ir || !m->ir->kernel) {
        tilec_sdk_error_set("opencl: invalid tile IR: %s", err);
        st = TILEC_PS_INVALID_ARGUMENT;
        goto fail;
    }
    const tilec_ir_kernel_t *k = m->ir->kernel;
    tilec_simt_dialect_t dl;
    ocl_dialect(d, &dl);
    tilec_simt_result_t res;
    memset(&res, 0, sizeof res);
    res.struct_size = sizeof res;
    if (tilec_simt_generate(m->ir, &dl, &res, err, sizeof err) != 0) {
        tilec_sdk_error_set("opencl: cannot lower kernel '%s': %s", k->name ? k->name : "", err);
        st = TILEC_PS_UNSUPPORTED;
        goto fail;
    }
    m->source = res.source;
    m->source_len = res.source_len;
    m->nparams = res.nparams;
    m->nsyms = res.nsyms;
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
    /* cache lookup */
    if (cache_dir) {
        tilec_sha256_t h;
        uint8_t dg[32];
        char hex[65];
        const char *parts[] = {"tilec-opencl", TILEC_OCL_PLUGIN_VERSION, d->platform_name, d->name, d->driver,
                               d->version, options};
        tilec_sha256_init(&h);
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
            tilec_sha256_update(&h, parts[i], strlen(parts[i]) + 1);
        tilec_sha256_update(&h, ir, ir_len);
        tilec_sha256_update(&h, "\n", 1);
        tilec_sha256_update(&h, m->source, m->source_len);
        tilec_sha256_final(&h, dg);
        tilec_sha256_hex(dg, hex);
        cache_path = tilec_sdk_cache_path(cache_dir, "opencl-", hex, ".bin");
        memcpy(cache_key, hex, sizeof cache_key);
        void *bin = NULL;
        size_t blen = 0;
        char why[256];
        tilec_sdk_cache_result_t cr =
            cache_path ? tilec_sdk_cache_load(cache_path, hex, &bin, &blen, why, sizeof why)
                       : TILEC_SDK_CACHE_MISS;
        if (cr == TILEC_SDK_CACHE_BAD) {
            ocl_log("compile", "opencl: cache entry %s rejected: %s; removed, rebuilding", cache_path, why);
        } else if (cr == TILEC_SDK_CACHE_HIT && blen > 0) {
            const unsigned char *bp = bin;
            cl_int bst = CL_SUCCESS;
            m->prog = s->cl.CreateProgramWithBinary(dv->ctx, 1, &d->id, &blen, &bp, &bst, &e);
            if (m->prog && e == CL_SUCCESS && bst == CL_SUCCESS &&
                s->cl.BuildProgram(m->prog, 1, &d->id, options, NULL, NULL) == CL_SUCCESS) {
                m->binary = bin;
                m->binary_len = blen;
                bin = NULL;
                ocl_log("compile", "opencl: cache hit %s (%.1f ms)", cache_path, now_ms() - t0);
            } else {
                ocl_log("compile", "opencl: cache entry %s rejected by the driver; rebuilding", cache_path);
                if (m->prog)
                    s->cl.ReleaseProgram(m->prog);
                m->prog = NULL;
            }
        } else if (cache_path) {
            ocl_log("compile", "opencl: cache miss %s", cache_path);
        }
        free(bin);
    }
    if (!m->prog) {
        const char *src = m->source;
        size_t slen = m->source_len;
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
        ocl_log("compile", "opencl: built kernel '%s' for %s in %.1f ms", k->name, d->name, now_ms() - t0);
        if (fetch_binary(s, m) == 0 && cache_path) {
            if (tilec_sdk_cache_store(cache_path, cache_key, m->binary, m->binary_len) != 0)
                ocl_log("compile", "opencl: cannot write cache entry %s", cache_path);
        }
    }
    m->kern = s->cl.CreateKernel(m->prog, OCL_KERNEL_NAME, &e);
    if (!m->kern || e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: clCreateKernel failed: %s", ocl_err_name(e));
        st = TILEC_PS_COMPILE_ERROR;
        goto fail;
    }
    pthread_mutex_init(&m->lock, NULL);
    m->magic = OCL_MOD_MAGIC;
    m->owner = dv;
    free(cache_dir);
    free(cache_path);
    free(options);
    *out = m;
    return TILEC_PS_OK;
fail:
    module_free(m);
    free(cache_dir);
    free(cache_path);
    free(options);
    return st;
}

static tilec_pstatus_t ocl_compile(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                                   const tilec_pcompile_options_t *opts, tilec_pmodule_t **out)
{
    if (!dev_ok(dev))
        BAD_ARG("opencl: compile: invalid device handle");
    if (!ir || ir_len == 0)
        BAD_ARG("opencl: compile: no IR text");
    if (!out)
        BAD_ARG("opencl: compile: out is NULL");
    if (opts && opts->struct_size < sizeof(tilec_pcompile_options_t))
        BAD_ARG("opencl: compile: options struct_size %u is smaller than %zu", opts->struct_size,
                sizeof(tilec_pcompile_options_t));
    if (opts && opts->opt_level > 3)
        BAD_ARG("opencl: compile: opt_level %u is not in 0..3", opts->opt_level);
    return compile_module(dev, ir, ir_len, opts, out);
}

static int mod_ok(const tilec_pmodule_t *m) { return m && m->magic == OCL_MOD_MAGIC; }

static tilec_pstatus_t ocl_module_data(tilec_pmodule_t *mod, tilec_pdata_kind_t kind, const void **data,
                                       size_t *size)
{
    if (!mod_ok(mod) || !data || !size)
        BAD_ARG("opencl: module_data: NULL or invalid argument");
    switch (kind) {
    case TILEC_PDATA_SOURCE:
        *data = mod->source;
        *size = mod->source_len;
        return TILEC_PS_OK;
    case TILEC_PDATA_BINARY:
        if (!mod->binary) {
            tilec_sdk_error_set("opencl: module_data: the driver gave no program binary");
            return TILEC_PS_UNSUPPORTED;
        }
        *data = mod->binary;
        *size = mod->binary_len;
        return TILEC_PS_OK;
    default: BAD_ARG("opencl: module_data: unknown data kind %d", (int)kind);
    }
}

static void ocl_module_free(tilec_pmodule_t *mod)
{
    if (mod_ok(mod))
        module_free(mod);
}

/* ---- memory --------------------------------------------------------------------------- */

static tilec_pstatus_t ocl_mem_alloc(tilec_pdevice_t *dev, tilec_pmem_scope_t scope, size_t size, tilec_pmem_t **out)
{
    if (!dev_ok(dev))
        BAD_ARG("opencl: mem_alloc: invalid device handle");
    if (!out)
        BAD_ARG("opencl: mem_alloc: out is NULL");
    if (scope != TILEC_PMEM_DEVICE && scope != TILEC_PMEM_HOST)
        BAD_ARG("opencl: mem_alloc: unknown memory scope %d", (int)scope);
    if (dev->dev->max_alloc && size > dev->dev->max_alloc) {
        tilec_sdk_error_set("opencl: mem_alloc: %zu bytes exceed the device's largest allocation (%llu)", size,
                            (unsigned long long)dev->dev->max_alloc);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    tilec_pmem_t *m = calloc(1, sizeof *m);
    if (!m) {
        tilec_sdk_error_set("opencl: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    cl_int e = CL_SUCCESS;
    m->m = ocl_state()->cl.CreateBuffer(dev->ctx, CL_MEM_READ_WRITE, size ? size : 4, NULL, &e);
    if (!m->m || e != CL_SUCCESS) {
        free(m);
        tilec_sdk_error_set("opencl: mem_alloc: clCreateBuffer(%zu bytes) failed: %s", size, ocl_err_name(e));
        return TILEC_PS_OUT_OF_MEMORY;
    }
    m->magic = OCL_MEM_MAGIC;
    m->size = size;
    *out = m;
    return TILEC_PS_OK;
}

static int mem_ok(const tilec_pmem_t *m) { return m && m->magic == OCL_MEM_MAGIC; }

static tilec_pstatus_t ocl_mem_write(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset, const void *src,
                                     size_t size)
{
    if (!dev_ok(dev))
        BAD_ARG("opencl: mem_write: invalid device handle");
    if (!mem_ok(mem))
        BAD_ARG("opencl: mem_write: invalid memory handle");
    tilec_pstatus_t st = tilec_sdk_check_copy("opencl: mem_write", "src", src, offset, size, mem->size);
    if (st != TILEC_PS_OK)
        return st;
    if (!size)
        return TILEC_PS_OK;
    cl_int e = ocl_state()->cl.EnqueueWriteBuffer(dev->q, mem->m, CL_TRUE, offset, size, src, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: mem_write: %s", ocl_err_name(e));
        return TILEC_PS_LAUNCH_ERROR;
    }
    return TILEC_PS_OK;
}

static tilec_pstatus_t ocl_mem_read(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset, void *dst, size_t size)
{
    if (!dev_ok(dev))
        BAD_ARG("opencl: mem_read: invalid device handle");
    if (!mem_ok(mem))
        BAD_ARG("opencl: mem_read: invalid memory handle");
    tilec_pstatus_t st = tilec_sdk_check_copy("opencl: mem_read", "dst", dst, offset, size, mem->size);
    if (st != TILEC_PS_OK)
        return st;
    if (!size)
        return TILEC_PS_OK;
    cl_int e = ocl_state()->cl.EnqueueReadBuffer(dev->q, mem->m, CL_TRUE, offset, size, dst, 0, NULL, NULL);
    if (e != CL_SUCCESS) {
        tilec_sdk_error_set("opencl: mem_read: %s", ocl_err_name(e));
        return TILEC_PS_LAUNCH_ERROR;
    }
    return TILEC_PS_OK;
}

static void ocl_mem_free(tilec_pdevice_t *dev, tilec_pmem_t *mem)
{
    (void)dev;
    if (!mem_ok(mem))
        return;
    ocl_state()->cl.ReleaseMemObject(mem->m);
    mem->magic = 0;
    free(mem);
}

/* ---- launch ------------------------------------------------------------------------------ */

static tilec_pstatus_t launch_locked(tilec_pdevice_t *dev, tilec_pmodule_t *mod, const tilec_plaunch_t *a,
                                     const int64_t *syms, const int64_t grid[3])
{
    const ocl_state_t *s = ocl_state();
    cl_int e;
    for (uint32_t i = 0; i < a->nargs; i++) {
        if ((e = s->cl.SetKernelArg(mod->kern, i, sizeof(cl_mem), &a->args[i]->m)) != CL_SUCCESS) {
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
    ocl_log("launch", "opencl: grid %lld x %lld x %lld, %zu x %zu x %zu threads, %.3f ms", (long long)grid[0],
            (long long)grid[1], (long long)grid[2], local[0], local[1], local[2], host_ms);
    return st;
}

static tilec_pstatus_t ocl_launch(tilec_pdevice_t *dev, tilec_pmodule_t *mod, const tilec_plaunch_t *a)
{
    if (!dev_ok(dev))
        BAD_ARG("opencl: launch: invalid device handle");
    if (!mod_ok(mod))
        BAD_ARG("opencl: launch: invalid module");
    if (mod->owner != dev)
        BAD_ARG("opencl: launch: the module was compiled for another device");
    if (!a)
        BAD_ARG("opencl: launch: arguments are NULL");
    if (a->struct_size < sizeof(tilec_plaunch_t))
        BAD_ARG("opencl: launch: struct_size %u is smaller than %zu", a->struct_size, sizeof(tilec_plaunch_t));
    if (a->nargs != mod->nparams)
        BAD_ARG("opencl: launch: %u arguments given, the kernel takes %u", a->nargs, mod->nparams);
    if (a->nsyms != mod->nsyms)
        BAD_ARG("opencl: launch: %u symbol values given, the kernel has %u", a->nsyms, mod->nsyms);
    if (a->nargs && !a->args)
        BAD_ARG("opencl: launch: args is NULL");
    if (a->nsyms && !a->syms)
        BAD_ARG("opencl: launch: syms is NULL");
    if (a->timed && !a->elapsed_ms)
        BAD_ARG("opencl: launch: timed without elapsed_ms");
    for (uint32_t i = 0; i < a->nsyms; i++)
        if (a->syms[i] < INT32_MIN || a->syms[i] > INT32_MAX)
            BAD_ARG("opencl: launch: symbol %u = %lld does not fit in int32", i, (long long)a->syms[i]);
    const tilec_ir_kernel_t *k = mod->ir->kernel;
    for (uint32_t i = 0; i < a->nargs; i++) {
        if (!mem_ok(a->args[i]))
            BAD_ARG("opencl: launch: argument %u is not a memory handle", i);
        uint64_t need;
        if (tilec_simt_param_bytes(k, (int)i, a->syms, a->nsyms, &need) != 0)
            BAD_ARG("opencl: launch: argument %u has a negative or too large shape for these symbol values", i);
        if (need > a->args[i]->size)
            BAD_ARG("opencl: launch: argument %u has %zu bytes, the kernel needs %llu", i, a->args[i]->size,
                    (unsigned long long)need);
    }
    int64_t grid[3];
    if (tilec_simt_grid(k, a->syms, a->nsyms, grid) != 0)
        BAD_ARG("opencl: launch: the grid does not evaluate to extents in 0..2^31-1 for these symbol values");
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) {
        if (a->timed)
            *a->elapsed_ms = 0;
        return TILEC_PS_OK;
    }
    pthread_mutex_lock(&mod->lock);
    tilec_pstatus_t st = launch_locked(dev, mod, a, a->syms, grid);
    pthread_mutex_unlock(&mod->lock);
    return st;
}

/* ---- the table and the query ----------------------------------------------------------------- */

static const tilec_plugin_t ocl_table = {
    .struct_size = sizeof(tilec_plugin_t),
    .abi_version = TILEC_PLUGIN_ABI_VERSION,
    .name = "opencl",
    .vendor = "tilec",
    .version = TILEC_OCL_PLUGIN_VERSION,
    .caps = TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 | TILEC_CAP_ATOMIC_FLOAT |
            TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_PRINT | TILEC_CAP_DEVICE_TIMER |
            TILEC_CAP_EMIT_SOURCE | TILEC_CAP_EMIT_BINARY | TILEC_CAP_GPU,
    .last_error = ocl_last_error,
    .device_count = ocl_device_count,
    .device_info = ocl_device_info,
    .device_open = ocl_device_open,
    .device_close = ocl_device_close,
    .compile = ocl_compile,
    .module_data = ocl_module_data,
    .module_free = ocl_module_free,
    .mem_alloc = ocl_mem_alloc,
    .mem_write = ocl_mem_write,
    .mem_read = ocl_mem_read,
    .mem_free = ocl_mem_free,
    .launch = ocl_launch,
};

__attribute__((destructor)) static void ocl_host_fini(void)
{
    pthread_mutex_lock(&host_lock);
    free(host_cache_dir);
    host_cache_dir = NULL;
    pthread_mutex_unlock(&host_lock);
}

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out);

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out)
{
    tilec_pstatus_t st = tilec_sdk_check_host("opencl", host, abi_out, table_out);
    if (st != TILEC_PS_OK)
        return st;
    const uint32_t mine = TILEC_PLUGIN_ABI_VERSION;
    char *dir = NULL;
    if (host->struct_size >= FIELD_END(tilec_plugin_host_t, cache_dir) && host->cache_dir && *host->cache_dir) {
        dir = strdup(host->cache_dir);
        if (!dir) {
            tilec_sdk_error_set("opencl: out of memory");
            return TILEC_PS_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_lock(&host_lock);
    if (host->struct_size >= FIELD_END(tilec_plugin_host_t, log_user)) {
        host_log = host->log;
        host_log_user = host->log_user;
    } else {
        host_log = NULL;
        host_log_user = NULL;
    }
    free(host_cache_dir);
    host_cache_dir = dir;
    pthread_mutex_unlock(&host_lock);
    *abi_out = mine;
    *table_out = &ocl_table;
    return TILEC_PS_OK;
}
