/*
 * tests/test_opencl.c — the OpenCL backend (build/libtilec-opencl.so).
 *
 * Two parts:
 *  - every examples/NAME.py, once per `# tilec-test:` line (once with no
 *    defines when it has none), through the CLI exactly as a user runs it:
 *    `tilec run FILE ARGS --check --backend opencl`, which compares every
 *    tensor with the reference interpreter; the test asserts exit status 0;
 *  - the plugin table itself, loaded with dlopen: negotiation, device info
 *    (platform name, honest caps), bad IR, a failing build whose message
 *    carries the compiler log, device limits, argument checks, a timed
 *    launch, the program-binary cache, and UNAVAILABLE without a platform.
 *
 * Without a usable OpenCL platform (no ICD loader or no driver) the tests
 * skip, unless TILEC_REQUIRE_OPENCL=1 (CI sets it where PoCL is installed).
 * TILEC_BUILD_DIR names the build directory (default "build"); the tests
 * run from the source root.  Compiled kernels go to a cache under the build
 * directory, so a re-run does not compile them again.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tilec/plugin.h"
#include "tilec/sdk.h"

static const char *build_dir(void)
{
    const char *b = getenv("TILEC_BUILD_DIR");
    return b && *b ? b : "build";
}

/* ---- the plugin ---------------------------------------------------------------- */

static void *so;
static const tilec_plugin_t *P;

static int load_plugin(const char *cache_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/libtilec-opencl.so", build_dir());
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
    cr_assert_eq(q(&h, &abi, &P), TILEC_PS_OK);
    cr_assert_eq(abi, TILEC_PLUGIN_ABI_VERSION);
    uint32_t n = 0;
    tilec_pstatus_t st = P->device_count(&n);
    if (st != TILEC_PS_OK || n == 0) {
        const char *req = getenv("TILEC_REQUIRE_OPENCL");
        cr_assert(!(req && strcmp(req, "1") == 0), "OpenCL required but unavailable: %s", P->last_error());
        cr_skip_test("OpenCL unavailable: %s", P->last_error());
        return -1;
    }
    return 0;
}

/* Tile IR of a small kernel: Y[i] = X[i] * 2 + 1 over a dynamic length m. */
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

Test(opencl_plugin, table_and_devices)
{
    if (load_plugin(NULL))
        return;
    cr_assert_str_eq(P->name, "opencl");
    uint32_t n = 0;
    cr_assert_eq(P->device_count(&n), TILEC_PS_OK);
    cr_assert_gt(n, 0);
    cr_assert_eq(P->device_count(NULL), TILEC_PS_INVALID_ARGUMENT);
    tilec_pdevice_info_t info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_OK, "%s", P->last_error());
    cr_assert(strncmp(info.platform, "OpenCL: ", 8) == 0, "%s", info.platform);
    cr_assert(info.name[0]);
    cr_assert(info.caps & TILEC_CAP_DEVICE_TIMER);
    cr_assert(info.caps & TILEC_CAP_FLOAT16);
    cr_assert_gt(info.max_threads, 0);
    cr_assert_gt(info.shared_mem_bytes, 0);
    if (strstr(info.platform, "Portable Computing Language") && strstr(info.name, "pthread"))
        cr_assert_eq(info.caps & TILEC_CAP_GPU, 0, "a PoCL CPU device must not claim to be a GPU");
    cr_assert_eq(P->device_info(n, &info), TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strstr(P->last_error(), "out of range"));
    info.struct_size = 4;
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_INVALID_ARGUMENT);
    tilec_pdevice_t *d = NULL;
    cr_assert_eq(P->device_open(n, &d), TILEC_PS_INVALID_ARGUMENT);
}

static tilec_pdevice_t *open0(void)
{
    tilec_pdevice_t *d = NULL;
    cr_assert_eq(P->device_open(0, &d), TILEC_PS_OK, "%s", P->last_error());
    return d;
}

Test(opencl_plugin, bad_ir_and_build_failure)
{
    if (load_plugin(NULL))
        return;
    tilec_pdevice_t *d = open0();
    tilec_pmodule_t *m = NULL;
    const char *bad = "tileir 1.0\nkernel k { nonsense }\n";
    cr_assert_eq(P->compile(d, bad, strlen(bad), NULL, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strstr(P->last_error(), "bad tile IR"), "%s", P->last_error());
    cr_assert_null(m);
    cr_assert_eq(P->compile(d, NULL, 0, NULL, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->compile(NULL, IR_SCALE, strlen(IR_SCALE), NULL, &m), TILEC_PS_INVALID_ARGUMENT);
    /* a macro that breaks the generated source: the build fails and the
     * message names the kernel and carries the compiler's log */
    tilec_pcompile_options_t o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.opt_level = 3;
    o.extra = "-Dtc_tid=+";
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), &o, &m), TILEC_PS_COMPILE_ERROR);
    const char *e = P->last_error();
    cr_assert(strstr(e, "building kernel 'scale'"), "%s", e);
    cr_assert(strstr(e, "compiler log"), "%s", e);
    cr_assert(strstr(e, "error"), "%s", e);
    cr_assert_null(m);
    o.opt_level = 9;
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), &o, &m), TILEC_PS_INVALID_ARGUMENT);
    P->device_close(d);
}

Test(opencl_plugin, device_limits)
{
    if (load_plugin(NULL))
        return;
    tilec_pdevice_t *d = open0();
    tilec_pmodule_t *m = NULL;
    /* 64 MiB of shared memory in one block: more than any device has */
    const char *big =
        "tileir 1.0\nkernel big {\n  var bx int32 block\n  param X global float32 [4]\n"
        "  alloc S shared float32 [4096, 4096]\n  grid [bx = 1]\n  threads 32 1 1\n"
        "  body {\n    copy X[0 +: 4] -> S[0, 0 +: 4]\n  }\n}\n";
    cr_assert_eq(P->compile(d, big, strlen(big), NULL, &m), TILEC_PS_UNSUPPORTED);
    cr_assert(strstr(P->last_error(), "local memory"), "%s", P->last_error());
    const char *wide =
        "tileir 1.0\nkernel wide {\n  var bx int32 block\n  param X global float32 [4]\n"
        "  grid [bx = 1]\n  threads 1024 64 1\n  body {\n    fill X[0 +: 4] = 1.0\n  }\n}\n";
    cr_assert_eq(P->compile(d, wide, strlen(wide), NULL, &m), TILEC_PS_UNSUPPORTED);
    cr_assert(strstr(P->last_error(), "threads"), "%s", P->last_error());
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
    cr_assert_eq(P->mem_write(d, bx, 0, x, bytes), TILEC_PS_OK);
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
    cr_assert_eq(P->mem_read(d, by, 0, y, bytes), TILEC_PS_OK);
    for (int64_t i = 0; i < len; i++)
        cr_assert_float_eq(y[i], x[i] * 2.0f + 1.0f, 1e-6, "y[%lld] = %g", (long long)i, y[i]);
    /* argument checks */
    a.nsyms = 0;
    cr_assert_eq(P->launch(d, m, &a), TILEC_PS_INVALID_ARGUMENT);
    a.nsyms = 1;
    int64_t toolong = len + 100;
    a.syms = &toolong;
    cr_assert_eq(P->launch(d, m, &a), TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strstr(P->last_error(), "bytes"), "%s", P->last_error());
    a.syms = &len;
    a.nargs = 1;
    cr_assert_eq(P->launch(d, m, &a), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_read(d, by, bytes - 2, y, 4), TILEC_PS_INVALID_ARGUMENT);
    P->mem_free(d, bx);
    P->mem_free(d, by);
    free(x);
    free(y);
}

Test(opencl_plugin, launch_timed_and_source)
{
    if (load_plugin(NULL))
        return;
    tilec_pdevice_t *d = open0();
    tilec_pmodule_t *m = NULL;
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m), TILEC_PS_OK, "%s", P->last_error());
    const void *src = NULL;
    size_t n = 0;
    cr_assert_eq(P->module_data(m, TILEC_PDATA_SOURCE, &src, &n), TILEC_PS_OK);
    cr_assert(n > 0 && strstr(src, "__kernel void"));
    cr_assert(strstr(src, "barrier(CLK_LOCAL_MEM_FENCE"), "%s", (const char *)src);
    run_scale(d, m, 130, 1);
    run_scale(d, m, 1, 0);
    P->module_free(m);
    P->device_close(d);
}

Test(opencl_plugin, binary_cache)
{
    char dir[] = "/tmp/tilec-ocl-cache-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    if (load_plugin(dir)) {
        rmdir(dir);
        return;
    }
    tilec_pdevice_t *d = open0();
    tilec_pmodule_t *m1 = NULL, *m2 = NULL;
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m1), TILEC_PS_OK, "%s", P->last_error());
    const void *b1 = NULL;
    size_t n1 = 0;
    cr_assert_eq(P->module_data(m1, TILEC_PDATA_BINARY, &b1, &n1), TILEC_PS_OK, "%s", P->last_error());
    cr_assert_gt(n1, 0);
    /* exactly one cache entry holding those bytes */
    DIR *dd = opendir(dir);
    cr_assert_not_null(dd);
    struct dirent *de;
    int entries = 0;
    char path[4096] = "";
    while ((de = readdir(dd)) != NULL) {
        if (strncmp(de->d_name, "opencl-", 7) == 0) {
            entries++;
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        }
    }
    closedir(dd);
    cr_assert_eq(entries, 1);
    void *data = NULL;
    size_t len = 0;
    char key[65] = "", why[256];
    const char *base = strrchr(path, '/') + 1;
    snprintf(key, sizeof key, "%.64s", base + 7); /* opencl-KEY.bin */
    cr_assert_eq(tilec_sdk_cache_load(path, key, &data, &len, why, sizeof why), TILEC_SDK_CACHE_HIT, "%s", why);
    cr_assert_eq(len, n1);
    cr_assert_eq(memcmp(data, b1, len), 0);
    free(data);
    /* the second compile loads the binary and still runs */
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m2), TILEC_PS_OK, "%s", P->last_error());
    run_scale(d, m2, 200, 0);
    /* a corrupt entry is rebuilt from source */
    cr_assert_eq(tilec_sdk_cache_write(path, "garbage", 7), 0);
    tilec_pmodule_t *m3 = NULL;
    cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m3), TILEC_PS_OK, "%s", P->last_error());
    run_scale(d, m3, 64, 0);
    /* a bit flipped in the binary (the driver might accept it): refused by
     * the checksum, rebuilt, and the rebuilt entry is valid again */
    {
        unsigned char *raw = NULL;
        size_t rl = 0;
        cr_assert_eq(tilec_sdk_file_read(path, (void **)&raw, &rl), 0);
        cr_assert_gt(rl, 200u);
        raw[rl / 2 - 64] ^= 0x01;
        cr_assert_eq(tilec_sdk_cache_write(path, raw, rl), 0);
        free(raw);
        tilec_pmodule_t *m4 = NULL;
        cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m4), TILEC_PS_OK, "%s", P->last_error());
        run_scale(d, m4, 64, 0);
        P->module_free(m4);
        cr_assert_eq(tilec_sdk_cache_load(path, key, &data, &len, why, sizeof why), TILEC_SDK_CACHE_HIT, "%s", why);
        /* not compared with the first binary: PoCL's program binary is the
         * driver's to vary (its length differed once on a loaded machine) */
        cr_expect_gt(len, 0u);
        free(data);
        tilec_pmodule_t *m5 = NULL; /* served from the rebuilt entry */
        cr_assert_eq(P->compile(d, IR_SCALE, strlen(IR_SCALE), NULL, &m5), TILEC_PS_OK, "%s", P->last_error());
        run_scale(d, m5, 64, 0);
        P->module_free(m5);
    }
    P->module_free(m1);
    P->module_free(m2);
    P->module_free(m3);
    P->device_close(d);
    unlink(path);
    rmdir(dir);
}

Test(opencl_plugin, no_platform_is_unavailable)
{
    /* Each Criterion test is its own process, so the ICD loader reads this
     * before anything enumerated platforms. */
    setenv("OCL_ICD_VENDORS", "/nonexistent-tilec-vendors", 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/libtilec-opencl.so", build_dir());
    so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(so, "%s", dlerror());
    tilec_plugin_query_fn q = (tilec_plugin_query_fn)dlsym(so, TILEC_PLUGIN_QUERY_SYMBOL);
    tilec_plugin_host_t h;
    memset(&h, 0, sizeof h);
    h.struct_size = sizeof h;
    h.abi_min = h.abi_max = TILEC_ABI_MAKE(1, 0);
    uint32_t abi;
    cr_assert_eq(q(&h, &abi, &P), TILEC_PS_OK);
    uint32_t n = 7;
    tilec_pstatus_t st = P->device_count(&n);
    cr_assert_eq(st, TILEC_PS_UNAVAILABLE);
    cr_assert_eq(n, 0);
    const char *e = P->last_error();
    cr_assert(strstr(e, "opencl: ") && (strstr(e, "no OpenCL platform") || strstr(e, "libOpenCL")), "%s", e);
    tilec_pdevice_t *d = NULL;
    cr_assert_eq(P->device_open(0, &d), TILEC_PS_UNAVAILABLE);
    /* newer host range without 1.x: no common version */
    h.abi_min = h.abi_max = TILEC_ABI_MAKE(2, 0);
    cr_assert_eq(q(&h, &abi, &P), TILEC_PS_UNSUPPORTED);
}

/* ---- programs through the CLI ------------------------------------------------------------ */

/* Writes src to a temporary .py (or .tir) file, runs `tilec run FILE
 * --check --backend opencl`, returns the exit status and the output in out. */
static int run_file(const char *src, const char *suffix, char *out, size_t outlen)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/tilec-ocl-prog-XXXXXX%s", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, src, strlen(src)), (ssize_t)strlen(src));
    close(fd);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "TILEC_CACHE=0 '%s/tilec' run '%s' --check --backend opencl 2>&1", build_dir(), path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t len = fread(out, 1, outlen - 1, p);
    out[len] = '\0';
    int st = pclose(p);
    unlink(path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run_program(const char *src, char *out, size_t outlen) { return run_file(src, ".py", out, outlen); }

Test(opencl_programs, atomics_every_width)
{
    if (load_plugin(NULL))
        return;
    /* contention from 3 blocks x 64 threads on 4 elements: 16-bit floats
     * and int8 by a CAS on the enclosing word, float64/int64 by 64-bit CAS
     * or atom_add, float32 min by CAS; sums chosen to be exact */
    const char *src =
        "import tilelang\nimport tilelang.language as T\n\n"
        "@T.prim_func\n"
        "def main(H: T.Tensor((4,), \"float16\"), G: T.Tensor((4,), \"bfloat16\"),\n"
        "         D: T.Tensor((4,), \"float64\"), L: T.Tensor((4,), \"int64\"), C: T.Tensor((4,), \"int8\"),\n"
        "         F: T.Tensor((4,), \"float32\"), M: T.Tensor((4,), \"int64\"), X: T.Tensor((64,), \"float32\")):\n"
        "    with T.Kernel(3, threads=64) as bx:\n"
        "        for i in T.Parallel(64):\n"
        "            T.atomic_add(H[i % 4], T.cast(0.25, \"float16\"))\n"
        "            T.atomic_add(G[i % 4], T.cast(0.5, \"bfloat16\"))\n"
        "            T.atomic_add(D[i % 4], T.cast(i, \"float64\"))\n"
        "            T.atomic_add(L[i % 4], T.cast(i, \"int64\"))\n"
        "            T.atomic_max(C[i % 4], T.cast(i, \"int8\"))\n"
        "            T.atomic_min(F[i % 4], X[i])\n"
        "            T.atomic_max(M[i % 4], T.cast(i * 1000, \"int64\"))\n";
    char out[8192];
    int rc = run_program(src, out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "PASS"), "%s", out);
}

Test(opencl_programs, print_and_block_level_side_effects)
{
    if (load_plugin(NULL))
        return;
    /* block-level stores/atomics/prints run once per block (thread 0) */
    const char *src =
        "import tilelang\nimport tilelang.language as T\n\n"
        "@T.prim_func\n"
        "def main(A: T.Tensor((4,), \"float32\"), B: T.Tensor((4,), \"int32\")):\n"
        "    with T.Kernel(2, threads=32) as bx:\n"
        "        s = T.alloc_shared((4,), \"float32\")\n"
        "        T.copy(A, s)\n"
        "        T.print(s, msg=\"tile\")\n"
        "        T.atomic_add(B[0], 5)\n"
        "        B[1] = B[1] + 0\n"
        "        T.atomic_max(A[1], 100.0)\n";
    char out[8192];
    int rc = run_program(src, out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "PASS"), "%s", out);
    cr_assert(strstr(out, "tile: ["), "%s", out);
}

Test(opencl_programs, vector_copies)
{
    if (load_plugin(NULL))
        return;
    /* tile copies both ways that take vload/vstore (float32 by 4, int8 by
     * 16, float64 by 2), with the scalar fallback at run time for the last
     * block (rows 16..23 of 20: not wholly inside) and for the float64
     * copies of odd blocks (column base bx: misaligned) */
    const char *src =
        "import tilelang\nimport tilelang.language as T\n\n"
        "@T.prim_func\n"
        "def main(A: T.Tensor((20, 64), \"float32\"), B: T.Tensor((20, 64), \"float32\"),\n"
        "         C: T.Tensor((20, 64), \"int8\"), D: T.Tensor((20, 64), \"int8\"),\n"
        "         E: T.Tensor((20, 66), \"float64\"), F: T.Tensor((20, 66), \"float64\")):\n"
        "    with T.Kernel(3, threads=32) as bx:\n"
        "        s = T.alloc_shared((8, 64), \"float32\")\n"
        "        t = T.alloc_shared((8, 64), \"int8\")\n"
        "        u = T.alloc_shared((8, 32), \"float64\")\n"
        "        T.copy(A[bx * 8, 0], s)\n"
        "        T.copy(s, B[bx * 8, 0])\n"
        "        T.copy(C[bx * 8, 0], t)\n"
        "        T.copy(t, D[bx * 8, 0])\n"
        "        T.copy(E[bx * 8, bx], u)\n"
        "        T.copy(u, F[bx * 8, bx])\n";
    char out[8192];
    int rc = run_program(src, out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "PASS"), "%s", out);
    /* the vector paths are really there */
    char path[] = "/tmp/tilec-ocl-vec-XXXXXX.py";
    int fd = mkstemps(path, 3);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, src, strlen(src)), (ssize_t)strlen(src));
    close(fd);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s/tilec' compile '%s' --backend opencl --emit source 2>&1", build_dir(), path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    static char cl[1 << 16];
    size_t len = fread(cl, 1, sizeof cl - 1, p);
    cl[len] = '\0';
    int st = pclose(p);
    unlink(path);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", cl);
    cr_assert(strstr(cl, "vstore4(vload4(0, "), "%s", cl);
    cr_assert(strstr(cl, "vstore16(vload16(0, "), "%s", cl);
    cr_assert(strstr(cl, "vstore2(vload2(0, "), "%s", cl);
    cr_assert(strstr(cl, "} else {"), "%s", cl);
}

Test(opencl_programs, lowered_tir)
{
    if (load_plugin(NULL))
        return;
    /* a lowered module as a .tir file is printed as it is (no second
     * lowering); its register layout has no closed form (thread
     * (i + j) % 8 holds register i), so each thread finds its elements by
     * walking the fragment: the slow path must still be right, ragged
     * edge included (B is 3 x 8 of the 4 x 8 fragment) */
    const char *ir =
        "tileir 1.1\n"
        "kernel odd {\n"
        "  var bx int32 block\n  var i int32 loop\n  var j int32 loop\n"
        "  param A global float32 [3, 8]\n  param B global float32 [3, 8] out\n"
        "  alloc F fragment float32 [4, 8] layout regs \"odd\"() threads=8 nlocal=4 replicate=1 "
        "thread=((_i0 + _i1) % 8) local=_i0\n"
        "  grid [bx = 1]\n  threads 8 1 1\n"
        "  body {\n"
        "    copy A[0 +: 4, 0 +: 8] -> F[0 +: 4, 0 +: 8]\n"
        "    for i in parallel(4) attrs {lower.dist = \"regs\"} {\n"
        "      for j in parallel(8) {\n"
        "        store F[i, j] = ((F[i, j] * 2.0) + 1.0)\n"
        "      }\n"
        "    }\n"
        "    copy F[0 +: 4, 0 +: 8] -> B[0 +: 4, 0 +: 8]\n"
        "  }\n}\n";
    char out[8192];
    int rc = run_file(ir, ".tir", out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "PASS"), "%s", out);
}

Test(opencl_programs, high_level_path_examples)
{
    if (load_plugin(NULL))
        return;
    /* TILEC_OPENCL_LOWER=0: the kit's high-level path (every fragment in
     * local memory, the kit's own barriers), the "before" of
     * bench/opencl_lowered.sh, still right on a few examples (ragged sizes
     * included); every example runs lowered below */
    static const char *const runs[] = {
        "examples/gemm_fp32.py -D M=33 -D N=17 -D K=9", "examples/softmax.py",
        "examples/elementwise_add.py -D M=1 -D N=1", "conformance/cases/ragged_direct_access.py -D r=45",
    };
    char cache[4096], cmd[8192], out[8192];
    snprintf(cache, sizeof cache, "%s/tests/opencl-cache", build_dir());
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        snprintf(cmd, sizeof cmd, "TILEC_OPENCL_LOWER=0 TILEC_CACHE_DIR='%s' '%s/tilec' run %s --check --backend opencl 2>&1",
                 cache, build_dir(), runs[i]);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        size_t len = fread(out, 1, sizeof out - 1, p);
        out[len] = '\0';
        int st = pclose(p);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, "PASS"), "%s: %s", runs[i], out);
    }
    /* by default the source keeps the accumulator in registers (lowered);
     * the high-level path keeps it in local memory */
    static char cl[1 << 17];
    for (int lower = 1; lower >= 0; lower--) {
        snprintf(cmd, sizeof cmd, "%s '%s/tilec' compile examples/gemm_fp32.py --backend opencl --emit source 2>&1",
                 lower ? "" : "TILEC_OPENCL_LOWER=0", build_dir());
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        size_t len = fread(cl, 1, sizeof cl - 1, p);
        cl[len] = '\0';
        pclose(p);
        cr_assert_eq(strstr(cl, "/* fragment C_local: registers */") != NULL, lower, "%s", cl);
    }
}

/* ---- every example through the CLI ------------------------------------------------- */

typedef struct ex_case {
    char file[256];
    char args[256];
} ex_case_t;

static void add_case(ex_case_t *cs, size_t *n, size_t cap, const char *file, const char *args)
{
    if (*n >= cap)
        return;
    snprintf(cs[*n].file, sizeof cs[*n].file, "%s", file);
    snprintf(cs[*n].args, sizeof cs[*n].args, "%s", args);
    (*n)++;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

ParameterizedTestParameters(opencl_examples, run_check)
{
    enum { CAP = 512 };
    ex_case_t *cs = cr_malloc(sizeof *cs * CAP);
    size_t n = 0;
    char *names[256];
    int nn = 0;
    DIR *dd = opendir("examples");
    struct dirent *de;
    while (dd && (de = readdir(dd)) != NULL && nn < 256) {
        size_t l = strlen(de->d_name);
        if (l > 3 && strcmp(de->d_name + l - 3, ".py") == 0)
            names[nn++] = strdup(de->d_name);
    }
    if (dd)
        closedir(dd);
    qsort(names, (size_t)nn, sizeof names[0], cmp_name);
    for (int i = 0; i < nn; i++) {
        char file[256];
        snprintf(file, sizeof file, "examples/%s", names[i]);
        FILE *f = fopen(file, "r");
        int lines = 0;
        char buf[240];
        while (f && fgets(buf, sizeof buf, f)) {
            if (strncmp(buf, "# tilec-test:", 13) != 0)
                continue;
            buf[strcspn(buf, "\n")] = '\0';
            add_case(cs, &n, CAP, file, buf + 13);
            lines++;
        }
        if (f)
            fclose(f);
        if (!lines)
            add_case(cs, &n, CAP, file, "");
        free(names[i]);
    }
    return cr_make_param_array(ex_case_t, cs, n);
}

ParameterizedTest(ex_case_t *c, opencl_examples, run_check)
{
    if (load_plugin(NULL))
        return;
    char cache[4096], cmd[8192];
    snprintf(cache, sizeof cache, "%s/tests/opencl-cache", build_dir());
    /* args come from the example files of this repository (-D NAME=VALUE) */
    snprintf(cmd, sizeof cmd, "TILEC_CACHE_DIR='%s' '%s/tilec' run '%s' %s --check --backend opencl 2>&1", cache,
             build_dir(), c->file, c->args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char out[8192];
    size_t len = fread(out, 1, sizeof out - 1, p);
    out[len] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s%s: exit status %d\n%s", c->file, c->args,
              WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
    cr_assert(strstr(out, "PASS"), "%s", out);
}
