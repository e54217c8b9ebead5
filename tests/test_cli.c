/*
 * tests/test_cli.c — the `tilec` command line as a user sees it
 * (docs/cli.md).
 *
 * Every test runs build/tilec (or $TILEC_BUILD_DIR/tilec) as a child process
 * with posix_spawn, its standard output and error captured in files of a
 * private temporary directory, and checks the exit status and the text.
 * The child's environment is ours minus every TILEC_* variable, plus a
 * private TILEC_CACHE_DIR (inside that directory), plus whatever the test
 * adds, plus TILEC_BACKEND=cpu unless the test sets it, so the caller's
 * settings (and a GPU that "auto" would pick) never change the results.
 *
 * The tests assume the working directory is the repository root (examples/
 * and tests/malformed/ are read from there) and that the broken test plugins
 * are built (make test builds them).  No test measures time.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilec/ir.h"
#include "tilec/plugin.h"
#include "tilec/tilec.h"
#include "npy.h"

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

static const char *build_dir(void)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    return b && *b ? b : "build";
}

static void setup(void)
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
static void remove_tree(const char *path, int depth)
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

static void teardown(void)
{
    if (work_dir[0]) {
        remove_tree(work_dir, 0);
    }
}

static char *slurp_fd(int fd, size_t *len)
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

static char *slurp_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
    char *s = slurp_fd(fd, len);
    close(fd);
    return s;
}

static int open_capture(const char *name)
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
static void spawn_to(proc_t *p, const char *prog, const char *const *env, const char *const *args,
                     const char *stdout_path);

static void spawn(proc_t *p, const char *prog, const char *const *env, const char *const *args)
{
    spawn_to(p, prog, env, args, NULL);
}

/* As spawn, with stdout going to stdout_path instead (when not NULL). */
static void spawn_to(proc_t *p, const char *prog, const char *const *env, const char *const *args,
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

static void run_tilec(proc_t *p, const char *const *env, const char *const *args)
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

static void proc_free(proc_t *p)
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

static void run_case(const cli_case_t *c)
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

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) {
        n += *s == '\n';
    }
    return n;
}

/* Copies line i (0-based) of s into a new string (without the newline). */
static char *line_at(const char *s, int i)
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
static double field(const char *line, const char *key)
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
static int has_caret_line(const char *s)
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

static int count_dir(const char *path, const char *prefix, const char *suffix)
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

/* ---- a small JSON reader (enough to check `devices --json`) ----------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype_t;

typedef struct jval {
    jtype_t type;
    double num;
    char *str;           /* J_STR */
    int n;               /* J_ARR, J_OBJ: number of items */
    char **keys;         /* J_OBJ */
    struct jval **items; /* J_ARR, J_OBJ */
} jval_t;

typedef struct jparser {
    const char *s;
    const char *err;
} jparser_t;

enum { JSON_MAX_DEPTH = 64 };

static void jfree(jval_t *v)
{
    if (!v) {
        return;
    }
    for (int i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys) {
            free(v->keys[i]);
        }
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static void jws(jparser_t *p)
{
    while (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r') {
        p->s++;
    }
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string at p->s (which is at the opening quote); escapes \uXXXX become
 * UTF-8 (surrogate pairs are not needed here: checked, kept as-is). */
static char *jstring(jparser_t *p)
{
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    p->s++;
    while (out && *p->s != '"') {
        unsigned c = (unsigned char)*p->s;
        if (!c || c < 0x20) {
            p->err = "control character or end of input in a string";
            free(out);
            return NULL;
        }
        if (n + 4 >= cap) {
            char *g = realloc(out, cap *= 2);
            if (!g) {
                free(out);
                return NULL;
            }
            out = g;
        }
        if (c >= 0x80) {
            /* JSON text is UTF-8: decode the sequence and check its range. */
            int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
            unsigned cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0f : c & 0x1f;
            for (int i = 1; i < len; i++) {
                unsigned b = (unsigned char)p->s[i];
                if ((b & 0xc0) != 0x80) {
                    len = 0;
                    break;
                }
                cp = cp << 6 | (b & 0x3f);
            }
            static const unsigned min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
            /* (The growth above leaves room for 4 more bytes.) */
            if (!len || cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
                p->err = "invalid UTF-8 in a string";
                free(out);
                return NULL;
            }
            memcpy(out + n, p->s, (size_t)len);
            n += (size_t)len;
            p->s += len;
            continue;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            p->s++;
            continue;
        }
        p->s++;
        switch (*p->s) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned u = 0;
            for (int i = 1; i <= 4; i++) {
                int h = hexval(p->s[i]);
                if (h < 0) {
                    p->err = "bad \\u escape";
                    free(out);
                    return NULL;
                }
                u = u * 16 + (unsigned)h;
            }
            p->s += 4;
            if (u < 0x80) {
                out[n++] = (char)u;
            } else if (u < 0x800) {
                out[n++] = (char)(0xc0 | (u >> 6));
                out[n++] = (char)(0x80 | (u & 0x3f));
            } else {
                out[n++] = (char)(0xe0 | (u >> 12));
                out[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
                out[n++] = (char)(0x80 | (u & 0x3f));
            }
            break;
        }
        default:
            p->err = "bad escape";
            free(out);
            return NULL;
        }
        p->s++;
    }
    if (!out) {
        p->err = "out of memory";
        return NULL;
    }
    out[n] = '\0';
    p->s++;
    return out;
}

static jval_t *jvalue(jparser_t *p, int depth);

static int jpush(jval_t *v, char *key, jval_t *item)
{
    jval_t **items = realloc(v->items, (size_t)(v->n + 1) * sizeof *items);
    if (!items) {
        return -1;
    }
    v->items = items;
    if (v->type == J_OBJ) {
        char **keys = realloc(v->keys, (size_t)(v->n + 1) * sizeof *keys);
        if (!keys) {
            return -1;
        }
        v->keys = keys;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    return 0;
}

/* An array or object: p->s is at '[' or '{'. */
static jval_t *jcontainer(jparser_t *p, int depth)
{
    int obj = *p->s == '{';
    char close = obj ? '}' : ']';
    jval_t *v = calloc(1, sizeof *v);
    if (!v) {
        p->err = "out of memory";
        return NULL;
    }
    v->type = obj ? J_OBJ : J_ARR;
    p->s++;
    jws(p);
    if (*p->s == close) {
        p->s++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        jws(p);
        if (obj) {
            if (*p->s != '"') {
                p->err = "object key is not a string";
                goto fail;
            }
            if (!(key = jstring(p))) {
                goto fail;
            }
            jws(p);
            if (*p->s != ':') {
                p->err = "missing ':' after a key";
                free(key);
                goto fail;
            }
            p->s++;
        }
        jval_t *item = jvalue(p, depth + 1);
        if (!item || jpush(v, key, item) != 0) {
            free(key);
            jfree(item);
            if (!p->err) {
                p->err = "out of memory";
            }
            goto fail;
        }
        jws(p);
        if (*p->s == ',') {
            p->s++;
            continue;
        }
        if (*p->s == close) {
            p->s++;
            return v;
        }
        p->err = obj ? "expected ',' or '}'" : "expected ',' or ']'";
        goto fail;
    }
fail:
    jfree(v);
    return NULL;
}

static jval_t *jvalue(jparser_t *p, int depth)
{
    if (depth > JSON_MAX_DEPTH) {
        p->err = "nested too deep";
        return NULL;
    }
    jws(p);
    if (*p->s == '{' || *p->s == '[') {
        return jcontainer(p, depth);
    }
    jval_t *v = calloc(1, sizeof *v);
    if (!v) {
        p->err = "out of memory";
        return NULL;
    }
    if (*p->s == '"') {
        v->type = J_STR;
        if (!(v->str = jstring(p))) {
            free(v);
            return NULL;
        }
        return v;
    }
    static const struct { const char *word; jtype_t type; double num; } words[] = {
        {"true", J_BOOL, 1}, {"false", J_BOOL, 0}, {"null", J_NULL, 0},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t len = strlen(words[i].word);
        if (!strncmp(p->s, words[i].word, len)) {
            v->type = words[i].type;
            v->num = words[i].num;
            p->s += len;
            return v;
        }
    }
    /* Number, with JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
    const char *s = p->s;
    if (*s == '-') {
        s++;
    }
    if (*s == '0') {
        s++;
    } else if (*s >= '1' && *s <= '9') {
        while (*s >= '0' && *s <= '9') {
            s++;
        }
    } else {
        p->err = "unexpected character";
        free(v);
        return NULL;
    }
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9')) {
            p->err = "digit expected after '.'";
            free(v);
            return NULL;
        }
        while (*s >= '0' && *s <= '9') {
            s++;
        }
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') {
            s++;
        }
        if (!(*s >= '0' && *s <= '9')) {
            p->err = "digit expected in exponent";
            free(v);
            return NULL;
        }
        while (*s >= '0' && *s <= '9') {
            s++;
        }
    }
    v->type = J_NUM;
    v->num = strtod(p->s, NULL);
    p->s = s;
    return v;
}

/* Parses a whole document; NULL (and *err) when it is not valid JSON. */
static jval_t *json_parse(const char *text, const char **err)
{
    jparser_t p = {text, NULL};
    jval_t *v = jvalue(&p, 0);
    if (v) {
        jws(&p);
        if (*p.s) {
            p.err = "trailing characters after the value";
            jfree(v);
            v = NULL;
        }
    }
    *err = p.err ? p.err : "";
    return v;
}

static const jval_t *jget(const jval_t *obj, const char *key)
{
    if (!obj || obj->type != J_OBJ) {
        return NULL;
    }
    for (int i = 0; i < obj->n; i++) {
        if (!strcmp(obj->keys[i], key)) {
            return obj->items[i];
        }
    }
    return NULL;
}

/* The string member key of obj, or "" when there is none (so a comparison
 * fails instead of crashing). */
static const char *jstr(const jval_t *obj, const char *key)
{
    const jval_t *v = jget(obj, key);
    return v && v->type == J_STR ? v->str : "";
}

/* The first plugin object with this path suffix (name can be shadowed). */
static const jval_t *plugin_by_file(const jval_t *arr, const char *file)
{
    for (int i = 0; arr && arr->type == J_ARR && i < arr->n; i++) {
        const char *path = jstr(arr->items[i], "path");
        size_t pl = strlen(path), fl = strlen(file);
        if (pl >= fl && !strcmp(path + pl - fl, file)) {
            return arr->items[i];
        }
    }
    return NULL;
}

Test(json, validator_accepts_and_rejects)
{
    static const char *good[] = {
        "[]", "{}", " [1, -2.5e3, 0, true, false, null, \"a\\\"b\\u00e9\"] ",
        "{\"a\": {\"b\": [[], {}]}, \"c\": \"\"}", "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]",
    };
    static const char *bad[] = {
        "", "[", "[1,]", "{\"a\" 1}", "{\"a\": 1,}", "[01]", "[1.]", "\"abc", "[\"a\nb\"]",
        "{1: 2}", "[1] 2", "[tru]", "[\"\\x\"]", "[-]",
        "[\"\xff\"]", "[\"\xc3\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *err;
        jval_t *v = json_parse(good[i], &err);
        cr_expect_not_null(v, "rejected valid JSON %s: %s", good[i], err);
        jfree(v);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *err;
        jval_t *v = json_parse(bad[i], &err);
        cr_expect_null(v, "accepted invalid JSON '%s'", bad[i]);
        jfree(v);
    }
    /* Depth is limited, not recursion without end. */
    char deep[JSON_MAX_DEPTH * 2 + 8];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    const char *err;
    cr_expect_null(json_parse(deep, &err));
}

/* ---- tilec run ----------------------------------------------------------- */

TestSuite(cli, .init = setup, .fini = teardown);

Test(cli, run_check_prints_one_pass_line)
{
    proc_t p;
    TILEC(&p, "run", "examples/gemm.py", "--check");
    EXPECT_STATUS(&p, 0);
    cr_assert_eq(count_lines(p.out), 1, "expected one line, got:\n%s", p.out);
    cr_assert(!strncmp(p.out, "PASS ", 5), "no PASS: %s", p.out);
    EXPECT_IN(p.out, "examples/gemm.py");
    EXPECT_IN(p.out, "backend=cpu");
    double abs_err = field(p.out, "max_abs_err"), rel_err = field(p.out, "max_rel_err");
    double fro = field(p.out, "rel_fro_err"), tol = field(p.out, "tol");
    cr_assert(isfinite(abs_err) && abs_err >= 0, "max_abs_err=%g", abs_err);
    cr_assert(isfinite(rel_err) && rel_err >= 0, "max_rel_err=%g", rel_err);
    /* gemm is float16: the 16-bit tolerance class, and it is met. */
    cr_assert_float_eq(tol, 1e-2, 1e-12);
    cr_assert_leq(fro, tol);
    EXPECT_IN(p.out, " seed=0");
    cr_assert_eq(p.err_len, 0, "unexpected stderr: %s", p.err);
    proc_free(&p);
}

Test(cli, run_check_fp32_uses_fp32_tolerance)
{
    proc_t p;
    TILEC(&p, "run", "examples/gemm_fp32.py", "--check");
    EXPECT_STATUS(&p, 0);
    cr_assert(!strncmp(p.out, "PASS ", 5), "%s", p.out);
    cr_assert_float_eq(field(p.out, "tol"), 1e-4, 1e-12);
    proc_free(&p);
}

Test(cli, seed_changes_inputs_and_still_passes)
{
    proc_t a, b, c;
    TILEC(&a, "run", "examples/gemm.py", "--check", "--seed", "0");
    TILEC(&b, "run", "examples/gemm.py", "--check", "--seed", "12345");
    TILEC(&c, "run", "examples/gemm.py", "--check", "--seed", "12345");
    EXPECT_STATUS(&a, 0);
    EXPECT_STATUS(&b, 0);
    EXPECT_STATUS(&c, 0);
    cr_assert(!strncmp(b.out, "PASS ", 5), "%s", b.out);
    EXPECT_IN(b.out, " seed=12345");
    /* The same seed names the same inputs: identical result line. */
    cr_assert_str_eq(b.out, c.out);
    /* Another seed: other inputs, so other errors (the seed= field aside). */
    char *sa = strstr(a.out, " seed="), *sb = strstr(b.out, " seed=");
    cr_assert(sa && sb);
    *sa = *sb = '\0';
    cr_assert_str_neq(a.out, b.out, "seed 0 and 12345 gave the same errors: %s", a.out);
    proc_free(&a);
    proc_free(&b);
    proc_free(&c);
}

Test(cli, run_without_check_prints_a_line)
{
    proc_t p;
    TILEC(&p, "run", "examples/gemm.py");
    EXPECT_STATUS(&p, 0);
    cr_assert_eq(count_lines(p.out), 1, "%s", p.out);
    cr_assert(!strncmp(p.out, "ran examples/gemm.py on cpu (", 29), "%s", p.out);
    EXPECT_IN(p.out, "): 3 tensors\n");
    cr_assert_null(strstr(p.out, "PASS"));
    proc_free(&p);
}

Test(cli, bench_prints_median_min_runs)
{
    proc_t p;
    TILEC(&p, "run", "examples/elementwise_add.py", "--check", "--bench");
    EXPECT_STATUS(&p, 0);
    cr_assert_eq(count_lines(p.out), 2, "%s", p.out);
    cr_assert(!strncmp(p.out, "PASS ", 5), "%s", p.out);
    char *line = line_at(p.out, 1);
    double median = -1, min = -1;
    int runs = -1, used = 0;
    int got = sscanf(line, "bench: median_ms=%lf min_ms=%lf runs=%d%n", &median, &min, &runs, &used);
    cr_assert_eq(got, 3, "bench line does not parse: '%s'", line);
    cr_assert_eq(line[used], '\0', "trailing text in '%s'", line);
    cr_assert_geq(runs, 10);
    cr_assert_leq(runs, 1000);
    cr_assert(isfinite(min) && min >= 0 && min <= median && isfinite(median), "%s", line);
    free(line);
    proc_free(&p);
}

/* broken_good's launch does nothing: every output keeps its random input,
 * which the interpreter overwrites, so the check must fail. */
Test(cli, check_fail_exits_1)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    TILEC_ENV(&p, ENV(path), "run", "examples/elementwise_add.py", "--backend", "broken_good", "--check");
    EXPECT_STATUS(&p, 1);
    cr_assert_eq(count_lines(p.out), 1, "%s", p.out);
    cr_assert(!strncmp(p.out, "FAIL ", 5), "%s", p.out);
    EXPECT_IN(p.out, "backend=broken_good");
    cr_assert_gt(field(p.out, "max_abs_err"), 0);
    field(p.out, "max_rel_err");
    cr_assert_gt(field(p.out, "rel_fro_err"), field(p.out, "tol"));
    EXPECT_IN(p.err, "tilec: tensor 'C' differs from the reference");
    /* Inputs are untouched by the kernel and by the interpreter alike. */
    cr_assert_null(strstr(p.err, "tensor 'A'"), "%s", p.err);
    proc_free(&p);
}

/* A named backend probes only its own plugin file (TILEC_PLUGIN_PATH holds
 * a dozen broken ones here, which a full scan forks a probe for each); a
 * name that matches nothing still gets the full scan's list of everything
 * found and why each was rejected. */
Test(cli, named_backend_scans_only_its_plugin)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    TILEC_ENV(&p, ENV(path, "TILEC_LOG=loader"), "run", "examples/elementwise_add.py", "--backend", "cpu");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.err, "looking for 'cpu' only");
    cr_assert_null(strstr(p.err, "broken_"), "a cpu context probed other plugins:\n%s", p.err);
    proc_free(&p);
    TILEC_ENV(&p, ENV(path, "TILEC_LOG=loader"), "run", "examples/elementwise_add.py", "--backend", "broken_good");
    EXPECT_STATUS(&p, 0);
    cr_assert_null(strstr(p.err, "broken_crashquery"), "%s", p.err);
    proc_free(&p);
    TILEC_ENV(&p, ENV(path), "run", "examples/elementwise_add.py", "--backend", "nosuch");
    EXPECT_STATUS(&p, 3);
    EXPECT_IN(p.err, "no backend 'nosuch'; found:");
    EXPECT_IN(p.err, "broken_crashquery");
    proc_free(&p);
}

/* ---- --check --reference BACKEND ---------------------------------------------- */

/* The reference computed on the cpu backend: PASS, and the line keeps every
 * field of the interpreter's line, in order, with reference=cpu appended. */
Test(cli, reference_cpu_passes_and_is_named_last)
{
    proc_t p;
    TILEC(&p, "run", "examples/gemm.py", "--check", "--reference", "cpu");
    EXPECT_STATUS(&p, 0);
    cr_assert_eq(count_lines(p.out), 1, "expected one line, got:\n%s", p.out);
    cr_assert(!strncmp(p.out, "PASS examples/gemm.py backend=cpu ", 34), "%s", p.out);
    static const char *const order[] = {" backend=", " max_abs_err=", " max_rel_err=", " rel_fro_err=",
                                        " tol=", " worst=", " seed=", " reference="};
    const char *prev = p.out;
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const char *at = strstr(p.out, order[i]);
        cr_assert(at && at > prev, "'%s' missing or out of order in: %s", order[i], p.out);
        prev = at;
    }
    size_t len = strlen(p.out);
    cr_assert(len > 15 && !strcmp(p.out + len - 15, " reference=cpu\n"), "%s", p.out);
    cr_assert_float_eq(field(p.out, "tol"), 1e-2, 1e-12);
    cr_assert_leq(field(p.out, "rel_fro_err"), field(p.out, "tol"));
    EXPECT_IN(p.out, " worst=C seed=0 ");
    cr_assert_eq(p.err_len, 0, "unexpected stderr: %s", p.err);
    proc_free(&p);

    /* Without --reference the line is unchanged: no reference field. */
    TILEC(&p, "run", "examples/gemm.py", "--check");
    EXPECT_STATUS(&p, 0);
    cr_assert_null(strstr(p.out, "reference="), "%s", p.out);
    proc_free(&p);
}

/* The defines, the entry's symbols and the seed reach the reference run:
 * a T.dynamic size that only -D gives, and another seed. */
Test(cli, reference_gets_the_same_defines_and_seed)
{
    proc_t p;
    TILEC(&p, "run", "examples/dynamic_shape.py", "-D", "m=77", "--check", "--seed", "7", "--reference",
          "cpu:0");
    EXPECT_STATUS(&p, 0);
    cr_assert(!strncmp(p.out, "PASS ", 5), "%s", p.out);
    EXPECT_IN(p.out, " seed=7 reference=cpu\n");
    proc_free(&p);
}

/* The reference really comes from the named backend: broken_good's launch
 * does nothing, so as the reference it makes a correct cpu run FAIL, and
 * against itself it PASSes with no error at all (the interpreter would fail
 * it, see check_fail_exits_1). */
Test(cli, reference_backend_is_really_used)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    TILEC_ENV(&p, ENV(path), "run", "examples/elementwise_add.py", "--backend", "cpu", "--check",
              "--reference", "broken_good");
    EXPECT_STATUS(&p, 1);
    cr_assert_eq(count_lines(p.out), 1, "%s", p.out);
    cr_assert(!strncmp(p.out, "FAIL examples/elementwise_add.py backend=cpu ", 45), "%s", p.out);
    EXPECT_IN(p.out, " reference=broken_good\n");
    cr_assert_gt(field(p.out, "rel_fro_err"), field(p.out, "tol"));
    EXPECT_IN(p.err, "tilec: tensor 'C' differs from the reference");
    cr_assert_null(strstr(p.err, "tensor 'A'"), "%s", p.err);
    proc_free(&p);

    TILEC_ENV(&p, ENV(path), "run", "examples/elementwise_add.py", "--backend", "broken_good", "--check",
              "--reference", "broken_good");
    EXPECT_STATUS(&p, 0);
    cr_assert(!strncmp(p.out, "PASS ", 5), "%s", p.out);
    EXPECT_IN(p.out, "backend=broken_good ");
    EXPECT_IN(p.out, " reference=broken_good\n");
    cr_assert_eq(field(p.out, "max_abs_err"), 0.0, "%s", p.out);
    proc_free(&p);
}

Test(cli, unknown_or_unavailable_reference_is_a_clear_error)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    TILEC(&p, "run", "examples/gemm.py", "--check", "--reference", "nosuchbackend");
    EXPECT_STATUS(&p, 3);
    EXPECT_IN(p.err, "tilec: reference backend 'nosuchbackend'");
    /* Then the context's own reason: what the loader found instead. */
    const char *why = strstr(p.err, "'nosuchbackend'");
    cr_assert(why && strstr(why + 1, "nosuchbackend") && strstr(why, "cpu"), "%s", p.err);
    cr_assert_eq(p.out_len, 0, "%s", p.out);
    proc_free(&p);

    TILEC_ENV(&p, ENV(path), "run", "examples/gemm.py", "--check", "--reference", "broken_unavailable");
    EXPECT_STATUS(&p, 3);
    EXPECT_IN(p.err, "reference backend 'broken_unavailable'");
    EXPECT_IN(p.err, "libwidget.so.1");
    cr_assert_eq(p.out_len, 0, "%s", p.out);
    proc_free(&p);

    TILEC(&p, "run", "examples/gemm.py", "--check", "--reference", "cpu:7");
    EXPECT_STATUS(&p, 3);
    EXPECT_IN(p.err, "reference backend 'cpu:7'");
    EXPECT_IN(p.err, " has ");
    proc_free(&p);
}

/* ---- exit status 2: bad programs and bad usage ------------------------------ */

Test(cli, malformed_programs_exit_2_with_diagnostic)
{
    static const char *const cases[] = {
        "async_def", "binary_garbage", "invalid_utf8", "deep_parens", "mismatched_bracket",
        "missing_colon_def", "lambda", "crlf_missing_colon", "int_overflow", "fstring",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char py[PATH_MAX], exp[PATH_MAX];
        snprintf(py, sizeof py, "tests/malformed/%s.py", cases[i]);
        snprintf(exp, sizeof exp, "tests/malformed/%s.expected", cases[i]);
        size_t len;
        char *want_all = slurp_file(exp, &len);
        char *want = line_at(want_all, 0);
        for (int cmd = 0; cmd < 2; cmd++) {
            proc_t p;
            if (cmd == 0) {
                TILEC(&p, "run", py, "--check");
            } else {
                TILEC(&p, "compile", py, "--emit", "ir");
            }
            EXPECT_STATUS(&p, 2);
            char *first = line_at(p.err, 0);
            cr_expect_str_eq(first, want, "%s: first line of stderr", py);
            cr_expect(has_caret_line(p.err), "%s: no caret line in:\n%s", py, p.err);
            cr_expect_eq(p.out_len, 0, "%s: stdout not empty: %s", py, p.out);
            free(first);
            proc_free(&p);
        }
        free(want);
        free(want_all);
    }
}

/* Every program of the malformed corpus: status 2 with a FILE:LINE:COL
 * diagnostic, never a crash.  The timeout only guards against a hang: 91
 * compiles took over 60 s on the shared 2-core machine at load 24. */
Test(cli, whole_malformed_corpus_exits_2, .timeout = 300)
{
    DIR *d = opendir("tests/malformed");
    cr_assert_not_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".py") != 0) {
            continue;
        }
        char py[PATH_MAX];
        snprintf(py, sizeof py, "tests/malformed/%s", e->d_name);
        proc_t p;
        TILEC(&p, "compile", py, "--emit", "ir");
        cr_expect_eq(p.status, 2, "%s: status %d\n%s", py, p.status, p.err);
        cr_expect(!strncmp(p.err, py, strlen(py)) && p.err[strlen(py)] == ':',
                  "%s: diagnostic does not start with the file name: %s", py, p.err);
        EXPECT_IN(p.err, ": error: ");
        proc_free(&p);
        n++;
    }
    closedir(d);
    cr_assert_gt(n, 10);
}

Test(cli, missing_file_names_file_and_os_error)
{
    proc_t p;
    TILEC(&p, "run", "examples/no_such_program.py", "--check");
    EXPECT_STATUS(&p, 2);
    EXPECT_IN(p.err, "examples/no_such_program.py");
    EXPECT_IN(p.err, strerror(ENOENT));
    cr_assert(!strncmp(p.err, "tilec: ", 7), "%s", p.err);
    proc_free(&p);

    TILEC(&p, "compile", "examples", "--emit", "ir");
    EXPECT_STATUS(&p, 2);
    EXPECT_IN(p.err, "examples");
    EXPECT_IN(p.err, strerror(EISDIR));
    proc_free(&p);
}

/* Usage errors: exit status 2, a message that names what was wrong, and
 * (where marked) nothing on stdout; after some, the corrected command,
 * which runs. */
static const cli_case_t usage_cases[] = {
    {{"run", "examples/gemm.py", "--reference", "cpu"}, .status = 2, .err = {"--reference", "add --check"},
     .quiet = 1},
    {{"compile", "examples/gemm.py", "--emit", "ir", "--reference", "cpu"}, .status = 2, .err = {"--reference"},
     .quiet = 1},
    {{"run", "examples/gemm.py", "--check", "--reference"}, .status = 2, .err = {"--reference needs a value"}},
    {{"run", "examples/gemm.py", "--frobnicate"}, .status = 2, .err = {"--frobnicate"}, .quiet = 1},
    {{"run", "examples/gemm.py", "--backend"}, .status = 2, .err = {"--backend", "value"}},
    {{"run", "examples/gemm.py", "examples/softmax.py"}, .status = 2, .err = {"examples/softmax.py"}},
    {{"frobnicate", "examples/gemm.py"}, .status = 2, .err = {"frobnicate"}},
    /* a missing FILE, or one where none belongs */
    {{"run"}, .status = 2, .err = {"FILE"}},
    {{"compile", "--emit", "ir"}, .status = 2, .err = {"FILE"}},
    {{"devices", "examples/gemm.py"}, .status = 2, .err = {"examples/gemm.py"}},
    /* -D without NAME=VALUE */
    {{"run", "examples/gemm.py", "-D", "block_M"}, .status = 2, .err = {"NAME=VALUE", "block_M"}},
    {{"run", "examples/gemm.py", "-D=64"}, .status = 2, .err = {"NAME=VALUE"}},
    {{"run", "examples/gemm.py", "-D"}, .status = 2, .err = {"-D"}},
    /* an unknown -D name lists the factory's parameters; a name given twice */
    {{"run", "examples/gemm.py", "-D", "blockM=32"}, .status = 2, .err = {"blockM", "block_M", "block_K", "dtype"},
     .quiet = 1},
    {{"run", "examples/gemm.py", "-Dblock_M=32", "-D", "block_M=16"}, .status = 2, .err = {"block_M", "twice"}},
    /* a -D value the program rejects */
    {{"run", "examples/gemm.py", "-D", "M=0"}, .status = 2, .err = {"examples/gemm.py:", "error:"}},
    {{"run", "examples/dynamic_shape.py", "-D", "m=-3"}, .status = 2, .err = {"'m'"}},
    /* a T.dynamic symbol needs a value; with it the program runs and checks */
    {{"run", "examples/dynamic_shape.py", "--check"}, .status = 2, .err = {"-D m=N", "'m'"}, .quiet = 1},
    {{"run", "examples/dynamic_shape.py", "-D", "m=77", "--check"}, .status = 0, .out = {"PASS "}},
    /* --emit */
    {{"compile", "examples/gemm.py", "--emit", "assembly"}, .status = 2, .err = {"assembly", "ir"}},
    {{"compile", "examples/gemm.py"}, .status = 2, .err = {"--emit"}},
    /* --entry names a kernel the file has */
    {{"run", "examples/gemm.py", "--entry", "nosuch_kernel"}, .status = 2, .err = {"nosuch_kernel", "matmul"}},
    {{"run", "examples/gemm.py", "--entry", "matmul", "--check"}, .status = 0, .out = {"PASS "}},
};

Test(cli, usage_errors_exit_2)
{
    RUN_CASES(usage_cases);
}

/* A T.dynamic value whose tensor size overflows the address space is
 * refused cleanly (it used to wrap around and crash). */
Test(cli, dynamic_symbol_too_large_does_not_crash)
{
    proc_t p;
    TILEC(&p, "run", "examples/dynamic_shape.py", "-D", "m=288230376151711744", "--check");
    cr_assert(p.status == 2 || p.status == 3, "status %d\n%s", p.status, p.err);
    cr_assert(!strncmp(p.err, "tilec: ", 7) || strstr(p.err, "error:"), "%s", p.err);
    EXPECT_IN(p.err, "'A'");
    proc_free(&p);
}

Test(cli, bad_seed_exits_2)
{
    static const char *const seeds[] = {"-1", " -1", "abc", "12x", "", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        proc_t p;
        TILEC(&p, "run", "examples/gemm.py", "--seed", seeds[i]);
        cr_expect_eq(p.status, 2, "--seed '%s': status %d\n%s", seeds[i], p.status, p.out);
        EXPECT_IN(p.err, "--seed");
        proc_free(&p);
    }
}

/* ---- exit status 3: backends ------------------------------------------------- */

/* Choosing a backend: --backend, TILEC_BACKEND (--backend wins) and the
 * plugins of TILEC_PLUGIN_PATH; an unknown or unavailable one exits 3 and
 * says what the loader found. */
static const cli_case_t backend_cases[] = {
    {{"run", "examples/gemm.py", "--backend", "nosuch"}, .status = 3, .err = {"nosuch", "cpu"}, .quiet = 1},
    /* with the broken plugins on the path the list names them, and why the
     * bad ones were rejected */
    {{"run", "examples/gemm.py", "--backend", "nosuch"}, .plugins = 1, .status = 3,
     .err = {"broken_good", "broken_unavailable", "rejected", "tilec_plugin_query"}},
    {{"run", "examples/gemm.py", "--backend", "broken_unavailable"}, .plugins = 1, .status = 3,
     .err = {"libwidget.so.1"}},
    {{"run", "examples/gemm.py"}, .env = {"TILEC_BACKEND=nosuch"}, .status = 3, .err = {"nosuch"}},
    {{"run", "examples/gemm.py", "--backend", "cpu"}, .env = {"TILEC_BACKEND=nosuch"}, .status = 0,
     .out = {" on cpu ("}},
    {{"run", "examples/gemm.py"}, .env = {"TILEC_BACKEND=broken_good"}, .plugins = 1, .status = 0,
     .out = {" on broken_good (broken test device)"}},
    {{"run", "examples/gemm.py", "--backend", "cpu", "--check"}, .env = {"TILEC_BACKEND=broken_good"},
     .plugins = 1, .status = 0, .out = {"backend=cpu"}},
    {{"run", "examples/gemm.py"}, .env = {"TILEC_BACKEND=cpu:7"}, .status = 3},
    /* auto: the first available GPU backend, else cpu; either way it runs */
    {{"run", "examples/softmax.py", "--check"}, .env = {"TILEC_BACKEND=auto"}, .status = 0, .out = {"PASS "}},
};

Test(cli, backend_choice)
{
    RUN_CASES(backend_cases);
}

Test(cli, device_index_out_of_range_exits_3)
{
    proc_t p;
    TILEC(&p, "run", "examples/gemm.py", "--backend", "cpu:7");
    EXPECT_STATUS(&p, 3);
    EXPECT_IN(p.err, "7");
    const char *has = strstr(p.err, " has ");
    cr_assert_not_null(has, "no device count in: %s", p.err);
    int count = -1;
    cr_assert_eq(sscanf(has, " has %d device", &count), 1, "%s", p.err);
    cr_assert(count >= 1 && count <= 7, "%s", p.err);
    proc_free(&p);

    TILEC(&p, "run", "examples/gemm.py", "--backend", "cpu:0", "--check");
    EXPECT_STATUS(&p, 0);
    proc_free(&p);
}

/* ---- tilec compile ----------------------------------------------------------- */

Test(cli, emit_ir_reads_back_identically)
{
    proc_t p;
    TILEC(&p, "compile", "examples/gemm.py", "--emit", "ir");
    EXPECT_STATUS(&p, 0);
    cr_assert(!strncmp(p.out, "tileir 1.", 9), "IR starts with: %.40s", p.out);
    tilec_arena_t a;
    tilec_arena_init(&a);
    tilec_ir_module_t *m = NULL;
    char err[256] = "";
    cr_assert_eq(tilec_ir_read(&a, p.out, p.out_len, &m, err, sizeof err), 0, "IR does not read: %s", err);
    char *again = tilec_ir_print(m);
    cr_assert_not_null(again);
    cr_assert_str_eq(again, p.out);
    free(again);
    tilec_arena_destroy(&a);

    /* -o writes the same text to the file, nothing to stdout. */
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/gemm.tileir", work_dir);
    proc_t q;
    TILEC(&q, "compile", "examples/gemm.py", "--emit", "ir", "-o", out);
    EXPECT_STATUS(&q, 0);
    cr_assert_eq(q.out_len, 0);
    size_t len;
    char *file = slurp_file(out, &len);
    cr_assert_str_eq(file, p.out);
    free(file);
    proc_free(&q);
    proc_free(&p);
}

Test(cli, emit_ir_needs_no_device)
{
    /* The IR comes out even when the backend named cannot run. */
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    TILEC_ENV(&p, ENV(path), "compile", "examples/softmax.py", "--emit", "ir", "--backend",
              "broken_unavailable");
    EXPECT_STATUS(&p, 0);
    cr_assert(!strncmp(p.out, "tileir 1.", 9), "%.40s", p.out);
    proc_free(&p);
}

Test(cli, define_changes_the_ir)
{
    proc_t a, b;
    TILEC(&a, "compile", "examples/gemm.py", "--emit", "ir");
    TILEC(&b, "compile", "examples/gemm.py", "--emit", "ir", "-D", "block_M=32");
    EXPECT_STATUS(&a, 0);
    EXPECT_STATUS(&b, 0);
    cr_assert_str_neq(a.out, b.out);
    EXPECT_IN(a.out, "alloc A_shared shared float16 [64, 32]");
    EXPECT_IN(b.out, "alloc A_shared shared float16 [32, 32]");
    cr_assert_null(strstr(b.out, "[64, 32]"), "%s", b.out);
    proc_free(&a);
    proc_free(&b);

    /* A T.dynamic symbol stays symbolic in the IR: the value is not baked in. */
    TILEC(&a, "compile", "examples/dynamic_shape.py", "--emit", "ir", "-D", "m=77");
    TILEC(&b, "compile", "examples/dynamic_shape.py", "--emit", "ir", "-D", "m=99");
    EXPECT_STATUS(&a, 0);
    EXPECT_STATUS(&b, 0);
    cr_assert_str_eq(a.out, b.out);
    cr_assert_null(strstr(a.out, "77"), "%s", a.out);
    proc_free(&a);
    proc_free(&b);
}

Test(cli, emit_source_is_c_code)
{
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/gemm.c", work_dir);
    proc_t p;
    TILEC(&p, "compile", "examples/gemm.py", "--backend", "cpu", "--emit", "source", "-o", out);
    EXPECT_STATUS(&p, 0);
    cr_assert_eq(p.out_len, 0);
    proc_free(&p);
    size_t len;
    char *src = slurp_file(out, &len);
    EXPECT_IN(src, "#include");
    EXPECT_IN(src, "matmul");
    free(src);
    /* It is C that the system compiler accepts. */
    const char *cc = "/usr/bin/cc";
    if (access(cc, X_OK) == 0) {
        proc_t c;
        spawn(&c, cc, NULL, (const char *const[]){"cc", "-std=c11", "-fsyntax-only", "-x", "c", out, NULL});
        cr_assert_eq(c.status, 0, "cc rejects the emitted source:\n%s", c.err);
        proc_free(&c);
    }
}

Test(cli, emit_binary_writes_a_shared_object)
{
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/gemm.so", work_dir);
    proc_t p;
    TILEC(&p, "compile", "examples/gemm.py", "--backend", "cpu", "--emit", "binary", "-o", out);
    EXPECT_STATUS(&p, 0);
    cr_assert_eq(p.out_len, 0);
    proc_free(&p);
    size_t len;
    char *bin = slurp_file(out, &len);
    cr_assert_gt(len, 64);
    cr_assert(!memcmp(bin, "\177ELF", 4), "no ELF magic");
    /* e_type at offset 16 (little-endian on the hosts we build on): ET_DYN. */
    unsigned e_type = (unsigned char)bin[16] | (unsigned)(unsigned char)bin[17] << 8;
    cr_assert_eq(e_type, 3, "e_type %u is not ET_DYN", e_type);
    free(bin);
}

Test(cli, emit_what_the_backend_lacks_exits_3)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    /* broken_good's "source" is the IR it was given... */
    TILEC_ENV(&p, ENV(path), "compile", "examples/softmax.py", "--backend", "broken_good", "--emit", "source");
    EXPECT_STATUS(&p, 0);
    cr_assert(!strncmp(p.out, "tileir 1.", 9), "%.40s", p.out);
    proc_free(&p);
    /* ...and it has no binary. */
    TILEC_ENV(&p, ENV(path), "compile", "examples/softmax.py", "--backend", "broken_good", "--emit", "binary");
    EXPECT_STATUS(&p, 3);
    EXPECT_IN(p.err, "broken_good");
    EXPECT_IN(p.err, "binary");
    cr_assert_eq(p.out_len, 0);
    proc_free(&p);
}

/* Plugin ABI 1.1 through the CLI: --emit lowered and --emit info. */
Test(cli, emit_lowered_and_info)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    /* broken_v11 lowers by prefixing the IR it got (re-labelled 1.1) */
    TILEC_ENV(&p, ENV(path), "compile", "examples/softmax.py", "--backend", "broken_v11", "--emit",
              "lowered");
    EXPECT_STATUS(&p, 0);
    cr_assert(!strncmp(p.out, "lowered: tileir 1.1\n", 20), "%.60s", p.out);
    proc_free(&p);
    TILEC_ENV(&p, ENV(path), "compile", "examples/softmax.py", "--backend", "broken_v11", "--emit",
              "info");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.out, "registers 7\n");
    EXPECT_IN(p.out, "spill_bytes unknown\n");
    proc_free(&p);
    /* a backend without lowering passes says so (exit 3); so does ABI 1.0 */
    TILEC(&p, "compile", "examples/softmax.py", "--backend", "cpu", "--emit", "lowered");
    EXPECT_STATUS(&p, 3);
    EXPECT_IN(p.err, "no lowered IR to show");
    cr_assert_eq(p.out_len, 0);
    proc_free(&p);
    TILEC_ENV(&p, ENV(path), "compile", "examples/softmax.py", "--backend", "broken_good", "--emit",
              "lowered");
    EXPECT_STATUS(&p, 3);
    EXPECT_IN(p.err, "ABI 1.0");
    proc_free(&p);
    /* the cpu backend knows the threads and its on-chip bytes */
    TILEC(&p, "compile", "examples/softmax.py", "--backend", "cpu", "--emit", "info");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.out, "registers unknown\n");
    cr_assert(strstr(p.out, "threads ") && !strstr(p.out, "\nthreads unknown"), "%s", p.out);
    proc_free(&p);
    TILEC(&p, "compile", "examples/softmax.py", "--emit", "nonsense");
    EXPECT_STATUS(&p, 2);
    EXPECT_IN(p.err, "lowered");
    proc_free(&p);
}

Test(cli, devices_shows_typed_properties)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    TILEC_ENV(&p, ENV(path), "devices");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.out, "arch broken-arch");
    EXPECT_IN(p.out, "arch native, subgroup 1");
    proc_free(&p);
    TILEC_ENV(&p, ENV(path), "devices", "--json");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.out, "\"arch\": \"broken-arch\"");
    EXPECT_IN(p.out, "\"ir\": \"1.1..1.1\"");
    EXPECT_IN(p.out, "\"subgroup_size\": 1,");
    proc_free(&p);
}

Test(cli, unwritable_output_exits_2)
{
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/no/such/dir/x.ir", work_dir);
    proc_t p;
    TILEC(&p, "compile", "examples/gemm.py", "--emit", "ir", "-o", out);
    EXPECT_STATUS(&p, 2);
    EXPECT_IN(p.err, out);
    EXPECT_IN(p.err, strerror(ENOENT));
    proc_free(&p);
}

/* Writes a program with two factories, "first" and "second", into work_dir. */
static void write_two_factories(char *path, size_t len)
{
    snprintf(path, len, "%s/two.py", work_dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    static const char *const names[] = {"first", "second"};
    fputs("import tilelang\nimport tilelang.language as T\n", f);
    for (int k = 0; k < 2; k++) {
        fprintf(f,
                "\n\ndef %s(N=64, block=32, dtype=\"float32\"):\n"
                "    @T.prim_func\n"
                "    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):\n"
                "        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:\n"
                "            for i in T.Parallel(block):\n"
                "                B[bx * block + i] = A[bx * block + i] * %d.0\n"
                "    return main\n",
                names[k], k + 2);
    }
    fclose(f);
}

Test(cli, entry_picks_the_factory)
{
    char py[PATH_MAX];
    write_two_factories(py, sizeof py);
    proc_t p;
    /* Default: the last factory of the file. */
    TILEC(&p, "compile", py, "--emit", "ir");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.out, "kernel second {");
    proc_free(&p);
    TILEC(&p, "compile", py, "--emit", "ir", "--entry", "first");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.out, "kernel first {");
    proc_free(&p);
    TILEC(&p, "run", py, "--entry", "first", "--check");
    EXPECT_STATUS(&p, 0);
    cr_assert(!strncmp(p.out, "PASS ", 5), "%s", p.out);
    proc_free(&p);
    TILEC(&p, "run", py, "--entry", "third");
    EXPECT_STATUS(&p, 2);
    EXPECT_IN(p.err, "third");
    EXPECT_IN(p.err, "first");
    EXPECT_IN(p.err, "second");
    proc_free(&p);
}

Test(cli, define_values_are_python_literals)
{
    /* A string with or without quotes is the same value. */
    proc_t a, b, c;
    TILEC(&a, "compile", "examples/gemm.py", "--emit", "ir", "-D", "dtype=float32");
    TILEC(&b, "compile", "examples/gemm.py", "--emit", "ir", "-D", "dtype=\"float32\"");
    TILEC(&c, "compile", "examples/gemm.py", "--emit", "ir");
    EXPECT_STATUS(&a, 0);
    EXPECT_STATUS(&b, 0);
    EXPECT_STATUS(&c, 0);
    cr_assert_str_eq(a.out, b.out);
    EXPECT_IN(a.out, "param A global float32 [200, 120]");
    EXPECT_IN(c.out, "param A global float16 [200, 120]");
    proc_free(&a);
    proc_free(&b);
    proc_free(&c);
    /* True/False, and the run checks. */
    TILEC(&a, "run", "examples/flash_attention.py", "-D", "causal=True", "--check");
    EXPECT_STATUS(&a, 0);
    cr_assert(!strncmp(a.out, "PASS ", 5), "%s", a.out);
    proc_free(&a);
    /* A string where an integer is needed is a program error. */
    TILEC(&a, "run", "examples/gemm.py", "-D", "M=abc");
    EXPECT_STATUS(&a, 2);
    EXPECT_IN(a.err, "examples/gemm.py:");
    proc_free(&a);
}

Test(cli, default_seed_is_zero)
{
    proc_t a, b;
    TILEC(&a, "run", "examples/softmax.py", "--check");
    TILEC(&b, "run", "examples/softmax.py", "--check", "--seed", "0");
    EXPECT_STATUS(&a, 0);
    EXPECT_STATUS(&b, 0);
    cr_assert_str_eq(a.out, b.out);
    proc_free(&a);
    proc_free(&b);
}

Test(cli, integer_program_checks_exactly)
{
    proc_t p;
    TILEC(&p, "run", "examples/gemm_int8.py", "--check");
    EXPECT_STATUS(&p, 0);
    cr_assert(!strncmp(p.out, "PASS ", 5), "%s", p.out);
    cr_assert_eq(field(p.out, "max_abs_err"), 0.0, "%s", p.out);
    proc_free(&p);
}

/* A result line that cannot be written is not a success. */
Test(cli, stdout_write_error_is_not_success)
{
    if (access("/dev/full", W_OK) != 0) {
        cr_skip_test("no /dev/full");
    }
    const char *args[][6] = {
        {tilec_bin, "run", "examples/softmax.py", "--check", NULL},
        {tilec_bin, "devices", "--json", NULL},
        {tilec_bin, "compile", "examples/softmax.py", "--emit", "ir", NULL},
    };
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        proc_t p;
        spawn_to(&p, tilec_bin, NULL, args[i], "/dev/full");
        cr_expect_eq(p.status, 2, "tilec %s > /dev/full: status %d\n%s", args[i][1], p.status, p.err);
        EXPECT_IN(p.err, "standard output");
        /* Said once. */
        cr_expect_eq(count_lines(p.err), 1, "%s", p.err);
        proc_free(&p);
    }
}

/* ---- tilec devices --------------------------------------------------------- */

Test(cli, devices_lists_cpu_ok)
{
    proc_t p;
    TILEC(&p, "devices");
    EXPECT_STATUS(&p, 0);
    int found = 0;
    for (int i = 0; i < count_lines(p.out); i++) {
        char *l = line_at(p.out, i);
        char name[64], state[64];
        if (sscanf(l, "%63s %63s", name, state) == 2 && !strcmp(name, "cpu") && !strcmp(state, "ok")) {
            found = 1;
            char *dev = line_at(p.out, i + 1);
            cr_assert(!strncmp(dev, "    cpu:0  ", 11), "no cpu:0 device line: '%s'", dev);
            free(dev);
        }
        free(l);
    }
    cr_assert(found, "no 'cpu ok' line in:\n%s", p.out);
    proc_free(&p);
}

Test(cli, devices_json_is_valid_and_lists_broken_plugins)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    TILEC_ENV(&p, ENV(path), "devices", "--json");
    EXPECT_STATUS(&p, 0);
    const char *err;
    jval_t *doc = json_parse(p.out, &err);
    cr_assert_not_null(doc, "devices --json is not JSON (%s):\n%s", err, p.out);
    cr_assert_eq(doc->type, J_ARR);
    /* Every entry has the documented fields. */
    for (int i = 0; i < doc->n; i++) {
        static const char *const keys[] = {"name", "path", "state", "reason", "vendor", "version", "abi"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const jval_t *v = jget(doc->items[i], keys[k]);
            cr_expect(v && v->type == J_STR, "entry %d has no string '%s'", i, keys[k]);
        }
        const jval_t *devs = jget(doc->items[i], "devices");
        cr_expect(devs && devs->type == J_ARR, "entry %d has no devices array", i);
    }
    static const char *const rejected[] = {
        "notplugin", "nosymbol", "nulltable", "noversion", "smallstruct",
        "badabi", "badname", "nullentry", "crashquery",
    };
    for (size_t i = 0; i < sizeof rejected / sizeof rejected[0]; i++) {
        char file[96];
        snprintf(file, sizeof file, "/libtilec-broken_%s.so", rejected[i]);
        const jval_t *pl = plugin_by_file(doc, file);
        cr_expect_not_null(pl, "%s not listed", file);
        if (pl) {
            const char *state = jstr(pl, "state"), *reason = jstr(pl, "reason");
            cr_expect_str_eq(state, "rejected", "%s: state %s", file, state);
            cr_expect(*reason, "%s: no reason", file);
        }
    }
    const jval_t *good = plugin_by_file(doc, "/libtilec-broken_good.so");
    cr_assert_not_null(good);
    cr_expect_str_eq(jstr(good, "state"), "ok");
    cr_expect_str_eq(jstr(good, "name"), "broken_good");
    const jval_t *gdevs = jget(good, "devices");
    cr_assert(gdevs && gdevs->type == J_ARR && gdevs->n == 1);
    cr_expect_str_eq(jstr(gdevs->items[0], "id"), "broken_good:0");
    cr_expect_str_eq(jstr(gdevs->items[0], "name"), "broken test device");
    const jval_t *cu = jget(gdevs->items[0], "compute_units");
    cr_expect(cu && cu->type == J_NUM && cu->num == 1);

    const jval_t *unav = plugin_by_file(doc, "/libtilec-broken_unavailable.so");
    cr_assert_not_null(unav);
    cr_expect_str_eq(jstr(unav, "state"), "unavailable");
    cr_expect(strstr(jstr(unav, "reason"), "libwidget.so.1") != NULL);

    const jval_t *shadow = plugin_by_file(doc, "/libtilec-broken_shadow.so");
    cr_assert_not_null(shadow);
    cr_expect_str_eq(jstr(shadow, "state"), "shadowed");

    /* The embedded cpu backend is there and has a device. */
    int cpu_ok = 0;
    for (int i = 0; i < doc->n; i++) {
        const jval_t *e = doc->items[i];
        const jval_t *devs = jget(e, "devices");
        if (!strcmp(jstr(e, "name"), "cpu") && !strcmp(jstr(e, "state"), "ok") && devs && devs->n >= 1) {
            cpu_ok = 1;
            cr_expect_str_eq(jstr(devs->items[0], "id"), "cpu:0");
        }
    }
    cr_expect(cpu_ok, "no cpu plugin in state ok");
    jfree(doc);
    proc_free(&p);
}

/* File names can hold any byte; the JSON stays valid (escaped, UTF-8). */
Test(cli, devices_json_survives_odd_file_names)
{
    static const char *const names[] = {
        "libtilec-q\"uote.so", "libtilec-back\\slash.so", "libtilec-new\nline.so",
        "libtilec-bad\xff\xfeutf8.so", "libtilec-caf\xc3\xa9.so",
    };
    char dir[PATH_MAX], file[PATH_MAX + 64], env[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/odd", work_dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(file, sizeof file, "%s/%s", dir, names[i]);
        FILE *f = fopen(file, "w");
        cr_assert_not_null(f, "%s: %s", file, strerror(errno));
        fputs("not a plugin\n", f);
        fclose(f);
    }
    snprintf(env, sizeof env, "TILEC_PLUGIN_PATH=%s", dir);
    proc_t p;
    TILEC_ENV(&p, ENV(env), "devices", "--json");
    EXPECT_STATUS(&p, 0);
    const char *err;
    jval_t *doc = json_parse(p.out, &err);
    cr_assert_not_null(doc, "not JSON (%s):\n%s", err, p.out);
    int rejected = 0;
    for (int i = 0; i < doc->n; i++) {
        const char *path = jstr(doc->items[i], "path");
        if (!strncmp(path, dir, strlen(dir))) {
            cr_expect_str_eq(jstr(doc->items[i], "state"), "rejected");
            rejected++;
        }
    }
    cr_expect_eq(rejected, 5, "%s", p.out);
    /* What is valid survives unchanged. */
    cr_expect_not_null(plugin_by_file(doc, "/libtilec-q\"uote.so"));
    cr_expect_not_null(plugin_by_file(doc, "/libtilec-back\\slash.so"));
    cr_expect_not_null(plugin_by_file(doc, "/libtilec-new\nline.so"));
    cr_expect_not_null(plugin_by_file(doc, "/libtilec-caf\xc3\xa9.so"));
    jfree(doc);
    proc_free(&p);

    /* The text listing names them too, one entry per plugin. */
    TILEC_ENV(&p, ENV(env), "devices");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.out, "libtilec-q\"uote.so");
    proc_free(&p);
}

Test(cli, devices_text_shows_rejected_reasons)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    TILEC_ENV(&p, ENV(path), "devices");
    EXPECT_STATUS(&p, 0);
    int rejected = 0;
    for (int i = 0; i < count_lines(p.out); i++) {
        char *l = line_at(p.out, i);
        char name[128], state[64];
        if (sscanf(l, "%127s %63s", name, state) == 2 && !strcmp(state, "rejected")) {
            rejected++;
            EXPECT_IN(l, "libtilec-");
            EXPECT_IN(l, ".so: ");
        }
        free(l);
    }
    cr_assert_geq(rejected, 9, "%s", p.out);
    EXPECT_IN(p.out, "broken_unavailable");
    EXPECT_IN(p.out, "libwidget.so.1 not found");
    EXPECT_IN(p.out, "shadowed");
    proc_free(&p);
}

/* ---- environment: TILEC_LOG, TILEC_CACHE ------------------------------------ */

Test(cli, log_ir_dumps_passes)
{
    proc_t p;
    TILEC_ENV(&p, ENV("TILEC_LOG=ir"), "run", "examples/softmax.py", "--check");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.err, "== after ");
    EXPECT_IN(p.err, "tileir 1.");
    cr_assert(!strncmp(p.out, "PASS ", 5), "tracing must not touch stdout: %s", p.out);
    proc_free(&p);

    /* Without TILEC_LOG, nothing on stderr. */
    TILEC(&p, "run", "examples/softmax.py", "--check");
    EXPECT_STATUS(&p, 0);
    cr_assert_eq(p.err_len, 0, "%s", p.err);
    proc_free(&p);
}

Test(cli, log_loader_traces)
{
    proc_t p;
    TILEC_ENV(&p, ENV("TILEC_LOG=loader"), "devices");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.err, "tilec[loader]");
    EXPECT_IN(p.err, "tilec_plugin_query");
    cr_assert_null(strstr(p.err, "tilec[compile]"), "%s", p.err);
    proc_free(&p);

    TILEC_ENV(&p, ENV("TILEC_LOG=loader,compile"), "run", "examples/softmax.py");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.err, "tilec[loader]");
    EXPECT_IN(p.err, "tilec[compile]");
    proc_free(&p);
}

Test(cli, cache_disabled_writes_nothing)
{
    proc_t p;
    TILEC_ENV(&p, ENV("TILEC_CACHE=0", "TILEC_LOG=compile"), "run", "examples/softmax.py", "--check");
    EXPECT_STATUS(&p, 0);
    cr_assert_null(strstr(p.err, "cache hit"), "%s", p.err);
    proc_free(&p);
    TILEC_ENV(&p, ENV("TILEC_CACHE=0", "TILEC_LOG=compile"), "run", "examples/softmax.py", "--check");
    EXPECT_STATUS(&p, 0);
    cr_assert_null(strstr(p.err, "cache hit"), "%s", p.err);
    proc_free(&p);
    cr_assert_eq(count_dir(cache_dir, NULL, NULL), 0, "TILEC_CACHE=0 wrote into %s", cache_dir);
}

Test(cli, second_run_hits_the_cache)
{
    proc_t p;
    TILEC_ENV(&p, ENV("TILEC_LOG=compile"), "run", "examples/softmax.py", "--check");
    EXPECT_STATUS(&p, 0);
    cr_assert_null(strstr(p.err, "cache hit"), "a fresh cache cannot hit:\n%s", p.err);
    proc_free(&p);
    cr_assert_eq(count_dir(cache_dir, "cpu-", ".so"), 1);

    TILEC_ENV(&p, ENV("TILEC_LOG=compile"), "run", "examples/softmax.py", "--check");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.err, "cache hit");
    cr_assert(!strncmp(p.out, "PASS ", 5), "%s", p.out);
    proc_free(&p);
    cr_assert_eq(count_dir(cache_dir, "cpu-", ".so"), 1);

    /* Another -D is another kernel: another entry. */
    TILEC(&p, "run", "examples/gemm.py", "-D", "block_M=32");
    EXPECT_STATUS(&p, 0);
    proc_free(&p);
    cr_assert_eq(count_dir(cache_dir, "cpu-", ".so"), 2);
}

/* ---- help and version ---------------------------------------------------- */

Test(cli, help_and_version)
{
    proc_t p;
    TILEC(&p, "--help");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.out, "usage");
    EXPECT_IN(p.out, "tilec run FILE");
    EXPECT_IN(p.out, "tilec compile FILE");
    EXPECT_IN(p.out, "tilec devices");
    EXPECT_IN(p.out, "TILEC_BACKEND");
    proc_free(&p);

    const char *none[] = {tilec_bin, NULL};
    spawn(&p, tilec_bin, NULL, none);
    EXPECT_STATUS(&p, 2);
    EXPECT_IN(p.err, "usage");
    cr_assert_eq(p.out_len, 0);
    proc_free(&p);

    TILEC(&p, "--version");
    EXPECT_STATUS(&p, 0);
    char want[128];
    snprintf(want, sizeof want, "tilec %s (plugin ABI %u.%u, tile IR %d.%d)\n", TILEC_VERSION_STRING,
             TILEC_ABI_MAJOR(TILEC_PLUGIN_ABI_VERSION), TILEC_ABI_MINOR(TILEC_PLUGIN_ABI_VERSION),
             TILEC_IR_VERSION_MAJOR, TILEC_IR_VERSION_MINOR);
    cr_assert_str_eq(p.out, want);
    proc_free(&p);
}

/* --input NAME=F.npy sets a tensor's contents, --output NAME=F.npy saves the
 * result (tests/lang/tvm_helpers.py computes B = 3 * A) */
Test(cli, run_input_and_output_npy)
{
    proc_t p;
    char a[64], b[64], err[256];
    float in[8], out[8];
    int64_t shape[1] = {8}, bad[1] = {7};
    snprintf(a, sizeof a, "/tmp/tilec_cli_a_%d.npy", (int)getpid());
    snprintf(b, sizeof b, "/tmp/tilec_cli_b_%d.npy", (int)getpid());
    for (int i = 0; i < 8; i++) in[i] = (float)i - 2.5f;
    cr_assert_eq(tilec_npy_write(a, TILEC_ELEM_FLOAT32, 1, shape, in, sizeof in, err, sizeof err), 0, "%s", err);
    char ain[80], bout[80];
    snprintf(ain, sizeof ain, "A=%s", a);
    snprintf(bout, sizeof bout, "B=%s", b);
    TILEC(&p, "run", "tests/lang/tvm_helpers.py", "--input", ain, "--output", bout, "--check");
    EXPECT_STATUS(&p, 0);
    proc_free(&p);
    cr_assert_eq(tilec_npy_read(b, TILEC_ELEM_FLOAT32, 1, shape, out, sizeof out, err, sizeof err), 0, "%s", err);
    for (int i = 0; i < 8; i++) cr_expect_eq(out[i], 3 * in[i], "B[%d] = %g", i, (double)out[i]);
    /* an unknown tensor lists the kernel's; a file of another shape says both */
    TILEC(&p, "run", "tests/lang/tvm_helpers.py", "--input", "Q=x.npy");
    EXPECT_STATUS(&p, 2);
    EXPECT_IN(p.err, "the kernel has no tensor 'Q'; its tensors are: A B");
    proc_free(&p);
    cr_assert_eq(tilec_npy_write(a, TILEC_ELEM_FLOAT32, 1, bad, in, 7 * sizeof(float), err, sizeof err), 0, "%s", err);
    TILEC(&p, "run", "tests/lang/tvm_helpers.py", "--input", ain);
    EXPECT_STATUS(&p, 2);
    EXPECT_IN(p.err, "shape (7,) does not match the tensor's (8,)");
    proc_free(&p);
    TILEC(&p, "run", "tests/lang/tvm_helpers.py", "--input", "A");
    EXPECT_STATUS(&p, 2);
    EXPECT_IN(p.err, "--input expects NAME=FILE.npy");
    proc_free(&p);
    unlink(a);
    unlink(b);
}
