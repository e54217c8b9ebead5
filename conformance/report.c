/*
 * conformance/report.c — what a conformance run leaves behind: JUnit XML
 * and JSON for CI systems, and the certificate a vendor publishes, plus
 * the two readers of certificates (`tilec conform --verify` and the
 * "certified" mark of `tilec devices`).
 *
 * The certificate is a small JSON object: suite version and digest, ABI
 * version, plugin name/vendor/version, SHA-256 of the plugin file, device,
 * counts per status, the list of (id, status) pairs and their digest.
 * Verification recomputes the file hash, the digest of the listed results
 * and the counts, so neither a rebuilt plugin nor an edited result list
 * passes.  The reader below understands exactly what the writer writes
 * (flat keys, strings without exotic escapes); it never reads past its
 * buffer and rejects anything else.
 */
#include "conform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tilec/sdk.h"

int conform_file_sha256(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return -1;
    }
    tilec_sha256_t s;
    unsigned char buf[65536];
    size_t n;
    tilec_sha256_init(&s);
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        tilec_sha256_update(&s, buf, n);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        return -1;
    }
    uint8_t d[32];
    tilec_sha256_final(&s, d);
    tilec_sha256_hex(d, hex);
    return 0;
}

void conform_results_digest(const conform_item_t *items, int n, char hex[65])
{
    tilec_sha256_t s;
    tilec_sha256_init(&s);
    for (int i = 0; i < n; i++) {
        const char *st = conform_status_name(items[i].status);
        tilec_sha256_update(&s, items[i].id, strlen(items[i].id));
        tilec_sha256_update(&s, "\t", 1);
        tilec_sha256_update(&s, st, strlen(st));
        tilec_sha256_update(&s, "\n", 1);
    }
    uint8_t d[32];
    tilec_sha256_final(&s, d);
    tilec_sha256_hex(d, hex);
}

int conform_certified(const conform_run_t *run)
{
    return run->n > 0 && run->counts[CONFORM_FAIL] == 0 && run->counts[CONFORM_CRASH] == 0 &&
           run->counts[CONFORM_TIMEOUT] == 0 && run->nunexpected == 0;
}

char *conform_cert_path(const char *plugin)
{
    size_t n = strlen(plugin);
    char *p = malloc(n + 11);
    if (p) {
        memcpy(p, plugin, n);
        memcpy(p + n, ".cert.json", 11);
    }
    return p;
}

/* ---- writers -------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p == '\n') {
            fputs("\\n", f);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\u%04x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void xml_str(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        case '\n': fputs("&#10;", f); break;
        case '\t': fputc('\t', f); break;
        default:
            /* XML 1.0 has no other control characters. */
            fputc(*p < 0x20 ? '?' : *p, f);
        }
    }
}

static int finish(FILE *f, const char *path)
{
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "tilec conform: error writing '%s'\n", path);
        return -1;
    }
    return 0;
}

static const char *kind_name(conform_kind_t k)
{
    return k == CONFORM_KIND_CASE ? "case" : k == CONFORM_KIND_ABI ? "abi" : "loader";
}

int conform_write_junit(const conform_run_t *run, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tilec conform: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    int failures = 0, errors = 0, skipped = 0;
    for (int i = 0; i < run->n; i++) {
        const conform_item_t *it = &run->items[i];
        if (it->unexpected_pass) {
            failures++;
        } else if (it->known || it->status == CONFORM_NOT_SUPPORTED) {
            skipped++;
        } else if (it->status == CONFORM_FAIL) {
            failures++;
        } else if (it->status == CONFORM_CRASH || it->status == CONFORM_TIMEOUT) {
            errors++;
        }
    }
    const char *name = run->table ? run->table->name : "?";
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"tilec conform\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
               "skipped=\"%d\" time=\"%.3f\">\n",
            run->n, failures, errors, skipped, run->wall_s);
    fprintf(f, "  <testsuite name=\"conform.");
    xml_str(f, name);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n", run->n,
            failures, errors, skipped, run->wall_s);
    fprintf(f, "    <properties>\n      <property name=\"suite_version\" value=\"%s\"/>\n",
            TILEC_CONFORM_SUITE_VERSION);
    fprintf(f, "      <property name=\"plugin_sha256\" value=\"%s\"/>\n", run->sha256);
    fprintf(f, "      <property name=\"device\" value=\"");
    xml_str(f, run->info.name);
    fprintf(f, "\"/>\n    </properties>\n");
    for (int i = 0; i < run->n; i++) {
        const conform_item_t *it = &run->items[i];
        fprintf(f, "    <testcase classname=\"conform.%s\" name=\"", kind_name(it->kind));
        xml_str(f, it->id);
        fprintf(f, "\" time=\"%.3f\"", it->time_s);
        if (it->status == CONFORM_PASS && !it->unexpected_pass) {
            fprintf(f, "/>\n");
            continue;
        }
        fprintf(f, ">\n      ");
        if (it->unexpected_pass) {
            fprintf(f, "<failure type=\"unexpected-pass\" message=\"unexpected pass: listed as a known "
                       "failure (");
            xml_str(f, it->known_reason);
            fprintf(f, ")\"/>\n");
        } else if (it->known) {
            fprintf(f, "<skipped message=\"known failure (%s): ", conform_status_name(it->status));
            xml_str(f, it->known_reason);
            fprintf(f, "\"/>\n");
        } else if (it->status == CONFORM_NOT_SUPPORTED) {
            fprintf(f, "<skipped message=\"not-supported: ");
            xml_str(f, it->message);
            fprintf(f, "\"/>\n");
        } else {
            const char *tag = it->status == CONFORM_FAIL ? "failure" : "error";
            fprintf(f, "<%s type=\"%s\" message=\"", tag, conform_status_name(it->status));
            xml_str(f, it->message);
            fprintf(f, "\">");
            xml_str(f, it->message);
            fprintf(f, "</%s>\n", tag);
        }
        fprintf(f, "    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    return finish(f, path);
}

static void write_header(FILE *f, const conform_run_t *run)
{
    char caps[256];
    const tilec_plugin_t *t = run->table;
    conform_caps_text(run->info.caps, caps, sizeof caps);
    fprintf(f, "  \"suite_version\": \"%s\",\n", TILEC_CONFORM_SUITE_VERSION);
    fprintf(f, "  \"suite_sha256\": \"%s\",\n", run->suite_sha256);
    fprintf(f, "  \"abi_version\": \"%u.%u\",\n", TILEC_ABI_MAJOR(run->abi), TILEC_ABI_MINOR(run->abi));
    fprintf(f, "  \"tilec_version\": \"%s\",\n", TILEC_VERSION_STRING);
    fprintf(f, "  \"plugin\": {\"name\": ");
    json_str(f, t ? t->name : "");
    fprintf(f, ", \"vendor\": ");
    json_str(f, t ? t->vendor : "");
    fprintf(f, ", \"version\": ");
    json_str(f, t ? t->version : "");
    fprintf(f, ", \"path\": ");
    json_str(f, run->plugin_path);
    fprintf(f, "},\n  \"plugin_sha256\": \"%s\",\n", run->sha256);
    fprintf(f, "  \"device\": {\"index\": %u, \"name\": ", run->device);
    json_str(f, run->info.name);
    fprintf(f, ", \"platform\": ");
    json_str(f, run->info.platform);
    fprintf(f, ", \"caps\": ");
    json_str(f, caps);
    fprintf(f, "},\n  \"mode\": \"%s\",", run->compile_archs ? "compile-only" : "run");
    if (run->compile_archs) {
        fprintf(f, " \"archs\": ");
        json_str(f, run->compile_archs);
        fprintf(f, ",");
    }
    fprintf(f, "\n  \"seed\": %llu,\n", (unsigned long long)run->seed);
    fprintf(f, "  \"counts\": {");
    for (int s = 0; s < CONFORM_NSTATUS; s++) {
        fprintf(f, "%s\"%s\": %d", s ? ", " : "", conform_status_name((conform_status_t)s), run->counts[s]);
    }
    fprintf(f, "},\n  \"known_failures\": %d,\n  \"unexpected_passes\": %d,\n", run->nknown,
            run->nunexpected);
    fprintf(f, "  \"results_sha256\": \"%s\",\n", run->results_sha256);
    fprintf(f, "  \"certified\": %s,\n", conform_certified(run) ? "true" : "false");
}

int conform_write_json(const conform_run_t *run, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tilec conform: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n");
    write_header(f, run);
    fprintf(f, "  \"time_s\": %.3f,\n  \"results\": [\n", run->wall_s);
    for (int i = 0; i < run->n; i++) {
        const conform_item_t *it = &run->items[i];
        fprintf(f, "    {\"id\": ");
        json_str(f, it->id);
        fprintf(f, ", \"kind\": \"%s\", \"status\": \"%s\", \"time_s\": %.3f, \"message\": ",
                kind_name(it->kind), conform_status_name(it->status), it->time_s);
        json_str(f, it->message);
        if (it->kind == CONFORM_KIND_CASE) {
            fprintf(f, ", \"params\": ");
            json_str(f, it->params_text);
        }
        if (it->known) {
            fprintf(f, ", \"known_failure\": ");
            json_str(f, it->known_reason);
            fprintf(f, ", \"unexpected_pass\": %s", it->unexpected_pass ? "true" : "false");
        }
        fprintf(f, "}%s\n", i + 1 < run->n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return finish(f, path);
}

int conform_write_cert(const conform_run_t *run, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tilec conform: cannot write the certificate '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char date[64] = "";
    time_t now = time(NULL);
    struct tm tmv;
    if (gmtime_r(&now, &tmv)) {
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    }
    fprintf(f, "{\n  \"tilec_certificate\": 1,\n  \"date\": \"%s\",\n", date);
    write_header(f, run);
    fprintf(f, "  \"results\": [\n");
    for (int i = 0; i < run->n; i++) {
        fprintf(f, "    [");
        json_str(f, run->items[i].id);
        fprintf(f, ", \"%s\"]%s\n", conform_status_name(run->items[i].status), i + 1 < run->n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return finish(f, path);
}

/* ---- reading certificates --------------------------------------------------- */

/* The string value of "key" at top level or nested (first occurrence),
 * unescaped into a malloc'd string; NULL when absent or malformed. */
static char *json_get_str(const char *text, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p) {
        return NULL;
    }
    p += strlen(pat);
    while (*p == ' ') {
        p++;
    }
    if (*p != '"') {
        return NULL;
    }
    p++;
    size_t cap = strlen(p) + 1, n = 0;
    char *out = malloc(cap);
    if (!out) {
        return NULL;
    }
    while (*p && *p != '"') {
        if (*p == '\\') {
            p++;
            if (*p == 'n') {
                out[n++] = '\n';
            } else if (*p == 'u') {
                /* \u00XX: what the writer emits for control characters */
                unsigned v = 0;
                for (int k = 1; k <= 4 && p[k]; k++) {
                    char c = p[k];
                    v = v * 16 + (unsigned)(c >= 'a' ? c - 'a' + 10 : c >= 'A' ? c - 'A' + 10 : c - '0');
                }
                out[n++] = (char)(v & 0xff);
                for (int k = 0; k < 4 && p[1]; k++) {
                    p++;
                }
            } else if (*p) {
                out[n++] = *p;
            } else {
                break;
            }
            p++;
            continue;
        }
        out[n++] = *p++;
    }
    if (*p != '"') {
        free(out);
        return NULL;
    }
    out[n] = '\0';
    return out;
}

static int json_get_bool(const char *text, const char *key, int *v)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p) {
        return -1;
    }
    p += strlen(pat);
    while (*p == ' ') {
        p++;
    }
    if (!strncmp(p, "true", 4)) {
        *v = 1;
    } else if (!strncmp(p, "false", 5)) {
        *v = 0;
    } else {
        return -1;
    }
    return 0;
}

static int json_get_int(const char *text, const char *key, long *v)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p) {
        return -1;
    }
    char *end;
    *v = strtol(p + strlen(pat), &end, 10);
    return end == p + strlen(pat) ? -1 : 0;
}

/* Reads one JSON string at *pp (after optional blanks) into out (len). */
static int read_str(const char **pp, char *out, size_t len)
{
    const char *p = *pp;
    size_t n = 0;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') {
        p++;
    }
    if (*p != '"') {
        return -1;
    }
    p++;
    while (*p && *p != '"') {
        if (*p == '\\' && p[1]) {
            p++;
        }
        if (n + 1 >= len) {
            return -1;
        }
        out[n++] = *p++;
    }
    if (*p != '"') {
        return -1;
    }
    out[n] = '\0';
    *pp = p + 1;
    return 0;
}

static char *fail_msg(const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s) {
        snprintf(s, n, fmt, a, b);
    }
    return s;
}

int conform_verify(const char *cert, const char *plugin, char **why)
{
    void *data = NULL;
    size_t len;
    char *stored = NULL;
    int rc = -1;
    *why = NULL;
    if (tilec_sdk_file_read(cert, &data, &len) != 0) {
        *why = fail_msg("cannot read the certificate '%s'%s", cert, "");
        return -1;
    }
    const char *text = data;
    char hex[65];
    int certified = 0;
    if (!strstr(text, "\"tilec_certificate\":")) {
        *why = fail_msg("'%s' is not a tilec certificate%s", cert, "");
        goto out;
    }
    stored = json_get_str(text, "plugin_sha256");
    if (!stored || strlen(stored) != 64) {
        *why = fail_msg("'%s' has no plugin_sha256%s", cert, "");
        goto out;
    }
    if (conform_file_sha256(plugin, hex) != 0) {
        *why = fail_msg("cannot read the plugin file '%s'%s", plugin, "");
        goto out;
    }
    if (strcmp(hex, stored) != 0) {
        *why = fail_msg("the plugin file's SHA-256 %s differs from the certificate's %s", hex, stored);
        goto out;
    }
    /* Results: recompute their digest and counts. */
    const char *p = strstr(text, "\"results\": [");
    if (!p) {
        *why = fail_msg("'%s' has no results list%s", cert, "");
        goto out;
    }
    p += strlen("\"results\": [");
    int counts[CONFORM_NSTATUS] = {0};
    tilec_sha256_t sh;
    tilec_sha256_init(&sh);
    for (;;) {
        while (*p == ' ' || *p == '\n' || *p == ',' || *p == '\r' || *p == '\t') {
            p++;
        }
        if (*p == ']') {
            break;
        }
        char id[1024], st[64];
        if (*p != '[') {
            *why = fail_msg("malformed results list in '%s'%s", cert, "");
            goto out;
        }
        p++;
        if (read_str(&p, id, sizeof id) != 0) {
            *why = fail_msg("malformed result id in '%s'%s", cert, "");
            goto out;
        }
        while (*p == ' ' || *p == ',') {
            p++;
        }
        if (read_str(&p, st, sizeof st) != 0 || *p != ']') {
            *why = fail_msg("malformed result status in '%s'%s", cert, "");
            goto out;
        }
        p++;
        int k = -1;
        for (int s = 0; s < CONFORM_NSTATUS; s++) {
            if (!strcmp(st, conform_status_name((conform_status_t)s))) {
                k = s;
            }
        }
        if (k < 0) {
            *why = fail_msg("unknown status '%s' in '%s'", st, cert);
            goto out;
        }
        counts[k]++;
        tilec_sha256_update(&sh, id, strlen(id));
        tilec_sha256_update(&sh, "\t", 1);
        tilec_sha256_update(&sh, st, strlen(st));
        tilec_sha256_update(&sh, "\n", 1);
    }
    uint8_t d[32];
    tilec_sha256_final(&sh, d);
    tilec_sha256_hex(d, hex);
    free(stored);
    stored = json_get_str(text, "results_sha256");
    if (!stored || strcmp(stored, hex) != 0) {
        *why = fail_msg("the results digest does not match the listed results (%s vs %s)", hex,
                        stored ? stored : "none");
        goto out;
    }
    for (int s = 0; s < CONFORM_NSTATUS; s++) {
        long v;
        char key[32];
        snprintf(key, sizeof key, "%s", conform_status_name((conform_status_t)s));
        if (json_get_int(text, key, &v) != 0 || v != counts[s]) {
            *why = fail_msg("the count of '%s' does not match the listed results%s", key, "");
            goto out;
        }
    }
    if (json_get_bool(text, "certified", &certified) != 0) {
        *why = fail_msg("'%s' has no certified field%s", cert, "");
        goto out;
    }
    if (!certified || counts[CONFORM_FAIL] || counts[CONFORM_CRASH] || counts[CONFORM_TIMEOUT]) {
        *why = fail_msg("the certificate records a run that did not certify (fail, crash, timeout or "
                        "unexpected pass)%s%s", "", "");
        goto out;
    }
    rc = 0;
out:
    free(stored);
    free(data);
    return rc;
}

int conform_is_certified(const char *plugin)
{
    char *cert = conform_cert_path(plugin);
    char *why = NULL;
    int ok = cert && conform_verify(cert, plugin, &why) == 0;
    free(why);
    free(cert);
    return ok;
}
