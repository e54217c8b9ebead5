/*
 * tilec/plugin.h — the tilec backend plugin ABI, version 1.0.
 *
 * A backend is a shared object libtilec-NAME.so that exports exactly one
 * symbol, tilec_plugin_query.  The host calls it with the range of ABI
 * versions it speaks; the plugin picks one and hands back a const table of
 * entry points.  Everything crossing this boundary is plain C data: the
 * kernel travels as the serialized tile IR text (docs/ir.md), never as
 * pointers into the host's structures.
 *
 * Rules (docs/plugin-abi.md has the full contract):
 *  - Every struct starts with uint32_t struct_size.  Structs only grow at
 *    the end.  A callee reads only the fields that fit in the caller's
 *    struct_size and treats the rest as zero; it writes only as many bytes
 *    of an output struct as the caller's struct_size says.
 *  - Entry points return a tilec_pstatus_t; on failure the plugin's
 *    last_error() returns a message owned by the plugin, valid until the
 *    next call on the same thread.
 *  - Memory allocated by one side is freed by that side: modules and
 *    device memory by the plugin's free entry points, host structs by the host.
 *  - Every entry point must reject bad arguments (NULL handles, wrong
 *    sizes, out-of-range indices) with TILEC_PS_INVALID_ARGUMENT.
 *  - Major version change = breaking; minor = additive (new table fields at
 *    the end, new capability bits).
 */
#ifndef TILEC_PLUGIN_H
#define TILEC_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILEC_ABI_MAKE(major, minor) ((uint32_t)(((major) << 16) | ((minor) & 0xffffu)))
#define TILEC_ABI_MAJOR(v) ((uint32_t)(v) >> 16)
#define TILEC_ABI_MINOR(v) ((uint32_t)(v) & 0xffffu)

/* The version this header describes. */
#define TILEC_PLUGIN_ABI_VERSION TILEC_ABI_MAKE(1, 0)

#if defined(_WIN32)
#define TILEC_PLUGIN_EXPORT __declspec(dllexport)
#else
#define TILEC_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

typedef enum tilec_pstatus {
    TILEC_PS_OK = 0,
    TILEC_PS_INVALID_ARGUMENT = 1, /* NULL, wrong struct_size, bad index, bad IR */
    TILEC_PS_UNAVAILABLE = 2,      /* vendor runtime or device missing */
    TILEC_PS_UNSUPPORTED = 3,      /* IR uses a capability the plugin lacks */
    TILEC_PS_COMPILE_ERROR = 4,
    TILEC_PS_LAUNCH_ERROR = 5,
    TILEC_PS_OUT_OF_MEMORY = 6,
    TILEC_PS_INTERNAL = 7
} tilec_pstatus_t;

/* Capability flags (tilec_plugin_t.caps, tilec_pdevice_info_t.caps). */
#define TILEC_CAP_FLOAT16       (1ull << 0)
#define TILEC_CAP_BFLOAT16      (1ull << 1)
#define TILEC_CAP_FLOAT64       (1ull << 2)
#define TILEC_CAP_INT64         (1ull << 3)
#define TILEC_CAP_ATOMIC_FLOAT  (1ull << 4) /* atomics on float32 */
#define TILEC_CAP_ATOMIC_INT    (1ull << 5)
#define TILEC_CAP_DYNAMIC_SHAPE (1ull << 6) /* T.dynamic symbols */
#define TILEC_CAP_PRINT         (1ull << 7) /* T.print output */
#define TILEC_CAP_DEVICE_TIMER  (1ull << 8) /* launch can time on the device */
#define TILEC_CAP_EMIT_SOURCE   (1ull << 9) /* module_data(SOURCE) */
#define TILEC_CAP_EMIT_BINARY   (1ull << 10) /* module_data(BINARY) */
#define TILEC_CAP_GPU           (1ull << 11) /* the device is a GPU (TILEC_BACKEND=auto prefers it) */

/* What the host offers in tilec_plugin_query. */
typedef struct tilec_plugin_host {
    uint32_t struct_size;
    uint32_t abi_min;          /* lowest ABI version the host speaks */
    uint32_t abi_max;          /* highest */
    uint32_t reserved;
    /* Optional trace sink for TILEC_LOG; may be NULL.  topic is "compile",
     * "launch", ... */
    void (*log)(void *user, const char *topic, const char *msg);
    void *log_user;
    const char *cache_dir;     /* kernel cache directory, NULL: no cache */
} tilec_plugin_host_t;

typedef struct tilec_pdevice tilec_pdevice_t; /* opaque, plugin-owned */
typedef struct tilec_pmodule tilec_pmodule_t; /* opaque, plugin-owned */
typedef struct tilec_pmem tilec_pmem_t;       /* opaque, plugin-owned */

typedef struct tilec_pdevice_info {
    uint32_t struct_size;
    uint32_t reserved;
    char name[128];            /* "AMD EPYC 7B13 (16 threads)" */
    char platform[128];        /* "OpenCL: Portable Computing Language", "" */
    uint64_t caps;             /* capability flags of this device */
    uint64_t global_mem_bytes; /* 0 if unknown */
    uint64_t shared_mem_bytes; /* per block, 0 if unknown */
    uint32_t max_threads;      /* per block */
    uint32_t compute_units;
} tilec_pdevice_info_t;

typedef struct tilec_pcompile_options {
    uint32_t struct_size;
    uint32_t opt_level;        /* 0..3, default 3 */
    const char *arch;          /* target, e.g. "sm_90"; NULL = the device's */
    const char *extra;         /* backend-specific flags; may be NULL */
} tilec_pcompile_options_t;

typedef enum tilec_pmem_scope {
    TILEC_PMEM_DEVICE = 0,     /* global memory of the device */
    TILEC_PMEM_HOST = 1        /* host memory visible to the device */
} tilec_pmem_scope_t;

typedef enum tilec_pdata_kind {
    TILEC_PDATA_SOURCE = 0,    /* generated source text */
    TILEC_PDATA_BINARY = 1     /* compiled object (cubin, .so, SPIR-V, ...) */
} tilec_pdata_kind_t;

typedef struct tilec_plaunch {
    uint32_t struct_size;
    uint32_t nargs;            /* number of tensor arguments, = kernel params */
    tilec_pmem_t *const *args; /* [nargs] */
    uint32_t nsyms;            /* number of T.dynamic symbols */
    uint32_t reserved;
    const int64_t *syms;       /* [nsyms], values in kernel symbol order */
    int timed;                 /* nonzero: fill *elapsed_ms */
    double *elapsed_ms;        /* device-side time when the plugin has it */
} tilec_plaunch_t;

typedef struct tilec_plugin {
    uint32_t struct_size;
    uint32_t abi_version;      /* the version the plugin chose */
    const char *name;          /* "cpu": what TILEC_BACKEND names */
    const char *vendor;
    const char *version;       /* plugin version, "1.0.0" */
    uint64_t caps;             /* capabilities it may declare for any device */

    const char *(*last_error)(void); /* never NULL; "" when none */

    /* Devices.  device_count may report 0 with TILEC_PS_UNAVAILABLE and a
     * reason in last_error when the vendor runtime is missing. */
    tilec_pstatus_t (*device_count)(uint32_t *count);
    tilec_pstatus_t (*device_info)(uint32_t index, tilec_pdevice_info_t *info);
    tilec_pstatus_t (*device_open)(uint32_t index, tilec_pdevice_t **out);
    void (*device_close)(tilec_pdevice_t *dev);

    /* Compile serialized tile IR (ir, ir_len bytes of "tileir" text).
     * dev may be NULL when opts->arch names a target ("compile without a
     * device", docs/plugin-abi.md): the host does so only for a plugin
     * that is unavailable (e.g. no driver) when the user asked for an
     * explicit target; a plugin that cannot compile without its device
     * returns TILEC_PS_INVALID_ARGUMENT or TILEC_PS_UNAVAILABLE. */
    tilec_pstatus_t (*compile)(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                               const tilec_pcompile_options_t *opts, tilec_pmodule_t **out);
    /* Generated source or binary of a compiled module; the data is owned by
     * the module. */
    tilec_pstatus_t (*module_data)(tilec_pmodule_t *mod, tilec_pdata_kind_t kind,
                                   const void **data, size_t *size);
    void (*module_free)(tilec_pmodule_t *mod);

    /* Memory. */
    tilec_pstatus_t (*mem_alloc)(tilec_pdevice_t *dev, tilec_pmem_scope_t scope, size_t size,
                                 tilec_pmem_t **out);
    tilec_pstatus_t (*mem_write)(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                 const void *src, size_t size);
    tilec_pstatus_t (*mem_read)(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                void *dst, size_t size);
    void (*mem_free)(tilec_pdevice_t *dev, tilec_pmem_t *mem);

    /* Launch the module's kernel over its grid and wait for completion. */
    tilec_pstatus_t (*launch)(tilec_pdevice_t *dev, tilec_pmodule_t *mod,
                              const tilec_plaunch_t *args);

    /* ---- optional: a table whose struct_size ends above lacks them, and a
     * NULL entry means the same (docs/plugin-abi.md, "Shared memory"). ---- */

    /* Memory the host did not allocate, used in place (DLPack zero-copy
     * import): size bytes at ptr, which lie where DLPack's device type
     * dl_type (kDLCPU = 1, kDLCUDA = 2, ...) and id dl_id say.  When the
     * device can address that memory directly, *out is a handle on it and
     * mem_free later frees the handle only; otherwise
     * TILEC_PS_UNSUPPORTED with the reason. */
    tilec_pstatus_t (*mem_wrap)(tilec_pdevice_t *dev, int dl_type, int dl_id, void *ptr,
                                size_t size, tilec_pmem_t **out);
    /* Where mem lies for another framework (DLPack zero-copy export): its
     * DLPack device type and id and the address; TILEC_PS_UNSUPPORTED when
     * it has none a framework can use (an OpenCL buffer object). */
    tilec_pstatus_t (*mem_address)(tilec_pdevice_t *dev, tilec_pmem_t *mem, int *dl_type,
                                   int *dl_id, void **ptr);
} tilec_plugin_t;

/*
 * The one exported symbol.  host->abi_min..abi_max is what the host speaks;
 * the plugin picks the highest version it also speaks, stores it in
 * *abi_out and its table (static, const, never freed) in *table_out, and
 * returns TILEC_PS_OK.  With no common version it returns
 * TILEC_PS_UNSUPPORTED and sets neither.
 */
typedef tilec_pstatus_t (*tilec_plugin_query_fn)(const tilec_plugin_host_t *host,
                                                 uint32_t *abi_out,
                                                 const tilec_plugin_t **table_out);
#define TILEC_PLUGIN_QUERY_SYMBOL "tilec_plugin_query"

#ifdef __cplusplus
}
#endif
#endif
