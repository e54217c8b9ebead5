/*
 * core/dlpack.c — DLPack interop of the public C API: tensors of other
 * frameworks (numpy, torch, CuPy...) as buffers, and buffers as tensors.
 *
 * Zero-copy goes through two optional plugin entries (tilec/plugin.h):
 * mem_wrap turns memory the tensor owns into a plugin memory handle that
 * the plugin will not free, and mem_address tells where a buffer's memory
 * lies in DLPack's terms.  Whether the device can address a tensor's memory
 * is the plugin's call (the cuda backend takes its own device's kDLCUDA
 * memory, the cpu backend host memory); the core checks what every backend
 * needs — a compact row-major layout and element-aligned data — and falls
 * back to a copy through host memory when the mode allows it.
 */
#define TILEC_BUILDING_LIBRARY 1
#include "api_internal.h"

#include <stdlib.h>
#include <string.h>

/* Not in DLPack 0.6; later versions define kDLBool = 6 (one byte each)
 * and, from 1.1, the 8-bit float codes (bits 8, lanes 1) and the packed
 * 4-bit float (bits 4: two per byte, as kDLInt/kDLUInt with bits 4). */
#define TILEC_KDLBOOL 6
#define TILEC_KDLFLOAT8_E4M3FN 10
#define TILEC_KDLFLOAT8_E5M2 12
#define TILEC_KDLFLOAT4_E2M1FN 17

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
    case TILEC_KDLFLOAT8_E4M3FN:
        if (t.bits == 8) { *out = TILEC_ELEM_FLOAT8_E4M3FN; return 0; }
        return -1;
    case TILEC_KDLFLOAT8_E5M2:
        if (t.bits == 8) { *out = TILEC_ELEM_FLOAT8_E5M2; return 0; }
        return -1;
    case TILEC_KDLFLOAT4_E2M1FN:
        if (t.bits == 4) { *out = TILEC_ELEM_FLOAT4_E2M1FN; return 0; }
        return -1;
    case kDLInt:
        if (t.bits == 4) { *out = TILEC_ELEM_INT4; return 0; }
        if (t.bits == 8) { *out = TILEC_ELEM_INT8; return 0; }
        if (t.bits == 16) { *out = TILEC_ELEM_INT16; return 0; }
        if (t.bits == 32) { *out = TILEC_ELEM_INT32; return 0; }
        if (t.bits == 64) { *out = TILEC_ELEM_INT64; return 0; }
        return -1;
    case kDLUInt:
        if (t.bits == 4) { *out = TILEC_ELEM_UINT4; return 0; }
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
    t.bits = (uint8_t)tilec_dtype_bits((tilec_dtype_t)e);
    switch (e) {
    case TILEC_ELEM_BOOL: t.code = TILEC_KDLBOOL; break;
    case TILEC_ELEM_INT8: case TILEC_ELEM_INT16: case TILEC_ELEM_INT32: case TILEC_ELEM_INT64:
    case TILEC_ELEM_INT4:
        t.code = kDLInt;
        break;
    case TILEC_ELEM_UINT8: case TILEC_ELEM_UINT16: case TILEC_ELEM_UINT32: case TILEC_ELEM_UINT64:
    case TILEC_ELEM_UINT4:
        t.code = kDLUInt;
        break;
    case TILEC_ELEM_FLOAT4_E2M1FN: t.code = TILEC_KDLFLOAT4_E2M1FN; break;
    case TILEC_ELEM_BFLOAT16: t.code = kDLBfloat; break;
    case TILEC_ELEM_FLOAT8_E4M3FN: t.code = TILEC_KDLFLOAT8_E4M3FN; break;
    case TILEC_ELEM_FLOAT8_E5M2: t.code = TILEC_KDLFLOAT8_E5M2; break;
    default: t.code = kDLFloat; break;
    }
    return t;
}

/* Memory a host memcpy can read and write. */
static int host_addressable(int type)
{
    return type == kDLCPU || type == kDLCUDAHost;
}

/* The plugin's optional entry, or NULL when its table lacks it. */
#define PLUGIN_ENTRY(ctx, f)                                                                      \
    ((ctx)->table->struct_size >= offsetof(tilec_plugin_t, f) + sizeof((ctx)->table->f)           \
         ? (ctx)->table->f                                                                         \
         : NULL)

/* The tensor's element type, size in bytes and data address, after the
 * checks every mode shares; -1 with the message set. */
static int check_tensor(tilec_context_t *ctx, const DLTensor *dl, tilec_elem_t *elem,
                        size_t *bytes, char **data)
{
    int64_t expect = 1;
    if (elem_from_dl(dl->dtype, elem) != 0) {
        tilec_api_fail(ctx, TILEC_E_INVALID,
                       "unsupported DLPack dtype (code %u, bits %u, lanes %u)",
                       (unsigned)dl->dtype.code, (unsigned)dl->dtype.bits,
                       (unsigned)dl->dtype.lanes);
        return -1;
    }
    if (tilec_api_shape_bytes(ctx, *elem, dl->ndim, dl->shape, bytes) != 0) {
        return -1;
    }
    if (dl->strides) {
        for (int d = dl->ndim - 1; d >= 0; d--) {
            if (dl->shape[d] > 1 && dl->strides[d] != expect) {
                tilec_api_fail(ctx, TILEC_E_INVALID,
                               "DLPack tensor is not contiguous row-major (dimension %d has "
                               "stride %lld, expected %lld)", d, (long long)dl->strides[d],
                               (long long)expect);
                return -1;
            }
            expect *= dl->shape[d];
        }
    }
    if (*bytes && !dl->data) {
        tilec_api_fail(ctx, TILEC_E_INVALID, "DLPack tensor has NULL data");
        return -1;
    }
    *data = dl->data ? (char *)dl->data + dl->byte_offset : NULL;
    return 0;
}

static tilec_status_t import_copy(tilec_context_t *ctx, const DLTensor *dl, tilec_elem_t elem,
                                  size_t bytes, const char *data, tilec_buffer_t **out)
{
    tilec_status_t st;
    if (!host_addressable(dl->device.device_type)) {
        return tilec_api_fail(ctx, TILEC_E_INVALID,
                              "DLPack tensor is on device type %d; only host tensors (kDLCPU, "
                              "kDLCUDAHost) are copied, and backend '%s' cannot use this memory "
                              "in place", (int)dl->device.device_type, ctx->backend);
    }
    st = tilec_buffer_create(ctx, elem, dl->ndim, dl->shape, out);
    if (st != TILEC_OK) {
        return st;
    }
    st = tilec_buffer_write(*out, bytes ? data : NULL, bytes);
    if (st != TILEC_OK) {
        tilec_buffer_free(*out);
        *out = NULL;
    }
    return st;
}

TILEC_API tilec_status_t tilec_buffer_import_dlpack(tilec_context_t *ctx,
                                                    const DLManagedTensor *t,
                                                    tilec_dlpack_mode_t mode,
                                                    tilec_buffer_t **out)
{
    const DLTensor *dl;
    tilec_pstatus_t (*wrap)(tilec_pdevice_t *, int, int, void *, size_t, tilec_pmem_t **);
    tilec_pmem_t *mem = NULL;
    tilec_pstatus_t ps;
    tilec_status_t st;
    tilec_elem_t elem;
    size_t bytes;
    char *data;
    if (out) {
        *out = NULL;
    }
    if (!ctx) {
        return TILEC_E_INVALID;
    }
    if (!t || !out || (mode != TILEC_DLPACK_COPY && mode != TILEC_DLPACK_SHARE &&
                       mode != TILEC_DLPACK_AUTO)) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_buffer_import_dlpack: bad arguments");
    }
    if ((st = tilec_api_need_backend(ctx)) != TILEC_OK) {
        return st;
    }
    dl = &t->dl_tensor;
    if (check_tensor(ctx, dl, &elem, &bytes, &data) != 0) {
        return TILEC_E_INVALID;
    }
    /* An empty tensor has no memory to share. */
    if (mode == TILEC_DLPACK_COPY || (mode == TILEC_DLPACK_AUTO && bytes == 0)) {
        return import_copy(ctx, dl, elem, bytes, data, out);
    }
    wrap = PLUGIN_ENTRY(ctx, mem_wrap);
    if (!wrap) {
        if (mode == TILEC_DLPACK_AUTO) {
            return import_copy(ctx, dl, elem, bytes, data, out);
        }
        return tilec_api_fail(ctx, TILEC_E_INVALID,
                              "backend '%s' cannot share memory with DLPack tensors (its plugin "
                              "has no mem_wrap)", ctx->backend);
    }
    if (bytes == 0 || (uintptr_t)data % tilec_api_elem_size(elem) != 0) {
        if (mode == TILEC_DLPACK_AUTO) {
            return import_copy(ctx, dl, elem, bytes, data, out);
        }
        return tilec_api_fail(ctx, TILEC_E_INVALID,
                              bytes ? "DLPack tensor data is not aligned to its %zu-byte "
                                      "elements, so it cannot be shared"
                                    : "an empty DLPack tensor (%zu-byte elements) has no memory "
                                      "to share",
                              tilec_api_elem_size(elem));
    }
    ps = wrap(ctx->dev, (int)dl->device.device_type, dl->device.device_id, data, bytes, &mem);
    if (ps == TILEC_PS_OK && mem) {
        return tilec_api_buffer_wrap(ctx, elem, dl->ndim, dl->shape, bytes, mem, 1, out);
    }
    if (ps == TILEC_PS_UNSUPPORTED && mode == TILEC_DLPACK_AUTO &&
        host_addressable(dl->device.device_type)) {
        return import_copy(ctx, dl, elem, bytes, data, out);
    }
    if (ps == TILEC_PS_UNSUPPORTED) {
        const char *why = ctx->table->last_error();
        return tilec_api_fail(ctx, TILEC_E_INVALID,
                              "backend '%s' (%s) cannot use the memory of this DLPack tensor "
                              "(device type %d, id %d) in place: %s", ctx->backend,
                              ctx->info.name, (int)dl->device.device_type, dl->device.device_id,
                              why && *why ? why : "unsupported");
    }
    return tilec_api_plugin_fail(ctx, ps == TILEC_PS_OK ? TILEC_PS_INTERNAL : ps, TILEC_E_INVALID,
                                 "mem_wrap");
}

TILEC_API int tilec_buffer_is_shared(const tilec_buffer_t *b)
{
    return b && b->shared;
}

TILEC_API tilec_status_t tilec_buffer_from_dlpack(tilec_context_t *ctx, const DLManagedTensor *t,
                                                  tilec_buffer_t **out)
{
    return tilec_buffer_import_dlpack(ctx, t, TILEC_DLPACK_COPY, out);
}

/* ---- export ------------------------------------------------------------- */

/* One allocation holds the managed tensor and its shape.  A copy owns its
 * data (a second allocation); a shared export holds a buffer reference. */
typedef struct dl_export {
    DLManagedTensor m;
    int64_t shape[TILEC_IR_MAX_DIMS];
    tilec_buffer_t *buf; /* shared: the counted reference; NULL for a copy */
} dl_export_t;

static void dl_export_delete(DLManagedTensor *self)
{
    dl_export_t *x = (dl_export_t *)self;
    if (!self) {
        return;
    }
    if (x->buf) {
        tilec_buffer_free(x->buf);
    } else {
        free(self->dl_tensor.data);
    }
    free(x);
}

TILEC_API tilec_status_t tilec_buffer_export_dlpack(tilec_buffer_t *b, tilec_dlpack_mode_t mode,
                                                    DLManagedTensor **out)
{
    tilec_pstatus_t (*addr)(tilec_pdevice_t *, tilec_pmem_t *, int *, int *, void **);
    tilec_context_t *ctx;
    dl_export_t *x;
    tilec_status_t st;
    int type = kDLCPU, id = 0;
    void *ptr = NULL;
    if (out) {
        *out = NULL;
    }
    if (!b) {
        return TILEC_E_INVALID;
    }
    ctx = b->ctx;
    if (!out || (mode != TILEC_DLPACK_COPY && mode != TILEC_DLPACK_SHARE &&
                 mode != TILEC_DLPACK_AUTO)) {
        return tilec_api_fail(ctx, TILEC_E_INVALID, "tilec_buffer_export_dlpack: bad arguments");
    }
    if (mode != TILEC_DLPACK_COPY) {
        tilec_pstatus_t ps = TILEC_PS_UNSUPPORTED;
        addr = PLUGIN_ENTRY(ctx, mem_address);
        if (addr) {
            ps = addr(ctx->dev, b->mem, &type, &id, &ptr);
        }
        if (ps != TILEC_PS_OK || !ptr) {
            if (mode == TILEC_DLPACK_SHARE) {
                const char *why = addr ? ctx->table->last_error() : "its plugin has no mem_address";
                return tilec_api_fail(ctx, TILEC_E_INVALID,
                                      "backend '%s' cannot export its memory in place: %s",
                                      ctx->backend, why && *why ? why : "unsupported");
            }
            mode = TILEC_DLPACK_COPY;
        }
    }
    x = calloc(1, sizeof *x);
    if (!x) {
        return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
    }
    if (mode == TILEC_DLPACK_COPY) {
        if (!(x->m.dl_tensor.data = malloc(b->bytes ? b->bytes : 1))) {
            free(x);
            return tilec_api_fail(ctx, TILEC_E_NOMEM, "out of memory");
        }
        st = tilec_buffer_read(b, x->m.dl_tensor.data, b->bytes);
        if (st != TILEC_OK) {
            dl_export_delete(&x->m);
            return st;
        }
        type = kDLCPU;
        id = 0;
    } else {
        x->m.dl_tensor.data = ptr;
        __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
        x->buf = b;
    }
    for (int d = 0; d < b->ndim; d++) {
        x->shape[d] = b->shape[d];
    }
    x->m.dl_tensor.device.device_type = (DLDeviceType)type;
    x->m.dl_tensor.device.device_id = id;
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

TILEC_API tilec_status_t tilec_buffer_to_dlpack(tilec_buffer_t *b, DLManagedTensor **out)
{
    return tilec_buffer_export_dlpack(b, TILEC_DLPACK_COPY, out);
}
