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

/* Accumulator register j of instruction tile (ti, tj) of this wavefront
 * as an element of C: its register, or its row-major offset. */
static const char *acc_elem(tilec_simt_ctx_t *c, const tilec_simt_mma_plan_t *p, int ti, int tj, int j, char *buf,
                            size_t n)
{
    if (p->regs)
        snprintf(buf, n, "%d", (ti * (int)p->nt + tj) * p->rpt + j);
    else
        snprintf(buf, n, "(long long)(tc_wm + %" PRId64 " + %s) * %" PRId64 " + tc_wn + %" PRId64 " + %s",
                 ti * p->im, tilec_simt_mma_acc_coord(c, p, 0, j, "tc_lane"), p->N, tj * p->in,
                 tilec_simt_mma_acc_coord(c, p, 1, j, "tc_lane"));
    return buf;
}

static int gemm_hook(hip_gen_t *g, tilec_simt_ctx_t *c, const tilec_ir_stmt_t *s)
{
    const tilec_ir_buffer_t *A = s->u.gemm.a, *B = s->u.gemm.b, *C = s->u.gemm.c;
    const tilec_ir_attr_t *at = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.mma");
    const mma_kind_t *mk = at && at->kind == TILEC_ATTR_STRING ? kind_of(at->s) : NULL;
    tilec_simt_mma_plan_t p;
    int r = mk ? tilec_simt_mma_plan(c, g->arch.desc, s, &p) : 0;
    if (r <= 0) {
        if (r == 0)
            g->ngemm_fma++;
        return r; /* 0: the kit's FMA tiles ("simt") */
    }
    int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b, regs = p.regs;
    if (A->ndim != 2 || B->ndim != 2 || p.in != p.e->n || tilec_simt_place_of(c, A) == TILEC_SIMT_PLACE_PRIVATE ||
        tilec_simt_place_of(c, B) == TILEC_SIMT_PLACE_PRIVATE) {
        tilec_simt_fail(c, "gemm %s, %s -> %s on %s: operands the HIP matrix-core hook cannot print (registers, "
                        "pipeline rings, a narrowed instruction)", A->name, B->name, C->name, p.e->name);
        return -1;
    }
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
                                s->u.gemm.clear_accum ? "0" : tilec_simt_elem(c, C, acc_elem(c, &p, ti, tj, j, el, sizeof el)));
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
                                tilec_simt_elem(c, C, acc_elem(c, &p, ti, tj, j, el, sizeof el)), ti * nt + tj, j);
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
    /* HIP's native atomics are hardware or its own CAS loops, per type */
    tilec_simt_dialect_cuda_family(d);
    d->name = "hip";
    d->f16.mode = TILEC_SIMT_HALF_NATIVE;
    d->f16.half_type = "_Float16"; /* C casts: float -> _Float16 rounds to nearest even */
    d->bf16.mode = TILEC_SIMT_HALF_BITS;
    d->kernel_name = HIP_KERNEL_NAME;
    d->user = g;
    d->stmt_hook = hip_stmt;
    d->prelude_hook = hip_prelude;
    /* reductions across the lanes of a wavefront (ds_swizzle / DPP) */
    d->subgroup_size = (uint32_t)g->arch.wave;
    d->shfl_xor = "__shfl_xor($v, $m, $w)";
}
