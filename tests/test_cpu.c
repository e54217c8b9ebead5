/*
 * tests/test_cpu.c — the CPU backend through its plugin table: ABI negotiation,
 * the stand-alone plugin, device info and struct_size, bad arguments to every
 * entry point, availability without a compiler; the kernel cache (a hit never
 * runs the compiler), compiler failures and IR the generator rejects; the
 * SDK's utilities (SHA-256, cache files, the error buffer).  The other
 * tests of the backend: test_cpu_kernels.c (tile ops), test_cpu_gemm.c,
 * test_cpu_math.c (float math, 16-bit conversions), test_cpu_threads.c
 * (fork, concurrent launches, TILEC_NUM_THREADS), test_cpu_rows.c.  Shared
 * helpers: cpu_test.h.
 */
#include "cpu_test.h"

/* ---- negotiation ----------------------------------------------------------------- */

Test(cpu_abi, negotiation)
{
    const tilec_plugin_t *t = NULL;
    uint32_t abi = 0;
    tilec_plugin_host_t h = host_v1(NULL);
    /* a 1.0 host gets the 1.0 table */
    h.abi_max = TILEC_ABI_MAKE(1, 0);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t), TILEC_PS_OK);
    cr_assert_eq(abi, TILEC_ABI_MAKE(1, 0));
    cr_assert_eq(t->abi_version, TILEC_ABI_MAKE(1, 0));
    cr_assert_not_null(t);
    cr_assert_str_eq(t->name, "cpu");
    cr_assert_str_eq(t->vendor, "tilec");
    cr_assert_str_eq(t->version, "0.1.0");
    cr_assert(t->caps & TILEC_CAP_FLOAT16);
    cr_assert(t->caps & TILEC_CAP_DYNAMIC_SHAPE);
    cr_assert_not(t->caps & TILEC_CAP_DEVICE_TIMER);
    cr_assert_not(t->caps & TILEC_CAP_GPU);
    cr_assert_geq(t->struct_size, TILEC_PLUGIN_TABLE_SIZE_1_0);

    /* a range that includes 1.0 from either side */
    h.abi_min = TILEC_ABI_MAKE(0, 5);
    h.abi_max = TILEC_ABI_MAKE(1, 0);
    abi = 0;
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t), TILEC_PS_OK);
    cr_assert_eq(abi, TILEC_ABI_MAKE(1, 0));
    /* a wider range gets the newest both speak, 1.1, with its full table */
    h.abi_max = TILEC_ABI_MAKE(1, 7);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t), TILEC_PS_OK);
    cr_assert_eq(abi, TILEC_ABI_MAKE(1, 1));
    cr_assert_eq(t->abi_version, TILEC_ABI_MAKE(1, 1));
    cr_assert_geq(t->struct_size, TILEC_PLUGIN_TABLE_SIZE_1_1);
    cr_assert_not_null(t->device_property);

    /* ranges without 1.0 */
    const tilec_plugin_t *t2 = NULL;
    abi = 12345;
    h.abi_min = TILEC_ABI_MAKE(2, 0);
    h.abi_max = TILEC_ABI_MAKE(3, 0);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t2), TILEC_PS_UNSUPPORTED);
    cr_assert_eq(abi, 12345);
    cr_assert_null(t2);
    cr_assert(strlen(t->last_error()) > 0);
    h.abi_min = TILEC_ABI_MAKE(1, 2);
    h.abi_max = TILEC_ABI_MAKE(1, 9);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t2), TILEC_PS_UNSUPPORTED);
    h.abi_min = TILEC_ABI_MAKE(1, 0);
    h.abi_max = TILEC_ABI_MAKE(0, 9); /* empty range */
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t2), TILEC_PS_UNSUPPORTED);
    cr_assert_null(t2);

    /* bad arguments */
    h = host_v1(NULL);
    cr_assert_eq(tilec_cpu_embedded_query(NULL, &abi, &t2), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(tilec_cpu_embedded_query(&h, NULL, &t2), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, NULL), TILEC_PS_INVALID_ARGUMENT);
    h.struct_size = 8;
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t2), TILEC_PS_INVALID_ARGUMENT);
    /* an old, smaller host struct (just the version fields) is accepted */
    h.struct_size = (uint32_t)offsetof(tilec_plugin_host_t, log);
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &t2), TILEC_PS_OK);
}

/* The stand-alone plugin next to the test binary (build/libtilec-cpu.so)
 * exports only tilec_plugin_query and negotiates the same way. */
Test(cpu_abi, shared_object)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 64);
    cr_assert_gt(n, 0);
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    cr_assert_not_null(slash);
    *slash = '\0';
    slash = strrchr(exe, '/');
    cr_assert_not_null(slash);
    strcpy(slash, "/libtilec-cpu.so");
    if (access(exe, R_OK) != 0)
        cr_skip_test("%s not built", exe);
    void *dl = dlopen(exe, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(dl, "%s", dlerror());
    tilec_plugin_query_fn q = (tilec_plugin_query_fn)dlsym(dl, TILEC_PLUGIN_QUERY_SYMBOL);
    cr_assert_not_null(q);
    cr_assert_null(dlsym(dl, "tilec_cpu_embedded_query"));
    cr_assert_null(dlsym(dl, "cpu_codegen"));
    cr_assert_null(dlsym(dl, "tilec_sha256"));
    tilec_plugin_host_t h = host_v1(NULL);
    uint32_t abi = 0;
    const tilec_plugin_t *t = NULL;
    cr_assert_eq(q(&h, &abi, &t), TILEC_PS_OK);
    cr_assert_str_eq(t->name, "cpu");
    h.abi_min = h.abi_max = TILEC_ABI_MAKE(2, 0);
    cr_assert_eq(q(&h, &abi, &t), TILEC_PS_UNSUPPORTED);
    dlclose(dl);
}

/* ---- devices, struct_size, bad arguments ------------------------------------------- */

Test(cpu_dev, info_and_struct_size, .init = setup, .fini = teardown)
{
    uint32_t n = 0;
    cr_assert_eq(P->device_count(&n), TILEC_PS_OK);
    cr_assert_eq(n, 1);
    tilec_pdevice_info_t info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_OK);
    cr_assert(strstr(info.name, "threads)") != NULL, "%s", info.name);
    cr_assert_eq(info.compute_units, (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
    cr_assert(info.caps & TILEC_CAP_FLOAT64);
    cr_assert_eq(info.struct_size, sizeof info);

    /* an older caller whose struct ends after platform: caps and later untouched */
    unsigned char raw[sizeof(tilec_pdevice_info_t)];
    memset(raw, 0xAB, sizeof raw);
    tilec_pdevice_info_t *small = (tilec_pdevice_info_t *)raw;
    uint32_t sz = (uint32_t)offsetof(tilec_pdevice_info_t, caps);
    small->struct_size = sz;
    cr_assert_eq(P->device_info(0, small), TILEC_PS_OK);
    cr_assert_eq(small->struct_size, sz);
    cr_assert_str_eq(small->name, info.name);
    for (size_t i = sz; i < sizeof raw; i++)
        cr_assert_eq(raw[i], 0xAB, "byte %zu past struct_size was written", i);

    /* a struct cut inside name gets only its prefix */
    memset(raw, 0xCD, sizeof raw);
    small->struct_size = (uint32_t)offsetof(tilec_pdevice_info_t, name) + 4;
    cr_assert_eq(P->device_info(0, small), TILEC_PS_OK);
    cr_assert_eq(memcmp(small->name, info.name, 4), 0);
    for (size_t i = offsetof(tilec_pdevice_info_t, name) + 4; i < sizeof raw; i++)
        cr_assert_eq(raw[i], 0xCD);

    /* too small to hold even the header */
    small->struct_size = 4;
    cr_assert_eq(P->device_info(0, small), TILEC_PS_INVALID_ARGUMENT);
}

Test(cpu_dev, bad_arguments, .init = setup, .fini = teardown)
{
    tilec_pdevice_info_t info = {.struct_size = sizeof info};
    tilec_pdevice_t *d2 = NULL;
    cr_assert_eq(P->device_count(NULL), TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strlen(P->last_error()) > 0);
    cr_assert_eq(P->device_info(1, &info), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->device_info(0, NULL), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->device_open(1, &d2), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->device_open(0, NULL), TILEC_PS_INVALID_ARGUMENT);
    P->device_close(NULL); /* harmless */

    tilec_pmodule_t *mod = NULL;
    const char *ir = "tileir 1.0\n";
    cr_assert_eq(P->compile(NULL, ir, strlen(ir), NULL, &mod), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->compile(D, NULL, 5, NULL, &mod), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->compile(D, ir, 0, NULL, &mod), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->compile(D, ir, strlen(ir), NULL, NULL), TILEC_PS_INVALID_ARGUMENT);
    tilec_pcompile_options_t o = {.struct_size = 4, .opt_level = 3};
    cr_assert_eq(P->compile(D, ir, strlen(ir), &o, &mod), TILEC_PS_INVALID_ARGUMENT);
    o.struct_size = sizeof o;
    o.opt_level = 9;
    cr_assert_eq(P->compile(D, ir, strlen(ir), &o, &mod), TILEC_PS_INVALID_ARGUMENT);
    /* not IR at all */
    const char *junk = "this is not tile IR";
    cr_assert_eq(P->compile(D, junk, strlen(junk), NULL, &mod), TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strstr(P->last_error(), "IR") != NULL, "%s", P->last_error());
    cr_assert_null(mod);

    const void *data;
    size_t size;
    cr_assert_eq(P->module_data(NULL, TILEC_PDATA_SOURCE, &data, &size), TILEC_PS_INVALID_ARGUMENT);
    P->module_free(NULL);

    tilec_pmem_t *m = NULL;
    cr_assert_eq(P->mem_alloc(NULL, TILEC_PMEM_DEVICE, 16, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_alloc(D, (tilec_pmem_scope_t)7, 16, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_alloc(D, TILEC_PMEM_DEVICE, 16, NULL), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_alloc(D, TILEC_PMEM_DEVICE, 100, &m), TILEC_PS_OK);
    cr_assert_eq((uintptr_t)m % 8, 0);
    char buf[128] = {0};
    cr_assert_eq(P->mem_write(D, m, 0, buf, 100), TILEC_PS_OK);
    cr_assert_eq(P->mem_write(D, m, 1, buf, 100), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_write(D, m, 101, buf, 0), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_write(D, m, SIZE_MAX, buf, 2), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_write(D, m, 0, NULL, 4), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_write(NULL, m, 0, buf, 4), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_write(D, NULL, 0, buf, 4), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_read(D, m, 50, buf, 51), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_read(D, m, 0, NULL, 4), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_read(D, NULL, 0, buf, 4), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->mem_read(NULL, m, 0, buf, 4), TILEC_PS_INVALID_ARGUMENT);
    /* round trip at an offset */
    const char msg[] = "hello, tiles";
    cr_assert_eq(P->mem_write(D, m, 80, msg, sizeof msg), TILEC_PS_OK);
    cr_assert_eq(P->mem_read(D, m, 80, buf, sizeof msg), TILEC_PS_OK);
    cr_assert_str_eq(buf, msg);
    P->mem_free(D, m);
    P->mem_free(D, NULL);
    tilec_pmem_t *z = NULL;
    cr_assert_eq(P->mem_alloc(D, TILEC_PMEM_HOST, 0, &z), TILEC_PS_OK);
    P->mem_free(D, z);

    tilec_plaunch_t la = {.struct_size = sizeof la};
    cr_assert_eq(P->launch(NULL, NULL, &la), TILEC_PS_INVALID_ARGUMENT);
    cr_assert_eq(P->launch(D, NULL, &la), TILEC_PS_INVALID_ARGUMENT);
}

/* Without a C compiler the device stays: kernels loaded from a bundle
 * (tilec_module_load) run without one, and compile says why it cannot
 * (cpu_cache::hit_skips_compiler checks that message). */
Test(cpu_dev, available_without_compiler)
{
    setenv("CC", "/nonexistent/tilec-test-cc", 1);
    tilec_plugin_host_t h = host_v1(NULL);
    uint32_t abi;
    cr_assert_eq(tilec_cpu_embedded_query(&h, &abi, &P), TILEC_PS_OK);
    uint32_t n = 7;
    cr_assert_eq(P->device_count(&n), TILEC_PS_OK);
    cr_assert_eq(n, 1);
    tilec_pdevice_info_t info = {.struct_size = sizeof info};
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_OK);
    cr_assert(strstr(info.platform, "no C compiler") != NULL, "%s", info.platform);
    setenv("CC", "cc", 1);
    cr_assert_eq(P->device_info(0, &info), TILEC_PS_OK);
    cr_assert(strstr(info.platform, "C compiler: ") == info.platform, "%s", info.platform);
}

/* ---- cache and compiler failures ---------------------------------------------------------- */

static int count_cache_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "cpu-", 4) == 0 && strstr(e->d_name, ".so") &&
            !strstr(e->d_name, ".tmp"))
            n++;
    closedir(d);
    return n;
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[8400];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

Test(cpu_cache, hit_skips_compiler)
{
    char dir[] = "/tmp/tilec-test-cache-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/nested/cache", dir); /* created on demand */
    open_plugin(sub);
    kb_t b;
    build_add(&b);
    tilec_pmodule_t *m1 = NULL, *m2 = NULL;
    cr_assert_eq(compile_kb(&b, &m1), TILEC_PS_OK, "%s", P->last_error());
    cr_assert_eq(count_cache_entries(sub), 1);
    /* no compiler any more: only the cache can serve this (the flags $CC
     * carries are part of the key, so they stay: make sanitize sets some) */
    const char *cc0 = getenv("CC"), *flags = cc0 ? strchr(cc0, ' ') : NULL;
    char nocc[1024];
    snprintf(nocc, sizeof nocc, "/nonexistent/tilec-test-cc%s", flags ? flags : "");
    setenv("CC", nocc, 1);
    cr_assert_eq(compile_kb(&b, &m2), TILEC_PS_OK, "%s", P->last_error());
    cr_assert_eq(count_cache_entries(sub), 1);
    const void *b1, *b2;
    size_t l1, l2;
    P->module_data(m1, TILEC_PDATA_BINARY, &b1, &l1);
    P->module_data(m2, TILEC_PDATA_BINARY, &b2, &l2);
    cr_assert_eq(l1, l2);
    cr_assert_eq(memcmp(b1, b2, l1), 0);
    /* the cached module runs */
    float a[5] = {1, 2, 3, 4, 5}, c[5] = {0};
    tilec_pmem_t *args[3] = {mem_from(a, sizeof a), mem_from(a, sizeof a), mem_from(c, sizeof c)};
    int64_t syms[1] = {5};
    run(m2, args, 3, syms, 1);
    P->mem_read(D, args[2], 0, c, sizeof c);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(c[i], 2 * a[i]);
    for (int i = 0; i < 3; i++)
        P->mem_free(D, args[i]);
    P->module_free(m2);
    P->module_free(m1);
    /* a different kernel misses the cache and the missing compiler shows */
    kb_free(&b);
    build_gemm(&b, 0, 0);
    cr_assert_eq(compile_kb(&b, &m1), TILEC_PS_COMPILE_ERROR);
    cr_assert(strstr(P->last_error(), "tilec-test-cc") != NULL, "%s", P->last_error());
    kb_free(&b);
    teardown();
    rm_dir(sub);
    snprintf(sub, sizeof sub, "%s/nested", dir);
    rmdir(sub);
    rmdir(dir);
}

Test(cpu_cache, compiler_error_message)
{
    char dir[] = "/tmp/tilec-test-cc-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cc[4200];
    snprintf(cc, sizeof cc, "%s/fakecc", dir);
    FILE *f = fopen(cc, "w");
    cr_assert_not_null(f);
    fputs("#!/bin/sh\necho 'kernel.c:1:1: error: boom from the fake compiler' >&2\nexit 1\n", f);
    fclose(f);
    chmod(cc, 0755);
    setenv("CC", cc, 1);
    open_plugin(NULL);
    kb_t b;
    build_add(&b);
    tilec_pmodule_t *m = NULL;
    cr_assert_eq(compile_kb(&b, &m), TILEC_PS_COMPILE_ERROR);
    cr_assert_null(m);
    cr_assert(strstr(P->last_error(), "boom from the fake compiler") != NULL, "%s", P->last_error());
    kb_free(&b);
    teardown();
    unlink(cc);
    rmdir(dir);
}

/* IR the generator must reject cleanly: gemm shapes that disagree. */
Test(cpu_cache, bad_ir_rejected, .init = setup, .fini = teardown)
{
    kb_t b;
    kb_init(&b, "badgemm");
    tilec_ir_buffer_t *As = BUF(&b, "A_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, I(&b, 8), I(&b, 4));
    tilec_ir_buffer_t *Bs = BUF(&b, "B_s", TILEC_SCOPE_SHARED, TILEC_FLOAT32, 2, I(&b, 5), I(&b, 8));
    tilec_ir_buffer_t *Cl = BUF(&b, "C_l", TILEC_SCOPE_FRAGMENT, TILEC_FLOAT32, 2, I(&b, 8), I(&b, 8));
    grid(&b, 1, I(&b, 1), NULL);
    tilec_ir_stmt_t *s = emit(&b, TILEC_ST_GEMM);
    s->u.gemm.a = As;
    s->u.gemm.b = Bs;
    s->u.gemm.c = Cl;
    tilec_pmodule_t *m = NULL;
    cr_assert_eq(compile_kb(&b, &m), TILEC_PS_INVALID_ARGUMENT);
    cr_assert(strstr(P->last_error(), "gemm") != NULL, "%s", P->last_error());
    kb_free(&b);
}

/* ---- SDK utilities ---------------------------------------------------------------------- */

static void sha_hex(const void *d, size_t n, char hex[65])
{
    uint8_t dg[32];
    tilec_sha256(d, n, dg);
    tilec_sha256_hex(dg, hex);
}

Test(sdk, sha256_vectors)
{
    char hex[65];
    sha_hex("", 0, hex);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha_hex("abc", 3, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha_hex(m, strlen(m), hex);
    cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* one million 'a', fed in uneven pieces */
    tilec_sha256_t st;
    tilec_sha256_init(&st);
    static char chunk[997];
    memset(chunk, 'a', sizeof chunk);
    size_t left = 1000000;
    for (size_t piece = 1; left; piece = piece % 997 + 1) {
        size_t k = piece < left ? piece : left;
        tilec_sha256_update(&st, chunk, k);
        left -= k;
    }
    uint8_t dg[32];
    tilec_sha256_final(&st, dg);
    tilec_sha256_hex(dg, hex);
    cr_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* every length around the padding boundary agrees with one-shot hashing */
    char buf[130];
    memset(buf, 'x', sizeof buf);
    for (size_t n = 50; n < 130; n++) {
        char h1[65], h2[65];
        sha_hex(buf, n, h1);
        tilec_sha256_init(&st);
        tilec_sha256_update(&st, buf, n / 3);
        tilec_sha256_update(&st, buf + n / 3, n - n / 3);
        tilec_sha256_final(&st, dg);
        tilec_sha256_hex(dg, h2);
        cr_assert_str_eq(h1, h2);
    }
}

Test(sdk, cache_write_read)
{
    char dir[] = "/tmp/tilec-test-sdk-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char sub[256];
    snprintf(sub, sizeof sub, "%s/a/b", dir);
    char *p = tilec_sdk_cache_path(sub, "cpu-", "00ff", ".so");
    cr_assert_not_null(p);
    char want[300];
    snprintf(want, sizeof want, "%s/cpu-00ff.so", sub);
    cr_assert_str_eq(p, want);
    cr_assert_null(tilec_sdk_cache_path(NULL, "x", "y", "z"));
    void *data = NULL;
    size_t len = 0;
    cr_assert_eq(tilec_sdk_file_read(p, &data, &len), -1);
    cr_assert_eq(errno, ENOENT);
    static char big[100000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (char)(i * 31);
    cr_assert_eq(tilec_sdk_cache_write(p, big, sizeof big), 0);
    cr_assert_eq(tilec_sdk_file_read(p, &data, &len), 0);
    cr_assert_eq(len, sizeof big);
    cr_assert_eq(memcmp(data, big, len), 0);
    cr_assert_eq(((char *)data)[len], '\0');
    free(data);
    /* overwrite with something shorter: no leftovers, no temp files */
    cr_assert_eq(tilec_sdk_cache_write(p, "hi", 2), 0);
    cr_assert_eq(tilec_sdk_file_read(p, &data, &len), 0);
    cr_assert_eq(len, 2);
    free(data);
    DIR *d = opendir(sub);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    cr_assert_eq(n, 1);
    /* a file in the way of the directory */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/cpu-00ff.so/x", sub);
    cr_assert_eq(tilec_sdk_cache_write(bad, "z", 1), -1);
    unlink(p);
    free(p);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/a", dir);
    rmdir(sub);
    rmdir(dir);
}

Test(sdk, error_buffer)
{
    cr_assert_str_eq(tilec_sdk_error_get(), "");
    tilec_sdk_error_set("code %d: %s", 42, "oops");
    cr_assert_str_eq(tilec_sdk_error_get(), "code 42: oops");
    tilec_sdk_error_append(" (+%s)", "more");
    cr_assert_str_eq(tilec_sdk_error_get(), "code 42: oops (+more)");
    /* long messages are kept whole */
    static char longmsg[20000];
    memset(longmsg, 'm', sizeof longmsg - 1);
    tilec_sdk_error_set("%s", longmsg);
    cr_assert_eq(strlen(tilec_sdk_error_get()), sizeof longmsg - 1);
    tilec_sdk_error_clear();
    cr_assert_str_eq(tilec_sdk_error_get(), "");
}
