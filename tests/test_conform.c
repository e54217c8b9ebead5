/*
 * tests/test_conform.c — the conformance runner (conformance/) against
 * plugins whose behaviour is known: the template plugin (conforms), its
 * mis-lowered twin (T.exp wrong), and the fakes of
 * tests/plugins/conform_fake.c (crash, hang, liar, nocaps).  Checks the
 * statuses, the capability rule for not-supported, known failures and
 * unexpected passes, certificates and their verification (a tampered
 * plugin file or result list must not verify), and that the JUnit and JSON
 * reports are well formed.
 *
 * Plugins come from TILEC_BUILD_DIR (set by tests/run.sh; default build),
 * cases from conformance/cases and small files written to a temporary
 * directory.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conform.h"
#include "tilec/sdk.h"

static const char *build_dir(void)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    return b && *b ? b : "build";
}

static char plugin_buf[PATH_MAX];

static const char *plugin(const char *rel)
{
    snprintf(plugin_buf, sizeof plugin_buf, "%s/%s", build_dir(), rel);
    return plugin_buf;
}

static void open_run(conform_run_t *run, const char *path)
{
    char *err = NULL;
    memset(run, 0, sizeof *run);
    run->timeout_s = 60;
    run->jobs = 2;
    run->quiet = 1;
    setenv("TILEC_CACHE", "0", 1);
    cr_assert_eq(conform_open_plugin(run, path, 0, &err), 0, "open %s: %s", path, err ? err : "?");
}

static char tmpdir[64];

static const char *write_case(const char *name, const char *text)
{
    static char path[PATH_MAX];
    if (!tmpdir[0]) {
        strcpy(tmpdir, "/tmp/tilec-conform-test-XXXXXX");
        cr_assert_not_null(mkdtemp(tmpdir));
    }
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Each test runs in its own process with its own temporary directory;
 * remove it afterwards. */
static void remove_tmpdir(void)
{
    if (!tmpdir[0]) {
        return;
    }
    DIR *d = opendir(tmpdir);
    struct dirent *de;
    char path[PATH_MAX];
    while (d && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", tmpdir, de->d_name);
            unlink(path);
        }
    }
    if (d) {
        closedir(d);
    }
    rmdir(tmpdir);
    tmpdir[0] = '\0';
}

TestSuite(conform, .fini = remove_tmpdir);

static const char case_f32[] =
    "# conform: tol=fp32\n"
    "import tilelang\nimport tilelang.language as T\n\n"
    "def scale(N=64):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float32\"), B: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(2, threads=32) as bx:\n"
    "            t = T.alloc_fragment((32,), \"float32\")\n"
    "            T.copy(A[bx * 32], t)\n"
    "            for i in T.Parallel(32):\n"
    "                t[i] = t[i] * 2.0 + 1.0\n"
    "            T.copy(t, B[bx * 32])\n"
    "    return main\n";

static const char case_f16[] =
    "# conform: caps=fp16 tol=fp16\n"
    "# conform-params: -D N=64\n"
    "# conform-params: -D N=40\n"
    "import tilelang\nimport tilelang.language as T\n\n"
    "def half(N=64):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), \"float16\"), B: T.Tensor((N,), \"float16\")):\n"
    "        with T.Kernel(T.ceildiv(N, 32), threads=32) as bx:\n"
    "            t = T.alloc_shared((32,), \"float16\")\n"
    "            T.copy(A[bx * 32], t)\n"
    "            T.copy(t, B[bx * 32])\n"
    "    return main\n";

static const conform_item_t *find(const conform_run_t *run, const char *id)
{
    for (int i = 0; i < run->n; i++) {
        if (!strcmp(run->items[i].id, id)) {
            return &run->items[i];
        }
    }
    cr_assert_fail("no item '%s'", id);
    return NULL;
}

static void load(conform_run_t *run, const char *path)
{
    char *err = NULL;
    cr_assert_eq(conform_load_case(run, path, &err), 0, "%s", err ? err : "?");
}

/* ---- statuses ----------------------------------------------------------------- */

Test(conform, crash_in_launch_is_crash)
{
    conform_run_t run;
    open_run(&run, plugin("tests/conform-plugins/libtilec-fake_crash.so"));
    load(&run, write_case("scale.py", case_f32));
    cr_assert_eq(conform_run_all(&run), 0);
    const conform_item_t *it = find(&run, "scale");
    cr_expect_eq(it->status, CONFORM_CRASH, "status %s: %s", conform_status_name(it->status), it->message);
    cr_expect_not_null(strstr(it->message, "signal 11"), "%s", it->message);
    cr_expect_eq(run.counts[CONFORM_CRASH], 1);
    cr_expect_not(conform_certified(&run));
    conform_run_free(&run);
}

Test(conform, hang_is_timeout_and_the_run_goes_on)
{
    conform_run_t run;
    open_run(&run, plugin("tests/conform-plugins/libtilec-fake_hang.so"));
    run.timeout_s = 1;
    load(&run, write_case("scale.py", case_f32));
    /* An ABI case that does not launch still passes after the hang. */
    conform_item_t *abi = conform_item_add(&run, "abi/negotiate_exact", CONFORM_KIND_ABI);
    cr_assert_not_null(abi);
    abi->index = 0;
    cr_assert_eq(conform_run_all(&run), 0);
    const conform_item_t *it = find(&run, "scale");
    cr_expect_eq(it->status, CONFORM_TIMEOUT, "status %s: %s", conform_status_name(it->status), it->message);
    cr_expect_eq(find(&run, "abi/negotiate_exact")->status, CONFORM_PASS);
    conform_run_free(&run);
}

Test(conform, not_supported_only_for_undeclared_capabilities)
{
    conform_run_t run;
    /* nocaps declares no fp16: the fp16 case is not-supported; the float32
     * case runs, and since this plugin computes nothing it fails. */
    open_run(&run, plugin("tests/conform-plugins/libtilec-fake_nocaps.so"));
    load(&run, write_case("half.py", case_f16));
    load(&run, write_case("scale.py", case_f32));
    cr_assert_eq(conform_run_all(&run), 0);
    const conform_item_t *h = find(&run, "half/0");
    cr_expect_eq(h->status, CONFORM_NOT_SUPPORTED, "%s: %s", conform_status_name(h->status), h->message);
    cr_expect_not_null(strstr(h->message, "fp16"), "%s", h->message);
    cr_expect_eq(find(&run, "half/1")->status, CONFORM_NOT_SUPPORTED);
    const conform_item_t *s = find(&run, "scale");
    cr_expect_eq(s->status, CONFORM_FAIL, "%s: %s", conform_status_name(s->status), s->message);
    conform_run_free(&run);
}

Test(conform, skipping_a_claimed_capability_is_a_failure)
{
    conform_run_t run;
    open_run(&run, plugin("tests/conform-plugins/libtilec-fake_liar.so"));
    load(&run, write_case("half.py", case_f16));
    cr_assert_eq(conform_run_all(&run), 0);
    const conform_item_t *h = find(&run, "half/0");
    cr_expect_eq(h->status, CONFORM_FAIL, "%s: %s", conform_status_name(h->status), h->message);
    cr_expect_not_null(strstr(h->message, "UNSUPPORTED although"), "%s", h->message);
    conform_run_free(&run);
}

Test(conform, capabilities_are_derived_from_the_ir)
{
    conform_run_t run;
    /* The header of copy_convert says nothing of bf16; the IR does. */
    open_run(&run, plugin("tests/conform-plugins/libtilec-fake_nocaps.so"));
    load(&run, "conformance/cases/copy_convert.py");
    load(&run, "conformance/cases/atomic_add_int.py");
    load(&run, "conformance/cases/dynamic_rows.py");
    cr_assert_eq(conform_run_all(&run), 0);
    const conform_item_t *a = find(&run, "copy_convert/0");
    cr_expect_eq(a->status, CONFORM_NOT_SUPPORTED);
    cr_expect_not_null(strstr(a->message, "bf16"), "%s", a->message);
    cr_expect_not_null(strstr(find(&run, "atomic_add_int/0")->message, "atomic-int"));
    cr_expect_not_null(strstr(find(&run, "dynamic_rows/0")->message, "dynamic-shape"));
    conform_run_free(&run);
}

/* ---- the template, right and wrong ------------------------------------------------ */

Test(conform, template_passes_and_the_mislowered_one_fails)
{
    conform_run_t good, bad;
    open_run(&good, plugin("template/libtilec-template.so"));
    load(&good, "conformance/cases/math_unary_f32.py");
    load(&good, "conformance/cases/copy_global_shared.py");
    cr_assert_eq(conform_run_all(&good), 0);
    for (int i = 0; i < good.n; i++) {
        cr_expect_eq(good.items[i].status, CONFORM_PASS, "%s: %s", good.items[i].id, good.items[i].message);
    }
    cr_expect(conform_certified(&good));
    open_run(&bad, plugin("template/libtilec-template_wrong.so"));
    load(&bad, "conformance/cases/math_unary_f32.py");
    load(&bad, "conformance/cases/copy_global_shared.py");
    cr_assert_eq(conform_run_all(&bad), 0);
    const conform_item_t *m = find(&bad, "math_unary_f32/0");
    cr_expect_eq(m->status, CONFORM_FAIL, "%s: %s", conform_status_name(m->status), m->message);
    cr_expect_not_null(strstr(m->message, "tensor 'E' differs"), "%s", m->message);
    cr_expect_eq(find(&bad, "math_unary_f32/1")->status, CONFORM_FAIL);
    cr_expect_eq(find(&bad, "copy_global_shared/0")->status, CONFORM_PASS);
    cr_expect_not(conform_certified(&bad));
    conform_run_free(&good);
    conform_run_free(&bad);
}

/* ---- known failures ------------------------------------------------------------------- */

Test(conform, known_failures_and_unexpected_passes)
{
    conform_run_t run;
    char *err = NULL;
    open_run(&run, plugin("template/libtilec-template_wrong.so"));
    load(&run, "conformance/cases/math_unary_f32.py");
    load(&run, "conformance/cases/copy_global_shared.py");
    const char *kf = write_case("known.txt",
                                "# comment\n"
                                "math_unary_f32   T.exp is mis-lowered on purpose\n"
                                "copy_global_shared/1  listed, but it passes\n");
    cr_assert_eq(conform_load_known(&run, kf, &err), 0, "%s", err ? err : "");
    cr_assert_eq(conform_run_all(&run), 0);
    const conform_item_t *m = find(&run, "math_unary_f32/0");
    cr_expect(m->known);
    cr_expect_eq(m->status, CONFORM_FAIL);
    cr_expect_str_eq(m->known_reason, "T.exp is mis-lowered on purpose");
    cr_expect_not(m->unexpected_pass);
    const conform_item_t *c = find(&run, "copy_global_shared/1");
    cr_expect(c->known);
    cr_expect(c->unexpected_pass);
    cr_expect_not(find(&run, "copy_global_shared/0")->known);
    cr_expect_eq(run.nknown, 2);
    cr_expect_eq(run.nunexpected, 1);
    cr_expect_not(conform_certified(&run));
    conform_run_free(&run);
}

Test(conform, known_failure_needs_a_reason)
{
    conform_run_t run;
    char *err = NULL;
    memset(&run, 0, sizeof run);
    load(&run, write_case("scale.py", case_f32));
    const char *kf = write_case("bad.txt", "scale\n");
    cr_expect_eq(conform_load_known(&run, kf, &err), -1);
    cr_assert_not_null(err);
    cr_expect_not_null(strstr(err, "no reason"), "%s", err);
    free(err);
    conform_run_free(&run);
}

Test(conform, case_header_errors)
{
    conform_run_t run;
    char *err = NULL;
    memset(&run, 0, sizeof run);
    cr_expect_eq(conform_load_case(&run, write_case("a.py", "# conform: colour=red\n"), &err), -1);
    cr_expect(err && strstr(err, "unknown key 'colour'"));
    free(err);
    cr_expect_eq(conform_load_case(&run, write_case("b.py", "# conform: caps=warp-drive\n"), &err), -1);
    free(err);
    cr_expect_eq(conform_load_case(&run, write_case("c.py", "# conform: tol=loose\n"), &err), -1);
    free(err);
    cr_expect_eq(conform_load_case(&run, write_case("d.py", "# conform-params: -D M\n"), &err), -1);
    free(err);
    cr_expect_eq(run.n, 0);
    cr_assert_eq(conform_load_case(&run, write_case("e.py", "# conform: caps=fp16,atomic-float tol=exact\n"
                                                             "# conform-params: -D M=3 -DN=4 --entry k\n"), &err), 0);
    cr_assert_eq(run.n, 1);
    cr_expect_eq(run.items[0].caps, TILEC_CAP_FLOAT16 | TILEC_CAP_ATOMIC_FLOAT);
    cr_expect_eq(run.items[0].tol, CHECK_TOL_EXACT);
    cr_assert_eq(run.items[0].ndefs, 2);
    cr_expect_str_eq(run.items[0].defs[1].name, "N");
    cr_expect_str_eq(run.items[0].defs[1].value, "4");
    cr_expect_str_eq(run.items[0].entry, "k");
    conform_run_free(&run);
}

/* ---- certificates ----------------------------------------------------------------------- */

/* Copies through a temporary file and rename, so a loaded copy of the
 * old file (mapped by dlopen) is never rewritten in place. */
static void copy_file(const char *from, const char *to, int extra_byte)
{
    void *data;
    size_t len;
    char tmp[PATH_MAX];
    cr_assert_eq(tilec_sdk_file_read(from, &data, &len), 0);
    snprintf(tmp, sizeof tmp, "%s.tmp", to);
    FILE *f = fopen(tmp, "wb");
    cr_assert_not_null(f);
    fwrite(data, 1, len, f);
    if (extra_byte) {
        fputc(0, f);
    }
    fclose(f);
    free(data);
    cr_assert_eq(rename(tmp, to), 0);
}

Test(conform, certificate_verifies_and_tampering_is_caught)
{
    conform_run_t run;
    char path[PATH_MAX], cert[PATH_MAX], *why = NULL;
    /* Certify a private copy of the template, so nothing else is touched. */
    write_case("x", "");
    snprintf(path, sizeof path, "%s/libtilec-template.so", tmpdir);
    copy_file(plugin("template/libtilec-template.so"), path, 0);
    open_run(&run, path);
    load(&run, "conformance/cases/copy_global_shared.py");
    cr_assert_eq(conform_run_all(&run), 0);
    cr_assert(conform_certified(&run));
    char *cp = conform_cert_path(path);
    snprintf(cert, sizeof cert, "%s", cp);
    free(cp);
    cr_assert_eq(conform_write_cert(&run, cert), 0);
    cr_expect_eq(conform_verify(cert, path, &why), 0, "%s", why ? why : "");
    free(why);
    why = NULL;
    cr_expect(conform_is_certified(path));

    /* The certificate names the suite, ABI, plugin, device, counts. */
    void *text;
    size_t len;
    cr_assert_eq(tilec_sdk_file_read(cert, &text, &len), 0);
    const char *keys[] = {"\"suite_version\":", "\"abi_version\": \"1.1\"", "\"plugin_sha256\":",
                          "\"name\": \"template\"", "\"device\":", "\"counts\":", "\"results_sha256\":",
                          "\"certified\": true"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        cr_expect_not_null(strstr(text, keys[k]), "certificate lacks %s", keys[k]);
    }

    /* A changed result list no longer matches its digest. */
    char *p = strstr(text, "\"copy_global_shared/1\", \"pass\"");
    cr_assert_not_null(p);
    memcpy(strstr(p, "\"pass\"") + 1, "fail", 4);
    char forged[PATH_MAX];
    snprintf(forged, sizeof forged, "%s/forged.cert.json", tmpdir);
    FILE *f = fopen(forged, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    cr_expect_eq(conform_verify(forged, path, &why), -1);
    cr_expect(why && strstr(why, "digest"), "%s", why ? why : "");
    free(why);
    why = NULL;

    /* A rebuilt (here: one byte longer) plugin file does not verify. */
    copy_file(plugin("template/libtilec-template.so"), path, 1);
    cr_expect_eq(conform_verify(cert, path, &why), -1);
    cr_expect(why && strstr(why, "SHA-256"), "%s", why ? why : "");
    free(why);
    cr_expect_not(conform_is_certified(path));
    conform_run_free(&run);
}

/* ---- report formats ------------------------------------------------------------------------ */

/* A strict little JSON checker: one value, then only blanks. */
static const char *js_value(const char *p, int depth);

static const char *js_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') {
        p++;
    }
    return p;
}

static const char *js_string(const char *p)
{
    if (*p++ != '"') {
        return NULL;
    }
    while (*p && *p != '"') {
        if ((unsigned char)*p < 0x20) {
            return NULL;
        }
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++) {
                    if (!isxdigit((unsigned char)p[i])) {
                        return NULL;
                    }
                }
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p)) {
                return NULL;
            }
        }
        p++;
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char *js_value(const char *p, int depth)
{
    p = js_ws(p);
    if (depth > 64) {
        return NULL;
    }
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        int obj = *p == '{';
        p = js_ws(p + 1);
        if (*p == close) {
            return p + 1;
        }
        for (;;) {
            if (obj) {
                p = js_string(js_ws(p));
                if (!p || *(p = js_ws(p)) != ':') {
                    return NULL;
                }
                p++;
            }
            p = js_value(p, depth + 1);
            if (!p) {
                return NULL;
            }
            p = js_ws(p);
            if (*p == ',') {
                p++;
                continue;
            }
            return *p == close ? p + 1 : NULL;
        }
    }
    if (*p == '"') {
        return js_string(p);
    }
    if (!strncmp(p, "true", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    if (!strncmp(p, "null", 4)) return p + 4;
    char *end;
    strtod(p, &end);
    return end == p ? NULL : end;
}

/* XML: tags balance and nest, attributes are quoted, no raw '<' or '&'
 * outside markup and entities. */
static int xml_ok(const char *p)
{
    const char *stack[64];
    size_t lens[64];
    int depth = 0, seen_root = 0;
    if (!strncmp(p, "<?xml", 5)) {
        p = strstr(p, "?>");
        if (!p) return 0;
        p += 2;
    }
    while (*p) {
        if (*p == '&') {
            const char *semi = strchr(p, ';');
            if (!semi || semi - p > 6) return 0;
            p = semi + 1;
            continue;
        }
        if (*p != '<') {
            if (!depth && !isspace((unsigned char)*p)) return 0;
            p++;
            continue;
        }
        int closing = p[1] == '/';
        const char *name = p + 1 + closing;
        size_t nl = strcspn(name, " />\n\t");
        if (!nl) return 0;
        const char *q = name + nl;
        while (*q && *q != '>') {
            if (*q == '"') {
                const char *e = strchr(q + 1, '"');
                if (!e || memchr(q + 1, '<', (size_t)(e - q - 1))) return 0;
                q = e;
            }
            q++;
        }
        if (!*q) return 0;
        int selfclose = q[-1] == '/';
        if (closing) {
            if (!depth || lens[depth - 1] != nl || strncmp(stack[depth - 1], name, nl)) return 0;
            depth--;
        } else if (!selfclose) {
            if (depth == 64 || (depth == 0 && seen_root)) return 0;
            seen_root = 1;
            stack[depth] = name;
            lens[depth++] = nl;
        }
        p = q + 1;
    }
    return depth == 0 && seen_root;
}

Test(conform, junit_and_json_are_well_formed)
{
    conform_run_t run;
    char junit[PATH_MAX], json[PATH_MAX];
    open_run(&run, plugin("tests/conform-plugins/libtilec-fake_nocaps.so"));
    load(&run, write_case("half.py", case_f16));
    /* A message with characters both formats must escape. */
    load(&run, write_case("odd.py", "# conform: tol=fp32\nthis is <not> a \"program\" & fails\n"));
    cr_assert_eq(conform_run_all(&run), 0);
    snprintf(junit, sizeof junit, "%s/r.xml", tmpdir);
    snprintf(json, sizeof json, "%s/r.json", tmpdir);
    cr_assert_eq(conform_write_junit(&run, junit), 0);
    cr_assert_eq(conform_write_json(&run, json), 0);
    void *x, *j;
    size_t len;
    cr_assert_eq(tilec_sdk_file_read(junit, &x, &len), 0);
    cr_assert_eq(tilec_sdk_file_read(json, &j, &len), 0);
    cr_expect(xml_ok(x), "JUnit XML is not well formed:\n%s", (char *)x);
    cr_expect_not_null(strstr(x, "<testsuites"));
    cr_expect_not_null(strstr(x, "<skipped message=\"not-supported"));
    cr_expect_not_null(strstr(x, "<failure type=\"fail\""));
    const char *end = js_value(j, 0);
    cr_expect(end && !*js_ws(end), "JSON is not well formed:\n%s", (char *)j);
    cr_expect_not_null(strstr(j, "\"status\": \"not-supported\""));
    free(x);
    free(j);
    conform_run_free(&run);
}

Test(conform, abi_and_loader_cases_pass_on_the_template)
{
    conform_run_t run;
    char bdir[PATH_MAX];
    open_run(&run, plugin("template/libtilec-template.so"));
    snprintf(bdir, sizeof bdir, "%s/tests/plugins", build_dir());
    run.broken_dir = bdir;
    for (int i = 0; i < conform_abi_count(); i++) {
        char id[128];
        snprintf(id, sizeof id, "abi/%s", conform_abi_name(i));
        conform_item_t *it = conform_item_add(&run, id, CONFORM_KIND_ABI);
        cr_assert_not_null(it);
        it->index = i;
    }
    for (int i = 0; i < conform_loader_count(); i++) {
        char id[128];
        snprintf(id, sizeof id, "loader/%s", conform_loader_name(i));
        conform_item_t *it = conform_item_add(&run, id, CONFORM_KIND_LOADER);
        cr_assert_not_null(it);
        it->index = i;
    }
    cr_assert_eq(conform_run_all(&run), 0);
    for (int i = 0; i < run.n; i++) {
        cr_expect_eq(run.items[i].status, CONFORM_PASS, "%s: %s %s", run.items[i].id,
                     conform_status_name(run.items[i].status), run.items[i].message);
    }
    conform_run_free(&run);
}

Test(conform, abi_cases_catch_a_plugin_that_computes_nothing)
{
    conform_run_t run;
    open_run(&run, plugin("tests/conform-plugins/libtilec-fake_nocaps.so"));
    for (int i = 0; i < conform_abi_count(); i++) {
        if (!strcmp(conform_abi_name(i), "launch_struct_sizes")) {
            conform_item_t *it = conform_item_add(&run, "abi/launch_struct_sizes", CONFORM_KIND_ABI);
            cr_assert_not_null(it);
            it->index = i;
        }
    }
    cr_assert_eq(conform_run_all(&run), 0);
    cr_expect_eq(run.items[0].status, CONFORM_FAIL);
    cr_expect_not_null(strstr(run.items[0].message, "expected"), "%s", run.items[0].message);
    conform_run_free(&run);
}

Test(conform, a_plugin_crashing_in_its_query_does_not_take_the_runner_down)
{
    conform_run_t run;
    char *err = NULL;
    memset(&run, 0, sizeof run);
    cr_expect_eq(conform_open_plugin(&run, plugin("tests/plugins/libtilec-broken_crashquery.so"), 0, &err), -1);
    cr_assert_not_null(err);
    cr_expect_not_null(strstr(err, "crashed"), "%s", err);
    free(err);
    err = NULL;
    cr_expect_eq(conform_open_plugin(&run, plugin("tests/plugins/libtilec-broken_unavailable.so"), 0, &err), -1);
    cr_assert_not_null(err);
    cr_expect_not_null(strstr(err, "unavailable"), "%s", err);
    free(err);
}
