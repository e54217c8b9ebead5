/*
 * vk_target.c — the Vulkan backend's target description (tilec/target.h)
 * for the SDK's lowering passes, one per device, from what the device
 * reports: subgroup size (and shuffles when the subgroup shuffle and
 * arithmetic operations exist), maxComputeSharedMemorySize (48 KiB on
 * NVIDIA's driver, 32 KiB the Vulkan minimum), maxComputeWorkGroupInvocations.
 * GLSL offers no asynchronous copies and only workgroup barriers; vector
 * accesses are plain element loops (16 bytes is what a thread's loads
 * coalesce to).  Cooperative-matrix shapes are not MMA entries yet: their
 * accumulator layout is opaque to the shader, so such an entry needs a
 * flag the lowering layer does not have (docs/lowering.md §4); the printer
 * handles T.gemm on them itself (docs/backend-vulkan.md).
 * Without a device (compile for --emit lowered) the description is the
 * Vulkan minimum.
 */
#include <pthread.h>
#include <string.h>

#include "tilec/target.h"
#include "vk_internal.h"

#define VK_SUBGROUP_BASIC 0x1u
#define VK_SUBGROUP_ARITHMETIC 0x8u
#define VK_SUBGROUP_SHUFFLE 0x10u

static const tilec_target_desc_t desc_minimum = {
    .struct_size = sizeof(tilec_target_desc_t),
    .version = TILEC_TARGET_DESC_VERSION,
    .name = "vulkan minimum",
    .subgroup_size = 0,
    .max_threads = 128,
    .smem_default = 16 * 1024,
    .smem_optin = 16 * 1024,
    .smem_banks = 32,
    .bank_bytes = 4,
    .smem_align = 16,
    .regs_per_thread = 128,
    .frag_regs = 64,
    .vector_bytes = 16,
    .barriers = TILEC_TARGET_BARRIER_BLOCK,
};

#define VK_MAX_DESCS 16
static tilec_target_desc_t descs[VK_MAX_DESCS];
static char names[VK_MAX_DESCS][64];
static int filled[VK_MAX_DESCS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

const tilec_target_desc_t *vk_target_desc(const vk_dev_t *dev)
{
    const vk_state_t *s = vk_state();
    if (!dev || !s->ok || dev < s->devs || dev >= s->devs + s->ndevs || dev - s->devs >= VK_MAX_DESCS)
        return &desc_minimum;
    size_t i = (size_t)(dev - s->devs);
    pthread_mutex_lock(&lock);
    if (!filled[i]) {
        tilec_target_desc_t *t = &descs[i];
        *t = desc_minimum;
        snprintf(names[i], sizeof names[i], "vulkan %.50s", dev->props.deviceName);
        t->name = names[i];
        uint32_t need = VK_SUBGROUP_BASIC | VK_SUBGROUP_ARITHMETIC | VK_SUBGROUP_SHUFFLE;
        t->subgroup_size = (int32_t)dev->subgroup_size;
        if ((dev->subgroup_ops & need) == need && dev->subgroup_size >= 4)
            t->flags |= TILEC_TARGET_SUBGROUP_SHUFFLE;
        t->max_threads = (int32_t)dev->props.limits.maxComputeWorkGroupInvocations;
        t->smem_default = t->smem_optin = dev->props.limits.maxComputeSharedMemorySize;
        filled[i] = 1;
    }
    pthread_mutex_unlock(&lock);
    return &descs[i];
}
