/*
 * tilec/cexpr.h — one C-family scalar-expression emitter for the code
 * generators that write C-like source (the CPU backend's C, the SIMT kit's
 * CUDA/HIP/OpenCL dialects, the CUDA backend's CUDA C++).
 *
 * The tree walk over tile IR expressions and the operator spellings that
 * every C-family target shares live here; what differs between targets is
 * described by a tilec_cexpr_t: hooks for strings (printf into the
 * caller's arena), failure, compute type names, literals, buffer loads and
 * dtype conversions, and a few flags (generic math names, rsqrt, how math
 * on integers is promoted).  The caller owns all state: the failure flag
 * and the depth counter are pointers into it.
 */
#ifndef TILEC_CEXPR_H
#define TILEC_CEXPR_H

#include <stdarg.h>
#include <stdint.h>

#include "tilec/ir.h"

typedef struct tilec_cexpr tilec_cexpr_t;

struct tilec_cexpr {
    void *u;                         /* the caller's context, passed to every hook */
    const tilec_ir_kernel_t *k;      /* the kernel whose variables expressions name */
    int *failed;                     /* set by fail; checked before work */
    int *depth;                      /* nesting counter of the caller */
    int max_depth;                   /* deepest expression allowed */
    /* printf into the caller's arena (never NULL: "0" on failure). */
    char *(*vfmt)(void *u, const char *f, va_list ap);
    /* records the first failure with a message */
    void (*fail)(void *u, const char *msg);
    /* compute type name of dtype t */
    const char *(*ctype)(void *u, tilec_dtype_t t);
    /* literal of integer value v in non-float dtype t (bool included) */
    const char *(*int_lit)(void *u, int64_t v, tilec_dtype_t t);
    /* literal of value v in float dtype t */
    const char *(*flt_lit)(void *u, double v, tilec_dtype_t t);
    /* checked load of buffer b at indices idx as a compute value of b's
     * dtype; NULL after a failure */
    const char *(*load)(void *u, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx);
    /* compute value v of dtype s converted to dtype t */
    const char *(*conv)(void *u, const char *v, tilec_dtype_t s, tilec_dtype_t t);
    /* notes (may be NULL): helper families the emitted text calls;
     * t of an integer helper is already mapped (bool -> int32) */
    void (*use_flt_helpers)(void *u, int dbl);
    void (*use_int_helpers)(void *u, tilec_dtype_t t);
    const char *uint32_name, *uint64_name, *float32_name;
    tilec_dtype_t float_lit_via;     /* dtype of a float literal cast to an integer dtype */
    int math_generic;                /* float math without the f suffix (overloaded names) */
    int has_rsqrt;                   /* rsqrt exists; else 1/sqrt */
    int int_math_via_double;         /* math on integers via (double) and the double functions;
                                        else via float32 */
    int bool_minmax_ne0;             /* integer min/max of bool wrapped in != 0 */
    const char *msg_missing, *msg_bad_dtype; /* messages for a NULL / ill-typed expression */
    /* Added later (callers that do not set it get NULL, the old output):
     * result v of an operation on float dtype t that may not be exact in t
     * (+ - * / // % ** min max, and exp exp2 log log2 sqrt rsqrt tanh
     * sigmoid floor ceil; not neg, abs, comparisons); returns v rounded as
     * the target wants (the CUDA backend rounds float16/bfloat16 after
     * every such operation).  NULL: v as it is. */
    const char *(*flt_result)(void *u, const char *v, tilec_dtype_t t);
    /* Added later (NULL: the default names): the name of float math
     * function base ("exp", "log2", "tanh", "sqrt", "floor", ...) for
     * float (dbl=0) or double (dbl=1); NULL from the hook: the default.
     * The CPU backend points exp/exp2/log/log2/tanh at its own
     * vectorizable implementations. */
    const char *(*math_name)(void *u, const char *base, int dbl);
    /* Added later, for languages without C casts or with a boolean type
     * apart from the integers (GLSL); NULL keeps the C output.  cast
     * returns value v converted to the type named tname ("int64_t(v)").
     * bool_name names the boolean type: comparisons and && || ! then
     * yield ctype(bool) (an int) through cast, their operands and select
     * conditions are converted to bool_name first. */
    const char *(*cast)(void *u, const char *tname, const char *v);
    const char *bool_name;
    /* Added later (tile IR 1.4; NULL: bit casts fail with a message):
     * compute value v of dtype s whose bits, read as dtype t of the same
     * width, are the result (a compute value of t). */
    const char *(*bitcast)(void *u, const char *v, tilec_dtype_t s, tilec_dtype_t t);
    /* Added later (NULL: no ranges known; integer / // % then always go
     * through the tc_div/tc_fdiv/tc_fmod helpers): bounds lo <= v <= hi of
     * every value variable v takes where the emitted text reads it; 0 when
     * unknown.  An int32/int64 division or modulo whose dividend is then
     * proved >= 0 and whose divisor >= 1 (tilec_cexpr_range) is printed as
     * the unsigned C operator, which the compiler turns into a multiply
     * and a shift with no sign fix-ups, and which it can fold
     * ((x / c) * c + x % c is x) and hoist. */
    int (*var_range)(void *u, const tilec_ir_var_t *v, int64_t *lo, int64_t *hi);
};

/* Float dtypes (float16, bfloat16, float32, float64). */
int tilec_cexpr_is_flt(tilec_dtype_t t);
/* Suffix of the integer helper family of t (bool and others: "i32"). */
const char *tilec_cexpr_isfx(tilec_dtype_t t);
/* The expression e as text in its compute type; "0" after a failure. */
const char *tilec_cexpr_emit(const tilec_cexpr_t *x, const tilec_ir_expr_t *e);
/* Single operators on compute values of dtype t. */
const char *tilec_cexpr_arith(const tilec_cexpr_t *x, const char *op, tilec_dtype_t t, const char *a,
                              const char *b);
const char *tilec_cexpr_minmax(const tilec_cexpr_t *x, int is_max, tilec_dtype_t t, const char *a,
                               const char *b);
const char *tilec_cexpr_abs(const tilec_cexpr_t *x, tilec_dtype_t t, const char *a);
/* Integer value r (a C integer of any width) of 4-bit dtype t wrapped to
 * its 4 bits (tile IR 1.3: int4 sign-extended, uint4 masked, held one per
 * byte); r as it is for every other dtype. */
const char *tilec_cexpr_wrap4(const tilec_cexpr_t *x, tilec_dtype_t t, const char *r);
/* Name of float math function base for float (dbl=0) or double (dbl=1). */
const char *tilec_cexpr_math(const tilec_cexpr_t *x, const char *base, int dbl);
/* Added later: bounds lo <= e <= hi of integer expression e (int32,
 * int64 or bool) over the variables' ranges (x->var_range), both within
 * the int32 range and proved without wrapping; 0 when unknown. */
int tilec_cexpr_range(const tilec_cexpr_t *x, const tilec_ir_expr_t *e, int64_t *lo, int64_t *hi);
/* Added later: printf into arena a, for a vfmt hook; NULL when out of
 * memory (the hook then fails and returns "0"). */
char *tilec_cexpr_vprintf(tilec_arena_t *a, const char *f, va_list ap);

#endif
