/*
 * cuda_codegen.c — tile IR to CUDA C++ for the CUDA backend.
 *
 * The kernel becomes one extern "C" __global__ function
 * tilec_kernel(T0 *b0, ..., int s0, ...) taking its tensor parameters as
 * device pointers and its T.dynamic symbols as ints; the block variables
 * come from blockIdx (dimension d of the grid is blockIdx.x/y/z), the
 * threads of T.Kernel(threads=...) are the CUDA block, flattened into one
 * thread number tl_tid.
 *
 * Execution model.  Every thread of a block runs the kernel body; what
 * differs is who does the work of each statement:
 *  - block-wide tile operations (copy, fill, gemm, reduce, cumsum) whose
 *    destination is a shared or fragment buffer or a tensor are shared out
 *    over the threads (element e goes to thread e mod nthreads), then a
 *    __syncthreads() makes the result visible to the whole block;
 *  - a nest of T.Parallel loops is flattened and its iterations shared out
 *    the same way, followed by a barrier — unless its body writes a local
 *    or var buffer (per-thread storage), in which case every thread runs
 *    all iterations;
 *  - scalar stores to shared/fragment/global buffers, atomics and prints
 *    outside a parallel loop are done by thread 0, then a barrier;
 *  - local/var buffers and let variables are per thread, and uniform code
 *    (serial loops, ifs, assignments) runs in every thread, so every thread
 *    holds the same values.
 * Inside a T.Parallel body the statements are per-thread code: tile
 * operations there run serially in the thread, without barriers.
 *
 * Storage.  Shared and fragment buffers live in dynamic shared memory
 * (one 128-byte-aligned slice each; the launcher raises the 48 KB limit
 * with cuFuncSetAttribute when needed), zeroed at kernel start like the
 * reference interpreter's on-chip buffers.  Local and var buffers are
 * per-thread arrays.  Values: integers and float32/float64 are their C
 * types; float16/bfloat16 are stored as 16-bit patterns and computed in
 * float (rounded to the 16-bit format on casts and stores), bool is stored
 * as a byte.
 *
 * CUDA's own lowerings.  For sm_80 and later, a T.gemm with float16 or
 * bfloat16 shared-memory operands and a float32 fragment accumulator runs
 * on the tensor cores (mma.sync m16n8k16, operands read with ldmatrix from
 * shared memory whose rows are padded by 16 bytes so the eight row reads
 * of one ldmatrix hit distinct banks); the accumulator stays in shared
 * memory between statements, so every other statement sees an ordinary
 * row-major fragment.  Copies from a tensor to shared memory of the same
 * 16-bit or 32-bit dtype move 16 bytes per thread when the row length
 * allows it, with a scalar fallback at tensor edges and misalignment.
 *
 * Generated names never come from the program: buffer i is b<i>, var i is
 * v<i>, temporaries tl_<n>.  Nesting depth is bounded by the IR reader
 * (512); the generator checks its own limit too.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_prelude.h"
#include "tilec/cexpr.h"

#define CG_MAX_DEPTH 600
#define CG_LOCAL_MAX_ELEMS 4096

/* ---- generator state ------------------------------------------------------ */

/* Warp tiling of a tensor-core GEMM. */
typedef struct mma_plan {
    int64_t M, N, K;
    int wm, wn;          /* warps along M and N */
    int64_t WM, WN;      /* warp tile */
    int mt, nt;          /* 16x8 mma tiles per warp along M and N */
    int bf16;
    int wg;              /* 1: wgmma (sm_90a) by warpgroups of 4 warps */
    int gm, gn;          /* warpgroups along M and N (wg) */
    int mstride;         /* rows between a warp's mma tiles: 16, or 64 for wg */
    int ev;              /* registers of one tile: 4 (m16n8), or the vector of a row layout */
} mma_plan_t;

typedef struct cg {
    const tilec_ir_kernel_t *k;
    tilec_sdk_str_t *o;
    char *err;
    size_t errlen;
    int failed;
    int depth;
    tilec_arena_t ar;        /* the strings of the expression being written */
    int ind;
    int tmp;
    int sm;
    int wgmma;               /* target has sm_90a's wgmma */
    int any_swz;             /* some buffer is swizzled for wgmma */
    int nthreads;
    uint64_t *smem_off;      /* [nbufs] byte offset in shared memory */
    int64_t *pitch;          /* [nbufs] row pitch in elements (shared 2-D: padded) */
    int *swz;                /* [nbufs] >0: wgmma operand layout, swizzle width in elements */
    uint64_t smem_bytes;
    cuda_kinfo_t *info;
    /* a GEMM whose accumulator lives in registers across the enclosing
     * loop (see emit_loop_with_resident_acc) */
    const tilec_ir_stmt_t *resident;
    int resident_id;
    /* a wgmma GEMM whose wait is deferred by one iteration (see
     * emit_pipelined) */
    const tilec_ir_stmt_t *wg_defer;
    /* fragments that live in registers (see plan_regfrags) */
    int *rf;                 /* [nbufs] RF_ACC, RF_ROW or 0 */
    mma_plan_t *rf_plan;     /* [nbufs] an RF_ACC fragment's GEMM plan */
    int *rf_id;              /* [nbufs] its registers are tl_c<id> */
    mma_plan_t rf_rows;      /* the row map every register fragment shares */
    int rf_rowid;            /* the id whose tl_wm / tl_l (tl_w / tl_l) give the rows */
    int rf_warprows;         /* the layout is rows over warps (no GEMM), not mma's */
    int any_rf;
    int rf_nest;             /* emitting for one element (1) or one row (2) */
    int *stages;             /* [nbufs] >1: shared buffer in a cp.async ring of that many stages */
    uint64_t *stage_bytes;   /* [nbufs] bytes of one stage */
} cg_t;


static void cg_fail(cg_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cg_fail(cg_t *g, const char *fmt, ...)
{
    if (g->failed)
        return;
    g->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->err, g->errlen, fmt, ap);
    va_end(ap);
}

static void out(cg_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(cg_t *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tilec_sdk_str_vprintf(g->o, fmt, ap);
    va_end(ap);
}

/* A new line at the current indentation, then the formatted text. */
static void line(cg_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(cg_t *g, const char *fmt, ...)
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
static const char *stype(tilec_dtype_t t)
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
static const char *ctype(tilec_dtype_t t)
{
    switch (t) {
    case TILEC_BOOL: return "bool";
    case TILEC_FLOAT16:
    case TILEC_BFLOAT16: return "float";
    default: return stype(t);
    }
}

static int is_f16ish(tilec_dtype_t t) { return t == TILEC_FLOAT16 || t == TILEC_BFLOAT16; }
static int is_flt(tilec_dtype_t t) { return tilec_dtype_is_float(t); }

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

static void emit_expr(cg_t *g, const tilec_ir_expr_t *e);

static int64_t const_dim(const tilec_ir_buffer_t *b, int d)
{
    int64_t v = 1;
    if (!tilec_ir_is_const_int(b->shape[d], &v))
        return -1;
    return v;
}

/* element offset of buf[idx...] */
static void emit_offset(cg_t *g, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    if (b->scope == TILEC_SCOPE_GLOBAL) {
        /* ((i0 * S1 + i1) * S2 + i2) in 64-bit, with the shape locals */
        for (int d = 0; d < b->ndim; d++)
            out(g, "(");
        out(g, "(tl_i64)");
        for (int d = 0; d < b->ndim; d++) {
            if (d > 0)
                out(g, " * tl_s%d_%d + (tl_i64)", b->id, d);
            out(g, "(");
            emit_expr(g, idx[d]);
            out(g, "))");
        }
        return;
    }
    if (g->swz[b->id] > 0) {
        out(g, "tl_swz<%d, %" PRId64 ">((int)(", g->swz[b->id], const_dim(b, 0));
        emit_expr(g, idx[0]);
        out(g, "), (int)(");
        emit_expr(g, idx[1]);
        out(g, "))");
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
    out(g, "(");
    for (int d = 0; d < b->ndim; d++) {
        if (d > 0)
            out(g, " + ");
        out(g, "(int)(");
        emit_expr(g, idx[d]);
        out(g, ")");
        if (strides[d] != 1)
            out(g, " * %" PRId64, strides[d]);
    }
    if (b->ndim == 0)
        out(g, "0");
    out(g, ")");
    free(strides);
}

/* value (compute type) from storage expression text s of dtype t */
static void emit_load_conv_open(cg_t *g, tilec_dtype_t t)
{
    if (t == TILEC_FLOAT16)
        out(g, "tl_h2f(");
    else if (t == TILEC_BFLOAT16)
        out(g, "tl_b2f(");
    else if (t == TILEC_BOOL)
        out(g, "(0 != ");
    else
        out(g, "(");
}

static void rf_ref(cg_t *g, const tilec_ir_buffer_t *b);

static void emit_load(cg_t *g, const tilec_ir_buffer_t *b, tilec_ir_expr_t *const *idx)
{
    if (g->rf[b->id]) { /* a register fragment, in a nest on registers */
        rf_ref(g, b);
        return;
    }
    emit_load_conv_open(g, b->dtype);
    out(g, "b%d[", b->id);
    emit_offset(g, b, idx);
    out(g, "])");
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
static const char *cx_ctype(void *u, tilec_dtype_t t) { (void)u; return ctype(t); }

static const char *cx_int_lit(void *u, int64_t v, tilec_dtype_t t)
{
    cg_t *g = u;
    if (t == TILEC_BOOL)
        return v ? "true" : "false";
    if (t == TILEC_UINT64)
        return sfmt(g, "((tl_u64)0x%" PRIx64 "ULL)", (uint64_t)v);
    if (v == INT64_MIN)
        return sfmt(g, "((%s)(-9223372036854775807LL - 1))", stype(t));
    if (t == TILEC_INT32 && v >= INT32_MIN && v <= INT32_MAX)
        return sfmt(g, v < 0 ? "(%" PRId64 ")" : "%" PRId64, v);
    return sfmt(g, "((%s)%" PRId64 "LL)", stype(t), v);
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
    if (is_f16ish(t)) {
        if (s == TILEC_FLOAT32 || is_f16ish(s) || (tilec_dtype_is_int(s) && tilec_dtype_size(s) <= 2) ||
            s == TILEC_BOOL)
            return sfmt(g, "%s((float)(%s))", t == TILEC_FLOAT16 ? "tl_rh" : "tl_rb", v);
        return sfmt(g, "%s((double)(%s)))", t == TILEC_FLOAT16 ? "tl_h2f(tl_d2h" : "tl_b2f(tl_d2b", v);
    }
    return sfmt(g, "((%s)(%s))", ctype(t), v);
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

static void emit_expr(cg_t *g, const tilec_ir_expr_t *e)
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
        out(g, "%s", s);
    if (top) { /* the strings are written out: free them */
        tilec_arena_destroy(&g->ar);
        tilec_arena_init(&g->ar);
    }
}

/* storage conversion of a computed value text for a store into dtype t */
static void store_open(cg_t *g, tilec_dtype_t t)
{
    if (t == TILEC_FLOAT16)
        out(g, "tl_f2h(");
    else if (t == TILEC_BFLOAT16)
        out(g, "tl_f2b(");
    else
        out(g, "(%s)(", stype(t));
}

/* ---- statements ------------------------------------------------------------- */

/* Who runs a block-wide statement: "tl_tid"/NT shared out with a barrier
 * after, or "0"/1 in one thread (inside a parallel body, or per-thread
 * destinations). */
typedef struct who {
    int coop;     /* 1: over the block's threads */
} who_t;

static void emit_block(cg_t *g, const tilec_ir_stmt_t *s, int par);

static const char *w_start(const who_t *w) { return w->coop ? "tl_tid" : "0"; }
static void w_stride(cg_t *g, const who_t *w) { out(g, "%d", w->coop ? g->nthreads : 1); }

/* A barrier; with wgmma in the kernel, each thread first makes its
 * shared-memory writes visible to the async proxy that wgmma reads with. */
static void emit_sync(cg_t *g)
{
    if (g->any_swz)
        line(g, "tl_fence_proxy();");
    line(g, "__syncthreads();");
}

static int per_thread_scope(tilec_scope_t s) { return s == TILEC_SCOPE_LOCAL || s == TILEC_SCOPE_VAR; }


/* Writes the linear index decomposition of loop counter `k` over extents
 * ext[n] into locals tl_<base>_<i>. */
static void decompose(cg_t *g, int base, const char *k, const int64_t *ext, int n)
{
    line(g, "tl_i64 tl_r%d = %s;", base, k);
    for (int i = n - 1; i >= 0; i--) {
        if (i > 0) {
            line(g, "const int tl_%d_%d = (int)(tl_r%d %% %" PRId64 "); tl_r%d /= %" PRId64 ";", base,
                 i, base, ext[i], base, ext[i]);
        } else {
            line(g, "const int tl_%d_%d = (int)tl_r%d;", base, i, base);
        }
    }
}

/* Region element access: index of dimension d for region r whose
 * non-unit dimensions are numbered in order; bases were hoisted into
 * tl_<hb>_<d>. */
static void region_index(cg_t *g, const tilec_ir_region_t *r, int d, int hb, int ib, int *nu)
{
    if (r->extent[d] > 1) {
        out(g, "(tl_%d_%d + tl_%d_%d)", hb, d, ib, *nu);
        (*nu)++;
    } else {
        out(g, "tl_%d_%d", hb, d);
    }
}

static void hoist_bases(cg_t *g, const tilec_ir_region_t *r, int hb)
{
    for (int d = 0; d < r->buf->ndim; d++) {
        out(g, "%*sconst tl_i64 tl_%d_%d = (tl_i64)(", 2 * (g->ind + 1), "", hb, d);
        emit_expr(g, r->base[d]);
        out(g, ");\n");
    }
}

/* offset text of a region element into buffer (uses hoisted bases) */
static void region_offset(cg_t *g, const tilec_ir_region_t *r, int hb, int ib)
{
    const tilec_ir_buffer_t *b = r->buf;
    int nu = 0;
    if (b->scope == TILEC_SCOPE_GLOBAL) {
        for (int d = 0; d < b->ndim; d++)
            out(g, "(");
        for (int d = 0; d < b->ndim; d++) {
            if (d > 0)
                out(g, " * tl_s%d_%d + ", b->id, d);
            region_index(g, r, d, hb, ib, &nu);
            out(g, ")");
        }
        return;
    }
    if (g->swz[b->id] > 0) {
        out(g, "tl_swz<%d, %" PRId64 ">((int)", g->swz[b->id], const_dim(b, 0));
        region_index(g, r, 0, hb, ib, &nu);
        out(g, ", (int)");
        region_index(g, r, 1, hb, ib, &nu);
        out(g, ")");
        return;
    }
    int64_t stride = 1;
    int64_t strides[TILEC_IR_MAX_DIMS];
    for (int d = b->ndim - 1; d >= 0; d--) {
        strides[d] = stride;
        int64_t ext = const_dim(b, d);
        if (d == b->ndim - 1 && g->pitch[b->id] > 0)
            ext = g->pitch[b->id];
        stride *= ext;
    }
    out(g, "(int)(0");
    for (int d = 0; d < b->ndim; d++) {
        out(g, " + ");
        region_index(g, r, d, hb, ib, &nu);
        out(g, " * %" PRId64, strides[d]);
    }
    out(g, ")");
}

/* in-bounds condition of a global region element */
static void region_inbounds(cg_t *g, const tilec_ir_region_t *r, int hb, int ib)
{
    const tilec_ir_buffer_t *b = r->buf;
    int nu = 0;
    out(g, "(1");
    for (int d = 0; d < b->ndim; d++) {
        out(g, " && (tl_u64)");
        region_index(g, r, d, hb, ib, &nu);
        out(g, " < (tl_u64)tl_s%d_%d", b->id, d);
    }
    out(g, ")");
}

/* non-unit extents of a region */
static int region_shape(const tilec_ir_region_t *r, int64_t *ext)
{
    int n = 0;
    for (int d = 0; d < r->buf->ndim; d++)
        if (r->extent[d] > 1)
            ext[n++] = r->extent[d];
    return n;
}

static int copy_vec(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w, int async);
#define try_copy_vec(g, s, w) copy_vec(g, s, w, 0)

static void emit_copy(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    int64_t ext[TILEC_IR_MAX_DIMS], sext[TILEC_IR_MAX_DIMS];
    int n = region_shape(dst, ext), sn = region_shape(src, sext);
    if (n != sn) {
        cg_fail(g, "copy: regions of different shapes");
        return;
    }
    int64_t total = 1;
    for (int i = 0; i < n; i++) {
        if (ext[i] != sext[i]) {
            cg_fail(g, "copy: regions of different shapes");
            return;
        }
        total *= ext[i];
    }
    if (try_copy_vec(g, s, w))
        return;
    int id = g->tmp++;
    line(g, "{ /* copy %s -> %s */", src->buf->name, dst->buf->name);
    g->ind++;
    hoist_bases(g, src, id * 3 + 0 + 1000000);
    hoist_bases(g, dst, id * 3 + 1 + 1000000);
    int hs = id * 3 + 1000000, hd = id * 3 + 1 + 1000000, ib = id * 3 + 2 + 1000000;
    out(g, "%*sfor (tl_i64 tl_k%d = %s; tl_k%d < %" PRId64 "; tl_k%d += ", 2 * (g->ind + 1), "",
        id, w_start(w), id, total, id);
    w_stride(g, w);
    out(g, ") {\n");
    g->ind++;
    char kname[32];
    snprintf(kname, sizeof kname, "tl_k%d", id);
    decompose(g, ib, kname, ext, n);
    int sg = src->buf->scope == TILEC_SCOPE_GLOBAL, dg = dst->buf->scope == TILEC_SCOPE_GLOBAL;
    tilec_dtype_t st = src->buf->dtype, dt = dst->buf->dtype;
    if (dg) {
        out(g, "%*sif (", 2 * (g->ind + 1), "");
        region_inbounds(g, dst, hd, ib);
        out(g, ") ");
    } else {
        out(g, "%*s", 2 * (g->ind + 1), "");
    }
    out(g, "b%d[", dst->buf->id);
    region_offset(g, dst, hd, ib);
    out(g, "] = ");
    if (sg) {
        out(g, "!");
        region_inbounds(g, src, hs, ib);
        out(g, " ? (%s)0 : ", stype(dt));
    }
    if (st == dt) {
        out(g, "b%d[", src->buf->id);
        region_offset(g, src, hs, ib);
        out(g, "]");
    } else {
        /* convert through the compute types, rounding once: float64 and
         * wide integers go to a 16-bit float straight from double, bool
         * is x != 0, the rest through the dst's store conversion */
        if (is_f16ish(dt) && !is_f16ish(st) && st != TILEC_FLOAT32 &&
            !(tilec_dtype_is_int(st) && tilec_dtype_size(st) <= 2) && st != TILEC_BOOL)
            out(g, "%s((double)", dt == TILEC_FLOAT16 ? "tl_d2h(" : "tl_d2b(");
        else if (dt == TILEC_BOOL)
            out(g, "(tl_u8)(0 != ");
        else
            store_open(g, dt);
        emit_load_conv_open(g, st);
        out(g, "b%d[", src->buf->id);
        region_offset(g, src, hs, ib);
        out(g, "]))");
    }
    out(g, ";\n");
    g->ind--;
    line(g, "}");
    g->ind--;
    line(g, "}");
    if (w->coop)
        emit_sync(g);
}

/* 16-byte copies: src and dst of one dtype of 2 or 4 bytes, the innermost
 * dimension contiguous in both with an extent that is a multiple of the
 * vector, dst not global.  Global sources check alignment and bounds per
 * vector and fall back to elements. */
/* 16-byte copies between a tensor and shared memory (either direction)
 * when both have one dtype of 2 or 4 bytes and the innermost dimension of
 * both regions is the copied row: thread t moves vector t, t + nthreads,
 * ...; a vector that crosses the tensor's edge or is misaligned falls back
 * to element copies with the usual bounds checks. */
/* The fast path of a tile copy tensor -> on-chip of one dtype: when the
 * whole tile is inside the tensor and its rows are 16-byte aligned (the
 * common case away from the edges), thread t moves the vectors of one
 * column in rows t / vr + j * dr, j = 0, 1, ...: one address computed,
 * then constant steps, no bounds checks.  Opens "if (fast) { ... } else {"
 * and returns 1, or emits nothing and returns 0 when the tile's shape
 * doesn't divide among the threads. */
static int copy_fast(cg_t *g, const tilec_ir_stmt_t *s, int id, int vec, const int64_t *ext, int n,
                     int hs, int hd, int async)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *sb = src->buf, *db = dst->buf;
    if (n != 2 || db->ndim != 2 || (db->scope != TILEC_SCOPE_SHARED && db->scope != TILEC_SCOPE_FRAGMENT))
        return 0;
    int64_t rows = ext[0], vr = ext[1] / vec;
    if (vr <= 0 || g->nthreads % vr || (rows * vr) % g->nthreads)
        return 0;
    int64_t dr = g->nthreads / vr, per = rows * vr / g->nthreads;
    int srow = -1, last = sb->ndim - 1;
    for (int d = 0; d < last; d++)
        if (src->extent[d] > 1)
            srow = d;
    if (srow < 0 || dst->extent[0] != rows)
        return 0;
    int ib = id * 3 + 3000000, ie = ib + 1;
    /* first and last element of the tile in range, the first aligned */
    line(g, "const int tl_%d_0 = 0, tl_%d_1 = 0, tl_%d_0 = %lld, tl_%d_1 = %lld;", ib, ib, ie,
         (long long)rows - 1, ie, (long long)ext[1] - 1);
    out(g, "%*sconst %s *tl_fs%d = &b%d[", 2 * (g->ind + 1), "", stype(sb->dtype), id, sb->id);
    region_offset(g, src, hs, ib);
    out(g, "];\n");
    out(g, "%*sif (", 2 * (g->ind + 1), "");
    region_inbounds(g, src, hs, ib);
    out(g, " && ");
    region_inbounds(g, src, hs, ie);
    out(g, " && (((tl_u64)tl_fs%d | (tl_u64)(tl_s%d_%d * %d)) & 15) == 0) {\n", id, sb->id, last,
        (int)tilec_dtype_size(sb->dtype));
    g->ind++;
    line(g, "const int tl_%d_0 = tl_tid / %lld, tl_%d_1 = (tl_tid %% %lld) * %d;", ib, (long long)vr,
         ib, (long long)vr, vec);
    /* the source row stride in elements */
    out(g, "%*sconst tl_i64 tl_fst%d = (tl_i64)1", 2 * (g->ind + 1), "", id);
    for (int d = srow + 1; d <= last; d++)
        out(g, " * tl_s%d_%d", sb->id, d);
    out(g, ";\n");
    out(g, "%*sconst %s *tl_fp%d = &b%d[", 2 * (g->ind + 1), "", stype(sb->dtype), id, sb->id);
    region_offset(g, src, hs, ib);
    out(g, "];\n");
    /* rows r and r + 8m share their swizzle pattern, so a constant step
     * works for swizzled buffers when dr is a multiple of 8 */
    int64_t pitch = g->pitch[db->id] > 0 ? g->pitch[db->id] : const_dim(db, 1);
    int linear = !g->swz[db->id] || dr % 8 == 0;
    int64_t dstep = g->swz[db->id] ? dr * g->swz[db->id] : dr * pitch;
    if (linear) {
        out(g, "%*s%s *tl_fd%d = &b%d[", 2 * (g->ind + 1), "", stype(db->dtype), id, db->id);
        region_offset(g, dst, hd, ib);
        out(g, "];\n");
    }
    line(g, "#pragma unroll");
    line(g, "for (int tl_j = 0; tl_j < %lld; tl_j++) {", (long long)per);
    g->ind++;
    if (linear) {
        line(g, "%s *tl_d = tl_fd%d + tl_j * %lld;", stype(db->dtype), id, (long long)dstep);
    } else {
        line(g, "const int tl_%d_0 = tl_%d_0 + tl_j * %lld, tl_%d_1 = tl_%d_1;", ie, ib,
             (long long)dr, ie, ib);
        out(g, "%*s%s *tl_d = &b%d[", 2 * (g->ind + 1), "", stype(db->dtype), db->id);
        region_offset(g, dst, hd, ie);
        out(g, "];\n");
    }
    if (async)
        line(g, "tl_cp_async16(tl_d, tl_fp%d + tl_j * %lld * tl_fst%d, 1);", id, (long long)dr, id);
    else
        line(g, "*(uint4 *)tl_d = *(const uint4 *)(tl_fp%d + tl_j * %lld * tl_fst%d);", id,
             (long long)dr, id);
    g->ind--;
    line(g, "}");
    g->ind--;
    line(g, "} else {");
    g->ind++;
    return 1;
}

static int copy_vec(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w, int async)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *sb = src->buf, *db = dst->buf;
    /* conversions between float16, bfloat16 and float32 are done in
     * registers on the way (one rounding, like the scalar path) */
    int conv = sb->dtype != db->dtype;
    if (!w->coop || (conv && (async || !(is_f16ish(sb->dtype) || sb->dtype == TILEC_FLOAT32) ||
                              !(is_f16ish(db->dtype) || db->dtype == TILEC_FLOAT32))))
        return 0;
    int sg = sb->scope == TILEC_SCOPE_GLOBAL, dg = db->scope == TILEC_SCOPE_GLOBAL;
    if (sg == dg || per_thread_scope(sb->scope) || per_thread_scope(db->scope))
        return 0;
    size_t es = tilec_dtype_size(sg ? sb->dtype : db->dtype);
    if (es != 2 && es != 4)
        return 0;
    int vec = (int)(16 / es);
    int sd = sb->ndim - 1, dd = db->ndim - 1;
    int64_t ext[TILEC_IR_MAX_DIMS], sext[TILEC_IR_MAX_DIMS];
    int n = region_shape(dst, ext);
    int sn = region_shape(src, sext);
    if (n < 1 || n != sn || dst->extent[dd] != ext[n - 1] || src->extent[sd] != sext[n - 1] ||
        ext[n - 1] % vec != 0)
        return 0;
    int64_t total = 1;
    for (int i = 0; i < n; i++) {
        if (ext[i] != sext[i])
            return 0;
        total *= ext[i];
    }
    const tilec_ir_buffer_t *ob = sg ? db : sb; /* the on-chip side */
    int64_t opitch = g->pitch[ob->id] > 0 ? g->pitch[ob->id] : const_dim(ob, ob->ndim - 1);
    if (opitch <= 0 || (!conv && opitch % vec != 0))
        return 0;
    int64_t vext[TILEC_IR_MAX_DIMS];
    memcpy(vext, ext, sizeof(int64_t) * (size_t)n);
    vext[n - 1] /= vec;
    int id = g->tmp++;
    int hs = id * 3 + 1000000, hd = hs + 1, iv = hs + 2, ib = id * 3 + 2000000,
        ie = id * 3 + 2000001;
    const tilec_ir_region_t *gr = sg ? src : dst;
    int hg = sg ? hs : hd;
    line(g, "{ /* copy %s -> %s, 16-byte vectors%s */", sb->name, db->name,
         async ? " with cp.async" : "");
    g->ind++;
    hoist_bases(g, src, hs);
    hoist_bases(g, dst, hd);
    int fast = !conv && sg && copy_fast(g, s, id, vec, ext, n, hs, hd, async);
    line(g, "for (tl_i64 tl_k%d = tl_tid; tl_k%d < %" PRId64 "; tl_k%d += %d) {", id, id,
         total / vec, id, g->nthreads);
    g->ind++;
    char kname[32];
    snprintf(kname, sizeof kname, "tl_k%d", id);
    decompose(g, iv, kname, vext, n);
    for (int i = 0; i < n; i++)
        line(g, "const int tl_%d_%d = tl_%d_%d%s;", ib, i, iv, i, i == n - 1 ? (vec == 8 ? " * 8" : " * 4") : "");
    out(g, "%*sconst %s *tl_sp%d = &b%d[", 2 * (g->ind + 1), "", stype(sb->dtype), id, sb->id);
    region_offset(g, src, hs, ib);
    out(g, "];\n");
    out(g, "%*s%s *tl_dp%d = &b%d[", 2 * (g->ind + 1), "", stype(db->dtype), id, db->id);
    region_offset(g, dst, hd, ib);
    out(g, "];\n");
    /* the whole vector inside the tensor: every index in range and the last
     * one's vec-th element too */
    if (conv)
        out(g, "%*sif ((((tl_u64)tl_%cp%d) & 15) == 0 && ", 2 * (g->ind + 1), "", sg ? 's' : 'd', id);
    else
        out(g, "%*sif (((((tl_u64)tl_sp%d) | ((tl_u64)tl_dp%d)) & 15) == 0 && ", 2 * (g->ind + 1),
            "", id, id);
    region_inbounds(g, gr, hg, ib);
    {
        int nu = 0;
        int last = gr->buf->ndim - 1;
        out(g, " && (tl_u64)");
        for (int d = 0; d < last; d++)
            if (gr->extent[d] > 1)
                nu++;
        out(g, "(tl_%d_%d + tl_%d_%d + %d) < (tl_u64)tl_s%d_%d", hg, last, ib, nu, vec - 1,
            gr->buf->id, last);
    }
    out(g, ") {\n");
    if (async) {
        line(g, "  tl_cp_async16(tl_dp%d, tl_sp%d, 1);", id, id);
    } else if (!conv) {
        line(g, "  *(uint4 *)tl_dp%d = *(const uint4 *)tl_sp%d;", id, id);
    } else if (sg) {
        line(g, "  const uint4 tl_v = *(const uint4 *)tl_sp%d;", id);
        line(g, "  const %s *tl_e = (const %s *)&tl_v;", stype(sb->dtype), stype(sb->dtype));
        line(g, "  #pragma unroll");
        out(g, "%*s  for (int tl_i = 0; tl_i < %d; tl_i++) tl_dp%d[tl_i] = ", 2 * (g->ind + 1), "",
            vec, id);
        store_open(g, db->dtype);
        emit_load_conv_open(g, sb->dtype);
        out(g, "tl_e[tl_i]));\n");
    } else {
        line(g, "  uint4 tl_v;");
        line(g, "  %s *tl_e = (%s *)&tl_v;", stype(db->dtype), stype(db->dtype));
        line(g, "  #pragma unroll");
        out(g, "%*s  for (int tl_i = 0; tl_i < %d; tl_i++) tl_e[tl_i] = ", 2 * (g->ind + 1), "", vec);
        store_open(g, db->dtype);
        emit_load_conv_open(g, sb->dtype);
        out(g, "tl_sp%d[tl_i]));\n", id);
        line(g, "  *(uint4 *)tl_dp%d = tl_v;", id);
    }
    line(g, "} else {");
    g->ind++;
    line(g, "for (int tl_v = 0; tl_v < %d; tl_v++) {", vec);
    g->ind++;
    for (int i = 0; i < n; i++)
        line(g, "const int tl_%d_%d = tl_%d_%d%s;", ie, i, ib, i, i == n - 1 ? " + tl_v" : "");
    out(g, "%*s", 2 * (g->ind + 1), "");
    if (dg) {
        out(g, "if (");
        region_inbounds(g, dst, hd, ie);
        out(g, ") ");
    }
    out(g, "b%d[", db->id);
    region_offset(g, dst, hd, ie);
    out(g, "] = ");
    if (sg) {
        out(g, "!");
        region_inbounds(g, src, hs, ie);
        out(g, " ? (%s)0 : ", stype(db->dtype));
    }
    if (conv) {
        store_open(g, db->dtype);
        emit_load_conv_open(g, sb->dtype);
    }
    out(g, "b%d[", sb->id);
    region_offset(g, src, hs, ie);
    out(g, "]%s;\n", conv ? "))" : "");
    g->ind--;
    line(g, "}");
    g->ind--;
    line(g, "}");
    g->ind--;
    line(g, "}");
    if (fast) {
        g->ind--;
        line(g, "}");
    }
    g->ind--;
    line(g, "}");
    if (!async)
        emit_sync(g);
    return 1;
}

static void emit_fill(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    const tilec_ir_region_t *dst = &s->u.fill.dst;
    int64_t ext[TILEC_IR_MAX_DIMS];
    int n = region_shape(dst, ext);
    int64_t total = 1;
    for (int i = 0; i < n; i++)
        total *= ext[i];
    int id = g->tmp++;
    int hd = id * 3 + 1000000, ib = hd + 2;
    line(g, "{ /* fill %s */", dst->buf->name);
    g->ind++;
    hoist_bases(g, dst, hd);
    out(g, "%*sconst %s tl_fv%d = ", 2 * (g->ind + 1), "", stype(dst->buf->dtype), id);
    store_open(g, dst->buf->dtype);
    emit_expr(g, s->u.fill.value);
    out(g, ");\n");
    out(g, "%*sfor (tl_i64 tl_k%d = %s; tl_k%d < %" PRId64 "; tl_k%d += ", 2 * (g->ind + 1), "", id,
        w_start(w), id, total, id);
    w_stride(g, w);
    out(g, ") {\n");
    g->ind++;
    char kname[32];
    snprintf(kname, sizeof kname, "tl_k%d", id);
    decompose(g, ib, kname, ext, n);
    out(g, "%*s", 2 * (g->ind + 1), "");
    if (dst->buf->scope == TILEC_SCOPE_GLOBAL) {
        out(g, "if (");
        region_inbounds(g, dst, hd, ib);
        out(g, ") ");
    }
    out(g, "b%d[", dst->buf->id);
    region_offset(g, dst, hd, ib);
    out(g, "] = tl_fv%d;\n", id);
    g->ind--;
    line(g, "}");
    g->ind--;
    line(g, "}");
    if (w->coop)
        emit_sync(g);
}

/* element (i, j) of a 2-D on-chip buffer as a computed value */
static void elem2(cg_t *g, const tilec_ir_buffer_t *b, const char *i, const char *j)
{
    int64_t pitch = g->pitch[b->id] > 0 ? g->pitch[b->id] : const_dim(b, 1);
    emit_load_conv_open(g, b->dtype);
    out(g, "b%d[(%s) * %" PRId64 " + (%s)])", b->id, i, pitch, j);
}

static int try_gemm_mma(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w);

static void emit_gemm(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    int64_t M = const_dim(C, 0), N = const_dim(C, 1);
    int64_t K = ta ? const_dim(A, 0) : const_dim(A, 1);
    if (M <= 0 || N <= 0 || K <= 0 || A->ndim != 2 || B->ndim != 2 || C->ndim != 2) {
        cg_fail(g, "gemm: operands must be 2-D buffers of constant shape");
        return;
    }
    if (try_gemm_mma(g, s, w))
        return;
    int id = g->tmp++;
    tilec_dtype_t ct = C->dtype;
    const char *acc = is_flt(ct) ? (ct == TILEC_FLOAT64 ? "double" : "float") : ctype(ct);
    line(g, "/* gemm %s = %s%s x %s%s on CUDA cores */", C->name, A->name, ta ? "^T" : "",
         B->name, tb ? "^T" : "");
    line(g, "for (int tl_e%d = %s; tl_e%d < %" PRId64 "; tl_e%d += %d) {", id, w_start(w), id,
         M * N, id, w->coop ? g->nthreads : 1);
    g->ind++;
    line(g, "const int tl_i%d = tl_e%d / %" PRId64 ", tl_j%d = tl_e%d %% %" PRId64 ";", id, id, N,
         id, id, N);
    char ci[32], cj[32], kk[32];
    snprintf(ci, sizeof ci, "tl_i%d", id);
    snprintf(cj, sizeof cj, "tl_j%d", id);
    snprintf(kk, sizeof kk, "tl_kk%d", id);
    if (s->u.gemm.clear_accum) {
        line(g, "%s tl_acc%d = 0;", acc, id);
    } else {
        out(g, "%*s%s tl_acc%d = (%s)", 2 * (g->ind + 1), "", acc, id, acc);
        elem2(g, C, ci, cj);
        out(g, ";\n");
    }
    line(g, "#pragma unroll 4");
    line(g, "for (int %s = 0; %s < %" PRId64 "; %s++)", kk, kk, K, kk);
    out(g, "%*s  tl_acc%d += (%s)", 2 * (g->ind + 1), "", id, acc);
    if (ta)
        elem2(g, A, kk, ci);
    else
        elem2(g, A, ci, kk);
    out(g, " * (%s)", acc);
    if (tb)
        elem2(g, B, cj, kk);
    else
        elem2(g, B, kk, cj);
    out(g, ";\n");
    int64_t cp = g->pitch[C->id] > 0 ? g->pitch[C->id] : N;
    out(g, "%*sb%d[tl_i%d * %" PRId64 " + tl_j%d] = ", 2 * (g->ind + 1), "", C->id, id, cp, id);
    store_open(g, ct);
    out(g, "tl_acc%d);\n", id);
    g->ind--;
    line(g, "}");
    if (w->coop)
        emit_sync(g);
}

/* Tensor-core GEMM (sm_80+): A, B float16/bfloat16 in shared memory
 * (shared or fragment buffers, any transpose), C a float32 fragment.
 * Warps tile C; each warp owns a WM x WN sub-tile made of 16x8 mma tiles
 * whose accumulators it keeps in registers (the m16n8k16 layout: lane l
 * holds rows l/4 and l/4+8, columns 2(l%4) and 2(l%4)+1 of each tile),
 * loads its operands with ldmatrix (.trans for a K-major B or an M-major
 * A), and reads/writes C in shared memory before/after the K loop — or
 * once around a whole loop when the accumulator is loop-resident. */
/* The tensor-core plan of a GEMM as the gemm_warp pass chose it
 * (lower.mma, lower.warp, lower.mma_tiles): 0 when it runs on the CUDA
 * cores.  A wgmma instruction (sm_90a) is issued by warpgroups of four
 * warps, lower.warp being gm x gn groups each issuing wgmma.m64nWNk16 for
 * every 64 rows of its (M/gm) x WN tile; warp w of a group holds rows
 * 16w..16w+15 of each 64, in the same register layout as mma.sync's
 * m16n8 accumulators, so the rest of the generator (accumulator loads,
 * stores, register-only fragments) serves both. */
static int mma_plan(cg_t *g, const tilec_ir_stmt_t *s, mma_plan_t *p)
{
    const tilec_ir_attr_t *mma = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma");
    const tilec_ir_attr_t *w = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.warp");
    const tilec_ir_attr_t *t = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma_tiles");
    const tilec_ir_attr_t *sh = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma_shape");
    const tilec_ir_buffer_t *A = s->u.gemm.a, *C = s->u.gemm.c;
    memset(p, 0, sizeof *p);
    if (!mma || mma->kind != TILEC_ATTR_STRING || strcmp(mma->s, "simt") == 0 || !w || w->n != 2 ||
        !t || t->n != 2 || !sh || sh->n != 3)
        return 0;
    p->wg = strncmp(mma->s, "wgmma.", 6) == 0;
    p->M = const_dim(C, 0);
    p->N = const_dim(C, 1);
    p->K = s->u.gemm.trans_a ? const_dim(A, 0) : const_dim(A, 1);
    p->bf16 = A->dtype == TILEC_BFLOAT16;
    p->ev = 4;
    p->mt = (int)t->tuple[0];
    if (p->wg) {
        p->gm = (int)w->tuple[0];
        p->gn = (int)w->tuple[1];
        p->wm = g->nthreads / 32; /* for the accumulator code: one warp a 16-row slice */
        p->wn = 1;
        p->WM = p->M / p->gm;
        p->WN = sh->tuple[1];
        p->nt = (int)(p->WN / 8);
        p->mstride = 64;
    } else {
        p->wm = (int)w->tuple[0];
        p->wn = (int)w->tuple[1];
        p->WM = p->M / p->wm;
        p->WN = p->N / p->wn;
        p->nt = (int)t->tuple[1];
        p->mstride = 16;
    }
    return 1;
}

/* warp coordinates and the accumulator array tl_c<id> */
static void mma_decl(cg_t *g, const mma_plan_t *p, int id)
{
    line(g, "const int tl_w%d = tl_tid >> 5, tl_l%d = tl_tid & 31;", id, id);
    if (p->wg)
        line(g, "const int tl_wm%d = ((tl_w%d >> 2) / %d) * %lld + (tl_w%d & 3) * 16, "
             "tl_wn%d = ((tl_w%d >> 2) %% %d) * %lld;", id, id, p->gn, (long long)p->WM, id, id,
             id, p->gn, (long long)p->WN);
    else
        line(g, "const int tl_wm%d = (tl_w%d / %d) * %lld, tl_wn%d = (tl_w%d %% %d) * %lld;", id,
             id, p->wn, (long long)p->WM, id, id, p->wn, (long long)p->WN);
    line(g, "float tl_c%d[%d][%d][4] = {};", id, p->mt, p->nt);
}

/* C (shared memory) <-> registers; load=1 reads, 0 writes; zero=1 clears */
static void mma_cmove(cg_t *g, const mma_plan_t *p, const tilec_ir_buffer_t *C, int id, int load,
                      int zero)
{
    int64_t pc = g->pitch[C->id] > 0 ? g->pitch[C->id] : p->N;
    line(g, "#pragma unroll");
    line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    line(g, "#pragma unroll");
    line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++) {", p->nt);
    g->ind++;
    if (zero) {
        line(g, "tl_c%d[tl_mi][tl_ni][0] = tl_c%d[tl_mi][tl_ni][1] = tl_c%d[tl_mi][tl_ni][2] = "
             "tl_c%d[tl_mi][tl_ni][3] = 0.0f;", id, id, id, id);
    } else {
        line(g, "const int tl_r = tl_wm%d + tl_mi * %d + (tl_l%d >> 2), tl_q = tl_wn%d + tl_ni * 8 "
             "+ (tl_l%d & 3) * 2;", id, p->mstride, id, id, id);
        line(g, "float2 *tl_p0 = (float2 *)&b%d[tl_r * %lld + tl_q];", C->id, (long long)pc);
        line(g, "float2 *tl_p1 = (float2 *)&b%d[(tl_r + 8) * %lld + tl_q];", C->id, (long long)pc);
        if (load) {
            line(g, "const float2 tl_v0 = *tl_p0, tl_v1 = *tl_p1;");
            line(g, "tl_c%d[tl_mi][tl_ni][0] = tl_v0.x; tl_c%d[tl_mi][tl_ni][1] = tl_v0.y;", id, id);
            line(g, "tl_c%d[tl_mi][tl_ni][2] = tl_v1.x; tl_c%d[tl_mi][tl_ni][3] = tl_v1.y;", id, id);
        } else {
            line(g, "*tl_p0 = make_float2(tl_c%d[tl_mi][tl_ni][0], tl_c%d[tl_mi][tl_ni][1]);", id, id);
            line(g, "*tl_p1 = make_float2(tl_c%d[tl_mi][tl_ni][2], tl_c%d[tl_mi][tl_ni][3]);", id, id);
        }
    }
    g->ind--;
    line(g, "}");
}

/* name of the wgmma helper for a plan and transposes (see emit_wgmma_fns) */
static void wg_name(char *buf, size_t n, const mma_plan_t *p, int ta, int tb)
{
    snprintf(buf, n, "tl_wgmma_%lld%s%s%s", (long long)p->WN, p->bf16 ? "_bf16" : "",
             ta ? "_ta" : "", tb ? "_tb" : "");
}

/* descriptor arguments of a swizzled operand read by wgmma: kmajor = rows
 * of the buffer are M or N and K runs along them; else rows are K */
static void wg_desc(cg_t *g, const tilec_ir_buffer_t *b, int kmajor, const char *mn,
                    const char *dst)
{
    int W = g->swz[b->id];
    int64_t R = const_dim(b, 0);
    int mode = W == 64 ? 1 : W == 32 ? 2 : 3;
    if (kmajor)
        line(g, "const tl_u64 %s = tl_desc(tl_sa(b%d) + 2u * (tl_u32)((tl_k0 / %d) * %lld + (%s) * %d "
             "+ (tl_k0 %% %d)), 16u, %du, %d);", dst, b->id, W, (long long)(R * W), mn, W, W,
             16 * W, mode);
    else
        line(g, "const tl_u64 %s = tl_desc(tl_sa(b%d) + 2u * (tl_u32)(((%s) / %d) * %lld + tl_k0 * %d), "
             "%lldu, %du, %d);", dst, b->id, mn, W, (long long)(R * W), W, (long long)(R * W * 2),
             16 * W, mode);
}

/* The K loop on wgmma: each warpgroup issues, for every 16 of K and every
 * 64 rows of its tile, one wgmma.m64nWNk16 reading A and B through
 * shared-memory descriptors, then waits for them all. */
static void wg_kloop(cg_t *g, const tilec_ir_stmt_t *s, const mma_plan_t *p, int id)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b;
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    char fn[64];
    wg_name(fn, sizeof fn, p, ta, tb);
    g->info->wgmma++;
    line(g, "tl_keep_acc<%d>(&tl_c%d[0][0][0]);", p->mt * p->nt * 4, id);
    line(g, "tl_wg_fence();");
    line(g, "#pragma unroll");
    line(g, "for (int tl_k0 = 0; tl_k0 < %lld; tl_k0 += 16) {", (long long)p->K);
    g->ind++;
    line(g, "#pragma unroll");
    line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++) {", p->mt);
    g->ind++;
    char mrow[64], ncol[64];
    snprintf(mrow, sizeof mrow, "(tl_wm%d & ~63) + tl_mi * 64", id);
    snprintf(ncol, sizeof ncol, "tl_wn%d", id);
    wg_desc(g, A, !ta, mrow, "tl_da");
    wg_desc(g, B, tb, ncol, "tl_db");
    line(g, "%s(tl_c%d[tl_mi], tl_da, tl_db);", fn, id);
    g->ind--;
    line(g, "}");
    g->ind--;
    line(g, "}");
    line(g, "tl_wg_commit();");
    line(g, "tl_wg_wait<%d>();", g->wg_defer == s ? 1 : 0);
    line(g, "tl_keep_acc<%d>(&tl_c%d[0][0][0]);", p->mt * p->nt * 4, id);
}

/* the K loop of mma.sync over the accumulators tl_c<id> */
static void mma_kloop(cg_t *g, const tilec_ir_stmt_t *s, const mma_plan_t *p, int id)
{
    if (p->wg) {
        wg_kloop(g, s, p, id);
        return;
    }
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b;
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    int64_t pa = g->pitch[A->id] > 0 ? g->pitch[A->id] : const_dim(A, 1);
    int64_t pb = g->pitch[B->id] > 0 ? g->pitch[B->id] : const_dim(B, 1);
    line(g, "#pragma unroll 2");
    line(g, "for (int tl_k0 = 0; tl_k0 < %lld; tl_k0 += 16) {", (long long)p->K);
    g->ind++;
    line(g, "tl_u32 tl_a[%d][4], tl_b[%d][2];", p->mt, p->nt);
    line(g, "const int tl_li = tl_l%d & 7, tl_lj = tl_l%d >> 3;", id, id);
    /* A: rows m, cols k (ta=0) or rows k, cols m (ta=1) */
    line(g, "#pragma unroll");
    line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++) {", p->mt);
    g->ind++;
    line(g, "const int tl_m0 = tl_wm%d + tl_mi * 16;", id);
    if (!ta)
        line(g, "tl_ldsm_x4(tl_a[tl_mi], &b%d[(tl_m0 + (tl_l%d & 15)) * %lld + tl_k0 + (tl_l%d >> 4) * 8]);",
             A->id, id, (long long)pa, id);
    else
        line(g, "tl_ldsm_x4_t(tl_a[tl_mi], &b%d[(tl_k0 + tl_li + (tl_lj >> 1) * 8) * %lld + tl_m0 + (tl_lj & 1) * 8]);",
             A->id, (long long)pa);
    g->ind--;
    line(g, "}");
    /* B: rows k, cols n (tb=0, .trans) or rows n, cols k (tb=1) */
    if (p->WN % 16 == 0) {
        line(g, "#pragma unroll");
        line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni += 2) {", p->nt);
        g->ind++;
        line(g, "const int tl_n0 = tl_wn%d + tl_ni * 8;", id);
        line(g, "tl_u32 tl_t[4];");
        if (!tb)
            line(g, "tl_ldsm_x4_t(tl_t, &b%d[(tl_k0 + tl_li + (tl_lj & 1) * 8) * %lld + tl_n0 + (tl_lj >> 1) * 8]);",
                 B->id, (long long)pb);
        else
            line(g, "tl_ldsm_x4(tl_t, &b%d[(tl_n0 + tl_li + (tl_lj >> 1) * 8) * %lld + tl_k0 + (tl_lj & 1) * 8]);",
                 B->id, (long long)pb);
        line(g, "tl_b[tl_ni][0] = tl_t[0]; tl_b[tl_ni][1] = tl_t[1]; tl_b[tl_ni + 1][0] = tl_t[2]; tl_b[tl_ni + 1][1] = tl_t[3];");
        g->ind--;
        line(g, "}");
    } else {
        line(g, "#pragma unroll");
        line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++) {", p->nt);
        g->ind++;
        line(g, "const int tl_n0 = tl_wn%d + tl_ni * 8;", id);
        line(g, "const int tl_lk = tl_l%d & 15;", id);
        if (!tb)
            line(g, "tl_ldsm_x2_t(tl_b[tl_ni], &b%d[(tl_k0 + (tl_lk & 7) + (tl_lk >> 3) * 8) * %lld + tl_n0]);",
                 B->id, (long long)pb);
        else
            line(g, "tl_ldsm_x2(tl_b[tl_ni], &b%d[(tl_n0 + (tl_lk & 7)) * %lld + tl_k0 + (tl_lk >> 3) * 8]);",
                 B->id, (long long)pb);
        g->ind--;
        line(g, "}");
    }
    line(g, "#pragma unroll");
    line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    line(g, "#pragma unroll");
    line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++)", p->nt);
    line(g, "  %s(tl_c%d[tl_mi][tl_ni], tl_a[tl_mi], tl_b[tl_ni]);", p->bf16 ? "tl_mma_bf16" : "tl_mma_f16", id);
    g->ind--;
    line(g, "}");
}

static int try_gemm_mma(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    mma_plan_t p;
    if (!w->coop || !mma_plan(g, s, &p))
        return 0;
    g->info->mma++;
    const tilec_ir_buffer_t *C = s->u.gemm.c;
    if (p.wg)
        line(g, "/* gemm %s = %s%s x %s%s on tensor cores (wgmma): %dx%d warpgroups of %lldx%lld */",
             C->name, s->u.gemm.a->name, s->u.gemm.trans_a ? "^T" : "", s->u.gemm.b->name,
             s->u.gemm.trans_b ? "^T" : "", p.gm, p.gn, (long long)p.WM, (long long)p.WN);
    else
        line(g, "/* gemm %s = %s%s x %s%s on tensor cores: %dx%d warps of %lldx%lld */", C->name,
             s->u.gemm.a->name, s->u.gemm.trans_a ? "^T" : "", s->u.gemm.b->name,
             s->u.gemm.trans_b ? "^T" : "", p.wm, p.wn, (long long)p.WM, (long long)p.WN);
    if (g->resident == s || g->rf[C->id]) {
        /* accumulators already in registers (loop-resident, or the
         * fragment's home) */
        int id = g->resident == s ? g->resident_id : g->rf_id[C->id];
        if (s->u.gemm.clear_accum)
            mma_cmove(g, &p, C, id, 1, 1);
        mma_kloop(g, s, &p, id);
        if (g->wg_defer != s)
            emit_sync(g);
        return 1;
    }
    int id = g->tmp++;
    line(g, "{");
    g->ind++;
    mma_decl(g, &p, id);
    mma_cmove(g, &p, C, id, 1, s->u.gemm.clear_accum);
    mma_kloop(g, s, &p, id);
    mma_cmove(g, &p, C, id, 0, 0);
    g->ind--;
    line(g, "}");
    emit_sync(g);
    return 1;
}

/* src seen as [outer][R][inner] around dimension dim, for reduce and
 * cumsum, which need dense rows: 0 (and a failure) for padded buffers */
static int split_dims(cg_t *g, const tilec_ir_buffer_t *src, const tilec_ir_buffer_t *dst, int dim,
                      const char *what, int64_t *outer, int64_t *R, int64_t *inner)
{
    *outer = *inner = 1;
    *R = const_dim(src, dim);
    for (int d = 0; d < dim; d++)
        *outer *= const_dim(src, d);
    for (int d = dim + 1; d < src->ndim; d++)
        *inner *= const_dim(src, d);
    if (g->pitch[src->id] > 0 || g->pitch[dst->id] > 0) {
        cg_fail(g, "%s: padded buffers are not supported", what);
        return 0;
    }
    return 1;
}

static void emit_reduce(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
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
    if (is_flt(t))
        acc = t == TILEC_FLOAT64 ? "double" : "float";
    else if (op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM)
        acc = tilec_dtype_is_signed(t) || t == TILEC_BOOL ? "tl_i64" : "tl_u64";
    else
        acc = ctype(t);
    int is_sum = op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM;
    int is_abs = op == TILEC_RED_ABSSUM || op == TILEC_RED_ABSMAX;
    int is_max = op == TILEC_RED_MAX || op == TILEC_RED_ABSMAX;
    /* rows along the last dimension: G threads per row (a power of two up
     * to a whole warp, so that a warp reads consecutive words of a row and
     * hits distinct banks), combined by shuffles; the warps take the rows
     * in turn */
    int G = 1;
    if (w->coop && inner == 1 && g->nthreads % 32 == 0 &&
        (is_flt(t) || is_sum)) {
        while (G < 32 && G * 2 <= R)
            G *= 2;
    }
    if (G >= 2) {
        const char *comb = is_sum ? "+" : NULL;
        const char *fn = is_max ? "tl_max" : "tl_min";
        int rows = g->nthreads / G;
        line(g, "/* reduce %s %s -> %s dim %d: %d threads per row */", tilec_reduce_op_name(op),
             src->name, dst->name, dim, G);
        line(g, "for (int tl_b%d = 0; tl_b%d < %" PRId64 "; tl_b%d += %d) {", id, id, outer, id, rows);
        g->ind++;
        line(g, "const int tl_o%d = tl_b%d + tl_tid / %d, tl_g%d = tl_tid %% %d;", id, id, G, id, G);
        if (is_sum || op == TILEC_RED_ABSMAX)
            line(g, "%s tl_acc%d = 0;", acc, id);
        else
            line(g, "%s tl_acc%d = %s;", acc, id,
                 is_max ? (t == TILEC_FLOAT64 ? "-tl_infd()" : "-tl_inff()")
                        : (t == TILEC_FLOAT64 ? "tl_infd()" : "tl_inff()"));
        line(g, "if (tl_o%d < %" PRId64 ")", id, outer);
        line(g, "  for (int tl_r%d = tl_g%d; tl_r%d < %" PRId64 "; tl_r%d += %d) {", id, id, id, R, id, G);
        out(g, "%*s    %s tl_x%d = (%s)", 2 * (g->ind + 1), "", acc, id, acc);
        emit_load_conv_open(g, t);
        out(g, "b%d[tl_o%d * %" PRId64 " + tl_r%d]);\n", src->id, id, R, id);
        if (is_abs)
            line(g, "    tl_x%d = %s(tl_x%d);", id, is_flt(t) ? "tl_abs" : "tl_iabs", id);
        if (comb)
            line(g, "    tl_acc%d += tl_x%d;", id, id);
        else
            line(g, "    tl_acc%d = %s(tl_acc%d, tl_x%d);", id, fn, id, id);
        line(g, "  }");
        line(g, "#pragma unroll");
        line(g, "for (int tl_s = %d; tl_s > 0; tl_s >>= 1) {", G / 2);
        line(g, "  const %s tl_y = __shfl_xor_sync(0xffffffffu, tl_acc%d, tl_s);", acc, id);
        if (comb)
            line(g, "  tl_acc%d += tl_y;", id);
        else
            line(g, "  tl_acc%d = %s(tl_acc%d, tl_y);", id, fn, id);
        line(g, "}");
        line(g, "if (tl_o%d < %" PRId64 " && tl_g%d == 0) {", id, outer, id);
        g->ind++;
        if (!s->u.reduce.clear) {
            out(g, "%*s{ %s tl_d%d = (%s)", 2 * (g->ind + 1), "", acc, id, acc);
            emit_load_conv_open(g, dst->dtype);
            out(g, "b%d[tl_o%d]); ", dst->id, id);
            if (is_sum)
                out(g, "tl_acc%d += tl_d%d; }\n", id, id);
            else
                out(g, "tl_acc%d = %s(tl_d%d, tl_acc%d); }\n", id, fn, id, id);
        }
        out(g, "%*sb%d[tl_o%d] = ", 2 * (g->ind + 1), "", dst->id, id);
        store_open(g, dst->dtype);
        out(g, "tl_acc%d);\n", id);
        g->ind--;
        line(g, "}");
        g->ind--;
        line(g, "}");
        emit_sync(g);
        return;
    }
    line(g, "/* reduce %s %s -> %s dim %d */", tilec_reduce_op_name(op), src->name, dst->name, dim);
    line(g, "for (int tl_e%d = %s; tl_e%d < %" PRId64 "; tl_e%d += %d) {", id, w_start(w), id,
         outer * inner, id, w->coop ? g->nthreads : 1);
    g->ind++;
    line(g, "const int tl_o%d = tl_e%d / %" PRId64 ", tl_n%d = tl_e%d %% %" PRId64 ";", id, id,
         inner, id, id, inner);
    /* initial value */
    if (is_sum || op == TILEC_RED_ABSMAX)
        line(g, "%s tl_acc%d = 0;", acc, id);
    else if (is_flt(t))
        line(g, "%s tl_acc%d = %s;", acc, id,
             is_max ? (t == TILEC_FLOAT64 ? "-tl_infd()" : "-tl_inff()")
                    : (t == TILEC_FLOAT64 ? "tl_infd()" : "tl_inff()"));
    else
        line(g, "%s tl_acc%d = b%d[tl_o%d * %" PRId64 " + tl_n%d];", acc, id, src->id, id,
             R * inner, id);
    line(g, "for (int tl_r%d = 0; tl_r%d < %" PRId64 "; tl_r%d++) {", id, id, R, id);
    out(g, "%*s  %s tl_x%d = (%s)", 2 * (g->ind + 1), "", acc, id, acc);
    emit_load_conv_open(g, t);
    out(g, "b%d[(tl_o%d * %" PRId64 " + tl_r%d) * %" PRId64 " + tl_n%d]);\n", src->id, id, R, id,
        inner, id);
    if (is_abs)
        line(g, "  tl_x%d = %s(tl_x%d);", id, is_flt(t) ? "tl_abs" : "tl_iabs", id);
    if (is_sum)
        line(g, "  tl_acc%d += tl_x%d;", id, id);
    else if (is_flt(t))
        line(g, "  tl_acc%d = %s(tl_acc%d, tl_x%d);", id, is_max ? "tl_max" : "tl_min", id, id);
    else
        line(g, "  tl_acc%d = %s(tl_acc%d, tl_x%d);", id, is_max ? "tl_imax" : "tl_imin", id, id);
    line(g, "}");
    if (!s->u.reduce.clear) {
        out(g, "%*s{ %s tl_d%d = (%s)", 2 * (g->ind + 1), "", acc, id, acc);
        emit_load_conv_open(g, dst->dtype);
        out(g, "b%d[tl_o%d * %" PRId64 " + tl_n%d]); ", dst->id, id, inner, id);
        if (is_sum)
            out(g, "tl_acc%d += tl_d%d; }\n", id, id);
        else
            out(g, "tl_acc%d = %s(tl_d%d, tl_acc%d); }\n", id,
                is_flt(t) ? (is_max ? "tl_max" : "tl_min") : (is_max ? "tl_imax" : "tl_imin"), id,
                id);
    }
    out(g, "%*sb%d[tl_o%d * %" PRId64 " + tl_n%d] = ", 2 * (g->ind + 1), "", dst->id, id, inner, id);
    store_open(g, dst->dtype);
    out(g, "tl_acc%d);\n", id);
    g->ind--;
    line(g, "}");
    if (w->coop)
        emit_sync(g);
}

static void emit_cumsum(cg_t *g, const tilec_ir_stmt_t *s, const who_t *w)
{
    const tilec_ir_buffer_t *src = s->u.cumsum.src, *dst = s->u.cumsum.dst;
    int dim = s->u.cumsum.dim;
    int64_t outer, R, inner;
    if (!split_dims(g, src, dst, dim, "cumsum", &outer, &R, &inner))
        return;
    int id = g->tmp++;
    tilec_dtype_t t = src->dtype;
    const char *acc = is_flt(t) ? (t == TILEC_FLOAT64 ? "double" : "float")
                                : (tilec_dtype_is_signed(t) ? "tl_i64" : "tl_u64");
    if (w->coop)
        emit_sync(g); /* src == dst is allowed: everyone has read before */
    line(g, "/* cumsum %s -> %s dim %d%s */", src->name, dst->name, dim,
         s->u.cumsum.reverse ? " reverse" : "");
    line(g, "for (int tl_e%d = %s; tl_e%d < %" PRId64 "; tl_e%d += %d) {", id, w_start(w), id,
         outer * inner, id, w->coop ? g->nthreads : 1);
    g->ind++;
    line(g, "const int tl_o%d = tl_e%d / %" PRId64 ", tl_n%d = tl_e%d %% %" PRId64 ";", id, id,
         inner, id, id, inner);
    line(g, "%s tl_acc%d = 0;", acc, id);
    line(g, "for (int tl_q%d = 0; tl_q%d < %" PRId64 "; tl_q%d++) {", id, id, R, id);
    if (s->u.cumsum.reverse)
        line(g, "  const int tl_r%d = %" PRId64 " - tl_q%d;", id, R - 1, id);
    else
        line(g, "  const int tl_r%d = tl_q%d;", id, id);
    line(g, "  const int tl_p%d = (tl_o%d * %" PRId64 " + tl_r%d) * %" PRId64 " + tl_n%d;", id, id,
         R, id, inner, id);
    out(g, "%*s  tl_acc%d += (%s)", 2 * (g->ind + 1), "", id, acc);
    emit_load_conv_open(g, t);
    out(g, "b%d[tl_p%d]);\n", src->id, id);
    out(g, "%*s  b%d[tl_p%d] = ", 2 * (g->ind + 1), "", dst->id, id);
    store_open(g, dst->dtype);
    out(g, "tl_acc%d);\n", id);
    line(g, "}");
    g->ind--;
    line(g, "}");
    if (w->coop)
        emit_sync(g);
}

static void emit_atomic(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *b = s->u.atomic.buf;
    tilec_dtype_t t = b->dtype;
    tilec_atomic_op_t op = s->u.atomic.op;
    int id = g->tmp++;
    line(g, "{ /* atomic %s %s */", tilec_atomic_op_name(op), b->name);
    g->ind++;
    out(g, "%*s%s *tl_ap%d = &b%d[", 2 * (g->ind + 1), "", stype(t), id, b->id);
    emit_offset(g, b, s->u.atomic.idx);
    out(g, "];\n");
    out(g, "%*sconst %s tl_av%d = (", 2 * (g->ind + 1), "", ctype(t), id);
    emit_expr(g, s->u.atomic.value);
    out(g, ");\n");
    const char *fop = op == TILEC_ATOMIC_ADD ? NULL : op == TILEC_ATOMIC_MAX ? "tl_max" : "tl_min";
    const char *iop = op == TILEC_ATOMIC_ADD ? NULL : op == TILEC_ATOMIC_MAX ? "tl_imax" : "tl_imin";
    const char *native = op == TILEC_ATOMIC_ADD ? "atomicAdd" : op == TILEC_ATOMIC_MAX ? "atomicMax" : "atomicMin";
    switch (t) {
    case TILEC_FLOAT32:
        if (op == TILEC_ATOMIC_ADD)
            line(g, "atomicAdd(tl_ap%d, tl_av%d);", id, id);
        else
            line(g, "tl_rmw32(tl_ap%d, [&](tl_u32 x) { return __float_as_uint(%s(__uint_as_float(x), tl_av%d)); });",
                 id, fop, id);
        break;
    case TILEC_FLOAT64:
        if (op == TILEC_ATOMIC_ADD)
            line(g, "atomicAdd(tl_ap%d, tl_av%d);", id, id);
        else
            line(g, "tl_rmw64(tl_ap%d, [&](tl_u64 x) { return (tl_u64)__double_as_longlong(%s(__longlong_as_double((tl_i64)x), tl_av%d)); });",
                 id, fop, id);
        break;
    case TILEC_FLOAT16:
    case TILEC_BFLOAT16: {
        const char *ld = t == TILEC_FLOAT16 ? "tl_h2f" : "tl_b2f";
        const char *st = t == TILEC_FLOAT16 ? "tl_f2h" : "tl_f2b";
        if (op == TILEC_ATOMIC_ADD)
            line(g, "tl_rmw_sub<2>(tl_ap%d, [&](tl_u32 x) { return (tl_u32)%s(%s((tl_u16)x) + tl_av%d); });",
                 id, st, ld, id);
        else
            line(g, "tl_rmw_sub<2>(tl_ap%d, [&](tl_u32 x) { return (tl_u32)%s(%s(%s((tl_u16)x), tl_av%d)); });",
                 id, st, fop, ld, id);
        break;
    }
    case TILEC_INT32:
    case TILEC_UINT32:
        line(g, "%s(tl_ap%d, tl_av%d);", native, id, id);
        break;
    case TILEC_INT64:
        if (op == TILEC_ATOMIC_ADD)
            line(g, "atomicAdd((tl_u64 *)tl_ap%d, (tl_u64)tl_av%d);", id, id);
        else
            line(g, "%s((long long *)tl_ap%d, (long long)tl_av%d);", native, id, id);
        break;
    case TILEC_UINT64:
        line(g, "%s((unsigned long long *)tl_ap%d, (unsigned long long)tl_av%d);", native, id, id);
        break;
    case TILEC_INT8:
    case TILEC_UINT8:
    case TILEC_INT16:
    case TILEC_UINT16:
    case TILEC_BOOL: {
        int by = (int)tilec_dtype_size(t);
        const char *stt = stype(t);
        if (op == TILEC_ATOMIC_ADD)
            line(g, "tl_rmw_sub<%d>(tl_ap%d, [&](tl_u32 x) { return (tl_u32)(%s)((%s)x + tl_av%d); });",
                 by, id, stt, stt, id);
        else
            line(g, "tl_rmw_sub<%d>(tl_ap%d, [&](tl_u32 x) { return (tl_u32)(%s)%s<%s>((%s)x, (%s)tl_av%d); });",
                 by, id, stt, iop, ctype(t), stt, ctype(t), id);
        break;
    }
    default:
        cg_fail(g, "atomic on %s is not supported", tilec_dtype_name(t));
    }
    g->ind--;
    line(g, "}");
}

static void emit_print(cg_t *g, const tilec_ir_stmt_t *s)
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
        out(g, "%*sprintf(\"%%s%s%%%s\\n\", %s, ", 2 * (g->ind + 1), "", *msg ? ": " : "",
            is_flt(t) ? "g" : tilec_dtype_is_signed(t) ? "lld" : "llu", lit.s);
        out(g, is_flt(t) ? "(double)(" : tilec_dtype_is_signed(t) ? "(long long)(" : "(unsigned long long)(");
        emit_expr(g, s->u.print.value);
        out(g, "));\n");
    } else if (s->u.print.buf) {
        const tilec_ir_buffer_t *b = s->u.print.buf;
        int64_t n = tilec_ir_buffer_const_size(b);
        if (n < 0 || g->pitch[b->id] > 0) {
            line(g, "printf(\"%%s: buffer %s\\n\", %s);", b->name[0] ? "(dynamic shape)" : "", lit.s);
        } else {
            int id = g->tmp++;
            tilec_dtype_t t = b->dtype;
            line(g, "printf(\"%%s: %s\\n\", %s);", "buffer", lit.s);
            line(g, "for (int tl_e%d = 0; tl_e%d < %" PRId64 "; tl_e%d++)", id, id, n, id);
            out(g, "%*s  printf(\"%%%s \", ", 2 * (g->ind + 1), "",
                is_flt(t) ? "g" : tilec_dtype_is_signed(t) ? "lld" : "llu");
            out(g, is_flt(t) ? "(double)" : tilec_dtype_is_signed(t) ? "(long long)" : "(unsigned long long)");
            emit_load_conv_open(g, t);
            out(g, "b%d[tl_e%d]));\n", b->id, id);
            line(g, "printf(\"\\n\");");
        }
    }
    tilec_sdk_str_free(&lit);
}

/* does a statement list store into a per-thread (local/var) buffer? */
static int writes_per_thread(const tilec_ir_stmt_t *s, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return 1;
    for (; s; s = s->next) {
        switch (s->kind) {
        case TILEC_ST_FOR:
            if (writes_per_thread(s->u.loop.body, depth + 1))
                return 1;
            break;
        case TILEC_ST_IF:
            if (writes_per_thread(s->u.cond.then, depth + 1) ||
                writes_per_thread(s->u.cond.els, depth + 1))
                return 1;
            break;
        case TILEC_ST_STORE:
            if (per_thread_scope(s->u.store.buf->scope))
                return 1;
            break;
        case TILEC_ST_COPY:
            if (per_thread_scope(s->u.copy.dst.buf->scope))
                return 1;
            break;
        case TILEC_ST_FILL:
            if (per_thread_scope(s->u.fill.dst.buf->scope))
                return 1;
            break;
        case TILEC_ST_GEMM:
            if (per_thread_scope(s->u.gemm.c->scope))
                return 1;
            break;
        case TILEC_ST_REDUCE:
            if (per_thread_scope(s->u.reduce.dst->scope))
                return 1;
            break;
        case TILEC_ST_CUMSUM:
            if (per_thread_scope(s->u.cumsum.dst->scope))
                return 1;
            break;
        default:
            break;
        }
    }
    return 0;
}

/* ---- buffer references ---------------------------------------------------- */

static int expr_refs(const tilec_ir_expr_t *e, const tilec_ir_buffer_t *b, int depth)
{
    if (!e || depth > CG_MAX_DEPTH)
        return depth > CG_MAX_DEPTH;
    switch (e->kind) {
    case TILEC_EX_LOAD:
        if (e->u.load.buf == b)
            return 1;
        for (int d = 0; d < e->u.load.buf->ndim; d++)
            if (expr_refs(e->u.load.idx[d], b, depth + 1))
                return 1;
        return 0;
    case TILEC_EX_UNARY: return expr_refs(e->u.un.a, b, depth + 1);
    case TILEC_EX_BINARY:
        return expr_refs(e->u.bin.a, b, depth + 1) || expr_refs(e->u.bin.b, b, depth + 1);
    case TILEC_EX_SELECT:
        return expr_refs(e->u.sel.cond, b, depth + 1) || expr_refs(e->u.sel.a, b, depth + 1) ||
               expr_refs(e->u.sel.b, b, depth + 1);
    case TILEC_EX_CAST: return expr_refs(e->u.cast.a, b, depth + 1);
    default: return 0;
    }
}

static int region_refs(const tilec_ir_region_t *r, const tilec_ir_buffer_t *b, int depth)
{
    if (r->buf == b)
        return 1;
    for (int d = 0; d < r->buf->ndim; d++)
        if (expr_refs(r->base[d], b, depth + 1))
            return 1;
    return 0;
}

/* does the statement list mention b anywhere, statement `skip` aside? */
static int stmts_ref(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b,
                     const tilec_ir_stmt_t *skip, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return 1;
    for (; s; s = s->next) {
        if (s == skip)
            continue;
        switch (s->kind) {
        case TILEC_ST_FOR:
            if (expr_refs(s->u.loop.extent, b, depth) || stmts_ref(s->u.loop.body, b, skip, depth + 1))
                return 1;
            break;
        case TILEC_ST_IF:
            if (expr_refs(s->u.cond.cond, b, depth) || stmts_ref(s->u.cond.then, b, skip, depth + 1) ||
                stmts_ref(s->u.cond.els, b, skip, depth + 1))
                return 1;
            break;
        case TILEC_ST_STORE:
            if (s->u.store.buf == b || expr_refs(s->u.store.value, b, depth))
                return 1;
            for (int d = 0; d < s->u.store.buf->ndim; d++)
                if (expr_refs(s->u.store.idx[d], b, depth))
                    return 1;
            break;
        case TILEC_ST_ASSIGN:
            if (expr_refs(s->u.assign.value, b, depth))
                return 1;
            break;
        case TILEC_ST_COPY:
            if (region_refs(&s->u.copy.src, b, depth) || region_refs(&s->u.copy.dst, b, depth))
                return 1;
            break;
        case TILEC_ST_FILL:
            if (region_refs(&s->u.fill.dst, b, depth) || expr_refs(s->u.fill.value, b, depth))
                return 1;
            break;
        case TILEC_ST_GEMM:
            if (s->u.gemm.a == b || s->u.gemm.b == b || s->u.gemm.c == b)
                return 1;
            break;
        case TILEC_ST_REDUCE:
            if (s->u.reduce.src == b || s->u.reduce.dst == b)
                return 1;
            break;
        case TILEC_ST_CUMSUM:
            if (s->u.cumsum.src == b || s->u.cumsum.dst == b)
                return 1;
            break;
        case TILEC_ST_ATOMIC:
            if (s->u.atomic.buf == b || expr_refs(s->u.atomic.value, b, depth))
                return 1;
            for (int d = 0; d < s->u.atomic.buf->ndim; d++)
                if (expr_refs(s->u.atomic.idx[d], b, depth))
                    return 1;
            break;
        case TILEC_ST_PRINT:
            if (s->u.print.buf == b || expr_refs(s->u.print.value, b, depth))
                return 1;
            break;
        default:
            break;
        }
    }
    return 0;
}

/* Emits one wgmma helper per distinct instruction the kernel's GEMMs use:
 * tl_wgmma_<N>[_bf16][_ta][_tb](acc, descA, descB) with the N/2
 * accumulators of a warp's 64xN slice as operands. */
static void emit_wgmma_fns(cg_t *g, const tilec_ir_stmt_t *s, char (*seen)[64], int *nseen,
                           int depth)
{
    if (depth > CG_MAX_DEPTH)
        return;
    for (; s; s = s->next) {
        if (s->kind == TILEC_ST_FOR) {
            emit_wgmma_fns(g, s->u.loop.body, seen, nseen, depth + 1);
        } else if (s->kind == TILEC_ST_IF) {
            emit_wgmma_fns(g, s->u.cond.then, seen, nseen, depth + 1);
            emit_wgmma_fns(g, s->u.cond.els, seen, nseen, depth + 1);
        } else if (s->kind == TILEC_ST_GEMM) {
            mma_plan_t p;
            if (!mma_plan(g, s, &p) || !p.wg)
                continue;
            int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b, dup = 0;
            char fn[64];
            wg_name(fn, sizeof fn, &p, ta, tb);
            for (int i = 0; i < *nseen; i++)
                dup |= strcmp(seen[i], fn) == 0;
            if (dup || *nseen >= 64)
                continue;
            snprintf(seen[(*nseen)++], 64, "%s", fn);
            int nr = (int)(p.WN / 2);
            const char *ab = p.bf16 ? "bf16" : "f16";
            out(g, "TL_INLINE void %s(float (*d)[4], tl_u64 da, tl_u64 db) {\n", fn);
            out(g, "  asm volatile(\"{ .reg .pred p; setp.ne.b32 p, %%%d, 0;\\n\"\n", nr + 2);
            out(g, "    \"wgmma.mma_async.sync.aligned.m64n%lldk16.f32.%s.%s {", (long long)p.WN, ab, ab);
            for (int i = 0; i < nr; i++)
                out(g, "%s%%%d", i ? "," : "", i);
            out(g, "}, %%%d, %%%d, p, 1, 1, %d, %d; }\"\n    : ", nr, nr + 1, ta, !tb);
            for (int i = 0; i < nr; i++)
                out(g, "%s\"+f\"(d[%d][%d])", i ? ", " : "", i / 4, i % 4);
            out(g, "\n    : \"l\"(da), \"l\"(db), \"r\"(1));\n}\n");
        }
    }
}

/* A serial/pipelined loop whose body holds one tensor-core GEMM at top
 * level, the accumulator of which nothing else in the body touches: the
 * accumulator is loaded into registers before the loop and stored after. */
static const tilec_ir_stmt_t *resident_gemm(cg_t *g, const tilec_ir_stmt_t *loop)
{
    const tilec_ir_stmt_t *found = NULL;
    for (const tilec_ir_stmt_t *s = loop->u.loop.body; s; s = s->next) {
        if (s->kind != TILEC_ST_GEMM)
            continue;
        if (found)
            return NULL;
        found = s;
    }
    mma_plan_t p;
    if (!found || g->resident || !mma_plan(g, found, &p))
        return NULL;
    if (stmts_ref(loop->u.loop.body, found->u.gemm.c, found, 0) ||
        expr_refs(loop->u.loop.extent, found->u.gemm.c, 0))
        return NULL;
    return found;
}

static int whole_region(const tilec_ir_region_t *r)
{
    for (int d = 0; d < r->buf->ndim; d++) {
        int64_t v;
        if (!tilec_ir_is_const_int(r->base[d], &v) || v != 0 || r->extent[d] != const_dim(r->buf, d))
            return 0;
    }
    return 1;
}

/* ---- fragments in registers --------------------------------------------------
 *
 * Layout inference (plugin-sdk/src/lower_layout.c) decides which float32
 * fragments live in registers, with its demotion fixpoint; this printer
 * reads its REGS layouts.  "mma.acc": the accumulator layout of the GEMMs
 * accumulating into it (RF_ACC): thread (warp w, lane l) holds element e
 * of tile (mi, ni) at row tl_wm + mi * mstride + l / 4 + 8 * (e / 2) and
 * column tl_wn + ni * 8 + 2 * (l % 4) + e % 2.  "rows_over_warps": a 2-D
 * fragment no GEMM touches (RF_ACC too, rf_warprows).  "rows": a 1-D
 * fragment as long as those rows, each thread holding the rows it owns
 * (RF_ROW).  A T.Parallel nest the pass marks lower.dist = "regs" runs on
 * the threads owning the elements (emit_rf_nest).  All register fragments
 * of a kernel share one row map, the first accumulator's. */
enum { RF_NONE = 0, RF_ACC, RF_ROW };

/* The rows-over-warps layout of an R x C float32 fragment that no GEMM
 * touches (a block of rows loaded from a tensor, as in softmax): warp w
 * holds rows w, w + nw, ... (mt of them), lane l the ev consecutive
 * columns at (ni * 32 + l) * ev for ni < nt, ev up to 8 so that copies
 * move 16 bytes of a 16-bit tensor; a row is reduced across its warp. */
static void warprows_plan(const cg_t *g, const tilec_ir_buffer_t *b, mma_plan_t *p)
{
    int64_t R = const_dim(b, 0), C = const_dim(b, 1);
    int nw = g->nthreads / 32;
    int ev = C % 256 == 0 ? 8 : C % 128 == 0 ? 4 : C % 64 == 0 ? 2 : 1;
    memset(p, 0, sizeof *p);
    p->M = R;
    p->N = C;
    p->wm = nw;
    p->wn = 1;
    p->WM = 1;
    p->WN = ev;
    p->mt = (int)((R + nw - 1) / nw);
    p->nt = (int)(C / (32 * ev));
    p->ev = ev;
    p->mstride = nw;
}

/* a GEMM (in s and what it nests) accumulating into b */
static const tilec_ir_stmt_t *gemm_into(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b, int depth)
{
    const tilec_ir_stmt_t *f = NULL;
    for (; s && !f && depth < CG_MAX_DEPTH; s = s->next) {
        if (s->kind == TILEC_ST_GEMM && s->u.gemm.c == b)
            f = s;
        else if (s->kind == TILEC_ST_FOR)
            f = gemm_into(s->u.loop.body, b, depth + 1);
        else if (s->kind == TILEC_ST_IF && !(f = gemm_into(s->u.cond.then, b, depth + 1)))
            f = gemm_into(s->u.cond.els, b, depth + 1);
    }
    return f;
}

static void plan_regfrags(cg_t *g)
{
    const tilec_ir_kernel_t *k = g->k;
    int rows = -1;
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        const tilec_ir_layout_t *L = b->layout;
        const tilec_ir_stmt_t *gm;
        if (!L || L->kind != TILEC_LAYOUT_REGS || b->scope != TILEC_SCOPE_FRAGMENT ||
            b->dtype != TILEC_FLOAT32)
            continue;
        if (strcmp(L->name, "mma.acc") == 0 && (gm = gemm_into(k->body, b, 0)) &&
            mma_plan(g, gm, &g->rf_plan[i]))
            g->rf[i] = RF_ACC;
        else if (strcmp(L->name, "rows_over_warps") == 0 && b->ndim == 2 && g->nthreads % 32 == 0)
            g->rf[i] = RF_ACC, g->rf_warprows = 1, warprows_plan(g, b, &g->rf_plan[i]);
        else if (strcmp(L->name, "rows") == 0)
            g->rf[i] = RF_ROW;
        if (g->rf[i] == RF_ACC && rows < 0)
            rows = i, g->rf_rows = g->rf_plan[i];
    }
    g->rf_rowid = -1;
    for (int i = k->nparams; i < k->nbufs && rows >= 0; i++) {
        if (!g->rf[i])
            continue;
        g->any_rf = 1;
        g->rf_id[i] = g->tmp++;
        if (g->rf[i] == RF_ACC && g->rf_rowid < 0)
            g->rf_rowid = g->rf_id[i];
    }
    if (rows < 0) /* row fragments without an accumulator: no row map */
        for (int i = k->nparams; i < k->nbufs; i++)
            g->rf[i] = RF_NONE;
}

/* A T.Parallel nest that runs on the registers (lower.dist = "regs"). */
typedef struct rf_nest {
    const tilec_ir_stmt_t *loop[2];
    int n;                         /* parallel loops in the nest: 1 or 2 */
    const tilec_ir_buffer_t *acc;  /* the accumulator fragment it indexes */
    int writes_mem;                /* stores to shared or global memory */
    int kind;                      /* 0 not on registers, 1 element nest, 2 row nest */
} rf_nest_t;

/* stores to memory other than registers and per-thread buffers, or tile
 * operations (which run serially in the thread) */
static int nest_writes_mem(const cg_t *g, const tilec_ir_stmt_t *s, int depth)
{
    for (; s && depth < CG_MAX_DEPTH; s = s->next) {
        switch (s->kind) {
        case TILEC_ST_FOR:
            if (nest_writes_mem(g, s->u.loop.body, depth + 1))
                return 1;
            break;
        case TILEC_ST_IF:
            if (nest_writes_mem(g, s->u.cond.then, depth + 1) || nest_writes_mem(g, s->u.cond.els, depth + 1))
                return 1;
            break;
        case TILEC_ST_STORE:
            if (!g->rf[s->u.store.buf->id] && !per_thread_scope(s->u.store.buf->scope))
                return 1;
            break;
        case TILEC_ST_ASSIGN:
        case TILEC_ST_SYNC:
        case TILEC_ST_HINT:
            break;
        default: return 1;
        }
    }
    return 0;
}

static void rf_nest_analyze(cg_t *g, const tilec_ir_stmt_t *s, rf_nest_t *nn)
{
    const tilec_ir_attr_t *d = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.dist");
    memset(nn, 0, sizeof *nn);
    nn->loop[0] = s;
    nn->n = 1;
    const tilec_ir_stmt_t *b = s->u.loop.body;
    if (b && !b->next && b->kind == TILEC_ST_FOR && b->u.loop.kind == TILEC_LOOP_PARALLEL) {
        nn->loop[1] = b;
        nn->n = 2;
    }
    if (!d || d->kind != TILEC_ATTR_STRING || strcmp(d->s, "regs") != 0)
        return;
    for (int i = g->k->nparams; i < g->k->nbufs && !nn->acc; i++)
        if (g->rf[i] == RF_ACC && stmts_ref(nn->loop[nn->n - 1]->u.loop.body, g->k->bufs[i], NULL, 0))
            nn->acc = g->k->bufs[i];
    nn->kind = nn->n == 2 && nn->acc ? 1 : 2;
    nn->writes_mem = nest_writes_mem(g, nn->loop[nn->n - 1]->u.loop.body, 0);
}

/* the register of fragment b for the element (row nest: row) being
 * emitted */
static void rf_ref(cg_t *g, const tilec_ir_buffer_t *b)
{
    if (g->rf[b->id] == RF_ACC)
        out(g, "tl_c%d[tl_mi][tl_ni][tl_e]", g->rf_id[b->id]);
    else
        out(g, "tl_c%d[tl_mi][%s]", g->rf_id[b->id],
            g->rf_nest != 1 ? "tl_h" : g->rf_warprows ? "0" : "tl_e >> 1");
}

/* row values a thread holds per row slot: 2 (rows l/4 and l/4 + 8 of an
 * mma tile), 1 for rows over warps */
static int rf_halves(const cg_t *g) { return g->rf_warprows ? 1 : 2; }

/* row of the current element / row of a register fragment */
static void rf_row(cg_t *g, const char *half)
{
    if (g->rf_warprows)
        out(g, "tl_w%d + tl_mi * %d", g->rf_rowid, g->rf_rows.mstride);
    else
        out(g, "tl_wm%d + tl_mi * %d + (tl_l%d >> 2) + %s * 8", g->rf_rowid, g->rf_rows.mstride,
            g->rf_rowid, half);
}

/* rows over warps whose count isn't a multiple of the warps: the slots
 * past the last row are skipped (a whole warp at a time) */
static void rf_row_guard(cg_t *g)
{
    if (!g->rf_warprows || g->rf_rows.M % g->rf_rows.mstride == 0)
        return;
    out(g, "%*sif (", 2 * (g->ind + 1), "");
    rf_row(g, "0");
    out(g, " >= %lld) continue;\n", (long long)g->rf_rows.M);
}

/* opens the loops over the registers of fragment b: (tl_mi, tl_ni, tl_e)
 * for an accumulator, (tl_mi, tl_h) for rows; closed by rf_loops_close */
static void rf_loops_open(cg_t *g, const tilec_ir_buffer_t *b)
{
    const mma_plan_t *p = g->rf[b->id] == RF_ACC ? &g->rf_plan[b->id] : &g->rf_rows;
    line(g, "#pragma unroll");
    line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    if (g->rf[b->id] == RF_ACC) {
        line(g, "#pragma unroll");
        line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++)", p->nt);
        line(g, "#pragma unroll");
        line(g, "for (int tl_e = 0; tl_e < %d; tl_e++) {", p->ev);
    } else {
        line(g, "#pragma unroll");
        line(g, "for (int tl_h = 0; tl_h < %d; tl_h++) {", rf_halves(g));
    }
    g->ind++;
    rf_row_guard(g);
}

static void rf_loops_close(cg_t *g)
{
    g->ind--;
    line(g, "}");
}

/* the current element's row and column into variables rv and cv (names) */
static void rf_coords(cg_t *g, const tilec_ir_buffer_t *b, const char *rv, const char *cv)
{
    out(g, "%*s%s = ", 2 * (g->ind + 1), "", rv);
    rf_row(g, g->rf[b->id] == RF_ACC ? "(tl_e >> 1)" : "tl_h");
    out(g, ";\n");
    if (cv && g->rf_warprows)
        line(g, "%s = (tl_ni * 32 + tl_l%d) * %d + tl_e;", cv, g->rf_rowid, g->rf_plan[b->id].ev);
    else if (cv)
        line(g, "%s = tl_wn%d + tl_ni * 8 + (tl_l%d & 3) * 2 + (tl_e & 1);", cv, g->rf_id[b->id],
             g->rf_rowid);
}

static void emit_rf_nest(cg_t *g, const rf_nest_t *nn)
{
    const tilec_ir_buffer_t *lead = nn->acc;
    char rv[32], cv[32];
    snprintf(rv, sizeof rv, "v%d", nn->loop[0]->u.loop.var->id);
    if (nn->n == 2)
        snprintf(cv, sizeof cv, "v%d", nn->loop[1]->u.loop.var->id);
    if (!lead) /* a row nest: any row fragment it touches gives the loops */
        for (int i = g->k->nparams; i < g->k->nbufs && !lead; i++)
            if (g->rf[i] == RF_ROW)
                lead = g->k->bufs[i];
    line(g, "{ /* parallel nest on registers: each thread its own %s */",
         nn->kind == 1 ? "elements" : "rows");
    g->ind++;
    rf_loops_open(g, lead);
    rf_coords(g, lead, rv, nn->kind == 1 ? cv : NULL);
    g->rf_nest = nn->kind;
    emit_block(g, nn->loop[nn->n - 1]->u.loop.body, 1);
    g->rf_nest = 0;
    rf_loops_close(g);
    g->ind--;
    line(g, "}");
    if (nn->writes_mem)
        emit_sync(g);
}

static void emit_rf_fill(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *b = s->u.fill.dst.buf;
    int id = g->rf_id[b->id];
    const mma_plan_t *p = &g->rf_plan[b->id];
    int n = g->rf[b->id] == RF_ACC ? p->mt * p->nt * p->ev : g->rf_rows.mt * rf_halves(g);
    out(g, "%*s{ const float tl_fv = ", 2 * (g->ind + 1), "");
    emit_expr(g, s->u.fill.value);
    out(g, ";\n");
    line(g, "#pragma unroll");
    line(g, "  for (int tl_i = 0; tl_i < %d; tl_i++) (&tl_c%d[0][0]%s)[tl_i] = tl_fv; }", n, id,
         g->rf[b->id] == RF_ACC ? "[0]" : "");
}

/* A copy between a tensor and a rows-over-warps fragment whose ev
 * consecutive columns a thread holds make one 4-, 8- or 16-byte access:
 * one vector per (row slot, column chunk) where it lies inside the tensor
 * and is aligned, elements otherwise.  Returns 0 (nothing emitted) when
 * the copy isn't such a one. */
static int emit_rf_copy_vec(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    int tor = g->rf[src->buf->id] != 0;
    const tilec_ir_buffer_t *rb = tor ? src->buf : dst->buf;
    const tilec_ir_region_t *mr = tor ? dst : src;
    const tilec_ir_buffer_t *mb = mr->buf;
    const mma_plan_t *p = &g->rf_plan[rb->id];
    int last = mb->ndim - 1;
    size_t es = tilec_dtype_size(mb->dtype), bytes = es * (size_t)p->ev;
    if (!g->rf_warprows || g->rf[rb->id] != RF_ACC || mb->scope != TILEC_SCOPE_GLOBAL ||
        mr->extent[last] != p->N || p->ev < 2 || (bytes != 4 && bytes != 8 && bytes % 16 != 0) ||
        !(is_flt(mb->dtype) && mb->dtype != TILEC_FLOAT64))
        return 0;
    /* nv vectors of vb bytes, per elements each */
    size_t vb = bytes > 16 ? 16 : bytes;
    int nv = (int)(bytes / vb), per = (int)(vb / es);
    const char *vt = vb == 16 ? "uint4" : vb == 8 ? "uint2" : "unsigned int";
    int id = g->tmp++, hb = id * 3 + 1000000, ib = hb + 2, ie = hb + 1;
    line(g, "{ /* copy %s -> %s, registers %s memory, %d-byte vectors */", src->buf->name,
         dst->buf->name, tor ? "to" : "from", (int)bytes);
    g->ind++;
    hoist_bases(g, mr, hb);
    line(g, "#pragma unroll");
    line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    line(g, "#pragma unroll");
    line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++) {", p->nt);
    g->ind++;
    rf_row_guard(g);
    out(g, "%*sconst int tl_%d_0 = ", 2 * (g->ind + 1), "", ib);
    rf_row(g, "0");
    out(g, ";\n");
    line(g, "const int tl_%d_1 = (tl_ni * 32 + tl_l%d) * %d;", ib, g->rf_rowid, p->ev);
    line(g, "const int tl_%d_0 = tl_%d_0, tl_%d_1 = tl_%d_1 + %d;", ie, ib, ie, ib, p->ev - 1);
    out(g, "%*s%s%s *tl_vp = &b%d[", 2 * (g->ind + 1), "", tor ? "" : "const ", stype(mb->dtype),
        mb->id);
    region_offset(g, mr, hb, ib);
    out(g, "];\n");
    out(g, "%*sif ((((tl_u64)tl_vp) & %d) == 0 && ", 2 * (g->ind + 1), "", (int)vb - 1);
    region_inbounds(g, mr, hb, ib);
    out(g, " && ");
    region_inbounds(g, mr, hb, ie);
    out(g, ") {\n");
    g->ind++;
    line(g, "#pragma unroll");
    line(g, "for (int tl_k = 0; tl_k < %d; tl_k++) {", nv);
    g->ind++;
    if (tor) {
        line(g, "%s tl_v; %s *tl_ve = (%s *)&tl_v;", vt, stype(mb->dtype), stype(mb->dtype));
        line(g, "#pragma unroll");
        out(g, "%*sfor (int tl_e = 0; tl_e < %d; tl_e++) tl_ve[tl_e] = ", 2 * (g->ind + 1), "", per);
        store_open(g, mb->dtype);
        out(g, "tl_c%d[tl_mi][tl_ni][tl_k * %d + tl_e]);\n", g->rf_id[rb->id], per);
        line(g, "((%s *)tl_vp)[tl_k] = tl_v;", vt);
    } else {
        line(g, "const %s tl_v = ((const %s *)tl_vp)[tl_k]; const %s *tl_ve = (const %s *)&tl_v;",
             vt, vt, stype(mb->dtype), stype(mb->dtype));
        line(g, "#pragma unroll");
        out(g, "%*sfor (int tl_e = 0; tl_e < %d; tl_e++) tl_c%d[tl_mi][tl_ni][tl_k * %d + tl_e] = (float)",
            2 * (g->ind + 1), "", per, g->rf_id[rb->id], per);
        emit_load_conv_open(g, mb->dtype);
        out(g, "tl_ve[tl_e]);\n");
    }
    g->ind--;
    line(g, "}");
    g->ind--;
    line(g, "} else {");
    g->ind++;
    line(g, "#pragma unroll");
    line(g, "for (int tl_e = 0; tl_e < %d; tl_e++) {", p->ev);
    line(g, "  const int tl_%d_0 = tl_%d_0, tl_%d_1 = tl_%d_1 + tl_e;", ie, ib, ie, ib);
    if (tor) {
        out(g, "%*s  if (", 2 * (g->ind + 1), "");
        region_inbounds(g, mr, hb, ie);
        out(g, ") b%d[", mb->id);
        region_offset(g, mr, hb, ie);
        out(g, "] = ");
        store_open(g, mb->dtype);
        out(g, "tl_c%d[tl_mi][tl_ni][tl_e]);\n", g->rf_id[rb->id]);
    } else {
        out(g, "%*s  tl_c%d[tl_mi][tl_ni][tl_e] = !", 2 * (g->ind + 1), "", g->rf_id[rb->id]);
        region_inbounds(g, mr, hb, ie);
        out(g, " ? 0.0f : (float)");
        emit_load_conv_open(g, mb->dtype);
        out(g, "b%d[", mb->id);
        region_offset(g, mr, hb, ie);
        out(g, "]);\n");
    }
    line(g, "}");
    g->ind--;
    line(g, "}");
    g->ind--;
    line(g, "}");
    g->ind--;
    line(g, "}");
    if (tor)
        emit_sync(g);
    return 1;
}

/* copies that involve a register fragment (the forms layout inference keeps) */
static void emit_rf_copy(cg_t *g, const tilec_ir_stmt_t *s)
{
    if (emit_rf_copy_vec(g, s))
        return;
    const tilec_ir_region_t *src = &s->u.copy.src, *dst = &s->u.copy.dst;
    const tilec_ir_buffer_t *sb = src->buf, *db = dst->buf;
    if (g->rf[sb->id] && g->rf[db->id]) {
        line(g, "#pragma unroll");
        line(g, "for (int tl_i = 0; tl_i < %d; tl_i++) (&tl_c%d[0][0])[tl_i] = (&tl_c%d[0][0])[tl_i];",
             g->rf_rows.mt * rf_halves(g), g->rf_id[db->id], g->rf_id[sb->id]);
        return;
    }
    int tor = g->rf[sb->id] != 0; /* registers -> memory */
    const tilec_ir_buffer_t *rb = tor ? sb : db;
    const tilec_ir_region_t *mr = tor ? dst : src;
    int id = g->tmp++, hb = id * 3 + 1000000, ib = hb + 2;
    line(g, "{ /* copy %s -> %s, registers %s memory */", sb->name, db->name, tor ? "to" : "from");
    g->ind++;
    hoist_bases(g, mr, hb);
    rf_loops_open(g, rb);
    char rv[32], cv[32];
    snprintf(rv, sizeof rv, "const int tl_%d_0", ib);
    snprintf(cv, sizeof cv, "const int tl_%d_1", ib);
    rf_coords(g, rb, rv, g->rf[rb->id] == RF_ACC ? cv : NULL);
    g->rf_nest = g->rf[rb->id] == RF_ACC ? 1 : 2;
    int glob = mr->buf->scope == TILEC_SCOPE_GLOBAL;
    if (tor) {
        /* a row is held by the four lanes of a quad: the first writes it */
        out(g, "%*sif (%s", 2 * (g->ind + 1), "", g->rf[rb->id] == RF_ROW ? "" : "1");
        if (g->rf[rb->id] == RF_ROW)
            out(g, "(tl_l%d & %d) == 0", g->rf_rowid, g->rf_warprows ? 31 : 3);
        if (glob) {
            out(g, " && ");
            region_inbounds(g, dst, hb, ib);
        }
        out(g, ") b%d[", db->id);
        region_offset(g, dst, hb, ib);
        out(g, "] = ");
        store_open(g, db->dtype);
        rf_ref(g, rb);
        out(g, ");\n");
    } else {
        out(g, "%*s", 2 * (g->ind + 1), "");
        rf_ref(g, rb);
        out(g, " = ");
        if (glob) {
            out(g, "!");
            region_inbounds(g, src, hb, ib);
            out(g, " ? 0.0f : ");
        }
        out(g, "(float)");
        emit_load_conv_open(g, sb->dtype);
        out(g, "b%d[", sb->id);
        region_offset(g, src, hb, ib);
        out(g, "]);\n");
    }
    g->rf_nest = 0;
    rf_loops_close(g);
    g->ind--;
    line(g, "}");
    if (tor)
        emit_sync(g);
}

/* reduce along dim 1 of an accumulator into a row fragment */
static void emit_rf_reduce(cg_t *g, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *src = s->u.reduce.src, *dst = s->u.reduce.dst;
    const mma_plan_t *p = &g->rf_plan[src->id];
    tilec_reduce_op_t op = s->u.reduce.op;
    int is_sum = op == TILEC_RED_SUM || op == TILEC_RED_ABSSUM;
    int is_abs = op == TILEC_RED_ABSSUM || op == TILEC_RED_ABSMAX;
    const char *fn = op == TILEC_RED_MIN ? "tl_min" : "tl_max";
    int cs = g->rf_id[src->id], cd = g->rf_id[dst->id];
    /* a row's values: the thread's columns, then the lanes that share
     * the row (the quad of an mma tile, or the whole warp) */
    int wr = g->rf_warprows, ne = wr ? p->ev : 2;
    line(g, "/* reduce %s %s -> %s dim 1 on registers: own columns, then the %s */",
         tilec_reduce_op_name(op), src->name, dst->name, wr ? "warp" : "quad");
    line(g, "#pragma unroll");
    line(g, "for (int tl_mi = 0; tl_mi < %d; tl_mi++)", p->mt);
    line(g, "#pragma unroll");
    line(g, "for (int tl_h = 0; tl_h < %d; tl_h++) {", rf_halves(g));
    g->ind++;
    rf_row_guard(g);
    line(g, "float tl_a = %s;", is_sum || op == TILEC_RED_ABSMAX ? "0.0f"
                                : op == TILEC_RED_MAX ? "-tl_inff()" : "tl_inff()");
    line(g, "#pragma unroll");
    line(g, "for (int tl_ni = 0; tl_ni < %d; tl_ni++)", p->nt);
    line(g, "#pragma unroll");
    line(g, "for (int tl_e = 0; tl_e < %d; tl_e++) {", ne);
    line(g, "  const float tl_x = %s(tl_c%d[tl_mi][tl_ni][tl_h * %d + tl_e]);", is_abs ? "tl_abs" : "",
         cs, ne);
    if (is_sum)
        line(g, "  tl_a += tl_x;");
    else
        line(g, "  tl_a = %s(tl_a, tl_x);", fn);
    line(g, "}");
    line(g, "#pragma unroll");
    line(g, "for (int tl_s = 1; tl_s < %d; tl_s <<= 1) {", wr ? 32 : 4);
    line(g, "  const float tl_y = __shfl_xor_sync(0xffffffffu, tl_a, tl_s);");
    if (is_sum)
        line(g, "  tl_a += tl_y;");
    else
        line(g, "  tl_a = %s(tl_a, tl_y);", fn);
    line(g, "}");
    if (s->u.reduce.clear)
        line(g, "tl_c%d[tl_mi][tl_h] = tl_a;", cd);
    else if (is_sum)
        line(g, "tl_c%d[tl_mi][tl_h] += tl_a;", cd);
    else
        line(g, "tl_c%d[tl_mi][tl_h] = %s(tl_c%d[tl_mi][tl_h], tl_a);", cd, fn, cd);
    g->ind--;
    line(g, "}");
}

/* ---- which on-chip buffers need zeroing ------------------------------------ */

/* s overwrites all of b without reading it */
static int full_overwrite(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b)
{
    switch (s->kind) {
    case TILEC_ST_COPY:
        return s->u.copy.dst.buf == b && whole_region(&s->u.copy.dst) &&
               !region_refs(&s->u.copy.src, b, 0);
    case TILEC_ST_FILL:
        return s->u.fill.dst.buf == b && whole_region(&s->u.fill.dst) &&
               !expr_refs(s->u.fill.value, b, 0);
    case TILEC_ST_REDUCE:
        return s->u.reduce.dst == b && s->u.reduce.clear && s->u.reduce.src != b;
    case TILEC_ST_CUMSUM:
        return s->u.cumsum.dst == b && s->u.cumsum.src != b;
    case TILEC_ST_GEMM:
        return s->u.gemm.c == b && s->u.gemm.clear_accum && s->u.gemm.a != b && s->u.gemm.b != b;
    default:
        return 0;
    }
}

/* The reference interpreter starts every on-chip buffer at zero.  Zeroing
 * is skipped for a buffer whose first use, in a top-level statement, is a
 * whole overwrite (or that is never used). */
static void plan_zero(cg_t *g, int *zero)
{
    const tilec_ir_kernel_t *k = g->k;
    int *seen = calloc((size_t)k->nbufs + 1, sizeof *seen);
    if (!seen) {
        for (int i = 0; i < k->nbufs; i++)
            zero[i] = 1;
        return;
    }
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next) {
        tilec_ir_stmt_t one = *s;
        one.next = NULL;
        for (int i = k->nparams; i < k->nbufs; i++) {
            const tilec_ir_buffer_t *b = k->bufs[i];
            if (seen[i] || (b->scope != TILEC_SCOPE_SHARED && b->scope != TILEC_SCOPE_FRAGMENT))
                continue;
            if (!stmts_ref(&one, b, NULL, 0))
                continue;
            seen[i] = 1;
            zero[i] = !full_overwrite(s, b);
        }
    }
    free(seen);
}

/* ---- T.Pipelined with cp.async ----------------------------------------------- */

static int stmts_write(const tilec_ir_stmt_t *s, const tilec_ir_buffer_t *b,
                       const tilec_ir_stmt_t *skip, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return 1;
    for (; s; s = s->next) {
        if (s == skip)
            continue;
        switch (s->kind) {
        case TILEC_ST_FOR:
            if (stmts_write(s->u.loop.body, b, skip, depth + 1))
                return 1;
            break;
        case TILEC_ST_IF:
            if (stmts_write(s->u.cond.then, b, skip, depth + 1) ||
                stmts_write(s->u.cond.els, b, skip, depth + 1))
                return 1;
            break;
        case TILEC_ST_STORE: if (s->u.store.buf == b) return 1; break;
        case TILEC_ST_COPY: if (s->u.copy.dst.buf == b) return 1; break;
        case TILEC_ST_FILL: if (s->u.fill.dst.buf == b) return 1; break;
        case TILEC_ST_GEMM: if (s->u.gemm.c == b) return 1; break;
        case TILEC_ST_REDUCE: if (s->u.reduce.dst == b) return 1; break;
        case TILEC_ST_CUMSUM: if (s->u.cumsum.dst == b) return 1; break;
        case TILEC_ST_ATOMIC: if (s->u.atomic.buf == b) return 1; break;
        default: break;
        }
    }
    return 0;
}

/* an index expression that can be evaluated for a later iteration by
 * setting the loop variable: no loads, no let variables */
static int expr_invariant(const tilec_ir_expr_t *e, int depth)
{
    if (!e || depth > CG_MAX_DEPTH)
        return 0;
    switch (e->kind) {
    case TILEC_EX_INT:
    case TILEC_EX_FLOAT: return 1;
    case TILEC_EX_VAR: return e->u.var->kind != TILEC_VAR_LET;
    case TILEC_EX_LOAD: return 0;
    case TILEC_EX_UNARY: return expr_invariant(e->u.un.a, depth + 1);
    case TILEC_EX_BINARY:
        return expr_invariant(e->u.bin.a, depth + 1) && expr_invariant(e->u.bin.b, depth + 1);
    case TILEC_EX_SELECT:
        return expr_invariant(e->u.sel.cond, depth + 1) && expr_invariant(e->u.sel.a, depth + 1) &&
               expr_invariant(e->u.sel.b, depth + 1);
    case TILEC_EX_CAST: return expr_invariant(e->u.cast.a, depth + 1);
    default: return 0;
    }
}

/* Is copy statement c (at the head of pipelined loop `loop`) one that
 * can run ahead with cp.async into a ring of stages? */
static int async_copy_ok(cg_t *g, const tilec_ir_stmt_t *loop, const tilec_ir_stmt_t *c)
{
    if (c->kind != TILEC_ST_COPY)
        return 0;
    const tilec_ir_region_t *src = &c->u.copy.src, *dst = &c->u.copy.dst;
    if (src->buf->scope != TILEC_SCOPE_GLOBAL || dst->buf->scope != TILEC_SCOPE_SHARED ||
        src->buf->dtype != dst->buf->dtype)
        return 0;
    size_t es = tilec_dtype_size(src->buf->dtype);
    if (es != 2 && es != 4)
        return 0;
    int vec = (int)(16 / es);
    int64_t ext[TILEC_IR_MAX_DIMS], sext[TILEC_IR_MAX_DIMS];
    int n = region_shape(dst, ext), sn = region_shape(src, sext);
    int dd = dst->buf->ndim - 1, sd = src->buf->ndim - 1;
    if (n < 1 || n != sn || dst->extent[dd] != ext[n - 1] || src->extent[sd] != ext[n - 1] ||
        ext[n - 1] % vec)
        return 0;
    for (int i = 0; i < n; i++)
        if (ext[i] != sext[i])
            return 0;
    int64_t op = g->pitch[dst->buf->id] > 0 ? g->pitch[dst->buf->id] : const_dim(dst->buf, dd);
    if (op <= 0 || op % vec)
        return 0;
    for (int d = 0; d < src->buf->ndim; d++)
        if (!expr_invariant(src->base[d], 0))
            return 0;
    for (int d = 0; d < dst->buf->ndim; d++)
        if (!expr_invariant(dst->base[d], 0))
            return 0;
    /* the ring replaces the buffer: nobody outside the loop may see it,
     * nothing else in the loop may write it, and the source stays put */
    if (stmts_ref(g->k->body, dst->buf, loop, 0) || stmts_write(loop->u.loop.body, dst->buf, c, 0) ||
        stmts_write(loop->u.loop.body, src->buf, NULL, 0))
        return 0;
    return 1;
}

/* number of leading copies of a pipelined loop that go asynchronous */
static int pipe_copies(cg_t *g, const tilec_ir_stmt_t *loop)
{
    if (g->sm < 80 || loop->kind != TILEC_ST_FOR || loop->u.loop.kind != TILEC_LOOP_PIPELINED ||
        loop->u.loop.num_stages < 2 || g->nthreads % 32 != 0)
        return 0;
    int n = 0;
    const tilec_ir_stmt_t *c = loop->u.loop.body;
    for (; c && async_copy_ok(g, loop, c); c = c->next)
        n++;
    return c ? n : 0; /* something must follow the copies */
}

static void pipe_walk(cg_t *g, const tilec_ir_stmt_t *s, int par, int depth)
{
    if (depth > CG_MAX_DEPTH)
        return;
    for (; s; s = s->next) {
        if (s->kind == TILEC_ST_FOR) {
            int p = par || s->u.loop.kind == TILEC_LOOP_PARALLEL;
            int n = p ? 0 : pipe_copies(g, s);
            const tilec_ir_stmt_t *c = s->u.loop.body;
            for (int i = 0; i < n; i++, c = c->next)
                g->stages[c->u.copy.dst.buf->id] = s->u.loop.num_stages > 8 ? 8 : s->u.loop.num_stages;
            pipe_walk(g, s->u.loop.body, p, depth + 1);
        } else if (s->kind == TILEC_ST_IF) {
            pipe_walk(g, s->u.cond.then, par, depth + 1);
            pipe_walk(g, s->u.cond.els, par, depth + 1);
        }
    }
}

/* points every staged buffer of the loop at stage (iter % S) */
static void pipe_point(cg_t *g, const tilec_ir_stmt_t *loop, int n, const char *iter)
{
    const tilec_ir_stmt_t *c = loop->u.loop.body;
    for (int i = 0; i < n; i++, c = c->next) {
        const tilec_ir_buffer_t *b = c->u.copy.dst.buf;
        line(g, "b%d = (%s *)(tl_smem + %llu + (%s %% %d) * %llu);", b->id, stype(b->dtype),
             (unsigned long long)g->smem_off[b->id], iter, g->stages[b->id],
             (unsigned long long)g->stage_bytes[b->id]);
    }
}

static void pipe_issue(cg_t *g, const tilec_ir_stmt_t *loop, int n)
{
    who_t coop = {1};
    const tilec_ir_stmt_t *c = loop->u.loop.body;
    for (int i = 0; i < n; i++, c = c->next)
        copy_vec(g, c, &coop, 1);
}

/* Multi-stage buffering: iteration i's copies are issued S-1 iterations
 * ahead into stage i % S; before the body of iteration i runs, every
 * thread waits until at most S-1 groups are in flight (its own copies of
 * iteration i have landed) and a barrier makes everyone's visible.  The
 * barrier at the end of the body keeps a stage from being refilled while
 * it is being read. */
/* The loop's register-resident GEMM when it runs on wgmma from operands
 * that only this loop's cp.async ring writes: its wait can then trail by
 * one iteration (see emit_pipelined). */
static const tilec_ir_stmt_t *deferrable_wgmma(cg_t *g, const tilec_ir_stmt_t *loop, int n)
{
    const tilec_ir_stmt_t *rg = g->resident, *t;
    mma_plan_t p;
    if (!rg || !mma_plan(g, rg, &p) || !p.wg)
        return NULL;
    for (t = loop->u.loop.body; t && t != rg; t = t->next)
        ;
    if (!t)
        return NULL;
    int ha = 0, hb = 0;
    t = loop->u.loop.body;
    for (int i = 0; i < n; i++, t = t->next) {
        ha |= t->u.copy.dst.buf == rg->u.gemm.a;
        hb |= t->u.copy.dst.buf == rg->u.gemm.b;
    }
    return ha && hb ? rg : NULL;
}

static void emit_pipelined(cg_t *g, const tilec_ir_stmt_t *loop, int n)
{
    int S = g->stages[loop->u.loop.body->u.copy.dst.buf->id];
    int v = loop->u.loop.var->id, id = g->tmp++;
    const tilec_ir_stmt_t *defer = deferrable_wgmma(g, loop, n);
    g->info->cp_async += n;
    line(g, "{ /* T.Pipelined: %d copies issued %d iterations ahead with cp.async */", n, S - 1);
    g->ind++;
    out(g, "%*sconst int tl_n%d = (int)(", 2 * (g->ind + 1), "", id);
    emit_expr(g, loop->u.loop.extent);
    out(g, ");\n");
    char it[32];
    snprintf(it, sizeof it, "v%d", v);
    line(g, "for (int tl_s%d = 0; tl_s%d < %d; tl_s%d++) {", id, id, S - 1, id);
    g->ind++;
    line(g, "if (tl_s%d < tl_n%d) {", id, id);
    g->ind++;
    line(g, "v%d = tl_s%d;", v, id);
    pipe_point(g, loop, n, it);
    pipe_issue(g, loop, n);
    g->ind--;
    line(g, "}");
    line(g, "tl_cp_commit();");
    g->ind--;
    line(g, "}");
    line(g, "for (v%d = 0; v%d < tl_n%d; v%d++) {", v, v, id, v);
    g->ind++;
    if (defer) {
        /* wgmma of iteration v runs on while the threads wait for the
         * copies of v + 1 and refill the stage that v - 1 read, which the
         * wait for all but the newest wgmma group and the barrier after the
         * body have freed */
        line(g, "tl_cp_wait<%d>();", S - 2);
        emit_sync(g);
        pipe_point(g, loop, n, it);
        g->wg_defer = defer;
        const tilec_ir_stmt_t *rest = loop->u.loop.body;
        for (int i = 0; i < n; i++)
            rest = rest->next;
        emit_block(g, rest, 0);
        g->wg_defer = NULL;
        emit_sync(g);
    }
    line(g, "{ /* issue iteration v + %d */", S - 1);
    g->ind++;
    line(g, "const int tl_cur%d = v%d;", id, v);
    line(g, "v%d = tl_cur%d + %d;", v, id, S - 1);
    line(g, "if (v%d < tl_n%d) {", v, id);
    g->ind++;
    pipe_point(g, loop, n, it);
    pipe_issue(g, loop, n);
    g->ind--;
    line(g, "}");
    line(g, "tl_cp_commit();");
    line(g, "v%d = tl_cur%d;", v, id);
    g->ind--;
    line(g, "}");
    if (!defer) {
        line(g, "tl_cp_wait<%d>();", S - 1);
        emit_sync(g);
        pipe_point(g, loop, n, it);
        const tilec_ir_stmt_t *rest = loop->u.loop.body;
        for (int i = 0; i < n; i++)
            rest = rest->next;
        emit_block(g, rest, 0);
        emit_sync(g);
    }
    g->ind--;
    line(g, "}");
    if (defer) {
        mma_plan_t p;
        mma_plan(g, defer, &p);
        line(g, "tl_wg_wait<0>();");
        line(g, "tl_keep_acc<%d>(&tl_c%d[0][0][0]);", p.mt * p.nt * 4, g->resident_id);
    }
    line(g, "tl_cp_wait<0>();");
    g->ind--;
    line(g, "}");
    emit_sync(g);
}

static void emit_loop_head(cg_t *g, const tilec_ir_stmt_t *s)
{
    if (s->u.loop.kind == TILEC_LOOP_UNROLL)
        line(g, "#pragma unroll");
    out(g, "%*sfor (v%d = 0; v%d < (int)(", 2 * (g->ind + 1), "", s->u.loop.var->id,
        s->u.loop.var->id);
    emit_expr(g, s->u.loop.extent);
    out(g, "); v%d++) {\n", s->u.loop.var->id);
}

static void emit_parallel_nest(cg_t *g, const tilec_ir_stmt_t *s)
{
    /* collect a perfect nest of parallel loops */
    const tilec_ir_stmt_t *nest[TILEC_IR_MAX_DIMS * 2];
    int n = 0;
    const tilec_ir_stmt_t *cur = s;
    for (;;) {
        nest[n++] = cur;
        const tilec_ir_stmt_t *b = cur->u.loop.body;
        if (n < (int)(sizeof nest / sizeof nest[0]) && b && !b->next && b->kind == TILEC_ST_FOR &&
            b->u.loop.kind == TILEC_LOOP_PARALLEL)
            cur = b;
        else
            break;
    }
    int id = g->tmp++;
    line(g, "{ /* parallel nest of %d */", n);
    g->ind++;
    for (int i = 0; i < n; i++) {
        out(g, "%*sconst tl_i64 tl_x%d_%d = (tl_i64)(", 2 * (g->ind + 1), "", id, i);
        emit_expr(g, nest[i]->u.loop.extent);
        out(g, ");\n");
    }
    out(g, "%*sconst tl_i64 tl_t%d = 1", 2 * (g->ind + 1), "", id);
    for (int i = 0; i < n; i++)
        out(g, " * tl_x%d_%d", id, i);
    out(g, ";\n");
    line(g, "for (tl_i64 tl_p%d = tl_tid; tl_p%d < tl_t%d; tl_p%d += %d) {", id, id, id, id,
         g->nthreads);
    g->ind++;
    line(g, "tl_i64 tl_q%d = tl_p%d;", id, id);
    for (int i = n - 1; i >= 0; i--) {
        if (i > 0)
            line(g, "v%d = (int)(tl_q%d %% tl_x%d_%d); tl_q%d /= tl_x%d_%d;",
                 nest[i]->u.loop.var->id, id, id, i, id, id, i);
        else
            line(g, "v%d = (int)tl_q%d;", nest[i]->u.loop.var->id, id);
    }
    emit_block(g, nest[n - 1]->u.loop.body, 1);
    g->ind--;
    line(g, "}");
    g->ind--;
    line(g, "}");
    emit_sync(g);
}

static void emit_stmt(cg_t *g, const tilec_ir_stmt_t *s, int par)
{
    if (g->failed)
        return;
    if (++g->depth > CG_MAX_DEPTH) {
        cg_fail(g, "statements nested too deeply");
        g->depth--;
        return;
    }
    who_t coop = {1}, solo = {0};
    switch (s->kind) {
    case TILEC_ST_FOR:
        if (!par && s->u.loop.kind == TILEC_LOOP_PARALLEL && !writes_per_thread(s->u.loop.body, 0)) {
            rf_nest_t nn;
            nn.kind = 0;
            if (g->any_rf)
                rf_nest_analyze(g, s, &nn);
            if (nn.kind > 0)
                emit_rf_nest(g, &nn);
            else
                emit_parallel_nest(g, s);
        } else {
            int emit_stmt_loop_ro = 0;
            const tilec_ir_stmt_t *rg = !par && s->u.loop.kind != TILEC_LOOP_PARALLEL
                                            ? resident_gemm(g, s) : NULL;
            mma_plan_t rp;
            int rid = 0;
            if (rg && g->rf[rg->u.gemm.c->id]) {
                /* an accumulator in registers: declared at kernel entry */
                rid = g->rf_id[rg->u.gemm.c->id];
                g->resident = rg;
                g->resident_id = rid;
                mma_plan(g, rg, &rp);
                emit_stmt_loop_ro = 1;
            } else if (rg && mma_plan(g, rg, &rp)) {
                rid = g->tmp++;
                line(g, "{ /* %s stays in registers across the loop */", rg->u.gemm.c->name);
                g->ind++;
                mma_decl(g, &rp, rid);
                mma_cmove(g, &rp, rg->u.gemm.c, rid, 1, 0);
                g->resident = rg;
                g->resident_id = rid;
            } else {
                rg = NULL;
            }
            int npipe = par ? 0 : pipe_copies(g, s);
            if (npipe > 0 && g->stages[s->u.loop.body->u.copy.dst.buf->id] > 1) {
                emit_pipelined(g, s, npipe);
            } else {
                emit_loop_head(g, s);
                g->ind++;
                emit_block(g, s->u.loop.body, par || s->u.loop.kind == TILEC_LOOP_PARALLEL);
                g->ind--;
                line(g, "}");
            }
            if (rg && emit_stmt_loop_ro) {
                g->resident = NULL;
            } else if (rg) {
                g->resident = NULL;
                mma_cmove(g, &rp, rg->u.gemm.c, rid, 0, 0);
                g->ind--;
                line(g, "}");
                emit_sync(g);
            }
        }
        break;
    case TILEC_ST_IF:
        out(g, "%*sif (", 2 * (g->ind + 1), "");
        emit_expr(g, s->u.cond.cond);
        out(g, ") {\n");
        g->ind++;
        emit_block(g, s->u.cond.then, par);
        g->ind--;
        if (s->u.cond.els) {
            line(g, "} else {");
            g->ind++;
            emit_block(g, s->u.cond.els, par);
            g->ind--;
        }
        line(g, "}");
        break;
    case TILEC_ST_STORE: {
        const tilec_ir_buffer_t *b = s->u.store.buf;
        if (g->rf[b->id]) {
            out(g, "%*s", 2 * (g->ind + 1), "");
            rf_ref(g, b);
            out(g, " = (float)(");
            emit_expr(g, s->u.store.value);
            out(g, ");\n");
            break;
        }
        int guard = !par && !per_thread_scope(b->scope);
        out(g, "%*s%sb%d[", 2 * (g->ind + 1), "", guard ? "if (tl_tid == 0) " : "", b->id);
        emit_offset(g, b, s->u.store.idx);
        out(g, "] = ");
        store_open(g, b->dtype);
        emit_expr(g, s->u.store.value);
        out(g, ");\n");
        if (guard)
            emit_sync(g);
        break;
    }
    case TILEC_ST_ASSIGN:
        out(g, "%*sv%d = (", 2 * (g->ind + 1), "", s->u.assign.var->id);
        emit_expr(g, s->u.assign.value);
        out(g, ");\n");
        break;
    case TILEC_ST_COPY:
        if (g->rf[s->u.copy.src.buf->id] || g->rf[s->u.copy.dst.buf->id]) {
            emit_rf_copy(g, s);
            break;
        }
        emit_copy(g, s, !par && !per_thread_scope(s->u.copy.dst.buf->scope) ? &coop : &solo);
        break;
    case TILEC_ST_FILL:
        if (g->rf[s->u.fill.dst.buf->id]) {
            emit_rf_fill(g, s);
            break;
        }
        emit_fill(g, s, !par && !per_thread_scope(s->u.fill.dst.buf->scope) ? &coop : &solo);
        break;
    case TILEC_ST_GEMM:
        emit_gemm(g, s, !par && !per_thread_scope(s->u.gemm.c->scope) ? &coop : &solo);
        break;
    case TILEC_ST_REDUCE:
        if (g->rf[s->u.reduce.src->id]) {
            emit_rf_reduce(g, s);
            break;
        }
        emit_reduce(g, s, !par && !per_thread_scope(s->u.reduce.dst->scope) ? &coop : &solo);
        break;
    case TILEC_ST_CUMSUM:
        emit_cumsum(g, s, !par && !per_thread_scope(s->u.cumsum.dst->scope) ? &coop : &solo);
        break;
    case TILEC_ST_ATOMIC:
        if (!par) {
            line(g, "if (tl_tid == 0) {");
            g->ind++;
        }
        emit_atomic(g, s);
        if (!par) {
            g->ind--;
            line(g, "}");
            emit_sync(g);
        }
        break;
    case TILEC_ST_SYNC:
        if (!par)
            emit_sync(g);
        break;
    case TILEC_ST_PRINT:
        if (!par) {
            line(g, "if (tl_tid == 0) {");
            g->ind++;
        }
        emit_print(g, s);
        if (!par) {
            g->ind--;
            line(g, "}");
        }
        break;
    case TILEC_ST_HINT:
        break; /* use_swizzle is applied at kernel entry; layouts are ours */
    default:
        cg_fail(g, "statement '%s' is not supported by the cuda backend yet", tilec_stmt_kind_name(s->kind));
    }
    g->depth--;
}

static void emit_block(cg_t *g, const tilec_ir_stmt_t *s, int par)
{
    for (; s && !g->failed; s = s->next)
        emit_stmt(g, s, par);
}

/* first top-level use_swizzle hint: its panel size, else 0 */
static int64_t find_swizzle(const tilec_ir_stmt_t *s)
{
    for (; s; s = s->next)
        if (s->kind == TILEC_ST_HINT && s->u.hint.name &&
            strcmp(s->u.hint.name, "use_swizzle") == 0 && s->u.hint.nargs >= 1) {
            int64_t v = 0;
            if (tilec_ir_is_const_int(s->u.hint.args[0], &v) && v > 0)
                return v;
        }
    return 0;
}

int cuda_codegen(const tilec_ir_module_t *m, int sm, int wgmma, tilec_sdk_str_t *o,
                 cuda_kinfo_t *info, char *err, size_t errlen)
{
    cg_t g;
    memset(&g, 0, sizeof g);
    memset(info, 0, sizeof *info);
    g.err = err;
    g.errlen = errlen;
    g.o = o;
    g.sm = sm;
    g.wgmma = wgmma;
    g.info = info;
    tilec_arena_init(&g.ar);
    if (!m || !m->kernel) {
        snprintf(err, errlen, "no kernel");
        return -1;
    }
    const tilec_ir_kernel_t *k = m->kernel;
    g.k = k;
    int64_t nt = (int64_t)k->threads[0] * k->threads[1] * k->threads[2];
    if (nt < 1 || nt > 1024) {
        snprintf(err, errlen, "threads=%lld per block: CUDA allows 1..1024", (long long)nt);
        return -1;
    }
    g.nthreads = (int)nt;
    g.smem_off = calloc((size_t)k->nbufs + 1, sizeof *g.smem_off);
    g.pitch = calloc((size_t)k->nbufs + 1, sizeof *g.pitch);
    g.stages = calloc((size_t)k->nbufs + 1, sizeof *g.stages);
    g.stage_bytes = calloc((size_t)k->nbufs + 1, sizeof *g.stage_bytes);
    g.swz = calloc((size_t)k->nbufs + 1, sizeof *g.swz);
    g.rf = calloc((size_t)k->nbufs + 1, sizeof *g.rf);
    g.rf_id = calloc((size_t)k->nbufs + 1, sizeof *g.rf_id);
    g.rf_plan = calloc((size_t)k->nbufs + 1, sizeof *g.rf_plan);
    if (!g.smem_off || !g.pitch || !g.stages || !g.stage_bytes || !g.swz || !g.rf || !g.rf_id ||
        !g.rf_plan) {
        free(g.swz);
        free(g.rf);
        free(g.rf_id);
        free(g.rf_plan);
        free(g.smem_off);
        free(g.pitch);
        free(g.stages);
        free(g.stage_bytes);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* the shared-memory plan's row layouts: swizzled wgmma operands
     * (the width in elements), rows padded for ldmatrix */
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_layout_t *L = k->bufs[i]->layout;
        if (!L || L->kind != TILEC_LAYOUT_SMEM)
            continue;
        const tilec_ir_attr_t *pitch = tilec_ir_attr_get(L->nparams, L->params, "pitch");
        if (strncmp(L->name, "swizzle", 7) == 0)
            g.swz[i] = atoi(L->name + 7) / (int)tilec_dtype_size(k->bufs[i]->dtype);
        else if (strcmp(L->name, "pad") == 0 && pitch && pitch->kind == TILEC_ATTR_INT)
            g.pitch[i] = pitch->i;
        g.any_swz |= g.swz[i] > 0;
    }
    pipe_walk(&g, k->body, 0, 0);
    plan_regfrags(&g);
    uint64_t off = 0;
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if ((b->scope != TILEC_SCOPE_SHARED && b->scope != TILEC_SCOPE_FRAGMENT) || g.rf[i])
            continue;
        int64_t n = tilec_ir_buffer_const_size(b);
        if (n < 0) {
            cg_fail(&g, "buffer '%s' has no constant shape", b->name);
            break;
        }
        if (g.pitch[i] > 0)
            n = n / const_dim(b, b->ndim - 1) * g.pitch[i];
        /* swizzle patterns repeat every 1024 bytes of the address */
        uint64_t al = g.swz[i] ? 1023 : 127;
        off = (off + al) & ~al;
        g.smem_off[i] = off;
        g.stage_bytes[i] = ((uint64_t)n * tilec_dtype_size(b->dtype) + al) & ~al;
        off += g.stages[i] > 1 ? g.stage_bytes[i] * (uint64_t)g.stages[i]
                               : (uint64_t)n * tilec_dtype_size(b->dtype);
    }
    g.smem_bytes = (off + 15) & ~(uint64_t)15;
    info->smem_bytes = g.smem_bytes;

    tilec_sdk_str_puts(o, "/* generated by tilec's CUDA backend */\n");
    tilec_sdk_str_puts(o, cuda_prelude);
    if (g.any_swz) {
        char(*seen)[64] = calloc(64, sizeof *seen);
        int nseen = 0;
        tilec_sdk_str_puts(o, cuda_prelude_wgmma);
        if (seen)
            emit_wgmma_fns(&g, k->body, seen, &nseen, 0);
        else
            cg_fail(&g, "out of memory");
        free(seen);
    }
    out(&g, "\nextern \"C\" __global__ void __launch_bounds__(%d) tilec_kernel(", g.nthreads);
    int first = 1;
    for (int i = 0; i < k->nparams; i++) {
        out(&g, "%s%s *b%d", first ? "" : ", ", stype(k->bufs[i]->dtype), i);
        first = 0;
    }
    int nsym = 0;
    for (int i = 0; i < k->nvars; i++)
        if (k->vars[i]->kind == TILEC_VAR_SYM)
            out(&g, "%sint tl_sym%d", first ? "" : ", ", nsym++), first = 0;
    if (first)
        out(&g, "void");
    out(&g, ")\n{\n");
    line(&g, "extern __shared__ __align__(1024) unsigned char tl_smem[];");
    if (g.any_swz) /* the swizzle is of absolute addresses: check the base */
        line(&g, "if ((tl_sa(tl_smem) & 1023u) != 0u) __trap();");
    line(&g, "const int tl_tid = (int)(threadIdx.x + %d * (threadIdx.y + %d * threadIdx.z));",
         k->threads[0], k->threads[1]);
    /* variables */
    nsym = 0;
    for (int i = 0; i < k->nvars; i++) {
        const tilec_ir_var_t *v = k->vars[i];
        switch (v->kind) {
        case TILEC_VAR_SYM: line(&g, "const int v%d = tl_sym%d; (void)v%d;", i, nsym++, i); break;
        case TILEC_VAR_LOOP: line(&g, "int v%d = 0; (void)v%d;", i, i); break;
        case TILEC_VAR_LET: line(&g, "%s v%d = 0; (void)v%d;", ctype(v->dtype), i, i); break;
        default: break;
        }
    }
    /* block indices, with use_swizzle rasterization for 2-D grids */
    int64_t panel = find_swizzle(k->body);
    static const char *const bidx[3] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
    if (panel > 0 && k->ngrid >= 2) {
        line(&g, "int v%d, v%d;", k->block[0]->id, k->block[1]->id);
        line(&g, "{ /* use_swizzle(%lld): panels of %lld block columns */", (long long)panel,
             (long long)panel);
        line(&g, "  const int tl_gx = (int)gridDim.x, tl_gy = (int)gridDim.y;");
        line(&g, "  const int tl_l = (int)(blockIdx.x + gridDim.x * blockIdx.y);");
        line(&g, "  const int tl_pan = tl_l / (%lld * tl_gy), tl_in = tl_l %% (%lld * tl_gy);",
             (long long)panel, (long long)panel);
        line(&g, "  const int tl_w = min(%lld, tl_gx - tl_pan * %lld);", (long long)panel,
             (long long)panel);
        line(&g, "  v%d = tl_pan * %lld + tl_in %% tl_w; v%d = tl_in / tl_w;", k->block[0]->id,
             (long long)panel, k->block[1]->id);
        line(&g, "}");
        for (int d = 2; d < k->ngrid; d++)
            line(&g, "const int v%d = (int)%s;", k->block[d]->id, bidx[d]);
    } else {
        for (int d = 0; d < k->ngrid; d++)
            line(&g, "const int v%d = (int)%s; (void)v%d;", k->block[d]->id, bidx[d],
                 k->block[d]->id);
    }
    /* shapes of the tensors */
    for (int i = 0; i < k->nparams; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        for (int d = 1; d < b->ndim; d++) {
            out(&g, "  const tl_i64 tl_s%d_%d = (tl_i64)(", i, d);
            emit_expr(&g, b->shape[d]);
            out(&g, "); (void)tl_s%d_%d;\n", i, d);
        }
        if (b->ndim >= 1) {
            out(&g, "  const tl_i64 tl_s%d_0 = (tl_i64)(", i);
            emit_expr(&g, b->shape[0]);
            out(&g, "); (void)tl_s%d_0;\n", i);
        }
    }
    /* on-chip buffers */
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (g.rf[i] == RF_ACC && g.rf_warprows) {
            line(&g, "/* fragment %s lives in registers, rows over warps (tl_c%d) */", b->name,
                 g.rf_id[i]);
            line(&g, "const int tl_w%d = tl_tid >> 5, tl_l%d = tl_tid & 31;", g.rf_id[i], g.rf_id[i]);
            line(&g, "float tl_c%d[%d][%d][%d] = {};", g.rf_id[i], g.rf_plan[i].mt, g.rf_plan[i].nt,
                 g.rf_plan[i].ev);
        } else if (g.rf[i] == RF_ACC) {
            line(&g, "/* fragment %s lives in registers (tl_c%d) */", b->name, g.rf_id[i]);
            mma_decl(&g, &g.rf_plan[i], g.rf_id[i]);
        } else if (g.rf[i] == RF_ROW) {
            line(&g, "float tl_c%d[%d][%d] = {}; /* fragment %s lives in registers, by rows */",
                 g.rf_id[i], g.rf_rows.mt, rf_halves(&g), b->name);
        } else if (b->scope == TILEC_SCOPE_SHARED || b->scope == TILEC_SCOPE_FRAGMENT) {
            line(&g, "%s *%sb%d = (%s *)(tl_smem + %llu); /* %s %s%s */", stype(b->dtype),
                 g.stages[i] > 1 ? "" : "const ", i, stype(b->dtype),
                 (unsigned long long)g.smem_off[i], tilec_scope_name(b->scope), b->name,
                 g.stages[i] > 1 ? ", cp.async ring" : "");
        } else {
            int64_t n = tilec_ir_buffer_const_size(b);
            if (n < 0 || n > CG_LOCAL_MAX_ELEMS) {
                cg_fail(&g, "local buffer '%s' is too large for registers (%lld elements)",
                        b->name, (long long)n);
                break;
            }
            line(&g, "%s b%d[%lld] = {}; /* %s %s */", stype(b->dtype), i, (long long)n,
                 tilec_scope_name(b->scope), b->name);
        }
    }
    if (g.smem_bytes) {
        int *zero = calloc((size_t)k->nbufs + 1, sizeof *zero);
        int any = 0;
        if (zero)
            plan_zero(&g, zero);
        for (int i = k->nparams; i < k->nbufs; i++) {
            const tilec_ir_buffer_t *b = k->bufs[i];
            if ((b->scope != TILEC_SCOPE_SHARED && b->scope != TILEC_SCOPE_FRAGMENT) ||
                g.rf[i] || (zero && !zero[i]))
                continue;
            int64_t n = tilec_ir_buffer_const_size(b);
            if (g.pitch[i] > 0)
                n = n / const_dim(b, b->ndim - 1) * g.pitch[i];
            uint64_t bytes = g.stages[i] > 1 ? g.stage_bytes[i] * (uint64_t)g.stages[i]
                                             : (uint64_t)n * tilec_dtype_size(b->dtype);
            bytes = (bytes + 15) / 16;
            line(&g, "for (int tl_z = tl_tid; tl_z < %llu; tl_z += %d) ((uint4 *)(tl_smem + %llu))[tl_z] = make_uint4(0, 0, 0, 0); /* %s */",
                 (unsigned long long)bytes, g.nthreads, (unsigned long long)g.smem_off[i], b->name);
            any = 1;
        }
        free(zero);
        if (any)
            line(&g, "__syncthreads();");
    }
    emit_block(&g, k->body, 0);
    out(&g, "}\n");
    free(g.smem_off);
    free(g.pitch);
    free(g.stages);
    free(g.stage_bytes);
    free(g.swz);
    free(g.rf);
    free(g.rf_id);
    free(g.rf_plan);
    tilec_arena_destroy(&g.ar);
    if (!g.failed && o->oom) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return g.failed ? -1 : 0;
}
