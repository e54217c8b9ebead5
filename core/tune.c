/*
 * core/tune.c — the autotuner behind `tilec tune` and tilec_tune().
 *
 * Steps, per shape bucket (docs/tuning.md):
 *   1. candidates: the product of the --space lists, else the program's
 *      @autotune configs, plus the factory's defaults (the baseline);
 *   2. the reference, once: the defaults' program in the interpreter (or
 *      on the --reference backend, in a worker), on seeded inputs;
 *   3. compile every candidate in forked workers, jobs at a time (their
 *      binaries land in the kernel cache, so the next step hits it);
 *   4. one at a time, a worker per compiled candidate: compile (cached),
 *      run once on the same inputs, check against the reference, and only
 *      when it passes time it (warm-up, then the median of repeats on the
 *      device timer where the backend has one);
 *   5. the fastest passing candidate is stored in the tuning database.
 *
 * Workers are forked processes: a candidate that crashes, hangs or runs
 * out of memory fails alone, and this process never opens the device
 * (CUDA and the like do not survive a fork).  A worker sends one
 * fixed-size result through a pipe (atomic: smaller than PIPE_BUF).
 */
#define TILEC_BUILDING_LIBRARY 1
#include "tune.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api_internal.h"
#include "check.h"
#include "loader.h"
#include "log.h"
#include "tunedb.h"
#include "tune_space.h"

#define TUNE_MAX_CANDIDATES 100000
#define TUNE_WARMUP 2
#define TUNE_MIN_RUNS 5
#define TUNE_MAX_RUNS 200
#define TUNE_MIN_MS 200.0
#define TUNE_MAX_MS 2000.0

typedef struct wres {           /* what a worker sends back */
    int state;                  /* tilec_tune_state_t */
    int runs;
    double median_ms, min_ms, rel_err;
    double setup_ms, compile_ms, inputs_ms, check_ms, timing_ms;   /* phases of work_check */
    double wall_ms;             /* set by the parent: fork to reap */
    int gpu;                    /* work_probe: the device is a GPU (TILEC_CAP_GPU) */
    long long max_threads;      /* work_probe: threads per block, 0 unknown */
    tilec_tune_devkey_t key;
    char msg[1400];
} wres_t;
_Static_assert(sizeof(wres_t) <= 4096, "a worker's result must fit one atomic pipe write");

typedef struct cand {
    int bucket;
    tilec_define_kv_t *defs;    /* user + bucket + config */
    int ndefs;
    int compiled;
} cand_t;

typedef struct tuner {
    const tilec_tune_options_t *o;
    tilec_tune_report_t *r;
    cand_t *c;
    double t0;
    const check_set_t *ref;     /* of the bucket being checked */
    const char *backend;        /* what the workers open: o->backend, or the plugin auto chose */
    char chosen[64];
    int compiled;               /* compile results so far */
} tuner_t;

static double now_ms(void)
{
    return tilec_api_now_ms();
}

static int over_budget(const tuner_t *t)
{
    return t->o->budget_s > 0 && now_ms() - t->t0 > t->o->budget_s * 1e3;
}

static void wmsg(wres_t *w, int state, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void wmsg(wres_t *w, int state, const char *fmt, ...)
{
    va_list ap;
    size_t n;
    w->state = state;
    va_start(ap, fmt);
    vsnprintf(w->msg, sizeof w->msg, fmt, ap);
    va_end(ap);
    n = strlen(w->msg);
    while (n && w->msg[n - 1] == '\n') {
        w->msg[--n] = '\0';
    }
}

/* ---- workers ------------------------------------------------------------------- */

typedef void (*work_fn)(tuner_t *t, int idx, wres_t *w);

/* Whatever a process loaded (a vendor runtime, say) may have installed
 * handlers for fatal signals: a worker must die of them, visibly.  Called
 * at the start of a worker and again after it made its context. */
static void default_signals(void)
{
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        signal(fatal[i], SIG_DFL);
    }
}

/* Starts fn(t, idx) in a child; *fd reads its result.  -1 on failure. */
static pid_t spawn(tuner_t *t, work_fn fn, int idx, int *fd)
{
    int p[2];
    pid_t pid;
    if (pipe(p) != 0) {
        return -1;
    }
    pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        wres_t w;
        close(p[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        default_signals();
        memset(&w, 0, sizeof w);
        w.state = TILEC_TUNE_TIMED;
        fn(t, idx, &w);
        if (write(p[1], &w, sizeof w) != (ssize_t)sizeof w) {
            _exit(3);
        }
        _exit(0);
    }
    close(p[1]);
    *fd = p[0];
    return pid;
}

/* Reads a finished (or dead) worker's result and reaps it; killed: it ran
 * past limit_ms and is killed instead. */
static void reap(pid_t pid, int fd, int killed, double limit_ms, wres_t *w)
{
    int status = 0;
    ssize_t got = killed ? 0 : read(fd, w, sizeof *w);
    if (killed) {
        kill(pid, SIGKILL);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    close(fd);
    if (killed) {
        memset(w, 0, sizeof *w);
        wmsg(w, TILEC_TUNE_TIMEOUT, "timed out (killed after %.0f s)", limit_ms / 1e3);
        return;
    }
    if (got == (ssize_t)sizeof *w) {
        return;
    }
    memset(w, 0, sizeof *w);
    if (WIFSIGNALED(status)) {
        wmsg(w, TILEC_TUNE_CRASHED, "crashed: signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
    } else {
        wmsg(w, TILEC_TUNE_CRASHED, "its worker exited with status %d without a result",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
}

static double timeout_ms(const tuner_t *t)
{
    return (t->o->timeout_s > 0 ? t->o->timeout_s : 300.0) * 1e3;
}

/* Runs up to jobs workers over idx[0..n), calling done() for each. */
static void run_workers(tuner_t *t, work_fn fn, const int *idx, int n, int jobs,
                        void (*done)(tuner_t *, int, const wres_t *))
{
    struct slot { pid_t pid; int fd, idx; double start; } *s = calloc((size_t)jobs, sizeof *s);
    struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
    int next = 0, running = 0;
    if (!s || !pf) {
        free(s);
        free(pf);
        return;
    }
    while (next < n || running > 0) {
        while (running < jobs && next < n) {
            int k = idx[next++], fd;
            wres_t w;
            pid_t pid;
            if (over_budget(t)) {
                memset(&w, 0, sizeof w);
                wmsg(&w, TILEC_TUNE_SKIPPED, "not tried: the %.0f s budget ran out", t->o->budget_s);
                done(t, k, &w);
                continue;
            }
            pid = spawn(t, fn, k, &fd);
            if (pid < 0) {
                memset(&w, 0, sizeof w);
                wmsg(&w, TILEC_TUNE_CRASHED, "cannot start a worker: %s", strerror(errno));
                done(t, k, &w);
                continue;
            }
            for (int j = 0; j < jobs; j++) {
                if (s[j].pid == 0) {
                    s[j].pid = pid;
                    s[j].fd = fd;
                    s[j].idx = k;
                    s[j].start = now_ms();
                    break;
                }
            }
            running++;
        }
        if (running == 0) {
            break;
        }
        for (int j = 0; j < jobs; j++) {
            pf[j].fd = s[j].pid ? s[j].fd : -1;
            pf[j].events = POLLIN;
            pf[j].revents = 0;
        }
        if (poll(pf, (nfds_t)jobs, 100) < 0 && errno != EINTR) {
            break;
        }
        for (int j = 0; j < jobs; j++) {
            wres_t w;
            int late;
            if (!s[j].pid) {
                continue;
            }
            late = now_ms() - s[j].start > timeout_ms(t);
            if (!(pf[j].revents & (POLLIN | POLLHUP | POLLERR)) && !late) {
                continue;
            }
            reap(s[j].pid, s[j].fd, late && !(pf[j].revents & POLLIN), timeout_ms(t), &w);
            w.wall_ms = now_ms() - s[j].start;
            done(t, s[j].idx, &w);
            s[j].pid = 0;
            running--;
        }
    }
    free(s);
    free(pf);
}

/* In a worker: the context and the candidate's program. */
static int open_candidate(tuner_t *t, const cand_t *c, wres_t *w, tilec_context_t **ctx,
                          tilec_program_t **prog)
{
    tilec_status_t s = tilec_context_create(t->backend, ctx);
    if (s != TILEC_OK) {
        wmsg(w, TILEC_TUNE_COMPILE_FAILED, "%s", *ctx ? tilec_context_message(*ctx) : "out of memory");
        return -1;
    }
    default_signals();
    tilec_tune_devkey_of(*ctx, &w->key);
    s = tilec_program_load_file(*ctx, t->o->path, c->defs, c->ndefs, t->o->entry, prog);
    if (s != TILEC_OK) {
        wmsg(w, TILEC_TUNE_INVALID, "%s", tilec_context_message(*ctx));
        return -1;
    }
    return 0;
}

static void work_probe(tuner_t *t, int idx, wres_t *w)
{
    tilec_context_t *ctx = NULL;
    (void)idx;
    if (tilec_context_create(t->backend, &ctx) != TILEC_OK) {
        wmsg(w, TILEC_TUNE_COMPILE_FAILED, "%s", ctx ? tilec_context_message(ctx) : "out of memory");
    } else {
        tilec_prop_t p;
        tilec_tune_devkey_of(ctx, &w->key);
        w->gpu = (ctx->info.caps & TILEC_CAP_GPU) != 0;
        if (tilec_device_property(ctx, TILEC_PROP_MAX_THREADS_PER_BLOCK, &p) == TILEC_OK && p.kind == 1) {
            w->max_threads = p.ival;
        }
    }
    tilec_context_destroy(ctx);
}

/* A compiled candidate the device cannot launch, from the compile's module
 * info against the device's properties (either unknown: not pruned). */
static void prune(tilec_context_t *ctx, const tilec_executable_t *exe, wres_t *w)
{
    tilec_module_info_t mi;
    tilec_prop_t optin;
    if (tilec_executable_info(exe, &mi) != TILEC_OK) {
        return;
    }
    int64_t smem = mi.shared_static_bytes + (mi.shared_dynamic_bytes > 0 ? mi.shared_dynamic_bytes : 0);
    if (mi.shared_static_bytes >= 0 &&
        tilec_device_property(ctx, TILEC_PROP_SHARED_MEM_PER_BLOCK_OPTIN, &optin) == TILEC_OK &&
        optin.kind == 1 && optin.ival > 0 && smem > optin.ival) {
        wmsg(w, TILEC_TUNE_PRUNED, "needs %lld bytes of shared memory per block; the device allows %lld",
             (long long)smem, (long long)optin.ival);
    } else if (mi.threads > 0 && mi.max_threads > 0 && mi.threads > mi.max_threads) {
        wmsg(w, TILEC_TUNE_PRUNED, "%lld threads per block; its %lld registers per thread allow %lld",
             (long long)mi.threads, (long long)mi.registers, (long long)mi.max_threads);
    }
}

static void work_compile(tuner_t *t, int idx, wres_t *w)
{
    tilec_context_t *ctx = NULL;
    tilec_program_t *prog = NULL;
    tilec_executable_t *exe = NULL;
    if (open_candidate(t, &t->c[idx], w, &ctx, &prog) == 0 &&
        tilec_program_compile(ctx, prog, &exe) != TILEC_OK) {
        wmsg(w, TILEC_TUNE_COMPILE_FAILED, "%s", tilec_context_message(ctx));
    } else if (exe) {
        prune(ctx, exe, w);
    }
    tilec_executable_free(exe);
    tilec_program_free(prog);
    tilec_context_destroy(ctx);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Check once against the reference; time only what passes. */
static void work_check(tuner_t *t, int idx, wres_t *w)
{
    tilec_context_t *ctx = NULL;
    tilec_program_t *prog = NULL;
    tilec_executable_t *exe = NULL;
    tilec_buffer_t **bufs = NULL;
    check_set_t set = {0};
    const check_set_t *ref = t->ref;
    check_verdict_t v = {0};
    double times[TUNE_MAX_RUNS], start;
    char *msg = NULL;
    tilec_status_t s;
    double t0 = now_ms();
    if (open_candidate(t, &t->c[idx], w, &ctx, &prog) != 0) {
        goto out;
    }
    w->setup_ms = now_ms() - t0;
    t0 = now_ms();
    if ((s = tilec_program_compile(ctx, prog, &exe)) != TILEC_OK) {
        wmsg(w, TILEC_TUNE_COMPILE_FAILED, "%s", tilec_context_message(ctx));
        goto out;
    }
    w->compile_ms = now_ms() - t0;
    t0 = now_ms();
    if (check_set_make_like(prog, t->o->path, t->o->seed, ref, &set, &msg) != CHECK_OK) {
        wmsg(w, TILEC_TUNE_INVALID, "%s", msg ? msg : "out of memory");
        goto out;
    }
    if (set.n != ref->n) {
        wmsg(w, TILEC_TUNE_INVALID, "the config changes the kernel's tensors (%d, not %d)", set.n, ref->n);
        goto out;
    }
    bufs = calloc((size_t)set.n + 1, sizeof *bufs);
    if (!bufs) {
        wmsg(w, TILEC_TUNE_LAUNCH_FAILED, "out of memory");
        goto out;
    }
    for (int i = 0; i < set.n; i++) {
        check_tensor_t *x = &set.t[i];
        if (x->elem != ref->t[i].elem || x->ndim != ref->t[i].ndim ||
            memcmp(x->shape, ref->t[i].shape, sizeof x->shape[0] * (size_t)x->ndim) != 0) {
            wmsg(w, TILEC_TUNE_INVALID, "the config changes tensor '%s'", x->name);
            goto out;
        }
        if ((s = tilec_buffer_create(ctx, x->elem, x->ndim, x->shape, &bufs[i])) != TILEC_OK ||
            (s = tilec_buffer_write(bufs[i], x->init, x->bytes)) != TILEC_OK) {
            wmsg(w, TILEC_TUNE_LAUNCH_FAILED, "%s", tilec_context_message(ctx));
            goto out;
        }
    }
    w->inputs_ms = now_ms() - t0;
    t0 = now_ms();
    if ((s = tilec_launch(ctx, exe, bufs, set.n, NULL)) != TILEC_OK) {
        wmsg(w, TILEC_TUNE_LAUNCH_FAILED, "%s", tilec_context_message(ctx));
        goto out;
    }
    for (int i = 0; i < set.n; i++) {
        if ((s = tilec_buffer_read(bufs[i], set.t[i].out, set.t[i].bytes)) != TILEC_OK) {
            wmsg(w, TILEC_TUNE_LAUNCH_FAILED, "%s", tilec_context_message(ctx));
            goto out;
        }
    }
    check_set_judge(&set, CHECK_TOL_AUTO, &v);
    w->check_ms = now_ms() - t0;
    t0 = now_ms();
    w->rel_err = v.worst.rel_fro;
    if (!v.ok) {
        wmsg(w, TILEC_TUNE_CHECK_FAILED, "%s",
             v.detail && *v.detail ? v.detail : "(no detail)");
        goto out;
    }
    for (int i = 0; i < TUNE_WARMUP; i++) {
        if ((s = tilec_launch(ctx, exe, bufs, set.n, NULL)) != TILEC_OK) {
            wmsg(w, TILEC_TUNE_LAUNCH_FAILED, "%s", tilec_context_message(ctx));
            goto out;
        }
    }
    start = now_ms();
    while (w->runs < TUNE_MAX_RUNS &&
           (w->runs < TUNE_MIN_RUNS || now_ms() - start < TUNE_MIN_MS) &&
           (w->runs < TUNE_MIN_RUNS || now_ms() - start < TUNE_MAX_MS)) {
        if ((s = tilec_launch(ctx, exe, bufs, set.n, &times[w->runs])) != TILEC_OK) {
            wmsg(w, TILEC_TUNE_LAUNCH_FAILED, "%s", tilec_context_message(ctx));
            goto out;
        }
        w->runs++;
    }
    w->timing_ms = now_ms() - t0;
    qsort(times, (size_t)w->runs, sizeof times[0], cmp_double);
    w->min_ms = times[0];
    w->median_ms = w->runs % 2 ? times[w->runs / 2]
                               : 0.5 * (times[w->runs / 2 - 1] + times[w->runs / 2]);
out:
    free(v.detail);
    free(msg);
    for (int i = 0; bufs && i < set.n; i++) {
        tilec_buffer_free(bufs[i]);
    }
    free(bufs);
    check_set_free(&set);
    tilec_executable_free(exe);
    tilec_program_free(prog);
    tilec_context_destroy(ctx);
}

void tilec_tune_shuffle(uint64_t seed, int *order, int n, int first)
{
    check_rng_t rng;
    check_rng_seed(&rng, seed);
    for (int j = n - 1; j > first; j--) {
        int k = (int)check_rng_int(&rng, first, j);
        int tmp = order[j];
        order[j] = order[k];
        order[k] = tmp;
    }
}

/* The order in which a bucket's candidates are checked and timed: the
 * defaults first (the baseline every speedup is over), then the rest in a
 * seeded shuffle (--seed), so that a --budget that runs out leaves a
 * sample of the whole space untimed rather than its lexicographic tail
 * (with block_M first, every large tile). */
static void shuffle_after_default(const tuner_t *t, int *order, int n)
{
    int first = 0;
    for (int j = 0; j < n; j++) {
        if (t->r->candidates[order[j]].is_default) {
            int d = order[j];
            memmove(order + 1, order, sizeof *order * (size_t)j);
            order[0] = d;
            first = 1;
            break;
        }
    }
    tilec_tune_shuffle(t->o->seed, order, n, first);
}

/* ---- the reference on another backend (a worker, into shared memory) ------------ */

typedef struct refjob {
    check_set_t *set;
    unsigned char *shared;      /* every tensor's ref, back to back */
    const tilec_define_kv_t *defs;
    int ndefs;
} refjob_t;
static refjob_t *g_refjob;      /* the worker's argument (one at a time) */

static void work_reference(tuner_t *t, int idx, wres_t *w)
{
    tilec_context_t *rctx = NULL;
    char *msg = NULL;
    size_t at = 0;
    (void)idx;
    if (tilec_context_create(t->o->reference, &rctx) != TILEC_OK) {
        wmsg(w, TILEC_TUNE_LAUNCH_FAILED, "reference backend '%s' is not usable: %s", t->o->reference,
             rctx ? tilec_context_message(rctx) : "out of memory");
    } else if (check_set_reference_backend(rctx, t->o->path, g_refjob->defs, g_refjob->ndefs,
                                           t->o->entry, g_refjob->set, &msg) != TILEC_OK) {
        wmsg(w, TILEC_TUNE_LAUNCH_FAILED, "reference backend '%s' failed: %s", t->o->reference,
             msg ? msg : "out of memory");
    } else {
        for (int i = 0; i < g_refjob->set->n; i++) {
            memcpy(g_refjob->shared + at, g_refjob->set->t[i].ref, g_refjob->set->t[i].bytes);
            at += g_refjob->set->t[i].bytes;
        }
    }
    free(msg);
    tilec_context_destroy(rctx);
}

/* Runs one worker, fn(t, idx), and waits for it. */
static void run_one(tuner_t *t, work_fn fn, int idx, wres_t *w)
{
    int fd;
    pid_t pid = spawn(t, fn, idx, &fd);
    double start = now_ms();
    if (pid < 0) {
        memset(w, 0, sizeof *w);
        wmsg(w, TILEC_TUNE_CRASHED, "cannot start a worker: %s", strerror(errno));
        return;
    }
    for (;;) {
        struct pollfd pf = {fd, POLLIN, 0};
        int late = now_ms() - start > timeout_ms(t);
        if (poll(&pf, 1, 100) > 0 || late) {
            reap(pid, fd, late && !(pf.revents & POLLIN), timeout_ms(t), w);
            w->wall_ms = now_ms() - start;
            return;
        }
    }
}

/* ---- candidates ---------------------------------------------------------------- */

static int grow(void **p, int *cap, int need, size_t size)
{
    if (need <= *cap) {
        return 0;
    }
    int c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *g = realloc(*p, size * (size_t)c);
    if (!g) {
        return -1;
    }
    memset((char *)g + size * (size_t)*cap, 0, size * (size_t)(c - *cap));
    *p = g;
    *cap = c;
    return 0;
}

/* ---- the driver ---------------------------------------------------------------- */

TILEC_API const char *tilec_tune_state_name(tilec_tune_state_t s)
{
    static const char *const n[] = {"timed", "invalid", "compile failed", "check failed",
                                    "launch failed", "crashed", "timeout", "skipped", "pruned"};
    return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "?";
}

TILEC_API void tilec_tune_report_free(tilec_tune_report_t *r)
{
    if (!r) {
        return;
    }
    for (int i = 0; i < r->ncandidates; i++) {
        free(r->candidates[i].config);
        free(r->candidates[i].message);
    }
    for (int i = 0; i < r->nbuckets; i++) {
        free(r->buckets[i].shape);
    }
    free(r->candidates);
    free(r->buckets);
    free(r->message);
    free(r->plugin);
    free(r->plugin_version);
    free(r->device);
    free(r->arch);
    free(r->db);
    free(r->space);
    free(r->phase_ms);
    free(r);
}

static tilec_status_t fail(tilec_tune_report_t *r, tilec_status_t st, char *msg)
{
    free(r->message);
    r->message = msg ? msg : strdup("out of memory");
    return st;
}

static void compile_done(tuner_t *t, int idx, const wres_t *w)
{
    tilec_tune_candidate_t *c = &t->r->candidates[idx];
    c->state = (tilec_tune_state_t)w->state;
    t->c[idx].compiled = w->state == TILEC_TUNE_TIMED;
    if (!t->c[idx].compiled) {
        free(c->message);
        c->message = strdup(w->msg);
    }
    if (t->o->progress) {
        t->o->progress(t->o->user, 0, ++t->compiled, t->r->ncandidates, c);
    }
}

static void check_done(tuner_t *t, int idx, const wres_t *w)
{
    tilec_tune_candidate_t *c = &t->r->candidates[idx];
    c->state = (tilec_tune_state_t)w->state;
    free(c->message);
    c->message = strdup(w->msg);
    c->median_ms = w->median_ms;
    c->min_ms = w->min_ms;
    c->runs = w->runs;
    c->rel_err = w->rel_err;
    if (t->r->phase_ms) {
        t->r->phase_ms[idx] = (tilec_tune_phases_t){w->wall_ms, w->setup_ms, w->compile_ms, w->check_ms,
                                                    w->timing_ms, w->inputs_ms};
    }
}

/* The reference for bucket b: the defaults' program on the bucket. */
static tilec_status_t make_reference(tuner_t *t, tilec_context_t *bare, const tilec_define_kv_t *defs,
                                     int ndefs, check_set_t *set)
{
    tilec_program_t *p = NULL;
    char *msg = NULL;
    tilec_status_t s = tilec_program_load_file(bare, t->o->path, defs, ndefs, t->o->entry, &p);
    if (s != TILEC_OK) {
        return fail(t->r, s, tilec_strfmt("%s", tilec_context_message(bare)));
    }
    if (check_set_make(p, t->o->path, t->o->seed, set, &msg) != CHECK_OK) {
        tilec_program_free(p);
        return fail(t->r, TILEC_E_INVALID, msg);
    }
    if (!t->o->reference) {
        s = check_set_reference(bare, p, set);
        if (s != TILEC_OK) {
            s = fail(t->r, s, tilec_strfmt("reference interpreter: %s", tilec_context_message(bare)));
        }
    } else {
        size_t total = 1, at = 0;
        refjob_t job = {set, NULL, defs, ndefs};
        wres_t w;
        for (int i = 0; i < set->n; i++) {
            total += set->t[i].bytes;
        }
        job.shared = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (job.shared == MAP_FAILED) {
            tilec_program_free(p);
            return fail(t->r, TILEC_E_NOMEM, tilec_strfmt("cannot map %zu bytes for the reference", total));
        }
        g_refjob = &job;
        run_one(t, work_reference, 0, &w);
        g_refjob = NULL;
        if (w.state != TILEC_TUNE_TIMED) {
            s = fail(t->r, TILEC_E_LAUNCH, strdup(w.msg));
        } else {
            for (int i = 0; i < set->n; i++) {
                memcpy(set->t[i].ref, job.shared + at, set->t[i].bytes);
                at += set->t[i].bytes;
            }
        }
        munmap(job.shared, total);
    }
    tilec_program_free(p);
    return s;
}

static char *utc_now(void)
{
    char buf[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return strdup(buf);
}

/* The config text of candidate i: its tuned values (the defaults' values
 * of the tuned names for the baseline). */
static tilec_status_t store(tuner_t *t, tilec_program_t *base, const char *fixed)
{
    tilec_tunedb_t *db = NULL;
    char *msg = NULL, *when = utc_now();
    tilec_status_t st = tilec_tunedb_open(t->o->db, 1, &db, &msg);
    if (st != TILEC_OK) {
        free(when);
        return fail(t->r, st, msg);
    }
    free(t->r->db);
    t->r->db = strdup(tilec_tunedb_path(db));
    for (int b = 0; b < t->r->nbuckets && st == TILEC_OK; b++) {
        tilec_tune_bucket_t *bk = &t->r->buckets[b];
        tilec_tunedb_row_t row;
        long long n = 0;
        double dflt = -1;
        if (bk->best < 0) {
            continue;
        }
        for (int i = 0; i < t->r->ncandidates; i++) {
            const tilec_tune_candidate_t *c = &t->r->candidates[i];
            n += c->bucket == b;
            if (c->bucket == b && c->is_default && c->state == TILEC_TUNE_TIMED) {
                dflt = c->median_ms;
            }
        }
        memset(&row, 0, sizeof row);
        row.source_hash = (char *)tilec_program_source_hash(base);
        row.entry = (char *)tilec_program_entry(base);
        row.fixed = (char *)fixed;
        row.shape = bk->shape;
        row.plugin = t->r->plugin;
        row.plugin_version = t->r->plugin_version;
        row.device = t->r->device;
        row.arch = t->r->arch;
        row.config = t->r->candidates[bk->best].config;
        row.time_ms = t->r->candidates[bk->best].median_ms;
        row.default_ms = dflt;
        row.candidates = n;
        row.file = (char *)t->o->path;
        row.tuned_at = when;
        st = tilec_tunedb_put(db, &row, &msg);
        if (st != TILEC_OK) {
            st = fail(t->r, st, msg);
        } else {
            bk->stored = 1;
        }
    }
    free(when);
    tilec_tunedb_close(db);
    return st;
}

TILEC_API tilec_status_t tilec_tune(const tilec_tune_options_t *o, tilec_tune_report_t **out)
{
    tilec_tune_report_t *r = calloc(1, sizeof *r);
    tilec_context_t *bare = NULL;
    tilec_program_t *base = NULL;
    tilec_tune_axis_t *space = NULL, *shapes = NULL;
    long long nspace = 0, nbuckets = 1;
    int ncfg = 0, capc = 0, capk = 0, *order = NULL;
    tuner_t t;
    tilec_status_t st = TILEC_OK;
    char *fixed = NULL, *msg = NULL;
    tilec_define_kv_t **cfgs = NULL; /* configs, with ncfgkv each */
    int *ncfgkv = NULL, have_default = 0;
    char *tuned_names = NULL;        /* every tuned name, "NAME=x NAME=x" for kv_has */
    char **dspec = NULL;             /* the default space's specs, when it is used */
    int nsp = 0;                     /* axes of the space (--space or the default) */
    wres_t w;
    if (out) {
        *out = r;
    }
    if (!r) {
        return TILEC_E_NOMEM;
    }
    r->message = strdup("");
    memset(&t, 0, sizeof t);
    t.o = o;
    t.backend = o->backend;
    t.r = r;
    t.t0 = now_ms();
    if (!out || !o || o->struct_size < sizeof *o || !o->path || o->ndefs < 0 || (o->ndefs && !o->defs) ||
        o->nspace < 0 || (o->nspace && !o->space) || o->nshapes < 0 || (o->nshapes && !o->shapes)) {
        return fail(r, TILEC_E_INVALID, strdup("tilec_tune: bad arguments"));
    }
    if (!(bare = tilec_tune_bare_context())) {
        return fail(r, TILEC_E_NOMEM, NULL);
    }
    /* the program with the fixed defines: its entry, hash and @autotune space */
    st = tilec_program_load_file(bare, o->path, o->defs, o->ndefs, o->entry, &base);
    if (st != TILEC_OK) {
        st = fail(r, st, tilec_strfmt("%s", tilec_context_message(bare)));
        goto out;
    }
    /* the device key, from a worker (this process opens no device) */
    run_one(&t, work_probe, 0, &w);
    if (w.state != TILEC_TUNE_TIMED) {
        st = fail(r, TILEC_E_UNAVAILABLE, strdup(w.msg));
        goto out;
    }
    nsp = o->nspace;
    if (nsp == 0 && tilec_program_num_configs(base) == 0) {
        nsp = tilec_tune_default_space(base, o->defs, o->ndefs, w.gpu, w.max_threads, &dspec);
        if (!dspec) {
            st = fail(r, TILEC_E_NOMEM, NULL);
            goto out;
        }
    }
    if (tilec_tune_axes_parse(o->nspace ? o->space : (const char *const *)dspec, nsp, o->nspace ? "--space" : "the default space",
                   &space, &msg) != 0 ||
        tilec_tune_axes_parse(o->shapes, o->nshapes, "--shapes", &shapes, &msg) != 0) {
        st = fail(r, msg ? TILEC_E_INVALID : TILEC_E_NOMEM, msg);
        msg = NULL;
        goto out;
    }
    if (o->nspace > 0) {
        r->space = strdup("--space");
    } else if (nsp == 0) {
        r->space = strdup("@autotune");
    } else {
        size_t len = 16;
        for (int i = 0; i < nsp; i++) {
            len += strlen(dspec[i]) + 1;
        }
        if ((r->space = malloc(len)) != NULL) {
            strcpy(r->space, "default:");
            for (int i = 0; i < nsp; i++) {
                strcat(strcat(r->space, " "), dspec[i]);
            }
        }
    }
    if (!r->space) {
        st = fail(r, TILEC_E_NOMEM, NULL);
        goto out;
    }
    /* the configs, as kv arrays */
    if (nsp > 0) {
        nspace = tilec_tune_axes_product(space, nsp, TUNE_MAX_CANDIDATES);
        if (nspace < 0) {
            st = fail(r, TILEC_E_INVALID, tilec_strfmt("the --space product has more than %d points",
                                                       TUNE_MAX_CANDIDATES));
            goto out;
        }
        ncfg = (int)nspace;
        cfgs = calloc((size_t)ncfg + 1, sizeof *cfgs);
        ncfgkv = calloc((size_t)ncfg + 1, sizeof *ncfgkv);
        for (int k = 0; cfgs && ncfgkv && k < ncfg; k++) {
            cfgs[k] = calloc((size_t)nsp, sizeof **cfgs);
            if (!cfgs[k]) {
                break;
            }
            ncfgkv[k] = nsp;
            for (int i = 0; i < nsp; i++) {
                cfgs[k][i].name = space[i].name;
                cfgs[k][i].value = tilec_tune_axes_value(space, nsp, k, i);
            }
        }
    } else {
        ncfg = tilec_program_num_configs(base);
        if (ncfg == 0) {
            st = fail(r, TILEC_E_INVALID,
                      tilec_strfmt("%s: no tuning space: the factory has no tile parameter to vary "
                                   "(block*, tile*, num_stages, threads); give --space NAME=V1,V2,... "
                                   "or declare @autotune(configs=...) on the factory", o->path));
            goto out;
        }
        cfgs = calloc((size_t)ncfg + 1, sizeof *cfgs);
        ncfgkv = calloc((size_t)ncfg + 1, sizeof *ncfgkv);
        for (int k = 0; cfgs && ncfgkv && k < ncfg; k++) {
            tilec_program_config(base, k, (const tilec_define_kv_t **)&cfgs[k], &ncfgkv[k]);
        }
    }
    if (!cfgs || !ncfgkv) {
        st = fail(r, TILEC_E_NOMEM, NULL);
        goto out;
    }
    /* every tuned name, their values at the defaults, and the checks that
     * fixed, tuned and shape names do not overlap */
    {
        size_t len = 1;
        for (int k = 0; k < ncfg; k++) {
            for (int i = 0; cfgs[k] && i < ncfgkv[k]; i++) {
                len += strlen(cfgs[k][i].name) + 3;
            }
        }
        tuned_names = calloc(len, 1);
        for (int k = 0; tuned_names && k < ncfg; k++) {
            for (int i = 0; cfgs[k] && i < ncfgkv[k]; i++) {
                if (!tilec_tune_kv_has(tuned_names, cfgs[k][i].name)) {
                    strcat(strcat(strcat(tuned_names, tuned_names[0] ? " " : ""), cfgs[k][i].name), "=x");
                }
                if (strchr(cfgs[k][i].value, ' ')) {
                    st = fail(r, TILEC_E_INVALID, tilec_strfmt("config value '%s' of '%s' has a space",
                                                               cfgs[k][i].value, cfgs[k][i].name));
                    goto out;
                }
            }
        }
        if (!tuned_names) {
            st = fail(r, TILEC_E_NOMEM, NULL);
            goto out;
        }
        for (int i = 0; i < o->ndefs; i++) {
            const char *why = tilec_tune_kv_has(tuned_names, o->defs[i].name) ? "tuned by the space" : NULL;
            for (int k = 0; k < o->nshapes && !why; k++) {
                if (!strcmp(shapes[k].name, o->defs[i].name)) why = "a --shapes name";
            }
            if (why) {
                st = fail(r, TILEC_E_INVALID, tilec_strfmt("-D %s: '%s' is %s; it cannot be fixed too",
                                                           o->defs[i].name, o->defs[i].name, why));
                goto out;
            }
            if (strchr(o->defs[i].value, ' ')) {
                st = fail(r, TILEC_E_INVALID, tilec_strfmt("-D %s: a value with a space cannot be a "
                                                           "tuning key", o->defs[i].name));
                goto out;
            }
        }
        for (int k = 0; k < o->nshapes; k++) {
            if (tilec_tune_kv_has(tuned_names, shapes[k].name)) {
                st = fail(r, TILEC_E_INVALID, tilec_strfmt("--shapes %s: '%s' is tuned by the space too",
                                                           shapes[k].name, shapes[k].name));
                goto out;
            }
        }
    }
    fixed = tilec_tune_kv_text(o->defs, o->ndefs, NULL);
    nbuckets = tilec_tune_axes_product(shapes, o->nshapes, TUNE_MAX_CANDIDATES);
    if (!fixed || nbuckets < 0 || nbuckets * (ncfg + 1) > TUNE_MAX_CANDIDATES) {
        st = fail(r, fixed ? TILEC_E_INVALID : TILEC_E_NOMEM,
                  fixed ? tilec_strfmt("more than %d candidates", TUNE_MAX_CANDIDATES) : NULL);
        goto out;
    }
    /* a database that cannot take the results fails now, not after the work */
    if (!o->db || *o->db) {
        tilec_tunedb_t *h = NULL;
        st = tilec_tunedb_open(o->db, 1, &h, &msg);
        tilec_tunedb_close(h);
        if (st != TILEC_OK) {
            st = fail(r, st, msg);
            msg = NULL;
            goto out;
        }
    }
    {
        /* auto resolves once: every worker then opens (and scans for) that plugin only */
        const char *spec = t.backend ? t.backend : secure_getenv("TILEC_BACKEND");
        if (!spec || !*spec || strcmp(spec, "auto") == 0) {
            snprintf(t.chosen, sizeof t.chosen, "%s", w.key.plugin);
            t.backend = t.chosen;
        }
    }
    r->plugin = strdup(w.key.plugin);
    r->plugin_version = strdup(w.key.version);
    r->device = strdup(w.key.device);
    r->arch = strdup(w.key.arch);
    /* the candidates: per bucket, the defaults then every config */
    r->buckets = calloc((size_t)nbuckets, sizeof *r->buckets);
    if (!r->buckets || !r->plugin || !r->plugin_version || !r->device || !r->arch) {
        st = fail(r, TILEC_E_NOMEM, NULL);
        goto out;
    }
    r->nbuckets = (int)nbuckets;
    {
        /* the defaults' values of the tuned names, from the base program */
        tilec_define_kv_t *dkv = calloc((size_t)tilec_program_num_factory_params(base) + 1, sizeof *dkv);
        int nd = 0;
        have_default = dkv != NULL;
        for (int i = 0; dkv && i < tilec_program_num_factory_params(base); i++) {
            const char *name, *dflt, *val;
            tilec_program_factory_param(base, i, &name, &dflt, &val);
            if (tilec_tune_kv_has(tuned_names, name)) {
                if (!val) have_default = 0;
                dkv[nd].name = name;
                dkv[nd++].value = val ? val : "";
            }
        }
        for (char *p = tuned_names; have_default && *p;) {
            /* a tuned name that is not a factory parameter has no known default */
            char *e = strchr(p, '=');
            int found = 0;
            for (int i = 0; i < nd; i++) {
                found |= strlen(dkv[i].name) == (size_t)(e - p) && !strncmp(dkv[i].name, p, (size_t)(e - p));
            }
            have_default &= found;
            p = strchr(e, ' ');
            if (!p) break;
            p++;
        }
        for (long long b = 0; b < nbuckets && st == TILEC_OK; b++) {
            tilec_define_kv_t *bkv = calloc((size_t)o->nshapes + 1, sizeof *bkv);
            char *dtext = have_default ? tilec_tune_kv_text(dkv, nd, NULL) : NULL;
            int default_seen = 0;
            for (int i = 0; bkv && i < o->nshapes; i++) {
                bkv[i].name = shapes[i].name;
                bkv[i].value = tilec_tune_axes_value(shapes, o->nshapes, b, i);
            }
            r->buckets[b].shape = bkv ? tilec_tune_kv_text(bkv, o->nshapes, NULL) : NULL;
            r->buckets[b].best = -1;
            for (int k = -1; bkv && r->buckets[b].shape && k < ncfg; k++) {
                const tilec_define_kv_t *ckv = k < 0 ? dkv : cfgs[k];
                int nc = k < 0 ? nd : ncfgkv[k], n = r->ncandidates;
                char *ctext = tilec_tune_kv_text(ckv, nc, NULL);
                int is_default = dtext && ctext && !strcmp(dtext, ctext);
                if (k < 0 && !have_default) {
                    free(ctext);
                    continue;
                }
                if (is_default && default_seen) {
                    free(ctext);
                    continue; /* a config equal to the defaults is tried once */
                }
                default_seen |= is_default;
                if (!ctext || grow((void **)&r->candidates, &capc, n + 1, sizeof *r->candidates) ||
                    grow((void **)&t.c, &capk, n + 1, sizeof *t.c)) {
                    free(ctext);
                    st = fail(r, TILEC_E_NOMEM, NULL);
                    break;
                }
                r->candidates[n].bucket = (int)b;
                r->candidates[n].config = ctext;
                r->candidates[n].is_default = is_default;
                r->candidates[n].message = strdup("");
                t.c[n].bucket = (int)b;
                t.c[n].ndefs = o->ndefs + o->nshapes + nc;
                t.c[n].defs = calloc((size_t)t.c[n].ndefs + 1, sizeof *t.c[n].defs);
                r->ncandidates++;
                if (!t.c[n].defs || !r->candidates[n].message) {
                    st = fail(r, TILEC_E_NOMEM, NULL);
                    break;
                }
                /* (each source may be NULL when its count is 0) */
                if (o->ndefs)
                    memcpy(t.c[n].defs, o->defs, sizeof *o->defs * (size_t)o->ndefs);
                if (o->nshapes)
                    memcpy(t.c[n].defs + o->ndefs, bkv, sizeof *bkv * (size_t)o->nshapes);
                if (nc)
                    memcpy(t.c[n].defs + o->ndefs + o->nshapes, ckv, sizeof *ckv * (size_t)nc);
            }
            if (!bkv || !r->buckets[b].shape) {
                st = fail(r, TILEC_E_NOMEM, NULL);
            }
            free(bkv);
            free(dtext);
        }
        if (st != TILEC_OK) {
            free(dkv);
            goto out;
        }
        /* the candidates copied dkv's pairs; their strings belong to base */
        free(dkv);
    }
    tilec_log("compile", "tune: %d candidate(s) in %d bucket(s) on %s %s / %s", r->ncandidates,
              r->nbuckets, r->plugin, r->plugin_version, r->device);
    /* compile, in parallel */
    order = calloc((size_t)r->ncandidates + 1, sizeof *order);
    r->phase_ms = calloc((size_t)r->ncandidates + 1, sizeof *r->phase_ms);
    if (!order || !r->phase_ms) {
        st = fail(r, TILEC_E_NOMEM, NULL);
        goto out;
    }
    for (int i = 0; i < r->ncandidates; i++) {
        order[i] = i;
    }
    {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int jobs = o->jobs > 0 ? o->jobs : cores > 0 ? (int)cores : 1;
        run_workers(&t, work_compile, order, r->ncandidates, jobs, compile_done);
    }
    /* per bucket: the reference, then check and time one at a time */
    for (int b = 0; b < r->nbuckets; b++) {
        check_set_t ref = {0};
        tilec_define_kv_t *rdefs = NULL;
        int n = 0, nr = 0;
        for (int i = 0; i < r->ncandidates; i++) {
            if (r->candidates[i].bucket == b && t.c[i].compiled) {
                order[n++] = i;
            }
        }
        if (n == 0) {
            continue;
        }
        shuffle_after_default(&t, order, n);
        rdefs = calloc((size_t)(o->ndefs + o->nshapes) + 1, sizeof *rdefs);
        if (!rdefs) {
            st = fail(r, TILEC_E_NOMEM, NULL);
            goto out;
        }
        /* the first candidate's defines up to the config are the bucket's */
        nr = o->ndefs + o->nshapes;
        memcpy(rdefs, t.c[order[0]].defs, sizeof *rdefs * (size_t)nr);
        st = make_reference(&t, bare, rdefs, nr, &ref);
        free(rdefs);
        if (st != TILEC_OK) {
            check_set_free(&ref);
            goto out;
        }
        t.ref = &ref;
        for (int j = 0; j < n; j++) {
            int i = order[j];
            wres_t cw;
            if (over_budget(&t)) {
                memset(&cw, 0, sizeof cw);
                wmsg(&cw, TILEC_TUNE_SKIPPED, "not timed: the %.0f s budget ran out", o->budget_s);
            } else {
                run_one(&t, work_check, i, &cw);
            }
            check_done(&t, i, &cw);
            if (o->progress) {
                o->progress(o->user, 1, j + 1, n, &r->candidates[i]);
            }
        }
        t.ref = NULL;
        check_set_free(&ref);
        for (int j = 0; j < n; j++) {
            int i = order[j];
            const tilec_tune_candidate_t *c = &r->candidates[i];
            int best = r->buckets[b].best;
            if (c->state == TILEC_TUNE_TIMED &&
                (best < 0 || c->median_ms < r->candidates[best].median_ms)) {
                r->buckets[b].best = i;
            }
        }
    }
    if (o->db && !*o->db) {
        free(r->db);
        r->db = strdup("");
    } else {
        int any = 0;
        for (int b = 0; b < r->nbuckets; b++) {
            any |= r->buckets[b].best >= 0;
        }
        if (any) {
            st = store(&t, base, fixed);
        }
    }
    if (st == TILEC_OK) {
        int any = 0;
        for (int b = 0; b < r->nbuckets; b++) {
            any |= r->buckets[b].best >= 0;
        }
        if (!any) {
            st = fail(r, TILEC_E_COMPILE, strdup("no candidate passed the check"));
        }
    }
out:
    r->wall_s = (now_ms() - t.t0) / 1e3;
    for (int i = 0; t.c && i < r->ncandidates; i++) {
        free(t.c[i].defs);
    }
    free(t.c);
    free(order);
    if (nsp > 0) {
        for (int k = 0; cfgs && k < ncfg; k++) {
            free(cfgs[k]);
        }
    }
    for (int i = 0; dspec && dspec[i]; i++) {
        free(dspec[i]);
    }
    free(dspec);
    free(cfgs);
    free(ncfgkv);
    free(tuned_names);
    free(fixed);
    free(msg);
    if (o) {
        tilec_tune_axes_free(space, nsp);
        tilec_tune_axes_free(shapes, o->nshapes);
    }
    tilec_program_free(base);
    tilec_context_destroy(bare);
    return st;
}
