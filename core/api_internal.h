/*
 * core/api_internal.h — the objects behind the public C API (tilec.h),
 * shared by core/api.c (contexts, executables, launch), core/program.c
 * (programs), core/api_buffer.c (buffers), core/dlpack.c (DLPack) and the
 * tuner.
 *
 * Lifetimes: contexts, programs and executables are reference counted so
 * the public *_free/_destroy calls may come in any order: a buffer or an
 * executable keeps its context (and so the plugin and its device) alive,
 * an executable keeps its program.  Counts are atomic; the objects are
 * otherwise not synchronised (use one per thread or lock around them).
 */
#ifndef TILEC_CORE_API_INTERNAL_H
#define TILEC_CORE_API_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "props.h"
#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/tilec.h"
#include "frontend.h"

struct tilec_context {
    int refs;
    char *msg;                      /* last failure message, NULL: "" */
    const tilec_plugin_t *table;    /* NULL: no backend (see no_backend) */
    void *handle;                   /* dlopen handle (NULL: embedded) */
    char *backend;                  /* plugin name, "" when none */
    char *plugin_path;
    tilec_pdevice_t *dev;
    uint32_t devindex;
    tilec_pdevice_info_t info;      /* of the opened device */
    tilec_device_props_t props;     /* its typed properties */
    uint32_t abi_version;           /* negotiated with the plugin */
    uint32_t ir_min, ir_max;        /* tile IR versions the plugin reads */
    tilec_status_t no_backend;      /* why table is NULL */
    char *no_backend_msg;
};

typedef struct tilec_api_param {
    const char *name;               /* arena */
    tilec_elem_t elem;
    int ndim;
    int64_t shape[TILEC_IR_MAX_DIMS]; /* resolved with -D values; -1 unknown */
    const tilec_ir_buffer_t *buf;
} tilec_api_param_t;

struct tilec_program {
    int refs;
    tilec_arena_t arena;
    tilec_ir_module_t *mod;         /* arena */
    char *ir;                       /* malloc'd text form */
    size_t ir_len;
    int nsyms;
    const char **sym_names;         /* arena [nsyms] */
    int64_t *sym_values;            /* arena [nsyms], -1 unbound */
    int *sym_of_var;                /* arena [nvars]: symbol index or -1 */
    int nparams;
    tilec_api_param_t *params;      /* arena [nparams] */
    /* What names the problem for the tuner (core/tune.c, core/tunedb.c). */
    const char *entry;              /* arena: the factory or prim_func used */
    char source_hash[65];           /* SHA-256 of the source text, hex */
    int ndefs;
    tilec_define_kv_t *defs;        /* arena [ndefs]: the -D values it was loaded with */
    int nfparams;                   /* the entry factory's parameters (frontend) */
    const tilec_frontend_param_t *fparams;
    int npass_configs;              /* its tilelang.jit(pass_configs=...), in order */
    tilec_define_kv_t *pass_configs; /* arena [npass_configs] */
    int nconfigs;                   /* its @autotune configs */
    tilec_define_kv_t **configs;    /* arena [nconfigs][config_n[i]] */
    int *config_n;
    /* A prim_func with several `with T.Kernel` blocks is a chain of programs,
     * launched in order with the same arguments: each has its own module
     * (in the first one's arena), IR text, symbols and parameter table.  The
     * first owns the rest (unref'd with it). */
    struct tilec_program *next;
};

struct tilec_executable {
    tilec_context_t *ctx;           /* counted reference */
    tilec_program_t *prog;          /* counted reference */
    tilec_pmodule_t *mod;           /* plugin-owned */
    char *source;                   /* malloc'd copy, NULL: none */
    size_t source_len;
    const void *binary;             /* owned by mod */
    size_t binary_len;
    tilec_module_info_t info;       /* asked after compile; -1: unknown */
    struct tilec_executable *next;  /* owned: the next kernel of the program's chain */
};

struct tilec_buffer {
    int refs;                       /* the handle, plus each zero-copy DLPack export */
    tilec_context_t *ctx;           /* counted reference */
    tilec_pmem_t *mem;              /* plugin-owned */
    int shared;                     /* mem wraps a DLPack tensor's memory (core/dlpack.c) */
    tilec_elem_t elem;
    int ndim;
    int64_t shape[TILEC_IR_MAX_DIMS];
    size_t bytes;
};

/* Sets ctx's message (when ctx is not NULL) and returns st. */
tilec_status_t tilec_api_fail(tilec_context_t *ctx, tilec_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A failed plugin call: "backend 'NAME': <last_error>"; st mapped to a
 * tilec status, with fallback for the codes that depend on the call. */
tilec_status_t tilec_api_plugin_fail(tilec_context_t *ctx, tilec_pstatus_t st,
                                     tilec_status_t fallback, const char *what);
/* TILEC_E_UNAVAILABLE with the reason when ctx has no backend, else OK. */
tilec_status_t tilec_api_need_backend(tilec_context_t *ctx);
/* The executable of p from a binary the same plugin and device compiled
 * earlier (a bundle's), through the plugin's tilec_module_load extension
 * (api_compile.c); no compiler runs. */
tilec_status_t tilec_api_exe_load(tilec_context_t *ctx, const tilec_program_t *p, const void *bin,
                                 size_t bin_len, tilec_executable_t **out);
void tilec_api_ctx_ref(tilec_context_t *ctx);
void tilec_api_ctx_unref(tilec_context_t *ctx);
/* A program from tile IR text ("tileir 1.0 ..."), as if the frontend had
 * produced it (no -D values): for tests, tools and conformance cases. */
tilec_status_t tilec_program_load_ir(tilec_context_t *ctx, const char *name, const char *text,
                                     size_t len, tilec_program_t **out);
/* Maps the public compile options once to the ABI's (list: room for 256
 * options, which out->options then points into); NULL o: the defaults. */
tilec_status_t tilec_api_map_options(tilec_context_t *ctx, const tilec_compile_options_t *o,
                                     tilec_pcompile_options_t *out, tilec_poption_t *list);
/* Value of an integer shape expression of p with the given symbol values
 * (kernel order); -1 when it depends on an unknown symbol or cannot be
 * evaluated (program.c). */
int tilec_api_eval_int(const tilec_program_t *p, const tilec_ir_expr_t *e, const int64_t *syms,
                       int depth, int64_t *out);
/* The symbol a shape dimension is exactly (through casts), or -1. */
int tilec_api_dim_symbol(const tilec_program_t *p, const tilec_ir_expr_t *e);
void tilec_api_program_unref(tilec_program_t *p);
double tilec_api_now_ms(void);   /* CLOCK_MONOTONIC */
size_t tilec_api_elem_size(tilec_elem_t e); /* bytes of one element; 1 for the packed 4-bit ones */
/* Total bytes of elem x shape into *out; -1 (message set) on a bad shape or
 * overflow. */
int tilec_api_shape_bytes(tilec_context_t *ctx, tilec_elem_t elem, int ndim, const int64_t *shape,
                          size_t *out);
/* A buffer of ctx around plugin memory mem (taken over: freed with the
 * buffer, also on failure). */
tilec_status_t tilec_api_buffer_wrap(tilec_context_t *ctx, tilec_elem_t elem, int ndim,
                                     const int64_t *shape, size_t bytes, tilec_pmem_t *mem,
                                     int shared, tilec_buffer_t **out);
const char *tilec_api_elem_name(tilec_elem_t e);

#endif
