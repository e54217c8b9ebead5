/*
 * tests/test_npy.c — core/npy.c, the .npy reader and writer of tilec run
 * --input/--output: a file as NumPy writes it reads back, every element
 * type round-trips, and damaged or mismatching files are refused with a
 * message (never a crash or a short read taken for data).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

static char path[64];

static void setup(void)
{
    snprintf(path, sizeof path, "/tmp/tilec_npy_%d.npy", (int)getpid());
}

static void teardown(void)
{
    unlink(path);
}

static void put(const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(p, 1, n, f), n);
    fclose(f);
}

/* the bytes np.save(np.arange(6, dtype=np.float32).reshape(2, 3)) writes */
static size_t numpy_file(unsigned char *buf, const char *descr, const char *shape, const void *data, size_t n)
{
    char dict[128];
    size_t len = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
                                  shape);
    size_t hlen = (10 + len + 1 + 63) / 64 * 64 - 10;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)hlen;
    buf[9] = 0;
    memcpy(buf + 10, dict, len);
    memset(buf + 10 + len, ' ', hlen - len - 1);
    buf[10 + hlen - 1] = '\n';
    memcpy(buf + 10 + hlen, data, n);
    return 10 + hlen + n;
}

TestSuite(npy, .init = setup, .fini = teardown);

Test(npy, reads_what_numpy_writes)
{
    unsigned char buf[256];
    float v[6] = {0, 1, 2, 3, 4, 5}, got[6] = {0};
    int64_t shape[2] = {2, 3};
    char err[256];
    put(buf, numpy_file(buf, "<f4", "(2, 3)", v, sizeof v));
    cr_assert_eq(tilec_npy_read(path, TILEC_ELEM_FLOAT32, 2, shape, got, sizeof got, err, sizeof err), 0, "%s", err);
    cr_expect_eq(memcmp(v, got, sizeof v), 0);
    /* a 1-D shape is written (6,) */
    int64_t s1[1] = {6};
    put(buf, numpy_file(buf, "<f4", "(6,)", v, sizeof v));
    cr_assert_eq(tilec_npy_read(path, TILEC_ELEM_FLOAT32, 1, s1, got, sizeof got, err, sizeof err), 0, "%s", err);
}

Test(npy, every_element_type_round_trips)
{
    static const tilec_elem_t all[] = {
        TILEC_ELEM_BOOL, TILEC_ELEM_INT8, TILEC_ELEM_INT16, TILEC_ELEM_INT32, TILEC_ELEM_INT64,
        TILEC_ELEM_UINT8, TILEC_ELEM_UINT16, TILEC_ELEM_UINT32, TILEC_ELEM_UINT64, TILEC_ELEM_FLOAT16,
        TILEC_ELEM_BFLOAT16, TILEC_ELEM_FLOAT32, TILEC_ELEM_FLOAT64, TILEC_ELEM_FLOAT8_E4M3FN,
        TILEC_ELEM_FLOAT8_E5M2};
    static const size_t size[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 1, 1};
    int64_t shape[3] = {2, 3, 5};
    unsigned char data[240], got[240];
    char err[256];
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        size_t bytes = 30 * size[k];
        for (size_t i = 0; i < bytes; i++) data[i] = (unsigned char)(i * 7 + k);
        if (all[k] == TILEC_ELEM_BOOL)
            for (size_t i = 0; i < bytes; i++) data[i] &= 1;
        memset(got, 0, sizeof got);
        cr_assert_eq(tilec_npy_write(path, all[k], 3, shape, data, bytes, err, sizeof err), 0, "%s", err);
        cr_assert_eq(tilec_npy_read(path, all[k], 3, shape, got, bytes, err, sizeof err), 0, "type %zu: %s", k, err);
        cr_expect_eq(memcmp(data, got, bytes), 0, "type %zu", k);
    }
}

static void expect_refused(const void *file, size_t n, tilec_elem_t e, int ndim, const int64_t *shape, size_t bytes,
                           const char *what)
{
    unsigned char got[64];
    char err[256] = "";
    put(file, n);
    cr_assert_eq(tilec_npy_read(path, e, ndim, shape, got, bytes, err, sizeof err), -1, "accepted (%s)", what);
    cr_expect(strstr(err, what), "message '%s' lacks '%s'", err, what);
}

Test(npy, damaged_or_mismatching_files_are_refused)
{
    unsigned char buf[256];
    int32_t v[4] = {1, 2, 3, 4};
    int64_t s4[1] = {4}, s22[2] = {2, 2};
    size_t n;
    char err[128];
    expect_refused("hello", 5, TILEC_ELEM_INT32, 1, s4, 16, "not a .npy file");
    n = numpy_file(buf, "<i4", "(4,)", v, sizeof v);
    expect_refused(buf, n - 1, TILEC_ELEM_INT32, 1, s4, 16, "truncated data");
    expect_refused(buf, 12, TILEC_ELEM_INT32, 1, s4, 16, "truncated header");
    expect_refused(buf, n, TILEC_ELEM_FLOAT32, 1, s4, 16, "dtype '<i4' does not match the tensor's float32");
    expect_refused(buf, n, TILEC_ELEM_INT32, 2, s22, 16, "shape (4,) does not match the tensor's (2, 2)");
    n = numpy_file(buf, "<i4", "(4,)", v, sizeof v);
    buf[n++] = 0;
    expect_refused(buf, n, TILEC_ELEM_INT32, 1, s4, 16, "extra data");
    n = numpy_file(buf, ">i4", "(4,)", v, sizeof v);
    expect_refused(buf, n, TILEC_ELEM_INT32, 1, s4, 16, "dtype '>i4'");
    n = numpy_file(buf, "<i4", "(99999999999999999999,)", v, sizeof v);
    expect_refused(buf, n, TILEC_ELEM_INT32, 1, s4, 16, "too large");
    n = numpy_file(buf, "<i4", "(4,)", v, sizeof v);
    memcpy(buf + 10, "{'descr': '<i4', 'fortran_order': True, ", 40);
    expect_refused(buf, n, TILEC_ELEM_INT32, 1, s4, 16, "Fortran-order");
    buf[6] = 9;
    expect_refused(buf, n, TILEC_ELEM_INT32, 1, s4, 16, "unsupported .npy version 9");
    memcpy(buf, "\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12);
    expect_refused(buf, 12, TILEC_ELEM_INT32, 1, s4, 16, "header of");
    cr_expect_eq(tilec_npy_read("/nonexistent/x.npy", TILEC_ELEM_INT32, 1, s4, v, 16, err, sizeof err), -1);
    cr_expect(strstr(err, "No such file"), "%s", err);
}

/* 4-bit tensors (tile IR 1.3) are files of their packed bytes: PyTorch's
 * int8 view of packed int4 (last dimension halved), or one dimension of
 * the bytes when the last dimension is odd. */
Test(npy, four_bit_tensors_are_their_packed_bytes)
{
    unsigned char buf[256], packed[6] = {0x78, 0x0f, 0x21, 0x43, 0x65, 0x87}, got[6] = {0};
    int64_t shape[2] = {2, 6}, odd[2] = {3, 3};
    char err[256];
    put(buf, numpy_file(buf, "|i1", "(2, 3)", packed, 6));
    cr_assert_eq(tilec_npy_read(path, TILEC_ELEM_INT4, 2, shape, got, 6, err, sizeof err), 0, "%s", err);
    cr_expect_eq(memcmp(got, packed, 6), 0);
    put(buf, numpy_file(buf, "|u1", "(2, 6)", packed, 6));
    cr_expect_eq(tilec_npy_read(path, TILEC_ELEM_FLOAT4_E2M1FN, 2, shape, got, 6, err, sizeof err), -1);
    cr_expect(strstr(err, "shape (2, 6) does not match the tensor's (2, 3)") != NULL, "%s", err);
    cr_assert_eq(tilec_npy_write(path, TILEC_ELEM_UINT4, 2, odd, packed, 5, err, sizeof err), 0, "%s", err);
    memset(got, 0, sizeof got);
    cr_assert_eq(tilec_npy_read(path, TILEC_ELEM_UINT4, 2, odd, got, 5, err, sizeof err), 0, "%s", err);
    cr_expect_eq(memcmp(got, packed, 5), 0);
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    cr_assert(n % 64 == 5 && memcmp(buf + n - 5, packed, 5) == 0, "%zu bytes: the header, then the 5 packed", n);
    cr_expect(memmem(buf, n, "'shape': (5,)", 13) != NULL, "odd last dimension: one dimension of 5 bytes");
}
