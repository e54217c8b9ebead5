/*
 * plugin-sdk/src/layout_svg.c — pictures of lowered layouts as SVG
 * (`tilec compile ... --emit layout -o DIR`, tilec/lower.h).
 *
 * TileLang users check their intuition about fragment layouts by looking
 * at them; this draws what the lowering decided, from the IR alone (the
 * layout's expressions, evaluated per element).  A register fragment
 * becomes a grid of its last two dimensions, each cell coloured by the
 * thread that holds it (replica 0) and labelled "T<thread>" over
 * "r<register>"; a shared buffer's cells are coloured by the bank its
 * first byte falls in (32 banks of 4 bytes unless the layout's params say
 * otherwise) and labelled with the element address, so padding and
 * swizzles show as shifted colours.  Leading dimensions (a ring's stage)
 * are drawn at index 0; a grid larger than 64 x 64 shows its first 64 x 64
 * cells and says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/lower.h"
#include "tilec/sdk.h"

#define MAXCELLS 64
#define CELL 34

typedef struct bindv {
    int64_t idx[TILEC_IR_MAX_DIMS + 1];
} bindv_t;

static int bind(void *ctx, const tilec_ir_var_t *v, int64_t *out)
{
    bindv_t *b = ctx;
    if (v->kind != TILEC_VAR_LAYOUT || v->id < 0 || v->id > TILEC_IR_MAX_DIMS)
        return -1;
    *out = b->idx[v->id];
    return 0;
}

/* a hue by the golden angle, so neighbouring threads or banks differ */
static void color(int64_t k, char out[32])
{
    snprintf(out, 32, "hsl(%lld,70%%,80%%)", (long long)((k % 360 + 360) * 137 % 360));
}

static int64_t param_int(const tilec_ir_layout_t *l, const char *key, int64_t dflt)
{
    const tilec_ir_attr_t *a = tilec_ir_attr_get(l->nparams, l->params, key);
    return a && a->kind == TILEC_ATTR_INT && a->i > 0 ? a->i : dflt;
}

int tilec_layout_svg(const tilec_ir_buffer_t *b, char **out)
{
    const tilec_ir_layout_t *l = b ? b->layout : NULL;
    *out = NULL;
    if (!l || b->ndim < 1)
        return -1;
    int64_t rows = 1, cols = 1;
    int nd = b->ndim;
    int64_t v;
    if (!tilec_ir_is_const_int(b->shape[nd - 1], &cols))
        return -1;
    if (nd >= 2 && !tilec_ir_is_const_int(b->shape[nd - 2], &rows))
        return -1;
    int64_t R = rows < MAXCELLS ? rows : MAXCELLS, C = cols < MAXCELLS ? cols : MAXCELLS;
    int64_t banks = param_int(l, "banks", 32), bank_bytes = param_int(l, "bank_bytes", 4);
    size_t es = tilec_dtype_size(b->dtype);
    tilec_sdk_str_t s = {0};
    int64_t W = 60 + C * CELL, H = 70 + R * CELL;
    tilec_sdk_str_printf(&s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%lld\" height=\"%lld\" "
                         "font-family=\"monospace\" font-size=\"9\">\n", (long long)W, (long long)H);
    tilec_sdk_str_printf(&s, "<text x=\"4\" y=\"14\" font-size=\"12\">%s %s %s: layout %s \"%s\"%s</text>\n",
                         b->name, tilec_scope_name(b->scope), tilec_dtype_name(b->dtype),
                         tilec_layout_kind_name(l->kind), l->name ? l->name : "",
                         rows > R || cols > C ? " (first 64 x 64)" : "");
    if (l->kind == TILEC_LAYOUT_REGS)
        tilec_sdk_str_printf(&s, "<text x=\"4\" y=\"28\">colour: thread (replica 0 of %d); T thread, r register; "
                             "%d threads x %d registers</text>\n", l->replicate, l->threads, l->nlocal);
    else
        tilec_sdk_str_printf(&s, "<text x=\"4\" y=\"28\">colour: bank (%lld x %lld bytes); number: element "
                             "address; bytes [%lld, %lld)</text>\n", (long long)banks, (long long)bank_bytes,
                             (long long)l->offset, (long long)(l->offset + l->size));
    bindv_t bd;
    memset(&bd, 0, sizeof bd);
    int rc = 0;
    for (int64_t r = 0; r < R && rc == 0; r++) {
        tilec_sdk_str_printf(&s, "<text x=\"4\" y=\"%lld\">%lld</text>\n", (long long)(44 + r * CELL + CELL / 2 + 3),
                             (long long)r);
        for (int64_t c = 0; c < C; c++) {
            if (nd >= 2)
                bd.idx[nd - 2] = r;
            bd.idx[nd - 1] = c;
            bd.idx[nd] = 0;
            char col[32], l1[32], l2[32];
            if (l->kind == TILEC_LAYOUT_REGS) {
                int64_t t, g;
                if (tilec_ir_eval_int(l->thread, bind, &bd, &t) || tilec_ir_eval_int(l->local, bind, &bd, &g)) {
                    rc = -1;
                    break;
                }
                color(t, col);
                snprintf(l1, sizeof l1, "T%lld", (long long)t);
                snprintf(l2, sizeof l2, "r%lld", (long long)g);
            } else {
                if (tilec_ir_eval_int(l->addr, bind, &bd, &v)) {
                    rc = -1;
                    break;
                }
                color(((l->offset + v * (int64_t)es) / bank_bytes) % banks, col);
                snprintf(l1, sizeof l1, "%lld", (long long)v);
                snprintf(l2, sizeof l2, "b%lld", (long long)(((l->offset + v * (int64_t)es) / bank_bytes) % banks));
            }
            long long x = 30 + c * CELL, y = 44 + r * CELL;
            tilec_sdk_str_printf(&s, "<rect x=\"%lld\" y=\"%lld\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                                 "stroke=\"#666\" stroke-width=\"0.5\"/>"
                                 "<text x=\"%lld\" y=\"%lld\">%s</text><text x=\"%lld\" y=\"%lld\">%s</text>\n",
                                 x, y, CELL, CELL, col, x + 2, y + 13, l1, x + 2, y + 26, l2);
        }
    }
    tilec_sdk_str_puts(&s, "</svg>\n");
    if (rc != 0 || s.oom) {
        tilec_sdk_str_free(&s);
        return -1;
    }
    *out = s.s;
    return 0;
}

int tilec_layout_svg_dir(const tilec_ir_module_t *m, const char *dir, int *nfiles, char *err, size_t errlen)
{
    *nfiles = 0;
    if (!m || !m->kernel || !dir) {
        snprintf(err, errlen, "no module or directory");
        return -1;
    }
    if (tilec_sdk_mkdirs(dir) != 0) {
        snprintf(err, errlen, "cannot create directory '%s'", dir);
        return -1;
    }
    const tilec_ir_kernel_t *k = m->kernel;
    for (int i = 0; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        char *svg = NULL;
        if (!b->layout)
            continue;
        if (tilec_layout_svg(b, &svg) != 0) {
            snprintf(err, errlen, "buffer '%s': its layout cannot be drawn", b->name);
            return -1;
        }
        char *path = tilec_sdk_cache_path(dir, "", b->name, ".svg");
        int rc = path ? tilec_sdk_cache_write(path, svg, strlen(svg)) : -1;
        if (rc != 0)
            snprintf(err, errlen, "cannot write '%s'", path ? path : b->name);
        free(path);
        free(svg);
        if (rc != 0)
            return -1;
        (*nfiles)++;
    }
    return 0;
}
