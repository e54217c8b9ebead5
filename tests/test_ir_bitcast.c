/*
 * tests/test_ir_bitcast.c — tile IR 1.4's bit cast (bitcast(a):DTYPE): its
 * text form round-trips, a module using it needs 1.4 and says so, the
 * reader refuses it under an older header, the verifier refuses widths
 * that differ, bool and the 4-bit dtypes, and the integer evaluator folds
 * an integer-to-integer bit cast as the two's-complement wrap.
 * (tests/test_language.c runs bitcast.py on the interpreter and the CPU
 * backend and checks the bits by hand.)
 */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "tilec/ir.h"
#include "tilec/ir_verify.h"

static tilec_arena_t A;

static void setup(void) { tilec_arena_init(&A); }
static void teardown(void) { tilec_arena_destroy(&A); }

TestSuite(ir_bitcast, .init = setup, .fini = teardown);

/* a kernel storing bitcast(X[i]):TO into Y (dtypes FROM and TO) */
static void kernel_text(char *t, size_t n, const char *ver, const char *from, const char *to)
{
    snprintf(t, n,
             "tileir %s\nkernel k {\n  var bx int32 block\n  var i int32 loop\n"
             "  param X global %s [4]\n  param Y global %s [4] out\n"
             "  grid [bx = 1]\n  threads 32 1 1\n  body {\n"
             "    for i in parallel(4) {\n      store Y[i] = bitcast(X[i]):%s\n"
             "    }\n  }\n}\n",
             ver, from, to, to);
}

Test(ir_bitcast, round_trips_and_needs_1_4)
{
    char t[1024], err[256];
    tilec_ir_module_t *m = NULL, *m2 = NULL;
    kernel_text(t, sizeof t, "1.4", "float32", "uint32");
    cr_assert_eq(tilec_ir_read(&A, t, strlen(t), &m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(tilec_ir_module_minor_needed(m), 4);
    char *p = tilec_ir_print(m);
    cr_assert_not_null(p);
    cr_expect_str_eq(p, t);
    cr_assert_eq(tilec_ir_read(&A, p, strlen(p), &m2, err, sizeof err), 0, "%s", err);
    free(p);
}

Test(ir_bitcast, reader_refuses_it_under_1_3)
{
    char t[1024], err[256];
    tilec_ir_module_t *m = NULL;
    kernel_text(t, sizeof t, "1.3", "float32", "uint32");
    cr_assert_eq(tilec_ir_read(&A, t, strlen(t), &m, err, sizeof err), -1);
    cr_expect_null(m);
    cr_expect_not_null(strstr(err, "bitcast needs tileir 1.4 (the header says 1.3)"), "%s", err);
    int line = 0, col = 0;
    cr_expect_eq(sscanf(err, "%d:%d:", &line, &col), 2, "located: %s", err);
    cr_expect_eq(line, 11, "the store's line: %s", err);
}

Test(ir_bitcast, verifier_checks_the_widths)
{
    static const char *const bad[][2] = {
        {"float32", "uint16"}, {"float16", "int32"}, {"bool", "uint8"}, {"uint8", "bool"},
        {"int4", "uint4"}, {"float64", "float32"},
    };
    static const char *const good[][2] = {
        {"float16", "bfloat16"}, {"float8_e4m3fn", "int8"}, {"float64", "int64"}, {"uint32", "float32"},
        {"int16", "uint16"},
    };
    char t[1024], err[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tilec_ir_module_t *m = NULL;
        kernel_text(t, sizeof t, "1.4", bad[i][0], bad[i][1]);
        cr_assert_eq(tilec_ir_read(&A, t, strlen(t), &m, err, sizeof err), 0, "%s", err);
        cr_expect_eq(tilec_ir_verify(m, err, sizeof err), -1, "%s -> %s accepted", bad[i][0], bad[i][1]);
        cr_expect_not_null(strstr(err, "'bitcast' from"), "%s", err);
    }
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        tilec_ir_module_t *m = NULL;
        kernel_text(t, sizeof t, "1.4", good[i][0], good[i][1]);
        cr_assert_eq(tilec_ir_read(&A, t, strlen(t), &m, err, sizeof err), 0, "%s", err);
        cr_expect_eq(tilec_ir_verify(m, err, sizeof err), 0, "%s -> %s: %s", good[i][0], good[i][1], err);
    }
}

Test(ir_bitcast, integer_evaluator_wraps)
{
    int64_t v = 0;
    tilec_ir_expr_t *e = tilec_ir_bitcast(&A, TILEC_INT16, tilec_ir_int(&A, 0xc000, TILEC_UINT16));
    cr_assert_not_null(e);
    cr_expect_eq(e->dtype, TILEC_INT16);
    cr_assert_eq(tilec_ir_eval_int(e, NULL, NULL, &v), 0);
    cr_expect_eq(v, -16384);
    e = tilec_ir_bitcast(&A, TILEC_UINT32, tilec_ir_float(&A, 1.0, TILEC_FLOAT32));
    cr_expect_neq(tilec_ir_eval_int(e, NULL, NULL, &v), 0, "a float's bits are not folded here");
}
