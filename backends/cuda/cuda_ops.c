/*
 * cuda_ops.c — the block operations besides copy and gemm: T.reduce_*
 * (warp shuffles, then shared memory across warps), T.cumsum, atomics
 * and T.print, over dense row-major buffers.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cg.h"

/* src seen as [outer][R][inner] around dimension dim, for reduce and
 * cumsum, which need dense rows: 0 (and a failure) for padded buffers */
static int split_dims(cg_t *g, const tilec_ir_buffer_t *src, const tilec_ir_buffer_t *dst, int dim,
                      const char *what, int64_t *outer, int64_t *R, int64_t *inner)
{
    *outer = *inner = 1;
    *R = cg_const_dim(src, dim);
    for (int d = 0; d < dim; d++)
        *outer *= cg_const_dim(src, d);
    for (int d = dim + 1; d < src->ndim; d++)
        *inner *= cg_const_dim(src, d);
    if (g->pitch[src->id] > 0 || g->pitch[dst->id] > 0) {
        cg_fail(g, "%s: padded buffers are not supported", what);
        return 0;
    }
    return 1;
}

void cg_emit_reduce(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    const tilec_ir_buffer_t *src = s->u.reduce.src, *dst = s->u.reduce.dst;
    int dim = s->u.reduce.dim;
    tilec_reduce_op_t op = s->u.reduce.op;
    int64_t outer, R, inner;
    if (!split_dims(g, src, dst, dim, "reduce", &outer, &R, &inner))
        return;
    int id = g->tmp++;
    tilec_dtype_t t = src->dtype;
    const char *acc;
    if (cg_is_flt(t))
        acc = t == TILEC_FLOAT64 ? "double" : "float";
    else if (op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM)
        acc = tilec_dtype_is_signed(t) || t == TILEC_BOOL ? "tl_i64" : "tl_u64";
    else
        acc = cg_ctype(t);
    int is_sum = op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM;
    int is_abs = op == TILEC_RED_ABSSUM || op == TILEC_RED_ABSMAX;
    int is_max = op == TILEC_RED_MAX || op == TILEC_RED_ABSMAX;
    /* rows along the last dimension: G threads per row (a power of two up
     * to a whole warp, so that a warp reads consecutive words of a row and
     * hits distinct banks), combined by shuffles; the warps take the rows
     * in turn */
    int G = 1;
    if (w->coop && inner == 1 && g->nthreads % 32 == 0 &&
        (cg_is_flt(t) || is_sum)) {
        while (G < 32 && G * 2 <= R)
            G *= 2;
    }
    if (G >= 2) {
        const char *comb = is_sum ? "+" : NULL;
        const char *fn = is_max ? "tl_max" : "tl_min";
        int rows = g->nthreads / G;
        cg_line(g, "/* reduce %s %s -> %s dim %d: %d threads per row */", tilec_reduce_op_name(op),
             src->name, dst->name, dim, G);
        cg_line(g, "for (int tl_b%d = 0; tl_b%d < %" PRId64 "; tl_b%d += %d) {", id, id, outer, id, rows);
        g->ind++;
        cg_line(g, "const int tl_o%d = tl_b%d + tl_tid / %d, tl_g%d = tl_tid %% %d;", id, id, G, id, G);
        if (is_sum || op == TILEC_RED_ABSMAX)
            cg_line(g, "%s tl_acc%d = 0;", acc, id);
        else
            cg_line(g, "%s tl_acc%d = %s;", acc, id,
                 is_max ? (t == TILEC_FLOAT64 ? "-tl_infd()" : "-tl_inff()")
                        : (t == TILEC_FLOAT64 ? "tl_infd()" : "tl_inff()"));
        cg_line(g, "if (tl_o%d < %" PRId64 ")", id, outer);
        cg_line(g, "  for (int tl_r%d = tl_g%d; tl_r%d < %" PRId64 "; tl_r%d += %d) {", id, id, id, R, id, G);
        cg_out(g, "%*s    %s tl_x%d = (%s)", 2 * (g->ind + 1), "", acc, id, acc);
        cg_emit_load_conv_open(g, t);
        cg_out(g, "b%d[tl_o%d * %" PRId64 " + tl_r%d]);\n", src->id, id, R, id);
        if (is_abs)
            cg_line(g, "    tl_x%d = %s(tl_x%d);", id, cg_is_flt(t) ? "tl_abs" : "tl_iabs", id);
        if (comb)
            cg_line(g, "    tl_acc%d += tl_x%d;", id, id);
        else
            cg_line(g, "    tl_acc%d = %s(tl_acc%d, tl_x%d);", id, fn, id, id);
        cg_line(g, "  }");
        cg_line(g, "#pragma unroll");
        cg_line(g, "for (int tl_s = %d; tl_s > 0; tl_s >>= 1) {", G / 2);
        cg_line(g, "  const %s tl_y = __shfl_xor_sync(0xffffffffu, tl_acc%d, tl_s);", acc, id);
        if (comb)
            cg_line(g, "  tl_acc%d += tl_y;", id);
        else
            cg_line(g, "  tl_acc%d = %s(tl_acc%d, tl_y);", id, fn, id);
        cg_line(g, "}");
        cg_line(g, "if (tl_o%d < %" PRId64 " && tl_g%d == 0) {", id, outer, id);
        g->ind++;
        if (!s->u.reduce.clear) {
            cg_out(g, "%*s{ %s tl_d%d = (%s)", 2 * (g->ind + 1), "", acc, id, acc);
            cg_emit_load_conv_open(g, dst->dtype);
            cg_out(g, "b%d[tl_o%d]); ", dst->id, id);
            if (is_sum)
                cg_out(g, "tl_acc%d += tl_d%d; }\n", id, id);
            else
                cg_out(g, "tl_acc%d = %s(tl_d%d, tl_acc%d); }\n", id, fn, id, id);
        }
        cg_out(g, "%*sb%d[tl_o%d] = ", 2 * (g->ind + 1), "", dst->id, id);
        cg_store_open(g, dst->dtype);
        cg_out(g, "tl_acc%d);\n", id);
        g->ind--;
        cg_line(g, "}");
        g->ind--;
        cg_line(g, "}");
        return;
    }
    cg_line(g, "/* reduce %s %s -> %s dim %d */", tilec_reduce_op_name(op), src->name, dst->name, dim);
    cg_line(g, "for (int tl_e%d = %s; tl_e%d < %" PRId64 "; tl_e%d += %d) {", id, cg_w_start(w), id,
         outer * inner, id, w->coop ? g->nthreads : 1);
    g->ind++;
    cg_line(g, "const int tl_o%d = tl_e%d / %" PRId64 ", tl_n%d = tl_e%d %% %" PRId64 ";", id, id,
         inner, id, id, inner);
    /* initial value */
    if (is_sum || op == TILEC_RED_ABSMAX)
        cg_line(g, "%s tl_acc%d = 0;", acc, id);
    else if (cg_is_flt(t))
        cg_line(g, "%s tl_acc%d = %s;", acc, id,
             is_max ? (t == TILEC_FLOAT64 ? "-tl_infd()" : "-tl_inff()")
                    : (t == TILEC_FLOAT64 ? "tl_infd()" : "tl_inff()"));
    else
        cg_line(g, "%s tl_acc%d = b%d[tl_o%d * %" PRId64 " + tl_n%d];", acc, id, src->id, id,
             R * inner, id);
    cg_line(g, "for (int tl_r%d = 0; tl_r%d < %" PRId64 "; tl_r%d++) {", id, id, R, id);
    cg_out(g, "%*s  %s tl_x%d = (%s)", 2 * (g->ind + 1), "", acc, id, acc);
    cg_emit_load_conv_open(g, t);
    cg_out(g, "b%d[(tl_o%d * %" PRId64 " + tl_r%d) * %" PRId64 " + tl_n%d]);\n", src->id, id, R, id,
        inner, id);
    if (is_abs)
        cg_line(g, "  tl_x%d = %s(tl_x%d);", id, cg_is_flt(t) ? "tl_abs" : "tl_iabs", id);
    if (is_sum)
        cg_line(g, "  tl_acc%d += tl_x%d;", id, id);
    else if (cg_is_flt(t))
        cg_line(g, "  tl_acc%d = %s(tl_acc%d, tl_x%d);", id, is_max ? "tl_max" : "tl_min", id, id);
    else
        cg_line(g, "  tl_acc%d = %s(tl_acc%d, tl_x%d);", id, is_max ? "tl_imax" : "tl_imin", id, id);
    cg_line(g, "}");
    if (!s->u.reduce.clear) {
        cg_out(g, "%*s{ %s tl_d%d = (%s)", 2 * (g->ind + 1), "", acc, id, acc);
        cg_emit_load_conv_open(g, dst->dtype);
        cg_out(g, "b%d[tl_o%d * %" PRId64 " + tl_n%d]); ", dst->id, id, inner, id);
        if (is_sum)
            cg_out(g, "tl_acc%d += tl_d%d; }\n", id, id);
        else
            cg_out(g, "tl_acc%d = %s(tl_d%d, tl_acc%d); }\n", id,
                cg_is_flt(t) ? (is_max ? "tl_max" : "tl_min") : (is_max ? "tl_imax" : "tl_imin"), id,
                id);
    }
    cg_out(g, "%*sb%d[tl_o%d * %" PRId64 " + tl_n%d] = ", 2 * (g->ind + 1), "", dst->id, id, inner, id);
    cg_store_open(g, dst->dtype);
    cg_out(g, "tl_acc%d);\n", id);
    g->ind--;
    cg_line(g, "}");
}

void cg_emit_cumsum(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    const tilec_ir_buffer_t *src = s->u.cumsum.src, *dst = s->u.cumsum.dst;
    int dim = s->u.cumsum.dim;
    int64_t outer, R, inner;
    if (!split_dims(g, src, dst, dim, "cumsum", &outer, &R, &inner))
        return;
    int id = g->tmp++;
    tilec_dtype_t t = src->dtype;
    const char *acc = cg_is_flt(t) ? (t == TILEC_FLOAT64 ? "double" : "float")
                                : (tilec_dtype_is_signed(t) ? "tl_i64" : "tl_u64");
    cg_line(g, "/* cumsum %s -> %s dim %d%s */", src->name, dst->name, dim,
         s->u.cumsum.reverse ? " reverse" : "");
    cg_line(g, "for (int tl_e%d = %s; tl_e%d < %" PRId64 "; tl_e%d += %d) {", id, cg_w_start(w), id,
         outer * inner, id, w->coop ? g->nthreads : 1);
    g->ind++;
    cg_line(g, "const int tl_o%d = tl_e%d / %" PRId64 ", tl_n%d = tl_e%d %% %" PRId64 ";", id, id,
         inner, id, id, inner);
    cg_line(g, "%s tl_acc%d = 0;", acc, id);
    cg_line(g, "for (int tl_q%d = 0; tl_q%d < %" PRId64 "; tl_q%d++) {", id, id, R, id);
    if (s->u.cumsum.reverse)
        cg_line(g, "  const int tl_r%d = %" PRId64 " - tl_q%d;", id, R - 1, id);
    else
        cg_line(g, "  const int tl_r%d = tl_q%d;", id, id);
    cg_line(g, "  const int tl_p%d = (tl_o%d * %" PRId64 " + tl_r%d) * %" PRId64 " + tl_n%d;", id, id,
         R, id, inner, id);
    cg_out(g, "%*s  tl_acc%d += (%s)", 2 * (g->ind + 1), "", id, acc);
    cg_emit_load_conv_open(g, t);
    cg_out(g, "b%d[tl_p%d]);\n", src->id, id);
    cg_out(g, "%*s  b%d[tl_p%d] = ", 2 * (g->ind + 1), "", dst->id, id);
    cg_store_open(g, dst->dtype);
    cg_out(g, "tl_acc%d);\n", id);
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
}

void cg_emit_atomic(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *b = s->u.atomic.buf;
    tilec_dtype_t t = b->dtype;
    tilec_atomic_op_t op = s->u.atomic.op;
    int id = g->tmp++;
    cg_line(g, "{ /* atomic %s %s */", tilec_atomic_op_name(op), b->name);
    g->ind++;
    cg_out(g, "%*s%s *tl_ap%d = &b%d[", 2 * (g->ind + 1), "", cg_stype(t), id, b->id);
    cg_emit_offset(g, b, s->u.atomic.idx);
    cg_out(g, "];\n");
    cg_out(g, "%*sconst %s tl_av%d = (", 2 * (g->ind + 1), "", cg_ctype(t), id);
    cg_emit_expr(g, s->u.atomic.value);
    cg_out(g, ");\n");
    const char *fop = op == TILEC_ATOMIC_ADD ? NULL : op == TILEC_ATOMIC_MAX ? "tl_max" : "tl_min";
    const char *iop = op == TILEC_ATOMIC_ADD ? NULL : op == TILEC_ATOMIC_MAX ? "tl_imax" : "tl_imin";
    const char *native = op == TILEC_ATOMIC_ADD ? "atomicAdd" : op == TILEC_ATOMIC_MAX ? "atomicMax" : "atomicMin";
    switch (t) {
    case TILEC_FLOAT32:
        if (op == TILEC_ATOMIC_ADD)
            cg_line(g, "atomicAdd(tl_ap%d, tl_av%d);", id, id);
        else
            cg_line(g, "tl_rmw32(tl_ap%d, [&](tl_u32 x) { return __float_as_uint(%s(__uint_as_float(x), tl_av%d)); });",
                 id, fop, id);
        break;
    case TILEC_FLOAT64:
        if (op == TILEC_ATOMIC_ADD)
            cg_line(g, "atomicAdd(tl_ap%d, tl_av%d);", id, id);
        else
            cg_line(g, "tl_rmw64(tl_ap%d, [&](tl_u64 x) { return (tl_u64)__double_as_longlong(%s(__longlong_as_double((tl_i64)x), tl_av%d)); });",
                 id, fop, id);
        break;
    case TILEC_FLOAT16:
    case TILEC_BFLOAT16: {
        const char *ld = t == TILEC_FLOAT16 ? "tl_h2f" : "tl_b2f";
        const char *st = t == TILEC_FLOAT16 ? "tl_f2h" : "tl_f2b";
        if (op == TILEC_ATOMIC_ADD)
            cg_line(g, "tl_rmw_sub<2>(tl_ap%d, [&](tl_u32 x) { return (tl_u32)%s(%s((tl_u16)x) + tl_av%d); });",
                 id, st, ld, id);
        else
            cg_line(g, "tl_rmw_sub<2>(tl_ap%d, [&](tl_u32 x) { return (tl_u32)%s(%s(%s((tl_u16)x), tl_av%d)); });",
                 id, st, fop, ld, id);
        break;
    }
    case TILEC_INT32:
    case TILEC_UINT32:
        cg_line(g, "%s(tl_ap%d, tl_av%d);", native, id, id);
        break;
    case TILEC_INT64:
        if (op == TILEC_ATOMIC_ADD)
            cg_line(g, "atomicAdd((tl_u64 *)tl_ap%d, (tl_u64)tl_av%d);", id, id);
        else
            cg_line(g, "%s((long long *)tl_ap%d, (long long)tl_av%d);", native, id, id);
        break;
    case TILEC_UINT64:
        cg_line(g, "%s((unsigned long long *)tl_ap%d, (unsigned long long)tl_av%d);", native, id, id);
        break;
    case TILEC_INT8:
    case TILEC_UINT8:
    case TILEC_INT16:
    case TILEC_UINT16:
    case TILEC_BOOL: {
        int by = (int)tilec_dtype_size(t);
        const char *stt = cg_stype(t);
        if (op == TILEC_ATOMIC_ADD)
            cg_line(g, "tl_rmw_sub<%d>(tl_ap%d, [&](tl_u32 x) { return (tl_u32)(%s)((%s)x + tl_av%d); });",
                 by, id, stt, stt, id);
        else
            cg_line(g, "tl_rmw_sub<%d>(tl_ap%d, [&](tl_u32 x) { return (tl_u32)(%s)%s<%s>((%s)x, (%s)tl_av%d); });",
                 by, id, stt, iop, cg_ctype(t), stt, cg_ctype(t), id);
        break;
    }
    default:
        cg_fail(g, "atomic on %s is not supported", tilec_dtype_name(t));
    }
    g->ind--;
    cg_line(g, "}");
}

void cg_emit_print(cg_t *g, const tilec_ir_stmt_t *s)
{
    /* the message goes through %s so no user text is a format */
    const char *msg = s->u.print.msg ? s->u.print.msg : "";
    tilec_sdk_str_t lit = {0};
    tilec_sdk_str_puts(&lit, "\"");
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
        if (*p == '"' || *p == '\\' || *p < 32 || *p > 126)
            tilec_sdk_str_printf(&lit, "\\%03o", *p);
        else
            tilec_sdk_str_putn(&lit, (const char *)p, 1);
    }
    tilec_sdk_str_puts(&lit, "\"");
    if (lit.oom) {
        cg_fail(g, "out of memory");
        tilec_sdk_str_free(&lit);
        return;
    }
    if (s->u.print.value) {
        tilec_dtype_t t = s->u.print.value->dtype;
        cg_out(g, "%*sprintf(\"%%s%s%%%s\\n\", %s, ", 2 * (g->ind + 1), "", *msg ? ": " : "",
            cg_is_flt(t) ? "g" : tilec_dtype_is_signed(t) ? "lld" : "llu", lit.s);
        cg_out(g, cg_is_flt(t) ? "(double)(" : tilec_dtype_is_signed(t) ? "(long long)(" : "(unsigned long long)(");
        cg_emit_expr(g, s->u.print.value);
        cg_out(g, "));\n");
    } else if (s->u.print.buf) {
        const tilec_ir_buffer_t *b = s->u.print.buf;
        int64_t n = tilec_ir_buffer_const_size(b);
        if (n < 0 || g->pitch[b->id] > 0) {
            cg_line(g, "printf(\"%%s: buffer %s\\n\", %s);", b->name[0] ? "(dynamic shape)" : "", lit.s);
        } else {
            int id = g->tmp++;
            tilec_dtype_t t = b->dtype;
            cg_line(g, "printf(\"%%s: %s\\n\", %s);", "buffer", lit.s);
            cg_line(g, "for (int tl_e%d = 0; tl_e%d < %" PRId64 "; tl_e%d++)", id, id, n, id);
            cg_out(g, "%*s  printf(\"%%%s \", ", 2 * (g->ind + 1), "",
                cg_is_flt(t) ? "g" : tilec_dtype_is_signed(t) ? "lld" : "llu");
            cg_out(g, cg_is_flt(t) ? "(double)" : tilec_dtype_is_signed(t) ? "(long long)" : "(unsigned long long)");
            cg_emit_load_conv_open(g, t);
            cg_out(g, "b%d[tl_e%d]));\n", b->id, id);
            cg_line(g, "printf(\"\\n\");");
        }
    }
    tilec_sdk_str_free(&lit);
}
