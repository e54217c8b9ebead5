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
#include "cli_harness.h"


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
