/*
 * hip_plugin.c — the HIP backend's plugin table: devices, memory, module
 * loading and launch through the HIP module API.
 *
 * Devices are the HIP runtime's devices (hip:N is device N).  Every call
 * that touches a device first makes it the calling thread's current one
 * (hipSetDevice).  Memory is hipMalloc (device) or hipHostMalloc (pinned
 * host memory the kernel reads directly).  A module's code object is
 * loaded (hipModuleLoadData) on its first launch; a launch is
 * hipModuleLaunchKernel with the tensors' device pointers and one int64
 * per T.dynamic symbol, followed by hipDeviceSynchronize, bracketed by
 * HIP events when the host asks for device-side timing (--bench).  Every
 * HIP failure becomes a message naming the call (hip_fail).
 *
 * Compile needs hiprtc only (TILEC_SHELL_COMPILE_WITHOUT_DEVICE): with no
 * AMD GPU, `tilec compile --backend hip --arch gfx90a` still works, and
 * `tilec devices` lists hip as unavailable with the reason (no runtime
 * library, or no device).
 *
 * This file has not run on AMD hardware: no AMD GPU exists where it was
 * written (docs/backend-hip.md says what is certified and what is not).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_internal.h"
#include "tilec/lower.h"

#define MAX_ARGS 256

typedef struct hip_dev {
    uint32_t index;
    char arch[64];           /* "gfx90a:sramecc+:xnack-" from the device */
    int lds;                 /* LDS per block */
} hip_dev_t;

typedef struct hip_mem {
    tilec_pmem_scope_t scope;
    void *ptr;               /* device pointer, or the pinned host block */
} hip_mem_t;

static tilec_pstatus_t set_device(const hip_state_t *s, uint32_t index)
{
    hipError_t e = s->api.SetDevice((int)index);
    return e == hipSuccess ? TILEC_PS_OK : hip_fail("hipSetDevice", e, TILEC_PS_LAUNCH_ERROR);
}

static int attr(const hip_state_t *s, uint32_t index, int a)
{
    int v = 0;
    return s->api.DeviceGetAttribute(&v, a, (int)index) == hipSuccess ? v : 0;
}

/* The device's name and gcnArchName ("gfx90a:sramecc+:xnack-"): the name
 * is the first field of hipDeviceProp_t in every ROCm; gcnArchName is
 * found by its form, since its offset differs between ROCm 5 and 6. */
static tilec_pstatus_t props(const hip_state_t *s, uint32_t index, char *name, size_t nlen, char *arch, size_t alen)
{
    unsigned char *p = calloc(1, HIP_PROPS_BYTES);
    if (!p) {
        tilec_sdk_error_set("hip: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    hipError_t e = s->api.GetDeviceProperties(p, (int)index);
    if (e != hipSuccess) {
        free(p);
        return hip_fail("hipGetDeviceProperties", e, TILEC_PS_UNAVAILABLE);
    }
    snprintf(name, nlen, "%.*s", 255, (const char *)p);
    arch[0] = '\0';
    for (size_t o = 256; o + 8 < HIP_PROPS_BYTES && !arch[0]; o += 4) {
        const char *q = (const char *)p + o;
        size_t k = strnlen(q, HIP_PROPS_BYTES - o);
        hip_arch_t a;
        if (k >= 6 && k < 64 && k < HIP_PROPS_BYTES - o && !strncmp(q, "gfx", 3) && hip_arch_parse(q, &a) == 0)
            snprintf(arch, alen, "%s", q);
    }
    free(p);
    if (!arch[0]) {
        tilec_sdk_error_set("hip: device %u reports no gcnArchName", index);
        return TILEC_PS_UNAVAILABLE;
    }
    return TILEC_PS_OK;
}

static tilec_pstatus_t hp_device_count(uint32_t *count)
{
    *count = 0;
    const hip_state_t *s = hip_rt();
    if (!s || !hip_rtc())
        return TILEC_PS_UNAVAILABLE;
    int n = 0;
    hipError_t e = s->api.GetDeviceCount(&n);
    if (e != hipSuccess)
        return hip_fail("hipGetDeviceCount", e, TILEC_PS_UNAVAILABLE);
    *count = n > 0 ? (uint32_t)n : 0;
    return TILEC_PS_OK;
}

#define HIP_CAPS                                                                                               \
    (TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 | TILEC_CAP_ATOMIC_FLOAT |    \
     TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_PRINT | TILEC_CAP_DEVICE_TIMER |               \
     TILEC_CAP_EMIT_SOURCE | TILEC_CAP_EMIT_BINARY | TILEC_CAP_GPU)

/* The matrix instructions the code generator uses on an arch. */
static const char *mma_kinds(const char *arch)
{
    hip_arch_t a;
    if (hip_arch_parse(arch, &a) != 0)
        return "";
    switch (a.family) {
    case HIP_CDNA1: case HIP_CDNA2: case HIP_CDNA3: return "mfma";
    case HIP_RDNA3: return "wmma";
    default: return "";
    }
}

/* A device attribute as property key (not reported when the runtime has
 * no positive value). */
static void prop_attr(const hip_state_t *s, uint32_t index, tilec_shell_device_t *d, uint32_t key, int a)
{
    int x = attr(s, index, a);
    if (x > 0)
        tilec_shell_value_int(&d->prop[key], x);
}

static tilec_pstatus_t hp_describe(uint32_t index, tilec_shell_device_t *d)
{
    const hip_state_t *s = hip_rt();
    if (!s)
        return TILEC_PS_UNAVAILABLE;
    char name[256], arch[64], buf[32];
    tilec_pstatus_t st = props(s, index, name, sizeof name, arch, sizeof arch);
    if (st != TILEC_PS_OK)
        return st;
    tilec_pdevice_info_t *in = &d->info;
    snprintf(in->name, sizeof in->name, "%.80s (%.40s)", name, arch);
    snprintf(in->platform, sizeof in->platform, "HIP runtime %d, hiprtc %d.%d", s->runtime_version, s->rtc_major,
             s->rtc_minor);
    size_t mem = 0;
    s->api.DeviceTotalMem(&mem, (hipDevice_t)index);
    in->caps = HIP_CAPS;
    in->global_mem_bytes = mem;
    int lds = attr(s, index, hipDeviceAttributeMaxSharedMemoryPerBlock);
    in->shared_mem_bytes = (uint64_t)(lds > 0 ? lds : 65536);
    int mt = attr(s, index, hipDeviceAttributeMaxThreadsPerBlock);
    in->max_threads = (uint32_t)(mt > 0 ? mt : 1024);
    int cu = attr(s, index, hipDeviceAttributeMultiprocessorCount);
    in->compute_units = (uint32_t)(cu > 0 ? cu : 0);
    tilec_shell_value_str(&d->prop[TILEC_PROP_ARCH], arch);
    tilec_shell_value_str(&d->prop[TILEC_PROP_MMA_KINDS], mma_kinds(arch));
    prop_attr(s, index, d, TILEC_PROP_SUBGROUP_SIZE, hipDeviceAttributeWarpSize);
    /* LDS has nothing to opt into */
    prop_attr(s, index, d, TILEC_PROP_SHARED_MEM_PER_BLOCK_OPTIN, hipDeviceAttributeMaxSharedMemoryPerBlock);
    prop_attr(s, index, d, TILEC_PROP_REGISTERS_PER_BLOCK, hipDeviceAttributeMaxRegistersPerBlock);
    prop_attr(s, index, d, TILEC_PROP_CLOCK_KHZ, hipDeviceAttributeClockRate);
    int drv = 0;
    s->api.DriverGetVersion(&drv);
    snprintf(buf, sizeof buf, "%d", drv);
    tilec_shell_value_str(&d->prop[TILEC_PROP_DRIVER_VERSION], buf);
    return TILEC_PS_OK;
}

static tilec_pstatus_t hp_device_open(uint32_t index, void *state)
{
    const hip_state_t *s = hip_rt();
    hip_dev_t *dev = state;
    char name[256];
    tilec_pstatus_t st = props(s, index, name, sizeof name, dev->arch, sizeof dev->arch);
    if (st != TILEC_PS_OK)
        return st;
    dev->index = index;
    dev->lds = attr(s, index, hipDeviceAttributeMaxSharedMemoryPerBlock);
    return TILEC_PS_OK;
}

static tilec_pstatus_t hp_compile(void *state, const tilec_pcompile_options_t *opts, tilec_shell_module_t *sm)
{
    hip_dev_t *dev = state;
    /* the shell passes no device only with an arch */
    return hip_compile_module(sm, opts->arch ? opts->arch : dev->arch, opts);
}

static tilec_pstatus_t hp_load(void *state, tilec_shell_module_t *sm)
{
    hip_dev_t *dev = state;
    return hip_load_module(sm, dev->arch);
}

/* --emit lowered: the SDK's lowering passes for the arch's description */
static tilec_pstatus_t hp_lower(void *state, const tilec_pcompile_options_t *opts, tilec_shell_module_t *sm)
{
    hip_dev_t *dev = state;
    const char *arch = opts->arch ? opts->arch : dev->arch;
    const tilec_target_desc_t *t = hip_target_desc(arch);
    if (!t)
        return TILEC_PS_INVALID_ARGUMENT; /* hip_arch_parse set the message */
    return tilec_lower_shell("hip", t, sm);
}

static void hp_module_free(tilec_shell_module_t *sm)
{
    hip_module_t *mod = sm->data;
    const hip_state_t *s = mod->mod ? hip_rt() : NULL;
    if (s && mod->loaded_on && set_device(s, mod->loaded_on->index) == TILEC_PS_OK)
        s->api.ModuleUnload(mod->mod);
}

static tilec_pstatus_t hp_mem_alloc(void *state, tilec_pmem_scope_t scope, size_t size, void *mstate)
{
    hip_dev_t *dev = state;
    hip_mem_t *m = mstate;
    const hip_state_t *s = hip_rt();
    if (!s)
        return TILEC_PS_UNAVAILABLE;
    tilec_pstatus_t st = set_device(s, dev->index);
    if (st != TILEC_PS_OK)
        return st;
    size_t n = size ? size : 1;
    hipError_t e;
    m->scope = scope;
    if (scope == TILEC_PMEM_DEVICE) {
        if ((e = s->api.Malloc(&m->ptr, n)) != hipSuccess)
            return hip_fail("hipMalloc", e, TILEC_PS_OUT_OF_MEMORY);
    } else if ((e = s->api.HostMalloc(&m->ptr, n, 0)) != hipSuccess) {
        return hip_fail("hipHostMalloc", e, TILEC_PS_OUT_OF_MEMORY);
    }
    return TILEC_PS_OK;
}

static tilec_pstatus_t hp_mem_write(void *state, void *mstate, size_t offset, const void *src, size_t size)
{
    hip_dev_t *dev = state;
    hip_mem_t *m = mstate;
    if (m->scope == TILEC_PMEM_HOST) {
        memcpy((char *)m->ptr + offset, src, size);
        return TILEC_PS_OK;
    }
    const hip_state_t *s = hip_rt();
    if (!s)
        return TILEC_PS_UNAVAILABLE;
    tilec_pstatus_t st = set_device(s, dev->index);
    if (st != TILEC_PS_OK)
        return st;
    hipError_t e = s->api.MemcpyHtoD((char *)m->ptr + offset, (void *)src, size);
    return e == hipSuccess ? TILEC_PS_OK : hip_fail("hipMemcpyHtoD", e, TILEC_PS_LAUNCH_ERROR);
}

static tilec_pstatus_t hp_mem_read(void *state, void *mstate, size_t offset, void *dst, size_t size)
{
    hip_dev_t *dev = state;
    hip_mem_t *m = mstate;
    const hip_state_t *s = hip_rt();
    if (!s)
        return TILEC_PS_UNAVAILABLE;
    tilec_pstatus_t st = set_device(s, dev->index);
    if (st != TILEC_PS_OK)
        return st;
    hipError_t e;
    if (m->scope == TILEC_PMEM_HOST) {
        /* kernels may still be writing the pinned block */
        if ((e = s->api.DeviceSynchronize()) != hipSuccess)
            return hip_fail("hipDeviceSynchronize", e, TILEC_PS_LAUNCH_ERROR);
        memcpy(dst, (const char *)m->ptr + offset, size);
        return TILEC_PS_OK;
    }
    e = s->api.MemcpyDtoH(dst, (char *)m->ptr + offset, size);
    return e == hipSuccess ? TILEC_PS_OK : hip_fail("hipMemcpyDtoH", e, TILEC_PS_LAUNCH_ERROR);
}

static void hp_mem_free(void *state, void *mstate)
{
    hip_dev_t *dev = state;
    hip_mem_t *m = mstate;
    const hip_state_t *s = hip_rt();
    if (!s || !m->ptr || set_device(s, dev->index) != TILEC_PS_OK)
        return;
    if (m->scope == TILEC_PMEM_HOST)
        s->api.HostFree(m->ptr);
    else
        s->api.Free(m->ptr);
}

/* Loads the module's code object on dev (current). */
static tilec_pstatus_t module_load(const hip_state_t *s, hip_dev_t *dev, const tilec_shell_module_t *sm,
                                   hip_module_t *mod)
{
    if (mod->mod && mod->loaded_on == dev)
        return TILEC_PS_OK;
    if (mod->mod) {
        tilec_sdk_error_set("hip: launch: the module was loaded on another device");
        return TILEC_PS_INVALID_ARGUMENT;
    }
    if (dev->lds > 0 && mod->lds_bytes > (uint64_t)dev->lds) {
        tilec_sdk_error_set("hip: launch: the kernel needs %llu bytes of LDS; the device allows %d per block",
                            (unsigned long long)mod->lds_bytes, dev->lds);
        return TILEC_PS_UNSUPPORTED;
    }
    hipError_t e = s->api.ModuleLoadData(&mod->mod, sm->binary);
    if (e != hipSuccess) {
        mod->mod = NULL;
        tilec_pstatus_t st = hip_fail("hipModuleLoadData", e, TILEC_PS_LAUNCH_ERROR);
        tilec_sdk_error_append(" (code object for %s, device is %s)", mod->arch.name, dev->arch);
        return st;
    }
    if ((e = s->api.ModuleGetFunction(&mod->fn, mod->mod, HIP_KERNEL_NAME)) != hipSuccess) {
        s->api.ModuleUnload(mod->mod);
        mod->mod = NULL;
        return hip_fail("hipModuleGetFunction", e, TILEC_PS_LAUNCH_ERROR);
    }
    mod->loaded_on = dev;
    return TILEC_PS_OK;
}

static tilec_pstatus_t timed_launch(const hip_state_t *s, hip_module_t *mod, const tilec_ir_kernel_t *k,
                                    const tilec_shell_launch_t *a, void **params)
{
    hipEvent_t e0 = NULL, e1 = NULL;
    hipError_t e = hipSuccess;
    tilec_pstatus_t st = TILEC_PS_OK;
    if (a->timed) {
        if ((e = s->api.EventCreate(&e0)) != hipSuccess || (e = s->api.EventCreate(&e1)) != hipSuccess)
            st = hip_fail("hipEventCreate", e, TILEC_PS_LAUNCH_ERROR);
        else if ((e = s->api.EventRecord(e0, NULL)) != hipSuccess)
            st = hip_fail("hipEventRecord", e, TILEC_PS_LAUNCH_ERROR);
    }
    if (st == TILEC_PS_OK) {
        e = s->api.ModuleLaunchKernel(mod->fn, (unsigned)a->grid[0], (unsigned)a->grid[1], (unsigned)a->grid[2],
                                      (unsigned)k->threads[0], (unsigned)k->threads[1], (unsigned)k->threads[2], 0,
                                      NULL, params, NULL);
        if (e != hipSuccess)
            st = hip_fail("hipModuleLaunchKernel", e, TILEC_PS_LAUNCH_ERROR);
    }
    if (st == TILEC_PS_OK && a->timed) {
        float ms = 0;
        if ((e = s->api.EventRecord(e1, NULL)) != hipSuccess)
            st = hip_fail("hipEventRecord", e, TILEC_PS_LAUNCH_ERROR);
        else if ((e = s->api.EventSynchronize(e1)) != hipSuccess)
            st = hip_fail("hipEventSynchronize (kernel execution)", e, TILEC_PS_LAUNCH_ERROR);
        else if ((e = s->api.EventElapsedTime(&ms, e0, e1)) != hipSuccess)
            st = hip_fail("hipEventElapsedTime", e, TILEC_PS_LAUNCH_ERROR);
        else
            *a->elapsed_ms = ms;
    }
    if (st == TILEC_PS_OK && (e = s->api.DeviceSynchronize()) != hipSuccess)
        st = hip_fail("hipDeviceSynchronize (kernel execution)", e, TILEC_PS_LAUNCH_ERROR);
    if (e0)
        s->api.EventDestroy(e0);
    if (e1)
        s->api.EventDestroy(e1);
    return st;
}

static tilec_pstatus_t hp_launch(void *state, tilec_shell_module_t *sm, const tilec_shell_launch_t *a)
{
    hip_dev_t *dev = state;
    hip_module_t *mod = sm->data;
    if (a->nargs + a->nsyms > MAX_ARGS) {
        tilec_sdk_error_set("hip: launch: more than %d kernel arguments", MAX_ARGS);
        return TILEC_PS_INVALID_ARGUMENT;
    }
    void *ptrs[MAX_ARGS];
    long long symv[MAX_ARGS];
    void *params[MAX_ARGS];
    for (uint32_t i = 0; i < a->nargs; i++) {
        ptrs[i] = ((const hip_mem_t *)a->args[i])->ptr;
        params[i] = &ptrs[i];
    }
    for (uint32_t i = 0; i < a->nsyms; i++) {
        symv[i] = (long long)a->syms[i]; /* the kit's symbol parameters are long long */
        params[a->nargs + i] = &symv[i];
    }
    for (int d = 1; d < 3; d++)
        if (a->grid[d] > 65535) {
            tilec_sdk_error_set("hip: launch: grid extent %d is %lld (at most 65535)", d, (long long)a->grid[d]);
            return TILEC_PS_INVALID_ARGUMENT;
        }
    const hip_state_t *s = hip_rt();
    if (!s)
        return TILEC_PS_UNAVAILABLE;
    tilec_pstatus_t st = set_device(s, dev->index);
    if (st == TILEC_PS_OK)
        st = module_load(s, dev, sm, mod);
    if (st == TILEC_PS_OK)
        st = timed_launch(s, mod, sm->kernel, a, params);
    if (st == TILEC_PS_OK)
        tilec_shell_log("launch", "hip: grid %lld x %lld x %lld, block %d x %d x %d, %llu bytes of LDS on %s",
                        (long long)a->grid[0], (long long)a->grid[1], (long long)a->grid[2], sm->kernel->threads[0],
                        sm->kernel->threads[1], sm->kernel->threads[2], (unsigned long long)mod->lds_bytes,
                        dev->arch);
    return st;
}

/* What the runtime says the kernel uses (the module is loaded on the
 * device it was compiled on; compile-only modules keep what codegen knew). */
static void hp_module_info(tilec_shell_module_t *sm, tilec_pmodule_info_t *info)
{
    hip_dev_t *dev = sm->dev;
    hip_module_t *mod = sm->data;
    const hip_state_t *s = dev ? hip_rt() : NULL;
    if (!s || set_device(s, dev->index) != TILEC_PS_OK || module_load(s, dev, sm, mod) != TILEC_PS_OK)
        return;
    int v;
    if (s->api.FuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_NUM_REGS, mod->fn) == hipSuccess)
        info->registers = v;
    if (s->api.FuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, mod->fn) == hipSuccess)
        info->shared_static_bytes = v;
    if (s->api.FuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, mod->fn) == hipSuccess)
        info->local_bytes = v;
    if (s->api.FuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, mod->fn) == hipSuccess)
        info->max_threads = v;
}

static const tilec_shell_backend_t hip_backend = {
    .name = "hip",
    .vendor = "tilec",
    .version = TILEC_HIP_PLUGIN_VERSION,
    .caps = HIP_CAPS,
    .abi_max = TILEC_PLUGIN_ABI_VERSION,
    .ir_min = TILEC_IR_MAKE(1, 0),
    .ir_max = TILEC_IR_MAKE(1, 4), /* high-level IR is lowered here; a lowered .tir is printed as it is; 1.2: float8;
                                      1.4: bit casts (the SIMT kit); 1.3's 4-bit dtypes refused (TILEC_SHELL_NO_4BIT) */
    .flags = TILEC_SHELL_COMPILE_WITHOUT_DEVICE | TILEC_SHELL_NO_4BIT,
    .device_size = sizeof(hip_dev_t),
    .mem_size = sizeof(hip_mem_t),
    .module_size = sizeof(hip_module_t),
    .device_count = hp_device_count,
    .device_describe = hp_describe,
    .device_open = hp_device_open,
    .compile = hp_compile,
    .load = hp_load,
    .lower = hp_lower,
    .module_info = hp_module_info,
    .module_free = hp_module_free,
    .mem_alloc = hp_mem_alloc,
    .mem_write = hp_mem_write,
    .mem_read = hp_mem_read,
    .mem_free = hp_mem_free,
    .launch = hp_launch,
};

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out);

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out)
{
    return tilec_shell_query(&hip_backend, host, abi_out, table_out);
}
