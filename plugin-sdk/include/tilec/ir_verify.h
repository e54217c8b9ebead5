/*
 * tilec/ir_verify.h — the tile IR verifier, in the SDK so that the core and
 * every plugin check a module the same way (after the frontend, after each
 * core pass, after each lowering pass, after a plugin's own passes).
 *
 * It checks every rule of docs/ir.md §4 (structure, scoping, typing, shape
 * agreement where constant) and, for IR 1.1, §9: attribute keys and the
 * types of the known lower.* keys, layouts (placeholders only, REGS maps in
 * range and injective, SMEM addresses in range and injective, SMEM ranges
 * of shared buffers disjoint unless one is marked lower.reuse_of), the
 * async copy and barrier statements, gemm leading indices.
 */
#ifndef TILEC_IR_VERIFY_H
#define TILEC_IR_VERIFY_H

#include <stddef.h>
#include "tilec/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when valid; else -1 and a message naming the statement in err
 * ("LINE:COL: KIND: message" when the statement has a source position). */
int tilec_ir_verify(const tilec_ir_module_t *m, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
