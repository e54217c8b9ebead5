/*
 * core/props.c — asking a device for its typed properties (plugin ABI
 * 1.1, device_property) and naming them.
 *
 * Every key this host knows is asked once per device and scan.  The kind of
 * each key is fixed by the ABI (tilec/plugin.h); an answer of another kind
 * is a plugin bug and is dropped (traced), like a failed query.  Keys a
 * plugin does not answer are filled from its device_info where that holds
 * them, so a 1.0 plugin reports what it can.
 */
#include "props.h"

#include <string.h>

#include "log.h"

static const struct {
    const char *name;
    uint32_t kind;
} keys[TILEC_PROP_LAST + 1] = {
    [TILEC_PROP_ARCH] = {"arch", TILEC_PVAL_STR},
    [TILEC_PROP_SUBGROUP_SIZE] = {"subgroup_size", TILEC_PVAL_INT},
    [TILEC_PROP_SHARED_MEM_PER_BLOCK] = {"shared_mem_per_block", TILEC_PVAL_INT},
    [TILEC_PROP_SHARED_MEM_PER_BLOCK_OPTIN] = {"shared_mem_per_block_optin", TILEC_PVAL_INT},
    [TILEC_PROP_MMA_KINDS] = {"mma_kinds", TILEC_PVAL_STR},
    [TILEC_PROP_COMPUTE_UNITS] = {"compute_units", TILEC_PVAL_INT},
    [TILEC_PROP_GLOBAL_MEM_BYTES] = {"global_mem_bytes", TILEC_PVAL_INT},
    [TILEC_PROP_CLOCK_KHZ] = {"clock_khz", TILEC_PVAL_INT},
    [TILEC_PROP_DRIVER_VERSION] = {"driver_version", TILEC_PVAL_STR},
    [TILEC_PROP_MAX_THREADS_PER_BLOCK] = {"max_threads_per_block", TILEC_PVAL_INT},
    [TILEC_PROP_REGISTERS_PER_BLOCK] = {"registers_per_block", TILEC_PVAL_INT},
};

const char *tilec_props_key_name(uint32_t key)
{
    return key >= 1 && key <= TILEC_PROP_LAST ? keys[key].name : NULL;
}

static void set_int(tilec_pvalue_t *v, uint64_t i)
{
    if (v->kind == TILEC_PVAL_NONE && i > 0 && i <= INT64_MAX) {
        v->kind = TILEC_PVAL_INT;
        v->ival = (int64_t)i;
    }
}

void tilec_props_probe(const tilec_plugin_t *t, uint32_t abi, uint32_t index,
                       const tilec_pdevice_info_t *info, tilec_device_props_t *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t k = 1; k <= TILEC_PROP_LAST; k++) {
        tilec_pvalue_t *v = &out->v[k];
        v->struct_size = sizeof *v;
        if (abi < TILEC_ABI_MAKE(1, 1)) {
            continue;
        }
        tilec_pstatus_t st = t->device_property(index, k, v);
        v->struct_size = sizeof *v;
        v->sval[sizeof v->sval - 1] = '\0';
        if (st != TILEC_PS_OK || v->kind != keys[k].kind) {
            if (st == TILEC_PS_OK) {
                tilec_log("loader", "device %u: property %s answered with kind %u, expected %u; "
                          "ignored", index, keys[k].name, v->kind, keys[k].kind);
            }
            memset(v, 0, sizeof *v);
            v->struct_size = sizeof *v;
        }
    }
    set_int(&out->v[TILEC_PROP_COMPUTE_UNITS], info->compute_units);
    set_int(&out->v[TILEC_PROP_GLOBAL_MEM_BYTES], info->global_mem_bytes);
    set_int(&out->v[TILEC_PROP_MAX_THREADS_PER_BLOCK], info->max_threads);
    set_int(&out->v[TILEC_PROP_SHARED_MEM_PER_BLOCK], info->shared_mem_bytes);
}
