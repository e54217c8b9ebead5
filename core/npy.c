/*
 * core/npy.c — .npy read and write (npy.h).
 *
 * The format: the magic "\x93NUMPY", a major and minor version byte, the
 * header length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0),
 * then an ASCII Python dict literal {'descr': ..., 'fortran_order': ...,
 * 'shape': (...), } padded with spaces and a newline, then the raw data.
 * The dict is parsed by hand for exactly those three keys; anything else in
 * it is an error, as are a header over 64 KiB, a shape that is not the
 * tensor's, and a file whose data is shorter or longer than the shape says.
 */
#include "npy.h"
#include "tilec/ir.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAX_HEADER 65536

static int fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && n) vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* The descriptors accepted for elem; the first is the one written. */
static const char *const *descrs(tilec_elem_t e)
{
    static const char *const b1[] = {"|b1", "|u1", NULL}, *i1[] = {"|i1", NULL}, *i2[] = {"<i2", NULL},
                             *i4[] = {"<i4", NULL}, *i8[] = {"<i8", NULL}, *u1[] = {"|u1", NULL},
                             *u2[] = {"<u2", NULL}, *u4[] = {"<u4", NULL}, *u8[] = {"<u8", NULL},
                             *f2[] = {"<f2", NULL}, *bf[] = {"<u2", "<V2", "|V2", NULL},
                             *f4[] = {"<f4", NULL}, *f8[] = {"<f8", NULL}, *q[] = {"|u1", "|V1", NULL},
                             *p4[] = {"|u1", "|i1", "|V1", NULL}, *s4[] = {"|i1", "|u1", "|V1", NULL};
    switch (e) {
    case TILEC_ELEM_BOOL: return b1;
    case TILEC_ELEM_INT8: return i1;
    case TILEC_ELEM_INT16: return i2;
    case TILEC_ELEM_INT32: return i4;
    case TILEC_ELEM_INT64: return i8;
    case TILEC_ELEM_UINT8: return u1;
    case TILEC_ELEM_UINT16: return u2;
    case TILEC_ELEM_UINT32: return u4;
    case TILEC_ELEM_UINT64: return u8;
    case TILEC_ELEM_FLOAT16: return f2;
    case TILEC_ELEM_BFLOAT16: return bf;
    case TILEC_ELEM_FLOAT32: return f4;
    case TILEC_ELEM_FLOAT64: return f8;
    case TILEC_ELEM_FLOAT8_E4M3FN: case TILEC_ELEM_FLOAT8_E5M2: return q;
    case TILEC_ELEM_INT4: return s4; /* packed, as PyTorch's int8 */
    case TILEC_ELEM_UINT4: case TILEC_ELEM_FLOAT4_E2M1FN: return p4;
    default: return NULL;
    }
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* A quoted string at p (single or double quotes) into out; NULL if malformed. */
static const char *read_str(const char *p, const char *end, char *out, size_t n)
{
    char q;
    size_t k = 0;
    if (p >= end || (*p != '\'' && *p != '"')) return NULL;
    q = *p++;
    while (p < end && *p != q) {
        if (k + 1 >= n) return NULL;
        out[k++] = *p++;
    }
    if (p >= end) return NULL;
    out[k] = 0;
    return p + 1;
}

typedef struct hdr {
    char descr[16];
    int fortran, has_descr, has_order, has_shape, ndim;
    int64_t shape[16];
} hdr_t;

static int parse_header(const char *p, const char *end, hdr_t *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    p = skip_ws(p, end);
    if (p >= end || *p++ != '{') return fail(err, errlen, "header is not a dict");
    for (;;) {
        char key[32];
        p = skip_ws(p, end);
        if (p < end && *p == '}') break;
        if (!(p = read_str(p, end, key, sizeof key))) return fail(err, errlen, "malformed header key");
        p = skip_ws(p, end);
        if (p >= end || *p++ != ':') return fail(err, errlen, "malformed header (':' expected)");
        p = skip_ws(p, end);
        if (!strcmp(key, "descr") && !h->has_descr) {
            if (!(p = read_str(p, end, h->descr, sizeof h->descr)))
                return fail(err, errlen, "unsupported 'descr' (a structured dtype?)");
            h->has_descr = 1;
        } else if (!strcmp(key, "fortran_order") && !h->has_order) {
            if (end - p >= 4 && !memcmp(p, "True", 4)) { h->fortran = 1; p += 4; }
            else if (end - p >= 5 && !memcmp(p, "False", 5)) { p += 5; }
            else return fail(err, errlen, "malformed 'fortran_order'");
            h->has_order = 1;
        } else if (!strcmp(key, "shape") && !h->has_shape) {
            if (p >= end || *p++ != '(') return fail(err, errlen, "malformed 'shape'");
            for (;;) {
                p = skip_ws(p, end);
                if (p < end && *p == ')') { p++; break; }
                if (p >= end || *p < '0' || *p > '9') return fail(err, errlen, "malformed 'shape'");
                if (h->ndim == 16) return fail(err, errlen, "'shape' has more than 16 dimensions");
                int64_t v = 0;
                while (p < end && *p >= '0' && *p <= '9') {
                    if (v > (INT64_MAX - 9) / 10) return fail(err, errlen, "'shape' dimension too large");
                    v = v * 10 + (*p++ - '0');
                }
                h->shape[h->ndim++] = v;
                p = skip_ws(p, end);
                if (p < end && *p == ',') p++;
                else if (p < end && *p == ')') { p++; break; }
                else return fail(err, errlen, "malformed 'shape'");
            }
            h->has_shape = 1;
        } else {
            return fail(err, errlen, "unexpected header key '%s'", key);
        }
        p = skip_ws(p, end);
        if (p < end && *p == ',') p++;
    }
    if (!h->has_descr || !h->has_order || !h->has_shape)
        return fail(err, errlen, "header lacks 'descr', 'fortran_order' or 'shape'");
    return 0;
}

/* The shape a file of the tensor has: its own, or for a packed 4-bit
 * tensor (two per byte) its last dimension halved when even (PyTorch's
 * int8 / float4_e2m1fn_x2 view), else one dimension of its bytes.
 * Returns the file's rank. */
static int file_shape(tilec_elem_t e, int ndim, const int64_t *shape, int64_t *out)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        out[i] = shape[i];
        n *= shape[i];
    }
    if (!tilec_dtype_is_4bit((tilec_dtype_t)e)) return ndim;
    if (ndim > 0 && shape[ndim - 1] % 2 == 0) {
        out[ndim - 1] = shape[ndim - 1] / 2;
        return ndim;
    }
    out[0] = n / 2 + n % 2;
    return 1;
}

static void shape_text(char *buf, size_t n, int ndim, const int64_t *shape)
{
    size_t k = (size_t)snprintf(buf, n, "(");
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (k < n) snprintf(buf + k, n - k, ndim == 1 ? ",)" : ")");
}

int tilec_npy_read(const char *path, tilec_elem_t elem, int ndim, const int64_t *shape, void *data,
                   size_t bytes, char *err, size_t errlen)
{
    unsigned char pre[12];
    char *hdr = NULL, want[256], got[256];
    const char *const *ok = descrs(elem);
    int64_t fshape[16];
    FILE *f;
    size_t hlen, nread;
    hdr_t h;
    int i, rc = -1;
    if (!ok || ndim > 16) return fail(err, errlen, "%s: unknown element type %d", path, (int)elem);
    ndim = file_shape(elem, ndim, shape, fshape);
    shape = fshape;
    if (!(f = fopen(path, "rb"))) return fail(err, errlen, "%s: %s", path, strerror(errno));
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6)) {
        fail(err, errlen, "%s: not a .npy file", path);
        goto out;
    }
    if (pre[6] == 1) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) { fail(err, errlen, "%s: truncated header", path); goto out; }
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    } else {
        fail(err, errlen, "%s: unsupported .npy version %d.%d", path, pre[6], pre[7]);
        goto out;
    }
    if (hlen == 0 || hlen > NPY_MAX_HEADER) { fail(err, errlen, "%s: header of %zu bytes", path, hlen); goto out; }
    if (!(hdr = malloc(hlen))) { fail(err, errlen, "%s: out of memory", path); goto out; }
    if (fread(hdr, 1, hlen, f) != hlen) { fail(err, errlen, "%s: truncated header", path); goto out; }
    if (parse_header(hdr, hdr + hlen, &h, got, sizeof got) < 0) {
        fail(err, errlen, "%s: %s", path, got);
        goto out;
    }
    for (i = 0; ok[i] && strcmp(ok[i], h.descr); i++) {
    }
    if (!ok[i]) {
        fail(err, errlen, "%s: dtype '%s' does not match the tensor's %s (expected '%s')", path, h.descr,
             tilec_dtype_name((tilec_dtype_t)elem), ok[0]);
        goto out;
    }
    if (h.fortran) { fail(err, errlen, "%s: Fortran-order arrays are not supported (save a C-order copy)", path); goto out; }
    if (h.ndim != ndim || memcmp(h.shape, shape, sizeof *shape * (size_t)ndim)) {
        shape_text(want, sizeof want, ndim, shape);
        shape_text(got, sizeof got, h.ndim, h.shape);
        fail(err, errlen, "%s: shape %s does not match the tensor's %s", path, got, want);
        goto out;
    }
    nread = fread(data, 1, bytes, f);
    if (nread != bytes || fgetc(f) != EOF) {
        fail(err, errlen, "%s: %s data (%zu bytes expected)", path, nread != bytes ? "truncated" : "extra", bytes);
        goto out;
    }
    rc = 0;
out:
    free(hdr);
    fclose(f);
    return rc;
}

int tilec_npy_write(const char *path, tilec_elem_t elem, int ndim, const int64_t *shape, const void *data,
                    size_t bytes, char *err, size_t errlen)
{
    const char *const *ok = descrs(elem);
    char dict[512], shp[400];
    int64_t fshape[16];
    size_t n, total;
    FILE *f;
    int i, rc = 0;
    if (!ok || ndim > 16) return fail(err, errlen, "%s: unknown element type %d", path, (int)elem);
    ndim = file_shape(elem, ndim, shape, fshape);
    shape = fshape;
    n = (size_t)snprintf(shp, sizeof shp, "(");
    for (i = 0; i < ndim && n < sizeof shp; i++)
        n += (size_t)snprintf(shp + n, sizeof shp - n, "%lld,%s", (long long)shape[i], i + 1 < ndim ? " " : "");
    if (n < sizeof shp) snprintf(shp + n, sizeof shp - n, ")");
    n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", ok[0], shp);
    /* magic + version + length + dict + padding + '\n', a multiple of 64 */
    total = (10 + n + 1 + 63) / 64 * 64;
    if (n >= sizeof dict || total - 10 > 65535) return fail(err, errlen, "%s: shape too long", path);
    if (!(f = fopen(path, "wb"))) return fail(err, errlen, "%s: %s", path, strerror(errno));
    {
        unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
        size_t hlen = total - 10;
        pre[8] = (unsigned char)(hlen & 0xff);
        pre[9] = (unsigned char)(hlen >> 8);
        if (fwrite(pre, 1, 10, f) != 10 || fwrite(dict, 1, n, f) != n) rc = -1;
        for (size_t k = 10 + n; rc == 0 && k + 1 < total; k++)
            if (fputc(' ', f) == EOF) rc = -1;
        if (rc == 0 && (fputc('\n', f) == EOF || fwrite(data, 1, bytes, f) != bytes)) rc = -1;
    }
    if (fclose(f) != 0) rc = -1;
    return rc ? fail(err, errlen, "%s: write failed: %s", path, strerror(errno)) : 0;
}
