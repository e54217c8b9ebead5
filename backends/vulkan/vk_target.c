/*
 * vk_target.c — the Vulkan backend's target description (tilec/target.h)
 * for the SDK's lowering passes, one per device, from what the device
 * reports: maxComputeSharedMemorySize (48 KiB on NVIDIA's driver, 32 KiB
 * the Vulkan minimum), maxComputeWorkGroupInvocations.  Rows of register
 * fragments may span 32 lanes (or the device's subgroup when wider): the
 * kit combines a row's lanes through shared memory, not subgroup
 * operations, so any subgroup size serves (lavapipe's is 8).
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

/* The Vulkan minimum: 16 KiB of shared memory, 128 invocations; rows may
 * span 32 lanes, 128 of 255 registers to fragments */
static tilec_target_desc_t minimum(void)
{
    tilec_target_desc_t t = tilec_target_simt_default("vulkan minimum");
    t.subgroup_size = 32;
    t.max_threads = 128;
    t.smem_default = t.smem_optin = 16 * 1024;
    t.frag_regs = 128;
    /* 16-32 KiB of shared memory on many devices (lavapipe's 32): keep
     * what registers can hold there */
    t.flags = TILEC_TARGET_SUBGROUP_SHUFFLE | TILEC_TARGET_REGS_LIKE_ACC;
    return t;
}

#define VK_MAX_DESCS 16
static tilec_target_desc_t descs[VK_MAX_DESCS + 1]; /* and the minimum */
static char names[VK_MAX_DESCS][64];
static int filled[VK_MAX_DESCS + 1];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void vk_target_fill(const vk_dev_t *dev, tilec_target_desc_t *t)
{
    *t = minimum();
    /* the GLSL dialect combines the lanes of a row through shared memory
     * (no subgroup operations yet), so rows may span 32 lanes whatever
     * the device's subgroup (lavapipe's is 8) */
    t->subgroup_size = dev->subgroup_size > 32 ? (int32_t)dev->subgroup_size : 32;
    t->max_threads = (int32_t)dev->props.limits.maxComputeWorkGroupInvocations;
    t->smem_default = t->smem_optin = dev->props.limits.maxComputeSharedMemorySize;
    /* the cooperative-matrix T.gemm (vk_codegen.c) loads and stores its
     * accumulator in shared memory: keep gemm accumulators there */
    if (dev->gemm_coopmat && dev->f16_arith)
        t->flags |= TILEC_TARGET_SIMT_ACC_SHARED;
}

const tilec_target_desc_t *vk_target_desc(const vk_dev_t *dev)
{
    const vk_state_t *s = vk_state();
    size_t i = VK_MAX_DESCS; /* the minimum's slot */
    if (dev && s->ok && dev >= s->devs && dev < s->devs + s->ndevs && dev - s->devs < VK_MAX_DESCS)
        i = (size_t)(dev - s->devs);
    pthread_mutex_lock(&lock);
    if (!filled[i] && i == VK_MAX_DESCS) {
        descs[i] = minimum();
        filled[i] = 1;
    } else if (!filled[i]) {
        vk_target_fill(dev, &descs[i]);
        snprintf(names[i], sizeof names[i], "vulkan %.50s", dev->props.deviceName);
        descs[i].name = names[i];
        filled[i] = 1;
    }
    pthread_mutex_unlock(&lock);
    return &descs[i];
}
