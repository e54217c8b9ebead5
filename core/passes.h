/*
 * core/passes.h — verifier and pass pipeline over the tile IR.
 *
 * The verifier checks every structural and typing rule of docs/ir.md
 * (buffer ranks, index counts, dtypes of operands, scopes of tile-op
 * operands, gemm/reduce/copy shape agreement where constant, variables
 * defined before use, loop vars not assigned).  The pipeline runs the
 * core's passes in order; the verifier runs before the first and after
 * every pass, TILEC_IR_ROUNDTRIP=1 round-trips the text after every pass
 * and TILEC_LOG=ir prints the IR after each pass (tilec/ir_check.h).
 */
#ifndef TILEC_CORE_PASSES_H
#define TILEC_CORE_PASSES_H

#include <stddef.h>
#include "tilec/ir.h"
#include "tilec/ir_verify.h" /* tilec_ir_verify (in the SDK since IR 1.1) */

/* Runs the pass pipeline in place (new nodes come from a).  The module is
 * verified before the first pass and after every pass. */
int tilec_passes_run(tilec_arena_t *a, tilec_ir_module_t *m, char *err, size_t errlen);

/* pass_safe_memory.c: guards every direct global access whose bounds are not
 * provable (loads read 0 or the buffer's "frontend.safe_value", stores and
 * atomics are skipped); *nguards gets how many.  -1 when out of memory. */
int tilec_pass_safe_memory(tilec_arena_t *a, tilec_ir_kernel_t *k, int *nguards);

#endif
