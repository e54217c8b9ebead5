/*
 * tilec/shell.h — the SDK plugin shell: a plugin's ABI table, written once.
 *
 * Every plugin used to carry the same few hundred lines around its real
 * work: handles with magic numbers, copies that honour struct_size, the
 * argument checks of every entry point, the module's source and binary,
 * the host struct kept for its log and cache directory.  The shell does
 * all of that.  A backend describes itself in a tilec_shell_backend_t —
 * name, caps, the sizes of its per-handle state and a set of hooks — and
 * its tilec_plugin_query is one call to tilec_shell_query.  The shell
 * builds the ABI table (1.1, or 1.0 for a backend that says so), checks
 * every argument as docs/plugin-abi.md §4 asks, reads the IR text into the
 * module's arena, and calls a hook only with valid, trusted arguments:
 *
 *  - handles are the shell's: a hook sees the backend's own state (the
 *    `device_size` / `mem_size` / `module_size` bytes it asked for, zeroed),
 *    never a tilec_pdevice_t;
 *  - device indices are below device_count, structs are full size (the
 *    shell copies a caller's smaller struct into a zeroed full one, and
 *    writes back only what the caller's struct_size holds);
 *  - compile gets the parsed module (kernel, parameter and symbol counts)
 *    and fills source, binary and info in the shell's module; module_data
 *    and module_info are answered by the shell;
 *  - launch gets the argument count, every buffer's size and the grid
 *    already checked against the kernel, the grid evaluated, and an empty
 *    grid already answered.
 *
 * Hooks set the message of a failure with tilec_sdk_error_set and return
 * a tilec_pstatus_t; the shell prefixes nothing, so messages start with
 * the backend's name ("cuda: ...") as before.  tilec_shell_log and
 * tilec_shell_cache_dir give the host's log sink and cache directory of the
 * latest query.
 *
 * One shell per plugin: the SDK is linked statically into each plugin, and
 * tilec_shell_query accepts one backend description per process image.
 */
#ifndef TILEC_SHELL_H
#define TILEC_SHELL_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/sdk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What compile, lower and the module hooks see of a module. */
typedef struct tilec_shell_module {
    /* Set by the shell before compile/lower; read-only for the backend. */
    const tilec_ir_module_t *ir;     /* parsed IR, in the module's arena */
    const tilec_ir_kernel_t *kernel; /* ir->kernel */
    const char *ir_text;             /* the text compile got; valid during compile/lower only */
    size_t ir_len;
    uint32_t nparams, nsyms;         /* kernel parameters and T.dynamic symbols */
    void *dev;                       /* the device state it was compiled on; NULL without one */
    tilec_arena_t *arena;            /* the module's arena: allocations live as long as it */
    /* Filled by the backend; freed by the shell with free(). */
    char *source;                    /* module_data(SOURCE) */
    size_t source_len;
    void *binary;                    /* module_data(BINARY) */
    size_t binary_len;
    char *lowered;                   /* module_data(LOWERED) */
    size_t lowered_len;
    tilec_pmodule_info_t info;       /* every count -1 at first; fill what is known */
    void *data;                      /* the backend's module_size bytes, zeroed */
} tilec_shell_module_t;

/* What the launch hook gets, every field already checked. */
typedef struct tilec_shell_launch {
    uint32_t nargs;                  /* = the kernel's parameter count */
    uint32_t nsyms;                  /* = its symbol count */
    void *const *args;               /* [nargs] the buffers' mem_size state */
    const size_t *sizes;             /* [nargs] their sizes, each >= what the kernel reads */
    const int64_t *syms;             /* [nsyms], each in int32 range (never NULL) */
    int64_t grid[3];                 /* each in 1..2^31-1 */
    int timed;                       /* store the device time in *elapsed_ms */
    double *elapsed_ms;
    void *stream;                    /* the caller's queue (only with TILEC_CAP_STREAM); NULL: own */
} tilec_shell_launch_t;

/* Backend flags. */
#define TILEC_SHELL_COMPILE_WITHOUT_DEVICE (1u << 0) /* compile/lower(NULL dev) with an arch */
#define TILEC_SHELL_MODULE_ON_ITS_DEVICE   (1u << 1) /* launch only on the device it was compiled on */
/* reads tile IR 1.3 and later but not 1.3's 4-bit dtypes: a kernel that
 * uses one is refused as unsupported, with a message that says so */
#define TILEC_SHELL_NO_4BIT                (1u << 2)

/* A device as a backend's device_describe reports it: what device_info
 * returns, and the value of each property key the device reports (set
 * with tilec_shell_value_int/_str; kind TILEC_PVAL_NONE: not reported). */
typedef struct tilec_shell_device {
    tilec_pdevice_info_t info;
    tilec_pvalue_t prop[TILEC_PROP_LAST + 1];
} tilec_shell_device_t;

typedef struct tilec_shell_backend {
    const char *name;                /* "cuda": the table's name and every message's prefix */
    const char *vendor, *version;
    uint64_t caps;
    uint32_t abi_max;                /* highest ABI it speaks: TILEC_PLUGIN_ABI_VERSION, or
                                        TILEC_ABI_MAKE(1, 0) to act as a 1.0 plugin */
    uint32_t ir_min, ir_max;         /* tile IR versions it reads (TILEC_IR_MAKE) */
    uint32_t flags;                  /* TILEC_SHELL_* */
    size_t device_size, mem_size, module_size; /* bytes of backend state per handle */

    /* Devices.  Required: device_count, and device_info or device_describe. */
    tilec_pstatus_t (*device_count)(uint32_t *count);
    /* info is a zeroed full-size struct; index < count. */
    tilec_pstatus_t (*device_info)(uint32_t index, tilec_pdevice_info_t *info);
    /* Optional.  value is a zeroed full-size struct.  Answer
     * TILEC_PS_UNSUPPORTED for keys it cannot tell: the shell then answers
     * the ones device_info holds (compute units, memory, threads, shared
     * memory) and "unknown property key" for the rest. */
    tilec_pstatus_t (*device_property)(uint32_t index, uint32_t key, tilec_pvalue_t *value);
    /* Optional; dev is device_size zeroed bytes. */
    tilec_pstatus_t (*device_open)(uint32_t index, void *dev);
    void (*device_close)(void *dev);

    /* Compile (required): opts is full-size (the defaults when the caller
     * gave none); dev is NULL only with TILEC_SHELL_COMPILE_WITHOUT_DEVICE
     * and an arch.  Fill mod's source/binary/info/data. */
    tilec_pstatus_t (*compile)(void *dev, const tilec_pcompile_options_t *opts,
                               tilec_shell_module_t *mod);
    /* Optional: fill mod->lowered.  NULL: lower answers "not supported". */
    tilec_pstatus_t (*lower)(void *dev, const tilec_pcompile_options_t *opts,
                             tilec_shell_module_t *mod);
    /* Optional: complete mod->info when asked (e.g. from the driver). */
    void (*module_info)(tilec_shell_module_t *mod, tilec_pmodule_info_t *info);
    /* Optional: release what mod->data holds (the shell frees the rest). */
    void (*module_free)(tilec_shell_module_t *mod);

    /* Memory (required): mem is mem_size zeroed bytes; size may be 0.
     * Copies are in range and never empty. */
    tilec_pstatus_t (*mem_alloc)(void *dev, tilec_pmem_scope_t scope, size_t size, void *mem);
    tilec_pstatus_t (*mem_write)(void *dev, void *mem, size_t offset, const void *src, size_t size);
    tilec_pstatus_t (*mem_read)(void *dev, void *mem, size_t offset, void *dst, size_t size);
    void (*mem_free)(void *dev, void *mem);
    /* Optional, both or neither (DLPack zero-copy): mem_wrap makes mem's
     * state a handle on size bytes the caller owns at ptr, where DLPack's
     * device type dl_type and id dl_id say (mem_free must then leave that
     * memory alone); TILEC_PS_UNSUPPORTED when the device cannot address it.
     * mem_address tells where a buffer lies for another framework. */
    tilec_pstatus_t (*mem_wrap)(void *dev, int dl_type, int dl_id, void *ptr, size_t size, void *mem);
    tilec_pstatus_t (*mem_address)(void *dev, void *mem, int *dl_type, int *dl_id, void **ptr);

    /* Launch (required): a module compiled with a device (or, without
     * TILEC_SHELL_MODULE_ON_ITS_DEVICE, for this backend at all). */
    tilec_pstatus_t (*launch)(void *dev, tilec_shell_module_t *mod, const tilec_shell_launch_t *l);

    /* Optional vendor extensions by name; NULL: none. */
    const void *(*extension)(const char *name);

    /* Optional: bind mod->binary (a copy of what compile produced earlier
     * on this plugin version and device) without compiling; mod is set up
     * as for compile.  With it the shell answers the standard extension
     * TILEC_EXT_MODULE_LOAD (kernel bundles). */
    tilec_pstatus_t (*load)(void *dev, tilec_shell_module_t *mod);

    /* Optional, in place of device_info and device_property: describe
     * device index < count once, into a zeroed d (d->info full size); the
     * shell answers device_info with d->info and each property key with
     * d->prop[key], else with what d->info holds. */
    tilec_pstatus_t (*device_describe)(uint32_t index, tilec_shell_device_t *d);
} tilec_shell_backend_t;

/* The body of a plugin's tilec_plugin_query: checks the arguments and the
 * host's version range, keeps the host's log sink and cache directory,
 * picks the highest common ABI version and returns the table for it. */
tilec_pstatus_t tilec_shell_query(const tilec_shell_backend_t *be, const tilec_plugin_host_t *host,
                                  uint32_t *abi_out, const tilec_plugin_t **table_out);

/* The host's log sink (a no-op without one). */
void tilec_shell_log(const char *topic, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A malloc'd copy of the host's cache directory, NULL when there is none. */
char *tilec_shell_cache_dir(void);

/* The integer value of option key in opts (the last one given wins), or
 * dflt when it is not there. */
int64_t tilec_shell_option(const tilec_pcompile_options_t *opts, uint32_t key, int64_t dflt);

/* Sets a property value (for device_property hooks). */
tilec_pstatus_t tilec_shell_value_int(tilec_pvalue_t *v, int64_t i);
tilec_pstatus_t tilec_shell_value_str(tilec_pvalue_t *v, const char *s);

/* ---- the kernel cache of compiled modules (shell_cache.c) ----------------------
 * For a compile hook: before running the vendor compiler,
 *
 *     const char *parts[] = {VERSION, "nvrtc 12.4", arch, "O3", extra};
 *     tilec_shell_cache_t ce;
 *     if (tilec_shell_cache_find(&ce, "cuda", ".cubin", parts, 5, mod, is_cubin)) { done }
 *     ... compile into mod->binary ...
 *     tilec_shell_cache_store(&ce, "cuda", mod);
 *     tilec_shell_cache_done(&ce);
 *
 * The key is the SHA-256 of "tilec-NAME", each part (NULL counts as "")
 * and mod->source; the entry is NAME-<key>EXT in the host's cache
 * directory, verified on load (a damaged entry is removed and logged). */
typedef struct tilec_shell_cache {
    char *path;                      /* malloc'd; NULL: no cache (no directory) */
    char key[65];                    /* hex SHA-256 */
} tilec_shell_cache_t;

/* 1 on a hit: mod->binary/binary_len hold the entry, which valid (NULL:
 * any) accepted.  0 on a miss: mod->binary is empty.  Call
 * tilec_shell_cache_done on e either way. */
int tilec_shell_cache_find(tilec_shell_cache_t *e, const char *name, const char *ext, const char *const *parts,
                           int nparts, tilec_shell_module_t *mod, int (*valid)(const void *data, size_t len));
/* Stores mod->binary as e's entry (nothing without a cache); 0, or -1
 * (logged: a failed store only costs the next compile). */
int tilec_shell_cache_store(const tilec_shell_cache_t *e, const char *name, const tilec_shell_module_t *mod);
void tilec_shell_cache_done(tilec_shell_cache_t *e);

/* ---- vendor libraries: one X-macro symbol table per library -------------------
 *
 * A backend lists the functions it takes from a vendor library once:
 *
 *   #define ACME_SYMBOLS(X)                                   \
 *       X(Init,    "acmeInit",    int, (unsigned))            \
 *       X(Launch,  "acmeLaunch2", int, (void *, int))
 *
 *   typedef struct acme_api { ACME_SYMBOLS(TILEC_DL_FIELD) } acme_api_t;
 *   #define ACME_ROW(field, sym, ret, args) {sym, offsetof(acme_api_t, field)},
 *   static const tilec_dl_sym_t acme_syms[] = { ACME_SYMBOLS(ACME_ROW) };
 *
 * and resolves them all with tilec_dl_resolve.  A symbol may name
 * fallbacks: "cuEventElapsedTime_v2|cuEventElapsedTime" takes the first
 * that the library has. */
typedef struct tilec_dl_sym {
    const char *name;               /* "sym" or "sym|older_sym|..." */
    size_t offset;                  /* of its function pointer in the table */
} tilec_dl_sym_t;

/* The struct field of one X-macro row. */
#define TILEC_DL_FIELD(field, sym, ret, args) ret(*field) args;

/* Resolves every symbol of syms[0..n) in handle into table.  0, or -1 with
 * why set to "LIB: missing symbol NAME". */
int tilec_dl_resolve(void *handle, const char *lib, const tilec_dl_sym_t *syms, size_t n,
                     void *table, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif
