/*
 * plugin-sdk/src/ir_verify_internal.h — what the verifier's two files
 * share: the verifier's state and the checks one file calls in the other.
 * ir_verify.c checks the 1.0 IR (structure, scoping, typing, bounds,
 * shapes) and walks the kernel; ir_verify_lower.c checks what the
 * lowering passes add in IR 1.1 (attributes, layouts, the shared-memory
 * plan, mbarriers and the async-copy statements).
 */
#ifndef TILEC_IR_VERIFY_INTERNAL_H
#define TILEC_IR_VERIFY_INTERNAL_H

#include "ir_internal.h"

typedef struct verifier {
    const tilec_ir_kernel_t *k;
    const tilec_ir_stmt_t *st; /* statement being checked, NULL at kernel level */
    const tilec_ir_layout_t *lay; /* layout whose expressions are checked */
    unsigned char *bound;      /* [nvars]: loop var currently bound */
    unsigned char *assigned;   /* [nvars]: LET var assigned earlier in program order */
    char *err;
    size_t errlen;
    int failed;
    int serial;                /* serial loops around the statement being checked */
} verifier_t;

enum { CTX_BODY, CTX_SHAPE, CTX_LAYOUT }; /* where an expression appears */

/* records the first problem (later ones are ignored) */
void irv_fail(verifier_t *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *irv_bname(const tilec_ir_buffer_t *b);
int irv_const_dim(const tilec_ir_buffer_t *b, int i, int64_t *out);
int irv_check_expr(verifier_t *v, const tilec_ir_expr_t *e, int ctx, int depth);
int irv_check_int_expr(verifier_t *v, const tilec_ir_expr_t *e, const char *what);
int irv_check_index(verifier_t *v, const tilec_ir_expr_t *e, const char *what, const tilec_ir_buffer_t *b, int ctx,
                    int depth);
int irv_check_copy(verifier_t *v, const tilec_ir_stmt_t *s);

/* ir_verify_lower.c */
int irv_key_ok(const char *k, int need_ns);
int irv_check_attrs(verifier_t *v, int n, const tilec_ir_attr_t *list, const char *what, int need_ns);
int irv_check_layout(verifier_t *v, const tilec_ir_buffer_t *b);
int irv_check_smem_plan(verifier_t *v);
int irv_check_mbar_ref(verifier_t *v, const tilec_ir_stmt_t *s);
int irv_check_copy_async(verifier_t *v, const tilec_ir_stmt_t *s);
int irv_check_gemm_lead(verifier_t *v, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *lead, const char *role);

#endif
