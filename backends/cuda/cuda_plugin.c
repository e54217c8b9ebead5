/*
 * cuda_plugin.c — the CUDA backend's plugin table: negotiation, devices,
 * memory, module access and launch through the Driver API.
 *
 * Devices are the driver's devices (cuda:N is device N); each opened
 * device holds a reference on its primary context, which is pushed around
 * every driver call and popped after, so the plugin never leaves a context
 * current on the host's threads.  Memory is cuMemAlloc (device) or
 * cuMemAllocHost (pinned host memory, which the kernel reads through
 * unified addressing).  A module's cubin is loaded (cuModuleLoadData) on
 * the first launch; kernels that need more than 48 KB of dynamic shared
 * memory get their limit raised with cuFuncSetAttribute.  A launch is
 * cuLaunchKernel followed by a synchronization, bracketed by CUDA events
 * when the host asks for device-side timing.  Every driver failure becomes
 * a message naming the call (cuda_fail).
 *
 * Compile needs NVRTC only: compile(NULL device, opts with arch) works on
 * a machine without a driver (docs/plugin-abi.md, "Compile without a
 * device").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tilec/sdk.h"

#define CUDA_MEM_MAGIC 0x74634d43u
#define CUDA_DEV_MAGIC 0x74634443u
#define INFO_MIN_SIZE (offsetof(tilec_pdevice_info_t, name))
#define FIELD_END(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))
#define MAX_ARGS 256

#define BAD_ARG(...)                                                                           \
    do {                                                                                       \
        tilec_sdk_error_set(__VA_ARGS__);                                                      \
        return TILEC_PS_INVALID_ARGUMENT;                                                      \
    } while (0)

struct tilec_pdevice {
    uint32_t magic;
    uint32_t index;
    CUdevice cudev;
    CUcontext ctx;
    int sm;                 /* compute capability * 10 */
    int smem_optin;         /* max dynamic shared memory per block */
    char arch[16];          /* "sm_90" */
};

struct tilec_pmem {
    uint32_t magic;
    tilec_pmem_scope_t scope;
    size_t size;
    CUdeviceptr ptr;
    void *host;             /* pinned host memory (HOST scope) */
    int wrapped;            /* mem_wrap: the caller's memory, mem_free keeps it */
};

static const char *cu_last_error(void) { return tilec_sdk_error_get(); }

/* driver + NVRTC, or NULL with the reason */
static const cuda_driver_api_t *need_driver(void)
{
    const cuda_driver_api_t *d = cuda_driver();
    if (!d)
        return NULL;
    if (!cuda_nvrtc())
        return NULL;
    return d;
}

static tilec_pstatus_t ctx_push(const cuda_driver_api_t *d, tilec_pdevice_t *dev)
{
    CUresult r = d->CtxPushCurrent(dev->ctx);
    return r == CUDA_SUCCESS ? TILEC_PS_OK : cuda_fail("cuCtxPushCurrent", r, TILEC_PS_LAUNCH_ERROR);
}

static void ctx_pop(const cuda_driver_api_t *d)
{
    CUcontext c;
    d->CtxPopCurrent(&c);
}

static tilec_pstatus_t cu_device_count(uint32_t *count)
{
    if (!count)
        BAD_ARG("cuda: device_count: count is NULL");
    *count = 0;
    const cuda_driver_api_t *d = need_driver();
    if (!d)
        return TILEC_PS_UNAVAILABLE;
    int n = 0;
    CUresult r = d->DeviceGetCount(&n);
    if (r != CUDA_SUCCESS)
        return cuda_fail("cuDeviceGetCount", r, TILEC_PS_UNAVAILABLE);
    if (n <= 0) {
        tilec_sdk_error_set("cuda: the driver reports no CUDA device");
        return TILEC_PS_UNAVAILABLE;
    }
    *count = (uint32_t)n;
    return TILEC_PS_OK;
}

static tilec_pstatus_t cu_device_info(uint32_t index, tilec_pdevice_info_t *info)
{
    if (!info)
        BAD_ARG("cuda: device_info: info is NULL");
    if (info->struct_size < INFO_MIN_SIZE)
        BAD_ARG("cuda: device_info: struct_size %u is smaller than %zu", info->struct_size,
                INFO_MIN_SIZE);
    uint32_t n = 0;
    tilec_pstatus_t st = cu_device_count(&n);
    if (st != TILEC_PS_OK)
        return st;
    if (index >= n)
        BAD_ARG("cuda: device_info: device index %u out of range (%u devices)", index, n);
    const cuda_driver_api_t *d = cuda_driver();
    CUdevice dev;
    CUresult r = d->DeviceGet(&dev, (int)index);
    if (r != CUDA_SUCCESS)
        return cuda_fail("cuDeviceGet", r, TILEC_PS_UNAVAILABLE);
    tilec_pdevice_info_t full;
    memset(&full, 0, sizeof full);
    char name[128] = "";
    if ((r = d->DeviceGetName(name, (int)sizeof name - 1, dev)) != CUDA_SUCCESS)
        return cuda_fail("cuDeviceGetName", r, TILEC_PS_UNAVAILABLE);
    int maj = 0, min = 0, sms = 0, mt = 0, optin = 0, drv = 0;
    d->DeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    d->DeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    d->DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    d->DeviceGetAttribute(&mt, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
    d->DeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    d->DriverGetVersion(&drv);
    size_t mem = 0;
    d->DeviceTotalMem(&mem, dev);
    snprintf(full.name, sizeof full.name, "%s (sm_%d%d)", name, maj, min);
    const cuda_nvrtc_api_t *nv = cuda_nvrtc();
    snprintf(full.platform, sizeof full.platform, "CUDA driver %d.%d, NVRTC %d.%d", drv / 1000,
             (drv % 1000) / 10, nv ? nv->major : 0, nv ? nv->minor : 0);
    full.caps = TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 |
                TILEC_CAP_ATOMIC_FLOAT | TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE |
                TILEC_CAP_PRINT | TILEC_CAP_DEVICE_TIMER | TILEC_CAP_EMIT_SOURCE |
                TILEC_CAP_EMIT_BINARY | TILEC_CAP_GPU;
    full.global_mem_bytes = mem;
    full.shared_mem_bytes = (uint64_t)(optin > 0 ? optin : 49152);
    full.max_threads = (uint32_t)(mt > 0 ? mt : 1024);
    full.compute_units = (uint32_t)(sms > 0 ? sms : 0);
    uint32_t size = info->struct_size;
    full.struct_size = size < sizeof full ? size : (uint32_t)sizeof full;
    memcpy(info, &full, size < sizeof full ? size : sizeof full);
    return TILEC_PS_OK;
}

static tilec_pstatus_t cu_device_open(uint32_t index, tilec_pdevice_t **out)
{
    if (!out)
        BAD_ARG("cuda: device_open: out is NULL");
    uint32_t n = 0;
    tilec_pstatus_t st = cu_device_count(&n);
    if (st != TILEC_PS_OK)
        return st;
    if (index >= n)
        BAD_ARG("cuda: device_open: device index %u out of range (%u devices)", index, n);
    const cuda_driver_api_t *d = cuda_driver();
    tilec_pdevice_t *dev = calloc(1, sizeof *dev);
    if (!dev) {
        tilec_sdk_error_set("cuda: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    CUresult r = d->DeviceGet(&dev->cudev, (int)index);
    if (r != CUDA_SUCCESS) {
        free(dev);
        return cuda_fail("cuDeviceGet", r, TILEC_PS_UNAVAILABLE);
    }
    if ((r = d->DevicePrimaryCtxRetain(&dev->ctx, dev->cudev)) != CUDA_SUCCESS) {
        free(dev);
        return cuda_fail("cuDevicePrimaryCtxRetain", r, TILEC_PS_UNAVAILABLE);
    }
    int maj = 0, min = 0;
    d->DeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev->cudev);
    d->DeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev->cudev);
    d->DeviceGetAttribute(&dev->smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                          dev->cudev);
    dev->sm = maj * 10 + min;
    /* compute capability 9.0 gets its arch-specific target, sm_90a, whose
     * cubins use wgmma (they run on 9.0 devices only, like any sm_90 one) */
    snprintf(dev->arch, sizeof dev->arch, "sm_%d%d%s", maj, min, dev->sm == 90 ? "a" : "");
    dev->magic = CUDA_DEV_MAGIC;
    dev->index = index;
    *out = dev;
    return TILEC_PS_OK;
}

static int dev_ok(const tilec_pdevice_t *d) { return d && d->magic == CUDA_DEV_MAGIC; }

static void cu_device_close(tilec_pdevice_t *dev)
{
    if (!dev_ok(dev))
        return;
    const cuda_driver_api_t *d = cuda_driver();
    if (d)
        d->DevicePrimaryCtxRelease(dev->cudev);
    dev->magic = 0;
    free(dev);
}

static tilec_pstatus_t cu_compile(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                                  const tilec_pcompile_options_t *opts, tilec_pmodule_t **out)
{
    if (dev && !dev_ok(dev))
        BAD_ARG("cuda: compile: invalid device handle");
    if (!ir || ir_len == 0)
        BAD_ARG("cuda: compile: no IR text");
    if (!out)
        BAD_ARG("cuda: compile: out is NULL");
    if (opts && opts->struct_size < sizeof(tilec_pcompile_options_t))
        BAD_ARG("cuda: compile: options struct_size %u is smaller than %zu", opts->struct_size,
                sizeof(tilec_pcompile_options_t));
    unsigned opt = opts ? opts->opt_level : 3;
    if (opt > 3)
        BAD_ARG("cuda: compile: opt_level %u is not in 0..3", opt);
    const char *arch = opts && opts->arch && *opts->arch ? opts->arch : NULL;
    if (!arch) {
        if (!dev) {
            tilec_sdk_error_set("cuda: compile: no device and no target: give an arch "
                                "such as sm_90");
            return TILEC_PS_INVALID_ARGUMENT;
        }
        arch = dev->arch;
    }
    return cuda_compile_module(ir, ir_len, arch, opt, opts ? opts->extra : NULL, out);
}

static int mod_ok(const tilec_pmodule_t *m) { return m && m->magic == CUDA_MOD_MAGIC; }

static tilec_pstatus_t cu_module_data(tilec_pmodule_t *mod, tilec_pdata_kind_t kind,
                                      const void **data, size_t *size)
{
    if (!mod_ok(mod) || !data || !size)
        BAD_ARG("cuda: module_data: NULL or invalid argument");
    switch (kind) {
    case TILEC_PDATA_SOURCE:
        *data = mod->source;
        *size = mod->source_len;
        return TILEC_PS_OK;
    case TILEC_PDATA_BINARY:
        *data = mod->binary;
        *size = mod->binary_len;
        return TILEC_PS_OK;
    default:
        BAD_ARG("cuda: module_data: unknown data kind %d", (int)kind);
    }
}

static void cu_module_free(tilec_pmodule_t *mod)
{
    if (!mod_ok(mod))
        return;
    if (mod->cumod && dev_ok(mod->loaded_on)) {
        const cuda_driver_api_t *d = cuda_driver();
        if (d && ctx_push(d, mod->loaded_on) == TILEC_PS_OK) {
            d->ModuleUnload(mod->cumod);
            ctx_pop(d);
        }
    }
    cuda_module_free(mod);
}

static tilec_pstatus_t cu_mem_alloc(tilec_pdevice_t *dev, tilec_pmem_scope_t scope, size_t size,
                                    tilec_pmem_t **out)
{
    if (!dev_ok(dev))
        BAD_ARG("cuda: mem_alloc: invalid device handle");
    if (!out)
        BAD_ARG("cuda: mem_alloc: out is NULL");
    if (scope != TILEC_PMEM_DEVICE && scope != TILEC_PMEM_HOST)
        BAD_ARG("cuda: mem_alloc: unknown memory scope %d", (int)scope);
    const cuda_driver_api_t *d = cuda_driver();
    if (!d)
        return TILEC_PS_UNAVAILABLE;
    tilec_pmem_t *m = calloc(1, sizeof *m);
    if (!m) {
        tilec_sdk_error_set("cuda: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    tilec_pstatus_t st = ctx_push(d, dev);
    if (st != TILEC_PS_OK) {
        free(m);
        return st;
    }
    size_t n = size ? size : 1;
    CUresult r;
    if (scope == TILEC_PMEM_DEVICE) {
        r = d->MemAlloc(&m->ptr, n);
        if (r != CUDA_SUCCESS)
            st = cuda_fail("cuMemAlloc", r, TILEC_PS_OUT_OF_MEMORY);
    } else {
        r = d->MemAllocHost(&m->host, n);
        if (r != CUDA_SUCCESS)
            st = cuda_fail("cuMemAllocHost", r, TILEC_PS_OUT_OF_MEMORY);
        m->ptr = (CUdeviceptr)(uintptr_t)m->host;
    }
    ctx_pop(d);
    if (st != TILEC_PS_OK) {
        free(m);
        return st;
    }
    m->magic = CUDA_MEM_MAGIC;
    m->scope = scope;
    m->size = size;
    *out = m;
    return TILEC_PS_OK;
}

static int mem_ok(const tilec_pmem_t *m) { return m && m->magic == CUDA_MEM_MAGIC; }

static tilec_pstatus_t cu_mem_write(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                    const void *src, size_t size)
{
    if (!dev_ok(dev))
        BAD_ARG("cuda: mem_write: invalid device handle");
    if (!mem_ok(mem))
        BAD_ARG("cuda: mem_write: invalid memory handle");
    tilec_pstatus_t st = tilec_sdk_check_copy("cuda: mem_write", "src", src, offset, size, mem->size);
    if (st != TILEC_PS_OK)
        return st;
    if (!size)
        return TILEC_PS_OK;
    if (mem->scope == TILEC_PMEM_HOST) {
        memcpy((char *)mem->host + offset, src, size);
        return TILEC_PS_OK;
    }
    const cuda_driver_api_t *d = cuda_driver();
    if (!d)
        return TILEC_PS_UNAVAILABLE;
    st = ctx_push(d, dev);
    if (st != TILEC_PS_OK)
        return st;
    CUresult r = d->MemcpyHtoD(mem->ptr + offset, src, size);
    if (r != CUDA_SUCCESS)
        st = cuda_fail("cuMemcpyHtoD", r, TILEC_PS_LAUNCH_ERROR);
    ctx_pop(d);
    return st;
}

static tilec_pstatus_t cu_mem_read(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                   void *dst, size_t size)
{
    if (!dev_ok(dev))
        BAD_ARG("cuda: mem_read: invalid device handle");
    if (!mem_ok(mem))
        BAD_ARG("cuda: mem_read: invalid memory handle");
    tilec_pstatus_t st = tilec_sdk_check_copy("cuda: mem_read", "dst", dst, offset, size, mem->size);
    if (st != TILEC_PS_OK)
        return st;
    if (!size)
        return TILEC_PS_OK;
    const cuda_driver_api_t *d = cuda_driver();
    if (!d)
        return TILEC_PS_UNAVAILABLE;
    st = ctx_push(d, dev);
    if (st != TILEC_PS_OK)
        return st;
    CUresult r;
    if (mem->scope == TILEC_PMEM_HOST) {
        /* kernels may still be writing through unified addressing */
        r = d->CtxSynchronize();
        if (r == CUDA_SUCCESS)
            memcpy(dst, (char *)mem->host + offset, size);
        else
            st = cuda_fail("cuCtxSynchronize", r, TILEC_PS_LAUNCH_ERROR);
    } else {
        r = d->MemcpyDtoH(dst, mem->ptr + offset, size);
        if (r != CUDA_SUCCESS)
            st = cuda_fail("cuMemcpyDtoH", r, TILEC_PS_LAUNCH_ERROR);
    }
    ctx_pop(d);
    return st;
}

static void cu_mem_free(tilec_pdevice_t *dev, tilec_pmem_t *mem)
{
    if (!mem_ok(mem))
        return;
    const cuda_driver_api_t *d = cuda_driver();
    if (!mem->wrapped && d && dev_ok(dev) && ctx_push(d, dev) == TILEC_PS_OK) {
        if (mem->scope == TILEC_PMEM_HOST)
            d->MemFreeHost(mem->host);
        else
            d->MemFree(mem->ptr);
        ctx_pop(d);
    }
    mem->magic = 0;
    free(mem);
}

/* DLPack's device types for CUDA memory (dlpack.h). */
#define DL_CUDA 2
#define DL_CUDA_HOST 3
#define DL_CUDA_MANAGED 13

/* A framework's CUDA allocation (a torch tensor's data) used in place: the
 * kernel gets the pointer itself.  Device memory must be on this device;
 * managed memory is addressable from any. */
static tilec_pstatus_t cu_mem_wrap(tilec_pdevice_t *dev, int dl_type, int dl_id, void *ptr,
                                   size_t size, tilec_pmem_t **out)
{
    if (!dev_ok(dev))
        BAD_ARG("cuda: mem_wrap: invalid device handle");
    if (!out || !ptr)
        BAD_ARG("cuda: mem_wrap: NULL argument");
    if (dl_type != DL_CUDA && dl_type != DL_CUDA_MANAGED) {
        tilec_sdk_error_set("cuda: memory of DLPack device type %d is not CUDA device memory",
                            dl_type);
        return TILEC_PS_UNSUPPORTED;
    }
    if (dl_type == DL_CUDA && dl_id != (int)dev->index) {
        tilec_sdk_error_set("cuda: the memory is on CUDA device %d, this context's device is %u",
                            dl_id, dev->index);
        return TILEC_PS_UNSUPPORTED;
    }
    tilec_pmem_t *m = calloc(1, sizeof *m);
    if (!m) {
        tilec_sdk_error_set("cuda: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    m->magic = CUDA_MEM_MAGIC;
    m->scope = TILEC_PMEM_DEVICE;
    m->size = size;
    m->ptr = (CUdeviceptr)(uintptr_t)ptr;
    m->wrapped = 1;
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t cu_mem_address(tilec_pdevice_t *dev, tilec_pmem_t *mem, int *dl_type,
                                      int *dl_id, void **ptr)
{
    if (!dev_ok(dev))
        BAD_ARG("cuda: mem_address: invalid device handle");
    if (!mem_ok(mem))
        BAD_ARG("cuda: mem_address: invalid memory handle");
    if (!dl_type || !dl_id || !ptr)
        BAD_ARG("cuda: mem_address: NULL argument");
    if (mem->scope == TILEC_PMEM_HOST) {
        *dl_type = DL_CUDA_HOST;
        *dl_id = 0;
        *ptr = mem->host;
    } else {
        *dl_type = DL_CUDA;
        *dl_id = (int)dev->index;
        *ptr = (void *)(uintptr_t)mem->ptr;
    }
    return TILEC_PS_OK;
}

/* Loads the module's cubin on dev (context pushed). */
static tilec_pstatus_t module_load(const cuda_driver_api_t *d, tilec_pdevice_t *dev,
                                   tilec_pmodule_t *mod)
{
    if (mod->cumod && mod->loaded_on == dev)
        return TILEC_PS_OK;
    if (mod->cumod) {
        tilec_sdk_error_set("cuda: launch: module was loaded on another device");
        return TILEC_PS_INVALID_ARGUMENT;
    }
    if (mod->info.smem_bytes > (uint64_t)(dev->smem_optin > 0 ? dev->smem_optin : 49152)) {
        tilec_sdk_error_set("cuda: launch: the kernel needs %llu bytes of shared memory; the "
                            "device allows %d per block",
                            (unsigned long long)mod->info.smem_bytes, dev->smem_optin);
        return TILEC_PS_UNSUPPORTED;
    }
    CUresult r = d->ModuleLoadData(&mod->cumod, mod->binary);
    if (r != CUDA_SUCCESS) {
        mod->cumod = NULL;
        tilec_pstatus_t st = cuda_fail("cuModuleLoadData", r, TILEC_PS_LAUNCH_ERROR);
        tilec_sdk_error_append(" (cubin for %s, device is %s)", mod->arch, dev->arch);
        return st;
    }
    if ((r = d->ModuleGetFunction(&mod->fn, mod->cumod, "tilec_kernel")) != CUDA_SUCCESS) {
        d->ModuleUnload(mod->cumod);
        mod->cumod = NULL;
        return cuda_fail("cuModuleGetFunction", r, TILEC_PS_LAUNCH_ERROR);
    }
    if (mod->info.smem_bytes > 49152) {
        r = d->FuncSetAttribute(mod->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                (int)mod->info.smem_bytes);
        if (r != CUDA_SUCCESS) {
            d->ModuleUnload(mod->cumod);
            mod->cumod = NULL;
            return cuda_fail("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", r,
                             TILEC_PS_LAUNCH_ERROR);
        }
    }
    mod->loaded_on = dev;
    return TILEC_PS_OK;
}

static tilec_pstatus_t cu_launch(tilec_pdevice_t *dev, tilec_pmodule_t *mod,
                                 const tilec_plaunch_t *a)
{
    if (!dev_ok(dev))
        BAD_ARG("cuda: launch: invalid device handle");
    if (!mod_ok(mod))
        BAD_ARG("cuda: launch: invalid module");
    if (!a)
        BAD_ARG("cuda: launch: arguments are NULL");
    if (a->struct_size < sizeof(tilec_plaunch_t))
        BAD_ARG("cuda: launch: struct_size %u is smaller than %zu", a->struct_size,
                sizeof(tilec_plaunch_t));
    if (a->nargs != mod->nparams)
        BAD_ARG("cuda: launch: %u arguments given, the kernel takes %u", a->nargs, mod->nparams);
    if (a->nsyms != mod->nsyms)
        BAD_ARG("cuda: launch: %u symbol values given, the kernel has %u", a->nsyms, mod->nsyms);
    if ((a->nargs && !a->args) || (a->nsyms && !a->syms))
        BAD_ARG("cuda: launch: args or syms is NULL");
    if (a->timed && !a->elapsed_ms)
        BAD_ARG("cuda: launch: timed without elapsed_ms");
    if (a->nargs + a->nsyms > MAX_ARGS)
        BAD_ARG("cuda: launch: more than %d kernel arguments", MAX_ARGS);
    const tilec_ir_kernel_t *k = mod->k;
    static const int64_t nosyms[1] = {0};
    const int64_t *syms = a->nsyms ? a->syms : nosyms;
    CUdeviceptr ptrs[MAX_ARGS];
    int symv[MAX_ARGS];
    void *params[MAX_ARGS];
    for (uint32_t i = 0; i < a->nsyms; i++) {
        if (syms[i] < 0 || syms[i] > INT32_MAX)
            BAD_ARG("cuda: launch: symbol %u = %lld is not in 0..2^31-1", i, (long long)syms[i]);
        symv[i] = (int)syms[i];
        params[a->nargs + i] = &symv[i];
    }
    for (uint32_t i = 0; i < a->nargs; i++) {
        tilec_pmem_t *m = a->args[i];
        if (!mem_ok(m))
            BAD_ARG("cuda: launch: argument %u is not a memory handle", i);
        const tilec_ir_buffer_t *b = k->bufs[i];
        uint64_t need = tilec_dtype_size(b->dtype);
        for (int dd = 0; dd < b->ndim; dd++) {
            int64_t v;
            if (cuda_eval_int(k, b->shape[dd], syms, &v) != 0 || v < 0)
                BAD_ARG("cuda: launch: shape of argument %u cannot be evaluated", i);
            need *= (uint64_t)v;
        }
        if (need > m->size)
            BAD_ARG("cuda: launch: argument %u has %zu bytes, the kernel needs %llu", i, m->size,
                    (unsigned long long)need);
        ptrs[i] = m->ptr;
        params[i] = &ptrs[i];
    }
    int64_t grid[3] = {1, 1, 1};
    for (int dd = 0; dd < k->ngrid; dd++) {
        if (cuda_eval_int(k, k->grid[dd], syms, &grid[dd]) != 0)
            BAD_ARG("cuda: launch: grid extent %d cannot be evaluated", dd);
        if (grid[dd] < 0 || grid[dd] > (dd == 0 ? INT32_MAX : 65535))
            BAD_ARG("cuda: launch: grid extent %d is %lld (CUDA allows up to %d)", dd,
                    (long long)grid[dd], dd == 0 ? INT32_MAX : 65535);
    }
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) {
        if (a->timed)
            *a->elapsed_ms = 0.0;
        return TILEC_PS_OK;
    }
    const cuda_driver_api_t *d = cuda_driver();
    if (!d)
        return TILEC_PS_UNAVAILABLE;
    tilec_pstatus_t st = ctx_push(d, dev);
    if (st != TILEC_PS_OK)
        return st;
    st = module_load(d, dev, mod);
    CUevent e0 = NULL, e1 = NULL;
    CUresult r = CUDA_SUCCESS;
    if (st == TILEC_PS_OK && a->timed) {
        if ((r = d->EventCreate(&e0, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
            (r = d->EventCreate(&e1, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
            st = cuda_fail("cuEventCreate", r, TILEC_PS_LAUNCH_ERROR);
        else if ((r = d->EventRecord(e0, NULL)) != CUDA_SUCCESS)
            st = cuda_fail("cuEventRecord", r, TILEC_PS_LAUNCH_ERROR);
    }
    if (st == TILEC_PS_OK) {
        r = d->LaunchKernel(mod->fn, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2],
                            (unsigned)k->threads[0], (unsigned)k->threads[1],
                            (unsigned)k->threads[2], (unsigned)mod->info.smem_bytes, NULL, params,
                            NULL);
        if (r != CUDA_SUCCESS)
            st = cuda_fail("cuLaunchKernel", r, TILEC_PS_LAUNCH_ERROR);
    }
    if (st == TILEC_PS_OK && a->timed) {
        if ((r = d->EventRecord(e1, NULL)) != CUDA_SUCCESS)
            st = cuda_fail("cuEventRecord", r, TILEC_PS_LAUNCH_ERROR);
        else if ((r = d->EventSynchronize(e1)) != CUDA_SUCCESS)
            st = cuda_fail("cuEventSynchronize (kernel execution)", r, TILEC_PS_LAUNCH_ERROR);
        else {
            float ms = 0;
            if ((r = d->EventElapsedTime(&ms, e0, e1)) != CUDA_SUCCESS)
                st = cuda_fail("cuEventElapsedTime", r, TILEC_PS_LAUNCH_ERROR);
            else
                *a->elapsed_ms = ms;
        }
    }
    if (st == TILEC_PS_OK && (r = d->CtxSynchronize()) != CUDA_SUCCESS)
        st = cuda_fail("cuCtxSynchronize (kernel execution)", r, TILEC_PS_LAUNCH_ERROR);
    if (e0)
        d->EventDestroy(e0);
    if (e1)
        d->EventDestroy(e1);
    ctx_pop(d);
    if (st == TILEC_PS_OK)
        cuda_log("launch", "cuda: grid %lld x %lld x %lld, block %d x %d x %d, %llu bytes of "
                 "shared memory", (long long)grid[0], (long long)grid[1], (long long)grid[2],
                 k->threads[0], k->threads[1], k->threads[2],
                 (unsigned long long)mod->info.smem_bytes);
    return st;
}

static const tilec_plugin_t cuda_table = {
    .struct_size = sizeof(tilec_plugin_t),
    .abi_version = TILEC_PLUGIN_ABI_VERSION,
    .name = "cuda",
    .vendor = "tilec",
    .version = TILEC_CUDA_PLUGIN_VERSION,
    .caps = TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 |
            TILEC_CAP_ATOMIC_FLOAT | TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE |
            TILEC_CAP_PRINT | TILEC_CAP_DEVICE_TIMER | TILEC_CAP_EMIT_SOURCE |
            TILEC_CAP_EMIT_BINARY | TILEC_CAP_GPU,
    .last_error = cu_last_error,
    .device_count = cu_device_count,
    .device_info = cu_device_info,
    .device_open = cu_device_open,
    .device_close = cu_device_close,
    .compile = cu_compile,
    .module_data = cu_module_data,
    .module_free = cu_module_free,
    .mem_alloc = cu_mem_alloc,
    .mem_write = cu_mem_write,
    .mem_read = cu_mem_read,
    .mem_free = cu_mem_free,
    .launch = cu_launch,
    .mem_wrap = cu_mem_wrap,
    .mem_address = cu_mem_address,
};

__attribute__((destructor)) static void cuda_fini(void) { cuda_host_fini(); }

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host,
                                                       uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out);

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host,
                                                       uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out)
{
    tilec_pstatus_t st = tilec_sdk_check_host("cuda", host, abi_out, table_out);
    if (st != TILEC_PS_OK)
        return st;
    const uint32_t mine = TILEC_PLUGIN_ABI_VERSION;
    int has_log = host->struct_size >= FIELD_END(tilec_plugin_host_t, log_user);
    int has_cache = host->struct_size >= FIELD_END(tilec_plugin_host_t, cache_dir);
    cuda_host_set(has_cache ? host->cache_dir : NULL, has_log ? host->log : NULL,
                  has_log ? host->log_user : NULL);
    *abi_out = mine;
    *table_out = &cuda_table;
    return TILEC_PS_OK;
}
