/*
 * tests/test_dlpack.c — DLPack zero-copy import and export (core/dlpack.c)
 * on the cpu backend: a shared buffer is the caller's memory (a kernel's
 * writes land there without a read), misaligned or foreign-device memory is
 * copied or refused with a message by mode, a plugin without mem_wrap
 * (the broken_good test plugin) copies under AUTO and refuses SHARE, and a
 * shared export is the buffer's memory and keeps it alive past
 * tilec_buffer_free.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec/tilec.h"

static const char scale_src[] =
    "import tilelang.language as T\n"
    "\n"
    "def scale(N=8):\n"
    "    @T.prim_func\n"
    "    def main(X: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(1, threads=32) as bx:\n"
    "            for i in T.Parallel(N):\n"
    "                X[i] = X[i] * 2.0\n"
    "    return main\n";

static tilec_context_t *cpu_context(void)
{
    tilec_context_t *ctx = NULL;
    setenv("TILEC_CACHE", "0", 1);
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK, "%s", tilec_context_message(ctx));
    return ctx;
}

static int has(const tilec_context_t *ctx, const char *word)
{
    return strstr(tilec_context_message(ctx), word) != NULL;
}

/* A float32 vector tensor over data. */
static DLManagedTensor vec(void *data, int64_t *shape)
{
    DLManagedTensor t;
    memset(&t, 0, sizeof t);
    t.dl_tensor.data = data;
    t.dl_tensor.device.device_type = kDLCPU;
    t.dl_tensor.ndim = 1;
    t.dl_tensor.dtype.code = kDLFloat;
    t.dl_tensor.dtype.bits = 32;
    t.dl_tensor.dtype.lanes = 1;
    t.dl_tensor.shape = shape;
    return t;
}

Test(dlpack, shared_import_is_the_callers_memory)
{
    tilec_context_t *ctx = cpu_context();
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    tilec_buffer_t *b = NULL;
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int64_t shape[1] = {8};
    DLManagedTensor t = vec(x, shape);
    cr_assert_eq(tilec_program_load_string(ctx, "scale.py", scale_src, strlen(scale_src), NULL, 0,
                                           NULL, &p), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_program_compile(ctx, p, &e), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_SHARE, &b), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_expect_eq(tilec_buffer_is_shared(b), 1);
    cr_assert_eq(tilec_launch(ctx, e, &b, 1, NULL), TILEC_OK, "%s", tilec_context_message(ctx));
    for (int i = 0; i < 8; i++) {
        cr_expect_eq(x[i], 2.0f * (float)(i + 1), "x[%d] = %g", i, (double)x[i]);
    }
    /* Writes through the buffer API reach the same memory. */
    float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    cr_assert_eq(tilec_buffer_write(b, ones, sizeof ones), TILEC_OK);
    cr_expect_eq(x[7], 1.0f);
    tilec_buffer_free(b); /* the memory is the caller's: still usable */
    x[0] = 5;
    cr_expect_eq(x[0], 5.0f);

    /* A copy does not alias. */
    cr_assert_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_COPY, &b), TILEC_OK);
    cr_expect_eq(tilec_buffer_is_shared(b), 0);
    cr_assert_eq(tilec_launch(ctx, e, &b, 1, NULL), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_expect_eq(x[0], 5.0f);
    tilec_buffer_free(b);
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

Test(dlpack, misaligned_data_is_copied_or_refused)
{
    tilec_context_t *ctx = cpu_context();
    tilec_buffer_t *b = NULL;
    float back[4];
    _Alignas(16) unsigned char raw[4 * sizeof(float) + 1];
    float v[4] = {1, 2, 3, 4};
    int64_t shape[1] = {4};
    DLManagedTensor t = vec(raw, shape);
    memcpy(raw + 1, v, sizeof v);
    t.dl_tensor.byte_offset = 1;
    cr_expect_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_SHARE, &b), TILEC_E_INVALID);
    cr_expect(has(ctx, "not aligned"), "%s", tilec_context_message(ctx));
    cr_expect_null(b);
    cr_assert_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_AUTO, &b), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_expect_eq(tilec_buffer_is_shared(b), 0);
    cr_assert_eq(tilec_buffer_read(b, back, sizeof back), TILEC_OK);
    cr_expect_eq(memcmp(back, v, sizeof v), 0);
    tilec_buffer_free(b);
    tilec_context_destroy(ctx);
}

Test(dlpack, foreign_device_memory_is_refused_in_every_mode)
{
    tilec_context_t *ctx = cpu_context();
    tilec_buffer_t *b = NULL;
    float x[4] = {0};
    int64_t shape[1] = {4};
    DLManagedTensor t = vec(x, shape);
    t.dl_tensor.device.device_type = kDLCUDA;
    cr_expect_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_SHARE, &b), TILEC_E_INVALID);
    cr_expect(has(ctx, "not host memory") && has(ctx, "device type 2"), "%s",
              tilec_context_message(ctx));
    cr_expect_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_AUTO, &b), TILEC_E_INVALID);
    cr_expect(has(ctx, "in place"), "%s", tilec_context_message(ctx));
    cr_expect_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_COPY, &b), TILEC_E_INVALID);
    cr_expect_null(b);
    /* Pinned CUDA host memory is host memory: shared on the cpu backend. */
    t.dl_tensor.device.device_type = kDLCUDAHost;
    cr_assert_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_SHARE, &b), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    tilec_buffer_free(b);
    /* Bad modes and layouts. */
    cr_expect_eq(tilec_buffer_import_dlpack(ctx, &t, (tilec_dlpack_mode_t)7, &b), TILEC_E_INVALID);
    int64_t strides[1] = {2};
    t.dl_tensor.strides = strides;
    cr_expect_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_SHARE, &b), TILEC_E_INVALID);
    cr_expect(has(ctx, "not contiguous"), "%s", tilec_context_message(ctx));
    cr_expect_eq(tilec_buffer_import_dlpack(ctx, NULL, TILEC_DLPACK_AUTO, &b), TILEC_E_INVALID);
    cr_expect_eq(tilec_buffer_is_shared(NULL), 0);
    tilec_context_destroy(ctx);
}

Test(dlpack, empty_tensor_is_copied_under_auto)
{
    tilec_context_t *ctx = cpu_context();
    tilec_buffer_t *b = NULL;
    int64_t shape[1] = {0};
    DLManagedTensor t = vec(NULL, shape);
    cr_assert_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_AUTO, &b), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_expect_eq(tilec_buffer_bytes(b), 0u);
    cr_expect_eq(tilec_buffer_is_shared(b), 0);
    tilec_buffer_free(b);
    b = NULL;
    cr_expect_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_SHARE, &b), TILEC_E_INVALID);
    cr_expect(has(ctx, "no memory to share"), "%s", tilec_context_message(ctx));
    tilec_context_destroy(ctx);
}

Test(dlpack, plugin_without_mem_wrap_copies_or_refuses)
{
    char dir[PATH_MAX];
    const char *bd = getenv("TILEC_BUILD_DIR");
    tilec_context_t *ctx = NULL;
    tilec_buffer_t *b = NULL;
    DLManagedTensor *out = NULL;
    float x[4] = {1, 2, 3, 4};
    int64_t shape[1] = {4};
    DLManagedTensor t = vec(x, shape);
    snprintf(dir, sizeof dir, "%s/tests/plugins", bd && *bd ? bd : "build");
    setenv("TILEC_PLUGIN_PATH", dir, 1);
    cr_assert_eq(tilec_context_create("broken_good", &ctx), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_expect_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_SHARE, &b), TILEC_E_INVALID);
    cr_expect(has(ctx, "mem_wrap"), "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_buffer_import_dlpack(ctx, &t, TILEC_DLPACK_AUTO, &b), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_expect_eq(tilec_buffer_is_shared(b), 0);
    cr_expect_eq(tilec_buffer_export_dlpack(b, TILEC_DLPACK_SHARE, &out), TILEC_E_INVALID);
    cr_expect(has(ctx, "mem_address"), "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_buffer_export_dlpack(b, TILEC_DLPACK_AUTO, &out), TILEC_OK);
    cr_expect_eq(out->dl_tensor.device.device_type, kDLCPU);
    cr_expect_eq(((float *)out->dl_tensor.data)[3], 4.0f);
    out->deleter(out);
    tilec_buffer_free(b);
    tilec_context_destroy(ctx);
    unsetenv("TILEC_PLUGIN_PATH");
}

Test(dlpack, shared_export_is_the_buffers_memory_and_outlives_free)
{
    tilec_context_t *ctx = cpu_context();
    tilec_buffer_t *b = NULL;
    DLManagedTensor *out = NULL, *copy = NULL;
    float v[6] = {1, 2, 3, 4, 5, 6}, back[6];
    int64_t shape[2] = {2, 3};
    cr_assert_eq(tilec_buffer_create(ctx, TILEC_ELEM_FLOAT32, 2, shape, &b), TILEC_OK);
    cr_assert_eq(tilec_buffer_write(b, v, sizeof v), TILEC_OK);
    cr_assert_eq(tilec_buffer_export_dlpack(b, TILEC_DLPACK_SHARE, &out), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_assert_eq(tilec_buffer_export_dlpack(b, TILEC_DLPACK_COPY, &copy), TILEC_OK);
    cr_expect_eq(out->dl_tensor.device.device_type, kDLCPU);
    cr_expect_eq(out->dl_tensor.ndim, 2);
    cr_expect_eq(out->dl_tensor.shape[1], 3);
    cr_expect_null(out->dl_tensor.strides);
    /* A write through the export is seen by the buffer, not by the copy. */
    ((float *)out->dl_tensor.data)[5] = 60;
    cr_assert_eq(tilec_buffer_read(b, back, sizeof back), TILEC_OK);
    cr_expect_eq(back[5], 60.0f);
    cr_expect_eq(((float *)copy->dl_tensor.data)[5], 6.0f);
    /* Re-importing the export shares the same memory. */
    tilec_buffer_t *again = NULL;
    cr_assert_eq(tilec_buffer_import_dlpack(ctx, out, TILEC_DLPACK_SHARE, &again), TILEC_OK);
    cr_expect_eq(tilec_buffer_write(again, v, sizeof v), TILEC_OK);
    cr_expect_eq(((float *)out->dl_tensor.data)[5], 6.0f);
    tilec_buffer_free(again);
    /* The buffer's handle goes first; the export keeps the memory. */
    tilec_buffer_free(b);
    tilec_context_destroy(ctx);
    cr_expect_eq(((float *)out->dl_tensor.data)[0], 1.0f);
    out->deleter(out);
    copy->deleter(copy);
    cr_expect_eq(tilec_buffer_export_dlpack(NULL, TILEC_DLPACK_AUTO, &out), TILEC_E_INVALID);
}
