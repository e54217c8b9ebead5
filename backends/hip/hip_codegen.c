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
    const tilec_ir_expr_t *e = b->shape ? b->shape[d] : NULL;
    return e && e->kind == TILEC_EX_INT ? e->u.i : -1;
}

/* The first instruction of the description for this gemm, or NULL. */
static const tilec_target_mma_t *pick(const tilec_target_desc_t *t, const tilec_ir_buffer_t *A,
                                      const tilec_ir_buffer_t *B, const tilec_ir_buffer_t *C, int64_t M,
                                      int64_t N, int64_t K, int nthreads)
{
    for (int i = 0; t && i < t->nmma; i++) {
        const tilec_target_mma_t *e = &t->mma[i];
        if ((int)A->dtype == e->a_dtype && (int)B->dtype == e->b_dtype && (int)C->dtype == e->acc_dtype &&
            M % e->m == 0 && N % e->n == 0 && K % e->k == 0 && nthreads % e->threads == 0 && kind_of(e->name))
            return e;
    }
    return NULL;
}

/* Row (axis 0) or column (axis 1) of accumulator register j of lane
 * tc_lane, from the entry's modes: a mode with a register stride gives a
 * constant, one with a thread stride a term in tc_lane. */
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

static int gemm_hook(hip_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    if (tilec_simt_per_thread(c) || !A || !B || !C || A->ndim != 2 || B->ndim != 2 || C->ndim != 2 ||
        tilec_simt_place_of(c, A) == TILEC_SIMT_PLACE_PRIVATE ||
        tilec_simt_place_of(c, B) == TILEC_SIMT_PLACE_PRIVATE ||
        tilec_simt_place_of(c, C) == TILEC_SIMT_PLACE_PRIVATE)
        return 0;
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
    int64_t M = cdim(C, 0), N = cdim(C, 1), K = cdim(A, ta ? 0 : 1);
    if (M <= 0 || N <= 0 || K <= 0 || cdim(A, ta ? 1 : 0) != M || cdim(B, tb ? 1 : 0) != K ||
        cdim(B, tb ? 0 : 1) != N)
        return 0; /* the kit reports shape errors */
    /* the block's thread count: the kit declares it as tc_nthreads; the
     * kernel's threads give it here */
    const tilec_ir_kernel_t *kern = g->kernel;
    int nthreads = kern ? kern->threads[0] * kern->threads[1] * kern->threads[2] : 0;
    const tilec_target_mma_t *e = pick(g->arch.desc, A, B, C, M, N, K, nthreads);
    if (!e) {
        g->ngemm_fma++;
        return 0;
    }
    const mma_kind_t *mk = kind_of(e->name);
    int lanes = e->threads, E = mk->elems, groups = e->k / E;
    int regs = e->m * e->n / lanes;
    int64_t ntn = N / e->n, ntiles = (M / e->m) * ntn;
    int nwaves = nthreads / lanes;
    const char *a = tilec_simt_buf_name(c, A), *b = tilec_simt_buf_name(c, B), *cn = tilec_simt_buf_name(c, C);
    g->ngemm_mma++;
    tilec_simt_emit(c, "{ /* gemm %s, %s -> %s on %s: %" PRId64 " tiles over %d wavefronts */", A->name ? A->name : "?",
                    B->name ? B->name : "?", C->name ? C->name : "?", e->name, ntiles, nwaves);
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "const int tc_lane = (int)(tc_tid %% %d), tc_wave = (int)(tc_tid / %d);", lanes, lanes);
    tilec_simt_emit(c, "for (int tc_t = tc_wave; tc_t < %" PRId64 "; tc_t += %d) {", ntiles, nwaves);
    tilec_simt_indent(c, 1);
    tilec_simt_emit(c, "const int tc_m0 = (tc_t / %" PRId64 ") * %d, tc_n0 = (tc_t %% %" PRId64 ") * %d;", ntn, e->m,
                    ntn, e->n);
    tilec_simt_emit(c, "%s tc_acc;", mk->acc_type);
    char row[160], col[160];
    for (int j = 0; j < regs; j++) {
        acc_coord(e, 0, j, row, sizeof row);
        acc_coord(e, 1, j, col, sizeof col);
        if (s->u.gemm.clear_accum)
            tilec_simt_emit(c, "tc_acc[%d] = 0;", j);
        else
            tilec_simt_emit(c, "tc_acc[%d] = %s[(long long)(tc_m0 + %s) * %" PRId64 " + tc_n0 + %s];", j, cn, row, N,
                            col);
    }
    /* operand coordinates of this lane: row of A / column of B, first k */
    tilec_simt_emit(c, "const int tc_ar = tc_m0 + tc_lane %% %d, tc_bc = tc_n0 + tc_lane %% %d;", e->m, e->n);
    tilec_simt_emit(c, "const int tc_ak = ((tc_lane / %d) %% %d) * %d;", e->m, groups, E);
    tilec_simt_emit(c, "for (int tc_k = 0; tc_k < %" PRId64 "; tc_k += %d) {", K, e->k);
    tilec_simt_indent(c, 1);
    char ao[200], bo[200];
    for (int i = 0; i < E; i++) {
        const char *kk = "(tc_k + tc_ak + %d)";
        char kx[40];
        snprintf(kx, sizeof kx, kk, i);
        if (ta)
            snprintf(ao, sizeof ao, "(long long)%s * %" PRId64 " + tc_ar", kx, M);
        else
            snprintf(ao, sizeof ao, "(long long)tc_ar * %" PRId64 " + %s", K, kx);
        if (tb)
            snprintf(bo, sizeof bo, "(long long)tc_bc * %" PRId64 " + %s", K, kx);
        else
            snprintf(bo, sizeof bo, "(long long)%s * %" PRId64 " + tc_bc", kx, N);
        if (i == 0)
            tilec_simt_emit(c, "%s tc_a, tc_b;", mk->op_type);
        if (mk->packed_i8) {
            const char *pt = E == 8 ? "long" : "int", *ut = E == 8 ? "unsigned long" : "unsigned int";
            if (i == 0)
                tilec_simt_emit(c, "tc_a = 0; tc_b = 0;");
            tilec_simt_emit(c, "tc_a |= (%s)((%s)(unsigned char)%s[%s] << %d);", pt, ut, a, ao, 8 * i);
            tilec_simt_emit(c, "tc_b |= (%s)((%s)(unsigned char)%s[%s] << %d);", pt, ut, b, bo, 8 * i);
        } else {
            /* float16 storage is _Float16, bfloat16 storage 16-bit patterns:
             * the operand vectors take the stored values as they are */
            tilec_simt_emit(c, "tc_a[%d] = %s[%s];", i, a, ao);
            tilec_simt_emit(c, "tc_b[%d] = %s[%s];", i, b, bo);
        }
    }
    if (mk->wmma)
        tilec_simt_emit(c, "tc_acc = %s(tc_a, tc_b, tc_acc);", mk->builtin);
    else
        tilec_simt_emit(c, "tc_acc = %s(tc_a, tc_b, tc_acc, 0, 0, 0);", mk->builtin);
    tilec_simt_indent(c, -1);
    tilec_simt_emit(c, "}");
    for (int j = 0; j < regs; j++) {
        acc_coord(e, 0, j, row, sizeof row);
        acc_coord(e, 1, j, col, sizeof col);
        tilec_simt_emit(c, "%s[(long long)(tc_m0 + %s) * %" PRId64 " + tc_n0 + %s] = tc_acc[%d];", cn, row, N, col, j);
    }
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
