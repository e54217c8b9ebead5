/*
 * tests/cli_harness.h — running `tilec` as a child process for the CLI
 * tests (test_cli.c, test_cli_devices.c): a private work and cache
 * directory per test, the child's output captured, the ENV/TILEC/EXPECT
 * macros and the table-driven cases.  test_cli.c's opening comment says
 * what the child's environment is.
 */
#ifndef TILEC_TESTS_CLI_HARNESS_H
#define TILEC_TESTS_CLI_HARNESS_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- running the CLI ------------------------------------------------------ */

typedef struct proc {
    int status;   /* exit status; 128 + signal number when killed */
    char *out;    /* captured stdout, NUL-terminated (malloc'd) */
    char *err;    /* captured stderr, NUL-terminated (malloc'd) */
    size_t out_len, err_len;
} proc_t;

static char work_dir[64];         /* per test: mkdtemp, removed by teardown */
static char cache_dir[PATH_MAX];  /* work_dir/cache: the children's TILEC_CACHE_DIR */
static char tilec_bin[PATH_MAX];
static char plugin_dir[PATH_MAX]; /* absolute build/tests/plugins */

static inline const char *build_dir(void)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    return b && *b ? b : "build";
}

static inline void setup(void)
{
    char tmpl[] = "/tmp/tilec-cli-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl), "mkdtemp: %s", strerror(errno));
    snprintf(work_dir, sizeof work_dir, "%s", tmpl);
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", work_dir);
    cr_assert_eq(mkdir(cache_dir, 0700), 0, "mkdir %s: %s", cache_dir, strerror(errno));
    snprintf(tilec_bin, sizeof tilec_bin, "%s/tilec", build_dir());
    cr_assert_eq(access(tilec_bin, X_OK), 0, "%s is not built: %s", tilec_bin, strerror(errno));
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s/tests/plugins", build_dir());
    if (!realpath(rel, plugin_dir)) {
        snprintf(plugin_dir, sizeof plugin_dir, "%s", rel);
    }
}

/* Removes a directory tree (work_dir holds at most two levels). */
static inline void remove_tree(const char *path, int depth)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
                continue;
            }
            char sub[PATH_MAX];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            struct stat st;
            if (depth < 4 && lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
                remove_tree(sub, depth + 1);
            } else {
                unlink(sub);
            }
        }
        closedir(d);
    }
    rmdir(path);
}

static inline void teardown(void)
{
    if (work_dir[0]) {
        remove_tree(work_dir, 0);
    }
}

static inline char *slurp_fd(int fd, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    lseek(fd, 0, SEEK_SET);
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        n += (size_t)r;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static inline char *slurp_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
    char *s = slurp_fd(fd, len);
    close(fd);
    return s;
}

static inline int open_capture(const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", work_dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
    return fd;
}

/* Runs PROG (a path) with args (NULL-terminated, args[0] is argv[0]) and the
 * environment described above, plus env (NULL-terminated "NAME=VALUE"
 * entries; may be NULL). */
static inline void spawn_to(proc_t *p, const char *prog, const char *const *env, const char *const *args,
                     const char *stdout_path);

static inline void spawn(proc_t *p, const char *prog, const char *const *env, const char *const *args)
{
    spawn_to(p, prog, env, args, NULL);
}

/* As spawn, with stdout going to stdout_path instead (when not NULL). */
static inline void spawn_to(proc_t *p, const char *prog, const char *const *env, const char *const *args,
                     const char *stdout_path)
{
    size_t nenv = 0, nextra = 0;
    while (environ[nenv]) {
        nenv++;
    }
    while (env && env[nextra]) {
        nextra++;
    }
    char **envp = calloc(nenv + nextra + 3, sizeof *envp);
    cr_assert_not_null(envp);
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) {
        if (strncmp(environ[i], "TILEC_", 6) != 0) {
            envp[k++] = environ[i];
        }
    }
    char cache_var[PATH_MAX + 32];
    snprintf(cache_var, sizeof cache_var, "TILEC_CACHE_DIR=%s", cache_dir);
    envp[k++] = cache_var;
    /* The cpu backend unless the test says otherwise: on a machine with a
     * GPU, "auto" would pick it, and these tests are about the CLI. */
    int has_backend = 0;
    for (size_t i = 0; i < nextra; i++) {
        envp[k++] = (char *)env[i];
        has_backend |= !strncmp(env[i], "TILEC_BACKEND=", 14);
    }
    if (!has_backend) {
        envp[k++] = (char *)"TILEC_BACKEND=cpu";
    }
    envp[k] = NULL;

    int out_fd = open_capture("stdout"), err_fd = open_capture("stderr");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (stdout_path) {
        posix_spawn_file_actions_addopen(&fa, 1, stdout_path, O_WRONLY, 0);
    } else {
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    }
    posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
    pid_t pid;
    int rc = posix_spawn(&pid, prog, &fa, NULL, (char *const *)args, envp);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    cr_assert_eq(rc, 0, "posix_spawn %s: %s", prog, strerror(rc));
    int ws;
    while (waitpid(pid, &ws, 0) < 0) {
        cr_assert_eq(errno, EINTR, "waitpid: %s", strerror(errno));
    }
    p->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    p->out = slurp_fd(out_fd, &p->out_len);
    p->err = slurp_fd(err_fd, &p->err_len);
    close(out_fd);
    close(err_fd);
}

static inline void run_tilec(proc_t *p, const char *const *env, const char *const *args)
{
    size_t n = 0;
    while (args[n]) {
        n++;
    }
    const char **argv = calloc(n + 2, sizeof *argv);
    cr_assert_not_null(argv);
    argv[0] = tilec_bin;
    memcpy(argv + 1, args, n * sizeof *argv);
    spawn(p, tilec_bin, env, argv);
    free(argv);
}

static inline void proc_free(proc_t *p)
{
    free(p->out);
    free(p->err);
    memset(p, 0, sizeof *p);
}

/* TILEC(&p, "run", "x.py") and TILEC_ENV(&p, ENV("A=1"), "run", ...). */
#define ENV(...) ((const char *const[]){__VA_ARGS__, NULL})
#define TILEC(p, ...) run_tilec((p), NULL, (const char *const[]){__VA_ARGS__, NULL})
#define TILEC_ENV(p, env, ...) run_tilec((p), (env), (const char *const[]){__VA_ARGS__, NULL})

/* Asserts the exit status, showing what the child said when it differs. */
#define EXPECT_STATUS(p, want) \
    cr_assert_eq((p)->status, (want), "exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s", \
                 (p)->status, (want), (p)->out, (p)->err)

#define EXPECT_IN(hay, needle) \
    cr_assert_not_null(strstr((hay), (needle)), "expected '%s' in:\n%s", (needle), (hay))

/* One command line and what it must give, for the tables of cases: the
 * exit status, strings that stderr and stdout must contain, and whether
 * stdout must stay empty.  plugins adds TILEC_PLUGIN_PATH=<the broken test
 * plugins>. */
typedef struct cli_case {
    const char *args[12]; /* NULL-terminated */
    const char *env[3];
    int plugins;
    int status;
    const char *err[5];
    const char *out[2];
    int quiet;
} cli_case_t;

static inline void run_case(const cli_case_t *c)
{
    char path[PATH_MAX + 32], cmd[512];
    const char *env[5];
    size_t ne = 0, used = 0;
    if (c->plugins) {
        snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
        env[ne++] = path;
    }
    for (size_t i = 0; i < 3 && c->env[i]; i++) {
        env[ne++] = c->env[i];
    }
    env[ne] = NULL;
    cmd[0] = '\0';
    for (size_t i = 0; c->args[i] && used < sizeof cmd; i++) {
        used += (size_t)snprintf(cmd + used, sizeof cmd - used, " %s", c->args[i]);
    }
    proc_t p;
    run_tilec(&p, env, c->args);
    cr_expect_eq(p.status, c->status, "tilec%s: exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s", cmd,
                 p.status, c->status, p.out, p.err);
    for (size_t i = 0; i < 5 && c->err[i]; i++) {
        cr_expect_not_null(strstr(p.err, c->err[i]), "tilec%s: expected '%s' in stderr:\n%s", cmd, c->err[i], p.err);
    }
    for (size_t i = 0; i < 2 && c->out[i]; i++) {
        cr_expect_not_null(strstr(p.out, c->out[i]), "tilec%s: expected '%s' in stdout:\n%s", cmd, c->out[i], p.out);
    }
    cr_expect(!c->quiet || p.out_len == 0, "tilec%s: stdout not empty:\n%s", cmd, p.out);
    proc_free(&p);
}

#define RUN_CASES(table)                                                                                       \
    for (size_t case_ = 0; case_ < sizeof(table) / sizeof(table)[0]; case_++)                                  \
    run_case(&(table)[case_])

static inline int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) {
        n += *s == '\n';
    }
    return n;
}

/* Copies line i (0-based) of s into a new string (without the newline). */
static inline char *line_at(const char *s, int i)
{
    for (; i > 0 && s; i--) {
        s = strchr(s, '\n');
        s = s ? s + 1 : NULL;
    }
    if (!s) {
        return strdup("");
    }
    size_t n = strcspn(s, "\n");
    return strndup(s, n);
}

/* Value of "KEY=<number>" in a result line. */
static inline double field(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *f = strstr(line, pat);
    cr_assert_not_null(f, "no %s= in '%s'", key, line);
    char *end;
    double v = strtod(f + strlen(pat), &end);
    cr_assert(end != f + strlen(pat) && (*end == ' ' || *end == '\n' || !*end),
              "%s= is not a number in '%s'", key, line);
    return v;
}

/* Does some line of s consist of blanks then a caret? */
static inline int has_caret_line(const char *s)
{
    for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *c = l;
        while (*c == ' ' || *c == '\t') {
            c++;
        }
        if (*c == '^') {
            return 1;
        }
    }
    return 0;
}

static inline int count_dir(const char *path, const char *prefix, const char *suffix)
{
    int n = 0;
    DIR *d = opendir(path);
    cr_assert_not_null(d, "opendir %s: %s", path, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
            continue;
        }
        if (prefix && strncmp(e->d_name, prefix, strlen(prefix)) != 0) {
            continue;
        }
        if (suffix && (len < sl || strcmp(e->d_name + len - sl, suffix) != 0)) {
            continue;
        }
        n++;
    }
    closedir(d);
    return n;
}


#endif
