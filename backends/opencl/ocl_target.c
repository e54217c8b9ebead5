/*
 * ocl_target.c — the OpenCL backend's target description (tilec/target.h)
 * for the SDK's lowering passes.
 *
 * One generic description serves every OpenCL 1.2 device, because OpenCL
 * C promises little: no matrix instructions, no asynchronous copies into
 * local memory the lowering could schedule (async_work_group_copy is a
 * whole-group call without stages), no subgroups to rely on (cl_khr_subgroups
 * is optional, and PoCL's CPU devices have none), work-group barriers only,
 * 32 KB of local memory (the OpenCL 1.2 full-profile minimum) and 16-byte
 * vector accesses (vload4 of float).  So the passes give OpenCL register
 * fragments whose reductions stay inside a thread, padding of local
 * buffers by banks and real barrier placement, and leave T.Pipelined
 * loops serial.  A device-specific description (NVIDIA's warps, AMD's
 * wavefronts) would raise subgroup_size and the local-memory sizes.
 * Compile lowers for the device it builds on: the generic description
 * with that device's local memory and work-group limits
 * (ocl_target_for_device), so a kernel that fits the device is never
 * refused for the OpenCL minimum; and a device that names its warp or
 * wavefront width (cl_nv_device_attribute_query, cl_amd_...) gets that
 * subgroup, so rows of register fragments may span its lanes.  OpenCL 1.2
 * has no shuffles to combine them: the SIMT kit does it through local
 * memory (two barriers per row reduction), far cheaper than keeping the
 * fragments in local memory (which on NVIDIA's 48 KB did not even fit
 * flash attention or rmsnorm at their default tiles).
 */
#include <pthread.h>

#include "ocl_internal.h"
#include "tilec/target.h"

static tilec_target_desc_t desc_generic;
static pthread_once_t generic_once = PTHREAD_ONCE_INIT;

static void generic_init(void)
{
    desc_generic = tilec_target_simt_default("opencl generic");
    desc_generic.smem_optin = 64 * 1024;
    desc_generic.regs_per_thread = 128;
    /* max_threads 1024: the device enforces its own limit at launch */
}

const tilec_target_desc_t *ocl_target_desc(const char *arch)
{
    (void)arch; /* one description for every OpenCL device today */
    pthread_once(&generic_once, generic_init);
    return &desc_generic;
}

void ocl_target_for_device(const ocl_dev_t *dev, const char *arch, tilec_target_desc_t *out)
{
    *out = *ocl_target_desc(arch);
    if (dev && dev->local_mem) {
        uint64_t lm = dev->local_mem > UINT32_MAX ? UINT32_MAX : dev->local_mem;
        out->smem_optin = (uint32_t)lm;
        if (out->smem_default > out->smem_optin)
            out->smem_default = out->smem_optin;
    }
    if (dev && dev->subgroup > 1 && dev->subgroup <= 64) {
        out->subgroup_size = (int32_t)dev->subgroup;
        out->flags |= TILEC_TARGET_SUBGROUP_SHUFFLE | TILEC_TARGET_ROWS_RAGGED;
    }
    if (dev && dev->max_wg)
        out->max_threads = dev->max_wg > INT32_MAX ? INT32_MAX : (int32_t)dev->max_wg;
}
