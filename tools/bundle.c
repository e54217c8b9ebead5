/*
 * tools/bundle.c — `tilec bundle FILE [-D NAME=VALUE]... [--entry NAME]
 * [--db PATH] [--backend B] -o F.tcb` (DESIGN.md §3, docs/tuning.md):
 * compiles the program's tuned configs (and its defaults) on the backend
 * into one bundle file that `tilec run --bundle F.tcb` loads with no
 * compiler.  The work is tilec_bundle_build (core/bundle.c).  Exit status:
 * 0 written, 2 usage or program errors, 3 backend or compile failures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"
#include "tools.h"

#define MAX_DEFS 256

static int uerr(const char *fmt, const char *arg)
{
    fprintf(stderr, "tilec bundle: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'tilec --help' for usage)\n");
    return 2;
}

int tilec_cli_bundle(int argc, char **argv)
{
    tilec_define_kv_t defs[MAX_DEFS];
    char *store[MAX_DEFS];
    const char *file = NULL, *entry = NULL, *db = NULL, *backend = NULL, *out = NULL;
    int ndefs = 0, rc = 0, n = 0;
    tilec_context_t *ctx = NULL;
    tilec_status_t s;
    for (int i = 1; i < argc && !rc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-D") || (!strncmp(a, "-D", 2) && a[2])) {
            const char *kv = a[2] ? a + 2 : v;
            char *c, *eq;
            if (!a[2]) i++;
            if (!kv || !(eq = strchr(kv, '=')) || eq == kv) {
                rc = uerr("-D expects NAME=VALUE, got '%s'", kv ? kv : "");
            } else if (ndefs == MAX_DEFS || !(c = strdup(kv))) {
                rc = uerr("too many -D options at '%s'", kv);
            } else {
                store[ndefs] = c;
                c[eq - kv] = '\0';
                defs[ndefs].name = c;
                defs[ndefs++].value = c + (eq - kv) + 1;
            }
        } else if (!strcmp(a, "--entry") || !strcmp(a, "--db") || !strcmp(a, "--backend") || !strcmp(a, "-o")) {
            if (!v) {
                rc = uerr("option %s needs a value", a);
                break;
            }
            *(!strcmp(a, "--entry") ? &entry : !strcmp(a, "--db") ? &db : !strcmp(a, "--backend") ? &backend
                                                                                                 : &out) = v;
            i++;
        } else if (a[0] == '-' && a[1]) {
            rc = uerr("unknown option '%s'", a);
        } else if (!file) {
            file = a;
        } else {
            rc = uerr("unexpected argument '%s'", a);
        }
    }
    if (!rc && (!file || !out)) {
        rc = uerr("bundle needs a FILE and -o F.tcb%s", "");
    }
    if (!rc) {
        s = tilec_context_create(backend, &ctx);
        if (s == TILEC_OK) {
            s = tilec_bundle_build(ctx, file, defs, ndefs, entry, db, out, &n);
        }
        if (s == TILEC_OK) {
            printf("bundled %d kernel%s of %s for %s (%s) into %s\n", n, n == 1 ? "" : "s", file,
                   tilec_context_backend(ctx), tilec_context_device(ctx), out);
        } else {
            const char *m = ctx ? tilec_context_message(ctx) : "out of memory";
            size_t len = strlen(m);
            fprintf(stderr, "%s%s%s", s == TILEC_E_PROGRAM ? "" : "tilec bundle: ", m,
                    len && m[len - 1] == '\n' ? "" : "\n");
            rc = s == TILEC_E_PROGRAM || s == TILEC_E_INVALID || s == TILEC_E_IO ? 2 : 3;
        }
        tilec_context_destroy(ctx);
    }
    for (int i = 0; i < ndefs; i++) {
        free(store[i]);
    }
    return rc;
}
