/*
 * core/props.h — the typed device properties of plugin ABI 1.1, as the
 * host keeps them.
 *
 * The loader asks every device of a plugin for each property key it knows
 * (device_property, ABI 1.1) once per scan and keeps the answers here, so
 * tilec_plugins_list, `tilec devices` and tilec_device_property can report
 * them without asking again.  A 1.0 plugin has no such entry: what its
 * device_info holds (compute units, memory, threads, shared memory) is
 * filled in from there and the rest stays unknown.
 */
#ifndef TILEC_CORE_PROPS_H
#define TILEC_CORE_PROPS_H

#include <stdint.h>

#include "tilec/plugin.h"

typedef struct tilec_device_props {
    tilec_pvalue_t v[TILEC_PROP_LAST + 1]; /* by key; kind TILEC_PVAL_NONE: not reported */
} tilec_device_props_t;

/* Fills out for device index of table t (negotiated at abi), with info
 * the device's device_info.  Never fails: a property the plugin does not
 * give stays TILEC_PVAL_NONE. */
void tilec_props_probe(const tilec_plugin_t *t, uint32_t abi, uint32_t index,
                       const tilec_pdevice_info_t *info, tilec_device_props_t *out);

/* "arch", "subgroup_size", ...: the key's name in `tilec devices --json`,
 * NULL for a key this host does not know. */
const char *tilec_props_key_name(uint32_t key);

#endif
