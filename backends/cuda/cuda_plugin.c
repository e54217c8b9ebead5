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
 *
 * The ABI table is the SDK's plugin shell (tilec/shell.h): argument
 * checks, handles, the module's IR, source and cubin, module_data and the
 * host's cache directory are its; the hooks below get valid arguments.
 * module_info loads the module on its device and asks the driver
 * (cuFuncGetAttribute) for registers, static shared and local memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tilec/lower.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"

#define MAX_ARGS 256

typedef struct cuda_dev {
    uint32_t index;
    CUdevice cudev;
    CUcontext ctx;
    int sm;                 /* compute capability * 10 */
    int smem_optin;         /* max dynamic shared memory per block */
    char arch[16];          /* "sm_90" */
} cuda_dev_t;

typedef struct cuda_mem {
    tilec_pmem_scope_t scope;
    CUdeviceptr ptr;
    void *host;             /* pinned host memory (HOST scope) */
    int wrapped;            /* mem_wrap: the caller's memory, mem_free keeps it */
} cuda_mem_t;

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

static tilec_pstatus_t ctx_push(const cuda_driver_api_t *d, cuda_dev_t *dev)
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

static int dev_attr(const cuda_driver_api_t *d, CUdevice dev, int attr)
{
    int v = 0;
    return d->DeviceGetAttribute(&v, attr, dev) == CUDA_SUCCESS ? v : 0;
}

static tilec_pstatus_t get_device(uint32_t index, const cuda_driver_api_t **d, CUdevice *dev)
{
    *d = cuda_driver();
    if (!*d)
        return TILEC_PS_UNAVAILABLE;
    CUresult r = (*d)->DeviceGet(dev, (int)index);
    return r == CUDA_SUCCESS ? TILEC_PS_OK : cuda_fail("cuDeviceGet", r, TILEC_PS_UNAVAILABLE);
}

#define CUDA_CAPS                                                                              \
    (TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 |            \
     TILEC_CAP_ATOMIC_FLOAT | TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_PRINT | \
     TILEC_CAP_DEVICE_TIMER | TILEC_CAP_EMIT_SOURCE | TILEC_CAP_EMIT_BINARY | TILEC_CAP_GPU |   \
     TILEC_CAP_STREAM)

static tilec_pstatus_t cu_device_info(uint32_t index, tilec_pdevice_info_t *full)
{
    const cuda_driver_api_t *d;
    CUdevice dev;
    tilec_pstatus_t st = get_device(index, &d, &dev);
    if (st != TILEC_PS_OK)
        return st;
    char name[128] = "";
    CUresult r;
    if ((r = d->DeviceGetName(name, (int)sizeof name - 1, dev)) != CUDA_SUCCESS)
        return cuda_fail("cuDeviceGetName", r, TILEC_PS_UNAVAILABLE);
    int maj = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    int min = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    int sms = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    int mt = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    int optin = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    int drv = 0;
    d->DriverGetVersion(&drv);
    size_t mem = 0;
    d->DeviceTotalMem(&mem, dev);
    snprintf(full->name, sizeof full->name, "%s (sm_%d%d)", name, maj, min);
    const cuda_nvrtc_api_t *nv = cuda_nvrtc();
    snprintf(full->platform, sizeof full->platform, "CUDA driver %d.%d, NVRTC %d.%d", drv / 1000,
             (drv % 1000) / 10, nv ? nv->major : 0, nv ? nv->minor : 0);
    full->caps = CUDA_CAPS;
    full->global_mem_bytes = mem;
    full->shared_mem_bytes = (uint64_t)(optin > 0 ? optin : 49152);
    full->max_threads = (uint32_t)(mt > 0 ? mt : 1024);
    full->compute_units = (uint32_t)(sms > 0 ? sms : 0);
    return TILEC_PS_OK;
}

/* "sm_90a" for compute capability 9.0 (its cubins use wgmma), else "sm_XY". */
static void arch_of(int maj, int min, char *out, size_t n)
{
    snprintf(out, n, "sm_%d%d%s", maj, min, maj == 9 && min == 0 ? "a" : "");
}

static tilec_pstatus_t cu_device_property(uint32_t index, uint32_t key, tilec_pvalue_t *v)
{
    const cuda_driver_api_t *d;
    CUdevice dev;
    tilec_pstatus_t st = get_device(index, &d, &dev);
    if (st != TILEC_PS_OK)
        return st;
    int maj = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    int min = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    char buf[32];
    int x;
    switch (key) {
    case TILEC_PROP_ARCH:
        arch_of(maj, min, buf, sizeof buf);
        return tilec_shell_value_str(v, buf);
    case TILEC_PROP_SUBGROUP_SIZE:
        return (x = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE)) > 0 ? tilec_shell_value_int(v, x)
                                                                         : TILEC_PS_UNSUPPORTED;
    case TILEC_PROP_SHARED_MEM_PER_BLOCK:
        return (x = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)) > 0
                   ? tilec_shell_value_int(v, x) : TILEC_PS_UNSUPPORTED;
    case TILEC_PROP_SHARED_MEM_PER_BLOCK_OPTIN:
        return (x = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)) > 0
                   ? tilec_shell_value_int(v, x) : TILEC_PS_UNSUPPORTED;
    case TILEC_PROP_REGISTERS_PER_BLOCK:
        return (x = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)) > 0
                   ? tilec_shell_value_int(v, x) : TILEC_PS_UNSUPPORTED;
    case TILEC_PROP_CLOCK_KHZ:
        return (x = dev_attr(d, dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE)) > 0 ? tilec_shell_value_int(v, x)
                                                                          : TILEC_PS_UNSUPPORTED;
    case TILEC_PROP_MMA_KINDS:
        /* what the code generator uses: mma.sync from sm_80, wgmma on sm_90a */
        return tilec_shell_value_str(v, maj * 10 + min == 90 ? "mma_sync,wgmma"
                                        : maj >= 8 ? "mma_sync" : "");
    case TILEC_PROP_DRIVER_VERSION: {
        int drv = 0;
        d->DriverGetVersion(&drv);
        snprintf(buf, sizeof buf, "%d.%d", drv / 1000, (drv % 1000) / 10);
        return tilec_shell_value_str(v, buf);
    }
    default:
        return TILEC_PS_UNSUPPORTED;
    }
}

static tilec_pstatus_t cu_device_open(uint32_t index, void *state)
{
    const cuda_driver_api_t *d = cuda_driver();
    cuda_dev_t *dev = state;
    CUresult r = d->DeviceGet(&dev->cudev, (int)index);
    if (r != CUDA_SUCCESS)
        return cuda_fail("cuDeviceGet", r, TILEC_PS_UNAVAILABLE);
    if ((r = d->DevicePrimaryCtxRetain(&dev->ctx, dev->cudev)) != CUDA_SUCCESS)
        return cuda_fail("cuDevicePrimaryCtxRetain", r, TILEC_PS_UNAVAILABLE);
    int maj = dev_attr(d, dev->cudev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    int min = dev_attr(d, dev->cudev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    dev->smem_optin = dev_attr(d, dev->cudev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    dev->sm = maj * 10 + min;
    /* compute capability 9.0 gets its arch-specific target, sm_90a, whose
     * cubins use wgmma (they run on 9.0 devices only, like any sm_90 one) */
    arch_of(maj, min, dev->arch, sizeof dev->arch);
    dev->index = index;
    return TILEC_PS_OK;
}

static void cu_device_close(void *state)
{
    cuda_dev_t *dev = state;
    const cuda_driver_api_t *d = cuda_driver();
    if (d)
        d->DevicePrimaryCtxRelease(dev->cudev);
}

static tilec_pstatus_t cu_compile(void *state, const tilec_pcompile_options_t *opts,
                                  tilec_shell_module_t *sm)
{
    cuda_dev_t *dev = state;
    /* the shell passes no device only with an arch */
    return cuda_compile_module(sm, opts->arch ? opts->arch : dev->arch, opts);
}

static tilec_pstatus_t cu_load(void *state, tilec_shell_module_t *sm)
{
    cuda_dev_t *dev = state;
    return cuda_load_module(sm, dev->arch);
}

/* --emit lowered: the SDK's lowering passes for the arch's description */
static tilec_pstatus_t cu_lower(void *state, const tilec_pcompile_options_t *opts, tilec_shell_module_t *sm)
{
    cuda_dev_t *dev = state;
    return tilec_lower_shell("cuda", cuda_lower_desc(opts->arch ? opts->arch : dev->arch), sm);
}

static void cu_module_free(tilec_shell_module_t *sm)
{
    cuda_module_t *mod = sm->data;
    if (mod->cumod && mod->loaded_on) {
        const cuda_driver_api_t *d = cuda_driver();
        if (d && ctx_push(d, mod->loaded_on) == TILEC_PS_OK) {
            d->ModuleUnload(mod->cumod);
            ctx_pop(d);
        }
    }
}

static tilec_pstatus_t cu_mem_alloc(void *state, tilec_pmem_scope_t scope, size_t size, void *mstate)
{
    cuda_dev_t *dev = state;
    cuda_mem_t *m = mstate;
    const cuda_driver_api_t *d = cuda_driver();
    if (!d)
        return TILEC_PS_UNAVAILABLE;
    tilec_pstatus_t st = ctx_push(d, dev);
    if (st != TILEC_PS_OK)
        return st;
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
    m->scope = scope;
    return st;
}

static tilec_pstatus_t cu_mem_write(void *state, void *mstate, size_t offset, const void *src,
                                    size_t size)
{
    cuda_dev_t *dev = state;
    cuda_mem_t *mem = mstate;
    if (mem->scope == TILEC_PMEM_HOST) {
        memcpy((char *)mem->host + offset, src, size);
        return TILEC_PS_OK;
    }
    const cuda_driver_api_t *d = cuda_driver();
    if (!d)
        return TILEC_PS_UNAVAILABLE;
    tilec_pstatus_t st = ctx_push(d, dev);
    if (st != TILEC_PS_OK)
        return st;
    CUresult r = d->MemcpyHtoD(mem->ptr + offset, src, size);
    if (r != CUDA_SUCCESS)
        st = cuda_fail("cuMemcpyHtoD", r, TILEC_PS_LAUNCH_ERROR);
    ctx_pop(d);
    return st;
}

static tilec_pstatus_t cu_mem_read(void *state, void *mstate, size_t offset, void *dst, size_t size)
{
    cuda_dev_t *dev = state;
    cuda_mem_t *mem = mstate;
    const cuda_driver_api_t *d = cuda_driver();
    if (!d)
        return TILEC_PS_UNAVAILABLE;
    tilec_pstatus_t st = ctx_push(d, dev);
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

static void cu_mem_free(void *state, void *mstate)
{
    cuda_dev_t *dev = state;
    cuda_mem_t *mem = mstate;
    const cuda_driver_api_t *d = cuda_driver();
    if (!mem->wrapped && d && dev && ctx_push(d, dev) == TILEC_PS_OK) {
        if (mem->scope == TILEC_PMEM_HOST)
            d->MemFreeHost(mem->host);
        else
            d->MemFree(mem->ptr);
        ctx_pop(d);
    }
}

/* DLPack's device types for CUDA memory (dlpack.h). */
#define DL_CUDA 2
#define DL_CUDA_HOST 3
#define DL_CUDA_MANAGED 13

/* A framework's CUDA allocation (a torch tensor's data) used in place: the
 * kernel gets the pointer itself.  Device memory must be on this device;
 * managed memory is addressable from any. */
static tilec_pstatus_t cu_mem_wrap(void *state, int dl_type, int dl_id, void *ptr, size_t size,
                                   void *mstate)
{
    cuda_dev_t *dev = state;
    cuda_mem_t *m = mstate;
    (void)size;
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
    m->scope = TILEC_PMEM_DEVICE;
    m->ptr = (CUdeviceptr)(uintptr_t)ptr;
    m->wrapped = 1;
    return TILEC_PS_OK;
}

static tilec_pstatus_t cu_mem_address(void *state, void *mstate, int *dl_type, int *dl_id,
                                      void **ptr)
{
    cuda_dev_t *dev = state;
    cuda_mem_t *mem = mstate;
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
static tilec_pstatus_t module_load(const cuda_driver_api_t *d, cuda_dev_t *dev,
                                   const tilec_shell_module_t *sm, cuda_module_t *mod)
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
    CUresult r = d->ModuleLoadData(&mod->cumod, sm->binary);
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

static tilec_pstatus_t cu_launch(void *state, tilec_shell_module_t *sm, const tilec_shell_launch_t *a)
{
    cuda_dev_t *dev = state;
    cuda_module_t *mod = sm->data;
    const tilec_ir_kernel_t *k = sm->kernel;
    if (a->nargs + a->nsyms + (uint32_t)mod->info.ntmap > MAX_ARGS) {
        tilec_sdk_error_set("cuda: launch: more than %d kernel arguments", MAX_ARGS);
        return TILEC_PS_INVALID_ARGUMENT;
    }
    CUdeviceptr ptrs[MAX_ARGS];
    int symv[MAX_ARGS];
    void *params[MAX_ARGS];
    CUtensorMap maps[CUDA_MAX_TMAPS];
    for (uint32_t i = 0; i < a->nsyms; i++) {
        if (a->syms[i] < 0) {
            tilec_sdk_error_set("cuda: launch: symbol %u = %lld is not in 0..2^31-1", i,
                                (long long)a->syms[i]);
            return TILEC_PS_INVALID_ARGUMENT;
        }
        symv[i] = (int)a->syms[i];
        params[a->nargs + i] = &symv[i];
    }
    for (uint32_t i = 0; i < a->nargs; i++) {
        ptrs[i] = ((const cuda_mem_t *)a->args[i])->ptr;
        params[i] = &ptrs[i];
    }
    /* a persistent kernel runs its own grid: P blocks looping over the tiles */
    const int64_t pgrid[3] = {mod->info.persistent_blocks, 1, 1};
    const int64_t *grid = mod->info.persistent_blocks ? pgrid : a->grid;
    for (int dd = 1; dd < 3; dd++)
        if (grid[dd] > 65535) {
            tilec_sdk_error_set("cuda: launch: grid extent %d is %lld (CUDA allows up to 65535)", dd,
                                (long long)grid[dd]);
            return TILEC_PS_INVALID_ARGUMENT;
        }
    const cuda_driver_api_t *d = cuda_driver();
    if (!d)
        return TILEC_PS_UNAVAILABLE;
    tilec_pstatus_t st = ctx_push(d, dev);
    if (st != TILEC_PS_OK)
        return st;
    st = module_load(d, dev, sm, mod);
    if (st == TILEC_PS_OK && mod->info.ntmap > 0) { /* after the symbols (cuda_tma.c) */
        st = cuda_tma_encode(d, &mod->info, k, ptrs, maps);
        for (int i = 0; i < mod->info.ntmap; i++)
            params[a->nargs + a->nsyms + (uint32_t)i] = &maps[i];
    }
    CUstream stream = (CUstream)a->stream;
    CUevent e0 = NULL, e1 = NULL;
    CUresult r = CUDA_SUCCESS;
    if (st == TILEC_PS_OK && a->timed) {
        if ((r = d->EventCreate(&e0, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
            (r = d->EventCreate(&e1, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
            st = cuda_fail("cuEventCreate", r, TILEC_PS_LAUNCH_ERROR);
        else if ((r = d->EventRecord(e0, stream)) != CUDA_SUCCESS)
            st = cuda_fail("cuEventRecord", r, TILEC_PS_LAUNCH_ERROR);
    }
    const uint32_t *cl = mod->info.cluster;
    if (st == TILEC_PS_OK && cl[0]) {
        /* the cluster pass's kernel: its grid in clusters of blocks (the
         * pass made the clustered extent a multiple of the cluster's) */
        CUlaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        at.value.clusterDim.x = cl[0];
        at.value.clusterDim.y = cl[1];
        at.value.clusterDim.z = cl[2];
        CUlaunchConfig cfg = {(unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2], mod->info.threads[0],
                              mod->info.threads[1], mod->info.threads[2], (unsigned)mod->info.smem_bytes, stream,
                              &at, 1};
        if (!d->LaunchKernelEx) {
            tilec_sdk_error_set("cuda: launch: the driver has no cuLaunchKernelEx for a cluster launch "
                                "(unset TILEC_CUDA_CLUSTER)");
            st = TILEC_PS_UNAVAILABLE;
        } else if ((r = d->LaunchKernelEx(&cfg, mod->fn, params, NULL)) != CUDA_SUCCESS) {
            st = cuda_fail("cuLaunchKernelEx", r, TILEC_PS_LAUNCH_ERROR);
        }
    } else if (st == TILEC_PS_OK) {
        r = d->LaunchKernel(mod->fn, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2],
                            mod->info.threads[0], mod->info.threads[1], mod->info.threads[2],
                            (unsigned)mod->info.smem_bytes, stream, params,
                            NULL);
        if (r != CUDA_SUCCESS)
            st = cuda_fail("cuLaunchKernel", r, TILEC_PS_LAUNCH_ERROR);
    }
    if (st == TILEC_PS_OK && a->timed) {
        if ((r = d->EventRecord(e1, stream)) != CUDA_SUCCESS)
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
    /* on the caller's stream the kernel runs after the caller's work and the
     * caller waits for it (an error then surfaces at its next sync) */
    if (st == TILEC_PS_OK && !stream && (r = d->CtxSynchronize()) != CUDA_SUCCESS)
        st = cuda_fail("cuCtxSynchronize (kernel execution)", r, TILEC_PS_LAUNCH_ERROR);
    if (e0)
        d->EventDestroy(e0);
    if (e1)
        d->EventDestroy(e1);
    ctx_pop(d);
    char cls[64] = "";
    if (cl[0])
        snprintf(cls, sizeof cls, ", clusters of %u x %u x %u blocks", cl[0], cl[1], cl[2]);
    if (st == TILEC_PS_OK)
        tilec_shell_log("launch", "cuda: grid %lld x %lld x %lld, block %d x %d x %d, %llu bytes of "
                 "shared memory%s", (long long)grid[0], (long long)grid[1], (long long)grid[2],
                 (int)mod->info.threads[0], (int)mod->info.threads[1], (int)mod->info.threads[2],
                 (unsigned long long)mod->info.smem_bytes, cls);
    return st;
}

/* What the driver says the kernel uses: the module is loaded on the
 * device it was compiled on (compile-only modules keep what codegen knew). */
static void cu_module_info(tilec_shell_module_t *sm, tilec_pmodule_info_t *info)
{
    cuda_dev_t *dev = sm->dev;
    cuda_module_t *mod = sm->data;
    const cuda_driver_api_t *d = dev ? cuda_driver() : NULL;
    if (!d || ctx_push(d, dev) != TILEC_PS_OK)
        return;
    if (module_load(d, dev, sm, mod) == TILEC_PS_OK) {
        int v;
        if (d->FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, mod->fn) == CUDA_SUCCESS)
            info->registers = v;
        if (d->FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, mod->fn) == CUDA_SUCCESS)
            info->shared_static_bytes = v;
        if (d->FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, mod->fn) == CUDA_SUCCESS)
            info->local_bytes = v;
        if (d->FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, mod->fn) == CUDA_SUCCESS)
            info->max_threads = v;
    }
    ctx_pop(d);
}

static const tilec_shell_backend_t cuda_backend = {
    .name = "cuda",
    .vendor = "tilec",
    .version = TILEC_CUDA_PLUGIN_VERSION,
    .caps = CUDA_CAPS,
    .abi_max = TILEC_PLUGIN_ABI_VERSION,
    .ir_min = TILEC_IR_MAKE(1, 0),
    .ir_max = TILEC_IR_MAKE(1, 4), /* lowered input too: layouts, async copies, rings, barriers; 1.2: float8;
                                      1.4: bit casts (the SIMT kit); 1.3's 4-bit dtypes refused (TILEC_SHELL_NO_4BIT) */
    .flags = TILEC_SHELL_COMPILE_WITHOUT_DEVICE | TILEC_SHELL_NO_4BIT,
    .device_size = sizeof(cuda_dev_t),
    .mem_size = sizeof(cuda_mem_t),
    .module_size = sizeof(cuda_module_t),
    .device_count = cu_device_count,
    .device_info = cu_device_info,
    .device_property = cu_device_property,
    .device_open = cu_device_open,
    .device_close = cu_device_close,
    .compile = cu_compile,
    .load = cu_load,
    .lower = cu_lower,
    .module_info = cu_module_info,
    .module_free = cu_module_free,
    .mem_alloc = cu_mem_alloc,
    .mem_write = cu_mem_write,
    .mem_read = cu_mem_read,
    .mem_free = cu_mem_free,
    .launch = cu_launch,
    .mem_wrap = cu_mem_wrap,
    .mem_address = cu_mem_address,
};

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host,
                                                       uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out);

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host,
                                                       uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out)
{
    return tilec_shell_query(&cuda_backend, host, abi_out, table_out);
}
