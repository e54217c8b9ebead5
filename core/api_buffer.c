/*
 * core/api_buffer.c — buffers of the public C API.
 *
 * A buffer is plugin memory (TILEC_PMEM_DEVICE) on the context's device
 * with an element type and a row-major shape.  Reads and writes move the
 * whole buffer.  A buffer may also wrap memory that a DLPack tensor owns
 * (core/dlpack.c); it is then freed without freeing that memory.  Buffers
 * are reference counted so a zero-copy DLPack export outlives the handle.
 */
#define TILEC_BUILDING_LIBRARY 1
#include "api_internal.h"

#include <stdlib.h>
#include <string.h>

int tilec_api_shape_bytes(tilec_context_t *ctx, tilec_elem_t elem, int ndim, const int64_t *shape,
                          size_t *out)
{
    size_t n = tilec_api_elem_size(elem);
    if (n == 0) {
        tilec_api_fail(ctx, TILEC_E_INVALID, "unknown element type %d", (int)elem);
        return -1;
    }
    if (ndim < 0 || ndim > TILEC_IR_MAX_DIMS) {
        tilec_api_fail(ctx, TILEC_E_INVALID, "rank %d is outside 0..%d", ndim, TILEC_IR_MAX_DIMS);
        return -1;
    }
    if (ndim > 0 && !shape) {
        tilec_api_fail(ctx, TILEC_E_INVALID, "shape is NULL");
        return -1;
    }
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) {
            tilec_api_fail(ctx, TILEC_E_INVALID, "dimension %d is negative (%lld)", d,
                           (long long)shape[d]);
            return -1;
        }
        if (shape[d] > 0 && n > SIZE_MAX / 2 / (uint64_t)shape[d]) {
            tilec_api_fail(ctx, TILEC_E_INVALID, "buffer size overflows");
            return -1;
        }
        n *= (size_t)shape[d];
    }
    /* n is the elements' bytes at one byte or more each; 4-bit ones pack two per byte */
    *out = tilec_dtype_tensor_bytes((tilec_dtype_t)elem, n / tilec_api_elem_size(elem));
    return 0;
}

tilec_status_t tilec_api_buffer_wrap(tilec_context_t *ctx, tilec_elem_t elem, int ndim,
                                     const int64_t *shape, size_t bytes, tilec_pmem_t *mem,
                                     int shared, tilec_buffer_t **out)
{
    tilec_buffer_t *b = calloc(1, sizeof *b);
    if (!b) {
        ctx->table->mem_free(ctx->dev, mem);
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    b->refs = 1;
    b->mem = mem;
    b->shared = shared;
    b->elem = elem;
    b->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        b->shape[d] = shape[d];
    }
    b->bytes = bytes;
    tilec_api_ctx_ref(ctx);
    b->ctx = ctx;
    *out = b;
    return TILEC_OK;
}

TILEC_API tilec_status_t tilec_buffer_create(tilec_context_t *ctx, tilec_elem_t elem, int ndim,
                                             const int64_t *shape, tilec_buffer_t **out)
{
    tilec_pmem_t *mem = NULL;
    tilec_status_t st;
    tilec_pstatus_t ps;
    size_t bytes;
    if (out) {
        *out = NULL;
    }
    if (!ctx) {
        return TILEC_E_INVALID;
    }
    if (!out) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_buffer_create: out is NULL");
    }
    if ((st = tilec_api_need_backend(ctx)) != TILEC_OK) {
        return st;
    }
    if (tilec_api_shape_bytes(ctx, elem, ndim, shape, &bytes) != 0) {
        return TILEC_E_INVALID;
    }
    /* Zero-sized buffers still get a real allocation so handles are valid. */
    ps = ctx->table->mem_alloc(ctx->dev, TILEC_PMEM_DEVICE, bytes ? bytes : 1, &mem);
    if (ps != TILEC_PS_OK || !mem) {
        return tilec_api_plugin_fail(ctx, ps == TILEC_PS_OK ? TILEC_PS_INTERNAL : ps,
                                     TILEC_E_LAUNCH, "mem_alloc");
    }
    return tilec_api_buffer_wrap(ctx, elem, ndim, shape, bytes, mem, 0, out);
}

TILEC_API void tilec_buffer_free(tilec_buffer_t *b)
{
    if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0) {
        return;
    }
    b->ctx->table->mem_free(b->ctx->dev, b->mem);
    tilec_api_ctx_unref(b->ctx);
    free(b);
}

TILEC_API size_t tilec_buffer_bytes(const tilec_buffer_t *b)
{
    return b ? b->bytes : 0;
}

TILEC_API tilec_status_t tilec_buffer_write(tilec_buffer_t *b, const void *src, size_t bytes)
{
    tilec_pstatus_t ps;
    if (!b) {
        return TILEC_E_INVALID;
    }
    if (bytes != b->bytes) {
        return tilec_api_fail(b->ctx, TILEC_E_INVALID,
                              "write of %zu bytes into a buffer of %zu bytes", bytes, b->bytes);
    }
    if (!src && bytes) {
        return tilec_api_fail(b->ctx, TILEC_E_INVALID, "tilec_buffer_write: src is NULL");
    }
    if (!bytes) {
        return TILEC_OK;
    }
    ps = b->ctx->table->mem_write(b->ctx->dev, b->mem, 0, src, bytes);
    if (ps != TILEC_PS_OK) {
        return tilec_api_plugin_fail(b->ctx, ps, TILEC_E_LAUNCH, "mem_write");
    }
    return TILEC_OK;
}

TILEC_API tilec_status_t tilec_buffer_read(const tilec_buffer_t *b, void *dst, size_t bytes)
{
    tilec_pstatus_t ps;
    if (!b) {
        return TILEC_E_INVALID;
    }
    if (bytes != b->bytes) {
        return tilec_api_fail(b->ctx, TILEC_E_INVALID,
                              "read of %zu bytes from a buffer of %zu bytes", bytes, b->bytes);
    }
    if (!dst && bytes) {
        return tilec_api_fail(b->ctx, TILEC_E_INVALID, "tilec_buffer_read: dst is NULL");
    }
    if (!bytes) {
        return TILEC_OK;
    }
    ps = b->ctx->table->mem_read(b->ctx->dev, b->mem, 0, dst, bytes);
    if (ps != TILEC_PS_OK) {
        return tilec_api_plugin_fail(b->ctx, ps, TILEC_E_LAUNCH, "mem_read");
    }
    return TILEC_OK;
}
