/*
 * tools/tune.c — `tilec tune` (docs/cli.md, docs/tuning.md):
 *
 *   tilec tune FILE [-D NAME=VALUE]... [--entry NAME] [--backend B] [--reference B]
 *              [--space NAME=V1,V2,...]... [--shapes SYM=V1,...]... [--db PATH]
 *              [-j N] [--budget S] [--timeout S] [--seed N] [--json OUT]
 *   tilec tune --list | --export F.json | --import F.json  [--db PATH]
 *
 * Arguments in, tilec_tune() (core/tune.c) does the work, results out: a
 * progress bar on a terminal (plain lines otherwise) on stderr, the final
 * table on stdout sorted by time with each config's speedup over the
 * defaults, and with --json the whole report.  Exit statuses as `run`'s:
 * 0 a config was tuned (and stored), 2 usage or program errors, 3 nothing
 * passed or the backend/database failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilec/tilec.h"
#include "tools.h"

#define MAX_LIST 256

typedef struct topts {
    tilec_tune_options_t t;
    tilec_define_kv_t defs[MAX_LIST];
    const char *space[MAX_LIST], *shapes[MAX_LIST];
    char *store[MAX_LIST];
    int nstore;
    const char *json, *list_export, *import;
    int list;
    int tty;
} topts_t;

static int uerr(const char *fmt, const char *arg)
{
    fprintf(stderr, "tilec tune: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'tilec --help' for usage)\n");
    return 2;
}

static int num(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return errno || *end || end == s || *out < 0;
}

static int parse(topts_t *o, int argc, char **argv)
{
    tilec_tune_options_t *t = &o->t;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
#define VAL()                                                        \
    do {                                                             \
        if (!v) return uerr("option %s needs a value", a);           \
        i++;                                                         \
    } while (0)
        if (!strcmp(a, "-D") || (!strncmp(a, "-D", 2) && a[2])) {
            const char *kv = a[2] ? a + 2 : v;
            char *c, *eq;
            if (!a[2]) VAL();
            if (!kv || !(eq = strchr(kv, '=')) || eq == kv) return uerr("-D expects NAME=VALUE, got '%s'", kv ? kv : "");
            if (t->ndefs == MAX_LIST || o->nstore == MAX_LIST) return uerr("too many -D options at '%s'", kv);
            if (!(c = strdup(kv))) return uerr("out of memory at '%s'", kv);
            o->store[o->nstore++] = c;
            c[eq - kv] = '\0';
            o->defs[t->ndefs].name = c;
            o->defs[t->ndefs++].value = c + (eq - kv) + 1;
        } else if (!strcmp(a, "--entry")) {
            VAL();
            t->entry = v;
        } else if (!strcmp(a, "--backend")) {
            VAL();
            t->backend = v;
        } else if (!strcmp(a, "--reference")) {
            VAL();
            t->reference = v;
        } else if (!strcmp(a, "--space")) {
            VAL();
            if (t->nspace == MAX_LIST) return uerr("too many --space options at '%s'", v);
            o->space[t->nspace++] = v;
        } else if (!strcmp(a, "--shapes")) {
            VAL();
            if (t->nshapes == MAX_LIST) return uerr("too many --shapes options at '%s'", v);
            o->shapes[t->nshapes++] = v;
        } else if (!strcmp(a, "--db")) {
            VAL();
            t->db = v;
        } else if (!strcmp(a, "-j")) {
            VAL();
            if (num(v, &d) || d < 1 || d > 1024 || d != (int)d) return uerr("-j expects a count from 1 to 1024, got '%s'", v);
            t->jobs = (int)d;
        } else if (!strcmp(a, "--budget")) {
            VAL();
            if (num(v, &d) || d == 0) return uerr("--budget expects seconds, got '%s'", v);
            t->budget_s = d;
        } else if (!strcmp(a, "--timeout")) {
            VAL();
            if (num(v, &d) || d == 0) return uerr("--timeout expects seconds, got '%s'", v);
            t->timeout_s = d;
        } else if (!strcmp(a, "--seed")) {
            VAL();
            if (num(v, &d) || d != (double)(unsigned long long)d) return uerr("--seed expects a non-negative integer, got '%s'", v);
            t->seed = (uint64_t)d;
        } else if (!strcmp(a, "--json")) {
            VAL();
            o->json = v;
        } else if (!strcmp(a, "--list")) {
            o->list = 1;
        } else if (!strcmp(a, "--export")) {
            VAL();
            o->list_export = v;
        } else if (!strcmp(a, "--import")) {
            VAL();
            o->import = v;
        } else if (a[0] == '-' && a[1]) {
            return uerr("unknown option '%s'", a);
        } else if (!t->path) {
            t->path = a;
        } else {
            return uerr("unexpected argument '%s'", a);
        }
#undef VAL
    }
    t->defs = o->defs;
    t->space = o->space;
    t->shapes = o->shapes;
    return 0;
}

static void progress(void *user, int phase, int done, int total, const tilec_tune_candidate_t *c)
{
    const topts_t *o = user;
    if (o->tty) {
        int w = 30, fill = total ? done * w / total : w;
        fprintf(stderr, "\r%s [%.*s%*s] %d/%d", phase ? "timing   " : "compiling", fill,
                "##############################", w - fill, "", done, total);
        if (done == total) {
            fputc('\n', stderr);
        }
    } else {
        fprintf(stderr, "%s %d/%d: %s: %s%s%s\n", phase ? "time" : "compile", done, total,
                c->config[0] ? c->config : "(defaults)",
                !phase && c->state == TILEC_TUNE_TIMED ? "compiled" : tilec_tune_state_name(c->state),
                c->message[0] ? ": " : "", c->message);
    }
    fflush(stderr);
}

static const tilec_tune_report_t *sort_rep;
static int by_time(const void *a, const void *b)
{
    const tilec_tune_candidate_t *x = &sort_rep->candidates[*(const int *)a];
    const tilec_tune_candidate_t *y = &sort_rep->candidates[*(const int *)b];
    int tx = x->state == TILEC_TUNE_TIMED, ty = y->state == TILEC_TUNE_TIMED;
    if (tx != ty) return ty - tx;
    if (tx) return (x->median_ms > y->median_ms) - (x->median_ms < y->median_ms);
    return *(const int *)a - *(const int *)b;
}

static void table(const topts_t *o, const tilec_tune_report_t *r)
{
    int *idx = calloc((size_t)r->ncandidates + 1, sizeof *idx);
    int pruned = 0;
    for (int i = 0; i < r->ncandidates; i++) {
        pruned += r->candidates[i].state == TILEC_TUNE_PRUNED;
    }
    printf("tuned %s on %s %s / %s: %d candidates in %.1f s", o->t.path, r->plugin, r->plugin_version,
           r->device, r->ncandidates, r->wall_s);
    if (pruned) {
        printf(", %d pruned before launch", pruned);
    }
    printf("\n");
    if (r->space && !strncmp(r->space, "default:", 8)) {
        printf("space: the %s\n", r->space);
    }
    for (int b = 0; idx && b < r->nbuckets; b++) {
        int n = 0;
        double dflt = -1;
        for (int i = 0; i < r->ncandidates; i++) {
            if (r->candidates[i].bucket == b) {
                idx[n++] = i;
                if (r->candidates[i].is_default && r->candidates[i].state == TILEC_TUNE_TIMED) {
                    dflt = r->candidates[i].median_ms;
                }
            }
        }
        sort_rep = r;
        qsort(idx, (size_t)n, sizeof *idx, by_time);
        if (r->buckets[b].shape[0]) {
            printf("shape %s:\n", r->buckets[b].shape);
        }
        printf("  %-10s %-10s %-8s %-14s %s\n", "median_ms", "min_ms", "speedup", "state", "config");
        for (int k = 0; k < n; k++) {
            const tilec_tune_candidate_t *c = &r->candidates[idx[k]];
            char sp[32] = "-";
            if (c->state == TILEC_TUNE_TIMED) {
                if (dflt > 0 && c->median_ms > 0) snprintf(sp, sizeof sp, "%.2fx", dflt / c->median_ms);
                printf("  %-10.4f %-10.4f %-8s %-14s %s%s%s\n", c->median_ms, c->min_ms, sp,
                       tilec_tune_state_name(c->state), c->config, c->is_default ? " (defaults)" : "",
                       idx[k] == r->buckets[b].best ? "  <- best" : "");
            } else {
                printf("  %-10s %-10s %-8s %-14s %s%s: %s\n", "-", "-", "-", tilec_tune_state_name(c->state),
                       c->config, c->is_default ? " (defaults)" : "", c->message);
            }
        }
        if (r->buckets[b].best >= 0) {
            printf("best%s%s: %s%s%s\n", r->buckets[b].shape[0] ? " for " : "", r->buckets[b].shape,
                   r->candidates[r->buckets[b].best].config, r->buckets[b].stored ? ", stored in " : "",
                   r->buckets[b].stored ? r->db : "");
        } else {
            printf("no candidate passed%s%s\n", r->buckets[b].shape[0] ? " for " : "", r->buckets[b].shape);
        }
    }
    free(idx);
}

static void json_report(FILE *f, const topts_t *o, const tilec_tune_report_t *r)
{
    fprintf(f, "{\"file\": ");
    tilec_cli_json_string(f, o->t.path);
    fprintf(f, ", \"plugin\": ");
    tilec_cli_json_string(f, r->plugin);
    fprintf(f, ", \"plugin_version\": ");
    tilec_cli_json_string(f, r->plugin_version);
    fprintf(f, ", \"device\": ");
    tilec_cli_json_string(f, r->device);
    fprintf(f, ", \"db\": ");
    tilec_cli_json_string(f, r->db);
    fprintf(f, ", \"space\": ");
    tilec_cli_json_string(f, r->space ? r->space : "");
    fprintf(f, ", \"wall_s\": %.3f, \"message\": ", r->wall_s);
    tilec_cli_json_string(f, r->message);
    fprintf(f, ",\n \"buckets\": [");
    for (int b = 0; b < r->nbuckets; b++) {
        fprintf(f, "%s{\"shape\": ", b ? ", " : "");
        tilec_cli_json_string(f, r->buckets[b].shape);
        fprintf(f, ", \"best\": ");
        tilec_cli_json_string(f, r->buckets[b].best >= 0 ? r->candidates[r->buckets[b].best].config : "");
        fprintf(f, ", \"stored\": %s}", r->buckets[b].stored ? "true" : "false");
    }
    fprintf(f, "],\n \"candidates\": [\n");
    for (int i = 0; i < r->ncandidates; i++) {
        const tilec_tune_candidate_t *c = &r->candidates[i];
        tilec_tune_phases_t ph = r->phase_ms ? r->phase_ms[i] : (tilec_tune_phases_t){0, 0, 0, 0, 0};
        fprintf(f, "  {\"shape\": ");
        tilec_cli_json_string(f, r->buckets[c->bucket].shape);
        fprintf(f, ", \"config\": ");
        tilec_cli_json_string(f, c->config);
        fprintf(f, ", \"default\": %s, \"state\": \"%s\", \"median_ms\": %.6f, \"min_ms\": %.6f, "
                   "\"runs\": %d, \"rel_err\": %.3e, \"wall_ms\": %.1f, \"setup_ms\": %.1f, "
                   "\"compile_ms\": %.1f, \"check_ms\": %.1f, \"timing_ms\": %.1f, \"message\": ",
                c->is_default ? "true" : "false", tilec_tune_state_name(c->state), c->median_ms, c->min_ms,
                c->runs, c->rel_err, ph.wall_ms, ph.setup_ms, ph.compile_ms, ph.check_ms, ph.timing_ms);
        tilec_cli_json_string(f, c->message);
        fprintf(f, "}%s\n", i + 1 < r->ncandidates ? "," : "");
    }
    fprintf(f, "]}\n");
}

static int db_command(const topts_t *o)
{
    char *msg = NULL;
    int n = 0;
    tilec_status_t s;
    if (o->list) {
        char **lines = NULL;
        s = tilec_tunedb_list(o->t.db, &lines, &n, &msg);
        for (int i = 0; s == TILEC_OK && i < n; i++) {
            printf("%s\n", lines[i]);
            tilec_free(lines[i]);
        }
        tilec_free(lines);
        if (s == TILEC_OK) {
            printf("%d tuned config%s\n", n, n == 1 ? "" : "s");
        }
    } else if (o->list_export) {
        s = tilec_tunedb_export(o->t.db, o->list_export, &n, &msg);
        if (s == TILEC_OK) printf("exported %d tuned config%s to %s\n", n, n == 1 ? "" : "s", o->list_export);
    } else {
        s = tilec_tunedb_import(o->t.db, o->import, &n, &msg);
        if (s == TILEC_OK) printf("imported %d tuned config%s from %s\n", n, n == 1 ? "" : "s", o->import);
    }
    if (s != TILEC_OK) {
        fprintf(stderr, "tilec tune: %s\n", msg ? msg : tilec_status_name(s));
    }
    tilec_free(msg);
    return s == TILEC_OK ? 0 : 3;
}

int tilec_cli_tune(int argc, char **argv)
{
    topts_t o;
    tilec_tune_report_t *r = NULL;
    tilec_status_t s;
    int rc;
    memset(&o, 0, sizeof o);
    o.t.struct_size = sizeof o.t;
    rc = parse(&o, argc, argv);
    if (rc) {
        goto out;
    }
    if (o.list + !!o.list_export + !!o.import > 1) {
        rc = uerr("give one of --list, --export and --import%s", "");
    } else if (o.list || o.list_export || o.import) {
        rc = o.t.path ? uerr("--list, --export and --import take no FILE, got '%s'", o.t.path) : db_command(&o);
    } else if (!o.t.path) {
        rc = uerr("tune needs a FILE (or --list, --export F, --import F)%s", "");
    } else {
        o.tty = isatty(2);
        o.t.progress = progress;
        o.t.user = &o;
        s = tilec_tune(&o.t, &r);
        if (r && r->ncandidates > 0) {
            table(&o, r);
        }
        if (o.json && r) {
            FILE *f = fopen(o.json, "w");
            if (!f) {
                fprintf(stderr, "tilec tune: cannot write %s: %s\n", o.json, strerror(errno));
            } else {
                json_report(f, &o, r);
                fclose(f);
            }
        }
        if (s != TILEC_OK) {
            const char *m = r && r->message ? r->message : "out of memory";
            size_t n = strlen(m);
            /* diagnostics carry their own "FILE:LINE:COL: error:" */
            fprintf(stderr, "%s%s%s", s == TILEC_E_PROGRAM ? "" : "tilec tune: ", m,
                    n && m[n - 1] == '\n' ? "" : "\n");
        }
        rc = s == TILEC_OK ? 0 : (s == TILEC_E_PROGRAM || s == TILEC_E_INVALID || s == TILEC_E_IO) ? 2 : 3;
    }
out:
    tilec_tune_report_free(r);
    for (int i = 0; i < o.nstore; i++) {
        free(o.store[i]);
    }
    return rc;
}
