/*
 * tests/fuzz/fuzz_tunedb.c — `tilec tune --import`'s reader of exported
 * tuning tables (core/tunedb_json.c, the format tilec_tunedb_write_json
 * writes).
 *
 * Property: rows the reader accepts, exported again, read back equal.
 */
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "tunedb.h"

static int same(const char *x, const char *y)
{
    return (!x && !y) || (x && y && strcmp(x, y) == 0) || (!x && y && !*y) || (x && !*x && !y);
}

static int same_num(double x, double y)
{
    return x == y || (x != x && y != y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    tilec_tunedb_row_t *rows = NULL, *back = NULL;
    int n = 0, nb = 0;
    char *msg = NULL;
    if (tilec_tunedb_parse_json("fuzz.json", (const char *)data, size, &rows, &n, &msg) == TILEC_OK) {
        if (!path[0]) {
            snprintf(path, sizeof path, "/tmp/tilec-fuzz-tunedb-%ld.json", (long)getpid());
        }
        char *m2 = NULL;
        if (tilec_tunedb_write_json(path, rows, n, &m2) != TILEC_OK)
            fuzz_fail("export failed: %s", m2 ? m2 : "");
        if (tilec_tunedb_read_json(path, &back, &nb, &m2) != TILEC_OK)
            fuzz_fail("an exported table does not import: %s", m2 ? m2 : "");
        unlink(path);
        if (nb != n)
            fuzz_fail("%d rows exported, %d read back", n, nb);
        for (int i = 0; i < n; i++) {
            const tilec_tunedb_row_t *x = &rows[i], *y = &back[i];
            if (!same(x->source_hash, y->source_hash) || !same(x->entry, y->entry) ||
                !same(x->fixed, y->fixed) || !same(x->shape, y->shape) || !same(x->plugin, y->plugin) ||
                !same(x->plugin_version, y->plugin_version) || !same(x->device, y->device) ||
                !same(x->arch, y->arch) || !same(x->config, y->config) || !same(x->file, y->file) ||
                !same(x->tuned_at, y->tuned_at) || !same_num(x->time_ms, y->time_ms) ||
                !same_num(x->default_ms, y->default_ms) || x->candidates != y->candidates)
                fuzz_fail("row %d changed on export and import", i);
        }
        tilec_tunedb_rows_free(back, nb);
    }
    tilec_tunedb_rows_free(rows, n);
    free(msg);
    return 0;
}
