/*
 * tests/test_vulkan.c — the Vulkan backend (build/libtilec-vulkan.so).
 *
 * Three parts:
 *  - the plugin table, loaded with dlopen: devices (honest caps, a CPU
 *    device is no GPU), bad IR, device limits, a timed launch of a kernel
 *    with a T.dynamic symbol (push constant) at ragged lengths, the SPIR-V
 *    cache, UNAVAILABLE without a GLSL compiler and without a driver;
 *  - every examples/ and tests/lang/ program, once per `# tilec-test:` line:
 *    the GLSL the kit prints compiles with glslc (--emit binary), the
 *    SPIR-V passes spirv-val for its target environment, and `tilec run
 *    FILE ARGS --check --backend vulkan` agrees with the reference
 *    interpreter — under Khronos' validation layer, which must report
 *    nothing, where it is installed (CI installs it).
 * A program whose block-wide memory exceeds the device's (lavapipe has
 * 32 KiB; fragments the lowering cannot keep in registers live in shared
 * memory) must be refused with the message naming both sizes, never crash
 * or run wrong.
 *
 * Without a Vulkan device (no loader, no driver) or without glslc the
 * tests skip, unless TILEC_REQUIRE_VULKAN=1 (CI installs lavapipe and
 * glslc).  TILEC_BUILD_DIR names the build directory (default "build").
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilec/plugin.h"
#include "tilec/sdk.h"

static const char *build_dir(void)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    return b && *b ? b : "build";
}

static int required(void)
{
    const char *r = getenv("TILEC_REQUIRE_VULKAN");
    return r && strcmp(r, "1") == 0;
}

static void *so;
static const tilec_plugin_t *P;

static const tilec_plugin_t *query(const char *cache_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/libtilec-vulkan.so", build_dir());
    so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(so, "cannot load %s: %s", path, dlerror());
    tilec_plugin_query_fn q = (tilec_plugin_query_fn)dlsym(so, TILEC_PLUGIN_QUERY_SYMBOL);
    cr_assert_not_null(q);
    tilec_plugin_host_t h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    h.abi_min = TILEC_ABI_MAKE(1, 0);
    h.abi_max = TILEC_PLUGIN_ABI_VERSION;
    h.cache_dir = cache_dir;
    uint32_t abi = 0;
    const tilec_plugin_t *p = NULL;
    cr_assert_eq(q(&h, &abi, &p), TILEC_PS_OK);
    return p;
}

/* 0 with a device and glslc, -1 after skipping. */
static int load_plugin(const char *cache_dir)
{
    P = query(cache_dir);
    uint32_t n = 0;
    tilec_pstatus_t st = P->device_count(&n);
    int glslc = system("command -v glslc > /dev/null 2>&1") == 0;
    if (st != TILEC_PS_OK || n == 0 || !glslc) {
        cr_assert(!required(), "Vulkan required but unavailable: %s", glslc ? P->last_error() : "no glslc");
        cr_skip_test("Vulkan unavailable: %s", glslc ? P->last_error() : "no glslc");
        return -1;
    }
    return 0;
}

/* Y[i] = X[i] * 2 + 1 over a dynamic length m, through a shared tile. */
static const char *IR_SCALE =
    "tileir 1.0\n"
    "kernel scale {\n"
    "  var bx int32 block\n  var i int32 loop\n  var m int32 sym\n"
    "  param X global float32 [m]\n  param Y global float32 [m] out\n"
    "  alloc S shared float32 [64]\n"
    "  grid [bx = ((m + 63) // 64)]\n  threads 64 1 1\n"
    "  body {\n"
    "    copy X[(bx * 64) +: 64] -> S[0 +: 64]\n"
    "    for i in parallel(64) {\n"
    "      if (((bx * 64) + i) < m) {\n"
    "        store Y[((bx * 64) + i)] = ((S[i] * 2.0) + 1.0)\n"
    "      }\n"
    "    }\n"
    "  }\n}\n";

static tilec_pdevice_t *open0(void)
{
    tilec_pdevice_t *d = NULL;
    cr_assert_eq(P->device_open(0, &d), TILEC_PS_OK, "%s", P->last_error());
    return d;
}

Test(vulkan_plugin, table_and_devices)
{
    if (load_plugin(NULL))
        return;
    cr_assert_str_eq(P->name, "vulkan");
    uint32_t n = 0;
    cr_assert_eq(P->device_count(&n), TILEC_PS_OK);
    tilec_pdevice_info_t info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_OK, "%s", P->last_error());
    cr_assert(strncmp(info.platform, "Vulkan 1.", 9) == 0, "%s", info.platform);
    cr_assert(info.caps & TILEC_CAP_ATOMIC_FLOAT);
    cr_assert(info.caps & TILEC_CAP_DYNAMIC_SHAPE);
    cr_assert_eq(info.caps & TILEC_CAP_PRINT, 0, "T.print prints nothing on this backend");
    cr_assert_geq(info.shared_mem_bytes, 16384u); /* the Vulkan minimum */
    cr_assert_geq(info.max_threads, 128u);
    cr_assert_gt(info.compute_units, 0u);
    if (strstr(info.name, "llvmpipe"))
        cr_assert_eq(info.caps & TILEC_CAP_GPU, 0, "lavapipe must not claim to be a GPU");
    cr_assert_eq(P->device_info(n, &info), TILEC_PS_INVALID_ARGUMENT);
    /* properties from the plugin's one device description (the shell's
     * device_describe): its own keys, then what device_info holds */
    tilec_pvalue_t v;
    memset(&v, 0, sizeof v);
    v.struct_size = sizeof v;
    cr_assert_eq(P->device_property(0, TILEC_PROP_ARCH, &v), TILEC_PS_OK, "%s", P->last_error());
    cr_expect(v.kind == TILEC_PVAL_STR && strncmp(v.sval, "vulkan1.", 8) == 0, "arch %s", v.sval);
    cr_assert_eq(P->device_property(0, TILEC_PROP_SHARED_MEM_PER_BLOCK, &v), TILEC_PS_OK, "%s", P->last_error());
    cr_expect(v.kind == TILEC_PVAL_INT && v.ival == (int64_t)info.shared_mem_bytes);
    cr_assert_eq(P->device_property(0, TILEC_PROP_SHARED_MEM_PER_BLOCK_OPTIN, &v), TILEC_PS_OK);
    cr_expect_eq(v.ival, (int64_t)info.shared_mem_bytes);
    cr_expect_eq(P->device_property(0, 999, &v), TILEC_PS_UNSUPPORTED);
    cr_expect(strstr(P->last_error(), "unknown property key 999"), "%s", P->last_error());
}

Test(vulkan_plugin, bad_ir_and_limits)
{
    if (load_plugin(NULL))
        return;
    tilec_pdevice_t *d = open0();
    tilec_pmodule_t *m = NULL;
    const char *bad = "tileir 1.0\nkernel k { nonsense }\n";
    cr_assert_eq(P->compile(d, bad, strlen(bad), NULL, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_null(m);
    const char *big =
        "tileir 1.0\nkernel big {\n  var bx int32 block\n  param X global float32 [4]\n"
        "  alloc S shared float32 [4096, 4096]\n  grid [bx = 1]\n  threads 32 1 1\n"
        "  body {\n    copy X[0 +: 4] -> S[0, 0 +: 4]\n  }\n}\n";
    cr_assert_eq(P->compile(d, big, strlen(big), NULL, &m), TILEC_PS_UNSUPPORTED);
    /* refused by the lowering's shared-memory plan, naming both sizes */
    cr_assert(strstr(P->last_error(), "shared memory: the kernel needs 67108864 bytes, the target allows"), "%s",
              P->last_error());
    const char *wide =
        "tileir 1.0\nkernel wide {\n  var bx int32 block\n  param X global float32 [4]\n"
        "  grid [bx = 1]\n  threads 1024 64 1\n  body {\n    fill X[0 +: 4] = 1.0\n  }\n}\n";
    cr_assert_eq(P->compile(d, wide, strlen(wide), NULL, &m), TILEC_PS_UNSUPPORTED);
    cr_assert(strstr(P->last_error(), "threads=65536 per block: the target allows 1.."), "%s", P->last_error());
    P->device_close(d);
}

static void run_scale(tilec_pdevice_t *d, tilec_pmodule_t *m, int64_t len, int timed)
{
    size_t bytes = (size_t)len * 4;
    float *x = malloc(bytes), *y = malloc(bytes);
    for (int64_t i = 0; i < len; i++)
        x[i] = (float)i * 0.5f - 3.0f;
    tilec_pmem_t *bx = NULL, *by = NULL;
    cr_assert_eq(P->mem_alloc(d, TILEC_PMEM_DEVICE, bytes, &bx), TILEC_PS_OK, "%s", P->last_error());
    cr_assert_eq(P->mem_alloc(d, TILEC_PMEM_DEVICE, bytes, &by), TILEC_PS_OK, "%s", P->last_error());
    cr_assert_eq(P->mem_write(d, bx, 0, x, bytes), TILEC_PS_OK, "%s", P->last_error());
    tilec_pmem_t *args[2] = {bx, by};
    double ms = -1;
    tilec_plaunch_t a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.nargs = 2;
    a.args = args;
    a.nsyms = 1;
    a.syms = &len;
    a.timed = timed;
    a.elapsed_ms = &ms;
    cr_assert_eq(P->launch(d, m, &a), TILEC_PS_OK, "%s", P->last_error());
    if (timed)
        cr_assert_geq(ms, 0.0);
    cr_assert_eq(P->mem_read(d, by, 0, y, bytes), TILEC_PS_OK, "%s", P->last_error());
    for (int64_t i = 0; i < len; i++)
        cr_assert_float_eq(y[i], x[i] * 2.0f + 1.0f, 1e-6, "y[%lld] = %g", (long long)i, y[i]);
    int64_t toolong = len + 100;
    a.syms = &toolong;
    cr_assert_eq(P->launch(d, m, &a), TILEC_PS_INVALID_ARGUMENT);
    P->mem_free(d, bx);
    P->mem_free(d, by);
    free(x);
    free(y);
}

Test(vulkan_plugin, launch_timed_ragged_and_source)
{
    if (load_plugin(NULL))
        return;
    tilec_pdevice_t *d = open0();
    tilec_pmodule_t *m = NULL;
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m), TILEC_PS_OK, "%s", P->last_error());
    const void *src = NULL, *bin = NULL;
    size_t n = 0, nb = 0;
    cr_assert_eq(P->module_data(m, TILEC_PDATA_SOURCE, &src, &n), TILEC_PS_OK);
    cr_assert(strstr(src, "#version 450"), "%s", (const char *)src);
    cr_assert(strstr(src, "layout(std430, set = 0, binding = 1) buffer"), "%s", (const char *)src);
    cr_assert(strstr(src, "layout(push_constant) uniform"), "%s", (const char *)src);
    cr_assert(strstr(src, "shared float b2[64];"), "%s", (const char *)src);
    cr_assert(strstr(src, "barrier();"), "%s", (const char *)src);
    cr_assert_eq(P->module_data(m, TILEC_PDATA_BINARY, &bin, &nb), TILEC_PS_OK);
    cr_assert(nb > 20 && ((const uint32_t *)bin)[0] == 0x07230203u, "not SPIR-V");
    run_scale(d, m, 130, 1);
    run_scale(d, m, 1, 0);
    run_scale(d, m, 64, 0);
    P->module_free(m);
    P->device_close(d);
}

Test(vulkan_plugin, spirv_cache)
{
    char dir[] = "/tmp/tilec-vk-cache-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    if (load_plugin(dir)) {
        rmdir(dir);
        return;
    }
    tilec_pdevice_t *d = open0();
    tilec_pmodule_t *m1 = NULL, *m2 = NULL;
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m1), TILEC_PS_OK, "%s", P->last_error());
    DIR *dd = opendir(dir);
    struct dirent *de;
    int entries = 0;
    char path[4096] = "";
    while ((de = readdir(dd)) != NULL)
        if (strncmp(de->d_name, "vulkan-", 7) == 0) {
            entries++;
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        }
    closedir(dd);
    cr_assert_eq(entries, 1);
    /* the second compile needs no glslc: none is found, it still works */
    setenv("TILEC_GLSLC", "/nonexistent/glslc", 1);
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m2), TILEC_PS_OK, "%s", P->last_error());
    run_scale(d, m2, 200, 0);
    /* a corrupt entry is refused; without a compiler that is "unavailable" */
    cr_assert_eq(tilec_sdk_cache_write(path, "garbage", 7), 0);
    tilec_pmodule_t *m3 = NULL;
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m3), TILEC_PS_UNAVAILABLE);
    cr_assert(strstr(P->last_error(), "no GLSL compiler (install glslc"), "%s", P->last_error());
    unsetenv("TILEC_GLSLC");
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m3), TILEC_PS_OK, "%s", P->last_error());
    run_scale(d, m3, 77, 0);
    P->module_free(m1);
    P->module_free(m2);
    P->module_free(m3);
    P->device_close(d);
    unlink(path);
    rmdir(dir);
}

Test(vulkan_plugin, no_driver_is_unavailable)
{
    /* each Criterion test is its own process: the loader reads this first */
    setenv("VK_ICD_FILENAMES", "/nonexistent-tilec-icd.json", 1);
    setenv("VK_DRIVER_FILES", "/nonexistent-tilec-icd.json", 1);
    P = query(NULL);
    uint32_t n = 7;
    cr_assert_eq(P->device_count(&n), TILEC_PS_UNAVAILABLE);
    cr_assert_eq(n, 0);
    const char *e = P->last_error();
    cr_assert(strstr(e, "vulkan: ") && (strstr(e, "no Vulkan") || strstr(e, "vkCreateInstance") ||
                                         strstr(e, "libvulkan")),
              "%s", e);
    tilec_pdevice_t *d = NULL;
    cr_assert_eq(P->device_open(0, &d), TILEC_PS_UNAVAILABLE);
}

/* ---- every example and language program ------------------------------------------------- */

typedef struct prog_case {
    char file[256];
    char args[256];
} prog_case_t;

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every .py of dir, once per "# tilec-test:" line, appended to cs. */
static void add_dir(prog_case_t *cs, size_t *n, size_t cap, const char *dir)
{
    char *names[512];
    int nn = 0;
    DIR *dd = opendir(dir);
    struct dirent *de;
    while (dd && (de = readdir(dd)) != NULL && nn < 512) {
        size_t l = strlen(de->d_name);
        if (l > 3 && strcmp(de->d_name + l - 3, ".py") == 0)
            names[nn++] = strdup(de->d_name);
    }
    if (dd)
        closedir(dd);
    qsort(names, (size_t)nn, sizeof names[0], cmp_name);
    for (int i = 0; i < nn; i++) {
        char file[256], buf[240];
        snprintf(file, sizeof file, "%s/%s", dir, names[i]);
        free(names[i]);
        FILE *f = fopen(file, "r");
        int lines = 0;
        while (f && fgets(buf, sizeof buf, f) && *n < cap) {
            if (strncmp(buf, "# tilec-test:", 13) != 0)
                continue;
            buf[strcspn(buf, "\n")] = '\0';
            snprintf(cs[*n].file, sizeof cs[*n].file, "%s", file);
            snprintf(cs[*n].args, sizeof cs[*n].args, "%s", buf + 13);
            (*n)++;
            lines++;
        }
        if (f)
            fclose(f);
        if (!lines && *n < cap) {
            snprintf(cs[*n].file, sizeof cs[*n].file, "%s", file);
            cs[*n].args[0] = '\0';
            (*n)++;
        }
    }
}

static prog_case_t *all_programs(size_t *n)
{
    enum { CAP = 512 };
    prog_case_t *cs = cr_malloc(sizeof *cs * CAP);
    *n = 0;
    add_dir(cs, n, CAP, "examples");
    add_dir(cs, n, CAP, "tests/lang");
    return cs;
}

/* Runs cmd, its output in out; the exit status. */
static int run(const char *cmd, char *out, size_t outlen)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t len = fread(out, 1, outlen - 1, p);
    out[len] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A refusal for the device's block-wide memory: the one failure a program
 * of this repository may have here (exit status 3, both sizes named). */
static int shared_limit(int rc, const char *out)
{
    return rc == 3 && ((strstr(out, "bytes of shared/fragment memory per block") && strstr(out, "(use smaller tiles)")) ||
                       (strstr(out, "lower: smem: shared memory: the kernel needs") && strstr(out, "the target allows")));
}

/* spirv-val's environment for a module's SPIR-V version (header word 1). */
static const char *spirv_env(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint32_t h[2] = {0, 0};
    if (f) {
        if (fread(h, 4, 2, f) != 2)
            h[1] = 0;
        fclose(f);
    }
    uint32_t minor = h[1] >> 8 & 0xffu;
    return minor >= 6 ? "vulkan1.3" : minor >= 5 ? "vulkan1.2" : "vulkan1.1";
}

ParameterizedTestParameters(vulkan_programs, glsl_valid_and_run_check)
{
    size_t n;
    prog_case_t *cs = all_programs(&n);
    return cr_make_param_array(prog_case_t, cs, n);
}

/* The kit's GLSL compiles (glslc), its SPIR-V validates (spirv-val), and
 * the program computes what the reference interpreter computes; the run
 * takes the SPIR-V from the cache the compile filled. */
ParameterizedTest(prog_case_t *c, vulkan_programs, glsl_valid_and_run_check)
{
    if (load_plugin(NULL))
        return;
    char spv[] = "/tmp/tilec-vk-XXXXXX.spv";
    int fd = mkstemps(spv, 4);
    cr_assert_geq(fd, 0);
    close(fd);
    char cache[4096], cmd[8192], out[16384];
    snprintf(cache, sizeof cache, "%s/tests/vulkan-cache", build_dir());
    /* the args come from this repository's files (-D NAME=VALUE) */
    snprintf(cmd, sizeof cmd,
             "TILEC_CACHE_DIR='%s' '%s/tilec' compile '%s' %s --backend vulkan --emit binary -o '%s' 2>&1", cache,
             build_dir(), c->file, c->args, spv);
    int rc = run(cmd, out, sizeof out);
    if (rc != 0) {
        unlink(spv);
        if (strstr(out, "uses a 4-bit dtype")) { /* 1.3's 4-bit dtypes: the plugin refuses them (shown) */
            fprintf(stderr, "not supported on vulkan (4-bit dtypes): %s%s\n", c->file, c->args);
            return;
        }
        cr_assert(shared_limit(rc, out), "%s%s: exit %d\n%s", c->file, c->args, rc, out);
        return;
    }
    snprintf(cmd, sizeof cmd, "spirv-val --target-env %s '%s' 2>&1", spirv_env(spv), spv);
    rc = run(cmd, out, sizeof out);
    unlink(spv);
    cr_assert_eq(rc, 0, "%s%s: spirv-val:\n%s", c->file, c->args, out);
    /* with Khronos' validation layer installed, the run must not upset it */
    int layer = access("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json", R_OK) == 0;
    snprintf(cmd, sizeof cmd, "%sTILEC_CACHE_DIR='%s' '%s/tilec' run '%s' %s --check --backend vulkan 2>&1",
             layer ? "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation " : "", cache, build_dir(), c->file, c->args);
    rc = run(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "%s%s: exit status %d\n%s", c->file, c->args, rc, out);
    cr_assert(strstr(out, "PASS"), "%s", out);
    cr_assert_null(strstr(out, "Validation Error"), "%s%s:\n%s", c->file, c->args, out);
    cr_assert_null(strstr(out, "Validation Warning"), "%s%s:\n%s", c->file, c->args, out);
}

/* ---- T.gemm on cooperative matrices (no device needed) ---------------------------------- */

/* The dialect and the description themselves, for a device that offers
 * 16x16x16 f16 cooperative matrices (the H200's driver does; lavapipe has
 * none); vk_target.c's device table (vk_api.c) is not linked here. */
#include "../backends/vulkan/vk_codegen.c"
#include "../backends/vulkan/vk_copy.c"
#include "../backends/vulkan/vk_target.c"
#include "tilec/lower.h"

const vk_state_t *vk_state(void)
{
    static vk_state_t none;
    return &none;
}

/* GLSL of FILE ARGS for a cooperative-matrix device, glslc + spirv-val for
 * Vulkan 1.2 (what the plugin compiles for); the source in src (malloc'd). */
static void coopmat_glsl(const char *file, const char *args, char **src)
{
    char cmd[8192], ir[1 << 16];
    snprintf(cmd, sizeof cmd, "'%s/tilec' compile '%s' %s --emit ir 2>&1", build_dir(), file, args);
    cr_assert_eq(run(cmd, ir, sizeof ir), 0, "%s", ir);
    tilec_arena_t ar;
    tilec_arena_init(&ar);
    tilec_ir_module_t *m = NULL;
    char err[512];
    cr_assert_eq(tilec_ir_read(&ar, ir, strlen(ir), &m, err, sizeof err), 0, "%s", err);
    vk_dev_t dev;
    memset(&dev, 0, sizeof dev);
    dev.gemm_coopmat = dev.acc_shared = dev.pad_rows = dev.f16_arith = dev.f16_storage = dev.i16 = dev.f32_atomic_add = 1;
    dev.subgroup_size = 32;
    dev.props.limits.maxComputeSharedMemorySize = 48 * 1024;
    dev.props.limits.maxComputeWorkGroupInvocations = 1024;
    /* lowered as the plugin lowers: accumulators of gemms stay in shared memory */
    tilec_target_desc_t td;
    vk_target_fill(&dev, &td);
    cr_assert(td.flags & TILEC_TARGET_SIMT_ACC_SHARED);
    tilec_lower_status_t lst;
    cr_assert_eq(tilec_lower_module(&ar, m, &td, NULL, &lst), TILEC_LOWER_OK, "%s", lst.msg);
    vk_gen_t g = {.dev = &dev};
    tilec_simt_result_t r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r;
    cr_assert_eq(vk_generate(&g, m, &r, err, sizeof err), 0, "%s", err);
    tilec_arena_destroy(&ar);
    char comp[] = "/tmp/tilec-vk-cm-XXXXXX.comp", spv[] = "/tmp/tilec-vk-cm-XXXXXX.spv";
    int fd = mkstemps(comp, 5);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, r.source, r.source_len), (ssize_t)r.source_len);
    close(fd);
    fd = mkstemps(spv, 4);
    close(fd);
    char out[16384];
    snprintf(cmd, sizeof cmd,
             "glslc -fshader-stage=compute --target-env=vulkan1.2 -O -o '%s' '%s' 2>&1 && "
             "spirv-val --target-env vulkan1.2 '%s' 2>&1",
             spv, comp, spv);
    int rc = run(cmd, out, sizeof out);
    unlink(comp);
    unlink(spv);
    cr_assert_eq(rc, 0, "%s\n%s", out, r.source);
    *src = r.source;
}

Test(vulkan_coopmat, gemm_variants_compile_and_validate)
{
    if (system("command -v glslc > /dev/null 2>&1 && command -v spirv-val > /dev/null 2>&1") != 0) {
        cr_assert(!required(), "glslc and spirv-val required");
        cr_skip_test("no glslc/spirv-val");
        return;
    }
    static const char *const cases[][2] = {
        {"examples/gemm.py", ""},
        {"examples/gemm.py", "-D M=64 -D N=64 -D K=64"},
        {"examples/gemm_transpose_b.py", ""},
        {"conformance/cases/gemm_tn_f16.py", ""},
        {"conformance/cases/gemm_tt_f16.py", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *src = NULL;
        coopmat_glsl(cases[i][0], cases[i][1], &src);
        cr_assert(strstr(src, "#extension GL_NV_cooperative_matrix : require"), "%s", src);
        cr_assert(strstr(src, "tc_cm0 = coopMatMulAddNV(tc_am0, tc_bm0, tc_cm0);"), "%s %s:\n%s", cases[i][0],
                  cases[i][1], src);
        /* the K loop keeps C in accumulator matrices: each is loaded from
         * shared memory once, before the loop, and stored once after it */
        cr_assert(strstr(src, "cooperative matrices per subgroup across the loop"), "%s %s:\n%s", cases[i][0],
                  cases[i][1], src);
        cr_assert_null(strstr(strstr(src, "coopMatMulAddNV"), "coopMatLoadNV(tc_cm"), "%s %s:\n%s", cases[i][0],
                       cases[i][1], src);
        free(src);
    }
    /* 3 subgroups cannot split 4 x 4 tiles evenly: each gemm loads and
     * stores its tiles of C */
    char *src3 = NULL;
    coopmat_glsl("examples/gemm.py", "-D threads=96", &src3);
    cr_assert(strstr(src3, "tc_cm0 = coopMatMulAddNV(tc_am0, tc_bm0, tc_cm0);"), "%s", src3);
    cr_assert_null(strstr(src3, "across the loop"), "%s", src3);
    free(src3);
    /* bfloat16 has no cooperative-matrix type here: the tiled FMA path */
    char *src = NULL;
    coopmat_glsl("examples/gemm.py", "-D dtype=bfloat16", &src);
    cr_assert_null(strstr(src, "coopMatMulAddNV"), "%s", src);
    cr_assert_null(strstr(src, "GL_NV_cooperative_matrix"), "%s", src);
    free(src);
}

/* ---- kernels that do not fit the device's shared memory at first ------------------------ */

/* Lowers and prints FILE ARGS for dev as vk_compile does: with the
 * device's description, then with each vk_target_retry until the shader
 * fits; the block-wide bytes of the first and of the last attempt and how
 * many attempts there were. */
static void fit(const vk_dev_t *dev, const char *file, const char *args, uint64_t *first, uint64_t *last,
                int *attempts)
{
    char cmd[8192], ir[1 << 16], err[512];
    snprintf(cmd, sizeof cmd, "'%s/tilec' compile '%s' %s --emit ir 2>&1", build_dir(), file, args);
    cr_assert_eq(run(cmd, ir, sizeof ir), 0, "%s", ir);
    tilec_target_desc_t td;
    vk_target_fill(dev, &td);
    *attempts = 0;
    for (;;) {
        tilec_arena_t ar;
        tilec_arena_init(&ar);
        tilec_ir_module_t *m = NULL;
        cr_assert_eq(tilec_ir_read(&ar, ir, strlen(ir), &m, err, sizeof err), 0, "%s", err);
        tilec_lower_status_t lst;
        tilec_simt_result_t r;
        memset(&r, 0, sizeof r);
        r.struct_size = sizeof r;
        int lrc = tilec_lower_module(&ar, m, &td, NULL, &lst);
        if (lrc == TILEC_LOWER_E_UNSUPPORTED) {
            r.shared_bytes = UINT64_MAX; /* the plan itself does not fit */
        } else {
            cr_assert_eq(lrc, TILEC_LOWER_OK, "%s", lst.msg);
            vk_gen_t g = {.dev = dev};
            cr_assert_eq(vk_generate(&g, m, &r, err, sizeof err), 0, "%s", err);
            tilec_simt_result_free(&r);
        }
        tilec_arena_destroy(&ar);
        if ((*attempts)++ == 0)
            *first = r.shared_bytes;
        *last = r.shared_bytes;
        if (r.shared_bytes <= dev->props.limits.maxComputeSharedMemorySize || !vk_target_retry(&td))
            break;
    }
}

/* On a 48 KiB cooperative-matrix device (NVIDIA's driver): the lowering
 * plan of fragment_layouts fits with its accumulators in shared memory,
 * the printed shader (no aliasing in GLSL) does not, and the second
 * attempt, accumulators in registers, does; flash attention's plan does
 * not fit at first, its second attempt does (the score accumulator in
 * registers, only the float16 copy the second gemm reads in shared
 * memory). */
Test(vulkan_fit, retry_with_accumulators_in_registers)
{
    vk_dev_t dev;
    memset(&dev, 0, sizeof dev);
    dev.gemm_coopmat = dev.acc_shared = dev.f16_arith = dev.f16_storage = dev.i16 = 1;
    dev.subgroup_size = 32;
    dev.props.limits.maxComputeSharedMemorySize = 48 * 1024;
    dev.props.limits.maxComputeWorkGroupInvocations = 1024;
    uint64_t first, last;
    int n;
    fit(&dev, "conformance/cases/fragment_layouts.py", "", &first, &last, &n);
    cr_assert_gt(first, 48 * 1024);
    cr_assert_leq(last, 48 * 1024, "%llu", (unsigned long long)last);
    cr_assert_eq(n, 2);
    fit(&dev, "examples/flash_attention.py", "", &first, &last, &n);
    cr_assert_eq(first, UINT64_MAX);
    cr_assert_leq(last, 48 * 1024, "%llu", (unsigned long long)last);
    cr_assert_eq(n, 2);
    /* nothing left to give up: the second retry says so */
    tilec_target_desc_t td;
    vk_target_fill(&dev, &td);
    cr_assert(vk_target_retry(&td));
    cr_assert(!vk_target_retry(&td));
}

/* The same fallback in the plugin, on the device at hand (lavapipe in CI),
 * with its accumulators kept in shared memory and gemm operand rows padded
 * as on a cooperative-matrix device (TILEC_VK_ACC_SHARED=1 TILEC_VK_PAD=1:
 * the FMA path then reads them there) and its shared memory lowered
 * (TILEC_VK_SHARED_LIMIT): the kernels run and check; one that fits no
 * way is refused with both sizes. */
Test(vulkan_fit, plugin_retries_under_a_lower_limit)
{
    if (load_plugin(NULL))
        return;
    static const char *const ok[][3] = {
        {"32768", "conformance/cases/fragment_layouts.py", ""},
        {"16384", "examples/gemm.py", ""},
        {"8192", "examples/rmsnorm.py", "-D dtype=float16 -D N=1000"},
    };
    char cmd[8192], out[16384];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        snprintf(cmd, sizeof cmd,
                 "TILEC_CACHE=0 TILEC_LOG=compile TILEC_VK_ACC_SHARED=1 TILEC_VK_PAD=1 TILEC_VK_SHARED_LIMIT=%s '%s/tilec' run "
                 "'%s' %s "
                 "--check --backend vulkan 2>&1",
                 ok[i][0], build_dir(), ok[i][1], ok[i][2]);
        int rc = run(cmd, out, sizeof out);
        cr_assert_eq(rc, 0, "%s: exit %d\n%s", cmd, rc, out);
        cr_assert(strstr(out, "PASS"), "%s", out);
        if (i < 2)
            cr_assert(strstr(out, "lowered again (1)"), "%s\n%s", cmd, out);
    }
    snprintf(cmd, sizeof cmd,
             "TILEC_CACHE=0 TILEC_VK_SHARED_LIMIT=16384 '%s/tilec' run examples/flash_attention.py --backend vulkan 2>&1",
             build_dir());
    int rc = run(cmd, out, sizeof out);
    cr_assert_eq(rc, 3, "%s", out);
    cr_assert(strstr(out, "16384"), "%s", out);
}
