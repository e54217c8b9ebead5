/*
 * cuda_emit.c — the CUDA dialect's text basics: output with indentation,
 * C types of IR dtypes, buffer addressing (row-major tensors; padded and
 * swizzled shared buffers, from the layouts the SDK's smem pass chose),
 * expressions through the SDK's C-family emitter (tilec/cexpr.h) with
 * CUDA's hooks, region index arithmetic, and the reference walkers
 * (does a statement list mention or write a buffer) the printer's own
 * scheduling still needs.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cg.h"
#include "tilec/cexpr.h"
#include "tilec/ir_walk.h"

void cg_fail(cg_t *g, const char *fmt, ...)
{
    if (g->failed)
        return;
    g->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->err, g->errlen, fmt, ap);
    va_end(ap);
}

void cg_out(cg_t *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tilec_sdk_str_vprintf(g->o, fmt, ap);
    va_end(ap);
}

/* A new line at the current indentation, then the formatted text. */
void cg_line(cg_t *g, const char *fmt, ...)
{
    for (int i = 0; i < g->ind + 1; i++)
        tilec_sdk_str_puts(g->o, "  ");
    va_list ap;
    va_start(ap, fmt);
    tilec_sdk_str_vprintf(g->o, fmt, ap);
    va_end(ap);
    tilec_sdk_str_puts(g->o, "\n");
}

/* ---- types ------------------------------------------------------------------ */

/* storage type of an element in memory */
const char *cg_stype(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_BOOL: return "tl_u8";
    case TILEC_INT8: return "tl_i8";
    case TILEC_INT16: return "tl_i16";
    case TILEC_INT32: return "tl_i32";
    case TILEC_INT64: return "tl_i64";
    case TILEC_UINT8: return "tl_u8";
    case TILEC_UINT16: return "tl_u16";
    case TILEC_UINT32: return "tl_u32";
    case TILEC_UINT64: return "tl_u64";
    case TILEC_FLOAT16: return "tl_u16";
    case TILEC_BFLOAT16: return "tl_u16";
    case TILEC_FLOAT32: return "float";
    case TILEC_FLOAT64: return "double";
    default: return "int";
    }
}

/* type of a value in computation */
const char *cg_ctype(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_BOOL: return "bool";
    case TILEC_FLOAT16:
    case TILEC_BFLOAT16: return "float";
    default: return cg_stype(t);
    }
}

int cg_is_f16ish(tilec_dtype_t t) { return t == TILEC_FLOAT16 || t == TILEC_BFLOAT16; }
int cg_is_flt(tilec_dtype_t t) { return tilec_dtype_is_float(t); }

/* ---- expressions ---------------------------------------------------------- */

/* Expressions are written by the C-family emitter the SDK shares
 * (tilec/cexpr.h, also behind the CPU backend and the SIMT kit), which
 * builds each one as a string in g->ar; emit_expr then writes it out.  The
 * hooks below give it CUDA's text: literals, compute types (bool is bool,
 * 16-bit floats are float), loads through emit_load (register fragments,
 * swizzled and padded shared-memory offsets), conversions, and the
 * rounding of every inexact float16/bfloat16 operation to its format.  The
 * helpers the emitted text calls (tc_div_i32 ..., tc_minf, tc_fmodf,
 * tc_sigmoidf ...) are in cuda_prelude.h. */


int64_t cg_const_dim(const tilec_ir_buffer_t *b, int d)
{
    int64_t v = 1;
    if (!tilec_ir_is_const_int(b->shape[d], &v))
        return -1;
    return v;
}

/* element offset of buf[idx...] */
void cg_emit_offset(cg_t *g, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    if (b->scope == TILEC_SCOPE_GLOBAL) {
        /* ((i0 * S1 + i1) * S2 + i2) in 64-bit, with the shape locals */
        for (int d = 0; d < b->ndim; d++)
            cg_out(g, "(");
        cg_out(g, "(tl_i64)");
        for (int d = 0; d < b->ndim; d++) {
            if (d > 0)
                cg_out(g, " * tl_s%d_%d + (tl_i64)", b->id, d);
            cg_out(g, "(");
            cg_emit_expr(g, idx[d]);
            cg_out(g, "))");
        }
        return;
    }
    if (g->swz[b->id] > 0) {
        /* the last two dimensions swizzled; leading (ring) ones stack
         * whole R x C planes */
        int n = b->ndim;
        if (n > 2)
            cg_out(g, "(");
        for (int d = 0; d < n - 2; d++) {
            int64_t st = cg_const_dim(b, n - 2) * cg_const_dim(b, n - 1);
            for (int e = d + 1; e < n - 2; e++)
                st *= cg_const_dim(b, e);
            cg_out(g, "(int)(");
            cg_emit_expr(g, idx[d]);
            cg_out(g, ") * %" PRId64 " + ", st);
        }
        cg_out(g, "tl_swz<%d, %" PRId64 ">((int)(", g->swz[b->id], cg_const_dim(b, n - 2));
        cg_emit_expr(g, idx[n - 2]);
        cg_out(g, "), (int)(");
        cg_emit_expr(g, idx[n - 1]);
        cg_out(g, "))");
        if (n > 2)
            cg_out(g, ")");
        return;
    }
    int64_t stride = 1;
    int64_t *strides = calloc((size_t)b->ndim + 1, sizeof *strides);
    if (!strides) {
        cg_fail(g, "out of memory");
        return;
    }
    for (int d = b->ndim - 1; d >= 0; d--) {
        strides[d] = stride;
        int64_t ext = 1;
        tilec_ir_is_const_int(b->shape[d], &ext);
        if (d == b->ndim - 1 && g->pitch[b->id] > 0)
            ext = g->pitch[b->id];
        stride *= ext;
    }
    cg_out(g, "(");
    for (int d = 0; d < b->ndim; d++) {
        if (d > 0)
            cg_out(g, " + ");
        cg_out(g, "(int)(");
        cg_emit_expr(g, idx[d]);
        cg_out(g, ")");
        if (strides[d] != 1)
            cg_out(g, " * %" PRId64, strides[d]);
    }
    if (b->ndim == 0)
        cg_out(g, "0");
    cg_out(g, ")");
    free(strides);
}

/* value (compute type) from storage expression text s of dtype t */
void cg_emit_load_conv_open(cg_t *g, tilec_dtype_t t)
{
    if (t == TILEC_FLOAT16)
        cg_out(g, "tl_h2f(");
    else if (t == TILEC_BFLOAT16)
        cg_out(g, "tl_b2f(");
    else if (t == TILEC_BOOL)
        cg_out(g, "(0 != ");
    else
        cg_out(g, "(");
}


static void emit_load(cg_t *g, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    if (g->rf[b->id]) { /* a register fragment, in a nest on registers */
        cg_rf_ref(g, b);
        return;
    }
    cg_emit_load_conv_open(g, b->dtype);
    cg_out(g, "b%d[", b->id);
    cg_emit_offset(g, b, idx);
    cg_out(g, "])");
}

/* printf into g->ar; "0" (and a failure) when out of memory */
static char *cx_vfmt(void *u, const char *f, va_list ap)
{
    cg_t *g = u;
    char *s = tilec_cexpr_vprintf(&g->ar, f, ap);
    if (!s) {
        cg_fail(g, "out of memory");
        return "0";
    }
    return s;
}

static char *sfmt(cg_t *g, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *sfmt(cg_t *g, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = cx_vfmt(g, f, ap);
    va_end(ap);
    return s;
}

static void cx_fail(void *u, const char *msg) { cg_fail(u, "%s", msg); }
static const char *cx_ctype(void *u, tilec_dtype_t t) { (void)u; return cg_ctype(t); }

static const char *cx_int_lit(void *u, int64_t v, tilec_dtype_t t)
{
    cg_t *g = u;
    if (t == TILEC_BOOL)
        return v ? "true" : "false";
    if (t == TILEC_UINT64)
        return sfmt(g, "((tl_u64)0x%" PRIx64 "ULL)", (uint64_t)v);
    if (v == INT64_MIN)
        return sfmt(g, "((%s)(-9223372036854775807LL - 1))", cg_stype(t));
    if (t == TILEC_INT32 && v >= INT32_MIN && v <= INT32_MAX)
        return sfmt(g, v < 0 ? "(%" PRId64 ")" : "%" PRId64, v);
    return sfmt(g, "((%s)%" PRId64 "LL)", cg_stype(t), v);
}

static const char *cx_flt_lit(void *u, double d, tilec_dtype_t t)
{
    cg_t *g = u;
    if (t == TILEC_FLOAT64) {
        if (isnan(d))
            return "__longlong_as_double(0x7ff8000000000000LL)";
        if (isinf(d))
            return d < 0 ? "-tl_infd()" : "tl_infd()";
        return sfmt(g, "(%.17e)", d);
    }
    float f;
    if (t == TILEC_FLOAT16)
        f = tilec_f16_to_f32(tilec_f64_to_f16(d));
    else if (t == TILEC_BFLOAT16)
        f = tilec_bf16_to_f32(tilec_f64_to_bf16(d));
    else
        f = (float)d;
    if (isnan(f))
        return "__int_as_float(0x7fc00000)";
    if (isinf(f))
        return f < 0 ? "-tl_inff()" : "tl_inff()";
    return sfmt(g, "(%.9ef)", (double)f);
}

/* emit_load's text, captured */
static const char *cx_load(void *u, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    cg_t *g = u;
    tilec_sdk_str_t *o = g->o, t = {0};
    g->o = &t;
    emit_load(g, b, idx);
    g->o = o;
    if (t.oom)
        cg_fail(g, "out of memory");
    const char *r = g->failed ? NULL : sfmt(g, "%s", t.s ? t.s : "");
    tilec_sdk_str_free(&t);
    return g->failed ? NULL : r;
}

/* value v of dtype s converted to dtype t (compute types); a 16-bit float
 * goes through float when that rounds once (from float32, a 16-bit float,
 * bool or a narrow integer), else from double */
static const char *cx_conv(void *u, const char *v, tilec_dtype_t s, tilec_dtype_t t)
{
    cg_t *g = u;
    if (s == t)
        return v;
    if (t == TILEC_BOOL)
        return sfmt(g, "(0 != (%s))", v);
    if (cg_is_f16ish(t)) {
        if (s == TILEC_FLOAT32 || cg_is_f16ish(s) || (tilec_dtype_is_int(s) && tilec_dtype_size(s) <= 2) ||
            s == TILEC_BOOL)
            return sfmt(g, "%s((float)(%s))", t == TILEC_FLOAT16 ? "tl_rh" : "tl_rb", v);
        return sfmt(g, "%s((double)(%s)))", t == TILEC_FLOAT16 ? "tl_h2f(tl_d2h" : "tl_b2f(tl_d2b", v);
    }
    return sfmt(g, "((%s)(%s))", cg_ctype(t), v);
}

/* an inexact float operation's result: 16-bit floats round to their format */
static const char *cx_flt_result(void *u, const char *v, tilec_dtype_t t)
{
    if (t == TILEC_FLOAT16)
        return sfmt(u, "tl_rh(%s)", v);
    if (t == TILEC_BFLOAT16)
        return sfmt(u, "tl_rb(%s)", v);
    return v;
}

void cg_emit_expr(cg_t *g, const tilec_ir_expr_t *e)
{
    const tilec_cexpr_t x = {
        .u = g, .k = g->k, .failed = &g->failed, .depth = &g->depth, .max_depth = CG_MAX_DEPTH,
        .vfmt = cx_vfmt, .fail = cx_fail, .ctype = cx_ctype, .int_lit = cx_int_lit,
        .flt_lit = cx_flt_lit, .load = cx_load, .conv = cx_conv, .flt_result = cx_flt_result,
        .uint32_name = "tl_u32", .uint64_name = "tl_u64", .float32_name = "float",
        .float_lit_via = TILEC_FLOAT64, .int_math_via_double = 1, .bool_minmax_ne0 = 1,
        .msg_missing = "NULL expression", .msg_bad_dtype = "expression with an invalid dtype",
    };
    int top = g->depth == 0; /* not inside a load's indices */
    const char *s = tilec_cexpr_emit(&x, e);
    if (!g->failed)
        cg_out(g, "%s", s);
    if (top) { /* the strings are written out: free them */
        tilec_arena_destroy(&g->ar);
        tilec_arena_init(&g->ar);
    }
}

/* storage conversion of a computed value text for a store into dtype t */
void cg_store_open(cg_t *g, tilec_dtype_t t)
{
    if (t == TILEC_FLOAT16)
        cg_out(g, "tl_f2h(");
    else if (t == TILEC_BFLOAT16)
        cg_out(g, "tl_f2b(");
    else
        cg_out(g, "(%s)(", cg_stype(t));
}



const char *cg_w_start(const who_t *w) { return w->coop ? "tl_tid" : "0"; }
void cg_w_stride(cg_t *g, const who_t *w) { cg_out(g, "%d", w->coop ? g->nthreads : 1); }

/* A barrier; with wgmma in the kernel, each thread first makes its
 * shared-memory writes visible to the async proxy that wgmma reads with. */
void cg_emit_sync(cg_t *g)
{
    if (g->any_swz)
        cg_line(g, "tl_fence_proxy();");
    cg_line(g, "__syncthreads();");
}

int cg_per_thread_scope(tilec_scope_t s) { return s == TILEC_SCOPE_LOCAL || s == TILEC_SCOPE_VAR; }


/* Writes the linear index decomposition of loop counter `k` over extents
 * ext[n] into locals tl_<base>_<i>. */
void cg_decompose(cg_t *g, int base, const char *k, const int64_t *ext, int n)
{
    cg_line(g, "tl_i64 tl_r%d = %s;", base, k);
    for (int i = n - 1; i >= 0; i--) {
        if (i > 0) {
            cg_line(g, "const int tl_%d_%d = (int)(tl_r%d %% %" PRId64 "); tl_r%d /= %" PRId64 ";", base,
                 i, base, ext[i], base, ext[i]);
        } else {
            cg_line(g, "const int tl_%d_%d = (int)tl_r%d;", base, i, base);
        }
    }
}

/* Region element access: index of dimension d for region r whose
 * non-unit dimensions are numbered in order; bases were hoisted into
 * tl_<hb>_<d>. */
static void region_index(cg_t *g, const tilec_ir_region_t *r, int d, int hb, int ib, int *nu)
{
    if (r->extent[d] > 1) {
        cg_out(g, "(tl_%d_%d + tl_%d_%d)", hb, d, ib, *nu);
        (*nu)++;
    } else {
        cg_out(g, "tl_%d_%d", hb, d);
    }
}

void cg_hoist_bases(cg_t *g, const tilec_ir_region_t *r, int hb)
{
    for (int d = 0; d < r->buf->ndim; d++) {
        cg_out(g, "%*sconst tl_i64 tl_%d_%d = (tl_i64)(", 2 * (g->ind + 1), "", hb, d);
        cg_emit_expr(g, r->base[d]);
        cg_out(g, ");\n");
    }
}

/* offset text of a region element into buffer (uses hoisted bases) */
void cg_region_offset(cg_t *g, const tilec_ir_region_t *r, int hb, int ib)
{
    const tilec_ir_buffer_t *b = r->buf;
    int nu = 0;
    if (b->scope == TILEC_SCOPE_GLOBAL) {
        for (int d = 0; d < b->ndim; d++)
            cg_out(g, "(");
        for (int d = 0; d < b->ndim; d++) {
            if (d > 0)
                cg_out(g, " * tl_s%d_%d + ", b->id, d);
            region_index(g, r, d, hb, ib, &nu);
            cg_out(g, ")");
        }
        return;
    }
    if (g->swz[b->id] > 0) {
        int n = b->ndim;
        if (n > 2)
            cg_out(g, "(");
        for (int d = 0; d < n - 2; d++) { /* leading (ring) dimensions: whole planes */
            int64_t st = cg_const_dim(b, n - 2) * cg_const_dim(b, n - 1);
            for (int e = d + 1; e < n - 2; e++)
                st *= cg_const_dim(b, e);
            cg_out(g, "(int)");
            region_index(g, r, d, hb, ib, &nu);
            cg_out(g, " * %" PRId64 " + ", st);
        }
        cg_out(g, "tl_swz<%d, %" PRId64 ">((int)", g->swz[b->id], cg_const_dim(b, n - 2));
        region_index(g, r, n - 2, hb, ib, &nu);
        cg_out(g, ", (int)");
        region_index(g, r, n - 1, hb, ib, &nu);
        cg_out(g, ")");
        if (n > 2)
            cg_out(g, ")");
        return;
    }
    int64_t stride = 1;
    int64_t strides[TILEC_IR_MAX_DIMS];
    for (int d = b->ndim - 1; d >= 0; d--) {
        strides[d] = stride;
        int64_t ext = cg_const_dim(b, d);
        if (d == b->ndim - 1 && g->pitch[b->id] > 0)
            ext = g->pitch[b->id];
        stride *= ext;
    }
    cg_out(g, "(int)(0");
    for (int d = 0; d < b->ndim; d++) {
        cg_out(g, " + ");
        region_index(g, r, d, hb, ib, &nu);
        cg_out(g, " * %" PRId64, strides[d]);
    }
    cg_out(g, ")");
}

/* in-bounds condition of a global region element */
void cg_region_inbounds(cg_t *g, const tilec_ir_region_t *r, int hb, int ib)
{
    const tilec_ir_buffer_t *b = r->buf;
    int nu = 0;
    cg_out(g, "(1");
    for (int d = 0; d < b->ndim; d++) {
        cg_out(g, " && (tl_u64)");
        region_index(g, r, d, hb, ib, &nu);
        cg_out(g, " < (tl_u64)tl_s%d_%d", b->id, d);
    }
    cg_out(g, ")");
}

/* non-unit extents of a region */
int cg_region_shape(const tilec_ir_region_t *r, int64_t *ext)
{
    int n = 0;
    for (int d = 0; d < r->buf->ndim; d++)
        if (r->extent[d] > 1)
            ext[n++] = r->extent[d];
    return n;
}


/* ---- buffer references, through the SDK's walker (tilec/ir_walk.h) ---------- */

typedef struct touch_q {
    const tilec_ir_buffer_t *b;    /* NULL: any per-thread (local/var) buffer */
    const tilec_ir_stmt_t *skip;
    int how;
} touch_q_t;

static int touch_buf(const touch_q_t *q, const tilec_ir_buffer_t *x)
{
    return x && (q->b ? x == q->b : cg_per_thread_scope(x->scope));
}

static int touch_stmt(tilec_ir_walk_t *w, tilec_ir_stmt_t *s)
{
    const touch_q_t *q = w->user;
    const tilec_ir_buffer_t *wr = NULL, *r0 = NULL, *r1 = NULL;
    if (s == q->skip)
        return TILEC_WALK_SKIP;
    switch (s->kind) {
    case TILEC_ST_STORE: wr = s->u.store.buf; break;
    case TILEC_ST_COPY:
    case TILEC_ST_COPY_ASYNC: wr = s->u.copy.dst.buf, r0 = s->u.copy.src.buf; break;
    case TILEC_ST_FILL: wr = s->u.fill.dst.buf; break;
    case TILEC_ST_GEMM: wr = s->u.gemm.c, r0 = s->u.gemm.a, r1 = s->u.gemm.b; break;
    case TILEC_ST_REDUCE: wr = s->u.reduce.dst, r0 = s->u.reduce.src; break;
    case TILEC_ST_CUMSUM: wr = s->u.cumsum.dst, r0 = s->u.cumsum.src; break;
    case TILEC_ST_ATOMIC: wr = s->u.atomic.buf; break;
    case TILEC_ST_PRINT: r0 = s->u.print.buf; break;
    default: break;
    }
    if (touch_buf(q, wr) || ((q->how & CG_READ) && (touch_buf(q, r0) || touch_buf(q, r1))))
        return TILEC_WALK_STOP;
    return TILEC_WALK_CONTINUE;
}

static int touch_expr(tilec_ir_walk_t *w, tilec_ir_expr_t *e)
{
    const touch_q_t *q = w->user;
    if ((q->how & CG_READ) && e->kind == TILEC_EX_LOAD && touch_buf(q, e->u.load.buf))
        return TILEC_WALK_STOP;
    return TILEC_WALK_CONTINUE;
}

int cg_touches(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b, const tilec_ir_stmt_t *skip, int how)
{
    touch_q_t q = {b, skip, how};
    tilec_ir_walk_t w;
    tilec_ir_stmt_t *list = (tilec_ir_stmt_t *)s;
    memset(&w, 0, sizeof w);
    w.stmt_pre = touch_stmt;
    w.expr_pre = touch_expr;
    w.user = &q;
    return tilec_ir_walk_block(&w, &list) != 0; /* stopped, or too deep */
}

int cg_expr_loads(const tilec_ir_expr_t *e, const tilec_ir_buffer_t *b)
{
    touch_q_t q = {b, NULL, CG_READ};
    tilec_ir_walk_t w;
    tilec_ir_expr_t *slot = (tilec_ir_expr_t *)e;
    memset(&w, 0, sizeof w);
    w.expr_pre = touch_expr;
    w.user = &q;
    return e && tilec_ir_walk_expr(&w, &slot) != 0;
}

int cg_whole_region(const tilec_ir_region_t *r)
{
    for (int d = 0; d < r->buf->ndim; d++) {
        int64_t v;
        if (!tilec_ir_is_const_int(r->base[d], &v) || v != 0 || r->extent[d] != cg_const_dim(r->buf, d))
            return 0;
    }
    return 1;
}
