/*
 * tilec/dlpack.h — the DLPack tensor-exchange ABI, as tilec uses it.
 *
 * When the real <dlpack/dlpack.h> is on the include path it is used as is.
 * Otherwise this header declares the same ABI itself: the same type and
 * enumerator names, values and struct layouts as DLPack 0.6 (the published
 * C ABI that frameworks exchange), so code built against either header
 * interoperates, and a later #include <dlpack/dlpack.h> is harmless (its
 * include guard is taken).  Define TILEC_DLPACK_OWN to force the
 * declarations below (the tests use it to check the two layouts agree).
 */
#ifndef TILEC_DLPACK_H
#define TILEC_DLPACK_H

#if !defined(TILEC_DLPACK_OWN) && defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#define TILEC_DLPACK_SYSTEM 1
#endif
#endif

#if !defined(TILEC_DLPACK_SYSTEM) && (!defined(DLPACK_DLPACK_H_) || defined(TILEC_DLPACK_OWN))
#define DLPACK_DLPACK_H_ /* the real header's guard: including it later is a no-op */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DLPACK_VERSION
#define DLPACK_VERSION 60
#endif

/* Where the tensor's memory lives. */
typedef enum {
    kDLCPU = 1,          /* host memory */
    kDLCUDA = 2,         /* CUDA device memory */
    kDLCUDAHost = 3,     /* pinned host memory (cudaMallocHost) */
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13
} DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int device_id;       /* 0 for host memory */
} DLDevice;

typedef enum {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLOpaqueHandle = 3U,
    kDLBfloat = 4U,
    kDLComplex = 5U
} DLDataTypeCode;

/* code is a DLDataTypeCode kept in one byte; lanes > 1 is a vector type. */
typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

/* A tensor view; does not own its memory.  strides are in elements and may
 * be NULL for a compact row-major tensor; byte_offset is added to data. */
typedef struct {
    void *data;
    DLDevice device;
    int ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} DLTensor;

/* A tensor with an owner: the consumer calls deleter(self) when done; the
 * deleter frees the tensor and whatever manager_ctx holds. */
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#ifdef __cplusplus
}
#endif
#endif /* own declarations */

#endif
