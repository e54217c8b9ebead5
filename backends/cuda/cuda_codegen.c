/*
 * cuda_codegen.c — lowered tile IR to CUDA C++ for the CUDA backend: the
 * statements and the kernel frame (the rest of the dialect: cuda_cg.h).
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
 *    over the threads (element e goes to thread e mod nthreads);
 *  - a nest of T.Parallel loops is flattened and its iterations shared out
 *    the same way — unless its body writes a local or var buffer
 *    (per-thread storage), in which case every thread runs all iterations;
 *  - scalar stores to shared/fragment/global buffers, atomics and prints
 *    outside a parallel loop are done by thread 0;
 *  - __syncthreads() is printed where the barrier pass put a barrier;
 *  - local/var buffers and let variables are per thread, and uniform code
 *    (serial loops, ifs, assignments) runs in every thread, so every thread
 *    holds the same values.
 * Inside a T.Parallel body the statements are per-thread code: tile
 * operations there run serially in the thread, without barriers.
 *
 * Storage.  Shared and fragment buffers live in dynamic shared memory
 * (where the smem pass placed them; the launcher raises the 48 KB limit
 * with cuFuncSetAttribute when needed), zeroed at kernel start like the
 * reference interpreter's on-chip buffers where the program reads that
 * start (lower.zero).  Local and var buffers are
 * per-thread arrays.  Values: integers and float32/float64 are their C
 * types; float16/bfloat16 are stored as 16-bit patterns and computed in
 * float (rounded to the 16-bit format on casts and stores), bool is stored
 * as a byte.
 *
 * The decisions come from the lowered IR (cuda_lower ran the SDK's
 * passes first): which instruction and warp grid each T.gemm uses
 * (lower.mma, lower.warp; cuda_mma.c), which fragments live in registers
 * (REGS layouts; cuda_regs.c), which shared buffers are swizzled for
 * wgmma or padded for ldmatrix (SMEM layouts), the cp.async rings and
 * waits of T.Pipelined with the wgmma deferral (lower.mma_wait), and the
 * barriers, the shared-memory offsets (with reuse) and which buffers
 * start zeroed (lower.zero).
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

#include "cuda_cg.h"
#include "cuda_prelude.h"

static void emit_loop_head(cg_t *g, const tilec_ir_stmt_t *s)
{
    if (s->u.loop.kind == TILEC_LOOP_UNROLL)
        cg_line(g, "#pragma unroll");
    cg_out(g, "%*sfor (v%d = 0; v%d < (int)(", 2 * (g->ind + 1), "", s->u.loop.var->id,
        s->u.loop.var->id);
    cg_emit_expr(g, s->u.loop.extent);
    cg_out(g, "); v%d++) {\n", s->u.loop.var->id);
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
    cg_line(g, "{ /* parallel nest of %d */", n);
    g->ind++;
    for (int i = 0; i < n; i++) {
        cg_out(g, "%*sconst tl_i64 tl_x%d_%d = (tl_i64)(", 2 * (g->ind + 1), "", id, i);
        cg_emit_expr(g, nest[i]->u.loop.extent);
        cg_out(g, ");\n");
    }
    cg_out(g, "%*sconst tl_i64 tl_t%d = 1", 2 * (g->ind + 1), "", id);
    for (int i = 0; i < n; i++)
        cg_out(g, " * tl_x%d_%d", id, i);
    cg_out(g, ";\n");
    cg_line(g, "for (tl_i64 tl_p%d = tl_tid; tl_p%d < tl_t%d; tl_p%d += %d) {", id, id, id, id,
         g->nthreads);
    g->ind++;
    cg_line(g, "tl_i64 tl_q%d = tl_p%d;", id, id);
    for (int i = n - 1; i >= 0; i--) {
        if (i > 0)
            cg_line(g, "v%d = (int)(tl_q%d %% tl_x%d_%d); tl_q%d /= tl_x%d_%d;",
                 nest[i]->u.loop.var->id, id, id, i, id, id, i);
        else
            cg_line(g, "v%d = (int)tl_q%d;", nest[i]->u.loop.var->id, id);
    }
    cg_emit_block(g, nest[n - 1]->u.loop.body, 1);
    g->ind--;
    cg_line(g, "}");
    g->ind--;
    cg_line(g, "}");
}

static void tma_expr(void *user, const tilec_ir_expr_t *e)
{
    cg_emit_expr(user, e);
}

static void emit_stmt(cg_t *g, const tilec_ir_stmt_t *s, int par)
{
    if (g->failed)
        return;
    /* barrier objects and copies on them (cuda_tma.c) */
    cuda_tma_out_t t = {g->o, 2 * (g->ind + 1), "tl_smem", tma_expr, g, g->k, g->info};
    int rc = par ? 0 : cuda_tma_stmt(&t, s);
    if (rc < 0)
        cg_fail(g, "copy_async into '%s': no tensor map for it", s->u.copy.dst.buf->name);
    if (rc)
        return;
    if (++g->depth > CG_MAX_DEPTH) {
        cg_fail(g, "statements nested too deeply");
        g->depth--;
        return;
    }
    who_t coop = {1}, solo = {0};
    switch (s->kind) {
    case TILEC_ST_FOR:
        if (!par && s->u.loop.kind == TILEC_LOOP_PARALLEL && !cg_touches(s->u.loop.body, NULL, NULL, CG_WRITE)) {
            rf_nest_t nn;
            nn.kind = 0;
            if (g->any_rf)
                cg_rf_nest_analyze(g, s, &nn);
            if (nn.kind > 0)
                cg_emit_rf_nest(g, &nn);
            else
                emit_parallel_nest(g, s);
        } else {
            int emit_stmt_loop_ro = 0;
            const tilec_ir_stmt_t *rg = !par && s->u.loop.kind != TILEC_LOOP_PARALLEL
                                            ? cg_resident_gemm(g, s) : NULL;
            mma_plan_t rp;
            int rid = 0;
            if (rg && g->rf[rg->u.gemm.c->id]) {
                /* an accumulator in registers: declared at kernel entry */
                rid = g->rf_id[rg->u.gemm.c->id];
                g->resident = rg;
                g->resident_id = rid;
                cg_mma_plan(g, rg, &rp);
                emit_stmt_loop_ro = 1;
            } else if (rg && cg_mma_plan(g, rg, &rp)) {
                rid = g->tmp++;
                cg_line(g, "{ /* %s stays in registers across the loop */", rg->u.gemm.c->name);
                g->ind++;
                /* the barrier pass saw the gemm in the loop read it */
                cg_emit_sync(g);
                cg_mma_decl(g, &rp, rid);
                cg_mma_cmove(g, &rp, rg->u.gemm.c, rid, 1, 0);
                g->resident = rg;
                g->resident_id = rid;
            } else {
                rg = NULL;
            }
            /* an async MMA that the pipeline pass lets complete one
             * iteration late (lower.mma_wait): every group is waited for
             * after the loop */
            const tilec_ir_stmt_t *defer =
                rg && emit_stmt_loop_ro && rp.wg && tilec_ir_attr_get(rg->nattrs, rg->attrs, "lower.mma_wait") ? rg : NULL;
            emit_loop_head(g, s);
            g->ind++;
            g->wg_defer = defer;
            cg_emit_block(g, s->u.loop.body, par || s->u.loop.kind == TILEC_LOOP_PARALLEL);
            g->wg_defer = NULL;
            g->ind--;
            cg_line(g, "}");
            if (defer) {
                cg_line(g, "tl_wg_wait<0>();");
                cg_line(g, "tl_keep_acc<%d>(&tl_c%d[0][0][0]);", rp.mt * rp.nt * 4, rid);
            }
            if (rg && emit_stmt_loop_ro) {
                g->resident = NULL;
            } else if (rg) {
                g->resident = NULL;
                cg_mma_cmove(g, &rp, rg->u.gemm.c, rid, 0, 0);
                g->ind--;
                cg_line(g, "}");
            }
        }
        break;
    case TILEC_ST_IF:
        cg_out(g, "%*sif (", 2 * (g->ind + 1), "");
        cg_emit_expr(g, s->u.cond.cond);
        cg_out(g, ") {\n");
        g->ind++;
        cg_emit_block(g, s->u.cond.then, par);
        g->ind--;
        if (s->u.cond.els) {
            cg_line(g, "} else {");
            g->ind++;
            cg_emit_block(g, s->u.cond.els, par);
            g->ind--;
        }
        cg_line(g, "}");
        break;
    case TILEC_ST_STORE: {
        const tilec_ir_buffer_t *b = s->u.store.buf;
        if (g->rf[b->id]) {
            cg_out(g, "%*s", 2 * (g->ind + 1), "");
            cg_rf_ref(g, b);
            cg_out(g, " = (float)(");
            cg_emit_expr(g, s->u.store.value);
            cg_out(g, ");\n");
            break;
        }
        int guard = !par && !cg_per_thread_scope(b->scope);
        cg_out(g, "%*s%sb%d[", 2 * (g->ind + 1), "", guard ? "if (tl_tid == 0) " : "", b->id);
        cg_emit_offset(g, b, s->u.store.idx);
        cg_out(g, "] = ");
        cg_store_open(g, b->dtype);
        cg_emit_expr(g, s->u.store.value);
        cg_out(g, ");\n");
        break;
    }
    case TILEC_ST_ASSIGN:
        cg_out(g, "%*sv%d = (", 2 * (g->ind + 1), "", s->u.assign.var->id);
        cg_emit_expr(g, s->u.assign.value);
        cg_out(g, ");\n");
        break;
    case TILEC_ST_COPY:
        if (g->rf[s->u.copy.dst.buf->id] == RF_AOP) {
            cg_emit_wgrs_pack(g, s);
            break;
        }
        if (g->rf[s->u.copy.src.buf->id] || g->rf[s->u.copy.dst.buf->id]) {
            cg_emit_rf_copy(g, s);
            break;
        }
        cg_emit_copy(g, s, !par && !cg_per_thread_scope(s->u.copy.dst.buf->scope) ? &coop : &solo);
        break;
    case TILEC_ST_FILL:
        if (g->rf[s->u.fill.dst.buf->id]) {
            cg_emit_rf_fill(g, s);
            break;
        }
        cg_emit_fill(g, s, !par && !cg_per_thread_scope(s->u.fill.dst.buf->scope) ? &coop : &solo);
        break;
    case TILEC_ST_GEMM:
        cg_emit_gemm(g, s, !par && !cg_per_thread_scope(s->u.gemm.c->scope) ? &coop : &solo);
        break;
    case TILEC_ST_REDUCE:
        if (g->rf[s->u.reduce.src->id]) {
            cg_emit_rf_reduce(g, s);
            break;
        }
        cg_emit_reduce(g, s, !par && !cg_per_thread_scope(s->u.reduce.dst->scope) ? &coop : &solo);
        break;
    case TILEC_ST_CUMSUM:
        cg_emit_cumsum(g, s, !par && !cg_per_thread_scope(s->u.cumsum.dst->scope) ? &coop : &solo);
        break;
    case TILEC_ST_ATOMIC:
        if (!par) {
            cg_line(g, "if (tl_tid == 0) {");
            g->ind++;
        }
        cg_emit_atomic(g, s);
        if (!par) {
            g->ind--;
            cg_line(g, "}");
        }
        break;
    case TILEC_ST_SYNC:
        if (!par)
            cg_emit_sync(g);
        break;
    case TILEC_ST_PRINT:
        if (!par) {
            cg_line(g, "if (tl_tid == 0) {");
            g->ind++;
        }
        cg_emit_print(g, s);
        if (!par) {
            g->ind--;
            cg_line(g, "}");
        }
        break;
    case TILEC_ST_HINT:
        break; /* use_swizzle is applied at kernel entry; layouts are ours */
    /* IR 1.1 input that is lowered already: the pipeline pass's async
     * copies (cp.async where the rows allow it, from sm_80 on, else an
     * ordinary copy, which has landed before any wait) and barriers */
    case TILEC_ST_COPY_ASYNC:
        if (!par && g->sm >= 80 && cg_copy_vec(g, s, &coop, 1))
            g->info->cp_async++;
        else
            cg_emit_copy(g, s, par ? &solo : &coop);
        break;
    case TILEC_ST_ASYNC_COMMIT:
        if (!par && g->sm >= 80)
            cg_line(g, "tl_cp_commit();");
        break;
    case TILEC_ST_ASYNC_WAIT:
        if (!par && g->sm >= 80)
            cg_line(g, "tl_cp_wait<%d>();", s->u.wait.n);
        break;
    case TILEC_ST_BARRIER:
        if (!par)
            cg_emit_sync(g);
        break;
    default:
        cg_fail(g, "statement '%s' is not supported by the cuda backend yet", tilec_stmt_kind_name(s->kind));
    }
    g->depth--;
}

void cg_emit_block(cg_t *g, const tilec_ir_stmt_t *s, int par)
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
    g.swz = calloc((size_t)k->nbufs + 1, sizeof *g.swz);
    g.rf = calloc((size_t)k->nbufs + 1, sizeof *g.rf);
    g.rf_id = calloc((size_t)k->nbufs + 1, sizeof *g.rf_id);
    g.rf_plan = calloc((size_t)k->nbufs + 1, sizeof *g.rf_plan);
    if (!g.smem_off || !g.pitch || !g.swz || !g.rf || !g.rf_id ||
        !g.rf_plan) {
        free(g.swz);
        free(g.rf);
        free(g.rf_id);
        free(g.rf_plan);
        free(g.smem_off);
        free(g.pitch);
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
    cg_plan_regfrags(&g);
    cg_plan_wgrs(&g);
    /* the smem pass's plan: offsets (aligned, swizzled buffers to 1024
     * bytes) and bytes shared by buffers whose lives do not meet */
    uint64_t off = 0;
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        const tilec_ir_layout_t *L = b->layout;
        if ((b->scope != TILEC_SCOPE_SHARED && b->scope != TILEC_SCOPE_FRAGMENT) || g.rf[i])
            continue;
        if (!L || L->kind != TILEC_LAYOUT_SMEM || L->offset < 0 || L->size < 0) {
            cg_fail(&g, "buffer '%s' has no place in the shared-memory plan", b->name);
            break;
        }
        g.smem_off[i] = (uint64_t)L->offset;
        if ((uint64_t)(L->offset + L->size) > off)
            off = (uint64_t)(L->offset + L->size);
    }
    if (!g.failed && cuda_tma_plan(k, info, &off) != 0)
        cg_fail(&g, "a copy on an mbarrier that the tensor copy engine cannot do (or more than %d tensor maps)",
                CUDA_MAX_TMAPS);
    g.smem_bytes = (off + 15) & ~(uint64_t)15;
    info->smem_bytes = g.smem_bytes;

    tilec_sdk_str_puts(o, "/* generated by tilec's CUDA backend */\n");
    tilec_sdk_str_puts(o, cuda_prelude);
    if (g.any_swz) {
        tilec_sdk_str_puts(o, cuda_prelude_wgmma);
        cg_emit_wgmma_fns(&g, k->body);
    }
    cuda_tma_prelude(o, k);
    cg_out(&g, "\nextern \"C\" __global__ void __launch_bounds__(%d) tilec_kernel(", g.nthreads);
    int first = 1;
    for (int i = 0; i < k->nparams; i++) {
        cg_out(&g, "%s%s *b%d", first ? "" : ", ", cg_stype(k->bufs[i]->dtype), i);
        first = 0;
    }
    int nsym = 0;
    for (int i = 0; i < k->nvars; i++)
        if (k->vars[i]->kind == TILEC_VAR_SYM)
            cg_out(&g, "%sint tl_sym%d", first ? "" : ", ", nsym++), first = 0;
    cuda_tma_params(o, info, &first);
    if (first)
        cg_out(&g, "void");
    cg_out(&g, ")\n{\n");
    cg_line(&g, "extern __shared__ __align__(1024) unsigned char tl_smem[];");
    if (g.any_swz) /* the swizzle is of absolute addresses: check the base */
        cg_line(&g, "if ((tl_sa(tl_smem) & 1023u) != 0u) __trap();");
    cg_line(&g, "const int tl_tid = (int)(threadIdx.x + %d * (threadIdx.y + %d * threadIdx.z));",
         k->threads[0], k->threads[1]);
    /* variables */
    nsym = 0;
    for (int i = 0; i < k->nvars; i++) {
        const tilec_ir_var_t *v = k->vars[i];
        switch (v->kind) {
        case TILEC_VAR_SYM: cg_line(&g, "const int v%d = tl_sym%d; (void)v%d;", i, nsym++, i); break;
        case TILEC_VAR_LOOP: cg_line(&g, "int v%d = 0; (void)v%d;", i, i); break;
        case TILEC_VAR_LET: cg_line(&g, "%s v%d = 0; (void)v%d;", cg_ctype(v->dtype), i, i); break;
        default: break;
        }
    }
    /* block indices, with use_swizzle rasterization for 2-D grids */
    int64_t panel = find_swizzle(k->body);
    static const char *const bidx[3] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
    if (panel > 0 && k->ngrid >= 2) {
        cg_line(&g, "int v%d, v%d;", k->block[0]->id, k->block[1]->id);
        cg_line(&g, "{ /* use_swizzle(%lld): panels of %lld block columns */", (long long)panel,
             (long long)panel);
        cg_line(&g, "  const int tl_gx = (int)gridDim.x, tl_gy = (int)gridDim.y;");
        cg_line(&g, "  const int tl_l = (int)(blockIdx.x + gridDim.x * blockIdx.y);");
        cg_line(&g, "  const int tl_pan = tl_l / (%lld * tl_gy), tl_in = tl_l %% (%lld * tl_gy);",
             (long long)panel, (long long)panel);
        cg_line(&g, "  const int tl_w = min(%lld, tl_gx - tl_pan * %lld);", (long long)panel,
             (long long)panel);
        cg_line(&g, "  v%d = tl_pan * %lld + tl_in %% tl_w; v%d = tl_in / tl_w;", k->block[0]->id,
             (long long)panel, k->block[1]->id);
        cg_line(&g, "}");
        for (int d = 2; d < k->ngrid; d++)
            cg_line(&g, "const int v%d = (int)%s;", k->block[d]->id, bidx[d]);
    } else {
        for (int d = 0; d < k->ngrid; d++)
            cg_line(&g, "const int v%d = (int)%s; (void)v%d;", k->block[d]->id, bidx[d],
                 k->block[d]->id);
    }
    /* shapes of the tensors */
    for (int i = 0; i < k->nparams; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        for (int d = 1; d < b->ndim; d++) {
            cg_out(&g, "  const tl_i64 tl_s%d_%d = (tl_i64)(", i, d);
            cg_emit_expr(&g, b->shape[d]);
            cg_out(&g, "); (void)tl_s%d_%d;\n", i, d);
        }
        if (b->ndim >= 1) {
            cg_out(&g, "  const tl_i64 tl_s%d_0 = (tl_i64)(", i);
            cg_emit_expr(&g, b->shape[0]);
            cg_out(&g, "); (void)tl_s%d_0;\n", i);
        }
    }
    /* on-chip buffers */
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (g.rf[i] == RF_ACC && g.rf_warprows) {
            cg_line(&g, "/* fragment %s lives in registers, rows over warps (tl_c%d) */", b->name,
                 g.rf_id[i]);
            cg_line(&g, "const int tl_w%d = tl_tid >> 5, tl_l%d = tl_tid & 31;", g.rf_id[i], g.rf_id[i]);
            cg_line(&g, "float tl_c%d[%d][%d][%d] = {};", g.rf_id[i], g.rf_plan[i].mt, g.rf_plan[i].nt,
                 g.rf_plan[i].ev);
        } else if (g.rf[i] == RF_ACC) {
            cg_line(&g, "/* fragment %s lives in registers (tl_c%d) */", b->name, g.rf_id[i]);
            cg_mma_decl(&g, &g.rf_plan[i], g.rf_id[i]);
        } else if (g.rf[i] == RF_AOP) {
            cg_line(&g, "/* fragment %s lives in registers as wgmma's A operand (tl_pa%d) */",
                 b->name, g.rf_id[i]);
        } else if (g.rf[i] == RF_ROW) {
            cg_line(&g, "float tl_c%d[%d][%d] = {}; /* fragment %s lives in registers, by rows */",
                 g.rf_id[i], g.rf_rows.mt, cg_rf_halves(&g), b->name);
        } else if (b->scope == TILEC_SCOPE_SHARED || b->scope == TILEC_SCOPE_FRAGMENT) {
            cg_line(&g, "%s *const b%d = (%s *)(tl_smem + %llu); /* %s %s%s */", cg_stype(b->dtype), i,
                 cg_stype(b->dtype), (unsigned long long)g.smem_off[i], tilec_scope_name(b->scope), b->name,
                 tilec_ir_attr_get(b->nattrs, b->attrs, "lower.stages") ? ", cp.async ring" : "");
        } else {
            int64_t n = tilec_ir_buffer_const_size(b);
            if (n < 0 || n > CG_LOCAL_MAX_ELEMS) {
                cg_fail(&g, "local buffer '%s' is too large for registers (%lld elements)",
                        b->name, (long long)n);
                break;
            }
            cg_line(&g, "%s b%d[%lld] = {}; /* %s %s */", cg_stype(b->dtype), i, (long long)n,
                 tilec_scope_name(b->scope), b->name);
        }
    }
    /* the buffers whose zero start the program reads (lower.zero) */
    int any = 0;
    for (int i = k->nparams; i < k->nbufs; i++) {
        const tilec_ir_buffer_t *b = k->bufs[i];
        if (g.rf[i] || !b->layout || b->layout->kind != TILEC_LAYOUT_SMEM ||
            !tilec_ir_attr_get(b->nattrs, b->attrs, "lower.zero"))
            continue;
        cg_line(&g, "for (int tl_z = tl_tid; tl_z < %llu; tl_z += %d) ((uint4 *)(tl_smem + %llu))[tl_z] = make_uint4(0, 0, 0, 0); /* %s */",
                (unsigned long long)(b->layout->size + 15) / 16, g.nthreads, (unsigned long long)g.smem_off[i],
                b->name);
        any = 1;
    }
    if (any)
        cg_line(&g, "__syncthreads();");
    cg_emit_block(&g, k->body, 0);
    cg_out(&g, "}\n");
    free(g.smem_off);
    free(g.pitch);
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
