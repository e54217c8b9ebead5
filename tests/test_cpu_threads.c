/*
 * tests/test_cpu_threads.c — the CPU backend under processes and threads:
 * launches from forked children (also while another thread launches), two
 * threads launching at once on one or two devices, and TILEC_NUM_THREADS
 * (pool size, the affinity-mask default, bad values).
 */
#include "cpu_test.h"

/* ---- fork and threads ------------------------------------------------------------------ */

enum { FN = 5000 }; /* 40 blocks of 128: the pool is used */

/* Launches vadd on D over a = b = 0..FN-1 into c (first set to -1) and
 * checks c = 2a.  Safe in a forked child and in a plain thread (no
 * Criterion asserts): 0, or the step that failed. */
static int vadd_check(tilec_pdevice_t *dev, tilec_pmodule_t *mod, tilec_pmem_t **args)
{
    static const int64_t syms[1] = {FN};
    float *c = malloc(sizeof(float) * FN);
    if (!c)
        return 1;
    for (int i = 0; i < FN; i++)
        c[i] = -1;
    int bad = 0;
    tilec_plaunch_t la = {.struct_size = sizeof la, .nargs = 3, .args = args, .nsyms = 1, .syms = syms};
    if (P->mem_write(dev, args[2], 0, c, sizeof(float) * FN) != TILEC_PS_OK)
        bad = 2;
    else if (P->launch(dev, mod, &la) != TILEC_PS_OK)
        bad = 3;
    else if (P->mem_read(dev, args[2], 0, c, sizeof(float) * FN) != TILEC_PS_OK)
        bad = 4;
    for (int i = 0; !bad && i < FN; i++)
        if (c[i] != 2.0f * (float)i)
            bad = 5;
    free(c);
    return bad;
}

static tilec_pmodule_t *vadd_module(void)
{
    kb_t b;
    build_add(&b);
    tilec_pmodule_t *mod = NULL;
    cr_assert_eq(compile_kb(&b, &mod), TILEC_PS_OK, "%s", P->last_error());
    kb_free(&b);
    return mod;
}

static void vadd_args(tilec_pdevice_t *dev, tilec_pmem_t **args)
{
    static float a[FN];
    for (int i = 0; i < FN; i++)
        a[i] = (float)i;
    for (int k = 0; k < 3; k++) {
        args[k] = NULL;
        cr_assert_eq(P->mem_alloc(dev, TILEC_PMEM_DEVICE, sizeof a, &args[k]), TILEC_PS_OK);
        cr_assert_eq(P->mem_write(dev, args[k], 0, a, sizeof a), TILEC_PS_OK);
    }
}

/* Forks, runs vadd_check in the child (under an alarm, so a deadlock
 * fails rather than hangs), optionally closes the device there, and
 * returns the child's wait status. */
static int fork_vadd(tilec_pmodule_t *mod, tilec_pmem_t **args, int nested)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        alarm(60);
        int bad = vadd_check(D, mod, args);
        if (!bad && nested) {
            /* the child's own pool now runs; its children must work too */
            pid_t g = fork();
            if (g < 0)
                _exit(6);
            if (g == 0) {
                alarm(60);
                _exit(vadd_check(D, mod, args));
            }
            int gs = 0;
            if (waitpid(g, &gs, 0) != g || !WIFEXITED(gs) || WEXITSTATUS(gs) != 0)
                bad = 7;
        }
        if (!bad)
            P->device_close(D);
        _exit(bad);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return st;
}

/* A process forked after the worker pool started can launch (the
 * conformance runner forks per case).  Many forks: a child's new pool
 * once raced its first job (a worker took a job before it was posted). */
Test(cpu_kernel, launch_after_fork, .init = setup, .fini = teardown)
{
    tilec_pmodule_t *mod = vadd_module();
    tilec_pmem_t *args[3];
    vadd_args(D, args);
    cr_assert_eq(vadd_check(D, mod, args), 0); /* the pool starts */
    for (int k = 0; k < 40; k++) {
        int st = fork_vadd(mod, args, k % 4 == 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork %d: child status %d", k, st);
        cr_assert_eq(vadd_check(D, mod, args), 0, "parent after fork %d", k);
    }
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
}

typedef struct launcher {
    tilec_pdevice_t *dev;
    tilec_pmodule_t *mod;
    tilec_pmem_t *args[3];
    int iters;      /* > 0: that many launches; 0: until stop */
    pthread_mutex_t lock;
    int stop;       /* under lock (a mutex, not an atomic: helgrind-clean) */
    int done, bad;  /* launches run, first failure */
} launcher_t;

static int launcher_stopped(launcher_t *l)
{
    if (l->iters)
        return l->done >= l->iters;
    pthread_mutex_lock(&l->lock);
    int stop = l->stop;
    pthread_mutex_unlock(&l->lock);
    return stop;
}

static void *launcher_main(void *arg)
{
    launcher_t *l = arg;
    while (!launcher_stopped(l)) {
        l->bad = vadd_check(l->dev, l->mod, l->args);
        if (l->bad)
            break;
        l->done++;
    }
    return NULL;
}

/* Forks while another thread launches on the same device: the fork waits
 * for the launch in flight, and the child (which has no launching thread)
 * can launch and close the device. */
Test(cpu_kernel, fork_while_launching, .init = setup, .fini = teardown)
{
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
    /* clang 14's ASan allocator does not take its locks around fork: a
     * child forked while the launcher thread allocates deadlocks inside
     * ASan's malloc (seen under make sanitize; docs/sanitizers.md). */
    cr_skip_test("ASan's allocator is not fork-safe while another thread allocates");
#endif
#endif
    tilec_pmodule_t *mod = vadd_module();
    launcher_t l = {.dev = D, .mod = mod, .lock = PTHREAD_MUTEX_INITIALIZER};
    vadd_args(D, l.args);
    tilec_pmem_t *mine[3];
    vadd_args(D, mine);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, launcher_main, &l), 0);
    for (int k = 0; k < 30; k++) {
        int st = fork_vadd(mod, mine, 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork %d: child status %d", k, st);
    }
    pthread_mutex_lock(&l.lock);
    l.stop = 1;
    pthread_mutex_unlock(&l.lock);
    cr_assert_eq(pthread_join(th, NULL), 0);
    cr_assert_eq(l.bad, 0, "launching thread failed at step %d", l.bad);
    for (int i = 0; i < 3; i++) {
        P->mem_free(D, l.args[i]);
        P->mem_free(D, mine[i]);
    }
    P->module_free(mod);
}

/* Two threads launching at once on one device, and two more on a second
 * handle (all four share the process's pool and take turns); every result
 * is right. */
Test(cpu_kernel, concurrent_launches, .init = setup, .fini = teardown)
{
    tilec_pmodule_t *mod = vadd_module();
    tilec_pdevice_t *D2 = NULL;
    cr_assert_eq(P->device_open(0, &D2), TILEC_PS_OK, "%s", P->last_error());
    launcher_t l[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        l[t] = (launcher_t){.dev = t < 2 ? D : D2, .mod = mod, .iters = 25,
                            .lock = PTHREAD_MUTEX_INITIALIZER};
        vadd_args(l[t].dev, l[t].args);
    }
    for (int t = 0; t < 4; t++)
        cr_assert_eq(pthread_create(&th[t], NULL, launcher_main, &l[t]), 0);
    for (int t = 0; t < 4; t++) {
        cr_assert_eq(pthread_join(th[t], NULL), 0);
        cr_assert_eq(l[t].bad, 0, "thread %d failed at step %d", t, l[t].bad);
        cr_assert_eq(l[t].done, 25);
        for (int i = 0; i < 3; i++)
            P->mem_free(l[t].dev, l[t].args[i]);
    }
    P->device_close(D2);
    P->module_free(mod);
}

/* ---- TILEC_NUM_THREADS ----------------------------------------------------------------- */

/* Threads of this process (entries of /proc/self/task). */
static int task_count(void)
{
    DIR *d = opendir("/proc/self/task");
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

/* The thread count once it has settled at want: a joined thread's
 * /proc/self/task entry goes when the kernel reaps it, shortly after
 * pthread_join returns, so a count that only shrinks is polled (up to 2 s). */
static int task_count_settled(int want)
{
    int n = task_count();
    for (int i = 0; i < 200 && n > want; i++) {
        usleep(10000);
        n = task_count();
    }
    return n;
}

static void device_name(char *out, size_t n)
{
    tilec_pdevice_info_t info = {.struct_size = sizeof info};
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_OK);
    snprintf(out, n, "%s", info.name);
}

/* The pool has TILEC_NUM_THREADS threads in all (the launcher is one of
 * them), is resized when the value changes, and is shared: a second
 * device handle adds no threads. */
Test(cpu_pool, num_threads_sizes_the_pool, .init = setup, .fini = teardown)
{
    tilec_pmodule_t *mod = vadd_module();
    tilec_pmem_t *args[3];
    vadd_args(D, args);
    int base = task_count();
    static const int sizes[] = {3, 1, 5, 2};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        char v[16], name[256], want[32];
        snprintf(v, sizeof v, "%d", sizes[k]);
        cr_assert_eq(setenv("TILEC_NUM_THREADS", v, 1), 0);
        cr_assert_eq(vadd_check(D, mod, args), 0, "TILEC_NUM_THREADS=%s", v);
        cr_assert_eq(task_count_settled(base + sizes[k] - 1), base + sizes[k] - 1, "TILEC_NUM_THREADS=%s", v);
        device_name(name, sizeof name);
        snprintf(want, sizeof want, "(%d threads)", sizes[k]);
        cr_assert(strstr(name, want) != NULL, "%s for TILEC_NUM_THREADS=%s", name, v);
    }
    tilec_pdevice_t *D2 = NULL;
    cr_assert_eq(P->device_open(0, &D2), TILEC_PS_OK, "%s", P->last_error());
    tilec_pmem_t *args2[3];
    vadd_args(D2, args2);
    cr_assert_eq(vadd_check(D2, mod, args2), 0);
    cr_assert_eq(task_count_settled(base + 1), base + 1, "a second handle started its own threads");
    for (int i = 0; i < 3; i++)
        P->mem_free(D2, args2[i]);
    P->device_close(D2);
    cr_assert_eq(vadd_check(D, mod, args), 0, "the pool survives closing another handle");
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->device_close(D);
    D = NULL;
    cr_assert_eq(task_count_settled(base), base, "closing the last handle joins the workers");
    P->module_free(mod);
}

/* Unset or empty: the CPUs of the affinity mask. */
Test(cpu_pool, default_is_the_affinity_mask, .init = setup, .fini = teardown)
{
    cr_assert_eq(unsetenv("TILEC_NUM_THREADS"), 0);
    cpu_set_t all, one;
    cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
    char name[256], want[32];
    device_name(name, sizeof name);
    snprintf(want, sizeof want, "(%d threads)", CPU_COUNT(&all));
    cr_assert(strstr(name, want) != NULL, "%s, want %s", name, want);
    int first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
    cr_assert_eq(setenv("TILEC_NUM_THREADS", "", 1), 0);
    device_name(name, sizeof name);
    cr_assert(strstr(name, "(1 threads)") != NULL, "%s", name);
    tilec_pmodule_t *mod = vadd_module();
    tilec_pmem_t *args[3];
    vadd_args(D, args);
    int base = task_count();
    cr_assert_eq(vadd_check(D, mod, args), 0);
    cr_assert_eq(task_count(), base, "one CPU: no workers");
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
    sched_setaffinity(0, sizeof all, &all);
}

/* A value that is not a thread count fails the launch with a message that
 * names it (and the device name falls back to the default count). */
Test(cpu_pool, bad_values_are_errors, .init = setup, .fini = teardown)
{
    tilec_pmodule_t *mod = vadd_module();
    tilec_pmem_t *args[3];
    vadd_args(D, args);
    static const char *bad[] = {"0", "-2", "abc", "4x", "1.5", "99999", "99999999999999999999", " "};
    static const int64_t syms[1] = {FN};
    tilec_plaunch_t la = {.struct_size = sizeof la, .nargs = 3, .args = args, .nsyms = 1, .syms = syms};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        cr_assert_eq(setenv("TILEC_NUM_THREADS", bad[k], 1), 0);
        cr_assert_eq(P->launch(D, mod, &la), TILEC_PS_INVALID_ARGUMENT, "value \"%s\"", bad[k]);
        cr_assert(strstr(P->last_error(), "TILEC_NUM_THREADS") != NULL, "%s", P->last_error());
        char name[256];
        device_name(name, sizeof name);
        cr_assert(strstr(name, "threads)") != NULL, "%s", name);
    }
    cr_assert_eq(setenv("TILEC_NUM_THREADS", " 2 ", 1), 0); /* blanks around a number are fine */
    cr_assert_eq(vadd_check(D, mod, args), 0, "%s", P->last_error());
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(mod);
}
