/*
 * core/loader.h — finding, validating and selecting backend plugins.
 *
 * A scan walks the candidates in search order (TILEC_PLUGIN_PATH entries,
 * the embedded cpu backend, the build tree next to libtilec, then
 * TILEC_PREFIX/lib/tilec), negotiates the ABI with each, validates its
 * table, probes its devices, and records one entry per candidate with a
 * state and a reason (docs/plugin-abi.md §7: one bad plugin never hides the others).
 * Environment variables are re-read on every scan.
 *
 * Ownership: a tilec_loader_list_t owns every string and array in it and
 * the dlopen handles of the OK/UNAVAILABLE entries; tilec_loader_take()
 * moves one entry's handle out so a context can keep its plugin loaded
 * after the list is released.
 */
#ifndef TILEC_CORE_LOADER_H
#define TILEC_CORE_LOADER_H

#include <stdint.h>

#include "props.h"
#include "tilec/plugin.h"
#include "tilec/tilec.h"

/* The cpu backend compiled into libtilec (backends/cpu with
 * -DTILEC_EMBEDDED); same contract as tilec_plugin_query. */
tilec_pstatus_t tilec_cpu_embedded_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                         const tilec_plugin_t **table_out);

/* The ABI range this host speaks. */
#define TILEC_HOST_ABI_MIN TILEC_ABI_MAKE(1, 0)
#define TILEC_HOST_ABI_MAX TILEC_ABI_MAKE(1, 1)

typedef struct tilec_loader_entry {
    char *name;                     /* plugin name (from the file name when rejected) */
    char *path;                     /* file path, or "(embedded)" */
    char *vendor, *version;         /* "" when rejected */
    char *reason;                   /* "" when OK */
    tilec_plugin_state_t state;
    int embedded;
    uint32_t abi_version;           /* 0 when rejected */
    uint32_t ir_min, ir_max;        /* tile IR versions it reads (1.0..1.0 for ABI 1.0) */
    uint64_t caps;
    uint32_t ndevices;
    tilec_pdevice_info_t *devices;  /* [ndevices], NUL-terminated strings */
    tilec_device_props_t *props;    /* [ndevices], the typed properties (ABI 1.1) */
    void *handle;                   /* dlopen handle (NULL: embedded or closed) */
    const tilec_plugin_t *table;    /* valid while handle is open (or embedded) */
} tilec_loader_entry_t;

typedef struct tilec_loader_list {
    int n;
    tilec_loader_entry_t *items;    /* [n], search order */
} tilec_loader_list_t;

/* Scans every candidate.  Fails only when out of memory (TILEC_E_NOMEM). */
tilec_status_t tilec_loader_scan(tilec_loader_list_t *out);
/* A narrow scan for a backend named NAME: the TILEC_PLUGIN_PATH entries
 * that name files, the embedded cpu backend when NAME is cpu, and in every
 * directory only libtilec-NAME.so, so that opening one backend does not
 * start every vendor runtime on the machine.  NULL: every candidate.  A
 * plugin whose file name is not its name is found by the full scan only;
 * callers fall back to it when the narrow scan selects nothing. */
tilec_status_t tilec_loader_scan_for(tilec_loader_list_t *out, const char *name);
/* Closes every handle still held and frees everything. */
void tilec_loader_release(tilec_loader_list_t *list);

/* Picks the entry named by spec ("auto", "cpu", "name:N"; NULL or "" =
 * "auto").  On success *index and *device are set.  On failure returns
 * TILEC_E_UNAVAILABLE (or TILEC_E_INVALID for a malformed spec,
 * TILEC_E_NOMEM) and *msg receives a malloc'd message listing every
 * candidate with its state. */
tilec_status_t tilec_loader_select(const tilec_loader_list_t *list, const char *spec,
                                   int *index, uint32_t *device, char **msg);

/* Moves entry i's dlopen handle to the caller (NULL for the embedded
 * backend); the entry's table stays valid as long as the handle is open. */
void *tilec_loader_take(tilec_loader_list_t *list, int i);

/* The host struct handed to plugins: lives as long as the process, one per
 * distinct cache directory, so a plugin may keep the pointer. */
const tilec_plugin_host_t *tilec_loader_host(void);


/* A malloc'd printf-style string; NULL when out of memory. */
char *tilec_strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
