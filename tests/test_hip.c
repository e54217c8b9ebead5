/*
 * tests/test_hip.c — the HIP backend without an AMD GPU: hiprtc compiles
 * kernels into AMDGPU code objects for CDNA (gfx90a, wave64) and RDNA
 * (gfx1030, wave32) through the public API's compile-only context; T.gemm
 * goes to MFMA on gfx90a and to the kit's FMA tiles on gfx1030; a
 * processor this hiprtc does not know is refused with a message (ROCm
 * 5.2's hiprtc would abort the process); the lowering passes accept the
 * target descriptions (--emit lowered picks the MFMA instruction and the
 * wavefront); the runtime's absence is a reason, not a crash.
 *
 * Needs build/libtilec-hip.so (TILEC_BUILD_DIR) and hiprtc (Debian:
 * libamdhip64-dev); without hiprtc the compile tests skip, unless
 * TILEC_REQUIRE_HIP=1 (CI installs it), where that is a failure.  Every
 * example and conformance case is compiled by tests/run.sh (hip lines).
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tilec/tilec.h"

static char plugin_path[PATH_MAX];

static void setup(void)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    snprintf(plugin_path, sizeof plugin_path, "%s/libtilec-hip.so", b && *b ? b : "build");
    cr_assert_eq(setenv("TILEC_PLUGIN_PATH", plugin_path, 1), 0);
    setenv("TILEC_CACHE", "0", 1);
    unsetenv("TILEC_BACKEND");
}

/* The compile-every-example tests run hiprtc over every example and
 * language program for one arch; on a 2-core machine shared with other
 * builds that passed 300 s.  The limit is there to catch a hang. */
TestSuite(hip, .init = setup, .timeout = 900);

static tilec_context_t *hip_ctx(int *has_device)
{
    tilec_context_t *ctx = NULL;
    tilec_status_t st = tilec_context_create("hip", &ctx);
    cr_assert_not_null(ctx);
    cr_assert(st == TILEC_OK || st == TILEC_E_UNAVAILABLE, "status %d: %s", (int)st, tilec_context_message(ctx));
    cr_assert_str_eq(tilec_context_backend(ctx), "hip", "%s", tilec_context_message(ctx));
    if (has_device)
        *has_device = st == TILEC_OK;
    return ctx;
}

static void no_hiprtc(const char *why)
{
    const char *req = getenv("TILEC_REQUIRE_HIP");
    if (req && !strcmp(req, "1"))
        cr_assert_fail("hiprtc is required (TILEC_REQUIRE_HIP=1) but missing: %s", why);
    cr_skip_test("no hiprtc on this machine: %s", why);
}

static tilec_status_t compile_src(tilec_context_t *ctx, const char *src, const char *arch, tilec_program_t **prog,
                                  tilec_executable_t **exe)
{
    tilec_status_t st = tilec_program_load_string(ctx, "t.py", src, strlen(src), NULL, 0, NULL, prog);
    cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
    st = tilec_program_compile_for(ctx, *prog, arch, exe);
    if (st != TILEC_OK && strstr(tilec_context_message(ctx), "hiprtc not found"))
        no_hiprtc(tilec_context_message(ctx));
    return st;
}

/* An AMDGPU ELF code object (EM_AMDGPU = 224). */
static int is_code_object(const void *data, size_t len)
{
    const unsigned char *p = data;
    return p && len > 64 && memcmp(p, "\177ELF", 4) == 0 && p[18] == 224;
}

/* The source of src compiled for arch, which must give an AMDGPU code
 * object (malloc'd). */
static char *hip_source(const char *src, const char *arch)
{
    tilec_context_t *ctx = hip_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(compile_src(ctx, src, arch, &p, &e), TILEC_OK, "%s: %s", arch, tilec_context_message(ctx));
    size_t blen = 0;
    const void *bin = tilec_executable_binary(e, &blen);
    cr_expect(is_code_object(bin, blen), "%s: %zu bytes, not an AMDGPU code object", arch, blen);
    char *out = strdup(tilec_executable_source(e, NULL));
    cr_assert_not_null(out);
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
    return out;
}

static const char add_src[] =
    "import tilelang.language as T\n"
    "def add(N=1000, dtype=\"float32\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):\n"
    "        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:\n"
    "            for i in T.Parallel(128):\n"
    "                C[bx * 128 + i] = A[bx * 128 + i] + B[bx * 128 + i]\n"
    "    return main\n";

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
    "            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):\n"
    "                T.copy(A[by * 64, k * 32], As)\n"
    "                T.copy(B[k * 32, bx * 64], Bs)\n"
    "                T.gemm(As, Bs, Cl)\n"
    "            T.copy(Cl, C[by * 64, bx * 64])\n"
    "    return main\n";

Test(hip, runtime_absence_is_a_reason)
{
    int dev = 1;
    tilec_context_t *ctx = hip_ctx(&dev);
    if (!dev) {
        const char *m = tilec_context_message(ctx);
        cr_expect(strstr(m, "no AMD GPU") || strstr(m, "not found"), "reason: %s", m);
    }
    tilec_context_destroy(ctx);
}

Test(hip, elementwise_compiles_for_cdna_and_rdna)
{
    static const char *const archs[] = {"gfx90a", "gfx1030", "gfx90a:sramecc+:xnack-"};
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        char *src = hip_source(add_src, archs[i]);
        cr_expect(strstr(src, "extern \"C\" __global__ void __launch_bounds__(128) tilec_kernel"), "%s: no kernel",
                  archs[i]);
        free(src);
    }
}

/* CDNA: the gemm is on MFMA, as the lowering passes planned it (2
 * wavefronts side by side, each 2 x 1 tiles of 32 x 32), its accumulator
 * in registers in the instruction's layout, so LDS holds only the two
 * operand tiles; RDNA2 has no matrix cores: the kit's FMA tiles. */
Test(hip, gemm_on_mfma_for_cdna_fma_for_rdna2)
{
    char *src = hip_source(gemm_src, "gfx90a");
    cr_expect(strstr(src, "on mfma.f32.32x32x8f16: 1 x 2 wavefronts of 2 x 1 tiles, C in registers"),
              "no MFMA gemm:\n%s", src);
    cr_expect(strstr(src, "tc_acc1 = __builtin_amdgcn_mfma_f32_32x32x8f16(tc_a1, tc_b0, tc_acc1, 0, 0, 0)"),
              "no MFMA call");
    /* lane l holds row l % 32 and k values (l / 32) * 4 .. + 3 */
    cr_expect(strstr(src, "tc_ar = tc_wm + tc_lane % 32") && strstr(src, "tc_ak = ((tc_lane / 32) % 2) * 4"),
              "operand lanes");
    /* accumulator register 5 of tile 0 is register 5 of the fragment:
     * row 4 (lane / 32) % 2 + 9, column lane % 32 of the wavefront's tile */
    cr_expect(strstr(src, "tc_acc0[5] = b5_5;") && strstr(src, "b5_5 = tc_acc0[5];"), "accumulator registers");
    cr_expect(strstr(src, "const int tc_f5_0 = ((tc_tid / 32) % 2) * 4;") &&
                  strstr(src, "(tc_f5_0 + 9)) * 128 + (tc_r6_1 + (long long)tc_f5_1))] = (_Float16)(b5_5);"),
              "accumulator layout of register 5");
    cr_expect(strstr(src, "tc_smem[8192]"), "LDS beyond the operand tiles");
    free(src);
    src = hip_source(gemm_src, "gfx1030");
    cr_expect_null(strstr(src, "__builtin_amdgcn_mfma"), "MFMA on RDNA2");
    cr_expect(strstr(src, "(registers, 32 per thread) */"), "no FMA-tile gemm in registers");
    free(src);
}

/* An accumulator the registers cannot serve (a column sum reads it along
 * dim 0) is demoted to LDS by layout inference: the gemm stays on MFMA,
 * reading and writing C where the shared-memory plan put it. */
static const char gemm_colsum_src[] =
    "import tilelang.language as T\n"
    "def mm(M=128, N=128, K=64, dtype=\"float16\"):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), S: T.Tensor((N,), \"float32\")):\n"
    "        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):\n"
    "            As = T.alloc_shared((64, 32), dtype)\n"
    "            Bs = T.alloc_shared((32, 64), dtype)\n"
    "            Cl = T.alloc_fragment((64, 64), \"float32\")\n"
    "            Cs = T.alloc_fragment((64,), \"float32\")\n"
    "            T.clear(Cl)\n"
    "            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):\n"
    "                T.copy(A[by * 64, k * 32], As)\n"
    "                T.copy(B[k * 32, bx * 64], Bs)\n"
    "                T.gemm(As, Bs, Cl)\n"
    "            T.reduce_sum(Cl, Cs, dim=0)\n"
    "            for j in T.Parallel(64):\n"
    "                T.atomic_add(S[bx * 64 + j], Cs[j])\n"
    "    return main\n";

Test(hip, mfma_with_the_accumulator_in_lds)
{
    char *src = hip_source(gemm_colsum_src, "gfx90a");
    cr_expect(strstr(src, "on mfma.f32.32x32x8f16: 1 x 2 wavefronts of 2 x 1 tiles, C in memory"), "%s", src);
    /* register 5 of tile 1: row 32 + 4 (lane / 32) % 2 + 9 of the wavefront's rows */
    cr_expect(strstr(src, "tc_acc1[5] = b5[(long long)(tc_wm + 32 + ((((tc_lane) / 32) % 2) * 4 + 9)) * 64 + tc_wn + 0 + "
                          "(((tc_lane) % 32))];"),
              "accumulator layout in LDS");
    free(src);
}

/* ROCm 5.2's hiprtc aborts the process on gfx942 or gfx1100: the plugin
 * must refuse them (or, with a newer hiprtc, compile them). */
Test(hip, unknown_processor_is_refused_not_a_crash)
{
    static const char *const archs[] = {"gfx942", "gfx1100"};
    tilec_context_t *ctx = hip_ctx(NULL);
    for (size_t i = 0; i < 2; i++) {
        tilec_program_t *p = NULL;
        tilec_executable_t *e = NULL;
        tilec_status_t st = compile_src(ctx, gemm_src, archs[i], &p, &e);
        if (st == TILEC_OK) {
            size_t blen = 0;
            const void *bin = tilec_executable_binary(e, &blen);
            cr_expect(is_code_object(bin, blen));
            tilec_executable_free(e);
        } else {
            cr_expect(strstr(tilec_context_message(ctx), "cannot compile for") &&
                          strstr(tilec_context_message(ctx), "gfx90a"),
                      "%s: %s", archs[i], tilec_context_message(ctx));
        }
        tilec_program_free(p);
    }
    tilec_context_destroy(ctx);
}

Test(hip, bad_arch_is_a_message)
{
    tilec_context_t *ctx = hip_ctx(NULL);
    static const char *const bad[] = {"sm_90", "gfx", "gfx90a:xnack", "gfxzzz", "gfx90a:"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tilec_program_t *p = NULL;
        tilec_executable_t *e = NULL;
        cr_expect_neq(compile_src(ctx, add_src, bad[i], &p, &e), TILEC_OK, "%s accepted", bad[i]);
        cr_expect(strstr(tilec_context_message(ctx), "bad target"), "%s: %s", bad[i], tilec_context_message(ctx));
        tilec_program_free(p);
    }
    tilec_context_destroy(ctx);
}

/* The descriptions pass the lowering driver's checks (MFMA and WMMA
 * accumulator modes tile their instruction exactly); the gemm_warp pass
 * picks the family's instruction. */
Test(hip, lowering_reads_the_target_descriptions)
{
    static const struct { const char *arch, *want; } cases[] = {
        {"gfx90a", "mfma.f32.32x32x8f16"}, {"gfx942", "mfma.f32.32x32x8f16"},
        {"gfx908", "mfma.f32.32x32x8f16"}, {"gfx1100", "wmma.f32.16x16x16f16"},
        {"gfx1030", "\"simt\""},
    };
    tilec_context_t *ctx = hip_ctx(NULL);
    tilec_program_t *p = NULL;
    cr_assert_eq(tilec_program_load_string(ctx, "t.py", gemm_src, strlen(gemm_src), NULL, 0, NULL, &p), TILEC_OK,
                 "%s", tilec_context_message(ctx));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tilec_compile_options_t o;
        memset(&o, 0, sizeof o);
        o.arch = cases[i].arch;
        char *text = NULL;
        size_t len = 0;
        cr_assert_eq(tilec_program_lower(ctx, p, &o, &text, &len), TILEC_OK, "%s: %s", cases[i].arch,
                     tilec_context_message(ctx));
        cr_expect(strstr(text, cases[i].want), "%s: no %s in\n%s", cases[i].arch, cases[i].want, text);
        free(text);
    }
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* A lowered module (IR 1.1, what --emit lowered prints) is printed as it
 * is: the plugin reads IR 1.1 and compiles it with the passes' decisions. */
Test(hip, a_lowered_module_compiles_as_it_is)
{
    tilec_context_t *ctx = hip_ctx(NULL);
    tilec_program_t *p = NULL, *q = NULL;
    cr_assert_eq(tilec_program_load_string(ctx, "t.py", gemm_src, strlen(gemm_src), NULL, 0, NULL, &p), TILEC_OK,
                 "%s", tilec_context_message(ctx));
    tilec_compile_options_t o;
    memset(&o, 0, sizeof o);
    o.arch = "gfx90a";
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(tilec_program_lower(ctx, p, &o, &text, &len), TILEC_OK, "%s", tilec_context_message(ctx));
    char path[] = "/tmp/tilec-hip-lowered-XXXXXX.tir";
    int fd = mkstemps(path, 4);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    tilec_status_t lst = tilec_program_load_file(ctx, path, NULL, 0, NULL, &q);
    unlink(path);
    cr_assert_eq(lst, TILEC_OK, "%s", tilec_context_message(ctx));
    tilec_executable_t *e = NULL;
    tilec_status_t st = tilec_program_compile_for(ctx, q, "gfx90a", &e);
    if (st != TILEC_OK && strstr(tilec_context_message(ctx), "hiprtc not found"))
        no_hiprtc(tilec_context_message(ctx));
    cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "C in registers"), "%s", src);
    tilec_executable_free(e);
    free(text);
    tilec_program_free(q);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* The kernel cache (the plugin shell's, shared with cuda): a second
 * compile of the same kernel is a hit; a damaged entry is refused,
 * removed and rebuilt, never loaded. */
static char *cli_compile(const char *dir, const char *out)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    char cmd[3 * PATH_MAX], log[PATH_MAX];
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(cmd, sizeof cmd,
             "TILEC_CACHE=1 TILEC_CACHE_DIR='%s/c' TILEC_LOG=compile '%s/tilec' compile examples/elementwise_add.py "
             "--backend hip --arch gfx90a --emit binary -o '%s' > '%s' 2>&1",
             dir, b && *b ? b : "build", out, log);
    int rc = system(cmd);
    FILE *f = fopen(log, "r");
    cr_assert_not_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    if (rc != 0 && strstr(text, "hiprtc not found"))
        no_hiprtc(text);
    cr_assert_eq(rc, 0, "%s", text);
    return text;
}

Test(hip, cache_hits_and_rebuilds_damaged_entries)
{
    char dir[] = "/tmp/tilec-hip-cache-XXXXXX", out[PATH_MAX], entry[PATH_MAX] = "", cmd[2 * PATH_MAX];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/add.hsaco", dir);
    cr_expect(strstr(cli_compile(dir, out), "hip: hiprtc gfx90a:"), "first compile did not run hiprtc");
    cr_expect(strstr(cli_compile(dir, out), "hip: cache hit"), "second compile missed the cache");
    glob_t gl;
    snprintf(cmd, sizeof cmd, "%s/c/hip-*.hsaco", dir);
    cr_assert_eq(glob(cmd, 0, NULL, &gl), 0, "no hip-*.hsaco entry");
    cr_expect_eq(gl.gl_pathc, 1);
    snprintf(entry, sizeof entry, "%s", gl.gl_pathv[0]);
    globfree(&gl);
    FILE *f = fopen(entry, "r+b");
    cr_assert_not_null(f);
    fseek(f, 100, SEEK_SET);
    fputc(0x5a, f); /* one byte of the code object changed, the trailer kept */
    fclose(f);
    const char *log = cli_compile(dir, out);
    cr_expect(strstr(log, "rejected") && !strstr(log, "cache hit"), "damaged entry used:\n%s", log);
    cr_expect(strstr(cli_compile(dir, out), "hip: cache hit"), "not rebuilt");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* ---- every example, and the code objects' instructions ------------------------ */

/* The '# tilec-test: -D NAME=VALUE ...' lines of a file (as tests/run.sh
 * reads them); at most 8 lines of 8 defines.  Returns the line count (0:
 * run with the defaults). */
typedef struct test_line {
    int n;
    char buf[512];
    tilec_define_kv_t kv[8];
} test_line_t;

static int test_lines(const char *path, test_line_t *lines, int max)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char l[600];
    int n = 0;
    while (n < max && fgets(l, sizeof l, f)) {
        if (strncmp(l, "# tilec-test:", 13) != 0)
            continue;
        test_line_t *t = &lines[n++];
        memset(t, 0, sizeof *t);
        snprintf(t->buf, sizeof t->buf, "%.500s", l + 13);
        char *save = NULL, *w = strtok_r(t->buf, " \t\n", &save);
        while (w && t->n < 8) {
            if (!strcmp(w, "-D") && (w = strtok_r(NULL, " \t\n", &save)) != NULL) {
                char *eq = strchr(w, '=');
                cr_assert_not_null(eq, "%s: bad define %s", path, w);
                *eq = '\0';
                t->kv[t->n].name = w;
                t->kv[t->n].value = eq + 1;
                t->n++;
            }
            w = strtok_r(NULL, " \t\n", &save);
        }
    }
    fclose(f);
    return n;
}

static void compile_examples(const char *arch)
{
    tilec_context_t *ctx = hip_ctx(NULL);
    glob_t gl;
    cr_assert_eq(glob("examples/*.py", 0, NULL, &gl), 0);
    int files = 0;
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        test_line_t lines[8];
        int nl = test_lines(gl.gl_pathv[i], lines, 8), ok = 0;
        for (int j = 0; j < (nl ? nl : 1); j++) {
            tilec_program_t *p = NULL;
            tilec_executable_t *e = NULL;
            tilec_status_t st = tilec_program_load_file(ctx, gl.gl_pathv[i], nl ? lines[j].kv : NULL,
                                                        nl ? lines[j].n : 0, NULL, &p);
            cr_assert_eq(st, TILEC_OK, "%s: %s", gl.gl_pathv[i], tilec_context_message(ctx));
            st = tilec_program_compile_for(ctx, p, arch, &e);
            if (st != TILEC_OK && strstr(tilec_context_message(ctx), "hiprtc not found")) {
                globfree(&gl);
                no_hiprtc(tilec_context_message(ctx));
            }
            cr_expect_eq(st, TILEC_OK, "%s line %d (%s): %s", gl.gl_pathv[i], j, arch, tilec_context_message(ctx));
            if (st == TILEC_OK) {
                size_t blen = 0;
                const void *bin = tilec_executable_binary(e, &blen);
                cr_expect(is_code_object(bin, blen), "%s line %d: no code object", gl.gl_pathv[i], j);
                ok++;
            }
            tilec_executable_free(e);
            tilec_program_free(p);
        }
        cr_expect_gt(ok, 0, "%s: no configuration compiles for %s", gl.gl_pathv[i], arch);
        files++;
    }
    globfree(&gl);
    cr_expect_geq(files, 15, "only %d examples", files);
    tilec_context_destroy(ctx);
}

Test(hip, every_example_compiles_for_gfx90a) { compile_examples("gfx90a"); }
Test(hip, every_example_compiles_for_gfx1030) { compile_examples("gfx1030"); }

/* The LLVM Debian's hipcc depends on (llvm-15) disassembles code objects. */
static const char *objdump(void)
{
    static const char *const cands[] = {"/usr/lib/llvm-15/bin/llvm-objdump", "/usr/lib/llvm-16/bin/llvm-objdump",
                                        "/usr/lib/llvm-17/bin/llvm-objdump", "/opt/rocm/llvm/bin/llvm-objdump"};
    const char *env = getenv("TILEC_LLVM_OBJDUMP");
    if (env && *env)
        return env;
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
        if (access(cands[i], X_OK) == 0)
            return cands[i];
    return NULL;
}

/* Disassembles the code object of path (with defines) for arch and counts
 * the lines naming insn. */
static int count_insn(const char *path, const tilec_define_kv_t *defs, int ndefs, const char *arch, const char *insn)
{
    const char *od = objdump();
    if (!od) {
        const char *req = getenv("TILEC_REQUIRE_HIP");
        if (req && !strcmp(req, "1"))
            cr_assert_fail("TILEC_REQUIRE_HIP=1 but no llvm-objdump (llvm-15) found");
        cr_skip_test("no llvm-objdump for AMDGPU code objects");
    }
    tilec_context_t *ctx = hip_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(tilec_program_load_file(ctx, path, defs, ndefs, NULL, &p), TILEC_OK, "%s", tilec_context_message(ctx));
    tilec_status_t st = tilec_program_compile_for(ctx, p, arch, &e);
    if (st != TILEC_OK && strstr(tilec_context_message(ctx), "hiprtc not found"))
        no_hiprtc(tilec_context_message(ctx));
    cr_assert_eq(st, TILEC_OK, "%s: %s", path, tilec_context_message(ctx));
    size_t blen = 0;
    const void *bin = tilec_executable_binary(e, &blen);
    char tmp[] = "/tmp/tilec-hip-XXXXXX";
    int fd = mkstemp(tmp);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, bin, blen), (ssize_t)blen);
    close(fd);
    char cmd[PATH_MAX + 200];
    snprintf(cmd, sizeof cmd, "%s -d --mcpu=%s %s", od, arch, tmp);
    FILE *pp = popen(cmd, "r");
    cr_assert_not_null(pp);
    char line[512];
    int n = 0, lines = 0;
    while (fgets(line, sizeof line, pp)) {
        lines++;
        if (strstr(line, insn))
            n++;
    }
    int rc = pclose(pp);
    unlink(tmp);
    cr_assert_eq(rc, 0, "%s failed", cmd);
    cr_assert_gt(lines, 10, "%s printed no disassembly", cmd);
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
    return n;
}

Test(hip, gemm_code_objects_hold_mfma_instructions)
{
    static const tilec_define_kv_t bf16[] = {{"dtype", "bfloat16"}};
    static const tilec_define_kv_t i8[] = {{"block_M", "64"}, {"block_N", "64"}};
    cr_expect_gt(count_insn("examples/gemm.py", NULL, 0, "gfx90a", "v_mfma_f32_32x32x8f16"), 0);
    cr_expect_gt(count_insn("examples/gemm.py", bf16, 1, "gfx90a", "v_mfma_f32_32x32x8bf16_1k"), 0);
    cr_expect_gt(count_insn("examples/gemm_int8.py", i8, 2, "gfx90a", "v_mfma_i32_32x32x8i8"), 0);
    /* 32 x 32 blocks over two wavefronts: the passes pick the 16 x 16 form */
    cr_expect_gt(count_insn("examples/gemm_int8.py", NULL, 0, "gfx90a", "v_mfma_i32_16x16x16i8"), 0);
    cr_expect_gt(count_insn("examples/gemm.py", NULL, 0, "gfx908", "v_mfma_f32_32x32x8f16"), 0);
    /* RDNA2 has no matrix cores: FMA tiles */
    cr_expect_eq(count_insn("examples/gemm.py", NULL, 0, "gfx1030", "v_mfma"), 0);
    cr_expect_gt(count_insn("examples/gemm.py", NULL, 0, "gfx1030", "v_fma"), 0);
}

/* Softmax's rows stay in registers, a row over the 64 lanes of a
 * wavefront (layout inference's rows over subgroups at the description's
 * wavefront), and its reductions combine those lanes with __shfl_xor at
 * the wavefront's width: no block-wide reduction tree, no lane exchange
 * in LDS, no barrier. */
Test(hip, softmax_rows_in_registers_across_the_wavefront)
{
    tilec_context_t *ctx = hip_ctx(NULL);
    tilec_program_t *p = NULL;
    tilec_executable_t *e = NULL;
    cr_assert_eq(tilec_program_load_file(ctx, "examples/softmax.py", NULL, 0, NULL, &p), TILEC_OK, "%s",
                 tilec_context_message(ctx));
    tilec_status_t st = tilec_program_compile_for(ctx, p, "gfx90a", &e);
    if (st != TILEC_OK && strstr(tilec_context_message(ctx), "hiprtc not found"))
        no_hiprtc(tilec_context_message(ctx));
    cr_assert_eq(st, TILEC_OK, "%s", tilec_context_message(ctx));
    const char *src = tilec_executable_source(e, NULL);
    cr_expect(strstr(src, "reduce max x -> row_max (registers, 64 lanes a row, shuffles)"),
              "no register reduction:\n%s", src);
    for (int m = 1; m <= 32; m *= 2) {
        char want[64];
        snprintf(want, sizeof want, "__shfl_xor(tc_acc, %d, 64)", m);
        cr_expect(strstr(src, want), "no %s:\n%s", want, src);
    }
    cr_expect_null(strstr(src, "tc_red_"), "an LDS reduction tree is left");
    cr_expect_null(strstr(src, "tc_smem"), "LDS is used (the lane exchange?):\n%s", src);
    cr_expect_null(strstr(src, "__syncthreads"), "a barrier is left");
    tilec_executable_free(e);
    tilec_program_free(p);
    tilec_context_destroy(ctx);
}

/* The shuffles are the wavefront's cross-lane instructions in the code
 * object (ds_bpermute_b32 on gfx9 and gfx10), and nothing waits at a
 * barrier. */
Test(hip, softmax_shuffles_in_the_code_object)
{
    cr_expect_gt(count_insn("examples/softmax.py", NULL, 0, "gfx90a", "ds_bpermute_b32"), 0);
    cr_expect_eq(count_insn("examples/softmax.py", NULL, 0, "gfx90a", "s_barrier"), 0);
    cr_expect_gt(count_insn("examples/softmax.py", NULL, 0, "gfx1030", "ds_bpermute_b32"), 0);
}

/* rmsnorm at N = 1000: rows of 1000 columns over 64 (32) lanes are
 * ragged rows over the wavefronts (the last registers of some lanes hold
 * nothing), so both 16 x 1000 float32 fragments stay in registers — in
 * LDS they need 130 KB of 64 — and the reduction skips the unheld
 * registers before the lanes shuffle. */
Test(hip, ragged_rows_stay_in_registers)
{
    static const tilec_define_kv_t defs[] = {{"dtype", "float16"}, {"N", "1000"}};
    static const char *const archs[] = {"gfx90a", "gfx1030"};
    for (int a = 0; a < 2; a++) {
        tilec_context_t *ctx = hip_ctx(NULL);
        tilec_program_t *p = NULL;
        tilec_executable_t *e = NULL;
        cr_assert_eq(tilec_program_load_file(ctx, "examples/rmsnorm.py", defs, 2, NULL, &p), TILEC_OK, "%s",
                     tilec_context_message(ctx));
        tilec_status_t st = tilec_program_compile_for(ctx, p, archs[a], &e);
        if (st != TILEC_OK && strstr(tilec_context_message(ctx), "hiprtc not found"))
            no_hiprtc(tilec_context_message(ctx));
        cr_assert_eq(st, TILEC_OK, "%s: %s", archs[a], tilec_context_message(ctx));
        const char *src = tilec_executable_source(e, NULL);
        char want[96];
        snprintf(want, sizeof want, "reduce sum sq -> sum_sq (registers, %d lanes a row, shuffles)", a ? 32 : 64);
        cr_expect(strstr(src, want), "%s: no %s:\n%s", archs[a], want, src);
        cr_expect(strstr(src, "< 1000) tc_acc = ((tc_acc) + (b"), "%s: no guard for unheld registers:\n%s", archs[a],
                  src);
        tilec_executable_free(e);
        tilec_program_free(p);
        tilec_context_destroy(ctx);
    }
}
