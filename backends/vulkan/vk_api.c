/*
 * vk_api.c — opens the Vulkan loader (libvulkan.so.1) at run time,
 * resolves the VK_SYMBOLS table of vk_internal.h, creates one instance
 * and enumerates the physical devices that have a compute queue, once.
 *
 * For each device it reads the properties the backend needs (limits,
 * subgroup size, timestamp bits, memory heaps) and the features a kernel
 * may use: 8/16-bit storage and arithmetic, int16/int64/float64, 64-bit
 * and float atomics (VK_EXT_shader_atomic_float) and cooperative matrices
 * (VK_KHR_cooperative_matrix, with the shapes it offers at subgroup scope).
 * Feature structs promoted to core in Vulkan 1.2 are only chained on 1.2
 * devices, extension structs only when the device lists the extension.
 * Any failure leaves the state "not ok" with a reason, which the plugin
 * reports as unavailable; nothing here exits or crashes without a loader.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vk_internal.h"

static vk_state_t g_state;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#define VK_ROW(field, sym, ret, args) {sym, offsetof(vk_api_t, field)},
static const tilec_dl_sym_t vk_syms[] = {VK_SYMBOLS(VK_ROW)};

const char *vk_result_name(VkResult r)
{
    static __thread char buf[48];
    const char *n;
    switch (r) {
    case 0: n = "VK_SUCCESS"; break;
    case 1: n = "VK_NOT_READY"; break;
    case 2: n = "VK_TIMEOUT"; break;
    case 5: n = "VK_INCOMPLETE"; break;
    case -1: n = "VK_ERROR_OUT_OF_HOST_MEMORY"; break;
    case -2: n = "VK_ERROR_OUT_OF_DEVICE_MEMORY"; break;
    case -3: n = "VK_ERROR_INITIALIZATION_FAILED"; break;
    case -4: n = "VK_ERROR_DEVICE_LOST"; break;
    case -5: n = "VK_ERROR_MEMORY_MAP_FAILED"; break;
    case -6: n = "VK_ERROR_LAYER_NOT_PRESENT"; break;
    case -7: n = "VK_ERROR_EXTENSION_NOT_PRESENT"; break;
    case -8: n = "VK_ERROR_FEATURE_NOT_PRESENT"; break;
    case -9: n = "VK_ERROR_INCOMPATIBLE_DRIVER"; break;
    case -10: n = "VK_ERROR_TOO_MANY_OBJECTS"; break;
    case -11: n = "VK_ERROR_FORMAT_NOT_SUPPORTED"; break;
    case -12: n = "VK_ERROR_FRAGMENTED_POOL"; break;
    case -13: n = "VK_ERROR_UNKNOWN"; break;
    case -1000069000: n = "VK_ERROR_OUT_OF_POOL_MEMORY"; break;
    case -1000012000: n = "VK_ERROR_INVALID_SHADER_NV"; break;
    default: n = "VkResult"; break;
    }
    snprintf(buf, sizeof buf, "%s (%d)", n, (int)r);
    return buf;
}

void vk_features_link(vk_features_t *f, uint32_t mask)
{
    f->f2.sType = VK_ST_PHYSICAL_DEVICE_FEATURES_2;
    f->s16.sType = VK_ST_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    f->s8.sType = VK_ST_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
    f->f16i8.sType = VK_ST_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    f->a64.sType = VK_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES;
    f->af.sType = VK_ST_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT;
    f->cm.sType = VK_ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
    f->cmnv.sType = VK_ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    f->pexec.sType = VK_ST_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR;
    f->vmm.sType = VK_ST_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES;
    /* 16-bit storage is core in 1.1: always chained */
    f->f2.pNext = &f->s16;
    void **tail = &f->s16.pNext;
    struct { uint32_t bit; void *st; void **next; } rows[] = {
        {VK_CHAIN_8BIT, &f->s8, &f->s8.pNext},   {VK_CHAIN_F16I8, &f->f16i8, &f->f16i8.pNext},
        {VK_CHAIN_A64, &f->a64, &f->a64.pNext}, {VK_CHAIN_AF, &f->af, &f->af.pNext},
        {VK_CHAIN_CM, &f->cm, &f->cm.pNext},     {VK_CHAIN_CMNV, &f->cmnv, &f->cmnv.pNext},
        {VK_CHAIN_PEXEC, &f->pexec, &f->pexec.pNext}, {VK_CHAIN_VMM, &f->vmm, &f->vmm.pNext},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (mask & rows[i].bit) {
            *tail = rows[i].st;
            tail = rows[i].next;
        }
    *tail = NULL;
}

static int has_ext(const VkExtensionProperties *e, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(e[i].extensionName, name) == 0)
            return 1;
    return 0;
}

/* Properties, features and cooperative-matrix shapes of one device; 0 when
 * it has a compute queue and can be used. */
static int probe(vk_state_t *s, VkPhysicalDevice pd, vk_dev_t *d)
{
    const vk_api_t *vk = &s->vk;
    memset(d, 0, sizeof *d);
    d->pd = pd;
    VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_ST_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_ST_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
    vk->GetPhysicalDeviceProperties2(pd, &p2);
    d->props = p2.properties;
    d->subgroup_size = sg.subgroupSize;
    d->subgroup_ops = sg.supportedOperations;
    if (d->props.apiVersion < VK_MAKE_API_VERSION(1, 1, 0))
        return -1; /* the backend uses 1.1 commands (dispatch base, features 2) */
    uint32_t nq = 0;
    vk->GetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
    VkQueueFamilyProperties qf[16];
    if (nq > 16)
        nq = 16;
    vk->GetPhysicalDeviceQueueFamilyProperties(pd, &nq, qf);
    int fam = -1;
    for (uint32_t i = 0; i < nq && fam < 0; i++)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            fam = (int)i;
    if (fam < 0)
        return -1;
    d->queue_family = (uint32_t)fam;
    d->timestamp_bits = qf[fam].timestampValidBits;
    vk->GetPhysicalDeviceMemoryProperties(pd, &d->mem);
    for (uint32_t h = 0; h < d->mem.memoryHeapCount && h < 16; h++)
        if (d->mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            d->device_local_bytes += d->mem.memoryHeaps[h].size;

    uint32_t ne = 0;
    VkExtensionProperties *ext = NULL;
    if (vk->EnumerateDeviceExtensionProperties(pd, NULL, &ne, NULL) == VK_SUCCESS && ne) {
        ext = calloc(ne, sizeof *ext);
        if (!ext || vk->EnumerateDeviceExtensionProperties(pd, NULL, &ne, ext) < 0)
            ne = 0;
    }
    int v12 = d->props.apiVersion >= VK_MAKE_API_VERSION(1, 2, 0);
    d->has_atomic_float_ext = has_ext(ext, ne, "VK_EXT_shader_atomic_float");
    d->has_coopmat_ext = has_ext(ext, ne, "VK_KHR_cooperative_matrix") &&
                         s->vk.GetPhysicalDeviceCooperativeMatrixPropertiesKHR;
    /* structs of 1.2 core features, or of the extensions that had them */
    static const struct { uint32_t bit; const char *ext; } opt[] = {
        {VK_CHAIN_8BIT, "VK_KHR_8bit_storage"},
        {VK_CHAIN_F16I8, "VK_KHR_shader_float16_int8"},
        {VK_CHAIN_A64, "VK_KHR_shader_atomic_int64"},
        {VK_CHAIN_VMM, "VK_KHR_vulkan_memory_model"},
    };
    for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++) {
        if (v12) {
            d->chain |= opt[i].bit;
        } else if (has_ext(ext, ne, opt[i].ext)) {
            d->chain |= opt[i].bit;
            d->exts[d->nexts++] = opt[i].ext;
        }
    }
    if (d->has_atomic_float_ext) {
        d->chain |= VK_CHAIN_AF;
        d->exts[d->nexts++] = "VK_EXT_shader_atomic_float";
    }
    if (d->has_coopmat_ext) {
        d->chain |= VK_CHAIN_CM;
        d->exts[d->nexts++] = "VK_KHR_cooperative_matrix";
    }
    d->compute_units = 1;
    if (has_ext(ext, ne, "VK_NV_shader_sm_builtins")) {
        VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm = {.sType = VK_ST_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
        VkPhysicalDeviceProperties2 q = {.sType = VK_ST_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sm};
        vk->GetPhysicalDeviceProperties2(pd, &q);
        if (sm.shaderSMCount)
            d->compute_units = sm.shaderSMCount;
    } else if (d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        d->compute_units = n > 0 ? (uint32_t)n : 1;
    }
    int has_nv_coopmat = has_ext(ext, ne, "VK_NV_cooperative_matrix");
    if (has_nv_coopmat) {
        d->chain |= VK_CHAIN_CMNV;
        d->exts[d->nexts++] = "VK_NV_cooperative_matrix";
    }
    /* the driver's statistics of each pipeline (registers), for --emit info */
    const char *e = secure_getenv("TILEC_VK_STATS");
    int has_pexec = e && strcmp(e, "0") != 0 && has_ext(ext, ne, "VK_KHR_pipeline_executable_properties");
    if (has_pexec) {
        d->chain |= VK_CHAIN_PEXEC;
        d->exts[d->nexts++] = "VK_KHR_pipeline_executable_properties";
    }
    free(ext);
    vk_features_t *f = &d->feat;
    vk_features_link(f, d->chain);
    vk->GetPhysicalDeviceFeatures2(pd, &f->f2);
    d->f16_storage = f->s16.storageBuffer16BitAccess != 0;
    d->i8_storage = f->s8.storageBuffer8BitAccess != 0;
    d->f16_arith = f->f16i8.shaderFloat16 != 0;
    d->i8_arith = f->f16i8.shaderInt8 != 0;
    d->i16 = f->f2.features[VK_FEATURE_SHADER_INT16] != 0;
    d->i64 = f->f2.features[VK_FEATURE_SHADER_INT64] != 0;
    d->f64 = f->f2.features[VK_FEATURE_SHADER_FLOAT64] != 0;
    d->i64_atomics = f->a64.shaderBufferInt64Atomics != 0;
    d->f32_atomic_add = f->af.shaderBufferFloat32AtomicAdd != 0;
    d->f64_atomic_add = f->af.shaderBufferFloat64AtomicAdd != 0;
    d->coopmat = f->cm.cooperativeMatrix != 0;
    d->pipe_stats = has_pexec && f->pexec.pipelineExecutableInfo;
    if (d->coopmat) {
        uint32_t n = 0;
        VkCooperativeMatrixPropertiesKHR cp[64];
        if (vk->GetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &n, NULL) >= 0) {
            if (n > 64)
                n = 64;
            for (uint32_t i = 0; i < n; i++)
                cp[i] = (VkCooperativeMatrixPropertiesKHR){.sType = VK_ST_COOPERATIVE_MATRIX_PROPERTIES_KHR};
            if (vk->GetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &n, cp) < 0)
                n = 0;
            for (uint32_t i = 0; i < n && d->ncoopmat < VK_MAX_COOPMAT; i++) {
                if (cp[i].scope != VK_SCOPE_SUBGROUP_KHR || cp[i].saturatingAccumulation)
                    continue;
                d->coopmats[d->ncoopmat++] = (vk_coopmat_t){cp[i].MSize, cp[i].NSize, cp[i].KSize, cp[i].AType,
                                                            cp[i].BType, cp[i].CType, cp[i].ResultType};
                if (cp[i].MSize == 16 && cp[i].NSize == 16 && cp[i].KSize == 16 &&
                    cp[i].AType == VK_COMPONENT_TYPE_FLOAT16_KHR && cp[i].BType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
                    cp[i].CType == VK_COMPONENT_TYPE_FLOAT32_KHR && cp[i].ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR)
                    d->gemm_coopmat = f->cmnv.cooperativeMatrix && f->vmm.vulkanMemoryModel;
            }
        }
    }
    /* overrides for tests and diagnosis (docs/backend-vulkan.md) */
    e = secure_getenv("TILEC_VK_COOPMAT");
    if (e && strcmp(e, "0") == 0)
        d->gemm_coopmat = 0;
    e = secure_getenv("TILEC_VK_ACC_SHARED");
    d->acc_shared = e ? strcmp(e, "0") != 0 : d->gemm_coopmat && d->f16_arith;
    e = secure_getenv("TILEC_VK_PAD");
    /* off by default: on the H200 (session 5, window 2) padded operands
     * made the cooperative-matrix loads 1.3x faster but the whole GEMM
     * 1.4x slower */
    d->pad_rows = e && strcmp(e, "0") != 0;
    e = secure_getenv("TILEC_VK_SHARED_LIMIT");
    long lim = e ? strtol(e, NULL, 10) : 0;
    if (lim > 0 && (unsigned long)lim < d->props.limits.maxComputeSharedMemorySize)
        d->props.limits.maxComputeSharedMemorySize = (uint32_t)lim;
    return 0;
}

static void init_once(void)
{
    vk_state_t *s = &g_state;
    const char *lib = "libvulkan.so.1";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(s->why, sizeof s->why, "cannot load %s (install libvulkan1 and a Vulkan driver): %s", lib,
                 dlerror());
        return;
    }
    if (tilec_dl_resolve(h, lib, vk_syms, sizeof vk_syms / sizeof vk_syms[0], &s->vk, s->why, sizeof s->why) != 0)
        return;
    uint32_t ver = VK_MAKE_API_VERSION(1, 0, 0);
    if (s->vk.EnumerateInstanceVersion(&ver) != VK_SUCCESS || ver < VK_MAKE_API_VERSION(1, 1, 0)) {
        snprintf(s->why, sizeof s->why, "the Vulkan loader supports only Vulkan %u.%u (1.1 is needed)",
                 VK_API_MAJOR(ver), VK_API_MINOR(ver));
        return;
    }
    /* ask for the newest version both know (1.3 carries every struct used) */
    s->api_version = ver >= VK_MAKE_API_VERSION(1, 3, 0) ? VK_MAKE_API_VERSION(1, 3, 0) : ver;
    VkApplicationInfo app = {.sType = VK_ST_APPLICATION_INFO, .pApplicationName = "tilec", .pEngineName = "tilec",
                             .apiVersion = s->api_version};
    VkInstanceCreateInfo ici = {.sType = VK_ST_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkResult r = s->vk.CreateInstance(&ici, NULL, &s->instance);
    if (r != VK_SUCCESS) {
        snprintf(s->why, sizeof s->why, "vkCreateInstance failed: %s (no Vulkan driver installed?)",
                 vk_result_name(r));
        return;
    }
    s->vk.GetPhysicalDeviceCooperativeMatrixPropertiesKHR =
        (VkResult(*)(VkPhysicalDevice, uint32_t *, VkCooperativeMatrixPropertiesKHR *))s->vk.GetInstanceProcAddr(
            s->instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    uint32_t n = 0;
    r = s->vk.EnumeratePhysicalDevices(s->instance, &n, NULL);
    if (r < 0 || n == 0) {
        snprintf(s->why, sizeof s->why, "no Vulkan device%s%s", r < 0 ? ": vkEnumeratePhysicalDevices failed: " : "",
                 r < 0 ? vk_result_name(r) : " (install mesa-vulkan-drivers for lavapipe, or a GPU driver)");
        return;
    }
    VkPhysicalDevice *pds = calloc(n, sizeof *pds);
    s->devs = calloc(n, sizeof *s->devs);
    if (!pds || !s->devs) {
        free(pds);
        snprintf(s->why, sizeof s->why, "out of memory");
        return;
    }
    r = s->vk.EnumeratePhysicalDevices(s->instance, &n, pds);
    if (r < 0) {
        free(pds);
        snprintf(s->why, sizeof s->why, "vkEnumeratePhysicalDevices failed: %s", vk_result_name(r));
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (probe(s, pds[i], &s->devs[s->ndevs]) == 0)
            s->ndevs++;
    free(pds);
    if (s->ndevs == 0) {
        snprintf(s->why, sizeof s->why, "no Vulkan 1.1 device with a compute queue");
        return;
    }
    s->ok = 1;
}

const vk_state_t *vk_state(void)
{
    pthread_once(&g_once, init_once);
    return &g_state;
}
