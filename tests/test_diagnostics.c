/*
 * tests/test_diagnostics.c — diagnostics: the renderer (diag.c) and the
 * malformed-program corpus.
 *
 * The corpus is tests/malformed/NAME.py, each with NAME.expected holding
 * the exact first line of the diagnostic the frontend must give, e.g.
 *     tests/malformed/missing_colon_for.py:16:70: error: expected ':' ...
 * One parameterized test per file: tilec_frontend_compile (no entry, no
 * defines) must fail, the first line of the text must equal the expected
 * line and the rest must show the caret.  Run from the repository root.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "frontend.h"

/* ---- the renderer --------------------------------------------------------- */

Test(diag, format)
{
    const char *src = "x = 1\ny = foo(\n";
    tilec_diag_t d;
    tilec_diag_init(&d, "a/b.py", src, strlen(src));
    cr_expect_str_eq(tilec_diag_text(&d), "");
    cr_expect_eq(tilec_diag_error(&d, 2, 5, "unknown name '%s'", "foo"), -1);
    cr_expect_str_eq(tilec_diag_text(&d), "a/b.py:2:5: error: unknown name 'foo'\ny = foo(\n    ^\n");
    cr_expect_eq(d.line, 2);
    cr_expect_eq(d.col, 5);
    cr_expect_eq(d.nerrors, 1);
}

Test(diag, only_first_error_is_kept)
{
    const char *src = "a\nb\n";
    tilec_diag_t d;
    tilec_diag_init(&d, "f.py", src, strlen(src));
    tilec_diag_error(&d, 1, 1, "first");
    tilec_diag_error(&d, 2, 1, "second");
    cr_expect_str_eq(tilec_diag_text(&d), "f.py:1:1: error: first\na\n^\n");
    cr_expect_eq(d.nerrors, 2);
    cr_expect_eq(d.line, 1);
}

Test(diag, tabs_are_kept_in_the_caret_line)
{
    const char *src = "if x:\n\t\tfoo = 1 +\n";
    tilec_diag_t d;
    tilec_diag_init(&d, "t.py", src, strlen(src));
    tilec_diag_error(&d, 2, 3, "here");
    cr_expect_str_eq(tilec_diag_text(&d), "t.py:2:3: error: here\n\t\tfoo = 1 +\n\t\t^\n");
}

Test(diag, unknown_position_and_missing_source)
{
    tilec_diag_t d;
    tilec_diag_init(&d, "t.py", NULL, 0);
    tilec_diag_error(&d, 3, 4, "no source");
    cr_expect_str_eq(tilec_diag_text(&d), "t.py:3:4: error: no source\n");
    const char *src = "abc\n";
    tilec_diag_init(&d, "t.py", src, strlen(src));
    tilec_diag_error(&d, 0, 0, "somewhere");
    cr_expect_str_eq(tilec_diag_text(&d), "t.py: error: somewhere\n");
    tilec_diag_init(&d, "t.py", src, strlen(src));
    tilec_diag_error(&d, 1, 0, "line only");
    cr_expect_str_eq(tilec_diag_text(&d), "t.py:1: error: line only\nabc\n");
    tilec_diag_init(&d, NULL, src, strlen(src));
    tilec_diag_error(&d, 7, 1, "past the end");
    cr_expect_str_eq(tilec_diag_text(&d), "<input>:7:1: error: past the end\n");
    /* a column past the end of the line: the caret follows the text */
    tilec_diag_init(&d, "t.py", src, strlen(src));
    tilec_diag_error(&d, 1, 6, "after");
    cr_expect_str_eq(tilec_diag_text(&d), "t.py:1:6: error: after\nabc\n     ^\n");
}

Test(diag, binary_and_invalid_utf8_are_echoed_safely)
{
    const char src[] = "x = \x01\x1b[31m\xff\xc3\xa9\x7fz\r\nnext";
    tilec_diag_t d;
    tilec_diag_init(&d, "t.py", src, sizeof src - 1);
    tilec_diag_error(&d, 1, 15, "bad");
    /* control bytes and the stray 0xff become '?', the valid e-acute stays
     * and takes one column in the caret line */
    cr_expect_str_eq(tilec_diag_text(&d), "t.py:1:15: error: bad\nx = ??[31m?\xc3\xa9?z\n             ^\n");
    /* a message with a newline in it stays on one line */
    tilec_diag_init(&d, "t.py", src, sizeof src - 1);
    tilec_diag_error(&d, 2, 1, "two\nlines");
    cr_expect_str_eq(tilec_diag_text(&d), "t.py:2:1: error: two?lines\nnext\n^\n");
}

Test(diag, line_endings)
{
    const char src[] = "a\rb\r\nc\nd";
    tilec_diag_t d;
    for (int line = 1; line <= 4; line++) {
        char want[64];
        snprintf(want, sizeof want, "t.py:%d:1: error: e\n%c\n^\n", line, "abcd"[line - 1]);
        tilec_diag_init(&d, "t.py", src, sizeof src - 1);
        tilec_diag_error(&d, line, 1, "e");
        cr_expect_str_eq(tilec_diag_text(&d), want);
    }
}

Test(diag, long_lines_are_cut_around_the_column)
{
    size_t n = 100000;
    char *src = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        src[i] = (char)('a' + i % 26);
    src[n] = '\0';
    src[50000] = '#';
    tilec_diag_t d;
    tilec_diag_init(&d, "t.py", src, n);
    tilec_diag_error(&d, 1, 50001, "at the hash");
    const char *t = tilec_diag_text(&d);
    cr_expect(strlen(t) < 600, "rendered %zu bytes", strlen(t));
    const char *l2 = strchr(t, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
    cr_expect(strncmp(l2, "...", 3) == 0);
    /* the caret sits under the '#' */
    size_t caret = (size_t)(strchr(l3, '^') - l3);
    cr_expect_eq(l2[caret], '#', "caret at %zu over '%c'", caret, l2[caret]);
    /* a very long message and path are cut, never overflow */
    char *big = malloc(5000);
    memset(big, 'm', 4999);
    big[4999] = '\0';
    tilec_diag_init(&d, big, src, n);
    tilec_diag_error(&d, 1, 1, "%s", big);
    cr_expect(strlen(tilec_diag_text(&d)) < sizeof d.text);
    free(big);
    free(src);
}

/* ---- the malformed corpus ------------------------------------------------- */

typedef struct corpus_case { char path[512]; } corpus_case_t;

static void free_cases(struct criterion_test_params *crp)
{
    cr_free(crp->params);
}

ParameterizedTestParameters(malformed, corpus)
{
    glob_t g;
    memset(&g, 0, sizeof g);
    size_t n = 0;
    if (glob("tests/malformed/*.py", 0, NULL, &g) == 0)
        n = g.gl_pathc;
    corpus_case_t *cases = cr_malloc(sizeof *cases * (n ? n : 1));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strlen(g.gl_pathv[i]) < sizeof cases[k].path) {
            snprintf(cases[k].path, sizeof cases[k].path, "%s", g.gl_pathv[i]);
            k++;
        }
    if (n)
        globfree(&g);
    if (k == 0) /* one case that reports the missing corpus */
        snprintf(cases[k++].path, sizeof cases[0].path, "%s", "tests/malformed/(none found: run from the repo root)");
    return cr_make_param_array(corpus_case_t, cases, k, free_cases);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    buf = realloc(buf, n + 1);
    buf[n] = '\0';
    *len = n;
    return buf;
}

ParameterizedTest(corpus_case_t *c, malformed, corpus)
{
    size_t len = 0, elen = 0;
    char *src = slurp(c->path, &len);
    cr_assert(src, "%s: cannot read", c->path);
    char exp_path[520];
    snprintf(exp_path, sizeof exp_path, "%.*s.expected", (int)(strlen(c->path) - 3), c->path);
    char *expected = slurp(exp_path, &elen);
    cr_assert(expected, "%s: missing %s", c->path, exp_path);
    while (elen && (expected[elen - 1] == '\n' || expected[elen - 1] == '\r'))
        expected[--elen] = '\0';

    tilec_arena_t a;
    tilec_diag_t d;
    tilec_frontend_result_t res;
    tilec_arena_init(&a);
    tilec_diag_init(&d, c->path, src, len);
    int rc = tilec_frontend_compile(&a, &d, c->path, src, len, NULL, NULL, 0, &res);
    const char *text = tilec_diag_text(&d);
    cr_expect_eq(rc, -1, "%s: compiled, but should fail with\n%s", c->path, expected);
    const char *nl = strchr(text, '\n');
    size_t first = nl ? (size_t)(nl - text) : strlen(text);
    cr_expect(first == elen && strncmp(text, expected, elen) == 0,
              "%s: first line of the diagnostic\n  got:  %.*s\n  want: %s", c->path, (int)first, text, expected);
    /* the source line and a caret line ("<blanks>^") follow */
    int caret = 0;
    for (const char *l = nl; l && l[1]; l = strchr(l + 1, '\n')) {
        const char *q = l + 1;
        while (*q == ' ' || *q == '\t')
            q++;
        if (q[0] == '^' && (q[1] == '\n' || q[1] == '\0'))
            caret = 1;
    }
    cr_expect(caret, "%s: no caret line in\n%s", c->path, text);
    tilec_arena_destroy(&a);
    free(src);
    free(expected);
}

Test(malformed, corpus_is_there)
{
    glob_t g;
    memset(&g, 0, sizeof g);
    cr_assert_eq(glob("tests/malformed/*.py", 0, NULL, &g), 0, "no tests/malformed/*.py (run from the repo root)");
    cr_expect_geq(g.gl_pathc, 30, "only %zu malformed programs", g.gl_pathc);
    globfree(&g);
}
