/*
 * tests/test_cuda.c — the CUDA backend without a GPU: NVRTC compilation of
 * every example and conformance case for sm_90 through the public API,
 * the compile-only context (a backend whose driver is missing still
 * compiles for an explicit target), the lowering choices visible in the
 * generated source (tensor cores and cp.async for sm_90, CUDA cores for
 * sm_75), error messages, and the plugin table's argument checks.
 *
 * Needs build/libtilec-cuda.so (TILEC_BUILD_DIR) and NVRTC; without NVRTC
 * the compile tests are skipped (the plugin then says "NVRTC not found").
 * On a machine with a GPU the context is a real one and the same tests
 * hold.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilec/plugin.h"
#include "tilec/tilec.h"

static char plugin_path[PATH_MAX];

static const char *build_dir(void)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    return b && *b ? b : "build";
}

static void setup(void)
{
    snprintf(plugin_path, sizeof plugin_path, "%s/libtilec-cuda.so", build_dir());
    cr_assert_eq(setenv("TILEC_PLUGIN_PATH", plugin_path, 1), 0);
    setenv("TILEC_CACHE", "0", 1);
    unsetenv("TILEC_BACKEND");
}

/* A context on the cuda backend: a real one (GPU machine) or compile-only. */
static tilec_context_t *cuda_ctx(int *has_device)
{
    tilec_context_t *ctx = NULL;
    tilec_status_t st = tilec_context_create("cuda", &ctx);
    cr_assert_not_null(ctx);
    cr_assert(st == TILEC_OK || st == TILEC_E_UNAVAILABLE, "status %d: %s", (int)st,
              tilec_context_message(ctx));
    cr_assert_str_eq(tilec_context_backend(ctx), "cuda", "%s", tilec_context_message(ctx));
    if (has_device)
        *has_device = st == TILEC_OK;
    return ctx;
}

static const char gemm_src[] =
    "import tilelang.language as T\n"
    "def mm(M=128, N=128, K=64, dtype=\"float16\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),\n"
    "             C: T.Tensor((M, N), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):\n"
    "            As = T.alloc_shared((64, 32), dtype)\n"
    "            Bs = T.alloc_shared((32, 64), dtype)\n"
    "            Cl = T.alloc_fragment((64, 64), \"float32\")\n"
    "            T.clear(Cl)\n"
    "            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=3):\n"
    "                T.copy(A[by * 64, k * 32], As)\n"
    "                T.copy(B[k * 32, bx * 64], Bs)\n"
    "                T.gemm(As, Bs, Cl)\n"
    "            T.copy(Cl, C[by * 64, bx * 64])\n"
    "    return main\n";

/* Without NVRTC the compile tests skip, unless TILEC_REQUIRE_NVRTC=1 (CI
 * sets it: its machines have the CUDA toolkit), where that is a failure. */
static void no_nvrtc(const char *why)
{
    const char *req = getenv("TILEC_REQUIRE_NVRTC");
    if (req && !strcmp(req, "1"))
        cr_assert_fail("NVRTC is required (TILEC_REQUIRE_NVRTC=1) but missing: %s", why);
    cr_skip_test("no NVRTC on this machine: %s", why);
}

/* Compiles src for arch; skips the test when NVRTC is missing.  Returns
 * the status; *exe is set on success. */
static tilec_status_t compile_src(tilec_context_t *ctx, const char *src, const char *arch,
                                  tilec_program_t **prog, tilec_executable_t **exe)
{
    tilec_status_t st = tilec_program_load_string(ctx, "t.py", src, strlen(src), NULL, 0, NULL, prog);
    cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
    st = tilec_program_compile_for(ctx, *prog, arch, exe);
    if (st != TILEC_OK && strstr(tilec_context_message(ctx), "NVRTC not found"))
        no_nvrtc(tilec_context_message(ctx));
    return st;
}

static int is_cubin(const void *data, size_t len)
{
    return data && len > 64 && memcmp(data, "\177ELF", 4) == 0;
}

/* Compiles every file matching pattern (with its default parameters) for
 * arch; counts the files and those whose source has a wgmma GEMM. */
static void compile_all(const char *pattern, const char *arch, int *count, int *nwgmma)
{
    int dev = 0;
    tilec_context_t *ctx = cuda_ctx(&dev);
    glob_t gl;
    cr_assert_eq(glob(pattern, 0, NULL, &gl), 0, "no files match %s", pattern);
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        tilec_program_t *p = NULL;
        tilec_executable_t *e = NULL;
        tilec_status_t st = tilec_program_load_file(ctx, gl.gl_pathv[i], NULL, 0, NULL, &p);
        cr_assert_eq(st, TILEC_OK, "%s: %s", gl.gl_pathv[i], tilec_context_message(ctx));
        st = tilec_program_compile_for(ctx, p, arch, &e);
        if (st != TILEC_OK && strstr(tilec_context_message(ctx), "NVRTC not found")) {
            globfree(&gl);
            no_nvrtc(tilec_context_message(ctx));
        }
        cr_assert_eq(st, TILEC_OK, "%s: %s", gl.gl_pathv[i], tilec_context_message(ctx));
        size_t blen = 0, slen = 0;
        const void *bin = tilec_executable_binary(e, &blen);
        const char *src = tilec_executable_source(e, &slen);
        cr_expect(is_cubin(bin, blen), "%s: binary is not a cubin (%zu bytes)", gl.gl_pathv[i], blen);
        cr_expect(src && strstr(src, "extern \"C\" __global__"), "%s: no kernel in the source",
                  gl.gl_pathv[i]);
        if (src && strstr(src, "wgmma.mma_async"))
            (*nwgmma)++;
        tilec_executable_free(e);
        tilec_program_free(p);
        (*count)++;
    }
    globfree(&gl);
    tilec_context_destroy(ctx);
}

/* The defines of the first "# tilec-test:" line of the file at path
 * (kept in buf): *n of them in defs (at most 16). */
static void first_test_defines(const char *path, char *buf, size_t cap, tilec_define_kv_t *defs, int *n)
{
    *n = 0;
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char *args = NULL;
    while (fgets(buf, (int)cap, f))
        if (strncmp(buf, "# tilec-test:", 13) == 0) {
            args = buf + 13;
            break;
        }
    fclose(f);
    char *save = NULL;
    for (char *tok = args ? strtok_r(args, " \t\r\n", &save) : NULL; tok && *n < 16;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *def = strcmp(tok, "-D") == 0 ? strtok_r(NULL, " \t\r\n", &save) : NULL, *eq;
        if (def && (eq = strchr(def, '='))) {
            *eq = '\0';
            defs[*n].name = def;
            defs[(*n)++].value = eq + 1;
        }
    }
}

TestSuite(cuda, .init = setup, .timeout = 600);

/* Every language test (tests/lang/, with the defines of its first
 * "# tilec-test:" line) compiles with NVRTC for sm_80 and sm_90a: the
 * conversions, scopes and statement forms there reach printer paths the
 * examples do not; float8 (tile IR 1.2) included. */
Test(cuda, every_language_test_compiles_for_sm_80_and_sm_90a)
{
    static const char *const archs[] = {"sm_90a", "sm_80"};
    tilec_context_t *ctx = cuda_ctx(NULL);
    glob_t gl;
    cr_assert_eq(glob("tests/lang/*.py", 0, NULL, &gl), 0, "no tests/lang/*.py");
    int compiled = 0;
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        char line[1024];
        tilec_define_kv_t defs[16];
        int nd = 0;
        first_test_defines(gl.gl_pathv[i], line, sizeof line, defs, &nd);
        tilec_program_t *p = NULL;
        tilec_status_t st = tilec_program_load_file(ctx, gl.gl_pathv[i], defs, nd, NULL, &p);
        cr_assert_eq(st, TILEC_OK, "%s: %s", gl.gl_pathv[i], tilec_context_message(ctx));
        for (int a = 0; a < 2; a++) {
            tilec_executable_t *e = NULL;
            st = tilec_program_compile_for(ctx, p, archs[a], &e);
            const char *msg = tilec_context_message(ctx);
            if (st != TILEC_OK && strstr(msg, "NVRTC not found")) {
                globfree(&gl);
                no_nvrtc(msg);
            }
            if (st != TILEC_OK && strstr(msg, "uses a 4-bit dtype")) {
                /* 1.3's 4-bit dtypes: the plugin refuses them and says so (counted, shown) */
                fprintf(stderr, "not supported on cuda (4-bit dtypes): %s\n", gl.gl_pathv[i]);
                break;
            }
            cr_assert_eq(st, TILEC_OK, "%s for %s: %s", gl.gl_pathv[i], archs[a], msg);
            size_t blen = 0;
            const void *bin = tilec_executable_binary(e, &blen);
            cr_expect(is_cubin(bin, blen), "%s for %s: no cubin", gl.gl_pathv[i], archs[a]);
            tilec_executable_free(e);
            compiled++;
        }
        tilec_program_free(p);
    }
    cr_expect_geq(compiled, 90, "only %d compiles", compiled);
    globfree(&gl);
    tilec_context_destroy(ctx);
}


/* sm_90 uses no wgmma; with sm_90a the GEMMs of gemm.py, gemm_transpose_b.py
 * and both of flash_attention.py's do */
Test(cuda, every_example_compiles_for_sm_90_and_sm_90a)
{
    int n = 0, nw = 0;
    compile_all("examples/*.py", "sm_90", &n, &nw);
    cr_expect_geq(n, 10, "only %d examples", n);
    cr_expect_eq(nw, 0, "wgmma used for plain sm_90 in %d examples", nw);
    n = nw = 0;
    compile_all("examples/*.py", "sm_90a", &n, &nw);
    cr_expect_geq(nw, 3, "only %d examples use wgmma", nw);
}

Test(cuda, every_conformance_case_compiles_for_sm_90_and_sm_90a)
{
    int n = 0, nw = 0;
    compile_all("conformance/cases/*.py", "sm_90", &n, &nw);
    cr_expect_geq(n, 1);
    cr_expect_eq(nw, 0);
    compile_all("conformance/cases/*.py", "sm_90a", &n, &nw);
    cr_expect_geq(nw, 1, "no case uses wgmma at its defaults (fragment_layouts.py should)");
}

/* copies between every pair of scopes and dtypes, float64 -> float16 among
 * them (whose conversion once printed one parenthesis short) */
Test(cuda, copies_across_scopes_and_dtypes_compile)
{
    int n = 0, nw = 0;
    compile_all("tests/lang/copy_scopes.py", "sm_80", &n, &nw);
    cr_expect_eq(n, 1);
}

Test(cuda, gemm_uses_tensor_cores_and_cp_async_on_sm_90)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(compile_src(ctx, gemm_src, "sm_90", &p, &e), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "on m16n8k16.f16.f32: 2 x 2 warps of 32 x 32, C in registers"), "no tensor-core GEMM");
    cr_expect(strstr(src, "tl_mma_f16(b5_0, b5_1, b5_2, b5_3, tc_a[0], tc_b[0]);"), "no mma.sync on C's registers");
    cr_expect(strstr(src, "tl_ldsm_x4(tc_a[tc_mi], &b3["), "no ldmatrix");
    cr_expect(strstr(src, "tl_cp_async<16>(") && strstr(src, "tl_cp_wait<2>()"),
              "no 3-stage cp.async pipeline");
    cr_expect(strstr(src, "/* fragment Cl: registers */"), "accumulator not register-resident");
    /* padded rows: 32 + 8 halves for As, 64 + 8 for Bs */
    cr_expect(strstr(src, "/* shared As, pad */") && strstr(src, "* 40)") && strstr(src, "* 72)"),
              "operand rows not padded");
    size_t blen = 0;
    const void *bin = tilec_executable_binary(e, &blen);
    cr_expect(is_cubin(bin, blen), "binary of %zu bytes is not a cubin", blen);
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

Test(cuda, gemm_uses_wgmma_from_swizzled_shared_memory_on_sm_90a)
{
    setenv("TILEC_CUDA_TMA", "0", 1); /* the cp.async ring writes the swizzle itself */
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(compile_src(ctx, gemm_src, "sm_90a", &p, &e), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "on wgmma.m64nNk16.f16.f32: 1 x 1 warpgroups of 64 x 64, C in registers"), "no wgmma GEMM");
    /* A (64x32, K-major) and B (32x64, N-major) in one 64x64 instruction */
    cr_expect(strstr(src, "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"), "no m64n64k16");
    cr_expect(strstr(src, "p, 1, 1, 0, 1;"), "B should be read N-major (imm-trans-b = 1)");
    /* As: 64-byte rows, 64-byte swizzle; Bs: 128-byte rows, 128-byte swizzle */
    cr_expect(strstr(src, "/* shared As, swizzle64 */") && strstr(src, "/* shared Bs, swizzle128 */"),
              "operands not swizzled");
    cr_expect(strstr(src, "16u, 512u, 2)") && strstr(src, "4096u, 1024u, 1)"),
              "descriptor strides/modes not the canonical ones");
    /* the wait trails one iteration behind the pipeline; the async proxy
     * fence precedes the barriers */
    cr_expect(strstr(src, "tl_wg_wait<1>()") && strstr(src, "tl_wg_wait<0>()"), "no deferred wait");
    cr_expect(strstr(src, "tl_fence_proxy(); __syncthreads();"), "no async-proxy fence");
    cr_expect_null(strstr(src, "tl_ldsm_x4(tc_a"), "ldmatrix used beside wgmma");
    cr_expect_null(strstr(src, ", pad */"), "wgmma operands must not be padded");
    size_t blen = 0;
    const void *bin = tilec_executable_binary(e, &blen);
    cr_expect(is_cubin(bin, blen), "no cubin");
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* IR 1.1 input: the pipelined GEMM lowered for the arch (rings with
 * leading stage indices, copy_async, async_commit/async_wait, barriers)
 * and read back as a .tir module prints its own schedule: cp.async into
 * the ring, the gemm on one stage, the waits the pipeline pass placed. */
/* wait: the pipeline's async_wait in the steady state (2 stages ahead; 1
 * where the wgmma completes an iteration late, lower.mma_wait) */
static void lowered_roundtrip(const char *arch, const char *mma, int wait, const char *stage)
{
    setenv("TILEC_CUDA_TMA", "0", 1); /* the cp.async schedule (TMA's: gemm_loads_by_tma_...) */
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL, *q = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(tilec_program_load_string(ctx, "t.py", gemm_src, strlen(gemm_src), NULL, 0, NULL, &p),
                 TILEC_OK, "%s", tilec_context_message(ctx));
    tilec_compile_options_t o;
    memset(&o, 0, sizeof o);
    o.arch = arch;
    char *low = NULL;
    size_t len = 0;
    tilec_status_t st;
    cr_assert_eq(tilec_program_lower(ctx, p, &o, &low, &len), TILEC_OK, "%s", tilec_context_message(ctx));
    char want[64];
    snprintf(want, sizeof want, "async_wait %d", wait);
    cr_assert(strstr(low, "copy_async") && strstr(low, want), "not a pipelined module:\n%s", low);
    char path[64];
    snprintf(path, sizeof path, "/tmp/tilec_test_cuda_%d_%s.tir", (int)getpid(), arch);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(low, 1, len, f), len);
    fclose(f);
    st = tilec_program_load_file(ctx, path, NULL, 0, NULL, &q);
    remove(path);
    cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
    st = tilec_program_compile_for(ctx, q, arch, &e);
    if (st != TILEC_OK && strstr(tilec_context_message(ctx), "NVRTC not found"))
        no_nvrtc(tilec_context_message(ctx));
    cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "tl_cp_async<16>("), "copy_async not on cp.async");
    snprintf(want, sizeof want, "tl_cp_wait<%d>();", wait);
    cr_expect(strstr(src, want) && strstr(src, "tl_cp_wait<0>();"), "waits missing");
    cr_expect(strstr(src, stage), "gemm not on one stage of the rings (%s)", stage);
    cr_expect(strstr(src, mma), "no '%s'", mma);
    size_t blen = 0;
    const void *bin = tilec_executable_binary(e, &blen);
    cr_expect(is_cubin(bin, blen), "binary of %zu bytes is not a cubin", blen);
    free(low);
    tilec_executable_free(e);
    tilec_program_free(q);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

Test(cuda, lowered_ir_input_compiles_for_sm_80_and_sm_90a)
{
    /* a stage of As: 64 x (32 + 8) halves padded, 64 x 32 swizzled */
    lowered_roundtrip("sm_80", "on m16n8k16", 2, "tl_ldsm_x4(tc_a[tc_mi], &b3[(((((int)(((unsigned int)(v2)) % 3u))) * 2560)");
    lowered_roundtrip("sm_90a", "on wgmma", 1, "tl_sa(&b3[(((((int)(((unsigned int)(v2)) % 3u))) * 2048)");
}

/* As is also reduced (code that assumes dense rows), so it can't be
 * swizzled: the GEMM gives up wgmma, Bs stays unswizzled with it, and
 * mma.sync runs from padded rows. */
Test(cuda, gemm_without_a_swizzled_operand_falls_back_to_mma_sync)
{
    static const char src_text[] =
        "import tilelang.language as T\n"
        "def mm(M=128, N=128, K=64, dtype=\"float16\"):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),\n"
        "             C: T.Tensor((M, N), dtype), R: T.Tensor((M,), \"float32\")):\n"
        "        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):\n"
        "            As = T.alloc_shared((64, 32), dtype)\n"
        "            Bs = T.alloc_shared((32, 64), dtype)\n"
        "            Cl = T.alloc_fragment((64, 64), \"float32\")\n"
        "            Rs = T.alloc_fragment((64,), \"float32\")\n"
        "            T.clear(Cl)\n"
        "            for k in T.serial(T.ceildiv(K, 32)):\n"
        "                T.copy(A[by * 64, k * 32], As)\n"
        "                T.copy(B[k * 32, bx * 64], Bs)\n"
        "                T.gemm(As, Bs, Cl)\n"
        "            T.reduce_sum(As, Rs, dim=1)\n"
        "            T.copy(Cl, C[by * 64, bx * 64])\n"
        "            T.copy(Rs, R[by * 64])\n"
        "    return main\n";
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(compile_src(ctx, src_text, "sm_90a", &p, &e), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "on m16n8k16"), "no mma.sync GEMM");
    cr_expect_null(strstr(src, "on wgmma"), "wgmma chosen without a swizzled A");
    cr_expect_null(strstr(src, ", swizzle"), "a buffer stayed swizzled");
    cr_expect(strstr(src, "/* shared Bs, pad */") && strstr(src, "* 72)"), "Bs rows not padded for ldmatrix");
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* Softmax's row block never touches shared memory: rows over warps in
 * registers, warp-wide reductions, 16-byte loads and stores of the float16
 * tensor; flash attention's accumulators and row vectors live in
 * registers in the mma layout. */
Test(cuda, fragments_live_in_registers)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    tilec_define_kv_t defs[] = {{"M", "64"}, {"N", "1024"}, {"block_M", "4"}};
    cr_assert_eq(tilec_program_load_file(ctx, "examples/softmax.py", defs, 3, NULL, &p), TILEC_OK,
                 "%s", tilec_context_message(ctx));
    tilec_status_t st = tilec_program_compile_for(ctx, p, "sm_90a", &e);
    if (st != TILEC_OK && strstr(tilec_context_message(ctx), "NVRTC not found"))
        no_nvrtc(tilec_context_message(ctx));
    cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "/* fragment x: registers */"), "x not in registers");
    cr_expect(strstr(src, "/* fragment row_max: registers */"), "row_max not in registers");
    const char *ld = strstr(src, "copy X -> x (registers)"), *sto = strstr(src, "copy x -> Y (registers)");
    cr_expect(ld && sto && strstr(ld, "registers 0..7: one vector") && strstr(sto, "registers 0..7: one vector"),
              "copies not vectorized");
    cr_expect(strstr(src, "(registers, 32 lanes a row, shuffles)"), "row reduction not across the warp");
    cr_expect_null(strstr(src, " *const b"), "a buffer still in shared memory");
    tilec_executable_free(e);
    tilec_program_free(p);
    p = NULL;
    e = NULL;
    cr_assert_eq(tilec_program_load_file(ctx, "examples/flash_attention.py", NULL, 0, NULL, &p),
                 TILEC_OK, "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_program_compile_for(ctx, p, "sm_90a", &e), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "/* fragment acc_s: registers */") && strstr(src, "/* fragment acc_o: registers */"),
              "accumulators not in registers");
    cr_expect(strstr(src, "/* fragment scores_max: registers */"), "row vectors not in registers");
    cr_expect(strstr(src, "(registers, 4 lanes a row, shuffles)"), "row reduction not across the quad");
    cr_expect(strstr(src, "parallel over the registers of acc_s") && strstr(src, "parallel over the registers of logsum"),
              "nests not on registers");
    tilec_executable_free(e);
    tilec_program_free(p);
    p = NULL;
    e = NULL;
    /* an accumulator reduced along dim 0 and read transposed: everything
     * falls back to shared memory, and the GEMM still runs on wgmma */
    cr_assert_eq(tilec_program_load_file(ctx, "conformance/cases/fragment_fallbacks.py", NULL, 0, NULL,
                                         &p), TILEC_OK, "%s", tilec_context_message(ctx));
    cr_assert_eq(tilec_program_compile_for(ctx, p, "sm_90a", &e), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    src = tilec_executable_source(e, NULL);
    cr_expect_null(strstr(src, ": registers */"), "a fragment kept in registers");
    cr_expect(strstr(src, "on wgmma"), "GEMM not on wgmma");
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* the CUDA source of the file at path with defs for arch, owned by the
 * caller; skips the test when NVRTC is missing */
static char *example_source(tilec_context_t *ctx, const char *path, const char *arch, const tilec_define_kv_t *defs,
                            int ndefs)
{
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(tilec_program_load_file(ctx, path, defs, ndefs, NULL, &p), TILEC_OK, "%s", tilec_context_message(ctx));
    tilec_status_t st = tilec_program_compile_for(ctx, p, arch, &e);
    if (st != TILEC_OK && strstr(tilec_context_message(ctx), "NVRTC not found"))
        no_nvrtc(tilec_context_message(ctx));
    cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
    char *src = strdup(tilec_executable_source(e, NULL));
    tilec_executable_free(e);
    tilec_program_free(p);
    return src;
}

/* flash attention's source for arch (2 stages) */
static char *flash_source(tilec_context_t *ctx, const char *arch)
{
    tilec_define_kv_t defs[] = {{"num_stages", "2"}};
    return example_source(ctx, "examples/flash_attention.py", arch, defs, 1);
}

/* sm_90a (TILEC_CUDA_TMA unset or 1): the GEMM's ring copies go by the tensor copy engine
 * (lower_tma.c's mbarrier schedule): thread 0 announces the stage's bytes
 * and issues one bulk copy per 64-column block, every thread waits with
 * phase parity, the tensor maps are kernel parameters; without it the
 * cp.async ring stays */
Test(cuda, gemm_loads_by_tma_on_mbarriers_when_asked)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_define_kv_t defs[] = {{"M", "256"}, {"N", "256"}, {"K", "256"}, {"block_M", "128"},
                                {"block_N", "256"}, {"block_K", "64"}, {"threads", "256"}};
    for (int on = 1; on >= 0; on--) {
        tilec_program_t *p = NULL;
        tilec_executable_t *e = NULL;
        if (on)
            unsetenv("TILEC_CUDA_TMA"); /* the default */
        else
            setenv("TILEC_CUDA_TMA", "0", 1);
        cr_assert_eq(tilec_program_load_file(ctx, "examples/gemm.py", defs, 7, NULL, &p), TILEC_OK, "%s",
                     tilec_context_message(ctx));
        tilec_status_t st = tilec_program_compile_for(ctx, p, "sm_90a", &e);
        if (st != TILEC_OK && strstr(tilec_context_message(ctx), "NVRTC not found"))
            no_nvrtc(tilec_context_message(ctx));
        cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
        const char *src = tilec_executable_source(e, NULL);
        const char *b3 = strstr(src, "tl_tma2(tl_tma_sa(tc_smem) + 73728u + 32768u * ");
        if (on) {
            cr_expect(strstr(src, "const __grid_constant__ tl_tmap_t tl_tm0, const __grid_constant__ "
                                  "tl_tmap_t tl_tm1)"), "no tensor map parameters");
            cr_expect(strstr(src, "tl_tma2(tl_tma_sa(tc_smem) + 0u + 16384u * "), "A not by TMA");
            cr_expect(b3, "B's fourth 64-column block not by TMA");
            cr_expect(strstr(src, "tl_mbar_expect(tl_tma_sa(tc_smem) + 147456u + "), "no expect_tx arrival");
            cr_expect(strstr(src, "tl_mbar_wait(") && strstr(src, " / 3u)))) % 2u))) & 1u);"), "no phase-parity wait");
            cr_expect_null(strstr(src, "tl_cp_async<"), "cp.async left in the ring");
        } else {
            cr_expect_null(b3, "TMA with TILEC_CUDA_TMA=0");
            cr_expect(strstr(src, "tl_cp_async<16>("), "no cp.async ring");
        }
        tilec_executable_free(e);
        tilec_program_free(p);
    }
    unsetenv("TILEC_CUDA_TMA");
    tilec_context_destroy(ctx);
}

/* sm_90a with TILEC_CUDA_WS=1 (opt-in): the warpspec pass's producer
 * warpgroup (threads 256..383 issue the ring's bulk copies after waiting
 * for the consumers' release of the stage), the consumer warps' per-warp
 * release, setmaxnreg moving registers to the consumers and back; NVRTC
 * compiles it.  Without the variable the plain TMA ring stays. */
Test(cuda, gemm_warp_specialized_when_asked)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_define_kv_t defs[] = {{"M", "2048"}, {"N", "2048"}, {"K", "512"}, {"block_M", "128"}, {"block_N", "256"},
                                {"block_K", "64"}, {"threads", "256"}, {"num_stages", "4"}};
    setenv("TILEC_CUDA_WS", "1", 1);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(tilec_program_load_file(ctx, "examples/gemm.py", defs, 8, NULL, &p), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    tilec_status_t st = tilec_program_compile_for(ctx, p, "sm_90a", &e);
    unsetenv("TILEC_CUDA_WS");
    if (st != TILEC_OK && strstr(tilec_context_message(ctx), "NVRTC not found"))
        no_nvrtc(tilec_context_message(ctx));
    cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "__launch_bounds__(384)"), "the producer warpgroup is not in the block");
    cr_expect(strstr(src, "if (tc_tid >= 256) { /* warp specialization"), "no producer branch");
    cr_expect(strstr(src, "tl_reg_dec<40>();") && strstr(src, "tl_reg_inc<232>();") && strstr(src, "tl_reg_inc<168>();"),
              "no setmaxnreg");
    cr_expect(strstr(src, "const int tl_tid = tc_tid - 256;"), "the producer's copies not from its first thread");
    cr_expect(strstr(src, "if ((tl_tid & 31) == 0) tl_mbar_arrive("), "no per-warp release");
    cr_expect(strstr(src, "tl_mbar_init(tl_tma_sa(tc_smem) + 196640u + 8u * tl_b, 8u)"), "empty barriers not for 8 warps");
    tilec_executable_free(e);
    tilec_program_free(p);
    /* the default: no producer */
    cr_assert_eq(tilec_program_load_file(ctx, "examples/gemm.py", defs, 8, NULL, &p), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_assert_eq(tilec_program_compile_for(ctx, p, "sm_90a", &e), TILEC_OK, "%s", tilec_context_message(ctx));
    src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "__launch_bounds__(256)") && !strstr(src, "tl_reg_dec<"), "warp specialization by default");
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* sm_90a: P goes to wgmma as register A operand; V joins K's ring (the
 * pipeline pass's late copy): by the tensor copy engine (its second
 * tensor map, in the prologue and in the loop) and with TILEC_CUDA_TMA=0
 * by cp.async; sm_90 (mma.sync) keeps P in shared memory */
Test(cuda, flash_attention_keeps_p_in_registers_and_v_in_the_ring_on_sm_90a)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    char *src = flash_source(ctx, "sm_90a");
    const char *v1 = strstr(src, "&tl_tm1, ");
    cr_expect(v1 && strstr(v1 + 1, "&tl_tm1, "), "V not by TMA in the prologue and the loop");
    free(src);
    setenv("TILEC_CUDA_TMA", "0", 1);
    src = flash_source(ctx, "sm_90a");
    cr_expect(strstr(src, "copy acc_s -> acc_s_cast: packed into wgmma A-operand registers"), "P not in registers");
    cr_expect(strstr(src, "\"r\"(tc_pa") && strstr(src, "p, 1, 1, 1; }"), "no wgmma with A from registers");
    const char *v = strstr(src, "copy V -> V_shared */");
    cr_expect(v && strstr(v, "tl_cp_async<16>(") && strstr(v, "tl_cp_async<16>(") - v < 2000, "V not in the ring");
    cr_expect_null(strstr(src, "copy acc_s -> acc_s_cast */"), "P still in shared memory");
    free(src);
    /* the late copy is the pipeline pass's, for every target with cp.async */
    src = flash_source(ctx, "sm_90");
    cr_expect_null(strstr(src, "packed into wgmma"), "register A operand without wgmma");
    v = strstr(src, "copy V -> V_shared */");
    cr_expect(v && strstr(v, "tl_cp_async<16>(") && strstr(v, "tl_cp_async<16>(") - v < 2000, "V not in the ring on sm_90");
    free(src);
    unsetenv("TILEC_CUDA_TMA");
    tilec_context_destroy(ctx);
}

/* T.exp2 on float is one ex2.approx.ftz (cuda_kit.c's tl_ex2f) on every arch
 * unless TILEC_CUDA_FAST_EXP2=0, which prints CUDA's exp2 (range test and
 * rescales around the same instruction) */
Test(cuda, exp2_is_one_special_function_instruction_unless_asked)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    const char *arch[] = {"sm_90a", "sm_80"};
    for (int i = 0; i < 2; i++) {
        char *src = flash_source(ctx, arch[i]);
        cr_expect(strstr(src, "ex2.approx.ftz.f32"), "%s: no ex2.approx.ftz helper", arch[i]);
        const char *use = strstr(src, "tilec_kernel(");
        cr_expect(use && strstr(use, "tl_ex2f("), "%s: the softmax does not call tl_ex2f", arch[i]);
        cr_expect_null(strstr(src, "exp2("), "%s: CUDA's exp2 still printed", arch[i]);
        free(src);
        setenv("TILEC_CUDA_FAST_EXP2", "0", 1);
        src = flash_source(ctx, arch[i]);
        unsetenv("TILEC_CUDA_FAST_EXP2");
        cr_expect(strstr(src, " exp2("), "%s: TILEC_CUDA_FAST_EXP2=0 without exp2", arch[i]);
        cr_expect_null(strstr(src, "tl_ex2f"), "%s: TILEC_CUDA_FAST_EXP2=0 still on the helper", arch[i]);
        free(src);
    }
    tilec_context_destroy(ctx);
}

/* Flash attention's scores, cleared before Q K^T (causal: in the branch of
 * the key blocks left of the diagonal, the others keep their mask): the
 * clear is not printed, the wgmma's first k-step scales acc_s by 0, under
 * the branch's condition when there is one (cuda_zero.c); P V's
 * accumulator (not cleared) keeps scale-d 1.  TILEC_CUDA_ZERO_INIT=0
 * prints the clears; sm_80's mma.sync has no scale-d. */
Test(cuda, cleared_accumulator_is_left_to_the_wgmma_unless_asked)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    for (int causal = 0; causal < 2; causal++) {
        tilec_define_kv_t defs[] = {{"seq_len", "384"}, {"block_M", "128"}, {"block_N", "128"}, {"threads", "256"},
                                    {"num_stages", "2"}, {"causal", causal ? "True" : "False"}};
        char *src = example_source(ctx, "examples/flash_attention.py", "sm_90a", defs, 6);
        const char *k = strstr(src, "tilec_kernel(");
        cr_assert_not_null(k);
        cr_expect(strstr(k, "/* clear of acc_s: the first wgmma of the gemm after it scales it by 0 */"),
                  "causal=%d: acc_s's clear printed", causal);
        cr_expect(strstr(k, causal ? "\"r\"((int)(tc_k0 != 0 || !(" : "\"r\"((int)(tc_k0 != 0)));"),
                  "causal=%d: no scale-d 0 on the first k-step", causal);
        cr_expect(strstr(k, "\"l\"(tc_db), \"r\"(1));"), "causal=%d: P V lost its scale-d 1", causal);
        cr_expect_null(strstr(k, "fill acc_s"), "causal=%d: a fill of acc_s left", causal);
        free(src);
        setenv("TILEC_CUDA_ZERO_INIT", "0", 1);
        src = example_source(ctx, "examples/flash_attention.py", "sm_90a", defs, 6);
        unsetenv("TILEC_CUDA_ZERO_INIT");
        cr_expect_null(strstr(src, "scales it by 0"), "causal=%d: TILEC_CUDA_ZERO_INIT=0 still folds", causal);
        cr_expect_null(strstr(src, "tc_k0 != 0"), "causal=%d: TILEC_CUDA_ZERO_INIT=0 still folds", causal);
        free(src);
        src = example_source(ctx, "examples/flash_attention.py", "sm_80", defs, 6);
        cr_expect_null(strstr(src, "scales it by 0"), "causal=%d: sm_80 folds", causal);
        free(src);
    }
    tilec_context_destroy(ctx);
}

Test(cuda, gemm_falls_back_to_cuda_cores_on_sm_75)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(compile_src(ctx, gemm_src, "sm_75", &p, &e), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "{ /* gemm As, Bs -> Cl ("), "no FMA gemm");
    cr_expect_null(strstr(src, "on m16n8k16"));
    cr_expect_null(strstr(src, "tl_cp_async<"));
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* ABI 1.1 module info without a device: registers and spills from ptxas
 * (-v), shared memory from the code generator; and from the cache. */
Test(cuda, module_info_from_ptxas_and_the_cache)
{
    char dir[] = "/tmp/tilec-cuda-info-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    setenv("TILEC_CACHE", "1", 1);
    setenv("TILEC_CACHE_DIR", dir, 1);
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    tilec_module_info_t mi, again;
    cr_assert_eq(compile_src(ctx, gemm_src, "sm_80", &p, &e), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    cr_assert_eq(tilec_executable_info(e, &mi), TILEC_OK);
    cr_expect_gt(mi.registers, 0);
    cr_expect_geq(mi.spill_bytes, 0);
    cr_expect_geq(mi.local_bytes, 0);
    cr_expect_gt(mi.shared_dynamic_bytes, 0); /* the 3-stage A and B ring */
    cr_expect_eq(mi.threads, 128);
    tilec_executable_free(e);
    e = NULL;
    /* the second compile is a cache hit and says the same (the sidecar) */
    cr_assert_eq(tilec_program_compile_for(ctx, p, "sm_80", &e), TILEC_OK);
    cr_assert_eq(tilec_executable_info(e, &again), TILEC_OK);
    cr_expect_eq(again.registers, mi.registers);
    cr_expect_eq(again.spill_bytes, mi.spill_bytes);
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(cuda, bad_target_is_rejected_with_its_name)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    tilec_status_t st = compile_src(ctx, gemm_src, "sm_xx", &p, &e);
    cr_expect_neq(st, TILEC_OK);
    cr_expect_null(e);
    cr_expect(strstr(tilec_context_message(ctx), "bad target 'sm_xx'"), "%s",
              tilec_context_message(ctx));
    tilec_program_free(p);
    p = NULL;
    /* well-formed but unknown to NVRTC: the NVRTC message comes through */
    st = compile_src(ctx, gemm_src, "sm_13", &p, &e);
    cr_expect_eq(st, TILEC_E_COMPILE);
    cr_expect(strstr(tilec_context_message(ctx), "nvrtc"), "%s", tilec_context_message(ctx));
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

Test(cuda, compile_only_context_has_no_memory_or_launch)
{
    int dev = 0;
    tilec_context_t *ctx = cuda_ctx(&dev);
    if (dev) {
        tilec_context_destroy(ctx);
        cr_skip_test("this machine has a CUDA device");
    }
    int64_t shape[1] = {16};
    tilec_buffer_t *b = NULL;
    cr_expect_eq(tilec_buffer_create(ctx, TILEC_ELEM_FLOAT32, 1, shape, &b), TILEC_E_UNAVAILABLE);
    cr_expect_null(b);
    /* the reason names the driver */
    cr_expect(strstr(tilec_context_message(ctx), "cuda"), "%s", tilec_context_message(ctx));
    /* without a target there is nothing to compile for */
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(tilec_program_load_string(ctx, "t.py", gemm_src, strlen(gemm_src), NULL, 0, NULL,
                                           &p), TILEC_OK);
    cr_expect_eq(tilec_program_compile(ctx, p, &e), TILEC_E_UNAVAILABLE);
    cr_expect_null(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

Test(cuda, plugin_rejects_bad_arguments)
{
    void *h = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(h, "%s", dlerror());
    tilec_plugin_query_fn q = (tilec_plugin_query_fn)(uintptr_t)dlsym(h, TILEC_PLUGIN_QUERY_SYMBOL);
    cr_assert_not_null(q);
    tilec_plugin_host_t host = {sizeof host, TILEC_ABI_MAKE(1, 0), TILEC_ABI_MAKE(1, 0), 0, NULL,
                                NULL, NULL};
    uint32_t abi = 0;
    const tilec_plugin_t *t = NULL;
    cr_assert_eq(q(&host, &abi, &t), TILEC_PS_OK);
    cr_expect_str_eq(t->name, "cuda");
    cr_expect(t->caps & TILEC_CAP_GPU);
    cr_expect(t->caps & TILEC_CAP_EMIT_BINARY);
    tilec_pmodule_t *m = NULL;
    const char ir[] = "tileir 1.0\nkernel k {\n}\n";
    cr_expect_eq(t->compile(NULL, NULL, 0, NULL, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_expect_eq(t->compile(NULL, ir, sizeof ir - 1, NULL, NULL), TILEC_PS_INVALID_ARGUMENT);
    cr_expect_eq(t->compile(NULL, ir, sizeof ir - 1, NULL, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_expect(strstr(t->last_error(), "give an arch"), "%s", t->last_error());
    tilec_pcompile_options_t o = {.struct_size = sizeof o, .opt_level = 3, .arch = "sm_90"};
    cr_expect_eq(t->compile(NULL, "garbage", 7, &o, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_expect(strstr(t->last_error(), "bad tile IR"), "%s", t->last_error());
    cr_expect_null(m);
    const void *d = NULL;
    size_t n = 0;
    cr_expect_eq(t->module_data(NULL, TILEC_PDATA_SOURCE, &d, &n), TILEC_PS_INVALID_ARGUMENT);
    tilec_pmem_t *mem = NULL;
    cr_expect_eq(t->mem_alloc(NULL, TILEC_PMEM_DEVICE, 16, &mem), TILEC_PS_INVALID_ARGUMENT);
    cr_expect_eq(t->launch(NULL, NULL, NULL), TILEC_PS_INVALID_ARGUMENT);
    cr_expect_eq(t->device_info(0, NULL), TILEC_PS_INVALID_ARGUMENT);
    t->module_free(NULL);
    t->mem_free(NULL, NULL);
    t->device_close(NULL);
    uint32_t count = 99;
    tilec_pstatus_t st = t->device_count(&count);
    if (st != TILEC_PS_OK) {
        cr_expect_eq(st, TILEC_PS_UNAVAILABLE);
        cr_expect_eq(count, 0u);
        cr_expect(strstr(t->last_error(), "cuda: "), "%s", t->last_error());
    }
    dlclose(h);
}

static char *slurp_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

/* float8 operands, both K-major (B given as [N, K]): one m64n64k32 wgmma
 * per 32 of K from 128-byte-swizzled shared memory, without the transpose
 * immediates the PTX ISA leaves out for 8-bit types; TMA fills the rings */
Test(cuda, fp8_gemm_uses_k32_wgmma_on_sm_90a)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    char *text = slurp_file("examples/gemm_fp8.py");
    cr_assert_eq(compile_src(ctx, text, "sm_90a", &p, &e), TILEC_OK, "%s", tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "on wgmma.m64nNk32.e4m3.f32: 1 x 1 warpgroups of 64 x 64, C in registers"), "no fp8 wgmma");
    cr_expect(strstr(src, "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3"), "no m64n64k32");
    cr_expect(strstr(src, "p, 1, 1; }"), "8-bit wgmma takes no transpose immediates");
    cr_expect_null(strstr(src, "p, 1, 1, 0"), "transpose immediates on an 8-bit wgmma");
    cr_expect(strstr(src, "tc_k0 += 32"), "K not stepped by 32");
    cr_expect(strstr(src, "16u, 1024u, 1)"), "K-major 128-byte-swizzle descriptors expected");
    size_t blen = 0;
    const void *bin = tilec_executable_binary(e, &blen);
    cr_expect(is_cubin(bin, blen), "no cubin");
    free(text);
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* Integer division and modulo: the unsigned C operator where the dividend
 * is proved >= 0 (the loop variable's range), the floor helpers where it
 * may be negative (i - 3 at i = 0: floor semantics, -2 and 2) */
Test(cuda, int_division_unsigned_only_where_the_dividend_is_nonnegative)
{
    static const char src[] =
        "import tilelang.language as T\n"
        "def k(N=100):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((N,), \"int32\"), B: T.Tensor((N,), \"int32\")):\n"
        "        with T.Kernel(1, threads=128) as bx:\n"
        "            for i in T.Parallel(N):\n"
        "                B[i] = A[(i + 3) // 7] + (i - 3) // 2 + (i - 3) % 5\n"
        "    return main\n";
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(compile_src(ctx, src, "sm_90a", &p, &e), TILEC_OK, "%s", tilec_context_message(ctx));
    const char *s = tilec_executable_source(e, NULL);
    cr_expect(strstr(s, ") / 7u)"), "(i + 3) // 7 not an unsigned division:\n%s", s);
    cr_expect(strstr(s, "tc_fdiv_i32(") && strstr(s, ", 2)"), "(i - 3) // 2 not through the floor helper");
    cr_expect(strstr(s, "tc_fmod_i32(") && strstr(s, ", 5)"), "(i - 3) %% 5 not through the floor helper");
    cr_expect_null(strstr(s, " / 2u)"), "a dividend that may be negative divided unsigned");
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* T.im2col's gather and the filter copy through a re-view: one 16-byte
 * cp.async per 8 channels, zeros at the padding, in the pipeline's rings */
Test(cuda, conv2d_gathers_move_16_bytes_asynchronously)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    char *src = example_source(ctx, "examples/conv2d.py", "sm_90a", NULL, 0);
    const char *g = strstr(src, "/* gathered copy Data -> A_shared, 8 elements at a time, zeros where the condition fails */");
    cr_expect(g, "no gathered copy of the image");
    /* one cp.async of 16 bytes, or of 0 (16 zeros) at the padding: no branch; the image (2 x 10 x 12 x 32 elements)
       addressed by its base and a 32-bit offset */
    cr_expect(g && strstr(g, "tl_cp_async_zo<16>("), "the gather is not a 16-byte cp.async with zero fill");
    cr_expect(g && strstr(g, "]), b0, ((((unsigned int)("), "the image's offset not 32-bit");
    cr_expect_null(strstr(src, "const float tc_z = 0.0f;"), "scalar zero stores at the padding");
    /* the groups of a thread (64 x 32 elements in groups of 8 over 128 threads): a loop of constant trip
       count, the channel offset the thread's own, the row the loop's */
    cr_expect(strstr(src, "for (int tc_j0 = 0; tc_j0 < 2; tc_j0++) {"), "the gather's groups not in a constant-trip loop");
    cr_expect(strstr(src, "const int v4 = (int)(tc_q0 % 4) * 8; tc_q0 /= 4; /* i_view_1 */"), "channel offset not the thread's");
    cr_expect(strstr(src, "const int v3 = (int)(tc_q0 + tc_j0 * 32); /* i_view */"), "row not tid / 4 + 32 j");
    /* the filter bank Wt[(y / 32) / 3, (y / 32) % 3, y % 32, f] through its (288, 40) re-view: y * 40 + f */
    cr_expect(strstr(src, "b1, ((unsigned int)(((((v9) * (32))) + (v5))) * 40 + (unsigned int)("),
              "the filter's offset not folded to its flat index");
    cr_expect(strstr(src, "tl_cp_wait<"), "no pipeline waits");
    free(src);
    tilec_context_destroy(ctx);
}

/* The epilogue through conv2d's re-view `out`: neighbouring accumulator
 * registers (columns c, c + 1 of a row) stored as one 4-byte vector where
 * both stores happen and the offset is even, else one by one; the cast to
 * float16 left to the store (one rounding, not three conversions) */
Test(cuda, conv2d_epilogue_stores_register_pairs)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    char *src = example_source(ctx, "examples/conv2d.py", "sm_90a", NULL, 0);
    const char *g = strstr(src, "{ /* acc registers 0, 1: one vector of 2 where both are stored */");
    cr_expect(g, "registers 0 and 1 of acc not paired");
    cr_expect(g && strstr(g, "if (tc_p"), "no run-time test of the pair");
    cr_expect(g && strstr(g, "*(tl_vec<tl_u16, 2> *)(tc_vp) = "), "the pair is not one 4-byte store");
    cr_expect(strstr(src, "acc registers 30, 31: one vector of 2"), "the last pair (32 registers a thread) missing");
    cr_expect_null(strstr(src, "/* acc register 1 */"), "a register stored on its own");
    cr_expect_null(strstr(src, "tl_f2h(tl_h2f("), "the cast to float16 rounds twice");
    free(src);
    tilec_context_destroy(ctx);
}

/* TILEC_CUDA_SOURCE: the printed source, edited, is what NVRTC compiles
 * (and what the executable reports); a file that cannot be read is a
 * compile error naming it */
Test(cuda, source_override_compiles_the_edited_file)
{
    tilec_context_t *ctx = cuda_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(compile_src(ctx, gemm_src, "sm_90a", &p, &e), TILEC_OK, "%s", tilec_context_message(ctx));
    const char *printed = tilec_executable_source(e, NULL);
    char path[] = "/tmp/tilec_cuda_source_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "// edited by hand\n%s", printed);
    fclose(f);
    tilec_executable_free(e);
    tilec_program_free(p);
    setenv("TILEC_CUDA_SOURCE", path, 1);
    tilec_status_t st = compile_src(ctx, gemm_src, "sm_90a", &p, &e);
    cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(!strncmp(src, "// edited by hand\n", 18), "the executable's source is not the file's");
    size_t n = 0;
    const void *bin = tilec_executable_binary(e, &n);
    cr_expect(is_cubin(bin, n), "the edited source did not compile to a cubin");
    tilec_executable_free(e);
    tilec_program_free(p);
    unlink(path);
    st = compile_src(ctx, gemm_src, "sm_90a", &p, &e);
    unsetenv("TILEC_CUDA_SOURCE");
    cr_expect_neq(st, TILEC_OK, "a missing TILEC_CUDA_SOURCE file compiled");
    cr_expect(strstr(tilec_context_message(ctx), "TILEC_CUDA_SOURCE") && strstr(tilec_context_message(ctx), path),
              "the error does not name the variable and the file: %s", tilec_context_message(ctx));
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}
