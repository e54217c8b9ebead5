/*
 * tests/plugins/tune_crash.c — libtilec-tunecrash.so, the cpu backend with
 * one deliberate fault, for the tuner's tests (tests/test_tune.c): it
 * loads build/libtilec-cpu.so (two directories up from itself), answers
 * with the cpu plugin's table under the name "tunecrash", and its compile
 * segfaults when the kernel's IR holds a buffer named "Boom" — so a tuning
 * candidate whose config creates that buffer crashes its worker, which the
 * tuner must survive and report as crashed.  It also says its device
 * allows only TUNECRASH_SMEM bytes of shared memory per block (the cpu
 * backend says nothing), so candidates whose module info needs more are
 * pruned by the tuner before any launch.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tilec/plugin.h"

#define TUNECRASH_SMEM 16384

static tilec_plugin_t table;
static const tilec_plugin_t *cpu;

static tilec_pstatus_t small_device_property(uint32_t index, uint32_t key, tilec_pvalue_t *v)
{
    if (key == TILEC_PROP_SHARED_MEM_PER_BLOCK_OPTIN && v && v->struct_size >= sizeof *v) {
        v->kind = TILEC_PVAL_INT;
        v->ival = TUNECRASH_SMEM;
        return TILEC_PS_OK;
    }
    return cpu->device_property ? cpu->device_property(index, key, v) : TILEC_PS_UNSUPPORTED;
}

static tilec_pstatus_t crash_compile(tilec_pdevice_t *dev, const char *ir, size_t ir_len,
                                     const tilec_pcompile_options_t *opts, tilec_pmodule_t **out)
{
    if (ir && memmem(ir, ir_len, "Boom", 4)) {
        volatile int *volatile nowhere = NULL;
        *nowhere = 1; /* a real fault, as a buggy compiler would make */
    }
    return cpu->compile(dev, ir, ir_len, opts, out);
}

TILEC_PLUGIN_EXPORT tilec_pstatus_t tilec_plugin_query(const tilec_plugin_host_t *host, uint32_t *abi_out,
                                                       const tilec_plugin_t **table_out)
{
    Dl_info info;
    char path[4096];
    char *slash;
    void *h;
    tilec_plugin_query_fn q;
    tilec_pstatus_t st;
    if (!dladdr((void *)tilec_plugin_query, &info) || !info.dli_fname) {
        return TILEC_PS_UNAVAILABLE;
    }
    snprintf(path, sizeof path, "%s", info.dli_fname);
    for (int up = 0; up < 3 && (slash = strrchr(path, '/')); up++) {
        *slash = '\0';
    }
    if (strlen(path) + 20 >= sizeof path) {
        return TILEC_PS_UNAVAILABLE;
    }
    strcat(path, "/libtilec-cpu.so");
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h || !(*(void **)&q = dlsym(h, TILEC_PLUGIN_QUERY_SYMBOL))) {
        return TILEC_PS_UNAVAILABLE;
    }
    st = q(host, abi_out, &cpu);
    if (st != TILEC_PS_OK) {
        return st;
    }
    table = *cpu;
    table.name = "tunecrash";
    table.compile = crash_compile;
    table.device_property = small_device_property;
    *table_out = &table;
    return TILEC_PS_OK;
}
