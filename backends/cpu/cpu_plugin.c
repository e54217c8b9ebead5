/*
 * cpu_plugin.c — the CPU backend's plugin table: negotiation, devices,
 * memory, module access and launch.
 *
 * The CPU is one device.  Memory is 64-byte-aligned host memory, read and
 * written with bounds checks.  A launch checks its arguments against the
 * kernel and runs the blocks on the process's worker pool (cpu_pool.c:
 * TILEC_NUM_THREADS, one launch at a time, fork handling), which every
 * device handle shares.
 *
 * Built twice from the same source: as libtilec-cpu.so exporting
 * tilec_plugin_query, and with -DTILEC_EMBEDDED inside libtilec, where the
 * query is the hidden tilec_cpu_embedded_query that the loader calls
 * directly (same signature as tilec_plugin_query_fn).
 *
 * Every entry point validates its arguments and returns
 * TILEC_PS_INVALID_ARGUMENT with a message (last_error) on misuse; input
 * structs must be at least their ABI 1.0 size (the host struct: at least
 * its version fields), and tilec_pdevice_info_t is written only up to the
 * caller's struct_size.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_internal.h"
#include "tilec/sdk.h"

#ifdef TILEC_EMBEDDED
#define CPU_QUERY_NAME tilec_cpu_embedded_query
#define CPU_QUERY_VISIBILITY __attribute__((visibility("hidden")))
#else
#define CPU_QUERY_NAME tilec_plugin_query
#define CPU_QUERY_VISIBILITY TILEC_PLUGIN_EXPORT
#endif

#define CPU_MEM_MAGIC 0x74634d45u /* "tcME" */
#define CPU_DEV_MAGIC 0x74634456u

/* smallest input structs accepted (ABI 1.0) */
#define INFO_MIN_SIZE (offsetof(tilec_pdevice_info_t, name))
#define FIELD_END(type, f) (offsetof(type, f) + sizeof(((type *)0)->f))

#define BAD_ARG(...)                                                                           \
    do {                                                                                       \
        tilec_sdk_error_set(__VA_ARGS__);                                                      \
        return TILEC_PS_INVALID_ARGUMENT;                                                      \
    } while (0)

/* ---- memory -------------------------------------------------------------------- */

struct tilec_pmem {
    uint32_t magic;
    tilec_pmem_scope_t scope;
    size_t size;
    void *data; /* 64-byte aligned, at least 64 bytes; a wrapped one: the caller's */
    int wrapped; /* mem_wrap: data belongs to the caller, mem_free keeps it */
};

/* ---- devices ------------------------------------------------------------------- */

/* Every handle shares the process's worker pool (cpu_pool.c). */
struct tilec_pdevice {
    uint32_t magic;
    uint32_t index;
};

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

/* ---- entry points ------------------------------------------------------------------ */

static const char *cpu_last_error(void) { return tilec_sdk_error_get(); }

static tilec_pstatus_t cpu_device_count(uint32_t *count)
{
    if (!count)
        BAD_ARG("cpu: device_count: count is NULL");
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

static tilec_pstatus_t cpu_device_info(uint32_t index, tilec_pdevice_info_t *info)
{
    if (!info)
        BAD_ARG("cpu: device_info: info is NULL");
    if (info->struct_size < INFO_MIN_SIZE)
        BAD_ARG("cpu: device_info: struct_size %u is smaller than %zu", info->struct_size,
                INFO_MIN_SIZE);
    if (index != 0)
        BAD_ARG("cpu: device_info: device index %u out of range (1 device)", index);
    tilec_pdevice_info_t full;
    memset(&full, 0, sizeof full);
    cpu_name(full.name, sizeof full.name);
    if (cpu_compiler_find(NULL) == 0)
        snprintf(full.platform, sizeof full.platform, "C compiler: %s", cpu_compiler_identity());
    else
        snprintf(full.platform, sizeof full.platform, "no C compiler (bundled kernels only)");
    full.caps = TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 |
                TILEC_CAP_ATOMIC_FLOAT | TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE |
                TILEC_CAP_PRINT | TILEC_CAP_EMIT_SOURCE | TILEC_CAP_EMIT_BINARY;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    full.global_mem_bytes = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
    full.shared_mem_bytes = 0; /* on-chip buffers live in ordinary memory: no fixed limit */
    full.max_threads = 1024;   /* threads= of T.Kernel is accepted and ignored */
    full.compute_units = (uint32_t)online_cpus();
    uint32_t size = info->struct_size;
    full.struct_size = size;
    memcpy(info, &full, size < sizeof full ? size : sizeof full);
    return TILEC_PS_OK;
}

static tilec_pstatus_t cpu_device_open(uint32_t index, tilec_pdevice_t **out)
{
    if (!out)
        BAD_ARG("cpu: device_open: out is NULL");
    if (index != 0)
        BAD_ARG("cpu: device_open: device index %u out of range (1 device)", index);
    struct tilec_pdevice *d = calloc(1, sizeof *d);
    if (!d) {
        tilec_sdk_error_set("cpu: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    if (cpu_pool_acquire() != 0) {
        free(d);
        tilec_sdk_error_set("cpu: device_open: cannot register fork handlers");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    d->magic = CPU_DEV_MAGIC;
    d->index = index;
    *out = d;
    return TILEC_PS_OK;
}

static int dev_ok(const tilec_pdevice_t *d) { return d && d->magic == CPU_DEV_MAGIC; }

static void cpu_device_close(tilec_pdevice_t *d)
{
    if (!dev_ok(d))
        return;
    /* launching on a device while or after closing it is the caller's
     * error, as for every handle */
    cpu_pool_release();
    d->magic = 0;
    free(d);
}

static tilec_pstatus_t cpu_compile(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                                   const tilec_pcompile_options_t *opts, tilec_pmodule_t **out)
{
    if (!dev_ok(dev))
        BAD_ARG("cpu: compile: invalid device handle");
    if (!ir || ir_len == 0)
        BAD_ARG("cpu: compile: no IR text");
    if (!out)
        BAD_ARG("cpu: compile: out is NULL");
    if (opts && opts->struct_size < sizeof(tilec_pcompile_options_t))
        BAD_ARG("cpu: compile: options struct_size %u is smaller than %zu", opts->struct_size,
                sizeof(tilec_pcompile_options_t));
    if (opts && opts->opt_level > 3)
        BAD_ARG("cpu: compile: opt_level %u is not in 0..3", opts->opt_level);
    return cpu_compile_module(ir, ir_len, opts, out);
}

static tilec_pstatus_t cpu_module_data(tilec_pmodule_t *mod, tilec_pdata_kind_t kind,
                                       const void **data, size_t *size)
{
    if (!mod || !data || !size)
        BAD_ARG("cpu: module_data: NULL argument");
    switch (kind) {
    case TILEC_PDATA_SOURCE:
        *data = mod->source;
        *size = mod->source_len;
        return TILEC_PS_OK;
    case TILEC_PDATA_BINARY:
        *data = mod->binary;
        *size = mod->binary_len;
        return TILEC_PS_OK;
    default:
        BAD_ARG("cpu: module_data: unknown data kind %d", (int)kind);
    }
}

static void cpu_module_free_entry(tilec_pmodule_t *mod) { cpu_module_free(mod); }

static tilec_pstatus_t cpu_mem_alloc(tilec_pdevice_t *dev, tilec_pmem_scope_t scope, size_t size,
                                     tilec_pmem_t **out)
{
    if (!dev_ok(dev))
        BAD_ARG("cpu: mem_alloc: invalid device handle");
    if (!out)
        BAD_ARG("cpu: mem_alloc: out is NULL");
    if (scope != TILEC_PMEM_DEVICE && scope != TILEC_PMEM_HOST)
        BAD_ARG("cpu: mem_alloc: unknown memory scope %d", (int)scope);
    if (size > SIZE_MAX - 128)
        BAD_ARG("cpu: mem_alloc: size %zu too large", size);
    tilec_pmem_t *m = calloc(1, sizeof *m);
    size_t cap = (size + 63) & ~(size_t)63;
    if (cap == 0)
        cap = 64;
    void *p = m ? aligned_alloc(64, cap) : NULL;
    if (!p) {
        free(m);
        tilec_sdk_error_set("cpu: mem_alloc: out of memory (%zu bytes)", size);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    m->magic = CPU_MEM_MAGIC;
    m->scope = scope;
    m->size = size;
    m->data = p;
    *out = m;
    return TILEC_PS_OK;
}

static int mem_ok(const tilec_pmem_t *m) { return m && m->magic == CPU_MEM_MAGIC; }

static tilec_pstatus_t cpu_mem_write(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                     const void *src, size_t size)
{
    if (!dev_ok(dev))
        BAD_ARG("cpu: mem_write: invalid device handle");
    if (!mem_ok(mem))
        BAD_ARG("cpu: mem_write: invalid memory handle");
    tilec_pstatus_t st = tilec_sdk_check_copy("cpu: mem_write", "src", src, offset, size, mem->size);
    if (st != TILEC_PS_OK)
        return st;
    if (size)
        memcpy((char *)mem->data + offset, src, size);
    return TILEC_PS_OK;
}

static tilec_pstatus_t cpu_mem_read(tilec_pdevice_t *dev, tilec_pmem_t *mem, size_t offset,
                                    void *dst, size_t size)
{
    if (!dev_ok(dev))
        BAD_ARG("cpu: mem_read: invalid device handle");
    if (!mem_ok(mem))
        BAD_ARG("cpu: mem_read: invalid memory handle");
    tilec_pstatus_t st = tilec_sdk_check_copy("cpu: mem_read", "dst", dst, offset, size, mem->size);
    if (st != TILEC_PS_OK)
        return st;
    if (size)
        memcpy(dst, (char *)mem->data + offset, size);
    return TILEC_PS_OK;
}

static void cpu_mem_free(tilec_pdevice_t *dev, tilec_pmem_t *mem)
{
    (void)dev;
    if (!mem_ok(mem))
        return;
    mem->magic = 0;
    if (!mem->wrapped)
        free(mem->data);
    free(mem);
}

/* DLPack's device types the cpu backend addresses: host memory, and CUDA's
 * pinned and managed memory, which are host-addressable too. */
#define DL_CPU 1
#define DL_CUDA_HOST 3
#define DL_CUDA_MANAGED 13

/* The generated code reads every element with its natural alignment (and
 * vectors as may_alias, element-aligned), so host memory aligned to the
 * element size is used in place; the host checks that alignment. */
static tilec_pstatus_t cpu_mem_wrap(tilec_pdevice_t *dev, int dl_type, int dl_id, void *ptr,
                                    size_t size, tilec_pmem_t **out)
{
    (void)dl_id;
    if (!dev_ok(dev))
        BAD_ARG("cpu: mem_wrap: invalid device handle");
    if (!out || !ptr)
        BAD_ARG("cpu: mem_wrap: NULL argument");
    if (dl_type != DL_CPU && dl_type != DL_CUDA_HOST && dl_type != DL_CUDA_MANAGED) {
        tilec_sdk_error_set("cpu: memory of DLPack device type %d is not host memory", dl_type);
        return TILEC_PS_UNSUPPORTED;
    }
    tilec_pmem_t *m = calloc(1, sizeof *m);
    if (!m) {
        tilec_sdk_error_set("cpu: mem_wrap: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    m->magic = CPU_MEM_MAGIC;
    m->scope = TILEC_PMEM_DEVICE;
    m->size = size;
    m->data = ptr;
    m->wrapped = 1;
    *out = m;
    return TILEC_PS_OK;
}

static tilec_pstatus_t cpu_mem_address(tilec_pdevice_t *dev, tilec_pmem_t *mem, int *dl_type,
                                       int *dl_id, void **ptr)
{
    if (!dev_ok(dev))
        BAD_ARG("cpu: mem_address: invalid device handle");
    if (!mem_ok(mem))
        BAD_ARG("cpu: mem_address: invalid memory handle");
    if (!dl_type || !dl_id || !ptr)
        BAD_ARG("cpu: mem_address: NULL argument");
    *dl_type = DL_CPU;
    *dl_id = 0;
    *ptr = mem->data;
    return TILEC_PS_OK;
}

static tilec_pstatus_t cpu_launch(tilec_pdevice_t *dev, tilec_pmodule_t *mod,
                                  const tilec_plaunch_t *a)
{
    if (!dev_ok(dev))
        BAD_ARG("cpu: launch: invalid device handle");
    if (!mod || !mod->block)
        BAD_ARG("cpu: launch: invalid module");
    if (!a)
        BAD_ARG("cpu: launch: arguments are NULL");
    if (a->struct_size < sizeof(tilec_plaunch_t))
        BAD_ARG("cpu: launch: struct_size %u is smaller than %zu", a->struct_size,
                sizeof(tilec_plaunch_t));
    if (a->nargs != mod->nparams)
        BAD_ARG("cpu: launch: %u arguments given, the kernel takes %u", a->nargs, mod->nparams);
    if (a->nsyms != mod->nsyms)
        BAD_ARG("cpu: launch: %u symbol values given, the kernel has %u", a->nsyms, mod->nsyms);
    if (a->nargs && !a->args)
        BAD_ARG("cpu: launch: args is NULL");
    if (a->nsyms && !a->syms)
        BAD_ARG("cpu: launch: syms is NULL");
    if (a->timed && !a->elapsed_ms)
        BAD_ARG("cpu: launch: timed without elapsed_ms");
    for (uint32_t i = 0; i < a->nsyms; i++)
        if (a->syms[i] < INT32_MIN || a->syms[i] > INT32_MAX)
            BAD_ARG("cpu: launch: symbol %u = %lld does not fit in int32", i,
                    (long long)a->syms[i]);
    static const int64_t nosyms[1] = {0};
    const int64_t *syms = a->nsyms ? a->syms : nosyms;
    void *stackargs[16];
    void **ptrs = a->nargs <= 16 ? stackargs : malloc(sizeof(void *) * a->nargs);
    if (!ptrs) {
        tilec_sdk_error_set("cpu: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    tilec_pstatus_t st = TILEC_PS_OK;
    for (uint32_t i = 0; i < a->nargs && st == TILEC_PS_OK; i++) {
        tilec_pmem_t *m = a->args[i];
        if (!mem_ok(m)) {
            tilec_sdk_error_set("cpu: launch: argument %u is not a memory handle", i);
            st = TILEC_PS_INVALID_ARGUMENT;
            break;
        }
        int64_t need = mod->param_bytes(i, syms);
        if (need < 0) {
            tilec_sdk_error_set("cpu: launch: argument %u has a negative or too large shape "
                                "for these symbol values", i);
            st = TILEC_PS_INVALID_ARGUMENT;
        } else if ((uint64_t)need > m->size) {
            tilec_sdk_error_set("cpu: launch: argument %u has %zu bytes, the kernel needs %lld",
                                i, m->size, (long long)need);
            st = TILEC_PS_INVALID_ARGUMENT;
        }
        ptrs[i] = m->data;
    }
    struct { int64_t g[3], nblocks; size_t scratch; } j;
    memset(&j, 0, sizeof j);
    if (st == TILEC_PS_OK) {
        mod->grid(syms, j.g);
        j.nblocks = 1;
        for (int d = 0; d < 3; d++) {
            if (j.g[d] < 0 || j.g[d] > INT32_MAX) {
                tilec_sdk_error_set("cpu: launch: grid extent %d is %lld", d, (long long)j.g[d]);
                st = TILEC_PS_INVALID_ARGUMENT;
                break;
            }
            if (j.g[d] == 0 || j.nblocks > INT64_MAX / (j.g[d] ? j.g[d] : 1))
                j.nblocks = 0;
            else
                j.nblocks *= j.g[d];
        }
        int64_t scratch = mod->scratch_size(syms);
        if (scratch < 0 || (uint64_t)scratch > SIZE_MAX / 2) {
            tilec_sdk_error_set("cpu: launch: bad on-chip buffer size %lld", (long long)scratch);
            st = TILEC_PS_INVALID_ARGUMENT;
        }
        j.scratch = (size_t)scratch;
    }
    if (st != TILEC_PS_OK) {
        if (ptrs != stackargs)
            free(ptrs);
        return st;
    }
    double ms = 0;
    st = cpu_pool_run(mod, ptrs, syms, j.g, j.nblocks, j.scratch, &ms);
    if (ptrs != stackargs)
        free(ptrs);
    if (st != TILEC_PS_OK)
        return st;
    if (a->timed)
        *a->elapsed_ms = ms;
    cpu_log("launch", "cpu: %lld blocks (%lld x %lld x %lld) in %.3f ms", (long long)j.nblocks,
            (long long)j.g[0], (long long)j.g[1], (long long)j.g[2], ms);
    return TILEC_PS_OK;
}

/* ---- the table and the query ------------------------------------------------------ */

static const tilec_plugin_t cpu_table = {
    .struct_size = sizeof(tilec_plugin_t),
    .abi_version = TILEC_PLUGIN_ABI_VERSION,
    .name = "cpu",
    .vendor = "tilec",
    .version = TILEC_CPU_PLUGIN_VERSION,
    .caps = TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 |
            TILEC_CAP_ATOMIC_FLOAT | TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE |
            TILEC_CAP_PRINT | TILEC_CAP_EMIT_SOURCE | TILEC_CAP_EMIT_BINARY,
    .last_error = cpu_last_error,
    .device_count = cpu_device_count,
    .device_info = cpu_device_info,
    .device_open = cpu_device_open,
    .device_close = cpu_device_close,
    .compile = cpu_compile,
    .module_data = cpu_module_data,
    .module_free = cpu_module_free_entry,
    .mem_alloc = cpu_mem_alloc,
    .mem_write = cpu_mem_write,
    .mem_read = cpu_mem_read,
    .mem_free = cpu_mem_free,
    .launch = cpu_launch,
    .mem_wrap = cpu_mem_wrap,
    .mem_address = cpu_mem_address,
};

__attribute__((destructor)) static void cpu_host_fini(void)
{
    pthread_mutex_lock(&cpu_host_lock);
    free(cpu_host.cache_dir);
    cpu_host.cache_dir = NULL;
    pthread_mutex_unlock(&cpu_host_lock);
}

CPU_QUERY_VISIBILITY tilec_pstatus_t CPU_QUERY_NAME(const tilec_plugin_host_t *host,
                                                    uint32_t *abi_out,
                                                    const tilec_plugin_t **table_out);

CPU_QUERY_VISIBILITY tilec_pstatus_t CPU_QUERY_NAME(const tilec_plugin_host_t *host,
                                                    uint32_t *abi_out,
                                                    const tilec_plugin_t **table_out)
{
    tilec_pstatus_t st = tilec_sdk_check_host("cpu", host, abi_out, table_out);
    if (st != TILEC_PS_OK)
        return st;
    const uint32_t mine = TILEC_PLUGIN_ABI_VERSION;
    /* host fields past the version range are optional (zero when absent) */
    char *dir = NULL;
    if (host->struct_size >= FIELD_END(tilec_plugin_host_t, cache_dir) && host->cache_dir &&
        *host->cache_dir) {
        dir = strdup(host->cache_dir);
        if (!dir) {
            tilec_sdk_error_set("cpu: out of memory");
            return TILEC_PS_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_lock(&cpu_host_lock);
    if (host->struct_size >= FIELD_END(tilec_plugin_host_t, log_user)) {
        cpu_host.log = host->log;
        cpu_host.log_user = host->log_user;
    } else {
        cpu_host.log = NULL;
        cpu_host.log_user = NULL;
    }
    free(cpu_host.cache_dir);
    cpu_host.cache_dir = dir;
    pthread_mutex_unlock(&cpu_host_lock);
    *abi_out = mine;
    *table_out = &cpu_table;
    return TILEC_PS_OK;
}
