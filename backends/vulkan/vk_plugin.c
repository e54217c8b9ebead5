/*
 * vk_plugin.c — the Vulkan backend's plugin on the SDK shell: devices,
 * compile (SIMT kit GLSL -> glslc -> SPIR-V -> compute pipeline, with the
 * kernel cache), memory, launch.
 *
 * Devices are the Vulkan 1.1 physical devices with a compute queue, in the
 * loader's order (vulkan:N).  Opening one creates a logical device with
 * every feature the backend queried enabled, one queue, one command
 * buffer with a fence (every operation is recorded, submitted and waited
 * for under the device's lock: simple, and kernels are long next to a
 * submission) and a timestamp query pool when the queue has timestamps.
 *
 * Memory: on a CPU device (lavapipe) every buffer is host-visible and
 * coherent, so reads and writes are memcpy; elsewhere buffers are
 * device-local and transfers go through one host-visible staging buffer
 * per device, at most 64 MiB at a time.
 *
 * Compile: the kit prints GLSL with the dialect of vk_codegen.c; the
 * plugin checks the device limits (work-group size, shared memory, push
 * constants, storage-buffer bindings) and features (8/16-bit storage,
 * int8/int16/int64/float64 arithmetic, 64-bit atomics) the kernel needs,
 * answering TILEC_PS_UNSUPPORTED with the reason; then glslc (vk_glslc.c)
 * makes SPIR-V, which the kernel cache keeps under the SHA-256 of the
 * plugin version, device, driver, target environment and source, so a
 * later compile skips glslc.  Tensor arguments are storage buffers at
 * set 0, binding i (one descriptor set per module, rewritten at each
 * launch), T.dynamic symbols 32-bit push constants.  A grid larger than
 * maxComputeWorkGroupCount runs as several vkCmdDispatchBase calls.
 * Every failing Vulkan call is reported with its name and VkResult.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tilec/lower.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"
#include "vk_internal.h"

#define STAGING_MAX (64u << 20)
#define FENCE_TIMEOUT_NS (600ull * 1000000000ull)

#define VKERR(st, call, r, ...)                                                                      \
    (tilec_sdk_error_set("vulkan: " __VA_ARGS__), tilec_sdk_error_append(": %s failed: %s", call, \
                                                                          vk_result_name(r)),       \
     (st))

typedef struct vk_devh {
    const vk_dev_t *dev;
    VkDevice d;
    VkQueue q;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
    VkQueryPool qp;              /* 0 without timestamps */
    vk_pipe_stats_fn pipe_stats; /* NULL without pipeline statistics */
    int host_visible;            /* every buffer mapped (CPU device) */
    VkBuffer sbuf;               /* staging buffer */
    VkDeviceMemory smem;
    void *smap;
    size_t scap;
    pthread_mutex_t lock;
} vk_devh_t;

typedef struct vk_mem {
    VkBuffer buf;
    VkDeviceMemory mem;
    void *map;                   /* host-visible buffers */
    size_t size;
} vk_mem_t;

typedef struct vk_module {
    VkShaderModule sm;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout pl;
    VkPipeline pipe;
    VkDescriptorPool dp;
    VkDescriptorSet ds;
    uint32_t nparams, nsyms;
    int lock_ok;
    pthread_mutex_t lock;
} vk_module_t;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const vk_api_t *api(void) { return &vk_state()->vk; }

/* ---- devices ------------------------------------------------------------------------- */

static tilec_pstatus_t vk_device_count(uint32_t *count)
{
    const vk_state_t *s = vk_state();
    if (!s->ok) {
        *count = 0;
        tilec_sdk_error_set("vulkan: %s", s->why);
        return TILEC_PS_UNAVAILABLE;
    }
    *count = s->ndevs;
    return TILEC_PS_OK;
}

static uint64_t dev_caps(const vk_dev_t *d)
{
    uint64_t c = TILEC_CAP_ATOMIC_INT | TILEC_CAP_ATOMIC_FLOAT | TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_EMIT_SOURCE |
                 TILEC_CAP_EMIT_BINARY;
    if (d->f16_storage && d->i16)
        c |= TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16;
    if (d->i64)
        c |= TILEC_CAP_INT64;
    if (d->f64)
        c |= TILEC_CAP_FLOAT64;
    if (d->timestamp_bits)
        c |= TILEC_CAP_DEVICE_TIMER;
    if (d->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU)
        c |= TILEC_CAP_GPU;
    return c;
}

static tilec_pstatus_t vk_describe(uint32_t index, tilec_shell_device_t *dd)
{
    const vk_dev_t *d = &vk_state()->devs[index];
    tilec_pdevice_info_t *info = &dd->info;
    uint32_t v = d->props.apiVersion;
    char buf[256];
    snprintf(info->name, sizeof info->name, "%.*s", (int)sizeof info->name - 1, d->props.deviceName);
    snprintf(info->platform, sizeof info->platform, "Vulkan %u.%u.%u", VK_API_MAJOR(v), VK_API_MINOR(v),
             VK_API_PATCH(v));
    info->caps = dev_caps(d);
    info->global_mem_bytes = d->device_local_bytes;
    info->shared_mem_bytes = d->props.limits.maxComputeSharedMemorySize;
    info->max_threads = d->props.limits.maxComputeWorkGroupInvocations;
    info->compute_units = d->compute_units;
    snprintf(buf, sizeof buf, "vulkan%u.%u", VK_API_MAJOR(v), VK_API_MINOR(v));
    tilec_shell_value_str(&dd->prop[TILEC_PROP_ARCH], buf);
    snprintf(buf, sizeof buf, "%u.%u.%u", VK_API_MAJOR(d->props.driverVersion), VK_API_MINOR(d->props.driverVersion),
             VK_API_PATCH(d->props.driverVersion));
    tilec_shell_value_str(&dd->prop[TILEC_PROP_DRIVER_VERSION], buf);
    if (d->subgroup_size)
        tilec_shell_value_int(&dd->prop[TILEC_PROP_SUBGROUP_SIZE], d->subgroup_size);
    tilec_shell_value_int(&dd->prop[TILEC_PROP_SHARED_MEM_PER_BLOCK_OPTIN], d->props.limits.maxComputeSharedMemorySize);
    /* the cooperative-matrix shapes: "coopmat MxNxK A.B->C", comma-separated */
    static const char *const ct[] = {"f16", "f32", "f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"};
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < d->ncoopmat && n < sizeof buf - 64; i++) {
        const vk_coopmat_t *c = &d->coopmats[i];
        if (c->a < 0 || c->a > 10 || c->r < 0 || c->r > 10)
            continue;
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%scoopmat %ux%ux%u %s->%s", n ? "," : "", c->m, c->n, c->k,
                              ct[c->a], ct[c->r]);
    }
    tilec_shell_value_str(&dd->prop[TILEC_PROP_MMA_KINDS], buf);
    return TILEC_PS_OK;
}

/* A memory type of bits with the property flags want; -1 when none. */
static int mem_type(const vk_dev_t *d, uint32_t bits, VkFlags want)
{
    for (uint32_t i = 0; i < d->mem.memoryTypeCount && i < 32; i++)
        if ((bits >> i & 1u) && (d->mem.memoryTypes[i].propertyFlags & want) == want)
            return (int)i;
    return -1;
}

/* A buffer of size bytes bound to fresh memory with the flags want,
 * mapped when they are host-visible. */
static tilec_pstatus_t make_buffer(vk_devh_t *dv, size_t size, VkFlags usage, VkFlags want, vk_mem_t *m)
{
    const vk_api_t *vk = api();
    memset(m, 0, sizeof *m);
    VkBufferCreateInfo bi = {.sType = VK_ST_BUFFER_CREATE_INFO, .size = size ? size : 4, .usage = usage,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = vk->CreateBuffer(dv->d, &bi, NULL, &m->buf);
    if (r != VK_SUCCESS)
        return VKERR(TILEC_PS_OUT_OF_MEMORY, "vkCreateBuffer", r, "cannot create a buffer of %zu bytes", size);
    VkMemoryRequirements req;
    vk->GetBufferMemoryRequirements(dv->d, m->buf, &req);
    int t = mem_type(dv->dev, req.memoryTypeBits, want);
    tilec_shell_log("device", "vulkan: a buffer of %zu bytes in memory type %d (of 0x%x wanting 0x%x)", size, t,
                    (unsigned)req.memoryTypeBits, (unsigned)want);
    if (t < 0) {
        vk->DestroyBuffer(dv->d, m->buf, NULL);
        tilec_sdk_error_set("vulkan: no memory type with properties 0x%x for a buffer", (unsigned)want);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    VkMemoryAllocateInfo ai = {.sType = VK_ST_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                               .memoryTypeIndex = (uint32_t)t};
    if ((r = vk->AllocateMemory(dv->d, &ai, NULL, &m->mem)) != VK_SUCCESS) {
        vk->DestroyBuffer(dv->d, m->buf, NULL);
        return VKERR(TILEC_PS_OUT_OF_MEMORY, "vkAllocateMemory", r, "cannot allocate %zu bytes", size);
    }
    if ((r = vk->BindBufferMemory(dv->d, m->buf, m->mem, 0)) != VK_SUCCESS) {
        vk->FreeMemory(dv->d, m->mem, NULL);
        vk->DestroyBuffer(dv->d, m->buf, NULL);
        return VKERR(TILEC_PS_OUT_OF_MEMORY, "vkBindBufferMemory", r, "cannot bind %zu bytes", size);
    }
    if (want & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        if ((r = vk->MapMemory(dv->d, m->mem, 0, VK_WHOLE_SIZE, 0, &m->map)) != VK_SUCCESS) {
            vk->FreeMemory(dv->d, m->mem, NULL);
            vk->DestroyBuffer(dv->d, m->buf, NULL);
            return VKERR(TILEC_PS_OUT_OF_MEMORY, "vkMapMemory", r, "cannot map %zu bytes", size);
        }
    }
    m->size = size;
    return TILEC_PS_OK;
}

static void free_buffer(vk_devh_t *dv, vk_mem_t *m)
{
    const vk_api_t *vk = api();
    if (m->map)
        vk->UnmapMemory(dv->d, m->mem);
    if (m->buf)
        vk->DestroyBuffer(dv->d, m->buf, NULL);
    if (m->mem)
        vk->FreeMemory(dv->d, m->mem, NULL);
    memset(m, 0, sizeof *m);
}

static void vk_device_close(void *state)
{
    vk_devh_t *dv = state;
    const vk_api_t *vk = api();
    if (!dv->d)
        return;
    if (dv->sbuf) {
        vk_mem_t s = {dv->sbuf, dv->smem, dv->smap, dv->scap};
        free_buffer(dv, &s);
    }
    if (dv->qp)
        vk->DestroyQueryPool(dv->d, dv->qp, NULL);
    if (dv->fence)
        vk->DestroyFence(dv->d, dv->fence, NULL);
    if (dv->pool)
        vk->DestroyCommandPool(dv->d, dv->pool, NULL);
    vk->DestroyDevice(dv->d, NULL);
    pthread_mutex_destroy(&dv->lock);
    dv->d = NULL;
}

static tilec_pstatus_t vk_device_open(uint32_t index, void *state)
{
    const vk_state_t *s = vk_state();
    const vk_api_t *vk = &s->vk;
    const vk_dev_t *d = &s->devs[index];
    vk_devh_t *dv = state;
    dv->dev = d;
    vk_features_t f = d->feat;
    vk_features_link(&f, d->chain);
    /* every access is guarded by the kernel itself (boundary-safe copies,
     * guarded loads and stores): no bounds checks by the driver */
    f.f2.features[VK_FEATURE_ROBUST_BUFFER_ACCESS] = VK_FALSE;
    f.cm.cooperativeMatrixRobustBufferAccess = f.cmnv.cooperativeMatrixRobustBufferAccess = VK_FALSE;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qi = {.sType = VK_ST_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = d->queue_family,
                                  .queueCount = 1, .pQueuePriorities = &prio};
    VkDeviceCreateInfo ci = {.sType = VK_ST_DEVICE_CREATE_INFO, .pNext = &f.f2, .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qi, .enabledExtensionCount = d->nexts,
                             .ppEnabledExtensionNames = d->exts};
    VkResult r = vk->CreateDevice(d->pd, &ci, NULL, &dv->d);
    if (r != VK_SUCCESS) {
        dv->d = NULL;
        return VKERR(TILEC_PS_UNAVAILABLE, "vkCreateDevice", r, "cannot open %s", d->props.deviceName);
    }
    pthread_mutex_init(&dv->lock, NULL);
    vk->GetDeviceQueue(dv->d, d->queue_family, 0, &dv->q);
    VkCommandPoolCreateInfo pi = {.sType = VK_ST_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = d->queue_family};
    tilec_pstatus_t st = TILEC_PS_UNAVAILABLE;
    if ((r = vk->CreateCommandPool(dv->d, &pi, NULL, &dv->pool)) != VK_SUCCESS) {
        st = VKERR(st, "vkCreateCommandPool", r, "cannot open %s", d->props.deviceName);
        goto fail;
    }
    VkCommandBufferAllocateInfo ai = {.sType = VK_ST_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = dv->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    if ((r = vk->AllocateCommandBuffers(dv->d, &ai, &dv->cb)) != VK_SUCCESS) {
        st = VKERR(st, "vkAllocateCommandBuffers", r, "cannot open %s", d->props.deviceName);
        goto fail;
    }
    VkFenceCreateInfo fi = {.sType = VK_ST_FENCE_CREATE_INFO};
    if ((r = vk->CreateFence(dv->d, &fi, NULL, &dv->fence)) != VK_SUCCESS) {
        st = VKERR(st, "vkCreateFence", r, "cannot open %s", d->props.deviceName);
        goto fail;
    }
    if (d->timestamp_bits) {
        VkQueryPoolCreateInfo qpi = {.sType = VK_ST_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                     .queryCount = 2};
        if (vk->CreateQueryPool(dv->d, &qpi, NULL, &dv->qp) != VK_SUCCESS)
            dv->qp = 0; /* timing falls back to the host clock */
    }
    dv->host_visible = d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (d->pipe_stats)
        dv->pipe_stats = (vk_pipe_stats_fn)vk->GetDeviceProcAddr(dv->d, "vkGetPipelineExecutableStatisticsKHR");
    for (uint32_t i = 0; i < d->mem.memoryTypeCount && i < 32; i++)
        tilec_shell_log("device", "vulkan: %s: memory type %u: heap %u (%llu MiB), flags 0x%x", d->props.deviceName,
                        i, d->mem.memoryTypes[i].heapIndex,
                        (unsigned long long)(d->mem.memoryHeaps[d->mem.memoryTypes[i].heapIndex % 16].size >> 20),
                        (unsigned)d->mem.memoryTypes[i].propertyFlags);
    return TILEC_PS_OK;
fail:
    vk_device_close(dv);
    return st;
}

/* ---- command submission ---------------------------------------------------------------- */

static tilec_pstatus_t begin(vk_devh_t *dv, const char *what)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_ST_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = api()->BeginCommandBuffer(dv->cb, &bi);
    if (r != VK_SUCCESS)
        return VKERR(TILEC_PS_LAUNCH_ERROR, "vkBeginCommandBuffer", r, "%s", what);
    return TILEC_PS_OK;
}

/* Ends, submits and waits for the command buffer. */
static tilec_pstatus_t submit_wait(vk_devh_t *dv, const char *what)
{
    const vk_api_t *vk = api();
    VkResult r = vk->EndCommandBuffer(dv->cb);
    if (r != VK_SUCCESS)
        return VKERR(TILEC_PS_LAUNCH_ERROR, "vkEndCommandBuffer", r, "%s", what);
    VkSubmitInfo si = {.sType = VK_ST_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &dv->cb};
    if ((r = vk->QueueSubmit(dv->q, 1, &si, dv->fence)) != VK_SUCCESS)
        return VKERR(TILEC_PS_LAUNCH_ERROR, "vkQueueSubmit", r, "%s", what);
    r = vk->WaitForFences(dv->d, 1, &dv->fence, VK_TRUE, FENCE_TIMEOUT_NS);
    VkResult r2 = vk->ResetFences(dv->d, 1, &dv->fence);
    if (r != VK_SUCCESS)
        return VKERR(TILEC_PS_LAUNCH_ERROR, "vkWaitForFences", r, "%s", what);
    if (r2 != VK_SUCCESS)
        return VKERR(TILEC_PS_LAUNCH_ERROR, "vkResetFences", r2, "%s", what);
    return TILEC_PS_OK;
}

/* ---- memory ------------------------------------------------------------------------------ */

static tilec_pstatus_t vk_mem_alloc(void *devstate, tilec_pmem_scope_t scope, size_t size, void *state)
{
    (void)scope;
    vk_devh_t *dv = devstate;
    if (size > dv->dev->props.limits.maxStorageBufferRange) {
        tilec_sdk_error_set("vulkan: mem_alloc: %zu bytes exceed the device's largest storage buffer (%u bytes)", size,
                            dv->dev->props.limits.maxStorageBufferRange);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    VkFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                    VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkFlags want = dv->host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                    : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    return make_buffer(dv, size, usage, want, state);
}

static void vk_mem_free(void *devstate, void *mem) { free_buffer(devstate, mem); }

/* The staging buffer, at least n bytes (n <= STAGING_MAX); under the lock. */
static tilec_pstatus_t staging(vk_devh_t *dv, size_t n)
{
    if (dv->sbuf && dv->scap >= n)
        return TILEC_PS_OK;
    if (dv->sbuf) {
        vk_mem_t s = {dv->sbuf, dv->smem, dv->smap, dv->scap};
        free_buffer(dv, &s);
        dv->sbuf = 0;
    }
    size_t cap = n < (1u << 20) ? (1u << 20) : n;
    vk_mem_t s;
    tilec_pstatus_t st = make_buffer(dv, cap, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                     VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, &s);
    if (st != TILEC_PS_OK)
        return st;
    dv->sbuf = s.buf;
    dv->smem = s.mem;
    dv->smap = s.map;
    dv->scap = cap;
    return TILEC_PS_OK;
}

/* Copies size bytes between host memory and m at offset, through staging
 * (to_dev: host -> buffer). */
static tilec_pstatus_t transfer(vk_devh_t *dv, vk_mem_t *m, size_t offset, void *host, size_t size, int to_dev)
{
    if (m->map) {
        if (to_dev)
            memcpy((char *)m->map + offset, host, size);
        else
            memcpy(host, (char *)m->map + offset, size);
        return TILEC_PS_OK;
    }
    const char *what = to_dev ? "mem_write" : "mem_read";
    pthread_mutex_lock(&dv->lock);
    tilec_pstatus_t st = staging(dv, size < STAGING_MAX ? size : STAGING_MAX);
    for (size_t done = 0; st == TILEC_PS_OK && done < size;) {
        size_t n = size - done < dv->scap ? size - done : dv->scap;
        if (to_dev)
            memcpy(dv->smap, (const char *)host + done, n);
        if ((st = begin(dv, what)) != TILEC_PS_OK)
            break;
        VkBufferCopy bc = {.srcOffset = to_dev ? 0 : offset + done, .dstOffset = to_dev ? offset + done : 0, .size = n};
        api()->CmdCopyBuffer(dv->cb, to_dev ? dv->sbuf : m->buf, to_dev ? m->buf : dv->sbuf, 1, &bc);
        if ((st = submit_wait(dv, what)) != TILEC_PS_OK)
            break;
        if (!to_dev)
            memcpy((char *)host + done, dv->smap, n);
        done += n;
    }
    pthread_mutex_unlock(&dv->lock);
    return st;
}

static tilec_pstatus_t vk_mem_write(void *devstate, void *mem, size_t offset, const void *src, size_t size)
{
    return transfer(devstate, mem, offset, (void *)src, size, 1);
}

static tilec_pstatus_t vk_mem_read(void *devstate, void *mem, size_t offset, void *dst, size_t size)
{
    return transfer(devstate, mem, offset, dst, size, 0);
}

/* ---- compile -------------------------------------------------------------------------------- */

static void vk_module_free(tilec_shell_module_t *sm)
{
    vk_module_t *m = sm->data;
    vk_devh_t *dv = sm->dev;
    if (!dv || !dv->d)
        return;
    const vk_api_t *vk = api();
    if (m->dp)
        vk->DestroyDescriptorPool(dv->d, m->dp, NULL);
    if (m->pipe)
        vk->DestroyPipeline(dv->d, m->pipe, NULL);
    if (m->pl)
        vk->DestroyPipelineLayout(dv->d, m->pl, NULL);
    if (m->dsl)
        vk->DestroyDescriptorSetLayout(dv->d, m->dsl, NULL);
    if (m->sm)
        vk->DestroyShaderModule(dv->d, m->sm, NULL);
    if (m->lock_ok)
        pthread_mutex_destroy(&m->lock);
}

/* "vulkan1.1" or "vulkan1.2": the newest environment the device and the
 * instance both speak, at most 1.2: for vulkan1.3 glslc declares the
 * work-group size with LocalSizeId, which needs the maintenance4 feature
 * (the validation layer says so), and 1.3 adds nothing the kernels use. */
static const char *target_env(const vk_dev_t *d)
{
    uint32_t v = d->props.apiVersion < vk_state()->api_version ? d->props.apiVersion : vk_state()->api_version;
    return VK_API_MINOR(v) >= 2 ? "vulkan1.2" : "vulkan1.1";
}

/* What the kernel's data types need that the device lacks; NULL when
 * nothing. */
static const char *missing_feature(const vk_dev_t *d, const tilec_ir_kernel_t *k, uint32_t uses)
{
    int b8 = 0, b16 = 0;
    for (int i = 0; i < k->nbufs; i++) {
        size_t sz = tilec_dtype_size(k->bufs[i]->dtype);
        b8 |= sz == 1;
        b16 |= sz == 2;
    }
    for (int i = 0; i < k->nvars; i++) {
        size_t sz = tilec_dtype_size(k->vars[i]->dtype);
        b8 |= sz == 1 && k->vars[i]->dtype != TILEC_BOOL;
        b16 |= sz == 2;
    }
    if (b8 && !(d->i8_storage && d->i8_arith))
        return "8-bit data (storageBuffer8BitAccess and shaderInt8)";
    if (b16 && !(d->f16_storage && d->i16))
        return "16-bit data (storageBuffer16BitAccess and shaderInt16)";
    if ((uses & TILEC_SIMT_USES_I64) && !d->i64)
        return "int64 (shaderInt64)";
    if ((uses & TILEC_SIMT_USES_F64) && !d->f64)
        return "float64 (shaderFloat64)";
    if ((uses & TILEC_SIMT_USES_ATOMIC_64) && !d->i64_atomics)
        return "64-bit atomics (shaderBufferInt64Atomics)";
    return NULL;
}

/* The driver's statistics of the pipeline's executable (a compute
 * pipeline has one), where it reports them: each logged under "compile",
 * the register count (NVIDIA's "Register Count") kept for --emit info. */
static void pipeline_stats(vk_devh_t *dv, vk_module_t *m, tilec_shell_module_t *sm)
{
    VkPipelineExecutableInfoKHR ei = {.sType = VK_ST_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = m->pipe};
    VkPipelineExecutableStatisticKHR st[32];
    uint32_t n = 32;
    for (uint32_t i = 0; i < n; i++)
        st[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_ST_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    if (dv->pipe_stats(dv->d, &ei, &n, st) < 0)
        return;
    for (uint32_t i = 0; i < n && i < 32; i++) {
        char v[32];
        int64_t iv = st[i].format == VK_STAT_INT64    ? st[i].value.i64
                     : st[i].format == VK_STAT_UINT64 ? (int64_t)st[i].value.u64
                     : st[i].format == VK_STAT_BOOL32 ? (int64_t)st[i].value.b32
                                                      : (int64_t)st[i].value.f64;
        if (st[i].format == VK_STAT_FLOAT64)
            snprintf(v, sizeof v, "%g", st[i].value.f64);
        else
            snprintf(v, sizeof v, "%lld", (long long)iv);
        st[i].name[sizeof st[i].name - 1] = '\0';
        tilec_shell_log("compile", "vulkan: kernel '%s': %s = %s", sm->kernel->name, st[i].name, v);
        if (strcasestr(st[i].name, "register") && st[i].format != VK_STAT_FLOAT64)
            sm->info.registers = iv;
    }
}

/* Pipeline objects for the SPIR-V in sm->binary. */
static tilec_pstatus_t make_pipeline(vk_devh_t *dv, vk_module_t *m, tilec_shell_module_t *sm)
{
    const vk_api_t *vk = api();
    VkShaderModuleCreateInfo si = {.sType = VK_ST_SHADER_MODULE_CREATE_INFO, .codeSize = sm->binary_len,
                                   .pCode = sm->binary};
    VkResult r = vk->CreateShaderModule(dv->d, &si, NULL, &m->sm);
    if (r != VK_SUCCESS)
        return VKERR(TILEC_PS_COMPILE_ERROR, "vkCreateShaderModule", r, "kernel '%s'", sm->kernel->name);
    VkDescriptorSetLayoutBinding b[256];
    if (m->nparams > 256 || m->nparams > dv->dev->props.limits.maxPerStageDescriptorStorageBuffers) {
        tilec_sdk_error_set("vulkan: kernel '%s' has %u tensor arguments, %s binds at most %u storage buffers",
                            sm->kernel->name, m->nparams, dv->dev->props.deviceName,
                            dv->dev->props.limits.maxPerStageDescriptorStorageBuffers);
        return TILEC_PS_UNSUPPORTED;
    }
    for (uint32_t i = 0; i < m->nparams; i++)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo li = {.sType = VK_ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = m->nparams, .pBindings = b};
    if ((r = vk->CreateDescriptorSetLayout(dv->d, &li, NULL, &m->dsl)) != VK_SUCCESS)
        return VKERR(TILEC_PS_COMPILE_ERROR, "vkCreateDescriptorSetLayout", r, "kernel '%s'", sm->kernel->name);
    VkPushConstantRange pc = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = 4 * m->nsyms};
    VkPipelineLayoutCreateInfo pli = {.sType = VK_ST_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &m->dsl, .pushConstantRangeCount = m->nsyms ? 1 : 0,
                                      .pPushConstantRanges = &pc};
    if ((r = vk->CreatePipelineLayout(dv->d, &pli, NULL, &m->pl)) != VK_SUCCESS)
        return VKERR(TILEC_PS_COMPILE_ERROR, "vkCreatePipelineLayout", r, "kernel '%s'", sm->kernel->name);
    VkComputePipelineCreateInfo ci = {
        .sType = VK_ST_COMPUTE_PIPELINE_CREATE_INFO,
        .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT,
        .stage = {.sType = VK_ST_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = m->sm, .pName = "main"},
        .layout = m->pl,
        .basePipelineIndex = -1,
    };
    if (dv->pipe_stats)
        ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    if ((r = vk->CreateComputePipelines(dv->d, 0, 1, &ci, NULL, &m->pipe)) != VK_SUCCESS)
        return VKERR(TILEC_PS_COMPILE_ERROR, "vkCreateComputePipelines", r, "kernel '%s'", sm->kernel->name);
    if (dv->pipe_stats)
        pipeline_stats(dv, m, sm);
    if (m->nparams) {
        VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = m->nparams};
        VkDescriptorPoolCreateInfo pi = {.sType = VK_ST_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
                                         .poolSizeCount = 1, .pPoolSizes = &ps};
        if ((r = vk->CreateDescriptorPool(dv->d, &pi, NULL, &m->dp)) != VK_SUCCESS)
            return VKERR(TILEC_PS_COMPILE_ERROR, "vkCreateDescriptorPool", r, "kernel '%s'", sm->kernel->name);
        VkDescriptorSetAllocateInfo ai = {.sType = VK_ST_DESCRIPTOR_SET_ALLOCATE_INFO, .descriptorPool = m->dp,
                                          .descriptorSetCount = 1, .pSetLayouts = &m->dsl};
        if ((r = vk->AllocateDescriptorSets(dv->d, &ai, &m->ds)) != VK_SUCCESS)
            return VKERR(TILEC_PS_COMPILE_ERROR, "vkAllocateDescriptorSets", r, "kernel '%s'", sm->kernel->name);
    }
    return TILEC_PS_OK;
}

/* a cache entry is whole SPIR-V words, at least the 5-word header */
static int is_spirv(const void *data, size_t len)
{
    (void)data;
    return len >= 20 && len % 4 == 0;
}

/* --emit lowered: the SDK's lowering passes for the device's description */
static tilec_pstatus_t vk_lower(void *devstate, const tilec_pcompile_options_t *opts, tilec_shell_module_t *sm)
{
    (void)opts;
    vk_devh_t *dv = devstate;
    return tilec_lower_shell("vulkan", vk_target_desc(dv ? dv->dev : NULL), sm);
}

static tilec_pstatus_t vk_compile(void *devstate, const tilec_pcompile_options_t *opts, tilec_shell_module_t *sm)
{
    (void)opts;
    vk_devh_t *dv = devstate;
    const vk_dev_t *d = dv->dev;
    vk_module_t *m = sm->data;
    const tilec_ir_kernel_t *k = sm->kernel;
    const VkPhysicalDeviceLimits *lim = &d->props.limits;
    char err[1024];
    double t0 = now_ms();
    vk_gen_t gen = {.dev = d};
    tilec_simt_result_t res;
    memset(&res, 0, sizeof res);
    res.struct_size = sizeof res;
    tilec_arena_t ar;
    tilec_arena_init(&ar);
    tilec_pstatus_t st;
    /* the device's description first; when its plan or the shader printed
     * from it needs more shared memory than the device has, again with
     * less (vk_target_retry) */
    tilec_target_desc_t td = *vk_target_desc(d);
    const tilec_ir_module_t *lm;
    int rc;
    for (int attempt = 1;; attempt++) {
        lm = tilec_lower_shell_module("vulkan", &td, sm, &ar, &st);
        rc = lm ? vk_generate(&gen, lm, &res, err, sizeof err) : -1;
        int over = rc == 0 && res.shared_bytes > lim->maxComputeSharedMemorySize;
        if (!(over || (!lm && st == TILEC_PS_UNSUPPORTED)) || !vk_target_retry(&td))
            break;
        tilec_shell_log("compile", "vulkan: kernel '%s' does not fit %s's %u bytes of shared memory; lowered again (%d)",
                        k->name, d->props.deviceName, lim->maxComputeSharedMemorySize, attempt);
        if (rc == 0)
            tilec_simt_result_free(&res);
        memset(&res, 0, sizeof res);
        res.struct_size = sizeof res;
    }
    tilec_arena_destroy(&ar);
    if (!lm)
        return st;
    if (rc != 0) {
        tilec_sdk_error_set("vulkan: cannot print kernel '%s': %s", k->name ? k->name : "", err);
        return TILEC_PS_UNSUPPORTED;
    }
    sm->source = res.source;
    sm->source_len = res.source_len;
    sm->info.shared_static_bytes = (int64_t)res.shared_bytes;
    sm->info.shared_dynamic_bytes = 0;
    m->nparams = res.nparams;
    m->nsyms = res.nsyms;
    const char *miss = missing_feature(d, k, res.uses);
    if (miss) {
        tilec_sdk_error_set("vulkan: kernel '%s' uses %s, which %s lacks", k->name, miss, d->props.deviceName);
        return TILEC_PS_UNSUPPORTED;
    }
    if (res.nthreads > lim->maxComputeWorkGroupInvocations || res.threads[0] > lim->maxComputeWorkGroupSize[0] ||
        res.threads[1] > lim->maxComputeWorkGroupSize[1] || res.threads[2] > lim->maxComputeWorkGroupSize[2]) {
        tilec_sdk_error_set("vulkan: kernel '%s' uses %u x %u x %u threads per block, %s allows %u x %u x %u and %u in all",
                            k->name, res.threads[0], res.threads[1], res.threads[2], d->props.deviceName,
                            lim->maxComputeWorkGroupSize[0], lim->maxComputeWorkGroupSize[1],
                            lim->maxComputeWorkGroupSize[2], lim->maxComputeWorkGroupInvocations);
        return TILEC_PS_UNSUPPORTED;
    }
    if (res.shared_bytes > lim->maxComputeSharedMemorySize) {
        tilec_sdk_error_set("vulkan: kernel '%s' needs %llu bytes of shared/fragment memory per block, %s has %u "
                            "(use smaller tiles)",
                            k->name, (unsigned long long)res.shared_bytes, d->props.deviceName,
                            lim->maxComputeSharedMemorySize);
        return TILEC_PS_UNSUPPORTED;
    }
    if (4ull * res.nsyms > lim->maxPushConstantsSize) {
        tilec_sdk_error_set("vulkan: kernel '%s' has %u symbols, more than %s's %u bytes of push constants hold",
                            k->name, res.nsyms, d->props.deviceName, lim->maxPushConstantsSize);
        return TILEC_PS_UNSUPPORTED;
    }
    /* the kernel cache: the SPIR-V of this source for this device and driver */
    const char *env = target_env(d);
    char ver[64];
    snprintf(ver, sizeof ver, "%u %u %u", d->props.apiVersion, d->props.driverVersion, d->props.deviceID);
    const char *parts[] = {TILEC_VK_PLUGIN_VERSION, d->props.deviceName, ver, env};
    tilec_shell_cache_t ce;
    if (!tilec_shell_cache_find(&ce, "vulkan", ".spv", parts, 4, sm, is_spirv)) {
        st = vk_glslc(sm->source, sm->source_len, env, &sm->binary, &sm->binary_len);
        if (st != TILEC_PS_OK) {
            tilec_shell_cache_done(&ce);
            return st;
        }
        tilec_shell_log("compile", "vulkan: glslc compiled kernel '%s' in %.1f ms", k->name, now_ms() - t0);
        tilec_shell_cache_store(&ce, "vulkan", sm);
    }
    tilec_shell_cache_done(&ce);
    st = make_pipeline(dv, m, sm);
    if (st == TILEC_PS_OK) {
        m->lock_ok = pthread_mutex_init(&m->lock, NULL) == 0;
        if (!m->lock_ok) {
            tilec_sdk_error_set("vulkan: cannot create a lock");
            st = TILEC_PS_OUT_OF_MEMORY;
        }
    }
    tilec_shell_log("compile", "vulkan: kernel '%s' ready on %s in %.1f ms", k->name, d->props.deviceName,
                    now_ms() - t0);
    return st;
}

/* ---- launch ------------------------------------------------------------------------------------ */

static tilec_pstatus_t launch_locked(vk_devh_t *dv, vk_module_t *m, const tilec_shell_launch_t *a)
{
    const vk_api_t *vk = api();
    const VkPhysicalDeviceLimits *lim = &dv->dev->props.limits;
    VkDescriptorBufferInfo bi[256];
    VkWriteDescriptorSet w[256];
    for (uint32_t i = 0; i < a->nargs && i < 256; i++) {
        bi[i] = (VkDescriptorBufferInfo){.buffer = ((vk_mem_t *)a->args[i])->buf, .offset = 0, .range = VK_WHOLE_SIZE};
        w[i] = (VkWriteDescriptorSet){.sType = VK_ST_WRITE_DESCRIPTOR_SET, .dstSet = m->ds, .dstBinding = i,
                                      .descriptorCount = 1, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .pBufferInfo = &bi[i]};
    }
    if (a->nargs)
        vk->UpdateDescriptorSets(dv->d, a->nargs, w, 0, NULL);
    int32_t syms[64];
    for (uint32_t j = 0; j < a->nsyms && j < 64; j++)
        syms[j] = (int32_t)a->syms[j]; /* the shell keeps them in int32 range */
    tilec_pstatus_t st = begin(dv, "launch");
    if (st != TILEC_PS_OK)
        return st;
    vk->CmdBindPipeline(dv->cb, VK_PIPELINE_BIND_POINT_COMPUTE, m->pipe);
    if (a->nargs)
        vk->CmdBindDescriptorSets(dv->cb, VK_PIPELINE_BIND_POINT_COMPUTE, m->pl, 0, 1, &m->ds, 0, NULL);
    if (a->nsyms)
        vk->CmdPushConstants(dv->cb, m->pl, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4 * a->nsyms, syms);
    int timed = a->timed && dv->qp;
    if (timed) {
        vk->CmdResetQueryPool(dv->cb, dv->qp, 0, 2);
        vk->CmdWriteTimestamp(dv->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, dv->qp, 0);
    }
    /* grids beyond maxComputeWorkGroupCount: several dispatches with a base */
    uint64_t cap[3];
    for (int d = 0; d < 3; d++)
        cap[d] = lim->maxComputeWorkGroupCount[d] ? lim->maxComputeWorkGroupCount[d] : 65535;
    for (uint64_t z = 0; z < (uint64_t)a->grid[2]; z += cap[2])
        for (uint64_t y = 0; y < (uint64_t)a->grid[1]; y += cap[1])
            for (uint64_t x = 0; x < (uint64_t)a->grid[0]; x += cap[0]) {
                uint64_t nx = (uint64_t)a->grid[0] - x, ny = (uint64_t)a->grid[1] - y, nz = (uint64_t)a->grid[2] - z;
                vk->CmdDispatchBase(dv->cb, (uint32_t)x, (uint32_t)y, (uint32_t)z, (uint32_t)(nx < cap[0] ? nx : cap[0]),
                                    (uint32_t)(ny < cap[1] ? ny : cap[1]), (uint32_t)(nz < cap[2] ? nz : cap[2]));
            }
    if (timed)
        vk->CmdWriteTimestamp(dv->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, dv->qp, 1);
    double t0 = now_ms();
    st = submit_wait(dv, "launch");
    double host_ms = now_ms() - t0;
    if (st == TILEC_PS_OK && a->timed) {
        uint64_t ts[2] = {0, 0};
        VkResult r = timed ? vk->GetQueryPoolResults(dv->d, dv->qp, 0, 2, sizeof ts, ts, sizeof ts[0],
                                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT)
                           : VK_NOT_READY;
        uint64_t mask = dv->dev->timestamp_bits >= 64 ? ~0ull : (1ull << dv->dev->timestamp_bits) - 1;
        if (r == VK_SUCCESS && ((ts[1] - ts[0]) & mask) > 0)
            *a->elapsed_ms = (double)((ts[1] - ts[0]) & mask) * lim->timestampPeriod / 1e6;
        else
            *a->elapsed_ms = host_ms;
    }
    tilec_shell_log("launch", "vulkan: grid %lld x %lld x %lld, %.3f ms", (long long)a->grid[0], (long long)a->grid[1],
                    (long long)a->grid[2], host_ms);
    return st;
}

static tilec_pstatus_t vk_launch(void *devstate, tilec_shell_module_t *sm, const tilec_shell_launch_t *a)
{
    vk_devh_t *dv = devstate;
    vk_module_t *m = sm->data;
    if (a->nargs > 256 || a->nsyms > 64) {
        tilec_sdk_error_set("vulkan: launch: too many arguments");
        return TILEC_PS_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < a->nargs; i++) {
        const tilec_ir_buffer_t *b = sm->kernel->bufs[i];
        if (a->sizes[i] / tilec_dtype_size(b->dtype) > INT32_MAX) {
            tilec_sdk_error_set("vulkan: launch: tensor '%s' has 2^31 elements or more; the GLSL dialect indexes "
                                "with 32-bit integers", b->name ? b->name : "?");
            return TILEC_PS_UNSUPPORTED;
        }
    }
    pthread_mutex_lock(&m->lock);
    pthread_mutex_lock(&dv->lock);
    tilec_pstatus_t st = launch_locked(dv, m, a);
    pthread_mutex_unlock(&dv->lock);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* ---- the backend description and the query ------------------------------------------------------ */

#define VK_CAPS                                                                                                  \
    (TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 | TILEC_CAP_ATOMIC_FLOAT |       \
     TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_DEVICE_TIMER | TILEC_CAP_EMIT_SOURCE |            \
     TILEC_CAP_EMIT_BINARY | TILEC_CAP_GPU)

static const tilec_shell_backend_t vk_backend = {
    .name = "vulkan",
    .vendor = "tilec",
    .version = TILEC_VK_PLUGIN_VERSION,
    .caps = VK_CAPS,
    .abi_max = TILEC_PLUGIN_ABI_VERSION,
    .ir_min = TILEC_IR_MAKE(1, 0),
    .ir_max = TILEC_IR_MAKE(1, 4), /* high-level IR is lowered here; a lowered .tir is printed as it is; 1.2: float8;
                                      1.4: bit casts (the SIMT kit); 1.3's 4-bit dtypes refused (TILEC_SHELL_NO_4BIT) */
    .flags = TILEC_SHELL_MODULE_ON_ITS_DEVICE | TILEC_SHELL_NO_4BIT,
    .device_size = sizeof(vk_devh_t),
    .mem_size = sizeof(vk_mem_t),
    .module_size = sizeof(vk_module_t),
    .device_count = vk_device_count,
    .device_describe = vk_describe,
    .device_open = vk_device_open,
    .device_close = vk_device_close,
    .compile = vk_compile,
    .lower = vk_lower,
    .module_free = vk_module_free,
    .mem_alloc = vk_mem_alloc,
    .mem_write = vk_mem_write,
    .mem_read = vk_mem_read,
    .mem_free = vk_mem_free,
    .launch = vk_launch,
};

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out);

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out)
{
    return tilec_shell_query(&vk_backend, host, abi_out, table_out);
}
