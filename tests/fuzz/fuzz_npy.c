/*
 * tests/fuzz/fuzz_npy.c — the .npy reader (core/npy.c, tilec run --input).
 *
 * The reader takes a path, so each input is written to a per-process
 * temporary file and read as three tensors (float32 [4, 4], int8 [3],
 * float16 [2, 3, 1]): the header parser sees every input whatever its
 * shape says.  Property: data a read accepts, written with tilec_npy_write,
 * reads back byte for byte.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64], back[64];
    static const struct {
        tilec_elem_t elem;
        int ndim;
        int64_t shape[3];
        size_t bytes;
    } t[] = {{TILEC_ELEM_FLOAT32, 2, {4, 4, 0}, 64}, {TILEC_ELEM_INT8, 1, {3, 0, 0}, 3},
             {TILEC_ELEM_FLOAT16, 3, {2, 3, 1}, 12}};
    unsigned char buf[64], buf2[64];
    char err[256];
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/tilec-fuzz-npy-%ld.npy", (long)getpid());
        snprintf(back, sizeof back, "/tmp/tilec-fuzz-npy-%ld-back.npy", (long)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        if (tilec_npy_read(path, t[i].elem, t[i].ndim, t[i].shape, buf, t[i].bytes, err, sizeof err) != 0)
            continue;
        if (tilec_npy_write(back, t[i].elem, t[i].ndim, t[i].shape, buf, t[i].bytes, err, sizeof err) != 0)
            fuzz_fail("write failed: %s", err);
        if (tilec_npy_read(back, t[i].elem, t[i].ndim, t[i].shape, buf2, t[i].bytes, err, sizeof err) != 0)
            fuzz_fail("a written .npy does not read back: %s", err);
        if (memcmp(buf, buf2, t[i].bytes) != 0)
            fuzz_fail("data changed on write and read");
        unlink(back);
    }
    unlink(path);
    return 0;
}
