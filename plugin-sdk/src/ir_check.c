/*
 * plugin-sdk/src/ir_check.c — what runs after every pass (tilec/ir_check.h):
 * the verifier, the text round trip when TILEC_IR_ROUNDTRIP=1, and the
 * TILEC_LOG=ir trace.  The core's pass pipeline and the SDK's lowering
 * driver both call tilec_ir_check_pass, so a trace of a whole compile reads
 * the same from the first core pass to the last lowering pass, and the
 * checks are the same on both sides of the plugin ABI.
 */
#include "tilec/ir_check.h"
#include "tilec/ir_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A comma list (TILEC_LOG's form) contains word. */
static int list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    const char *p = list;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if ((len == n && strncmp(p, word, n) == 0) || (len == 3 && strncmp(p, "all", 3) == 0)) {
            return 1;
        }
        p = e ? e + 1 : NULL;
    }
    return 0;
}

int tilec_ir_log_wanted(void)
{
    const char *v = secure_getenv("TILEC_LOG");
    return v && list_has(v, "ir");
}

int tilec_ir_roundtrip_wanted(void)
{
    const char *v = secure_getenv("TILEC_IR_ROUNDTRIP");
    return v && strcmp(v, "1") == 0;
}

void tilec_ir_log_module(const char *what, const tilec_ir_module_t *m)
{
    char *text = tilec_ir_print(m);
    if (text) {
        size_t n = strlen(text);
        fprintf(stderr, "tilec[ir]: == %s\n%.*s\n", what, (int)(n > 0 && text[n - 1] == '\n' ? n - 1 : n), text);
    } else {
        fprintf(stderr, "tilec[ir]: == %s: (out of memory printing the IR)\n", what);
    }
    free(text);
}

int tilec_ir_roundtrip(const tilec_ir_module_t *m, char *err, size_t errlen)
{
    tilec_arena_t a;
    tilec_ir_module_t *m2 = NULL;
    char rerr[256], *t1 = tilec_ir_print(m), *t2 = NULL;
    int rc = -1;
    tilec_arena_init(&a);
    if (!t1) {
        snprintf(err, errlen, "round trip: out of memory printing the IR");
    } else if (tilec_ir_read(&a, t1, strlen(t1), &m2, rerr, sizeof rerr) != 0) {
        snprintf(err, errlen, "round trip: the printed module does not read back: %s", rerr);
    } else if (!(t2 = tilec_ir_print(m2))) {
        snprintf(err, errlen, "round trip: out of memory printing the IR");
    } else if (strcmp(t1, t2) != 0) {
        size_t i = 0;
        while (t1[i] && t1[i] == t2[i]) {
            i++;
        }
        snprintf(err, errlen, "round trip: the module prints differently after reading it back (at byte %zu)", i);
    } else {
        rc = 0;
    }
    free(t1);
    free(t2);
    tilec_arena_destroy(&a);
    return rc;
}

int tilec_ir_check_pass(const char *pass, const tilec_ir_module_t *m, char *err, size_t errlen)
{
    char msg[512];
    if (tilec_ir_verify(m, msg, sizeof msg) != 0 || (tilec_ir_roundtrip_wanted() && tilec_ir_roundtrip(m, msg, sizeof msg) != 0)) {
        if (err && errlen) {
            if (pass) {
                snprintf(err, errlen, "%s (after pass %s)", msg, pass);
            } else {
                snprintf(err, errlen, "%s", msg);
            }
        }
        return -1;
    }
    if (tilec_ir_log_wanted()) {
        char what[96];
        snprintf(what, sizeof what, pass ? "after %s" : "before passes", pass);
        tilec_ir_log_module(what, m);
    }
    return 0;
}
