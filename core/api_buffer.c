/*
 * core/api_buffer.c — buffers and DLPack interop of the public C API.
 *
 * A buffer is plugin memory (TILEC_PMEM_DEVICE) on the context's device
 * with an element type and a row-major shape.  Reads and writes move the
 * whole buffer.  DLPack import copies a host (kDLCPU), compact row-major
 * tensor into a new buffer; export makes a new host tensor holding a copy,
 * freed by its deleter, so no memory is ever shared with the framework.
 */
#define TILEC_BUILDING_LIBRARY 1
#include "api_internal.h"

#include <stdlib.h>
#include <string.h>

/* Not in DLPack 0.6; later versions define kDLBool = 6 (one byte each). */
#define TILEC_KDLBOOL 6

/* Total bytes of elem x shape; -1 on a bad shape or overflow. */
static int shape_bytes(tilec_context_t *ctx, tilec_elem_t elem, int ndim, const int64_t *shape,
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
    *out = n;
    return 0;
}

TILEC_API tilec_status_t tilec_buffer_create(tilec_context_t *ctx, tilec_elem_t elem, int ndim,
                                             const int64_t *shape, tilec_buffer_t **out)
{
    tilec_buffer_t *b;
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
    if (shape_bytes(ctx, elem, ndim, shape, &bytes) != 0) {
        return TILEC_E_INVALID;
    }
    b = calloc(1, sizeof *b);
    if (!b) {
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    /* Zero-sized buffers still get a real allocation so handles are valid. */
    ps = ctx->table->mem_alloc(ctx->dev, TILEC_PMEM_DEVICE, bytes ? bytes : 1, &b->mem);
    if (ps != TILEC_PS_OK || !b->mem) {
        free(b);
        return tilec_api_plugin_fail(ctx, ps == TILEC_PS_OK ? TILEC_PS_INTERNAL : ps,
                                     TILEC_E_LAUNCH, "mem_alloc");
    }
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

TILEC_API void tilec_buffer_free(tilec_buffer_t *b)
{
    if (!b) {
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

/* ---- DLPack ------------------------------------------------------------- */

static int elem_from_dl(DLDataType t, tilec_elem_t *out)
{
    if (t.lanes != 1) {
        return -1;
    }
    switch (t.code) {
    case kDLFloat:
        if (t.bits == 16) { *out = TILEC_ELEM_FLOAT16; return 0; }
        if (t.bits == 32) { *out = TILEC_ELEM_FLOAT32; return 0; }
        if (t.bits == 64) { *out = TILEC_ELEM_FLOAT64; return 0; }
        return -1;
    case kDLBfloat:
        if (t.bits == 16) { *out = TILEC_ELEM_BFLOAT16; return 0; }
        return -1;
    case kDLInt:
        if (t.bits == 8) { *out = TILEC_ELEM_INT8; return 0; }
        if (t.bits == 16) { *out = TILEC_ELEM_INT16; return 0; }
        if (t.bits == 32) { *out = TILEC_ELEM_INT32; return 0; }
        if (t.bits == 64) { *out = TILEC_ELEM_INT64; return 0; }
        return -1;
    case kDLUInt:
        if (t.bits == 8) { *out = TILEC_ELEM_UINT8; return 0; }
        if (t.bits == 16) { *out = TILEC_ELEM_UINT16; return 0; }
        if (t.bits == 32) { *out = TILEC_ELEM_UINT32; return 0; }
        if (t.bits == 64) { *out = TILEC_ELEM_UINT64; return 0; }
        return -1;
    case TILEC_KDLBOOL:
        if (t.bits == 8) { *out = TILEC_ELEM_BOOL; return 0; }
        return -1;
    default:
        return -1;
    }
}

static DLDataType elem_to_dl(tilec_elem_t e)
{
    DLDataType t;
    t.lanes = 1;
    t.bits = (uint8_t)(tilec_api_elem_size(e) * 8);
    switch (e) {
    case TILEC_ELEM_BOOL: t.code = TILEC_KDLBOOL; break;
    case TILEC_ELEM_INT8: case TILEC_ELEM_INT16: case TILEC_ELEM_INT32: case TILEC_ELEM_INT64:
        t.code = kDLInt;
        break;
    case TILEC_ELEM_UINT8: case TILEC_ELEM_UINT16: case TILEC_ELEM_UINT32: case TILEC_ELEM_UINT64:
        t.code = kDLUInt;
        break;
    case TILEC_ELEM_BFLOAT16: t.code = kDLBfloat; break;
    default: t.code = kDLFloat; break;
    }
    return t;
}

TILEC_API tilec_status_t tilec_buffer_from_dlpack(tilec_context_t *ctx, const DLManagedTensor *t,
                                                  tilec_buffer_t **out)
{
    const DLTensor *dl;
    tilec_elem_t elem;
    tilec_status_t st;
    size_t bytes;
    int64_t expect = 1;
    if (out) {
        *out = NULL;
    }
    if (!ctx) {
        return TILEC_E_INVALID;
    }
    if (!t || !out) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_buffer_from_dlpack: bad arguments");
    }
    dl = &t->dl_tensor;
    if (dl->device.device_type != kDLCPU) {
        return tilec_api_fail(ctx, TILEC_E_INVALID,
                              "DLPack tensor is on device type %d; only host tensors (kDLCPU) "
                              "are accepted", (int)dl->device.device_type);
    }
    if (elem_from_dl(dl->dtype, &elem) != 0) {
        return tilec_api_fail(ctx, TILEC_E_INVALID,
                              "unsupported DLPack dtype (code %u, bits %u, lanes %u)",
                              (unsigned)dl->dtype.code, (unsigned)dl->dtype.bits,
                              (unsigned)dl->dtype.lanes);
    }
    if (shape_bytes(ctx, elem, dl->ndim, dl->shape, &bytes) != 0) {
        return TILEC_E_INVALID;
    }
    if (dl->strides) {
        for (int d = dl->ndim - 1; d >= 0; d--) {
            if (dl->shape[d] > 1 && dl->strides[d] != expect) {
                return tilec_api_fail(ctx, TILEC_E_INVALID,
                                      "DLPack tensor is not contiguous row-major (dimension %d has "
                                      "stride %lld, expected %lld)", d, (long long)dl->strides[d],
                                      (long long)expect);
            }
            expect *= dl->shape[d];
        }
    }
    if (bytes && !dl->data) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "DLPack tensor has NULL data");
    }
    st = tilec_buffer_create(ctx, elem, dl->ndim, dl->shape, out);
    if (st != TILEC_OK) {
        return st;
    }
    st = tilec_buffer_write(*out, bytes ? (const char *)dl->data + dl->byte_offset : NULL, bytes);
    if (st != TILEC_OK) {
        tilec_buffer_free(*out);
        *out = NULL;
    }
    return st;
}

/* One allocation holds the managed tensor and its shape; the data is a
 * second one. */
typedef struct dl_export {
    DLManagedTensor m;
    int64_t shape[TILEC_IR_MAX_DIMS];
} dl_export_t;

static void dl_export_delete(DLManagedTensor *self)
{
    if (self) {
        free(self->dl_tensor.data);
        free(self);
    }
}

TILEC_API tilec_status_t tilec_buffer_to_dlpack(tilec_buffer_t *b, DLManagedTensor **out)
{
    dl_export_t *x;
    tilec_status_t st;
    if (out) {
        *out = NULL;
    }
    if (!b) {
        return TILEC_E_INVALID;
    }
    if (!out) {
        return tilec_api_fail(b->ctx, TILEC_E_INVALID, "tilec_buffer_to_dlpack: out is NULL");
    }
    x = calloc(1, sizeof *x);
    if (!x || !(x->m.dl_tensor.data = malloc(b->bytes ? b->bytes : 1))) {
        free(x);
        return tilec_api_fail(b->ctx, TILEC_E_NOMEM, "out of memory");
    }
    st = tilec_buffer_read(b, x->m.dl_tensor.data, b->bytes);
    if (st != TILEC_OK) {
        dl_export_delete(&x->m);
        return st;
    }
    for (int d = 0; d < b->ndim; d++) {
        x->shape[d] = b->shape[d];
    }
    x->m.dl_tensor.device.device_type = kDLCPU;
    x->m.dl_tensor.device.device_id = 0;
    x->m.dl_tensor.ndim = b->ndim;
    x->m.dl_tensor.dtype = elem_to_dl(b->elem);
    x->m.dl_tensor.shape = x->shape;
    x->m.dl_tensor.strides = NULL;
    x->m.dl_tensor.byte_offset = 0;
    x->m.manager_ctx = x;
    x->m.deleter = dl_export_delete;
    *out = &x->m;
    return TILEC_OK;
}
