/*
 * tests/ir_harness.h — what the tile IR library's test files share: the
 * arena their suites build in, the print -> read -> print round trip and
 * the check that a malformed text is rejected with a located message.
 * Included once per test file (static functions).
 */
#ifndef TILEC_TESTS_IR_HARNESS_H
#define TILEC_TESTS_IR_HARNESS_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/ir.h"
#include "tilec/ir_verify.h"

static tilec_arena_t A;

static void setup(void) { tilec_arena_init(&A); }
static void teardown(void) { tilec_arena_destroy(&A); }

/* print -> read -> print must be byte-identical, the read module must
 * verify whenever the original does. */
static char *round_trip(const tilec_ir_module_t *m)
{
    char err[256];
    char *t1 = tilec_ir_print(m), *t2;
    tilec_ir_module_t *m2 = NULL;
    cr_assert_not_null(t1);
    /* the version rule: 1.0 unless a 1.1 construct is used */
    {
        char want[16];
        snprintf(want, sizeof want, "tileir 1.%d\n", tilec_ir_module_minor_needed(m));
        cr_assert_eq(strncmp(t1, want, 11), 0, "header: %.20s", t1);
    }
    cr_assert_eq(tilec_ir_read(&A, t1, strlen(t1), &m2, err, sizeof err), 0, "read failed: %s\n%s", err, t1);
    t2 = tilec_ir_print(m2);
    cr_assert_not_null(t2);
    cr_assert_str_eq(t1, t2);
    if (tilec_ir_verify(m, err, sizeof err) == 0) {
        cr_assert_eq(tilec_ir_verify(m2, err, sizeof err), 0, "re-read module fails to verify: %s", err);
    }
    free(t2);
    return t1;
}

/* Each malformed text must be rejected with a "LINE:COL: " prefix and the
 * expected message. */
static const char *const PRE = "tileir 1.0\nkernel k {\n  var bx int32 block\n  var i int32 loop\n"
                               "  param X global float32 [16, 4]\n  grid [bx = 1]\n  threads 32 1 1\n  body {\n";

static void expect_reject(const char *body, const char *what, int whole)
{
    char text[8192], err[256];
    tilec_ir_module_t *m = (tilec_ir_module_t *)&err; /* must be reset to NULL */
    int line, col;
    if (whole) {
        snprintf(text, sizeof text, "%s", body);
    } else {
        snprintf(text, sizeof text, "%s%s\n  }\n}\n", PRE, body);
    }
    cr_assert_eq(tilec_ir_read(&A, text, strlen(text), &m, err, sizeof err), -1, "accepted: %s", text);
    cr_assert_null(m);
    cr_assert_eq(sscanf(err, "%d:%d: ", &line, &col), 2, "no LINE:COL in '%s'", err);
    cr_assert_geq(line, 1);
    cr_assert_not_null(strstr(err, what), "message '%s' lacks '%s'", err, what);
}

#endif
