/*
 * tools/tilec.c — the `tilec` command line (docs/cli.md).
 *
 *   tilec run FILE [-D NAME=VALUE]... [--entry NAME] [--backend NAME]
 *             [--check [--reference BACKEND]] [--bench] [--seed N]
 *   tilec compile FILE [-D ...] [--entry NAME] [--backend NAME]
 *             --emit ir|lowered|source|binary|info|layout [--arch ARCH] [-o OUT]
 *   tilec devices [--json]
 *   tilec conform ...            (conformance/main.c, conformance/README.md)
 *
 * FILE is a .py tile program or a .tir text IR module (the library tells
 * them apart by the suffix).
 * Everything goes through the public API (tilec/tilec.h); this file only
 * parses arguments, makes inputs, compares results and prints.  Exit
 * statuses: 0 success/PASS, 1 check FAIL, 2 invalid program or usage,
 * 3 backend unavailable or compile/launch failure.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../conformance/conform.h"
#include "check.h"
#include "tools.h"
#include "tilec/ir.h"
#include "tilec/lower.h"
#include "tilec/plugin.h"
#include "tilec/tilec.h"
#include "npy.h"

enum { EXIT_PASS = 0, EXIT_CHECK_FAIL = 1, EXIT_USAGE = 2, EXIT_BACKEND = 3 };

#define MAX_DEFINES 256
#define MAX_IO 64

typedef struct options {
    const char *cmd;
    const char *file;
    const char *entry;
    const char *backend;
    const char *reference; /* --reference: the backend that computes the reference */
    const char *emit;
    const char *arch;
    const char *out;
    const char *db;        /* --db: the tuning database (run) */
    const char *bundle;    /* --bundle: kernels compiled ahead of time (run) */
    int check, bench, json;
    uint64_t seed;
    int ndefs;
    tilec_define_kv_t defs[MAX_DEFINES];
    char *def_storage[MAX_DEFINES];
    /* --input NAME=F.npy / --output NAME=F.npy (run): tensor name, file */
    int nio[2];
    const char *io_name[2][MAX_IO], *io_file[2][MAX_IO];
    char *io_storage[2][MAX_IO];
} options_t;

static void usage(FILE *f)
{
    fputs("usage:\n"
          "  tilec run FILE [-D NAME=VALUE]... [--entry NAME] [--backend NAME] [--check [--reference BACKEND]]\n"
          "            [--bench] [--seed N] [--db PATH] [--bundle F.tcb] [--input NAME=F.npy]... [--output NAME=F.npy]...\n"
          "      --check              compare every tensor with a reference run: the IR interpreter by default\n"
          "      --reference BACKEND  with --check: compute the reference on BACKEND[:N] instead (e.g. cpu),\n"
          "                           for problems too large for the interpreter; use a certified backend\n"
          "      --db PATH            the tuning database to take a tuned config from (default TILEC_TUNE_DB)\n"
          "      --bundle F.tcb       take the kernel (and its tuned config) from a bundle: no compiler runs\n"
          "      --input NAME=F.npy   tensor NAME's initial contents from a .npy file (dtype and shape must match)\n"
          "      --output NAME=F.npy  write tensor NAME after the run (the backend's result) to a .npy file\n"
          "  tilec compile FILE [-D NAME=VALUE]... [--entry NAME] [--backend NAME]\n"
          "                --emit ir|lowered|source|binary|info|layout\n"
          "                [--arch ARCH] [-o OUT]\n"
          "  tilec tune FILE [-D ...] [--space NAME=V1,V2,...]... [--shapes SYM=V1,...]... [--backend B]\n"
          "             [--reference B] [--db PATH] [-j N] [--budget S] [--timeout S] [--seed N] [--json OUT]\n"
          "  tilec tune --list | --export F.json | --import F.json  [--db PATH]   (docs/tuning.md)\n"
          "  tilec bundle FILE [-D ...] [--entry NAME] [--db PATH] [--backend B] -o F.tcb\n"
          "  tilec devices [--json]\n"
          "  tilec conform [--backend NAME | --plugin PATH] [--compile-only --arch A,...] [--junit FILE] [--json FILE] (see conformance/README.md)\n"
          "  tilec --version | --help\n"
          "\n"
          "FILE is a tile program (.py) or a module in the text IR (.tir, high-level or lowered; docs/ir.md);\n"
          "for a .tir, -D binds its T.dynamic symbols.\n"
          "\n"
          "environment: TILEC_BACKEND (cpu, cuda, hip, opencl, vulkan, a plugin name, optionally :N; auto),\n"
          "             TILEC_PLUGIN_PATH, TILEC_CACHE_DIR, TILEC_CACHE=0, TILEC_LOG=loader,compile,ir,launch,\n"
          "             TILEC_TUNE_DB (tuning database, default $XDG_CACHE_HOME/tilec/tune.db)\n",
          f);
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tilec: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'tilec --help' for usage)\n");
    return EXIT_USAGE;
}

/* Exit status for a failed API call. */
static int exit_for(tilec_status_t s)
{
    switch (s) {
    case TILEC_E_PROGRAM:
    case TILEC_E_INVALID:
    case TILEC_E_IO:
        return EXIT_USAGE;
    default:
        return EXIT_BACKEND;
    }
}

static int report(tilec_context_t *ctx, tilec_status_t s)
{
    const char *msg = ctx ? tilec_context_message(ctx) : "out of memory";
    size_t n = strlen(msg);
    /* Diagnostics already carry their "FILE:LINE:COL: error:" prefix. */
    if (s == TILEC_E_PROGRAM) {
        fprintf(stderr, "%s%s", msg, n && msg[n - 1] == '\n' ? "" : "\n");
    } else {
        fprintf(stderr, "tilec: %s%s", msg, n && msg[n - 1] == '\n' ? "" : "\n");
    }
    return exit_for(s);
}

static int parse_define(options_t *o, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        return usage_error("-D expects NAME=VALUE, got '%s'", arg);
    }
    if (o->ndefs == MAX_DEFINES) {
        return usage_error("too many -D options (at most 256): '%s'", arg);
    }
    char *copy = strdup(arg);
    if (!copy) {
        return usage_error("out of memory at '%s'", arg);
    }
    copy[eq - arg] = '\0';
    o->def_storage[o->ndefs] = copy;
    o->defs[o->ndefs].name = copy;
    o->defs[o->ndefs].value = copy + (eq - arg) + 1;
    o->ndefs++;
    return 0;
}

/* --input/--output NAME=FILE (k: 0 input, 1 output) */
static int parse_io(options_t *o, int k, const char *arg)
{
    const char *opt = k ? "--output" : "--input";
    const char *eq = strchr(arg, '=');
    char *copy;
    if (!eq || eq == arg || !eq[1]) {
        fprintf(stderr, "tilec: %s expects NAME=FILE.npy, got '%s'\n(run 'tilec --help' for usage)\n", opt, arg);
        return EXIT_USAGE;
    }
    if (o->nio[k] == MAX_IO) {
        fprintf(stderr, "tilec: too many %s options (at most %d)\n", opt, MAX_IO);
        return EXIT_USAGE;
    }
    if (!(copy = strdup(arg))) return usage_error("out of memory at '%s'", arg);
    copy[eq - arg] = 0;
    o->io_storage[k][o->nio[k]] = copy;
    o->io_name[k][o->nio[k]] = copy;
    o->io_file[k][o->nio[k]++] = copy + (eq - arg) + 1;
    return 0;
}

static int parse_args(options_t *o, int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_ARG() \
    do { \
        if (!next) return usage_error("option %s needs a value", a); \
        i++; \
    } while (0)
        if (!strcmp(a, "-D")) {
            NEED_ARG();
            if (parse_define(o, next)) return EXIT_USAGE;
        } else if (!strncmp(a, "-D", 2)) {
            if (parse_define(o, a + 2)) return EXIT_USAGE;
        } else if (!strcmp(a, "--entry")) {
            NEED_ARG();
            o->entry = next;
        } else if (!strcmp(a, "--backend")) {
            NEED_ARG();
            o->backend = next;
        } else if (!strcmp(a, "--reference")) {
            NEED_ARG();
            if (!*next) {
                return usage_error("--reference expects a backend name, got '%s'", next);
            }
            o->reference = next;
        } else if (!strcmp(a, "--db")) {
            NEED_ARG();
            o->db = next;
        } else if (!strcmp(a, "--bundle")) {
            NEED_ARG();
            o->bundle = next;
        } else if (!strcmp(a, "--emit")) {
            NEED_ARG();
            o->emit = next;
        } else if (!strcmp(a, "--arch")) {
            NEED_ARG();
            o->arch = next;
        } else if (!strcmp(a, "-o")) {
            NEED_ARG();
            o->out = next;
        } else if (!strcmp(a, "--seed")) {
            NEED_ARG();
            char *end;
            errno = 0;
            unsigned long long v = strtoull(next, &end, 10);
            if (errno || *end || next[0] < '0' || next[0] > '9') {
                return usage_error("--seed expects a non-negative integer, got '%s'", next);
            }
            o->seed = v;
        } else if (!strcmp(a, "--input") || !strcmp(a, "--output")) {
            NEED_ARG();
            if (parse_io(o, a[2] == 'o', next)) return EXIT_USAGE;
        } else if (!strcmp(a, "--check")) {
            o->check = 1;
        } else if (!strcmp(a, "--bench")) {
            o->bench = 1;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '%s'", a);
        } else if (!o->file) {
            o->file = a;
        } else {
            return usage_error("unexpected argument '%s'", a);
        }
#undef NEED_ARG
    }
    return 0;
}

/* ---- run ------------------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Upload the seeded inputs (again, so every launch starts from them). */
static tilec_status_t upload(const check_set_t *set, tilec_buffer_t **bufs)
{
    for (int i = 0; i < set->n; i++) {
        tilec_status_t s = tilec_buffer_write(bufs[i], set->t[i].init, set->t[i].bytes);
        if (s != TILEC_OK) {
            return s;
        }
    }
    return TILEC_OK;
}

/* reference: the reference backend's name, or NULL for the interpreter
 * (then the line is as it always was; --reference only appends a field). */
static int check_results(const options_t *o, const check_set_t *set, const char *backend,
                         const char *reference)
{
    check_verdict_t v;
    check_set_judge(set, CHECK_TOL_AUTO, &v);
    if (v.detail && *v.detail) {
        fprintf(stderr, "tilec: %s", v.detail);
    }
    free(v.detail);
    printf("%s %s backend=%s max_abs_err=%.3e max_rel_err=%.3e rel_fro_err=%.3e tol=%.0e "
           "worst=%s seed=%llu%s%s\n",
           v.ok ? "PASS" : "FAIL", o->file, backend, v.worst.max_abs, v.worst.max_rel,
           v.worst.rel_fro, v.tol, v.worst_name, (unsigned long long)o->seed,
           reference ? " reference=" : "", reference ? reference : "");
    return v.ok ? EXIT_PASS : EXIT_CHECK_FAIL;
}

static int bench(tilec_context_t *ctx, tilec_executable_t *e, tilec_buffer_t **args, int n)
{
    enum { WARMUP = 3, MIN_RUNS = 10, MAX_RUNS = 1000 };
    double times[MAX_RUNS];
    int runs = 0;
    for (int i = 0; i < WARMUP; i++) {
        double ms;
        tilec_status_t s = tilec_launch(ctx, e, args, n, &ms);
        if (s != TILEC_OK) {
            return report(ctx, s);
        }
    }
    /* At least MIN_RUNS launches and at least one second of them. */
    double start = now_ms();
    while (runs < MAX_RUNS && (runs < MIN_RUNS || now_ms() - start < 1000.0)) {
        tilec_status_t s = tilec_launch(ctx, e, args, n, &times[runs]);
        if (s != TILEC_OK) {
            return report(ctx, s);
        }
        runs++;
    }
    qsort(times, (size_t)runs, sizeof times[0], cmp_double);
    double median = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
    printf("bench: median_ms=%.4f min_ms=%.4f runs=%d\n", median, times[0], runs);
    return 0;
}

/* The reference of --check --reference: the same program on another
 * backend, in its own context (check.c).  Its failures are backend errors
 * (exit 3), named after the reference backend. */
static int run_reference(const options_t *o, tilec_context_t *rctx, check_set_t *set)
{
    char *msg = NULL;
    tilec_status_t s = check_set_reference_backend(rctx, o->file, o->defs, o->ndefs, o->entry, set, &msg);
    if (s == TILEC_OK) {
        return 0;
    }
    const char *m = msg ? msg : "out of memory";
    size_t n = strlen(m);
    fprintf(stderr, "tilec: reference backend '%s' failed: %s%s", o->reference, m,
            n && m[n - 1] == '\n' ? "" : "\n");
    free(msg);
    return EXIT_BACKEND;
}

/* The tuned config stored for the problem, when there is one: the program
 * is loaded again with it, -D values winning, and a "tuned:" line says so.
 * A database that cannot be read is a warning, not a failure. */
static tilec_status_t use_tuned(const options_t *o, tilec_context_t *ctx, const tilec_bundle_t *bundle,
                                tilec_program_t **prog)
{
    tilec_tuned_t *t = NULL;
    tilec_define_kv_t defs[2 * MAX_DEFINES];
    tilec_program_t *again = NULL;
    char wins[512] = "";
    size_t wl = 0;
    int n = o->ndefs;
    tilec_status_t s = bundle ? tilec_bundle_lookup(ctx, bundle, *prog, &t)
                              : tilec_tune_lookup(ctx, *prog, o->db, &t);
    if (s != TILEC_OK && bundle) {
        return s;
    }
    if (s != TILEC_OK) {
        fprintf(stderr, "tilec: warning: %s; running without a tuned config\n", tilec_context_message(ctx));
        return TILEC_OK;
    }
    if (!t) {
        return TILEC_OK;
    }
    memcpy(defs, o->defs, sizeof defs[0] * (size_t)o->ndefs);
    for (int i = 0; i < t->n && n < 2 * MAX_DEFINES; i++) {
        int given = 0;
        for (int k = 0; k < o->ndefs; k++) {
            given |= !strcmp(o->defs[k].name, t->config[i].name);
        }
        if (given && wl < sizeof wins) {
            wl += (size_t)snprintf(wins + wl, sizeof wins - wl, " %s", t->config[i].name);
        } else if (!given) {
            defs[n++] = t->config[i];
        }
    }
    s = tilec_program_load_file(ctx, o->file, defs, n, o->entry, &again);
    if (s == TILEC_OK) {
        printf("tuned: %s%s%s%s%s%s\n", t->text, t->nearest ? " (nearest stored shape " : "",
               t->nearest ? t->shape : "", t->nearest ? ")" : "", wl ? "; -D wins for" : "", wins);
        tilec_program_free(*prog);
        *prog = again;
    }
    tilec_tuned_free(t);
    return s;
}

/* The tensor named name, or -1 (the message lists the names). */
static int tensor_index(const check_set_t *set, const char *opt, const char *name)
{
    for (int i = 0; i < set->n; i++)
        if (set->t[i].name && !strcmp(set->t[i].name, name)) return i;
    fprintf(stderr, "tilec: %s %s: the kernel has no tensor '%s'; its tensors are:", opt, name, name);
    for (int i = 0; i < set->n; i++) fprintf(stderr, " %s", set->t[i].name ? set->t[i].name : "?");
    fprintf(stderr, "\n");
    return -1;
}

/* --input: the files replace the seeded contents (for the backend and the reference alike). */
static int load_inputs(const options_t *o, check_set_t *set)
{
    for (int k = 0; k < o->nio[0]; k++) {
        char err[512];
        int i = tensor_index(set, "--input", o->io_name[0][k]);
        if (i < 0) return EXIT_USAGE;
        check_tensor_t *t = &set->t[i];
        if (tilec_npy_read(o->io_file[0][k], t->elem, t->ndim, t->shape, t->init, t->bytes, err, sizeof err)) {
            fprintf(stderr, "tilec: --input %s: %s\n", o->io_name[0][k], err);
            return EXIT_USAGE;
        }
        memcpy(t->out, t->init, t->bytes);
        memcpy(t->ref, t->init, t->bytes);
    }
    return 0;
}

static int save_outputs(const options_t *o, const check_set_t *set)
{
    for (int k = 0; k < o->nio[1]; k++) {
        char err[512];
        int i = tensor_index(set, "--output", o->io_name[1][k]);
        if (i < 0) return EXIT_USAGE;
        const check_tensor_t *t = &set->t[i];
        if (tilec_npy_write(o->io_file[1][k], t->elem, t->ndim, t->shape, t->out, t->bytes, err, sizeof err)) {
            fprintf(stderr, "tilec: --output %s: %s\n", o->io_name[1][k], err);
            return EXIT_BACKEND;
        }
    }
    return 0;
}

static int cmd_run(const options_t *o)
{
    tilec_context_t *ctx = NULL, *rctx = NULL;
    tilec_program_t *prog = NULL;
    tilec_executable_t *exe = NULL;
    tilec_bundle_t *bundle = NULL;
    check_set_t set = {0};
    tilec_buffer_t **args = NULL;
    int n = 0, rc;
    tilec_status_t s = tilec_context_create(o->backend, &ctx);
    if (s != TILEC_OK) {
        rc = report(ctx, s);
        goto out;
    }
    /* The reference backend before any work, so that a wrong name fails at
     * once rather than after a long run on the device. */
    if (o->reference && (s = tilec_context_create(o->reference, &rctx)) != TILEC_OK) {
        const char *m = rctx ? tilec_context_message(rctx) : "out of memory";
        size_t len = strlen(m);
        fprintf(stderr, "tilec: reference backend '%s' is not usable: %s%s", o->reference, m,
                len && m[len - 1] == '\n' ? "" : "\n");
        rc = EXIT_BACKEND;
        goto out;
    }
    s = tilec_program_load_file(ctx, o->file, o->defs, o->ndefs, o->entry, &prog);
    if (s != TILEC_OK) {
        rc = report(ctx, s);
        goto out;
    }
    if (o->bundle && (s = tilec_bundle_open(ctx, o->bundle, &bundle)) != TILEC_OK) {
        rc = report(ctx, s);
        goto out;
    }
    if ((s = use_tuned(o, ctx, bundle, &prog)) != TILEC_OK) {
        rc = report(ctx, s);
        goto out;
    }
    {
        char *msg = NULL;
        check_rc_t crc = check_set_make(prog, o->file, o->seed, &set, &msg);
        if (crc != CHECK_OK) {
            /* An unbound symbol is a "FILE: error:" diagnostic; the rest are ours. */
            fprintf(stderr, "%s%s\n", crc == CHECK_E_UNBOUND ? "" : "tilec: ", msg ? msg : "out of memory");
            free(msg);
            rc = crc == CHECK_E_UNBOUND ? EXIT_USAGE : EXIT_BACKEND;
            goto out;
        }
    }
    if ((rc = load_inputs(o, &set)) != 0) {
        goto out;
    }
    n = set.n;
    args = calloc((size_t)n + 1, sizeof *args);
    if (!args) {
        rc = report(NULL, TILEC_E_NOMEM);
        goto out;
    }
    s = bundle ? tilec_bundle_executable(ctx, bundle, prog, &exe) : tilec_program_compile(ctx, prog, &exe);
    if (s != TILEC_OK) {
        rc = report(ctx, s);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const check_tensor_t *t = &set.t[i];
        s = tilec_buffer_create(ctx, t->elem, t->ndim, t->shape, &args[i]);
        if (s != TILEC_OK) {
            rc = report(ctx, s);
            goto out;
        }
    }
    if ((s = upload(&set, args)) != TILEC_OK || (s = tilec_launch(ctx, exe, args, n, NULL)) != TILEC_OK) {
        rc = report(ctx, s);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        if ((s = tilec_buffer_read(args[i], set.t[i].out, set.t[i].bytes)) != TILEC_OK) {
            rc = report(ctx, s);
            goto out;
        }
    }
    if ((rc = save_outputs(o, &set)) != 0) {
        goto out;
    }
    if (o->check && rctx) {
        if ((rc = run_reference(o, rctx, &set)) != 0) {
            goto out;
        }
        /* Its memory is no longer needed (the bench runs without it). */
        char *rname = strdup(tilec_context_backend(rctx));
        tilec_context_destroy(rctx);
        rctx = NULL;
        rc = check_results(o, &set, tilec_context_backend(ctx), rname ? rname : o->reference);
        free(rname);
    } else if (o->check) {
        s = check_set_reference(ctx, prog, &set);
        if (s != TILEC_OK) {
            fprintf(stderr, "tilec: reference interpreter: %s\n", tilec_context_message(ctx));
            rc = EXIT_CHECK_FAIL;
            printf("FAIL %s backend=%s reference interpreter failed\n", o->file,
                   tilec_context_backend(ctx));
            goto out;
        }
        rc = check_results(o, &set, tilec_context_backend(ctx), NULL);
    } else {
        printf("ran %s on %s (%s): %d tensors\n", o->file, tilec_context_backend(ctx),
               tilec_context_device(ctx), n);
        rc = EXIT_PASS;
    }
    if (o->bench) {
        int brc = bench(ctx, exe, args, n);
        if (brc) {
            rc = brc;
        }
    }
out:
    for (int i = 0; args && i < n; i++) {
        tilec_buffer_free(args[i]);
    }
    free(args);
    check_set_free(&set);
    tilec_executable_free(exe);
    tilec_bundle_free(bundle);
    tilec_program_free(prog);
    tilec_context_destroy(rctx);
    tilec_context_destroy(ctx);
    return rc;
}

/* ---- compile -------------------------------------------------------------- */

static int write_out(const char *path, const void *data, size_t len)
{
    FILE *f = path ? fopen(path, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "tilec: cannot write '%s': %s\n", path, strerror(errno));
        return EXIT_USAGE;
    }
    size_t w = fwrite(data, 1, len, f);
    int bad = w != len || ferror(f);
    if (path) {
        bad |= fclose(f) != 0;
    } else {
        bad |= fflush(f) != 0;
    }
    if (bad) {
        fprintf(stderr, "tilec: error writing '%s'\n", path ? path : "standard output");
        return EXIT_USAGE;
    }
    return 0;
}

/* --emit info: what the compiled kernel uses, one "name value" line each. */
static int write_info(const options_t *o, const tilec_executable_t *exe)
{
    tilec_module_info_t mi;
    char buf[512], num[7][24];
    if (tilec_executable_info(exe, &mi) != TILEC_OK) {
        return report(NULL, TILEC_E_INVALID);
    }
    const int64_t v[7] = {mi.registers, mi.shared_static_bytes, mi.shared_dynamic_bytes,
                          mi.spill_bytes, mi.local_bytes, mi.threads, mi.max_threads};
    for (int i = 0; i < 7; i++) {
        if (v[i] < 0) {
            snprintf(num[i], sizeof num[i], "unknown");
        } else {
            snprintf(num[i], sizeof num[i], "%lld", (long long)v[i]);
        }
    }
    int n = snprintf(buf, sizeof buf,
                     "registers %s\nshared_static_bytes %s\nshared_dynamic_bytes %s\n"
                     "spill_bytes %s\nlocal_bytes %s\nthreads %s\nmax_threads %s\n",
                     num[0], num[1], num[2], num[3], num[4], num[5], num[6]);
    return write_out(o->out, buf, (size_t)n);
}

/* --emit layout: SVG pictures of the lowered module's layouts into dir */
static int write_layouts(const char *dir, const char *text, size_t len)
{
    tilec_arena_t ar;
    tilec_arena_init(&ar);
    tilec_ir_module_t *m = NULL;
    char err[512];
    int n = 0, rc = 0;
    if (tilec_ir_read(&ar, text, len, &m, err, sizeof err) != 0 ||
        tilec_layout_svg_dir(m, dir, &n, err, sizeof err) != 0) {
        fprintf(stderr, "tilec: --emit layout: %s\n", err);
        rc = EXIT_BACKEND;
    } else {
        fprintf(stderr, "tilec: %d layout picture%s in %s\n", n, n == 1 ? "" : "s", dir);
    }
    tilec_arena_destroy(&ar);
    return rc;
}

static int cmd_compile(const options_t *o)
{
    static const char *const kinds[] = {"ir", "lowered", "source", "binary", "info", "layout"};
    int kind = -1;
    if (!o->emit) {
        return usage_error("compile needs --emit ir|lowered|source|binary|info|layout%s", "");
    }
    for (int i = 0; i < 6; i++) {
        if (!strcmp(o->emit, kinds[i])) {
            kind = i;
        }
    }
    if (kind < 0) {
        return usage_error("--emit expects ir, lowered, source, binary, info or layout, got '%s'", o->emit);
    }
    if (kind == 5 && !o->out) {
        return usage_error("--emit layout needs -o DIR (one SVG picture per laid-out buffer)%s", "");
    }
    int emit_ir = kind == 0;
    tilec_context_t *ctx = NULL;
    tilec_program_t *prog = NULL;
    tilec_executable_t *exe = NULL;
    int rc = 0;
    /* The IR needs no device: a failed backend only matters past the IR. */
    tilec_status_t s = tilec_context_create(emit_ir && !o->backend ? "cpu" : o->backend, &ctx);
    /* ... and with --arch a backend without a device can still compile */
    if (s != TILEC_OK && !((emit_ir || o->arch) && ctx)) {
        rc = report(ctx, s);
        goto out;
    }
    s = tilec_program_load_file(ctx, o->file, o->defs, o->ndefs, o->entry, &prog);
    if (s != TILEC_OK) {
        rc = report(ctx, s);
        goto out;
    }
    if (emit_ir) {
        /* a chain of kernels: each module in launch order, a blank line between */
        size_t len = 0, at = 0;
        char *all;
        for (const tilec_program_t *q = prog; q; q = tilec_program_next(q)) len += strlen(tilec_program_ir(q)) + 1;
        all = malloc(len + 1);
        if (!all) {
            fprintf(stderr, "tilec: out of memory\n");
            rc = 3;
            goto out;
        }
        for (const tilec_program_t *q = prog; q; q = tilec_program_next(q)) {
            size_t n = strlen(tilec_program_ir(q));
            if (q != prog) all[at++] = '\n';
            memcpy(all + at, tilec_program_ir(q), n);
            at += n;
        }
        rc = write_out(o->out, all, at);
        free(all);
        goto out;
    }
    tilec_compile_options_t copts;
    memset(&copts, 0, sizeof copts);
    copts.arch = o->arch;
    if (kind == 1 || kind == 5) {
        char *text = NULL;
        size_t len = 0;
        s = tilec_program_lower(ctx, prog, &copts, &text, &len);
        if (s != TILEC_OK)
            rc = report(ctx, s);
        else
            rc = kind == 1 ? write_out(o->out, text, len) : write_layouts(o->out, text, len);
        free(text);
        goto out;
    }
    s = tilec_program_compile_with(ctx, prog, &copts, &exe);
    if (s != TILEC_OK) {
        rc = report(ctx, s);
        goto out;
    }
    if (kind == 4) {
        rc = write_info(o, exe);
        goto out;
    }
    size_t len = 0;
    const void *data = kind == 2 ? (const void *)tilec_executable_source(exe, &len)
                                 : tilec_executable_binary(exe, &len);
    if (!data) {
        fprintf(stderr, "tilec: backend '%s' does not expose its %s\n", tilec_context_backend(ctx),
                o->emit);
        rc = EXIT_BACKEND;
        goto out;
    }
    rc = write_out(o->out, data, len);
out:
    tilec_executable_free(exe);
    tilec_program_free(prog);
    tilec_context_destroy(ctx);
    return rc;
}

/* ---- devices -------------------------------------------------------------- */

static void caps_text(uint64_t caps, char *buf, size_t len)
{
    static const struct { uint64_t bit; const char *name; } names[] = {
        {TILEC_CAP_FLOAT16, "fp16"}, {TILEC_CAP_BFLOAT16, "bf16"}, {TILEC_CAP_FLOAT64, "fp64"},
        {TILEC_CAP_INT64, "int64"}, {TILEC_CAP_ATOMIC_FLOAT, "atomic-float"},
        {TILEC_CAP_ATOMIC_INT, "atomic-int"}, {TILEC_CAP_DYNAMIC_SHAPE, "dynamic-shape"},
        {TILEC_CAP_PRINT, "print"}, {TILEC_CAP_DEVICE_TIMER, "device-timer"},
        {TILEC_CAP_EMIT_SOURCE, "emit-source"}, {TILEC_CAP_EMIT_BINARY, "emit-binary"},
        {TILEC_CAP_GPU, "gpu"},
        {TILEC_CAP_STREAM, "stream"},
    };
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if ((caps & names[i].bit) && used < len) {
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[i].name);
        }
    }
}

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs,
 * no surrogates, at most U+10FFFF), or 0 when it is not one. */
static int utf8_len(const unsigned char *p)
{
    int n = p[0] < 0xc2 ? 0 : p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : p[0] < 0xf5 ? 4 : 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return 0;
        }
    }
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f)) {
        return 0;
    }
    return n;
}

/* JSON must be UTF-8: a byte that is not (a file name can hold any) is
 * written as U+FFFD. */
void tilec_cli_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p);
        } else if (*p < 0x80) {
            fputc(*p, f);
        } else {
            int n = utf8_len(p);
            if (n) {
                fwrite(p, 1, (size_t)n, f);
                p += n - 1;
            } else {
                fputs("\\ufffd", f);
            }
        }
    }
    fputc('"', f);
}

/* The certified plugin file behind entry i, or NULL: its own file when a
 * matching certificate lies beside it (conformance/report.c); for the
 * embedded cpu backend, its plugin build (the same sources) listed later. */
static const char *certified_path(const tilec_plugin_desc_t *list, int n, int i)
{
    const tilec_plugin_desc_t *p = &list[i];
    if (p->state == TILEC_PLUGIN_REJECTED) {
        return NULL;
    }
    if (strcmp(p->path, "(embedded)") != 0) {
        return conform_is_certified(p->path) ? p->path : NULL;
    }
    for (int k = 0; k < n; k++) {
        if (k != i && !strcmp(list[k].name, p->name) && strcmp(list[k].path, "(embedded)") &&
            list[k].state != TILEC_PLUGIN_REJECTED && conform_is_certified(list[k].path)) {
            return list[k].path;
        }
    }
    return NULL;
}

/* The typed properties a device reports (plugin ABI 1.1), on one line. */
static void print_props(const tilec_device_desc_t *dv)
{
    char line[1024];
    size_t n = 0;
#define ADD(...) \
    do { \
        if (n < sizeof line) n += (size_t)snprintf(line + n, sizeof line - n, __VA_ARGS__); \
    } while (0)
    if (*dv->arch) ADD(", arch %s", dv->arch);
    if (dv->subgroup_size > 0) ADD(", subgroup %lld", (long long)dv->subgroup_size);
    if (dv->shared_mem_default_bytes > 0) ADD(", shared %lld", (long long)dv->shared_mem_default_bytes);
    if (dv->shared_mem_optin_bytes > 0) ADD(" (opt-in %lld)", (long long)dv->shared_mem_optin_bytes);
    if (dv->registers_per_block > 0) ADD(", registers/block %lld", (long long)dv->registers_per_block);
    if (*dv->mma_kinds) ADD(", mma %s", dv->mma_kinds);
    if (dv->clock_khz > 0) ADD(", clock %lld MHz", (long long)(dv->clock_khz / 1000));
    if (*dv->driver_version) ADD(", driver %s", dv->driver_version);
#undef ADD
    if (n) {
        printf("        %s\n", line + 2);
    }
}

static int cmd_devices(const options_t *o)
{
    tilec_plugin_desc_t *list = NULL;
    int n = 0;
    tilec_status_t s = tilec_plugins_list(&list, &n);
    if (s != TILEC_OK) {
        fprintf(stderr, "tilec: cannot list plugins (%s)\n", tilec_status_name(s));
        return EXIT_BACKEND;
    }
    char caps[256];
    if (o->json) {
        printf("[\n");
        for (int i = 0; i < n; i++) {
            const tilec_plugin_desc_t *p = &list[i];
            printf("  {\"name\": ");
            tilec_cli_json_string(stdout, p->name);
            printf(", \"path\": ");
            tilec_cli_json_string(stdout, p->path);
            printf(", \"state\": \"%s\", \"reason\": ", tilec_plugin_state_name(p->state));
            tilec_cli_json_string(stdout, p->reason);
            printf(", \"vendor\": ");
            tilec_cli_json_string(stdout, p->vendor);
            printf(", \"version\": ");
            tilec_cli_json_string(stdout, p->version);
            printf(", \"abi\": \"%u.%u\", \"ir\": \"%u.%u..%u.%u\", \"certified\": %s, \"devices\": [",
                   TILEC_ABI_MAJOR(p->abi_version), TILEC_ABI_MINOR(p->abi_version),
                   TILEC_ABI_MAJOR(p->ir_min), TILEC_ABI_MINOR(p->ir_min),
                   TILEC_ABI_MAJOR(p->ir_max), TILEC_ABI_MINOR(p->ir_max),
                   certified_path(list, n, i) ? "true" : "false");
            for (int d = 0; d < p->ndevices; d++) {
                const tilec_device_desc_t *dv = &p->devices[d];
                caps_text(dv->caps, caps, sizeof caps);
                printf("%s{\"id\": \"%s:%d\", \"name\": ", d ? ", " : "", p->name, d);
                tilec_cli_json_string(stdout, dv->name);
                printf(", \"platform\": ");
                tilec_cli_json_string(stdout, dv->platform);
                printf(", \"caps\": ");
                tilec_cli_json_string(stdout, caps);
                printf(", \"global_mem_bytes\": %llu, \"compute_units\": %u, \"max_threads\": %u, "
                       "\"shared_mem_bytes\": %llu, \"shared_mem_default_bytes\": %lld, \"shared_mem_optin_bytes\": %lld, "
                       "\"subgroup_size\": %lld, \"clock_khz\": %lld, \"registers_per_block\": %lld, "
                       "\"arch\": ",
                       (unsigned long long)dv->global_mem_bytes, dv->compute_units, dv->max_threads,
                       (unsigned long long)dv->shared_mem_bytes, (long long)dv->shared_mem_default_bytes,
                       (long long)dv->shared_mem_optin_bytes, (long long)dv->subgroup_size,
                       (long long)dv->clock_khz, (long long)dv->registers_per_block);
                tilec_cli_json_string(stdout, dv->arch);
                printf(", \"mma_kinds\": ");
                tilec_cli_json_string(stdout, dv->mma_kinds);
                printf(", \"driver_version\": ");
                tilec_cli_json_string(stdout, dv->driver_version);
                printf("}");
            }
            printf("]}%s\n", i + 1 < n ? "," : "");
        }
        printf("]\n");
    } else {
        for (int i = 0; i < n; i++) {
            const tilec_plugin_desc_t *p = &list[i];
            if (p->state == TILEC_PLUGIN_REJECTED) {
                printf("%-12s %-11s %s: %s\n", p->name, tilec_plugin_state_name(p->state), p->path, p->reason);
                continue;
            }
            const char *cert = certified_path(list, n, i);
            printf("%-12s %-11s %s %s, ABI %u.%u, %s%s%s%s%s%s%s\n", p->name, tilec_plugin_state_name(p->state),
                   p->vendor, p->version, TILEC_ABI_MAJOR(p->abi_version),
                   TILEC_ABI_MINOR(p->abi_version), p->path, cert ? ", certified" : "",
                   cert && cert != p->path ? " (plugin build " : "",
                   cert && cert != p->path ? cert : "", cert && cert != p->path ? ")" : "",
                   p->reason[0] ? ": " : "", p->reason);
            for (int d = 0; d < p->ndevices; d++) {
                const tilec_device_desc_t *dv = &p->devices[d];
                caps_text(dv->caps, caps, sizeof caps);
                printf("    %s:%d  %s%s%s  [%s]\n", p->name, d, dv->name, dv->platform[0] ? " / " : "",
                       dv->platform, caps);
                print_props(dv);
            }
        }
    }
    tilec_plugins_free(list, n);
    return 0;
}

int main(int argc, char **argv)
{
    options_t o;
    memset(&o, 0, sizeof o);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("tilec %s (plugin ABI %u.%u, tile IR %d.%d)\n", TILEC_VERSION_STRING,
               TILEC_ABI_MAJOR(TILEC_PLUGIN_ABI_VERSION), TILEC_ABI_MINOR(TILEC_PLUGIN_ABI_VERSION),
               TILEC_IR_VERSION_MAJOR, TILEC_IR_VERSION_MINOR);
        return 0;
    }
    if (!strcmp(argv[1], "conform")) {
        return conform_main(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "tune")) {
        return tilec_cli_tune(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "bundle")) {
        return tilec_cli_bundle(argc - 1, argv + 1);
    }
    o.cmd = argv[1];
    int rc = parse_args(&o, argc, argv);
    if (!rc) {
        if (!strcmp(o.cmd, "run") || !strcmp(o.cmd, "compile")) {
            if (!o.file) {
                rc = usage_error("%s needs a FILE", o.cmd);
            } else if (o.reference && strcmp(o.cmd, "run")) {
                rc = usage_error("--reference only applies to 'tilec run --check', not to '%s'", o.cmd);
            } else if (o.reference && !o.check) {
                rc = usage_error("--reference needs --check: add --check (the reference backend "
                                 "computes what --check compares with)%s", "");
            } else if (!strcmp(o.cmd, "run")) {
                rc = cmd_run(&o);
            } else {
                rc = cmd_compile(&o);
            }
        } else if (!strcmp(o.cmd, "devices")) {
            rc = o.file ? usage_error("devices takes no FILE, got '%s'", o.file) : cmd_devices(&o);
        } else {
            rc = usage_error("unknown command '%s' (commands: run, compile, tune, bundle, devices, conform)", o.cmd);
        }
    }
    for (int i = 0; i < o.ndefs; i++) {
        free(o.def_storage[i]);
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < o.nio[k]; i++) free(o.io_storage[k][i]);
    /* A result line that never reached its reader (a full disk, a closed
     * pipe) must not pass silently.  (A failure already has its status.) */
    int werr = fflush(stdout) != 0 ? errno : 0;
    if (rc == EXIT_PASS && (werr || ferror(stdout))) {
        fprintf(stderr, "tilec: error writing standard output: %s\n", werr ? strerror(werr) : "write error");
        rc = EXIT_USAGE;
    }
    return rc;
}
