/*
 * conformance/main.c — the `tilec conform` command: option parsing, picking
 * the plugin file, assembling the item list (cases, ABI cases, loader
 * cases), running it and writing the reports and the certificate.
 *
 *   tilec conform [--backend NAME | --plugin PATH] [--device N]
 *                 [--junit FILE] [--json FILE] [--cert FILE | --no-cert]
 *                 [--cases DIR] [--known-failures FILE] [--broken-dir DIR]
 *                 [--no-abi] [--timeout SECONDS] [-j N] [--seed N]
 *                 [--filter TEXT] [-v] [--compile-only --arch A,...]
 *   tilec conform --verify CERT (--plugin PATH | --backend NAME)
 *
 * Exit status: 0 every result was expected (pass, not-supported, a listed
 * known failure); 1 otherwise (or --verify found the certificate invalid);
 * 2 usage; 3 the plugin could not be loaded.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conform.h"

static const char conform_usage[] =
    "usage: tilec conform [--backend NAME | --plugin PATH] [--device N] [--junit FILE] [--json FILE]\n"
    "                     [--cert FILE | --no-cert] [--cases DIR] [--known-failures FILE]\n"
    "                     [--broken-dir DIR] [--no-abi] [--timeout S] [-j N] [--seed N] [--filter TEXT] [-v]\n"
    "                     [--compile-only --arch A,...]\n"
    "       tilec conform --verify CERT (--plugin PATH | --backend NAME)\n";

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "tilec conform: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", conform_usage);
    return 2;
}

static int is_dir(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Directory of the running executable (malloc'd), NULL when unknown. */
static char *exe_dir(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) {
        return NULL;
    }
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash) {
        return NULL;
    }
    *slash = '\0';
    return strdup(buf);
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);
    if (s) {
        snprintf(s, n, "%s/%s", a, b);
    }
    return s;
}

/* The plugin file behind backend name (malloc'd).  The embedded cpu
 * backend is certified through its plugin build, the same sources built
 * as libtilec-cpu.so, which the loader lists as shadowed by it. */
static char *backend_file_here(const char *name, char **err)
{
    tilec_plugin_desc_t *l = NULL;
    int n = 0;
    char *path = NULL;
    *err = NULL;
    if (tilec_plugins_list(&l, &n) != TILEC_OK) {
        *err = strdup("cannot list plugins");
        return NULL;
    }
    int embedded = 0;
    for (int i = 0; i < n && !path; i++) {
        if (strcmp(l[i].name, name) != 0 || l[i].state == TILEC_PLUGIN_REJECTED) {
            continue;
        }
        if (!strcmp(l[i].path, "(embedded)")) {
            embedded = 1;
            continue;
        }
        if (l[i].state == TILEC_PLUGIN_OK || embedded || l[i].state == TILEC_PLUGIN_SHADOWED) {
            path = strdup(l[i].path);
        }
    }
    if (path && embedded) {
        fprintf(stderr,
                "tilec conform: '%s' is embedded in libtilec; certifying its plugin build %s "
                "(the same sources)\n",
                name, path);
    }
    if (!path) {
        size_t len = strlen(name) + 200;
        *err = malloc(len);
        if (*err) {
            snprintf(*err, len,
                     embedded ? "backend '%s' is embedded only; build its plugin file (make) or use --plugin"
                              : "no backend '%s' (see tilec devices)",
                     name);
        }
    }
    tilec_plugins_free(l, n);
    return path;
}

/* The same, in a forked child: listing plugins starts their vendor
 * runtimes, which must not happen in the process the cases fork from. */
static char *backend_file(const char *name, char **err)
{
    int fds[2];
    *err = NULL;
    if (pipe(fds) != 0) {
        return backend_file_here(name, err);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return backend_file_here(name, err);
    }
    if (pid == 0) {
        char *e = NULL, *p;
        close(fds[0]);
        p = backend_file_here(name, &e);
        const char *s = p ? p : e ? e : "out of memory";
        ssize_t w = write(fds[1], p ? "P" : "E", 1);
        w += write(fds[1], s, strlen(s));
        fflush(NULL);
        _exit(w > 0 ? 0 : 1);
    }
    close(fds[1]);
    char buf[PATH_MAX + 512];
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fds[0], buf + got, sizeof buf - 1 - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        got += (size_t)r;
        if (got == sizeof buf - 1) {
            break;
        }
    }
    buf[got] = '\0';
    close(fds[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    if (got > 1 && buf[0] == 'P') {
        return strdup(buf + 1);
    }
    *err = strdup(got > 1 ? buf + 1 : "cannot list plugins");
    return NULL;
}

static int parse_u(const char *s, unsigned long long *v)
{
    char *end;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return errno || *end || !*s || s[0] == '-' ? -1 : 0;
}

int conform_main(int argc, char **argv)
{
    conform_run_t run;
    memset(&run, 0, sizeof run);
    const char *backend = NULL, *plugin = NULL, *verify = NULL;
    int no_cert = 0, no_abi = 0, compile_only = 0;
    unsigned long long device = 0;
    run.timeout_s = 120;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    run.jobs = ncpu > 0 ? (int)(ncpu > 8 ? 8 : ncpu) : 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VAL() \
    do { \
        if (!v) return usage("option %s needs a value", a); \
        i++; \
    } while (0)
        unsigned long long u;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(conform_usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--backend")) { VAL(); backend = v; }
        else if (!strcmp(a, "--plugin")) { VAL(); plugin = v; }
        else if (!strcmp(a, "--device")) { VAL(); if (parse_u(v, &device) || device > UINT32_MAX) return usage("bad --device '%s'", v); }
        else if (!strcmp(a, "--junit")) { VAL(); run.junit = v; }
        else if (!strcmp(a, "--json")) { VAL(); run.json = v; }
        else if (!strcmp(a, "--cert")) { VAL(); run.cert = v; }
        else if (!strcmp(a, "--no-cert")) { no_cert = 1; }
        else if (!strcmp(a, "--cases")) { VAL(); run.cases_dir = v; }
        else if (!strcmp(a, "--known-failures")) { VAL(); run.known_file = v; }
        else if (!strcmp(a, "--broken-dir")) { VAL(); run.broken_dir = v; }
        else if (!strcmp(a, "--no-abi")) { no_abi = 1; }
        else if (!strcmp(a, "--compile-only")) { compile_only = 1; }
        else if (!strcmp(a, "--arch")) { VAL(); run.compile_archs = v; }
        else if (!strcmp(a, "--verify")) { VAL(); verify = v; }
        else if (!strcmp(a, "--filter")) { VAL(); run.filter = v; }
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) { run.verbose = 1; }
        else if (!strcmp(a, "--timeout")) {
            VAL();
            char *end;
            run.timeout_s = strtod(v, &end);
            if (*end || run.timeout_s <= 0) return usage("bad --timeout '%s'", v);
        } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
            VAL();
            if (parse_u(v, &u) || u < 1 || u > 256) return usage("bad -j '%s'", v);
            run.jobs = (int)u;
        } else if (!strcmp(a, "--seed")) {
            VAL();
            if (parse_u(v, &u)) return usage("bad --seed '%s'", v);
            run.seed = u;
        } else {
            return usage("unknown argument '%s'", a);
        }
#undef VAL
    }
    if (backend && plugin) {
        return usage("give --backend or --plugin, not both%s", "");
    }
    if (compile_only != (run.compile_archs != NULL)) {
        return usage("--compile-only and --arch A,... go together%s", "");
    }
    if (compile_only) {
        /* the ABI and loader cases need a device */
        no_abi = 1;
        if (!*run.compile_archs || strchr(run.compile_archs, ' ') || strstr(run.compile_archs, ",,") ||
            run.compile_archs[0] == ',' || run.compile_archs[strlen(run.compile_archs) - 1] == ',')
            return usage("bad --arch list '%s' (A,B,...)", run.compile_archs);
    }
    char *path = NULL, *err = NULL;
    if (plugin) {
        path = strdup(plugin);
    } else {
        path = backend_file(backend ? backend : "cpu", &err);
        if (!path) {
            fprintf(stderr, "tilec conform: %s\n", err ? err : "out of memory");
            free(err);
            return 3;
        }
    }
    if (!path) {
        return 3;
    }
    if (verify) {
        char *why = NULL;
        int rc = conform_verify(verify, path, &why);
        if (rc == 0) {
            printf("VALID certificate %s for %s\n", verify, path);
        } else {
            printf("INVALID certificate %s for %s: %s\n", verify, path, why ? why : "?");
        }
        free(why);
        free(path);
        return rc == 0 ? 0 : 1;
    }

    int rc = 0;
    char *dir = exe_dir(), *cases = NULL, *broken = NULL, *known = NULL, *certp = NULL;
    if (!run.cases_dir) {
        if (is_dir("conformance/cases")) {
            run.cases_dir = "conformance/cases";
        } else if (dir && (cases = join(dir, "../conformance/cases")) && is_dir(cases)) {
            run.cases_dir = cases;
        } else if (dir && (free(cases), cases = join(dir, "../share/tilec/conformance/cases")) &&
                   is_dir(cases)) {
            run.cases_dir = cases; /* installed: PREFIX/bin/tilec, PREFIX/share/tilec */
        } else {
            fprintf(stderr, "tilec conform: cannot find conformance/cases (give --cases DIR)\n");
            rc = 2;
            goto out;
        }
    }
    if (!run.broken_dir && dir && (broken = join(dir, "tests/plugins")) && is_dir(broken)) {
        run.broken_dir = broken;
    }
    if (conform_open_plugin(&run, path, (uint32_t)device, &err) != 0) {
        fprintf(stderr, "tilec conform: %s\n", err ? err : "out of memory");
        rc = 3;
        goto out;
    }
    if (conform_load_cases(&run, run.cases_dir, &err) != 0) {
        fprintf(stderr, "tilec conform: %s\n", err ? err : "out of memory");
        rc = 2;
        goto out;
    }
    for (int i = 0; !no_abi && i < conform_abi_count(); i++) {
        char id[128];
        snprintf(id, sizeof id, "abi/%s", conform_abi_name(i));
        conform_item_t *it = conform_item_add(&run, id, CONFORM_KIND_ABI);
        if (!it) {
            rc = 2;
            goto out;
        }
        it->index = i;
        it->timeout_s = 60;
    }
    for (int i = 0; !no_abi && run.broken_dir && i < conform_loader_count(); i++) {
        char id[128];
        snprintf(id, sizeof id, "loader/%s", conform_loader_name(i));
        conform_item_t *it = conform_item_add(&run, id, CONFORM_KIND_LOADER);
        if (!it) {
            rc = 2;
            goto out;
        }
        it->index = i;
        it->timeout_s = 60;
    }
    if (run.filter) {
        int k = 0;
        for (int i = 0; i < run.n; i++) {
            if (strstr(run.items[i].id, run.filter)) {
                run.items[k++] = run.items[i];
            } else {
                conform_item_free(&run.items[i]);
            }
        }
        run.n = k;
    }
    if (!run.known_file) {
        char rel[300];
        snprintf(rel, sizeof rel, "../known-failures/%s.txt", run.table->name);
        if ((known = join(run.cases_dir, rel)) && is_file(known)) {
            run.known_file = known;
        }
    }
    if (run.known_file && conform_load_known(&run, run.known_file, &err) != 0) {
        fprintf(stderr, "tilec conform: %s\n", err ? err : "out of memory");
        rc = 2;
        goto out;
    }
    run.progress = isatty(2) && !run.verbose;
    printf("conform: plugin %s %s (%s, sha256 %.16s...) device %u \"%s\", ABI %u.%u, suite %s, %d items, -j %d\n",
           run.table->name, run.table->version ? run.table->version : "", path, run.sha256, run.device,
           run.info.name, TILEC_ABI_MAJOR(run.abi), TILEC_ABI_MINOR(run.abi), TILEC_CONFORM_SUITE_VERSION,
           run.n, run.jobs);
    if (run.known_file) {
        printf("conform: known failures from %s\n", run.known_file);
    }
    fflush(stdout);
    if (conform_run_all(&run) != 0) {
        fprintf(stderr, "tilec conform: could not start every case process\n");
    }
    int certified = conform_certified(&run);
    printf("conform: %d items in %.1f s: pass %d, fail %d, not-supported %d, crash %d, timeout %d "
           "(known failures %d, unexpected passes %d)\n",
           run.n, run.wall_s, run.counts[CONFORM_PASS], run.counts[CONFORM_FAIL],
           run.counts[CONFORM_NOT_SUPPORTED], run.counts[CONFORM_CRASH], run.counts[CONFORM_TIMEOUT],
           run.nknown, run.nunexpected);
    for (int i = 0; i < run.n; i++) {
        if (run.items[i].unexpected_pass) {
            printf("conform: unexpected pass: %s (listed as a known failure: %s)\n", run.items[i].id,
                   run.items[i].known_reason);
        }
    }
    if (run.junit && conform_write_junit(&run, run.junit) != 0) {
        rc = 1;
    }
    if (run.json && conform_write_json(&run, run.json) != 0) {
        rc = 1;
    }
    if (!no_cert && (run.cert || !run.filter)) {
        const char *cp = run.cert ? run.cert : (certp = conform_cert_path(path));
        if (cp && conform_write_cert(&run, cp) == 0) {
            printf("conform: %s, certificate %s\n", certified ? "CERTIFIED" : "NOT CERTIFIED", cp);
        } else {
            rc = 1;
        }
    } else {
        printf("conform: %s (no certificate written)\n", certified ? "all cases conform" : "NOT CERTIFIED");
    }
    int unexpected = run.counts[CONFORM_FAIL] + run.counts[CONFORM_CRASH] + run.counts[CONFORM_TIMEOUT] -
                     run.nknown + run.nunexpected;
    if (unexpected > 0 && rc == 0) {
        rc = 1;
    }
out:
    free(err);
    conform_run_free(&run);
    free(path);
    free(dir);
    free(cases);
    free(broken);
    free(known);
    free(certp);
    return rc;
}
