/*
 * cpu_codegen.c — tile IR to C for the CPU backend.
 *
 * One block of the kernel becomes one C function, tilec_block(bx, by, bz,
 * args, syms, scratch); the launcher (cpu_plugin.c) runs blocks on a pool of
 * host threads, one block from start to end on one thread, so T.sync_threads
 * is a no-op and every on-chip buffer (shared, fragment, local, var) is a
 * per-block array: small local/var buffers are C locals, the others live in
 * the thread's 64-byte-aligned scratch area.  Alongside come tilec_grid,
 * tilec_scratch_size and tilec_param_bytes, all functions of the symbol
 * values so T.dynamic shapes work.
 *
 * Value representation: integers and float32/float64 are their C types;
 * float16 and bfloat16 are stored as uint16_t and computed in float
 * (rounded to the 16-bit format on a cast and on every store); bool is
 * stored as uint8_t and computed as int.  Global offsets are int64.
 * Scalar expressions are written by the SDK's shared C-family emitter
 * (tilec/cexpr.h) through the C hooks of cg_expr() below.
 * Integer division and modulo never trap (x/0 == 0, see cpu_prelude.h);
 * signed int32/int64 overflow in index arithmetic is undefined, as in CUDA
 * C, which lets the C compiler vectorize the usual affine accesses.
 *
 * Tile operations: T.Parallel loops become plain nested loops with an
 * "ivdep" pragma; COPY and FILL check once whether a GLOBAL region lies
 * fully inside its tensor and then run a straight (memcpy when contiguous)
 * loop, else a per-element guarded one (zero reads, skipped writes); GEMM
 * converts/transposes operands into the scratch area when needed and calls a
 * register-blocked micro-kernel; REDUCE/CUMSUM are loops over
 * (outer, reduced, inner) views; ATOMIC on GLOBAL uses __atomic builtins
 * (compare-and-swap loops for floats).
 *
 * Generated names never come from the program: buffer i is b<i>, var i is
 * v<i>, so any IR name is safe.  Nesting depth is bounded (CG_MAX_DEPTH).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_cg.h"
#include "cpu_internal.h"
#include "tilec/cexpr.h"
#include "cpu_prelude.h"

/* LOCAL/VAR buffers up to this many bytes become C locals. */
#define CG_LOCAL_MAX_BYTES 1024

/* ---- generator state (cpu_cg.h) -------------------------------------------- */

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

/* printf into the arena: the building block of expression strings. */
static char *vfmt(void *u, const char *f, va_list ap)
{
    cg_t *g = u;
    char *s = tilec_cexpr_vprintf(&g->ar, f, ap);
    if (!s) {
        cg_fail(g, "out of memory");
        return "0";
    }
    return s;
}

char *cg_fmt(cg_t *g, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = vfmt(g, f, ap);
    va_end(ap);
    return s;
}

void cg_line(cg_t *g, const char *f, ...)
{
    for (int i = 0; i < g->ind; i++)
        tilec_sdk_str_putn(g->o, "  ", 2);
    va_list ap;
    va_start(ap, f);
    tilec_sdk_str_vprintf(g->o, f, ap);
    va_end(ap);
    tilec_sdk_str_putn(g->o, "\n", 1);
}

static int newtmp(cg_t *g) { return g->tmp++; }

/* ---- types ----------------------------------------------------------------- */

static int valid_dtype(int t) { return t >= 0 && t < TILEC_DTYPE_COUNT; }

static const char *st_type(tilec_dtype_t t) /* storage */
{
    switch (t) {
    case TILEC_BOOL: return "uint8_t";
    case TILEC_INT8: return "int8_t";
    case TILEC_INT16: return "int16_t";
    case TILEC_INT32: return "int32_t";
    case TILEC_INT64: return "int64_t";
    case TILEC_UINT8: return "uint8_t";
    case TILEC_UINT16: return "uint16_t";
    case TILEC_UINT32: return "uint32_t";
    case TILEC_UINT64: return "uint64_t";
    case TILEC_FLOAT16: return "uint16_t";
    case TILEC_BFLOAT16: return "uint16_t";
    case TILEC_FLOAT32: return "float";
    case TILEC_FLOAT64: return "double";
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: return "uint8_t";
    default: return "int";
    }
}

const char *cg_ct_type(tilec_dtype_t t) /* compute */
{
    switch (t) {
    case TILEC_BOOL: return "int";
    case TILEC_FLOAT16:
    case TILEC_BFLOAT16:
    case TILEC_FLOAT8_E4M3FN:
    case TILEC_FLOAT8_E5M2: return "float";
    default: return st_type(t);
    }
}

static size_t st_size(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_BOOL: case TILEC_INT8: case TILEC_UINT8: case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: return 1;
    case TILEC_INT16: case TILEC_UINT16: case TILEC_FLOAT16: case TILEC_BFLOAT16: return 2;
    case TILEC_INT32: case TILEC_UINT32: case TILEC_FLOAT32: return 4;
    default: return 8;
    }
}

static int is_flt(tilec_dtype_t t) { return tilec_dtype_is_float(t); }
/* 8-bit floats: compute in float, store one byte through the prelude's converters */
static const char *f8_from(tilec_dtype_t t) { return t == TILEC_FLOAT8_E4M3FN ? "tc_e42f" : "tc_e52f"; }
static const char *f8_to(tilec_dtype_t t) { return t == TILEC_FLOAT8_E4M3FN ? "tc_d2e4" : "tc_d2e5"; }
static int is_sint(tilec_dtype_t t) { return t >= TILEC_INT8 && t <= TILEC_INT64; }

/* ---- conversions between representations ------------------------------------ */

/* Value v of compute type for dtype s, as a value of dtype t (rounded to t). */
const char *cg_conv(cg_t *g, const char *v, tilec_dtype_t s, tilec_dtype_t t)
{
    if (s == t)
        return v;
    switch (t) {
    case TILEC_BOOL: return cg_fmt(g, "((%s) != 0)", v);
    case TILEC_FLOAT16:
        if (s == TILEC_FLOAT64 || !is_flt(s))
            return cg_fmt(g, "tc_h2f(tc_d2h((double)(%s)))", v);
        return cg_fmt(g, "tc_rh(%s)", v);
    case TILEC_BFLOAT16:
        if (s == TILEC_FLOAT64 || !is_flt(s))
            return cg_fmt(g, "tc_b2f(tc_d2b((double)(%s)))", v);
        return cg_fmt(g, "tc_rb(%s)", v);
    case TILEC_FLOAT32:
        if (s == TILEC_FLOAT16 || s == TILEC_BFLOAT16 || tilec_dtype_is_float8(s))
            return v; /* already a float holding a representable value */
        return cg_fmt(g, "((float)(%s))", v);
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2:
        return cg_fmt(g, "%s(%s((double)(%s)))", f8_from(t), f8_to(t), v);
    default:
        return cg_fmt(g, "((%s)(%s))", cg_ct_type(t), v);
    }
}

/* Value v of compute type for dtype s, converted to t's storage type. */
const char *cg_to_store(cg_t *g, const char *v, tilec_dtype_t s, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_FLOAT16:
        if (s == TILEC_FLOAT64 || !is_flt(s))
            return cg_fmt(g, "tc_d2h((double)(%s))", v);
        return cg_fmt(g, "tc_f2h(%s)", v);
    case TILEC_BFLOAT16:
        if (s == TILEC_FLOAT64 || !is_flt(s))
            return cg_fmt(g, "tc_d2b((double)(%s))", v);
        return cg_fmt(g, "tc_f2b(%s)", v);
    case TILEC_BOOL: return cg_fmt(g, "((uint8_t)((%s) != 0))", v);
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: return cg_fmt(g, "%s((double)(%s))", f8_to(t), v);
    default: return cg_conv(g, v, s, t);
    }
}

/* Stored value v of dtype t to its compute type. */
const char *cg_from_store(cg_t *g, const char *v, tilec_dtype_t t)
{
    switch (t) {
    case TILEC_FLOAT16: return cg_fmt(g, "tc_h2f(%s)", v);
    case TILEC_BFLOAT16: return cg_fmt(g, "tc_b2f(%s)", v);
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: return cg_fmt(g, "%s(%s)", f8_from(t), v);
    case TILEC_BOOL: return cg_fmt(g, "((int)((%s) != 0))", v);
    default: return v;
    }
}

/* ---- literals ------------------------------------------------------------------ */

static const char *int_lit(cg_t *g, int64_t v)
{
    if (v == INT64_MIN)
        return "(-INT64_C(9223372036854775807) - 1)";
    return cg_fmt(g, "INT64_C(%" PRId64 ")", v);
}

static const char *flt_lit(cg_t *g, double v, tilec_dtype_t t)
{
    int dbl = t == TILEC_FLOAT64;
    if (t == TILEC_FLOAT16)
        v = tilec_f16_to_f32(tilec_f64_to_f16(v));
    else if (t == TILEC_BFLOAT16)
        v = tilec_bf16_to_f32(tilec_f64_to_bf16(v));
    else if (t == TILEC_FLOAT8_E4M3FN)
        v = tilec_f8e4m3fn_to_f32(tilec_f64_to_f8e4m3fn(v));
    else if (t == TILEC_FLOAT8_E5M2)
        v = tilec_f8e5m2_to_f32(tilec_f64_to_f8e5m2(v));
    else if (t == TILEC_FLOAT32)
        v = (float)v;
    if (isnan(v))
        return dbl ? "((double)NAN)" : "((float)NAN)";
    if (isinf(v))
        return v > 0 ? (dbl ? "((double)INFINITY)" : "((float)INFINITY)")
                     : (dbl ? "(-(double)INFINITY)" : "(-(float)INFINITY)");
    return cg_fmt(g, dbl ? "(%a)" : "(%af)", v);
}

/* ---- buffers ------------------------------------------------------------------- */

int cg_buf_ok(cg_t *g, const tilec_ir_buffer_t *b)
{
    if (!b || b->id < 0 || b->id >= g->k->nbufs || g->k->bufs[b->id] != b) {
        cg_fail(g, "reference to a buffer not declared by the kernel");
        return 0;
    }
    return 1;
}

/* Dimension d of buffer b as an int64 C expression (literal when constant). */
const char *cg_dim(cg_t *g, const tilec_ir_buffer_t *b, int d)
{
    int64_t c;
    if (tilec_ir_is_const_int(b->shape[d], &c))
        return cg_fmt(g, "INT64_C(%" PRId64 ")", c);
    return cg_fmt(g, "b%d_s%d", b->id, d);
}

/* Row-major offset of idx (C expressions) in b, int64. */
static const char *offset_of(cg_t *g, const tilec_ir_buffer_t *b, const char *const *idx)
{
    if (b->ndim == 0)
        return "0";
    const char *o = cg_fmt(g, "(int64_t)(%s)", idx[0]);
    for (int d = 1; d < b->ndim; d++)
        o = cg_fmt(g, "(%s * %s + (int64_t)(%s))", o, cg_dim(g, b, d), idx[d]);
    return o;
}

static const char *offset_of_exprs(cg_t *g, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *ix)
{
    const char *idx[TILEC_IR_MAX_DIMS];
    if (b->ndim > TILEC_IR_MAX_DIMS || (b->ndim > 0 && !ix)) {
        cg_fail(g, "buffer access with a bad index list");
        return "0";
    }
    for (int d = 0; d < b->ndim; d++)
        idx[d] = cg_expr(g, ix[d]);
    return offset_of(g, b, idx);
}

/* ---- expressions ------------------------------------------------------------------ */

/* Hooks of the shared C-family emitter (tilec/cexpr.h) for plain C. */
static void cx_fail(void *u, const char *msg) { cg_fail(u, "%s", msg); }
static const char *cx_ctype(void *u, tilec_dtype_t t) { (void)u; return cg_ct_type(t); }

static const char *cx_int_lit(void *u, int64_t v, tilec_dtype_t t)
{
    if (t == TILEC_BOOL)
        return v ? "1" : "0";
    return cg_fmt(u, "((%s)%s)", cg_ct_type(t), int_lit(u, v));
}

static const char *cx_flt_lit(void *u, double v, tilec_dtype_t t) { return flt_lit(u, v, t); }

static const char *cx_load(void *u, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    cg_t *g = u;
    if (!cg_buf_ok(g, b))
        return NULL;
    for (int i = 0; i < g->nhoist; i++)
        if (g->hoist[i].idx == idx)
            return g->hoist[i].name;
    const char *off = offset_of_exprs(g, b, idx);
    return cg_from_store(g, cg_fmt(g, "b%d[%s]", b->id, off), b->dtype);
}

static const char *cx_conv(void *u, const char *v, tilec_dtype_t s, tilec_dtype_t t) { return cg_conv(u, v, s, t); }

/* float exp/exp2/log/log2/tanh: the prelude's vectorizable versions */
static const char *cx_math_name(void *u, const char *base, int dbl)
{
    (void)u;
    static const char *const own[][2] = {{"exp", "tc_expf"}, {"exp2", "tc_exp2f"}, {"log", "tc_logf"},
                                         {"log2", "tc_log2f"}, {"tanh", "tc_tanhf"}};
    if (dbl)
        return NULL;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (strcmp(base, own[i][0]) == 0)
            return own[i][1];
    return NULL;
}

const char *cg_expr(cg_t *g, const tilec_ir_expr_t *e)
{
    const tilec_cexpr_t x = {
        .u = g, .k = g->k, .failed = &g->failed, .depth = &g->depth, .max_depth = CG_MAX_DEPTH * 4,
        .vfmt = vfmt, .fail = cx_fail, .ctype = cx_ctype, .int_lit = cx_int_lit, .flt_lit = cx_flt_lit,
        .load = cx_load, .conv = cx_conv, .math_name = cx_math_name,
        .uint32_name = "uint32_t", .uint64_name = "uint64_t", .float32_name = "float",
        .float_lit_via = TILEC_FLOAT64, .int_math_via_double = 1, .bool_minmax_ne0 = 1,
        .msg_missing = "missing expression", .msg_bad_dtype = "expression with an invalid dtype",
    };
    return tilec_cexpr_emit(&x, e);
}

/* ---- regions (COPY, FILL) ------------------------------------------------------- */

/* Declares int64 locals holding the region's base indices; names r<t>_<d>. */
static int region_bases(cg_t *g, const tilec_ir_region_t *r)
{
    if (!cg_buf_ok(g, r->buf))
        return -1;
    if (r->buf->ndim > TILEC_IR_MAX_DIMS || (r->buf->ndim > 0 && (!r->base || !r->extent))) {
        cg_fail(g, "region without bases or extents");
        return -1;
    }
    int t = newtmp(g);
    for (int d = 0; d < r->buf->ndim; d++) {
        if (r->extent[d] < 1) {
            cg_fail(g, "region extent %" PRId64 " < 1", r->extent[d]);
            return -1;
        }
        cg_line(g, "const int64_t r%d_%d = (int64_t)(%s);", t, d, cg_expr(g, r->base[d]));
    }
    return t;
}

/* C condition: region fully inside its buffer. */
static const char *region_inside(cg_t *g, const tilec_ir_region_t *r, int t)
{
    const char *c = "1";
    for (int d = 0; d < r->buf->ndim; d++)
        c = cg_fmt(g, "%s && r%d_%d >= 0 && r%d_%d + %" PRId64 " <= %s", c, t, d, t, d, r->extent[d],
                cg_dim(g, r->buf, d));
    return c;
}

/* Index expressions of the region's element for loop variables lv[] where
 * dims[] maps region dimensions to loop levels (-1: extent-1 dimension). */
static void region_index(cg_t *g, const tilec_ir_region_t *r, int t, const int *map,
                         const char *const *lv, const char **idx)
{
    for (int d = 0; d < r->buf->ndim; d++)
        idx[d] = map[d] < 0 ? cg_fmt(g, "r%d_%d", t, d) : cg_fmt(g, "(r%d_%d + %s)", t, d, lv[map[d]]);
}

static const char *index_inside(cg_t *g, const tilec_ir_buffer_t *b, const char *const *idx)
{
    const char *c = "1";
    for (int d = 0; d < b->ndim; d++)
        c = cg_fmt(g, "%s && (%s) >= 0 && (%s) < %s", c, idx[d], idx[d], cg_dim(g, b, d));
    return c;
}

/* Loop nest header over extents ext[0..n-1] with variables lv; the innermost
 * gets the ivdep pragma when allowed.  Returns the number of braces opened. */
static int open_loops(cg_t *g, int n, const int64_t *ext, const char *const *lv, int ivdep)
{
    for (int l = 0; l < n; l++) {
        if (l == n - 1 && ivdep)
            cg_line(g, "TC_IVDEP");
        cg_line(g, "for (int64_t %s = 0; %s < %" PRId64 "; ++%s) {", lv[l], lv[l], ext[l], lv[l]);
        g->ind++;
    }
    return n;
}

static void close_loops(cg_t *g, int n)
{
    for (int l = 0; l < n; l++) {
        g->ind--;
        cg_line(g, "}");
    }
}

static int is_global(const tilec_ir_buffer_t *b) { return b->scope == TILEC_SCOPE_GLOBAL; }

static void gen_copy_body(cg_t *g, const tilec_ir_stmt_t *s, int ts, int td, int n,
                          const int64_t *ext, const int *smap, const int *dmap, int guarded,
                          int linear, const int64_t *sext, const int64_t *dext)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *sb = src->buf, *db = dst->buf;
    const char *lv[TILEC_IR_MAX_DIMS] = {0};
    int t = newtmp(g);
    for (int l = 0; l < n; l++)
        lv[l] = cg_fmt(g, "i%d_%d", t, l);
    const char *sidx[TILEC_IR_MAX_DIMS], *didx[TILEC_IR_MAX_DIMS];
    int same = sb == db;

    if (linear) {
        /* different non-1 extents with the same element count: walk element
         * k and unflatten it in each region */
        cg_line(g, "for (int64_t %s = 0; %s < %" PRId64 "; ++%s) {", lv[0], lv[0], ext[0], lv[0]);
        g->ind++;
        const char *rem = lv[0];
        for (int d = sb->ndim - 1; d >= 0; d--) {
            sidx[d] = cg_fmt(g, "(r%d_%d + (%s) %% %" PRId64 ")", ts, d, rem, sext[d]);
            rem = cg_fmt(g, "((%s) / %" PRId64 ")", rem, sext[d]);
        }
        rem = lv[0];
        for (int d = db->ndim - 1; d >= 0; d--) {
            didx[d] = cg_fmt(g, "(r%d_%d + (%s) %% %" PRId64 ")", td, d, rem, dext[d]);
            rem = cg_fmt(g, "((%s) / %" PRId64 ")", rem, dext[d]);
        }
    } else {
        region_index(g, src, ts, smap, lv, sidx);
        region_index(g, dst, td, dmap, lv, didx);
        /* contiguous rows of the same storage type: memcpy the innermost */
        int contig = n > 0 && smap[sb->ndim - 1] == n - 1 && dmap[db->ndim - 1] == n - 1 &&
                     !guarded && strcmp(st_type(sb->dtype), st_type(db->dtype)) == 0 &&
                     sb->dtype == db->dtype;
        if (contig && ext[n - 1] > 1) {
            open_loops(g, n - 1, ext, lv, 0);
            const char *lv2[TILEC_IR_MAX_DIMS];
            memcpy(lv2, lv, sizeof lv2);
            lv2[n - 1] = "0";
            region_index(g, src, ts, smap, lv2, sidx);
            region_index(g, dst, td, dmap, lv2, didx);
            cg_line(g, "%s(&b%d[%s], &b%d[%s], (size_t)%" PRId64 " * sizeof(%s));",
                 same ? "memmove" : "memcpy", db->id, offset_of(g, db, didx), sb->id,
                 offset_of(g, sb, sidx), ext[n - 1], st_type(db->dtype));
            close_loops(g, n - 1);
            return;
        }
        /* contiguous float32 rows to float16: the prelude's row converter
         * (the hardware's instruction where there is one) */
        int f2h = sb->dtype == TILEC_FLOAT32 && db->dtype == TILEC_FLOAT16;
        if (f2h && !same && n > 0 && smap[sb->ndim - 1] == n - 1 && dmap[db->ndim - 1] == n - 1 &&
            !guarded && ext[n - 1] > 1) {
            open_loops(g, n - 1, ext, lv, 0);
            const char *lv2[TILEC_IR_MAX_DIMS];
            memcpy(lv2, lv, sizeof lv2);
            lv2[n - 1] = "0";
            region_index(g, src, ts, smap, lv2, sidx);
            region_index(g, dst, td, dmap, lv2, didx);
            cg_line(g, "tc_f2h_n(&b%d[%s], &b%d[%s], %" PRId64 ");", db->id,
                    offset_of(g, db, didx), sb->id, offset_of(g, sb, sidx), ext[n - 1]);
            close_loops(g, n - 1);
            return;
        }
        open_loops(g, n, ext, lv, !same);
    }
    const char *val = cg_from_store(g, cg_fmt(g, "b%d[%s]", sb->id, offset_of(g, sb, sidx)), sb->dtype);
    if (guarded && is_global(sb))
        val = cg_fmt(g, "((%s) ? %s : (%s)0)", index_inside(g, sb, sidx), val, cg_ct_type(sb->dtype));
    const char *store = cg_fmt(g, "b%d[%s] = %s;", db->id, offset_of(g, db, didx),
                            cg_to_store(g, val, sb->dtype, db->dtype));
    if (guarded && is_global(db))
        cg_line(g, "if (%s) %s", index_inside(g, db, didx), store);
    else
        cg_line(g, "%s", store);
    close_loops(g, linear ? 1 : n);
}

static void gen_copy(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    cg_line(g, "{ /* copy */");
    g->ind++;
    int ts = region_bases(g, src), td = ts < 0 ? -1 : region_bases(g, dst);
    if (ts < 0 || td < 0)
        return;
    int smap[TILEC_IR_MAX_DIMS], dmap[TILEC_IR_MAX_DIMS];
    int64_t sext[TILEC_IR_MAX_DIMS], dext[TILEC_IR_MAX_DIMS];
    int ns = 0, nd = 0;
    int64_t stotal = 1, dtotal = 1;
    for (int d = 0; d < src->buf->ndim; d++) {
        smap[d] = src->extent[d] == 1 ? -1 : ns;
        if (src->extent[d] != 1)
            sext[ns++] = src->extent[d];
        if (stotal > INT64_MAX / src->extent[d]) {
            cg_fail(g, "copy region too large");
            return;
        }
        stotal *= src->extent[d];
    }
    for (int d = 0; d < dst->buf->ndim; d++) {
        dmap[d] = dst->extent[d] == 1 ? -1 : nd;
        if (dst->extent[d] != 1)
            dext[nd++] = dst->extent[d];
        if (dtotal > INT64_MAX / dst->extent[d]) {
            cg_fail(g, "copy region too large");
            return;
        }
        dtotal *= dst->extent[d];
    }
    int linear = 0;
    if (ns != nd || memcmp(sext, dext, sizeof(int64_t) * (size_t)ns) != 0) {
        if (stotal != dtotal) {
            cg_fail(g, "copy between regions of %" PRId64 " and %" PRId64 " elements", stotal,
                    dtotal);
            return;
        }
        linear = 1;
    }
    int64_t ext1[1] = {stotal};
    const int64_t *ext = linear ? ext1 : sext;
    int n = linear ? 1 : ns;
    /* for the linear walk, unflatten with the full region extents */
    int64_t sfull[TILEC_IR_MAX_DIMS], dfull[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < src->buf->ndim; d++)
        sfull[d] = src->extent[d];
    for (int d = 0; d < dst->buf->ndim; d++)
        dfull[d] = dst->extent[d];
    int guard = is_global(src->buf) || is_global(dst->buf);
    if (guard) {
        const char *c = "1";
        if (is_global(src->buf))
            c = cg_fmt(g, "%s && %s", c, region_inside(g, src, ts));
        if (is_global(dst->buf))
            c = cg_fmt(g, "%s && %s", c, region_inside(g, dst, td));
        cg_line(g, "if (%s) {", c);
        g->ind++;
        gen_copy_body(g, s, ts, td, n, ext, smap, dmap, 0, linear, sfull, dfull);
        g->ind--;
        cg_line(g, "} else {");
        g->ind++;
        gen_copy_body(g, s, ts, td, n, ext, smap, dmap, 1, linear, sfull, dfull);
        g->ind--;
        cg_line(g, "}");
    } else {
        gen_copy_body(g, s, ts, td, n, ext, smap, dmap, 0, linear, sfull, dfull);
    }
    g->ind--;
    cg_line(g, "}");
}

static void gen_fill(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_region_t *r = &s->u.fill.dst;
    const tilec_ir_buffer_t *b = r->buf;
    cg_line(g, "{ /* fill */");
    g->ind++;
    int t = region_bases(g, r);
    if (t < 0 || !s->u.fill.value)
        { cg_fail(g, "fill without a region or value"); return; }
    const tilec_ir_expr_t *v = s->u.fill.value;
    int tv = newtmp(g);
    cg_line(g, "const %s f%d = %s;", st_type(b->dtype), tv,
         cg_to_store(g, cg_expr(g, v), v->dtype, b->dtype));
    const char *lv[TILEC_IR_MAX_DIMS], *idx[TILEC_IR_MAX_DIMS];
    int map[TILEC_IR_MAX_DIMS];
    for (int d = 0; d < b->ndim; d++) {
        lv[d] = cg_fmt(g, "i%d_%d", tv, d);
        map[d] = d;
    }
    region_index(g, r, t, map, lv, idx);
    const char *st = cg_fmt(g, "b%d[%s] = f%d;", b->id, offset_of(g, b, idx), tv);
    if (is_global(b)) {
        cg_line(g, "if (%s) {", region_inside(g, r, t));
        g->ind++;
        open_loops(g, b->ndim, r->extent, lv, 1);
        cg_line(g, "%s", st);
        close_loops(g, b->ndim);
        g->ind--;
        cg_line(g, "} else {");
        g->ind++;
        open_loops(g, b->ndim, r->extent, lv, 1);
        cg_line(g, "if (%s) %s", index_inside(g, b, idx), st);
        close_loops(g, b->ndim);
        g->ind--;
        cg_line(g, "}");
    } else {
        open_loops(g, b->ndim, r->extent, lv, 1);
        cg_line(g, "%s", st);
        close_loops(g, b->ndim);
    }
    g->ind--;
    cg_line(g, "}");
}

/* ---- REDUCE, CUMSUM ------------------------------------------------------------------ */

/* outer/len/inner extents of b around dimension d, as C expressions */
static void split_dims(cg_t *g, const tilec_ir_buffer_t *b, int d, const char **outer,
                       const char **len, const char **inner)
{
    *outer = "INT64_C(1)";
    *inner = "INT64_C(1)";
    for (int i = 0; i < d; i++)
        *outer = cg_fmt(g, "%s * %s", *outer, cg_dim(g, b, i));
    for (int i = d + 1; i < b->ndim; i++)
        *inner = cg_fmt(g, "%s * %s", *inner, cg_dim(g, b, i));
    *len = cg_dim(g, b, d);
}

static const char *type_min(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: return "INT8_MIN";
    case TILEC_INT16: return "INT16_MIN";
    case TILEC_INT32: return "INT32_MIN";
    case TILEC_INT64: return "INT64_MIN";
    case TILEC_FLOAT64: return "(-(double)INFINITY)";
    case TILEC_FLOAT16: case TILEC_BFLOAT16: case TILEC_FLOAT32:
    case TILEC_FLOAT8_E4M3FN: case TILEC_FLOAT8_E5M2: return "(-(float)INFINITY)";
    default: return "0";
    }
}

static const char *type_max(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_INT8: return "INT8_MAX";
    case TILEC_INT16: return "INT16_MAX";
    case TILEC_INT32: return "INT32_MAX";
    case TILEC_INT64: return "INT64_MAX";
    case TILEC_UINT8: return "UINT8_MAX";
    case TILEC_UINT16: return "UINT16_MAX";
    case TILEC_UINT32: return "UINT32_MAX";
    case TILEC_UINT64: return "UINT64_MAX";
    case TILEC_BOOL: return "1";
    case TILEC_FLOAT64: return "((double)INFINITY)";
    default: return "((float)INFINITY)";
    }
}

static const char *absval(cg_t *g, const char *x, tilec_dtype_t t)
{
    if (t == TILEC_FLOAT64)
        return cg_fmt(g, "fabs(%s)", x);
    if (is_flt(t))
        return cg_fmt(g, "fabsf(%s)", x);
    if (is_sint(t))
        return cg_fmt(g, "tc_abs_%s(%s)", tilec_cexpr_isfx(t), x);
    return x;
}

static const char *maxof(cg_t *g, const char *a, const char *b, tilec_dtype_t t, int mx)
{
    if (t == TILEC_FLOAT64)
        return cg_fmt(g, "tc_%sd(%s, %s)", mx ? "max" : "min", a, b);
    if (is_flt(t))
        return cg_fmt(g, "tc_%sf(%s, %s)", mx ? "max" : "min", a, b);
    return cg_fmt(g, "tc_%s_%s(%s, %s)", mx ? "max" : "min", tilec_cexpr_isfx(t), a, b);
}

static const char *addof(cg_t *g, const char *a, const char *b, tilec_dtype_t t)
{
    if (is_flt(t) || t == TILEC_INT32 || t == TILEC_INT64 || t == TILEC_UINT32 || t == TILEC_UINT64)
        return cg_fmt(g, "(%s + %s)", a, b);
    return cg_fmt(g, "((%s)((uint32_t)(%s) + (uint32_t)(%s)))", cg_ct_type(t), a, b);
}

static void gen_reduce(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *S = s->u.reduce.src, *D = s->u.reduce.dst;
    if (!cg_buf_ok(g, S) || !cg_buf_ok(g, D))
        return;
    int dimn = s->u.reduce.dim;
    if (dimn < 0 || dimn >= S->ndim)
        { cg_fail(g, "reduce dimension %d out of range", dimn); return; }
    int op = s->u.reduce.op;
    if (op < TILEC_RED_SUM || op > TILEC_RED_ABSMAX)
        { cg_fail(g, "unknown reduce op %d", op); return; }
    tilec_dtype_t t = D->dtype;
    if (t == TILEC_BOOL)
        t = TILEC_INT32;
    const char *T = cg_ct_type(t);
    const char *outer, *len, *inner;
    split_dims(g, S, dimn, &outer, &len, &inner);
    cg_line(g, "{ /* reduce_%s dim %d */", tilec_reduce_op_name((tilec_reduce_op_t)op), dimn);
    g->ind++;
    cg_line(g, "const int64_t RO = %s, RL = %s, RI = %s;", outer, len, inner);
    cg_line(g, "for (int64_t o = 0; o < RO; ++o)");
    cg_line(g, "  for (int64_t ii = 0; ii < RI; ++ii) {");
    g->ind += 2;
    const char *init = op == TILEC_RED_MAX ? type_min(t) : op == TILEC_RED_MIN ? type_max(t) : "0";
    cg_line(g, "%s acc = (%s)%s;", T, T, init);
    const char *x = cg_conv(g, cg_from_store(g, cg_fmt(g, "b%d[(o * RL + r) * RI + ii]", S->id), S->dtype),
                         S->dtype, t);
    const char *comb, *lcomb, *ccomb;
    switch (op) {
    case TILEC_RED_SUM: comb = addof(g, "acc", "x", t); break;
    case TILEC_RED_ABSSUM: comb = addof(g, "acc", absval(g, "x", t), t); break;
    case TILEC_RED_MAX: comb = maxof(g, "acc", "x", t, 1); break;
    case TILEC_RED_MIN: comb = maxof(g, "acc", "x", t, 0); break;
    default: comb = maxof(g, "acc", absval(g, "x", t), t, 1); break;
    }
    if (is_flt(t)) {
        /* Float sums do not vectorize in order (no -ffast-math), so a
         * contiguous row (RI == 1) is reduced in TC_RLANES interleaved
         * partial results, combined at the end (the order a GPU tree
         * reduction also changes); the same for max/min, which then
         * vectorize too. */
        const char *xl = cg_conv(g, cg_from_store(g, cg_fmt(g, "b%d[o * RL + r + l]", S->id), S->dtype),
                              S->dtype, t);
        switch (op) {
        case TILEC_RED_SUM: lcomb = addof(g, "lane[l]", "x", t); ccomb = addof(g, "acc", "lane[l]", t); break;
        case TILEC_RED_ABSSUM: lcomb = addof(g, "lane[l]", absval(g, "x", t), t); ccomb = addof(g, "acc", "lane[l]", t); break;
        case TILEC_RED_MAX: lcomb = maxof(g, "lane[l]", "x", t, 1); ccomb = maxof(g, "acc", "lane[l]", t, 1); break;
        case TILEC_RED_MIN: lcomb = maxof(g, "lane[l]", "x", t, 0); ccomb = maxof(g, "acc", "lane[l]", t, 0); break;
        default: lcomb = maxof(g, "lane[l]", absval(g, "x", t), t, 1); ccomb = maxof(g, "acc", "lane[l]", t, 1); break;
        }
        cg_line(g, "int64_t r = 0;");
        cg_line(g, "if (RI == 1 && RL >= 2 * TC_RLANES) {");
        g->ind++;
        cg_line(g, "%s lane[TC_RLANES];", T);
        cg_line(g, "for (int l = 0; l < TC_RLANES; ++l) lane[l] = (%s)%s;", T, init);
        cg_line(g, "for (; r + TC_RLANES <= RL; r += TC_RLANES)");
        cg_line(g, "  TC_IVDEP for (int l = 0; l < TC_RLANES; ++l) { const %s x = %s; lane[l] = %s; }", T, xl, lcomb);
        cg_line(g, "for (int l = 0; l < TC_RLANES; ++l) acc = %s;", ccomb);
        g->ind--;
        cg_line(g, "}");
        cg_line(g, "for (; r < RL; ++r) {");
    } else {
        cg_line(g, "for (int64_t r = 0; r < RL; ++r) {");
    }
    g->ind++;
    cg_line(g, "%s x = %s;", T, x);
    cg_line(g, "acc = %s;", comb);
    g->ind--;
    cg_line(g, "}");
    const char *dv = cg_conv(g, cg_from_store(g, cg_fmt(g, "b%d[o * RI + ii]", D->id), D->dtype), D->dtype, t);
    if (!s->u.reduce.clear) {
        const char *c2;
        switch (op) {
        case TILEC_RED_SUM:
        case TILEC_RED_ABSSUM: c2 = addof(g, dv, "acc", t); break;
        case TILEC_RED_MIN: c2 = maxof(g, dv, "acc", t, 0); break;
        default: c2 = maxof(g, dv, "acc", t, 1); break;
        }
        cg_line(g, "acc = %s;", c2);
    }
    cg_line(g, "b%d[o * RI + ii] = %s;", D->id, cg_to_store(g, "acc", t, D->dtype));
    g->ind -= 2;
    cg_line(g, "  }");
    g->ind--;
    cg_line(g, "}");
}

static void gen_cumsum(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *S = s->u.cumsum.src, *D = s->u.cumsum.dst;
    if (!cg_buf_ok(g, S) || !cg_buf_ok(g, D))
        return;
    int dimn = s->u.cumsum.dim;
    if (dimn < 0 || dimn >= S->ndim)
        { cg_fail(g, "cumsum dimension %d out of range", dimn); return; }
    tilec_dtype_t t = D->dtype == TILEC_BOOL ? TILEC_INT32 : D->dtype;
    const char *T = cg_ct_type(t);
    const char *outer, *len, *inner;
    split_dims(g, S, dimn, &outer, &len, &inner);
    cg_line(g, "{ /* cumsum dim %d%s */", dimn, s->u.cumsum.reverse ? " reverse" : "");
    g->ind++;
    cg_line(g, "const int64_t RO = %s, RL = %s, RI = %s;", outer, len, inner);
    cg_line(g, "for (int64_t o = 0; o < RO; ++o)");
    cg_line(g, "  for (int64_t ii = 0; ii < RI; ++ii) {");
    g->ind += 2;
    cg_line(g, "%s acc = 0;", T);
    cg_line(g, "for (int64_t q = 0; q < RL; ++q) {");
    g->ind++;
    cg_line(g, "const int64_t r = %s;", s->u.cumsum.reverse ? "RL - 1 - q" : "q");
    cg_line(g, "acc = %s;",
         addof(g, "acc",
               cg_conv(g, cg_from_store(g, cg_fmt(g, "b%d[(o * RL + r) * RI + ii]", S->id), S->dtype),
                    S->dtype, t),
               t));
    cg_line(g, "b%d[(o * RL + r) * RI + ii] = %s;", D->id, cg_to_store(g, "acc", t, D->dtype));
    g->ind--;
    cg_line(g, "}");
    g->ind -= 2;
    cg_line(g, "  }");
    g->ind--;
    cg_line(g, "}");
}

/* ---- ATOMIC, PRINT --------------------------------------------------------------------- */

static void gen_atomic(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *b = s->u.atomic.buf;
    if (!cg_buf_ok(g, b) || !s->u.atomic.value)
        { cg_fail(g, "atomic without a buffer or value"); return; }
    int op = s->u.atomic.op;
    if (op < TILEC_ATOMIC_ADD || op > TILEC_ATOMIC_MIN)
        { cg_fail(g, "unknown atomic op %d", op); return; }
    const char *opn = op == TILEC_ATOMIC_ADD ? "add" : op == TILEC_ATOMIC_MAX ? "max" : "min";
    const char *off = offset_of_exprs(g, b, s->u.atomic.idx);
    const tilec_ir_expr_t *v = s->u.atomic.value;
    tilec_dtype_t t = b->dtype;
    if (tilec_dtype_is_float8(t)) {
        cg_fail(g, "cpu: atomics on %s are not supported (unsupported dtype)", tilec_dtype_name(t));
        return;
    }
    const char *val = cg_conv(g, cg_expr(g, v), v->dtype, t);
    if (is_global(b)) {
        const char *sfx;
        switch (t) {
        case TILEC_FLOAT16: sfx = "f16"; break;
        case TILEC_BFLOAT16: sfx = "bf16"; break;
        case TILEC_FLOAT32: sfx = "f32"; break;
        case TILEC_FLOAT64: sfx = "f64"; break;
        case TILEC_BOOL: sfx = "u8"; val = cg_fmt(g, "(uint8_t)((%s) != 0)", val); break;
        default: sfx = tilec_cexpr_isfx(t); break;
        }
        if (t == TILEC_BOOL && op == TILEC_ATOMIC_ADD)
            opn = "max"; /* bool + bool saturates: or */
        cg_line(g, "tc_atomic_%s_%s(&b%d[%s], %s);", opn, sfx, b->id, off, val);
        return;
    }
    /* on-chip buffers belong to this block, which runs on one thread */
    int tv = newtmp(g);
    cg_line(g, "{ %s *p%d = &b%d[%s];", st_type(t), tv, b->id, off);
    g->ind++;
    const char *cur = cg_from_store(g, cg_fmt(g, "*p%d", tv), t);
    const char *nv = op == TILEC_ATOMIC_ADD ? addof(g, cur, cg_fmt(g, "(%s)", val), t == TILEC_BOOL ? TILEC_INT32 : t)
                                            : maxof(g, cur, val, t == TILEC_BOOL ? TILEC_INT32 : t, op == TILEC_ATOMIC_MAX);
    cg_line(g, "*p%d = %s;", tv, cg_to_store(g, nv, t, t));
    g->ind--;
    cg_line(g, "}");
}

/* A C string literal for s (escapes everything unusual, trigraphs too;
 * pct: double every %% for a printf format). */
static const char *c_string(cg_t *g, const char *s, int pct)
{
    tilec_sdk_str_t b = {0};
    tilec_sdk_str_putn(&b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\' || *p == '?') {
            char e[3] = {'\\', (char)*p, 0};
            tilec_sdk_str_putn(&b, e, 2);
        } else if (*p < 32 || *p >= 127 || (pct && *p == '%')) {
            if (*p == '%')
                tilec_sdk_str_putn(&b, "%%", 2);
            else
                tilec_sdk_str_printf(&b, "\\%03o", *p);
        } else {
            tilec_sdk_str_putn(&b, (const char *)p, 1);
        }
    }
    tilec_sdk_str_putn(&b, "\"", 1);
    const char *r = b.oom ? "\"\"" : cg_fmt(g, "%s", b.s);
    tilec_sdk_str_free(&b);
    return r;
}

static const char *print_fmt(tilec_dtype_t t)
{
    if (is_flt(t))
        return "%g";
    if (t == TILEC_UINT64)
        return "%llu";
    return "%lld";
}

static const char *print_arg(cg_t *g, const char *v, tilec_dtype_t t)
{
    if (is_flt(t))
        return cg_fmt(g, "(double)(%s)", v);
    if (t == TILEC_UINT64)
        return cg_fmt(g, "(unsigned long long)(%s)", v);
    return cg_fmt(g, "(long long)(%s)", v);
}

/* T.print, in the reference interpreter's format: "msg: value", or
 * "msg: " and the buffer in nested brackets ("name: " without a msg). */
static void gen_print(cg_t *g, const tilec_ir_stmt_t *s)
{
    const char *m = s->u.print.msg;
    if (s->u.print.value) {
        const tilec_ir_expr_t *v = s->u.print.value;
        cg_line(g, "printf(%s \"%s\\n\", %s); fflush(stdout);", c_string(g, m && *m ? m : "", 1),
             cg_fmt(g, "%s%s", m && *m ? ": " : "", print_fmt(v->dtype)),
             print_arg(g, cg_expr(g, v), v->dtype));
        return;
    }
    const tilec_ir_buffer_t *b = s->u.print.buf;
    if (!cg_buf_ok(g, b))
        return;
    const char *shp = "0";
    for (int d = 0; d < b->ndim; d++)
        shp = d ? cg_fmt(g, "%s, %s", shp, cg_dim(g, b, d)) : cg_dim(g, b, d);
    cg_line(g, "{");
    g->ind++;
    cg_line(g, "const int64_t sh[%d] = {%s}; int64_t n = 1;", b->ndim + 1, shp);
    cg_line(g, "for (int d = 0; d < %d; ++d) n *= sh[d];", b->ndim);
    cg_line(g, "flockfile(stdout); fputs(%s, stdout); fputs(\": \", stdout);",
         c_string(g, m && *m ? m : (b->name ? b->name : "?"), 0));
    cg_line(g, "if (n == 0) fputs(\"[]\", stdout);");
    cg_line(g, "for (int64_t f = 0; f < n; ++f) {");
    g->ind++;
    cg_line(g, "int64_t span = 1;");
    cg_line(g, "for (int d = %d; d >= 0; --d) { span *= sh[d]; if (f %% span == 0) putchar('['); }",
         b->ndim - 1);
    cg_line(g, "printf(\"%s\", %s);", print_fmt(b->dtype),
         print_arg(g, cg_from_store(g, cg_fmt(g, "b%d[f]", b->id), b->dtype), b->dtype));
    cg_line(g, "span = 1;");
    cg_line(g, "for (int d = %d; d >= 0; --d) { span *= sh[d]; if ((f + 1) %% span == 0) putchar(']'); }",
         b->ndim - 1);
    cg_line(g, "if (f + 1 < n) fputs(\", \", stdout);");
    g->ind--;
    cg_line(g, "}");
    cg_line(g, "putchar('\\n'); fflush(stdout); funlockfile(stdout);");
    g->ind--;
    cg_line(g, "}");
}

/* ---- statements ------------------------------------------------------------------------ */

static void gen_stmts(cg_t *g, const tilec_ir_stmt_t *s);

/* T.Pipelined: the program allows the loads of later iterations to
 * overlap this one.  On the CPU that is a software prefetch (into L2) of
 * every cache line of the global regions the body's top-level copies read
 * in the next iteration: tile rows of a large matrix each sit in their own
 * page, where the hardware prefetchers do not follow.  The loop variable
 * is stepped to compute the next bases and restored. */
static void gen_prefetch_next(cg_t *g, const tilec_ir_stmt_t *loop, const char *ext, const tilec_ir_stmt_t *only)
{
    const tilec_ir_var_t *v = loop->u.loop.var;
    int any = 0;
    for (const tilec_ir_stmt_t *b = loop->u.loop.body; b; b = b->next)
        any |= (!only || b == only) && b->kind == TILEC_ST_COPY && b->u.copy.src.buf && is_global(b->u.copy.src.buf) &&
               b->u.copy.src.buf->ndim >= 1;
    if (!any)
        return;
    int t = newtmp(g);
    cg_line(g, "if (v%d + 1 < %s) { /* prefetch the next iteration's tiles */", v->id, ext);
    g->ind++;
    cg_line(g, "const %s pf%d = v%d; v%d = (%s)(v%d + 1);", cg_ct_type(v->dtype), t, v->id, v->id,
         cg_ct_type(v->dtype), v->id);
    for (const tilec_ir_stmt_t *b = loop->u.loop.body; b && !g->failed; b = b->next) {
        if (!(b->kind == TILEC_ST_COPY && b->u.copy.src.buf && is_global(b->u.copy.src.buf) &&
              b->u.copy.src.buf->ndim >= 1) || (only && b != only))
            continue;
        const tilec_ir_region_t *r = &b->u.copy.src;
        cg_line(g, "{");
        g->ind++;
        int rt = region_bases(g, r);
        if (rt < 0)
            return;
        const tilec_ir_buffer_t *sb = r->buf;
        int nd = sb->ndim;
        const char *lv[TILEC_IR_MAX_DIMS], *idx[TILEC_IR_MAX_DIMS];
        int map[TILEC_IR_MAX_DIMS];
        int64_t ext_[TILEC_IR_MAX_DIMS];
        int nl = 0;
        for (int d = 0; d < nd; d++) {
            map[d] = -1;
            if (d < nd - 1 && r->extent[d] > 1) {
                lv[nl] = cg_fmt(g, "p%d_%d", rt, nl);
                ext_[nl] = r->extent[d];
                map[d] = nl++;
            }
        }
        region_index(g, r, rt, map, lv, idx);
        cg_line(g, "if (%s) {", region_inside(g, r, rt));
        g->ind++;
        open_loops(g, nl, ext_, lv, 0);
        cg_line(g, "const char *pp = (const char *)&b%d[%s];", sb->id, offset_of(g, sb, idx));
        cg_line(g, "for (int64_t c = 0; c < %" PRId64 " * (int64_t)sizeof(%s); c += 64) __builtin_prefetch(pp + c, 0, 2);",
             r->extent[nd - 1], st_type(sb->dtype));
        close_loops(g, nl);
        g->ind--;
        cg_line(g, "}");
        g->ind--;
        cg_line(g, "}");
    }
    cg_line(g, "v%d = pf%d;", v->id, t);
    g->ind--;
    cg_line(g, "}");
}

/* Does the statement list contain an atomic?  T.Parallel iterations are
 * independent except for atomics, which may hit the same element (a
 * histogram): such a loop must not be vectorized on trust. */
static int has_atomic(const tilec_ir_stmt_t *s)
{
    for (; s; s = s->next) {
        if (s->kind == TILEC_ST_ATOMIC)
            return 1;
        if (s->kind == TILEC_ST_FOR && has_atomic(s->u.loop.body))
            return 1;
        if (s->kind == TILEC_ST_IF && (has_atomic(s->u.cond.then) || has_atomic(s->u.cond.els)))
            return 1;
    }
    return 0;
}

/* ---- loop-invariant loads of T.Parallel loops ------------------------------------ */

/* Does e mention variable v, or load anything? (an index that does
 * neither is fixed for the whole loop over v) */
static int varies(const tilec_ir_expr_t *e, const tilec_ir_var_t *v, int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4)
        return 1;
    switch (e->kind) {
    case TILEC_EX_INT: case TILEC_EX_FLOAT: return 0;
    case TILEC_EX_VAR: return e->u.var == v;
    case TILEC_EX_UNARY: return varies(e->u.un.a, v, depth + 1);
    case TILEC_EX_BINARY: return varies(e->u.bin.a, v, depth + 1) || varies(e->u.bin.b, v, depth + 1);
    case TILEC_EX_CAST: return varies(e->u.cast.a, v, depth + 1);
    default: return 1;
    }
}

/* Hoists the loads in e that are the same in every iteration of the loop
 * over v: on-chip buffers that the loop (body: stores only) never writes,
 * at indices that do not vary.  Loads under a select stay where they are
 * (the select may guard the index). */
static void hoist_loads(cg_t *g, const tilec_ir_expr_t *e, const tilec_ir_var_t *v, const tilec_ir_stmt_t *body,
                        int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4 || g->nhoist >= CG_MAX_HOIST)
        return;
    switch (e->kind) {
    case TILEC_EX_LOAD: {
        const tilec_ir_buffer_t *b = e->u.load.buf;
        if (!b || !e->u.load.idx || b->scope == TILEC_SCOPE_GLOBAL)
            return;
        for (int d = 0; d < b->ndim; d++)
            if (varies(e->u.load.idx[d], v, 0))
                return;
        for (const tilec_ir_stmt_t *s = body; s; s = s->next)
            if (s->u.store.buf == b)
                return;
        for (int i = 0; i < g->nhoist; i++)
            if (g->hoist[i].idx == e->u.load.idx)
                return;
        int t = newtmp(g);
        cg_line(g, "const %s h%d = %s;", cg_ct_type(b->dtype), t, cg_expr(g, e));
        g->hoist[g->nhoist].idx = e->u.load.idx;
        g->hoist[g->nhoist++].name = cg_fmt(g, "h%d", t);
        return;
    }
    case TILEC_EX_UNARY: hoist_loads(g, e->u.un.a, v, body, depth + 1); return;
    case TILEC_EX_BINARY:
        hoist_loads(g, e->u.bin.a, v, body, depth + 1);
        hoist_loads(g, e->u.bin.b, v, body, depth + 1);
        return;
    case TILEC_EX_CAST: hoist_loads(g, e->u.cast.a, v, body, depth + 1); return;
    default: return;
    }
}

/* Before a T.Parallel loop over v of constant extent >= 1 whose body is
 * stores only: the invariant loads of its values as C locals (the C
 * compiler would have to prove that the stores do not alias them, which it
 * often cannot, and then leaves the loop scalar). */
static void hoist_invariant_loads(cg_t *g, const tilec_ir_stmt_t *loop)
{
    int64_t c;
    if (!tilec_ir_is_const_int(loop->u.loop.extent, &c) || c < 1)
        return;
    for (const tilec_ir_stmt_t *s = loop->u.loop.body; s; s = s->next)
        if (s->kind != TILEC_ST_STORE)
            return;
    for (const tilec_ir_stmt_t *s = loop->u.loop.body; s; s = s->next)
        hoist_loads(g, s->u.store.value, loop->u.loop.var, loop->u.loop.body, 0);
}

static void gen_stmt(cg_t *g, const tilec_ir_stmt_t *s)
{
    switch (s->kind) {
    case TILEC_ST_FOR: {
        const tilec_ir_var_t *v = s->u.loop.var;
        if (!v || v->id < 0 || v->id >= g->k->nvars || g->k->vars[v->id] != v)
            { cg_fail(g, "loop over an undeclared variable"); return; }
        int64_t c;
        const char *ext;
        int t = newtmp(g);
        cg_line(g, "{");
        g->ind++;
        if (tilec_ir_is_const_int(s->u.loop.extent, &c)) {
            ext = cg_fmt(g, "INT64_C(%" PRId64 ")", c);
        } else {
            cg_line(g, "const int64_t n%d = (int64_t)(%s);", t, cg_expr(g, s->u.loop.extent));
            ext = cg_fmt(g, "n%d", t);
            c = -1;
        }
        int nhoist = g->nhoist;
        switch (s->u.loop.kind) {
        case TILEC_LOOP_PARALLEL:
        case TILEC_LOOP_VECTORIZED:
            hoist_invariant_loads(g, s);
            if (!has_atomic(s->u.loop.body))
                cg_line(g, "TC_IVDEP");
            break;
        case TILEC_LOOP_UNROLL:
            if (c > 0 && c <= 64) {
                tilec_sdk_str_printf(g->o, "#if defined(__clang__)\n#pragma unroll\n#elif defined(__GNUC__)\n"
                                     "#pragma GCC unroll %d\n#endif\n", (int)c);
            }
            break;
        default:
            break;
        }
        const char *vt = cg_ct_type(v->dtype);
        int intvar = !is_flt(v->dtype) && v->dtype != TILEC_BOOL;
        if (intvar)
            cg_line(g, "for (%s v%d = 0; v%d < %s; ++v%d) {", vt, v->id, v->id, ext, v->id);
        else
            cg_line(g, "for (int64_t v%d = 0; v%d < %s; ++v%d) {", v->id, v->id, ext, v->id);
        g->ind++;
        if (s->u.loop.kind == TILEC_LOOP_PIPELINED && intvar)
            gen_prefetch_next(g, s, ext, NULL);
        gen_stmts(g, s->u.loop.body);
        g->nhoist = nhoist;
        g->ind--;
        cg_line(g, "}");
        g->ind--;
        cg_line(g, "}");
        break;
    }
    case TILEC_ST_IF:
        cg_line(g, "if (%s) {", cg_expr(g, s->u.cond.cond));
        g->ind++;
        gen_stmts(g, s->u.cond.then);
        g->ind--;
        if (s->u.cond.els) {
            cg_line(g, "} else {");
            g->ind++;
            gen_stmts(g, s->u.cond.els);
            g->ind--;
        }
        cg_line(g, "}");
        break;
    case TILEC_ST_STORE: {
        const tilec_ir_buffer_t *b = s->u.store.buf;
        if (!cg_buf_ok(g, b) || !s->u.store.value)
            { cg_fail(g, "store without a buffer or value"); return; }
        const char *off = offset_of_exprs(g, b, s->u.store.idx);
        cg_line(g, "b%d[%s] = %s;", b->id, off,
             cg_to_store(g, cg_expr(g, s->u.store.value), s->u.store.value->dtype, b->dtype));
        break;
    }
    case TILEC_ST_ASSIGN: {
        const tilec_ir_var_t *v = s->u.assign.var;
        if (!v || v->id < 0 || v->id >= g->k->nvars || g->k->vars[v->id] != v ||
            v->kind != TILEC_VAR_LET || !s->u.assign.value)
            { cg_fail(g, "assignment to something other than a let variable"); return; }
        const char *val = cg_conv(g, cg_expr(g, s->u.assign.value), s->u.assign.value->dtype, v->dtype);
        if (v->dtype == TILEC_FLOAT16 && s->u.assign.value->dtype == TILEC_FLOAT16)
            val = cg_fmt(g, "tc_rh(%s)", val); /* round like a store */
        else if (v->dtype == TILEC_BFLOAT16 && s->u.assign.value->dtype == TILEC_BFLOAT16)
            val = cg_fmt(g, "tc_rb(%s)", val);
        cg_line(g, "v%d = %s;", v->id, val);
        break;
    }
    case TILEC_ST_COPY: gen_copy(g, s); break;
    case TILEC_ST_FILL: gen_fill(g, s); break;
    case TILEC_ST_GEMM: cpu_gemm_gen(g, s); break;
    case TILEC_ST_REDUCE: gen_reduce(g, s); break;
    case TILEC_ST_CUMSUM: gen_cumsum(g, s); break;
    case TILEC_ST_ATOMIC: gen_atomic(g, s); break;
    case TILEC_ST_SYNC: cg_line(g, "/* sync_threads: a block runs on one thread */"); break;
    case TILEC_ST_PRINT: gen_print(g, s); break;
    case TILEC_ST_HINT: cg_line(g, "/* layout/swizzle hint ignored */"); break;
    /* IR 1.1: a block runs on one thread, so an async copy is done at once
     * (a valid program reads nothing before its wait) and every barrier,
     * group and mbarrier operation has nothing to order */
    case TILEC_ST_COPY_ASYNC: gen_copy(g, s); break;
    case TILEC_ST_ASYNC_COMMIT:
    case TILEC_ST_ASYNC_WAIT:
    case TILEC_ST_BARRIER:
    case TILEC_ST_MBAR_INIT:
    case TILEC_ST_MBAR_ARRIVE:
    case TILEC_ST_MBAR_WAIT: cg_line(g, "/* %s: a block runs on one thread */", tilec_stmt_kind_name(s->kind)); break;
    default: cg_fail(g, "statement '%s' is not supported by the cpu backend yet", tilec_stmt_kind_name(s->kind)); break;
    }
}

static void gen_stmts(cg_t *g, const tilec_ir_stmt_t *s)
{
    if (++g->depth > CG_MAX_DEPTH) {
        cg_fail(g, "statements nested deeper than %d levels", CG_MAX_DEPTH);
        g->depth--;
        return;
    }
    for (; s && !g->failed; s = s->next)
        gen_stmt(g, s);
    g->depth--;
}

/* ---- kernel-level pieces ------------------------------------------------------------------ */

static void gen_syms(cg_t *g)
{
    int j = 0;
    for (int i = 0; i < g->k->nvars; i++) {
        const tilec_ir_var_t *v = g->k->vars[i];
        if (v->kind == TILEC_VAR_SYM)
            cg_line(g, "const %s v%d = (%s)syms[%d]; (void)v%d;", cg_ct_type(v->dtype), i,
                 cg_ct_type(v->dtype), j++, i);
    }
    cg_line(g, "(void)syms;");
}

static void gen_shapes(cg_t *g)
{
    for (int i = 0; i < g->k->nbufs; i++) {
        const tilec_ir_buffer_t *b = g->k->bufs[i];
        for (int d = 0; d < b->ndim; d++) {
            int64_t c;
            if (!tilec_ir_is_const_int(b->shape[d], &c))
                cg_line(g, "const int64_t b%d_s%d = (int64_t)(%s); (void)b%d_s%d;", i, d,
                     cg_expr(g, b->shape[d]), i, d);
        }
    }
}

/* Element count of buffer b as a C expression. */
static const char *elems(cg_t *g, const tilec_ir_buffer_t *b)
{
    const char *n = "INT64_C(1)";
    for (int d = 0; d < b->ndim; d++)
        n = cg_fmt(g, "%s * %s", n, cg_dim(g, b, d));
    return n;
}

/* ---- which on-chip buffers need zeroing ---------------------------------------------- */

/* Does e read buffer b? */
static int expr_reads(const tilec_ir_expr_t *e, const tilec_ir_buffer_t *b, int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4)
        return e != NULL;
    switch (e->kind) {
    case TILEC_EX_LOAD:
        if (e->u.load.buf == b)
            return 1;
        for (int d = 0; e->u.load.buf && d < e->u.load.buf->ndim; d++)
            if (e->u.load.idx && expr_reads(e->u.load.idx[d], b, depth + 1))
                return 1;
        return 0;
    case TILEC_EX_UNARY: return expr_reads(e->u.un.a, b, depth + 1);
    case TILEC_EX_BINARY: return expr_reads(e->u.bin.a, b, depth + 1) || expr_reads(e->u.bin.b, b, depth + 1);
    case TILEC_EX_SELECT:
        return expr_reads(e->u.sel.cond, b, depth + 1) || expr_reads(e->u.sel.a, b, depth + 1) ||
               expr_reads(e->u.sel.b, b, depth + 1);
    case TILEC_EX_CAST: return expr_reads(e->u.cast.a, b, depth + 1);
    default: return 0;
    }
}

static int idx_reads(tilec_ir_expr_t *const *ix, int n, const tilec_ir_buffer_t *b)
{
    for (int d = 0; ix && d < n; d++)
        if (expr_reads(ix[d], b, 0))
            return 1;
    return 0;
}

static int region_mentions(const tilec_ir_region_t *r, const tilec_ir_buffer_t *b)
{
    return r->buf == b || (r->buf && idx_reads(r->base, r->buf->ndim, b));
}

/* The region is all of its buffer: bases 0 and extents the (constant) shape. */
static int region_whole(const tilec_ir_region_t *r)
{
    const tilec_ir_buffer_t *b = r->buf;
    for (int d = 0; d < b->ndim; d++) {
        int64_t z, n;
        if (!r->base || !tilec_ir_is_const_int(r->base[d], &z) || z != 0 ||
            !tilec_ir_is_const_int(b->shape[d], &n) || !r->extent || r->extent[d] != n)
            return 0;
    }
    return 1;
}

/* First mention of b in the list s, in program order: 0 none, 1 a write
 * of all of b that certainly runs (not under an IF or a loop that may run
 * zero times) and reads nothing of b, 2 anything else (b must start
 * zeroed, as the interpreter's). */
static int first_use(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b, int maybe, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return 2;
    for (; s; s = s->next) {
        int r = 0;
        switch (s->kind) {
        case TILEC_ST_FOR: {
            int64_t n;
            if (expr_reads(s->u.loop.extent, b, 0))
                return 2;
            int sure = tilec_ir_is_const_int(s->u.loop.extent, &n) && n >= 1;
            r = first_use(s->u.loop.body, b, maybe || !sure, depth + 1);
            break;
        }
        case TILEC_ST_IF:
            if (expr_reads(s->u.cond.cond, b, 0))
                return 2;
            r = first_use(s->u.cond.then, b, 1, depth + 1);
            if (!r)
                r = first_use(s->u.cond.els, b, 1, depth + 1);
            break;
        case TILEC_ST_COPY:
            if (region_mentions(&s->u.copy.src, b) ||
                (s->u.copy.dst.buf && idx_reads(s->u.copy.dst.base, s->u.copy.dst.buf->ndim, b)))
                return 2;
            if (s->u.copy.dst.buf == b)
                r = !maybe && region_whole(&s->u.copy.dst) ? 1 : 2;
            break;
        case TILEC_ST_FILL:
            if (expr_reads(s->u.fill.value, b, 0) ||
                (s->u.fill.dst.buf && idx_reads(s->u.fill.dst.base, s->u.fill.dst.buf->ndim, b)))
                return 2;
            if (s->u.fill.dst.buf == b)
                r = !maybe && region_whole(&s->u.fill.dst) ? 1 : 2;
            break;
        case TILEC_ST_REDUCE:
            if (s->u.reduce.src == b)
                return 2;
            if (s->u.reduce.dst == b)
                r = !maybe && s->u.reduce.clear ? 1 : 2;
            break;
        case TILEC_ST_GEMM:
            if (s->u.gemm.a == b || s->u.gemm.b == b)
                return 2;
            if (s->u.gemm.c == b)
                r = !maybe && s->u.gemm.clear_accum ? 1 : 2;
            break;
        case TILEC_ST_STORE:
            r = s->u.store.buf == b || (s->u.store.buf && idx_reads(s->u.store.idx, s->u.store.buf->ndim, b)) ||
                expr_reads(s->u.store.value, b, 0) ? 2 : 0;
            break;
        case TILEC_ST_ASSIGN: r = expr_reads(s->u.assign.value, b, 0) ? 2 : 0; break;
        case TILEC_ST_ATOMIC:
            r = s->u.atomic.buf == b || (s->u.atomic.buf && idx_reads(s->u.atomic.idx, s->u.atomic.buf->ndim, b)) ||
                expr_reads(s->u.atomic.value, b, 0) ? 2 : 0;
            break;
        case TILEC_ST_PRINT: r = s->u.print.buf == b || expr_reads(s->u.print.value, b, 0) ? 2 : 0; break;
        case TILEC_ST_CUMSUM: r = s->u.cumsum.src == b || s->u.cumsum.dst == b ? 2 : 0; break;
        case TILEC_ST_SYNC: case TILEC_ST_HINT: break;
        default: return 2; /* a kind this analysis does not know */
        }
        if (r)
            return r;
    }
    return 0;
}

/* Scratch layout: offsets o<i> of scratch buffers, then the GEMM area; the
 * total ends in tc_off.  Emitted identically in scratch_size and block. */
static void gen_layout(cg_t *g, const tilec_ir_stmt_t *body);

static void gen_layout(cg_t *g, const tilec_ir_stmt_t *body)
{
    cg_line(g, "int64_t tc_off = 0, tc_g = 0;");
    for (int i = g->k->nparams; i < g->k->nbufs; i++) {
        const tilec_ir_buffer_t *b = g->k->bufs[i];
        if (g->place[i] != PLACE_SCRATCH)
            continue;
        cg_line(g, "const int64_t o%d = tc_off; tc_off += TC_ALIGN(%s * %zu); (void)o%d;", i,
             elems(g, b), st_size(b->dtype), i);
    }
    cpu_gemm_sizes(g, body, 0);
    cg_line(g, "const int64_t o_gemm = tc_off; tc_off += TC_ALIGN(tc_g); (void)o_gemm;");
}

/* The first top-level use_swizzle hint's panel size, else 0. */
static int64_t find_swizzle(const tilec_ir_stmt_t *s)
{
    for (; s; s = s->next)
        if (s->kind == TILEC_ST_HINT && s->u.hint.name &&
            strcmp(s->u.hint.name, "use_swizzle") == 0 && s->u.hint.nargs >= 1 && s->u.hint.args) {
            int64_t v = 0;
            if (tilec_ir_is_const_int(s->u.hint.args[0], &v) && v > 0)
                return v;
        }
    return 0;
}

/* ---- block groups (cpu_group.c decides) ------------------------------------------- */

/* The names one member (x, y) of a block group sees: its block indices, its
 * scratch area's buffers and GEMM temporaries; with a_from_row / b_from_col,
 * the GEMM's A comes from member (0, y)'s area and B from member (x, 0)'s,
 * where the K step's shared tile copies went. */
static void member_scope(cg_t *g, const char *x, const char *y, int shared_ab)
{
    const tilec_ir_kernel_t *k = g->k;
    cg_line(g, "const int64_t tc_mx = %s, tc_my = %s; (void)tc_mx; (void)tc_my;", x, y);
    cg_line(g, "char *tc_s = (char *)scratch + (tc_my * tc_nx + tc_mx) * tc_ms;");
    for (int d = 0; d < 2; d++)
        cg_line(g, "const %s v%d = (%s)(tc_%c0 + tc_m%c); (void)v%d;", cg_ct_type(k->block[d]->dtype),
                k->block[d]->id, cg_ct_type(k->block[d]->dtype), "xy"[d], "xy"[d], k->block[d]->id);
    for (int i = k->nparams; i < k->nbufs; i++) {
        if (g->place[i] != PLACE_SCRATCH)
            continue;
        const char *T = st_type(k->bufs[i]->dtype);
        const char *area = "tc_s";
        if (shared_ab && k->bufs[i] == g->grp.gemm->u.gemm.a)
            area = "((char *)scratch + tc_my * tc_nx * tc_ms)";
        else if (shared_ab && k->bufs[i] == g->grp.gemm->u.gemm.b)
            area = "((char *)scratch + tc_mx * tc_ms)";
        cg_line(g, "%s *restrict b%d = (%s *)(%s + o%d); (void)b%d;", T, i, T, area, i, i);
    }
    cg_line(g, "char *restrict tc_gtmp = tc_s + o_gemm; (void)tc_gtmp;");
}

/* Top-level statements from s up to (not including) stop, for every member. */
static void group_each(cg_t *g, const tilec_ir_stmt_t *s, const tilec_ir_stmt_t *stop)
{
    if (s == stop)
        return;
    cg_line(g, "for (int tc_m = 0; tc_m < tc_nx * tc_ny; ++tc_m) {");
    g->ind++;
    member_scope(g, "tc_m % tc_nx", "tc_m / tc_nx", 0);
    for (; s != stop; s = s->next)
        gen_stmt(g, s);
    g->ind--;
    cg_line(g, "}");
}

/* tilec_block for a group of gx x gy blocks (bx, by: the group's indices):
 * the statements before the K loop for each member, then per K step the A
 * copies of the group's rows, the B copies of its columns, the GEMM of each
 * member, then the statements after the loop for each member.  Members past
 * the grid's edge do not exist. */
static void gen_group_block(cg_t *g)
{
    const tilec_ir_kernel_t *k = g->k;
    const cpu_group_t *gr = &g->grp;
    const tilec_ir_var_t *v = gr->loop->u.loop.var;
    cg_line(g, "TC_EXPORT void tilec_block(int32_t bx, int32_t by, int32_t bz, void *const *args, "
            "const int64_t *syms, void *scratch) { /* a group of %dx%d blocks */", gr->gx, gr->gy);
    g->ind++;
    gen_syms(g);
    cg_line(g, "(void)bz; (void)args;");
    gen_shapes(g);
    gen_layout(g, k->body);
    cg_line(g, "const int64_t tc_ms = TC_ALIGN(tc_off), tc_x0 = (int64_t)bx * %d, tc_y0 = (int64_t)by * %d;",
            gr->gx, gr->gy);
    cg_line(g, "const int64_t tc_nx = TC_MIN64(%d, (int64_t)(%s) - tc_x0), tc_ny = TC_MIN64(%d, (int64_t)(%s) - tc_y0);",
            gr->gx, cg_expr(g, k->grid[0]), gr->gy, cg_expr(g, k->grid[1]));
    for (int i = 0; i < k->nparams; i++) {
        const char *T = st_type(k->bufs[i]->dtype);
        cg_line(g, "%s *restrict b%d = (%s *)args[%d]; (void)b%d;", T, i, T, i, i);
    }
    /* on-chip buffers start at zero in every member (see gen_kernel) */
    cg_line(g, "for (int64_t tc_m = 0; tc_m < tc_nx * tc_ny; ++tc_m) {");
    g->ind++;
    cg_line(g, "char *tc_s = (char *)scratch + tc_m * tc_ms; (void)tc_s;");
    for (int i = k->nparams; i < k->nbufs; i++)
        if (g->place[i] == PLACE_SCRATCH && first_use(k->body, k->bufs[i], 0, 0) == 2)
            cg_line(g, "memset(tc_s + o%d, 0, (size_t)(%s * %zu));", i, elems(g, k->bufs[i]), st_size(k->bufs[i]->dtype));
    g->ind--;
    cg_line(g, "}");
    group_each(g, k->body, gr->loop);
    cg_line(g, "{");
    g->ind++;
    const char *ext = cg_fmt(g, "(int64_t)(%s)", cg_expr(g, gr->loop->u.loop.extent));
    cg_line(g, "for (%s v%d = 0; v%d < %s; ++v%d) {", cg_ct_type(v->dtype), v->id, v->id, ext, v->id);
    g->ind++;
    const tilec_ir_stmt_t *copies[2] = {gr->copy_a, gr->copy_b};
    for (int c = 0; c < 2; c++) {
        cg_line(g, "for (int64_t tc_j = 0; tc_j < tc_n%c; ++tc_j) { /* the %c tiles of the group */", "yx"[c], "AB"[c]);
        g->ind++;
        member_scope(g, c ? "tc_j" : "0", c ? "0" : "tc_j", 0);
        if (gr->loop->u.loop.kind == TILEC_LOOP_PIPELINED)
            gen_prefetch_next(g, gr->loop, ext, copies[c]);
        gen_stmt(g, copies[c]);
        g->ind--;
        cg_line(g, "}");
    }
    cg_line(g, "for (int64_t tc_m = 0; tc_m < tc_nx * tc_ny; ++tc_m) {");
    g->ind++;
    member_scope(g, "tc_m % tc_nx", "tc_m / tc_nx", 1);
    gen_stmt(g, gr->gemm);
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
    group_each(g, gr->loop->next, NULL);
    g->ind--;
    cg_line(g, "}");
}

static void gen_kernel(cg_t *g)
{
    const tilec_ir_kernel_t *k = g->k;
    tilec_sdk_str_t *o = g->o;
    tilec_sdk_str_printf(o, "/* tilec CPU kernel \"");
    for (const char *p = k->name ? k->name : ""; *p; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')
            tilec_sdk_str_putn(o, p, 1);
    tilec_sdk_str_printf(o, "\": %d params, %d syms, %d buffers */\n", k->nparams, g->nsyms, k->nbufs);
    cpu_gemm_cache_sizes(g);
    tilec_sdk_str_putn(o, cpu_prelude, sizeof cpu_prelude - 1);
    tilec_sdk_str_printf(o, "%s", cpu_gemm_prelude);
    cg_line(g, "TC_EXPORT int tilec_cpu_module_abi(void) { return %d; }", TILEC_CPU_MODULE_ABI);
    cg_line(g, "TC_EXPORT uint32_t tilec_nparams(void) { return %d; }", k->nparams);
    cg_line(g, "TC_EXPORT uint32_t tilec_nsyms(void) { return %d; }", g->nsyms);
    /* blocks per tilec_block call (cpu_group.c): the launcher runs the grid
     * of groups */
    cg_line(g, "TC_EXPORT void tilec_group(int32_t gs[2]) { gs[0] = %d; gs[1] = %d; }", g->grp.gx, g->grp.gy);

    /* grid */
    cg_line(g, "TC_EXPORT void tilec_grid(const int64_t *syms, int64_t g[3]) {");
    g->ind++;
    gen_syms(g);
    for (int d = 0; d < 3; d++)
        cg_line(g, "g[%d] = %s;", d, d < k->ngrid ? cg_fmt(g, "(int64_t)(%s)", cg_expr(g, k->grid[d])) : "1");
    g->ind--;
    cg_line(g, "}");

    /* parameter sizes */
    cg_line(g, "TC_EXPORT int64_t tilec_param_bytes(uint32_t i, const int64_t *syms) {");
    g->ind++;
    gen_syms(g);
    cg_line(g, "int64_t n = 1, d;");
    cg_line(g, "switch (i) {");
    for (int i = 0; i < k->nparams; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        cg_line(g, "case %d:", i);
        for (int d = 0; d < b->ndim; d++)
            cg_line(g, "  d = (int64_t)(%s); if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;",
                 cg_expr(g, b->shape[d]));
        cg_line(g, "  if (__builtin_mul_overflow(n, (int64_t)%zu, &n)) return -1;", st_size(b->dtype));
        cg_line(g, "  return n;");
    }
    cg_line(g, "default: (void)d; return -1;");
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");

    /* scratch size */
    cg_line(g, "TC_EXPORT int64_t tilec_scratch_size(const int64_t *syms) {");
    g->ind++;
    gen_syms(g);
    gen_shapes(g);
    gen_layout(g, k->body);
    if (g->grp.gx > 1)
        cg_line(g, "return TC_ALIGN(tc_off) * %d; /* one area per member of a block group */", g->grp.gx * g->grp.gy);
    else
        cg_line(g, "return tc_off;");
    g->ind--;
    cg_line(g, "}");

    /* the block */
    if (g->grp.gx > 1) {
        gen_group_block(g);
        return;
    }
    cg_line(g, "TC_EXPORT void tilec_block(int32_t bx, int32_t by, int32_t bz, void *const *args, "
            "const int64_t *syms, void *scratch) {");
    g->ind++;
    gen_syms(g);
    const char *bv[3] = {"bx", "by", "bz"};
    int64_t panel = find_swizzle(k->body);
    if (panel > 0 && k->ngrid >= 2) {
        /* use_swizzle(P): blocks numbered x fastest walk panels of P block
         * columns, down all rows of one panel before the next, so the
         * panels' B tiles stay in cache while A rows stream */
        cg_line(g, "int32_t tc_bx = bx, tc_by = by;");
        cg_line(g, "{ /* use_swizzle(%" PRId64 ") */", panel);
        g->ind++;
        cg_line(g, "const int64_t gx = (int64_t)(%s), gy = (int64_t)(%s), P = %" PRId64 ";",
             cg_expr(g, k->grid[0]), cg_expr(g, k->grid[1]), panel);
        cg_line(g, "const int64_t l = (int64_t)bx + gx * (int64_t)by, pan = l / (P * gy), in = l %% (P * gy);");
        cg_line(g, "const int64_t w = TC_MIN64(P, gx - pan * P);");
        cg_line(g, "tc_bx = (int32_t)(pan * P + in %% w); tc_by = (int32_t)(in / w);");
        g->ind--;
        cg_line(g, "}");
        bv[0] = "tc_bx";
        bv[1] = "tc_by";
    }
    for (int d = 0; d < k->ngrid; d++)
        if (k->block[d])
            cg_line(g, "const %s v%d = (%s)%s;", cg_ct_type(k->block[d]->dtype), k->block[d]->id,
                 cg_ct_type(k->block[d]->dtype), bv[d]);
    cg_line(g, "(void)bx; (void)by; (void)bz; (void)args; (void)scratch;");
    gen_shapes(g);
    gen_layout(g, k->body);
    cg_line(g, "char *restrict tc_gtmp = (char *)scratch + o_gemm; (void)tc_gtmp;");
    /* on-chip buffers start at zero in every block, as in the reference
     * interpreter, except those whose first use overwrites all of them
     * (a copy into the whole tile, T.clear, a clearing reduce or gemm),
     * which is the rule in kernels; the GEMM temporaries need nothing */
    for (int i = k->nparams; i < k->nbufs; i++)
        if (g->place[i] == PLACE_SCRATCH && first_use(k->body, k->bufs[i], 0, 0) == 2)
            cg_line(g, "memset((char *)scratch + o%d, 0, (size_t)(%s * %zu));", i, elems(g, k->bufs[i]),
                 st_size(k->bufs[i]->dtype));
    for (int i = 0; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        const char *T = st_type(b->dtype);
        switch (g->place[i]) {
        case PLACE_PARAM:
            cg_line(g, "%s *restrict b%d = (%s *)args[%d]; (void)b%d;", T, i, T, i, i);
            break;
        case PLACE_SCRATCH:
            cg_line(g, "%s *restrict b%d = (%s *)((char *)scratch + o%d); (void)b%d;", T, i, T, i, i);
            break;
        default:
            cg_line(g, "%s b%d[%s] = {0}; (void)b%d;", T, i, elems(g, b), i);
            break;
        }
    }
    for (int i = 0; i < k->nvars; i++) {
        const tilec_ir_var_t *v = k->vars[i];
        if (v->kind == TILEC_VAR_LET)
            cg_line(g, "%s v%d = 0; (void)v%d;", cg_ct_type(v->dtype), i, i);
    }
    gen_stmts(g, k->body);
    g->ind--;
    cg_line(g, "}");
}

/* 1 when e uses only constants and SYM vars (what grid extents and buffer
 * shapes may use: they are evaluated outside any block). */
static int syms_only(const tilec_ir_expr_t *e, int depth)
{
    if (!e || depth > CG_MAX_DEPTH * 4)
        return 0;
    switch (e->kind) {
    case TILEC_EX_INT:
    case TILEC_EX_FLOAT: return 1;
    case TILEC_EX_VAR: return e->u.var && e->u.var->kind == TILEC_VAR_SYM;
    case TILEC_EX_UNARY: return syms_only(e->u.un.a, depth + 1);
    case TILEC_EX_BINARY: return syms_only(e->u.bin.a, depth + 1) && syms_only(e->u.bin.b, depth + 1);
    case TILEC_EX_SELECT:
        return syms_only(e->u.sel.cond, depth + 1) && syms_only(e->u.sel.a, depth + 1) &&
               syms_only(e->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return syms_only(e->u.cast.a, depth + 1);
    default: return 0;
    }
}

/* Structural checks the generator relies on. */
static int check_kernel(cg_t *g)
{
    const tilec_ir_kernel_t *k = g->k;
    if (!k)
        return cg_fail(g, "module has no kernel"), -1;
    if (k->nparams < 0 || k->nparams > k->nbufs || (k->nbufs > 0 && !k->bufs) ||
        (k->nvars > 0 && !k->vars) || k->nvars < 0)
        return cg_fail(g, "kernel tables are inconsistent"), -1;
    if (k->ngrid < 1 || k->ngrid > 3)
        return cg_fail(g, "kernel grid has %d dimensions", k->ngrid), -1;
    for (int d = 0; d < k->ngrid; d++)
        if (!k->grid[d] || !syms_only(k->grid[d], 0))
            return cg_fail(g, "grid extent %d is missing or not a function of shape symbols", d), -1;
    for (int i = 0; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (!b || b->id != i || b->ndim < 0 || b->ndim > TILEC_IR_MAX_DIMS ||
            (b->ndim > 0 && !b->shape) || !valid_dtype((int)b->dtype) ||
            (int)b->scope < 0 || b->scope >= TILEC_SCOPE_COUNT)
            return cg_fail(g, "buffer %d is malformed", i), -1;
        if ((i < k->nparams) != (b->scope == TILEC_SCOPE_GLOBAL))
            return cg_fail(g, "buffer %s: global buffers must be exactly the parameters",
                           b->name ? b->name : "?"), -1;
        for (int d = 0; d < b->ndim; d++)
            if (!b->shape[d] || !syms_only(b->shape[d], 0))
                return cg_fail(g, "buffer %s: dimension %d is missing or not a function of shape "
                                  "symbols", b->name ? b->name : "?", d), -1;
    }
    for (int i = 0; i < k->nvars; i++) {
        const tilec_ir_var_t *v = k->vars[i];
        if (!v || v->id != i || !valid_dtype((int)v->dtype))
            return cg_fail(g, "variable %d is malformed", i), -1;
        if (v->kind == TILEC_VAR_SYM)
            g->nsyms++;
    }
    for (int d = 0; d < k->ngrid; d++) {
        const tilec_ir_var_t *v = k->block[d];
        if (v && (v->id < 0 || v->id >= k->nvars || k->vars[v->id] != v))
            return cg_fail(g, "block variable %d is not declared", d), -1;
    }
    return 0;
}

int cpu_codegen(const tilec_ir_module_t *m, tilec_sdk_str_t *out, char *err, size_t errlen)
{
    cg_t g;
    memset(&g, 0, sizeof g);
    g.k = m ? m->kernel : NULL;
    g.o = out;
    g.err = err;
    g.errlen = errlen;
    tilec_arena_init(&g.ar);
    if (check_kernel(&g) == 0) {
        g.place = tilec_arena_alloc(&g.ar, sizeof(int) * (size_t)(g.k->nbufs + 1));
        if (!g.place) {
            cg_fail(&g, "out of memory");
        } else {
            for (int i = 0; i < g.k->nbufs; i++) {
                const tilec_ir_buffer_t *b = g.k->bufs[i];
                int64_t n = tilec_ir_buffer_const_size(b);
                if (b->scope == TILEC_SCOPE_GLOBAL)
                    g.place[i] = PLACE_PARAM;
                else if ((b->scope == TILEC_SCOPE_LOCAL || b->scope == TILEC_SCOPE_VAR) && n > 0 &&
                         n * (int64_t)st_size(b->dtype) <= CG_LOCAL_MAX_BYTES)
                    g.place[i] = PLACE_LOCAL;
                else
                    g.place[i] = PLACE_SCRATCH;
            }
            cpu_group_plan(g.k, g.place, &g.grp);
            gen_kernel(&g);
        }
    }
    tilec_arena_destroy(&g.ar);
    if (!g.failed && out->oom)
        cg_fail(&g, "out of memory");
    return g.failed ? -1 : 0;
}
