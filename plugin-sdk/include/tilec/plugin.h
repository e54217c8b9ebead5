/*
 * tilec/plugin.h — the tilec backend plugin ABI, version 1.1.
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
 *    sizes, out-of-range indices) with TILEC_PS_INVALID_ARGUMENT.  The SDK's
 *    plugin shell (tilec/shell.h) makes these checks for a plugin built on
 *    it; the host checks the arguments it gets from its callers itself.
 *  - Major version change = breaking; minor = additive (new table fields at
 *    the end, new capability bits).  ABI 1.1 added the IR version range,
 *    typed device properties, structured compile options, module info, the
 *    lowered-IR entry and the named-extension lookup (marked "1.1" below);
 *    a host reads a 1.1 field only from a table whose abi_version is 1.1 or
 *    more, so 1.0 plugins keep loading.
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
#define TILEC_PLUGIN_ABI_VERSION TILEC_ABI_MAKE(1, 1)

/* Tile IR versions (docs/ir.md §6) are encoded the same way:
 * TILEC_ABI_MAKE(1, 0) is tile IR 1.0. */
#define TILEC_IR_MAKE(major, minor) TILEC_ABI_MAKE(major, minor)

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
#define TILEC_CAP_STREAM        (1ull << 12) /* 1.1: launch enqueues on a caller's stream (plaunch.stream) */
#define TILEC_CAP_ALL           ((TILEC_CAP_STREAM << 1) - 1) /* every defined bit; the rest are reserved */

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

/* 1.1: one structured compile option.  The layout is fixed for ever (an
 * array of them crosses the ABI, so it cannot grow): a new kind of option
 * is a new key.  A plugin ignores keys it does not know. */
typedef enum tilec_popt_key {
    TILEC_POPT_FAST_MATH = 1,               /* ival != 0: faster, less exact math allowed */
    TILEC_POPT_DISABLE_TMA = 2,             /* ival != 0: no tensor-memory-accelerator copies */
    TILEC_POPT_DISABLE_WARP_SPECIALIZED = 3, /* ival != 0: no producer/consumer warp roles */
    TILEC_POPT_PASS_CONFIG = 4              /* name = value: a pass_configs entry no key above covers */
} tilec_popt_key_t;

typedef struct tilec_poption {
    uint32_t key;              /* tilec_popt_key_t */
    uint32_t reserved;         /* 0 */
    const char *name;          /* PASS_CONFIG: its key ("tl.ptxas_register_usage_level"); else NULL */
    int64_t ival;              /* the value as an integer (booleans 0/1) */
    const char *sval;          /* PASS_CONFIG: the value as text ("true", "4"); else NULL */
} tilec_poption_t;

typedef struct tilec_pcompile_options {
    uint32_t struct_size;
    uint32_t opt_level;        /* 0..3, default 3 */
    const char *arch;          /* target, e.g. "sm_90"; NULL = the device's */
    const char *extra;         /* backend-specific flags; may be NULL */
    /* 1.1 */
    uint32_t noptions;         /* entries in options */
    uint32_t reserved;         /* 0 */
    const tilec_poption_t *options; /* [noptions], in the order given; NULL when 0 */
} tilec_pcompile_options_t;

typedef enum tilec_pmem_scope {
    TILEC_PMEM_DEVICE = 0,     /* global memory of the device */
    TILEC_PMEM_HOST = 1        /* host memory visible to the device */
} tilec_pmem_scope_t;

typedef enum tilec_pdata_kind {
    TILEC_PDATA_SOURCE = 0,    /* generated source text */
    TILEC_PDATA_BINARY = 1,    /* compiled object (cubin, .so, SPIR-V, ...) */
    TILEC_PDATA_LOWERED = 2    /* 1.1: the lowered tile IR text (modules made by lower) */
} tilec_pdata_kind_t;

/* 1.1: device properties, asked one key at a time (device_property).  Each
 * key has one fixed kind (the comment); a plugin answers
 * TILEC_PS_UNSUPPORTED for a key it does not know or cannot tell. */
typedef enum tilec_pprop_key {
    TILEC_PROP_ARCH = 1,                 /* str: the target compile uses by default ("sm_90a", "x86_64") */
    TILEC_PROP_SUBGROUP_SIZE = 2,        /* int: threads that execute in lockstep (warp, wavefront) */
    TILEC_PROP_SHARED_MEM_PER_BLOCK = 3, /* int: bytes of shared memory a block gets by default */
    TILEC_PROP_SHARED_MEM_PER_BLOCK_OPTIN = 4, /* int: bytes a block may get when it asks */
    TILEC_PROP_MMA_KINDS = 5,            /* str: comma list of matrix instructions ("mma_sync,wgmma"), "" none */
    TILEC_PROP_COMPUTE_UNITS = 6,        /* int: multiprocessors, compute units or cores */
    TILEC_PROP_GLOBAL_MEM_BYTES = 7,     /* int: device memory */
    TILEC_PROP_CLOCK_KHZ = 8,            /* int: peak core clock */
    TILEC_PROP_DRIVER_VERSION = 9,       /* str: vendor driver / runtime version */
    TILEC_PROP_MAX_THREADS_PER_BLOCK = 10, /* int */
    TILEC_PROP_REGISTERS_PER_BLOCK = 11  /* int: 32-bit registers a block may use */
} tilec_pprop_key_t;
#define TILEC_PROP_LAST TILEC_PROP_REGISTERS_PER_BLOCK

typedef enum tilec_pvalue_kind {
    TILEC_PVAL_NONE = 0,
    TILEC_PVAL_INT = 1,
    TILEC_PVAL_STR = 2
} tilec_pvalue_kind_t;

/* Output of device_property (an output struct: written up to struct_size). */
typedef struct tilec_pvalue {
    uint32_t struct_size;
    uint32_t kind;             /* tilec_pvalue_kind_t */
    int64_t ival;              /* TILEC_PVAL_INT */
    char sval[256];            /* TILEC_PVAL_STR, NUL-terminated */
} tilec_pvalue_t;

/* 1.1: what a compiled module uses, from the vendor compiler or driver
 * where it can tell (output struct).  -1 = unknown. */
typedef struct tilec_pmodule_info {
    uint32_t struct_size;
    uint32_t reserved;
    int64_t registers;         /* per thread */
    int64_t shared_static_bytes;  /* per block, fixed at compile time */
    int64_t shared_dynamic_bytes; /* per block, given at launch */
    int64_t spill_bytes;       /* register spill stores + loads, bytes per thread */
    int64_t local_bytes;       /* per-thread local (private, stack) memory */
    int64_t threads;           /* per block, as launched */
    int64_t max_threads;       /* per block, the most this kernel could be launched with */
} tilec_pmodule_info_t;

typedef struct tilec_plaunch {
    uint32_t struct_size;
    uint32_t nargs;            /* number of tensor arguments, = kernel params */
    tilec_pmem_t *const *args; /* [nargs] */
    uint32_t nsyms;            /* number of T.dynamic symbols */
    uint32_t reserved;
    const int64_t *syms;       /* [nsyms], values in kernel symbol order */
    int timed;                 /* nonzero: fill *elapsed_ms */
    double *elapsed_ms;        /* device-side time when the plugin has it */
    /* 1.1 (struct_size covers it): the caller's queue in the vendor's own
     * type (CUstream, hipStream_t, cl_command_queue).  Non-NULL only for a
     * plugin with TILEC_CAP_STREAM: the kernel is enqueued there, after the
     * caller's earlier work on it, and launch returns without waiting for
     * it (timed launches still wait, for the time).  NULL: the plugin's own
     * queue, and launch returns when the kernel is done. */
    void *stream;
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

    /* ---- 1.1 (present when abi_version >= 1.1; every entry non-NULL) ---- */
    /* The tile IR versions compile and lower read (TILEC_IR_MAKE); the host
     * sends a module in this range or fails with a message. */
    uint32_t ir_min, ir_max;
    /* A typed property of device index (no device_open needed). */
    tilec_pstatus_t (*device_property)(uint32_t index, uint32_t key, tilec_pvalue_t *value);
    /* Resources of a compiled module. */
    tilec_pstatus_t (*module_info)(tilec_pmodule_t *mod, tilec_pmodule_info_t *info);
    /* The module after the plugin's lowering passes, without compiling it:
     * a module whose module_data(TILEC_PDATA_LOWERED) is tile IR text.  It
     * may be used for module_data and module_free only.  Same arguments as
     * compile (dev NULL with an arch as there).  TILEC_PS_UNSUPPORTED with a
     * message when the plugin has no lowering to show. */
    tilec_pstatus_t (*lower)(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                             const tilec_pcompile_options_t *opts, tilec_pmodule_t **out);
    /* A vendor extension by name ("acme_tma_launch"): a pointer to a const
     * table the extension's own header defines, or NULL when unknown.
     * Valid as long as the plugin is loaded. */
    const void *(*extension)(const char *name);
} tilec_plugin_t;

/* Table sizes of each version: the host rejects a table smaller than the
 * size of the version it answered. */
#define TILEC_PLUGIN_TABLE_SIZE_1_0 \
    (offsetof(tilec_plugin_t, launch) + sizeof(((tilec_plugin_t *)0)->launch))
#define TILEC_PLUGIN_TABLE_SIZE_1_1 \
    (offsetof(tilec_plugin_t, extension) + sizeof(((tilec_plugin_t *)0)->extension))

/* ---- standard extensions (looked up with extension(name)) ----------------
 *
 * "tilec_module_load": a module from a binary that module_data(BINARY) of
 * the same plugin version gave earlier for this device and this IR (a
 * kernel bundle, docs/tuning.md), without compiling: no vendor compiler is
 * needed.  The host checks the plugin version and device before it asks;
 * the plugin still refuses a binary it cannot bind (not its format). */
#define TILEC_EXT_MODULE_LOAD "tilec_module_load"
typedef struct tilec_ext_module_load {
    uint32_t struct_size;
    uint32_t reserved;
    tilec_pstatus_t (*module_load)(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                                   const void *binary, size_t size, tilec_pmodule_t **out);
} tilec_ext_module_load_t;

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
