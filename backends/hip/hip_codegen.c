/*
 * hip_codegen.c — the HIP C++ dialect of the SIMT kit, and T.gemm on AMD's
 * matrix cores as the dialect's statement hook.
 *
 * The dialect table is CUDA-like C++ as hiprtc reads it (its runtime
 * headers are built in): __global__ kernels with __launch_bounds__,
 * __shared__ arrays in LDS, blockIdx/threadIdx, __syncthreads, float16 as
 * clang's native _Float16 (C casts round to nearest even), bfloat16 as
 * 16-bit patterns, HIP's native atomicAdd/Max/Min where HIP has them and
 * atomicCAS loops elsewhere, generic math overloads, printf, and
 * reductions across a wavefront's lanes with __shfl_xor at the
 * wavefront's width (64 on CDNA, 32 on RDNA).
 *
 * The GEMM hook.  A block-level T.gemm whose operand dtypes match one of
 * the target description's matrix instructions (hip_target.c) and whose
 * shapes are multiples of its tile is lowered here: the m x n tiles of C
 * are dealt to the wavefronts of the block; a wavefront keeps its tile's
 * accumulator in registers (an ext_vector of floats or ints, the
 * instruction's accumulator layout read from the description's modes),
 * loads each K-step's operands from where the kit placed A and B (LDS, or
 * global memory) into the per-lane registers the instruction reads, issues
 * __builtin_amdgcn_mfma_* (CDNA) or __builtin_amdgcn_wmma_*_w32 (RDNA3),
 * and writes the tile back.  Operand lanes: lane l of an m-row MFMA holds
 * row l % m and the E = k*m/64 consecutive k-values starting at
 * (l / m) * E (for B the column l % n); WMMA lanes hold a whole row (a
 * column of B) and lanes 16..31 repeat lanes 0..15.  Anything else (other
 * dtypes, ragged shapes, per-thread gemms, GCN and RDNA2) falls through to
 * the kit's FMA tiles.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hip_internal.h"

/* How the instruction named by a target entry is spelled and fed. */
typedef struct mma_kind {
    const char *name;       /* the target entry's name */
    const char *builtin;    /* __builtin_amdgcn_... */
    const char *op_type;    /* per-lane operand type */
    const char *acc_type;   /* per-lane accumulator type */
    int elems;              /* operand elements per lane (E) */
    int wmma;               /* 1: (a, b, c); 0: MFMA (a, b, c, cbsz, abid, blgp) */
    int packed_i8;          /* operand is an integer of E packed int8 values */
} mma_kind_t;

static const mma_kind_t kinds[] = {
    {"mfma.f32.32x32x8f16", "__builtin_amdgcn_mfma_f32_32x32x8f16", "tc_h4", "tc_f16", 4, 0, 0},
    {"mfma.f32.16x16x16f16", "__builtin_amdgcn_mfma_f32_16x16x16f16", "tc_h4", "tc_f4", 4, 0, 0},
    {"mfma.f32.32x32x8bf16_1k", "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k", "tc_s4", "tc_f16", 4, 0, 0},
    {"mfma.f32.16x16x16bf16_1k", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k", "tc_s4", "tc_f4", 4, 0, 0},
    {"mfma.i32.32x32x8i8", "__builtin_amdgcn_mfma_i32_32x32x8i8", "int", "tc_i16", 4, 0, 1},
    {"mfma.i32.16x16x16i8", "__builtin_amdgcn_mfma_i32_16x16x16i8", "int", "tc_i4", 4, 0, 1},
    {"mfma.i32.32x32x16i8", "__builtin_amdgcn_mfma_i32_32x32x16_i8", "long", "tc_i16", 8, 0, 1},
    {"mfma.i32.16x16x32i8", "__builtin_amdgcn_mfma_i32_16x16x32_i8", "long", "tc_i4", 8, 0, 1},
    {"wmma.f32.16x16x16f16", "__builtin_amdgcn_wmma_f32_16x16x16_f16_w32", "tc_h16", "tc_f8", 16, 1, 0},
    {"wmma.f32.16x16x16bf16", "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32", "tc_s16", "tc_f8", 16, 1, 0},
};

static const mma_kind_t *kind_of(const char *name)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kinds[i].name, name))
            return &kinds[i];
    return NULL;
}

/* The constant extent of dimension d of b, or -1. */
static int64_t cdim(const tilec_ir_buffer_t *b, int d)
{
    int64_t v;
    return b->shape && b->shape[d] && tilec_ir_is_const_int(b->shape[d], &v) ? v : -1;
}

/* The description's entry the gemm_warp pass chose (lower.mma), when it
 * is a matrix instruction spelled here; NULL for "simt" or no choice. */
static const tilec_target_mma_t *chosen(const tilec_target_desc_t *t, const tilec_ir_stmt_t *s)
{
    const tilec_ir_attr_t *a = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma");
    for (int i = 0; a && a->kind == TILEC_ATTR_STRING && t && i < t->nmma; i++)
        if (!strcmp(t->mma[i].name, a->s) && kind_of(a->s))
            return &t->mma[i];
    return NULL;
}

/* an int tuple attribute of n values into v; 0, or -1 when absent */
static int tuple(const tilec_ir_stmt_t *s, const char *key, int64_t *v, int n)
{
    const tilec_ir_attr_t *a = tilec_ir_attr_get(s->nattrs, s->attrs, key);
    if (!a || a->kind != TILEC_ATTR_TUPLE || a->n != n)
        return -1;
    for (int i = 0; i < n; i++)
        v[i] = a->tuple[i];
    return 0;
}

/* Row (axis 0) or column (axis 1) of accumulator register j of lane
 * tc_lane inside one instruction tile, from the entry's modes: a mode with
 * a register stride gives a constant, one with a thread stride a term in
 * tc_lane. */
static void acc_coord(const tilec_target_mma_t *e, int axis, int j, char *out, size_t n)
{
    int nm = axis ? e->ncol_modes : e->nrow_modes;
    const tilec_target_mode_t *md = axis ? e->col_modes : e->row_modes;
    int64_t len = axis ? e->n : e->m, mult = 1, cst = 0;
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < nm; i++) {
        int64_t ext = md[i].extent ? md[i].extent : len / mult;
        if (md[i].reg_stride)
            cst += ((j / md[i].reg_stride) % ext) * mult;
        else if (md[i].thread_stride && k < n) {
            char lane[32];
            if (md[i].thread_stride == 1)
                snprintf(lane, sizeof lane, "tc_lane");
            else
                snprintf(lane, sizeof lane, "(tc_lane / %d)", md[i].thread_stride);
            k += (size_t)snprintf(out + k, n - k, "%s(%s %% %" PRId64 ")", k ? " + " : "", lane, ext);
            if (mult > 1 && k < n)
                k += (size_t)snprintf(out + k, n - k, " * %" PRId64, mult);
        }
        mult *= ext;
    }
    if (k < n && (cst || !k))
        snprintf(out + k, n - k, "%s%" PRId64, k ? " + " : "", cst);
}

/* the plan of one matrix-core gemm (lower_gemm_warp's attributes) */
typedef struct mplan {
    const tilec_target_mma_t *e;
    const mma_kind_t *mk;
    int64_t M, N, K, gm, gn, mt, nt, WM, WN;
    int rpt;                 /* accumulator registers of one instruction tile */
} mplan_t;

typedef struct lbind {
    int64_t idx[2];
} lbind_t;

static int lay_bind(void *ctx, const tilec_ir_var_t *v, int64_t *out)
{
    const lbind_t *b = ctx;
    if (!v || v->kind != TILEC_VAR_LAYOUT || v->id < 0 || v->id > 2)
        return -1;
    *out = v->id == 2 ? 0 : b->idx[v->id];
    return 0;
}

/* 1 when C's register layout (lower_layout's "mma.acc") is the one the
 * hook prints: element (r, c) in thread w * threads + lane of wavefront w
 * = (r / WM) * gn + c / WN, register t * rpt + j for instruction tile t =
 * (r % WM / m) * nt + (c % WN / n) and the instruction's own (lane, j).
 * Checked element by element, so a layout the passes change later is a
 * message, not a wrong kernel. */
static int regs_match(const tilec_ir_buffer_t *C, const mplan_t *p)
{
    const tilec_ir_layout_t *l = C->layout;
    if (!l || l->kind != TILEC_LAYOUT_REGS || l->replicate != 1 || !l->thread || !l->local)
        return 0;
    lbind_t b;
    for (int64_t r = 0; r < p->M; r++)
        for (int64_t c = 0; c < p->N; c++) {
            int64_t rr = r % p->WM, cc = c % p->WN, t, g;
            int32_t lane, j;
            if (tilec_target_mma_place(p->e, p->e->n, (int32_t)(rr % p->e->m), (int32_t)(cc % p->e->n), &lane, &j))
                return 0;
            b.idx[0] = r;
            b.idx[1] = c;
            if (tilec_ir_eval_int(l->thread, lay_bind, &b, &t) || tilec_ir_eval_int(l->local, lay_bind, &b, &g) ||
                t != ((r / p->WM) * p->gn + c / p->WN) * p->e->threads + lane ||
                g != ((rr / p->e->m) * p->nt + cc / p->e->n) * p->rpt + j)
                return 0;
        }
    return 1;
}

/* Accumulator register j of instruction tile (ti, tj) of this wavefront
 * as an element of C: its register, or its row-major offset. */
static const char *acc_elem(const mplan_t *p, int regs, int ti, int tj, int j, char *buf, size_t n)
{
    if (regs) {
        snprintf(buf, n, "%d", (ti * (int)p->nt + tj) * p->rpt + j);
    } else {
        char row[160], col[160];
        acc_coord(p->e, 0, j, row, sizeof row);
        acc_coord(p->e, 1, j, col, sizeof col);
        snprintf(buf, n, "(long long)(tc_wm + %d + %s) * %" PRId64 " + tc_wn + %d + %s", ti * p->e->m, row, p->N,
                 tj * p->e->n, col);
    }
    return buf;
}

static int gemm_hook(hip_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    mplan_t p;
    memset(&p, 0, sizeof p);
    p.e = chosen(g->arch.desc, s);
    if (!p.e) {
        g->ngemm_fma++;
        return 0; /* the kit's FMA tiles ("simt") */
    }
    p.mk = kind_of(p.e->name);
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    int64_t warp[2], tiles[2];
    int regs = C->scope == TILEC_SCOPE_FRAGMENT && tilec_simt_place_of(c, C) == TILEC_SIMT_PLACE_PRIVATE;
    if (tilec_simt_per_thread(c) || A->ndim != 2 || B->ndim != 2 || C->ndim != 2 ||
        tilec_simt_place_of(c, A) == TILEC_SIMT_PLACE_PRIVATE || tilec_simt_place_of(c, B) == TILEC_SIMT_PLACE_PRIVATE ||
        tuple(s, "lower.warp", warp, 2) || tuple(s, "lower.mma_tiles", tiles, 2)) {
        tilec_simt_fail(c, "gemm %s, %s -> %s on %s: operands or plan the HIP matrix-core hook cannot print "
                        "(per-thread code, registers, rank above 2, no lower.warp)", A->name, B->name, C->name,
                        p.e->name);
        return -1;
    }
    p.M = cdim(C, 0);
    p.N = cdim(C, 1);
    p.K = cdim(A, ta ? 0 : 1);
    p.gm = warp[0];
    p.gn = warp[1];
    p.mt = tiles[0];
    p.nt = tiles[1];
    p.rpt = p.e->m * p.e->n / p.e->threads;
    if (p.M <= 0 || p.N <= 0 || p.K <= 0 || p.gm <= 0 || p.gn <= 0 || p.M % p.gm || p.N % p.gn ||
        p.K % p.e->k) {
        tilec_simt_fail(c, "gemm %s, %s -> %s on %s: shapes that are not constant multiples of the instruction",
                        A->name, B->name, C->name, p.e->name);
        return -1;
    }
    p.WM = p.M / p.gm;
    p.WN = p.N / p.gn;
    if (p.WM != p.mt * p.e->m || p.WN != p.nt * p.e->n || (regs && !regs_match(C, &p))) {
        tilec_simt_fail(c, "gemm %s -> %s on %s: the accumulator layout is not the instruction's tiles over the "
                        "wavefront grid", A->name, C->name, p.e->name);
        return -1;
    }
    const mma_kind_t *mk = p.mk;
    int lanes = p.e->threads, E = mk->elems, groups = p.e->k / E, mt = (int)p.mt, nt = (int)p.nt;
    g->ngemm_mma++;
    tilec_simt_emit(c, "{ /* gemm %s, %s -> %s on %s: %" PRId64 " x %" PRId64 " wavefronts of %d x %d tiles, C in %s */",
                    A->name, B->name, C->name, p.e->name, p.gm, p.gn, mt, nt, regs ? "registers" : "memory");
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "const int tc_lane = (int)(tc_tid %% %d), tc_wave = (int)(tc_tid / %d);", lanes, lanes);
    tilec_simt_emit(c, "if (tc_wave < %" PRId64 ") {", p.gm * p.gn);
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "const int tc_wm = (tc_wave / %" PRId64 ") * %" PRId64 ", tc_wn = (tc_wave %% %" PRId64
                    ") * %" PRId64 ";", p.gn, p.WM, p.gn, p.WN);
    /* this lane's operand row of A / column of B, and its first k */
    tilec_simt_emit(c, "const int tc_ar = tc_wm + tc_lane %% %d, tc_bc = tc_wn + tc_lane %% %d;", p.e->m, p.e->n);
    tilec_simt_emit(c, "const int tc_ak = ((tc_lane / %d) %% %d) * %d;", p.e->m, groups, E);
    char el[400];
    for (int ti = 0; ti < mt; ti++)
        for (int tj = 0; tj < nt; tj++) {
            int t = ti * nt + tj;
            tilec_simt_emit(c, "%s tc_acc%d;", mk->acc_type, t);
            for (int j = 0; j < p.rpt; j++)
                tilec_simt_emit(c, "tc_acc%d[%d] = %s;", t, j,
                                s->u.gemm.clear_accum ? "0" : tilec_simt_elem(c, C, acc_elem(&p, regs, ti, tj, j, el, sizeof el)));
        }
    tilec_simt_emit(c, "for (int tc_k = 0; tc_k < %" PRId64 "; tc_k += %d) {", p.K, p.e->k);
    tilec_simt_indent(c, 1);
    for (int side = 0; side < 2; side++) {
        const tilec_ir_buffer_t *X = side ? B : A;
        int nx = side ? nt : mt, tr = side ? !tb : ta; /* tr: k is the leading dimension */
        int64_t ld = side ? (tb ? p.K : p.N) : (ta ? p.M : p.K);
        for (int x = 0; x < nx; x++) {
            char v[32], o[200];
            snprintf(v, sizeof v, "tc_%c%d", side ? 'b' : 'a', x);
            tilec_simt_emit(c, "%s %s;", mk->op_type, v);
            if (mk->packed_i8)
                tilec_simt_emit(c, "%s = 0;", v);
            for (int i = 0; i < E; i++) {
                const char *mn = side ? "tc_bc" : "tc_ar";
                int step = side ? p.e->n : p.e->m;
                if (tr)
                    snprintf(o, sizeof o, "(long long)(tc_k + tc_ak + %d) * %" PRId64 " + %s + %d", i, ld, mn, x * step);
                else
                    snprintf(o, sizeof o, "(long long)(%s + %d) * %" PRId64 " + tc_k + tc_ak + %d", mn, x * step, ld, i);
                const char *src = tilec_simt_elem(c, X, o);
                if (mk->packed_i8) {
                    const char *pt = E == 8 ? "long" : "int", *ut = E == 8 ? "unsigned long" : "unsigned int";
                    tilec_simt_emit(c, "%s |= (%s)((%s)(unsigned char)%s << %d);", v, pt, ut, src, 8 * i);
                } else {
                    /* float16 storage is _Float16, bfloat16 storage 16-bit
                     * patterns: the operand vectors take them as they are */
                    tilec_simt_emit(c, "%s[%d] = %s;", v, i, src);
                }
            }
        }
    }
    for (int ti = 0; ti < mt; ti++)
        for (int tj = 0; tj < nt; tj++) {
            int t = ti * nt + tj;
            if (mk->wmma)
                tilec_simt_emit(c, "tc_acc%d = %s(tc_a%d, tc_b%d, tc_acc%d);", t, mk->builtin, ti, tj, t);
            else
                tilec_simt_emit(c, "tc_acc%d = %s(tc_a%d, tc_b%d, tc_acc%d, 0, 0, 0);", t, mk->builtin, ti, tj, t);
        }
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    for (int ti = 0; ti < mt; ti++)
        for (int tj = 0; tj < nt; tj++)
            for (int j = 0; j < p.rpt; j++)
                tilec_simt_emit(c, "%s = tc_acc%d[%d];",
                                tilec_simt_elem(c, C, acc_elem(&p, regs, ti, tj, j, el, sizeof el)), ti * nt + tj, j);
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    return 1;
}

static int hip_stmt(void *user, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    if (s->kind == TILEC_ST_GEMM)
        return gemm_hook(user, c, s);
    return 0;
}

static int hip_prelude(void *user, tilec_simt_ctx_t *c)
{
    hip_gen_t *g = user;
    if (!g->ngemm_mma)
        return 0;
    /* the register vectors the matrix instructions read and write */
    tilec_simt_emit(c, "typedef _Float16 tc_h4 __attribute__((ext_vector_type(4)));");
    tilec_simt_emit(c, "typedef _Float16 tc_h16 __attribute__((ext_vector_type(16)));");
    tilec_simt_emit(c, "typedef short tc_s4 __attribute__((ext_vector_type(4)));");
    tilec_simt_emit(c, "typedef short tc_s16 __attribute__((ext_vector_type(16)));");
    tilec_simt_emit(c, "typedef float tc_f4 __attribute__((ext_vector_type(4)));");
    tilec_simt_emit(c, "typedef float tc_f8 __attribute__((ext_vector_type(8)));");
    tilec_simt_emit(c, "typedef float tc_f16 __attribute__((ext_vector_type(16)));");
    tilec_simt_emit(c, "typedef int tc_i4 __attribute__((ext_vector_type(4)));");
    tilec_simt_emit(c, "typedef int tc_i16 __attribute__((ext_vector_type(16)));");
    return 0;
}

void hip_dialect(hip_gen_t *g, tilec_simt_dialect_t *d)
{
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->name = "hip";
    d->type_name[TILEC_BOOL] = "unsigned char";
    d->type_name[TILEC_INT8] = "signed char";
    d->type_name[TILEC_INT16] = "short";
    d->type_name[TILEC_INT32] = "int";
    d->type_name[TILEC_INT64] = "long long";
    d->type_name[TILEC_UINT8] = "unsigned char";
    d->type_name[TILEC_UINT16] = "unsigned short";
    d->type_name[TILEC_UINT32] = "unsigned int";
    d->type_name[TILEC_UINT64] = "unsigned long long";
    d->type_name[TILEC_FLOAT32] = "float";
    d->type_name[TILEC_FLOAT64] = "double";
    d->f16.mode = TILEC_SIMT_HALF_NATIVE;
    d->f16.half_type = "_Float16"; /* C casts: float -> _Float16 rounds to nearest even */
    d->bf16.mode = TILEC_SIMT_HALF_BITS;
    d->int64_suffix = "LL";
    d->uint64_suffix = "ULL";
    d->f32_as_bits = "__float_as_uint";
    d->bits_as_f32 = "__uint_as_float";
    d->f64_as_bits = "(unsigned long long)__double_as_longlong";
    d->bits_as_f64 = "__longlong_as_double";
    d->func_qual = "static __device__ __forceinline__";
    d->global_qual = "";
    d->shared_qual = "__shared__";
    d->private_qual = "";
    d->restrict_kw = "__restrict__";
    d->kernel_qual = "extern \"C\" __global__ void";
    d->kernel_attr = "__launch_bounds__($n)";
    d->kernel_name = HIP_KERNEL_NAME;
    d->block_idx[0] = "blockIdx.x";
    d->block_idx[1] = "blockIdx.y";
    d->block_idx[2] = "blockIdx.z";
    d->thread_idx[0] = "threadIdx.x";
    d->thread_idx[1] = "threadIdx.y";
    d->thread_idx[2] = "threadIdx.z";
    d->barrier = "__syncthreads();";
    /* HIP's native atomics (hardware or its own CAS loops, per type) */
    static const char *const i32[3] = {"atomicAdd($p, $v);", "atomicMax($p, $v);", "atomicMin($p, $v);"};
    for (int o = 0; o < 3; o++) {
        d->atomic[TILEC_INT32][o] = i32[o];
        d->atomic[TILEC_UINT32][o] = i32[o];
        d->atomic[TILEC_UINT64][o] = i32[o];
    }
    d->atomic[TILEC_INT64][0] = "atomicAdd((unsigned long long *)$p, (unsigned long long)$v);";
    d->atomic[TILEC_FLOAT32][0] = "atomicAdd($p, $v);";
    d->atomic[TILEC_FLOAT64][0] = "atomicAdd($p, $v);";
    d->cas32 = "atomicCAS((unsigned int *)$p, $c, $v)";
    d->cas64 = "atomicCAS((unsigned long long *)$p, $c, $v)";
    d->math_generic = 1;
    d->has_rsqrt = 1;
    d->has_printf = 1;
    d->user = g;
    d->stmt_hook = hip_stmt;
    d->prelude_hook = hip_prelude;
    d->shared_align = 16;
    d->printf_i64 = "%lld";
    d->shared_ptr_qual = "";
    /* reductions across the lanes of a wavefront (ds_swizzle / DPP) */
    d->subgroup_size = (uint32_t)g->arch.wave;
    d->shfl_xor = "__shfl_xor($v, $m, $w)";
}
