/*
 * tests/test_tune.c — the autotuner, the tuning database and the
 * @autotune space (docs/tuning.md), on the cpu backend.
 *
 * The programs are in tests/tune/; gemm_space.py has configs that pass,
 * one that fails the check (wrong=2.0) and, on the test plugin
 * libtilec-tunecrash.so, ones whose compile segfaults (crash=1).  Every
 * test has its own directory for the database; the kernel cache is shared
 * (build/tests/tune-cache) so that later tests compile nothing.  The CLI
 * tests run build/tilec (or $TILEC_BUILD_DIR/tilec) through sh.  No test
 * measures time: which passing config is fastest is not asserted.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilec/tilec.h"
#include "check.h"
#include "tune.h"
#include "tunedb.h"

#define GEMM "tests/tune/gemm_space.py"

static char dir[64], db[128];

static const char *build_dir(void)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    return b && *b ? b : "build";
}

static void setup(void)
{
    char tmpl[] = "/tmp/tilec-tune-XXXXXX", cache[PATH_MAX], plugins[PATH_MAX];
    cr_assert_not_null(mkdtemp(tmpl));
    snprintf(dir, sizeof dir, "%s", tmpl);
    snprintf(db, sizeof db, "%s/tune.db", dir);
    snprintf(cache, sizeof cache, "%s/tests/tune-cache", build_dir());
    mkdir(cache, 0700);
    snprintf(plugins, sizeof plugins, "%s/tests/tune-plugins", build_dir());
    setenv("TILEC_CACHE_DIR", cache, 1);
    setenv("TILEC_TUNE_DB", db, 1);
    setenv("TILEC_BACKEND", "cpu", 1);
    setenv("TILEC_PLUGIN_PATH", plugins, 1);
    unsetenv("TILEC_LOG");
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "chmod -R u+w %s; rm -rf %s", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(tune, .init = setup, .fini = teardown, .timeout = 120);

/* Runs a shell command line (the CLI), stdout into *out (malloc'd). */
static int sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(char **out, const char *fmt, ...)
{
    char cmd[4096], path[128];
    va_list ap;
    int rc;
    size_t n = 0;
    FILE *f;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char full[4400];
    snprintf(full, sizeof full, "%s > %s 2>&1", cmd, path);
    rc = system(full);
    *out = calloc(1, 65536);
    f = fopen(path, "r");
    if (f && *out) {
        n = fread(*out, 1, 65535, f);
        (*out)[n] = '\0';
    }
    if (f) fclose(f);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static tilec_tune_options_t opts(const char *path)
{
    tilec_tune_options_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.path = path;
    o.jobs = 2;
    o.timeout_s = 100;
    return o;
}

static int find(const tilec_tune_report_t *r, const char *config)
{
    for (int i = 0; i < r->ncandidates; i++) {
        if (!strcmp(r->candidates[i].config, config)) return i;
    }
    return -1;
}

/* Tunes gemm_space.py over its own @autotune configs into db. */
static tilec_tune_report_t *tune_gemm(void)
{
    tilec_tune_options_t o = opts(GEMM);
    tilec_tune_report_t *r = NULL;
    tilec_status_t s = tilec_tune(&o, &r);
    cr_assert_not_null(r);
    cr_assert_eq(s, TILEC_OK, "tilec_tune: %s", r->message);
    return r;
}

/* ---- the @autotune space is kept ------------------------------------------------ */

Test(tune, autotune_configs_are_kept)
{
    tilec_context_t *ctx = NULL;
    tilec_program_t *p = NULL;
    const tilec_define_kv_t *kv;
    const char *name, *dflt, *val;
    int n;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    cr_assert_eq(tilec_program_load_file(ctx, GEMM, NULL, 0, NULL, &p), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    /* get_configs(M, N) ran with the factory's M and N: 16 and 32 fit M=64 */
    cr_assert_eq(tilec_program_num_configs(p), 3);
    cr_assert_eq(tilec_program_config(p, 0, &kv, &n), TILEC_OK);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(kv[0].name, "block_M");
    cr_assert_str_eq(kv[0].value, "16");
    cr_assert_eq(tilec_program_config(p, 2, &kv, &n), TILEC_OK);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(kv[2].name, "wrong");
    cr_assert_str_eq(kv[2].value, "2.0");
    cr_assert_eq(tilec_program_config(p, 3, &kv, &n), TILEC_E_INVALID);
    cr_assert_str_eq(tilec_program_entry(p), "gemm_space");
    cr_assert_eq(strlen(tilec_program_source_hash(p)), 64);
    cr_assert_eq(tilec_program_num_factory_params(p), 8);
    cr_assert_eq(tilec_program_factory_param(p, 3, &name, &dflt, &val), TILEC_OK);
    cr_assert_str_eq(name, "block_M");
    cr_assert_str_eq(dflt, "32");
    cr_assert_str_eq(val, "32");
    tilec_program_free(p);
    /* with M=16 only block_M=16 fits, so the configs function sees -D M */
    tilec_define_kv_t d = {"M", "16"};
    cr_assert_eq(tilec_program_load_file(ctx, GEMM, &d, 1, NULL, &p), TILEC_OK);
    cr_assert_eq(tilec_program_num_configs(p), 2);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

Test(tune, autotune_bad_configs_are_diagnostics)
{
    static const char *const bad[] = {
        "@autotune(configs=[{'blockM': 1}])\n",
        "@autotune(configs=[{'block_M': (1, 2)}])\n",
        "@autotune(configs=5)\n",
        "@autotune(configs=[], speed=3)\n",
    };
    static const char *const why[] = {"'blockM' is not a parameter", "a config value must be",
                                      "must be a list of dicts", "no keyword argument 'speed'"};
    static const char body[] =
        "def f(M=16, block_M=16):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((M,), 'float32')):\n"
        "        with T.Kernel(1, threads=1) as bx:\n"
        "            A[0] = 1.0\n"
        "    return main\n";
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char src[1024];
        tilec_program_t *p = NULL;
        snprintf(src, sizeof src, "import tilelang\nimport tilelang.language as T\n"
                 "from tilelang.autotuner import autotune\n%s%s", bad[i], body);
        cr_assert_eq(tilec_program_load_string(ctx, "bad.py", src, strlen(src), NULL, 0, NULL, &p),
                     TILEC_E_PROGRAM, "case %zu loaded", i);
        cr_assert(strstr(tilec_context_message(ctx), why[i]), "case %zu: %s", i, tilec_context_message(ctx));
        cr_assert(strstr(tilec_context_message(ctx), "bad.py:"), "%s", tilec_context_message(ctx));
    }
    tilec_context_destroy(ctx);
}

/* The tuner makes each candidate's inputs from the reference's (same dtypes
 * and shapes) instead of drawing them again: they must be the very bytes
 * the seed gives, and a program with other tensors must still be seeded. */
Test(tune, candidate_inputs_are_the_seeded_inputs)
{
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    tilec_define_kv_t small[] = {{"M", "64"}, {"N", "48"}, {"K", "32"}};
    tilec_define_kv_t other[] = {{"M", "64"}, {"N", "40"}, {"K", "32"}};
    tilec_define_kv_t tile[] = {{"M", "64"}, {"N", "48"}, {"K", "32"}, {"block_M", "32"}};
    tilec_program_t *a = NULL, *b = NULL, *c = NULL;
    cr_assert_eq(tilec_program_load_file(ctx, "examples/gemm.py", small, 3, NULL, &a), TILEC_OK);
    cr_assert_eq(tilec_program_load_file(ctx, "examples/gemm.py", tile, 4, NULL, &b), TILEC_OK);
    cr_assert_eq(tilec_program_load_file(ctx, "examples/gemm.py", other, 3, NULL, &c), TILEC_OK);
    check_set_t ref, like, seeded, diff, fresh;
    char *msg = NULL;
    cr_assert_eq(check_set_make(a, "gemm.py", 7, &ref, &msg), CHECK_OK);
    cr_assert_eq(check_set_make_like(b, "gemm.py", 7, &ref, &like, &msg), CHECK_OK);
    cr_assert_eq(check_set_make(b, "gemm.py", 7, &seeded, &msg), CHECK_OK);
    cr_assert_eq(like.n, 3);
    for (int i = 0; i < like.n; i++) {
        cr_assert_eq(like.t[i].bytes, seeded.t[i].bytes);
        cr_assert(memcmp(like.t[i].init, seeded.t[i].init, like.t[i].bytes) == 0, "tensor %d", i);
        cr_assert(memcmp(like.t[i].out, seeded.t[i].init, like.t[i].bytes) == 0, "tensor %d", i);
    }
    /* N=40: other shapes, so the inputs are drawn from the seed */
    cr_assert_eq(check_set_make_like(c, "gemm.py", 7, &ref, &diff, &msg), CHECK_OK);
    cr_assert_eq(check_set_make(c, "gemm.py", 7, &fresh, &msg), CHECK_OK);
    for (int i = 0; i < diff.n; i++) {
        cr_assert(memcmp(diff.t[i].init, fresh.t[i].init, diff.t[i].bytes) == 0, "tensor %d", i);
    }
    cr_assert(memcmp(diff.t[0].init, ref.t[0].init, ref.t[0].bytes) != 0 ||
              diff.t[1].bytes != ref.t[1].bytes);
    check_set_free(&ref);
    check_set_free(&like);
    check_set_free(&seeded);
    check_set_free(&diff);
    check_set_free(&fresh);
    tilec_program_free(a);
    tilec_program_free(b);
    tilec_program_free(c);
    tilec_context_destroy(ctx);
}

/* The candidate order after the defaults: a permutation that keeps the
 * first entries in place, the same for the same --seed and another for
 * another seed, drawn from check.c's seeded stream (one generator in the
 * tree). */
Test(tune, candidate_order_is_a_seeded_shuffle)
{
    enum { N = 40 };
    int a[N], b[N], c[N], want[N], seen[N] = {0};
    for (int i = 0; i < N; i++) {
        a[i] = b[i] = c[i] = want[i] = i;
    }
    tilec_tune_shuffle(7, a, N, 1);
    tilec_tune_shuffle(7, b, N, 1);
    tilec_tune_shuffle(8, c, N, 1);
    cr_assert_eq(a[0], 0, "the default moved");
    for (int i = 0; i < N; i++) {
        cr_assert(a[i] >= 0 && a[i] < N && !seen[a[i]]++, "not a permutation at %d", i);
    }
    cr_assert(memcmp(a, b, sizeof a) == 0, "the same seed gave two orders");
    cr_assert(memcmp(a, c, sizeof a) != 0, "seeds 7 and 8 gave the same order");
    int moved = 0;
    for (int i = 0; i < N; i++) {
        moved += a[i] != i;
    }
    cr_assert_gt(moved, N / 2, "only %d of %d candidates moved", moved, N);
    check_rng_t r;
    check_rng_seed(&r, 7);
    for (int j = N - 1; j > 1; j--) {
        int k = (int)check_rng_int(&r, 1, j), t = want[j];
        want[j] = want[k];
        want[k] = t;
    }
    cr_assert(memcmp(a, want, sizeof a) == 0, "not a Fisher-Yates shuffle on check_rng");
    int one = 5;
    tilec_tune_shuffle(7, &one, 1, 0);
    cr_assert_eq(one, 5);
}

/* ---- tuning ------------------------------------------------------------------------- */

Test(tune, picks_a_passing_config_never_the_wrong_one_and_stores_it)
{
    tilec_tune_report_t *r = tune_gemm();
    int wrong = find(r, "block_M=32 block_N=32 wrong=2.0");
    int dflt = find(r, "block_M=32 block_N=32 wrong=1.0");
    cr_assert_eq(r->ncandidates, 4, "the defaults and the three configs");
    cr_assert_geq(wrong, 0);
    cr_assert_geq(dflt, 0);
    cr_assert(r->candidates[dflt].is_default);
    cr_assert_eq(r->candidates[wrong].state, TILEC_TUNE_CHECK_FAILED, "%s", r->candidates[wrong].message);
    cr_assert(strstr(r->candidates[wrong].message, "differs from the reference"));
    cr_assert_eq(r->nbuckets, 1);
    int best = r->buckets[0].best;
    cr_assert_geq(best, 0);
    cr_assert_neq(best, wrong);
    cr_assert_eq(r->candidates[best].state, TILEC_TUNE_TIMED);
    for (int i = 0; i < r->ncandidates; i++) {
        if (r->candidates[i].state == TILEC_TUNE_TIMED) {
            cr_assert_geq(r->candidates[best].median_ms, 0);
            cr_assert_leq(r->candidates[best].median_ms, r->candidates[i].median_ms);
            cr_assert_gt(r->candidates[i].runs, 0);
        }
    }
    cr_assert(r->buckets[0].stored);
    cr_assert_str_eq(r->db, db);
    /* the database has it, and a lookup for the same problem finds it */
    char **lines = NULL, *msg = NULL;
    int n = 0;
    cr_assert_eq(tilec_tunedb_list(NULL, &lines, &n, &msg), TILEC_OK, "%s", msg);
    cr_assert_eq(n, 1);
    cr_assert(strstr(lines[0], r->candidates[best].config), "%s", lines[0]);
    tilec_free(lines[0]);
    tilec_free(lines);
    tilec_context_t *ctx = NULL;
    tilec_program_t *p = NULL;
    tilec_tuned_t *t = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    cr_assert_eq(tilec_program_load_file(ctx, GEMM, NULL, 0, NULL, &p), TILEC_OK);
    cr_assert_eq(tilec_tune_lookup(ctx, p, NULL, &t), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_assert_not_null(t);
    cr_assert_str_eq(t->text, r->candidates[best].config);
    cr_assert_eq(t->nearest, 0);
    tilec_tuned_free(t);
    tilec_program_free(p);
    /* another problem (-D M=32) has nothing tuned */
    tilec_define_kv_t d = {"M", "32"};
    cr_assert_eq(tilec_program_load_file(ctx, GEMM, &d, 1, NULL, &p), TILEC_OK);
    cr_assert_eq(tilec_tune_lookup(ctx, p, NULL, &t), TILEC_OK);
    cr_assert_null(t);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
    tilec_tune_report_free(r);
}

Test(tune, a_crashing_candidate_is_a_failed_candidate)
{
    static const char *const space[] = {"block_M=16,32", "crash=0,1"};
    tilec_tune_options_t o = opts(GEMM);
    tilec_tune_report_t *r = NULL;
    o.backend = "tunecrash";
    o.space = space;
    o.nspace = 2;
    o.db = "";
    cr_assert_eq(tilec_tune(&o, &r), TILEC_OK, "%s", r ? r->message : "");
    cr_assert_str_eq(r->plugin, "tunecrash");
    cr_assert_eq(r->ncandidates, 4, "the defaults are a point of the space");
    for (int i = 0; i < r->ncandidates; i++) {
        const tilec_tune_candidate_t *c = &r->candidates[i];
        if (strstr(c->config, "crash=1")) {
            cr_assert_eq(c->state, TILEC_TUNE_CRASHED, "%s: %s", c->config, tilec_tune_state_name(c->state));
            cr_assert(strstr(c->message, "signal"), "%s", c->message);
        } else {
            cr_assert_eq(c->state, TILEC_TUNE_TIMED, "%s: %s", c->config, c->message);
        }
    }
    cr_assert_geq(r->buckets[0].best, 0);
    cr_assert(strstr(r->candidates[r->buckets[0].best].config, "crash=0"));
    cr_assert_eq(r->buckets[0].stored, 0, "db \"\" stores nothing");
    cr_assert_eq(access(db, F_OK), -1);
    tilec_tune_report_free(r);
}

Test(tune, a_candidate_the_device_cannot_hold_is_pruned_before_launch)
{
    /* tunecrash says 16 KiB of shared memory per block; block_M=64 needs
     * 23 KiB on the cpu backend (its module info), block_M=16 and the
     * defaults (32) less */
    static const char *const space[] = {"block_M=16,64"};
    tilec_tune_options_t o = opts(GEMM);
    tilec_tune_report_t *r = NULL;
    o.backend = "tunecrash";
    o.space = space;
    o.nspace = 1;
    o.db = "";
    cr_assert_eq(tilec_tune(&o, &r), TILEC_OK, "%s", r ? r->message : "");
    cr_assert_eq(r->ncandidates, 3);
    int pruned = 0;
    for (int i = 0; i < r->ncandidates; i++) {
        const tilec_tune_candidate_t *c = &r->candidates[i];
        if (strstr(c->config, "block_M=64")) {
            cr_assert_eq(c->state, TILEC_TUNE_PRUNED, "%s: %s", c->config, tilec_tune_state_name(c->state));
            cr_assert(strstr(c->message, "bytes of shared memory per block; the device allows 16384"), "%s",
                      c->message);
            cr_assert_eq(c->runs, 0);
            pruned++;
        } else {
            cr_assert_eq(c->state, TILEC_TUNE_TIMED, "%s: %s", c->config, c->message);
        }
    }
    cr_assert_eq(pruned, 1);
    cr_assert_str_eq(tilec_tune_state_name(TILEC_TUNE_PRUNED), "pruned");
    tilec_tune_report_free(r);
}

Test(tune, the_reference_can_come_from_a_backend)
{
    static const char *const space[] = {"block_M=16,32", "wrong=1.0,2.0"};
    tilec_tune_options_t o = opts(GEMM);
    tilec_tune_report_t *r = NULL;
    o.reference = "cpu";
    o.space = space;
    o.nspace = 2;
    o.db = "";
    cr_assert_eq(tilec_tune(&o, &r), TILEC_OK, "%s", r ? r->message : "");
    cr_assert_eq(r->ncandidates, 4);
    for (int i = 0; i < r->ncandidates; i++) {
        const tilec_tune_candidate_t *c = &r->candidates[i];
        cr_assert_eq(c->state, strstr(c->config, "wrong=2.0") ? TILEC_TUNE_CHECK_FAILED : TILEC_TUNE_TIMED,
                     "%s: %s", c->config, c->message);
    }
    tilec_tune_report_free(r);
    o.reference = "nosuchbackend";
    cr_assert_eq(tilec_tune(&o, &r), TILEC_E_LAUNCH);
    cr_assert(strstr(r->message, "reference backend 'nosuchbackend' is not usable"), "%s", r->message);
    tilec_tune_report_free(r);
}

/* No --space and no @autotune: the factory's tile parameters around their
 * defaults (docs/tuning.md); on the cpu, neither threads nor num_stages. */
Test(tune, the_default_space_varies_the_tile_parameters)
{
    static const tilec_define_kv_t fix[] = {{"M", "64"}, {"N", "64"}, {"K", "64"}, {"block_K", "32"}};
    tilec_tune_options_t o = opts("examples/gemm_fp32.py");
    tilec_tune_report_t *r = NULL;
    o.defs = fix;
    o.ndefs = 4;
    o.db = "";
    o.backend = "cpu";
    cr_assert_eq(tilec_tune(&o, &r), TILEC_OK, "%s", r ? r->message : "");
    cr_assert(!strncmp(r->space, "default: ", 9), "%s", r->space);
    cr_assert(strstr(r->space, "block_M=") && strstr(r->space, "block_N="), "%s", r->space);
    cr_assert_null(strstr(r->space, "block_K"), "a fixed parameter was tuned: %s", r->space);
    cr_assert_null(strstr(r->space, "threads"), "threads tuned on a cpu: %s", r->space);
    cr_assert_gt(r->ncandidates, 4);
    cr_assert_geq(r->buckets[0].best, 0);
    for (int i = 0; i < r->ncandidates; i++) {
        cr_assert_eq(r->candidates[i].state, TILEC_TUNE_TIMED, "%s: %s", r->candidates[i].config,
                     r->candidates[i].message);
        cr_assert_gt(r->phase_ms[i].wall_ms, r->phase_ms[i].timing_ms);
        cr_assert_gt(r->phase_ms[i].timing_ms, 0);
    }
    tilec_tune_report_free(r);
}

Test(tune, usage_errors_are_reported)
{
    static const char *const space[] = {"block_M=16,32"};
    static const tilec_define_kv_t all[] = {{"block_M", "16"}, {"block_N", "16"}, {"block_K", "16"}};
    tilec_tune_options_t o = opts("examples/gemm_fp32.py");
    tilec_tune_report_t *r = NULL;
    o.defs = all;
    o.ndefs = 3;
    o.backend = "cpu";
    cr_assert_eq(tilec_tune(&o, &r), TILEC_E_INVALID);
    cr_assert(strstr(r->message, "no tuning space: the factory has no tile parameter to vary"), "%s", r->message);
    tilec_tune_report_free(r);
    o = opts("examples/gemm_fp32.py");
    tilec_define_kv_t d = {"block_M", "16"};
    o.space = space;
    o.nspace = 1;
    o.defs = &d;
    o.ndefs = 1;
    cr_assert_eq(tilec_tune(&o, &r), TILEC_E_INVALID);
    cr_assert(strstr(r->message, "cannot be fixed too"), "%s", r->message);
    tilec_tune_report_free(r);
    o = opts("tests/tune/no-such-file.py");
    cr_assert_eq(tilec_tune(&o, &r), TILEC_E_IO);
    tilec_tune_report_free(r);
}

Test(tune, shapes_get_their_own_configs_and_run_takes_the_nearest)
{
    static const char *const space[] = {"block_M=16,32"}, *const shapes[] = {"M=32,64"};
    tilec_tune_options_t o = opts(GEMM);
    tilec_tune_report_t *r = NULL;
    char *out = NULL;
    o.space = space;
    o.nspace = 1;
    o.shapes = shapes;
    o.nshapes = 1;
    cr_assert_eq(tilec_tune(&o, &r), TILEC_OK, "%s", r->message);
    cr_assert_eq(r->nbuckets, 2);
    cr_assert_str_eq(r->buckets[0].shape, "M=32");
    cr_assert_str_eq(r->buckets[1].shape, "M=64");
    cr_assert(r->buckets[0].stored && r->buckets[1].stored);
    tilec_tune_report_free(r);
    /* M=40 is nearest 32, M=56 nearest 64 (by ratio) */
    cr_assert_eq(sh(&out, "%s/tilec run %s -D M=40 --check", build_dir(), GEMM), 0, "%s", out);
    cr_assert(strstr(out, "tuned: block_M=") && strstr(out, "(nearest stored shape M=32)"), "%s", out);
    cr_assert(strstr(out, "PASS"), "%s", out);
    free(out);
    cr_assert_eq(sh(&out, "%s/tilec run %s -D M=56 --check", build_dir(), GEMM), 0, "%s", out);
    cr_assert(strstr(out, "(nearest stored shape M=64)"), "%s", out);
    free(out);
    cr_assert_eq(sh(&out, "%s/tilec run %s -D M=64", build_dir(), GEMM), 0, "%s", out);
    cr_assert(strstr(out, "tuned: block_M=") && !strstr(out, "nearest"), "%s", out);
    free(out);
    /* another fixed define is another problem */
    cr_assert_eq(sh(&out, "%s/tilec run %s -D M=64 -D K=16", build_dir(), GEMM), 0, "%s", out);
    cr_assert_null(strstr(out, "tuned:"), "%s", out);
    free(out);
}

Test(tune, cli_tune_then_run_uses_it_and_D_wins)
{
    char *out = NULL, json[160];
    snprintf(json, sizeof json, "%s/report.json", dir);
    cr_assert_eq(sh(&out, "%s/tilec tune %s -j 2 --json %s", build_dir(), GEMM, json), 0, "%s", out);
    cr_assert(strstr(out, "check failed") && strstr(out, "<- best") && strstr(out, "stored in"), "%s", out);
    char *best = strstr(out, "best: ");
    cr_assert_not_null(best);
    char cfg[128];
    cr_assert_eq(sscanf(best, "best: %127[^,]", cfg), 1);
    free(out);
    cr_assert_eq(sh(&out, "cat %s", json), 0);
    cr_assert(strstr(out, "\"state\": \"check failed\"") && strstr(out, "\"stored\": true"), "%s", out);
    free(out);
    cr_assert_eq(sh(&out, "%s/tilec run %s --check", build_dir(), GEMM), 0, "%s", out);
    char want[160];
    snprintf(want, sizeof want, "tuned: %s\n", cfg);
    cr_assert(strstr(out, want), "want '%s' in %s", want, out);
    cr_assert(strstr(out, "PASS"), "%s", out);
    free(out);
    cr_assert_eq(sh(&out, "%s/tilec run %s --check -D block_M=16 -D block_N=16", build_dir(), GEMM), 0);
    cr_assert(strstr(out, "-D wins for block_M block_N"), "%s", out);
    free(out);
    /* --db names another (missing) database: nothing tuned, no error */
    cr_assert_eq(sh(&out, "%s/tilec run %s --db %s/none.db", build_dir(), GEMM, dir), 0, "%s", out);
    cr_assert_null(strstr(out, "tuned:"), "%s", out);
    free(out);
    cr_assert_eq(sh(&out, "%s/tilec tune --list", build_dir()), 0);
    cr_assert(strstr(out, "1 tuned config") && strstr(out, cfg), "%s", out);
    free(out);
}

/* ---- the database ------------------------------------------------------------------ */

Test(tune, export_import_round_trip)
{
    char json[160], other[160], *out = NULL, *a = NULL, *b = NULL, *msg = NULL;
    int n = 0;
    tilec_tune_report_free(tune_gemm());
    snprintf(json, sizeof json, "%s/table.json", dir);
    snprintf(other, sizeof other, "%s/other/shipped.db", dir);
    cr_assert_eq(tilec_tunedb_export(NULL, json, &n, &msg), TILEC_OK, "%s", msg);
    cr_assert_eq(n, 1);
    cr_assert_eq(tilec_tunedb_import(other, json, &n, &msg), TILEC_OK, "%s", msg);
    cr_assert_eq(n, 1);
    cr_assert_eq(sh(&a, "%s/tilec tune --list", build_dir()), 0);
    cr_assert_eq(sh(&b, "%s/tilec tune --list --db %s", build_dir(), other), 0);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    /* the imported table serves run */
    cr_assert_eq(sh(&out, "%s/tilec run %s --db %s", build_dir(), GEMM, other), 0);
    cr_assert(strstr(out, "tuned: "), "%s", out);
    free(out);
    /* a JSON file that is not a table is refused with the place */
    cr_assert_eq(sh(&out, "printf '[{\"entry\": 5}]' > %s/bad.json; %s/tilec tune --import %s/bad.json",
                    dir, build_dir(), dir), 3);
    cr_assert(strstr(out, "is not a tuning table") && strstr(out, "byte"), "%s", out);
    free(out);
}

Test(tune, read_only_database_serves_lookups)
{
    char *out = NULL, *msg = NULL;
    tilec_tunedb_t *h = NULL;
    tilec_tunedb_row_t row = {0};
    tilec_tune_report_free(tune_gemm());
    cr_assert_eq(chmod(db, 0444), 0);
    cr_assert_eq(chmod(dir, 0555), 0);
    cr_assert_eq(sh(&out, "%s/tilec run %s --check", build_dir(), GEMM), 0, "%s", out);
    cr_assert(strstr(out, "tuned: ") && strstr(out, "PASS"), "%s", out);
    free(out);
    /* lookups leave nothing behind (no journal) and cannot write */
    cr_assert_eq(sh(&out, "ls %s", dir), 0);
    cr_assert_str_eq(out, "out.txt\ntune.db\n");
    free(out);
    cr_assert_eq(tilec_tunedb_open(db, 0, &h, &msg), TILEC_OK, "%s", msg);
    row.source_hash = row.entry = row.plugin = row.device = row.config = "x";
    cr_assert_eq(tilec_tunedb_put(h, &row, &msg), TILEC_E_IO);
    cr_assert(strstr(msg, "readonly") || strstr(msg, "read-only"), "%s", msg);
    free(msg);
    tilec_tunedb_close(h);
    cr_assert_eq(chmod(dir, 0700), 0);
}

Test(tune, concurrent_writers_do_not_corrupt_it)
{
    enum { WRITERS = 4, ROWS = 40 };
    tilec_tunedb_t *h = NULL;
    tilec_tunedb_row_t *rows = NULL;
    char *msg = NULL;
    int n = 0;
    pid_t pid[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pid[w] = fork();
        cr_assert_geq(pid[w], 0);
        if (pid[w] == 0) {
            tilec_tunedb_t *mine = NULL;
            char *m = NULL;
            if (tilec_tunedb_open(db, 1, &mine, &m) != TILEC_OK) _exit(10);
            for (int i = 0; i < ROWS; i++) {
                char key[32], cfg[32];
                tilec_tunedb_row_t r = {0};
                snprintf(key, sizeof key, "w%d-%d", w, i);
                snprintf(cfg, sizeof cfg, "block_M=%d", i);
                r.source_hash = key;
                r.entry = "e";
                r.plugin = "cpu";
                r.device = "d";
                r.config = cfg;
                r.time_ms = i;
                if (tilec_tunedb_put(mine, &r, &m) != TILEC_OK) _exit(11);
            }
            tilec_tunedb_close(mine);
            _exit(0);
        }
    }
    for (int w = 0; w < WRITERS; w++) {
        int st = 0;
        cr_assert_eq(waitpid(pid[w], &st, 0), pid[w]);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d: status %d", w, st);
    }
    cr_assert_eq(tilec_tunedb_open(db, 0, &h, &msg), TILEC_OK, "%s", msg);
    cr_assert_eq(tilec_tunedb_query(h, NULL, &rows, &n, &msg), TILEC_OK, "%s", msg);
    cr_assert_eq(n, WRITERS * ROWS);
    for (int i = 0; i < n; i++) {
        int w, k;
        cr_assert_eq(sscanf(rows[i].source_hash, "w%d-%d", &w, &k), 2);
        cr_assert_eq((int)rows[i].time_ms, k);
    }
    tilec_tunedb_rows_free(rows, n);
    tilec_tunedb_close(h);
}

Test(tune, corrupt_or_foreign_database_is_reported_and_ignored)
{
    char *out = NULL, foreign[160];
    FILE *f = fopen(db, "w");
    cr_assert_not_null(f);
    fputs("this is not SQLite at all, but it is long enough to look like a header............\n", f);
    fclose(f);
    cr_assert_eq(sh(&out, "%s/tilec run %s --check", build_dir(), GEMM), 0, "%s", out);
    cr_assert(strstr(out, "warning:") && strstr(out, "not a tuning database"), "%s", out);
    cr_assert(strstr(out, "PASS") && !strstr(out, "tuned:"), "%s", out);
    free(out);
    cr_assert_eq(sh(&out, "%s/tilec tune %s --space block_M=16", build_dir(), GEMM), 2);
    cr_assert(strstr(out, "not a tuning database"), "%s", out);
    free(out);
    /* someone else's SQLite file is left alone */
    snprintf(foreign, sizeof foreign, "%s/foreign.db", dir);
    void *lib = dlopen("libsqlite3.so.0", RTLD_NOW);
    cr_assert_not_null(lib);
    int (*op)(const char *, void **) = (int (*)(const char *, void **))dlsym(lib, "sqlite3_open");
    int (*ex)(void *, const char *, void *, void *, char **) =
        (int (*)(void *, const char *, void *, void *, char **))dlsym(lib, "sqlite3_exec");
    int (*cl)(void *) = (int (*)(void *))dlsym(lib, "sqlite3_close");
    void *h = NULL;
    cr_assert_eq(op(foreign, &h), 0);
    cr_assert_eq(ex(h, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES('mine')", NULL, NULL, NULL), 0);
    cl(h);
    cr_assert_eq(sh(&out, "%s/tilec tune %s --space block_M=16 --db %s", build_dir(), GEMM, foreign), 2);
    cr_assert(strstr(out, "not a tilec tuning database"), "%s", out);
    free(out);
    cr_assert_eq(sh(&out, "%s/tilec tune --list --db %s", build_dir(), foreign), 3);
    free(out);
}

/* ---- bundles ----------------------------------------------------------------------- */

Test(tune, bundle_runs_with_no_compiler_and_is_refused_elsewhere)
{
    char *out = NULL, tcb[160], cold[160];
    tilec_tune_report_t *r = tune_gemm();
    char best[128];
    snprintf(best, sizeof best, "tuned: %s\n", r->candidates[r->buckets[0].best].config);
    tilec_tune_report_free(r);
    snprintf(tcb, sizeof tcb, "%s/gemm.tcb", dir);
    snprintf(cold, sizeof cold, "%s/cold-cache", dir);
    cr_assert_eq(sh(&out, "%s/tilec bundle %s -o %s", build_dir(), GEMM, tcb), 0, "%s", out);
    cr_assert(strstr(out, "bundled 2 kernels"), "the tuned config and the defaults: %s", out);
    free(out);
    /* no C compiler on PATH, no $CC, an empty kernel cache: the bundle still runs */
    cr_assert_eq(sh(&out, "mkdir %s && TILEC_CACHE_DIR=%s PATH=/nonexistent CC=/nonexistent/cc TILEC_LOG=compile "
                    "%s/tilec run %s --bundle %s --check", cold, cold, build_dir(), GEMM, tcb), 0, "%s", out);
    cr_assert(strstr(out, best), "want '%s' in %s", best, out);
    cr_assert(strstr(out, "no compiler run") && strstr(out, "PASS"), "%s", out);
    free(out);
    /* the defaults are in the bundle too; other -D values are not */
    cr_assert_eq(sh(&out, "PATH=/nonexistent %s/tilec run %s --bundle %s -D block_M=32 -D block_N=32 --check",
                    build_dir(), GEMM, tcb), 0, "%s", out);
    cr_assert(strstr(out, "PASS"), "%s", out);
    free(out);
    cr_assert_eq(sh(&out, "PATH=/nonexistent %s/tilec run %s --bundle %s -D M=32", build_dir(), GEMM, tcb), 2);
    cr_assert(strstr(out, "has no kernel compiled from this program with these -D values"), "%s", out);
    free(out);
    /* another plugin: refused, saying for what the bundle was built */
    cr_assert_eq(sh(&out, "%s/tilec run %s --bundle %s --backend tunecrash", build_dir(), GEMM, tcb), 3);
    cr_assert(strstr(out, "was built for backend 'cpu'") && strstr(out, "not for this backend 'tunecrash'"),
              "%s", out);
    free(out);
    /* a damaged file: refused */
    cr_assert_eq(sh(&out, "printf 'X' | dd of=%s bs=1 seek=100 conv=notrunc 2>/dev/null; %s/tilec run %s "
                    "--bundle %s", tcb, build_dir(), GEMM, tcb), 2);
    cr_assert(strstr(out, "damaged: its checksum does not match"), "%s", out);
    free(out);
    cr_assert_eq(sh(&out, "%s/tilec run %s --bundle %s/out.txt", build_dir(), GEMM, dir), 2);
    cr_assert(strstr(out, "not a tilec bundle"), "%s", out);
    free(out);
}
