/*
 * cpu_plugin.c — the CPU backend's plugin table: negotiation, devices,
 * memory, module access and launch.
 *
 * The CPU is one device.  Memory is 64-byte-aligned host memory, read and
 * written with bounds checks.  A launch runs the kernel's blocks on a
 * persistent pool of worker threads owned by the device (one per online
 * CPU, the launching thread included, started at the first launch with
 * more than one block and joined by device_close); workers take block
 * numbers from a shared atomic counter, and each has its own scratch area
 * for the block's on-chip buffers (zeroed before every block, like the
 * reference interpreter's).  Launches on one device are serialized.
 *
 * fork(): the conformance runner and the CLI fork per case, and the child
 * must be able to launch.  pthread_atfork handlers (registered at the
 * first device_open) take every open device's locks before the fork, so
 * no launch is in flight and no lock is held by a thread that will not
 * exist in the child; the child releases them, re-creates the condition
 * variables and drops the parent's pool (its threads are gone), and its
 * next launch starts a new one.  A fork therefore waits for launches in
 * other threads to finish.
 *
 * Built twice from the same source: as libtilec-cpu.so exporting
 * tilec_plugin_query, and with -DTILEC_EMBEDDED inside libtilec, where the
 * query is the hidden tilec_cpu_embedded_query that the loader calls
 * directly (same signature as tilec_plugin_query_fn).
 *
 * The ABI table is the SDK's plugin shell (tilec/shell.h): it checks
 * every argument, owns the handles and the module's source and binary, and
 * calls the hooks below with valid arguments only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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


/* ---- memory -------------------------------------------------------------------- */

typedef struct cpu_mem {
    void *data; /* 64-byte aligned, at least 64 bytes */
} cpu_mem_t;

/* ---- devices and the worker pool ------------------------------------------------ */

typedef struct cpu_job {
    const cpu_module_t *mod;
    void *const *args;
    const int64_t *syms;
    int64_t g[3];
    int64_t nblocks;
    int64_t next;         /* atomic: next block number to run */
    size_t scratch;       /* bytes each worker needs */
    int failed;           /* atomic: a worker could not get scratch memory */
} cpu_job_t;

typedef struct cpu_worker {
    struct cpu_dev *dev;
    pthread_t th;
    uint64_t seen;        /* last job generation taken (d->gen at creation) */
    void *scratch;
    size_t scratch_cap;
} cpu_worker_t;

typedef struct cpu_dev {
    uint32_t index;
    pthread_mutex_t launch_lock; /* one launch at a time */
    pthread_mutex_t m;
    pthread_cond_t cv_work, cv_done;
    int nworkers;                /* pool threads, not counting the launcher */
    cpu_worker_t *workers;
    int started;
    int stop;
    uint64_t gen;                /* job generation, bumped per launch */
    int pending;                 /* workers still on the current job */
    cpu_job_t *job;
    cpu_worker_t self;           /* the launching thread's scratch */
    struct cpu_dev *next_open; /* open_devs list, under open_devs_lock */
} cpu_dev_t;

/* Open devices, for the fork handlers.  Lock order: open_devs_lock, then a
 * device's launch_lock, then its m (cpu_compile.c's locks after all). */
static pthread_mutex_t open_devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cpu_dev *open_devs;

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

/* Grows w's scratch to n bytes; 0 or -1. */
static int scratch_reserve(cpu_worker_t *w, size_t n)
{
    if (n <= w->scratch_cap && w->scratch)
        return 0;
    size_t cap = (n + 63) & ~(size_t)63;
    if (cap < 64)
        cap = 64;
    void *p = aligned_alloc(64, cap);
    if (!p)
        return -1;
    free(w->scratch);
    w->scratch = p;
    w->scratch_cap = cap;
    return 0;
}

static void run_blocks(cpu_job_t *j, cpu_worker_t *w)
{
    if (scratch_reserve(w, j->scratch) != 0) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (;;) {
        int64_t b = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (b >= j->nblocks || __atomic_load_n(&j->failed, __ATOMIC_RELAXED))
            break;
        int64_t bx = b % j->g[0], r = b / j->g[0];
        int64_t by = r % j->g[1], bz = r / j->g[1];
        /* on-chip buffers start at zero in every block, as in the
         * reference interpreter */
        if (j->scratch)
            memset(w->scratch, 0, j->scratch);
        j->mod->block((int32_t)bx, (int32_t)by, (int32_t)bz, j->args, j->syms, w->scratch);
    }
}

/* A worker takes each job generation after the one current when it was
 * created exactly once.  (Starting from 0 instead would make a worker of a
 * pool restarted after fork, where d->gen is already past 0, take a job
 * that is not there yet.) */
static void *worker_main(void *arg)
{
    cpu_worker_t *w = arg;
    struct cpu_dev *d = w->dev;
    for (;;) {
        pthread_mutex_lock(&d->m);
        while (!d->stop && d->gen == w->seen)
            pthread_cond_wait(&d->cv_work, &d->m);
        if (d->stop) {
            pthread_mutex_unlock(&d->m);
            break;
        }
        w->seen = d->gen;
        cpu_job_t *j = d->job;
        pthread_mutex_unlock(&d->m);
        run_blocks(j, w);
        pthread_mutex_lock(&d->m);
        if (--d->pending == 0)
            pthread_cond_signal(&d->cv_done);
        pthread_mutex_unlock(&d->m);
    }
    return NULL;
}

/* Starts the pool (under launch_lock).  With fewer threads than asked for
 * it still works: the launcher runs what the pool does not. */
static void pool_start(struct cpu_dev *d)
{
    if (d->started)
        return;
    d->started = 1;
    int n = online_cpus() - 1;
    if (n <= 0)
        return;
    d->workers = calloc((size_t)n, sizeof *d->workers);
    if (!d->workers)
        return;
    for (int i = 0; i < n; i++) {
        d->workers[i].dev = d;
        d->workers[i].seen = d->gen; /* gen changes only under launch_lock, held here */
        if (pthread_create(&d->workers[i].th, NULL, worker_main, &d->workers[i]) != 0)
            break;
        d->nworkers++;
    }
}

static void pool_stop(struct cpu_dev *d)
{
    pthread_mutex_lock(&d->m);
    d->stop = 1;
    pthread_cond_broadcast(&d->cv_work);
    pthread_mutex_unlock(&d->m);
    for (int i = 0; i < d->nworkers; i++) {
        pthread_join(d->workers[i].th, NULL);
        free(d->workers[i].scratch);
    }
    free(d->workers);
    d->workers = NULL;
    d->nworkers = 0;
}

/* ---- fork ------------------------------------------------------------------------- */

/* Before fork: wait for launches in flight and hold every lock, so the
 * child's copy of each device is quiescent (no job, idle pool). */
static void fork_prepare(void)
{
    pthread_mutex_lock(&open_devs_lock);
    for (struct cpu_dev *d = open_devs; d; d = d->next_open) {
        pthread_mutex_lock(&d->launch_lock);
        pthread_mutex_lock(&d->m);
    }
    cpu_compile_fork_prepare();
}

static void fork_parent(void)
{
    cpu_compile_fork_parent();
    for (struct cpu_dev *d = open_devs; d; d = d->next_open) {
        pthread_mutex_unlock(&d->m);
        pthread_mutex_unlock(&d->launch_lock);
    }
    pthread_mutex_unlock(&open_devs_lock);
}

/* In the child only the forking thread exists, holding the locks that
 * fork_prepare took: it releases them.  The pool's threads are gone but
 * the condition variables may still count them as waiters (destroying
 * one would then wait for ever), so those are re-created, and the pool is
 * dropped; the next launch with several blocks starts a new one. */
static void fork_child(void)
{
    cpu_compile_fork_child();
    for (struct cpu_dev *d = open_devs; d; d = d->next_open) {
        pthread_cond_init(&d->cv_work, NULL);
        pthread_cond_init(&d->cv_done, NULL);
        for (int i = 0; i < d->nworkers; i++)
            free(d->workers[i].scratch);
        free(d->workers);
        d->workers = NULL;
        d->nworkers = 0;
        d->started = 0;
        d->stop = 0;
        d->pending = 0;
        d->job = NULL;
        pthread_mutex_unlock(&d->m);
        pthread_mutex_unlock(&d->launch_lock);
    }
    pthread_mutex_unlock(&open_devs_lock);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static int fork_registered;

static void fork_register(void)
{
    fork_registered = pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
}

/* ---- hooks -------------------------------------------------------------------------- */

static tilec_pstatus_t cpu_device_count(uint32_t *count)
{
    const char *why = NULL;
    if (cpu_compiler_find(&why) != 0) {
        *count = 0;
        tilec_sdk_error_set("cpu: %s", why);
        return TILEC_PS_UNAVAILABLE;
    }
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
    snprintf(out, n, "%s (%d threads)", model, online_cpus());
}

#define CPU_CAPS                                                                               \
    (TILEC_CAP_FLOAT16 | TILEC_CAP_BFLOAT16 | TILEC_CAP_FLOAT64 | TILEC_CAP_INT64 |            \
     TILEC_CAP_ATOMIC_FLOAT | TILEC_CAP_ATOMIC_INT | TILEC_CAP_DYNAMIC_SHAPE | TILEC_CAP_PRINT | \
     TILEC_CAP_EMIT_SOURCE | TILEC_CAP_EMIT_BINARY)

static tilec_pstatus_t cpu_device_info(uint32_t index, tilec_pdevice_info_t *full)
{
    (void)index;
    cpu_name(full->name, sizeof full->name);
    snprintf(full->platform, sizeof full->platform, "C compiler: %s", cpu_compiler_identity());
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

static tilec_pstatus_t cpu_device_open(uint32_t index, void *state)
{
    pthread_once(&fork_once, fork_register);
    if (!fork_registered) {
        tilec_sdk_error_set("cpu: device_open: cannot register fork handlers");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    cpu_dev_t *d = state;
    d->index = index;
    pthread_mutex_init(&d->launch_lock, NULL);
    pthread_mutex_init(&d->m, NULL);
    pthread_cond_init(&d->cv_work, NULL);
    pthread_cond_init(&d->cv_done, NULL);
    pthread_mutex_lock(&open_devs_lock);
    d->next_open = open_devs;
    open_devs = d;
    pthread_mutex_unlock(&open_devs_lock);
    return TILEC_PS_OK;
}

static void cpu_device_close(void *state)
{
    cpu_dev_t *d = state;
    /* off the fork list first (lock order: open_devs_lock before
     * launch_lock); a launch in flight on another thread finishes first,
     * but launching on a device while or after closing it is the caller's
     * error, as for every handle */
    pthread_mutex_lock(&open_devs_lock);
    for (cpu_dev_t **p = &open_devs; *p; p = &(*p)->next_open)
        if (*p == d) {
            *p = d->next_open;
            break;
        }
    pthread_mutex_unlock(&open_devs_lock);
    pthread_mutex_lock(&d->launch_lock);
    pool_stop(d);
    pthread_mutex_unlock(&d->launch_lock);
    free(d->self.scratch);
    pthread_mutex_destroy(&d->launch_lock);
    pthread_mutex_destroy(&d->m);
    pthread_cond_destroy(&d->cv_work);
    pthread_cond_destroy(&d->cv_done);
}

static tilec_pstatus_t cpu_compile(void *dev, const tilec_pcompile_options_t *opts,
                                   tilec_shell_module_t *sm)
{
    (void)dev;
    tilec_pstatus_t st = cpu_compile_module(sm, opts);
    if (st == TILEC_PS_OK) {
        const cpu_module_t *m = sm->data;
        /* one host thread runs a block; its on-chip buffers are scratch */
        sm->info.max_threads = 1024;
        sm->info.shared_dynamic_bytes = 0;
        if (sm->nsyms == 0) {
            static const int64_t nosyms[1] = {0};
            sm->info.shared_static_bytes = m->scratch_size(nosyms);
        }
    }
    return st;
}

static tilec_pstatus_t cpu_mem_alloc(void *dev, tilec_pmem_scope_t scope, size_t size, void *state)
{
    (void)dev;
    (void)scope;
    cpu_mem_t *m = state;
    size_t cap = (size + 63) & ~(size_t)63;
    if (cap == 0)
        cap = 64;
    m->data = aligned_alloc(64, cap);
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
    free(((cpu_mem_t *)mem)->data);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static tilec_pstatus_t cpu_launch(void *devstate, tilec_shell_module_t *sm,
                                  const tilec_shell_launch_t *a)
{
    cpu_dev_t *dev = devstate;
    const cpu_module_t *mod = sm->data;
    void *stackargs[16];
    void **ptrs = a->nargs <= 16 ? stackargs : malloc(sizeof(void *) * a->nargs);
    if (!ptrs) {
        tilec_sdk_error_set("cpu: out of memory");
        return TILEC_PS_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < a->nargs; i++)
        ptrs[i] = ((cpu_mem_t *)a->args[i])->data;
    cpu_job_t j;
    memset(&j, 0, sizeof j);
    memcpy(j.g, a->grid, sizeof j.g);
    j.nblocks = 1;
    for (int d = 0; d < 3; d++) {
        if (j.nblocks > INT64_MAX / j.g[d])
            j.nblocks = INT64_MAX;
        else
            j.nblocks *= j.g[d];
    }
    int64_t scratch = mod->scratch_size(a->syms);
    if (scratch < 0 || (uint64_t)scratch > SIZE_MAX / 2) {
        if (ptrs != stackargs)
            free(ptrs);
        tilec_sdk_error_set("cpu: launch: bad on-chip buffer size %lld", (long long)scratch);
        return TILEC_PS_INVALID_ARGUMENT;
    }
    j.scratch = (size_t)scratch;
    j.mod = mod;
    j.args = ptrs;
    j.syms = a->syms;

    pthread_mutex_lock(&dev->launch_lock);
    double t0 = now_ms();
    if (j.nblocks > 1)
        pool_start(dev);
    int helpers = j.nblocks > 1 ? dev->nworkers : 0;
    if (helpers > 0) {
        pthread_mutex_lock(&dev->m);
        dev->job = &j;
        dev->pending = helpers;
        dev->gen++;
        pthread_cond_broadcast(&dev->cv_work);
        pthread_mutex_unlock(&dev->m);
    }
    run_blocks(&j, &dev->self);
    if (helpers > 0) {
        pthread_mutex_lock(&dev->m);
        while (dev->pending > 0)
            pthread_cond_wait(&dev->cv_done, &dev->m);
        dev->job = NULL;
        pthread_mutex_unlock(&dev->m);
    }
    double t1 = now_ms();
    pthread_mutex_unlock(&dev->launch_lock);
    if (ptrs != stackargs)
        free(ptrs);
    if (j.failed) {
        tilec_sdk_error_set("cpu: launch: out of memory for %zu bytes of on-chip buffers",
                            j.scratch);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    if (a->timed)
        *a->elapsed_ms = t1 - t0;
    tilec_shell_log("launch", "cpu: %lld blocks (%lld x %lld x %lld) in %.3f ms",
                    (long long)j.nblocks, (long long)j.g[0], (long long)j.g[1],
                    (long long)j.g[2], t1 - t0);
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
    .ir_max = TILEC_IR_MAKE(TILEC_IR_VERSION_MAJOR, TILEC_IR_VERSION_MINOR),
    .device_size = sizeof(cpu_dev_t),
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
