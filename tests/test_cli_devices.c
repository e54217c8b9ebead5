/*
 * tests/test_cli_devices.c — `tilec devices` as a user sees it
 * (docs/cli.md): the text listing, `--json` checked with a small JSON
 * reader of its own, broken and shadowed plugins.  The child runs as in
 * test_cli.c (tests/cli_harness.h).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/plugin.h"
#include "tilec/tilec.h"
#include "cli_harness.h"
/* ---- a small JSON reader (enough to check `devices --json`) ----------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype_t;

typedef struct jval {
    jtype_t type;
    double num;
    char *str;           /* J_STR */
    int n;               /* J_ARR, J_OBJ: number of items */
    char **keys;         /* J_OBJ */
    struct jval **items; /* J_ARR, J_OBJ */
} jval_t;

typedef struct jparser {
    const char *s;
    const char *err;
} jparser_t;

enum { JSON_MAX_DEPTH = 64 };

static void jfree(jval_t *v)
{
    if (!v) {
        return;
    }
    for (int i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys) {
            free(v->keys[i]);
        }
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static void jws(jparser_t *p)
{
    while (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r') {
        p->s++;
    }
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string at p->s (which is at the opening quote); escapes \uXXXX become
 * UTF-8 (surrogate pairs are not needed here: checked, kept as-is). */
static char *jstring(jparser_t *p)
{
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    p->s++;
    while (out && *p->s != '"') {
        unsigned c = (unsigned char)*p->s;
        if (!c || c < 0x20) {
            p->err = "control character or end of input in a string";
            free(out);
            return NULL;
        }
        if (n + 4 >= cap) {
            char *g = realloc(out, cap *= 2);
            if (!g) {
                free(out);
                return NULL;
            }
            out = g;
        }
        if (c >= 0x80) {
            /* JSON text is UTF-8: decode the sequence and check its range. */
            int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
            unsigned cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0f : c & 0x1f;
            for (int i = 1; i < len; i++) {
                unsigned b = (unsigned char)p->s[i];
                if ((b & 0xc0) != 0x80) {
                    len = 0;
                    break;
                }
                cp = cp << 6 | (b & 0x3f);
            }
            static const unsigned min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
            /* (The growth above leaves room for 4 more bytes.) */
            if (!len || cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
                p->err = "invalid UTF-8 in a string";
                free(out);
                return NULL;
            }
            memcpy(out + n, p->s, (size_t)len);
            n += (size_t)len;
            p->s += len;
            continue;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            p->s++;
            continue;
        }
        p->s++;
        switch (*p->s) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned u = 0;
            for (int i = 1; i <= 4; i++) {
                int h = hexval(p->s[i]);
                if (h < 0) {
                    p->err = "bad \\u escape";
                    free(out);
                    return NULL;
                }
                u = u * 16 + (unsigned)h;
            }
            p->s += 4;
            if (u < 0x80) {
                out[n++] = (char)u;
            } else if (u < 0x800) {
                out[n++] = (char)(0xc0 | (u >> 6));
                out[n++] = (char)(0x80 | (u & 0x3f));
            } else {
                out[n++] = (char)(0xe0 | (u >> 12));
                out[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
                out[n++] = (char)(0x80 | (u & 0x3f));
            }
            break;
        }
        default:
            p->err = "bad escape";
            free(out);
            return NULL;
        }
        p->s++;
    }
    if (!out) {
        p->err = "out of memory";
        return NULL;
    }
    out[n] = '\0';
    p->s++;
    return out;
}

static jval_t *jvalue(jparser_t *p, int depth);

static int jpush(jval_t *v, char *key, jval_t *item)
{
    jval_t **items = realloc(v->items, (size_t)(v->n + 1) * sizeof *items);
    if (!items) {
        return -1;
    }
    v->items = items;
    if (v->type == J_OBJ) {
        char **keys = realloc(v->keys, (size_t)(v->n + 1) * sizeof *keys);
        if (!keys) {
            return -1;
        }
        v->keys = keys;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    return 0;
}

/* An array or object: p->s is at '[' or '{'. */
static jval_t *jcontainer(jparser_t *p, int depth)
{
    int obj = *p->s == '{';
    char close = obj ? '}' : ']';
    jval_t *v = calloc(1, sizeof *v);
    if (!v) {
        p->err = "out of memory";
        return NULL;
    }
    v->type = obj ? J_OBJ : J_ARR;
    p->s++;
    jws(p);
    if (*p->s == close) {
        p->s++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        jws(p);
        if (obj) {
            if (*p->s != '"') {
                p->err = "object key is not a string";
                goto fail;
            }
            if (!(key = jstring(p))) {
                goto fail;
            }
            jws(p);
            if (*p->s != ':') {
                p->err = "missing ':' after a key";
                free(key);
                goto fail;
            }
            p->s++;
        }
        jval_t *item = jvalue(p, depth + 1);
        if (!item || jpush(v, key, item) != 0) {
            free(key);
            jfree(item);
            if (!p->err) {
                p->err = "out of memory";
            }
            goto fail;
        }
        jws(p);
        if (*p->s == ',') {
            p->s++;
            continue;
        }
        if (*p->s == close) {
            p->s++;
            return v;
        }
        p->err = obj ? "expected ',' or '}'" : "expected ',' or ']'";
        goto fail;
    }
fail:
    jfree(v);
    return NULL;
}

static jval_t *jvalue(jparser_t *p, int depth)
{
    if (depth > JSON_MAX_DEPTH) {
        p->err = "nested too deep";
        return NULL;
    }
    jws(p);
    if (*p->s == '{' || *p->s == '[') {
        return jcontainer(p, depth);
    }
    jval_t *v = calloc(1, sizeof *v);
    if (!v) {
        p->err = "out of memory";
        return NULL;
    }
    if (*p->s == '"') {
        v->type = J_STR;
        if (!(v->str = jstring(p))) {
            free(v);
            return NULL;
        }
        return v;
    }
    static const struct { const char *word; jtype_t type; double num; } words[] = {
        {"true", J_BOOL, 1}, {"false", J_BOOL, 0}, {"null", J_NULL, 0},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t len = strlen(words[i].word);
        if (!strncmp(p->s, words[i].word, len)) {
            v->type = words[i].type;
            v->num = words[i].num;
            p->s += len;
            return v;
        }
    }
    /* Number, with JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
    const char *s = p->s;
    if (*s == '-') {
        s++;
    }
    if (*s == '0') {
        s++;
    } else if (*s >= '1' && *s <= '9') {
        while (*s >= '0' && *s <= '9') {
            s++;
        }
    } else {
        p->err = "unexpected character";
        free(v);
        return NULL;
    }
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9')) {
            p->err = "digit expected after '.'";
            free(v);
            return NULL;
        }
        while (*s >= '0' && *s <= '9') {
            s++;
        }
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') {
            s++;
        }
        if (!(*s >= '0' && *s <= '9')) {
            p->err = "digit expected in exponent";
            free(v);
            return NULL;
        }
        while (*s >= '0' && *s <= '9') {
            s++;
        }
    }
    v->type = J_NUM;
    v->num = strtod(p->s, NULL);
    p->s = s;
    return v;
}

/* Parses a whole document; NULL (and *err) when it is not valid JSON. */
static jval_t *json_parse(const char *text, const char **err)
{
    jparser_t p = {text, NULL};
    jval_t *v = jvalue(&p, 0);
    if (v) {
        jws(&p);
        if (*p.s) {
            p.err = "trailing characters after the value";
            jfree(v);
            v = NULL;
        }
    }
    *err = p.err ? p.err : "";
    return v;
}

static const jval_t *jget(const jval_t *obj, const char *key)
{
    if (!obj || obj->type != J_OBJ) {
        return NULL;
    }
    for (int i = 0; i < obj->n; i++) {
        if (!strcmp(obj->keys[i], key)) {
            return obj->items[i];
        }
    }
    return NULL;
}

/* The string member key of obj, or "" when there is none (so a comparison
 * fails instead of crashing). */
static const char *jstr(const jval_t *obj, const char *key)
{
    const jval_t *v = jget(obj, key);
    return v && v->type == J_STR ? v->str : "";
}

/* The first plugin object with this path suffix (name can be shadowed). */
static const jval_t *plugin_by_file(const jval_t *arr, const char *file)
{
    for (int i = 0; arr && arr->type == J_ARR && i < arr->n; i++) {
        const char *path = jstr(arr->items[i], "path");
        size_t pl = strlen(path), fl = strlen(file);
        if (pl >= fl && !strcmp(path + pl - fl, file)) {
            return arr->items[i];
        }
    }
    return NULL;
}

Test(json, validator_accepts_and_rejects)
{
    static const char *good[] = {
        "[]", "{}", " [1, -2.5e3, 0, true, false, null, \"a\\\"b\\u00e9\"] ",
        "{\"a\": {\"b\": [[], {}]}, \"c\": \"\"}", "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]",
    };
    static const char *bad[] = {
        "", "[", "[1,]", "{\"a\" 1}", "{\"a\": 1,}", "[01]", "[1.]", "\"abc", "[\"a\nb\"]",
        "{1: 2}", "[1] 2", "[tru]", "[\"\\x\"]", "[-]",
        "[\"\xff\"]", "[\"\xc3\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *err;
        jval_t *v = json_parse(good[i], &err);
        cr_expect_not_null(v, "rejected valid JSON %s: %s", good[i], err);
        jfree(v);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *err;
        jval_t *v = json_parse(bad[i], &err);
        cr_expect_null(v, "accepted invalid JSON '%s'", bad[i]);
        jfree(v);
    }
    /* Depth is limited, not recursion without end. */
    char deep[JSON_MAX_DEPTH * 2 + 8];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    const char *err;
    cr_expect_null(json_parse(deep, &err));
}

TestSuite(cli, .init = setup, .fini = teardown);

/* ---- tilec devices --------------------------------------------------------- */

Test(cli, devices_lists_cpu_ok)
{
    proc_t p;
    TILEC(&p, "devices");
    EXPECT_STATUS(&p, 0);
    int found = 0;
    for (int i = 0; i < count_lines(p.out); i++) {
        char *l = line_at(p.out, i);
        char name[64], state[64];
        if (sscanf(l, "%63s %63s", name, state) == 2 && !strcmp(name, "cpu") && !strcmp(state, "ok")) {
            found = 1;
            char *dev = line_at(p.out, i + 1);
            cr_assert(!strncmp(dev, "    cpu:0  ", 11), "no cpu:0 device line: '%s'", dev);
            free(dev);
        }
        free(l);
    }
    cr_assert(found, "no 'cpu ok' line in:\n%s", p.out);
    proc_free(&p);
}

Test(cli, devices_json_is_valid_and_lists_broken_plugins)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    TILEC_ENV(&p, ENV(path), "devices", "--json");
    EXPECT_STATUS(&p, 0);
    const char *err;
    jval_t *doc = json_parse(p.out, &err);
    cr_assert_not_null(doc, "devices --json is not JSON (%s):\n%s", err, p.out);
    cr_assert_eq(doc->type, J_ARR);
    /* Every entry has the documented fields. */
    for (int i = 0; i < doc->n; i++) {
        static const char *const keys[] = {"name", "path", "state", "reason", "vendor", "version", "abi"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const jval_t *v = jget(doc->items[i], keys[k]);
            cr_expect(v && v->type == J_STR, "entry %d has no string '%s'", i, keys[k]);
        }
        const jval_t *devs = jget(doc->items[i], "devices");
        cr_expect(devs && devs->type == J_ARR, "entry %d has no devices array", i);
    }
    static const char *const rejected[] = {
        "notplugin", "nosymbol", "nulltable", "noversion", "smallstruct",
        "badabi", "badname", "nullentry", "crashquery",
    };
    for (size_t i = 0; i < sizeof rejected / sizeof rejected[0]; i++) {
        char file[96];
        snprintf(file, sizeof file, "/libtilec-broken_%s.so", rejected[i]);
        const jval_t *pl = plugin_by_file(doc, file);
        cr_expect_not_null(pl, "%s not listed", file);
        if (pl) {
            const char *state = jstr(pl, "state"), *reason = jstr(pl, "reason");
            cr_expect_str_eq(state, "rejected", "%s: state %s", file, state);
            cr_expect(*reason, "%s: no reason", file);
        }
    }
    const jval_t *good = plugin_by_file(doc, "/libtilec-broken_good.so");
    cr_assert_not_null(good);
    cr_expect_str_eq(jstr(good, "state"), "ok");
    cr_expect_str_eq(jstr(good, "name"), "broken_good");
    const jval_t *gdevs = jget(good, "devices");
    cr_assert(gdevs && gdevs->type == J_ARR && gdevs->n == 1);
    cr_expect_str_eq(jstr(gdevs->items[0], "id"), "broken_good:0");
    cr_expect_str_eq(jstr(gdevs->items[0], "name"), "broken test device");
    const jval_t *cu = jget(gdevs->items[0], "compute_units");
    cr_expect(cu && cu->type == J_NUM && cu->num == 1);

    const jval_t *unav = plugin_by_file(doc, "/libtilec-broken_unavailable.so");
    cr_assert_not_null(unav);
    cr_expect_str_eq(jstr(unav, "state"), "unavailable");
    cr_expect(strstr(jstr(unav, "reason"), "libwidget.so.1") != NULL);

    const jval_t *shadow = plugin_by_file(doc, "/libtilec-broken_shadow.so");
    cr_assert_not_null(shadow);
    cr_expect_str_eq(jstr(shadow, "state"), "shadowed");

    /* The embedded cpu backend is there and has a device. */
    int cpu_ok = 0;
    for (int i = 0; i < doc->n; i++) {
        const jval_t *e = doc->items[i];
        const jval_t *devs = jget(e, "devices");
        if (!strcmp(jstr(e, "name"), "cpu") && !strcmp(jstr(e, "state"), "ok") && devs && devs->n >= 1) {
            cpu_ok = 1;
            cr_expect_str_eq(jstr(devs->items[0], "id"), "cpu:0");
        }
    }
    cr_expect(cpu_ok, "no cpu plugin in state ok");
    jfree(doc);
    proc_free(&p);
}

/* File names can hold any byte; the JSON stays valid (escaped, UTF-8). */
Test(cli, devices_json_survives_odd_file_names)
{
    static const char *const names[] = {
        "libtilec-q\"uote.so", "libtilec-back\\slash.so", "libtilec-new\nline.so",
        "libtilec-bad\xff\xfeutf8.so", "libtilec-caf\xc3\xa9.so",
    };
    char dir[PATH_MAX], file[PATH_MAX + 64], env[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s/odd", work_dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(file, sizeof file, "%s/%s", dir, names[i]);
        FILE *f = fopen(file, "w");
        cr_assert_not_null(f, "%s: %s", file, strerror(errno));
        fputs("not a plugin\n", f);
        fclose(f);
    }
    snprintf(env, sizeof env, "TILEC_PLUGIN_PATH=%s", dir);
    proc_t p;
    TILEC_ENV(&p, ENV(env), "devices", "--json");
    EXPECT_STATUS(&p, 0);
    const char *err;
    jval_t *doc = json_parse(p.out, &err);
    cr_assert_not_null(doc, "not JSON (%s):\n%s", err, p.out);
    int rejected = 0;
    for (int i = 0; i < doc->n; i++) {
        const char *path = jstr(doc->items[i], "path");
        if (!strncmp(path, dir, strlen(dir))) {
            cr_expect_str_eq(jstr(doc->items[i], "state"), "rejected");
            rejected++;
        }
    }
    cr_expect_eq(rejected, 5, "%s", p.out);
    /* What is valid survives unchanged. */
    cr_expect_not_null(plugin_by_file(doc, "/libtilec-q\"uote.so"));
    cr_expect_not_null(plugin_by_file(doc, "/libtilec-back\\slash.so"));
    cr_expect_not_null(plugin_by_file(doc, "/libtilec-new\nline.so"));
    cr_expect_not_null(plugin_by_file(doc, "/libtilec-caf\xc3\xa9.so"));
    jfree(doc);
    proc_free(&p);

    /* The text listing names them too, one entry per plugin. */
    TILEC_ENV(&p, ENV(env), "devices");
    EXPECT_STATUS(&p, 0);
    EXPECT_IN(p.out, "libtilec-q\"uote.so");
    proc_free(&p);
}

Test(cli, devices_text_shows_rejected_reasons)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "TILEC_PLUGIN_PATH=%s", plugin_dir);
    proc_t p;
    TILEC_ENV(&p, ENV(path), "devices");
    EXPECT_STATUS(&p, 0);
    int rejected = 0;
    for (int i = 0; i < count_lines(p.out); i++) {
        char *l = line_at(p.out, i);
        char name[128], state[64];
        if (sscanf(l, "%127s %63s", name, state) == 2 && !strcmp(state, "rejected")) {
            rejected++;
            EXPECT_IN(l, "libtilec-");
            EXPECT_IN(l, ".so: ");
        }
        free(l);
    }
    cr_assert_geq(rejected, 9, "%s", p.out);
    EXPECT_IN(p.out, "broken_unavailable");
    EXPECT_IN(p.out, "libwidget.so.1 not found");
    EXPECT_IN(p.out, "shadowed");
    proc_free(&p);
}

