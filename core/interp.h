/*
 * core/interp.h — the reference interpreter of the tile IR.
 *
 * Executes any valid kernel on the host, one block after another, in
 * float64 arithmetic for floats and int64 for integers, rounding to the
 * declared dtype on every store (float16 and bfloat16 included).  It is the
 * oracle every backend is checked against, so it favours plain, obviously
 * correct code over speed.
 */
#ifndef TILEC_CORE_INTERP_H
#define TILEC_CORE_INTERP_H

#include <stddef.h>
#include <stdint.h>
#include "tilec/ir.h"

/* args[i]: data of parameter i (row-major, its dtype; 16-bit floats as bit
 * patterns).  syms: values of the kernel's SYM vars in var-id order (NULL
 * when none).  Returns 0, or -1 with a message in err (an out-of-bounds
 * access that is not boundary-safe, division by zero, ...). */
int tilec_interp_run(const tilec_ir_kernel_t *k, void *const *args, const int64_t *syms,
                     char *err, size_t errlen);

#endif
