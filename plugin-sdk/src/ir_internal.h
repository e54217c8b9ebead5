/*
 * plugin-sdk/src/ir_internal.h — helpers shared by the SDK's IR files
 * (ir.c, ir_print.c, ir_read.c, ir_verify.c), not part of the SDK's public
 * API; the core does not include it.
 *
 * It holds the name tables that ir.h does not export (var kinds, and the
 * from_name direction of loop kinds, reduce/atomic ops and gemm policies),
 * the nesting limit of the text form, and a small string-keyed hash map the
 * printer uses to make names unique and the reader uses to resolve them.
 */
#ifndef TILEC_IR_INTERNAL_H
#define TILEC_IR_INTERNAL_H

#include "tilec/ir.h"

int tilec_irx_var_kind_from_name(const char *name); /* declarable kinds only */
int tilec_irx_stmt_kind_from_name(const char *name);
int tilec_irx_layout_kind_from_name(const char *name);
int tilec_irx_loop_kind_from_name(const char *name);
int tilec_irx_reduce_op_from_name(const char *name);
int tilec_irx_atomic_op_from_name(const char *name);
int tilec_irx_policy_from_name(const char *name);

/* Open-addressing map from NUL-terminated strings (not copied: they must
 * outlive the map) to non-negative ints.  Memory is malloc'd. */
typedef struct tilec_irx_map {
    const char **keys;
    int *vals;
    size_t cap, n;
} tilec_irx_map_t;

void tilec_irx_map_init(tilec_irx_map_t *m);
void tilec_irx_map_free(tilec_irx_map_t *m);
/* -1 when absent. */
int tilec_irx_map_get(const tilec_irx_map_t *m, const char *key);
/* 0 on success, 1 when the key was present (value unchanged), -1 on OOM. */
int tilec_irx_map_put(tilec_irx_map_t *m, const char *key, int val);

#endif
