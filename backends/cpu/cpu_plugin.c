/*
 * cpu_plugin.c — the CPU backend's hooks for the SDK plugin shell:
 * devices, memory, compile and launch.
 *
 * The CPU is one device.  Memory is 64-byte-aligned host memory.  A launch
 * runs the blocks on the process's worker pool (cpu_pool.c:
 * TILEC_NUM_THREADS, one launch at a time, fork handling), which every
 * device handle shares.
 *
 * Built twice from the same source: as libtilec-cpu.so exporting
 * tilec_plugin_query, and with -DTILEC_EMBEDDED inside libtilec, where the
 * query is the hidden tilec_cpu_embedded_query that the loader calls
 * directly (same signature as tilec_plugin_query_fn).
 *
 * The ABI table is the SDK's plugin shell (tilec/shell.h): it checks
 * every argument (handles, struct sizes, buffer sizes against the kernel,
 * the grid), owns the handles and the module's source and binary, and
 * calls the hooks below with valid arguments only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpu_internal.h"
#include "tilec/sdk.h"
#include "tilec/shell.h"

#ifdef TILEC_EMBEDDED
#define CPU_QUERY_NAME tilec_cpu_embedded_query
#define CPU_QUERY_VISIBILITY __attribute__((visibility("hidden")))
#else
#define CPU_QUERY_NAME tilec_plugin_query
#define CPU_QUERY_VISIBILITY TILEC_PLUGIN_EXPORT
#endif

typedef struct cpu_mem {
    void *data;  /* 64-byte aligned, at least 64 bytes; a wrapped one: the caller's */
    int wrapped; /* mem_wrap: data belongs to the caller, mem_free keeps it */
} cpu_mem_t;

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

/* ---- hooks -------------------------------------------------------------------------- */

static tilec_pstatus_t cpu_device_count(uint32_t *count)
{
    /* no C compiler is no reason to be unavailable: a kernel loaded from a
     * bundle (tilec_module_load) runs without one; compile says why */
    *count = 1;
    return TILEC_PS_OK;
}

/* "model name" of /proc/cpuinfo (or a fallback) and " (N threads)" */
static void cpu_name(char *out, size_t n)
{
    char model[128] = "CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, f) > 0) {
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) {
                    c++;
                    while (*c == ' ' || *c == '\t')
                        c++;
                    c[strcspn(c, "\n")] = '\0';
                    if (*c)
                        snprintf(model, sizeof model, "%s", c);
                }
                break;
            }
        }
        free(line);
        fclose(f);
    }
    int threads = cpu_pool_threads(NULL, 0);
    snprintf(out, n, "%s (%d threads)", model, threads > 0 ? threads : cpu_affinity_cpus());
}

#define CPU_CAPS                                                                               \
    (TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 |            \
     TILEC_CAP_ATOMIC_FLOAT | TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_PRINT | \
     TILEC_CAP_EMIT_SOURCE | TILEC_CAP_EMIT_BINARY)

static tilec_pstatus_t cpu_device_info(uint32_t index, tilec_pdevice_info_t *full)
{
    (void)index;
    cpu_name(full->name, sizeof full->name);
    if (cpu_compiler_find(NULL) == 0)
        snprintf(full->platform, sizeof full->platform, "C compiler: %s", cpu_compiler_identity());
    else
        snprintf(full->platform, sizeof full->platform, "no C compiler (bundled kernels only)");
    full->caps = CPU_CAPS;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    full->global_mem_bytes = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
    full->shared_mem_bytes = 0; /* on-chip buffers live in ordinary memory: no fixed limit */
    full->max_threads = 1024;   /* threads= of T.Kernel is accepted and ignored */
    full->compute_units = (uint32_t)online_cpus();
    return TILEC_PS_OK;
}

static tilec_pstatus_t cpu_device_property(uint32_t index, uint32_t key, tilec_pvalue_t *v)
{
    (void)index;
    switch (key) {
    case TILEC_PROP_ARCH: return tilec_shell_value_str(v, "native"); /* -march= of compile */
    case TILEC_PROP_SUBGROUP_SIZE: return tilec_shell_value_int(v, 1); /* a block is one thread */
    case TILEC_PROP_MMA_KINDS: return tilec_shell_value_str(v, "");
    case TILEC_PROP_DRIVER_VERSION: return tilec_shell_value_str(v, cpu_compiler_identity());
    default: return TILEC_PS_UNSUPPORTED;
    }
}

/* Every handle shares the process's worker pool. */
static tilec_pstatus_t cpu_device_open(uint32_t index, void *state)
{
    (void)index;
    (void)state;
    if (cpu_pool_acquire() != 0) {
        tilec_sdk_error_set("cpu: device_open: cannot register fork handlers");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    return TILEC_PS_OK;
}

/* launching on a device while or after closing it is the caller's error,
 * as for every handle */
static void cpu_device_close(void *state)
{
    (void)state;
    cpu_pool_release();
}

/* What a compiled or loaded module reports (module_info). */
static tilec_pstatus_t module_facts(tilec_pstatus_t st, tilec_shell_module_t *sm)
{
    if (st == TILEC_PS_OK) {
        const cpu_module_t *m = sm->data;
        /* one host thread runs a block; its on-chip buffers are scratch */
        sm->info.max_threads = 1024;
        sm->info.shared_dynamic_bytes = 0;
        /* per block: a module running block groups (cpu_group.c) sizes
         * one scratch area per member of a group */
        if (sm->nsyms == 0) {
            static const int64_t nosyms[1] = {0};
            sm->info.shared_static_bytes = m->scratch_size(nosyms) / ((int64_t)m->group[0] * m->group[1]);
        }
    }
    return st;
}

static tilec_pstatus_t cpu_compile(void *dev, const tilec_pcompile_options_t *opts,
                                   tilec_shell_module_t *sm)
{
    (void)dev;
    return module_facts(cpu_compile_module(sm, opts), sm);
}

static tilec_pstatus_t cpu_load(void *dev, tilec_shell_module_t *sm)
{
    (void)dev;
    return module_facts(cpu_load_module(sm), sm);
}

static tilec_pstatus_t cpu_mem_alloc(void *dev, tilec_pmem_scope_t scope, size_t size, void *state)
{
    (void)dev;
    (void)scope;
    cpu_mem_t *m = state;
    size_t cap = (size + 63) & ~(size_t)63, align = 64;
    if (cap == 0)
        cap = 64;
#ifdef MADV_HUGEPAGE
    /* buffers of 4 MiB and more in transparent huge pages where the kernel
     * gives them on request: a GEMM reading A tiles in place at a row
     * stride of 8-16 KiB, and copying B tiles row by row, otherwise
     * touches a 4 KiB page per row */
    if (cap >= ((size_t)4 << 20)) {
        align = (size_t)2 << 20;
        cap = (cap + align - 1) & ~(align - 1);
    }
#endif
    m->data = aligned_alloc(align, cap);
#ifdef MADV_HUGEPAGE
    if (m->data && align > 64)
        (void)madvise(m->data, cap, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
#endif
    if (!m->data) {
        tilec_sdk_error_set("cpu: mem_alloc: out of memory (%zu bytes)", size);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    return TILEC_PS_OK;
}

static tilec_pstatus_t cpu_mem_write(void *dev, void *mem, size_t offset, const void *src,
                                     size_t size)
{
    (void)dev;
    memcpy((char *)((cpu_mem_t *)mem)->data + offset, src, size);
    return TILEC_PS_OK;
}

static tilec_pstatus_t cpu_mem_read(void *dev, void *mem, size_t offset, void *dst, size_t size)
{
    (void)dev;
    memcpy(dst, (char *)((cpu_mem_t *)mem)->data + offset, size);
    return TILEC_PS_OK;
}

static void cpu_mem_free(void *dev, void *mem)
{
    (void)dev;
    cpu_mem_t *m = mem;
    if (!m->wrapped)
        free(m->data);
}

/* DLPack's device types the cpu backend addresses: host memory, and CUDA's
 * pinned and managed memory, which are host-addressable too. */
#define DL_CPU 1
#define DL_CUDA_HOST 3
#define DL_CUDA_MANAGED 13

/* The generated code reads every element with its natural alignment (and
 * vectors as may_alias, element-aligned), so host memory aligned to the
 * element size is used in place; the host checks that alignment. */
static tilec_pstatus_t cpu_mem_wrap(void *dev, int dl_type, int dl_id, void *ptr, size_t size,
                                    void *mem)
{
    (void)dev;
    (void)dl_id;
    (void)size;
    if (dl_type != DL_CPU && dl_type != DL_CUDA_HOST && dl_type != DL_CUDA_MANAGED) {
        tilec_sdk_error_set("cpu: memory of DLPack device type %d is not host memory", dl_type);
        return TILEC_PS_UNSUPPORTED;
    }
    cpu_mem_t *m = mem;
    m->data = ptr;
    m->wrapped = 1;
    return TILEC_PS_OK;
}

static tilec_pstatus_t cpu_mem_address(void *dev, void *mem, int *dl_type, int *dl_id, void **ptr)
{
    (void)dev;
    *dl_type = DL_CPU;
    *dl_id = 0;
    *ptr = ((cpu_mem_t *)mem)->data;
    return TILEC_PS_OK;
}

/* The 4-bit parameters (IR 1.3) as the block function reads them: each
 * tensor's packed bytes unpacked to one value per byte in a copy that
 * ptrs[i] points to (its padding nibble too, so packing restores it). */
static tilec_pstatus_t unpack_params(const cpu_module_t *mod, const tilec_shell_launch_t *a, void **ptrs)
{
    for (uint32_t i = 0; i < a->nargs; i++) {
        int t = mod->packed4(i);
        if (!t)
            continue;
        int64_t bytes = mod->param_bytes(i, a->syms);
        if (bytes < 0 || (uint64_t)bytes > SIZE_MAX / 4) {
            tilec_sdk_error_set("cpu: launch: bad size of 4-bit parameter %u", i);
            ptrs[i] = NULL;
            return TILEC_PS_INVALID_ARGUMENT;
        }
        uint8_t *u = malloc((size_t)bytes * 2 + 1);
        if (!u) {
            tilec_sdk_error_set("cpu: out of memory unpacking 4-bit parameter %u", i);
            ptrs[i] = NULL;
            return TILEC_PS_OUT_OF_MEMORY;
        }
        tilec_unpack4((tilec_dtype_t)t, ptrs[i], u, (size_t)bytes * 2);
        ptrs[i] = u;
    }
    return TILEC_PS_OK;
}

/* Packs the unpacked copies back into the tensors (when the run succeeded)
 * and frees them; ptrs[i] NULL where unpacking stopped. */
static void pack_params(const cpu_module_t *mod, const tilec_shell_launch_t *a, void **ptrs, int ok)
{
    for (uint32_t i = 0; i < a->nargs; i++) {
        if (!mod->packed4(i) || ptrs[i] == ((cpu_mem_t *)a->args[i])->data)
            continue;
        if (ptrs[i] && ok)
            tilec_pack4(ptrs[i], ((cpu_mem_t *)a->args[i])->data, (size_t)mod->param_bytes(i, a->syms) * 2);
        free(ptrs[i]);
    }
}

static tilec_pstatus_t cpu_launch(void *dev, tilec_shell_module_t *sm, const tilec_shell_launch_t *a)
{
    (void)dev;
    const cpu_module_t *mod = sm->data;
    void *stackargs[16];
    void **ptrs = a->nargs <= 16 ? stackargs : malloc(sizeof(void *) * a->nargs);
    if (!ptrs) {
        tilec_sdk_error_set("cpu: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < a->nargs; i++)
        ptrs[i] = ((cpu_mem_t *)a->args[i])->data;
    tilec_pstatus_t st = unpack_params(mod, a, ptrs);
    if (st != TILEC_PS_OK) {
        pack_params(mod, a, ptrs, 0);
        if (ptrs != stackargs)
            free(ptrs);
        return st;
    }
    /* the pool walks the grid of block groups (tilec_group) */
    int64_t grid[3] = {a->grid[0], a->grid[1], a->grid[2]}, nblocks = 1;
    for (int d = 0; d < 2; d++)
        grid[d] = grid[d] / mod->group[d] + (grid[d] % mod->group[d] != 0);
    for (int d = 0; d < 3; d++)
        nblocks = nblocks > INT64_MAX / grid[d] ? INT64_MAX : nblocks * grid[d];
    int64_t scratch = mod->scratch_size(a->syms);
    double ms = 0;
    if (scratch < 0 || (uint64_t)scratch > SIZE_MAX / 2) {
        tilec_sdk_error_set("cpu: launch: bad on-chip buffer size %lld", (long long)scratch);
        st = TILEC_PS_INVALID_ARGUMENT;
    } else {
        st = cpu_pool_run(mod, ptrs, a->syms, grid, nblocks, (size_t)scratch, &ms);
    }
    pack_params(mod, a, ptrs, st == TILEC_PS_OK);
    if (ptrs != stackargs)
        free(ptrs);
    if (st != TILEC_PS_OK)
        return st;
    if (a->timed)
        *a->elapsed_ms = ms;
    tilec_shell_log("launch", "cpu: %lld blocks (%lld x %lld x %lld) in %.3f ms", (long long)nblocks,
                    (long long)a->grid[0], (long long)a->grid[1], (long long)a->grid[2], ms);
    return TILEC_PS_OK;
}

/* ---- the backend description and the query ------------------------------------------- */

static const tilec_shell_backend_t cpu_backend = {
    .name = "cpu",
    .vendor = "tilec",
    .version = TILEC_CPU_PLUGIN_VERSION,
    .caps = CPU_CAPS,
    .abi_max = TILEC_PLUGIN_ABI_VERSION,
    .ir_min = TILEC_IR_MAKE(1, 0),
    .ir_max = TILEC_IR_MAKE(1, 4), /* 1.1: layouts/attrs ignored, async copies done at once; 1.2: float8;
                                      1.3: 4-bit dtypes (cpu_codegen.c); 1.4: bit casts (cpu_cg.c) */
    .mem_size = sizeof(cpu_mem_t),
    .module_size = sizeof(cpu_module_t),
    .device_count = cpu_device_count,
    .device_info = cpu_device_info,
    .device_property = cpu_device_property,
    .device_open = cpu_device_open,
    .device_close = cpu_device_close,
    .compile = cpu_compile,
    .module_free = cpu_module_free,
    .mem_alloc = cpu_mem_alloc,
    .mem_write = cpu_mem_write,
    .mem_read = cpu_mem_read,
    .mem_free = cpu_mem_free,
    .launch = cpu_launch,
    .mem_wrap = cpu_mem_wrap,
    .mem_address = cpu_mem_address,
    .load = cpu_load,
};

CPU_QUERY_VISIBILITY tilec_pstatus_t CPU_QUERY_NAME(const tilec_plugin_host_t *host,
                                                    uint32_t *abi_out,
                                                    const tilec_plugin_t **table_out);

CPU_QUERY_VISIBILITY tilec_pstatus_t CPU_QUERY_NAME(const tilec_plugin_host_t *host,
                                                    uint32_t *abi_out,
                                                    const tilec_plugin_t **table_out)
{
    return tilec_shell_query(&cpu_backend, host, abi_out, table_out);
}
