/*
 * tests/test_loader.c — the plugin loader against deliberately broken
 * plugins (tests/plugins/broken.c, built into build/tests/plugins).
 *
 * Each test runs in its own Criterion process, so it sets TILEC_PLUGIN_PATH
 * and friends with setenv before the first loader call; the loader reads
 * the environment again on every scan (one test checks that too).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_internal.h"
#include "cache.h"
#include "loader.h"
#include "tilec/tilec.h"

static char plugin_dir[PATH_MAX];

static const char *build_dir(void)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    return b && *b ? b : "build";
}

static void use_plugins(void)
{
    snprintf(plugin_dir, sizeof plugin_dir, "%s/tests/plugins", build_dir());
    cr_assert_eq(setenv("TILEC_PLUGIN_PATH", plugin_dir, 1), 0);
    setenv("TILEC_CACHE", "0", 1);
    unsetenv("TILEC_BACKEND");
}

/* The listed candidate whose path ends with file, or NULL. */
static const tilec_plugin_desc_t *by_file(const tilec_plugin_desc_t *l, int n, const char *file)
{
    size_t fl = strlen(file);
    for (int i = 0; i < n; i++) {
        size_t pl = strlen(l[i].path);
        if (pl >= fl && strcmp(l[i].path + pl - fl, file) == 0 &&
            (pl == fl || l[i].path[pl - fl - 1] == '/')) {
            return &l[i];
        }
    }
    return NULL;
}

static void expect(const tilec_plugin_desc_t *l, int n, const char *kind,
                   tilec_plugin_state_t state, const char *w1, const char *w2)
{
    char file[128];
    const tilec_plugin_desc_t *d;
    snprintf(file, sizeof file, "libtilec-broken_%s.so", kind);
    d = by_file(l, n, file);
    cr_assert_not_null(d, "%s not listed", file);
    cr_expect_eq(d->state, state, "%s: state %d, expected %d (reason: %s)", file, d->state, state,
                 d->reason);
    if (w1) {
        cr_expect_not_null(strstr(d->reason, w1), "%s: reason '%s' lacks '%s'", file, d->reason, w1);
    }
    if (w2) {
        cr_expect_not_null(strstr(d->reason, w2), "%s: reason '%s' lacks '%s'", file, d->reason, w2);
    }
    if (state == TILEC_PLUGIN_REJECTED) {
        cr_expect_eq(d->abi_version, 0u);
        cr_expect_eq(d->ndevices, 0);
    }
}

Test(loader, lists_every_candidate_with_its_state)
{
    tilec_plugin_desc_t *l = NULL;
    int n = 0, cpu = -1, first_broken = -1;
    const tilec_plugin_desc_t *g;
    use_plugins();
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    expect(l, n, "notplugin", TILEC_PLUGIN_REJECTED, "not a loadable shared object", NULL);
    expect(l, n, "nosymbol", TILEC_PLUGIN_REJECTED, "does not export tilec_plugin_query", NULL);
    expect(l, n, "nulltable", TILEC_PLUGIN_REJECTED, "NULL table", NULL);
    expect(l, n, "noversion", TILEC_PLUGIN_REJECTED, "no common ABI version", "1.0..1.1");
    expect(l, n, "smallstruct", TILEC_PLUGIN_REJECTED, "struct_size", "smaller than ABI 1.0 minimum");
    expect(l, n, "badabi", TILEC_PLUGIN_REJECTED, "abi_version 2.0", NULL);
    expect(l, n, "badname", TILEC_PLUGIN_REJECTED, "invalid plugin name", "Broken-Name");
    expect(l, n, "nullentry", TILEC_PLUGIN_REJECTED, "'launch'", "NULL");
    expect(l, n, "crashquery", TILEC_PLUGIN_REJECTED, "crashed while being queried", "signal 11");
    expect(l, n, "unavailable", TILEC_PLUGIN_UNAVAILABLE, "libwidget.so.1 not found", NULL);
    expect(l, n, "shadow", TILEC_PLUGIN_SHADOWED, "shadowed by", "libtilec-broken_good.so");
    expect(l, n, "good", TILEC_PLUGIN_OK, NULL, NULL);
    expect(l, n, "v11", TILEC_PLUGIN_OK, NULL, NULL);
    expect(l, n, "small11", TILEC_PLUGIN_REJECTED, "struct_size", "smaller than ABI 1.1 minimum");
    expect(l, n, "nullprop", TILEC_PLUGIN_REJECTED, "'device_property'", "NULL");
    expect(l, n, "badir", TILEC_PLUGIN_REJECTED, "tile IR range", "1.2..1.1");

    g = by_file(l, n, "libtilec-broken_good.so");
    cr_assert_not_null(g);
    cr_expect_str_eq(g->name, "broken_good");
    cr_expect_str_eq(g->vendor, "tilec tests");
    cr_expect_str_eq(g->version, "0.0.1");
    cr_expect_str_eq(g->reason, "");
    cr_expect_eq(g->abi_version, TILEC_ABI_MAKE(1, 0));
    cr_assert_eq(g->ndevices, 1);
    cr_expect_str_eq(g->devices[0].name, "broken test device");
    cr_expect_eq(g->devices[0].caps & TILEC_CAP_GPU, 0u);
    /* A 1.0 plugin reads IR 1.0 only and has no typed properties but what
     * its device_info holds. */
    cr_expect_eq(g->ir_min, TILEC_IR_MAKE(1, 0));
    cr_expect_eq(g->ir_max, TILEC_IR_MAKE(1, 0));
    cr_expect_str_eq(g->devices[0].arch, "");
    cr_expect_eq(g->devices[0].subgroup_size, -1);

    g = by_file(l, n, "libtilec-broken_v11.so");
    cr_assert_not_null(g);
    cr_expect_eq(g->abi_version, TILEC_ABI_MAKE(1, 1));
    cr_expect_eq(g->ir_min, TILEC_IR_MAKE(1, 1));
    cr_expect_eq(g->ir_max, TILEC_IR_MAKE(1, 1));
    cr_assert_eq(g->ndevices, 1);
    cr_expect_str_eq(g->devices[0].arch, "broken-arch");
    cr_expect_eq(g->devices[0].subgroup_size, -1); /* answered UNSUPPORTED */

    /* Rejected entries are named after their file. */
    cr_expect_str_eq(by_file(l, n, "libtilec-broken_nosymbol.so")->name, "broken_nosymbol");

    for (int i = 0; i < n; i++) {
        if (strcmp(l[i].path, "(embedded)") == 0) {
            cpu = i;
        }
        if (first_broken < 0 && strstr(l[i].path, "libtilec-broken_")) {
            first_broken = i;
        }
    }
    cr_assert_geq(cpu, 0, "embedded cpu backend not listed");
    cr_expect_str_eq(l[cpu].name, "cpu");
    cr_expect_eq(l[cpu].state, TILEC_PLUGIN_OK, "cpu: %s", l[cpu].reason);
    cr_expect_geq(l[cpu].ndevices, 1);
    /* TILEC_PLUGIN_PATH comes first in the search order. */
    cr_expect_lt(first_broken, cpu);
    tilec_plugins_free(l, n);
}

Test(loader, directory_entries_are_sorted)
{
    tilec_plugin_desc_t *l = NULL;
    int n = 0;
    const char *prev = "";
    use_plugins();
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    for (int i = 0; i < n && strstr(l[i].path, "libtilec-broken_"); i++) {
        cr_expect_lt(strcmp(prev, l[i].path), 0, "%s listed after %s", l[i].path, prev);
        prev = l[i].path;
    }
    tilec_plugins_free(l, n);
}

Test(loader, selects_the_good_plugin_by_name)
{
    tilec_context_t *ctx = NULL;
    use_plugins();
    cr_assert_eq(tilec_context_create("broken_good", &ctx), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_expect_str_eq(tilec_context_backend(ctx), "broken_good");
    cr_expect_str_eq(tilec_context_device(ctx), "broken test device");
    tilec_context_destroy(ctx);

    cr_assert_eq(tilec_context_create("broken_good:0", &ctx), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    tilec_context_destroy(ctx);
}

Test(loader, unknown_name_lists_the_candidates)
{
    tilec_context_t *ctx = NULL;
    const char *m;
    use_plugins();
    cr_assert_eq(tilec_context_create("nosuch", &ctx), TILEC_E_UNAVAILABLE);
    cr_assert_not_null(ctx);
    m = tilec_context_message(ctx);
    cr_expect_not_null(strstr(m, "no backend 'nosuch'"), "%s", m);
    cr_expect_not_null(strstr(m, "cpu (ok, embedded)"), "%s", m);
    cr_expect_not_null(strstr(m, "broken_nosymbol (rejected: does not export tilec_plugin_query"),
                       "%s", m);
    cr_expect_not_null(strstr(m, "broken_good (ok"), "%s", m);
    cr_expect_not_null(strstr(m, "broken_unavailable (unavailable: libwidget"), "%s", m);
    cr_expect_str_eq(tilec_context_backend(ctx), "");
    tilec_context_destroy(ctx);
}

Test(loader, env_backend_is_used_when_name_is_null)
{
    tilec_context_t *ctx = NULL;
    use_plugins();
    setenv("TILEC_BACKEND", "broken_good", 1);
    cr_assert_eq(tilec_context_create(NULL, &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_expect_str_eq(tilec_context_backend(ctx), "broken_good");
    tilec_context_destroy(ctx);
}

Test(loader, bad_device_index_names_the_count)
{
    tilec_context_t *ctx = NULL;
    const char *m;
    use_plugins();
    cr_assert_eq(tilec_context_create("broken_good:5", &ctx), TILEC_E_UNAVAILABLE);
    m = tilec_context_message(ctx);
    cr_expect_not_null(strstr(m, "has 1 device"), "%s", m);
    cr_expect_not_null(strstr(m, "no device 5"), "%s", m);
    tilec_context_destroy(ctx);

    cr_assert_eq(tilec_context_create("cpu:5", &ctx), TILEC_E_UNAVAILABLE);
    m = tilec_context_message(ctx);
    cr_expect_not_null(strstr(m, "backend 'cpu' has "), "%s", m);
    cr_expect_not_null(strstr(m, "no device 5"), "%s", m);
    tilec_context_destroy(ctx);
}

Test(loader, malformed_backend_is_invalid)
{
    tilec_context_t *ctx = NULL;
    use_plugins();
    cr_assert_eq(tilec_context_create("cpu:x", &ctx), TILEC_E_INVALID);
    cr_expect_not_null(strstr(tilec_context_message(ctx), "malformed backend"));
    tilec_context_destroy(ctx);
    cr_assert_eq(tilec_context_create(":1", &ctx), TILEC_E_INVALID);
    tilec_context_destroy(ctx);
}

Test(loader, unavailable_plugin_gives_its_reason)
{
    tilec_context_t *ctx = NULL;
    const char *m;
    use_plugins();
    cr_assert_eq(tilec_context_create("broken_unavailable", &ctx), TILEC_E_UNAVAILABLE);
    m = tilec_context_message(ctx);
    cr_expect_not_null(strstr(m, "unavailable"), "%s", m);
    cr_expect_not_null(strstr(m, "libwidget.so.1 not found"), "%s", m);
    /* A context without a backend still answers, with the reason. */
    {
        tilec_buffer_t *b = NULL;
        int64_t shape[1] = {4};
        cr_expect_eq(tilec_buffer_create(ctx, TILEC_ELEM_FLOAT32, 1, shape, &b), TILEC_E_UNAVAILABLE);
        cr_expect_null(b);
        cr_expect_not_null(strstr(tilec_context_message(ctx), "libwidget.so.1"));
    }
    tilec_context_destroy(ctx);
}

Test(loader, rejected_plugin_cannot_be_selected)
{
    tilec_context_t *ctx = NULL;
    use_plugins();
    cr_assert_eq(tilec_context_create("broken_nosymbol", &ctx), TILEC_E_UNAVAILABLE);
    cr_expect_not_null(strstr(tilec_context_message(ctx), "no backend 'broken_nosymbol'"));
    tilec_context_destroy(ctx);
}

Test(loader, missing_path_entries_are_skipped)
{
    char path[PATH_MAX * 2];
    tilec_plugin_desc_t *l = NULL, *l2 = NULL;
    int n = 0, n2 = 0;
    use_plugins();
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    snprintf(path, sizeof path, "/nonexistent/tilec-plugins::%s:/nonexistent/libtilec-x.so",
             plugin_dir);
    setenv("TILEC_PLUGIN_PATH", path, 1);
    cr_assert_eq(tilec_plugins_list(&l2, &n2), TILEC_OK);
    cr_expect_eq(n, n2);
    for (int i = 0; i < n2; i++) {
        cr_expect_null(strstr(l2[i].path, "nonexistent"), "%s listed", l2[i].path);
    }
    tilec_plugins_free(l, n);
    tilec_plugins_free(l2, n2);
}

Test(loader, file_entries_and_duplicates)
{
    char path[PATH_MAX * 3];
    tilec_plugin_desc_t *l = NULL;
    int n = 0, good = 0;
    use_plugins();
    /* The same plugin as a file entry and again through its directory: it
     * is probed once, first. */
    snprintf(path, sizeof path, "%s/libtilec-broken_good.so:%s", plugin_dir, plugin_dir);
    setenv("TILEC_PLUGIN_PATH", path, 1);
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    cr_assert_gt(n, 0);
    cr_expect_str_eq(l[0].name, "broken_good");
    cr_expect_eq(l[0].state, TILEC_PLUGIN_OK);
    for (int i = 0; i < n; i++) {
        if (strstr(l[i].path, "libtilec-broken_good.so")) {
            good++;
        }
    }
    cr_expect_eq(good, 1);
    tilec_plugins_free(l, n);
}

Test(loader, environment_is_read_on_every_scan)
{
    tilec_plugin_desc_t *l = NULL;
    int n = 0;
    use_plugins();
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    cr_expect_not_null(by_file(l, n, "libtilec-broken_good.so"));
    tilec_plugins_free(l, n);
    unsetenv("TILEC_PLUGIN_PATH");
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    cr_expect_null(by_file(l, n, "libtilec-broken_good.so"));
    tilec_plugins_free(l, n);
}

Test(loader, auto_prefers_a_gpu_else_cpu)
{
    tilec_plugin_desc_t *l = NULL;
    tilec_context_t *ctx = NULL;
    int n = 0, gpu = -1;
    use_plugins();
    setenv("TILEC_BACKEND", "auto", 1);
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    for (int i = 0; i < n && gpu < 0; i++) {
        if (l[i].state == TILEC_PLUGIN_OK && l[i].ndevices > 0 && (l[i].devices[0].caps & TILEC_CAP_GPU)) {
            gpu = i;
        }
    }
    cr_assert_eq(tilec_context_create(NULL, &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_expect_str_eq(tilec_context_backend(ctx), gpu >= 0 ? l[gpu].name : "cpu");
    tilec_context_destroy(ctx);
    cr_assert_eq(tilec_context_create("", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_expect_str_eq(tilec_context_backend(ctx), gpu >= 0 ? l[gpu].name : "cpu");
    tilec_context_destroy(ctx);
    tilec_plugins_free(l, n);
}

Test(loader, select_on_a_hand_made_list)
{
    tilec_loader_entry_t items[3];
    tilec_pdevice_info_t gpu_dev, cpu_dev;
    tilec_loader_list_t list = {3, items};
    int idx = -1;
    uint32_t dev = 9;
    char *msg = NULL;
    memset(items, 0, sizeof items);
    memset(&gpu_dev, 0, sizeof gpu_dev);
    memset(&cpu_dev, 0, sizeof cpu_dev);
    gpu_dev.caps = TILEC_CAP_GPU;
    items[0] = (tilec_loader_entry_t){.name = "cuda", .path = "/x/libtilec-cuda.so", .reason = "no driver",
                                      .state = TILEC_PLUGIN_UNAVAILABLE};
    items[1] = (tilec_loader_entry_t){.name = "cpu", .path = "(embedded)", .reason = "", .embedded = 1,
                                      .state = TILEC_PLUGIN_OK, .ndevices = 1, .devices = &cpu_dev};
    items[2] = (tilec_loader_entry_t){.name = "vulkan", .path = "/x/libtilec-vulkan.so", .reason = "",
                                      .state = TILEC_PLUGIN_OK, .ndevices = 1, .devices = &gpu_dev};
    cr_assert_eq(tilec_loader_select(&list, "auto", &idx, &dev, &msg), TILEC_OK);
    cr_expect_eq(idx, 2);
    cr_expect_eq(dev, 0u);
    cr_assert_eq(tilec_loader_select(&list, NULL, &idx, &dev, &msg), TILEC_OK);
    cr_expect_eq(idx, 2);
    cr_assert_eq(tilec_loader_select(&list, "cpu", &idx, &dev, &msg), TILEC_OK);
    cr_expect_eq(idx, 1);
    cr_assert_eq(tilec_loader_select(&list, "cuda", &idx, &dev, &msg), TILEC_E_UNAVAILABLE);
    cr_assert_not_null(msg);
    cr_expect_not_null(strstr(msg, "no driver"), "%s", msg);
    free(msg);
    items[2].state = TILEC_PLUGIN_UNAVAILABLE;
    items[2].reason = "no ICD";
    cr_assert_eq(tilec_loader_select(&list, "auto", &idx, &dev, &msg), TILEC_OK);
    cr_expect_eq(idx, 1);
    cr_assert_eq(tilec_loader_select(&list, "opencl", &idx, &dev, &msg), TILEC_E_UNAVAILABLE);
    cr_expect_not_null(strstr(msg, "vulkan (unavailable: no ICD; /x/libtilec-vulkan.so)"), "%s", msg);
    free(msg);
}

Test(cache, resolution_and_creation)
{
    char base[] = "/tmp/tilec-cache-test-XXXXXX";
    char want[PATH_MAX];
    char *d;
    struct stat st;
    cr_assert_not_null(mkdtemp(base));
    unsetenv("TILEC_CACHE");
    snprintf(want, sizeof want, "%s/a/b/c", base);
    setenv("TILEC_CACHE_DIR", want, 1);
    d = tilec_cache_dir();
    cr_assert_not_null(d);
    cr_expect_str_eq(d, want);
    cr_assert_eq(stat(d, &st), 0);
    cr_expect(S_ISDIR(st.st_mode));
    cr_expect_eq(st.st_mode & 0777, 0700);
    free(d);

    unsetenv("TILEC_CACHE_DIR");
    setenv("XDG_CACHE_HOME", base, 1);
    d = tilec_cache_dir();
    snprintf(want, sizeof want, "%s/tilec", base);
    cr_assert_not_null(d);
    cr_expect_str_eq(d, want);
    free(d);

    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", base, 1);
    d = tilec_cache_dir();
    snprintf(want, sizeof want, "%s/.cache/tilec", base);
    cr_assert_not_null(d);
    cr_expect_str_eq(d, want);
    free(d);

    setenv("TILEC_CACHE", "0", 1);
    cr_expect_null(tilec_cache_dir());

    /* A path that cannot be created: no cache, not an error. */
    unsetenv("TILEC_CACHE");
    snprintf(want, sizeof want, "%s/tilec/file", base);
    setenv("TILEC_CACHE_DIR", "/proc/tilec-cannot-exist/x", 1);
    cr_expect_null(tilec_cache_dir());
    {
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
        cr_expect_eq(system(cmd), 0);
    }
}

Test(loader, host_struct_is_stable)
{
    const tilec_plugin_host_t *a, *b;
    setenv("TILEC_CACHE", "0", 1);
    a = tilec_loader_host();
    b = tilec_loader_host();
    cr_expect_eq(a, b);
    cr_expect_null(a->cache_dir);
    cr_expect_eq(a->abi_min, TILEC_ABI_MAKE(1, 0));
    cr_expect_eq(a->abi_max, TILEC_ABI_MAKE(1, 1));
    cr_expect_eq(a->struct_size, sizeof *a);
    cr_expect_not_null(a->log);
}

Test(loader, rescans_agree)
{
    tilec_plugin_desc_t *l1 = NULL, *l2 = NULL;
    int n1 = 0, n2 = 0;
    use_plugins();
    /* The second scan finds the accepted plugins already resident. */
    cr_assert_eq(tilec_plugins_list(&l1, &n1), TILEC_OK);
    cr_assert_eq(tilec_plugins_list(&l2, &n2), TILEC_OK);
    cr_assert_eq(n1, n2);
    for (int i = 0; i < n1; i++) {
        cr_expect_str_eq(l1[i].path, l2[i].path);
        cr_expect_str_eq(l1[i].name, l2[i].name);
        cr_expect_eq(l1[i].state, l2[i].state, "%s", l1[i].path);
        cr_expect_str_eq(l1[i].reason, l2[i].reason);
        cr_expect_eq(l1[i].ndevices, l2[i].ndevices);
    }
    tilec_plugins_free(l1, n1);
    tilec_plugins_free(l2, n2);
}

/* ---- ABI 1.1 through the public API ------------------------------------------------- */

static const char small_ir[] =
    "tileir 1.0\n"
    "kernel scale {\n"
    "  var bx int32 block\n"
    "  param A global float32 [4]\n"
    "  grid [bx = 1]\n"
    "  threads 1 1 1\n"
    "  body {\n"
    "    store A[0] = 1.0\n"
    "  }\n"
    "}\n";

static tilec_program_t *small_program(tilec_context_t *ctx, const char *version)
{
    tilec_program_t *p = NULL;
    cr_assert_eq(tilec_program_load_ir(ctx, "small", small_ir, sizeof small_ir - 1, &p), TILEC_OK,
                 "%s", tilec_context_message(ctx));
    /* The text the host sends, as if it needed another IR version. */
    if (version) {
        cr_assert_eq(strncmp(p->ir, "tileir 1.0", 10), 0);
        memcpy(p->ir + 7, version, 3);
    }
    return p;
}

Test(abi11, ir_version_is_negotiated_with_the_plugin)
{
    tilec_context_t *ctx = NULL;
    tilec_program_t *p;
    tilec_executable_t *e = NULL;
    const char *src, *m;
    use_plugins();
    /* broken_v11 reads 1.1 only: the 1.0 text goes out labelled 1.1 */
    cr_assert_eq(tilec_context_create("broken_v11", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    p = small_program(ctx, NULL);
    cr_assert_eq(tilec_program_compile(ctx, p, &e), TILEC_OK, "%s", tilec_context_message(ctx));
    src = tilec_executable_source(e, NULL);
    cr_assert_not_null(src);
    cr_expect_eq(strncmp(src, "tileir 1.1\nkernel scale", 22), 0, "%s", src);
    tilec_executable_free(e);
    tilec_program_free(p);
    /* a module that needs 1.2 is refused by the host, naming both */
    p = small_program(ctx, "1.2");
    cr_expect_eq(tilec_program_compile(ctx, p, &e), TILEC_E_COMPILE);
    cr_expect_null(e);
    m = tilec_context_message(ctx);
    cr_expect_not_null(strstr(m, "reads tile IR 1.1..1.1, but kernel 'scale' needs tile IR 1.2"), "%s", m);
    tilec_program_free(p);
    tilec_context_destroy(ctx);

    /* a 1.0 plugin gets 1.0 as it is and cannot take 1.1 */
    cr_assert_eq(tilec_context_create("broken_good", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    p = small_program(ctx, NULL);
    cr_assert_eq(tilec_program_compile(ctx, p, &e), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_expect_eq(strncmp(tilec_executable_source(e, NULL), "tileir 1.0\n", 11), 0);
    tilec_executable_free(e);
    tilec_program_free(p);
    p = small_program(ctx, "1.1");
    cr_expect_eq(tilec_program_compile(ctx, p, &e), TILEC_E_COMPILE);
    m = tilec_context_message(ctx);
    cr_expect_not_null(strstr(m, "backend 'broken_good' reads tile IR 1.0..1.0"), "%s", m);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

Test(abi11, properties_info_and_lowering)
{
    tilec_context_t *ctx = NULL;
    tilec_program_t *p;
    tilec_executable_t *e = NULL;
    tilec_module_info_t mi;
    tilec_prop_t v;
    char *low = NULL;
    size_t len = 0;
    use_plugins();
    cr_assert_eq(tilec_context_create("broken_v11", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_device_property(ctx, TILEC_PROP_ARCH, &v), TILEC_OK);
    cr_expect_eq(v.kind, TILEC_PVAL_STR);
    cr_expect_str_eq(v.sval, "broken-arch");
    cr_assert_eq(tilec_device_property(ctx, TILEC_PROP_COMPUTE_UNITS, &v), TILEC_OK);
    cr_expect_eq(v.kind, TILEC_PVAL_INT); /* from device_info */
    cr_expect_eq(v.ival, 1);
    cr_assert_eq(tilec_device_property(ctx, TILEC_PROP_CLOCK_KHZ, &v), TILEC_OK);
    cr_expect_eq(v.kind, TILEC_PVAL_NONE);
    cr_expect_eq(tilec_device_property(ctx, 999, &v), TILEC_E_INVALID);
    cr_expect_not_null(strstr(tilec_context_message(ctx), "unknown device property key 999"));
    p = small_program(ctx, NULL);
    cr_assert_eq(tilec_program_compile(ctx, p, &e), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_executable_info(e, &mi), TILEC_OK);
    cr_expect_eq(mi.registers, 7);
    cr_expect_eq(mi.spill_bytes, -1);
    cr_assert_eq(tilec_program_lower(ctx, p, NULL, &low, &len), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_expect_eq(strncmp(low, "lowered: tileir 1.1\n", 20), 0, "%s", low);
    cr_expect_eq(len, strlen(low));
    free(low);
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);

    /* ABI 1.0: no lowering, no module info, properties from device_info */
    cr_assert_eq(tilec_context_create("broken_good", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    p = small_program(ctx, NULL);
    cr_expect_eq(tilec_program_lower(ctx, p, NULL, &low, &len), TILEC_E_COMPILE);
    cr_expect_null(low);
    cr_expect_not_null(strstr(tilec_context_message(ctx), "ABI 1.0"), "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_program_compile(ctx, p, &e), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_executable_info(e, &mi), TILEC_OK);
    cr_expect_eq(mi.registers, -1);
    cr_expect_eq(mi.threads, -1);
    cr_assert_eq(tilec_device_property(ctx, TILEC_PROP_ARCH, &v), TILEC_OK);
    cr_expect_eq(v.kind, TILEC_PVAL_NONE);
    cr_assert_eq(tilec_device_property(ctx, TILEC_PROP_MAX_THREADS_PER_BLOCK, &v), TILEC_OK);
    cr_expect_eq(v.ival, 1);
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* The program's tilelang.jit(pass_configs=...) reach the plugin with every
 * compile, mapped to structured options; the caller's come after them. */
Test(abi11, program_pass_configs_reach_the_plugin)
{
    static const char src[] =
        "import tilelang\n"
        "import tilelang.language as T\n"
        "@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True,\n"
        "                            \"tl.custom_knob\": 16})\n"
        "def f(N=4):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((N,), \"float32\")):\n"
        "        with T.Kernel(1, threads=4) as bx:\n"
        "            for i in T.Parallel(N):\n"
        "                A[i] = 1.0\n"
        "    return main\n";
    tilec_context_t *ctx = NULL;
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    tilec_compile_options_t o;
    tilec_define_kv_t mine[] = {{"tl.custom_knob", "3"}};
    use_plugins();
    cr_assert_eq(tilec_context_create("broken_v11", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_program_load_string(ctx, "pc.py", src, sizeof src - 1, NULL, 0, NULL, &p),
                 TILEC_OK, "%s", tilec_context_message(ctx));
    memset(&o, 0, sizeof o);
    o.fast_math = 1;
    o.pass_configs = mine;
    o.npass_configs = 1;
    cr_assert_eq(tilec_program_compile_with(ctx, p, &o, &e), TILEC_OK, "%s", tilec_context_message(ctx));
    const char *got = tilec_executable_source(e, NULL);
    const char *fast = strstr(got, "# option 1 - 1\n");
    const char *tma = strstr(got, "# option 2 - 1\n");
    const char *knob = strstr(got, "# option 4 tl.custom_knob 16\n");
    const char *knob2 = strstr(got, "# option 4 tl.custom_knob 3\n");
    cr_expect(fast && tma && knob && knob2, "%s", got);
    cr_expect(knob && knob2 && knob < knob2, "the caller's option must come last:\n%s", got);
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

Test(abi11, compile_options_are_mapped_once)
{
    tilec_pcompile_options_t o;
    tilec_poption_t list[256];
    tilec_compile_options_t in;
    tilec_define_kv_t pc[] = {{"tl.disable_tma_lower", "True"}, {"tl.ptxas_register_usage_level", "4"},
                              {"tl.custom", "fast"}};
    memset(&in, 0, sizeof in);
    cr_assert_eq(tilec_api_map_options(NULL, &in, &o, list), TILEC_OK);
    cr_expect_eq(o.opt_level, 3);
    cr_expect_eq(o.noptions, 0u);
    cr_expect_null(o.options);
    in.fast_math = 1;
    in.no_opt = 1;
    in.arch = "sm_90a";
    in.pass_configs = pc;
    in.npass_configs = 3;
    cr_assert_eq(tilec_api_map_options(NULL, &in, &o, list), TILEC_OK);
    cr_expect_eq(o.opt_level, 0);
    cr_expect_str_eq(o.arch, "sm_90a");
    cr_assert_eq(o.noptions, 4u);
    cr_expect_eq(o.options[0].key, TILEC_POPT_FAST_MATH);
    cr_expect_eq(o.options[0].ival, 1);
    cr_expect_eq(o.options[1].key, TILEC_POPT_DISABLE_TMA);
    cr_expect_eq(o.options[1].ival, 1);
    cr_expect_null(o.options[1].name);
    cr_expect_eq(o.options[2].key, TILEC_POPT_PASS_CONFIG);
    cr_expect_str_eq(o.options[2].name, "tl.ptxas_register_usage_level");
    cr_expect_eq(o.options[2].ival, 4);
    cr_expect_str_eq(o.options[3].sval, "fast");
    /* a known boolean key with a value that is none */
    pc[0].value = "maybe";
    cr_expect_eq(tilec_api_map_options(NULL, &in, &o, list), TILEC_E_INVALID);
    in.npass_configs = -1;
    cr_expect_eq(tilec_api_map_options(NULL, &in, &o, list), TILEC_E_INVALID);
}

/* ---- plugins that misbehave anywhere (issue 11) -------------------------- */

#include <errno.h>
#include <signal.h>

#include "probe.h"

static char extra_dir[PATH_MAX];

static void use_extra(void)
{
    use_plugins();
    snprintf(extra_dir, sizeof extra_dir, "%s/tests/plugins-extra", build_dir());
}

/* Every entry the scan calls runs in the probe first: a crash, an exit or
 * a fault turned into an exit by the plugin's own handler is a rejection
 * naming the stage, and the host survives to list the rest. */
Test(loader, misbehaving_plugins_are_rejected_with_the_stage)
{
    tilec_plugin_desc_t *l = NULL;
    int n = 0;
    use_plugins();
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    expect(l, n, "crashquery", TILEC_PLUGIN_REJECTED, "signal 11", "in tilec_plugin_query");
    expect(l, n, "crashcount", TILEC_PLUGIN_REJECTED, "crashed while being queried: signal 11",
           "in device_count");
    expect(l, n, "crashinfo", TILEC_PLUGIN_REJECTED, "crashed while being queried: signal 11",
           "in device_info(0)");
    expect(l, n, "exitctor", TILEC_PLUGIN_REJECTED, "exited while being queried: status 0",
           "constructors");
    expect(l, n, "exitquery", TILEC_PLUGIN_REJECTED, "exited while being queried: status 0",
           "in tilec_plugin_query");
    expect(l, n, "handlerexit", TILEC_PLUGIN_REJECTED, "exited while being queried: status 0",
           "in tilec_plugin_query");
    expect(l, n, "good", TILEC_PLUGIN_OK, NULL, NULL);
    tilec_plugins_free(l, n);
}

/* The CLI path of the issue: a context on the cpu backend works whatever
 * the plugin folder holds. */
Test(loader, misbehaving_plugins_do_not_stop_the_cpu_backend)
{
    tilec_context_t *ctx = NULL;
    use_plugins();
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_expect_str_eq(tilec_context_backend(ctx), "cpu");
    tilec_context_destroy(ctx);
}

/* An accepted plugin that installs exiting fault handlers in the host (as
 * PoCL does) must not blind later probes: the child resets them. */
Test(loader, host_signal_handlers_do_not_blind_the_probe)
{
    char path[PATH_MAX * 3];
    tilec_plugin_desc_t *l = NULL;
    int n = 0;
    const tilec_plugin_desc_t *d;
    use_extra();
    snprintf(path, sizeof path, "%s/libtilec-broken_sighost.so:%s", extra_dir, plugin_dir);
    setenv("TILEC_PLUGIN_PATH", path, 1);
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    d = by_file(l, n, "libtilec-broken_sighost.so");
    cr_assert_not_null(d);
    cr_expect_eq(d->state, TILEC_PLUGIN_OK, "%s", d->reason);
    expect(l, n, "crashquery", TILEC_PLUGIN_REJECTED, "signal 11", NULL);
    expect(l, n, "crashcount", TILEC_PLUGIN_REJECTED, "signal 11", "in device_count");
    tilec_plugins_free(l, n);
    /* The same with the handler now installed in this process. */
    {
        struct sigaction sa;
        cr_assert_eq(sigaction(SIGSEGV, NULL, &sa), 0);
        cr_expect_neq((void *)sa.sa_handler, (void *)SIG_DFL, "sighost installed no handler");
    }
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    expect(l, n, "crashinfo", TILEC_PLUGIN_REJECTED, "signal 11", "in device_info(0)");
    tilec_plugins_free(l, n);
}

Test(loader, hang_in_device_count_times_out)
{
    char path[PATH_MAX + 64];
    tilec_plugin_desc_t *l = NULL;
    int n = 0;
    const tilec_plugin_desc_t *d;
    use_extra();
    tilec_probe_set_timeout(300);
    snprintf(path, sizeof path, "%s/libtilec-broken_hangcount.so", extra_dir);
    setenv("TILEC_PLUGIN_PATH", path, 1);
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
        d = by_file(l, n, "libtilec-broken_hangcount.so");
        cr_assert_not_null(d);
        cr_expect_eq(d->state, TILEC_PLUGIN_REJECTED);
        cr_expect_not_null(strstr(d->reason, "hung while being queried: device_count did not return"),
                           "%s", d->reason);
        tilec_plugins_free(l, n);
    }
}

/* A FIFO, a directory and a symlink loop named like plugins are listed as
 * rejected with the reason; none blocks the scan. */
Test(loader, non_regular_files_are_rejected)
{
    char dir[] = "/tmp/tilec-loader-test-XXXXXX";
    char p[PATH_MAX], path[PATH_MAX * 3];
    tilec_plugin_desc_t *l = NULL;
    int n = 0;
    const tilec_plugin_desc_t *d;
    use_plugins();
    cr_assert_not_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/libtilec-fifo.so", dir);
    cr_assert_eq(mkfifo(p, 0600), 0, "%s", strerror(errno));
    snprintf(p, sizeof p, "%s/libtilec-dir.so", dir);
    cr_assert_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/libtilec-loop.so", dir);
    cr_assert_eq(symlink("libtilec-loop.so", p), 0);
    snprintf(p, sizeof p, "%s/loop2", dir);
    cr_assert_eq(symlink("loop2", p), 0);
    snprintf(path, sizeof path, "%s:%s/loop2", dir, dir);
    setenv("TILEC_PLUGIN_PATH", path, 1);
    cr_assert_eq(tilec_plugins_list(&l, &n), TILEC_OK);
    d = by_file(l, n, "libtilec-fifo.so");
    cr_assert_not_null(d);
    cr_expect_eq(d->state, TILEC_PLUGIN_REJECTED);
    cr_expect_not_null(strstr(d->reason, "not a regular file (a FIFO)"), "%s", d->reason);
    d = by_file(l, n, "libtilec-dir.so");
    cr_assert_not_null(d);
    cr_expect_not_null(strstr(d->reason, "not a regular file (a directory)"), "%s", d->reason);
    d = by_file(l, n, "libtilec-loop.so");
    cr_assert_not_null(d);
    cr_expect_not_null(strstr(d->reason, "symbolic links"), "%s", d->reason);
    d = by_file(l, n, "loop2");
    cr_assert_not_null(d, "a symlink loop in TILEC_PLUGIN_PATH is not listed");
    cr_expect_not_null(strstr(d->reason, "symbolic links"), "%s", d->reason);
    tilec_plugins_free(l, n);
    {
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        cr_expect_eq(system(cmd), 0);
    }
}
