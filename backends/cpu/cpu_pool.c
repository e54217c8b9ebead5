/*
 * cpu_pool.c — the one worker pool of the process, which runs every
 * launch's blocks.
 *
 * Size: TILEC_NUM_THREADS threads in all (the launching thread counts as
 * one), or, when the variable is unset or empty, the CPUs in the process's
 * affinity mask (sched_getaffinity; `taskset -c 0 prog` gives 1).  A value
 * that is not an integer from 1 to CPU_POOL_MAX_THREADS is an error of the
 * launch (TILEC_PS_INVALID_ARGUMENT naming the value), not a silent
 * fallback.  The variable is read at every launch; a changed value
 * restarts the pool at its next launch.
 *
 * Policy: one pool per process, shared by every device handle and every
 * thread, and one launch at a time on it.  A launch takes the pool's run
 * lock, hands out block numbers x fastest from an atomic counter to the
 * pool and to itself in runs of about nblocks / (16 threads) consecutive
 * blocks, and waits for the last block; a launch from another
 * thread (a second device handle, a tuner running candidates in threads)
 * waits for the lock.  So the process never runs more block threads than
 * the pool has, however many launches are in flight.  Separate processes
 * have separate pools: give each its share with TILEC_NUM_THREADS.
 * Workers start at the first launch with more than one block and are
 * joined when the last open device handle is closed.
 *
 * Each thread has its own 64-byte-aligned scratch area for the block's
 * on-chip buffers (the block zeroes them itself, module ABI 2).
 *
 * fork(): the conformance runner and the CLI fork per case, and the child
 * must be able to launch.  pthread_atfork handlers (registered by the
 * first device_open) take the run lock and the pool lock before the fork,
 * so no launch is in flight and no lock is held by a thread the child will
 * not have; the child releases them, re-creates the condition variables
 * and forgets the parent's workers (they do not exist there), and its next
 * launch starts a new pool.  A fork therefore waits for the launch in
 * flight in other threads.  cpu_compile.c's locks are taken after these.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_internal.h"

typedef struct cpu_job {
    const cpu_module_t *mod;
    void *const *args;
    const int64_t *syms;
    int64_t g[3];
    int64_t nblocks;
    int64_t next;         /* atomic: next block number to run */
    int64_t chunk;        /* blocks taken at a time: runs of consecutive blocks */
    size_t scratch;       /* bytes each thread needs */
    int failed;           /* atomic: a thread could not get scratch memory */
} cpu_job_t;

typedef struct cpu_worker {
    pthread_t th;
    uint64_t seen;        /* last job generation taken */
    void *scratch;
    size_t scratch_cap;
} cpu_worker_t;

/* Lock order: run, then m (then cpu_compile.c's locks). */
static struct {
    pthread_mutex_t run;  /* one launch at a time */
    pthread_mutex_t m;
    pthread_cond_t cv_work, cv_done;
    int size;             /* threads in all, the launcher included; 0: not started */
    int nworkers;         /* started pool threads (at most size - 1) */
    cpu_worker_t *workers;
    int stop;
    uint64_t gen;         /* job generation, bumped per launch */
    int pending;          /* workers still on the current job */
    cpu_job_t *job;
    cpu_worker_t self;    /* the launching thread's scratch */
    int users;            /* open device handles; the last close stops the pool */
} pool = {
    .run = PTHREAD_MUTEX_INITIALIZER,
    .m = PTHREAD_MUTEX_INITIALIZER,
    .cv_work = PTHREAD_COND_INITIALIZER,
    .cv_done = PTHREAD_COND_INITIALIZER,
};

int cpu_affinity_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n >= 1)
            return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > CPU_POOL_MAX_THREADS ? CPU_POOL_MAX_THREADS : (int)n;
}

int cpu_pool_threads(char *err, size_t errlen)
{
    const char *v = getenv("TILEC_NUM_THREADS");
    if (!v || !*v)
        return cpu_affinity_cpus();
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    while (end && (*end == ' ' || *end == '\t' || *end == '\n'))
        end++;
    if (errno != 0 || end == v || (end && *end) || n < 1 || n > CPU_POOL_MAX_THREADS) {
        if (err)
            snprintf(err, errlen,
                     "TILEC_NUM_THREADS=\"%.40s\" is not a thread count (an integer from 1 to %d; "
                     "unset: the %d CPUs this process may use)",
                     v, CPU_POOL_MAX_THREADS, cpu_affinity_cpus());
        return -1;
    }
    return (int)n;
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
        int64_t b0 = __atomic_fetch_add(&j->next, j->chunk, __ATOMIC_RELAXED);
        if (b0 >= j->nblocks || __atomic_load_n(&j->failed, __ATOMIC_RELAXED))
            break;
        int64_t end = b0 + j->chunk < j->nblocks ? b0 + j->chunk : j->nblocks;
        for (int64_t b = b0; b < end; b++) {
            int64_t bx = b % j->g[0], r = b / j->g[0];
            int64_t by = r % j->g[1], bz = r / j->g[1];
            j->mod->block((int32_t)bx, (int32_t)by, (int32_t)bz, j->args, j->syms, w->scratch);
        }
    }
    /* the kernels' streaming stores (the prelude's TC_NTH) are weakly
     * ordered: drained here, before the launch is seen as done */
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_sfence();
#endif
}

/* A worker takes each job generation after the one current when it was
 * created exactly once (starting from 0 instead would make a worker of a
 * pool restarted after fork, where gen is already past 0, take a job that
 * is not there yet). */
static void *worker_main(void *arg)
{
    cpu_worker_t *w = arg;
    for (;;) {
        pthread_mutex_lock(&pool.m);
        while (!pool.stop && pool.gen == w->seen)
            pthread_cond_wait(&pool.cv_work, &pool.m);
        if (pool.stop) {
            pthread_mutex_unlock(&pool.m);
            break;
        }
        w->seen = pool.gen;
        cpu_job_t *j = pool.job;
        pthread_mutex_unlock(&pool.m);
        run_blocks(j, w);
        pthread_mutex_lock(&pool.m);
        if (--pool.pending == 0)
            pthread_cond_signal(&pool.cv_done);
        pthread_mutex_unlock(&pool.m);
    }
    return NULL;
}

/* Under run.  Joins the workers; their scratch is freed. */
static void pool_stop(void)
{
    pthread_mutex_lock(&pool.m);
    pool.stop = 1;
    pthread_cond_broadcast(&pool.cv_work);
    pthread_mutex_unlock(&pool.m);
    for (int i = 0; i < pool.nworkers; i++) {
        pthread_join(pool.workers[i].th, NULL);
        free(pool.workers[i].scratch);
    }
    free(pool.workers);
    pool.workers = NULL;
    pool.nworkers = 0;
    pool.size = 0;
    pool.stop = 0;
}

/* Under run: a pool of n threads in all.  With fewer workers than asked
 * for (thread creation failed) it still works: the launcher runs what the
 * pool does not. */
static void pool_start(int n)
{
    if (pool.size == n)
        return;
    if (pool.size)
        pool_stop();
    pool.size = n;
    if (n <= 1)
        return;
    pool.workers = calloc((size_t)(n - 1), sizeof *pool.workers);
    if (!pool.workers)
        return;
    for (int i = 0; i < n - 1; i++) {
        pool.workers[i].seen = pool.gen; /* gen changes only under run, held here */
        if (pthread_create(&pool.workers[i].th, NULL, worker_main, &pool.workers[i]) != 0)
            break;
        pool.nworkers++;
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

tilec_pstatus_t cpu_pool_run(const cpu_module_t *mod, void *const *args, const int64_t *syms,
                             const int64_t g[3], int64_t nblocks, size_t scratch, double *ms)
{
    char err[200];
    int n = cpu_pool_threads(err, sizeof err);
    if (n < 0) {
        tilec_sdk_error_set("cpu: launch: %s", err);
        return TILEC_PS_INVALID_ARGUMENT;
    }
    cpu_job_t j;
    memset(&j, 0, sizeof j);
    j.mod = mod;
    j.args = args;
    j.syms = syms;
    memcpy(j.g, g, sizeof j.g);
    j.nblocks = nblocks;
    j.scratch = scratch;

    pthread_mutex_lock(&pool.run);
    double t0 = now_ms();
    if (nblocks > 1)
        pool_start(n);
    int helpers = nblocks > 1 ? pool.nworkers : 0;
    /* about 16 runs per thread: a thread's rows follow each other in memory
     * (a row kernel's prefetch of the rows after its block's last hits its
     * own next block), and the tail stays short */
    j.chunk = nblocks / (16 * (int64_t)(helpers + 1));
    if (j.chunk < 1)
        j.chunk = 1;
    if (helpers > 0) {
        pthread_mutex_lock(&pool.m);
        pool.job = &j;
        pool.pending = helpers;
        pool.gen++;
        pthread_cond_broadcast(&pool.cv_work);
        pthread_mutex_unlock(&pool.m);
    }
    if (nblocks > 0)
        run_blocks(&j, &pool.self);
    if (helpers > 0) {
        pthread_mutex_lock(&pool.m);
        while (pool.pending > 0)
            pthread_cond_wait(&pool.cv_done, &pool.m);
        pool.job = NULL;
        pthread_mutex_unlock(&pool.m);
    }
    double t1 = now_ms();
    pthread_mutex_unlock(&pool.run);
    if (j.failed) {
        tilec_sdk_error_set("cpu: launch: out of memory for %zu bytes of on-chip buffers",
                            j.scratch);
        return TILEC_PS_OUT_OF_MEMORY;
    }
    if (ms)
        *ms = t1 - t0;
    return TILEC_PS_OK;
}

/* ---- fork ------------------------------------------------------------------------- */

static void fork_prepare(void)
{
    pthread_mutex_lock(&pool.run);
    pthread_mutex_lock(&pool.m);
    cpu_compile_fork_prepare();
}

static void fork_parent(void)
{
    cpu_compile_fork_parent();
    pthread_mutex_unlock(&pool.m);
    pthread_mutex_unlock(&pool.run);
}

/* In the child only the forking thread exists, holding the locks that
 * fork_prepare took: it releases them.  The workers are gone but the
 * condition variables may still count them as waiters (destroying one
 * would then wait for ever), so those are re-created. */
static void fork_child(void)
{
    cpu_compile_fork_child();
    pthread_cond_init(&pool.cv_work, NULL);
    pthread_cond_init(&pool.cv_done, NULL);
    for (int i = 0; i < pool.nworkers; i++)
        free(pool.workers[i].scratch);
    free(pool.workers);
    pool.workers = NULL;
    pool.nworkers = 0;
    pool.size = 0;
    pool.stop = 0;
    pool.pending = 0;
    pool.job = NULL;
    pthread_mutex_unlock(&pool.m);
    pthread_mutex_unlock(&pool.run);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static int fork_registered;

static void fork_register(void)
{
    fork_registered = pthread_atfork(fork_prepare, fork_parent, fork_child) == 0;
}

int cpu_pool_acquire(void)
{
    pthread_once(&fork_once, fork_register);
    if (!fork_registered)
        return -1;
    pthread_mutex_lock(&pool.run);
    pool.users++;
    pthread_mutex_unlock(&pool.run);
    return 0;
}

void cpu_pool_release(void)
{
    pthread_mutex_lock(&pool.run);
    if (pool.users > 0 && --pool.users == 0) {
        if (pool.size)
            pool_stop();
        free(pool.self.scratch);
        pool.self.scratch = NULL;
        pool.self.scratch_cap = 0;
    }
    pthread_mutex_unlock(&pool.run);
}
