/*
 * core/npy.h — NumPy .npy files for tensors (tilec run --input/--output).
 *
 * Reads and writes format versions 1.0-3.0, C order only, little-endian
 * data, one file per tensor.  The element type must match the tensor's:
 * numpy descriptors '|b1' bool, '|i1' '<i2' '<i4' '<i8', '|u1' '<u2' '<u4'
 * '<u8', '<f2' '<f4' '<f8'; numpy has no bfloat16 or float8, so those are
 * raw bit patterns: '<V2' / '|V2' (bfloat16, what np.save writes for
 * ml_dtypes.bfloat16 viewed as void) or '<u2' holding the bits, and '|V1' /
 * '|u1' for float8_e4m3fn / float8_e5m2.  The 4-bit dtypes are stored
 * packed, two per byte as in memory ('|i1' for int4, '|u1' for uint4 and
 * float4_e2m1fn, '|V1' or the other one accepted too), the file's last
 * dimension half the tensor's (PyTorch's packed view) or, when that is
 * odd, one dimension of the packed bytes.  A read checks the header, dtype,
 * shape and file size and never trusts a length it did not check.
 */
#ifndef TILEC_CORE_NPY_H
#define TILEC_CORE_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "tilec/tilec.h"

/* Reads path into data (bytes long): the file's dtype and shape must be the
 * tensor's (elem, ndim, shape).  0, or -1 with a message in err. */
int tilec_npy_read(const char *path, tilec_elem_t elem, int ndim, const int64_t *shape, void *data,
                   size_t bytes, char *err, size_t errlen);
/* Writes data as a version 1.0 .npy file.  0, or -1 with a message in err. */
int tilec_npy_write(const char *path, tilec_elem_t elem, int ndim, const int64_t *shape, const void *data,
                    size_t bytes, char *err, size_t errlen);

#endif
