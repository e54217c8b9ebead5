/*
 * tests/test_lower.c — the SDK's lowering passes (docs/lowering.md),
 * checked without a GPU.
 *
 *  - The target descriptions of the CUDA and OpenCL backends are
 *    consistent (tilec_target_check) and place MMA accumulator elements
 *    where the PTX ISA's fragment figures put them.
 *  - Semantic preservation: every conformance case (each parameter set)
 *    is lowered for cuda sm_90a, cuda sm_80, opencl, opencl with
 *    Vulkan's TILEC_TARGET_REGS_LIKE_ACC and with the flags of Vulkan on a
 *    cooperative-matrix device, with verification
 *    and a text round trip after every pass, then the lowered module is
 *    interpreted on the same seeded inputs as the original; both must
 *    agree within the case's tolerance class (exactly for integers).  The
 *    interpreter runs async copies as pending until their wait, so a wrong
 *    pipeline schedule fails here.
 *  - Golden tests of single passes as data: the second line of
 *    tests/lower/NAME.tir is "# lower: PASS[,PASS...] target: TARGET"
 *    (a comment of the text form) and NAME.expected holds
 *    the printed module after those passes.
 *  - What the passes decide for known kernels (GEMM on sm_90a: wgmma,
 *    swizzled operands, a 3-stage ring; sm_80: mma.sync, padding).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_internal.h"
#include "conform.h"
#include "interp.h"
#include "tilec/lower.h"
#include "tilec/sdk.h"
#include "tilec/target.h"

const tilec_target_desc_t *cuda_target_desc(const char *arch);
const struct tilec_target_desc *ocl_target_desc(const char *arch);

typedef struct tgt {
    const char *name;
    const tilec_target_desc_t *(*get)(const char *arch);
    const char *arch;
} tgt_t;

/* OpenCL's description as Vulkan's reads it: 32-lane rows with shuffles,
 * and fragments shaped like a gemm accumulator in its registers
 * (TILEC_TARGET_REGS_LIKE_ACC, with the widened column nests) */
static const tilec_target_desc_t *regs_like_acc_desc(const char *arch)
{
    static tilec_target_desc_t t;
    t = *ocl_target_desc(arch);
    t.name = "regs-like-acc";
    t.subgroup_size = 32;
    t.flags |= TILEC_TARGET_SUBGROUP_SHUFFLE | TILEC_TARGET_REGS_LIKE_ACC;
    return &t;
}

/* and as Vulkan's on a cooperative-matrix device (NVIDIA) reads it: ragged
 * and interleaved rows too, gemm accumulators in shared memory, gemm
 * operands with padded rows (with shared memory enough for every program: the plugin lowers
 * what does not fit again without the last two, as regs-like-acc) */
static const tilec_target_desc_t *vk_coopmat_desc(const char *arch)
{
    static tilec_target_desc_t t;
    t = *regs_like_acc_desc(arch);
    t.name = "vulkan-coopmat";
    t.flags |= TILEC_TARGET_ROWS_RAGGED | TILEC_TARGET_SIMT_ACC_SHARED | TILEC_TARGET_SIMT_PAD_ROWS |
               TILEC_TARGET_ROWS_INTERLEAVED;
    t.smem_default = t.smem_optin = 227 * 1024;
    return &t;
}

/* sm_90a with persistent kernels on 3 blocks and no warp specialization
 * (what the backend lowers for with TILEC_CUDA_PERSIST=1): the persist
 * pass runs on every program of more than 3 tiles whose ring it can carry over */
static const tilec_target_desc_t *persist3_desc(const char *arch)
{
    static tilec_target_desc_t t;
    t = *cuda_target_desc(arch);
    t.name = "cuda-sm_90a-persist3";
    t.persistent_blocks = 3;
    t.flags &= ~TILEC_TARGET_WARP_SPECIALIZE;
    return &t;
}

/* sm_90a with 2-block clusters and no warp specialization (what the
 * backend lowers for with TILEC_CUDA_CLUSTER=1) */
static const tilec_target_desc_t *cluster2_desc(const char *arch)
{
    static tilec_target_desc_t t;
    t = *cuda_target_desc(arch);
    t.name = "cuda-sm_90a-cluster2";
    t.cluster_max = 2;
    t.flags &= ~TILEC_TARGET_WARP_SPECIALIZE;
    return &t;
}

/* and with warp specialization (TILEC_CUDA_WS=1 TILEC_CUDA_CLUSTER=1) */
static const tilec_target_desc_t *cluster2_ws_desc(const char *arch)
{
    static tilec_target_desc_t t;
    t = *cluster2_desc(arch);
    t.name = "cuda-sm_90a-ws-cluster2";
    t.flags |= TILEC_TARGET_WARP_SPECIALIZE;
    return &t;
}

/* sm_90a whose wgmma grids follow the gemm's policy (TILEC_CUDA_SQUARE=1):
 * two warpgroups of 128 x 128 on a 128 x 256 tile, two m64n128 each */
static const tilec_target_desc_t *square_desc(const char *arch)
{
    static tilec_target_desc_t t;
    t = *cuda_target_desc(arch);
    t.name = "cuda-sm_90a-square";
    t.flags |= TILEC_TARGET_MMA_GRID_POLICY;
    return &t;
}

static const tgt_t targets[] = {
    {"cuda-sm_90a", cuda_target_desc, "sm_90a"},
    {"cuda-sm_90a-square", square_desc, "sm_90a"},
    {"cuda-sm_90a-persist3", persist3_desc, "sm_90a"},
    {"cuda-sm_90a-cluster2", cluster2_desc, "sm_90a"},
    {"cuda-sm_90a-ws-cluster2", cluster2_ws_desc, "sm_90a"},
    {"cuda-sm_80", cuda_target_desc, "sm_80"},
    {"opencl", ocl_target_desc, ""},
    {"regs-like-acc", regs_like_acc_desc, ""},
    {"vulkan-coopmat", vk_coopmat_desc, ""},
};
#define NTARGETS (int)(sizeof targets / sizeof targets[0])

static const tilec_target_desc_t *target_named(const char *name)
{
    for (int i = 0; i < NTARGETS; i++)
        if (strcmp(targets[i].name, name) == 0)
            return targets[i].get(targets[i].arch);
    return NULL;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

Test(lower_target, descriptions_are_consistent)
{
    const char *archs[] = {"sm_70", "sm_80", "sm_86", "sm_90", "sm_90a"};
    char err[256];
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        const tilec_target_desc_t *t = cuda_target_desc(archs[i]);
        cr_assert_not_null(t, "%s", archs[i]);
        cr_assert_eq(tilec_target_check(t, err, sizeof err), 0, "%s: %s", archs[i], err);
    }
    cr_assert_null(cuda_target_desc("bogus"));
    cr_assert_eq(tilec_target_check(ocl_target_desc(NULL), err, sizeof err), 0, "%s", err);
    cr_assert_eq(cuda_target_desc("sm_90a")->nmma, 6, "wgmma f16, bf16, e4m3, e5m2; mma.sync f16, bf16");
    cr_assert_eq(cuda_target_desc("sm_90")->nmma, 2, "wgmma needs sm_90a");
    cr_assert_eq(cuda_target_desc("sm_70")->async_copy, 0u);
}

Test(lower_target, check_rejects_a_broken_layout)
{
    tilec_target_desc_t t = *cuda_target_desc("sm_80");
    tilec_target_mma_t m = t.mma[0];
    m.row_modes[0].thread_stride = 1; /* lanes collide with the column modes */
    t.mma = &m;
    t.nmma = 1;
    char err[256];
    cr_assert_neq(tilec_target_check(&t, err, sizeof err), 0);
    cr_assert(strstr(err, "one to one"), "%s", err);
    t = *cuda_target_desc("sm_80");
    t.struct_size = 8;
    cr_assert_neq(tilec_target_check(&t, err, sizeof err), 0);
}

Test(lower_target, mma_accumulator_places)
{
    const tilec_target_mma_t *m = &cuda_target_desc("sm_80")->mma[0];
    int32_t th, rg;
    /* m16n8: row r, col c -> lane 4 (r % 8) + c / 2, register 2 (r / 8) + c % 2 */
    cr_assert_eq(tilec_target_mma_place(m, 8, 9, 3, &th, &rg), 0);
    cr_assert_eq(th, 5);
    cr_assert_eq(rg, 3);
    cr_assert_eq(tilec_target_mma_place(m, 8, 16, 0, &th, &rg), -1);
    const tilec_target_mma_t *w = &cuda_target_desc("sm_90a")->mma[0];
    /* m64n64: row 37 is warp 2, lane 4 * 5 + c1, register (c / 8) * 4 + 0 * 2 + c % 2 */
    cr_assert_eq(tilec_target_mma_place(w, 64, 37, 19, &th, &rg), 0);
    cr_assert_eq(th, 64 + 20 + 1);
    cr_assert_eq(rg, 2 * 4 + 0 * 2 + 1);
}

/* ---- semantic preservation over the conformance suite ------------------------------- */

static int interp_into_from(const tilec_ir_kernel_t *k, check_set_t *set, int which, int fresh, char *err, size_t n)
{
    void **args = calloc((size_t)set->n + 1, sizeof *args);
    if (!args)
        return -1;
    for (int i = 0; i < set->n; i++) {
        void *dst = which ? set->t[i].out : set->t[i].ref;
        if (fresh)
            memcpy(dst, set->t[i].init, set->t[i].bytes);
        args[i] = dst;
    }
    int rc = tilec_interp_run(k, args, set->nsyms ? set->syms : NULL, err, n);
    free(args);
    return rc;
}

static int interp_into(const tilec_ir_kernel_t *k, check_set_t *set, int which, char *err, size_t n)
{
    return interp_into_from(k, set, which, 1, err, n);
}

/* lowers text for t into a fresh arena; NULL with why on failure */
static tilec_ir_module_t *lower_for(tilec_arena_t *ar, const char *ir, const tilec_target_desc_t *t,
                                    int roundtrip, tilec_lower_status_t *st)
{
    tilec_ir_module_t *m = NULL;
    char err[256];
    if (tilec_ir_read(ar, ir, strlen(ir), &m, err, sizeof err) != 0) {
        snprintf(st->msg, sizeof st->msg, "read: %s", err);
        return NULL;
    }
    tilec_lower_options_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.roundtrip = roundtrip;
    return tilec_lower_module(ar, m, t, &o, st) == TILEC_LOWER_OK ? m : NULL;
}

Test(lower_check, every_conformance_case_keeps_its_meaning, .timeout = 300)
{
    conform_run_t run;
    memset(&run, 0, sizeof run);
    char *e = NULL;
    cr_assert_eq(conform_load_cases(&run, "conformance/cases", &e), 0, "%s", e ? e : "");
    cr_assert_gt(run.n, 80);
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    int checked = 0, nfail = 0;
    char report[8192] = "";
    size_t rl = 0;
    for (int i = 0; i < run.n; i++) {
        conform_item_t *it = &run.items[i];
        tilec_program_t *p = NULL;
        cr_assert_eq(tilec_program_load_file(ctx, it->file, it->defs, it->ndefs, it->entry, &p), TILEC_OK,
                     "%s: %s", it->id, tilec_context_message(ctx));
        check_set_t set;
        memset(&set, 0, sizeof set);
        char *msg = NULL;
        cr_assert_eq(check_set_make(p, it->file, 0, &set, &msg), CHECK_OK, "%s: %s", it->id, msg ? msg : "");
        const char *ir = tilec_program_ir(p);
        char err[512];
        cr_assert_eq(interp_into(p->mod->kernel, &set, 0, err, sizeof err), 0, "%s: original: %s", it->id, err);
        for (int ti = 0; ti < NTARGETS; ti++) {
            tilec_arena_t ar;
            tilec_arena_init(&ar);
            tilec_lower_status_t st;
            const char *why = NULL;
            tilec_ir_module_t *m = lower_for(&ar, ir, targets[ti].get(targets[ti].arch), 1, &st);
            if (!m)
                why = st.msg;
            else if (interp_into(m->kernel, &set, 1, err, sizeof err) != 0)
                why = err;
            check_verdict_t v;
            memset(&v, 0, sizeof v);
            if (!why) {
                check_set_judge(&set, it->tol, &v);
                if (!v.ok)
                    why = v.detail ? v.detail : "results differ";
            }
            if (why) {
                nfail++;
                int n = snprintf(report + rl, sizeof report - rl, "%s on %s: %s\n", it->id, targets[ti].name, why);
                if (n > 0 && rl + (size_t)n < sizeof report)
                    rl += (size_t)n;
            }
            free(v.detail);
            tilec_arena_destroy(&ar);
            checked++;
        }
        check_set_free(&set);
        tilec_program_free(p);
    }
    tilec_context_destroy(ctx);
    conform_run_free(&run);
    cr_assert_eq(nfail, 0, "%d of %d lowerings changed a result:\n%s", nfail, checked, report);
}

/* the -D values of a file's first "# tilec-test:" line (symbols need one) */
static int test_defs(const char *path, char *buf, size_t len, tilec_define_kv_t *defs, int max)
{
    char *text = slurp(path);
    int n = 0;
    const char *line = text ? strstr(text, "# tilec-test:") : NULL;
    if (line) {
        const char *end = strchr(line, '\n');
        size_t l = end ? (size_t)(end - line) : strlen(line);
        snprintf(buf, len, "%.*s", (int)l - 13, line + 13);
        char *save = NULL;
        for (char *tok = strtok_r(buf, " ", &save); tok && n < max; tok = strtok_r(NULL, " ", &save)) {
            char *eq = strcmp(tok, "-D") == 0 ? NULL : strchr(tok, '=');
            if (!eq)
                continue;
            *eq = 0;
            defs[n].name = tok;
            defs[n].value = eq + 1;
            n++;
        }
    }
    free(text);
    return n;
}

/* The examples and the language tests at their default parameters: lowered
 * for every target (verified and round-tripped after each pass) and
 * interpreted against the original. */
Test(lower_check, examples_and_language_programs_keep_their_meaning, .timeout = 300)
{
    const char *dirs[] = {"examples", "tests/lang"};
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    int files = 0, nfail = 0;
    char report[8192] = "";
    size_t rl = 0;
    for (int di = 0; di < 2; di++) {
        DIR *d = opendir(dirs[di]);
        cr_assert_not_null(d, "%s", dirs[di]);
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            size_t len = strlen(de->d_name);
            if (len < 4 || strcmp(de->d_name + len - 3, ".py") != 0)
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[di], de->d_name);
            tilec_program_t *p = NULL;
            char dbuf[512];
            tilec_define_kv_t defs[8];
            int nd = test_defs(path, dbuf, sizeof dbuf, defs, 8);
            cr_assert_eq(tilec_program_load_file(ctx, path, defs, nd, NULL, &p), TILEC_OK, "%s: %s", path,
                         tilec_context_message(ctx));
            check_set_t set;
            memset(&set, 0, sizeof set);
            char *msg = NULL, err[512];
            cr_assert_eq(check_set_make(p, path, 0, &set, &msg), CHECK_OK, "%s: %s", path, msg ? msg : "");
            /* a chain of kernels (several T.Kernel blocks): each in turn on the same tensors; its
             * kernels here share the first one's symbols */
            for (const tilec_program_t *q = p; q; q = q->next) {
                cr_assert_eq(q->nsyms, p->nsyms, "%s", path);
                cr_assert_eq(interp_into_from(q->mod->kernel, &set, 0, q == p, err, sizeof err), 0, "%s: %s", path,
                             err);
            }
            for (int ti = 0; ti < NTARGETS; ti++) {
                tilec_arena_t ar;
                tilec_arena_init(&ar);
                tilec_lower_status_t st;
                const char *why = NULL;
                check_verdict_t v;
                memset(&v, 0, sizeof v);
                for (const tilec_program_t *q = p; q && !why; q = q->next) {
                    tilec_ir_module_t *m = lower_for(&ar, tilec_program_ir(q), targets[ti].get(targets[ti].arch), 1, &st);
                    if (!m)
                        why = st.msg;
                    else if (interp_into_from(m->kernel, &set, 1, q == p, err, sizeof err) != 0)
                        why = err;
                }
                if (why)
                    ;
                else if (check_set_judge(&set, CHECK_TOL_AUTO, &v), !v.ok)
                    why = v.detail ? v.detail : "results differ";
                if (why) {
                    nfail++;
                    int n = snprintf(report + rl, sizeof report - rl, "%s on %s: %s\n", path, targets[ti].name, why);
                    if (n > 0 && rl + (size_t)n < sizeof report)
                        rl += (size_t)n;
                }
                free(v.detail);
                tilec_arena_destroy(&ar);
            }
            check_set_free(&set);
            tilec_program_free(p);
            files++;
        }
        closedir(d);
    }
    tilec_context_destroy(ctx);
    cr_assert_gt(files, 50);
    cr_assert_eq(nfail, 0, "%d lowerings changed a result:\n%s", nfail, report);
}

/* "NAME=VALUE" strings (NULL-terminated, at most 8) as -D definitions in buf */
static int set_defs(const char *const *set, char buf[][32], tilec_define_kv_t *defs)
{
    int nd = 0;
    for (; set[nd] && nd < 8; nd++) {
        snprintf(buf[nd], sizeof buf[nd], "%s", set[nd]);
        char *eq = strchr(buf[nd], '=');
        cr_assert_not_null(eq, "%s", set[nd]);
        *eq = 0;
        defs[nd].name = buf[nd];
        defs[nd].value = eq + 1;
    }
    return nd;
}

/* examples/flash_attention.py with one set's defines, its inputs and its
 * results from the interpreter (what each lowering of it is checked against) */
static tilec_program_t *flash_reference(tilec_context_t *ctx, const char *const *strs, check_set_t *set)
{
    tilec_define_kv_t defs[8];
    char buf[8][32], *msg = NULL, err[512];
    int nd = set_defs(strs, buf, defs);
    tilec_program_t *p = NULL;
    cr_assert_eq(tilec_program_load_file(ctx, "examples/flash_attention.py", defs, nd, NULL, &p), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    memset(set, 0, sizeof *set);
    cr_assert_eq(check_set_make(p, "flash", 0, set, &msg), CHECK_OK, "%s", msg ? msg : "");
    cr_assert_eq(interp_into(p->mod->kernel, set, 0, err, sizeof err), 0, "%s", err);
    return p;
}

/* The overlap pass on flash attention (two ring stages or three; causal,
 * ragged, dim 32): the lowered loop leaves both wgmmas in flight and loads
 * V one load behind, and interpreted it gives the original's results; a
 * dropped late-ring shift (V[k] loaded with K[k]) must be caught. */
Test(lower_check, overlap_attention_keeps_its_meaning, .timeout = 300)
{
    static const char *const sets[][8] = {
        {"num_stages=2", "causal=False", "seq_len=256", "dim=64", NULL},
        {"num_stages=2", "causal=True", "seq_len=200", "heads=1", NULL},
        {"num_stages=3", "causal=False", "seq_len=200", "dim=32", "block_N=32", NULL},
        {"num_stages=3", "causal=True", "seq_len=64", "heads=1", "block_N=32", NULL},
    };
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    /* the description without warp specialization of attention loops
     * (which the overlap pass leaves alone) */
    static tilec_target_desc_t ov;
    ov = *target_named("cuda-sm_90a");
    ov.flags &= ~TILEC_TARGET_WARP_SPECIALIZE_REGS;
    const tilec_target_desc_t *t = &ov;
    cr_assert(t->flags & TILEC_TARGET_MMA_OVERLAP);
    for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++) {
        check_set_t set;
        tilec_program_t *p = flash_reference(ctx, sets[si], &set);
        char err[512];
        for (int broken = 0; broken < 2; broken++) {
            tilec_arena_t ar;
            tilec_arena_init(&ar);
            tilec_lower_status_t st;
            tilec_ir_module_t *m = lower_for(&ar, tilec_program_ir(p), t, 1, &st);
            cr_assert_not_null(m, "set %zu: %s", si, st.msg);
            char *txt = tilec_ir_print(m);
            cr_assert_not_null(txt);
            cr_assert_not_null(strstr(txt, "lower.mma_nowait = 1"), "set %zu:\n%s", si, txt);
            cr_assert_not_null(strstr(txt, "hint \"mma_wait\" (0)"), "set %zu", si);
            cr_assert_not_null(strstr(txt, "- 1) * "), "set %zu: V one load behind", si);
            free(txt);
            if (broken) {
                /* the prologue's V copy reads V[kp] again: the first iteration's G2 (none) is fine,
                 * but from the second on the PV product reads the wrong key block */
                int done = 0;
                for (tilec_ir_stmt_t *s = m->kernel->body; s && !done; s = s->next)
                    if (s->kind == TILEC_ST_FOR && s->u.loop.body && s->u.loop.body->kind == TILEC_ST_IF)
                        for (tilec_ir_stmt_t *c = s->u.loop.body->u.cond.then; c; c = c->next)
                            if (c->kind == TILEC_ST_COPY_ASYNC && c->u.copy.src.base[2]->kind == TILEC_EX_BINARY &&
                                c->u.copy.src.base[2]->u.bin.a->kind == TILEC_EX_BINARY &&
                                c->u.copy.src.base[2]->u.bin.a->u.bin.op == TILEC_BIN_SUB) {
                                c->u.copy.src.base[2]->u.bin.a = c->u.copy.src.base[2]->u.bin.a->u.bin.a;
                                done = 1;
                            }
                cr_assert(done, "set %zu: the prologue's V copy", si);
            }
            int rc = interp_into(m->kernel, &set, 1, err, sizeof err);
            check_verdict_t v;
            memset(&v, 0, sizeof v);
            if (rc == 0)
                check_set_judge(&set, CHECK_TOL_AUTO, &v);
            if (!broken)
                cr_assert(rc == 0 && v.ok, "set %zu: %s", si, rc ? err : v.detail ? v.detail : "results differ");
            else
                cr_assert(rc != 0 || !v.ok, "set %zu: the broken schedule passed", si);
            free(v.detail);
            tilec_arena_destroy(&ar);
        }
        check_set_free(&set);
        tilec_program_free(p);
    }
    tilec_context_destroy(ctx);
}

/* ---- the plugin entry ------------------------------------------------------------------ */

typedef struct trace {
    int calls;
    int saw_barrier;
} trace_t;

static void trace_log(void *user, const char *topic, const char *text)
{
    trace_t *t = user;
    cr_assert_str_eq(topic, "ir");
    t->calls++;
    if (strstr(text, "ir after barrier:"))
        t->saw_barrier = 1;
}

Test(lower_plugin, statuses_messages_and_trace)
{
    const char *ok = "tileir 1.0\nkernel k {\n  var bx int32 block\n  param X global float32 [64]\n"
                     "  alloc s shared float32 [64]\n  grid [bx = 1]\n  threads 64 1 1\n  body {\n"
                     "    copy X[0 +: 64] -> s[0 +: 64]\n    copy s[0 +: 64] -> X[0 +: 64]\n  }\n}\n";
    size_t n = 0;
    tilec_pstatus_t st;
    char *out = tilec_lower_plugin_text("mygpu", ok, strlen(ok), cuda_target_desc("sm_80"), NULL, NULL, &n, &st);
    cr_assert_not_null(out, "%s", tilec_sdk_error_get());
    cr_assert_eq(st, TILEC_PS_OK);
    cr_assert_eq(n, strlen(out));
    cr_assert(strstr(out, "barrier"), "RAW on s needs a barrier:\n%s", out);
    free(out);
    /* bad text */
    cr_assert_null(tilec_lower_plugin_text("mygpu", "tileir 9.0\n", 11, cuda_target_desc("sm_80"), NULL, NULL, &n, &st));
    cr_assert_eq(st, TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strstr(tilec_sdk_error_get(), "mygpu: lower:"), "%s", tilec_sdk_error_get());
    /* no description for the arch */
    cr_assert_null(tilec_lower_plugin_text("mygpu", ok, strlen(ok), NULL, NULL, NULL, &n, &st));
    cr_assert_eq(st, TILEC_PS_UNSUPPORTED);
    /* more shared memory than the target has */
    const char *big = "tileir 1.0\nkernel k {\n  var bx int32 block\n  param X global float32 [64]\n"
                      "  alloc s shared float32 [20000]\n  grid [bx = 1]\n  threads 64 1 1\n  body {\n"
                      "    copy X[0 +: 64] -> s[0 +: 64]\n  }\n}\n";
    cr_assert_null(tilec_lower_plugin_text("opencl", big, strlen(big), ocl_target_desc(NULL), NULL, NULL, &n, &st));
    cr_assert_eq(st, TILEC_PS_UNSUPPORTED);
    cr_assert(strstr(tilec_sdk_error_get(), "shared memory"), "%s", tilec_sdk_error_get());
    /* TILEC_LOG=ir: the module after the input and every pass */
    trace_t t = {0, 0};
    setenv("TILEC_LOG", "compile,ir", 1);
    out = tilec_lower_plugin_text("mygpu", ok, strlen(ok), cuda_target_desc("sm_80"), trace_log, &t, &n, &st);
    unsetenv("TILEC_LOG");
    cr_assert_not_null(out);
    free(out);
    cr_assert_eq(t.calls, TILEC_LOWER_NPASSES + 1);
    cr_assert(t.saw_barrier);
}

/* ---- golden tests: tests/lower/ -------------------------------------------------------- */

/* "# lower: PASS[,PASS] target: NAME" -> skip mask, target */
static int parse_header(const char *text, uint32_t *skip, const tilec_target_desc_t **t)
{
    char passes[128], tname[64];
    const char *h = strstr(text, "\n# lower: ");
    if (!h || sscanf(h + 1, "# lower: %127s target: %63s", passes, tname) != 2)
        return -1;
    *t = target_named(tname);
    uint32_t want = 0;
    for (char *tok = strtok(passes, ","); tok; tok = strtok(NULL, ",")) {
        int p = tilec_lower_pass_from_name(tok);
        if (p < 0)
            return -1;
        want |= 1u << p;
    }
    *skip = ~want;
    return *t ? 0 : -1;
}

Test(lower_golden, single_passes_as_data)
{
    DIR *d = opendir("tests/lower");
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".tir") != 0)
            continue;
        char in[512], exp[512];
        snprintf(in, sizeof in, "tests/lower/%s", de->d_name);
        snprintf(exp, sizeof exp, "tests/lower/%.*s.expected", (int)(len - 4), de->d_name);
        char *text = slurp(in), *want = slurp(exp);
        cr_assert_not_null(text, "%s", in);
        cr_assert_not_null(want, "%s: no .expected file", exp);
        uint32_t skip = 0;
        const tilec_target_desc_t *t = NULL;
        cr_assert_eq(parse_header(text, &skip, &t), 0, "%s: bad '# lower:' header", in);
        tilec_lower_options_t o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.skip = skip;
        o.roundtrip = 1;
        tilec_lower_status_t st;
        char *got = tilec_lower_text(text, strlen(text), t, &o, &st);
        cr_assert_not_null(got, "%s: %s", in, st.msg);
        cr_assert_str_eq(got, want, "%s: lowered module differs from %s; got:\n%s", in, exp, got);
        free(got);
        free(text);
        free(want);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 6, "golden tests found: %d", n);
}

/* ---- decisions on known kernels ---------------------------------------------------------- */

static char *lowered_example(const char *file, const tilec_define_kv_t *defs, int ndefs, const char *target)
{
    tilec_context_t *ctx = NULL;
    tilec_program_t *p = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    cr_assert_eq(tilec_program_load_file(ctx, file, defs, ndefs, NULL, &p), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    const char *ir = tilec_program_ir(p);
    tilec_lower_status_t st;
    char *out = tilec_lower_text(ir, strlen(ir), target_named(target), NULL, &st);
    cr_assert_not_null(out, "%s: %s", file, st.msg);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
    return out;
}

Test(lower_decide, gemm_on_hopper_and_ampere)
{
    char *h = lowered_example("examples/gemm.py", NULL, 0, "cuda-sm_90a");
    cr_assert(strstr(h, "lower.mma = \"wgmma.m64nNk16.f16.f32\""), "%s", h);
    cr_assert(strstr(h, "swizzle128"), "%s", h);
    cr_assert(strstr(h, "layout regs \"mma.acc\"") || strstr(h, "mma.acc"), "%s", h);
    /* the ring on the tensor copy engine: one mbarrier per stage, waits with phase parity */
    cr_assert(strstr(h, "mbarrier k_full[3] arrive=1"), "%s", h);
    cr_assert(strstr(h, "expect_tx 8192") && strstr(h, "mbarrier k_full[(k_pro % 3)] attrs"), "%s", h);
    cr_assert(strstr(h, "barrier_wait k_full[(k % 3)], ((k / 3) % 2)"), "%s", h); /* arith: k >= 0 */
    cr_assert_null(strstr(h, "async_wait"), "%s", h);
    cr_assert(strstr(h, "    barrier\n"), "%s", h);
    free(h);
    char *a = lowered_example("examples/gemm.py", NULL, 0, "cuda-sm_80");
    cr_assert(strstr(a, "lower.mma = \"m16n8k16.f16.f32\""), "%s", a);
    cr_assert(strstr(a, "\"pad\""), "%s", a);
    cr_assert(strstr(a, "copy_async"), "%s", a);
    free(a);
    char *o = lowered_example("examples/gemm.py", NULL, 0, "opencl");
    cr_assert_null(strstr(o, "copy_async"), "OpenCL has no async copies:\n%s", o);
    free(o);
}

/* the grid policy for wgmma: a 128 x 256 tile on two warpgroups is two of
 * 64 x 256 (one m64n256 each) by default, two of 128 x 128 (two m64n128
 * each) with TILEC_TARGET_MMA_GRID_POLICY; a tie (flash attention's 128 x
 * 128 scores on two warpgroups) keeps the warpgroups along M, where each
 * row's softmax stays within one of them */
Test(lower_decide, wgmma_grid_policy)
{
    tilec_define_kv_t defs[] = {{"M", "256"}, {"N", "512"}, {"K", "128"}, {"block_M", "128"},
                                {"block_N", "256"}, {"block_K", "64"}, {"threads", "256"}};
    char *h = lowered_example("examples/gemm.py", defs, 7, "cuda-sm_90a");
    cr_assert(strstr(h, "lower.mma_shape = (64, 256, 16), lower.warp = (2, 1), lower.mma_tiles = (1, 1)"), "%s", h);
    free(h);
    h = lowered_example("examples/gemm.py", defs, 7, "cuda-sm_90a-square");
    cr_assert(strstr(h, "lower.mma_shape = (64, 128, 16), lower.warp = (1, 2), lower.mma_tiles = (2, 1)"), "%s", h);
    free(h);
    tilec_define_kv_t fdefs[] = {{"block_M", "128"}, {"block_N", "128"}, {"threads", "256"}};
    char *f0 = lowered_example("examples/flash_attention.py", fdefs, 3, "cuda-sm_90a");
    char *f1 = lowered_example("examples/flash_attention.py", fdefs, 3, "cuda-sm_90a-square");
    cr_assert(strstr(f1, "lower.warp = (2, 1)"), "%s", f1);
    cr_assert_str_eq(f0, f1);
    free(f0);
    free(f1);
}

/* the GEMM examples at their defaults on 3 persistent blocks: the
 * tile loop, the grid, the ring's counter across tiles, the next tile's
 * refill (the lower_check tests interpret them against the originals) */
Test(lower_decide, gemm_examples_persist)
{
    const char *files[] = {"examples/gemm.py", "examples/gemm_bias_relu.py", "examples/gemm_fp8.py"};
    for (int i = 0; i < 3; i++) {
        char *h = lowered_example(files[i], NULL, 0, "cuda-sm_90a-persist3");
        cr_assert(strstr(h, "grid [pb = 3]"), "%s: %s", files[i], h);
        /* 12 tiles (16 for fp8's blocks): block pb runs (NT + 2 - pb) // 3 of them */
        const char *nt = i < 2 ? "12" : "16", *ext = i < 2 ? "((14 - pb) // 3)" : "((18 - pb) // 3)";
        char want[160];
        snprintf(want, sizeof want, "for tile in serial(%s) attrs {lower.persistent = (%s, 3)}", ext, nt);
        cr_assert(strstr(h, want), "%s: %s", files[i], h);
        snprintf(want, sizeof want, "if ((tile + 1) < %s)", ext);
        cr_assert(strstr(h, want), "%s: %s", files[i], h);
        cr_assert(strstr(h, "barrier_wait k_full[(((tile * "), "%s: %s", files[i], h);
        free(h);
        /* without the field: one block per tile */
        h = lowered_example(files[i], NULL, 0, "cuda-sm_90a");
        cr_assert_null(strstr(h, "lower.persistent"), "%s: %s", files[i], h);
        free(h);
    }
}

/* ---- layout pictures ------------------------------------------------------------------------ */

Test(lower_svg, pictures_of_register_and_shared_layouts)
{
    char *t = lowered_example("examples/gemm.py", NULL, 0, "cuda-sm_80");
    tilec_arena_t ar;
    tilec_arena_init(&ar);
    tilec_ir_module_t *m = NULL;
    char err[256];
    cr_assert_eq(tilec_ir_read(&ar, t, strlen(t), &m, err, sizeof err), 0, "%s", err);
    free(t);
    int seen_regs = 0, seen_smem = 0;
    for (int i = 0; i < m->kernel->nbufs; i++) {
        const tilec_ir_buffer_t *b = m->kernel->bufs[i];
        char *svg = NULL;
        if (!b->layout) {
            cr_assert_neq(tilec_layout_svg(b, &svg), 0);
            continue;
        }
        cr_assert_eq(tilec_layout_svg(b, &svg), 0, "%s", b->name);
        cr_assert(strncmp(svg, "<svg ", 5) == 0);
        cr_assert(strstr(svg, "</svg>"));
        if (b->layout->kind == TILEC_LAYOUT_REGS) {
            /* mma.sync m16n8: element (0, 0) is lane 0 register 0; (0, 2) lane 1 */
            cr_assert(strstr(svg, ">T0</text><text x=\"32\" y=\"70\">r0<"), "%.600s", svg);
            cr_assert(strstr(svg, ">T1<"));
            seen_regs = 1;
        } else {
            /* padded rows: row 1 starts at the padded pitch, in another bank than row 0 */
            cr_assert(strstr(svg, "pad"), "%.300s", svg);
            seen_smem = 1;
        }
        free(svg);
    }
    cr_assert(seen_regs && seen_smem);
    char dir[] = "/tmp/tilec-svg-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    int n = 0;
    cr_assert_eq(tilec_layout_svg_dir(m, dir, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 3);
    char path[600];
    snprintf(path, sizeof path, "%s/C_local.svg", dir);
    char *f = slurp(path);
    cr_assert_not_null(f, "%s", path);
    free(f);
    const char *names[] = {"A_shared", "B_shared", "C_local"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s.svg", dir, names[i]);
        cr_assert_eq(remove(path), 0, "%s", path);
    }
    rmdir(dir);
    tilec_arena_destroy(&ar);
}

/* ---- tilec compile --emit lowered, through the plugins ---------------------------------------- */

static char *run_cli(const char *args)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "TILEC_PLUGIN_PATH=%s/template %s/tilec %s 2>&1", b && *b ? b : "build",
             b && *b ? b : "build", args);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f, "%s", cmd);
    tilec_sdk_str_t s = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        tilec_sdk_str_putn(&s, buf, n);
    int rc = pclose(f);
    cr_assert_eq(rc, 0, "%s failed:\n%s", cmd, s.s ? s.s : "");
    cr_assert_not_null(s.s);
    return s.s;
}

Test(lower_cli, emit_lowered_shows_layouts_and_pipelines, .timeout = 120)
{
    char *g = run_cli("compile examples/gemm.py --backend cuda --arch sm_90a --emit lowered");
    cr_assert(strncmp(g, "tileir 1.1\n", 11) == 0, "%.200s", g);
    cr_assert(strstr(g, "layout regs \"mma.acc\""), "%s", g);
    cr_assert(strstr(g, "layout smem \"swizzle"), "%s", g);
    /* the wgmma completes one iteration late: its refill trails the body;
     * the ring is on the tensor copy engine, one mbarrier per stage */
    cr_assert(strstr(g, "copy_async") && strstr(g, "mbarrier k_full[") && strstr(g, "lower.mma_wait = 1"), "%s", g);
    free(g);
    setenv("TILEC_CUDA_TMA", "0", 1);
    g = run_cli("compile examples/gemm.py --backend cuda --arch sm_90a --emit lowered");
    unsetenv("TILEC_CUDA_TMA");
    cr_assert(strstr(g, "async_wait 1") && !strstr(g, "mbarrier"), "%s", g);
    free(g);
    g = run_cli("compile examples/gemm.py --backend cuda --arch sm_80 --emit lowered");
    cr_assert(strstr(g, "async_wait 2") && !strstr(g, "lower.mma_wait"), "%s", g);
    free(g);
    char *f = run_cli("compile examples/flash_attention.py --backend cuda --arch sm_90a --emit lowered");
    cr_assert(strstr(f, "layout regs \"rows\""), "%s", f);
    cr_assert(strstr(f, "lower.reduce = \"shuffle\""), "%s", f);
    free(f);
    char *s = run_cli("compile examples/softmax.py --backend cuda --arch sm_90a --emit lowered");
    cr_assert(strstr(s, "layout regs \"rows_over_warps\""), "%s", s);
    free(s);
    char *o = run_cli("compile examples/gemm.py --backend opencl --emit lowered");
    cr_assert(strstr(o, "layout regs \"simt.acc\""), "%s", o);
    cr_assert_null(strstr(o, "copy_async"));
    free(o);
    char dir[] = "/tmp/tilec-layout-XXXXXX", args[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "compile examples/gemm.py --backend cuda --arch sm_80 --emit layout -o %s", dir);
    char *l = run_cli(args);
    cr_assert(strstr(l, "3 layout pictures"), "%s", l);
    free(l);
    const char *names[] = {"A_shared", "B_shared", "C_local"};
    for (int i = 0; i < 3; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.svg", dir, names[i]);
        char *svg = slurp(path);
        cr_assert(svg && strncmp(svg, "<svg ", 5) == 0, "%s", path);
        free(svg);
        cr_assert_eq(remove(path), 0);
    }
    rmdir(dir);
    char *t = run_cli("compile examples/gemm.py --backend template --emit lowered");
    cr_assert(strstr(t, "layout regs \"simt.acc\""), "%s", t);
    free(t);
}

/* Ragged rows over subgroups (TILEC_TARGET_ROWS_RAGGED, which the
 * template sets): softmax's rows of 100 columns over 32 lanes live in
 * registers (two pairs of columns a row per lane, the second pair held
 * only by lanes 0-17), and the kit's row reductions skip the unheld ones (a max over a
 * stale register would be wrong).  Run on the host's threads, checked
 * against the interpreter. */
Test(lower_cli, ragged_rows_run_on_the_template, .timeout = 120)
{
    char *l = run_cli("compile examples/softmax.py -D M=20 -D N=100 --backend template --emit lowered");
    cr_assert(strstr(l, "layout regs \"rows_over_warps\"() threads=128 nlocal=8"), "%s", l);
    free(l);
    char *s = run_cli("compile examples/softmax.py -D M=20 -D N=100 --backend template --emit source");
    cr_assert(strstr(s, "< 100) tc_acc = tc_maxf(tc_acc, b"), "no guard on unheld registers:\n%s", s);
    free(s);
    char *r = run_cli("run examples/softmax.py -D M=20 -D N=100 --backend template --check");
    cr_assert(strstr(r, "PASS"), "%s", r);
    free(r);
}

/* ---- warp specialization of attention: the two roles run concurrently ----------------- *
 * The interpreter runs a warpspec loop in program order, one interleaving of
 * the producer's and the consumers' statements, in which a producer that
 * refills a stage before the consumers released it is still right.  So the
 * loop is also run as the GPU may run it: the producer as far ahead as its
 * waits let it, the consumers one event at a time.  Events are the barrier
 * objects' waits and arrivals, the ring copies (a stage takes the version
 * named by the copy's source indices) and the gemms' reads of ring stages;
 * every read must see the version program order sees, and neither role may
 * wait forever. */

#define WS_MAXEV 4096
typedef struct ws_ev {
    int kind; /* 0 wait, 1 arrive, 2 copy, 3 read, 4 turn (hint "wg_turn": arg its mode) */
    const tilec_ir_buffer_t *buf;
    const tilec_ir_mbarrier_t *bar;
    int64_t idx, arg, stage, ver; /* wait: parity; arrive: tx bytes; copy: bytes */
} ws_ev_t;

typedef struct ws_env {
    const tilec_ir_kernel_t *k;
    const tilec_ir_var_t *var[8];
    int64_t val[8];
    int nv, depth;
    int64_t bx; /* the block simulated: its index along the grid's first dimension */
} ws_env_t;

static int ws_bind(void *ctx, const tilec_ir_var_t *v, int64_t *out)
{
    ws_env_t *e = ctx;
    for (int i = e->nv - 1; i >= 0; i--)
        if (e->var[i] == v) {
            *out = e->val[i];
            return 0;
        }
    if (v->kind == TILEC_VAR_BLOCK) {
        *out = v == e->k->block[0] ? e->bx : 0;
        return 0;
    }
    if (v->kind == TILEC_VAR_LET && e->depth < 8)
        for (const tilec_ir_stmt_t *s = e->k->body; s; s = s->next)
            if (s->kind == TILEC_ST_ASSIGN && s->u.assign.var == v) {
                e->depth++;
                int rc = tilec_ir_eval_int(s->u.assign.value, ws_bind, e, out);
                e->depth--;
                return rc;
            }
    return -1;
}

static int64_t ws_eval(ws_env_t *e, const tilec_ir_expr_t *x)
{
    int64_t v = 0;
    cr_assert_eq(tilec_ir_eval_int(x, ws_bind, e, &v), 0, "an index the simulation cannot evaluate");
    return v;
}

typedef struct ws_list {
    ws_ev_t ev[WS_MAXEV];
    int n;
} ws_list_t;

/* the events of list (role: 1 producer statements only, 0 the others, -1 all) */
static void ws_events(ws_env_t *e, const tilec_ir_stmt_t *list, int role, ws_list_t *out)
{
    for (const tilec_ir_stmt_t *s = list; s; s = s->next) {
        if (role >= 0 && (tilec_ir_attr_get(s->nattrs, s->attrs, "lower.producer") != NULL) != role)
            continue;
        ws_ev_t v;
        memset(&v, 0, sizeof v);
        v.kind = -1;
        switch (s->kind) {
        case TILEC_ST_IF:
            ws_events(e, ws_eval(e, s->u.cond.cond) ? s->u.cond.then : s->u.cond.els, -1, out);
            break;
        case TILEC_ST_FOR:
            if (s->u.loop.kind == TILEC_LOOP_SERIAL && !tilec_ir_attr_get(s->nattrs, s->attrs, "lower.dist")) {
                int64_t n = ws_eval(e, s->u.loop.extent);
                cr_assert_lt(e->nv, 8);
                e->var[e->nv++] = s->u.loop.var;
                for (int64_t i = 0; i < n; i++) {
                    e->val[e->nv - 1] = i;
                    ws_events(e, s->u.loop.body, -1, out);
                }
                e->nv--;
            }
            break;
        case TILEC_ST_MBAR_WAIT:
            v.kind = 0, v.bar = s->u.mbar.bar, v.idx = ws_eval(e, s->u.mbar.idx), v.arg = ws_eval(e, s->u.mbar.parity);
            break;
        case TILEC_ST_MBAR_ARRIVE:
            v.kind = 1, v.bar = s->u.mbar.bar, v.idx = ws_eval(e, s->u.mbar.idx);
            v.arg = s->u.mbar.tx ? ws_eval(e, s->u.mbar.tx) : 0;
            break;
        case TILEC_ST_COPY_ASYNC: {
            const tilec_ir_region_t *d = &s->u.copy.dst, *r = &s->u.copy.src;
            v.kind = 2, v.buf = d->buf, v.bar = s->u.copy.bar, v.stage = ws_eval(e, d->base[0]);
            v.idx = s->u.copy.bar ? ws_eval(e, s->u.copy.bar_idx) : 0;
            v.arg = (int64_t)tilec_dtype_size(d->buf->dtype);
            for (int i = 0; i < d->buf->ndim; i++)
                v.arg *= d->extent[i];
            for (int i = 0; i < r->buf->ndim; i++)
                v.ver = v.ver * 1000003 + ws_eval(e, r->base[i]);
            break;
        }
        case TILEC_ST_GEMM:
            if (s->u.gemm.b_lead)
                v.kind = 3, v.buf = s->u.gemm.b, v.stage = ws_eval(e, s->u.gemm.b_lead[0]);
            break;
        case TILEC_ST_HINT:
            if (strcmp(s->u.hint.name, "wg_turn") == 0)
                v.kind = 4, v.arg = ws_eval(e, s->u.hint.args[0]);
            break;
        default:
            break;
        }
        if (v.kind >= 0) {
            cr_assert_lt(out->n, WS_MAXEV);
            out->ev[out->n++] = v;
        }
    }
}

typedef struct ws_state {
    int64_t phase[16][16], arrived[16][16], tx[16][16];
    const tilec_ir_buffer_t *rb[8];
    int64_t ver[8][16];
    int nrb;
    int64_t passes[8], syncs[8]; /* the pingpong pass's turns, per warpgroup */
    int64_t log[8][WS_MAXEV];     /* the reads of each consumer warpgroup */
    int nlog[8];
} ws_state_t;

/* runs event v for warpgroup wg of nwg (the consumers' plain arrivals count
 * once per warpgroup): 0 done, 1 blocked (a wait whose phase has not
 * completed, a turn not passed yet), 2 a turn passed twice */
static int ws_step(ws_state_t *st, const ws_ev_t *v, int wg, int nwg)
{
    int b = v->bar ? v->bar->id : 0;
    cr_assert(b < 16 && v->idx >= 0 && v->idx < 16 && v->stage >= 0 && v->stage < 16 && wg < 8);
    if (v->kind == 4) {
        int t = v->arg == 0 ? wg : v->arg == 1 ? (wg + 1) % nwg : 0;
        if (nwg == 1)
            return 0; /* program order: one warpgroup, no turns */
        if (v->arg == 0 || v->arg == 3) {
            if (st->passes[t] <= st->syncs[t])
                return 1;
            st->syncs[t]++;
        } else {
            if (st->passes[t] > st->syncs[t])
                return 2;
            st->passes[t]++;
        }
        return 0;
    }
    if (v->kind == 0)
        return st->phase[b][v->idx] % 2 == v->arg;
    int need = v->bar ? v->bar->arrive : 1;
    if (v->kind == 1) {
        st->arrived[b][v->idx]++;
        st->tx[b][v->idx] += v->arg;
        if (!v->arg)
            need *= nwg;
    } else {
        int r = 0;
        while (r < st->nrb && st->rb[r] != v->buf)
            r++;
        if (r == st->nrb) {
            cr_assert_lt(st->nrb, 8);
            st->rb[st->nrb++] = v->buf;
        }
        if (v->kind == 3) {
            cr_assert_lt(st->nlog[wg], WS_MAXEV);
            st->log[wg][st->nlog[wg]++] = st->ver[r][v->stage];
            return 0;
        }
        st->ver[r][v->stage] = v->ver;
        if (!v->bar)
            return 0;
        st->tx[b][v->idx] -= v->arg;
    }
    if (st->arrived[b][v->idx] >= need && st->tx[b][v->idx] == 0) {
        st->phase[b][v->idx]++;
        st->arrived[b][v->idx] = 0;
    }
    return 0;
}

/* Runs the kernel's warpspec loop (and what is before it) with the producer
 * as far ahead as its waits let it and each of the nwg consumer warpgroups
 * one event at a time in turn (or everything in program order, turns
 * ignored: ahead = 0), then the turn hints after the loop.  0; -1 when the roles wait
 * for each other forever; -2 when a turn is passed twice. */
static int ws_run(const tilec_ir_kernel_t *k, int64_t bx, int ahead, int nwg, ws_state_t *st)
{
    static ws_list_t pre, post, role[2];
    ws_env_t e;
    memset(&e, 0, sizeof e);
    memset(st, 0, sizeof *st);
    e.k = k;
    e.bx = bx;
    pre.n = post.n = role[0].n = role[1].n = 0;
    const tilec_ir_stmt_t *L = NULL;
    for (const tilec_ir_stmt_t *s = k->body; s; s = s->next) {
        if (!L && s->kind == TILEC_ST_FOR && tilec_ir_attr_get(s->nattrs, s->attrs, "lower.warpspec")) {
            L = s;
        } else if (!L || (s->kind == TILEC_ST_HINT && strcmp(s->u.hint.name, "wg_turn") == 0)) {
            tilec_ir_stmt_t one = *s;
            one.next = NULL;
            ws_events(&e, &one, -1, L ? &post : &pre);
        }
    }
    cr_assert_not_null(L, "no warpspec loop");
    for (int i = 0; i < pre.n; i++)
        if (ws_step(st, &pre.ev[i], nwg - 1, nwg))
            return -1;
    int64_t n = ws_eval(&e, L->u.loop.extent);
    e.var[e.nv++] = L->u.loop.var;
    for (int64_t i = 0; i < n; i++) {
        e.val[0] = i;
        if (ahead) {
            ws_events(&e, L->u.loop.body, 1, &role[1]);
            ws_events(&e, L->u.loop.body, 0, &role[0]);
        } else {
            ws_events(&e, L->u.loop.body, -1, &role[0]);
        }
    }
    int pp = 0, pc[8] = {0};
    cr_assert(nwg >= 1 && nwg <= 8);
    for (;;) {
        int moved = 0, rc = 0, done;
        while (pp < role[1].n && !(rc = ws_step(st, &role[1].ev[pp], 0, nwg)))
            pp++, moved = 1;
        for (int w = 0; w < nwg && rc < 2; w++)
            if (pc[w] < role[0].n && !(rc = ws_step(st, &role[0].ev[pc[w]], w, nwg)))
                pc[w]++, moved = 1;
        if (rc == 2)
            return -2;
        done = pp == role[1].n;
        for (int w = 0; w < nwg; w++)
            done &= pc[w] == role[0].n;
        if (done)
            break;
        if (!moved)
            return -1;
    }
    for (int i = 0; i < post.n; i++)
        if (ws_step(st, &post.ev[i], 0, nwg))
            return -1;
    for (int w = 0; w < nwg; w++)
        if (st->passes[w] != st->syncs[w])
            return -2;
    return 0;
}

/* 0: the loop is right run concurrently by nwg consumer warpgroups; else why not, in msg */
static int ws_concurrent_ok(const tilec_ir_kernel_t *k, int nwg, char *msg, size_t n)
{
    static ws_state_t seq, conc;
    /* every block along the first grid dimension (a causal kernel's trip
     * counts differ there; the order pass may launch them in reverse) */
    int64_t nb = 1;
    cr_assert(tilec_ir_is_const_int(k->grid[0], &nb) && nb >= 1);
    for (int64_t b = 0; b < nb && b < 8; b++) {
        if (ws_run(k, b, 0, 1, &seq) != 0) {
            snprintf(msg, n, "block %lld: program order waits forever", (long long)b);
            return -1;
        }
        int rc = ws_run(k, b, 1, nwg, &conc);
        if (rc != 0) {
            snprintf(msg, n, rc == -2 ? "block %lld: a warpgroup's turn is passed twice, or not waited for"
                                      : "block %lld: the roles wait for each other forever", (long long)b);
            return -1;
        }
        for (int w = 0; w < nwg; w++)
            if (conc.nlog[w] != seq.nlog[0] ||
                memcmp(conc.log[w], seq.log[0], sizeof seq.log[0][0] * (size_t)seq.nlog[0])) {
                snprintf(msg, n, "block %lld: warpgroup %d read a stage the producer had refilled early", (long long)b,
                         w);
                return -1;
            }
    }
    return 0;
}

/* The warpspec pass on flash attention (two ring stages or three; causal,
 * ragged, dim 32): a producer warpgroup fills the K/V ring, the consumer
 * loop has no block barrier; interpreted it gives the original's results,
 * run with the producer ahead every read sees its own key block; a refill
 * that does not wait for the release, or a release dropped, is caught. */
Test(lower_check, warpspec_attention_keeps_its_meaning, .timeout = 300)
{
    static const char *const sets[][8] = {
        {"num_stages=2", "causal=False", "seq_len=256", "dim=64", NULL},
        {"num_stages=2", "causal=True", "seq_len=300", "heads=1", "block_M=128", "threads=256", NULL},
        {"num_stages=3", "causal=False", "seq_len=400", "dim=32", "block_N=32", "block_M=128", "threads=256", NULL},
        {"num_stages=3", "causal=True", "seq_len=300", "heads=1", "block_N=32", "block_M=128", "threads=256", NULL},
    };
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    /* alone, and under the overlap pass (P V of block k - 1 under block k's softmax)
     * with the pingpong pass's turns */
    static tilec_target_desc_t ws;
    ws = *target_named("cuda-sm_90a");
    ws.flags &= ~TILEC_TARGET_MMA_OVERLAP;
    cr_assert(ws.flags & TILEC_TARGET_WARP_SPECIALIZE_REGS);
    for (size_t si = 0; si < 2 * sizeof sets / sizeof sets[0]; si++) {
        const tilec_target_desc_t *t = si % 2 ? target_named("cuda-sm_90a") : &ws;
        cr_assert(si % 2 == 0 || (t->flags & TILEC_TARGET_MMA_OVERLAP));
        check_set_t set;
        tilec_program_t *p = flash_reference(ctx, sets[si / 2], &set);
        char err[512];
        for (int broken = 0; broken < (si % 2 && si / 2 > 0 ? 4 : 3); broken++) {
            tilec_arena_t ar;
            tilec_arena_init(&ar);
            tilec_lower_status_t st;
            tilec_ir_module_t *m = lower_for(&ar, tilec_program_ir(p), t, 1, &st);
            cr_assert_not_null(m, "set %zu: %s", si, st.msg);
            char *txt = tilec_ir_print(m);
            cr_assert_not_null(txt);
            cr_assert_not_null(strstr(txt, "lower.warpspec = ("), "set %zu:\n%s", si, txt);
            cr_assert_not_null(strstr(txt, "lower.producer = 1"), "set %zu", si);
            cr_assert((si % 2 == 0) == !strstr(txt, "lower.mma_nowait = 1"), "set %zu: overlap %s", si, txt);
            int pingpong = si % 2 && si / 2 > 0; /* two consumer warpgroups */
            cr_assert(pingpong == !!strstr(txt, "hint \"wg_turn\" (1, 2)"), "set %zu: pingpong %s", si, txt);
            free(txt);
            tilec_ir_stmt_t *L = NULL;
            for (tilec_ir_stmt_t *s = m->kernel->body; s; s = s->next)
                if (s->kind == TILEC_ST_FOR && tilec_ir_attr_get(s->nattrs, s->attrs, "lower.warpspec"))
                    L = s;
            cr_assert_not_null(L);
            /* the consumer loop holds no block barrier */
            for (tilec_ir_stmt_t *s = L->u.loop.body; s; s = s->next)
                cr_assert_neq(s->kind, TILEC_ST_BARRIER, "set %zu", si);
            int done = 0;
            for (tilec_ir_stmt_t **l = &L->u.loop.body; !done && *l; l = done ? l : &(*l)->next) {
                tilec_ir_stmt_t *s = *l;
                if (broken == 1 && s->kind == TILEC_ST_IF && tilec_ir_attr_get(s->nattrs, s->attrs, "lower.producer") &&
                    (s->u.cond.then->kind == TILEC_ST_IF || s->u.cond.then->kind == TILEC_ST_MBAR_WAIT)) {
                    s->u.cond.then = s->u.cond.then->next; /* the refill no longer waits for the release */
                    done = 1;
                } else if (broken == 2 && s->kind == TILEC_ST_MBAR_ARRIVE && !s->u.mbar.tx) {
                    *l = s->next; /* the consumers' release dropped */
                    done = 1;
                } else if (broken == 3 && s->kind == TILEC_ST_IF && s->u.cond.then->kind == TILEC_ST_GEMM &&
                           s->u.cond.then->next->kind == TILEC_ST_HINT) {
                    s->u.cond.then->next = s->u.cond.then->next->next; /* G2's warpgroup keeps its turn */
                    done = 1;
                }
            }
            cr_assert(done || !broken, "set %zu: broken schedule %d not made", si, broken);
            int rc = interp_into(m->kernel, &set, 1, err, sizeof err);
            check_verdict_t v;
            memset(&v, 0, sizeof v);
            if (rc == 0)
                check_set_judge(&set, CHECK_TOL_AUTO, &v);
            char why[160] = "";
            const tilec_ir_attr_t *wa = tilec_ir_attr_get(L->nattrs, L->attrs, "lower.warpspec");
            int conc = ws_concurrent_ok(m->kernel, (int)(wa->tuple[0] / 128), why, sizeof why);
            if (!broken) {
                cr_assert(rc == 0 && v.ok, "set %zu: %s", si, rc ? err : v.detail ? v.detail : "results differ");
                cr_assert_eq(conc, 0, "set %zu: %s", si, why);
            } else {
                cr_assert(rc != 0 || !v.ok || conc != 0, "set %zu: broken schedule %d passed", si, broken);
                cr_assert_neq(conc, 0, "set %zu: broken schedule %d passed the concurrent run", si, broken);
            }
            free(v.detail);
            tilec_arena_destroy(&ar);
        }
        check_set_free(&set);
        tilec_program_free(p);
    }
    tilec_context_destroy(ctx);
}

/* ---- the launch order (the order pass) ----------------------------------------------------- */

/* Causal flash attention (ragged, 64 and 128 key blocks, 2 and 3 stages)
 * starts its heaviest query blocks first on sm_90a: the grid runs over
 * bx_launch and bx = E - 1 - bx_launch; interpreted it gives the original's
 * results, and an off-by-one order (one block computed twice, one never)
 * is caught.  The non-causal kernel (the same work in every block) and a
 * description without TILEC_TARGET_BLOCK_ORDER keep the grid as it was. */
Test(lower_check, order_starts_the_heaviest_blocks_first, .timeout = 300)
{
    static const char *const sets[][8] = {
        {"num_stages=2", "causal=True", "seq_len=300", "heads=1", "block_M=128", "block_N=128", "threads=256", NULL},
        {"num_stages=2", "causal=True", "seq_len=200", "heads=2", "block_M=64", "block_N=64", NULL},
        {"num_stages=3", "causal=True", "seq_len=300", "heads=1", "block_N=32", "block_M=128", "threads=256", NULL},
        {"num_stages=2", "causal=False", "seq_len=300", "heads=1", "block_M=128", "block_N=128", "threads=256", NULL},
    };
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    const tilec_target_desc_t *on = target_named("cuda-sm_90a");
    cr_assert(on->flags & TILEC_TARGET_BLOCK_ORDER);
    static tilec_target_desc_t off;
    off = *on;
    off.flags &= ~TILEC_TARGET_BLOCK_ORDER;
    for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++) {
        int causal = strcmp(sets[si][1], "causal=True") == 0;
        check_set_t set;
        tilec_program_t *p = flash_reference(ctx, sets[si], &set);
        char err[512];
        for (int run = 0; run < 3; run++) {
            /* 0: as lowered, 1: the order off by one, 2: the description without the flag */
            tilec_arena_t ar;
            tilec_arena_init(&ar);
            tilec_lower_status_t st;
            tilec_ir_module_t *m = lower_for(&ar, tilec_program_ir(p), run == 2 ? &off : on, 1, &st);
            cr_assert_not_null(m, "set %zu: %s", si, st.msg);
            char *txt = tilec_ir_print(m);
            cr_assert_not_null(txt);
            int reversed = strstr(txt, "grid [bx_launch = ") != NULL;
            cr_assert_eq(reversed, causal && run != 2, "set %zu run %d:\n%s", si, run, txt);
            int64_t E = 0;
            cr_assert(tilec_ir_is_const_int(m->kernel->grid[0], &E));
            if (reversed) {
                char want[64];
                snprintf(want, sizeof want, "assign bx = (%lld - bx_launch)", (long long)(E - 1));
                cr_assert_not_null(strstr(txt, want), "set %zu: %s", si, txt);
            }
            free(txt);
            if (run == 1) {
                if (!reversed) {
                    tilec_arena_destroy(&ar);
                    continue;
                }
                tilec_ir_stmt_t *a = m->kernel->body;
                cr_assert_eq(a->kind, TILEC_ST_ASSIGN);
                a->u.assign.value->u.bin.a = tilec_ir_int(&ar, E - 2, TILEC_INT32);
                cr_assert_not_null(a->u.assign.value->u.bin.a);
            }
            int rc = interp_into(m->kernel, &set, 1, err, sizeof err);
            check_verdict_t v;
            memset(&v, 0, sizeof v);
            if (rc == 0)
                check_set_judge(&set, CHECK_TOL_AUTO, &v);
            if (run != 1)
                cr_assert(rc == 0 && v.ok, "set %zu run %d: %s", si, run,
                          rc ? err : v.detail ? v.detail : "results differ");
            else
                cr_assert(rc != 0 || !v.ok, "set %zu: the off-by-one order passed", si);
            free(v.detail);
            tilec_arena_destroy(&ar);
        }
        check_set_free(&set);
        tilec_program_free(p);
    }
    tilec_context_destroy(ctx);
}

/* ---- clusters (the cluster pass) --------------------------------------------------------- */

/* the refill `if` of the kernel's cluster ring loop (the one with the
 * copies), NULL without one */
static tilec_ir_stmt_t *cluster_refill(tilec_ir_kernel_t *k)
{
    for (tilec_ir_stmt_t *s = k->body; s; s = s->next)
        if (s->kind == TILEC_ST_FOR && tilec_ir_attr_get(s->nattrs, s->attrs, "lower.cluster"))
            for (tilec_ir_stmt_t *t = s->u.loop.body; t; t = t->next)
                for (tilec_ir_stmt_t *u = t->kind == TILEC_ST_IF ? t->u.cond.then : NULL; u; u = u->next)
                    if (u->kind == TILEC_ST_COPY_ASYNC)
                        return t;
    return NULL;
}

/* the release of the ring loop of k: the arrival with lower.cluster_arrive */
static tilec_ir_stmt_t *cluster_release(tilec_ir_stmt_t *s, int depth)
{
    for (; s && depth < 5; s = s->next) {
        if (s->kind == TILEC_ST_MBAR_ARRIVE && tilec_ir_attr_get(s->nattrs, s->attrs, "lower.cluster_arrive"))
            return s;
        tilec_ir_stmt_t *r = s->kind == TILEC_ST_FOR  ? cluster_release(s->u.loop.body, depth + 1)
                             : s->kind == TILEC_ST_IF ? cluster_release(s->u.cond.then, depth + 1)
                                                      : NULL;
        if (r)
            return r;
    }
    return NULL;
}

/* How each schedule is broken (0: not): 1 the second block's multicast half
 * of the refill dropped, 2 the refill's expect_tx counting only what the
 * block issues itself, 3 the release arriving on this block's barrier only */
static void break_cluster(tilec_arena_t *ar, tilec_ir_kernel_t *k, int how)
{
    tilec_ir_stmt_t *r = cluster_refill(k);
    cr_assert_not_null(r);
    if (how == 3) {
        tilec_ir_stmt_t *rel = cluster_release(k->body, 0);
        cr_assert_not_null(rel);
        rel->nattrs = 0;
        return;
    }
    int done = 0;
    for (tilec_ir_stmt_t **l = &r->u.cond.then; !done && *l; l = done ? l : &(*l)->next) {
        tilec_ir_stmt_t *s = *l;
        const tilec_ir_attr_t *mc = tilec_ir_attr_get(s->nattrs, s->attrs, "lower.multicast");
        if (how == 1 && mc && mc->tuple[0] == 1) {
            *l = s->next;
            done = 1;
        } else if (how == 2 && mc && mc->tuple[0] == 1) {
            int64_t half = (int64_t)tilec_dtype_size(s->u.copy.dst.buf->dtype), tx;
            for (int d = 0; d < s->u.copy.dst.buf->ndim; d++)
                half *= s->u.copy.dst.extent[d];
            tilec_ir_stmt_t *arr = r->u.cond.then;
            while (arr && !(arr->kind == TILEC_ST_MBAR_ARRIVE && arr->u.mbar.tx))
                arr = arr->next;
            cr_assert(arr && tilec_ir_is_const_int(arr->u.mbar.tx, &tx));
            arr->u.mbar.tx = tilec_ir_int(ar, tx - half, TILEC_INT32);
            done = 1;
        }
    }
    cr_assert(done, "break %d", how);
}

/* The GEMM examples lowered for 2-block clusters: along by (B shared) or
 * bx (A shared, also with T.use_swizzle's even panels), fp16, bf16, fp8,
 * bias+ReLU, warp-specialized or not; each interpreted against the original, and three broken
 * schedules (a multicast half dropped, expect_tx of the wrong size, a
 * release of one block only) must fail. */
Test(lower_check, cluster_gemms_keep_their_meaning, .timeout = 300)
{
    static const struct {
        const char *file, *defs[6], *shared;
        int ws; /* warp-specialized (the consumers release, the producer waits) */
    } cases[] = {
        {"examples/gemm.py", {NULL}, "B_shared", 0},                                /* grid 3 x 4 */
        {"examples/gemm.py", {"M=300", "N=512", "swizzle=2", NULL}, "A_shared", 0}, /* 8 x 5, even panels */
        {"examples/gemm.py", {NULL}, "B_shared", 1},
        {"examples/gemm.py", {"M=300", "N=512", "swizzle=2", NULL}, "A_shared", 1},
        {"examples/gemm.py", {"dtype=bfloat16", "threads=256", "block_M=128", "block_N=128", NULL}, "A_shared", 0},
        {"examples/gemm_bias_relu.py", {NULL}, "B_shared", 0},
        {"examples/gemm_fp8.py", {NULL}, "A_shared", 0},
        {"examples/gemm_fp8.py", {NULL}, "A_shared", 1},
        {"examples/gemm.py", {"M=300", "N=520", "swizzle=3", NULL}, NULL, 0},       /* 9 x 5, odd panels: none */
        /* TileLang's rasterizations: consecutive blocks need not share a row: none */
        {"examples/gemm.py", {"M=300", "N=512", "swizzle=2", "swizzle_order=row", NULL}, NULL, 0},
        {"examples/gemm.py", {"M=300", "N=512", "swizzle=2", "swizzle_order=column", NULL}, NULL, 0},
    };
    tilec_context_t *ctx = NULL;
    cr_assert_eq(tilec_context_create("cpu", &ctx), TILEC_OK);
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        tilec_define_kv_t defs[6];
        char buf[6][32];
        int nd = 0;
        for (; cases[ci].defs[nd]; nd++) {
            snprintf(buf[nd], sizeof buf[nd], "%s", cases[ci].defs[nd]);
            char *eq = strchr(buf[nd], '=');
            *eq = 0;
            defs[nd].name = buf[nd];
            defs[nd].value = eq + 1;
        }
        tilec_program_t *p = NULL;
        cr_assert_eq(tilec_program_load_file(ctx, cases[ci].file, defs, nd, NULL, &p), TILEC_OK, "%s",
                     tilec_context_message(ctx));
        check_set_t set;
        memset(&set, 0, sizeof set);
        char *msg = NULL, err[512];
        cr_assert_eq(check_set_make(p, cases[ci].file, 0, &set, &msg), CHECK_OK, "%s", msg ? msg : "");
        cr_assert_eq(interp_into(p->mod->kernel, &set, 0, err, sizeof err), 0, "%s", err);
        const tilec_target_desc_t *t = cases[ci].ws ? cluster2_ws_desc("sm_90a") : cluster2_desc("sm_90a");
        for (int broken = 0; broken < (ci < 4 ? 4 : 1); broken++) {
            tilec_arena_t ar;
            tilec_arena_init(&ar);
            tilec_lower_status_t st;
            tilec_ir_module_t *m = lower_for(&ar, tilec_program_ir(p), t, 1, &st);
            cr_assert_not_null(m, "case %zu: %s", ci, st.msg);
            char *txt = tilec_ir_print(m);
            cr_assert_not_null(txt);
            if (!cases[ci].shared) {
                cr_assert_null(strstr(txt, "lower.cluster"), "case %zu:\n%s", ci, txt);
            } else {
                char want[96];
                snprintf(want, sizeof want, "copy_async %s[", cases[ci].shared);
                const char *h = strstr(txt, "lower.multicast = (1, 2)");
                cr_assert_not_null(h, "case %zu:\n%s", ci, txt);
                const char *line = h;
                while (line > txt && line[-1] != '\n')
                    line--;
                cr_assert(strstr(line, want) && strstr(line, want) < h, "case %zu: shares %s:\n%s", ci,
                          cases[ci].shared, txt);
                cr_assert_not_null(strstr(txt, "lower.cluster_arrive = 2"), "case %zu", ci);
                cr_assert_eq(strstr(txt, "lower.warpspec") != NULL, cases[ci].ws, "case %zu", ci);
                cr_assert_not_null(strstr(txt, "barrier attrs {lower.cluster_sync = 1}\n  }"), "case %zu", ci);
            }
            free(txt);
            if (broken)
                break_cluster(&ar, m->kernel, broken);
            int rc = interp_into(m->kernel, &set, 1, err, sizeof err);
            check_verdict_t v;
            memset(&v, 0, sizeof v);
            if (rc == 0)
                check_set_judge(&set, CHECK_TOL_AUTO, &v);
            if (!broken)
                cr_assert(rc == 0 && v.ok, "case %zu: %s", ci, rc ? err : v.detail ? v.detail : "results differ");
            else
                cr_assert(rc != 0 || !v.ok, "case %zu: broken schedule %d passed", ci, broken);
            free(v.detail);
            tilec_arena_destroy(&ar);
        }
        check_set_free(&set);
        tilec_program_free(p);
    }
    tilec_context_destroy(ctx);
}
