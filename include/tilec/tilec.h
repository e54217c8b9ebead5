/*
 * tilec/tilec.h — the public C API of libtilec.
 *
 * A context selects one backend plugin (TILEC_BACKEND, or an explicit name)
 * and one of its devices.  Programs are tile-program sources turned into
 * tile IR by the frontend; compiling a program for the context's backend
 * gives an executable; buffers live on the context's device; launching an
 * executable runs its kernel over its grid on the given buffers.
 *
 * Every call that can fail returns a tilec_status_t; the context keeps a
 * human-readable message for the last failure (tilec_context_message).
 * For diagnostics on the program the message is the full
 * "FILE:LINE:COL: error: ..." text with the source line and caret.
 * Library code never exits and never prints unless TILEC_LOG asks it to.
 */
#ifndef TILEC_TILEC_H
#define TILEC_TILEC_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TILEC_BUILDING_LIBRARY)
#define TILEC_API __attribute__((visibility("default")))
#else
#define TILEC_API
#endif

#define TILEC_VERSION_MAJOR 0
#define TILEC_VERSION_MINOR 1
#define TILEC_VERSION_PATCH 0
#define TILEC_VERSION_STRING "0.1.0"

typedef enum tilec_status {
    TILEC_OK = 0,
    TILEC_E_INVALID = 1,      /* bad argument or usage */
    TILEC_E_PROGRAM = 2,      /* invalid tile program (diagnostic) */
    TILEC_E_UNAVAILABLE = 3,  /* backend or device unavailable */
    TILEC_E_COMPILE = 4,      /* backend compile failure */
    TILEC_E_LAUNCH = 5,       /* launch or memory failure on the device */
    TILEC_E_NOMEM = 6,
    TILEC_E_IO = 7            /* file could not be read or written */
} tilec_status_t;

TILEC_API const char *tilec_status_name(tilec_status_t s); /* "invalid program" ... */

typedef struct tilec_context tilec_context_t;
typedef struct tilec_program tilec_program_t;
typedef struct tilec_executable tilec_executable_t;
typedef struct tilec_buffer tilec_buffer_t;

/* Element types, same values as the tile IR's tilec_dtype_t. */
typedef enum tilec_elem {
    TILEC_ELEM_BOOL = 0,
    TILEC_ELEM_INT8, TILEC_ELEM_INT16, TILEC_ELEM_INT32, TILEC_ELEM_INT64,
    TILEC_ELEM_UINT8, TILEC_ELEM_UINT16, TILEC_ELEM_UINT32, TILEC_ELEM_UINT64,
    TILEC_ELEM_FLOAT16, TILEC_ELEM_BFLOAT16, TILEC_ELEM_FLOAT32, TILEC_ELEM_FLOAT64,
    TILEC_ELEM_FLOAT8_E4M3FN, TILEC_ELEM_FLOAT8_E5M2,  /* one byte each (tile IR 1.2) */
    /* tile IR 1.3: two elements per byte, the even one in the low nibble
     * (PyTorch's packed int4 and float4_e2m1fn_x2 layout); a buffer of n
     * elements holds (n + 1) / 2 bytes */
    TILEC_ELEM_INT4, TILEC_ELEM_UINT4, TILEC_ELEM_FLOAT4_E2M1FN
} tilec_elem_t;

/* ---- contexts ---------------------------------------------------------- */

/* backend: "cpu", "cuda:1", "auto", a plugin name, or NULL to read
 * TILEC_BACKEND (default "auto").  On failure *out is still set (when out is
 * not NULL) to a context that carries the message, or NULL when out of
 * memory; destroy it either way. */
TILEC_API tilec_status_t tilec_context_create(const char *backend, tilec_context_t **out);
TILEC_API void tilec_context_destroy(tilec_context_t *ctx);
TILEC_API const char *tilec_context_message(const tilec_context_t *ctx);
TILEC_API const char *tilec_context_backend(const tilec_context_t *ctx);  /* plugin name */
TILEC_API const char *tilec_context_device(const tilec_context_t *ctx);   /* device name */

/* ---- plugins and devices ---------------------------------------------- */

typedef enum tilec_plugin_state {
    TILEC_PLUGIN_OK = 0,          /* loaded, at least one device */
    TILEC_PLUGIN_UNAVAILABLE = 1, /* loaded, but no usable device (reason says why) */
    TILEC_PLUGIN_REJECTED = 2,    /* not loaded: not a plugin, no symbol, no common ABI... */
    TILEC_PLUGIN_SHADOWED = 3     /* a plugin of the same name was found earlier */
} tilec_plugin_state_t;

typedef struct tilec_device_desc {
    const char *name;
    const char *platform;         /* "" when the backend has none */
    uint64_t caps;                /* TILEC_CAP_* of tilec/plugin.h */
    uint64_t global_mem_bytes;
    uint64_t shared_mem_bytes;
    uint32_t max_threads, compute_units;
    /* The typed properties (plugin ABI 1.1; "" / -1 when not reported). */
    const char *arch;             /* default target: "sm_90a", "x86_64" */
    const char *mma_kinds;        /* comma list of matrix instructions, "" none */
    const char *driver_version;
    int64_t subgroup_size;        /* warp / wavefront width */
    int64_t shared_mem_default_bytes; /* per block, without asking (CUDA's 48 KiB) */
    int64_t shared_mem_optin_bytes; /* per block, when the kernel asks */
    int64_t clock_khz;
    int64_t registers_per_block;
} tilec_device_desc_t;

typedef struct tilec_plugin_desc {
    const char *name;             /* plugin name; the file name when rejected */
    const char *path;             /* file, or "(embedded)" */
    const char *vendor, *version; /* "" when rejected */
    uint32_t abi_version;         /* negotiated, TILEC_ABI_MAKE(major, minor); 0 when rejected */
    tilec_plugin_state_t state;
    const char *reason;           /* why unavailable/rejected/shadowed; "" when OK */
    uint64_t caps;
    int ndevices;
    const tilec_device_desc_t *devices;
    uint32_t ir_min, ir_max;      /* tile IR versions it reads, TILEC_ABI_MAKE encoding; 0 when rejected */
} tilec_plugin_desc_t;

/* Every candidate the loader found, in search order (TILEC_PLUGIN_PATH,
 * the embedded cpu backend, the build tree, $PREFIX/lib/tilec), each with
 * its state.  Free the list with tilec_plugins_free. */
TILEC_API tilec_status_t tilec_plugins_list(tilec_plugin_desc_t **out, int *n);
TILEC_API void tilec_plugins_free(tilec_plugin_desc_t *list, int n);
/* "ok", "unavailable", "rejected", "shadowed". */
TILEC_API const char *tilec_plugin_state_name(tilec_plugin_state_t s);

/* One typed property of the context's device.  key is a TILEC_PROP_* of
 * tilec/plugin.h (TILEC_PROP_ARCH, TILEC_PROP_SUBGROUP_SIZE, ...). */
typedef struct tilec_prop {
    int kind;                     /* 0: not reported by the device, 1: integer, 2: string */
    int64_t ival;
    char sval[256];
} tilec_prop_t;
/* TILEC_OK (kind 0 when the device does not report it), TILEC_E_INVALID
 * for a key this library does not know, TILEC_E_UNAVAILABLE without a
 * device. */
TILEC_API tilec_status_t tilec_device_property(tilec_context_t *ctx, uint32_t key, tilec_prop_t *out);

/* ---- programs ---------------------------------------------------------- */

typedef struct tilec_define_kv { const char *name; const char *value; } tilec_define_kv_t;

/* Parse and lower a tile program.  defs bind factory parameters and
 * T.dynamic symbols (-D); entry picks the factory (NULL: the last one). */
TILEC_API tilec_status_t tilec_program_load_file(tilec_context_t *ctx, const char *path,
                                                 const tilec_define_kv_t *defs, int ndefs,
                                                 const char *entry, tilec_program_t **out);
TILEC_API tilec_status_t tilec_program_load_string(tilec_context_t *ctx, const char *name,
                                                   const char *src, size_t len,
                                                   const tilec_define_kv_t *defs, int ndefs,
                                                   const char *entry, tilec_program_t **out);
TILEC_API void tilec_program_free(tilec_program_t *p);
/* The tile IR in its text form; owned by the program. */
TILEC_API const char *tilec_program_ir(const tilec_program_t *p);
/* A program whose prim_func has several `with T.Kernel` blocks (or
 * T.sync_grid) is a chain of kernels that compile, launch and interpret in
 * order with the same arguments: this is the next kernel after p, or NULL.
 * Owned by the first program of the chain; tilec_program_ir and the
 * parameter and symbol queries work on it too. */
TILEC_API const tilec_program_t *tilec_program_next(const tilec_program_t *p);
TILEC_API int tilec_program_num_params(const tilec_program_t *p);
/* T.dynamic symbols of the kernel, in kernel order, with the value given by
 * -D at load (-1 when none). */
TILEC_API int tilec_program_num_syms(const tilec_program_t *p);
TILEC_API tilec_status_t tilec_program_sym(const tilec_program_t *p, int i, const char **name,
                                           int64_t *value);
/* Parameter i: name, element type, rank and shape.  Symbolic dimensions
 * are resolved from the -D values given at load; a dimension still unbound
 * is reported as -1. */
TILEC_API tilec_status_t tilec_program_param(const tilec_program_t *p, int i, const char **name,
                                             tilec_elem_t *elem, int *ndim, int64_t shape[8]);

/* What names the problem (the tuning database's key, docs/tuning.md): the
 * entry that was compiled, the SHA-256 of the source text (64 hex digits)
 * and the -D values the program was loaded with (owned by the program). */
TILEC_API const char *tilec_program_entry(const tilec_program_t *p);
TILEC_API const char *tilec_program_source_hash(const tilec_program_t *p);
TILEC_API int tilec_program_num_defines(const tilec_program_t *p);
TILEC_API const tilec_define_kv_t *tilec_program_defines(const tilec_program_t *p);
/* The entry factory's parameters, in order (none for a top-level
 * prim_func): the default and the value it was bound to, as -D text (NULL
 * when it has none, or when -D cannot say it, e.g. a tuple). */
TILEC_API int tilec_program_num_factory_params(const tilec_program_t *p);
TILEC_API tilec_status_t tilec_program_factory_param(const tilec_program_t *p, int i,
                                                     const char **name, const char **dflt,
                                                     const char **value);
/* The tuning space the program declares with @autotune(configs=...): config
 * i is *n NAME=VALUE pairs in -D text (owned by the program). */
TILEC_API int tilec_program_num_configs(const tilec_program_t *p);
TILEC_API tilec_status_t tilec_program_config(const tilec_program_t *p, int i,
                                              const tilec_define_kv_t **kv, int *n);

/* ---- compile and launch ------------------------------------------------ */

TILEC_API tilec_status_t tilec_program_compile(tilec_context_t *ctx, const tilec_program_t *p,
                                               tilec_executable_t **out);
/* The same with an explicit target (e.g. "sm_90"; NULL: the device's). */
TILEC_API tilec_status_t tilec_program_compile_for(tilec_context_t *ctx, const tilec_program_t *p,
                                                   const char *arch, tilec_executable_t **out);

/* Compile options.  Zero-initialize, then set what you need. */
typedef struct tilec_compile_options {
    const char *arch;             /* target, NULL: the device's */
    int opt_level;                /* 0..3; 0 in a zeroed struct means the default, 3 */
    int no_opt;                   /* nonzero: opt_level 0 */
    int fast_math;                /* nonzero: faster, less exact math allowed */
    /* TileLang's pass_configs, as given to @tilelang.jit ("tl.disable_tma_lower" = "True"):
     * the known keys become structured options, the others travel as they are. */
    const tilec_define_kv_t *pass_configs;
    int npass_configs;
} tilec_compile_options_t;
TILEC_API tilec_status_t tilec_program_compile_with(tilec_context_t *ctx, const tilec_program_t *p,
                                                    const tilec_compile_options_t *opts,
                                                    tilec_executable_t **out);

/* The module after the backend's lowering passes, as tile IR text
 * (`tilec compile --emit lowered`), without compiling it.  *text is
 * malloc'd (free it with free()).  TILEC_E_COMPILE with the backend's
 * message when it has no lowering to show. */
TILEC_API tilec_status_t tilec_program_lower(tilec_context_t *ctx, const tilec_program_t *p,
                                             const tilec_compile_options_t *opts, char **text,
                                             size_t *len);

/* What the compiled kernel uses, where the backend can tell (-1: unknown). */
typedef struct tilec_module_info {
    int64_t registers;            /* per thread */
    int64_t shared_static_bytes;  /* per block */
    int64_t shared_dynamic_bytes; /* per block */
    int64_t spill_bytes;          /* per thread */
    int64_t local_bytes;          /* per thread */
    int64_t threads;              /* per block */
    int64_t max_threads;          /* per block, the most the kernel allows */
} tilec_module_info_t;
TILEC_API tilec_status_t tilec_executable_info(const tilec_executable_t *e, tilec_module_info_t *out);
TILEC_API void tilec_executable_free(tilec_executable_t *e);
/* Compiled binary (shared object, cubin, SPIR-V...), when the backend exposes it. */
TILEC_API const void *tilec_executable_binary(const tilec_executable_t *e, size_t *len);
/* Generated source of the executable, when the backend exposes it. */
TILEC_API const char *tilec_executable_source(const tilec_executable_t *e, size_t *len);

/* Run the kernel on args (one buffer per tensor parameter, in order).
 * T.dynamic symbols are taken from the buffers' shapes; inconsistent shapes
 * are an error.  elapsed_ms may be NULL; otherwise it receives the device
 * time (or host wall time where the backend has no device timer). */
TILEC_API tilec_status_t tilec_launch(tilec_context_t *ctx, tilec_executable_t *e,
                                      tilec_buffer_t *const *args, int nargs,
                                      double *elapsed_ms);

/* The same, enqueued on the caller's stream in the backend's own type (a
 * CUstream on cuda: e.g. torch.cuda.current_stream().cuda_stream): the
 * kernel runs after the work already on that stream and the call returns
 * without waiting for it; the caller synchronizes the stream before using
 * the results on the host.  stream NULL is tilec_launch without timing
 * (it waits): on cuda, name the legacy default stream (torch's stream 0) as
 * CU_STREAM_LEGACY, (void *)1, to enqueue there without waiting.
 * TILEC_E_UNAVAILABLE on a backend without TILEC_CAP_STREAM
 * (`tilec devices` lists the capability). */
TILEC_API tilec_status_t tilec_launch_stream(tilec_context_t *ctx, tilec_executable_t *e,
                                             tilec_buffer_t *const *args, int nargs,
                                             void *stream);

/* ---- buffers ----------------------------------------------------------- */

TILEC_API tilec_status_t tilec_buffer_create(tilec_context_t *ctx, tilec_elem_t elem, int ndim,
                                             const int64_t *shape, tilec_buffer_t **out);
TILEC_API void tilec_buffer_free(tilec_buffer_t *b);
TILEC_API size_t tilec_buffer_bytes(const tilec_buffer_t *b);
TILEC_API tilec_status_t tilec_buffer_write(tilec_buffer_t *b, const void *src, size_t bytes);
TILEC_API tilec_status_t tilec_buffer_read(const tilec_buffer_t *b, void *dst, size_t bytes);

/* DLPack interop.  The tensor must be compact row-major (strides NULL, or
 * equal to the row-major ones; a size-1 dimension may have any stride).
 *
 * How a tensor's memory is used: */
typedef enum tilec_dlpack_mode {
    TILEC_DLPACK_COPY = 0,  /* copy: import from host memory (kDLCPU, kDLCUDAHost) into a
                             * new buffer; export to new host memory */
    TILEC_DLPACK_SHARE = 1, /* zero-copy: the buffer uses the tensor's memory in place
                             * (import), the tensor is the buffer's memory (export); an
                             * error saying why when the backend cannot */
    TILEC_DLPACK_AUTO = 2   /* share when the backend can, else copy */
} tilec_dlpack_mode_t;

/* Import: a buffer for the tensor.  Zero-copy is possible where the
 * backend's device addresses the tensor's memory directly: kDLCUDA (and
 * kDLCUDAManaged) memory of the context's device on the cuda backend, host
 * memory on the cpu backend; the data (data + byte_offset) must be aligned
 * to the element size.  A tensor on a device the backend cannot use is an
 * error in every mode (copy it to the host first).  The managed tensor is
 * not consumed: when the buffer shares its memory the caller keeps the
 * tensor alive until tilec_buffer_free, which does not free that memory. */
TILEC_API tilec_status_t tilec_buffer_import_dlpack(tilec_context_t *ctx,
                                                    const DLManagedTensor *t,
                                                    tilec_dlpack_mode_t mode,
                                                    tilec_buffer_t **out);
/* 1 when b uses memory it was given by tilec_buffer_import_dlpack, else 0. */
TILEC_API int tilec_buffer_is_shared(const tilec_buffer_t *b);
/* Export: a new DLManagedTensor for the consumer, who calls its deleter.
 * Shared, it is the buffer's own memory (kDLCUDA device memory on the cuda
 * backend, kDLCPU on the cpu backend) and keeps the buffer alive until the
 * deleter runs, even past tilec_buffer_free; copied, it is host memory. */
TILEC_API tilec_status_t tilec_buffer_export_dlpack(tilec_buffer_t *b, tilec_dlpack_mode_t mode,
                                                    DLManagedTensor **out);
/* The same as import and export with TILEC_DLPACK_COPY. */
TILEC_API tilec_status_t tilec_buffer_from_dlpack(tilec_context_t *ctx, const DLManagedTensor *t,
                                                  tilec_buffer_t **out);
TILEC_API tilec_status_t tilec_buffer_to_dlpack(tilec_buffer_t *b, DLManagedTensor **out);

/* ---- tuning (docs/tuning.md) ------------------------------------------- */

/* Frees a string or array the library returned (messages, lists). */
TILEC_API void tilec_free(void *p);

/* A tuned config found for a program in the tuning database. */
typedef struct tilec_tuned {
    int n;
    tilec_define_kv_t *config;    /* the stored NAME=VALUE pairs */
    char *text;                   /* "block_M=64 block_N=32" */
    char *shape;                  /* the stored shape bucket ("m=1024"), "" when none */
    int nearest;                  /* the program's own shape was not stored: nearest used */
    double time_ms, default_ms;   /* as measured by the tuner (default_ms < 0: unknown) */
    char *db;                     /* the database it came from */
} tilec_tuned_t;

/* Looks p up in the tuning database db (NULL: TILEC_TUNE_DB or
 * $XDG_CACHE_HOME/tilec/tune.db) for ctx's backend plugin and device.  The
 * key is the source hash, the entry, the -D values the program was loaded
 * with that are neither in the stored config nor a stored shape name, the
 * shape bucket, the plugin name and version, the device and its arch.
 * *out is NULL when nothing matches (TILEC_OK).  A missing database is not
 * an error; an unreadable, corrupt or foreign one is (TILEC_E_IO or
 * TILEC_E_UNAVAILABLE without libsqlite3), with the reason in ctx. */
TILEC_API tilec_status_t tilec_tune_lookup(tilec_context_t *ctx, const tilec_program_t *p,
                                           const char *db, tilec_tuned_t **out);
TILEC_API void tilec_tuned_free(tilec_tuned_t *t);

typedef enum tilec_tune_state {
    TILEC_TUNE_TIMED = 0,         /* passed the check and was timed */
    TILEC_TUNE_INVALID,           /* the program rejects the config (diagnostic) */
    TILEC_TUNE_COMPILE_FAILED,
    TILEC_TUNE_CHECK_FAILED,      /* ran, but its results differ from the reference */
    TILEC_TUNE_LAUNCH_FAILED,
    TILEC_TUNE_CRASHED,           /* its worker died of a signal */
    TILEC_TUNE_TIMEOUT,
    TILEC_TUNE_SKIPPED,           /* not tried: the budget ran out */
    TILEC_TUNE_PRUNED             /* compiled, but needs more than the device has (shared memory,
                                     threads its registers allow): never launched */
} tilec_tune_state_t;

typedef struct tilec_tune_candidate {
    int bucket;                   /* index into the report's buckets */
    char *config;                 /* "block_M=64 block_N=32"; the defaults when is_default */
    int is_default;               /* the factory's defaults (the speedup baseline) */
    tilec_tune_state_t state;
    char *message;                /* why it failed, "" when timed */
    double median_ms, min_ms;
    int runs;
    double rel_err;               /* worst relative Frobenius error against the reference */
} tilec_tune_candidate_t;

/* Where candidate i's check took its time, in ms (report->phase_ms[i]):
 * its worker's whole life as the tuner saw it (fork to reap), and inside it
 * the context and program (setup), the compile, the inputs (host copies and
 * device buffers: inputs), the checked launch with reading back and
 * comparing (check), and warm-up plus timed launches (timing); 0 when not
 * run.  (A separate array, so that tilec_tune_candidate_t keeps its size.) */
typedef struct tilec_tune_phases {
    double wall_ms, setup_ms, compile_ms, check_ms, timing_ms, inputs_ms;
} tilec_tune_phases_t;

typedef struct tilec_tune_bucket {
    char *shape;                  /* "m=1024", "" when --shapes is not used */
    int best;                     /* candidate index, -1 when none passed */
    int stored;                   /* written to the database */
} tilec_tune_bucket_t;

typedef struct tilec_tune_options {
    uint32_t struct_size;
    const char *path;             /* the tile program */
    const tilec_define_kv_t *defs; int ndefs;   /* fixed -D values */
    const char *entry;            /* NULL: the last factory */
    const char *backend;          /* NULL: TILEC_BACKEND */
    const char *reference;        /* NULL: the interpreter; else a backend computes it */
    const char *db;               /* NULL: the default database; "" stores nothing */
    const char *const *space; int nspace;       /* "NAME=V1,V2,...", their product */
    const char *const *shapes; int nshapes;     /* "SYM=V1,V2,...", one bucket each */
    int jobs;                     /* parallel compiles, <= 0: the cores */
    double budget_s;              /* <= 0: none */
    double timeout_s;             /* one candidate's limit, <= 0: 300 */
    uint64_t seed;
    /* Called after each candidate has a result (phase: 0 compile, 1 check
     * and time); may be NULL. */
    void (*progress)(void *user, int phase, int done, int total, const tilec_tune_candidate_t *c);
    void *user;
} tilec_tune_options_t;

typedef struct tilec_tune_report {
    char *message;                /* why tilec_tune failed, "" otherwise */
    char *plugin, *plugin_version, *device, *arch;
    char *db;                     /* where results went, "" when not stored */
    int ncandidates;
    tilec_tune_candidate_t *candidates;
    int nbuckets;
    tilec_tune_bucket_t *buckets;
    double wall_s;
    char *space;                  /* where the space came from: "--space", "@autotune", or
                                   * "default: NAME=V1,V2 ..." (docs/tuning.md) */
    tilec_tune_phases_t *phase_ms; /* [ncandidates] */
} tilec_tune_report_t;

/* Tunes a program (docs/tuning.md): every candidate is compiled in its own
 * forked worker (jobs at a time), so that a crashing candidate is a failed
 * candidate; each compiled one is checked once against the reference
 * (computed once per bucket), and the passing ones are timed one at a
 * time; the fastest is stored per bucket.  *out is always set (free it with
 * tilec_tune_report_free); on failure its message says why.  This process
 * never opens the device: workers do (CUDA and the like do not survive a
 * fork). */
TILEC_API tilec_status_t tilec_tune(const tilec_tune_options_t *opts, tilec_tune_report_t **out);
TILEC_API void tilec_tune_report_free(tilec_tune_report_t *r);
TILEC_API const char *tilec_tune_state_name(tilec_tune_state_t s);

/* The database's rows as text lines ("KEY -> CONFIG (...)"), and JSON export
 * and import (db NULL: the default).  *n gets the row count; *msg a
 * message to tilec_free on failure. */
TILEC_API tilec_status_t tilec_tunedb_list(const char *db, char ***lines, int *n, char **msg);
TILEC_API tilec_status_t tilec_tunedb_export(const char *db, const char *json, int *n, char **msg);
TILEC_API tilec_status_t tilec_tunedb_import(const char *db, const char *json, int *n, char **msg);

/* ---- ahead-of-time bundles (docs/tuning.md, "Bundles") ----------------- */

typedef struct tilec_bundle tilec_bundle_t;

/* Compiles, on ctx's backend, the program at path with the fixed defs for
 * each of its tuned configs in db (NULL: the default database) and for its
 * defaults, and writes the kernels (IR, kernel ABI, the backend's binary,
 * keys) with a checksum to out.  *nkernels gets their number. */
TILEC_API tilec_status_t tilec_bundle_build(tilec_context_t *ctx, const char *path,
                                            const tilec_define_kv_t *defs, int ndefs, const char *entry,
                                            const char *db, const char *out, int *nkernels);
/* Reads a bundle and checks its checksum, format and that it was built
 * for ctx's plugin (name and version) and device; else an error that says
 * for what it was built. */
TILEC_API tilec_status_t tilec_bundle_open(tilec_context_t *ctx, const char *path, tilec_bundle_t **out);
TILEC_API void tilec_bundle_free(tilec_bundle_t *b);
TILEC_API int tilec_bundle_num_kernels(const tilec_bundle_t *b);
/* The bundled tuned config for p (loaded with the -D values of the run),
 * as tilec_tune_lookup does for a database; *out NULL: use p as it is. */
TILEC_API tilec_status_t tilec_bundle_lookup(tilec_context_t *ctx, const tilec_bundle_t *b,
                                             const tilec_program_t *p, tilec_tuned_t **out);
/* The executable of p from the bundle, with no compiler run: the kernel
 * compiled from exactly p's IR, bound by the plugin from its binary. */
TILEC_API tilec_status_t tilec_bundle_executable(tilec_context_t *ctx, const tilec_bundle_t *b,
                                                 const tilec_program_t *p, tilec_executable_t **out);

/* ---- the reference interpreter ----------------------------------------- */

/* Run the program's kernel in the reference interpreter on host memory:
 * args[i] points at parameter i's data (row-major, its element type), syms
 * are the T.dynamic values in kernel order (NULL when none). */
TILEC_API tilec_status_t tilec_program_interpret(tilec_context_t *ctx, const tilec_program_t *p,
                                                 void *const *args, const int64_t *syms);

#ifdef __cplusplus
}
#endif
#endif
